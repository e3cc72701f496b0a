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
//! same times. Only the fine path splits into partitions (see
//! [`crate::partition::windows`]): flits and STOP/GO signals cross the cut cables
//! (`WormShare`).

use std::collections::{BTreeMap, HashMap};

mod coarse;
mod entries;
mod runs;

use crate::adapter::{AdapterParams, Sender};
use crate::ids::{Device, HostId, MessageId};
use crate::link::LinkParams;
use crate::queue::EventQueue;
use crate::rng::Rng;
pub mod error;
pub(crate) mod events;
pub use error::WormholeError;
pub(crate) use events::{Signal, WormEvent};

use crate::build_error::{BuildError, room_for};
use crate::crossing::{Crossing, CrossingEvent, PathRest, Split, path_returns};
use crate::event::Event;
use crate::message::{Cut, Message};
use crate::slab::Slab;
use crate::switch::{Arbitration, Granularity, InitialPointer, WormholeParams, rotated};
use crate::time::SimTime;
use crate::topology::{Endpoint, Route, RouteTable, Torus, Wiring};
use crate::trace::{BufferSide, FlowSignal, LinkTraversal, PortRef, TraceSink};
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
struct WormShare {
    split: Split,
    /// the packets this partition holds a record of, by message number and index
    by_packet: HashMap<(u64, u32), u32>,
    /// outputs whose packet's tail left for good: (output, packet, its message's last);
    /// let go once the output is released (the worm holds the packet until then)
    leaving: Vec<(u32, u32, bool)>,
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

impl WormholeFabric {
    pub(crate) fn new(
        params: WormholeParams,
        routing_latency: SimTime,
        adapters: Vec<AdapterParams>,
        wiring: Wiring,
        routes: RouteTable,
    ) -> Result<WormholeFabric, BuildError> {
        if params.flit_bytes == 0 {
            return Err(WormholeError::EmptyFlit.into());
        }
        // Links carry whole flits: a packet smaller than a flit is padded to it, which
        // a small message's packet may be, but not every packet.
        if let Some(a) = adapters
            .iter()
            .find(|a| u64::from(a.payload_bytes) + u64::from(a.header_bytes) < u64::from(params.flit_bytes))
        {
            return Err(WormholeError::FlitLargerThanPackets {
                flit_bytes: params.flit_bytes,
                payload_bytes: a.payload_bytes,
                header_bytes: a.header_bytes,
            }
            .into());
        }
        let capacity = params.buffer_bytes / params.flit_bytes;
        let mut rng = match params.arbitration {
            Arbitration::RoundRobin {
                initial: InitialPointer::Random { seed },
            } => Some(Rng::new(seed)),
            _ => None,
        };
        // A fixed first port must be a port of some switch (a switch with fewer ports
        // starts at it modulo its ports).
        if let Arbitration::RoundRobin {
            initial: InitialPointer::Fixed(port),
        } = params.arbitration
        {
            let switches = (wiring.port_base.len() as u32).saturating_sub(wiring.hosts);
            let ports = (0..switches)
                .map(|s| wiring.switch_ports(crate::ids::SwitchId(s)))
                .max()
                .unwrap_or(1);
            if port >= ports.max(1) {
                return Err(WormholeError::PointerBeyondPorts {
                    port,
                    ports: ports.max(1),
                }
                .into());
            }
        }
        let mut outs = room_for(wiring.owner.len(), "output ports")?;
        let mut ins = room_for(wiring.owner.len(), "input ports")?;
        for (&owner, peer) in wiring.owner.iter().zip(&wiring.peer) {
            let link = peer.map(|(_, link)| link).unwrap_or_default();
            let flit_time = link.bandwidth.serialization_time(u64::from(params.flit_bytes));
            let switch_ports = match owner.device {
                Device::Host(_) => 1,
                Device::Switch(s) => wiring.switch_ports(s),
            };
            let pointer = match (params.arbitration, rng.as_mut()) {
                (
                    Arbitration::RoundRobin {
                        initial: InitialPointer::Fixed(p),
                    },
                    _,
                ) => p % switch_ports.max(1),
                (_, Some(rng)) => rng.below(u64::from(switch_ports)) as u32,
                _ => 0,
            };
            outs.push(OutPort {
                owner,
                peer_input: peer.map(|(end, _)| wiring.port(end) as u32),
                peer_host: peer.is_some_and(|(end, _)| matches!(end.device, Device::Host(_))),
                ring: match owner.device {
                    Device::Switch(_) => routes.ring(owner.port),
                    Device::Host(_) => None,
                },
                link,
                flit_time,
                worm: None,
                stopped: false,
                signals: Vec::new(),
                ticking: false,
                waits_for_room: false,
                arbitrating: false,
                requests: Vec::new(),
                pointer,
                run: None,
                last_send: None,
                version: 0,
                tail_deferred: None,
                awaits: Awaits::Nothing,
            });
            // The input side of this port is fed by the peer's output.
            let thresholds = match (owner.device, peer) {
                (Device::Switch(_), Some((_, link))) => {
                    let tau = link.bandwidth.serialization_time(u64::from(params.flit_bytes));
                    let t = Thresholds::new(capacity, tau, link.propagation).ok_or_else(|| {
                        let needed = (2 * link.propagation.as_ps()).div_ceil(tau.as_ps().max(1)) + 3;
                        BuildError::from(WormholeError::BufferTooSmall {
                            buffer_bytes: params.buffer_bytes,
                            propagation: link.propagation,
                            flit_time: tau,
                            needed_bytes: needed * u64::from(params.flit_bytes),
                        })
                    })?;
                    Some(t)
                }
                _ => None,
            };
            ins.push(InPort {
                owner,
                upstream: peer.map(|(end, _)| wiring.port(end) as u32),
                propagation: link.propagation,
                thresholds,
                entries: Entries::default(),
                occupancy: 0,
                held: 0,
                stop_sent: false,
                hol: false,
                slots: 0,
                reserved: 0,
                front_since: SimTime::ZERO,
                version: 0,
                pending: None,
                stop_deferred: None,
                signal_from: SimTime::ZERO,
            });
        }
        if params.bubble {
            bubble_slots(&params, &adapters, &mut ins)?;
        } else if routes.torus().is_some_and(Torus::has_rings) {
            return Err(WormholeError::RingsNeedBubble.into());
        }
        // The coarse path needs one flit time everywhere, and routing that takes time
        // (cables may take none: it plans for a STOP or GO when it is sent anyway). Without
        // it, a head comes to the front of its buffer when the tail before it is sent,
        // after the arbitration of that instant, and is routed at once: the fine path then
        // grants the output it asks for to the first such head its events reach, in the
        // order they happen to be queued, which the coarse path's events do not follow
        // (see the test `the_coarse_path_would_differ_with_routing_of_no_delay`); such
        // networks step by flit.
        let mut flit_times = outs.iter().filter(|o| o.peer_input.is_some()).map(|o| o.flit_time);
        let tau = flit_times.next().unwrap_or(SimTime::from_ps(1));
        let uniform = flit_times.all(|t| t == tau);
        let routes_in_time = routing_latency > SimTime::ZERO;
        #[cfg(test)]
        let routes_in_time = routes_in_time || tests::FORCE_COARSE.with(std::cell::Cell::get);
        Ok(WormholeFabric {
            #[cfg(test)]
            signals: Vec::new(),
            scratch_inputs: Vec::new(),
            scratch_runs: Vec::new(),
            coarse: uniform && routes_in_time && params.granularity == Granularity::Coarse,
            tau,
            params,
            routing_latency,
            senders: adapters.iter().map(|_| Sender::default()).collect(),
            port_device: wiring
                .owner
                .iter()
                .map(|o| wiring.device_index(o.device) as u32)
                .collect(),
            adapters,
            wiring,
            routes,
            outs,
            ins,
            packets: Slab::new(),
            traversals: BTreeMap::new(),
            share: None,
        })
    }

    /// The bytes of the records [`crate::footprint`] counts, as built.
    #[cfg(test)]
    pub(crate) fn counted_bytes(&self) -> u64 {
        let bytes = |capacity: usize, size: usize| (capacity * size) as u64;
        bytes(self.adapters.capacity(), size_of::<AdapterParams>())
            + self.wiring.counted_bytes()
            + self.routes.counted_bytes()
            + bytes(self.outs.capacity(), size_of::<OutPort>())
            + bytes(self.ins.capacity(), size_of::<InPort>())
            + bytes(self.port_device.capacity(), size_of::<u32>())
            + bytes(self.senders.capacity(), size_of::<Sender>())
    }

    /// Whether this fabric can be one partition of a split network: the fine path
    /// only.
    pub(crate) fn can_be_split<S: TraceSink>(&self) -> Result<(), &'static str> {
        if self.coarse_now::<S>() {
            return Err(
                "its wormhole switches are simulated in runs of flits (granularity coarse, the default); give them granularity fine (flit by flit, the same results) to split it, or run it whole (1 partition)",
            );
        }
        Ok(())
    }

    /// Makes this fabric partition `part` of a network split as `of_device` says.
    pub(crate) fn share(&mut self, part: u32, of_device: Vec<u32>) {
        self.share = Some(Box::new(WormShare {
            split: Split::new(part, of_device),
            by_packet: HashMap::new(),
            leaving: Vec::new(),
        }));
    }

    /// What this partition keeps of the split (`None`: whole). A message's record
    /// comes by number (`by_number`) when it enters an adapter here or its first flit
    /// crosses here, and goes when it is delivered here or its last tail has left.
    pub(crate) fn split(&mut self) -> Option<&mut Split> {
        self.share.as_mut().map(|s| &mut s.split)
    }

    /// The partition `port`'s device is in, if it is another than this one's.
    #[inline(always)]
    fn elsewhere(&self, port: u32) -> Option<u32> {
        self.share
            .as_ref()?
            .split
            .elsewhere(self.port_device[port as usize] as usize)
    }

    /// Takes in a flit or a signal another partition sent, in the place among its
    /// instant's events the sender gave it.
    pub(crate) fn receive<S: TraceSink>(
        &mut self,
        crossing: &Crossing,
        messages: &mut Slab<Message>,
        queue: &mut EventQueue<Event>,
        sink: &mut S,
    ) {
        let Some(share) = &mut self.share else {
            return;
        };
        let event = match crossing.event {
            CrossingEvent::Signal { port, signal } => signal.arrives(port),
            CrossingEvent::Flit { input, hop, flits } => {
                let number = crossing.message.number;
                let message = share.split.record_of(crossing, messages, &mut self.routes);
                let index = crossing.packet.index;
                let packet = match share.by_packet.get(&(number, index)) {
                    Some(&packet) => packet,
                    None => {
                        // Its head: a record of the packet here.
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
                };
                WormEvent::FlitArrives { input, packet, hop }
            }
            CrossingEvent::Routed { .. } | CrossingEvent::TailArrives => return,
        };
        queue.schedule_keyed(crossing.key, Event::Worm(event));
    }

    /// Sends `signal` from the input fed by `upstream`, to arrive at `at`.
    fn signal<S>(&mut self, upstream: u32, at: SimTime, signal: Signal, ctx: &mut Ctx<'_, S>) {
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
    fn cross_flit<S: TraceSink>(
        &mut self,
        (port, input, hop, to): (u32, u32, u16, u32),
        packet: u32,
        arrival: (u32, SimTime),
        ctx: &mut Ctx<'_, S>,
    ) {
        let (flit, at) = arrival;
        let p = self.packets[packet as usize];
        let event = WormEvent::FlitArrives { input, packet, hop };
        let key = EventQueue::<Event>::key_of(at, event.rank(), ctx.queue.reserve());
        let message = ctx.messages[p.message.index()];
        let Some(share) = &mut self.share else {
            return;
        };
        let flits = p.flits;
        let mut crossing = Crossing::bare(to, key, CrossingEvent::Flit { input, hop, flits });
        crossing.packet.index = p.index;
        crossing.packet.last = p.last;
        crossing.packet.head_in = at;
        crossing.message = message;
        share.split.crossings.push(crossing);
        if flit + 1 < p.flits {
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
        if !path_returns(
            &self.wiring,
            &self.routes,
            &share.split.of_device,
            path,
            share.split.part,
        ) {
            share.leaving.push((port, packet, p.last));
        }
    }

    /// `port` was released: a packet whose tail it sent away for good goes from this
    /// partition, with its message if that was the message's last packet.
    #[cold]
    fn let_go<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        let Some(share) = &mut self.share else {
            return;
        };
        let Some(i) = share.leaving.iter().position(|&(p, ..)| p == port) else {
            return;
        };
        let (_, packet, last) = share.leaving.swap_remove(i);
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

    /// The parameters of `host`'s adapter.
    pub(crate) fn adapter(&self, host: HostId) -> &AdapterParams {
        &self.adapters[host.index()]
    }

    /// The wiring and the routes, for walking paths.
    pub(crate) fn wiring_and_routes(&self) -> (&Wiring, &RouteTable) {
        (&self.wiring, &self.routes)
    }

    /// Messages waiting at `host`'s adapter with packets still to send.
    pub(crate) fn source_backlog(&self, host: HostId) -> usize {
        self.senders.get(host.index()).map_or(0, Sender::len)
    }

    /// A message enters its source adapter.
    pub(crate) fn inject<S: TraceSink>(&mut self, message: MessageId, ctx: &mut Ctx<'_, S>) {
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
    pub(crate) fn handle<S: TraceSink>(&mut self, event: WormEvent, ctx: &mut Ctx<'_, S>) -> Option<MessageId> {
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
        }
        None
    }

    /// `port` finished sending its worm's tail: it takes the next packet (adapter) or
    /// the next request (switch).
    fn release<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        let out = &mut self.outs[port as usize];
        let finished = out.worm.take();
        match out.owner.device {
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
        if self.share.is_some() {
            self.let_go(port, ctx);
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

    /// Sends the next flit on `port` if it can, now.
    fn tick<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
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
    fn depart<S: TraceSink>(&mut self, input: u32, ctx: &mut Ctx<'_, S>) {
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
    fn front_done<S: TraceSink>(&mut self, input: u32, ctx: &mut Ctx<'_, S>) {
        let inp = &mut self.ins[input as usize];
        inp.entries.pop_front();
        if !inp.entries.is_empty() {
            // Its head is in the buffer: routing starts now that it is at the front.
            let at = ctx.now + self.routing_latency;
            ctx.schedule(at, WormEvent::Routed { input });
        }
        self.check_hol(input, ctx);
    }

    fn flit_arrives<S: TraceSink>(
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

    /// A packet's tail reached its destination adapter: returns its message if that
    /// was the message's last packet.
    fn delivered<S>(&mut self, packet: u32, ctx: &mut Ctx<'_, S>) -> Option<MessageId> {
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
    pub(crate) fn final_deliveries<'a, S: TraceSink>(
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
    /// final (see [`Self::final_deliveries`]). Walking up its path from the output
    /// feeding the adapter: the packet's tail has left this output (its flits are on
    /// the cable or downstream), or it is in the adapter's memory, or every flit has
    /// arrived by `now` in the buffer this output sends from; otherwise that buffer's
    /// arrivals are planned to the tail and the output feeding it is held by the
    /// packet, with no STOP or GO on its way or due from the buffer, and the same
    /// holds one hop up. Outputs towards adapters are never stopped. Every buffer a
    /// packet has reached holds nothing ahead of it once its output is granted, and
    /// nothing behind it comes in before its tail: only its own flits, whose plans
    /// then stand.
    fn tail_settled(&self, packet: u32, now: SimTime) -> bool {
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

    /// The head at the front of `input` has been routed: it asks for its output.
    fn routed<S: TraceSink>(&mut self, input: u32, ctx: &mut Ctx<'_, S>) {
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
    fn arbitrate_soon<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) -> bool {
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
    fn schedule_arbitration<S>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        let o = &mut self.outs[port as usize];
        if o.worm.is_none() && !o.arbitrating && !o.requests.is_empty() {
            o.arbitrating = true;
            ctx.schedule(ctx.now, WormEvent::Arbitrate { port });
        }
    }

    /// An idle output grants one of the inputs that want it; the others wait, and a
    /// STOP kept out of the queue for them may be due.
    fn arbitrate<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        self.grant(port, ctx);
        self.undefer_requests(port, ctx);
    }

    /// Grants `port`, if it is idle, to one of the inputs that want it.
    fn grant<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
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
    fn waits_for_room<S: TraceSink>(&mut self, port: u32, waits: bool, ctx: &mut Ctx<'_, S>) {
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
    fn wake<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
        if !self.outs[port as usize].ticking {
            self.tick(port, ctx);
        }
    }

    /// Re-evaluates head-of-line blocking at every input of the switch owning `port`.
    fn check_hol_at<S: TraceSink>(&mut self, port: u32, ctx: &mut Ctx<'_, S>) {
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
    fn check_hol<S: TraceSink>(&mut self, input: u32, ctx: &mut Ctx<'_, S>) {
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
            | WormEvent::GoDue { input, .. } => input,
            WormEvent::TailArrives { packet, .. } => return self.packets[packet as usize].dst.index(),
        };
        self.port_device[port as usize] as usize
    }

    /// The routes, for source-routed packets' paths.
    pub(crate) fn routes_mut(&mut self) -> &mut RouteTable {
        &mut self.routes
    }

    fn host_port(&self, host: HostId) -> u32 {
        self.wiring.port(Endpoint {
            device: Device::Host(host),
            port: 0,
        }) as u32
    }
}

/// Bubble flow control: the packet slots of every switch input. A slot holds a packet
/// of the largest size the adapters cut; the slots lie wholly below the STOP threshold,
/// so an admitted packet never meets a STOP. A packet entering a ring needs two.
fn bubble_slots(params: &WormholeParams, adapters: &[AdapterParams], ins: &mut [InPort]) -> Result<(), BuildError> {
    let flit_bytes = u64::from(params.flit_bytes);
    let largest = adapters
        .iter()
        .map(|a| (u64::from(a.payload_bytes) + u64::from(a.header_bytes)).div_ceil(flit_bytes))
        .max()
        .unwrap_or(1);
    let mut needed = 0;
    let mut fewest = u64::MAX;
    for inp in ins.iter_mut() {
        let Some(t) = inp.thresholds else { continue };
        // Below the mark: the occupancy never reaches it.
        let slots = u64::from(t.high - 1) / largest;
        inp.slots = u32::try_from(slots).unwrap_or(u32::MAX);
        fewest = fewest.min(slots);
        needed = needed.max(2 * largest + 1 + u64::from(t.capacity - t.high));
    }
    if fewest < 2 {
        return Err(WormholeError::BubbleTooSmall {
            packet_bytes: largest * flit_bytes,
            buffer_bytes: params.buffer_bytes,
            room: fewest,
            needed_bytes: needed * flit_bytes,
        }
        .into());
    }
    Ok(())
}

fn port_ref(endpoint: Endpoint) -> PortRef {
    PortRef {
        device: endpoint.device,
        port: endpoint.port,
    }
}

#[cfg(test)]
mod tests;
