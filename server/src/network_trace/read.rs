//! Reading the network trace's stream (its framing is described in
//! [`crate::network_trace`]) as `vesper collect` and `vesper view --listen-trace` read
//! it: line by line within bounds, the trailer (`.pcf`, `.row`, the end line), what a
//! stream that did not end as a server ends it lacks, and the runs' numbers in the
//! order their connections were accepted.

use std::collections::BTreeSet;
use std::io::{self, BufRead, Read};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use vesper_netmodels::trace::check::{CARRIAGE_RETURN, RecordCheck, escaped};

use super::{STREAM_END, STREAM_PCF, STREAM_ROW};

/// Longest line accepted from a stream [bytes]: records are short, but the header
/// lists every traced device (about 8 bytes each).
pub const MAX_LINE: usize = 16 << 20;
/// Largest `.pcf` or `.row` accepted from a stream [bytes].
pub const MAX_SIDECAR: u64 = 256 << 20;
/// Connections served at once (runs, and connections that have not sent a byte yet);
/// further connections are refused.
pub const MAX_CONNECTIONS: usize = 16;
/// Longest a stream that has started waits for the connections accepted before it to
/// show whether they are runs, before it takes the next number anyway (see
/// [`RunNumbers`]). Meanwhile its records wait in the socket's buffers: well below the
/// server's default `--trace-stream-wait-ms` (1 s), after which it would drop some.
pub const NUMBER_WAIT: Duration = Duration::from_millis(500);
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
    /// the stream sent nothing for `--stall-timeout-s` before the final header
    #[error(
        "the stream sent nothing for {seconds} s (--stall-timeout-s) after {records} records, before the final \
         header; the collector closed it; the .prv has its last record's time as end time, and no .pcf or .row"
    )]
    Stalled {
        /// records received
        records: u64,
        /// `--stall-timeout-s`
        seconds: u64,
    },
    /// the stream ended (or stalled) within its topology, before any record
    #[error(
        "the stream ended before {missing}, right after its first header; the .prv is written with no records, \
         and no .pcf, .row or .topology"
    )]
    TopologyCut {
        /// what did not arrive
        missing: String,
    },
    /// the stream ended at the final header: a server from before the trailer
    #[error("the stream ended at the final header without the .pcf and .row (a server older than this collector?)")]
    NoSidecars,
    /// the stream ended (or stalled) within the trailer
    #[error("after the final header, the stream ended before {missing}; the .prv is written alone")]
    TrailerCut {
        /// what did not arrive
        missing: String,
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

/// A stream's lines, numbered from 1 (`vesper view --listen-trace` reads streams with
/// it too).
pub(crate) struct Lines<R> {
    pub(crate) input: R,
    /// the last line read, its newline included (if it had one)
    pub(crate) line: Vec<u8>,
    /// the number of the last line read
    pub(crate) number: usize,
    /// `--stall-timeout-s`, for messages
    pub(crate) stall: Option<Duration>,
}

/// What reading a line gave.
#[derive(Debug)]
pub(crate) enum Next {
    /// a whole line
    Line,
    /// the end of the stream (with the last line's bytes, if it had no newline)
    End,
    /// nothing for `--stall-timeout-s`
    Stalled,
    /// a read that failed (a connection reset)
    Failed(io::Error),
}

impl<R: BufRead> Lines<R> {
    /// Reads the next line; an error is a line longer than [`MAX_LINE`].
    pub(crate) fn next(&mut self) -> Result<Next, String> {
        self.line.clear();
        let read = self
            .input
            .by_ref()
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut self.line);
        if !self.line.is_empty() {
            self.number += 1;
        }
        if self.line.len() > MAX_LINE {
            return Err(format!(
                "line {}: longer than {MAX_LINE} bytes; expected Paraver records",
                self.number
            ));
        }
        Ok(match read {
            Ok(_) if self.line.ends_with(b"\n") => Next::Line,
            Ok(_) => Next::End,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => Next::Stalled,
            Err(e) => Next::Failed(e),
        })
    }

    /// The last line as text, without its newline; an error if it is not UTF-8.
    pub(crate) fn text(&self) -> Result<&str, String> {
        let text = std::str::from_utf8(&self.line)
            .map_err(|_| format!("line {}: expected UTF-8 text, got `{}`", self.number, shown(&self.line)))?;
        Ok(text.strip_suffix('\n').unwrap_or(text))
    }

    pub(crate) fn stall_s(&self) -> u64 {
        self.stall.map_or(0, |s| s.as_secs())
    }
}

/// Checks a stream's final `header`, its line `at`, against the records `check` took:
/// its end time, or what is wrong with it, as the collector and the live view say it.
pub(crate) fn final_header(check: &RecordCheck, header: &str, at: usize) -> Result<u64, String> {
    check.final_header(header).map_err(|e| {
        let e = e.to_string();
        match e.strip_prefix("header: ") {
            Some(why) => format!("line {at}: the final header: {why}"),
            None => e,
        }
    })
}

/// `bytes` (a line received) safe to quote: without its newline, control characters
/// escaped, cut short.
pub(crate) fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    escaped(text.strip_suffix('\n').unwrap_or(&text))
}

/// What follows the final header.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Trailer {
    pub(crate) pcf: String,
    pub(crate) row: String,
    /// records the server handed to the stream
    pub(crate) sent: u64,
}

/// Why a trailer was not read whole.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Trailed {
    /// the stream ended (or stalled) before its end: what is missing
    Cut(Incomplete),
    /// the stream breaks a rule: the line and the rule
    Bad(String),
}

/// Reads the trailer: `.pcf` and `.row`, each announced with its length, the end line
/// with the number of records sent, and then the end of the stream.
pub(crate) fn read_trailer(lines: &mut Lines<impl BufRead>) -> Result<Trailer, Trailed> {
    let pcf_bytes = announced(lines, STREAM_PCF)?;
    let pcf = read_text(lines, pcf_bytes, ".pcf")?;
    let row_bytes = announced(lines, STREAM_ROW)?;
    let row = read_text(lines, row_bytes, ".row")?;
    let sent = announced(lines, STREAM_END)?;
    let end = lines.number;
    match lines.next().map_err(Trailed::Bad)? {
        Next::End if lines.line.is_empty() => {}
        // The trace is whole: a server that keeps the connection open is let go.
        Next::Stalled | Next::Failed(_) => {}
        Next::Line | Next::End => {
            return Err(Trailed::Bad(format!(
                "line {}: after `{STREAM_END}`, expected the end of the stream, got `{}`",
                lines.number,
                shown(&lines.line)
            )));
        }
    }
    lines.number = end;
    Ok(Trailer { pcf, row, sent })
}

/// The number on the line in `lines`, `WORD NUMBER`.
pub(crate) fn number_on(lines: &Lines<impl BufRead>, word: &str) -> Result<u64, Trailed> {
    std::str::from_utf8(&lines.line)
        .ok()
        .and_then(|text| text.strip_suffix('\n'))
        .and_then(|text| text.strip_prefix(word))
        .and_then(|text| text.strip_prefix(' '))
        .filter(|number| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|number| number.parse().ok())
        .ok_or_else(|| {
            let why = match lines.line.ends_with(b"\r\n") {
                true => format!(": {CARRIAGE_RETURN}"),
                false => String::new(),
            };
            Trailed::Bad(format!(
                "line {}: expected `{word} NUMBER`, got `{}`{why}",
                lines.number,
                shown(&lines.line)
            ))
        })
}

/// The number on a trailer line `WORD NUMBER`; the end of the stream before the
/// `.pcf`'s line is a server from before the trailer.
fn announced(lines: &mut Lines<impl BufRead>, word: &str) -> Result<u64, Trailed> {
    let missing = |why: String| {
        Trailed::Cut(Incomplete::TrailerCut {
            missing: format!("the line `{word} NUMBER`{why}"),
        })
    };
    match lines.next().map_err(Trailed::Bad)? {
        Next::End if lines.line.is_empty() && word == STREAM_PCF => Err(Trailed::Cut(Incomplete::NoSidecars)),
        Next::End => Err(missing(String::new())),
        Next::Stalled => Err(missing(format!(
            " (it sent nothing for {} s, --stall-timeout-s)",
            lines.stall_s()
        ))),
        Next::Failed(e) => Err(missing(format!(" ({e})"))),
        Next::Line => number_on(lines, word),
    }
}

/// `bytes` bytes of UTF-8 text: the `.pcf` or the `.row` (`what`).
pub(crate) fn read_text(lines: &mut Lines<impl BufRead>, bytes: u64, what: &str) -> Result<String, Trailed> {
    if bytes > MAX_SIDECAR {
        return Err(Trailed::Bad(format!(
            "line {}: a {what} of {bytes} bytes; more than {MAX_SIDECAR} are refused",
            lines.number
        )));
    }
    let mut text = Vec::new();
    let read = lines.input.by_ref().take(bytes).read_to_end(&mut text);
    let missing = |why: String| {
        Trailed::Cut(Incomplete::TrailerCut {
            missing: format!("the {bytes} bytes of the {what} ({why})"),
        })
    };
    match read {
        Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
            return Err(missing(format!(
                "it sent {}, then nothing for {} s, --stall-timeout-s",
                text.len(),
                lines.stall_s()
            )));
        }
        Err(e) => return Err(missing(format!("{e} after {}", text.len()))),
        Ok(_) if (text.len() as u64) < bytes => return Err(missing(format!("the stream ended after {}", text.len()))),
        Ok(_) => {}
    }
    let first = lines.number + 1;
    lines.number += text.iter().filter(|&&b| b == b'\n').count();
    String::from_utf8(text).map_err(|_| Trailed::Bad(format!("line {first}: the {what} is not UTF-8 text")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_final_header_s_problem_names_its_line_and_says_it_is_the_final_header() {
        let first = "#Paraver (01/01/2026 at 00:00):0_ns:0:1:1(1:0)";
        let mut check = RecordCheck::provisional(first).expect("a header");
        check.record("1:0:1:1:1:100:7000:1").expect("checked at the end");
        assert_eq!(
            final_header(&check, "#Paraver (01/01/2026 at 00:00):7000_ns:0:1:1(1:0)", 4),
            Ok(7000)
        );
        assert_eq!(
            final_header(&check, "#Paraver (01/01/2026 at 00:00):7000_ns:0:1:1(2:0)", 4),
            Err(
                "line 4: the final header: expected the first header's tasks and threads, got \
                 `#Paraver (01/01/2026 at 00:00):7000_ns:0:1:1(2:0)`"
                    .to_string()
            )
        );
        assert_eq!(
            final_header(&check, "#Paraver 1", 4),
            Err("line 4: the final header: expected `#Paraver (`: `#Paraver 1`".to_string())
        );
        // A record's problem keeps its own line.
        assert_eq!(
            final_header(&check, "#Paraver (01/01/2026 at 00:00):5000_ns:0:1:1(1:0)", 4),
            Err("line 2: time 7000 ns is after the header's end (5000 ns)".to_string())
        );
    }
}
