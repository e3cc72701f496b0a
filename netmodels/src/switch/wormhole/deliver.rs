//! Deliveries: a packet's last flit at its destination adapter, and which deliveries
//! nothing can change any more (for batched replies).

use crate::ids::{Device, MessageId};
use crate::part::{Arrival, Fixed, count_latest};
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

    /// Appends to `out` the arrivals at destination adapters among the pending `events`
    /// that may make final deliveries, each with whether it is fixed whatever is
    /// injected from now on (see [`crate::part::final_of`]).
    ///
    /// A packet's arrival at its destination adapter is fixed once its tail can no
    /// longer be held anywhere:
    /// - fine path: every flit not yet received is on the last cable (its `FlitArrives`
    ///   pending); a flit on a cable arrives when it was planned to;
    /// - coarse path: the planned `TailArrives` is current and its plan stands
    ///   ([`Self::walk_up`]): walking up its path from the output feeding the adapter,
    ///   each output it holds has no STOP or GO under way or due, and no new plan on its
    ///   way down its cable, up to where its tail has left an output, or all its flits
    ///   have reached the buffer an output sends from (or sit in an adapter's memory).
    ///   An output to an adapter is never stopped (adapters take flits as they come),
    ///   and every output holds its worm to the tail. In a split network the walk goes
    ///   on in the partition of the output it reaches ([`Fixed::Elsewhere`]).
    ///
    /// Whatever a new message does, it meets this packet only at the adapters (packets
    /// are interleaved whole) or behind its tail on the switches' buffers: it cannot
    /// move a flit on a cable, nor one in a buffer whose output the packet holds, as
    /// long as no flow-control signal can hold that output.
    pub(super) fn fixed_deliveries<'a, S: TraceSink>(
        &self,
        events: impl Iterator<Item = (SimTime, u128, &'a WormEvent)>,
        now: SimTime,
        out: &mut Vec<Arrival>,
    ) {
        let coarse = self.coarse_now::<S>();
        if coarse {
            for (at, place, event) in events {
                if let WormEvent::TailArrives { packet, version } = *event
                    && self.packets[packet as usize].version == version
                {
                    let p = &self.packets[packet as usize];
                    let fixed = match self.ins[self.host_port(p.dst) as usize].upstream {
                        Some(port) => self.walk_up(packet, port, now),
                        None => Fixed::No,
                    };
                    out.push(Arrival {
                        place,
                        at,
                        message: p.message,
                        fixed,
                    });
                }
            }
            return;
        }
        // Fine path: flits on the last cable, by packet (count, the last one's place
        // and time).
        let on_cable = count_latest(events.filter_map(|(at, place, event)| match *event {
            WormEvent::FlitArrives { input, packet, .. }
                if matches!(self.ins[input as usize].owner.device, Device::Host(_)) =>
            {
                Some((packet, place, at))
            }
            _ => None,
        }));
        for (packet, (flits, place, at)) in on_cable {
            let p = &self.packets[packet as usize];
            out.push(Arrival {
                place,
                at,
                message: p.message,
                fixed: if p.delivered + flits == p.flits {
                    Fixed::Yes
                } else {
                    Fixed::No
                },
            });
        }
    }

    /// Coarse path, split: goes on with a walk another partition began, at `port`, for
    /// packet `index` of message `number` (see [`Self::walk_up`]). A packet this
    /// partition no longer holds has left it for good: its tail has left `port`.
    pub(super) fn walk_on_here(&self, number: u64, index: u32, port: u32, now: SimTime) -> Fixed {
        match self.share.as_ref().and_then(|s| s.by_packet.get(&(number, index))) {
            Some(&packet) => match self.walk_up(packet, port, now) {
                Fixed::Elsewhere { part, port, index, .. } => Fixed::Elsewhere {
                    part,
                    port,
                    number,
                    index,
                },
                fixed => fixed,
            },
            None => Fixed::Yes,
        }
    }

    /// Coarse path: whether the plan of `packet`'s arrival at its destination adapter is
    /// final (see [`Self::fixed_deliveries`]), walking up its path from output `port`:
    /// the packet's tail has left this output (its flits are on the cable or
    /// downstream), or it is in the adapter's memory, or every flit has arrived by
    /// `now` in the buffer this output sends from; otherwise that buffer's arrivals are
    /// planned to the tail, the output feeding it is held by the packet with no STOP or
    /// GO on its way or due from the buffer and no new plan on its way down, and the
    /// same holds one hop up. Outputs towards adapters are never stopped. Every buffer a
    /// packet has reached holds nothing ahead of it once its output is granted, and
    /// nothing behind it comes in before its tail: only its own flits, whose plans then
    /// stand. Each step reads the state of one switch (an output, and the input it
    /// sends from): a step in another partition is left to it.
    pub(super) fn walk_up(&self, packet: u32, mut port: u32, now: SimTime) -> Fixed {
        let p = &self.packets[packet as usize];
        loop {
            let out = &self.outs[port as usize];
            let Some(worm) = out.worm.filter(|w| w.packet == packet) else {
                // A planned arrival downstream is this output's worm's: this packet's
                // tail has left it.
                return Fixed::Yes;
            };
            let between_switches = matches!(out.owner.device, Device::Switch(_)) && !out.peer_host;
            if out.stopped || !out.signals.is_empty() || (between_switches && out.plan_arrives >= now) {
                return Fixed::No;
            }
            let Some(input) = worm.input else {
                // The adapter's memory holds every flit.
                return Fixed::Yes;
            };
            let inp = &self.ins[input as usize];
            let Some(last) = inp
                .entries
                .front()
                .filter(|e| e.packet == packet)
                .and_then(|e| e.arrivals.last())
            else {
                return Fixed::No;
            };
            if last.end != p.flits {
                return Fixed::No;
            }
            if last.last(self.tau) <= now {
                return Fixed::Yes;
            }
            let Some(upstream) = inp.upstream else {
                return Fixed::No;
            };
            // The output upstream is held by no signal from this buffer, sent or due.
            let from_switch = matches!(self.outs[upstream as usize].owner.device, Device::Switch(_));
            if inp.pending.is_some() || inp.stop_deferred.is_some() || (from_switch && inp.signal_arrives >= now) {
                return Fixed::No;
            }
            if let Some(part) = self.elsewhere(upstream) {
                // (Its message's number is the caller's to fill in.)
                return Fixed::Elsewhere {
                    part,
                    port: upstream,
                    number: 0,
                    index: p.index,
                };
            }
            port = upstream;
        }
    }
}
