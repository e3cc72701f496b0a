//! Deliveries: a packet's last flit at its destination adapter, and which deliveries
//! nothing can change any more (for batched replies).

use std::collections::BTreeMap;

use crate::ids::{Device, MessageId};
use crate::message::Message;
use crate::slab::Slab;
use crate::time::SimTime;
use crate::trace::TraceSink;

use super::events::WormEvent;
use super::{Ctx, WormholeFabric};

impl WormholeFabric {
    /// A packet's tail reached its destination adapter: returns its message if that
    /// was the message's last packet.
    pub(super) fn delivered<S>(&mut self, packet: u32, ctx: &mut Ctx<'_, S>) -> Option<MessageId> {
        let (message, index) = (
            self.packets[packet as usize].message,
            self.packets[packet as usize].index,
        );
        self.packets.release(packet);
        let m = &mut ctx.messages[message.index()];
        if let Some(share) = &mut self.share {
            share.by_packet.remove(&(m.number, index));
        }
        m.packets_delivered += 1;
        (m.packets_delivered == m.packets_total).then_some(message)
    }

    /// Appends to `out` the deliveries that the pending `events` already fix, whatever
    /// is injected from now on: (the place of the event that makes it, its time, the
    /// message). A message counts once each of its packets not yet delivered is known
    /// to arrive at a fixed time, the last of them making the delivery.
    ///
    /// A packet's arrival at its destination adapter is fixed once its tail can no
    /// longer be held anywhere:
    /// - fine path: every flit not yet received is on the last cable (its `FlitArrives`
    ///   pending); a flit on a cable arrives when it was planned to;
    /// - coarse path: the planned `TailArrives` is current and its plan stands
    ///   ([`Self::tail_settled`]): walking up its path from the output feeding the
    ///   adapter, each output it holds has no STOP or GO under way or due, up to where
    ///   its tail has left an output, or all its flits have reached the buffer an output
    ///   sends from (or sit in an adapter's memory). An output to an adapter is never
    ///   stopped (adapters take flits as they come), and every output holds its worm to
    ///   the tail.
    ///
    /// Whatever a new message does, it meets this packet only at the adapters (packets
    /// are interleaved whole) or behind its tail on the switches' buffers: it cannot
    /// move a flit on a cable, nor one in a buffer whose output the packet holds, as
    /// long as no flow-control signal can hold that output.
    pub(super) fn fixed_deliveries<'a, S: TraceSink>(
        &self,
        events: impl Iterator<Item = (SimTime, u128, &'a WormEvent)>,
        messages: &Slab<Message>,
        now: SimTime,
        out: &mut Vec<(u128, SimTime, MessageId)>,
    ) {
        // Fine path: flits on the last cable, by packet (count, the last one's place
        // and time).
        let mut on_cable: BTreeMap<u32, (u32, u128, SimTime)> = BTreeMap::new();
        // Packets whose arrival is fixed, by message (count, the last one's place and time).
        let mut fixed: BTreeMap<u32, (u32, u128, SimTime)> = BTreeMap::new();
        // One more in `key`'s count, which ends with the latest place.
        fn count(counts: &mut BTreeMap<u32, (u32, u128, SimTime)>, key: u32, place: u128, at: SimTime) {
            let e = counts.entry(key).or_insert((0, place, at));
            e.0 += 1;
            if place >= e.1 {
                (e.1, e.2) = (place, at);
            }
        }
        let coarse = self.coarse_now::<S>();
        for (at, place, event) in events {
            match *event {
                WormEvent::FlitArrives { input, packet, .. }
                    if !coarse && matches!(self.ins[input as usize].owner.device, Device::Host(_)) =>
                {
                    count(&mut on_cable, packet, place, at);
                }
                WormEvent::TailArrives { packet, version }
                    if coarse && self.packets[packet as usize].version == version && self.tail_settled(packet, now) =>
                {
                    count(&mut fixed, self.packets[packet as usize].message.0, place, at);
                }
                _ => {}
            }
        }
        for (packet, (flits, place, at)) in on_cable {
            let p = &self.packets[packet as usize];
            if p.delivered + flits == p.flits {
                count(&mut fixed, p.message.0, place, at);
            }
        }
        for (message, (packets, place, at)) in fixed {
            let m = &messages[message as usize];
            if m.packets_delivered + packets == m.packets_total {
                out.push((place, at, MessageId(message)));
            }
        }
    }

    /// Coarse path: whether the plan of `packet`'s arrival at its destination adapter is
    /// final (see [`Self::fixed_deliveries`]). Walking up its path from the output
    /// feeding the adapter: the packet's tail has left this output (its flits are on
    /// the cable or downstream), or it is in the adapter's memory, or every flit has
    /// arrived by `now` in the buffer this output sends from; otherwise that buffer's
    /// arrivals are planned to the tail and the output feeding it is held by the
    /// packet, with no STOP or GO on its way or due from the buffer, and the same
    /// holds one hop up. Outputs towards adapters are never stopped. Every buffer a
    /// packet has reached holds nothing ahead of it once its output is granted, and
    /// nothing behind it comes in before its tail: only its own flits, whose plans
    /// then stand.
    pub(super) fn tail_settled(&self, packet: u32, now: SimTime) -> bool {
        let p = &self.packets[packet as usize];
        let Some(mut port) = self.ins[self.host_port(p.dst) as usize].upstream else {
            return false;
        };
        loop {
            let out = &self.outs[port as usize];
            let Some(worm) = out.worm.filter(|w| w.packet == packet) else {
                // A planned arrival downstream is this output's worm's: this packet's
                // tail has left it.
                return true;
            };
            if !out.peer_host {
                let quiet = out.peer_input.is_some_and(|i| {
                    let far = &self.ins[i as usize];
                    far.pending.is_none() && far.stop_deferred.is_none()
                });
                if out.stopped || !out.signals.is_empty() || !quiet {
                    return false;
                }
            }
            let Some(input) = worm.input else {
                // The adapter's memory holds every flit.
                return true;
            };
            let inp = &self.ins[input as usize];
            let Some(last) = inp
                .entries
                .front()
                .filter(|e| e.packet == packet)
                .and_then(|e| e.arrivals.last())
            else {
                return false;
            };
            if last.end != p.flits {
                return false;
            }
            if last.last(self.tau) <= now {
                return true;
            }
            let Some(upstream) = inp.upstream else {
                return false;
            };
            port = upstream;
        }
    }
}
