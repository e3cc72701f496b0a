//! Reading a finished network trace: the `.prv` (or `.prv.gz`) line by line into an
//! [`Aggregate`], with the `.row`'s names and the `.pcf`'s backlog quantum.
//!
//! ```text
//!   FILE.prv[.gz] ─lines─▶ parse (no lock) ─batches of BATCH records─▶ Shared (write lock) ─▶ Aggregate
//!   FILE.row ─▶ Names (task and thread names; host ports)
//!   FILE.pcf ─▶ the backlog quantum, from its state labels (optional)
//!   FILE.topology ─▶ Topology: the shape, levels or coordinates, every link and its rate
//!                    (optional; a bad one is said, and the layout is derived instead)
//! ```
//!
//! Nothing a file holds stops the program: a line that is not a record the trace can
//! hold ends the reading with a problem that names the file and line (shown on the
//! page, the records before it kept); a file cut short (its last line without an end)
//! is said so. Memory is bounded: lines longer than [`MAX_LINE`], traces of more than
//! [`MAX_THREADS`](super::header::MAX_THREADS) threads and a `.row` or `.pcf` above [`MAX_SIDECAR`] are refused.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use flate2::read::MultiGzDecoder;

use super::aggregate::{Aggregate, AggregateError, Message, PortEvent, Thread};
use super::header::{Header, Names, parse_header, shown};
use super::topology::{MAX_TOPOLOGY, Topology};
use super::{Shared, write_lock};

/// Longest line read [bytes]: records are short, but the header lists every device
/// (about 5 bytes each).
pub const MAX_LINE: usize = 16 << 20;
/// Largest `.row` or `.pcf` read [bytes].
pub const MAX_SIDECAR: u64 = 256 << 20;
/// Records parsed before they are folded in at once (one write lock).
const BATCH: usize = 4096;

/// Why a trace's files cannot be opened (what is wrong inside them is a problem shown
/// on the page, see [`Shared::problem`]).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// the trace's name
    #[error("{0}: expected a network trace FILE.prv or FILE.prv.gz (its .row beside it)")]
    Name(PathBuf),
    /// a file that cannot be read
    #[error("{}: {source}", path.display())]
    Read {
        /// the file
        path: PathBuf,
        /// why
        source: io::Error,
    },
    /// a `.row`, `.pcf` or `.topology` too large
    #[error("{}: more than {most} bytes; expected a trace's names, labels or topology", path.display())]
    TooLarge {
        /// the file
        path: PathBuf,
        /// the most read
        most: u64,
    },
}

/// A trace's files, opened.
pub struct TraceFiles {
    /// the `.prv` or `.prv.gz`, as given
    pub prv_path: PathBuf,
    /// its text, decompressed
    pub prv: Box<dyn BufRead + Send>,
    /// the `.row` and its text
    pub row: (PathBuf, String),
    /// the `.pcf` and its text, if there is one
    pub pcf: Option<(PathBuf, String)>,
    /// the `.topology` and its text, or why it could not be read, if there is one
    pub topology: Option<(PathBuf, Result<String, String>)>,
}

impl TraceFiles {
    /// Opens `prv` (gzip-compressed when its name ends in `.gz`) and reads the `.row`
    /// and `.pcf` beside it (`FILE.row` for `FILE.prv` and `FILE.prv.gz`).
    pub fn open(prv: &Path) -> Result<TraceFiles, OpenError> {
        let name = prv.to_string_lossy();
        let stem = name
            .strip_suffix(".prv.gz")
            .or_else(|| name.strip_suffix(".prv"))
            .ok_or_else(|| OpenError::Name(prv.to_path_buf()))?;
        let read_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| OpenError::Read { path, source }
        };
        let file = File::open(prv).map_err(read_error(prv))?;
        let text: Box<dyn BufRead + Send> = if name.ends_with(".gz") {
            Box::new(BufReader::with_capacity(1 << 16, MultiGzDecoder::new(file)))
        } else {
            Box::new(BufReader::with_capacity(1 << 16, file))
        };
        let row_path = PathBuf::from(format!("{stem}.row"));
        let row = read_sidecar(&row_path)?;
        let pcf_path = PathBuf::from(format!("{stem}.pcf"));
        let pcf = match read_sidecar(&pcf_path) {
            Ok(text) => Some((pcf_path, text)),
            Err(OpenError::Read { source, .. }) if source.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let topology_path = PathBuf::from(format!("{stem}.topology"));
        let topology = match read_text(&topology_path, MAX_TOPOLOGY) {
            Err(OpenError::Read { source, .. }) if source.kind() == io::ErrorKind::NotFound => None,
            read => Some((
                topology_path,
                read.map_err(|e| match e {
                    OpenError::Read { source, .. } => source.to_string(),
                    OpenError::TooLarge { most, .. } => format!("more than {most} bytes; expected a trace's topology"),
                    e => e.to_string(),
                }),
            )),
        };
        Ok(TraceFiles {
            prv_path: prv.to_path_buf(),
            prv: text,
            row: (row_path, row),
            pcf,
            topology,
        })
    }
}

impl std::fmt::Debug for TraceFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceFiles")
            .field("prv_path", &self.prv_path)
            .field("row", &self.row.0)
            .field("pcf", &self.pcf.as_ref().map(|(path, _)| path))
            .field("topology", &self.topology.as_ref().map(|(path, _)| path))
            .finish_non_exhaustive()
    }
}

/// A `.row` or `.pcf`, whole (at most [`MAX_SIDECAR`] bytes).
pub(super) fn read_sidecar(path: &Path) -> Result<String, OpenError> {
    read_text(path, MAX_SIDECAR)
}

/// A text file of at most `most` bytes, whole.
fn read_text(path: &Path, most: u64) -> Result<String, OpenError> {
    let read_error = |source| OpenError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut text = String::new();
    File::open(path)
        .map_err(read_error)?
        .take(most + 1)
        .read_to_string(&mut text)
        .map_err(read_error)?;
    if text.len() as u64 > most {
        return Err(OpenError::TooLarge {
            path: path.to_path_buf(),
            most,
        });
    }
    Ok(text)
}

/// The backlog quantum \[bytes\] from a `.pcf`'s label of state 1 (`1    Backlog 1-1024
/// bytes`).
pub fn quantum_of_pcf(pcf: &str) -> Option<u64> {
    let states = pcf.split("\nSTATES\n").nth(1)?;
    let label = states.lines().find_map(|l| l.trim().strip_prefix("1 "))?;
    let range = label.trim().strip_prefix("Backlog 1-")?;
    range.strip_suffix(" bytes")?.parse().ok()
}

/// One record, its threads resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// `1:cpu:app:task:thread:begin:end:state`
    State {
        /// the port
        thread: Thread,
        /// \[ns\]
        begin_ns: u64,
        /// \[ns\]
        end_ns: u64,
        /// the backlog level
        level: u16,
    },
    /// `2:cpu:app:task:thread:time:type:value[:type:value…]`
    Event {
        /// the port
        thread: Thread,
        /// \[ns\]
        at_ns: u64,
        /// the first of its type:value pairs that is an event the page marks
        mark: Option<PortEvent>,
    },
    /// `3:cpu:app:task:thread:lsend:psend:cpu:app:task:thread:lrecv:precv:size:tag`
    Communication {
        /// the transmitting port
        from: Thread,
        /// the receiving port
        to: Thread,
        /// its times, size and tag
        message: Message,
    },
}

/// Reads a record line of a trace whose header is `header` and whose tasks start at
/// threads `first_thread`.
pub fn parse_record(line: &str, header: &Header, first_thread: &[Thread]) -> Result<Record, String> {
    let bad = |what: &str| format!("{what}: `{}`", shown(line));
    let fields: Vec<u64> = line
        .split(':')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|_| bad("expected a record: `:`-separated unsigned integers"))?;
    let thread = |at: usize| -> Result<Thread, String> {
        let (app, task, thread) = (fields[at + 1], fields[at + 2], fields[at + 3]);
        let threads = usize::try_from(task)
            .ok()
            .and_then(|t| t.checked_sub(1))
            .and_then(|t| Some((t, *header.threads_of.get(t)?)));
        match threads {
            Some((t, n)) if app == 1 && thread >= 1 && thread <= u64::from(n) => {
                Ok(first_thread[t] + thread as u32 - 1)
            }
            _ => Err(bad("application 1 and a task and thread of the header expected")),
        }
    };
    match (fields.first(), fields.len()) {
        (Some(1), 8) => Ok(Record::State {
            thread: thread(1)?,
            begin_ns: fields[5],
            end_ns: fields[6],
            level: u16::try_from(fields[7]).unwrap_or(u16::MAX),
        }),
        (Some(2), n) if n >= 8 && n % 2 == 0 => Ok(Record::Event {
            thread: thread(1)?,
            at_ns: fields[5],
            mark: fields[6..].chunks(2).find_map(|pair| PortEvent::of(pair[0], pair[1])),
        }),
        (Some(3), 15) => Ok(Record::Communication {
            from: thread(1)?,
            to: thread(7)?,
            message: Message {
                tag: fields[14],
                logical_send_ns: fields[5],
                send_ns: fields[6],
                logical_receive_ns: fields[11],
                receive_ns: fields[12],
                size_bytes: fields[13],
            },
        }),
        _ => Err(bad(
            "expected a state (1, 8 fields), an event (2, 8 or more) or a communication (3, 15)",
        )),
    }
}

impl Record {
    /// Folds the record into `aggregate`.
    pub fn fold(self, aggregate: &mut Aggregate) -> Result<(), AggregateError> {
        match self {
            Record::State {
                thread,
                begin_ns,
                end_ns,
                level,
            } => aggregate.state(thread, begin_ns, end_ns, level),
            Record::Event { thread, at_ns, mark } => {
                aggregate.event(thread, at_ns)?;
                match mark {
                    Some(event) => aggregate.port_event(thread, at_ns, event),
                    None => Ok(()),
                }
            }
            Record::Communication { from, to, message } => aggregate.message(from, to, message),
        }
    }
}

/// Reads the trace `files` into `shared`: its header and names, then its records a
/// batch at a time; a problem (naming the file and line) ends the reading and is kept
/// in `shared`. Runs on a thread of its own.
pub fn load(files: TraceFiles, shared: &Arc<RwLock<Shared>>) {
    let TraceFiles {
        prv_path,
        mut prv,
        row,
        pcf,
        topology,
    } = files;
    let prv_name = prv_path.display().to_string();
    let problem = read(&prv_name, &mut prv, &row, pcf.as_ref(), topology.as_ref(), shared).err();
    let mut state = write_lock(shared);
    state.loading = false;
    state.problem = problem;
}

fn read(
    prv_name: &str,
    prv: &mut dyn BufRead,
    (row_path, row): &(PathBuf, String),
    pcf: Option<&(PathBuf, String)>,
    topology: Option<&(PathBuf, Result<String, String>)>,
    shared: &Arc<RwLock<Shared>>,
) -> Result<(), String> {
    let mut line = Vec::new();
    let mut n = 1u64;
    let first = next_line(prv, &mut line).map_err(|e| format!("{prv_name}: {e}"))?;
    let first = std::str::from_utf8(&line[..first])
        .map_err(|_| format!("{prv_name} line 1: expected a Paraver header (#Paraver …) in UTF-8"))?;
    if first.is_empty() {
        return Err(format!("{prv_name}: empty; expected a Paraver trace"));
    }
    if !first.ends_with('\n') {
        return Err(format!(
            "{prv_name} line 1: the file ends in the middle of its header: cut short?"
        ));
    }
    let header = parse_header(first.trim_end()).map_err(|e| format!("{prv_name} line 1: {e}"))?;
    let names = Names::of_row(row, &header).map_err(|e| format!("{}: {e}", row_path.display()))?;
    let quantum_bytes = pcf.and_then(|(_, text)| quantum_of_pcf(text));
    let mut aggregate = Aggregate::new(names.host_ports(), header.end_ns);
    let (topology, topology_problem) = match topology {
        None => (None, None),
        Some((path, text)) => match with_topology(text, &names, &mut aggregate) {
            Ok(topology) => (Some(topology), None),
            Err(e) => {
                aggregate = Aggregate::new(names.host_ports(), header.end_ns);
                let message = format!(
                    "{}: {e}; the layout is derived from the records instead",
                    path.display()
                );
                tracing::warn!("{message}");
                (None, Some(message))
            }
        },
    };
    {
        let mut state = write_lock(shared);
        state.aggregate = aggregate;
        state.names = names.clone();
        state.quantum_bytes = quantum_bytes;
        state.topology = topology;
        state.topology_problem = topology_problem;
    }
    let mut batch = Vec::with_capacity(BATCH);
    let mut outcome = Ok(());
    loop {
        n += 1;
        let read = match next_line(prv, &mut line) {
            Ok(0) => break,
            Ok(read) => read,
            Err(e) => {
                outcome = Err(format!("{prv_name} line {n}: {e}"));
                break;
            }
        };
        if line[read - 1] != b'\n' {
            outcome = Err(format!(
                "{prv_name} line {n}: the file ends in the middle of a line: cut short? (records up to line {} shown)",
                n - 1
            ));
            break;
        }
        let record = std::str::from_utf8(&line[..read])
            .map_err(|_| "expected a record in UTF-8".to_string())
            .and_then(|text| parse_record(text.trim_end(), &header, &names.first_thread));
        match record {
            Ok(record) => batch.push((n, record)),
            Err(e) => {
                outcome = Err(format!("{prv_name} line {n}: {e}"));
                break;
            }
        }
        if batch.len() == BATCH {
            fold(&mut batch, prv_name, shared, n)?;
        }
    }
    fold(&mut batch, prv_name, shared, n)?;
    outcome
}

/// The topology `text` of the trace named `names`, its links registered in
/// `aggregate` (idle ones too, in the topology's order).
pub fn with_topology(
    text: &Result<String, String>,
    names: &Names,
    aggregate: &mut Aggregate,
) -> Result<Topology, String> {
    let text = text.as_ref().map_err(String::clone)?;
    // The path is named by the caller; a read error names it already.
    let topology = Topology::parse(text, names)?;
    for (i, link) in topology.links.iter().enumerate() {
        aggregate
            .link(link.from, link.to)
            .map_err(|e| format!("links[{i}]: {e}"))?;
    }
    Ok(topology)
}

/// Folds `batch` (records and their line numbers) into the shared aggregate; `lines`
/// read so far.
pub(super) fn fold(
    batch: &mut Vec<(u64, Record)>,
    prv_name: &str,
    shared: &Arc<RwLock<Shared>>,
    lines: u64,
) -> Result<(), String> {
    let mut state = write_lock(shared);
    state.lines = lines;
    let state = &mut *state;
    for (n, record) in batch.drain(..) {
        record.fold(&mut state.aggregate).map_err(|e| {
            let named = |t: Thread| {
                state
                    .names
                    .threads
                    .get(t as usize)
                    .map_or("?", String::as_str)
                    .to_string()
            };
            match e {
                AggregateError::TwoPeers { from, to, before } => format!(
                    "{prv_name} line {n}: port {} sends to {} here but to {} before: a link has one far end",
                    named(from),
                    named(to),
                    named(before)
                ),
                e => format!("{prv_name} line {n}: {e}"),
            }
        })?;
    }
    Ok(())
}

/// Reads a line (its newline included, if the file did not end first) into `line`;
/// the bytes read, 0 at the end. A line longer than [`MAX_LINE`] is an error.
pub(super) fn next_line(input: &mut dyn BufRead, line: &mut Vec<u8>) -> Result<usize, String> {
    line.clear();
    let read = Read::take(&mut *input, MAX_LINE as u64 + 1)
        .read_until(b'\n', line)
        .map_err(|e| format!("cannot read: {e}"))?;
    if read > MAX_LINE {
        return Err(format!("a line longer than {MAX_LINE} bytes; expected Paraver records"));
    }
    Ok(read)
}

#[cfg(test)]
mod tests;
