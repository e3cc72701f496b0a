//! The `vesper` command line: one module a subcommand, each a function from its parsed
//! arguments to its result; `main.rs` parses and dispatches.
//!
//! The subcommands print through the `println!` and `print!` of this module, which end
//! the program quietly when standard output is closed early (`vesper run | head`).

/// `println!` that ends the program quietly when standard output is closed early
/// (`vesper run | head`) instead of panicking.
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            exit_on_write_error(e);
        }
    }};
}

/// `print!`, as [`println!`].
macro_rules! print {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout(), $($arg)*) {
            exit_on_write_error(e);
        }
    }};
}

/// Standard output failed: a closed pipe ends the program quietly, anything else with
/// a message.
pub fn exit_on_write_error(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("vesper: cannot write to standard output: {e}");
    std::process::exit(1);
}

/// The network `vesper run` replays on when none is named.
pub const DEFAULT_PRESET: &str = "fat-tree";

/// A message size the wire protocol carries.
pub fn message_size(text: &str) -> Result<u32, String> {
    let size: u32 = text.parse().map_err(|e| format!("expected a number of bytes: {e}"))?;
    if size > vesper_protocol::MAX_MESSAGE_BYTES {
        return Err(format!(
            "expected at most {} bytes, the largest message the wire protocol carries (a C int on the client)",
            vesper_protocol::MAX_MESSAGE_BYTES
        ));
    }
    Ok(size)
}

/// How a value is written on the command line.
pub fn value_name<T: clap::ValueEnum>(value: &T) -> String {
    value
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}

/// `value` of `flag`, in a unit of `ps_per_unit` picoseconds, as picoseconds; refused
/// when the model's clock (64-bit picoseconds, about 213 days) cannot hold it.
pub fn ps_of(flag: &str, value: u64, ps_per_unit: u64) -> anyhow::Result<u64> {
    use vesper_client_dimemas_adapter::replay::CLOCK_LIMIT;
    value
        .checked_mul(ps_per_unit)
        .ok_or_else(|| anyhow::anyhow!("{flag} {value}: more than {CLOCK_LIMIT}"))
}

/// A duration of `text` seconds (decimals allowed), positive.
pub fn seconds(text: &str) -> Result<std::time::Duration, String> {
    let value: f64 = text.parse().map_err(|_| format!("expected seconds, got {text:?}"))?;
    if value.is_nan() || value <= 0.0 {
        return Err(format!("{text}: expected a positive number of seconds"));
    }
    std::time::Duration::try_from_secs_f64(value).map_err(|_| format!("{text}: too many seconds"))
}

/// A Paraver header date, `DD/MM/YYYY at HH:MM`, as given.
pub fn paraver_date(text: &str) -> Result<String, String> {
    let digits = |part: &str, n: usize| part.len() == n && part.bytes().all(|b| b.is_ascii_digit());
    let shaped = text.split_once(" at ").is_some_and(|(day, time)| {
        let day: Vec<&str> = day.split('/').collect();
        let time: Vec<&str> = time.split(':').collect();
        matches!(day[..], [d, m, y] if digits(d, 2) && digits(m, 2) && digits(y, 4))
            && matches!(time[..], [h, min] if digits(h, 2) && digits(min, 2))
    });
    if shaped {
        Ok(text.to_string())
    } else {
        Err(format!(
            "expected DD/MM/YYYY at HH:MM, e.g. \"22/11/2026 at 09:30\", found \"{text}\""
        ))
    }
}

pub mod bench;
pub mod network;
pub mod run;
pub mod serve;
pub mod topo;
pub mod traffic;
