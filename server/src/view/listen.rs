//! `vesper view --listen-trace ADDR`: the trace streams of `vesper serve|run
//! --trace-stream ADDR`, each a run on the page, read as they come.
//!
//! ```text
//!   server ─TCP, one connection a run─▶ accept (thread) ─a thread a connection─▶ read_stream
//!                                         │ no byte: a probe (debug log)           │ lines checked as `vesper collect`
//!                                         │ no #Paraver first: not a run (info)    │ checks them (RecordCheck), parsed,
//!                                         ▼                                        ▼ folded a batch at a time
//!                                       Runs (the last --keep-runs) ◀──────────── Shared (write lock), a tick
//! ```
//!
//! The stream's framing is [`crate::network_trace`]'s, read with the collector's own
//! pieces ([`crate::network_trace::read`]'s lines, trailer and
//! [`RecordCheck`]), so a stream the collector refuses is a problem here too, with
//! the same words. After the first header a stream may carry the network's topology
//! (`#vesper-topology BYTES`, then BYTES bytes of JSON), kept as text in
//! [`Shared::topology_text`]. The `.row` comes at the end (`#vesper-row`): until then
//! the ports are named by number and the hosts guessed ([`Names::numbered`]).
//!
//! Invariants:
//! - nothing a connection sends stops the listener or another run: a stream that
//!   breaks a rule, ends early or stalls (`--stall-timeout-s`) keeps what it showed,
//!   with a message ([`Shared::problem`]);
//! - the page lags the stream by at most one batch ([`BATCH`] records) or the records
//!   of one socket read, whichever comes first: a batch is folded when full or when
//!   nothing more has arrived. Reading never waits for the page; a view that cannot
//!   keep up slows the socket (TCP back-pressure), and the server then drops records
//!   after its `--trace-stream-wait-ms`, which its end line counts (shown as the run's
//!   dropped records);
//! - memory: the last `--keep-runs` runs (a run dropped stops being read), each
//!   bounded as [`crate::view`] says, and at most [`MAX_CONNECTIONS`] connections read
//!   at once.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tracing::{debug, info, warn};
use vesper_netmodels::trace::check::RecordCheck;

use super::header::{Header, Names, parse_header};
use super::reader::{Record, fold, parse_record, quantum_of_pcf, with_topology};
use super::topology::Topology;
use super::{Aggregate, Runs, Shared, read_lock, write_lock};
use crate::network_trace::STREAM_TOPOLOGY;
use crate::network_trace::read::{
    Lines, MAX_CONNECTIONS, MAX_SIDECAR, Next, RunNumbers, Trailed, Trailer, final_header, read_trailer, shown,
};

/// Records folded at once at most (one write lock).
pub const BATCH: usize = 4096;

/// How streams are read.
#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// give up on a stream that sends nothing for this long after its first byte
    pub stall: Option<Duration>,
    /// each link's rate \[MB/s\]
    pub link_mbs: f64,
    /// copy each run's stream, byte for byte, to this address (`--forward-trace`: a
    /// collector behind the view)
    pub forward: Option<String>,
}

/// How long a run waits to reach `--forward-trace`'s address before it goes on without.
pub const FORWARD_CONNECT: Duration = Duration::from_secs(5);

/// Accepts streams on `listener` for ever, each read on a thread of its own into a run
/// of `runs`.
pub fn accept(listener: &TcpListener, local: &str, runs: &Arc<Runs>, options: &StreamOptions) -> ! {
    let numbers = Arc::new(RunNumbers::default());
    let connections = Arc::new(AtomicUsize::new(0));
    loop {
        let (socket, peer) = match listener.accept() {
            Ok(accepted) => accepted,
            Err(e) => {
                warn!("--listen-trace {local}: a connection failed: {e}");
                continue;
            }
        };
        let peer = peer.to_string();
        if connections.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            connections.fetch_sub(1, Ordering::SeqCst);
            warn!("{peer}: refused, {MAX_CONNECTIONS} streams are being read already");
            continue;
        }
        let ticket = numbers.ticket();
        let (runs, count, options) = (Arc::clone(runs), Arc::clone(&connections), options.clone());
        let spawned = std::thread::Builder::new()
            .name("vesper-view-stream".into())
            .spawn(move || {
                connection(socket, &peer, ticket, &runs, &options);
                count.fetch_sub(1, Ordering::SeqCst);
            });
        if let Err(e) = spawned {
            connections.fetch_sub(1, Ordering::SeqCst);
            warn!("cannot start a thread for a stream: {e}");
        }
    }
}

/// Reads one connection: a run if it starts with a Paraver header.
fn connection(
    socket: TcpStream,
    peer: &str,
    ticket: crate::network_trace::read::Ticket,
    runs: &Runs,
    options: &StreamOptions,
) {
    let stall = options.stall;
    let tee = Tee {
        input: socket,
        held: Some(Vec::new()),
        copy: None,
        to: String::new(),
    };
    let mut input = BufReader::with_capacity(1 << 16, tee);
    // Its first byte may take as long as the server's clients take.
    match input.fill_buf() {
        Ok([]) => {
            debug!("{peer} closed without sending anything (a probe): not a run");
            return;
        }
        Ok(_) => {}
        Err(e) => {
            info!("{peer}: cannot read it ({e}): not a run");
            return;
        }
    }
    if let Err(e) = input.get_ref().input.set_read_timeout(stall) {
        warn!("{peer}: cannot set its --stall-timeout-s: {e}");
    }
    let mut lines = Lines {
        input,
        line: Vec::new(),
        number: 0,
        stall,
    };
    let first = lines.next();
    if !matches!(first, Ok(Next::Line)) || !lines.line.starts_with(b"#Paraver") {
        info!(
            "{peer}: not a trace stream (expected a Paraver header, #Paraver …, got `{}`): not a run",
            shown(&lines.line)
        );
        return;
    }
    let number = ticket.run();
    let shared = Arc::new(RwLock::new(Shared::new(
        format!("run {number} from {peer}"),
        options.link_mbs,
    )));
    let run = runs.add(number, Arc::clone(&shared));
    info!("{peer}: run {number} starts");
    let tee = lines.input.get_mut();
    let held = tee.held.take().unwrap_or_default();
    if let Some(to) = &options.forward {
        tee.forward(to, &held, number);
    }
    let problem = read_stream(&mut lines, &shared, runs).err();
    if lines.input.get_ref().copy.is_some() {
        // The rest goes to the forwarded stream whatever the view made of it.
        let _ = std::io::copy(&mut lines.input, &mut std::io::sink());
    }
    {
        let mut state = write_lock(&shared);
        state.loading = false;
        if state.problem.is_none() {
            state.problem = problem;
        }
    }
    runs.tick();
    let state = read_lock(&shared);
    let c = state.aggregate.counts();
    let records = c.link_communications + c.end_to_end_communications + c.states + c.events;
    match &state.problem {
        Some(problem) => warn!("run {}: {records} records; {problem}", run.number),
        None => info!("run {}: {records} records, finished", run.number),
    }
}

/// A stream's bytes as they are read, held until the stream is known to be a run,
/// then copied to `--forward-trace`'s address if there is one.
struct Tee {
    input: TcpStream,
    /// the bytes read until the first line is known (then `None`)
    held: Option<Vec<u8>>,
    /// the forwarded stream
    copy: Option<TcpStream>,
    /// its address, for messages
    to: String,
}

impl Tee {
    /// Connects to `to` and sends it what was read so far (`held`), or warns and goes
    /// on without.
    fn forward(&mut self, to: &str, held: &[u8], run: u64) {
        self.to = to.to_string();
        let connected = std::net::ToSocketAddrs::to_socket_addrs(to)
            .and_then(|mut addrs| addrs.next().ok_or_else(|| std::io::Error::other("no address")))
            .and_then(|addr| TcpStream::connect_timeout(&addr, FORWARD_CONNECT))
            .and_then(|mut copy| copy.write_all(held).map(|()| copy));
        match connected {
            Ok(copy) => self.copy = Some(copy),
            Err(e) => warn!("run {run}: --forward-trace {to}: {e}; the run is not forwarded"),
        }
    }
}

impl Read for Tee {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.input.read(buf)?;
        if let Some(held) = &mut self.held {
            held.extend_from_slice(&buf[..n]);
        }
        if let Some(copy) = &mut self.copy
            && let Err(e) = copy.write_all(&buf[..n])
        {
            warn!("--forward-trace {}: {e}; the rest of the run is not forwarded", self.to);
            self.copy = None;
        }
        Ok(n)
    }
}

/// Reads a stream whose first line (a `#Paraver` header) is in `lines` into `shared`;
/// the problem that stopped it, if any (what came before it stays shown).
pub(crate) fn read_stream<R: Read>(
    lines: &mut Lines<BufReader<R>>,
    shared: &Arc<RwLock<Shared>>,
    runs: &Runs,
) -> Result<(), String> {
    let first = lines.text()?.to_string();
    let mut check = RecordCheck::provisional(&first).map_err(|e| format!("line 1: {e}"))?;
    let header = parse_header(&first).map_err(|e| format!("line 1: {e}"))?;
    let mut guess = Names::numbered(&header);
    {
        let mut state = write_lock(shared);
        state.aggregate = Aggregate::new(guess.host_ports(), 0);
        state.names = guess.clone();
        state.numbered = true;
    }
    runs.tick();
    let mut batch: Vec<(u64, Record)> = Vec::with_capacity(BATCH);
    let flush = |batch: &mut Vec<(u64, Record)>, line: usize| -> Result<bool, String> {
        fold(batch, "the stream", shared, line as u64)?;
        runs.tick();
        Ok(!read_lock(shared).abandoned)
    };
    loop {
        let next = lines.next()?;
        match next {
            Next::Line => {}
            Next::End if lines.line.is_empty() => {
                flush(&mut batch, lines.number)?;
                return Err(format!(
                    "the stream ended after {} records, before the final header (the server stopped or the \
                     connection broke)",
                    check.records()
                ));
            }
            Next::End => {
                flush(&mut batch, lines.number)?;
                return Err(format!(
                    "the stream ended in the middle of line {} (records up to line {} shown)",
                    lines.number,
                    lines.number - 1
                ));
            }
            Next::Stalled => {
                flush(&mut batch, lines.number)?;
                return Err(format!(
                    "the stream sent nothing for {} s (--stall-timeout-s) after {} records, before the final \
                     header; given up",
                    lines.stall_s(),
                    check.records()
                ));
            }
            Next::Failed(e) => {
                flush(&mut batch, lines.number)?;
                return Err(format!(
                    "reading the stream failed after {} records: {e}",
                    check.records()
                ));
            }
        }
        if lines.number == 2 && lines.line.starts_with(STREAM_TOPOLOGY.as_bytes()) {
            let topology = read_topology(lines)?;
            if let Some(names) = use_topology(&topology, &header, shared) {
                guess = names;
            }
            write_lock(shared).topology_text = Some(topology);
            runs.tick();
            continue;
        }
        if lines.line.starts_with(b"#Paraver") {
            flush(&mut batch, lines.number)?;
            return finish(lines, check, &header, &guess, shared);
        }
        if lines.line.starts_with(b"#") {
            return Err(format!(
                "line {}: expected a record or the final header (#Paraver …), got `{}`",
                lines.number,
                shown(&lines.line)
            ));
        }
        let text = lines.text()?;
        check.record(text).map_err(|e| e.to_string())?;
        let record =
            parse_record(text, &header, &guess.first_thread).map_err(|e| format!("line {}: {e}", lines.number))?;
        batch.push((lines.number as u64, record));
        // Folded when full, or when nothing more has come (the live edge).
        if (batch.len() == BATCH || lines.input.buffer().is_empty()) && !flush(&mut batch, lines.number)? {
            return Err("dropped from the page (--keep-runs): no longer read".into());
        }
    }
}

/// `#vesper-topology BYTES` (the line in `lines`), then BYTES bytes of JSON.
/// Takes a stream's topology block for the run: its names for the ports (the `.row`
/// comes at the end) and its picture, idle links included. A block that does not fit
/// the header is a message beside the run, which goes on named by number. The names
/// taken, if any.
fn use_topology(text: &str, header: &Header, shared: &Arc<RwLock<Shared>>) -> Option<Names> {
    let used = Topology::names(text, header).and_then(|names| {
        let mut aggregate = Aggregate::new(names.host_ports(), 0);
        let topology = with_topology(&Ok(text.to_string()), &names, &mut aggregate)?;
        Ok((names, aggregate, topology))
    });
    let mut state = write_lock(shared);
    match used {
        Ok((names, aggregate, topology)) => {
            state.aggregate = aggregate;
            state.names = names.clone();
            state.numbered = false;
            state.topology = Some(topology);
            Some(names)
        }
        Err(e) => {
            let message = format!("the stream's topology block: {e}; the layout is derived from the records instead");
            warn!("{message}");
            state.topology_problem = Some(message);
            None
        }
    }
}

fn read_topology<R: Read>(lines: &mut Lines<BufReader<R>>) -> Result<String, String> {
    let at = lines.number;
    let bytes: u64 = lines
        .text()?
        .strip_prefix(STREAM_TOPOLOGY)
        .and_then(|n| n.strip_prefix(' '))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| {
            format!(
                "line {at}: expected `{STREAM_TOPOLOGY} BYTES`, got `{}`",
                shown(&lines.line)
            )
        })?;
    if bytes > MAX_SIDECAR {
        return Err(format!(
            "line {at}: a topology of {bytes} bytes; more than {MAX_SIDECAR} are refused"
        ));
    }
    let mut text = Vec::new();
    let read = lines.input.by_ref().take(bytes).read_to_end(&mut text);
    if read.is_err() || (text.len() as u64) < bytes {
        return Err(format!(
            "line {at}: the stream ended (or stalled) within the topology's {bytes} bytes, after {}",
            text.len()
        ));
    }
    lines.number += text.iter().filter(|&&b| b == b'\n').count();
    String::from_utf8(text).map_err(|_| format!("line {}: the topology is not UTF-8 text", at + 1))
}

/// The rest of a stream from its final header (the line in `lines`): the end time, and
/// the trailer's names, backlog quantum and record count.
fn finish<R: Read>(
    lines: &mut Lines<BufReader<R>>,
    check: RecordCheck,
    header: &Header,
    guess: &Names,
    shared: &Arc<RwLock<Shared>>,
) -> Result<(), String> {
    let at = lines.number;
    let text = lines.text()?.to_string();
    let end_ns = final_header(&check, &text, at)?;
    write_lock(shared).aggregate.end_at(end_ns);
    let received = check.records();
    let Trailer { pcf, row, sent } = match read_trailer(lines) {
        Ok(trailer) => trailer,
        Err(Trailed::Bad(problem)) => return Err(problem),
        Err(Trailed::Cut(cut)) => return Err(format!("{cut}; the ports stay named by number")),
    };
    check.finish(&text, &pcf, &row).map_err(|e| e.to_string())?;
    if sent < received {
        return Err(format!(
            "{received} records arrived, but the end line says the server sent {sent}"
        ));
    }
    let names = Names::of_row(&row, header).map_err(|e| format!("the .row: {e}"))?;
    let mut state = write_lock(shared);
    state.quantum_bytes = quantum_of_pcf(&pcf);
    state.dropped_records = Some(sent - received);
    if names.host != guess.host {
        state.problem = Some(
            "the .row's hosts are not the tasks of one thread the view took for hosts until it came: records \
             between two hosts may be drawn as links"
                .into(),
        );
    }
    state.names = names;
    state.numbered = false;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "#Paraver (01/01/2026 at 00:00):0_ns:0:1:2(1:0,2:0)";

    /// Reads `stream` (its first line a header) as a run; the problem and the state.
    fn read(stream: &str) -> (Result<(), String>, Shared) {
        let mut lines = Lines {
            input: BufReader::new(stream.as_bytes()),
            line: Vec::new(),
            number: 0,
            stall: None,
        };
        assert!(matches!(lines.next(), Ok(Next::Line)));
        let shared = Arc::new(RwLock::new(Shared::new("test".into(), 250.0)));
        let runs = Runs::new(1, None);
        let outcome = read_stream(&mut lines, &shared, &runs);
        let state = Arc::try_unwrap(shared)
            .expect("one owner")
            .into_inner()
            .expect("not poisoned");
        (outcome, state)
    }

    #[test]
    fn the_topology_is_kept_and_ports_are_named_by_number_until_the_row() {
        let topology = "{\"devices\":\n[\"host0\"]}";
        let stream = format!(
            "{HEADER}\n#vesper-topology {}\n{topology}3:0:1:1:1:0:0:0:1:2:1:5:9:10:1\n",
            topology.len()
        );
        let (outcome, state) = read(&stream);
        assert_eq!(
            outcome,
            Err(
                "the stream ended after 1 records, before the final header (the server stopped or the connection \
                 broke)"
                    .into()
            )
        );
        assert_eq!(state.topology_text.as_deref(), Some(topology));
        assert_eq!(state.names.threads, ["task1.t1", "task2.t1", "task2.t2"]);
        assert_eq!(
            state.names.host,
            [true, false],
            "a task of one port is taken for a host"
        );
        assert_eq!(state.aggregate.links().len(), 1);
        assert_eq!(state.aggregate.links()[0].bytes, 10);
        // The record after the topology is line 4: the topology's newline counts.
        assert_eq!(state.lines, 4);
    }

    #[test]
    fn a_topology_that_is_not_what_it_says_is_a_problem() {
        let cases = [
            (
                "#vesper-topology x\n",
                "line 2: expected `#vesper-topology BYTES`, got `#vesper-topology x`",
            ),
            (
                "#vesper-topology 99\n{}",
                "line 2: the stream ended (or stalled) within the topology's 99 bytes, after 2",
            ),
            ("#vesper-topology 1\n\u{ff}", "line 3: the topology is not UTF-8 text"),
        ];
        for (rest, expected) in cases {
            let (outcome, state) = read(&format!("{HEADER}\n{rest}"));
            assert_eq!(outcome, Err(expected.to_string()), "{rest:?}");
            assert_eq!(state.topology_text, None);
        }
        // Anywhere else, it is a line that is no record.
        let (outcome, _) = read(&format!(
            "{HEADER}\n3:0:1:1:1:0:0:0:1:2:1:5:9:10:1\n#vesper-topology 2\n{{}}"
        ));
        assert_eq!(
            outcome,
            Err("line 3: expected a record or the final header (#Paraver …), got `#vesper-topology 2`".into())
        );
    }
}
