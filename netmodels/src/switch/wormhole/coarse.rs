//! The coarse path: the same semantics as the fine path, without an event per flit.
//!
//! ```text
//!   output plan: flits k..end leave at c, c+τ, …  (c = max(now, last send + τ, arrival of k))
//!        │ cascades: the next input's arrival runs, the next output's plan, …
//!        ▼
//!   input: arrival runs − departure run ⇒ when STOP or GO is due (closed form, `runs`)
//! ```
//!
//! Each output holds a plan: the run of flits it will send back to back, as far as
//! their arrival at its input is already planned upstream. The plan is recomputed
//! (`replan`) when something it depends on changes: a grant, a STOP or GO sent to it,
//! the upstream plan changing, the run running out. A recomputation keeps every flit
//! sent before now and redoes the rest with the fine path's formula, so flits already
//! planned keep their times unless what they waited for moved; a plan that did not
//! change schedules nothing. Changes flow downstream along the worm (the next input's
//! arrival runs, then the output that input's front packet holds, …), never into the
//! past: a flit re-planned at `t ≥ now` arrives after `t + τ + p > now`.
//!
//! A STOP or GO is planned for when it is sent, not when it arrives: the cable's delay
//! makes its arrival certain, so the output upstream keeps the signals on their way
//! (`OutPort::signals`) and plans its runs around them at once; no event marks an
//! arrival. A STOP or GO that nothing before it can move (see `stop_certain` and
//! `go_certain`) is sent as soon as it is found, as of its time: no event marks its
//! sending either.
//!
//! Events left per packet and hop: head routed, tail leaves and output released (one
//! event at adapters, and at switches when the routing latency is at least a flit
//! time), plus STOP/GO thresholds and stalls when flow control or contention acts. The
//! arbitration is an event of its own only when other events share its instant
//! (otherwise the routing does it at once), and a STOP that would be due after the head
//! is routed (or after the tail of the packet in front leaves) is only scheduled once
//! that event has not made it stale.
//! Requires every link to have the same flit time, and routing that takes time (cables
//! may take none); traces use the fine path.
//!
//! # Crossing rules: what a switch knows of its neighbours' plans, and when
//!
//! A cascade stops at every cable between two switches: what one switch decides, the
//! switch at the other end learns one cable delay `p` later, whether the cable is cut
//! between two partitions (a crossing packet) or not (an event, `PlanArrives` or a
//! signal's arrival). The network whole runs by the same rules as its partitions, so
//! a split changes nothing.
//! - **Down a cable: plans.** An output's new plan at `t` (the flits it keeps sent, and
//!   when the rest arrive) reaches the input at the far end at `t + p`
//!   (`send_plan`). It moves no flit that arrives before `t + τ + p`, so the input
//!   knows every arrival before `now + τ` exactly, and learns of a change before the
//!   first flit it moves; what it plans further ahead (its own outputs' runs, its STOP
//!   and GO) stands until a later plan comes, in time, and replans it.
//! - **Up a cable: signals.** A STOP or GO that an input sends at `at` (now, or later
//!   when certain) reaches the output upstream at `at + p`, as an event, which replans
//!   it from then on; that new plan comes down by the rule above, before the first flit
//!   it holds back arrives. An input is certain its output upstream is held once its
//!   STOP has arrived there and the plan that STOP cut has come back down: after
//!   `at + 2p` (`go_certain`).
//! - **Cables to and from adapters** keep the cascade: a host's cable is never cut (a
//!   host goes with its switch), so the adapter plans around the signals of its
//!   switch as they are sent, and the switch around the adapter's plan as it is made.
//! - **Final deliveries** walk up a packet's path, one switch at a time; no plan on
//!   its way down a cable, nor a signal on its way up, may be pending where it passes
//!   (`walk_up`). A walk that reaches a cut cable goes on in the partition beyond.
//!
//! A cable of no delay between switches makes a plan arrive at its own instant (an
//! event of rank 1, after the event that made it): the network whole runs so, but it
//! cannot be cut there, and `Partitioned::build` says so.

use crate::ids::Device;
use crate::slab::Slab;
use crate::switch::wormhole::events::Signal;
use crate::switch::wormhole::runs::{Run, Runs, first_go, first_stop};
use crate::switch::wormhole::{Awaits, Ctx, Entry, InPort, Packet, PlanChange, Worm, WormEvent, WormholeFabric};
use crate::time::SimTime;
use crate::trace::TraceSink;

impl WormholeFabric {
    /// Recomputes `port`'s plan from now, and every plan downstream that depends on it:
    /// a chain along the worm, as each plan feeds one input, whose front packet holds at
    /// most one output.
    pub(super) fn replan<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        self.replan_and_check(port, None, ctx);
    }

    /// [`Self::replan`], and the thresholds of `input` checked with those of the inputs
    /// the plans touch (once, if they touch it too).
    fn replan_and_check<S: TraceSink>(&mut self, port: u32, input: Option<u32>, ctx: &mut Ctx<'_, S>) {
        // A work list kept between calls: no allocation per event.
        let mut inputs = self.scratch_inputs.pop().unwrap_or_default();
        inputs.extend(input);
        self.follow(Some(port), inputs, ctx);
    }

    /// A plan change sent down a cable between two switches (`slot` in `plans`)
    /// reaches `input`: its arrivals follow it, and the plans downstream of it.
    pub(super) fn plan_arrives<S: TraceSink>(&mut self, input: u32, slot: u32, ctx: &mut Ctx<'_, S>) {
        let change = self.plans[slot as usize];
        self.plans.release(slot);
        let mut inputs = self.scratch_inputs.pop().unwrap_or_default();
        let next = self.set_arrivals(
            input,
            change.packet,
            change.hop,
            change.committed,
            change.run,
            ctx,
            &mut inputs,
        );
        self.follow(next, inputs, ctx);
    }

    /// Recomputes the plans of the chain from output `next` on, then the thresholds of
    /// `inputs` and of the inputs the plans touch.
    fn follow<S: TraceSink>(&mut self, mut next: Option<u32>, mut inputs: Vec<u32>, ctx: &mut Ctx<'_, S>) {
        while let Some(out) = next {
            next = self.replan_one(out, ctx, &mut inputs);
        }
        if inputs.len() > 1 {
            inputs.sort_unstable();
            inputs.dedup();
        }
        for &input in &inputs {
            self.schedule_thresholds(input, ctx);
        }
        inputs.clear();
        self.scratch_inputs.push(inputs);
    }

    /// Recomputes `port`'s plan; returns the output downstream to recompute next.
    fn replan_one<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>, inputs: &mut Vec<u32>) -> Option<u32> {
        let now = ctx.now;
        let tau = self.tau;
        let out = &mut self.outs[port as usize];
        // Signals that have arrived by now hold (or free) every send from now on.
        while let Some(&(at, stop)) = out.signals.first()
            && at <= now
        {
            out.stopped = stop;
            out.signals.remove(0);
        }
        let Some(mut worm) = out.worm else {
            out.run = None;
            return None;
        };
        let flits = self.packets[worm.packet as usize].flits;
        if worm.next >= flits {
            // The tail is on the wire (its packet already left the input): nothing to plan.
            out.run = None;
            return None;
        }
        // Keep what has left already.
        let old = out.run;
        if old.is_some_and(|run| run.end == flits && run.last(tau) < now) {
            // The tail is on the wire: the plan is complete, and its end event stands.
            return None;
        }
        if let Some(run) = old {
            let sent = run.count_by(now, tau, true);
            if sent > 0 {
                worm.next = run.first + sent;
                out.last_send = Some(run.at(run.first + sent - 1, tau));
            }
        }
        out.worm = Some(worm);
        if let Some(input) = worm.input {
            if let Some(front) = self.ins[input as usize].entries.front_mut() {
                front.departed = worm.next;
            }
            inputs.push(input);
        }
        // Plan the next run: c = max(now, last send + τ, arrival of the next flit), and
        // no send once a STOP has arrived.
        let (new, cut) = if worm.next >= flits {
            (None, false)
        } else {
            let out = &self.outs[port as usize];
            let earliest = out.last_send.map_or(now, |t| now.max(t + tau));
            self.plan_run(port, worm, flits, earliest)
                .map_or((None, false), |(run, cut)| (Some(run), cut))
        };
        let unchanged = match (old, new) {
            (None, None) => true,
            (Some(o), Some(n)) => o.end == n.end && n.first >= o.first && o.at(n.first, tau) == n.start,
            _ => false,
        };
        if unchanged {
            let out = &mut self.outs[port as usize];
            out.run = new;
            if let Some(run) = new {
                let due = match out.awaits {
                    Awaits::Nothing => false,
                    // Arrivals planned since, after a gap: the run's end is now an event.
                    Awaits::Arrivals => self.arrivals_planned_from(worm.input, run.end),
                    // A GO sent since: the run's end is now an event, planning after it.
                    Awaits::Go => self.resumes_after(port, run),
                };
                if due {
                    let out = &mut self.outs[port as usize];
                    out.awaits = Awaits::Nothing;
                    let version = out.version;
                    ctx.schedule(run.last(tau) + tau, WormEvent::RunEnd { port, version });
                }
            }
            return None;
        }
        let out = &mut self.outs[port as usize];
        out.run = new;
        out.version += 1;
        out.tail_deferred = None;
        out.awaits = Awaits::Nothing;
        let version = out.version;
        if let Some(run) = new {
            let last = run.last(tau);
            let idle_adapter = match out.owner.device {
                Device::Host(host) => self.senders[host.index()].len() == 0,
                Device::Switch(_) => false,
            };
            if run.end == flits && self.tail_done_fits(worm) {
                let event = WormEvent::TailDone { port, version };
                let sequence = ctx.queue.reserve();
                if idle_adapter {
                    // Nothing to send after this packet: the event would only mark the
                    // adapter idle. `undefer_tail` schedules it if a message comes.
                    self.outs[port as usize].tail_deferred = Some(sequence);
                } else {
                    ctx.schedule_reserved(last + tau, event, sequence);
                }
            } else if run.end == flits {
                ctx.schedule(last, WormEvent::TailLeaves { port, version });
            } else if cut {
                // A STOP ends the run: the GO after it, once sent, plans the rest.
                if self.resumes_after(port, run) {
                    ctx.schedule(last + tau, WormEvent::RunEnd { port, version });
                } else {
                    self.outs[port as usize].awaits = Awaits::Go;
                }
            } else if self.arrivals_planned_from(worm.input, run.end) {
                // Flits after the run arrive too late to follow it: plan them when it ends.
                ctx.schedule(last + tau, WormEvent::RunEnd { port, version });
            } else {
                // The run ends where the planned arrivals do: the next arrivals planned
                // upstream replan this output (`set_arrivals`), so an event at the run's
                // end would find nothing to do (it went stale for nearly every packet
                // that met a STOP). If they join the run only after a gap, the plan is
                // unchanged and that replan schedules the event then.
                self.outs[port as usize].awaits = Awaits::Arrivals;
            }
        }
        if !self.outs[port as usize].requests.is_empty() {
            // Its release moved: the inputs waiting for it check their STOPs.
            self.undefer_requests(port, ctx);
        }
        if let Some(peer) = self.outs[port as usize].peer_input {
            let propagation = self.outs[port as usize].link.propagation;
            let arrivals = new.map(|r| Run {
                start: r.start + tau + propagation,
                ..r
            });
            if self.outs[port as usize].peer_host {
                self.plan_delivery(worm.packet, arrivals, ctx);
                return None;
            }
            let hop = self.next_hop(worm.input);
            let change = PlanChange {
                packet: worm.packet,
                hop,
                committed: worm.next,
                run: arrivals,
            };
            if let Device::Switch(_) = self.outs[port as usize].owner.device {
                // Between two switches: the switch at the far end learns it a cable
                // delay later, as a signal (and across a cut cable too).
                self.send_plan(port, peer, change, ctx);
                return None;
            }
            return self.set_arrivals(peer, worm.packet, hop, worm.next, arrivals, ctx, inputs);
        }
        None
    }

    /// Sends `change`, a new plan of output `port`, down its cable to the switch's
    /// `input` at the far end, where it arrives one cable delay from now: before any
    /// flit it moves, which leaves `port` now at the earliest.
    fn send_plan<S: TraceSink>(&mut self, port: u32, input: u32, change: PlanChange, ctx: &mut Ctx<'_, S>) {
        let out = &mut self.outs[port as usize];
        let at = ctx.now + out.link.propagation;
        out.plan_arrives = at;
        match self.elsewhere(input) {
            None => {
                let slot = self.plans.insert(change);
                ctx.schedule(at, WormEvent::PlanArrives { input, slot });
            }
            Some(to) => self.cross_plan((port, input, to), at, change, ctx),
        }
    }

    /// The run `port` can send from its worm's next flit on, not before `earliest`: back
    /// to back while each flit has arrived by its turn, and only while no STOP holds the
    /// output (`true`: a STOP's arrival cuts the run before the flits would end it).
    #[inline(always)]
    fn plan_run(&self, port: u32, worm: Worm, flits: u32, earliest: SimTime) -> Option<(Run, bool)> {
        let out = &self.outs[port as usize];
        if out.signals.is_empty() {
            // No signal on its way (nearly always): the output's state now holds.
            if out.stopped {
                return None;
            }
            return self.plan_from(worm, flits, earliest).map(|run| (run, false));
        }
        let mut from = earliest;
        loop {
            let (start, stop) = sending_window(out.stopped, &out.signals, from)?;
            let run = self.plan_from(worm, flits, start)?;
            let Some(stop) = stop else {
                return Some((run, false));
            };
            if run.start >= stop {
                // Its first flit is due only once the STOP has arrived: after the GO.
                from = stop;
                continue;
            }
            let before = run.count_by(stop, self.tau, true);
            return Some(if before < run.len() {
                (
                    Run {
                        end: run.first + before,
                        ..run
                    },
                    true,
                )
            } else {
                (run, false)
            });
        }
    }

    /// The run `worm` can send from its next flit on, not before `earliest`: back to back
    /// while each flit has arrived by its turn.
    #[inline(always)]
    fn plan_from(&self, worm: Worm, flits: u32, earliest: SimTime) -> Option<Run> {
        match worm.input {
            None => Some(Run {
                first: worm.next,
                end: flits,
                start: earliest,
            }),
            Some(input) => {
                let front = self.ins[input as usize].entries.front()?;
                plan_from_arrivals(&front.arrivals, worm.next, earliest, self.tau)
            }
        }
    }

    /// Whether `port`, whose planned `run` a STOP cuts, may send again after it: a GO
    /// following that STOP has been sent.
    fn resumes_after(&self, port: u32, run: Run) -> bool {
        let out = &self.outs[port as usize];
        sending_window(out.stopped, &out.signals, run.last(self.tau) + self.tau).is_some()
    }

    /// `input` sends STOP (`stop`) or GO up its cable at `at` (now, or later when the
    /// signal is certain, see [`Self::stop_certain`] and [`Self::go_certain`]): the
    /// output at the other end plans for the signal's arrival now, with the plans
    /// downstream of it, and `input` checks its thresholds again, from `at` on.
    fn send_signal<S: TraceSink>(&mut self, input: u32, stop: bool, at: SimTime, ctx: &mut Ctx<'_, S>) {
        let inp = &mut self.ins[input as usize];
        inp.pending = None;
        inp.stop_sent = stop;
        // A GO may follow a STOP at its instant (once the occupancy is at most the
        // low-water mark, which a STOP's instant may reach with a long departure run); a
        // STOP follows a GO (the last rank of its instant) at a later instant.
        inp.signal_from = if stop { at } else { at + SimTime::from_ps(1) };
        #[cfg(test)]
        self.signals.push((at, input, stop));
        let inp = &self.ins[input as usize];
        let Some(upstream) = inp.upstream else {
            self.schedule_thresholds(input, ctx);
            return;
        };
        let arrival = at + inp.propagation;
        if let Device::Switch(_) = self.outs[upstream as usize].owner.device {
            // From a switch: it learns the signal as it arrives (its new plan comes
            // down a cable delay later, before the first flit it holds back).
            self.ins[input as usize].signal_arrives = arrival;
            let signal = if stop { Signal::Stop } else { Signal::Go };
            self.signal(upstream, arrival, signal, ctx);
            self.schedule_thresholds(input, ctx);
            return;
        }
        self.outs[upstream as usize].signals.push((arrival, stop));
        self.replan_and_check(upstream, Some(input), ctx);
    }

    /// Whether the GO that `input` is due to send at a later instant is certain now, so
    /// that it may be sent at once, as of that instant: no event between could move it.
    /// Its output upstream is held (every signal to it has arrived, the last a STOP), so
    /// no flit comes in until the GO; and the front packet, the only one leaving, holds
    /// an output to an adapter, which nothing stops: the arrivals and departures that
    /// set the GO's time are final. (On a crossbar, every GO.)
    fn go_certain(&self, input: u32, now: SimTime) -> bool {
        let inp = &self.ins[input as usize];
        let (Some(upstream), Some(front)) = (inp.upstream, inp.entries.front()) else {
            return false;
        };
        let upstream = &self.outs[upstream as usize];
        let held = match upstream.owner.device {
            // A switch: held once the STOP has arrived, and its new plan (cut by the
            // STOP) has come down the cable, one cable delay later.
            Device::Switch(_) => inp.stop_sent && inp.signal_arrives + inp.propagation < now,
            Device::Host(_) => upstream
                .signals
                .last()
                .map_or(upstream.stopped, |&(arrival, stop)| stop && arrival <= now),
        };
        held && front
            .route
            .is_some_and(|o| self.unstoppable(o) && self.outs[o as usize].worm.is_some_and(|w| w.input == Some(input)))
    }

    /// Whether `port` leads to an adapter and no STOP holds it or is on its way: nothing
    /// can cut or delay its plan but its own arrivals.
    fn unstoppable(&self, port: u32) -> bool {
        let out = &self.outs[port as usize];
        out.peer_host && !out.stopped && out.signals.is_empty()
    }

    /// The plan of `packet`'s flits arriving at its destination adapter changed: it is
    /// delivered when its tail arrives (`run`, if it reaches the tail).
    fn plan_delivery<S>(&mut self, packet: u32, run: Option<Run>, ctx: &mut Ctx<'_, S>) {
        let p = &mut self.packets[packet as usize];
        p.version += 1;
        if let Some(r) = run.filter(|r| r.end == p.flits) {
            let version = p.version;
            ctx.schedule(r.last(self.tau), WormEvent::TailArrives { packet, version });
        }
    }

    /// An entry left `input`: its flits no longer count in the buffer's `held`.
    fn recycle(&mut self, input: u32, gone: Option<Entry>) {
        let Some(entry) = gone else { return };
        let inp = &mut self.ins[input as usize];
        if inp.entries.is_empty() {
            inp.held = 0;
        } else if inp.held != u32::MAX {
            // An entry leaves with its tail sent, every arrival planned (the last run ends
            // at its flits), or with none planned. Its record is read only then: after its
            // tail, over a cable of no delay to its destination, the record may be freed
            // already, at the instant of the `TailDone` that removes the entry and ahead
            // of it, and an adapter's `TailDone` may have cut its next packet into it.
            let flits = match entry.arrivals.last() {
                Some(last) => last.end,
                None => self.packets[entry.packet as usize].flits,
            };
            self.ins[input as usize].held -= flits;
        }
    }

    /// Whether the arrival of flit `k` of the front packet of `input` is planned.
    fn arrivals_planned_from(&self, input: Option<u32>, k: u32) -> bool {
        input
            .and_then(|i| self.ins[i as usize].entries.front())
            .and_then(|e| e.arrivals.last())
            .is_some_and(|r| r.end > k)
    }

    /// The plan of `packet`'s flits arriving at `input` changed: flits before
    /// `committed` stay as they are; `run` (if any) follows them. Returns the output
    /// sending them on, whose plan follows theirs.
    #[allow(clippy::too_many_arguments, reason = "one step of the cascade, with its work list")]
    fn set_arrivals<S: TraceSink>(
        &mut self,
        input: u32,
        packet: u32,
        hop: u16,
        committed: u32,
        run: Option<Run>,
        ctx: &mut Ctx<'_, S>,
        inputs: &mut Vec<u32>,
    ) -> Option<u32> {
        let flits = self.packets[packet as usize].flits;
        let inp = &mut self.ins[input as usize];
        debug_assert!(
            matches!(inp.owner.device, Device::Switch(_)),
            "a destination's arrivals are planned by plan_delivery"
        );
        inputs.push(input);
        let at_back = inp
            .entries
            .back()
            .is_some_and(|e| e.packet == packet && e.departed < flits);
        if !at_back {
            // Nothing planned for a packet not in the buffer: nothing to do.
            run?;
            inp.held = inp.held.saturating_add(flits);
            inp.entries.push_back(Entry {
                packet,
                head_arrived: SimTime::MAX,
                arrived: 0,
                departed: 0,
                route: None,
                hop,
                arrivals: Runs::default(),
            });
        }
        let position = inp.entries.len() - 1;
        let entry = inp.entries.back_mut()?;
        entry.arrivals.truncate_at(committed);
        if let Some(r) = run {
            entry.arrivals.append(r, self.tau);
        }
        if entry.arrivals.is_empty() {
            let gone = inp.entries.pop_back();
            self.recycle(input, gone);
            return None;
        }
        if position != 0 {
            return None;
        }
        // The front packet: route its head, or let its output follow the new arrivals.
        let entry = inp.entries.front()?;
        match entry.route {
            None => {
                if let Some(head) = run.filter(|r| r.first == 0) {
                    let at = head.start.max(inp.front_since) + self.routing_latency;
                    ctx.schedule(at, WormEvent::Routed { input });
                }
                None
            }
            Some(out) => self.outs[out as usize]
                .worm
                .is_some_and(|w| w.input == Some(input) && w.packet == packet)
                .then_some(out),
        }
    }

    /// The tail flit of `port`'s worm leaves now: the packet is out of its input, and
    /// the output is free one flit time later.
    pub(super) fn tail_leaves<S: TraceSink>(&mut self, port: u32, version: u32, ctx: &mut Ctx<'_, S>) {
        let now = ctx.now;
        let out = &mut self.outs[port as usize];
        if out.version != version {
            return;
        }
        let Some(mut worm) = out.worm else { return };
        let flits = self.packets[worm.packet as usize].flits;
        worm.next = flits;
        out.worm = Some(worm);
        out.last_send = Some(now);
        out.run = None;
        ctx.schedule(now + self.tau, WormEvent::Released { port });
        let Some(input) = worm.input else { return };
        let inp = &mut self.ins[input as usize];
        let gone = inp.entries.pop_front();
        self.recycle(input, gone);
        let inp = &mut self.ins[input as usize];
        inp.front_since = now;
        if let Some(head) = inp
            .entries
            .front()
            .and_then(|e| e.arrivals.first())
            .filter(|r| r.first == 0)
        {
            let at = head.start.max(now) + self.routing_latency;
            ctx.schedule(at, WormEvent::Routed { input });
        }
        // The tail's departure is a departure like any other: a GO may be due at it
        // (checked here, as the packet has left the buffer's accounting). A GO sent
        // checks the thresholds again.
        if !self.go_if_drained(input, ctx) {
            self.schedule_thresholds(input, ctx);
        }
    }

    /// The tail of `port`'s worm left one flit time ago: the packet leaves its input
    /// (the next one there is routed from when the tail started), then the output is
    /// released. Equivalent to `TailLeaves` then `Released` where
    /// [`Self::tail_done_fits`].
    pub(super) fn tail_done<S: TraceSink>(&mut self, port: u32, version: u32, ctx: &mut Ctx<'_, S>) {
        let tail_sent = ctx.now - self.tau;
        let out = &mut self.outs[port as usize];
        if out.version != version {
            return;
        }
        out.run = None;
        let Some(worm) = out.worm else { return };
        if let Some(input) = worm.input {
            let inp = &mut self.ins[input as usize];
            let gone = inp.entries.pop_front();
            self.recycle(input, gone);
            let inp = &mut self.ins[input as usize];
            inp.front_since = tail_sent;
            if let Some(head) = inp
                .entries
                .front()
                .and_then(|e| e.arrivals.first())
                .filter(|r| r.first == 0)
            {
                let at = head.start.max(tail_sent) + self.routing_latency;
                ctx.schedule(at, WormEvent::Routed { input });
            }
            self.schedule_thresholds(input, ctx);
        }
        self.release(port, ctx);
    }

    /// A message came to the adapter whose output `port` has its `TailDone` kept out of
    /// the queue (see `OutPort::tail_deferred`): the event is scheduled in its reserved
    /// place, or, if that place has passed, its work is done now (it found nothing to
    /// send then, and the message is sent now, as it would have been).
    pub(super) fn undefer_tail<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        let tau = self.tau;
        let out = &mut self.outs[port as usize];
        let (Some(sequence), Some(run), version) = (out.tail_deferred.take(), out.run, out.version) else {
            return;
        };
        let done = run.last(tau) + tau;
        let event = WormEvent::TailDone { port, version };
        if ctx.queue.passed(done, event.rank(), sequence) {
            self.tail_done(port, version, ctx);
        } else {
            ctx.schedule_reserved(done, event, sequence);
        }
    }

    /// Finds when `input` next sends STOP (or GO, once stopped) under the current
    /// plans, and schedules it; earlier schedules become stale.
    pub(super) fn schedule_thresholds<S: TraceSink>(&mut self, input: u32, ctx: &mut Ctx<'_, S>) {
        let tau = self.tau;
        let inp = &self.ins[input as usize];
        let Some(thresholds) = inp.thresholds else { return };
        let due = inp.entries.front().and_then(|front| {
            let departure = front.route.and_then(|o| {
                let out = &self.outs[o as usize];
                out.worm.filter(|w| w.input == Some(input)).and(out.run)
            });
            let due = |arrivals: &[Run], base: i64| {
                if inp.stop_sent {
                    let from = ctx.now.max(inp.signal_from);
                    first_go(arrivals, base, departure, from, thresholds.low, tau).map(|at| (at, false))
                } else {
                    // Arrivals of this instant had their STOP check already, unless we are
                    // ahead of them (a flow-control signal or an injection of this instant).
                    // A STOP due now and not yet sent is still ahead too (plans change at
                    // a STOP sent, of the same rank, and check every input they reach).
                    let from = if ctx.rank < 2 || inp.pending == Some((ctx.now, true)) {
                        ctx.now
                    } else {
                        ctx.now + SimTime::from_ps(1)
                    };
                    let from = from.max(inp.signal_from);
                    first_stop(arrivals, base, departure, from, thresholds.high, tau).map(|at| (at, true))
                }
            };
            if !inp.stop_sent && inp.held != u32::MAX && inp.held - front.departed < thresholds.high {
                // Even if every flit of every packet in the buffer were in, and none but
                // the front's left, the buffer would stay below the mark: no search
                // (large buffers hold many packets).
                return None;
            }
            let base = -i64::from(front.departed);
            // Every entry's arrival runs, in order: the front entry's own list when it is
            // alone (usually), else a copy of them end to end.
            if inp.entries.len() == 1 {
                return due(&front.arrivals, base);
            }
            // Only the runs of the packets still arriving are copied; those already in
            // add their flits to the base (see `settled`).
            let (settled, settled_flits) = settled(inp, &self.packets, tau, ctx.now);
            let base = base + i64::from(settled_flits);
            let mut scratch = std::mem::take(&mut self.scratch_runs);
            scratch.clear();
            scratch.extend(inp.entries.from(settled).flat_map(|e| e.arrivals.iter().copied()));
            let due_at = due(&scratch, base);
            #[cfg(debug_assertions)]
            {
                scratch.clear();
                scratch.extend(inp.entries.iter().flat_map(|e| e.arrivals.iter().copied()));
                let whole = due(&scratch, -i64::from(front.departed));
                debug_assert_eq!(due_at, whole, "a search over the arriving entries only differs");
            }
            self.scratch_runs = scratch;
            due_at
        });
        let waits = match due {
            Some((at, true)) => self.stop_waits(input, at),
            _ => false,
        };
        let inp = &mut self.ins[input as usize];
        if due == inp.pending {
            // The event already scheduled still stands; if it waited for the routing or
            // an output's release, which no longer come before it, it is scheduled now.
            if let (Some((at, sequence)), false) = (inp.stop_deferred, waits) {
                inp.stop_deferred = None;
                self.schedule_stop(input, at, sequence, ctx);
            }
            return;
        }
        inp.version += 1;
        inp.pending = due;
        inp.stop_deferred = None;
        let version = inp.version;
        match due {
            Some((at, true)) => {
                let sequence = ctx.queue.reserve();
                if waits {
                    // Due after the front packet's head is routed, or after the output it
                    // waits for is released: kept out of the queue (see
                    // `InPort::stop_deferred`).
                    inp.stop_deferred = Some((at, sequence));
                } else {
                    self.schedule_stop(input, at, sequence, ctx);
                }
            }
            Some((at, false)) => {
                if self.go_certain(input, ctx.now) {
                    self.send_signal(input, false, at, ctx);
                } else {
                    ctx.schedule(at, WormEvent::GoDue { input, version });
                }
            }
            None => {}
        }
    }

    /// When the head of `input`'s front packet is routed, if it is still to be: the
    /// `Routed` event scheduled for it is at this time.
    fn routed_at(&self, input: u32) -> Option<SimTime> {
        let inp = &self.ins[input as usize];
        let front = inp.entries.front().filter(|e| e.route.is_none())?;
        let head = front.arrivals.first().filter(|r| r.first == 0)?;
        Some(head.start.max(inp.front_since) + self.routing_latency)
    }

    /// Whether the STOP that `input` sends at `at` may stay out of the queue: an event
    /// before it decides whether it is still due (it goes stale for most packets). That
    /// event is one of:
    /// - the routing of the front packet's head;
    /// - the release of the output the front packet asked for (held by another worm
    ///   whose tail leaves before `at`, or arbitrating this instant), which arbitrates
    ///   again and schedules the STOPs of the requests it does not grant
    ///   ([`Self::undefer`]). Whatever moves that release (a new plan of the output)
    ///   schedules them too;
    /// - the departure of the front packet's own tail, when the packet holds its output
    ///   and the STOP comes from the packets behind it, which have still to be routed.
    ///   The tail's event checks the thresholds again, as does a new plan of the output.
    fn stop_waits(&self, input: u32, at: SimTime) -> bool {
        if let Some(routed) = self.routed_at(input) {
            return routed < at;
        }
        let Some(wanted) = self.ins[input as usize].entries.front().and_then(|e| e.route) else {
            return false;
        };
        let out = &self.outs[wanted as usize];
        // A worm whose record another packet took already (see `recycle`) may show no tail
        // run here: the STOP is then scheduled rather than kept out of the queue, which
        // only costs an event.
        let tail_run = |worm: Worm| {
            out.run
                .filter(|run| run.end == self.packets[worm.packet as usize].flits)
        };
        match out.worm {
            Some(worm) if worm.input != Some(input) => {
                tail_run(worm).is_some_and(|run| run.last(self.tau) + self.tau < at)
            }
            Some(worm) => tail_run(worm).is_some_and(|run| self.tail_event_at(worm, run) < at),
            None => out.arbitrating,
        }
    }

    /// Whether `worm`'s tail ends with one `TailDone` rather than `TailLeaves` then
    /// `Released`: always at an adapter (its packet leaves no input), and at a switch
    /// when the routing latency is at least a flit time, so that the next head of the
    /// input, routed from when the tail started, is not routed in the past.
    fn tail_done_fits(&self, worm: Worm) -> bool {
        worm.input.is_none() || self.routing_latency >= self.tau
    }

    /// The time of the event at `worm`'s tail run: `TailDone`, or `TailLeaves` (see
    /// [`Self::tail_done_fits`]). Both come after a STOP due at the same instant, so
    /// only a STOP due later may wait for it.
    fn tail_event_at(&self, worm: Worm, run: Run) -> SimTime {
        if self.tail_done_fits(worm) {
            run.last(self.tau) + self.tau
        } else {
            run.last(self.tau)
        }
    }

    /// A STOP of `input` kept out of the queue is scheduled, in its place, unless it
    /// may still wait ([`Self::stop_waits`]): the front packet's head was routed and did
    /// not get its output, or the output it waits for has a new plan.
    pub(super) fn undefer<S: TraceSink>(&mut self, input: u32, ctx: &mut Ctx<'_, S>) {
        let inp = &self.ins[input as usize];
        let Some((at, sequence)) = inp.stop_deferred else {
            return;
        };
        if self.stop_waits(input, at) {
            return;
        }
        self.ins[input as usize].stop_deferred = None;
        self.schedule_stop(input, at, sequence, ctx);
    }

    /// `input`'s STOP is due at `at`, and no event it waits for comes before: it is
    /// scheduled in its reserved place, or sent at once if certain.
    fn schedule_stop<S: TraceSink>(&mut self, input: u32, at: SimTime, sequence: u64, ctx: &mut Ctx<'_, S>) {
        if self.stop_certain(input, at) {
            self.send_signal(input, true, at, ctx);
        } else {
            let version = self.ins[input as usize].version;
            ctx.schedule_reserved(at, WormEvent::StopDue { input, version }, sequence);
        }
    }

    /// Whether the STOP that `input` is due to send at `at` is certain now, so that it
    /// may be sent at once, as of that instant (see [`Self::go_certain`]). The flits that
    /// fill the buffer until then are final when they come from an adapter: `at` is the
    /// arrival of a flit already planned, only this input's signals move an adapter's
    /// plan, and its next packets come after. (A switch's output upstream may yet be
    /// held up by the flow control further up.) The flits that leave until then are
    /// final too:
    /// - the front packet holds an output to an adapter, which nothing stops, until its
    ///   tail's event at `at` or later;
    /// - or it waits for an output that another worm holds until `at` or later (plans
    ///   only ever move later);
    /// - or its head is routed at `at` or later.
    ///
    /// The times in the last three follow from [`Self::stop_waits`] being false, which
    /// every caller checked; they are checked again so that this stands alone. So is
    /// `unstoppable(wanted)` for the first: with the arrivals final and the departures
    /// only able to come later, a run the STOP would hold up cannot have raised the
    /// occupancy to the mark, so it never decides alone (kept as a guard).
    fn stop_certain(&self, input: u32, at: SimTime) -> bool {
        let tau = self.tau;
        let inp = &self.ins[input as usize];
        let (Some(upstream), Some(front)) = (inp.upstream, inp.entries.front()) else {
            return false;
        };
        if !matches!(self.outs[upstream as usize].owner.device, Device::Host(_)) {
            return false;
        }
        let Some(wanted) = front.route else {
            return self.routed_at(input).is_some_and(|routed| routed >= at);
        };
        let out = &self.outs[wanted as usize];
        let Some(worm) = out.worm else { return false };
        // (A worm whose record another packet took already, see `recycle`, is not certain.)
        let Some(run) = out
            .run
            .filter(|run| run.end == self.packets[worm.packet as usize].flits)
        else {
            return false;
        };
        if worm.input == Some(input) {
            self.unstoppable(wanted) && self.tail_event_at(worm, run) >= at
        } else {
            run.last(tau) + tau >= at
        }
    }

    /// `port` has a new plan: the STOPs its requests keep out of the queue while they
    /// wait for its release are checked again.
    pub(super) fn undefer_requests<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        let mut i = 0;
        while let Some(&(input, _)) = self.outs[port as usize].requests.get(i) {
            self.undefer(input, ctx);
            i += 1;
        }
    }

    /// Sends GO now if `input` is stopped and its occupancy, counting every arrival and
    /// departure up to now, is at most the low-water mark; whether it did.
    fn go_if_drained<S: TraceSink>(&mut self, input: u32, ctx: &mut Ctx<'_, S>) -> bool {
        let tau = self.tau;
        let now = ctx.now;
        let inp = &self.ins[input as usize];
        let (Some(thresholds), true) = (inp.thresholds, inp.stop_sent && inp.signal_from <= now) else {
            return false;
        };
        let (settled, settled_flits) = settled(inp, &self.packets, tau, now);
        let arrived_by_now =
            |e: &Entry| -> i64 { e.arrivals.iter().map(|r| i64::from(r.count_by(now, tau, false))).sum() };
        let arrived = i64::from(settled_flits) + inp.entries.from(settled).map(arrived_by_now).sum::<i64>();
        debug_assert_eq!(arrived, inp.entries.iter().map(arrived_by_now).sum::<i64>());
        // Only the front packet sends.
        debug_assert!(inp.entries.from(1).all(|e| e.departed == 0));
        let departed = inp.entries.front().map_or(0, |e| i64::from(e.departed));
        let drained = arrived - departed <= i64::from(thresholds.low);
        if drained {
            let version = inp.version;
            self.go_due(input, version, ctx);
        }
        drained
    }

    pub(super) fn stop_due<S: TraceSink>(&mut self, input: u32, version: u32, ctx: &mut Ctx<'_, S>) {
        let inp = &mut self.ins[input as usize];
        if inp.version != version || inp.stop_sent {
            return;
        }
        self.send_signal(input, true, ctx.now, ctx);
    }

    pub(super) fn go_due<S: TraceSink>(&mut self, input: u32, version: u32, ctx: &mut Ctx<'_, S>) {
        let inp = &mut self.ins[input as usize];
        if inp.version != version || !inp.stop_sent {
            return;
        }
        self.send_signal(input, false, ctx.now, ctx);
    }
}

/// When an output under the flow-control `signals` on their way to it (after the state
/// `stopped`) may send from `from` on: the first instant it is not held, and the arrival
/// of the STOP that holds it next, if one is on its way; `None` if it stays held. A
/// signal arriving at an instant takes effect before the sends of that instant.
fn sending_window(stopped: bool, signals: &[(SimTime, bool)], from: SimTime) -> Option<(SimTime, Option<SimTime>)> {
    let mut held = stopped;
    let mut start = from;
    for &(at, stop) in signals {
        if at <= start {
            held = stop;
        } else if !held && stop {
            return Some((start, Some(at)));
        } else if held && !stop {
            held = false;
            start = at;
        }
    }
    (!held).then_some((start, None))
}

/// The packets at the front of `inp` whose flits have all arrived before `now`, and the
/// flits they hold. One upstream output fills a buffer a packet after the other, so they
/// come first, and what a search needs of them is their number of flits: large buffers
/// hold many packets, and only the others are walked. The back packet is never among
/// them (its flits may not all be planned yet), nor is any once `held` has overflowed.
fn settled(inp: &InPort, packets: &Slab<Packet>, tau: SimTime, now: SimTime) -> (usize, u32) {
    if inp.entries.len() < 2 || inp.held == u32::MAX {
        return (0, 0);
    }
    let arriving = |e: &Entry| e.arrivals.last().is_some_and(|r| r.last(tau) >= now);
    let walked = 1 + inp.entries.iter().rev().skip(1).take_while(|e| arriving(e)).count();
    let settled = inp.entries.len() - walked;
    if settled == 0 {
        return (0, 0);
    }
    let walked_flits: u32 = inp
        .entries
        .from(settled)
        .map(|e| packets[e.packet as usize].flits)
        .sum();
    (settled, inp.held - walked_flits)
}

/// The run an output can send from flit `k` on, not before `earliest`, given when the
/// flits arrive at its input: back to back while each has arrived by its turn.
fn plan_from_arrivals(arrivals: &[Run], k: u32, earliest: SimTime, tau: SimTime) -> Option<Run> {
    let position = arrivals.iter().position(|r| r.first <= k && k < r.end)?;
    let start = earliest.max(arrivals[position].at(k, tau));
    let mut end = arrivals[position].end;
    for r in &arrivals[position + 1..] {
        // Contiguous flits that arrive in time for their turn extend the run.
        if r.first != end || r.start > start + tau * u64::from(r.first - k) {
            break;
        }
        end = r.end;
    }
    Some(Run { first: k, end, start })
}
