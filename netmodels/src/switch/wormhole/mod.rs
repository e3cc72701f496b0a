//! The wormhole fabric: Myrinet-like switches and adapters exchanging flits under
//! stop/go flow control.
//!
//! ```text
//!              STOP / GO (after the cable's delay)
//!   sender ◀─────────────────────────────────────┐
//!   out port ── flits (one per flit time) ──▶ in port: [slack buffer] ─ head routed ─▶ output
//!                                             occupancy ≥ high ⇒ STOP   (after the routing
//!                                             occupancy ≤ low  ⇒ GO      latency), held by
//!                                                                        the worm to its tail
//! ```
//!
//! Semantics, at flit granularity (a flit is `flit_bytes`; links carry whole flits):
//! - an output sends flit `j` of the packet it is allocated to at the first flit
//!   boundary when flit `j` is wholly in its input buffer (or, at an adapter, at once)
//!   and the output is not stopped; the flit is wholly received one flit time plus the
//!   cable's delay later;
//! - a packet's head is routed `routing_latency` after it reaches the front of its
//!   input buffer (at once if the buffer held nothing before it); the output it wants
//!   is then arbitrated among the inputs that want it (round-robin with a configurable
//!   initial pointer, or oldest-first) and stays allocated until the tail flit leaves;
//! - an input buffer that reaches its high-water mark sends STOP upstream; once it
//!   drains to its low-water mark it sends GO. The marks come from the buffer size and
//!   the cable's round trip so that no flit is ever lost (see [`Thresholds`]);
//! - a destination adapter takes flits as fast as they come; a message completes when
//!   the last flit of its last packet has arrived.
//!
//! Routing of no delay (`routing_latency` 0) is deterministic but ordered by events: a
//! head freed at the instant the tail ahead of it leaves is routed at that same instant,
//! after that instant's arbitration has run, so it takes an idle output (or joins an
//! arbitration still queued) in the order its events were queued (the event queue is
//! FIFO on ties), not by the arbitration policy. The same inputs give the same results;
//! the policy just does not decide at that instant. Such networks always take the fine
//! path (every flit), about 5.6 times slower than the coarse one.
//!
//! Bubble flow control ([`WormholeParams::bubble`]) is for the rings of a torus.
//! Dimension-order routing around a ring is a cycle of channel dependencies: worms
//! waiting for one another all the way round deadlock. Routers with virtual channels cut
//! the cycle with a dateline (Dally and Seitz); this switch has none, so it uses the
//! bubble condition of Puente et al. (as BlueGene/L does), which needs no virtual
//! channel, only input buffers of two packets. It turns the switch into a virtual
//! cut-through one:
//! - an output is granted to a packet only if the input buffer at the far end of its
//!   cable has a free slot. A slot holds a packet of the largest size the adapters cut;
//!   the packet holds it from its grant (its flits still to send, on the cable, in the
//!   buffer) until its tail has left that buffer (the output carrying it on is released)
//!   and the credit that buffer then sends up the cable has arrived, one cable delay
//!   later, as a STOP or a GO (at once on a cable of no delay). The output counts the
//!   slots it gave away, and the buffer says when one is free: neither reads the other's
//!   state, so a cut cable carries credits as it carries signals;
//! - a packet that enters a ring there, from a host port or from another dimension, needs
//!   two free slots: one for itself, and one that stays free in the ring (the bubble), so
//!   that some packet of the ring can always move;
//! - requests that do not fit take no part in the arbitration; the output arbitrates
//!   again when a slot frees downstream (an adapter cuts its next packet then).
//!
//! The slots lie below the STOP threshold, so stop/go never acts: an admitted packet is
//! never stopped half-sent, holding buffers on both sides of a cable. Slots of the
//! largest size, rather than counting each packet's own flits, are deliberate: with
//! packets of different sizes, free room counted in flits fragments around a ring and
//! the ring deadlocks all the same: every buffer holding a largest packet that goes on
//! round the ring, a small one behind it, and room for less than a largest packet (a
//! brute-force search of a three-buffer ring reaches this from an empty ring under the
//! per-flit rule). `build()` refuses dimension-order routing on a torus with rings
//! without bubble flow control, and buffers too small for two slots.
//!
//! Head-of-line blocking is detected as it happens: the packet at the front of an input
//! waits for an output held by another worm while the next packet in the same buffer
//! wants an output that is free.
//!
//! This is the fine path: one event per flit per hop. It is the reference semantics;
//! a coarse path that computes unobstructed flit runs in closed form must give the
//! same times. Both split into partitions (see [`crate::partition::windows`]): flits
//! (fine) or plans of runs of flits (coarse), and STOP/GO signals, cross the cut cables
//! (`WormShare`).

use std::collections::BTreeMap;

mod arbiter;
mod build;
mod coarse;
mod deliver;
mod entries;
mod fine;
pub(crate) mod runs;
mod split;

use split::WormShare;

use crate::adapter::{AdapterParams, Sender};
use crate::crossing::{Crossing, Split};
use crate::ids::{Device, HostId, MessageId};
use crate::link::LinkParams;
use crate::part::{Arrival, Core, FabricPart, Fixed};
use crate::queue::EventQueue;
pub mod error;
pub(crate) mod events;
pub use error::WormholeError;
pub(crate) use events::{Signal, WormEvent};

use crate::event::Event;
use crate::message::{Cut, Message};
use crate::slab::Slab;
use crate::switch::WormholeParams;
use crate::time::SimTime;
use crate::topology::{Endpoint, Route, RouteTable, Wiring};
use crate::trace::{FlowSignal, LinkTraversal, PortRef, TraceSink};
use entries::Entries;
use runs::{Run, Runs};

/// Where the stop/go thresholds of an input buffer sit, in flits.
///
/// With `C` flits of buffer, a flit time `τ` and a cable delay `p`: a STOP sent when
/// the occupancy reaches `high` arrives upstream `p` later; flits already started by
/// then keep arriving until `2p + τ` after the STOP was sent, at most
/// `⌈2p/τ⌉ + 1` of them. So `high = C − ⌈2p/τ⌉ − 1` never overflows the buffer. After a
/// GO sent at `low`, the first new flit arrives `2p + τ` later, while the output drains
/// at most `⌈2p/τ⌉ + 1` flits: `low = min(high − 1, ⌈2p/τ⌉ + 1)` keeps the output busy
/// whenever the buffer allows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// buffer size \[flits\]
    pub capacity: u32,
    /// occupancy at which STOP is sent \[flits\]
    pub high: u32,
    /// occupancy at which GO is sent \[flits\]
    pub low: u32,
}

impl Thresholds {
    /// The thresholds of a buffer of `capacity` flits fed by a cable of `propagation`
    /// delay at `flit_time` per flit; `None` if the buffer cannot cover the round trip.
    pub fn new(capacity: u32, flit_time: SimTime, propagation: SimTime) -> Option<Thresholds> {
        let tau = flit_time.as_ps().max(1);
        let in_flight = (2 * propagation.as_ps()).div_ceil(tau) + 1;
        let in_flight = u32::try_from(in_flight).ok()?;
        let high = capacity.checked_sub(in_flight)?;
        if high < 2 {
            return None;
        }
        Some(Thresholds {
            capacity,
            high,
            low: (high - 1).min(in_flight),
        })
    }
}
/// A packet of the wormhole fabric.
#[derive(Debug, Clone, Copy)]
struct Packet {
    message: MessageId,
    /// 0-based position within its message
    index: u32,
    /// flits on the wire
    flits: u32,
    /// the last packet of its message
    last: bool,
    /// flits wholly received by the destination adapter
    delivered: u32,
    /// coarse path: the plan of its arrival at the destination (stale events differ)
    version: u32,
    /// its message's route and destination, copied here: routing a head then reads
    /// the packet, not the message too (a cache miss per hop on large networks)
    route: Route,
    dst: HostId,
}

/// Coarse path: a new plan of the flits an output sends over a cable between two
/// switches, on its way to the input at the far end (see `coarse`).
#[derive(Debug, Clone, Copy)]
struct PlanChange {
    packet: u32,
    /// the position on the packet's path of the switch it goes to
    hop: u16,
    /// the flits whose arrivals stand (those sent already)
    committed: u32,
    /// when the flits after them arrive, back to back (`None`: not planned yet)
    run: Option<Run>,
}

/// The packet an output is sending: its worm.
#[derive(Debug, Clone, Copy)]
struct Worm {
    packet: u32,
    /// the input buffer it comes from (`None`: the adapter's memory)
    input: Option<u32>,
    /// next flit to send
    next: u32,
}

/// The state a port of a wormhole network holds: an output and an input (see
/// [`crate::footprint`]).
pub(crate) const PORT_BYTES: usize = size_of::<OutPort>() + size_of::<InPort>();

#[derive(Debug)]
struct OutPort {
    owner: Endpoint,
    /// global index of the input at the far end
    peer_input: Option<u32>,
    /// the far end is a host's adapter (its input needs no look for a plan to reach it)
    peer_host: bool,
    /// the torus ring (dimension) this port's cable belongs to, both directions
    ring: Option<u32>,
    link: LinkParams,
    flit_time: SimTime,
    worm: Option<Worm>,
    /// a STOP from downstream holds this output (coarse path: after the signals that
    /// have arrived)
    stopped: bool,
    /// coarse path: STOP (true) and GO signals on their way up the cable, by arrival
    /// time, in the order sent. A signal is planned for when it is sent: its arrival is
    /// then certain, and no event marks it
    signals: Vec<(SimTime, bool)>,
    /// a Tick is scheduled
    ticking: bool,
    /// an Arbitrate is scheduled
    arbitrating: bool,
    /// traced, bubble flow control: a packet waits for this output, which is free, but
    /// the buffer beyond its cable has no slot for it
    waits_for_room: bool,
    /// inputs whose front packet wants this output: (input, when it asked)
    requests: Vec<(u32, SimTime)>,
    /// round-robin: the first input port number to consider
    pointer: u32,
    /// coarse path: the flits planned to leave, back to back
    run: Option<Run>,
    /// coarse path: when the worm's last committed flit left
    last_send: Option<SimTime>,
    /// coarse path: the plan (stale events carry an older one)
    version: u32,
    /// coarse path, adapters: the planned run ends with the tail, and its `TailDone`,
    /// with this reserved place in the queue, is not scheduled because the adapter has
    /// nothing else to send; the next message schedules it, or does its work if its
    /// place has passed
    tail_deferred: Option<u64>,
    /// coarse path, between switches: when the last plan change sent down the cable
    /// reaches the switch at the far end
    plan_arrives: SimTime,
    /// coarse path: the planned run ends before the tail with no event at its end,
    /// waiting for this (see `replan_one`)
    awaits: Awaits,
}

/// Coarse path: what an output's planned run, ending before the packet's tail, waits
/// for when its end is not an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Awaits {
    /// the run's end is an event, or the run reaches the tail
    Nothing,
    /// the planned arrivals of the flits after it, which replan the output
    Arrivals,
    /// a GO after the STOP that cuts it, whose sending replans the output
    Go,
}

/// A packet (some of its flits) in an input buffer.
#[derive(Debug, Clone)]
struct Entry {
    packet: u32,
    /// when its head flit was wholly received
    head_arrived: SimTime,
    arrived: u32,
    departed: u32,
    /// the output it was routed to
    route: Option<u32>,
    /// this switch's position on the packet's path (0: the first switch)
    hop: u16,
    /// coarse path: when its flits arrive (runs, in flit order)
    arrivals: Runs,
}

#[derive(Debug)]
struct InPort {
    owner: Endpoint,
    /// global index of the output feeding this input
    upstream: Option<u32>,
    propagation: SimTime,
    thresholds: Option<Thresholds>,
    entries: Entries,
    occupancy: u32,
    /// coarse path: the flits of every packet `entries` holds, arrived or not (a bound
    /// on the occupancy the plans can reach); `u32::MAX` once that overflowed, until the
    /// buffer empties (no bound then)
    held: u32,
    stop_sent: bool,
    hol: bool,
    /// bubble flow control: packets this buffer holds below its STOP threshold, each
    /// counted as a packet of the largest size (0: not admission-controlled)
    slots: u32,
    /// bubble flow control: packets granted an output towards this buffer whose tails
    /// have not yet left it
    reserved: u32,
    /// coarse path: since when the front entry has been at the front
    front_since: SimTime,
    /// coarse path: the threshold plan (stale events carry an older one)
    version: u32,
    /// coarse path: the STOP (true) or GO due and scheduled under `version`
    pending: Option<(SimTime, bool)>,
    /// coarse path: the STOP `pending` is due (at this time, with this reserved place in
    /// the queue) after the front packet's head is routed, after the output it waits for
    /// is released, or after its own tail leaves, and is not scheduled until that event
    /// has not made it stale; for most packets it does (see `stop_waits`)
    stop_deferred: Option<(SimTime, u64)>,
    /// coarse path: the next STOP or GO is due no earlier than this, as the last one
    /// was sent then (or will be: one certain ahead of its time is sent early, see
    /// `stop_certain` and `go_certain`)
    signal_from: SimTime,
    /// coarse path, from a switch: when the last STOP or GO sent reaches the output
    /// upstream
    signal_arrives: SimTime,
}

/// Adapters, cables and wormhole switches.
#[derive(Debug)]
pub(crate) struct WormholeFabric {
    params: WormholeParams,
    routing_latency: SimTime,
    /// every host's adapter
    adapters: Vec<AdapterParams>,
    wiring: Wiring,
    routes: RouteTable,
    outs: Vec<OutPort>,
    ins: Vec<InPort>,
    /// the device (its index: hosts, then switches) of every port
    port_device: Vec<u32>,
    senders: Vec<Sender>,
    packets: Slab<Packet>,
    /// coarse path: plan changes on their way over cables between switches (see
    /// `coarse`), each named by its `PlanArrives` event
    plans: Slab<PlanChange>,
    /// link traversals in progress, by (message, output port); only kept when tracing
    traversals: BTreeMap<(MessageId, u32), LinkTraversal>,
    /// runs of flits are computed in closed form (see `coarse`)
    coarse: bool,
    /// the flit time of every link (the coarse path needs them equal)
    tau: SimTime,
    /// coarse path: work lists reused between events. Those of inputs (for
    /// `replan_and_check`) are a pool, as calls nest: a signal sent early replans
    /// upstream.
    scratch_inputs: Vec<Vec<u32>>,
    scratch_runs: Vec<Run>,
    /// flow-control signals sent, for comparing the paths in tests
    #[cfg(test)]
    pub(crate) signals: Vec<(SimTime, u32, bool)>,
    /// this fabric's part, when it is one partition of a larger one
    share: Option<Box<WormShare>>,
}

/// What a handler works with besides the fabric.
pub(crate) struct Ctx<'a, S> {
    pub(crate) now: SimTime,
    /// the rank of the event being handled (0 for injections)
    pub(crate) rank: u8,
    pub(crate) messages: &'a mut [Message],
    pub(crate) queue: &'a mut EventQueue<Event>,
    pub(crate) sink: &'a mut S,
}

impl<S> Ctx<'_, S> {
    /// Schedules a fabric event at `at`, ranked.
    fn schedule(&mut self, at: SimTime, event: WormEvent) {
        self.queue.schedule_ranked(at, event.rank(), Event::Worm(event));
    }

    /// Schedules a fabric event at `at`, ranked, in a place reserved earlier.
    fn schedule_reserved(&mut self, at: SimTime, event: WormEvent, sequence: u64) {
        self.queue
            .schedule_reserved(at, event.rank(), sequence, Event::Worm(event));
    }
}

/// Flits under stop/go flow control: see the [module documentation](self).
impl FabricPart for WormholeFabric {
    type Event = WormEvent;
    const KEEPS_FINALS: bool = false;

    fn route(&mut self, src: HostId, dst: HostId, number: u64) -> Route {
        self.routes.route(src, dst, number)
    }

    fn packets(&self, src: HostId, size_bytes: u32) -> u32 {
        self.adapter(src).packets(size_bytes)
    }

    fn wiring_and_routes(&self) -> Option<(&Wiring, &RouteTable)> {
        Some((&self.wiring, &self.routes))
    }

    fn source_backlog(&self, host: HostId) -> usize {
        self.senders.get(host.index()).map_or(0, Sender::len)
    }

    #[inline]
    fn inject<S: TraceSink>(&mut self, message: MessageId, core: Core<'_, S>) {
        core.queue.set_origin(core.messages[message.index()].spec.src.index());
        let mut ctx = Ctx {
            now: core.now,
            rank: 0,
            messages: core.messages,
            queue: core.queue,
            sink: core.sink,
        };
        self.on_inject(message, &mut ctx);
    }

    #[inline]
    fn handle<S: TraceSink>(&mut self, event: WormEvent, core: Core<'_, S>) -> Option<MessageId> {
        core.queue.set_origin(self.device_of(event));
        let mut ctx = Ctx {
            now: core.now,
            rank: event.rank(),
            messages: core.messages,
            queue: core.queue,
            sink: core.sink,
        };
        self.on_event(event, &mut ctx)
    }

    /// Found in the queue each time: whether nothing can hold a worm any more changes
    /// as it goes (see `fixed_deliveries`).
    fn final_deliveries<'a, S: TraceSink>(
        &self,
        events: impl Iterator<Item = (SimTime, u128, &'a WormEvent)>,
        now: SimTime,
        out: &mut Vec<Arrival>,
    ) {
        self.fixed_deliveries::<S>(events, now, out);
    }

    fn walk_on(&self, number: u64, index: u32, port: u32, now: SimTime) -> Fixed {
        self.walk_on_here(number, index, port, now)
    }

    fn split(&mut self) -> Option<&mut Split> {
        self.split_kept()
    }

    /// On either path (see [`crate::partition::windows`]).
    fn can_be_split<S: TraceSink>(&self) -> Result<(), &'static str> {
        Ok(())
    }

    fn share(&mut self, part: u32, of_device: Vec<u32>) {
        self.become_part(part, of_device);
    }

    fn receive<S: TraceSink>(&mut self, crossing: &Crossing, core: Core<'_, S>) {
        self.on_crossing(crossing, core.messages, core.queue, core.sink);
    }
}

impl WormholeFabric {
    /// The parameters of `host`'s adapter.
    pub(crate) fn adapter(&self, host: HostId) -> &AdapterParams {
        &self.adapters[host.index()]
    }

    /// A message enters its source adapter.
    fn on_inject<S: TraceSink>(&mut self, message: MessageId, ctx: &mut Ctx<'_, S>) {
        let src = ctx.messages[message.index()].spec.src;
        self.senders[src.index()].push(message);
        let port = self.host_port(src);
        if self.outs[port as usize].worm.is_none() {
            self.next_packet(port, src, ctx);
        } else if self.outs[port as usize].tail_deferred.is_some() {
            self.undefer_tail(port, ctx);
        }
    }

    /// Handles one event; returns a message that just completed.
    fn on_event<S: TraceSink>(&mut self, event: WormEvent, ctx: &mut Ctx<'_, S>) -> Option<MessageId> {
        match event {
            WormEvent::Tick { port } => {
                self.outs[port as usize].ticking = false;
                self.tick(port, ctx);
            }
            WormEvent::FlitArrives { input, packet, hop } => return self.flit_arrives(input, packet, hop, ctx),
            WormEvent::Routed { input } => self.routed(input, ctx),
            WormEvent::Arbitrate { port } => {
                self.outs[port as usize].arbitrating = false;
                self.arbitrate(port, ctx);
            }
            WormEvent::Released { port } => self.release(port, ctx),
            WormEvent::TailDone { port, version } => self.tail_done(port, version, ctx),
            WormEvent::StopArrives { port } => {
                let out = &mut self.outs[port as usize];
                out.stopped = true;
                if S::ENABLED {
                    ctx.sink
                        .flow_control(ctx.now, port_ref(out.owner), FlowSignal::Stop, false);
                }
                if self.coarse_now::<S>() {
                    self.replan(port, ctx);
                }
            }
            WormEvent::GoArrives { port } => {
                let out = &mut self.outs[port as usize];
                out.stopped = false;
                if S::ENABLED {
                    ctx.sink
                        .flow_control(ctx.now, port_ref(out.owner), FlowSignal::Go, false);
                }
                let ticking = out.ticking;
                if self.coarse_now::<S>() {
                    self.replan(port, ctx);
                } else if !ticking {
                    // Send with the other sends of this instant, after its arrivals.
                    self.outs[port as usize].ticking = true;
                    ctx.schedule(ctx.now, WormEvent::Tick { port });
                }
            }
            WormEvent::CreditArrives { port } => self.credit_arrives(port, ctx),
            WormEvent::RunEnd { port, version } => {
                if self.outs[port as usize].version == version {
                    self.replan(port, ctx);
                }
            }
            WormEvent::TailLeaves { port, version } => self.tail_leaves(port, version, ctx),
            WormEvent::StopDue { input, version } => self.stop_due(input, version, ctx),
            WormEvent::GoDue { input, version } => self.go_due(input, version, ctx),
            WormEvent::TailArrives { packet, version } => {
                if self.packets[packet as usize].version == version {
                    return self.delivered(packet, ctx);
                }
            }
            WormEvent::PlanArrives { input, slot } => self.plan_arrives(input, slot, ctx),
        }
        None
    }

    /// `port` finished sending its worm's tail: it takes the next packet (adapter) or
    /// the next request (switch).
    fn release<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        let out = &mut self.outs[port as usize];
        let finished = out.worm.take();
        if let (Some(_), Some(worm)) = (&self.share, finished) {
            // First, as a grant below may cut or send the next packet at once.
            self.let_go(port, worm.packet, ctx);
        }
        match self.outs[port as usize].owner.device {
            Device::Host(host) => self.next_packet(port, host, ctx),
            Device::Switch(_) => {
                // Arbitrate once every request of this instant is in. At once if no
                // other event of this instant comes first, unless a bubble slot frees
                // below at once, on a cable of no delay (its work would then come after
                // the arbitration's).
                let frees_slot = finished.and_then(|w| w.input).is_some_and(|input| {
                    let inp = &self.ins[input as usize];
                    inp.slots > 0 && inp.propagation == SimTime::ZERO
                });
                if frees_slot {
                    self.schedule_arbitration(port, ctx);
                } else {
                    self.arbitrate_soon(port, ctx);
                }
                self.check_hol_at(port, ctx);
            }
        }
        if let Some(input) = finished.and_then(|w| w.input) {
            self.free_slot(input, ctx);
        }
    }

    /// Bubble flow control: whether output `port` may take a packet from `input` (`None`:
    /// the adapter's memory) now. The buffer at the far end must have a slot free for
    /// it, two if the packet enters a ring there (from a host port or another dimension).
    fn admits(&self, port: u32, input: Option<u32>) -> bool {
        if !self.params.bubble {
            // No slots anywhere (and no far buffer to look at: a cache miss per request).
            return true;
        }
        let out = &self.outs[port as usize];
        let Some(far) = out.peer_input.map(|i| &self.ins[i as usize]) else {
            return true;
        };
        if far.slots == 0 {
            // Not admission-controlled (bubble off, or a destination adapter).
            return true;
        }
        let from = input.and_then(|i| self.outs[i as usize].ring);
        let entering = out.ring.is_some() && out.ring != from;
        far.reserved + 1 + u32::from(entering) <= far.slots
    }

    /// Bubble flow control: `port` was granted a packet, which holds a slot of the
    /// buffer at the far end until its tail has left that buffer.
    fn reserve(&mut self, port: u32) {
        if !self.params.bubble {
            return;
        }
        if let Some(far) = self.outs[port as usize].peer_input {
            let far = &mut self.ins[far as usize];
            if far.slots > 0 {
                far.reserved += 1;
            }
        }
    }

    /// Bubble flow control: a packet's tail has left `input` (the output carrying it was
    /// released): its slot is free. The output feeding `input` learns it when the credit
    /// gets there, after the cable's delay, like a STOP or a GO; on a cable of no delay,
    /// at once.
    fn free_slot<S: TraceSink>(&mut self, input: u32, ctx: &mut Ctx<'_, S>) {
        let inp = &self.ins[input as usize];
        if inp.slots == 0 {
            return;
        }
        let Some(upstream) = inp.upstream else { return };
        // (A cut cable has a delay: the lookahead.)
        if inp.propagation == SimTime::ZERO {
            self.credit_arrives(upstream, ctx);
        } else {
            let at = ctx.now + inp.propagation;
            self.signal(upstream, at, Signal::Credit, ctx);
        }
    }

    /// Bubble flow control: the buffer at the far end of `port` has a slot more, and
    /// `port`, which may have been refused for want of room, tries again. Credits come
    /// before arbitration at one instant (on both paths), so every arbitration of the
    /// instant sees the slot.
    fn credit_arrives<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        let out = &self.outs[port as usize];
        if let Some(far) = out.peer_input {
            self.ins[far as usize].reserved -= 1;
        }
        match out.owner.device {
            Device::Host(host) => {
                if out.worm.is_none() {
                    self.next_packet(port, host, ctx);
                }
            }
            Device::Switch(_) => self.schedule_arbitration(port, ctx),
        }
    }

    /// Cuts the next packet at `host`'s adapter and starts sending it.
    fn next_packet<S: TraceSink>(&mut self, port: u32, host: HostId, ctx: &mut Ctx<'_, S>) {
        let message = self.senders[host.index()].current();
        let admitted = self.admits(port, None);
        self.waits_for_room(port, message.is_some() && !admitted, ctx);
        // Bubble flow control: `free_slot` wakes the adapter when there is room.
        let Some(message) = message.filter(|_| admitted) else {
            return;
        };
        let m = &mut ctx.messages[message.index()];
        let Cut {
            index,
            wire_bytes,
            last,
        } = m.cut(&self.adapters[host.index()], ctx.now);
        let record = Packet {
            message,
            index,
            flits: wire_bytes.div_ceil(self.params.flit_bytes).max(1),
            last,
            delivered: 0,
            version: 0,
            route: m.route,
            dst: m.spec.dst,
        };
        if S::ENABLED {
            ctx.sink.segment(
                ctx.now,
                port_ref(self.outs[port as usize].owner),
                m.number,
                record.index,
                true,
            );
        }
        self.senders[host.index()].cut(last, self.adapters[host.index()].interleave);
        let packet = self.packets.insert(record);
        if let Some(share) = &mut self.share {
            let number = ctx.messages[message.index()].number;
            share.by_packet.insert((number, index), packet);
        }
        self.reserve(port);
        self.outs[port as usize].worm = Some(Worm {
            packet,
            input: None,
            next: 0,
        });
        self.start(port, ctx);
    }

    /// An output has a new worm, or may send again: the fine path ticks, the coarse
    /// path plans.
    fn start<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        if self.coarse_now::<S>() {
            self.replan(port, ctx);
        } else if ctx.rank == 0 {
            // An injection (rank 0) sends with the other sends of its instant, after a
            // STOP arriving then, as the coarse path plans it.
            let out = &mut self.outs[port as usize];
            if !out.ticking {
                out.ticking = true;
                ctx.schedule(ctx.now, WormEvent::Tick { port });
            }
        } else {
            self.tick(port, ctx);
        }
    }

    /// Whether this run uses the coarse path: traces need every flit, so they use the
    /// fine path.
    fn coarse_now<S: TraceSink>(&self) -> bool {
        self.coarse && !S::ENABLED
    }

    /// The path position of the switch a flit sent from `input`'s front packet (or from
    /// an adapter, `None`) arrives at.
    fn next_hop(&self, input: Option<u32>) -> u16 {
        input
            .and_then(|i| self.ins[i as usize].entries.front())
            .map_or(0, |e| e.hop + 1)
    }

    /// The index (hosts first, then switches) of the device that handles `event`: the
    /// origin of the events it schedules.
    #[inline(always)]
    pub(crate) fn device_of(&self, event: WormEvent) -> usize {
        let port = match event {
            WormEvent::Tick { port }
            | WormEvent::Arbitrate { port }
            | WormEvent::Released { port }
            | WormEvent::StopArrives { port }
            | WormEvent::GoArrives { port }
            | WormEvent::CreditArrives { port }
            | WormEvent::RunEnd { port, .. }
            | WormEvent::TailLeaves { port, .. }
            | WormEvent::TailDone { port, .. } => port,
            WormEvent::FlitArrives { input, .. }
            | WormEvent::Routed { input }
            | WormEvent::StopDue { input, .. }
            | WormEvent::GoDue { input, .. }
            | WormEvent::PlanArrives { input, .. } => input,
            WormEvent::TailArrives { packet, .. } => return self.packets[packet as usize].dst.index(),
        };
        self.port_device[port as usize] as usize
    }

    fn host_port(&self, host: HostId) -> u32 {
        self.wiring.port(Endpoint {
            device: Device::Host(host),
            port: 0,
        }) as u32
    }
}

fn port_ref(endpoint: Endpoint) -> PortRef {
    PortRef {
        device: endpoint.device,
        port: endpoint.port,
    }
}

#[cfg(test)]
mod tests;
