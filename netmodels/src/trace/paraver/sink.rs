//! The sink that collects one rail's (or partition's) records from the model's hooks
//! and holds them in its reorder window until nothing earlier can come
//! ([`ParaverSink`]).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::sync::Arc;

use super::layout::Layout;
use super::options::ParaverOptions;
use super::record::{
    Body, COMMUNICATION, EVENT, FLOW_CONTROL_RECEIVED, FLOW_CONTROL_SENT, HOL_BLOCKING, MAX_LEVEL, ROOM_WAIT, Record,
    STATE,
};
use crate::ids::Device;
use crate::time::SimTime;
use crate::trace::select::TimeWindow;
use crate::trace::summary::BacklogCount;
use crate::trace::{BufferSide, FlowSignal, LinkTraversal, PortRef, Source, TraceSink};

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
    pub(super) heap: BinaryHeap<Reverse<Record>>,
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
    pub(super) late: u64,
}

impl ParaverSink {
    pub(super) fn new(layout: Arc<Layout>, rail: usize, rails: usize, options: &ParaverOptions) -> ParaverSink {
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
    pub(super) fn watermark(&self) -> SimTime {
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
    pub(super) fn release(&mut self, ns: u64, out: &mut Vec<Record>) {
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
    pub(super) fn close(&mut self, at: SimTime) -> u64 {
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
