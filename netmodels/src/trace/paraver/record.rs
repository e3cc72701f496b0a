//! The records' codes (event types, the highest backlog level), one record of the trace
//! as the sinks hold it before it is written ([`Record`]), its order, and how it travels
//! between ranks.

use crate::partition::ranks::{self, Words};

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

/// Kinds, in their order at equal times.
pub(super) const EVENT: u8 = 0;
pub(super) const STATE: u8 = 1;
pub(super) const COMMUNICATION: u8 = 2;

#[derive(Debug, Clone, Copy)]
pub(super) enum Body {
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
pub(super) struct Record {
    pub(super) ns: u64,
    pub(super) kind: u8,
    pub(super) thread: u32,
    pub(super) end_to_end: bool,
    pub(super) seq: u64,
    pub(super) body: Body,
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
pub(super) fn put_record(out: &mut Vec<u8>, r: &Record) {
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
pub(super) fn record(words: &mut Words<'_>) -> Record {
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
