//! Instrumentation hooks for trace writers, and the Paraver writer ([`paraver`]).
//!
//! The simulation calls a [`TraceSink`] at every point a network trace shows: buffer
//! backlog changes, flow-control signals, head-of-line blocking, packet (segment)
//! transmission, and every link traversal of a message. The simulation is generic over
//! its sink: with [`NullSink`] every hook is an empty inline function and the
//! bookkeeping behind link traversals is skipped (`ENABLED = false`), so tracing costs
//! nothing when it is off.
//!
//! Messages are named in traces by their *number*: 1 for the first message injected
//! into a simulation, 2 for the next, and so on (the caller's cookie may be reused).

pub mod check;
pub mod paraver;
pub mod select;
pub mod summary;

use crate::ids::Device;
use crate::time::SimTime;

/// A port of a device: a Paraver thread of the device's task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PortRef {
    /// the adapter or switch
    pub device: Device,
    /// the port number
    pub port: u32,
}

/// Which buffer of a port a backlog counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BufferSide {
    /// bytes that arrived at the port and wait to cross the switch (wormhole slack
    /// buffers, CIOQ input queues)
    Input,
    /// bytes that crossed the switch and wait to leave by the port (output queues)
    Output,
}

/// A stop/go flow-control signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowSignal {
    /// the receiver's buffer is above its high-water mark
    Stop,
    /// the receiver's buffer drained below its low-water mark
    Go,
}

/// One message crossing one link (aggregated over its packets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkTraversal {
    /// the caller's reference of the message
    pub cookie: u64,
    /// the message's number in its simulation (1 for the first injected)
    pub message: u64,
    /// message payload \[bytes\]
    pub size_bytes: u32,
    /// the transmitting port
    pub sender: PortRef,
    /// the receiving port at the far end
    pub receiver: PortRef,
    /// the sender's device received the message's first byte
    pub first_in: SimTime,
    /// the sender put the message's first byte on the link
    pub first_out: SimTime,
    /// the sender put the message's last byte on the link
    pub last_out: SimTime,
    /// the receiver got the message's first byte
    pub first_arrival: SimTime,
    /// the receiver got the message's last byte
    pub last_arrival: SimTime,
}

/// Receives the model's trace events.
///
/// Time contract: before handling each event the simulation calls [`TraceSink::clock`]
/// with the event's time; every later call reports times at or after that clock,
/// except link traversals. A traversal is announced when the message's first byte
/// starts on the link ([`TraceSink::link_traversal_started`], its `first_in` may lie in
/// the past) and reported whole when its last packet starts on the link
/// ([`TraceSink::link_traversal`], its arrival times lie ahead of the clock). A writer
/// that sorts records keeps everything after the earliest open traversal in a reorder
/// window (the Paraver writer does).
pub trait TraceSink {
    /// Whether the simulation should do the bookkeeping that only traces need.
    const ENABLED: bool = true;

    /// The simulation is about to handle an event at `now` (non-decreasing).
    fn clock(&mut self, _now: SimTime) {}

    /// Message number `message` was handed to its source adapter, to start at `at`
    /// (at or after the clock); not called for the ideal network, which has no ports.
    fn injected(&mut self, _at: SimTime, _message: u64) {}

    /// The bytes waiting in the `side` buffer of `port` changed to `bytes` at `at`.
    fn backlog(&mut self, _at: SimTime, _port: PortRef, _side: BufferSide, _bytes: u64) {}

    /// `port` sent (`sent = true`) or received a flow-control signal at `at`.
    fn flow_control(&mut self, _at: SimTime, _port: PortRef, _signal: FlowSignal, _sent: bool) {}

    /// Head-of-line blocking at input `port` started (`true`) or ended at `at`.
    fn hol_blocking(&mut self, _at: SimTime, _port: PortRef, _started: bool) {}

    /// Bubble flow control: output `port`, free, started (`true`) or stopped waiting at
    /// `at` for a packet slot in the buffer beyond its cable, for a packet that wants it.
    fn room_wait(&mut self, _at: SimTime, _port: PortRef, _started: bool) {}

    /// `port` started (`true`) or finished sending packet `packet` (0-based within its
    /// message) of message number `message` at `at` (an end may be reported ahead of
    /// the clock, by up to one flit time).
    fn segment(&mut self, _at: SimTime, _port: PortRef, _message: u64, _packet: u32, _started: bool) {}

    /// A message's first byte started on a link at `traversal.first_out`; only
    /// `cookie`, `message`, `size_bytes`, `sender`, `receiver`, `first_in` and
    /// `first_out` are final.
    fn link_traversal_started(&mut self, _traversal: &LinkTraversal) {}

    /// A message's last byte started on a link: its traversal is complete (its arrival
    /// times may lie ahead of the clock).
    fn link_traversal(&mut self, _traversal: &LinkTraversal) {}

    /// In one partition of a split network (see [`crate::partition`]): a packet of
    /// message number `message` came across a cut cable, its head at this partition's
    /// device at `head_in` (before the clock, perhaps). What it came with from the
    /// message's source is in `from`. Called for each such packet, at the end of the
    /// window it was sent in.
    fn arrived(&mut self, _message: u64, _head_in: SimTime, _from: Source) {}

    /// In one partition of a split network: the last packet of message number
    /// `message` left it across a cut cable, so nothing more of the message is
    /// reported here (unless a packet of it comes back, [`TraceSink::arrived`]).
    fn left(&mut self, _message: u64) {}
}

/// Where and when a message started, as a partition its packets come to learns it
/// ([`TraceSink::arrived`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    /// the message was injected
    pub injected: SimTime,
    /// the source host's port
    pub port: PortRef,
    /// its first byte left the source host
    pub first_out: SimTime,
}

/// Traces nothing, at no cost.
#[derive(Debug, Clone, Copy, Default)]
pub struct NullSink;

impl TraceSink for NullSink {
    const ENABLED: bool = false;
}

/// Keeps every call, for tests and small runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordingSink {
    /// `(time, port, side, bytes)` per backlog change
    pub backlogs: Vec<(SimTime, PortRef, BufferSide, u64)>,
    /// `(time, port, signal, sent)` per flow-control signal
    pub flow_controls: Vec<(SimTime, PortRef, FlowSignal, bool)>,
    /// `(time, input port, started)` per head-of-line blocking change
    pub hol: Vec<(SimTime, PortRef, bool)>,
    /// `(time, output port, started)` per change of a bubble flow control wait
    pub room_waits: Vec<(SimTime, PortRef, bool)>,
    /// `(time, port, message number, packet, started)` per segment start and end
    pub segments: Vec<(SimTime, PortRef, u64, u32, bool)>,
    /// every link traversal, in the order reported
    pub traversals: Vec<LinkTraversal>,
    /// every link traversal announced, in the order announced
    pub started: Vec<LinkTraversal>,
}

impl TraceSink for RecordingSink {
    fn backlog(&mut self, at: SimTime, port: PortRef, side: BufferSide, bytes: u64) {
        self.backlogs.push((at, port, side, bytes));
    }

    fn flow_control(&mut self, at: SimTime, port: PortRef, signal: FlowSignal, sent: bool) {
        self.flow_controls.push((at, port, signal, sent));
    }

    fn hol_blocking(&mut self, at: SimTime, port: PortRef, started: bool) {
        self.hol.push((at, port, started));
    }

    fn room_wait(&mut self, at: SimTime, port: PortRef, started: bool) {
        self.room_waits.push((at, port, started));
    }

    fn segment(&mut self, at: SimTime, port: PortRef, message: u64, packet: u32, started: bool) {
        self.segments.push((at, port, message, packet, started));
    }

    fn link_traversal_started(&mut self, traversal: &LinkTraversal) {
        self.started.push(*traversal);
    }

    fn link_traversal(&mut self, traversal: &LinkTraversal) {
        self.traversals.push(*traversal);
    }
}
