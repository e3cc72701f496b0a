//! Simulated time: an integer count of picoseconds, and the one place where it meets
//! the wire's decimal nanoseconds.
//!
//! The model never uses floating-point time. The client speaks C doubles of nanoseconds;
//! [`SimTime::from_wire_ns`] rounds such a double to the nearest picosecond (ties up)
//! exactly, from its binary value, and [`SimTime::to_wire_ns`] returns the smallest
//! double that is not earlier than the exact time, so that a completion the client reads
//! back (with its `%lg`) is never earlier than the event it reports.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

/// Picoseconds in one nanosecond.
pub const PS_PER_NS: u64 = 1_000;

/// A point in simulated time, or a duration: picoseconds since the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
#[serde(transparent)]
pub struct SimTime(u64);

/// Why a wire time cannot become a [`SimTime`].
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum WireTimeError {
    /// negative times do not exist
    #[error("time {0} ns is negative")]
    Negative(f64),
    /// NaN or an infinity
    #[error("time {0} ns is not a finite number")]
    NotFinite(f64),
    /// beyond the last representable picosecond (about 213 simulated days)
    #[error("time {0} ns is beyond the model's last instant ({max} ns)", max = SimTime::MAX.as_ps() / PS_PER_NS)]
    TooLate(f64),
}

impl SimTime {
    /// The start of the simulation.
    pub const ZERO: SimTime = SimTime(0);
    /// The last representable instant; also "never".
    pub const MAX: SimTime = SimTime(u64::MAX);
    /// The last instant a message may enter the network: half the clock's range (about
    /// 106 simulated days), so that it still has room to arrive.
    pub const LAST_INJECTION: SimTime = SimTime(u64::MAX / 2);
    /// The longest one step of a switched network may take: a packet's serialisation on
    /// a link, a cable's propagation delay, a switch's routing decision. 2^44 ps (about
    /// 17.6 s): a packet crossing 65,536 links (more than its 16-bit hop counter counts)
    /// and taking all three at each needs under 3 × 2^60 ps, so that one entering the
    /// network by [`SimTime::LAST_INJECTION`] still arrives before the clock ends.
    pub const LONGEST_STEP: SimTime = SimTime(1 << 44);

    /// A time of `ps` picoseconds.
    pub const fn from_ps(ps: u64) -> SimTime {
        SimTime(ps)
    }

    /// A time of `ns` whole nanoseconds (saturating at [`SimTime::MAX`]).
    pub const fn from_ns(ns: u64) -> SimTime {
        SimTime(ns.saturating_mul(PS_PER_NS))
    }

    /// Picoseconds.
    pub const fn as_ps(self) -> u64 {
        self.0
    }

    /// Seconds, for messages.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e12
    }

    /// `self + d`, or `None` past [`SimTime::MAX`].
    pub fn checked_add(self, d: SimTime) -> Option<SimTime> {
        self.0.checked_add(d.0).map(SimTime)
    }

    /// `self + d`, stopping at [`SimTime::MAX`].
    pub fn saturating_add(self, d: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }

    /// `self - earlier`, or zero if `earlier` is later.
    pub fn saturating_sub(self, earlier: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(earlier.0))
    }

    /// Converts the client's nanoseconds to the nearest picosecond (ties round up).
    ///
    /// Exact: computed from the double's binary value, not from `ns * 1000.0`.
    pub fn from_wire_ns(ns: f64) -> Result<SimTime, WireTimeError> {
        if !ns.is_finite() {
            return Err(WireTimeError::NotFinite(ns));
        }
        if ns < 0.0 {
            return Err(WireTimeError::Negative(ns));
        }
        let (mantissa, exponent) = decompose(ns);
        let scaled = u128::from(mantissa) * u128::from(PS_PER_NS);
        let ps = if exponent >= 0 {
            // scaled < 2^63; a shift that would overflow 64 bits is too late anyway.
            if exponent >= 64 {
                return Err(WireTimeError::TooLate(ns));
            }
            scaled << exponent
        } else {
            let shift = exponent.unsigned_abs();
            if shift >= 127 {
                0
            } else {
                let quotient = scaled >> shift;
                let remainder = scaled & ((1u128 << shift) - 1);
                let half = 1u128 << (shift - 1);
                quotient + u128::from(remainder >= half)
            }
        };
        u64::try_from(ps).map(SimTime).map_err(|_| WireTimeError::TooLate(ns))
    }

    /// Like [`SimTime::from_wire_ns`], but a time beyond the last instant becomes
    /// [`SimTime::MAX`]: a client's "very large" STOP means "until the next completion".
    pub fn from_wire_ns_saturating(ns: f64) -> Result<SimTime, WireTimeError> {
        match SimTime::from_wire_ns(ns) {
            Err(WireTimeError::TooLate(_)) => Ok(SimTime::MAX),
            other => other,
        }
    }

    /// The smallest `f64` of nanoseconds that is not earlier than this time.
    ///
    /// Printed with Rust's shortest round-trip formatting, it reads back (with a
    /// correctly rounded `strtod`, as glibc's is) to the same double, and converts back
    /// with [`SimTime::from_wire_ns`] to this very picosecond while times stay below
    /// 2^51 ps (about 37 simulated minutes). Beyond that a double of nanoseconds cannot
    /// resolve half a picosecond, and the client's next time may read back one
    /// picosecond later: never earlier.
    pub fn to_wire_ns(self) -> f64 {
        let mut ns = self.0 as f64 / PS_PER_NS as f64;
        while compare_scaled(ns, self.0) == std::cmp::Ordering::Less {
            ns = ns.next_up();
        }
        ns
    }
}

/// Splits a finite non-negative double into `mantissa * 2^exponent`.
fn decompose(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), biased - 1075)
    }
}

/// Compares `ns * 1000` (exactly) with `ps`.
fn compare_scaled(ns: f64, ps: u64) -> std::cmp::Ordering {
    let (mantissa, exponent) = decompose(ns);
    let scaled = u128::from(mantissa) * u128::from(PS_PER_NS);
    let ps = u128::from(ps);
    if exponent >= 0 {
        match scaled.checked_shl(exponent.unsigned_abs()) {
            Some(lhs) if exponent < 64 => lhs.cmp(&ps),
            _ => std::cmp::Ordering::Greater,
        }
    } else {
        let shift = exponent.unsigned_abs();
        if shift >= 64 {
            // ps * 2^shift ≥ 2^64 > scaled unless ps is zero.
            if ps == 0 {
                scaled.cmp(&0)
            } else {
                std::cmp::Ordering::Less
            }
        } else {
            scaled.cmp(&(ps << shift))
        }
    }
}

impl Add for SimTime {
    type Output = SimTime;
    /// Saturates at [`SimTime::MAX`] ("never" stays "never").
    fn add(self, d: SimTime) -> SimTime {
        self.saturating_add(d)
    }
}

impl AddAssign for SimTime {
    fn add_assign(&mut self, d: SimTime) {
        *self = *self + d;
    }
}

impl Sub for SimTime {
    type Output = SimTime;
    /// Saturates at zero.
    fn sub(self, earlier: SimTime) -> SimTime {
        self.saturating_sub(earlier)
    }
}

impl Mul<u64> for SimTime {
    type Output = SimTime;
    /// A duration repeated `n` times; saturates at [`SimTime::MAX`].
    fn mul(self, n: u64) -> SimTime {
        SimTime(self.0.saturating_mul(n))
    }
}

impl fmt::Display for SimTime {
    /// Nanoseconds with three decimals (exact), e.g. `8524.001 ns`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == SimTime::MAX {
            return f.write_str("never");
        }
        write!(f, "{}.{:03} ns", self.0 / PS_PER_NS, self.0 % PS_PER_NS)
    }
}

/// `seconds` for messages: three decimals, or three significant digits and an exponent
/// when large (`17.592 s`, `4.112e9 s`).
pub fn seconds_text(seconds: f64) -> String {
    if seconds < 1e6 {
        format!("{seconds:.3} s")
    } else {
        format!("{seconds:.3e} s")
    }
}

/// A link or port rate, exact: `numerator / denominator` bytes per second.
///
/// Rates given in decimal units (MB/s with fractions, or Dimemas's MBps of 2^20 bytes)
/// stay exact, so serialisation times are exact up to the final rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Bandwidth {
    /// bytes …
    numerator: u64,
    /// … per this many seconds
    denominator: u64,
}

impl Bandwidth {
    /// A rate of `bytes_per_second`; `None` if zero.
    pub const fn from_bytes_per_second(bytes_per_second: u64) -> Option<Bandwidth> {
        Bandwidth::from_ratio(bytes_per_second, 1)
    }

    /// A rate of `bytes` per `seconds`; `None` if either is zero.
    pub const fn from_ratio(bytes: u64, seconds: u64) -> Option<Bandwidth> {
        if bytes == 0 || seconds == 0 {
            None
        } else {
            Some(Bandwidth {
                numerator: bytes,
                denominator: seconds,
            })
        }
    }

    /// The exact rate as (bytes, per seconds).
    pub const fn ratio(self) -> (u64, u64) {
        (self.numerator, self.denominator)
    }

    /// Bytes per second (rounded down to a whole byte).
    pub const fn bytes_per_second(self) -> u64 {
        self.numerator / self.denominator
    }

    /// Bytes per second as a float, for display.
    pub fn bytes_per_second_f64(self) -> f64 {
        self.numerator as f64 / self.denominator as f64
    }

    /// Time to put `bytes` on the wire, rounded up to the picosecond.
    pub fn serialization_time(self, bytes: u64) -> SimTime {
        // In 64 bits when the product fits (packets on any real link): a 128-bit
        // division is a library call.
        if let Some(numerator) = bytes
            .checked_mul(1_000_000_000_000)
            .and_then(|n| n.checked_mul(self.denominator))
        {
            return SimTime(numerator.div_ceil(self.numerator));
        }
        let numerator = u128::from(bytes) * 1_000_000_000_000u128 * u128::from(self.denominator);
        let ps = numerator.div_ceil(u128::from(self.numerator));
        SimTime(u64::try_from(ps).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    #[allow(clippy::excessive_precision, reason = "the client prints doubles in full, as here")]
    fn rounds_wire_times_to_the_nearest_picosecond() {
        let t = |ns: f64| SimTime::from_wire_ns(ns).map(SimTime::as_ps);
        assert_eq!(t(0.0), Ok(0));
        assert_eq!(t(-0.0), Ok(0));
        assert_eq!(t(6500.0), Ok(6_500_000));
        // The client's full-precision print of 11633.3 is a hair below it.
        assert_eq!(t(11633.299999999999272404238581657409667968750), Ok(11_633_300));
        assert_eq!(t(0.0004), Ok(0));
        assert_eq!(t(0.0005), Ok(1)); // 0.0005 as a double is a hair above the tie
        assert_eq!(t(0.0015), Ok(2));
        assert_eq!(t(1e-300), Ok(0));
        assert_eq!(t(2.52e13), Ok(25_200_000_000_000_000));
        assert_eq!(t(-1.0), Err(WireTimeError::Negative(-1.0)));
        assert!(matches!(t(f64::NAN), Err(WireTimeError::NotFinite(_))));
        assert_eq!(t(2.52e17), Err(WireTimeError::TooLate(2.52e17)));
        assert_eq!(SimTime::from_wire_ns_saturating(2.52e17), Ok(SimTime::MAX));
    }

    #[test]
    fn exact_ties_round_up() {
        // 0.5 ps exactly representable: 2^-11 ns = 0.48828125 ps → 0; 2^-1 ns = 500 ps.
        assert_eq!(SimTime::from_wire_ns(0.0625 / 125.0).map(SimTime::as_ps), Ok(1)); // 0.5 ps
        assert_eq!(SimTime::from_wire_ns(2f64.powi(-11)).map(SimTime::as_ps), Ok(0));
    }

    #[test]
    fn wire_times_are_never_earlier_than_the_event() {
        for ps in [
            0,
            1,
            2,
            3,
            999,
            1000,
            1001,
            8_524_001,
            11_633_300,
            123_456_789_012_345,
            u64::MAX / 2,
            u64::MAX,
        ] {
            let ns = SimTime::from_ps(ps).to_wire_ns();
            assert_ne!(compare_scaled(ns, ps), std::cmp::Ordering::Less, "{ps} ps -> {ns} ns");
            if ps > 0 {
                assert_eq!(
                    compare_scaled(ns.next_down(), ps),
                    std::cmp::Ordering::Less,
                    "{ps} ps: not the smallest"
                );
            }
        }
        assert_eq!(SimTime::from_ps(8_524_000).to_wire_ns(), 8524.0);
    }

    #[test]
    fn bandwidth_rounds_serialization_up() {
        let myrinet = Bandwidth::from_bytes_per_second(250_000_000).expect("non-zero");
        assert_eq!(myrinet.serialization_time(1024), SimTime::from_ns(4096));
        let odd = Bandwidth::from_bytes_per_second(3_000_000_000).expect("non-zero");
        assert_eq!(odd.serialization_time(1).as_ps(), 334);
        assert_eq!(Bandwidth::from_bytes_per_second(0), None);
        // Dimemas's 1 MBps = 2^20 bytes per second: 1 byte takes 953674.31640625 ps.
        let dimemas = Bandwidth::from_ratio(1 << 20, 1).expect("non-zero");
        assert_eq!(dimemas.serialization_time(1).as_ps(), 953_675);
        assert_eq!(dimemas.serialization_time(1 << 20), SimTime::from_ns(1_000_000_000));
        // 312.5 MB/s as 3125 bytes per 10 µs: exact.
        let fractional = Bandwidth::from_ratio(3_125_000_000, 10).expect("non-zero");
        assert_eq!(fractional.serialization_time(5), SimTime::from_ns(16));
    }

    proptest! {
        #[test]
        fn printed_completion_times_parse_back_never_earlier(ps in 0u64..(1u64 << 51)) {
            let ns = SimTime::from_ps(ps).to_wire_ns();
            // What the client reads: the shortest decimal, parsed as a double.
            let read: f64 = ns.to_string().parse().expect("a decimal");
            prop_assert_eq!(read, ns);
            prop_assert_ne!(compare_scaled(read, ps), std::cmp::Ordering::Less);
            // And the client's next STOP at that time maps back to the same picosecond.
            prop_assert_eq!(SimTime::from_wire_ns(read), Ok(SimTime::from_ps(ps)));
        }

        #[test]
        fn conversion_matches_exact_decimal_rounding(ns in 0.0f64..1e12) {
            let ps = SimTime::from_wire_ns(ns).expect("in range").as_ps();
            // |ns*1000 - ps| ≤ 0.5 exactly: check against both neighbours.
            prop_assert_ne!(compare_scaled(ns, ps.saturating_sub(1)), std::cmp::Ordering::Less);
            prop_assert_ne!(compare_scaled(ns, ps + 1), std::cmp::Ordering::Greater);
        }
    }
}
