//! The partitioned engine: one simulation of a network split into `P` partitions, each
//! with its own event queue, run side by side on threads, giving what one queue gives.
//!
//! ```text
//!   window [t0, t0 + L)                          L: the lookahead (see `super::lookahead`)
//!   part 0: pop, handle … ─┐                     ┌─ take in the packets sent to it
//!   part 1: pop, handle … ─┼─▶ packets that  ───▶├─ …
//!   part 2: pop, handle … ─┘   crossed a cut     └─ next window: t0 = the least next
//!                              cable, by part       event time of every part
//! ```
//!
//! # Why the result is that of one queue
//!
//! - **Order keys do not depend on the partition.** An event's key is (time, rank,
//!   origin, the origin's own sequence), the origin being the device whose event
//!   scheduled it (see [`crate::queue`]). A device's events are handled in the same
//!   order whatever partition it is in, so it schedules the same events with the same
//!   keys. A packet that crosses a cut cable takes its next event's key with it.
//! - **Nothing arrives late.** Only packets (wormhole switches: flits, and STOP and GO
//!   signals) cross partitions, on cut cables, and what is sent at `t` takes effect at
//!   the far end no sooner than `t + L`: the cable's propagation, and for a packet the
//!   switch's routing decision (hosts go with their switch, so a host's cable is never
//!   cut). A window processes the events before `t0 + L`, so a
//!   packet sent in it is due in a later window, and is in its partition's queue by
//!   then. Within a window a partition's queue changes only by its own events, so it
//!   pops its events in the order one queue over the whole network would pop them.
//! - **Deliveries keep the one queue's order.** One queue pops the least key of all;
//!   a partition's next pop is the least of its own. So the one queue's order is the
//!   merge of the partitions' orders that always takes the partition whose next pop
//!   has the least key. An event scheduled at the current instant with a key below the
//!   one being handled (zero-delay cables) is popped at once, right after the event
//!   that scheduled it: each delivery is therefore tagged with the greatest key its
//!   partition has popped so far, and a stable sort on the tags (the partitions' lists
//!   one after the other) makes that merge (tags of different partitions are keys of
//!   different events, never equal).
//! - **Windows with no event are skipped:** each starts at the least next event time
//!   of every partition.
//!
//! Every device state lives in one partition: a host's adapter, a switch's ports,
//! queues and crossbar. A partition allocates only its own devices' port state and
//! crossbars (`NetworkBuilder::build_part`, `switch::packet::output_queued::Ports`); the
//! description every partition reads (wiring, routes) it holds whole. Messages have a
//! record in each partition their packets cross (by message number), released when
//! their last packet has left (see `simulation::Share`).
//!
//! The partitions of one process run on its threads ([`Partitioned::build`]); or each
//! is a process of its own, one per rank of an MPI job, every rank making the same
//! calls ([`Partitioned::build_on_ranks`], [`super::ranks`]): the window loop is the
//! same, with the next-event minimum and the crossing packets going through the
//! ranks' collectives instead of shared memory.
//!
//! Packet switches (output-queued and CIOQ) can be split, and wormhole switches on both
//! of their paths; the ideal network has no switch. Explicit routes drawn at random share one generator between every host's messages: every partition draws
//! for every message, its own and the others', in the order of their numbers
//! (`Simulation::entered_elsewhere`), so each message takes the route it takes whole.
//!
//! # The wormhole fabric
//!
//! - **Its events are ordered by device**, as packet switches' are, whether split or
//!   not. This changed no delivery when it came (every test passed unchanged), but the
//!   events come less ordered to the heap: about 5 % more wall time on one core.
//! - **Flit by flit, two events cross a cable**, each after its delay: a flit's
//!   arrival (with its packet's and message's records, taken the first time) and a
//!   signal reaching the output upstream (`switch::wormhole::WormShare`): a STOP, a
//!   GO, or with bubble flow control a credit (a packet slot freed in the buffer).
//! - **In runs of flits (the coarse path), a plan crosses instead of each flit**: an
//!   output's new plan of the flits it sends reaches the switch at the far end one
//!   cable delay later, with the packet's records the first time, and STOP and GO as
//!   on the fine path. Every cable between two switches works so, cut or not, so the
//!   network whole does what its partitions do (see "Crossing rules" in
//!   `switch::wormhole::coarse`).
//! - **The lookahead is the cable alone** (`NetworkBuilder::acting_latency`): a signal
//!   or a plan acts when it arrives, with no routing decision after it. So does a
//!   credit going up to a packet switch under UGAL-L (`Detour`): its output counts the
//!   bytes it sent until they start leaving the next switch.
//! - **Final deliveries walk across partitions**: on the coarse path, whether nothing
//!   can change a delivery is found by walking up the packet's path; a walk that
//!   reaches a cut cable goes on in the partition beyond it, round by round
//!   (`Partitioned::walked_finals`), each partition reading its own devices' state at
//!   the clock of the whole network.
//! - **Bubble flow control splits**: an output counts the slots it gave away in the
//!   buffer at the far end of its cable, and a slot is free for it again when the
//!   credit has come back up the cable. (Before credits travelled, the grant read the
//!   far buffer's state at once, and the fabric did not split.)
//! - **Records by presence:** a worm spans several switches, so a packet's record lives
//!   in every partition holding one of its flits, and goes once its tail has left for
//!   good.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::barrier::SpinBarrier;
use super::ranks::{self, Ranks, Reduce, Words};
use super::{PartitionError, Partitioning, lookahead, partition};
use crate::build_error::BuildError;
use crate::builder::NetworkBuilder;
use crate::crossing::Crossing;
use crate::event::Event;
use crate::ids::HostId;
use crate::link::LinkParams;
use crate::message::{Delivery, InjectError, MessageSpec, check_injection};
use crate::part::{Arrival, Fixed};
use crate::queue::EventQueue;
use crate::simulation::Simulation;
use crate::time::SimTime;
use crate::topology::Endpoint;
use crate::trace::{NullSink, TraceSink};

/// Why a network cannot be split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SplitError {
    /// the network cannot be built
    #[error(transparent)]
    Build(#[from] BuildError),
    /// the partitions cannot be made
    #[error(transparent)]
    Partition(#[from] PartitionError),
    /// this kind of network cannot be split
    #[error("the network cannot be split into {parts} partitions: {why}")]
    Unsupported {
        /// partitions asked for
        parts: u32,
        /// why, and what to do instead
        why: &'static str,
    },
    /// a cut cable and its routing take no time: partitions could not run apart
    #[error(
        "a cable between two of the {parts} partitions and the routing decision after it take no time, so the partitions could never run apart: give the cables a propagation delay (or packet switches a routing latency; a wormhole switch acts on a STOP or GO, and on a new plan of the flits coming down a cable, as it arrives, and a packet switch under UGAL-L routing on a credit), or run the network whole (1 partition)"
    )]
    NoLookahead {
        /// partitions asked for
        parts: u32,
    },
}

/// A network simulated in partitions (see the module's documentation), or whole (one
/// partition); each partition traces into its own `S`, whose records merge into those
/// of the network whole.
#[derive(Debug)]
pub struct Partitioned<S: TraceSink = NullSink> {
    parts: Vec<Part<S>>,
    /// how the network is split (`None`: one partition)
    partitioning: Option<Partitioning>,
    /// the window's length; `SimTime::MAX` when no cable is cut
    lookahead: SimTime,
    /// messages injected so far (the last message's number)
    injected: u64,
    /// windows run so far
    windows: u64,
    /// packets that crossed a cut cable so far (on ranks: this rank's)
    crossings: u64,
    /// bytes this rank sent to others so far (on ranks)
    bytes_sent: u64,
    /// the other partitions' processes, when each partition is a process (see
    /// [`super::ranks`]); `parts` then holds this rank's partition only
    ranks: Option<Arc<dyn Ranks>>,
    /// who makes the collective calls on ranks
    role: Role,
    /// told calls in progress (see [`Partitioned::tell`])
    telling: Arc<AtomicU32>,
}

/// Who makes a split network's collective calls on ranks (see [`super::ranks`]).
#[derive(Debug, Clone)]
enum Role {
    /// every rank makes them itself, the same program on every rank (open-loop traffic)
    Peers,
    /// this rank (0) makes them and tells the others each one first, through `Lead`,
    /// naming the rail (of several) they are for: only it hears the clients of a
    /// co-simulation ([`Partitioned::lead`])
    Leader(Arc<Lead>, u32),
    /// this rank makes the calls rank 0 tells it ([`Partitioned::follow`])
    Follower,
}

/// Rank 0's side of a co-simulation on ranks: what tells the other ranks, which follow
/// one network after another ([`Partitioned::follow`]), every call rank 0's networks
/// make, each network's end, and at last that there is no more. Every network rank 0
/// builds for the run (or runs) must [lead](Partitioned::lead) with the same `Lead`,
/// and [`Lead::close`] must come once they are all done.
#[derive(Debug)]
pub struct Lead {
    ranks: Arc<dyn Ranks>,
    /// once closed, nothing more is told (a network dropped late ends nothing); the
    /// lock also keeps the networks of several threads from telling at once
    closed: Mutex<bool>,
}

impl Lead {
    /// Rank 0's lead of `ranks`.
    pub fn new(ranks: Arc<dyn Ranks>) -> Arc<Lead> {
        Arc::new(Lead {
            ranks,
            closed: Mutex::new(false),
        })
    }

    /// The ranks it leads.
    pub fn ranks(&self) -> &Arc<dyn Ranks> {
        &self.ranks
    }

    fn tell(&self, call: Call, rail: u32) {
        let closed = self.closed.lock().unwrap_or_else(|e| e.into_inner());
        if !*closed {
            self.ranks.broadcast(call.words(rail));
        }
    }

    /// Tells the followers that no other network follows: they stop following. Calls
    /// after it, and networks dropped after it, tell nothing.
    pub fn close(&self) {
        let mut closed = self.closed.lock().unwrap_or_else(|e| e.into_inner());
        if !*closed {
            self.ranks.broadcast(Call::Exit.words(0));
            *closed = true;
        }
    }
}

/// How following a network ended ([`Partitioned::follow`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Followed {
    /// rank 0's network is gone: another may follow (build it, and follow it)
    End,
    /// rank 0 leads no more networks ([`Lead::close`])
    Exit,
    /// rank 0's trace writer makes this collective step: make it too, then follow on
    /// (see [`Partitioned::tell_trace`])
    Trace(TraceStep),
}

/// A collective step of a network trace written from ranks (see
/// [`crate::trace::paraver`]), which rank 0 tells the others like the network's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceStep {
    /// write what every rank's sinks can release
    Write,
    /// close the sinks and write everything left
    Finish,
}

/// A collective call rank 0 tells the others it makes (see [`Partitioned::lead`]).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Call {
    Inject(SimTime, MessageSpec),
    RunUntil(SimTime),
    FinalDeliveries(SimTime),
    AdvanceClock(SimTime),
    Now,
    NextEventTime,
    EventsProcessed,
    EventsByPartition,
    InFlight,
    SourceBacklog(HostId),
    Crossings,
    BytesExchanged,
    /// the leader's network is gone: following it ends
    End,
    /// the leader leads no more networks
    Exit,
    /// a step of the network trace's writer
    Trace(TraceStep),
}

impl Call {
    /// The call for rail `rail`, as told: its tag, its time, the rail, and a message's
    /// fields for an injection.
    fn words(self, rail: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let (tag, time) = match self {
            Call::Inject(at, _) => (0, at),
            Call::RunUntil(t) => (1, t),
            Call::FinalDeliveries(t) => (2, t),
            Call::AdvanceClock(t) => (3, t),
            Call::Now => (4, SimTime::ZERO),
            Call::NextEventTime => (5, SimTime::ZERO),
            Call::EventsProcessed => (6, SimTime::ZERO),
            Call::EventsByPartition => (7, SimTime::ZERO),
            Call::InFlight => (8, SimTime::ZERO),
            Call::SourceBacklog(host) => (9, SimTime::from_ps(u64::from(host.0))),
            Call::Crossings => (10, SimTime::ZERO),
            Call::BytesExchanged => (11, SimTime::ZERO),
            Call::End => (12, SimTime::ZERO),
            Call::Exit => (13, SimTime::ZERO),
            Call::Trace(TraceStep::Write) => (14, SimTime::ZERO),
            Call::Trace(TraceStep::Finish) => (15, SimTime::ZERO),
        };
        out.push(tag);
        ranks::put_u64(&mut out, time.as_ps());
        ranks::put_u32(&mut out, rail);
        if let Call::Inject(_, spec) = self {
            ranks::put_u32(&mut out, spec.src.0);
            ranks::put_u32(&mut out, spec.dst.0);
            ranks::put_u32(&mut out, spec.size_bytes);
            ranks::put_u64(&mut out, spec.cookie);
        }
        out
    }

    /// A told call and the rail it is for.
    fn read(bytes: &[u8]) -> (Call, u32) {
        let mut w = Words::new(bytes);
        let tag = w.u8();
        let time = w.time();
        let rail = w.u32();
        let call = match tag {
            0 => Call::Inject(
                time,
                MessageSpec {
                    src: HostId(w.u32()),
                    dst: HostId(w.u32()),
                    size_bytes: w.u32(),
                    cookie: w.u64(),
                },
            ),
            1 => Call::RunUntil(time),
            2 => Call::FinalDeliveries(time),
            3 => Call::AdvanceClock(time),
            4 => Call::Now,
            5 => Call::NextEventTime,
            6 => Call::EventsProcessed,
            7 => Call::EventsByPartition,
            8 => Call::InFlight,
            9 => Call::SourceBacklog(HostId(time.as_ps() as u32)),
            10 => Call::Crossings,
            11 => Call::BytesExchanged,
            12 => Call::End,
            14 => Call::Trace(TraceStep::Write),
            15 => Call::Trace(TraceStep::Finish),
            _ => Call::Exit,
        };
        (call, rail)
    }
}

/// A told call or trace step in progress ([`Partitioned::tell_trace`]): calls made
/// within it are not told again (the followers make them within theirs).
#[derive(Debug)]
pub struct Told(Arc<AtomicU32>);

impl Drop for Told {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One partition.
#[derive(Debug)]
struct Part<S: TraceSink> {
    sim: Simulation<S>,
    /// the greatest order key popped so far (see the module's documentation)
    max_key: u128,
    /// deliveries of the current `run_until`, tagged
    delivered: Vec<(u128, Delivery)>,
    /// packets sent to other partitions in the current window
    sent: Vec<Crossing>,
}

impl Partitioned<NullSink> {
    /// Builds the network of `builder` split into `parts` partitions.
    pub fn build(builder: NetworkBuilder, parts: u32) -> Result<Partitioned, SplitError> {
        Partitioned::build_traced(builder, parts, |_| NullSink)
    }

    /// Builds this rank's partition of the network of `builder` split into one
    /// partition per rank of `ranks` (see [`super::ranks`]): every rank calls it, with
    /// the same `builder`, and gets the same error if any.
    pub fn build_on_ranks(builder: NetworkBuilder, ranks: Arc<dyn Ranks>) -> Result<Partitioned, SplitError> {
        Partitioned::build_traced_on_ranks(builder, ranks, NullSink)
    }
}

impl<S: TraceSink + Send> Partitioned<S> {
    /// Builds the network of `builder` split into `parts` partitions, partition `p`
    /// tracing into `sink(p)` (their records merge into those of the network whole:
    /// see [`crate::trace::paraver`]).
    pub fn build_traced(
        builder: NetworkBuilder,
        parts: u32,
        mut sink: impl FnMut(u32) -> S,
    ) -> Result<Partitioned<S>, SplitError> {
        let split = match Split::prepare(&builder, parts)? {
            None => return Ok(Partitioned::whole(builder.build_with_sink(sink(0))?)),
            Some(split) => split,
        };
        let mut sims = Vec::new();
        for part in 0..parts {
            sims.push(Part::new(split.build(builder.clone(), part, sink(part))?));
        }
        Ok(split.into_partitioned(sims, None))
    }

    /// [`Partitioned::build_on_ranks`], this rank's partition tracing into `sink`.
    pub fn build_traced_on_ranks(
        builder: NetworkBuilder,
        ranks: Arc<dyn Ranks>,
        sink: S,
    ) -> Result<Partitioned<S>, SplitError> {
        let split = match Split::prepare(&builder, ranks.size())? {
            None => return Ok(Partitioned::whole(builder.build_with_sink(sink)?)),
            Some(split) => split,
        };
        let one = split.build(builder, ranks.rank(), sink)?;
        Ok(split.into_partitioned(vec![Part::new(one)], Some(ranks)))
    }
}

/// How a network is split: what every partition shares.
struct Split {
    partitioning: Partitioning,
    lookahead: SimTime,
    /// the partition of every device, hosts first
    of_device: Vec<u32>,
}

impl Split {
    /// How `builder`'s network is split into `parts` (`None`: one, the network whole),
    /// from its topology as it stands (never copied: a million-host network's cables
    /// are a few hundred megabytes).
    fn prepare(builder: &NetworkBuilder, parts: u32) -> Result<Option<Split>, SplitError> {
        if parts == 0 {
            return Err(PartitionError::Zero.into());
        }
        if parts == 1 {
            return Ok(None);
        }
        let Some(topology) = builder.topology() else {
            return Err(PartitionError::MoreThanSwitches { parts, switches: 0 }.into());
        };
        let partitioning = partition(topology, parts)?;
        let lookahead = match lookahead(topology, &partitioning, builder.acting_latency(), 0) {
            None => SimTime::MAX,
            Some(SimTime::ZERO) => return Err(SplitError::NoLookahead { parts }),
            Some(l) => l,
        };
        let of_device: Vec<u32> = partitioning
            .host_parts()
            .iter()
            .chain(partitioning.switch_parts())
            .copied()
            .collect();
        Ok(Some(Split {
            partitioning,
            lookahead,
            of_device,
        }))
    }

    /// Partition `part`'s simulation of `builder`'s network: it holds its own devices'
    /// state only, and hands what it sends to others to the engine.
    fn build<S: TraceSink>(&self, builder: NetworkBuilder, part: u32, sink: S) -> Result<Simulation<S>, SplitError> {
        let parts = self.partitioning.parts();
        let mut sim = builder.build_part(part, &self.of_device, sink)?;
        if let Err(why) = sim.can_be_split() {
            return Err(SplitError::Unsupported { parts, why });
        }
        sim.share(part, self.of_device.clone());
        Ok(sim)
    }

    fn into_partitioned<S: TraceSink>(self, parts: Vec<Part<S>>, ranks: Option<Arc<dyn Ranks>>) -> Partitioned<S> {
        Partitioned {
            parts,
            partitioning: Some(self.partitioning),
            lookahead: self.lookahead,
            injected: 0,
            windows: 0,
            crossings: 0,
            bytes_sent: 0,
            ranks,
            role: Role::Peers,
            telling: Arc::default(),
        }
    }
}

impl<S: TraceSink + Send> Partitioned<S> {
    /// The simulation `sim`, whole.
    pub fn whole(sim: Simulation<S>) -> Partitioned<S> {
        Partitioned {
            parts: vec![Part::new(sim)],
            partitioning: None,
            lookahead: SimTime::MAX,
            injected: 0,
            windows: 0,
            crossings: 0,
            bytes_sent: 0,
            ranks: None,
            role: Role::Peers,
            telling: Arc::default(),
        }
    }

    /// In co-simulation on ranks, where only rank 0 hears the clients: on rank 0, makes
    /// this network tell every collective call it makes, through `lead`, to the other
    /// ranks, which [`Partitioned::follow`] it, and its end when it is dropped. A network
    /// on other ranks, or not on ranks, is not changed.
    pub fn lead(&mut self, lead: &Arc<Lead>) {
        let telling = self.telling.clone();
        self.lead_rail(lead, 0, telling);
    }

    /// [`Partitioned::lead`] as rail `rail` of several (see [`MultiRail::lead`]): its
    /// calls name the rail, calls within another told call of any rail (`telling`,
    /// shared by the rails) are not told, and only rail 0 tells the end.
    ///
    /// [`MultiRail::lead`]: crate::MultiRail::lead
    pub(crate) fn lead_rail(&mut self, lead: &Arc<Lead>, rail: u32, telling: Arc<AtomicU32>) {
        if self.ranks.as_ref().is_some_and(|r| r.rank() == 0 && r.size() > 1) {
            self.role = Role::Leader(lead.clone(), rail);
            self.telling = telling;
        }
    }

    /// On a rank other than 0: makes every call rank 0's network makes (see
    /// [`Partitioned::lead`]), in turn, until that network is dropped or rank 0 leads no
    /// more ([`Lead::close`]), and says which. Returns at once on rank 0 or off ranks.
    pub fn follow(&mut self) -> Followed {
        follow_rails(std::slice::from_mut(self))
    }

    /// Makes a call rank 0's network told.
    fn obey(&mut self, call: Call, deliveries: &mut Vec<Delivery>) {
        match call {
            // Handled by `follow_rails`.
            Call::End | Call::Exit | Call::Trace(_) => {}
            // Refused alike on every rank.
            Call::Inject(at, spec) => drop(self.inject(at, spec)),
            Call::RunUntil(limit) => self.run_until(limit, deliveries),
            Call::FinalDeliveries(since) => self.final_deliveries(since, deliveries),
            Call::AdvanceClock(time) => self.advance_clock(time),
            Call::Now => drop(self.now()),
            Call::NextEventTime => drop(self.next_event_time()),
            Call::EventsProcessed => drop(self.events_processed()),
            Call::EventsByPartition => drop(self.events_by_partition()),
            Call::InFlight => drop(self.in_flight()),
            Call::SourceBacklog(host) => drop(self.source_backlog(host)),
            Call::Crossings => drop(self.crossings()),
            Call::BytesExchanged => drop(self.bytes_exchanged()),
        }
        deliveries.clear();
    }

    /// Before a collective step of a network trace written from ranks: on a leader,
    /// tells the followers `step` (their [`Partitioned::follow`] returns it, and they
    /// make the step too). The network's calls made while the returned guard lives are
    /// not told: the followers make them within their step.
    pub fn tell_trace(&self, step: TraceStep) -> Option<Told> {
        self.tell(Call::Trace(step))
    }

    /// Before a collective call: on a leader, tells the followers `call`, unless it is
    /// made within another told call.
    fn tell(&self, call: Call) -> Option<Told> {
        let Role::Leader(lead, rail) = &self.role else {
            return None;
        };
        if self.telling.fetch_add(1, Ordering::Relaxed) == 0 {
            lead.tell(call, *rail);
        }
        Some(Told(self.telling.clone()))
    }

    /// The first partition (the whole network if it is not split): what does not
    /// depend on the partition (the wiring, the routes, the horizon) is read there.
    pub fn first(&self) -> &Simulation<S> {
        &self.parts[0].sim
    }

    /// The trace sinks, partition by partition.
    pub fn sinks(&self) -> impl Iterator<Item = &S> {
        self.parts.iter().map(|p| p.sim.sink())
    }

    /// The trace sinks, partition by partition.
    pub fn sinks_mut(&mut self) -> impl Iterator<Item = &mut S> {
        self.parts.iter_mut().map(|p| p.sim.sink_mut())
    }

    /// See [`Simulation::safe_horizon`]: the same in every partition.
    pub fn safe_horizon(&self, t: SimTime) -> SimTime {
        self.first().safe_horizon(t)
    }

    /// See [`Simulation::path`].
    pub fn path(&self, src: HostId, dst: HostId, ports: &mut Vec<u32>) -> bool {
        self.first().path(src, dst, ports)
    }

    /// See [`Simulation::port_count`].
    pub fn port_count(&self) -> usize {
        self.first().port_count()
    }

    /// See [`Simulation::port`].
    pub fn port(&self, port: u32) -> Option<(Endpoint, Option<LinkParams>)> {
        self.first().port(port)
    }

    /// Appends to `out` the deliveries no message injected at `since` or later can
    /// change, in delivery order (see [`Simulation::final_deliveries`]): every
    /// partition's, in the order of their keys.
    pub fn final_deliveries(&mut self, since: SimTime, out: &mut Vec<Delivery>) {
        let _told = self.tell(Call::FinalDeliveries(since));
        if self.partitions() == 1 {
            self.parts[0].sim.final_deliveries(since, out);
            return;
        }
        let mut keyed = Vec::new();
        if self.parts.iter().any(|p| !p.sim.keeps_finals()) {
            self.walked_finals(&mut keyed);
        } else {
            for p in &mut self.parts {
                p.sim.final_deliveries_keyed(&mut keyed);
            }
        }
        let mut keyed = self.gather_tagged(keyed);
        keyed.sort_by_key(|&(key, _)| key);
        out.extend(keyed.into_iter().map(|(_, d)| d));
    }

    /// The final deliveries of fabrics that find them by walking up each packet's path
    /// (wormhole switches on the coarse path), appended to `keyed` with the keys of the
    /// events that make them: each partition walks up from its destinations while the
    /// path stays in it, then hands the walk to the partition the path goes on in
    /// (round by round, each round through the ranks' collectives), until every walk
    /// has ended; then each partition counts its messages' packets. With the clock of
    /// the whole network, every partition reads what one simulation would.
    fn walked_finals(&mut self, keyed: &mut Vec<(u128, Delivery)>) {
        let local_now = self.parts.iter().map(|p| p.sim.now()).max().unwrap_or(SimTime::ZERO);
        let now = SimTime::from_ps(self.reduce([local_now.as_ps()], Reduce::Max)[0]);
        let mut arrivals: Vec<Vec<Arrival>> = self
            .parts
            .iter()
            .map(|p| p.sim.final_arrivals(now).unwrap_or_default())
            .collect();
        // The partition number of local part `i`, and the local part of a partition.
        let rank = self.ranks.as_ref().map(|r| r.rank());
        let number_of = |i: usize| rank.unwrap_or(i as u32);
        let local = |part: u32| match rank {
            Some(r) => (part == r).then_some(0),
            None => Some(part as usize),
        };
        loop {
            // (origin partition, its arrival, where the walk goes on)
            let mut walks: Vec<(u32, u32, Fixed)> = Vec::new();
            for (i, list) in arrivals.iter().enumerate() {
                for (a, arrival) in list.iter().enumerate() {
                    if let Fixed::Elsewhere { .. } = arrival.fixed {
                        walks.push((number_of(i), a as u32, arrival.fixed));
                    }
                }
            }
            let walks = self.gather_walks(walks);
            if walks.is_empty() {
                break;
            }
            let mut answers = Vec::new();
            for (origin, a, fixed) in walks {
                let Fixed::Elsewhere {
                    part,
                    port,
                    number,
                    index,
                } = fixed
                else {
                    continue;
                };
                if let Some(i) = local(part) {
                    answers.push((origin, a, self.parts[i].sim.walk_on(number, index, port, now)));
                }
            }
            for (origin, a, fixed) in self.gather_walks(answers) {
                if let Some(i) = local(origin) {
                    arrivals[i][a as usize].fixed = fixed;
                }
            }
        }
        for (p, list) in self.parts.iter().zip(&arrivals) {
            p.sim.finals_of(list, keyed);
        }
    }

    /// On ranks, every rank's `walks` (`walks` themselves otherwise): (origin partition,
    /// its arrival, the walk's state).
    fn gather_walks(&self, walks: Vec<(u32, u32, Fixed)>) -> Vec<(u32, u32, Fixed)> {
        let Some(ranks) = &self.ranks else {
            return walks;
        };
        let mut bytes = Vec::new();
        for (origin, a, fixed) in walks {
            ranks::put_u32(&mut bytes, origin);
            ranks::put_u32(&mut bytes, a);
            match fixed {
                Fixed::Yes => bytes.push(0),
                Fixed::No => bytes.push(1),
                Fixed::Elsewhere {
                    part,
                    port,
                    number,
                    index,
                } => {
                    bytes.push(2);
                    ranks::put_u32(&mut bytes, part);
                    ranks::put_u32(&mut bytes, port);
                    ranks::put_u64(&mut bytes, number);
                    ranks::put_u32(&mut bytes, index);
                }
            }
        }
        let mut all = Vec::new();
        for theirs in ranks.all_gather(&bytes) {
            let mut words = Words::new(&theirs);
            while !words.is_empty() {
                let (origin, a) = (words.u32(), words.u32());
                let fixed = match words.u8() {
                    0 => Fixed::Yes,
                    1 => Fixed::No,
                    _ => Fixed::Elsewhere {
                        part: words.u32(),
                        port: words.u32(),
                        number: words.u64(),
                        index: words.u32(),
                    },
                };
                all.push((origin, a, fixed));
            }
        }
        all
    }

    /// On ranks, every rank's `tagged` deliveries (`tagged` itself otherwise).
    fn gather_tagged(&self, tagged: Vec<(u128, Delivery)>) -> Vec<(u128, Delivery)> {
        let Some(ranks) = &self.ranks else {
            return tagged;
        };
        let mut bytes = Vec::new();
        for (tag, d) in &tagged {
            ranks::put_delivery(&mut bytes, *tag, d);
        }
        let mut all = Vec::new();
        for theirs in ranks.all_gather(&bytes) {
            let mut words = Words::new(&theirs);
            while !words.is_empty() {
                all.push(ranks::delivery(&mut words));
            }
        }
        all
    }

    /// On ranks, `values` combined over every rank (`values` themselves otherwise).
    fn reduce<const N: usize>(&self, mut values: [u64; N], op: Reduce) -> [u64; N] {
        if let Some(ranks) = &self.ranks {
            ranks.all_reduce(&mut values, op);
        }
        values
    }

    /// Number of partitions.
    pub fn partitions(&self) -> u32 {
        match &self.ranks {
            Some(ranks) => ranks.size(),
            None => self.parts.len() as u32,
        }
    }

    /// The ranks the partitions run on, each a process with one partition (`None`: the
    /// partitions are all in this process).
    pub fn ranks(&self) -> Option<&Arc<dyn Ranks>> {
        self.ranks.as_ref()
    }

    /// How the network is split (`None`: it is not).
    pub fn partitioning(&self) -> Option<&Partitioning> {
        self.partitioning.as_ref()
    }

    /// The length of a window: the least time from a packet crossing a cut cable to
    /// its effect at the far end (`SimTime::MAX`: nothing is cut).
    pub fn lookahead(&self) -> SimTime {
        self.lookahead
    }

    /// Windows run so far (each a step of every partition; none with one partition).
    pub fn windows(&self) -> u64 {
        self.windows
    }

    /// Packets that crossed a cut cable so far (on ranks a collective call: every
    /// rank's).
    pub fn crossings(&self) -> u64 {
        let _told = self.tell(Call::Crossings);
        self.reduce([self.crossings], Reduce::Sum)[0]
    }

    /// Bytes the ranks sent each other so far, packets and deliveries (on ranks a
    /// collective call; 0 for partitions on threads, which share memory).
    pub fn bytes_exchanged(&self) -> u64 {
        let _told = self.tell(Call::BytesExchanged);
        self.reduce([self.bytes_sent], Reduce::Sum)[0]
    }

    /// Number of hosts.
    pub fn hosts(&self) -> u32 {
        self.parts[0].sim.hosts()
    }

    /// The simulation clock: the time of the last event processed anywhere.
    ///
    /// On ranks, this and the other queries of the whole network below are collective
    /// calls (see [`super::ranks`]).
    pub fn now(&self) -> SimTime {
        let _told = self.tell(Call::Now);
        let now = self.parts.iter().map(|p| p.sim.now()).max().unwrap_or(SimTime::ZERO);
        SimTime::from_ps(self.reduce([now.as_ps()], Reduce::Max)[0])
    }

    /// Time of the next pending event of any partition.
    pub fn next_event_time(&self) -> Option<SimTime> {
        let _told = self.tell(Call::NextEventTime);
        let next = self.parts.iter().filter_map(|p| p.sim.next_event_time()).min();
        if self.ranks.is_none() {
            return next;
        }
        // An event may be due at the clock's very end: "none" travels apart.
        let [at, none] = self.reduce(
            [next.map_or(u64::MAX, SimTime::as_ps), u64::from(next.is_none())],
            Reduce::Min,
        );
        (none == 0).then(|| SimTime::from_ps(at))
    }

    /// Events processed so far, by every partition.
    pub fn events_processed(&self) -> u64 {
        let _told = self.tell(Call::EventsProcessed);
        let events = self.parts.iter().map(|p| p.sim.events_processed()).sum();
        self.reduce([events], Reduce::Sum)[0]
    }

    /// Events processed so far by each partition.
    pub fn events_by_partition(&self) -> Vec<u64> {
        let _told = self.tell(Call::EventsByPartition);
        let mine: Vec<u64> = self.parts.iter().map(|p| p.sim.events_processed()).collect();
        let Some(ranks) = &self.ranks else {
            return mine;
        };
        let mut bytes = Vec::new();
        ranks::put_u64(&mut bytes, mine[0]);
        ranks.all_gather(&bytes).iter().map(|b| Words::new(b).u64()).collect()
    }

    /// Messages injected and not yet delivered.
    pub fn in_flight(&self) -> usize {
        let _told = self.tell(Call::InFlight);
        let (entered, delivered) = self.parts.iter().fold((0u64, 0u64), |(e, d), p| {
            let (pe, pd) = p.sim.entered_and_delivered();
            (e + pe, d + pd)
        });
        let [entered, delivered] = self.reduce([entered, delivered], Reduce::Sum);
        entered.saturating_sub(delivered) as usize
    }

    /// Messages at `host`'s adapter with packets still to send.
    pub fn source_backlog(&self, host: HostId) -> usize {
        let _told = self.tell(Call::SourceBacklog(host));
        let mine = self.part_of(host).map_or(0, |p| self.parts[p].sim.source_backlog(host));
        self.reduce([mine as u64], Reduce::Sum)[0] as usize
    }

    /// The index in `parts` of `host`'s partition, if it is in this process.
    fn part_of(&self, host: HostId) -> Option<usize> {
        let Some(partitioning) = &self.partitioning else {
            return Some(0);
        };
        let part = *partitioning.host_parts().get(host.index())?;
        match &self.ranks {
            None => Some(part as usize),
            Some(ranks) => (part == ranks.rank()).then_some(0),
        }
    }

    /// Moves every partition's clock to `time` when no event is pending before it.
    pub fn advance_clock(&mut self, time: SimTime) {
        let _told = self.tell(Call::AdvanceClock(time));
        for p in &mut self.parts {
            p.sim.advance_clock(time);
        }
    }

    /// Hands a message to its source host's adapter at `at` (see
    /// [`Simulation::inject`]).
    ///
    /// On ranks every rank makes the same call; the source's rank takes the message.
    pub fn inject(&mut self, at: SimTime, spec: MessageSpec) -> Result<(), InjectError> {
        let _told = self.tell(Call::Inject(at, spec));
        if self.partitions() == 1 {
            self.parts[0].sim.inject(at, spec)?;
            return Ok(());
        }
        check_injection(self.hosts(), self.now(), at, spec)?;
        self.injected += 1;
        let source = self.part_of(spec.src);
        for (i, part) in self.parts.iter_mut().enumerate() {
            if source == Some(i) {
                part.sim.enter(at, spec, self.injected);
            } else {
                part.sim.entered_elsewhere(&spec);
            }
        }
        Ok(())
    }

    /// Processes every event at or before `limit`, appending completed messages to
    /// `deliveries` in the order one queue would complete them.
    ///
    /// On ranks every rank makes the same call and gets every delivery.
    pub fn run_until(&mut self, limit: SimTime, deliveries: &mut Vec<Delivery>) {
        let _told = self.tell(Call::RunUntil(limit));
        if self.partitions() == 1 {
            self.parts[0].sim.run_until(limit, deliveries);
            return;
        }
        if let Some(ranks) = self.ranks.clone() {
            self.windows_on_ranks(&*ranks, Until { limit });
        } else {
            let Some(first) = self.next_event_time().filter(|&t| t <= limit) else {
                return;
            };
            if limit < first.saturating_add(self.lookahead) {
                // One window: not worth the threads.
                self.window(limit);
            } else {
                self.run_windows_on_threads(limit);
            }
        }
        let mut tagged: Vec<(u128, Delivery)> = Vec::new();
        for p in &mut self.parts {
            tagged.append(&mut p.delivered);
        }
        let mut tagged = self.gather_tagged(tagged);
        tagged.sort_by_key(|&(tag, _)| tag);
        deliveries.extend(tagged.into_iter().map(|(_, d)| d));
    }

    /// One window, every partition in turn on this thread, up to `end` (included).
    fn window(&mut self, end: SimTime) {
        for p in &mut self.parts {
            p.run(end);
        }
        let mut crossings = Vec::new();
        for p in &mut self.parts {
            crossings.append(&mut p.sent);
        }
        self.crossings += crossings.len() as u64;
        for c in &crossings {
            self.parts[c.to as usize].sim.receive(c);
        }
        self.windows += 1;
    }

    /// Windows up to `limit`, one thread per partition.
    fn run_windows_on_threads(&mut self, limit: SimTime) {
        let drivers = (0..self.parts.len()).map(|_| Until { limit }).collect();
        self.on_threads(drivers);
    }

    /// Runs windows on this rank's partition, in step with the other ranks, with `driver`
    /// saying what it has to do and when (see [`Window`]), until no rank has anything;
    /// returns the driver.
    ///
    /// One exchange a window, as the threads' one meeting (see [`Self::on_threads`]):
    /// after its window a rank sends each rank its crossing packets and, last, the
    /// earliest time it knows of work (8 bytes); the next window starts at the earliest
    /// time received.
    fn windows_on_ranks<W: Window<S>>(&mut self, ranks: &dyn Ranks, mut driver: W) -> W {
        let lookahead = self.lookahead;
        let part = &mut self.parts[0];
        let mut t0 = [as_ps(driver.next(part))];
        ranks.all_reduce(&mut t0, Reduce::Min);
        let mut t0 = t0[0];
        while t0 != u64::MAX {
            part.window(&mut driver, SimTime::from_ps(t0), lookahead);
            let earliest = earliest_work(&driver, part);
            let mut out: Vec<Vec<u8>> = vec![Vec::new(); ranks.size() as usize];
            self.crossings += part.sent.len() as u64;
            for c in part.sent.drain(..) {
                ranks::put_crossing(&mut out[c.to as usize], &c);
            }
            for bytes in &mut out {
                ranks::put_u64(bytes, earliest);
            }
            self.bytes_sent += out.iter().map(|b| b.len() as u64).sum::<u64>();
            t0 = u64::MAX;
            for bytes in &ranks.exchange(out) {
                let (packets, time) = bytes.split_at(bytes.len().saturating_sub(8));
                t0 = t0.min(Words::new(time).u64());
                let mut words = Words::new(packets);
                while !words.is_empty() {
                    part.sim.receive(&ranks::crossing(&mut words));
                }
            }
            self.windows += 1;
        }
        driver
    }

    /// Runs windows on one thread per partition, each partition's `drivers` entry
    /// saying what it has to do and when (see [`Window`]), until no partition has
    /// anything; returns the drivers.
    ///
    /// The threads meet once a window. After its window a thread posts its crossing
    /// packets and the earliest time it knows of work: its own next event or injection,
    /// or a crossing it sent (which its receiver would count alike, as every driver
    /// bounds its work alike). Once all have come, each takes the packets sent to it and
    /// starts the next window at the earliest time posted. Posts alternate between two
    /// sets of boxes: a thread that runs ahead into the next window writes to the set no
    /// other thread reads until the meeting after it.
    fn on_threads<W: Window<S>>(&mut self, drivers: Vec<W>) -> Vec<W> {
        let n = self.parts.len();
        let lookahead = self.lookahead;
        let barrier = SpinBarrier::new(n);
        let next: [Vec<AtomicU64>; 2] = std::array::from_fn(|_| (0..n).map(|_| AtomicU64::new(u64::MAX)).collect());
        let mailboxes: [Vec<Mutex<Vec<Crossing>>>; 2] =
            std::array::from_fn(|_| (0..n).map(|_| Mutex::new(Vec::new())).collect());
        let outcomes: Vec<(u64, u64, W)> = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .parts
                .iter_mut()
                .zip(drivers)
                .enumerate()
                .map(|(me, (part, mut driver))| {
                    let (barrier, next, mailboxes) = (&barrier, &next, &mailboxes);
                    scope.spawn(move || {
                        let (mut windows, mut crossings) = (0u64, 0u64);
                        let mut set = 0;
                        next[set][me].store(as_ps(driver.next(part)), Ordering::Relaxed);
                        barrier.wait();
                        loop {
                            let t0 = next[set]
                                .iter()
                                .map(|t| t.load(Ordering::Relaxed))
                                .min()
                                .unwrap_or(u64::MAX);
                            if t0 == u64::MAX {
                                break;
                            }
                            part.window(&mut driver, SimTime::from_ps(t0), lookahead);
                            set = 1 - set;
                            let earliest = earliest_work(&driver, part);
                            crossings += part.sent.len() as u64;
                            for c in part.sent.drain(..) {
                                mailboxes[set][c.to as usize]
                                    .lock()
                                    .unwrap_or_else(|e| e.into_inner())
                                    .push(c);
                            }
                            next[set][me].store(earliest, Ordering::Relaxed);
                            barrier.wait();
                            let arrived =
                                std::mem::take(&mut *mailboxes[set][me].lock().unwrap_or_else(|e| e.into_inner()));
                            for c in &arrived {
                                part.sim.receive(c);
                            }
                            windows += 1;
                        }
                        (windows, crossings, driver)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        // Every thread ran the same windows.
        self.windows += outcomes.first().map_or(0, |o| o.0);
        self.crossings += outcomes.iter().map(|o| o.1).sum::<u64>();
        outcomes.into_iter().map(|o| o.2).collect()
    }
}

impl<S: TraceSink> Drop for Partitioned<S> {
    /// A leader's network going tells its followers that following it ends (rail 0's,
    /// for a network of several rails).
    fn drop(&mut self) {
        if let Role::Leader(lead, 0) = &self.role {
            lead.tell(Call::End, 0);
        }
    }
}

/// On a rank other than 0: makes every call rank 0's network of `rails` makes (see
/// [`Partitioned::lead`]), each on the rail it names, until that network is dropped, a
/// step of its trace comes, or rank 0 leads no more, and says which. Returns at once on
/// rank 0 or off ranks.
pub(crate) fn follow_rails<S: TraceSink + Send>(rails: &mut [Partitioned<S>]) -> Followed {
    let Some(ranks) = rails.first().and_then(|r| r.ranks.clone()).filter(|r| r.rank() != 0) else {
        return Followed::Exit;
    };
    for rail in rails.iter_mut() {
        rail.role = Role::Follower;
    }
    let mut deliveries = Vec::new();
    loop {
        let (call, rail) = Call::read(&ranks.broadcast(Vec::new()));
        match call {
            Call::End => return Followed::End,
            Call::Exit => return Followed::Exit,
            Call::Trace(step) => return Followed::Trace(step),
            // The same network on every rank: rank 0 names one of its rails.
            call => match rails.get_mut(rail as usize) {
                Some(rail) => rail.obey(call, &mut deliveries),
                None => return Followed::Exit,
            },
        }
    }
}

/// `t` in picoseconds, `u64::MAX` for none (what the partitions post of their work).
fn as_ps(t: Option<SimTime>) -> u64 {
    t.map_or(u64::MAX, SimTime::as_ps)
}

/// After a window: the earliest time `part` knows of work, in picoseconds (`u64::MAX`:
/// none): its own next event or injection, or a crossing packet it is about to send,
/// which its receiver's driver counts as `driver` does (every driver bounds its work
/// alike).
fn earliest_work<S: TraceSink, W: Window<S>>(driver: &W, part: &Part<S>) -> u64 {
    let sent = (part.sent.iter())
        .map(|c| EventQueue::<Event>::time_of(c.key))
        .filter(|&at| driver.counts(at))
        .map(SimTime::as_ps);
    sent.fold(as_ps(driver.next(part)), u64::min)
}

/// What one partition's thread does in [`Partitioned::on_threads`]'s windows.
trait Window<S: TraceSink>: Send {
    /// The earliest time this partition has something to do at; `None`: nothing more.
    fn next(&self, part: &Part<S>) -> Option<SimTime>;
    /// Whether an event at `at` is work for this driver: every partition's driver
    /// answers alike at the end of a window (a crossing's sender answers for its
    /// receiver).
    fn counts(&self, at: SimTime) -> bool;
    /// The work before a window that may run up to `end`; returns the end it runs to.
    fn open(&mut self, part: &mut Part<S>, end: SimTime) -> SimTime;
    /// The work after the window's events.
    fn close(&mut self, _part: &mut Part<S>) {}
}

/// [`Partitioned::run_until`]'s windows: the events up to `limit`, the deliveries kept
/// in the partitions.
struct Until {
    limit: SimTime,
}

impl<S: TraceSink> Window<S> for Until {
    fn next(&self, part: &Part<S>) -> Option<SimTime> {
        part.sim.next_event_time().filter(|&t| Window::<S>::counts(self, t))
    }

    fn counts(&self, at: SimTime) -> bool {
        at <= self.limit
    }

    fn open(&mut self, _part: &mut Part<S>, end: SimTime) -> SimTime {
        end.min(self.limit)
    }
}

/// An open-loop driver of a split network ([`Partitioned::run_open_loop`]): the whole
/// network's messages, in the order it injects them, and what it makes of them. Every
/// partition takes a copy, walks through every message and injects its own hosts'.
pub trait Arrivals: Clone + Send {
    /// The time of the next message; `None` once there is none.
    fn peek(&self) -> Option<SimTime>;
    /// Takes the next message: its time, itself, and its number among the network's
    /// injections (1 for the first).
    fn take(&mut self) -> Option<(SimTime, MessageSpec, u64)>;
    /// The message taken last was one of this copy's partition's, injected at `at`.
    fn injected(&mut self, at: SimTime, spec: &MessageSpec);
    /// A message of this copy's partition completed (`sim`: the partition, for what
    /// does not depend on it, such as paths).
    fn completed(&mut self, sim: &Simulation, delivery: &Delivery);
}

impl Partitioned<NullSink> {
    /// Injects every message of `arrivals`, each after the events before and at its
    /// time (as a driver that runs up to each message's time and then injects it), and
    /// processes every event up to the last message's time, the partitions on threads
    /// (or on ranks, every rank making the same call). Returns each partition's copy of
    /// `arrivals` where it stopped (at the first message after the last), having seen
    /// its own injections and completions (on ranks: this rank's copy only), and the
    /// number of messages delivered in the whole network.
    pub fn run_open_loop<A: Arrivals>(&mut self, arrivals: &A) -> (Vec<A>, u64) {
        let of_host: Vec<u32> = match &self.partitioning {
            Some(p) => p.host_parts().to_vec(),
            None => vec![0; self.hosts() as usize],
        };
        let driver = |me| OpenLoop {
            arrivals: arrivals.clone(),
            me,
            of_host: &of_host,
            last: None,
            bound: SimTime::MAX,
            taken: 0,
            delivered: 0,
        };
        let drivers = match self.ranks.clone() {
            Some(ranks) => vec![self.windows_on_ranks(&*ranks, driver(ranks.rank()))],
            None => {
                let drivers = (0..self.parts.len() as u32).map(driver).collect();
                self.on_threads(drivers)
            }
        };
        // Every partition walked the same messages.
        self.injected += drivers.first().map_or(0, |d| d.taken);
        let delivered = drivers.iter().map(|d| d.delivered).sum();
        let [delivered] = self.reduce([delivered], Reduce::Sum);
        (drivers.into_iter().map(|d| d.arrivals).collect(), delivered)
    }

    /// Messages injected so far into the whole network.
    pub fn injected(&self) -> u64 {
        self.injected
    }
}

/// [`Partitioned::run_open_loop`]'s windows, for partition `me`: before each, the
/// messages up to its end, this partition's injected in their turn; after it, the
/// deliveries handed to the driver.
struct OpenLoop<'a, A> {
    arrivals: A,
    me: u32,
    of_host: &'a [u32],
    /// the last message's time so far
    last: Option<SimTime>,
    /// the end: the last message's time, once there is no other
    bound: SimTime,
    taken: u64,
    delivered: u64,
}

impl<A: Arrivals> Window<NullSink> for OpenLoop<'_, A> {
    fn next(&self, part: &Part<NullSink>) -> Option<SimTime> {
        let event = part.sim.next_event_time().filter(|&t| self.counts(t));
        event.into_iter().chain(self.arrivals.peek()).min()
    }

    /// Every partition walks the same messages: its bound is every other's.
    fn counts(&self, at: SimTime) -> bool {
        at <= self.bound
    }

    fn open(&mut self, part: &mut Part<NullSink>, end: SimTime) -> SimTime {
        let end = end.min(self.bound);
        while self.arrivals.peek().is_some_and(|at| at <= end) {
            let Some((at, spec, number)) = self.arrivals.take() else {
                break;
            };
            self.taken += 1;
            self.last = Some(at);
            if self.of_host.get(spec.src.index()) == Some(&self.me) {
                part.run(at);
                part.sim.enter(at, spec, number);
                self.arrivals.injected(at, &spec);
            } else {
                part.sim.entered_elsewhere(&spec);
            }
        }
        if self.arrivals.peek().is_none() {
            self.bound = self.last.unwrap_or(SimTime::ZERO);
        }
        end.min(self.bound)
    }

    fn close(&mut self, part: &mut Part<NullSink>) {
        self.delivered += part.delivered.len() as u64;
        for (_, d) in part.delivered.drain(..) {
            self.arrivals.completed(&part.sim, &d);
        }
    }
}

impl<S: TraceSink> Part<S> {
    fn new(sim: Simulation<S>) -> Part<S> {
        Part {
            sim,
            max_key: 0,
            delivered: Vec::new(),
            sent: Vec::new(),
        }
    }

    /// The window that starts at `start` and lasts `lookahead`, as `driver` runs it.
    fn window<W: Window<S>>(&mut self, driver: &mut W, start: SimTime, lookahead: SimTime) {
        let end = start.saturating_add(lookahead - SimTime::from_ps(1));
        let end = driver.open(self, end);
        self.run(end);
        driver.close(self);
    }

    /// Runs this partition's events up to `end` (included).
    fn run(&mut self, end: SimTime) {
        self.sim.run_window(end, &mut self.delivered, &mut self.max_key);
        self.sim.take_crossings(&mut self.sent);
    }
}
