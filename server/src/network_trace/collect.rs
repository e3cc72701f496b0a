//! `vesper collect`: receives the network trace that `vesper serve --trace-stream
//! HOST:PORT` (or `vesper run --trace-stream`) sends, and writes it as `--trace
//! FILE.prv` would have: the same `.prv` (or `.prv.gz`), `.pcf` and `.row`, byte for
//! byte. A trace collector for containers, where the server's file system is not the
//! one the trace is wanted on.
//!
//! ```text
//!   server ──TCP, one connection a run──▶ collect_run ─▶ TraceTarget::file (the file target's
//!   (StreamTarget)                          │               spool: FILE.prv.part, then FILE.prv,
//!                                           │               FILE.pcf, FILE.row at the end)
//!                                           └─ counts records, tracks the last record's time
//! ```
//!
//! The stream's framing is described in [`crate::network_trace`]: the header as known
//! at the start, the records, the final header, then `#vesper-pcf BYTES` + the `.pcf`,
//! `#vesper-row BYTES` + the `.row`, and `#vesper-end RECORDS`.
//!
//! Invariants:
//! - memory is bounded: records go to the spool file as they arrive, a line longer
//!   than [`MAX_LINE`] ends the run with an error, and the `.pcf` and `.row` (held
//!   until the end, as the server holds them) are refused above [`MAX_SIDECAR`];
//! - nothing incomplete is written silently: a stream that ends early, or that the
//!   server dropped records from, is written as far as it got (a truncated `.prv`
//!   gets its last record's time as end time, and no `.pcf`/`.row` when they did not
//!   arrive) and reported as [`Incomplete`]; a stream that is not a Paraver trace
//!   writes nothing;
//! - a connection that closes without sending a byte (a port probe, a health check)
//!   is not a run.
//!
//! Runs: one connection is one run, numbered from 1 in the order the connections were
//! accepted, leaving out those that sent no Paraver header (see [`RunNumbers`]);
//! `{run}` in `--output` becomes that number (start the collector before the server
//! and the numbers are the server's). Without `--keep-collecting` the
//! collector exits after the first run, with an error when it was incomplete; with
//! it, it collects until stopped, several runs at once if they overlap, and `--output`
//! must hold `{run}`.

use std::collections::BTreeSet;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tracing::{error, info, warn};
use vesper_netmodels::TraceOutput;

use crate::config::{is_per_run, per_run};
use crate::network_trace::{STREAM_END, STREAM_PCF, STREAM_ROW, TraceSetupError, TraceTarget, check_file_name};

/// Longest line accepted from a stream [bytes]: records are short, but the header
/// lists every traced device (about 8 bytes each).
pub const MAX_LINE: usize = 16 << 20;
/// Largest `.pcf` or `.row` accepted from a stream [bytes].
pub const MAX_SIDECAR: u64 = 256 << 20;
/// Runs collected at once by `--keep-collecting`; further connections are refused.
pub const MAX_RUNS_AT_ONCE: usize = 16;
/// Longest a stream that has started waits for the connections accepted before it to
/// show whether they are runs, before it takes the next number anyway (see
/// [`RunNumbers`]). Meanwhile its records wait in the socket's buffers: well below the
/// server's default `--trace-stream-wait-ms` (1 s), after which it would drop some.
pub const NUMBER_WAIT: Duration = Duration::from_millis(500);

/// `vesper collect`'s options.
#[derive(Debug, Clone, clap::Args)]
pub struct CollectArgs {
    /// Listen here for the trace streams of `vesper serve --trace-stream HOST:PORT`
    /// (HOST:PORT; port 0 picks a free port, logged).
    #[arg(long, value_name = "ADDR")]
    pub listen: String,
    /// Write the trace here: FILE.prv, or FILE.prv.gz compressed; the .pcf and .row go
    /// beside it. `{run}` in the name becomes the run's number (runs are counted from 1
    /// in the order their connections arrive).
    #[arg(long, value_name = "FILE.prv[.gz]")]
    pub output: PathBuf,
    /// Collect every run until stopped (one connection a run), instead of exiting
    /// after the first; --output must then hold `{run}`.
    #[arg(long)]
    pub keep_collecting: bool,
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
    /// a stream was refused; nothing was written for it
    #[error("the stream from {peer}: {problem}; nothing written")]
    Refused {
        /// the server's address
        peer: String,
        /// what was wrong
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

/// What a run's trace lacks when its stream did not end as a server ends it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Incomplete {
    /// the stream ended before the final header
    #[error(
        "the stream ended after {records} records, before the final header (the server stopped or the connection \
         broke); the .prv has its last record's time as end time, and no .pcf or .row"
    )]
    Disconnected {
        /// records received
        records: u64,
    },
    /// the stream ended at the final header: a server from before the trailer
    #[error("the stream ended at the final header without the .pcf and .row (a server older than this collector?)")]
    NoSidecars,
    /// what followed the final header was not the trailer
    #[error("after the final header, expected {expected}; the .prv is written alone")]
    BadTrailer {
        /// what the trailer should have held there
        expected: String,
    },
    /// the server dropped records (its queue was full)
    #[error(
        "{received} of the {sent} records arrived: the server dropped the rest because the collector did not keep \
         up (its --trace-stream-wait-ms)"
    )]
    Dropped {
        /// records the server handed to the stream
        sent: u64,
        /// records received
        received: u64,
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

/// Runs `vesper collect`: listens, and collects one run (or every run, with
/// `--keep-collecting`).
pub fn collect(args: &CollectArgs) -> Result<(), CollectError> {
    check_file_name(&per_run(&args.output, 1), "--output")?;
    let numbered = is_per_run(&args.output);
    if args.keep_collecting && !numbered {
        return Err(CollectError::NoRunInName {
            output: args.output.display().to_string(),
        });
    }
    let listener = TcpListener::bind(&args.listen).map_err(|source| CollectError::Listen {
        addr: args.listen.clone(),
        source,
    })?;
    let local = listener
        .local_addr()
        .map_or_else(|_| args.listen.clone(), |a| a.to_string());
    info!("listening on {local}; writing {}", args.output.display());
    let runs = Arc::new(RunNumbers::default());
    let at_once = Arc::new(AtomicUsize::new(0));
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
        let ticket = runs.ticket();
        if !args.keep_collecting {
            match collect_connection(socket, &peer, &args.output, ticket)? {
                None => warn!("{peer} closed without sending a trace; still waiting for one"),
                Some(Collected {
                    run,
                    path,
                    incomplete: Some(problem),
                    ..
                }) => return Err(CollectError::Incomplete { run, path, problem }),
                Some(collected) => {
                    log_collected(&collected, &peer);
                    return Ok(());
                }
            }
            continue;
        }
        if at_once.fetch_add(1, Ordering::SeqCst) >= MAX_RUNS_AT_ONCE {
            at_once.fetch_sub(1, Ordering::SeqCst);
            warn!("{peer}: refused, {MAX_RUNS_AT_ONCE} runs are being collected already");
            continue;
        }
        let output = args.output.clone();
        let at_once = Arc::clone(&at_once);
        let spawned = std::thread::Builder::new()
            .name("vesper-collect".into())
            .spawn(move || {
                match collect_connection(socket, &peer, &output, ticket) {
                    Ok(None) => warn!("{peer} closed without sending a trace"),
                    Ok(Some(Collected {
                        run,
                        path,
                        incomplete: Some(problem),
                        ..
                    })) => warn!("{}", CollectError::Incomplete { run, path, problem }),
                    Ok(Some(collected)) => log_collected(&collected, &peer),
                    Err(e) => error!("{e}"),
                }
                at_once.fetch_sub(1, Ordering::SeqCst);
            });
        if let Err(e) = spawned {
            warn!("cannot start a thread for a run: {e}");
        }
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

fn collect_connection(
    socket: TcpStream,
    peer: &str,
    output: &Path,
    ticket: Ticket,
) -> Result<Option<Collected>, CollectError> {
    collect_run(BufReader::with_capacity(1 << 16, socket), peer, || {
        let run = ticket.run();
        (run, per_run(output, run))
    })
}

/// Numbers runs in the order their connections were accepted, leaving out the
/// connections that turn out not to be runs (closed without a byte, or not a Paraver
/// stream).
///
/// Each connection is read on its own thread, so the order in which their first lines
/// are read is the scheduler's, not the server's: a `--keep-serving` server's run 2
/// can be read before its run 1 on a busy machine. So every accepted connection takes
/// a [`Ticket`] in accept order, and a stream that has started takes its number only
/// once every earlier ticket is settled (numbered, or dropped as no run). A connection
/// accepted earlier that stays open without a byte holds the later ones back for at
/// most [`NUMBER_WAIT`]; then they are numbered in the order they come.
#[derive(Debug)]
pub struct RunNumbers {
    state: Mutex<Numbering>,
    settled: Condvar,
    /// longest a started stream waits for earlier tickets
    wait: Duration,
}

impl Default for RunNumbers {
    fn default() -> Self {
        Self::waiting(NUMBER_WAIT)
    }
}

#[derive(Debug, Default)]
struct Numbering {
    /// tickets handed out
    issued: u64,
    /// every ticket below this one is settled
    settled_below: u64,
    /// tickets at or above `settled_below` that are settled
    settled_above: BTreeSet<u64>,
    /// runs numbered
    runs: u64,
}

impl RunNumbers {
    /// Numbers whose started streams wait up to `wait` for earlier tickets.
    pub fn waiting(wait: Duration) -> Self {
        Self {
            state: Mutex::default(),
            settled: Condvar::new(),
            wait,
        }
    }

    /// The next connection's place in the order.
    pub fn ticket(self: &Arc<Self>) -> Ticket {
        let mut state = self.lock();
        state.issued += 1;
        Ticket {
            numbers: Arc::clone(self),
            place: state.issued - 1,
            settled: false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Numbering> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Settles ticket `place`: with a run number when `is_run`, after waiting (up to
    /// `self.wait`) for the tickets before it.
    fn settle(&self, place: u64, is_run: bool) -> u64 {
        let mut state = self.lock();
        if is_run {
            let deadline = Instant::now() + self.wait;
            while state.settled_below < place {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                state = self
                    .settled
                    .wait_timeout(state, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            state.runs += 1;
        }
        let run = state.runs;
        let numbering = &mut *state;
        numbering.settled_above.insert(place);
        while numbering.settled_above.remove(&numbering.settled_below) {
            numbering.settled_below += 1;
        }
        drop(state);
        self.settled.notify_all();
        run
    }
}

/// One accepted connection's place in the run order; dropped without [`Ticket::run`],
/// the connection was no run.
#[derive(Debug)]
pub struct Ticket {
    numbers: Arc<RunNumbers>,
    place: u64,
    settled: bool,
}

impl Ticket {
    /// The run's number: its stream has started.
    pub fn run(mut self) -> u64 {
        self.settled = true;
        self.numbers.settle(self.place, true)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if !self.settled {
            self.numbers.settle(self.place, false);
        }
    }
}

/// Reads one run's stream from `input` (from `peer`) and writes its trace where
/// `name` says once the stream has started (`name` gives the run's number and its
/// `.prv`). `None`: the stream was empty.
pub fn collect_run(
    mut input: impl BufRead,
    peer: &str,
    name: impl FnOnce() -> (u64, PathBuf),
) -> Result<Option<Collected>, CollectError> {
    let mut line = Vec::new();
    // The first line: a header, or nothing at all.
    let first = next_line(&mut input, &mut line);
    let refused = |problem: String| CollectError::Refused {
        peer: peer.to_string(),
        problem,
    };
    match first {
        Ok(0) => return Ok(None),
        Ok(_) => {}
        Err(e) => return Err(refused(format!("cannot read it: {e}"))),
    }
    let provisional = match std::str::from_utf8(&line) {
        Ok(text) if text.starts_with("#Paraver ") && text.ends_with('\n') => text.trim_end().to_string(),
        _ => {
            let shown: String = String::from_utf8_lossy(&line).chars().take(80).collect();
            return Err(refused(format!(
                "expected a Paraver header line (#Paraver …) first, got `{}`",
                shown.trim_end()
            )));
        }
    };
    let (run, path) = name();
    let mut target = TraceTarget::file(&path, "--output")?;
    let write_error = |source: io::Error| CollectError::Write { run, source };
    let mut records = 0u64;
    let mut last_ns = 0u64;
    // The records, up to the final header.
    let header = loop {
        match next_line(&mut input, &mut line) {
            Ok(0) => break None,
            Ok(_) if !line.ends_with(b"\n") => break None,
            Ok(_) if line.starts_with(b"#Paraver") => break Some(line.clone()),
            Ok(_) => {
                records += 1;
                last_ns = last_ns.max(record_end_ns(&line).unwrap_or(0));
                target.write_all(&line).map_err(write_error)?;
            }
            Err(e) if e.kind() == io::ErrorKind::InvalidData => return Err(refused(format!("run {run}: {e}"))),
            Err(e) => {
                warn!("run {run}: reading the stream from {peer} failed: {e}");
                break None;
            }
        }
    };
    let Some(header) = header else {
        // Cut short: the provisional header with the time of the last record.
        target
            .complete_prv_only(&with_end_ns(&provisional, last_ns))
            .map_err(write_error)?;
        return Ok(Some(Collected {
            run,
            path,
            records,
            incomplete: Some(Incomplete::Disconnected { records }),
        }));
    };
    let header = match String::from_utf8(header) {
        Ok(text) => text.trim_end().to_string(),
        Err(_) => return Err(refused(format!("run {run}: expected a final header line in UTF-8"))),
    };
    let trailer = read_trailer(&mut input, &mut line);
    let incomplete = match trailer {
        Ok(Trailer { pcf, row, sent }) => {
            target.complete(&header, &pcf, &row).map_err(write_error)?;
            (sent != records).then_some(Incomplete::Dropped {
                sent,
                received: records,
            })
        }
        Err(problem) => {
            target.complete_prv_only(&header).map_err(write_error)?;
            Some(problem)
        }
    };
    Ok(Some(Collected {
        run,
        path,
        records,
        incomplete,
    }))
}

/// What follows the final header.
#[derive(Debug, PartialEq, Eq)]
struct Trailer {
    pcf: String,
    row: String,
    /// records the server handed to the stream
    sent: u64,
}

/// Reads the trailer: `.pcf` and `.row`, each announced with its length, and the end
/// line with the number of records sent.
fn read_trailer(input: &mut impl BufRead, line: &mut Vec<u8>) -> Result<Trailer, Incomplete> {
    let pcf_bytes = announced(input, line, STREAM_PCF)?;
    let pcf = read_text(input, pcf_bytes, ".pcf")?;
    let row_bytes = announced(input, line, STREAM_ROW)?;
    let row = read_text(input, row_bytes, ".row")?;
    let sent = announced(input, line, STREAM_END)?;
    Ok(Trailer { pcf, row, sent })
}

/// The number on a trailer line `WORD NUMBER`; the end of the stream before the `.pcf`'s
/// line is a server from before the trailer.
fn announced(input: &mut impl BufRead, line: &mut Vec<u8>, word: &str) -> Result<u64, Incomplete> {
    let bad = |expected: String| Incomplete::BadTrailer { expected };
    match next_line(input, line) {
        Ok(0) if word == STREAM_PCF => Err(Incomplete::NoSidecars),
        Ok(_) => std::str::from_utf8(line)
            .ok()
            .and_then(|text| text.strip_suffix('\n'))
            .and_then(|text| text.strip_prefix(word))
            .and_then(|text| text.strip_prefix(' '))
            .and_then(|number| number.parse().ok())
            .ok_or_else(|| {
                let shown: String = String::from_utf8_lossy(line).chars().take(80).collect();
                bad(format!("a line `{word} NUMBER`, got `{}`", shown.trim_end()))
            }),
        Err(e) => Err(bad(format!("a line `{word} NUMBER` ({e})"))),
    }
}

/// `bytes` bytes of UTF-8 text: the `.pcf` or the `.row` (`what`).
fn read_text(input: &mut impl BufRead, bytes: u64, what: &str) -> Result<String, Incomplete> {
    let bad = |why: String| Incomplete::BadTrailer {
        expected: format!("{bytes} bytes of {what} ({why})"),
    };
    if bytes > MAX_SIDECAR {
        return Err(bad(format!("more than {MAX_SIDECAR} bytes are refused")));
    }
    let mut text = Vec::new();
    input
        .by_ref()
        .take(bytes)
        .read_to_end(&mut text)
        .map_err(|e| bad(e.to_string()))?;
    if (text.len() as u64) < bytes {
        return Err(bad(format!("the stream ended after {}", text.len())));
    }
    String::from_utf8(text).map_err(|_| bad("not UTF-8".into()))
}

/// Reads a line (its newline included, if the stream did not end first) into `line`;
/// the bytes read, 0 at the end of the stream. A line longer than [`MAX_LINE`] is an
/// `InvalidData` error.
fn next_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<usize> {
    line.clear();
    let read = input.by_ref().take(MAX_LINE as u64 + 1).read_until(b'\n', line)?;
    if read > MAX_LINE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a line longer than {MAX_LINE} bytes; expected Paraver records"),
        ));
    }
    Ok(read)
}

/// The latest time a record line mentions \[ns\]: a state's end, an event's time, a
/// communication's physical receive. `None` for anything else.
fn record_end_ns(line: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(line).ok()?.trim_end();
    let mut fields = text.split(':');
    let index = match fields.next()? {
        "1" => 5,  // 1:cpu:app:task:thread:begin:END:state
        "2" => 4,  // 2:cpu:app:task:thread:TIME:type:value
        "3" => 11, // 3:cpu:app:task:thread:lsend:psend:cpu:app:task:thread:lrecv:PRECV:size:tag
        _ => return None,
    };
    fields.nth(index)?.parse().ok()
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
    use super::*;
    use crate::network_trace::stream_trailer;

    const PROVISIONAL: &str = "#Paraver (01/01/2026 at 00:00):0_ns:0:1:2(2:0,2:0)";
    const FINAL: &str = "#Paraver (01/01/2026 at 00:00):5000_ns:0:1:2(2:0,2:0)";
    const RECORDS: &str =
        "1:0:1:1:1:0:1200:1\n2:0:1:1:1:1000:70000001:1\n3:0:1:1:1:1000:1010:0:1:2:2:1050:1300:256:1\n";

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
        let collected = collect_run(stream, "test", || (1, path.clone()));
        (collected, dir)
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
        let pcf = "DEFAULT_OPTIONS\n\nLEVEL THREAD\n";
        let row = "LEVEL TASK SIZE 2\nhost0\nhost1\n";
        let stream = format!("{PROVISIONAL}\n{RECORDS}{FINAL}\n{}", stream_trailer(pcf, row, 3));
        let (collected, dir) = collect_text("whole", stream.as_bytes());
        let collected = collected.expect("collected").expect("a run");
        assert_eq!((collected.records, collected.incomplete), (3, None));
        assert_eq!(read(dir.join("t.prv")), Some(format!("{FINAL}\n{RECORDS}")));
        assert_eq!(read(dir.join("t.pcf")).as_deref(), Some(pcf));
        assert_eq!(read(dir.join("t.row")).as_deref(), Some(row));
        assert!(!dir.join("t.prv.part").exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_trailer_reads_what_the_server_writes() {
        // A .pcf that holds lines like the trailer's own, and an empty .row.
        let pcf = "#vesper-end 4\n#Paraver\nÉ\n";
        let text = stream_trailer(pcf, "", 17);
        let trailer = read_trailer(&mut text.as_bytes(), &mut Vec::new()).expect("a trailer");
        assert_eq!(
            trailer,
            Trailer {
                pcf: pcf.into(),
                row: String::new(),
                sent: 17
            }
        );
        let cases = [
            ("", Incomplete::NoSidecars),
            (
                "#vesper-pcf 10\nshort",
                Incomplete::BadTrailer {
                    expected: "10 bytes of .pcf (the stream ended after 5)".into(),
                },
            ),
            (
                "#vesper-pcf x\n",
                Incomplete::BadTrailer {
                    expected: "a line `#vesper-pcf NUMBER`, got `#vesper-pcf x`".into(),
                },
            ),
            (
                "#vesper-pcf 0\n#vesper-row 0\n",
                Incomplete::BadTrailer {
                    expected: "a line `#vesper-end NUMBER`, got ``".into(),
                },
            ),
            (
                "#vesper-pcf 999999999999\n",
                Incomplete::BadTrailer {
                    expected: "999999999999 bytes of .pcf (more than 268435456 bytes are refused)".into(),
                },
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(
                read_trailer(&mut text.as_bytes(), &mut Vec::new()),
                Err(expected),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_stream_cut_short_is_written_as_far_as_it_got_and_said_so() {
        // Cut inside the fourth record: that partial line is not written.
        let stream = format!("{PROVISIONAL}\n{RECORDS}1:0:1:2:1:0:99");
        let (collected, dir) = collect_text("cut", stream.as_bytes());
        let collected = collected.expect("collected").expect("a run");
        assert_eq!(collected.incomplete, Some(Incomplete::Disconnected { records: 3 }));
        // The end time is the last record's: the communication received at 1300 ns.
        let header = PROVISIONAL.replace(":0_ns:", ":1300_ns:");
        assert_eq!(read(dir.join("t.prv")), Some(format!("{header}\n{RECORDS}")));
        assert_eq!((read(dir.join("t.pcf")), read(dir.join("t.row"))), (None, None));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn dropped_records_and_a_missing_trailer_are_told() {
        let stream = format!("{PROVISIONAL}\n{RECORDS}{FINAL}\n{}", stream_trailer("p", "r", 5));
        let (collected, dir) = collect_text("dropped", stream.as_bytes());
        let collected = collected.expect("collected").expect("a run");
        assert_eq!(collected.incomplete, Some(Incomplete::Dropped { sent: 5, received: 3 }));
        assert_eq!(read(dir.join("t.pcf")).as_deref(), Some("p"));
        // A server from before the trailer: the .prv alone, and a stale .pcf is removed.
        let stream = format!("{PROVISIONAL}\n{RECORDS}{FINAL}\n");
        let collected = collect_run(stream.as_bytes(), "test", || (2, dir.join("t.prv")));
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
            "the stream from test: expected a Paraver header line (#Paraver …) first, got `GET / HTTP/1.1`; nothing \
             written"
        );
        let long = format!("{PROVISIONAL}\n{}", "1".repeat(MAX_LINE + 10));
        let (collected, dir3) = collect_text("long", long.as_bytes());
        assert_eq!(
            collected.expect_err("refused").to_string(),
            format!(
                "the stream from test: run 1: a line longer than {MAX_LINE} bytes; expected Paraver records; nothing \
                 written"
            )
        );
        for dir in [dir, dir2, dir3] {
            assert_eq!(
                std::fs::read_dir(&dir).map(|d| d.count()).ok(),
                Some(0),
                "{}",
                dir.display()
            );
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    #[test]
    fn record_times_and_header_end_times() {
        assert_eq!(record_end_ns(b"1:0:1:1:1:0:1200:1\n"), Some(1200));
        assert_eq!(record_end_ns(b"2:0:1:1:1:1000:70000001:1:70000005:3\n"), Some(1000));
        assert_eq!(
            record_end_ns(b"3:0:1:1:1:1000:1010:0:1:2:2:1050:1300:256:1\n"),
            Some(1300)
        );
        assert_eq!(record_end_ns(b"c:1:2\n"), None);
        assert_eq!(record_end_ns(b"1:0:1\n"), None);
        assert_eq!(
            with_end_ns(PROVISIONAL, 42),
            "#Paraver (01/01/2026 at 00:00):42_ns:0:1:2(2:0,2:0)"
        );
        assert_eq!(with_end_ns("#Paraver (x):12:0:1", 42), "#Paraver (x):12:0:1");
    }
}
