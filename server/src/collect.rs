//! `vesper collect`: receives the network trace that `vesper serve --trace-stream
//! HOST:PORT` (or `vesper run --trace-stream`) sends, and writes it as `--trace
//! FILE.prv` would have: the same `.prv` (or `.prv.gz`), `.pcf`, `.row` and
//! `.topology`, byte for byte. A trace collector for containers, where the server's file system is not the
//! one the trace is wanted on.
//!
//! ```text
//!   server ──TCP, one connection a run──▶ accept ─thread a connection─▶ collect_run
//!   (StreamTarget)                                                       │ checks every line (RecordCheck)
//!                                                                        ▼
//!                                     TraceTarget::file: FILE.prv.part (spool), then FILE.prv,
//!                                     FILE.pcf, FILE.row once the stream is accepted
//! ```
//!
//! The stream's framing is described in [`crate::network_trace`]: the header as known
//! at the start, `#vesper-topology BYTES` + the `.topology` (servers from before it
//! send none: then no `.topology` is written), the records, the final header, then `#vesper-pcf BYTES` + the `.pcf`,
//! `#vesper-row BYTES` + the `.row`, and `#vesper-end RECORDS`.
//!
//! Invariants:
//! - what is written is what a server sends: every record is checked as the Paraver
//!   writer's own checker ([`vesper_netmodels::trace::check`]) checks a trace (fields,
//!   ids within the header, times non-decreasing as the writer emits them), the final
//!   header must keep the first one's layout and end after the records, the topology
//!   must be one of the header's devices and threads, the `.pcf` and `.row` must
//!   describe them, nothing may follow the end line, and no more records may
//!   arrive than the end line counts. A stream that breaks a rule is refused
//!   ([`CollectError::Bad`]), naming the line and the rule: its spool is removed and
//!   nothing is written;
//! - received bytes are quoted with their control characters escaped
//!   ([`vesper_netmodels::trace::check::escaped`]): a stream never writes raw bytes to
//!   the log;
//! - memory is bounded: records go to the spool file as they arrive, a line longer
//!   than [`MAX_LINE`](crate::network_trace::read::MAX_LINE) is refused, the `.pcf` and `.row` (held until the end, as the
//!   server holds them) are refused above [`MAX_SIDECAR`](crate::network_trace::read::MAX_SIDECAR), and at most
//!   [`MAX_CONNECTIONS`] connections are served at once;
//! - nothing incomplete is written silently: a stream that ends early, or stalls (sends
//!   nothing for `--stall-timeout-s` once it has started), or that the server dropped
//!   records from, is written as far as it got (a truncated `.prv` gets its last
//!   record's time as end time, and no `.pcf`/`.row` when they did not arrive) and
//!   reported as [`Incomplete`];
//! - a connection that has sent nothing is not a run yet, and waits as long as it likes
//!   (a server of one run connects as it starts and sends once its clients made
//!   records); one that closes without a byte (a port probe, a health check), or whose
//!   first line is not a `#Paraver` header, is no run: logged, and the collector waits
//!   on.
//!
//! Runs: one connection is one run, numbered from 1 in the order the connections were
//! accepted, leaving out those that sent no Paraver header (see [`RunNumbers`]);
//! `{run}` in `--output` becomes that number (start the collector before the server
//! and the numbers are the server's). Without `--keep-collecting` the collector takes
//! the first stream that starts, refuses (and logs) any other that starts meanwhile,
//! and exits once its stream is over, with an error when it was refused or incomplete;
//! with `--keep-collecting` it collects until stopped, several runs at once if they
//! overlap (each with its number), and `--output` must hold `{run}`.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tracing::{debug, error, info, warn};
use vesper_netmodels::TraceOutput;
use vesper_netmodels::trace::check::{RecordCheck, escaped};

use crate::config::{is_per_run, per_run};
use crate::error::TraceSetupError;
use crate::network_trace::read::{
    Incomplete, Lines, MAX_CONNECTIONS, Next, RunNumbers, Ticket, Trailed, Trailer, final_header, number_on, read_text,
    read_trailer, shown,
};
use crate::network_trace::{STREAM_TOPOLOGY, TraceTarget, check_file_name};

/// The longest `--stall-timeout-s` (a day).
pub const MAX_STALL_TIMEOUT_S: u64 = 86_400;

/// `vesper collect`'s options.
#[derive(Debug, Clone, clap::Args)]
// Its doc comments are `--help` text: units stay in plain brackets ([s]).
#[allow(rustdoc::broken_intra_doc_links)]
pub struct CollectArgs {
    /// Listen here for the trace streams of `vesper serve --trace-stream HOST:PORT`
    /// (HOST:PORT; port 0 picks a free port, logged).
    #[arg(long, value_name = "ADDR")]
    pub listen: String,
    /// Write the trace here: FILE.prv, or FILE.prv.gz compressed; the .pcf, .row and
    /// .topology go beside it. `{run}` in the name becomes the run's number (runs are counted from 1
    /// in the order their connections arrive).
    #[arg(long, value_name = "FILE.prv[.gz]")]
    pub output: PathBuf,
    /// Collect every run until stopped (one connection a run, several at once if they
    /// overlap), instead of exiting after the first; --output must then hold `{run}`.
    #[arg(long)]
    pub keep_collecting: bool,
    /// Give up on a stream that has started and then sends nothing for this long [s]:
    /// its trace is written as far as it got, and said incomplete. A server sends its
    /// records 64 KiB at a time, so raise it for runs whose simulation waits long for its
    /// clients. A connection that has sent nothing yet is no run and waits as long as it
    /// likes. 0: never give up; at most 86400 (a day).
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub stall_timeout_s: u64,
}

/// Why a collector stops, or a run's stream is refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CollectError {
    /// a flag's value is unusable
    #[error("{0}")]
    Setup(#[from] TraceSetupError),
    /// `--keep-collecting` without `{run}` in `--output`
    #[error(
        "--output {output} with --keep-collecting: every run writes its own trace; put {{run}} in the name \
         (net-{{run}}.prv)"
    )]
    NoRunInName {
        /// the `--output` given
        output: String,
    },
    /// the listening socket
    #[error("--listen {addr}: cannot listen there: {source}")]
    Listen {
        /// the `--listen` given
        addr: String,
        /// why
        source: io::Error,
    },
    /// the collector's thread could not start
    #[error("cannot start the collector's thread: {0}")]
    Thread(io::Error),
    /// a connection that is no trace stream; nothing was written for it
    #[error("the stream from {peer}: {problem}; nothing written")]
    Refused {
        /// the server's address
        peer: String,
        /// what was wrong
        problem: String,
    },
    /// a stream that started while a one-run collector was collecting another
    #[error(
        "the stream from {peer}: refused, run {run} is being collected (a one-run collector takes one stream; \
         --keep-collecting takes every run)"
    )]
    Busy {
        /// the server's address
        peer: String,
        /// the run being collected
        run: u64,
    },
    /// a run's stream that is not what a server sends; its spool was removed and nothing
    /// written
    #[error("run {run}: the stream from {peer} is refused: {problem}; nothing written")]
    Bad {
        /// the run's number
        run: u64,
        /// the server's address
        peer: String,
        /// the line and what was wrong with it
        problem: String,
    },
    /// the files could not be written
    #[error("run {run}: cannot write the trace: {source}")]
    Write {
        /// the run's number
        run: u64,
        /// why (names the file)
        source: io::Error,
    },
    /// a run written as far as its stream got
    #[error("run {run}: {} written incomplete: {problem}", path.display())]
    Incomplete {
        /// the run's number
        run: u64,
        /// the `.prv` written
        path: PathBuf,
        /// what is missing
        problem: Incomplete,
    },
}

/// A run collected.
#[derive(Debug)]
pub struct Collected {
    /// the run's number
    pub run: u64,
    /// the `.prv` written
    pub path: PathBuf,
    /// records written
    pub records: u64,
    /// what it lacks, if anything
    pub incomplete: Option<Incomplete>,
}

/// What the collector's threads share.
#[derive(Debug)]
struct Collector {
    output: PathBuf,
    /// `--stall-timeout-s`; `None`: never
    stall: Option<Duration>,
    /// connections being served
    connections: AtomicUsize,
    numbers: Arc<RunNumbers>,
    /// without `--keep-collecting`: whether a stream has taken the one run
    one_run: Option<Mutex<bool>>,
}

/// Runs `vesper collect`: listens, and collects one run (or every run, with
/// `--keep-collecting`).
pub fn collect(args: &CollectArgs) -> Result<(), CollectError> {
    check_file_name(&per_run(&args.output, 1), "--output")?;
    if args.keep_collecting && !is_per_run(&args.output) {
        return Err(CollectError::NoRunInName {
            output: args.output.display().to_string(),
        });
    }
    if args.stall_timeout_s > MAX_STALL_TIMEOUT_S {
        return Err(TraceSetupError(format!(
            "--stall-timeout-s {}: at most {MAX_STALL_TIMEOUT_S} (a day); 0 never gives up on a stream",
            args.stall_timeout_s
        ))
        .into());
    }
    let listener = TcpListener::bind(&args.listen).map_err(|source| CollectError::Listen {
        addr: args.listen.clone(),
        source,
    })?;
    let local = listener
        .local_addr()
        .map_or_else(|_| args.listen.clone(), |a| a.to_string());
    info!("listening on {local}; writing {}", args.output.display());
    let collector = Arc::new(Collector {
        output: args.output.clone(),
        stall: (args.stall_timeout_s > 0).then(|| Duration::from_secs(args.stall_timeout_s)),
        connections: AtomicUsize::new(0),
        numbers: Arc::new(RunNumbers::default()),
        one_run: (!args.keep_collecting).then(|| Mutex::new(false)),
    });
    if args.keep_collecting {
        accept(&listener, &local, &collector, None);
    }
    // One run: its outcome ends the collector; meanwhile connections are accepted on a
    // thread of their own (to refuse other streams, and to wait past port probes).
    let (done, outcome) = mpsc::channel();
    std::thread::Builder::new()
        .name("vesper-collect-accept".into())
        .spawn(move || accept(&listener, &local, &collector, Some(done)))
        .map_err(CollectError::Thread)?;
    match outcome.recv() {
        Ok(Ok(Collected {
            run,
            path,
            incomplete: Some(problem),
            ..
        })) => Err(CollectError::Incomplete { run, path, problem }),
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(CollectError::Thread(io::Error::other(
            "the thread that accepts streams ended",
        ))),
    }
}

/// Accepts connections for ever, each served on a thread of its own; a one-run
/// collector's run reports its outcome to `done`.
fn accept(
    listener: &TcpListener,
    local: &str,
    collector: &Arc<Collector>,
    done: Option<Sender<Result<Collected, CollectError>>>,
) -> ! {
    loop {
        let (socket, peer) = match listener.accept() {
            Ok(accepted) => accepted,
            Err(e) => {
                // A connection that failed before it was accepted; the listener is fine.
                warn!("--listen {local}: a connection failed: {e}");
                continue;
            }
        };
        let peer = peer.to_string();
        if collector.connections.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            collector.connections.fetch_sub(1, Ordering::SeqCst);
            warn!("{peer}: refused, {MAX_CONNECTIONS} connections are being served already");
            continue;
        }
        let ticket = collector.numbers.ticket();
        let (thread_collector, done) = (Arc::clone(collector), done.clone());
        let spawned = std::thread::Builder::new()
            .name("vesper-collect".into())
            .spawn(move || {
                serve(socket, &peer, ticket, &thread_collector, done);
                thread_collector.connections.fetch_sub(1, Ordering::SeqCst);
            });
        if let Err(e) = spawned {
            collector.connections.fetch_sub(1, Ordering::SeqCst);
            warn!("cannot start a thread for a connection: {e}");
        }
    }
}

/// Serves one connection: collects its run if it is one, and tells what became of it
/// (to `done` for a one-run collector's run, in the log otherwise).
fn serve(
    socket: TcpStream,
    peer: &str,
    ticket: Ticket,
    collector: &Collector,
    done: Option<Sender<Result<Collected, CollectError>>>,
) {
    let mut run = None;
    let claim = || {
        let number = match &collector.one_run {
            // The one run is run 1, whatever came before it.
            Some(taken) => {
                let mut taken = taken.lock().unwrap_or_else(PoisonError::into_inner);
                if *taken {
                    return Err(CollectError::Busy {
                        peer: peer.to_string(),
                        run: 1,
                    });
                }
                *taken = true;
                1
            }
            None => ticket.run(),
        };
        run = Some(number);
        info!("{peer}: receiving run {number}");
        Ok((number, per_run(&collector.output, number)))
    };
    let outcome = collect_connection(socket, peer, collector.stall, claim);
    if let Ok(Some(collected)) = &outcome
        && collected.incomplete.is_none()
    {
        log_collected(collected, peer);
    }
    if run.is_some()
        && let Some(done) = done
    {
        // The one run: its outcome is the collector's.
        let _ = match outcome {
            Ok(Some(collected)) => done.send(Ok(collected)),
            Err(e) => done.send(Err(e)),
            Ok(None) => Ok(()),
        };
        return;
    }
    match outcome {
        // A port probe or a health check (compose's, every second): not worth a warning.
        Ok(None) if collector.one_run.is_some() => {
            debug!("{peer} closed without sending a trace; still waiting for one")
        }
        Ok(None) => debug!("{peer} closed without sending a trace"),
        Ok(Some(Collected {
            run,
            path,
            incomplete: Some(problem),
            ..
        })) => warn!("{}", CollectError::Incomplete { run, path, problem }),
        Ok(Some(_)) => {}
        Err(e @ CollectError::Busy { .. }) => warn!("{e}"),
        Err(e) => error!("{e}"),
    }
}

fn log_collected(collected: &Collected, peer: &str) {
    info!(
        "run {}: {} records from {peer} written to {}",
        collected.run,
        collected.records,
        collected.path.display()
    );
}

/// Collects what `socket` sends: waits as long as it takes for its first byte, then
/// gives up once it sends nothing for `stall`.
fn collect_connection(
    socket: TcpStream,
    peer: &str,
    stall: Option<Duration>,
    claim: impl FnOnce() -> Result<(u64, PathBuf), CollectError>,
) -> Result<Option<Collected>, CollectError> {
    let mut input = BufReader::with_capacity(1 << 16, socket);
    let refused = |problem: String| CollectError::Refused {
        peer: peer.to_string(),
        problem,
    };
    match input.fill_buf() {
        Ok([]) => return Ok(None),
        Ok(_) => {}
        Err(e) => return Err(refused(format!("cannot read it: {e}"))),
    }
    input
        .get_ref()
        .set_read_timeout(stall)
        .map_err(|e| refused(format!("cannot set its --stall-timeout-s: {e}")))?;
    collect_run(input, peer, stall, claim)
}

/// Reads one stream from `input` (from `peer`, giving up once it sends nothing for
/// `stall`). A stream that starts with a `#Paraver` line is a run if `claim` takes it
/// (giving its number and its `.prv`); its trace is written there once the stream was
/// checked whole. `None`: the stream was empty.
pub fn collect_run(
    input: impl BufRead,
    peer: &str,
    stall: Option<Duration>,
    claim: impl FnOnce() -> Result<(u64, PathBuf), CollectError>,
) -> Result<Option<Collected>, CollectError> {
    let mut lines = Lines {
        input,
        line: Vec::new(),
        number: 0,
        stall,
    };
    let refused = |problem: String| CollectError::Refused {
        peer: peer.to_string(),
        problem,
    };
    // The first line: a header, or nothing at all.
    let first = lines.next().map_err(refused)?;
    let got = shown(&lines.line);
    match first {
        Next::Line => {}
        Next::End if lines.line.is_empty() => return Ok(None),
        Next::End => {
            return Err(refused(format!(
                "expected a Paraver header line (#Paraver …) first, got `{got}` and the end of the stream"
            )));
        }
        Next::Stalled => {
            return Err(refused(format!(
                "sent `{got}`, then nothing for {} s (--stall-timeout-s)",
                lines.stall_s()
            )));
        }
        Next::Failed(e) => return Err(refused(format!("cannot read it: {e}"))),
    }
    if !lines.line.starts_with(b"#Paraver") {
        return Err(refused(format!(
            "expected a Paraver header line (#Paraver …) first, got `{got}`"
        )));
    }
    // A trace stream: a run, if the collector takes it.
    let (run, path) = claim()?;
    let bad = |problem: String| CollectError::Bad {
        run,
        peer: peer.to_string(),
        problem,
    };
    let provisional = lines.text().map_err(bad)?.to_string();
    let mut check = RecordCheck::provisional(&provisional).map_err(|e| bad(format!("line 1: {e}")))?;
    let mut target = TraceTarget::file(&path, "--output")?;
    let write_error = |source: io::Error| CollectError::Write { run, source };
    // The records, up to the final header.
    let cut = loop {
        match lines.next().map_err(bad)? {
            Next::Line => {}
            Next::End => {
                break Incomplete::Disconnected {
                    records: check.records(),
                };
            }
            Next::Stalled => {
                break Incomplete::Stalled {
                    records: check.records(),
                    seconds: lines.stall_s(),
                };
            }
            Next::Failed(e) => {
                warn!("run {run}: reading the stream from {peer} failed: {e}");
                break Incomplete::Disconnected {
                    records: check.records(),
                };
            }
        }
        if lines.number == 2 && lines.line.starts_with(STREAM_TOPOLOGY.as_bytes()) {
            match read_topology(&mut lines, &provisional) {
                Ok(text) => {
                    target.begin(&provisional, &text).map_err(write_error)?;
                    continue;
                }
                Err(Trailed::Bad(problem)) => return Err(bad(problem)),
                Err(Trailed::Cut(Incomplete::TrailerCut { missing })) => break Incomplete::TopologyCut { missing },
                Err(Trailed::Cut(cut)) => break cut,
            }
        }
        if lines.line.starts_with(b"#Paraver") {
            return finish(lines, check, &provisional, target, run, path).map_err(|e| match e {
                Finish::Bad(problem) => bad(problem),
                Finish::Write(source) => write_error(source),
            });
        }
        if lines.line.starts_with(b"#") {
            return Err(bad(format!(
                "line {}: expected a record or the final header (#Paraver …), got `{}`",
                lines.number,
                shown(&lines.line)
            )));
        }
        check
            .record(lines.text().map_err(bad)?)
            .map_err(|e| bad(e.to_string()))?;
        target.write_all(&lines.line).map_err(write_error)?;
    };
    // Cut short: the provisional header with the time of the last record.
    target
        .complete_prv_only(&with_end_ns(&provisional, check.latest_ns()))
        .map_err(write_error)?;
    Ok(Some(Collected {
        run,
        path,
        records: check.records(),
        incomplete: Some(cut),
    }))
}

/// Why a stream that reached its final header was not written.
enum Finish {
    /// the stream breaks a rule: the line and the rule
    Bad(String),
    /// the files could not be written
    Write(io::Error),
}

/// The rest of a run's stream, from its final header (the line in `lines`): checks it
/// and the trailer, and writes the trace.
fn finish(
    mut lines: Lines<impl BufRead>,
    check: RecordCheck,
    provisional: &str,
    mut target: TraceTarget,
    run: u64,
    path: PathBuf,
) -> Result<Option<Collected>, Finish> {
    let at = lines.number;
    let header = lines.text().map_err(Finish::Bad)?.to_string();
    final_header(&check, &header, at).map_err(Finish::Bad)?;
    // The server's final header is its first one with the end time set.
    if with_end_ns(provisional, 0) != with_end_ns(&header, 0) {
        return Err(Finish::Bad(format!(
            "line {at}: expected the first header with its end time set, got `{}`",
            escaped(&header)
        )));
    }
    let received = check.records();
    let incomplete = match read_trailer(&mut lines) {
        Ok(Trailer { pcf, row, sent }) => {
            check
                .finish(&header, &pcf, &row)
                .map_err(|e| Finish::Bad(e.to_string()))?;
            if sent < received {
                return Err(Finish::Bad(format!(
                    "line {}: {received} records arrived, but the end line says the server sent {sent}",
                    lines.number
                )));
            }
            target.complete(&header, &pcf, &row).map_err(Finish::Write)?;
            (sent > received).then_some(Incomplete::Dropped { sent, received })
        }
        Err(Trailed::Bad(problem)) => return Err(Finish::Bad(problem)),
        Err(Trailed::Cut(problem)) => {
            target.complete_prv_only(&header).map_err(Finish::Write)?;
            Some(problem)
        }
    };
    Ok(Some(Collected {
        run,
        path,
        records: received,
        incomplete,
    }))
}

/// The topology that follows the first header (its announcement the line in `lines`),
/// checked against the header `provisional`.
fn read_topology(lines: &mut Lines<impl BufRead>, provisional: &str) -> Result<String, Trailed> {
    let bytes = number_on(lines, STREAM_TOPOLOGY)?;
    let at = lines.number + 1;
    let text = read_text(lines, bytes, ".topology")?;
    // Its devices and threads must be the header's (names come with the .row, which
    // the view checks them against).
    let header = crate::view::header::parse_header(provisional).map_err(|e| Trailed::Bad(format!("line 1: {e}")))?;
    check_topology(&text, &header.threads_of).map_err(|e| Trailed::Bad(format!("line {at}: the .topology: {e}")))?;
    Ok(text)
}

/// Checks that `text` is a topology of tasks of `threads_of` threads each.
fn check_topology(text: &str, threads_of: &[u32]) -> Result<(), String> {
    use crate::view::topology::Topology;
    let header = crate::view::header::Header {
        end_ns: 0,
        threads_of: threads_of.to_vec(),
    };
    let names = Topology::names(text, &header)?;
    Topology::parse(text, &names).map(|_| ())
}

/// `header` (`#Paraver (DATE):END_ns:…`) with its end time set to `end_ns`; unchanged
/// when it does not have that shape.
fn with_end_ns(header: &str, end_ns: u64) -> String {
    let Some(date_end) = header.find("):") else {
        return header.to_string();
    };
    let (head, rest) = header.split_at(date_end + 2);
    match rest.split_once("_ns:") {
        Some((time, tail)) if !time.is_empty() && time.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{head}{end_ns}_ns:{tail}")
        }
        _ => header.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use vesper_netmodels::trace::check::CARRIAGE_RETURN;

    use super::*;
    use crate::network_trace::read::MAX_LINE;
    use crate::network_trace::stream_trailer;

    const PROVISIONAL: &str = "#Paraver (01/01/2026 at 00:00):0_ns:0:1:2(2:0,2:0)";
    const FINAL: &str = "#Paraver (01/01/2026 at 00:00):5000_ns:0:1:2(2:0,2:0)";
    const RECORDS: &str =
        "1:0:1:1:1:0:1200:1\n2:0:1:1:1:1000:70000001:1\n3:0:1:1:1:1000:1010:0:1:2:2:1050:1300:256:1\n";
    const PCF: &str = "DEFAULT_OPTIONS\n\nSTATES\n0    Empty\n1    Backlog\n\nEVENT_TYPE\n0    70000001    Flow\n";
    const ROW: &str = "LEVEL TASK SIZE 2\nsw0\nsw1\n\nLEVEL THREAD SIZE 4\nsw0.p0\nsw0.p1\nsw1.p0\nsw1.p1\n";

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("vesper-collect-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir
    }

    /// Collects `stream` into `DIR/t.prv`; the outcome and the directory.
    fn collect_text(name: &str, stream: &[u8]) -> (Result<Option<Collected>, CollectError>, PathBuf) {
        let dir = scratch(name);
        let path = dir.join("t.prv");
        let collected = collect_run(stream, "test", None, || Ok((1, path.clone())));
        (collected, dir)
    }

    /// A whole stream of `records`, its end line counting `sent`.
    fn whole(records: &str, sent: u64) -> String {
        format!("{PROVISIONAL}\n{records}{FINAL}\n{}", stream_trailer(PCF, ROW, sent))
    }

    fn files_in(dir: &std::path::Path) -> usize {
        std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(usize::MAX)
    }

    #[test]
    fn runs_are_numbered_in_accept_order_whatever_order_they_are_read_in() {
        let numbers = Arc::new(RunNumbers::waiting(Duration::from_secs(60)));
        let [probe, first, second, third] = std::array::from_fn(|_| numbers.ticket());
        // The second run's stream is read first: it waits for the earlier tickets.
        let second = std::thread::spawn(move || second.run());
        std::thread::sleep(Duration::from_millis(50));
        assert!(!second.is_finished(), "numbered before the earlier connections settled");
        drop(probe);
        assert_eq!(first.run(), 1);
        assert_eq!(second.join().expect("numbered"), 2);
        assert_eq!(third.run(), 3);
        // A started stream does not wait forever for a silent connection before it.
        let numbers = Arc::new(RunNumbers::waiting(Duration::from_millis(20)));
        let silent = numbers.ticket();
        assert_eq!(numbers.ticket().run(), 1);
        drop(silent);
        assert_eq!(numbers.ticket().run(), 2);
    }

    fn read(path: PathBuf) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }

    #[test]
    fn a_whole_stream_gives_the_three_files() {
        let (collected, dir) = collect_text("whole", whole(RECORDS, 3).as_bytes());
        let collected = collected.expect("collected").expect("a run");
        assert_eq!((collected.records, collected.incomplete), (3, None));
        assert_eq!(read(dir.join("t.prv")), Some(format!("{FINAL}\n{RECORDS}")));
        assert_eq!(read(dir.join("t.pcf")).as_deref(), Some(PCF));
        assert_eq!(read(dir.join("t.row")).as_deref(), Some(ROW));
        assert!(!dir.join("t.prv.part").exists());
        // A server older than the topology block: no .topology.
        assert!(!dir.join("t.topology").exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A topology of [`PROVISIONAL`]'s two tasks of two threads.
    const TOPOLOGY: &str = "{\"vesper_topology\":1,\n\"shape\":{\"kind\":\"graph\",\"hosts\":0,\"switches\":2},\n\
        \"rails\":1,\n\"devices\":[\n\
        {\"name\":\"sw0\",\"host\":false,\"threads\":[1,2],\"level\":null,\"coords\":null,\"rail\":0},\n\
        {\"name\":\"sw1\",\"host\":false,\"threads\":[3,4],\"level\":null,\"coords\":null,\"rail\":0}\n],\n\
        \"links\":[\n{\"from\":1,\"to\":3,\"mbs\":250,\"latency_ns\":10},\n\
        {\"from\":3,\"to\":1,\"mbs\":250,\"latency_ns\":10}\n]}\n";

    /// [`whole`] with `topology` after the first header.
    fn with_topology(topology: &str) -> String {
        let stream = whole(RECORDS, 3);
        let (first, rest) = stream.split_once('\n').expect("a header");
        format!("{first}\n{}{rest}", crate::network_trace::stream_topology(topology))
    }

    /// The topology after the first header is written as FILE.topology; one that does
    /// not fit the header is refused, naming its line; one cut short is said.
    #[test]
    fn the_topology_after_the_first_header_is_checked_and_written() {
        let (collected, dir) = collect_text("topology", with_topology(TOPOLOGY).as_bytes());
        let collected = collected.expect("collected").expect("a run");
        assert_eq!((collected.records, collected.incomplete), (3, None));
        assert_eq!(read(dir.join("t.prv")), Some(format!("{FINAL}\n{RECORDS}")));
        assert_eq!(read(dir.join("t.topology")).as_deref(), Some(TOPOLOGY));
        assert_eq!(read(dir.join("t.row")).as_deref(), Some(ROW));
        let _ = std::fs::remove_dir_all(dir);

        let three_threads = TOPOLOGY.replace("[3,4]", "[3,5]");
        let (collected, dir) = collect_text("topology-bad", with_topology(&three_threads).as_bytes());
        match collected {
            Err(CollectError::Bad { problem, .. }) => assert_eq!(
                problem,
                "line 3: the .topology: devices[1] (sw1): threads [3, 5]; in the header its ports are threads 3 to 4"
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(files_in(&dir), 0, "nothing written");
        let _ = std::fs::remove_dir_all(dir);

        let stream = with_topology(TOPOLOGY);
        let cut = &stream[..stream.find("\"links\"").expect("links")];
        let (collected, dir) = collect_text("topology-cut", cut.as_bytes());
        let collected = collected.expect("collected").expect("a run");
        assert!(
            matches!(&collected.incomplete, Some(Incomplete::TopologyCut { missing }) if missing.contains("the stream ended after")),
            "{:?}",
            collected.incomplete
        );
        assert_eq!(collected.records, 0);
        assert!(!dir.join("t.topology").exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Reads `text` as a trailer, after a final header on line 7.
    fn trailer(text: &str) -> Result<Trailer, Trailed> {
        let mut lines = Lines {
            input: text.as_bytes(),
            line: Vec::new(),
            number: 7,
            stall: None,
        };
        read_trailer(&mut lines)
    }

    #[test]
    fn the_trailer_reads_what_the_server_writes() {
        // A .pcf that holds lines like the trailer's own, and an empty .row.
        let pcf = "#vesper-end 4\n#Paraver\nÉ\n";
        assert_eq!(
            trailer(&stream_trailer(pcf, "", 17)),
            Ok(Trailer {
                pcf: pcf.into(),
                row: String::new(),
                sent: 17
            })
        );
        let cut = |missing: &str| {
            Err(Trailed::Cut(Incomplete::TrailerCut {
                missing: missing.into(),
            }))
        };
        let bad = |problem: &str| Err(Trailed::Bad(problem.into()));
        let cases = [
            ("", Err(Trailed::Cut(Incomplete::NoSidecars))),
            (
                "#vesper-pcf 10\nshort",
                cut("the 10 bytes of the .pcf (the stream ended after 5)"),
            ),
            ("#vesper-pcf 0\n#vesper-row 0\n", cut("the line `#vesper-end NUMBER`")),
            (
                "#vesper-pcf 0\n#vesper-row 0\n#vesper-e",
                cut("the line `#vesper-end NUMBER`"),
            ),
            (
                "#vesper-pcf x\n",
                bad("line 8: expected `#vesper-pcf NUMBER`, got `#vesper-pcf x`"),
            ),
            (
                "#vesper-pcf +2\n",
                bad("line 8: expected `#vesper-pcf NUMBER`, got `#vesper-pcf +2`"),
            ),
            (
                "#vesper-pcf 2\r\n",
                bad(&format!(
                    "line 8: expected `#vesper-pcf NUMBER`, got `#vesper-pcf 2\\r`: {CARRIAGE_RETURN}"
                )),
            ),
            (
                "#vesper-pcf 999999999999\n",
                bad("line 8: a .pcf of 999999999999 bytes; more than 268435456 are refused"),
            ),
            // The first byte of `ÿ`.
            ("#vesper-pcf 1\n\u{ff}\n", bad("line 9: the .pcf is not UTF-8 text")),
            (
                "#vesper-pcf 2\na\n#vesper-row 0\n#vesper-end 3\n1:0:1:1:1:0:1200:1\n",
                bad("line 12: after `#vesper-end`, expected the end of the stream, got `1:0:1:1:1:0:1200:1`"),
            ),
            (
                "#vesper-pcf 2\na\n#vesper-row 0\n#vesper-end 3\n\u{1b}]0;title",
                bad("line 12: after `#vesper-end`, expected the end of the stream, got `\\u{1b}]0;title`"),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(trailer(text), expected, "{text:?}");
        }
    }

    /// A reader that gives `bytes`, then stalls (as a socket whose read timed out).
    struct Stalling(&'static [u8]);

    impl Read for Stalling {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            self.0.read(buf)
        }
    }

    #[test]
    fn a_stream_cut_short_or_stalled_is_written_as_far_as_it_got_and_said_so() {
        // Cut inside the fourth record: that partial line is not written.
        let stream = format!("{PROVISIONAL}\n{RECORDS}1:0:1:2:1:0:99");
        let (collected, dir) = collect_text("cut", stream.as_bytes());
        let collected = collected.expect("collected").expect("a run");
        assert_eq!(collected.incomplete, Some(Incomplete::Disconnected { records: 3 }));
        // The end time is the last record's: the communication received at 1300 ns.
        let header = PROVISIONAL.replace(":0_ns:", ":1300_ns:");
        assert_eq!(read(dir.join("t.prv")), Some(format!("{header}\n{RECORDS}")));
        assert_eq!((read(dir.join("t.pcf")), read(dir.join("t.row"))), (None, None));
        // The same, stalled.
        let text: &'static str = format!("{PROVISIONAL}\n{RECORDS}1:0:1:2:1:0:99").leak();
        let input = BufReader::new(Stalling(text.as_bytes()));
        let stall = Some(Duration::from_secs(7));
        let collected = collect_run(input, "test", stall, || Ok((2, dir.join("s.prv"))));
        let collected = collected.expect("collected").expect("a run");
        assert_eq!(
            collected.incomplete,
            Some(Incomplete::Stalled { records: 3, seconds: 7 })
        );
        assert_eq!(read(dir.join("s.prv")), Some(format!("{header}\n{RECORDS}")));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn dropped_records_and_a_missing_trailer_are_told() {
        let (collected, dir) = collect_text("dropped", whole(RECORDS, 5).as_bytes());
        let collected = collected.expect("collected").expect("a run");
        assert_eq!(collected.incomplete, Some(Incomplete::Dropped { sent: 5, received: 3 }));
        assert_eq!(read(dir.join("t.pcf")).as_deref(), Some(PCF));
        // A server from before the trailer: the .prv alone, and a stale .pcf is removed.
        let stream = format!("{PROVISIONAL}\n{RECORDS}{FINAL}\n");
        let collected = collect_run(stream.as_bytes(), "test", None, || Ok((2, dir.join("t.prv"))));
        let collected = collected.expect("collected").expect("a run");
        assert_eq!(collected.incomplete, Some(Incomplete::NoSidecars));
        assert_eq!(read(dir.join("t.prv")), Some(format!("{FINAL}\n{RECORDS}")));
        assert_eq!(read(dir.join("t.pcf")), None);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn what_is_not_a_trace_writes_nothing() {
        let (collected, dir) = collect_text("empty", b"");
        assert!(collected.expect("no error").is_none());
        let (collected, dir2) = collect_text("http", b"GET / HTTP/1.1\r\n\r\n");
        assert_eq!(
            collected.expect_err("refused").to_string(),
            "the stream from test: expected a Paraver header line (#Paraver …) first, got `GET / HTTP/1.1\\r`; \
             nothing written"
        );
        let long = format!("{PROVISIONAL}\n{}", "1".repeat(MAX_LINE + 10));
        let (collected, dir3) = collect_text("long", long.as_bytes());
        assert_eq!(
            collected.expect_err("refused").to_string(),
            format!(
                "run 1: the stream from test is refused: line 2: longer than {MAX_LINE} bytes; expected Paraver \
                 records; nothing written"
            )
        );
        for dir in [dir, dir2, dir3] {
            assert_eq!(files_in(&dir), 0, "{}", dir.display());
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    #[test]
    fn a_stream_that_breaks_a_rule_is_refused_and_writes_nothing() {
        let other_date = FINAL.replace("01/01/2026", "02/01/2026");
        let cases = [
            (
                whole(&format!("{RECORDS}#vesper-end 3\n"), 3),
                "line 5: expected a record or the final header (#Paraver …), got `#vesper-end 3`",
            ),
            (
                whole("1:0:1:1:1:0:1200:1\n1:0:1:1:2:\u{1b}[1m:9:1\n", 2),
                "line 3: expected `:`-separated unsigned integers: `1:0:1:1:2:\\u{1b}[1m:9:1`",
            ),
            (
                whole("2:0:1:1:1:1000:70000001:1\n1:0:1:1:1:0:1200:1\n", 2),
                "line 3: out of order: time 0 ns after 1000 ns",
            ),
            (
                whole("1:0:1:1:1:0:9000:1\n", 1),
                "line 2: time 9000 ns is after the header's end (5000 ns)",
            ),
            (
                whole("1:0:1:1:1:0:1200:7\n", 1),
                "line 2: state 7 is not labelled in the .pcf",
            ),
            (
                format!("{PROVISIONAL}\n{RECORDS}{other_date}\n{}", stream_trailer(PCF, ROW, 3)),
                "line 5: expected the first header with its end time set, got `#Paraver (02/01/2026",
            ),
            (
                format!(
                    "{PROVISIONAL}\n{RECORDS}{FINAL}\n{}",
                    stream_trailer(PCF, "LEVEL TASK SIZE 2\n", 3)
                ),
                ".row: LEVEL TASK says 2 and names 0; the header counts 2",
            ),
            (
                whole(RECORDS, 2),
                "line 25: 3 records arrived, but the end line says the server sent 2",
            ),
            (
                format!("{}\u{0}", whole(RECORDS, 3)),
                "line 26: after `#vesper-end`, expected the end of the stream, got `\\0`",
            ),
            (
                format!("{PROVISIONAL}\n{}", "1:0:1:1:1:0:1200:1\r\n"),
                "line 2: a carriage return (\\r) ends the line",
            ),
            (
                format!("{PROVISIONAL}\r\n"),
                "line 1: header: a carriage return (\\r) ends the line",
            ),
        ];
        let not_utf8 = [PROVISIONAL.as_bytes(), b"\n1:0:\xff\n"].concat();
        let cases = cases
            .into_iter()
            .map(|(stream, expected)| (stream.into_bytes(), expected))
            .chain([(not_utf8, "line 2: expected UTF-8 text, got `1:0:\u{fffd}`")]);
        for (stream, expected) in cases {
            let (collected, dir) = collect_text("rule", &stream);
            let error = collected.expect_err(expected).to_string();
            assert!(
                error.starts_with("run 1: the stream from test is refused: ") && error.contains(expected),
                "expected `{expected}` in `{error}`"
            );
            assert!(error.ends_with("; nothing written"), "{error}");
            assert!(!error.chars().any(char::is_control), "{error:?}");
            assert_eq!(files_in(&dir), 0, "{expected}: its spool is removed");
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    #[test]
    fn header_end_times() {
        assert_eq!(
            with_end_ns(PROVISIONAL, 42),
            "#Paraver (01/01/2026 at 00:00):42_ns:0:1:2(2:0,2:0)"
        );
        assert_eq!(with_end_ns("#Paraver (x):12:0:1", 42), "#Paraver (x):12:0:1");
    }
}
