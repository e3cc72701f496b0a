//! Routing and arbitration: a head routed at the front of its input asks for an output,
//! the output chooses among the inputs that want it (round-robin or oldest first), and
//! head-of-line blocking is marked as it happens.

use crate::ids::Device;
use crate::switch::{Arbitration, rotated};
use crate::topology::Endpoint;
use crate::trace::TraceSink;

use super::events::WormEvent;
use super::{Ctx, Worm, WormholeFabric, port_ref};

impl WormholeFabric {
    /// The head at the front of `input` has been routed: it asks for its output.
    pub(super) fn routed<S: TraceSink>(&mut self, input: u32, ctx: &mut Ctx<'_, S>) {
        let coarse = self.coarse_now::<S>();
        let inp = &mut self.ins[input as usize];
        let front_since = inp.front_since;
        let Some(front) = inp.entries.front_mut() else { return };
        let Device::Switch(switch) = inp.owner.device else {
            return;
        };
        if front.route.is_some() {
            return;
        }
        if coarse {
            // A plan that changed since this event was scheduled routes at another time.
            let head = front.arrivals.first().filter(|r| r.first == 0).map(|r| r.start);
            if head.is_none_or(|a| a.max(front_since) + self.routing_latency != ctx.now) {
                return;
            }
        }
        let p = &self.packets[front.packet as usize];
        let port = self.routes.port(p.route, switch, usize::from(front.hop), p.dst);
        let out = self.wiring.port(Endpoint {
            device: inp.owner.device,
            port,
        }) as u32;
        front.route = Some(out);
        self.outs[out as usize].requests.push((input, ctx.now));
        if self.arbitrate_soon(out, ctx) {
            return;
        }
        // Not granted now: a STOP may be due, unless the arbitration of this instant or
        // the output's release decides first.
        self.undefer(input, ctx);
        if S::ENABLED {
            self.check_hol(input, ctx);
        }
    }

    /// Arbitrates an idle output after every request of this instant is in: at once
    /// (returning true) if nothing else happens at this instant before the arbitration
    /// would, so that no other request can join it; one event fewer per packet and hop.
    /// Not when tracing, which records head-of-line blocking in between.
    pub(super) fn arbitrate_soon<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) -> bool {
        let o = &self.outs[port as usize];
        let arbitrate = WormEvent::Arbitrate { port };
        let idle = o.worm.is_none() && !o.arbitrating && !o.requests.is_empty();
        if S::ENABLED || !idle || !ctx.queue.take_turn(arbitrate.rank()) {
            self.schedule_arbitration(port, ctx);
            return false;
        }
        // Counted as the event it spares, so that the count does not depend on which
        // events share the queue (a partition's hold only its own).
        ctx.queue.count_taken_turn();
        let rank = std::mem::replace(&mut ctx.rank, arbitrate.rank());
        self.arbitrate(port, ctx);
        ctx.rank = rank;
        true
    }

    /// Arbitrates an idle output after every request of this instant is in.
    pub(super) fn schedule_arbitration<S>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        let o = &mut self.outs[port as usize];
        if o.worm.is_none() && !o.arbitrating && !o.requests.is_empty() {
            o.arbitrating = true;
            ctx.schedule(ctx.now, WormEvent::Arbitrate { port });
        }
    }

    /// An idle output grants one of the inputs that want it; the others wait, and a
    /// STOP kept out of the queue for them may be due.
    pub(super) fn arbitrate<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        self.grant(port, ctx);
        self.undefer_requests(port, ctx);
    }

    /// Grants `port`, if it is idle, to one of the inputs that want it.
    pub(super) fn grant<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        let ports = match self.outs[port as usize].owner.device {
            Device::Switch(s) => self.wiring.switch_ports(s),
            Device::Host(_) => 1,
        };
        let out = &self.outs[port as usize];
        if out.worm.is_some() || out.requests.is_empty() {
            return;
        }
        let base = self.wiring.port_base[self.wiring.device_index(out.owner.device)];
        let in_port = |input: u32| input - base;
        // Bubble flow control: only the requests the far buffer has room for compete.
        let candidates = (0..out.requests.len()).filter(|&i| self.admits(port, Some(out.requests[i].0)));
        let chosen = match self.params.arbitration {
            Arbitration::RoundRobin { .. } => {
                let pointer = out.pointer;
                candidates.min_by_key(|&i| rotated(in_port(out.requests[i].0), pointer, ports))
            }
            Arbitration::OldestFirst => candidates.min_by_key(|&i| (out.requests[i].1, in_port(out.requests[i].0))),
        };
        let Some(chosen) = chosen else {
            // `free_slot` arbitrates again when room appears.
            self.waits_for_room(port, true, ctx);
            return;
        };
        self.waits_for_room(port, false, ctx);
        let out = &mut self.outs[port as usize];
        let (input, _) = out.requests.swap_remove(chosen);
        out.pointer = (in_port(input) + 1) % ports;
        let Some(front) = self.ins[input as usize].entries.front() else {
            return;
        };
        out.worm = Some(Worm {
            packet: front.packet,
            input: Some(input),
            next: 0,
        });
        out.last_send = None;
        self.reserve(port);
        self.start(port, ctx);
        if S::ENABLED {
            self.check_hol_at(port, ctx);
        }
    }

    /// Traced, bubble flow control: whether a packet waits for output `port`, free, for
    /// a slot in the buffer beyond its cable (told to the sink when it changes).
    pub(super) fn waits_for_room<S: TraceSink>(&mut self, port: u32, waits: bool, ctx: &mut Ctx<'_, S>) {
        if !S::ENABLED {
            return;
        }
        let out = &mut self.outs[port as usize];
        if out.waits_for_room != waits {
            out.waits_for_room = waits;
            ctx.sink.room_wait(ctx.now, port_ref(out.owner), waits);
        }
    }

    /// Sends on `port` now if it is not already scheduled to.
    pub(super) fn wake<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        if !self.outs[port as usize].ticking {
            self.tick(port, ctx);
        }
    }

    /// Re-evaluates head-of-line blocking at every input of the switch owning `port`.
    pub(super) fn check_hol_at<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        if !S::ENABLED {
            return;
        }
        let device = self.outs[port as usize].owner.device;
        let Device::Switch(s) = device else { return };
        let base = self.wiring.port_base[self.wiring.device_index(device)];
        for input in base..base + self.wiring.switch_ports(s) {
            self.check_hol(input, ctx);
        }
    }

    /// Head-of-line blocking at `input`: its front packet waits for an output held by
    /// another worm, while the next packet in the buffer wants an output that is free.
    pub(super) fn check_hol<S: TraceSink>(&mut self, input: u32, ctx: &mut Ctx<'_, S>) {
        if !S::ENABLED {
            return;
        }
        let inp = &self.ins[input as usize];
        let Device::Switch(switch) = inp.owner.device else {
            return;
        };
        let blocked = (|| {
            let front = inp.entries.front()?;
            let wanted = front.route?;
            let holder = self.outs[wanted as usize].worm?;
            if holder.input == Some(input) {
                return None;
            }
            let next = inp.entries.get(1)?;
            let p = &self.packets[next.packet as usize];
            let other = self.wiring.port(Endpoint {
                device: inp.owner.device,
                port: self.routes.port(p.route, switch, usize::from(next.hop), p.dst),
            }) as u32;
            (other != wanted && self.outs[other as usize].worm.is_none()).then_some(())
        })()
        .is_some();
        let inp = &mut self.ins[input as usize];
        if blocked != inp.hol {
            inp.hol = blocked;
            ctx.sink.hol_blocking(ctx.now, port_ref(inp.owner), blocked);
        }
    }
}
