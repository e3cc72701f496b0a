//! The aggregation core: a network trace's records folded into per-link time bins of
//! bytes and per-port time bins of backlog, in memory that does not grow with the run.
//!
//! ```text
//!   communication 3:…:from thread…:to thread…:size:tag ─▶ link (from, to): bytes spread
//!                                                          over [physical send, physical receive]
//!   state 1:…:thread:begin:end:level                   ─▶ port: highest level, level × ns
//!   event 2:…                                          ─▶ counted
//!
//!   bins:  |0|1|2|…|255|   BINS bins of 2^shift ns from time 0; a time beyond the last
//!          bin doubles the width (bins merged in pairs) until it fits
//! ```
//!
//! Invariants:
//! - a link's bins add up to the bytes of its communication records, exactly: a
//!   record's bytes are cut along the bins by a cumulative split (the bytes up to time
//!   `t` are `⌊size·(t − t0)/(t1 − t0)⌋`), so the bins of any width sum to `size`;
//! - the bins depend only on the records, not on how they were fed: the cumulative
//!   split of a coarse bin is the sum of its two halves', so bins widened as a stream
//!   grows equal bins made at the final width from the start;
//! - memory: per link [`BINS`] × 16 bytes (its bytes, and the messages that started and
//!   ended on it, per bin) and a [`Sample`] of at most [`MESSAGES_PER_GROUP`] messages per
//!   [`GROUP_BINS`] bins (48 bytes each): at most 10,240 bytes a link; per port with a backlog [`BINS`] × 10 bytes;
//!   per port with flow-control, head-of-line or bubble events [`BINS`] × 16 bytes of
//!   counts and a sample of at most [`EVENTS_PER_GROUP`] events per [`GROUP_BINS`] bins
//!   (16 bytes each); whatever the run's length. Links and ports are at most the
//!   trace's threads, which the reader bounds ([`Aggregate::bin_bytes`] says the total).
//!
//! Beside the bins, what a page shows of one link or port ([`Aggregate::link_messages`],
//! [`Aggregate::port_detail`]): the messages that crossed a link (a sample, with the
//! count of all), and a port's STOP/GO, head-of-line blocking and bubble-wait events
//! (counted per bin, and a sample).

use std::fmt;

mod sample;

pub use sample::{GROUP_BINS, Sample, Timed};

/// Bins of the time axis, whatever the run's length.
pub const BINS: usize = 256;

/// `BINS` as a power of two.
const BINS_LOG2: u32 = BINS.trailing_zeros();

/// Widest bin: `BINS` bins of `2^MAX_SHIFT` ns cover every `u64` time.
const MAX_SHIFT: u32 = u64::BITS - BINS_LOG2;

/// Messages a link keeps per [`GROUP_BINS`] bins (the first to start on it); the others
/// are counted.
pub const MESSAGES_PER_GROUP: usize = 2;

/// Events a port keeps per [`GROUP_BINS`] bins (the first); the others are counted.
pub const EVENTS_PER_GROUP: usize = 2;

/// No link or port (an index into `Aggregate::links` or `ports`).
const NONE: u32 = u32::MAX;

/// A thread (a port), 0-based over the whole trace (thread `j` of task `i` in
/// Paraver's 1-based numbering is the sum of the threads of tasks `1..i` plus `j − 1`).
pub type Thread = u32;

/// Why a record cannot be aggregated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AggregateError {
    /// a record names a thread the trace does not have
    #[error("thread {thread} is beyond the trace's {threads} threads")]
    NoSuchThread {
        /// the 0-based thread
        thread: Thread,
        /// threads in the trace
        threads: u32,
    },
    /// a port sends to two ports: a link has one far end
    #[error("port {from} sends to thread {to}, but to thread {before} before: a link has one far end")]
    TwoPeers {
        /// the sending thread
        from: Thread,
        /// its peer in this record
        to: Thread,
        /// its peer in an earlier one
        before: Thread,
    },
}

/// The time axis: [`BINS`] bins of `2^shift` ns from time 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimeAxis {
    shift: u32,
}

impl TimeAxis {
    /// The narrowest axis whose bins hold time `end_ns`.
    pub fn holding(end_ns: u64) -> TimeAxis {
        let mut axis = TimeAxis::default();
        while !axis.holds(end_ns) {
            axis.shift += 1;
        }
        axis
    }

    /// A bin's width \[ns\].
    pub fn bin_ns(self) -> u64 {
        1 << self.shift
    }

    /// Whether time `t_ns` falls in a bin.
    pub(crate) fn holds(self, t_ns: u64) -> bool {
        self.shift >= MAX_SHIFT || t_ns >> self.shift < BINS as u64
    }

    /// The bin of time `t_ns` (which the axis holds).
    pub(crate) fn bin(self, t_ns: u64) -> usize {
        (t_ns >> self.shift) as usize
    }

    /// Where bin `b` starts \[ns\] (`u128`: the end of the last bin of the widest axis
    /// is 2^64).
    pub(crate) fn start(self, b: usize) -> u128 {
        (b as u128) << self.shift
    }
}

/// One direction of a cable, as its communication records show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// the transmitting port
    pub from: Thread,
    /// the port at the far end
    pub to: Thread,
    /// bytes of every message that crossed it
    pub bytes: u64,
    /// messages that crossed it (its communication records)
    pub messages: u64,
    /// bytes per bin
    bins: Box<[u64; BINS]>,
    /// messages whose first byte left in each bin
    started: Box<[u32; BINS]>,
    /// messages whose last byte was on the link in each bin (the last bin they have
    /// bytes in)
    ended: Box<[u32; BINS]>,
    /// the first messages to start in each group of bins
    sample: Sample<Message>,
}

/// A message's crossing of a link: its communication record but for the ports (the
/// link's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Message {
    /// the message's number, the same on every link it crosses (the record's tag: in
    /// injection order; on `R` rails message `n` of rail `r` is `(n − 1)·R + r + 1`)
    pub tag: u64,
    /// logical send: the sending device had the message's first byte \[ns\]
    pub logical_send_ns: u64,
    /// physical send: the first byte left on the link \[ns\]
    pub send_ns: u64,
    /// logical receive: the first byte arrived at the far end \[ns\]
    pub logical_receive_ns: u64,
    /// physical receive: the last byte arrived \[ns\]
    pub receive_ns: u64,
    /// the message's bytes
    pub size_bytes: u64,
}

impl Timed for Message {
    fn key(&self) -> (u64, u64) {
        (self.send_ns, self.tag)
    }
}

impl Message {
    /// The last nanosecond it is on the link (its bytes are spread over `[send,
    /// receive)`, or all at `send` when `receive ≤ send`).
    pub fn last_ns(&self) -> u64 {
        last_ns(self.send_ns, self.receive_ns)
    }
}

/// The last nanosecond a message sent over `[send_ns, receive_ns)` is on its link.
fn last_ns(send_ns: u64, receive_ns: u64) -> u64 {
    if receive_ns > send_ns { receive_ns - 1 } else { send_ns }
}

/// A port's event that the page marks: flow control (values 1 = STOP, 2 = GO of
/// Paraver types 70000001 sent and 70000002 received), head-of-line blocking (70000003)
/// and bubble flow control's wait for a slot beyond the cable (70000007), each start
/// (1) and end (0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PortEvent {
    /// it sent STOP
    StopSent,
    /// it sent GO
    GoSent,
    /// it received STOP
    StopReceived,
    /// it received GO
    GoReceived,
    /// head-of-line blocking started
    HolStart,
    /// head-of-line blocking ended
    HolEnd,
    /// it started waiting for a slot beyond its cable
    WaitStart,
    /// it stopped waiting
    WaitEnd,
}

/// Paraver's event types of [`PortEvent`]s.
pub const FLOW_CONTROL_SENT: u64 = 70_000_001;
/// See [`FLOW_CONTROL_SENT`].
pub const FLOW_CONTROL_RECEIVED: u64 = 70_000_002;
/// See [`FLOW_CONTROL_SENT`].
pub const HOL_BLOCKING: u64 = 70_000_003;
/// See [`FLOW_CONTROL_SENT`].
pub const ROOM_WAIT: u64 = 70_000_007;

impl PortEvent {
    /// The event of Paraver type `event_type` with `value`, if it is one the page marks.
    pub fn of(event_type: u64, value: u64) -> Option<PortEvent> {
        use PortEvent::*;
        Some(match (event_type, value) {
            (FLOW_CONTROL_SENT, 1) => StopSent,
            (FLOW_CONTROL_SENT, 2) => GoSent,
            (FLOW_CONTROL_RECEIVED, 1) => StopReceived,
            (FLOW_CONTROL_RECEIVED, 2) => GoReceived,
            (HOL_BLOCKING, 1) => HolStart,
            (HOL_BLOCKING, 0) => HolEnd,
            (ROOM_WAIT, 1) => WaitStart,
            (ROOM_WAIT, 0) => WaitEnd,
            _ => return None,
        })
    }

    /// What a port's bins count it as: STOP, GO, head-of-line blocking or a bubble wait
    /// (the starts; the ends are in the sample).
    pub fn counted(self) -> Option<Mark> {
        use PortEvent::*;
        match self {
            StopSent | StopReceived => Some(Mark::Stop),
            GoSent | GoReceived => Some(Mark::Go),
            HolStart => Some(Mark::Hol),
            WaitStart => Some(Mark::Wait),
            HolEnd | WaitEnd => None,
        }
    }
}

/// What a port's event bins count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// STOP sent or received
    Stop = 0,
    /// GO sent or received
    Go = 1,
    /// head-of-line blocking started
    Hol = 2,
    /// a bubble wait started
    Wait = 3,
}

/// [`Mark`]s.
pub const MARKS: usize = 4;

/// A port's event, as a sample keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TimedEvent {
    /// when \[ns\]
    pub at_ns: u64,
    /// what
    pub event: PortEvent,
}

impl Timed for TimedEvent {
    fn key(&self) -> (u64, u64) {
        (self.at_ns, self.event as u64)
    }
}

/// A port's marked events: counts per bin and a sample.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Marks {
    /// per bin, per [`Mark`]
    counts: Box<[[u32; MARKS]; BINS]>,
    sample: Sample<TimedEvent>,
}

/// A port's backlog, as its state records show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    /// the port
    pub thread: Thread,
    /// the highest backlog level per bin
    max_level: Box<[u16; BINS]>,
    /// the backlog level integrated over the time of each bin \[level·ns\]
    level_ns: Box<[u64; BINS]>,
}

/// A link's figures in a time window ([`Aggregate::window`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkWindow {
    /// bytes that crossed it in the window
    pub bytes: u64,
    /// its bins in the window, first to last
    pub bins: Vec<u64>,
}

/// A port's backlog in a time window ([`Aggregate::window`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PortWindow {
    /// the port
    pub thread: Thread,
    /// the highest backlog level in the window
    pub max_level: u16,
    /// the mean backlog level over the window
    pub mean_level: f64,
}

/// The figures of a time window, snapped to whole bins.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// where it starts \[ns\]
    pub from_ns: u64,
    /// where it ends \[ns\]: the end of its last bin, or the end of the trace when that
    /// comes first
    pub to_ns: u64,
    /// per link, in [`Aggregate::links`] order
    pub links: Vec<LinkWindow>,
    /// the ports with a backlog in the window
    pub ports: Vec<PortWindow>,
}

/// Records counted by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Counts {
    /// communication records between the two ends of a link
    pub link_communications: u64,
    /// communication records between two hosts (`--trace-end-to-end`), not a link
    pub end_to_end_communications: u64,
    /// state records
    pub states: u64,
    /// event records
    pub events: u64,
}

/// A trace folded into per-link and per-port bins (see the module's docs).
#[derive(Debug, Clone)]
pub struct Aggregate {
    axis: TimeAxis,
    /// per thread: whether it is a host's port (a record between two is end to end)
    host_port: Vec<bool>,
    /// per thread: the link it sends on, or `NONE`
    link_of: Vec<u32>,
    /// per thread: its entry in `ports`, or `NONE`
    port_of: Vec<u32>,
    links: Vec<Link>,
    ports: Vec<Port>,
    /// per thread: its entry in `marks`, or `NONE`
    marks_of: Vec<u32>,
    marks: Vec<Marks>,
    counts: Counts,
    /// the end time the trace's header gives \[ns\]
    header_end_ns: u64,
    /// the last nanosecond a record holds something in
    latest_ns: u64,
}

impl Aggregate {
    /// An empty aggregate of a trace whose threads are host ports where `host_port`
    /// says so, with bins that hold time `end_ns` (0 when not known: the bins widen as
    /// the records come).
    pub fn new(host_port: Vec<bool>, end_ns: u64) -> Aggregate {
        let threads = host_port.len();
        Aggregate {
            axis: TimeAxis::holding(end_ns.saturating_sub(1)),
            host_port,
            link_of: vec![NONE; threads],
            port_of: vec![NONE; threads],
            links: Vec::new(),
            ports: Vec::new(),
            marks_of: vec![NONE; threads],
            marks: Vec::new(),
            counts: Counts::default(),
            header_end_ns: end_ns,
            latest_ns: 0,
        }
    }

    /// The time axis.
    pub fn axis(&self) -> TimeAxis {
        self.axis
    }

    /// The links seen, in the order their first records came.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// The records aggregated, by kind.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The trace's end \[ns\]: its header's, or the end of the latest record when
    /// that is later (a stream's header says 0 until its end); at least 1.
    pub fn end_ns(&self) -> u64 {
        self.header_end_ns.max(self.latest_ns.saturating_add(1))
    }

    /// Bins up to the trace's end.
    pub fn used_bins(&self) -> usize {
        self.axis.bin(self.end_ns() - 1) + 1
    }

    /// Bytes per bin over every link, for the used bins.
    pub fn activity(&self) -> Vec<u64> {
        let mut total = vec![0u64; self.used_bins()];
        for link in &self.links {
            for (t, b) in total.iter_mut().zip(link.bins.iter()) {
                *t = t.saturating_add(*b);
            }
        }
        total
    }

    /// Heap bytes taken by the bins and samples (the figure the module's docs bound).
    pub fn bin_bytes(&self) -> usize {
        let samples: usize = self
            .links
            .iter()
            .map(|l| l.sample.len() * size_of::<Message>())
            .sum::<usize>()
            + self
                .marks
                .iter()
                .map(|m| m.sample.len() * size_of::<TimedEvent>())
                .sum::<usize>();
        self.links.len() * BINS * (size_of::<u64>() + 2 * size_of::<u32>())
            + self.ports.len() * BINS * (size_of::<u16>() + size_of::<u64>())
            + self.marks.len() * BINS * MARKS * size_of::<u32>()
            + samples
    }

    fn check(&self, thread: Thread) -> Result<usize, AggregateError> {
        let threads = self.host_port.len();
        match thread as usize {
            t if t < threads => Ok(t),
            _ => Err(AggregateError::NoSuchThread {
                thread,
                threads: threads as u32,
            }),
        }
    }

    /// A link known before its records (from the trace's topology): `from` sends to
    /// `to`, nothing yet. A link between two hosts' ports is no link (see
    /// [`Aggregate::communication`]); one already known is left as it is.
    pub fn link(&mut self, from: Thread, to: Thread) -> Result<(), AggregateError> {
        let (f, t) = (self.check(from)?, self.check(to)?);
        if self.host_port[f] && self.host_port[t] {
            return Ok(());
        }
        self.link_index(from, to).map(|_| ())
    }

    /// The index of the link `from` → `to`, made if new.
    fn link_index(&mut self, from: Thread, to: Thread) -> Result<usize, AggregateError> {
        let f = from as usize;
        match self.link_of[f] {
            NONE => {
                self.link_of[f] = self.links.len() as u32;
                self.links.push(Link {
                    from,
                    to,
                    bytes: 0,
                    messages: 0,
                    bins: Box::new([0; BINS]),
                    started: Box::new([0; BINS]),
                    ended: Box::new([0; BINS]),
                    sample: Sample::default(),
                });
                Ok(self.links.len() - 1)
            }
            i if self.links[i as usize].to != to => Err(AggregateError::TwoPeers {
                from,
                to,
                before: self.links[i as usize].to,
            }),
            i => Ok(i as usize),
        }
    }

    /// A communication record: `size_bytes` sent from port `from` to port `to`, the
    /// first byte leaving at `send_ns` (physical send) and the last arriving at
    /// `receive_ns` (physical receive). Between two hosts' ports it is an end-to-end
    /// record (counted, no link).
    pub fn communication(
        &mut self,
        from: Thread,
        to: Thread,
        send_ns: u64,
        receive_ns: u64,
        size_bytes: u64,
    ) -> Result<(), AggregateError> {
        let (f, t) = (self.check(from)?, self.check(to)?);
        if self.host_port[f] && self.host_port[t] {
            self.counts.end_to_end_communications += 1;
            return Ok(());
        }
        let index = self.link_index(from, to)?;
        self.counts.link_communications += 1;
        // The bytes are on the link over [send, receive).
        let last = last_ns(send_ns, receive_ns);
        self.reach(last);
        let axis = self.axis;
        let link = &mut self.links[index];
        link.bytes = link.bytes.saturating_add(size_bytes);
        link.messages += 1;
        link.started[axis.bin(send_ns)] = link.started[axis.bin(send_ns)].saturating_add(1);
        link.ended[axis.bin(last)] = link.ended[axis.bin(last)].saturating_add(1);
        spread(axis, &mut link.bins, send_ns, receive_ns, size_bytes);
        Ok(())
    }

    /// A communication record whole: as [`Aggregate::communication`], and the message
    /// is kept in its link's sample if it is among the first [`MESSAGES_PER_GROUP`] of
    /// its bins.
    pub fn message(&mut self, from: Thread, to: Thread, message: Message) -> Result<(), AggregateError> {
        self.communication(from, to, message.send_ns, message.receive_ns, message.size_bytes)?;
        let axis = self.axis;
        if let Some(link) = self.links.get_mut(self.link_of[from as usize] as usize) {
            link.sample.insert(axis, MESSAGES_PER_GROUP, message);
        }
        Ok(())
    }

    /// A port's event that the page marks ([`PortEvent`]), at `at_ns`; counted, and
    /// kept in the port's sample if among the first [`EVENTS_PER_GROUP`] of its bins.
    /// (The record itself is counted by [`Aggregate::event`].)
    pub fn port_event(&mut self, thread: Thread, at_ns: u64, event: PortEvent) -> Result<(), AggregateError> {
        let t = self.check(thread)?;
        self.reach(at_ns);
        let index = match self.marks_of[t] {
            NONE => {
                self.marks_of[t] = self.marks.len() as u32;
                self.marks.push(Marks {
                    counts: Box::new([[0; MARKS]; BINS]),
                    sample: Sample::default(),
                });
                self.marks.len() - 1
            }
            i => i as usize,
        };
        let axis = self.axis;
        let marks = &mut self.marks[index];
        if let Some(mark) = event.counted() {
            let count = &mut marks.counts[axis.bin(at_ns)][mark as usize];
            *count = count.saturating_add(1);
        }
        marks.sample.insert(axis, EVENTS_PER_GROUP, TimedEvent { at_ns, event });
        Ok(())
    }

    /// A state record: port `thread` at backlog `level` over `[begin_ns, end_ns)`.
    pub fn state(&mut self, thread: Thread, begin_ns: u64, end_ns: u64, level: u16) -> Result<(), AggregateError> {
        let t = self.check(thread)?;
        self.counts.states += 1;
        if level == 0 || end_ns <= begin_ns {
            return Ok(());
        }
        self.reach(end_ns - 1);
        let index = match self.port_of[t] {
            NONE => {
                self.port_of[t] = self.ports.len() as u32;
                self.ports.push(Port {
                    thread,
                    max_level: Box::new([0; BINS]),
                    level_ns: Box::new([0; BINS]),
                });
                self.ports.len() - 1
            }
            i => i as usize,
        };
        let axis = self.axis;
        let port = &mut self.ports[index];
        for b in axis.bin(begin_ns)..=axis.bin(end_ns - 1) {
            let lo = axis.start(b).max(u128::from(begin_ns));
            let hi = axis.start(b + 1).min(u128::from(end_ns));
            port.max_level[b] = port.max_level[b].max(level);
            let level_ns = (hi - lo).saturating_mul(u128::from(level));
            port.level_ns[b] = port.level_ns[b].saturating_add(u64::try_from(level_ns).unwrap_or(u64::MAX));
        }
        Ok(())
    }

    /// An event record of port `thread` at `at_ns`.
    pub fn event(&mut self, thread: Thread, at_ns: u64) -> Result<(), AggregateError> {
        self.check(thread)?;
        self.counts.events += 1;
        self.reach(at_ns);
        Ok(())
    }

    /// The trace's end is `end_ns` (a stream's final header): the bins widen to hold
    /// it, as a file's bins with that header would be from the start.
    pub fn end_at(&mut self, end_ns: u64) {
        self.header_end_ns = end_ns;
        self.widen(end_ns.saturating_sub(1));
    }

    /// Widens the bins until they hold the nanosecond `t_ns`, the last a record holds
    /// something in.
    fn reach(&mut self, t_ns: u64) {
        self.latest_ns = self.latest_ns.max(t_ns);
        self.widen(t_ns);
    }

    /// Widens the bins until they hold the nanosecond `t_ns`.
    fn widen(&mut self, t_ns: u64) {
        while !self.axis.holds(t_ns) {
            self.axis.shift += 1;
            let axis = self.axis;
            for link in &mut self.links {
                halve(&mut link.bins, |a, b| a.saturating_add(b));
                halve(&mut link.started, |a, b| a.saturating_add(b));
                halve(&mut link.ended, |a, b| a.saturating_add(b));
                link.sample.widen(axis, MESSAGES_PER_GROUP);
            }
            for marks in &mut self.marks {
                halve(&mut marks.counts, |a, b| {
                    std::array::from_fn(|k| a[k].saturating_add(b[k]))
                });
                marks.sample.widen(axis, EVENTS_PER_GROUP);
            }
            for port in &mut self.ports {
                halve(&mut port.max_level, u16::max);
                halve(&mut port.level_ns, |a, b| a.saturating_add(b));
            }
        }
    }

    /// The figures of the window `[from_ns, to_ns)` cut to the trace and widened to
    /// whole bins (at least one), every link's bins in it when `with_bins`.
    pub fn window(&self, from_ns: u64, to_ns: u64, with_bins: bool) -> Window {
        let (range, start, end) = self.snap(from_ns, to_ns);
        let links = self
            .links
            .iter()
            .map(|link| {
                let bins = &link.bins[range.clone()];
                LinkWindow {
                    bytes: bins.iter().fold(0u64, |s, b| s.saturating_add(*b)),
                    bins: if with_bins { bins.to_vec() } else { Vec::new() },
                }
            })
            .collect();
        let span = (end - start) as f64;
        let ports = self
            .ports
            .iter()
            .filter_map(|port| {
                let max_level = *port.max_level[range.clone()].iter().max()?;
                let level_ns = port.level_ns[range.clone()]
                    .iter()
                    .fold(0u64, |s, b| s.saturating_add(*b));
                (max_level > 0).then(|| PortWindow {
                    thread: port.thread,
                    max_level,
                    mean_level: level_ns as f64 / span,
                })
            })
            .collect();
        Window {
            from_ns: start,
            to_ns: end,
            links,
            ports,
        }
    }
}

impl Aggregate {
    /// The window `[from_ns, to_ns)` cut to the trace and widened to whole bins (at
    /// least one): its bins, where it starts and where it ends \[ns\].
    fn snap(&self, from_ns: u64, to_ns: u64) -> (std::ops::Range<usize>, u64, u64) {
        let axis = self.axis;
        let end_of_trace = self.end_ns();
        let from = from_ns.min(end_of_trace - 1);
        let to = to_ns.clamp(from + 1, end_of_trace);
        let (first, last) = (axis.bin(from), axis.bin(to - 1));
        let start = axis.start(first) as u64;
        let end = axis.start(last + 1).min(u128::from(end_of_trace)) as u64;
        (first..last + 1, start, end)
    }

    /// The messages that were on link `link` (an index into [`Aggregate::links`]) in
    /// the window `[from_ns, to_ns)`, snapped as [`Aggregate::window`] does (those with
    /// bytes in its bins: from the first byte leaving to the last arriving): how many
    /// there were, and the first `limit` of those its sample kept; `None` for no such
    /// link.
    pub fn link_messages(&self, link: usize, from_ns: u64, to_ns: u64, limit: usize) -> Option<LinkMessages> {
        let l = self.links.get(link)?;
        let (range, start, end) = self.snap(from_ns, to_ns);
        // Those that started by the window's end, but those that ended before it.
        let count = |bins: &[u32]| bins.iter().map(|&n| u64::from(n)).sum::<u64>();
        let messages = count(&l.started[..range.end]).saturating_sub(count(&l.ended[..range.start]));
        let on = |m: &&Message| m.send_ns < end && m.last_ns() >= start;
        Some(LinkMessages {
            from_ns: start,
            to_ns: end,
            bytes: l.bins[range].iter().fold(0u64, |s, b| s.saturating_add(*b)),
            messages,
            kept: l.sample.items().iter().filter(on).count(),
            listed: l.sample.items().iter().filter(on).take(limit).copied().collect(),
        })
    }

    /// Port `thread`'s backlog and events in the window `[from_ns, to_ns)`, snapped as
    /// [`Aggregate::window`] does, bin by bin, and the first `limit` events its sample
    /// kept; `None` for no such thread.
    pub fn port_detail(&self, thread: Thread, from_ns: u64, to_ns: u64, limit: usize) -> Option<PortDetail> {
        let t = self.check(thread).ok()?;
        let (range, start, end) = self.snap(from_ns, to_ns);
        let axis = self.axis;
        let port = self.ports.get(self.port_of[t] as usize);
        let marks = self.marks.get(self.marks_of[t] as usize);
        let mut detail = PortDetail {
            from_ns: start,
            to_ns: end,
            max_level: Vec::with_capacity(range.len()),
            mean_level: Vec::with_capacity(range.len()),
            marks: Vec::with_capacity(range.len()),
            totals: [0; MARKS],
            kept_events: 0,
            events: Vec::new(),
        };
        for b in range {
            let span = (axis.start(b + 1).min(u128::from(end)) - axis.start(b)).max(1) as f64;
            detail.max_level.push(port.map_or(0, |p| p.max_level[b]));
            detail
                .mean_level
                .push(port.map_or(0.0, |p| p.level_ns[b] as f64 / span));
            let counts = marks.map_or([0; MARKS], |m| m.counts[b]);
            for (total, n) in detail.totals.iter_mut().zip(counts) {
                *total += u64::from(n);
            }
            detail.marks.push(counts);
        }
        if let Some(m) = marks {
            let kept = m.sample.within(start, end);
            detail.kept_events = kept.len();
            detail.events = kept[..kept.len().min(limit)].to_vec();
        }
        Some(detail)
    }
}

/// A link's messages in a window ([`Aggregate::link_messages`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkMessages {
    /// where the window starts \[ns\]
    pub from_ns: u64,
    /// where it ends \[ns\]
    pub to_ns: u64,
    /// bytes on the link in the window (as [`Window`]'s)
    pub bytes: u64,
    /// messages on the link in the window (with bytes in its bins), all of them
    pub messages: u64,
    /// of those, how many its sample kept
    pub kept: usize,
    /// the first of those kept, by the time their first byte left
    pub listed: Vec<Message>,
}

/// A port's backlog and events in a window ([`Aggregate::port_detail`]), per bin.
#[derive(Debug, Clone, PartialEq)]
pub struct PortDetail {
    /// where the window starts \[ns\]
    pub from_ns: u64,
    /// where it ends \[ns\]
    pub to_ns: u64,
    /// per bin: the highest backlog level
    pub max_level: Vec<u16>,
    /// per bin: the mean backlog level
    pub mean_level: Vec<f64>,
    /// per bin: STOP, GO, head-of-line blocking starts, bubble-wait starts ([`Mark`]'s order)
    pub marks: Vec<[u32; MARKS]>,
    /// those over the window
    pub totals: [u64; MARKS],
    /// events its sample kept in the window
    pub kept_events: usize,
    /// the first of those
    pub events: Vec<TimedEvent>,
}

/// Adds `size` bytes sent over `[t0, t1]` to `bins`, cut by the cumulative split (see
/// the module's docs); all in `t0`'s bin when `t1 ≤ t0`.
fn spread(axis: TimeAxis, bins: &mut [u64; BINS], t0: u64, t1: u64, size: u64) {
    if t1 <= t0 {
        bins[axis.bin(t0)] = bins[axis.bin(t0)].saturating_add(size);
        return;
    }
    let (t0, t1, span) = (u128::from(t0), u128::from(t1), u128::from(t1 - t0));
    // The bytes sent up to time t.
    let upto = |t: u128| (u128::from(size) * (t.clamp(t0, t1) - t0) / span) as u64;
    let (first, last) = (axis.bin(t0 as u64), axis.bin((t1 - 1) as u64));
    for (b, bin) in bins.iter_mut().enumerate().take(last + 1).skip(first) {
        *bin = bin.saturating_add(upto(axis.start(b + 1)) - upto(axis.start(b)));
    }
}

/// Merges the bins in pairs into the first half and empties the second.
fn halve<T: Copy + Default>(bins: &mut [T; BINS], merge: impl Fn(T, T) -> T) {
    for i in 0..BINS / 2 {
        bins[i] = merge(bins[2 * i], bins[2 * i + 1]);
    }
    bins[BINS / 2..].fill(T::default());
}

impl fmt::Display for TimeAxis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{BINS} bins of {} ns", self.bin_ns())
    }
}

#[cfg(test)]
mod tests;
