//! The CIOQ switch's input side and crossbar scheduling.
//!
//! ```text
//!   in p0 ─▶ [input queue | VOQ per output] ─┐  crossbar at speedup × link rate   ┌▶ [output queue] ─▶ out p0
//!   in p1 ─▶ [input queue | VOQ per output] ─┼─ one packet per input, per output ─┼▶ [output queue] ─▶ out p1
//! ```
//!
//! A routed packet joins its input's queue. Whenever a crossbar port frees up or a
//! packet arrives, the switch matches free inputs to free outputs: outputs in turn from
//! a rotating start, each taking the first eligible input after its own round-robin
//! pointer. An eligible input has a packet for that output at the head of its FIFO
//! (or in that output's virtual queue). The transfer lasts the packet's serialisation
//! divided by the speedup, and cannot end before the packet's tail has arrived (the
//! crossbar is cut-through too). The packet joins the output queue when its transfer
//! starts; the output link cannot finish sending it before the transfer ends.

use super::{PacketFabric, Step};
use crate::event::Event;
use crate::ids::{Device, PortId, SwitchId};
use crate::message::{Packet, PacketId};
use crate::slab::Slab;
use crate::switch::packet::events::PacketEvent;
use crate::switch::waiting::{Queue, Side, Waiting};
use crate::switch::{CioqParams, rotated};
use crate::time::SimTime;
use crate::trace::{BufferSide, PortRef, TraceSink};

/// Where the queues' packets are: the runs of every queue, and the packet records.
pub(crate) type Store<'a> = (&'a mut Waiting, &'a mut Slab<Packet>);

/// One input port's state, and its virtual output queues.
#[derive(Debug, Default)]
pub(crate) struct InputQueues {
    /// the outputs whose queue here is not empty (virtual output queues), in order
    waiting: Vec<u32>,
    /// virtual output queues: the queue of each output of `waiting`, at the same index
    /// (only the queues that hold packets exist: a switch of n ports would otherwise
    /// keep n² queues)
    voqs: Vec<Queue>,
    /// a transfer from this input is under way
    busy: bool,
    /// bytes of the packets waiting here (kept by the caller, for traces)
    pub(crate) bytes: u64,
}

/// The crossbar state of one switch.
///
/// Matching is incremental: only outputs whose situation changed since the last
/// matching (freed, newly wanted, or wanted by an input that was freed) are looked at,
/// in the same rotating order a full scan would use; the others could not match anyway.
#[derive(Debug)]
pub(crate) struct Crossbar {
    params: CioqParams,
    inputs: Vec<InputQueues>,
    /// FIFO inputs: each input's queue (virtual output queues are the inputs' own)
    /// (each packet's tag is its output; the packets wait as runs, in `PacketFabric::waiting`)
    queues: Vec<Queue>,
    /// virtual output queues emptied, kept for reuse (with their memory)
    spare: Vec<Queue>,
    /// a transfer into this output is under way
    output_busy: Vec<bool>,
    /// per output: the inputs with a packet for it at the head of a queue, in order
    wanting: Vec<Vec<u32>>,
    /// outputs to look at in the next matching
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
    /// per output: the first input port to consider
    pointers: Vec<u32>,
    /// the first output to consider at the next matching
    start: u32,
    /// a matching is scheduled
    pub(crate) matching: bool,
}

impl Crossbar {
    pub(crate) fn new(params: CioqParams, ports: u32) -> Crossbar {
        let fifos = if params.virtual_output_queues { 0 } else { ports };
        Crossbar {
            params,
            inputs: (0..ports).map(|_| InputQueues::default()).collect(),
            queues: (0..fifos).map(|_| Queue::default()).collect(),
            spare: Vec::new(),
            output_busy: vec![false; ports as usize],
            wanting: vec![Vec::new(); ports as usize],
            dirty: Vec::new(),
            is_dirty: vec![false; ports as usize],
            pointers: vec![0; ports as usize],
            start: 0,
            matching: false,
        }
    }

    /// The bytes of its lists, as built (see [`crate::footprint`]).
    #[cfg(test)]
    pub(crate) fn counted_bytes(&self) -> u64 {
        let bytes = |capacity: usize, size: usize| (capacity * size) as u64;
        size_of::<Crossbar>() as u64
            + bytes(self.inputs.capacity(), size_of::<InputQueues>())
            + bytes(self.queues.capacity(), size_of::<Queue>())
            + bytes(self.output_busy.capacity(), size_of::<bool>())
            + bytes(self.wanting.capacity(), size_of::<Vec<u32>>())
            + bytes(self.is_dirty.capacity(), size_of::<bool>())
            + bytes(self.pointers.capacity(), size_of::<u32>())
    }

    /// The speedup (≥ 1).
    pub(crate) fn speedup(&self) -> u32 {
        self.params.speedup.max(1)
    }

    /// The queues of `input`.
    pub(crate) fn input_mut(&mut self, input: u32) -> &mut InputQueues {
        &mut self.inputs[input as usize]
    }

    /// The queue of `input` that holds packets for `output`, if it holds any (a FIFO
    /// input's one queue always).
    fn queue_mut(&mut self, input: u32, output: u32) -> Option<&mut Queue> {
        if !self.params.virtual_output_queues {
            return self.queues.get_mut(input as usize);
        }
        let inp = &mut self.inputs[input as usize];
        let at = inp.waiting.binary_search(&output).ok()?;
        inp.voqs.get_mut(at)
    }

    fn mark(&mut self, output: u32) {
        mark(&self.output_busy, &mut self.is_dirty, &mut self.dirty, output);
    }

    fn want(&mut self, input: u32, output: u32) {
        let list = &mut self.wanting[output as usize];
        if let Err(at) = list.binary_search(&input) {
            list.insert(at, input);
        }
        // A busy input cannot match: `done` marks the outputs it wants when it is free.
        if !self.inputs[input as usize].busy {
            self.mark(output);
        }
    }

    fn unwant(&mut self, input: u32, output: u32) {
        let list = &mut self.wanting[output as usize];
        if let Ok(at) = list.binary_search(&input) {
            list.remove(at);
        }
    }

    /// `packet` arrived at input `input`, bound for output `output`.
    pub(crate) fn enqueue(&mut self, store: Store<'_>, input: u32, output: u32, packet: PacketId) {
        let (waiting, packets) = store;
        let first = match self.queue_mut(input, output) {
            Some(queue) => {
                let first = queue.is_empty();
                waiting.push(queue, Side::Input, packet, output, packets);
                first
            }
            // A virtual output queue that held nothing: made (or taken from the spares).
            None => {
                let mut queue = self.spare.pop().unwrap_or_default();
                waiting.push(&mut queue, Side::Input, packet, output, packets);
                let inp = &mut self.inputs[input as usize];
                let at = inp.waiting.partition_point(|&o| o < output);
                inp.waiting.insert(at, output);
                inp.voqs.insert(at, queue);
                true
            }
        };
        if first {
            // It is at the head of its queue: it wants its output now.
            self.want(input, output);
        }
    }

    /// The transfer from `input` to `output` ended: both ports are free again.
    pub(crate) fn done(&mut self, waiting: &Waiting, input: u32, output: u32) {
        self.inputs[input as usize].busy = false;
        self.output_busy[output as usize] = false;
        self.mark(output);
        // The outputs this input wants may have been waiting for it.
        let inp = &self.inputs[input as usize];
        if self.params.virtual_output_queues {
            for &o in &inp.waiting {
                mark(&self.output_busy, &mut self.is_dirty, &mut self.dirty, o);
            }
        } else if let Some(o) = waiting.front_tag(&self.queues[input as usize]) {
            self.mark(o);
        }
    }

    /// Whether anything waits or is marked for matching.
    pub(crate) fn has_work(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// Packets waiting at `input`.
    #[cfg(test)]
    pub(crate) fn queued(&self, waiting: &Waiting, input: u32) -> usize {
        let fifo = self.queues.get(input as usize).map_or(0, |q| waiting.len(q));
        fifo + self.inputs[input as usize]
            .voqs
            .iter()
            .map(|q| waiting.len(q))
            .sum::<usize>()
    }

    /// Matches free inputs to free outputs; appends the transfers to start to `started`
    /// as `(input, output, packet)`, and marks their ports busy. Outputs in turn from a
    /// rotating start; each takes the first free input that wants it at or after its
    /// round-robin pointer.
    pub(crate) fn matches(&mut self, store: Store<'_>, started: &mut Vec<(u32, u32, PacketId)>) {
        let (waiting, packets) = store;
        let ports = self.output_busy.len() as u32;
        let start = self.start;
        // Taken, and put back empty below: the list keeps its memory between matchings.
        let mut outputs = std::mem::take(&mut self.dirty);
        for &o in &outputs {
            self.is_dirty[o as usize] = false;
        }
        outputs.sort_unstable_by_key(|&o| rotated(o, start, ports));
        for &output in &outputs {
            if self.output_busy[output as usize] {
                continue;
            }
            let pointer = self.pointers[output as usize];
            let inputs = &self.inputs;
            let chosen = self.wanting[output as usize]
                .iter()
                .copied()
                .filter(|&i| !inputs[i as usize].busy)
                .min_by_key(|&i| rotated(i, pointer, ports));
            let Some(input) = chosen else { continue };
            // Busy from here: the next packet `take` brings to the head waits for `done`.
            self.inputs[input as usize].busy = true;
            self.output_busy[output as usize] = true;
            let Some(packet) = self.take((&mut *waiting, &mut *packets), input, output) else {
                self.inputs[input as usize].busy = false;
                self.output_busy[output as usize] = false;
                continue;
            };
            self.pointers[output as usize] = (input + 1) % ports;
            started.push((input, output, packet));
        }
        outputs.clear();
        if self.dirty.is_empty() {
            self.dirty = outputs;
        }
        self.start = (self.start + 1) % ports.max(1);
    }

    fn take(&mut self, store: Store<'_>, input: u32, output: u32) -> Option<PacketId> {
        let (waiting, packets) = store;
        let voq = self.params.virtual_output_queues;
        let queue = self.queue_mut(input, output)?;
        let (packet, _) = waiting.pop(queue, packets)?;
        let next = waiting.front_tag(queue);
        self.unwant(input, output);
        if voq && next.is_none() {
            // The queue is empty: it leaves the input, for the spares.
            let inp = &mut self.inputs[input as usize];
            if let Ok(at) = inp.waiting.binary_search(&output) {
                inp.waiting.remove(at);
                self.spare.push(inp.voqs.remove(at));
            }
        }
        if let Some(o) = next {
            // The next packet of this queue is at the head now.
            self.want(input, o);
        }
        Some(packet)
    }
}

/// Puts `output` on the list to look at in the next matching, once, unless a transfer
/// into it is under way: then it cannot match, and `done` marks it when the transfer
/// ends.
fn mark(output_busy: &[bool], is_dirty: &mut [bool], dirty: &mut Vec<u32>, output: u32) {
    if output_busy[output as usize] {
        return;
    }
    if !is_dirty[output as usize] {
        is_dirty[output as usize] = true;
        dirty.push(output);
    }
}

/// The packet engine's side of a CIOQ switch: routed packets join the input queues,
/// matchings start crossbar transfers, and a transferred packet joins its output
/// queue (`PacketFabric::enter_output`, in [`crate::switch::packet::output_queued`]).
impl PacketFabric {
    /// A routed packet joins its CIOQ input queue.
    pub(crate) fn cioq_arrive<S: TraceSink>(
        &mut self,
        switch: SwitchId,
        packet: PacketId,
        port: PortId,
        step: &mut Step<'_, S>,
    ) {
        let base = self.wiring.port_base[self.wiring.device_index(Device::Switch(switch))];
        let p = self.packets[packet.index()];
        let (input, output) = (p.in_port - base, port.0 - base);
        let Some(x) = self.crossbars[switch.index()].as_mut() else {
            return;
        };
        x.enqueue((&mut self.waiting, &mut self.packets), input, output, packet);
        x.input_mut(input).bytes += u64::from(p.wire_bytes);
        if S::ENABLED {
            let at = PortRef {
                device: Device::Switch(switch),
                port: input,
            };
            step.sink
                .backlog(step.now, at, BufferSide::Input, x.input_mut(input).bytes);
        }
        self.schedule_match(switch, step);
    }

    pub(crate) fn schedule_match<S: TraceSink>(&mut self, switch: SwitchId, step: &mut Step<'_, S>) {
        if let Some(x) = self.crossbars[switch.index()].as_mut()
            && !x.matching
            && x.has_work()
        {
            if step.queue.take_turn(0) {
                // No other arrival this instant: the match would be the next event. It
                // counts as one, so that the count does not depend on what else is
                // pending (in a partitioned network, on the partitions).
                step.queue.count_taken_turn();
                self.cioq_match(switch, step);
            } else {
                // After every other arrival of this instant.
                x.matching = true;
                step.queue
                    .schedule(step.now, Event::Packet(PacketEvent::Match { switch }));
            }
        }
    }

    /// Starts every crossbar transfer the free ports allow.
    pub(crate) fn cioq_match<S: TraceSink>(&mut self, switch: SwitchId, step: &mut Step<'_, S>) {
        let now = step.now;
        let base = self.wiring.port_base[self.wiring.device_index(Device::Switch(switch))];
        let Some(x) = self.crossbars[switch.index()].as_mut() else {
            return;
        };
        x.matching = false;
        let speedup = u64::from(x.speedup());
        let mut started = std::mem::take(&mut self.scratch_matches);
        x.matches((&mut self.waiting, &mut self.packets), &mut started);
        for &(input, output, packet) in &started {
            let Some(x) = self.crossbars[switch.index()].as_mut() else {
                return;
            };
            let port = PortId(base + output);
            let p = &mut self.packets[packet.index()];
            let link = self.ports[port.index()].peer.map(|(_, link)| link).unwrap_or_default();
            let transfer = SimTime::from_ps(
                link.bandwidth
                    .serialization_time(u64::from(p.wire_bytes))
                    .as_ps()
                    .div_ceil(speedup),
            );
            // Cut-through: the transfer cannot end before the tail is in.
            let end = (now + transfer).max(p.tail_at_next_input);
            p.tail_at_next_input = end;
            let bytes = u64::from(p.wire_bytes);
            x.input_mut(input).bytes -= bytes;
            if S::ENABLED {
                let at = PortRef {
                    device: Device::Switch(switch),
                    port: input,
                };
                step.sink.backlog(now, at, BufferSide::Input, x.input_mut(input).bytes);
            }
            step.queue
                .schedule(end, Event::Packet(PacketEvent::CrossbarDone { switch, input, output }));
            // The head is through: the packet joins its output queue now.
            self.enter_output(port, packet, step);
        }
        started.clear();
        self.scratch_matches = started;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::ids::MessageId;

    /// A packet of its own message `n` (one packet each: every one a run of its own).
    fn packet(n: u32) -> Packet {
        Packet {
            message: MessageId(n),
            index: 0,
            wire_bytes: 64,
            last: true,
            hop: 1,
            head_in: SimTime::ZERO,
            tail_at_next_input: SimTime::ZERO,
            in_port: 0,
        }
    }

    /// Packet `n` (of its own message) arrives at `input`, bound for `output`.
    fn put(x: &mut Crossbar, store: Store<'_>, input: u32, output: u32, n: u32) {
        let (waiting, packets) = store;
        let id = PacketId(packets.insert(packet(n)));
        x.enqueue((waiting, packets), input, output, id);
    }

    #[test]
    fn fifo_inputs_block_behind_their_head() {
        let (mut w, mut slab) = (Waiting::default(), Slab::new());
        let mut x = Crossbar::new(CioqParams::default(), 3);
        put(&mut x, (&mut w, &mut slab), 0, 2, 10);
        put(&mut x, (&mut w, &mut slab), 0, 1, 11);
        put(&mut x, (&mut w, &mut slab), 1, 2, 12);
        let mut first = Vec::new();
        x.matches((&mut w, &mut slab), &mut first);
        // Output 2 takes one of inputs 0 and 1; input 0's packet for output 1 is stuck.
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].1, 2);
    }

    #[test]
    fn virtual_output_queues_let_the_next_packet_go() {
        let params = CioqParams {
            virtual_output_queues: true,
            ..CioqParams::default()
        };
        let (mut w, mut slab) = (Waiting::default(), Slab::new());
        let mut x = Crossbar::new(params, 3);
        put(&mut x, (&mut w, &mut slab), 0, 2, 10);
        put(&mut x, (&mut w, &mut slab), 0, 1, 11);
        put(&mut x, (&mut w, &mut slab), 1, 2, 12);
        let mut started = Vec::new();
        x.matches((&mut w, &mut slab), &mut started);
        started.sort_unstable_by_key(|&(i, o, _)| (i, o));
        // Input 0 serves output 1 while input 1 serves output 2 (or input 0 serves 2).
        assert_eq!(started.len(), 2, "{started:?}");
        assert_eq!(x.queued(&w, 0) + x.queued(&w, 1), 1);
    }

    #[test]
    fn virtual_output_queues_take_memory_for_the_packets_they_hold() {
        // A queue per input and output made a switch of n ports n² queues: 32 GB for a
        // crossbar of 32,000 hosts. Only those that hold packets exist now.
        let params = CioqParams {
            virtual_output_queues: true,
            ..CioqParams::default()
        };
        let ports = 32_000;
        let (mut w, mut slab) = (Waiting::default(), Slab::new());
        let mut x = Crossbar::new(params, ports);
        let empty = x.counted_bytes();
        assert!(empty < u64::from(ports) * 128, "{empty} bytes");
        for packet in 0..100 {
            put(&mut x, (&mut w, &mut slab), packet % 7, 1000 + packet % 13, packet);
        }
        assert_eq!((0..7).map(|i| x.queued(&w, i)).sum::<usize>(), 100);
        let mut started = Vec::new();
        x.matches((&mut w, &mut slab), &mut started);
        // Seven inputs, each with packets for several outputs: seven transfers.
        assert_eq!(started.len(), 7, "{started:?}");
    }

    /// The matching of a full scan over every output, kept as the reference.
    struct Reference {
        voq: bool,
        queues: Vec<Vec<VecDeque<(u32, u32)>>>,
        input_busy: Vec<bool>,
        output_busy: Vec<bool>,
        pointers: Vec<u32>,
        start: u32,
    }

    impl Reference {
        fn head(&self, input: u32, output: u32) -> bool {
            let q = if self.voq { output as usize } else { 0 };
            self.queues[input as usize][q]
                .front()
                .is_some_and(|&(o, _)| o == output)
        }

        fn matches(&mut self) -> Vec<(u32, u32, u32)> {
            let ports = self.output_busy.len() as u32;
            let mut started = Vec::new();
            for k in 0..ports {
                let output = (self.start + k) % ports;
                if self.output_busy[output as usize] {
                    continue;
                }
                let pointer = self.pointers[output as usize];
                let chosen = (0..ports)
                    .map(|j| (pointer + j) % ports)
                    .find(|&i| !self.input_busy[i as usize] && self.head(i, output));
                let Some(input) = chosen else { continue };
                let q = if self.voq { output as usize } else { 0 };
                let (_, packet) = self.queues[input as usize][q].pop_front().expect("head");
                self.input_busy[input as usize] = true;
                self.output_busy[output as usize] = true;
                self.pointers[output as usize] = (input + 1) % ports;
                started.push((input, output, packet));
            }
            self.start = (self.start + 1) % ports;
            started
        }
    }

    #[test]
    fn incremental_matching_equals_a_full_scan() {
        for voq in [false, true] {
            let ports = 6;
            let params = CioqParams {
                speedup: 1,
                virtual_output_queues: voq,
            };
            let (mut w, mut slab) = (Waiting::default(), Slab::new());
            let mut x = Crossbar::new(params, ports);
            let mut r = Reference {
                voq,
                queues: (0..ports)
                    .map(|_| (0..if voq { ports } else { 1 }).map(|_| VecDeque::new()).collect())
                    .collect(),
                input_busy: vec![false; ports as usize],
                output_busy: vec![false; ports as usize],
                pointers: vec![0; ports as usize],
                start: 0,
            };
            let mut rng = crate::rng::Rng::new(u64::from(voq));
            let mut active: Vec<(u32, u32)> = Vec::new();
            for step in 0..20_000u32 {
                if rng.below(3) > 0 || active.is_empty() {
                    let (i, o) = (rng.below(u64::from(ports)) as u32, rng.below(u64::from(ports)) as u32);
                    put(&mut x, (&mut w, &mut slab), i, o, step);
                    let q = if voq { o as usize } else { 0 };
                    r.queues[i as usize][q].push_back((o, step));
                } else {
                    let (i, o) = active.swap_remove(rng.below(active.len() as u64) as usize);
                    x.done(&w, i, o);
                    r.input_busy[i as usize] = false;
                    r.output_busy[o as usize] = false;
                }
                // The simulation matches whenever something changed: both do so here.
                let mut got = Vec::new();
                x.matches((&mut w, &mut slab), &mut got);
                let got_ids: Vec<_> = got.iter().map(|&(i, o, p)| (i, o, slab[p.index()].message.0)).collect();
                assert_eq!(got_ids, r.matches(), "voq {voq} step {step}");
                active.extend(got.iter().map(|&(i, o, _)| (i, o)));
            }
        }
    }
}
