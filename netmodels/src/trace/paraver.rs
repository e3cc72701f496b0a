//! The network's Paraver trace (`shared/spec/formats.md` §1; seed 004, §4.2 and its
//! Table 1): every adapter and every switch is a Paraver task, each of its ports a
//! thread, all in one application.
//!
//! ```text
//!   Simulation ─hooks─▶ ParaverSink (one per rail)         ParaverWriter
//!                        records ─▶ reorder window ──────▶ merge by (time, kind, thread)
//!                        (held back while something        ─▶ TraceOutput: .prv body,
//!                         may still come earlier)             then header, .pcf, .row
//! ```
//!
//! Records (times in integer ns, rounded down from the model's picoseconds):
//! - state: the backlog of a port, quantized: level `k ≥ 1` means
//!   `(k − 1)·quantum < bytes ≤ k·quantum` (capped at [`MAX_LEVEL`]); an empty port has
//!   no state record. Input buffers, output queues or both are counted
//!   ([`BacklogCount`]). A state is written in pieces that end at multiples of
//!   `state_split` (Paraver allows consecutive records of one state), which bounds the
//!   reorder window; the cuts do not depend on when the clock passed them (which
//!   differs from partition to partition of a split network);
//! - event: flow control sent ([`FLOW_CONTROL_SENT`]) and received
//!   ([`FLOW_CONTROL_RECEIVED`]), head-of-line blocking ([`HOL_BLOCKING`]) and segment
//!   (packet) transmission ([`SEGMENT`], with [`SEGMENT_MESSAGE`] and [`SEGMENT_NUMBER`]
//!   in the same record);
//! - communication: one per message per link, sender = the transmitting port, receiver =
//!   the peer port; logical send = the sender's device got the message's first byte,
//!   physical send = the first byte left, logical receive = the first byte arrived,
//!   physical receive = the last byte arrived; size = the message's bytes; tag = the
//!   message's number (on `R` rails, `(n − 1)·R + r + 1` for message `n` of rail `r`).
//!   With `end_to_end`, also one per message from the source host's port to the
//!   destination host's: injected, first byte sent, first byte in, last byte in.
//!
//! Ordering: records come out sorted by time, then events before states before
//! communications, then by thread, then in the order the model reported them (but
//! end-to-end communications: after the thread's others of their instant, by message
//! number, since they are reported where a message ends). The
//! model reports a communication when the message's last byte starts on the link and a
//! state when it ends, after later records: each sink keeps its records until nothing
//! earlier can come (the *watermark*: the clock, the oldest open state, the oldest
//! message whose next link record is pending). Memory therefore depends on how long a
//! state or a message stays open, not on the length of the run.
//!
//! Split networks ([`crate::partition`], [`TracedNetwork::build_split`]): one sink per
//! partition, merged like rails; every record of a port comes from its device's
//! partition, so the merge gives the network whole's trace. On MPI ranks
//! ([`TracedNetwork::build_on_ranks`]) each writing step is collective: the least
//! watermark of every rank's sinks (an all-reduce), then every rank's records below it
//! to rank 0 (an all-to-all), which merges and writes them.
//!
//! Multi-rail networks: one trace for all rails; rail `r`'s devices are named
//! `r{r}.host{h}` and `r{r}.sw{s}` (a host's adapter on each rail is a task of its own).
//! A single network's are `host{h}` and `sw{s}`.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::sync::Arc;

use crate::build_error::BuildError;
use crate::builder::NetworkBuilder;
use crate::ids::Device;
use crate::message::{Delivery, InjectError, MessageSpec};
use crate::network::Network;
use crate::partition::ranks::{self, Ranks, Reduce, Words};
use crate::partition::{Followed, Lead, Partitioned, SplitError, TraceStep};
use crate::rails::MultiRail;
use crate::time::SimTime;
use crate::topology::Topology;
use crate::topology::multirail::RailPolicy;
use crate::trace::select::{DeviceSelection, TimeWindow};
use crate::trace::{BufferSide, FlowSignal, LinkTraversal, PortRef, Source, TraceSink};

pub mod topology;
pub use topology::{TOPOLOGY_VERSION, TraceShape};

/// Event type: a port sent a flow-control signal (values 1 = STOP, 2 = GO).
pub const FLOW_CONTROL_SENT: u32 = 70_000_001;
/// Event type: a port received a flow-control signal (values 1 = STOP, 2 = GO).
pub const FLOW_CONTROL_RECEIVED: u32 = 70_000_002;
/// Event type: head-of-line blocking at an input port (1 = start, 0 = end).
pub const HOL_BLOCKING: u32 = 70_000_003;
/// Event type: bubble flow control, an output port with a packet that wants it started
/// (1) or stopped (0) waiting for a packet slot in the buffer beyond its cable.
pub const ROOM_WAIT: u32 = 70_000_007;
/// Event type: a port started (1) or finished (0) sending a segment (packet).
pub const SEGMENT: u32 = 70_000_004;
/// Event type, with [`SEGMENT`]: the segment's message (its communication tag).
pub const SEGMENT_MESSAGE: u32 = 70_000_005;
/// Event type, with [`SEGMENT`]: the segment's number within its message (1-based).
pub const SEGMENT_NUMBER: u32 = 70_000_006;

/// The highest backlog level written (Paraver colours 1000 states).
pub const MAX_LEVEL: u32 = 999;

/// The header's date unless told otherwise: fixed, so that traces are reproducible.
pub const DEFAULT_DATE: &str = "01/01/2026 at 00:00";

/// Which buffers of a port its backlog state counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BacklogCount {
    /// bytes waiting at the port's input (wormhole slack buffers, CIOQ input queues)
    Input,
    /// bytes waiting to leave by the port (output queues)
    Output,
    /// both
    #[default]
    Both,
}

/// How the trace is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParaverOptions {
    /// size of one backlog level \[bytes\], at least 1
    pub quantum_bytes: u64,
    /// which buffers count
    pub backlog: BacklogCount,
    /// also one communication record per message between its hosts
    pub end_to_end: bool,
    /// the header's `DD/MM/YYYY at HH:MM`
    pub date: String,
    /// which devices are traced
    pub devices: DeviceSelection,
    /// which part of the run is traced
    pub window: TimeWindow,
    /// states are cut at multiples of this (bounds the reorder window) \[ps\]
    pub state_split: SimTime,
    /// each rail's shape, for the topology text (a rail not listed: the shape its
    /// routing shows, [`TraceShape::of`])
    pub shapes: Vec<TraceShape>,
}

impl Default for ParaverOptions {
    fn default() -> Self {
        ParaverOptions {
            quantum_bytes: 1024,
            backlog: BacklogCount::Both,
            end_to_end: false,
            date: DEFAULT_DATE.to_string(),
            devices: DeviceSelection::all(),
            window: TimeWindow::default(),
            state_split: SimTime::from_ns(100_000),
            shapes: Vec::new(),
        }
    }
}

/// Why a trace cannot be set up or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// the network itself is invalid
    #[error(transparent)]
    Build(#[from] BuildError),
    /// the device selection names no device of the network
    #[error(
        "the device selection matches no device of the network (hosts are named host0…, switches sw0…; {switches} \
         switches{})",
        if *multi_rail { "; rails prefix them with r0., r1., …" } else { "" }
    )]
    NoDevice {
        /// the network's switches
        switches: usize,
        /// whether its devices' names carry their rail
        multi_rail: bool,
    },
    /// a backlog quantum of no bytes
    #[error("the backlog quantum must be at least 1 byte")]
    ZeroQuantum,
    /// the network cannot be split as asked
    #[error(transparent)]
    Split(SplitError),
    /// the output failed
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Where the trace goes. The `.prv` body (its records) is written through
/// [`Write`]; the header, which holds the trace's end time, comes last, with the
/// `.pcf` and `.row`. The topology text (`FILE.topology`, see [`topology`]) is known
/// from the start.
pub trait TraceOutput: Write {
    /// Called once before any record, with the header as far as it is known (end time
    /// 0) and the topology text: streams send them, files wait for
    /// [`TraceOutput::complete`].
    fn begin(&mut self, _provisional_header: &str, _topology: &str) -> io::Result<()> {
        Ok(())
    }

    /// Called once after the last record: the final header line (no newline) and the
    /// contents of the `.pcf` and `.row` files.
    fn complete(&mut self, header: &str, pcf: &str, row: &str) -> io::Result<()>;
}

/// A trace kept in memory (tests, small runs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryOutput {
    /// the records
    pub body: Vec<u8>,
    /// the final header (empty until complete)
    pub header: String,
    /// the `.pcf`
    pub pcf: String,
    /// the `.row`
    pub row: String,
    /// the topology text (`FILE.topology`)
    pub topology: String,
}

impl MemoryOutput {
    /// The whole `.prv`: header and records.
    pub fn prv(&self) -> String {
        format!("{}\n{}", self.header, String::from_utf8_lossy(&self.body))
    }
}

impl Write for MemoryOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.body.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl TraceOutput for MemoryOutput {
    fn begin(&mut self, _provisional_header: &str, topology: &str) -> io::Result<()> {
        self.topology = topology.to_string();
        Ok(())
    }

    fn complete(&mut self, header: &str, pcf: &str, row: &str) -> io::Result<()> {
        self.header = header.to_string();
        self.pcf = pcf.to_string();
        self.row = row.to_string();
        Ok(())
    }
}

/// A trace kept nowhere: what the ranks other than 0 write into, rank 0 writing the
/// whole trace (see [`TracedNetwork::build_on_ranks`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoOutput;

impl Write for NoOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl TraceOutput for NoOutput {
    fn complete(&mut self, _header: &str, _pcf: &str, _row: &str) -> io::Result<()> {
        Ok(())
    }
}

/// What a finished trace holds: the records the writer produced and handed to its
/// output (an output that loses some, such as a stream to a collector that does not
/// keep up, counts its losses itself).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct TraceSummary {
    /// Paraver tasks (devices traced)
    pub tasks: u32,
    /// Paraver threads (ports traced)
    pub threads: u32,
    /// state records produced
    pub states: u64,
    /// event records produced
    pub events: u64,
    /// communication records produced
    pub communications: u64,
    /// the header's end time \[ns\]
    pub end_ns: u64,
    /// records that came after later ones had been written (0 unless the model breaks
    /// its time contract; written anyway, out of order)
    pub late_records: u64,
    /// messages still in the network at the end (their last link records are missing)
    pub unfinished_messages: u64,
    /// the link whose communication records carry the most bytes (ties: the first
    /// port in the `.row`); none without link records. End-to-end records (host port
    /// to host port) are not links.
    pub busiest_link: Option<LinkBytes>,
}

/// A link of the trace and the bytes of its communication records.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LinkBytes {
    /// the transmitting port (its `.row` name)
    pub from: String,
    /// the port at the far end
    pub to: String,
    /// the sizes of the link's records, summed
    pub bytes: u64,
}

const NONE: u32 = u32::MAX;

/// The tasks and threads: which ports are traced and under which ids.
#[derive(Debug)]
pub struct Layout {
    /// per task: name and threads
    tasks: Vec<(String, u32)>,
    /// per thread: 1-based task and 1-based thread within it, and its name
    threads: Vec<(u32, u32, String)>,
    /// per rail, per host: its port's thread (`NONE`: not traced)
    host_thread: Vec<Vec<u32>>,
    /// per rail, per switch: its port 0's thread (`NONE`: not traced)
    switch_thread: Vec<Vec<u32>>,
    /// per rail: the range of its threads
    rail_threads: Vec<(u32, u32)>,
}

impl Layout {
    /// The layout of `rails` (one builder per rail), keeping the devices `selection`
    /// names.
    pub fn new(rails: &[NetworkBuilder], selection: &DeviceSelection) -> Result<Layout, TraceError> {
        let mut layout = Layout {
            tasks: Vec::new(),
            threads: Vec::new(),
            host_thread: Vec::new(),
            switch_thread: Vec::new(),
            rail_threads: Vec::new(),
        };
        let multi = rails.len() > 1;
        for (r, rail) in rails.iter().enumerate() {
            let first = layout.threads.len() as u32;
            let switch_ports: &[u32] = rail.topology().map_or(&[], |t| &t.switch_ports);
            let switch_levels = rail.topology().map(switch_levels).unwrap_or_default();
            let mut devices: Vec<(Device, u32, Option<u32>)> = (0..rail.hosts())
                .map(|h| (Device::Host(crate::HostId(h)), 1, Some(0)))
                .collect();
            devices.extend(switch_ports.iter().enumerate().map(|(s, &ports)| {
                let level = switch_levels.get(s).copied().flatten();
                (Device::Switch(crate::SwitchId(s as u32)), ports, level)
            }));
            let mut hosts = vec![NONE; rail.hosts() as usize];
            let mut switches = vec![NONE; switch_ports.len()];
            for (device, ports, level) in devices {
                let plain = device.to_string();
                let qualified = multi.then(|| format!("r{r}.{plain}"));
                if ports == 0 || !selection.selects(&plain, qualified.as_deref(), level) {
                    continue;
                }
                let name = qualified.unwrap_or(plain);
                let task = layout.tasks.len() as u32 + 1;
                let base = layout.threads.len() as u32;
                for p in 0..ports {
                    layout.threads.push((task, p + 1, format!("{name}.p{p}")));
                }
                layout.tasks.push((name, ports));
                match device {
                    Device::Host(h) => hosts[h.index()] = base,
                    Device::Switch(s) => switches[s.index()] = base,
                }
            }
            layout.host_thread.push(hosts);
            layout.switch_thread.push(switches);
            layout.rail_threads.push((first, layout.threads.len() as u32));
        }
        if layout.tasks.is_empty() {
            let switches: usize = rails
                .iter()
                .map(|r| r.topology().map_or(0, |t| t.switch_ports.len()))
                .sum();
            return Err(TraceError::NoDevice {
                switches,
                multi_rail: multi,
            });
        }
        Ok(layout)
    }

    /// The thread of `port` on rail `rail`, if traced.
    fn thread(&self, rail: usize, port: PortRef) -> Option<u32> {
        let base = match port.device {
            Device::Host(h) => *self.host_thread[rail].get(h.index())?,
            Device::Switch(s) => *self.switch_thread[rail].get(s.index())?,
        };
        (base != NONE).then(|| base + port.port)
    }

    /// Number of tasks.
    pub fn tasks(&self) -> u32 {
        self.tasks.len() as u32
    }

    /// Number of threads.
    pub fn threads(&self) -> u32 {
        self.threads.len() as u32
    }

    /// The `.row` file: task and thread names.
    pub fn row(&self) -> String {
        let mut row = format!("LEVEL TASK SIZE {}\n", self.tasks.len());
        for (name, _) in &self.tasks {
            row.push_str(name);
            row.push('\n');
        }
        let _ = writeln!(row, "\nLEVEL THREAD SIZE {}", self.threads.len());
        for (_, _, name) in &self.threads {
            row.push_str(name);
            row.push('\n');
        }
        row
    }

    /// The header: `#Paraver (date):end_ns:0:1:ntasks(nthreads:0,…)`.
    pub fn header(&self, date: &str, end_ns: u64) -> String {
        let tasks: Vec<String> = self.tasks.iter().map(|(_, n)| format!("{n}:0")).collect();
        format!(
            "#Paraver ({date}):{end_ns}_ns:0:1:{}({})",
            self.tasks.len(),
            tasks.join(",")
        )
    }
}

/// Each switch's distance in cables from the nearest host (`None`: no host reachable).
fn switch_levels(topology: &Topology) -> Vec<Option<u32>> {
    let hosts = topology.hosts as usize;
    let index = |d: Device| match d {
        Device::Host(h) => h.index(),
        Device::Switch(s) => hosts + s.index(),
    };
    let n = hosts + topology.switch_ports.len();
    let mut neighbours = vec![Vec::new(); n];
    for c in &topology.cables {
        let (a, b) = (index(c.a.device), index(c.b.device));
        if a < n && b < n {
            neighbours[a].push(b);
            neighbours[b].push(a);
        }
    }
    let mut level: Vec<Option<u32>> = (0..n).map(|d| (d < hosts).then_some(0)).collect();
    let mut queue: std::collections::VecDeque<usize> = (0..hosts).collect();
    while let Some(d) = queue.pop_front() {
        let next = level[d].map(|l| l + 1);
        for &e in &neighbours[d] {
            if level[e].is_none() {
                level[e] = next;
                queue.push_back(e);
            }
        }
    }
    level.split_off(hosts)
}

/// Kinds, in their order at equal times.
const EVENT: u8 = 0;
const STATE: u8 = 1;
const COMMUNICATION: u8 = 2;

#[derive(Debug, Clone, Copy)]
enum Body {
    State {
        end_ns: u64,
        level: u32,
    },
    Event {
        event_type: u32,
        value: u32,
    },
    Segment {
        started: bool,
        tag: u64,
        number: u32,
    },
    Communication {
        physical_send_ns: u64,
        receiver: u32,
        logical_recv_ns: u64,
        physical_recv_ns: u64,
        size: u32,
        tag: u64,
    },
}

/// One record, ordered by (time, kind, thread, report order), but for end-to-end
/// communications: they come after the thread's other records of their instant, by
/// message number (`seq`), as the partition that reports them need not be the thread's.
#[derive(Debug, Clone, Copy)]
struct Record {
    ns: u64,
    kind: u8,
    thread: u32,
    end_to_end: bool,
    seq: u64,
    body: Body,
}

impl Record {
    fn key(&self) -> (u64, u8, u32, bool, u64) {
        (self.ns, self.kind, self.thread, self.end_to_end, self.seq)
    }
}

impl PartialEq for Record {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Record {}

impl PartialOrd for Record {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Record {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// Puts `r` in `out`, as little-endian words, for another rank (see [`record`]).
fn put_record(out: &mut Vec<u8>, r: &Record) {
    ranks::put_u64(out, r.ns);
    out.push(r.kind);
    ranks::put_u32(out, r.thread);
    out.push(u8::from(r.end_to_end));
    ranks::put_u64(out, r.seq);
    match r.body {
        Body::State { end_ns, level } => {
            out.push(0);
            ranks::put_u64(out, end_ns);
            ranks::put_u32(out, level);
        }
        Body::Event { event_type, value } => {
            out.push(1);
            ranks::put_u32(out, event_type);
            ranks::put_u32(out, value);
        }
        Body::Segment { started, tag, number } => {
            out.push(2);
            out.push(u8::from(started));
            ranks::put_u64(out, tag);
            ranks::put_u32(out, number);
        }
        Body::Communication {
            physical_send_ns,
            receiver,
            logical_recv_ns,
            physical_recv_ns,
            size,
            tag,
        } => {
            out.push(3);
            ranks::put_u64(out, physical_send_ns);
            ranks::put_u32(out, receiver);
            ranks::put_u64(out, logical_recv_ns);
            ranks::put_u64(out, physical_recv_ns);
            ranks::put_u32(out, size);
            ranks::put_u64(out, tag);
        }
    }
}

/// The next record another rank put ([`put_record`]).
fn record(words: &mut Words<'_>) -> Record {
    let (ns, kind, thread, end_to_end, seq) = (words.u64(), words.u8(), words.u32(), words.u8() != 0, words.u64());
    let body = match words.u8() {
        0 => Body::State {
            end_ns: words.u64(),
            level: words.u32(),
        },
        1 => Body::Event {
            event_type: words.u32(),
            value: words.u32(),
        },
        2 => Body::Segment {
            started: words.u8() != 0,
            tag: words.u64(),
            number: words.u32(),
        },
        _ => Body::Communication {
            physical_send_ns: words.u64(),
            receiver: words.u32(),
            logical_recv_ns: words.u64(),
            physical_recv_ns: words.u64(),
            size: words.u32(),
            tag: words.u64(),
        },
    };
    Record {
        ns,
        kind,
        thread,
        end_to_end,
        seq,
        body,
    }
}

/// A port's buffers and the state it shows.
#[derive(Debug, Clone, Copy, Default)]
struct PortState {
    input: u64,
    output: u64,
    level: u32,
    since: SimTime,
}

/// A message between its injection and its destination.
#[derive(Debug, Clone, Copy)]
struct OpenMessage {
    /// the earliest time its records still to come may carry
    hold: SimTime,
    /// its injection
    injected: SimTime,
    /// its source port and first byte sent, once known (end-to-end records)
    source: Option<(PortRef, SimTime)>,
}

/// Collects one rail's records and holds them until they can be written in order.
#[derive(Debug)]
pub struct ParaverSink {
    layout: Arc<Layout>,
    rail: usize,
    rails: u64,
    quantum: u64,
    backlog: BacklogCount,
    end_to_end: bool,
    window: TimeWindow,
    state_split: SimTime,
    clock: SimTime,
    seq: u64,
    heap: BinaryHeap<Reverse<Record>>,
    /// this rail's first thread
    first_thread: u32,
    ports: Vec<PortState>,
    /// (since, thread) of the ports with a non-empty state
    open_states: BTreeSet<(SimTime, u32)>,
    messages: BTreeMap<u64, OpenMessage>,
    /// (hold, message) of the open messages
    holds: BTreeSet<(SimTime, u64)>,
    /// records below this time have been handed out \[ns\]
    released_ns: u64,
    late: u64,
}

impl ParaverSink {
    fn new(layout: Arc<Layout>, rail: usize, rails: usize, options: &ParaverOptions) -> ParaverSink {
        let (first, end) = layout.rail_threads[rail];
        ParaverSink {
            layout,
            rail,
            rails: rails as u64,
            quantum: options.quantum_bytes.max(1),
            backlog: options.backlog,
            end_to_end: options.end_to_end,
            window: options.window,
            state_split: options.state_split.max(SimTime::from_ps(1)),
            clock: SimTime::ZERO,
            seq: 0,
            heap: BinaryHeap::new(),
            first_thread: first,
            ports: vec![PortState::default(); (end - first) as usize],
            open_states: BTreeSet::new(),
            messages: BTreeMap::new(),
            holds: BTreeSet::new(),
            released_ns: 0,
            late: 0,
        }
    }

    fn tag(&self, message: u64) -> u64 {
        (message.saturating_sub(1)) * self.rails + self.rail as u64 + 1
    }

    fn push(&mut self, ns: u64, kind: u8, thread: u32, body: Body) {
        self.seq += 1;
        self.push_ordered(ns, kind, thread, (false, self.seq), body);
    }

    fn push_ordered(&mut self, ns: u64, kind: u8, thread: u32, order: (bool, u64), body: Body) {
        if ns < self.released_ns {
            self.late += 1;
        }
        let (end_to_end, seq) = order;
        self.heap.push(Reverse(Record {
            ns,
            kind,
            thread,
            end_to_end,
            seq,
            body,
        }));
    }

    fn event(&mut self, at: SimTime, port: PortRef, body: Body) {
        let ns = at.as_ps() / 1000;
        if let Some(thread) = self.layout.thread(self.rail, port)
            && self.window.contains(ns)
        {
            self.push(ns, EVENT, thread, body);
        }
    }

    /// Writes `thread`'s state `level` over `[begin, end)`, clipped to the window, in
    /// pieces that end at multiples of `state_split` (so that the pieces do not depend
    /// on when the clock passed them, which differs between partitions).
    fn state(&mut self, thread: u32, begin: SimTime, end: SimTime, level: u32) {
        let mut from = begin;
        while from < end {
            let to = self.cut_after(from).min(end);
            let begin_ns = (from.as_ps() / 1000).max(self.window.start_ns);
            let end_ns = (to.as_ps() / 1000).min(self.window.end_ns);
            if begin_ns < end_ns {
                self.push(begin_ns, STATE, thread, Body::State { end_ns, level });
            }
            from = to;
        }
    }

    /// The first multiple of `state_split` after `t`.
    fn cut_after(&self, t: SimTime) -> SimTime {
        let split = self.state_split.as_ps();
        SimTime::from_ps((t.as_ps() / split).saturating_add(1).saturating_mul(split))
    }

    /// A link's record: reported by its sender's partition, in its order.
    fn communication(&mut self, sender: PortRef, receiver: PortRef, times: [SimTime; 4], size: u32, message: u64) {
        self.seq += 1;
        let order = (false, self.seq);
        self.communication_ordered(sender, receiver, times, size, message, order);
    }

    fn communication_ordered(
        &mut self,
        sender: PortRef,
        receiver: PortRef,
        times: [SimTime; 4],
        size: u32,
        message: u64,
        order: (bool, u64),
    ) {
        let ns = times.map(|t| t.as_ps() / 1000);
        let (Some(from), Some(to)) = (
            self.layout.thread(self.rail, sender),
            self.layout.thread(self.rail, receiver),
        ) else {
            return;
        };
        if !self.window.contains(ns[0]) {
            return;
        }
        let tag = self.tag(message);
        self.push_ordered(
            ns[0],
            COMMUNICATION,
            from,
            order,
            Body::Communication {
                physical_send_ns: ns[1],
                receiver: to,
                logical_recv_ns: ns[2],
                physical_recv_ns: ns[3],
                size,
                tag,
            },
        );
    }

    fn set_hold(&mut self, message: u64, hold: SimTime) {
        if let Some(m) = self.messages.get_mut(&message) {
            self.holds.remove(&(m.hold, message));
            m.hold = hold;
            self.holds.insert((hold, message));
        }
    }

    /// Nothing this sink will still produce is earlier than this.
    fn watermark(&self) -> SimTime {
        let mut w = self.clock;
        if let Some(&(t, _)) = self.holds.first() {
            w = w.min(t);
        }
        if let Some(&(t, _)) = self.open_states.first() {
            w = w.min(t);
        }
        w
    }

    /// Moves the records below `ns` into `out`, in order.
    fn release(&mut self, ns: u64, out: &mut Vec<Record>) {
        while let Some(Reverse(top)) = self.heap.peek() {
            if top.ns >= ns {
                break;
            }
            if let Some(Reverse(r)) = self.heap.pop() {
                out.push(r);
            }
        }
        self.released_ns = self.released_ns.max(ns);
    }

    /// Ends every open state at `at` and forgets unfinished messages; returns how many
    /// there were.
    fn close(&mut self, at: SimTime) -> u64 {
        let open: Vec<(SimTime, u32)> = std::mem::take(&mut self.open_states).into_iter().collect();
        for (since, thread) in open {
            let port = &mut self.ports[(thread - self.first_thread) as usize];
            let level = port.level;
            port.level = 0;
            self.state(thread, since, at.max(since), level);
        }
        self.holds.clear();
        let unfinished = self.messages.len() as u64;
        self.messages.clear();
        unfinished
    }
}

impl TraceSink for ParaverSink {
    fn clock(&mut self, now: SimTime) {
        if now <= self.clock {
            return;
        }
        self.clock = now;
        // Long states are written in pieces, so that they do not hold the window open.
        let split = self.state_split.as_ps();
        let cut = SimTime::from_ps(now.as_ps() / split * split);
        while let Some(&(since, thread)) = self.open_states.first() {
            if since >= cut {
                break;
            }
            self.open_states.pop_first();
            let level = self.ports[(thread - self.first_thread) as usize].level;
            self.state(thread, since, cut, level);
            self.ports[(thread - self.first_thread) as usize].since = cut;
            self.open_states.insert((cut, thread));
        }
    }

    fn backlog(&mut self, at: SimTime, port: PortRef, side: BufferSide, bytes: u64) {
        let Some(thread) = self.layout.thread(self.rail, port) else {
            return;
        };
        let index = (thread - self.first_thread) as usize;
        let p = &mut self.ports[index];
        match side {
            BufferSide::Input => p.input = bytes,
            BufferSide::Output => p.output = bytes,
        }
        let counted = match self.backlog {
            BacklogCount::Input => p.input,
            BacklogCount::Output => p.output,
            BacklogCount::Both => p.input.saturating_add(p.output),
        };
        let level = counted.div_ceil(self.quantum).min(u64::from(MAX_LEVEL)) as u32;
        if level == p.level {
            return;
        }
        let (old, since) = (p.level, p.since);
        p.level = level;
        p.since = at;
        if old > 0 {
            self.open_states.remove(&(since, thread));
            self.state(thread, since, at, old);
        }
        if level > 0 {
            self.open_states.insert((at, thread));
        }
    }

    fn flow_control(&mut self, at: SimTime, port: PortRef, signal: FlowSignal, sent: bool) {
        let event_type = if sent { FLOW_CONTROL_SENT } else { FLOW_CONTROL_RECEIVED };
        let value = match signal {
            FlowSignal::Stop => 1,
            FlowSignal::Go => 2,
        };
        self.event(at, port, Body::Event { event_type, value });
    }

    fn hol_blocking(&mut self, at: SimTime, port: PortRef, started: bool) {
        let body = Body::Event {
            event_type: HOL_BLOCKING,
            value: u32::from(started),
        };
        self.event(at, port, body);
    }

    fn room_wait(&mut self, at: SimTime, port: PortRef, started: bool) {
        let body = Body::Event {
            event_type: ROOM_WAIT,
            value: u32::from(started),
        };
        self.event(at, port, body);
    }

    fn segment(&mut self, at: SimTime, port: PortRef, message: u64, packet: u32, started: bool) {
        let body = Body::Segment {
            started,
            tag: self.tag(message),
            number: packet.saturating_add(1),
        };
        self.event(at, port, body);
    }

    fn injected(&mut self, at: SimTime, message: u64) {
        // Its first link's record goes back to its injection, however long it waits in
        // the adapter.
        let open = OpenMessage {
            hold: at,
            injected: at,
            source: None,
        };
        self.messages.insert(message, open);
        self.holds.insert((at, message));
    }

    fn link_traversal_started(&mut self, t: &LinkTraversal) {
        if let Device::Host(_) = t.sender.device
            && let Some(m) = self.messages.get_mut(&t.message)
        {
            m.source = Some((t.sender, t.first_out));
        }
    }

    fn link_traversal(&mut self, t: &LinkTraversal) {
        let times = [t.first_in, t.first_out, t.first_arrival, t.last_arrival];
        self.communication(t.sender, t.receiver, times, t.size_bytes, t.message);
        let Some(open) = self.messages.get(&t.message).copied() else {
            return;
        };
        if let Device::Host(_) = t.receiver.device {
            self.holds.remove(&(open.hold, t.message));
            self.messages.remove(&t.message);
            if self.end_to_end
                && let Some((source, first_sent)) = open.source
            {
                let times = [open.injected, first_sent, t.first_arrival, t.last_arrival];
                let order = (true, t.message);
                self.communication_ordered(source, t.receiver, times, t.size_bytes, t.message, order);
            }
        } else if !self.end_to_end {
            // The next link's record starts when the head reached the next device.
            self.set_hold(t.message, t.first_arrival);
        }
    }

    fn arrived(&mut self, message: u64, head_in: SimTime, from: Source) {
        // Its next link's record starts no sooner than its head got here; its
        // end-to-end record, at its injection.
        let hold = if self.end_to_end { from.injected } else { head_in };
        match self.messages.get(&message).copied() {
            Some(open) if open.hold <= hold => {}
            Some(_) => self.set_hold(message, hold),
            None => {
                let open = OpenMessage {
                    hold,
                    injected: from.injected,
                    source: Some((from.port, from.first_out)),
                };
                self.messages.insert(message, open);
                self.holds.insert((hold, message));
            }
        }
    }

    fn left(&mut self, message: u64) {
        if let Some(open) = self.messages.remove(&message) {
            self.holds.remove(&(open.hold, message));
        }
    }
}

/// Formats and writes the records the sinks release, in order, then the header,
/// `.pcf` and `.row`.
#[derive(Debug)]
pub struct ParaverWriter<O: TraceOutput> {
    layout: Arc<Layout>,
    date: String,
    quantum: u64,
    output: O,
    scratch: Vec<Record>,
    line: String,
    max_level: u32,
    summary: TraceSummary,
    /// per thread: whether it is a host's port (records between two are end to end)
    host_port: Vec<bool>,
    /// per thread: the bytes of the link records it sent, and their receiver
    link_bytes: Vec<(u64, u32)>,
    /// the first output error; nothing more is written after it
    error: Option<io::Error>,
}

impl<O: TraceOutput> ParaverWriter<O> {
    fn new(layout: Arc<Layout>, options: &ParaverOptions, topology: &str, mut output: O) -> ParaverWriter<O> {
        let error = output.begin(&layout.header(&options.date, 0), topology).err();
        let threads = layout.threads.len();
        let mut host_port = vec![false; threads];
        for &t in layout.host_thread.iter().flatten().filter(|&&t| t != NONE) {
            host_port[t as usize] = true;
        }
        ParaverWriter {
            host_port,
            link_bytes: vec![(0, NONE); threads],
            summary: TraceSummary {
                tasks: layout.tasks(),
                threads: layout.threads(),
                ..TraceSummary::default()
            },
            layout,
            date: options.date.clone(),
            quantum: options.quantum_bytes.max(1),
            output,
            scratch: Vec::new(),
            line: String::new(),
            max_level: 0,
            error,
        }
    }

    /// Writes `records`, sorting them first unless `sorted`.
    fn write_records(&mut self, records: &mut [Record], sorted: bool) {
        if !sorted {
            // Each source's part is sorted; keys differ across sources (see `Record`).
            records.sort_unstable();
        }
        for r in records.iter() {
            self.write(r);
        }
    }

    fn write(&mut self, r: &Record) {
        let ids = |thread: u32| {
            let (task, thread, _) = &self.layout.threads[thread as usize];
            (*task, *thread)
        };
        let (task, thread) = ids(r.thread);
        let line = &mut self.line;
        line.clear();
        let end = match r.body {
            Body::State { end_ns, level } => {
                self.summary.states += 1;
                self.max_level = self.max_level.max(level);
                let _ = writeln!(line, "1:0:1:{task}:{thread}:{}:{end_ns}:{level}", r.ns);
                end_ns
            }
            Body::Event { event_type, value } => {
                self.summary.events += 1;
                let _ = writeln!(line, "2:0:1:{task}:{thread}:{}:{event_type}:{value}", r.ns);
                r.ns
            }
            Body::Segment { started, tag, number } => {
                self.summary.events += 1;
                let _ = writeln!(
                    line,
                    "2:0:1:{task}:{thread}:{}:{SEGMENT}:{}:{SEGMENT_MESSAGE}:{tag}:{SEGMENT_NUMBER}:{number}",
                    r.ns,
                    u32::from(started)
                );
                r.ns
            }
            Body::Communication {
                physical_send_ns,
                receiver,
                logical_recv_ns,
                physical_recv_ns,
                size,
                tag,
            } => {
                self.summary.communications += 1;
                let (from, to) = (r.thread as usize, receiver as usize);
                if !(self.host_port[from] && self.host_port[to]) {
                    let link = &mut self.link_bytes[from];
                    link.0 += u64::from(size);
                    link.1 = receiver;
                }
                let (to_task, to_thread) = ids(receiver);
                let _ = writeln!(
                    line,
                    "3:0:1:{task}:{thread}:{}:{physical_send_ns}:0:1:{to_task}:{to_thread}:{logical_recv_ns}:{physical_recv_ns}:{size}:{tag}",
                    r.ns
                );
                physical_recv_ns.max(logical_recv_ns).max(physical_send_ns)
            }
        };
        self.summary.end_ns = self.summary.end_ns.max(end).max(r.ns);
        if self.error.is_none()
            && let Err(e) = self.output.write_all(self.line.as_bytes())
        {
            self.error = Some(e);
        }
    }

    /// The `.pcf`: every state a trace can hold (levels 1 to [`MAX_LEVEL`], whatever
    /// this one holds, so that no view of it shows an unknown state), coloured from
    /// yellow to dark red up to the highest level written; the event types.
    fn pcf(&self) -> String {
        let mut pcf = String::from(
            "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\nLOOK_BACK           100\n\
             SPEED               1\nFLAG_ICONS          ENABLED\nNUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\
             DEFAULT_SEMANTIC\n\nTHREAD_FUNC          State As Is\n\nSTATES\n0    Empty\n",
        );
        let q = self.quantum;
        let top = self.max_level.max(1);
        for k in 1..=MAX_LEVEL {
            let low = u64::from(k - 1).saturating_mul(q).saturating_add(1);
            if k == MAX_LEVEL {
                let _ = writeln!(pcf, "{k}    Backlog {low} bytes or more");
            } else {
                let high = u64::from(k).saturating_mul(q);
                let _ = writeln!(pcf, "{k}    Backlog {low}-{high} bytes");
            }
        }
        pcf.push_str("\nSTATES_COLOR\n0    {230,230,230}\n");
        for k in 1..=MAX_LEVEL {
            // From yellow (one quantum) to dark red (the highest level written, and
            // every level above it).
            let f = if top > 1 {
                f64::from(k.min(top) - 1) / f64::from(top - 1)
            } else {
                0.0
            };
            let (r, g) = (255.0 - 115.0 * f, 220.0 * (1.0 - f));
            let _ = writeln!(pcf, "{k}    {{{},{},0}}", r.round() as u32, g.round() as u32);
        }
        for (event_type, label, values) in [
            (
                FLOW_CONTROL_SENT,
                "Flow control signal sent",
                &[(1, "STOP"), (2, "GO")][..],
            ),
            (
                FLOW_CONTROL_RECEIVED,
                "Flow control signal received",
                &[(1, "STOP"), (2, "GO")][..],
            ),
            (HOL_BLOCKING, "Head-of-line blocking", &[(0, "End"), (1, "Start")][..]),
            (SEGMENT, "Segment transmission", &[(0, "End"), (1, "Start")][..]),
            (SEGMENT_MESSAGE, "Segment's message (communication tag)", &[][..]),
            (SEGMENT_NUMBER, "Segment number within its message", &[][..]),
            (
                ROOM_WAIT,
                "Waiting for a slot beyond the cable (bubble flow control)",
                &[(0, "End"), (1, "Start")][..],
            ),
        ] {
            let _ = writeln!(pcf, "\nEVENT_TYPE\n0    {event_type}    {label}");
            if !values.is_empty() {
                pcf.push_str("VALUES\n");
                for (value, name) in values {
                    let _ = writeln!(pcf, "{value}    {name}");
                }
            }
        }
        pcf
    }

    /// Writes the header, `.pcf` and `.row`; returns what the trace holds.
    fn complete(&mut self) -> io::Result<TraceSummary> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.output.flush()?;
        let header = self.layout.header(&self.date, self.summary.end_ns);
        let pcf = self.pcf();
        let row = self.layout.row();
        self.output.complete(&header, &pcf, &row)?;
        let mut busiest: Option<(u64, usize)> = None;
        for (thread, &(bytes, _)) in self.link_bytes.iter().enumerate() {
            if bytes > 0 && busiest.is_none_or(|(most, _)| bytes > most) {
                busiest = Some((bytes, thread));
            }
        }
        self.summary.busiest_link = busiest.map(|(bytes, thread)| LinkBytes {
            from: self.layout.threads[thread].2.clone(),
            to: self.layout.threads[self.link_bytes[thread].1 as usize].2.clone(),
            bytes,
        });
        Ok(self.summary.clone())
    }
}

/// A (multi-rail) network writing its Paraver trace as it runs.
#[derive(Debug)]
pub struct TracedNetwork<O: TraceOutput> {
    net: MultiRail<ParaverSink>,
    writer: ParaverWriter<O>,
    /// longest stretch of simulated time run before writing out
    chunk: SimTime,
    finished: bool,
}

impl<O: TraceOutput> TracedNetwork<O> {
    /// Builds the rails (one builder each, joined by `policy`) tracing into `output`.
    pub fn build(
        rails: Vec<NetworkBuilder>,
        policy: RailPolicy,
        options: &ParaverOptions,
        output: O,
    ) -> Result<TracedNetwork<O>, TraceError> {
        TracedNetwork::build_split(rails, policy, options, output, 1)
    }

    /// [`Self::build`], every rail split into `parts` partitions on threads (see
    /// [`crate::partition`]): each partition has its own sink, and the trace is the
    /// one the network whole writes.
    pub fn build_split(
        rails: Vec<NetworkBuilder>,
        policy: RailPolicy,
        options: &ParaverOptions,
        output: O,
        parts: u32,
    ) -> Result<TracedNetwork<O>, TraceError> {
        TracedNetwork::build_as(rails, policy, options, output, |b, sink| {
            Partitioned::build_traced(b, parts, |_| sink())
        })
    }

    /// [`Self::build`], every rail split over `ranks`, this rank's partition tracing
    /// into its own sink (see [`crate::partition::ranks`]). Every rank calls it and
    /// makes the same calls after (or rank 0 [leads](Self::lead) and the others
    /// [follow](Self::follow)); rank 0 writes the whole trace into its `output`, the
    /// others' outputs get nothing but the header and the `.pcf` and `.row`.
    pub fn build_on_ranks(
        rails: Vec<NetworkBuilder>,
        policy: RailPolicy,
        options: &ParaverOptions,
        output: O,
        ranks: Arc<dyn Ranks>,
    ) -> Result<TracedNetwork<O>, TraceError> {
        TracedNetwork::build_as(rails, policy, options, output, |b, sink| {
            Partitioned::build_traced_on_ranks(b, ranks.clone(), sink())
        })
    }

    fn build_as(
        rails: Vec<NetworkBuilder>,
        policy: RailPolicy,
        options: &ParaverOptions,
        output: O,
        split: impl Fn(NetworkBuilder, &dyn Fn() -> ParaverSink) -> Result<Partitioned<ParaverSink>, SplitError>,
    ) -> Result<TracedNetwork<O>, TraceError> {
        if options.quantum_bytes == 0 {
            return Err(TraceError::ZeroQuantum);
        }
        let layout = Arc::new(Layout::new(&rails, &options.devices)?);
        let topology = topology::topology_json(&layout, &rails, &options.shapes);
        let n = rails.len();
        let split = rails
            .into_iter()
            .enumerate()
            .map(|(r, b)| split(b, &|| ParaverSink::new(Arc::clone(&layout), r, n, options)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| match e {
                SplitError::Build(e) => TraceError::Build(e),
                e => TraceError::Split(e),
            })?;
        let net = MultiRail::of_rails(split, policy)?;
        Ok(TracedNetwork {
            net,
            writer: ParaverWriter::new(layout, options, &topology, output),
            chunk: options.state_split.max(SimTime::from_ns(1)),
            finished: false,
        })
    }

    /// On rank 0 of ranks: see [`Partitioned::lead`] (the trace's steps are told too).
    pub fn lead(&mut self, lead: &Arc<Lead>) {
        self.net.lead(lead);
    }

    /// On the other ranks: follows rank 0's network and its trace's steps (see
    /// [`Partitioned::follow`]) until that network is gone ([`Followed::End`]) or rank
    /// 0 leads no more ([`Followed::Exit`]).
    pub fn follow(&mut self) -> Followed {
        loop {
            match self.net.follow() {
                Followed::Trace(TraceStep::Write) => self.write(false),
                Followed::Trace(TraceStep::Finish) => {
                    // Rank 0's output holds the trace, and its error if any.
                    let _ = self.finish();
                }
                other => return other,
            }
        }
    }

    /// The ranks the network is split over (`None`: it is in this process).
    fn ranks(&self) -> Option<Arc<dyn Ranks>> {
        self.net.rails().first()?.ranks().filter(|r| r.size() > 1).cloned()
    }

    /// The network.
    pub fn network(&self) -> &MultiRail<ParaverSink> {
        &self.net
    }

    /// Tells every rail the common clock, then writes what can be written.
    fn drain(&mut self) {
        let _told = self.net.tell_trace(TraceStep::Write);
        self.write(false);
    }

    /// Writes what every sink can release (`everything`: all they hold), on ranks every
    /// rank's sinks, written by rank 0 (a collective call).
    fn write(&mut self, everything: bool) {
        let ranks = self.ranks();
        let now = self.net.now();
        let mut limit = u64::MAX;
        for sink in self.net.sinks_mut() {
            // Later injections come at or after the latest rail clock.
            sink.clock(now);
            if !everything {
                limit = limit.min(sink.watermark().as_ps() / 1000);
            }
        }
        if let Some(ranks) = &ranks {
            let mut least = [limit];
            ranks.all_reduce(&mut least, Reduce::Min);
            limit = least[0];
        }
        let mut records = std::mem::take(&mut self.writer.scratch);
        records.clear();
        let mut sources = 0;
        for sink in self.net.sinks_mut() {
            sink.release(limit, &mut records);
            sources += 1;
        }
        if let Some(ranks) = &ranks {
            // Every rank's records go to rank 0, which writes them.
            let mut out = vec![Vec::new(); ranks.size() as usize];
            if ranks.rank() != 0 {
                for r in records.drain(..) {
                    put_record(&mut out[0], &r);
                }
            }
            for bytes in ranks.exchange(out) {
                let mut words = Words::new(&bytes);
                while !words.is_empty() {
                    records.push(record(&mut words));
                }
            }
            sources = ranks.size();
        }
        self.writer.write_records(&mut records, sources <= 1);
        self.writer.scratch = records;
    }

    /// Writes everything left (open states end at the clock), then the header, `.pcf`
    /// and `.row`. Later calls return `Ok(None)`. On ranks a collective call: rank 0's
    /// output gets the trace, the others' the header, `.pcf` and `.row` only.
    pub fn finish(&mut self) -> io::Result<Option<TraceSummary>> {
        if self.finished {
            return Ok(None);
        }
        self.finished = true;
        let _told = self.net.tell_trace(TraceStep::Finish);
        let now = self.net.now();
        let mut counts = [0, 0];
        for sink in self.net.sinks_mut() {
            counts[0] += sink.close(now);
            counts[1] += sink.late;
        }
        if let Some(ranks) = self.ranks() {
            ranks.all_reduce(&mut counts, Reduce::Sum);
        }
        self.write(true);
        self.writer.summary.unfinished_messages = counts[0];
        self.writer.summary.late_records = counts[1];
        self.writer.complete().map(Some)
    }

    /// Records held in the reorder windows now (they grow with what is open, not with
    /// the length of the run).
    pub fn buffered(&self) -> usize {
        self.net
            .rails()
            .iter()
            .flat_map(Partitioned::sinks)
            .map(|s| s.heap.len())
            .sum()
    }

    /// The output (after [`TracedNetwork::finish`], complete).
    pub fn output(&self) -> &O {
        &self.writer.output
    }
}

impl<O: TraceOutput + std::fmt::Debug> Network for TracedNetwork<O> {
    fn hosts(&self) -> u32 {
        self.net.hosts()
    }

    fn now(&self) -> SimTime {
        self.net.now()
    }

    fn next_event_time(&self) -> Option<SimTime> {
        self.net.next_event_time()
    }

    fn safe_horizon(&self, t: SimTime) -> SimTime {
        self.net.safe_horizon(t)
    }

    fn final_deliveries(&mut self, since: SimTime, out: &mut Vec<Delivery>) {
        self.net.final_deliveries(since, out);
    }

    fn events_processed(&self) -> u64 {
        self.net.events_processed()
    }

    fn in_flight(&self) -> usize {
        self.net.in_flight()
    }

    fn inject(&mut self, at: SimTime, spec: MessageSpec) -> Result<(), InjectError> {
        self.net.inject(at, spec)
    }

    fn advance_clock(&mut self, time: SimTime) {
        self.net.advance_clock(time);
        self.drain();
    }

    fn run_until(&mut self, limit: SimTime, deliveries: &mut Vec<Delivery>) {
        // In stretches, so that a long run writes as it goes (the results do not
        // depend on how a run is cut: events at or before a limit are all processed).
        while let Some(next) = self.net.next_event_time()
            && next <= limit
        {
            self.net
                .run_until(limit.min(next.saturating_add(self.chunk)), deliveries);
            self.drain();
        }
    }

    fn finish_trace(&mut self) -> io::Result<Option<TraceSummary>> {
        self.finish()
    }
}

#[cfg(test)]
mod tests;
