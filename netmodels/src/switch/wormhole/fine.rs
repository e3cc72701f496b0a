//! The fine path: one event per flit per hop. An output sends a flit at a time, and a
//! flit's arrival fills its input buffer, STOPs or GOes the sender, and frees its
//! packet's head to be routed. The coarse path ([`super::coarse`]) must give the same
//! times.

use crate::ids::{Device, MessageId};
use crate::trace::{BufferSide, FlowSignal, LinkTraversal, TraceSink};

use super::events::{Signal, WormEvent};
use super::runs::Runs;
use super::{Ctx, Entry, WormholeFabric, port_ref};

impl WormholeFabric {
    /// Sends the next flit on `port` if it can, now.
    pub(super) fn tick<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        let now = ctx.now;
        let out = &self.outs[port as usize];
        let Some(worm) = out.worm else { return };
        if out.stopped || out.ticking {
            return;
        }
        let p = self.packets[worm.packet as usize];
        if worm.next >= p.flits {
            // The tail is on the wire; the output is released when it has left.
            return;
        }
        let available = match worm.input {
            None => p.flits,
            Some(input) => self.ins[input as usize].entries.front().map_or(0, |e| e.arrived),
        };
        if worm.next >= available {
            // Woken by the flit's arrival.
            return;
        }
        let flit = worm.next;
        let Some(peer_input) = out.peer_input else { return };
        let (flit_time, propagation, owner) = (out.flit_time, out.link.propagation, out.owner);
        if let Some(input) = worm.input {
            self.depart(input, ctx);
        }
        let out = &mut self.outs[port as usize];
        let tail = flit + 1 == p.flits;
        if let Some(w) = out.worm.as_mut() {
            w.next += 1;
        }
        if tail {
            // The output stays the worm's until the tail has left.
            ctx.schedule(now + flit_time, WormEvent::Released { port });
        } else {
            out.ticking = true;
            ctx.schedule(now + flit_time, WormEvent::Tick { port });
        }
        let arrives = now + flit_time + propagation;
        let hop = self.next_hop(worm.input);
        match self.elsewhere(peer_input) {
            None => ctx.schedule(
                arrives,
                WormEvent::FlitArrives {
                    input: peer_input,
                    packet: worm.packet,
                    hop,
                },
            ),
            Some(to) => self.cross_flit((port, peer_input, hop, to), worm.packet, (flit, arrives), ctx),
        }
        if S::ENABLED {
            let m = &ctx.messages[p.message.index()];
            let key = (p.message, port);
            let first_in = match worm.input {
                None => m.injected_at,
                Some(input) => self.ins[input as usize].entries.front().map_or(now, |e| e.head_arrived),
            };
            let peer = self.wiring.owner[peer_input as usize];
            let t = self.traversals.entry(key).or_insert_with(|| {
                let t = LinkTraversal {
                    cookie: m.spec.cookie,
                    message: m.number,
                    size_bytes: m.spec.size_bytes,
                    sender: port_ref(owner),
                    receiver: port_ref(peer),
                    first_in,
                    first_out: now,
                    last_out: now + flit_time,
                    first_arrival: arrives,
                    last_arrival: arrives,
                };
                ctx.sink.link_traversal_started(&t);
                t
            });
            t.last_out = now + flit_time;
            t.last_arrival = arrives;
            if tail && worm.input.is_none() {
                ctx.sink
                    .segment(now + flit_time, port_ref(owner), m.number, p.index, false);
            }
            if tail && p.last {
                // The last flit of the message on this link: the traversal is complete.
                ctx.sink.link_traversal(t);
                self.traversals.remove(&key);
            }
        }
        if tail && let Some(input) = worm.input {
            self.front_done(input, ctx);
        }
    }

    /// A flit leaves input buffer `input` (its front packet's next flit).
    pub(super) fn depart<S: TraceSink>(&mut self, input: u32, ctx: &mut Ctx<'_, S>) {
        let now = ctx.now;
        let flit_bytes = self.params.flit_bytes;
        let inp = &mut self.ins[input as usize];
        debug_assert!(
            inp.occupancy > 0,
            "departure from an empty buffer at {:?} at {now}: {:?}",
            inp.owner,
            inp.entries
        );
        inp.occupancy -= 1;
        if let Some(e) = inp.entries.front_mut() {
            e.departed += 1;
        }
        if S::ENABLED {
            ctx.sink.backlog(
                now,
                port_ref(inp.owner),
                BufferSide::Input,
                u64::from(inp.occupancy * flit_bytes),
            );
        }
        if let (true, Some(t), Some(upstream)) = (inp.stop_sent, inp.thresholds, inp.upstream)
            && inp.occupancy <= t.low
        {
            inp.stop_sent = false;
            #[cfg(test)]
            self.signals.push((now, input, false));
            if S::ENABLED {
                ctx.sink.flow_control(now, port_ref(inp.owner), FlowSignal::Go, true);
            }
            let at = now + inp.propagation;
            self.signal(upstream, at, Signal::Go, ctx);
        }
    }

    /// The front packet of `input` has sent its tail: the next packet comes forward.
    pub(super) fn front_done<S: TraceSink>(&mut self, input: u32, ctx: &mut Ctx<'_, S>) {
        let inp = &mut self.ins[input as usize];
        inp.entries.pop_front();
        if !inp.entries.is_empty() {
            // Its head is in the buffer: routing starts now that it is at the front.
            let at = ctx.now + self.routing_latency;
            ctx.schedule(at, WormEvent::Routed { input });
        }
        self.check_hol(input, ctx);
    }

    pub(super) fn flit_arrives<S: TraceSink>(
        &mut self,
        input: u32,
        packet: u32,
        hop: u16,
        ctx: &mut Ctx<'_, S>,
    ) -> Option<MessageId> {
        let now = ctx.now;
        let inp = &mut self.ins[input as usize];
        if let Device::Host(_) = inp.owner.device {
            // The destination adapter takes every flit as it comes.
            let p = &mut self.packets[packet as usize];
            p.delivered += 1;
            if p.delivered < p.flits {
                return None;
            }
            return self.delivered(packet, ctx);
        }
        let new_packet = inp
            .entries
            .back()
            .is_none_or(|e| e.packet != packet || e.arrived == self.packets[packet as usize].flits);
        if new_packet {
            inp.entries.push_back(Entry {
                packet,
                head_arrived: now,
                arrived: 1,
                departed: 0,
                route: None,
                hop,
                arrivals: Runs::default(),
            });
            if inp.entries.len() == 1 {
                let at = now + self.routing_latency;
                ctx.schedule(at, WormEvent::Routed { input });
            }
        } else if let Some(e) = inp.entries.back_mut() {
            e.arrived += 1;
        }
        inp.occupancy += 1;
        if S::ENABLED {
            let bytes = u64::from(inp.occupancy * self.params.flit_bytes);
            ctx.sink.backlog(now, port_ref(inp.owner), BufferSide::Input, bytes);
        }
        debug_assert!(
            inp.thresholds.is_none_or(|t| inp.occupancy <= t.capacity),
            "input buffer overflow at {:?}",
            inp.owner
        );
        debug_assert!(
            inp.slots == 0 || inp.thresholds.is_none_or(|t| inp.occupancy < t.high),
            "bubble flow control let {:?} reach its STOP threshold",
            inp.owner
        );
        if let (false, Some(t), Some(upstream)) = (inp.stop_sent, inp.thresholds, inp.upstream)
            && inp.occupancy >= t.high
        {
            inp.stop_sent = true;
            #[cfg(test)]
            self.signals.push((now, input, true));
            if S::ENABLED {
                ctx.sink.flow_control(now, port_ref(inp.owner), FlowSignal::Stop, true);
            }
            let at = now + inp.propagation;
            self.signal(upstream, at, Signal::Stop, ctx);
        }
        // The output sending the front packet may have been waiting for this flit.
        if let Some(out) = self.ins[input as usize].entries.front().and_then(|e| e.route) {
            let granted = self.outs[out as usize].worm.is_some_and(|w| w.input == Some(input));
            if granted {
                self.wake(out, ctx);
            }
        }
        if S::ENABLED {
            self.check_hol(input, ctx);
        }
        None
    }
}
