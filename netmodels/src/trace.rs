//! Instrumentation hooks for trace writers (Paraver, its own issue).
//!
//! The simulation calls a [`TraceSink`] at every point a network trace shows: buffer
//! backlog changes, flow-control signals, head-of-line blocking, packet (segment)
//! transmission, and every link traversal of a message. The simulation is generic over
//! its sink: with [`NullSink`] every hook is an empty inline function and the
//! bookkeeping behind link traversals is skipped (`ENABLED = false`), so tracing costs
//! nothing when it is off.

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
    /// message payload [bytes]
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

/// Receives the model's trace events, in non-decreasing time per kind of call except
/// link traversals: one is reported as soon as it is known, when the message's last
/// packet starts on the link, so its arrival times lie ahead of the clock; a writer
/// sorts them into place (the Paraver writer's reorder window).
pub trait TraceSink {
    /// Whether the simulation should do the bookkeeping that only traces need.
    const ENABLED: bool = true;

    /// The bytes waiting at `port` changed to `bytes` at `at`.
    fn backlog(&mut self, _at: SimTime, _port: PortRef, _bytes: u64) {}

    /// `port` sent (`sent = true`) or received a flow-control signal at `at`.
    fn flow_control(&mut self, _at: SimTime, _port: PortRef, _signal: FlowSignal, _sent: bool) {}

    /// Head-of-line blocking at input `port` started (`true`) or ended at `at`.
    fn hol_blocking(&mut self, _at: SimTime, _port: PortRef, _started: bool) {}

    /// `port` started (`true`) or finished sending packet `packet` (0-based within its
    /// message) of the message `cookie` at `at`.
    fn segment(&mut self, _at: SimTime, _port: PortRef, _cookie: u64, _packet: u32, _started: bool) {}

    /// A message finished crossing a link.
    fn link_traversal(&mut self, _traversal: &LinkTraversal) {}
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
    /// `(time, port, bytes)` per backlog change
    pub backlogs: Vec<(SimTime, PortRef, u64)>,
    /// `(time, port, signal, sent)` per flow-control signal
    pub flow_controls: Vec<(SimTime, PortRef, FlowSignal, bool)>,
    /// `(time, input port, started)` per head-of-line blocking change
    pub hol: Vec<(SimTime, PortRef, bool)>,
    /// `(time, port, cookie, packet, started)` per segment start and end
    pub segments: Vec<(SimTime, PortRef, u64, u32, bool)>,
    /// every link traversal, in the order reported
    pub traversals: Vec<LinkTraversal>,
}

impl TraceSink for RecordingSink {
    fn backlog(&mut self, at: SimTime, port: PortRef, bytes: u64) {
        self.backlogs.push((at, port, bytes));
    }

    fn flow_control(&mut self, at: SimTime, port: PortRef, signal: FlowSignal, sent: bool) {
        self.flow_controls.push((at, port, signal, sent));
    }

    fn hol_blocking(&mut self, at: SimTime, port: PortRef, started: bool) {
        self.hol.push((at, port, started));
    }

    fn segment(&mut self, at: SimTime, port: PortRef, cookie: u64, packet: u32, started: bool) {
        self.segments.push((at, port, cookie, packet, started));
    }

    fn link_traversal(&mut self, traversal: &LinkTraversal) {
        self.traversals.push(*traversal);
    }
}
