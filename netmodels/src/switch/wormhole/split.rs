//! The fabric as one partition of a split network: what it keeps of the others
//! (`WormShare`), and the flits and STOP/GO signals that cross its cut cables.

use std::collections::HashMap;

use crate::crossing::{Crossing, CrossingEvent, PathRest, Split, path_returns};
use crate::event::Event;
use crate::ids::Device;
use crate::message::Message;
use crate::queue::EventQueue;
use crate::slab::Slab;
use crate::time::SimTime;
use crate::trace::TraceSink;

use super::events::{Signal, WormEvent};
use super::{Ctx, Packet, PlanChange, WormholeFabric};

/// What a partition of a split wormhole fabric keeps about the others (see
/// [`crate::partition::windows`]). Flits and STOP/GO signals cross cut cables, each
/// after its cable's delay. A worm may span several partitions: a packet has a record
/// in each partition holding one of its flits, found by (message number, index), and
/// a message one in each its packets cross, by number. A partition lets both go once
/// the tail of the packet (of the message's last packet) has left it for good: it
/// crossed a cut cable and the rest of its path does not come back. The flits ahead
/// of a tail are on the same path, so they have left for good too. The destination's
/// partition lets them go when they are delivered.
#[derive(Debug)]
pub(super) struct WormShare {
    pub(super) split: Split,
    /// the packets this partition holds a record of, by message number and index
    pub(super) by_packet: HashMap<(u64, u32), u32>,
    /// by output: what the packet it sends across a cut cable does beyond it, found
    /// the first time and kept until the output is released (the worm holds the
    /// packet until then)
    pub(super) sent: Vec<Sent>,
}

/// What an output's packet does beyond the cut cable it crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sent {
    /// nothing crossed from the output since it was last released
    Nothing,
    /// packet `.0`'s path comes back to this partition
    Returns(u32),
    /// packet `.0` left for good (`.1`: its message's last); it goes from this
    /// partition once the output is released
    Leaves(u32, bool),
}

impl WormholeFabric {
    /// Makes this fabric partition `part` of a network split as `of_device` says.
    pub(super) fn become_part(&mut self, part: u32, of_device: Vec<u32>) {
        self.share = Some(Box::new(WormShare {
            split: Split::new(part, of_device),
            by_packet: HashMap::new(),
            sent: vec![Sent::Nothing; self.outs.len()],
        }));
    }

    /// What this partition keeps of the split (`None`: whole). A message's record
    /// comes by number (`by_number`) when it enters an adapter here or its first flit
    /// crosses here, and goes when it is delivered here or its last tail has left.
    pub(super) fn split_kept(&mut self) -> Option<&mut Split> {
        self.share.as_mut().map(|s| &mut s.split)
    }

    /// The partition `port`'s device is in, if it is another than this one's.
    #[inline(always)]
    pub(super) fn elsewhere(&self, port: u32) -> Option<u32> {
        self.share
            .as_ref()?
            .split
            .elsewhere(self.port_device[port as usize] as usize)
    }

    /// Takes in a flit or a signal another partition sent, in the place among its
    /// instant's events the sender gave it.
    pub(super) fn on_crossing<S: TraceSink>(
        &mut self,
        crossing: &Crossing,
        messages: &mut Slab<Message>,
        queue: &mut EventQueue<Event>,
        sink: &mut S,
    ) {
        if self.share.is_none() {
            return;
        }
        let event = match crossing.event {
            CrossingEvent::Signal { port, signal } => signal.arrives(port),
            CrossingEvent::Flit { input, hop, flits } => {
                let packet = self.record_of(crossing, flits, messages, sink);
                WormEvent::FlitArrives { input, packet, hop }
            }
            CrossingEvent::Plan {
                input,
                hop,
                flits,
                committed,
                run,
            } => {
                let packet = self.record_of(crossing, flits, messages, sink);
                let slot = self.plans.insert(PlanChange {
                    packet,
                    hop,
                    committed,
                    run,
                });
                WormEvent::PlanArrives { input, slot }
            }
            CrossingEvent::Routed { .. } | CrossingEvent::TailArrives | CrossingEvent::Credit { .. } => return,
        };
        queue.schedule_keyed(crossing.key, Event::Worm(event));
    }

    /// The record here of the packet (of `flits` flits) whose flit or plan `crossing`
    /// brings: found by its message's number and its index, or made the first time.
    fn record_of<S: TraceSink>(
        &mut self,
        crossing: &Crossing,
        flits: u32,
        messages: &mut Slab<Message>,
        sink: &mut S,
    ) -> u32 {
        let Some(share) = &mut self.share else {
            unreachable!("crossings come to the partitions of a split network only")
        };
        let number = crossing.message.number;
        let message = share.split.record_of(crossing, messages, &mut self.routes);
        let index = crossing.packet.index;
        if let Some(&packet) = share.by_packet.get(&(number, index)) {
            return packet;
        }
        // Its head (or its first plan): a record of the packet here.
        let m = &messages[message.index()];
        if S::ENABLED {
            sink.arrived(number, crossing.packet.head_in, m.source());
        }
        let packet = self.packets.insert(Packet {
            message,
            index,
            flits,
            last: crossing.packet.last,
            delivered: 0,
            version: 0,
            route: m.route,
            dst: m.spec.dst,
        });
        share.by_packet.insert((number, index), packet);
        packet
    }

    /// Sends `change`, a new plan of output `port`, to input `input` of another
    /// partition, `to`, where it arrives at `at`. A packet whose path does not come
    /// back here goes from this partition (with its message, if it is the message's
    /// last) once `port` is released.
    #[cold]
    pub(super) fn cross_plan<S: TraceSink>(
        &mut self,
        (port, input, to): (u32, u32, u32),
        at: SimTime,
        change: PlanChange,
        ctx: &mut Ctx<'_, S>,
    ) {
        let event = WormEvent::PlanArrives { input, slot: 0 };
        let plan = CrossingEvent::Plan {
            input,
            hop: change.hop,
            flits: self.packets[change.packet as usize].flits,
            committed: change.committed,
            run: change.run,
        };
        let hop = change.hop;
        self.cross_packet((port, input, hop, to), change.packet, (event, at), plan, true, ctx);
    }

    /// Sends `signal` from the input fed by `upstream`, to arrive at `at`.
    pub(super) fn signal<S>(&mut self, upstream: u32, at: SimTime, signal: Signal, ctx: &mut Ctx<'_, S>) {
        let event = signal.arrives(upstream);
        match self.elsewhere(upstream) {
            None => ctx.schedule(at, event),
            Some(to) => {
                let key = EventQueue::<Event>::key_of(at, event.rank(), ctx.queue.reserve());
                if let Some(share) = &mut self.share {
                    let signal = CrossingEvent::Signal { port: upstream, signal };
                    share.split.crossings.push(Crossing::bare(to, key, signal));
                }
            }
        }
    }

    /// Sends flit `arrival.0` of `packet`'s worm to input `input` of another partition,
    /// `to`, where it arrives at `arrival.1`, at the switch of position `hop` on its
    /// path. A tail that leaves for good lets the packet (and, with the message's last,
    /// the message) go once `port` is released.
    #[cold]
    pub(super) fn cross_flit<S: TraceSink>(
        &mut self,
        (port, input, hop, to): (u32, u32, u16, u32),
        packet: u32,
        arrival: (u32, SimTime),
        ctx: &mut Ctx<'_, S>,
    ) {
        let (flit, at) = arrival;
        let event = WormEvent::FlitArrives { input, packet, hop };
        let flits = self.packets[packet as usize].flits;
        let crossing = CrossingEvent::Flit { input, hop, flits };
        self.cross_packet(
            (port, input, hop, to),
            packet,
            (event, at),
            crossing,
            flit + 1 == flits,
            ctx,
        );
    }

    /// Sends `crossing`, whose event here would be `event.0` at `event.1`, with
    /// `packet`'s records, from output `port` to input `input` of partition `to`, at the
    /// switch of position `hop` on the packet's path. If the packet `leaves` with it and
    /// its path does not come back here, it goes from this partition (with its message,
    /// if it is the message's last) once `port` is released.
    fn cross_packet<S: TraceSink>(
        &mut self,
        (port, input, hop, to): (u32, u32, u16, u32),
        packet: u32,
        (event, at): (WormEvent, SimTime),
        crossing: CrossingEvent,
        leaves: bool,
        ctx: &mut Ctx<'_, S>,
    ) {
        let p = self.packets[packet as usize];
        let key = EventQueue::<Event>::key_of(at, event.rank(), ctx.queue.reserve());
        let message = ctx.messages[p.message.index()];
        let Some(share) = &mut self.share else {
            return;
        };
        let mut crossing = Crossing::bare(to, key, crossing);
        crossing.packet.index = p.index;
        crossing.packet.last = p.last;
        crossing.packet.head_in = at;
        crossing.message = message;
        share.split.crossings.push(crossing);
        let sent = &mut share.sent[port as usize];
        if !leaves || matches!(*sent, Sent::Returns(p) | Sent::Leaves(p, _) if p == packet) {
            return;
        }
        let Device::Switch(switch) = self.wiring.owner[input as usize].device else {
            return;
        };
        let path = PathRest {
            route: p.route,
            switch,
            hop: usize::from(hop),
            dst: p.dst,
        };
        let returns = path_returns(
            &self.wiring,
            &self.routes,
            &share.split.of_device,
            path,
            share.split.part,
        );
        share.sent[port as usize] = if returns {
            Sent::Returns(packet)
        } else {
            Sent::Leaves(packet, p.last)
        };
    }

    /// `port` was released from `packet`: if it sent the packet away for good, the
    /// packet goes from this partition, with its message if that was the message's
    /// last packet.
    pub(super) fn let_go<S: TraceSink>(&mut self, port: u32, packet: u32, ctx: &mut Ctx<'_, S>) {
        let Some(share) = &mut self.share else {
            return;
        };
        let sent = &mut share.sent[port as usize];
        let last = match *sent {
            Sent::Returns(p) if p == packet => {
                *sent = Sent::Nothing;
                return;
            }
            Sent::Leaves(p, last) if p == packet => {
                *sent = Sent::Nothing;
                last
            }
            _ => return,
        };
        let p = self.packets[packet as usize];
        let number = ctx.messages[p.message.index()].number;
        share.by_packet.remove(&(number, p.index));
        self.packets.release(packet);
        if last {
            if S::ENABLED {
                ctx.sink.left(number);
            }
            share.split.let_go(p.message, number);
        }
    }
}
