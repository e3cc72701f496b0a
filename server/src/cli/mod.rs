//! The `vesper` command line: [`parse`] reads it as the binary does, and [`execute`]
//! runs the command. Each subcommand lives in a module of its own, as a function from
//! its parsed arguments to a typed result that displays as the bytes `vesper` prints
//! (`run::Run`, `topo::Topo`, `traffic::Traffic`, `bench::BenchSync`), so that tests
//! call commands in their own process; `main.rs` parses, sets up the log and hands
//! [`execute`] standard output ([`Stdout`]) and standard error.

use clap::{Parser, Subcommand};

pub use crate::description::value_name;

/// The command line of `vesper`.
#[derive(Debug, Parser)]
#[command(
    name = "vesper",
    version,
    about = "Interconnect simulator that co-simulates with MPI trace replayers (Dimemas --venus)",
    long_about = "vesper hosts a deterministic model of an HPC interconnect and synchronises with \
                  task-replay clients (Dimemas built with its network-server client, run with \
                  `--venus --venuscon 127.0.0.1:10000`) over a text protocol of SEND / STOP / END \
                  lines and COMPLETED SEND replies."
)]
pub struct Cli {
    #[command(subcommand)]
    pub verb: Verb,
}

/// What `vesper` is asked to do (a subcommand).
#[derive(Debug, Subcommand)]
pub enum Verb {
    /// Run the co-simulation server.
    Serve(Box<serve::ServeArgs>),
    /// Replay a Dimemas trace or a synthetic workload against an in-process server over loopback (or
    /// locally with --no-server) and print the predicted execution time; on the fat-tree
    /// preset (256 hosts) unless --network, --preset or --map names another.
    Run(Box<run::RunArgs>),
    /// Describe a network: hosts, switches, cables, diameter, bisection; optionally
    /// draw it (Graphviz) or list the presets.
    Topo(Box<topo::TopoArgs>),
    /// Open-loop synthetic traffic: one operating point (--load) or a latency–load curve
    /// (--sweep), as a table, JSON or an SVG plot; on the kary-ntree preset (64 hosts)
    /// unless --network, --preset or --map names another.
    Traffic(Box<traffic::TrafficArgs>),
    /// Measure the server's performance.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Receive the network trace a server streams (`--trace-stream HOST:PORT`) and
    /// write it as `--trace FILE.prv` would: .prv, .pcf and .row, byte for byte.
    Collect(crate::collect::CollectArgs),
    /// Show a network trace in a web browser: a page served by vesper itself (on
    /// 127.0.0.1:8080 unless --http says otherwise) that draws the network by levels
    /// and colours every link by its utilisation in a time window picked with a slider.
    View(crate::view::ViewArgs),
}

impl Verb {
    /// The subcommand's name, as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Verb::Serve(_) => "serve",
            Verb::Run(_) => "run",
            Verb::Topo(_) => "topo",
            Verb::Traffic(_) => "traffic",
            Verb::Bench(_) => "bench",
            Verb::Collect(_) => "collect",
            Verb::View(_) => "view",
        }
    }

    /// The log level when `VESPER_LOG` sets none: a server reports as it goes; `run`
    /// and `traffic` print their result, and log only problems.
    pub fn default_log_level(&self) -> &'static str {
        match self {
            Verb::Run(_) | Verb::Traffic(_) => "warn",
            _ => "info",
        }
    }
}

/// The command line `args` (the program's name first) read as `vesper` reads it: clap's
/// parse, then what `run` and `bench model` need to know of the flags given. An error is clap's, to
/// print and exit with ([`clap::Error::exit`]), help and version included.
pub fn parse<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::{CommandFactory as _, FromArgMatches as _};
    let matches = negative_values_reach_their_checks(Cli::command()).try_get_matches_from(args)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    if let (Verb::Run(args), Some(matches)) = (&mut cli.verb, matches.subcommand_matches("run")) {
        args.note_given_flags(matches);
    }
    let model = matches
        .subcommand_matches("bench")
        .and_then(|m| m.subcommand_matches("model"));
    if let (Verb::Bench(bench::BenchCommand::Model(args)), Some(matches)) = (&mut cli.verb, model) {
        args.note_network_flags(matches);
    }
    Ok(cli)
}

/// Every option that takes a value takes a negative number too (`--link-bandwidth
/// -250`), so that its own check says what it expects ("must be positive") instead of
/// clap's "unexpected argument '-2' found".
fn negative_values_reach_their_checks(command: clap::Command) -> clap::Command {
    command
        .mut_args(|arg| match arg.get_action().takes_values() {
            true => arg.allow_negative_numbers(true),
            false => arg,
        })
        .mut_subcommands(negative_values_reach_their_checks)
}

/// A line of a command's notes (what it tells on standard error as it goes: files
/// written, warnings); a note that cannot be written is dropped.
macro_rules! note {
    ($notes:expr, $($arg:tt)*) => {{
        let _ = writeln!($notes, $($arg)*);
    }};
}

/// Runs `verb`, writing what it prints to `out` (standard output in the binary) and
/// its notes to `notes` (standard error). `run`, `topo`, `traffic` and `bench sync` make
/// a typed result, written here once they are done; `bench model` writes its table a
/// row a load as it measures; `serve`, `collect` and `view` run servers, and write their
/// reports, traces and pages themselves.
pub fn execute(verb: Verb, out: &mut dyn std::io::Write, notes: &mut dyn std::io::Write) -> anyhow::Result<()> {
    match verb {
        Verb::Serve(args) => serve::serve(*args),
        Verb::Run(args) => Ok(write!(out, "{}", run::run(*args, notes)?)?),
        Verb::Topo(args) => {
            let topo = topo::topo(*args, notes)?;
            write!(out, "{topo}")?;
            topo.refusal()
        }
        Verb::Traffic(args) => Ok(write!(out, "{}", traffic::traffic(*args, notes)?)?),
        Verb::Bench(command) => bench::bench(command, out),
        Verb::Collect(args) => Ok(crate::collect::collect(&args)?),
        Verb::View(args) => Ok(crate::view::view(&args)?),
    }
}

/// [`execute`] as one rank of an MPI run (`mpirun -np N vesper …`): every rank runs the
/// same command on its own partition of the network; the caller gives rank 0 the real
/// standard output and the others a sink. `vesper traffic`, `vesper run` and `vesper
/// serve` run on ranks.
pub fn execute_on_ranks(
    verb: Verb,
    ranks: std::sync::Arc<dyn vesper_netmodels::partition::Ranks>,
    out: &mut dyn std::io::Write,
    notes: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    if ranks.size() == 1 {
        return execute(verb, out, notes);
    }
    match verb {
        Verb::Traffic(args) => Ok(write!(out, "{}", traffic::traffic_on(*args, Some(ranks), notes)?)?),
        Verb::Run(args) => match run::run_on(*args, Some(ranks), notes)? {
            Some(run) => Ok(write!(out, "{run}")?),
            // A rank that followed rank 0's server: rank 0 prints the result.
            None => Ok(()),
        },
        Verb::Serve(args) => serve::serve_on(*args, Some(ranks)),
        other => anyhow::bail!(
            "vesper {} does not run across MPI ranks: start it without mpirun",
            other.name()
        ),
    }
}

/// Under mpirun each of `ranks` simulates one partition: `--partitions`, when `given`
/// (`None`: left out, or its default), may only repeat their number.
pub(crate) fn partitions_on_ranks(ranks: u32, given: Option<u32>) -> anyhow::Result<()> {
    if let Some(given) = given.filter(|&g| g != ranks) {
        anyhow::bail!(
            "--partitions {given}: under mpirun each of the {ranks} ranks simulates one partition; leave \
             --partitions out (or give {ranks})"
        );
    }
    Ok(())
}

/// The cores this process may run on (1 when unknown).
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Says (once, as a warning) when `threads` simulating threads, `partitions` a
/// network, are more than the machine's cores: the partitions' threads then take turns
/// on the cores at every window's meeting instead of spinning, so the run is slower
/// than on as many partitions as cores (the results are the same).
pub(crate) fn warn_if_more_threads_than_cores(partitions: u32, threads: usize) {
    let cores = cores();
    if partitions > 1 && threads > cores {
        let more = if threads == partitions as usize {
            format!("--partitions {partitions}")
        } else {
            format!("{threads} threads ({partitions} partitions a point, points side by side)")
        };
        tracing::warn!(
            "{more} on {cores} cores: the partitions take turns on the cores, handing them over at every \
             window; expect it slower than with at most {cores} (the results are the same)"
        );
    }
}

/// An error as `vesper` prints it on standard error before it exits with status 1:
/// `Error: ` and its chain of causes, as `main` returning the error would print it but
/// never with a stack backtrace (which `RUST_BACKTRACE=1` would add): a user's error is
/// the message alone, a backtrace is for bugs (panics).
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = format!("Error: {e}");
    let causes: Vec<_> = e.chain().skip(1).collect();
    if let [cause] = causes[..] {
        text += &format!("\n\nCaused by:\n    {cause}");
    } else if !causes.is_empty() {
        text += "\n\nCaused by:";
        for (i, cause) in causes.iter().enumerate() {
            text += &format!("\n{i:>5}: {cause}");
        }
    }
    text
}

/// The process's standard output for [`execute`], where a failed write ends the
/// program: quietly (status 0) when standard output was closed early (`vesper run |
/// head`), with a message (status 1) otherwise.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stdout;

impl std::io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::io::stdout().write(buf) {
            Err(e) if e.kind() != std::io::ErrorKind::Interrupted => exit_on_write_error(e),
            written => written,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stdout().flush().or_else(|e| exit_on_write_error(e))
    }
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

/// A number of seconds, 0 meaning no limit (`Duration::ZERO`).
pub fn seconds_or_none(text: &str) -> Result<std::time::Duration, String> {
    match text.parse::<f64>() {
        Ok(0.0) => Ok(std::time::Duration::ZERO),
        _ => seconds(text).map_err(|e| format!("{e} (or 0: no limit)")),
    }
}

/// A Paraver header date, `DD/MM/YYYY at HH:MM`, as given: a day of the calendar (29
/// February in leap years only) and a time of day (00:00 to 23:59).
pub fn paraver_date(text: &str) -> Result<String, String> {
    let expected = || format!("expected DD/MM/YYYY at HH:MM, e.g. \"22/11/2026 at 09:30\", found \"{text}\"");
    let number = |part: &str, n: usize| -> Option<u32> {
        (part.len() == n && part.bytes().all(|b| b.is_ascii_digit())).then(|| part.parse().ok())?
    };
    let (day, time) = text.split_once(" at ").ok_or_else(expected)?;
    let day: Vec<&str> = day.split('/').collect();
    let time: Vec<&str> = time.split(':').collect();
    let ([d, m, y], [h, min]) = (&day[..], &time[..]) else {
        return Err(expected());
    };
    let (Some(d), Some(m), Some(y), Some(h), Some(min)) =
        (number(d, 2), number(m, 2), number(y, 4), number(h, 2), number(min, 2))
    else {
        return Err(expected());
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Err(format!("\"{text}\": month {m:02}: expected 01 to 12")),
    };
    if !(1..=days).contains(&d) {
        return Err(format!(
            "\"{text}\": day {d:02}: month {m:02} of {y} has days 01 to {days}"
        ));
    }
    if h > 23 || min > 59 {
        return Err(format!(
            "\"{text}\": {h:02}:{min:02}: expected a time of day, 00:00 to 23:59"
        ));
    }
    Ok(text.to_string())
}

pub mod bench;
pub mod network;
pub mod run;
pub mod serve;
pub mod topo;
pub mod traffic;
