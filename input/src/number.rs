//! Numbers of an input taken exactly as written: a rate of 0.1 MBps is 1/10 of a MBps,
//! not the double nearest to it.

/// A positive finite `value` as `digits / 10^scale`, from its shortest decimal form
/// (the one Rust prints, which reads back to the same double: `0.1`, not
/// 0.1000000000000000055511151231257827); `None` if `value` is not positive and finite,
/// or its digits do not fit in 64 bits (`1e30`).
///
/// Every exact rate of vesper (link bandwidths, Dimemas's MBps) is built on it, so that
/// the server's network and the replay's ideal bus take a number alike.
pub fn decimal(value: f64) -> Option<(u64, u32)> {
    if !(value.is_finite() && value > 0.0) {
        return None;
    }
    let text = value.to_string();
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let scale = u32::try_from(fraction.len()).ok()?;
    let digits: u64 = format!("{whole}{fraction}").parse().ok()?;
    (digits > 0).then_some((digits, scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decimal_is_taken_as_written() {
        assert_eq!(decimal(250.0), Some((250, 0)));
        assert_eq!(decimal(312.5), Some((3125, 1)));
        assert_eq!(decimal(0.1), Some((1, 1)));
        assert_eq!(decimal(0.000234), Some((234, 6)));
        assert_eq!(decimal(1e-12), Some((1, 12)));
        assert_eq!(decimal(1.5e10), Some((15_000_000_000, 0)));
        assert_eq!(decimal(1e-300), Some((1, 300)));
    }

    #[test]
    fn only_positive_finite_numbers_of_64_bits_of_digits_are_taken() {
        for value in [0.0, -0.0, -1.0, -0.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e30] {
            assert_eq!(decimal(value), None, "{value}");
        }
        assert_eq!(decimal(1e20), None, "more digits than 64 bits hold");
    }
}
