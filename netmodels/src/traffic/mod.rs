//! Open-loop synthetic traffic: a generator at every host, and the measurement of one
//! operating point (seed 002 §3.2.1.1 "independent traffic sources", §3.1.4 output).
//!
//! ```text
//!   generator (Bernoulli or Poisson, at the offered load)
//!      │ creates a packet: size, destination (pattern)
//!      ▼
//!   source queue (the adapter's; unlimited or bounded: a full queue drops) ─▶ network ─▶ sink
//!
//!   ├── warm-up ──┼──── measurement ────┼──── drain ─────┤
//!   statistics only for packets created   generators keep running; ends
//!   in the measurement window             when every measured packet arrived
//! ```
//!
//! Loads are fractions of a host link's rate on the wire (payload and headers): a load
//! of 0.5 sends half as many bytes as the host's link could carry, which is also 0.5
//! flits per host per flit time. Accepted throughput counts the wire bytes that
//! arrived during the measurement window, in the same unit. Latency from creation
//! includes the time in the source queue; latency from injection starts when the
//! packet's first byte left the adapter.
//!
//! Little's law is checked on the window: the time-average of the packets in the system
//! (created, not yet arrived) against the arrival rate times the mean latency from
//! creation.
//!
//! The point is saturated when the network does not keep up: accepted throughput below
//! the offered load by more than the statistical noise of the window, measured packets
//! still undelivered after the drain, packets dropped at full source queues, or a
//! population that keeps growing through the window.

pub mod pattern;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::adapter::AdapterParams;
use crate::ids::HostId;
use crate::message::{Delivery, InjectError, MessageSpec};
use crate::partition::ranks::{Words, put_u32, put_u64, put_u128};
use crate::partition::windows::Arrivals;
use crate::rails::MultiRail;
use crate::rng::Rng;
use crate::simulation::Simulation;
use crate::stats::{Histogram, Summary};
use crate::time::{Bandwidth, SimTime};

pub use pattern::{Destinations, PATTERN_SYNTAX, Pattern, PatternError, PatternParam};

/// The largest offered load accepted, in link rates.
pub const MAX_LOAD: f64 = 4.0;

/// When packets are created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Process {
    /// at every slot (one flit time) a packet is created with a fixed probability:
    /// geometric gaps, in whole slots
    #[default]
    Bernoulli,
    /// exponential gaps (a Poisson process), to the picosecond
    Poisson,
}

/// Packet (message) payload sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Sizes {
    /// every packet of this payload \[bytes\]
    Fixed(u32),
    /// uniform in `min..=max` \[bytes\]
    Uniform {
        /// smallest payload \[bytes\]
        min: u32,
        /// largest payload \[bytes\]
        max: u32,
    },
    /// `small` bytes, or `large` bytes with probability `large_percent` %
    Bimodal {
        /// the common size \[bytes\]
        small: u32,
        /// the rare size \[bytes\]
        large: u32,
        /// how often the rare size comes [%, 0 to 100]
        large_percent: u32,
    },
}

impl Sizes {
    fn draw(&self, rng: &mut Rng) -> u32 {
        match *self {
            Sizes::Fixed(bytes) => bytes,
            Sizes::Uniform { min, max } => min + rng.below(u64::from(max - min) + 1) as u32,
            Sizes::Bimodal {
                small,
                large,
                large_percent,
            } => {
                if rng.below(100) < u64::from(large_percent) {
                    large
                } else {
                    small
                }
            }
        }
    }

    /// The mean wire size of a message: payload plus a header per packet \[bytes\].
    fn mean_wire_bytes(&self, adapter: &AdapterParams) -> f64 {
        let wire =
            |payload: u32| f64::from(payload) + f64::from(adapter.packets(payload)) * f64::from(adapter.header_bytes);
        match *self {
            Sizes::Fixed(bytes) => wire(bytes),
            Sizes::Uniform { min, max } => {
                // Exact for small ranges, sampled evenly for large ones.
                let steps = u64::from(max - min).min(1024);
                let sum: f64 = (0..=steps)
                    .map(|i| wire(min + (u64::from(max - min) * i / steps.max(1)) as u32))
                    .sum();
                sum / (steps + 1) as f64
            }
            Sizes::Bimodal {
                small,
                large,
                large_percent,
            } => {
                let p = f64::from(large_percent) / 100.0;
                (1.0 - p) * wire(small) + p * wire(large)
            }
        }
    }
}

/// One operating point: what the generators do and how long each phase lasts.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrafficSpec {
    /// where packets go
    pub pattern: Pattern,
    /// when packets are created
    pub process: Process,
    /// offered load per host, a fraction of its link's rate on the wire (flits per host
    /// per flit time), above 0
    pub load: f64,
    /// packet payloads
    pub sizes: Sizes,
    /// messages a host's source queue holds (the one being sent included); a packet
    /// created at a full queue is dropped. `None`: unlimited
    pub source_queue: Option<u32>,
    /// time before the measurement window \[ps\]
    pub warmup: SimTime,
    /// the measurement window \[ps\]
    pub measure: SimTime,
    /// longest time after the window for measured packets to arrive \[ps\]
    pub drain: SimTime,
    /// seed of the generators and of a random permutation
    pub seed: u64,
}

/// What the network's hosts look like to the generators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostLink {
    /// the rate of a host's link (of one rail)
    pub bandwidth: Bandwidth,
    /// the adapters' packets
    pub adapter: AdapterParams,
    /// a Bernoulli slot and the unit of flit counts: one flit on the link
    pub flit_bytes: u32,
}

/// Why a point cannot be run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TrafficError {
    /// the pattern does not fit
    #[error(transparent)]
    Pattern(#[from] PatternError),
    /// the offered load is not a number above zero
    #[error("the offered load must be a positive number, not {load}")]
    LoadNotPositive {
        /// the load asked for
        load: f64,
    },
    /// the offered load is above [`MAX_LOAD`]
    #[error("the offered load {load} is above {max} times the link rate")]
    LoadTooHigh {
        /// the load asked for
        load: f64,
        /// the largest load accepted
        max: f64,
    },
    /// a measurement window of zero
    #[error("the measurement window must be longer than zero")]
    EmptyWindow,
    /// a flit of zero bytes
    #[error("a flit must hold at least one byte")]
    FlitEmpty,
    /// uniform sizes whose minimum is above their maximum
    #[error("sizes {min}..{max}: the minimum is above the maximum")]
    SizesReversed {
        /// the smallest payload \[bytes\]
        min: u32,
        /// the largest payload \[bytes\]
        max: u32,
    },
    /// a bimodal size's share above 100 %
    #[error("the large-size share is a percentage, not {large_percent}")]
    SharePastHundred {
        /// the share given [%]
        large_percent: u32,
    },
    /// packets of no payload and no header
    #[error("packets of zero bytes on the wire (no payload and no header) cannot load a link")]
    EmptyPackets,
    /// a Bernoulli source asked for more than one packet per slot
    #[error(
        "a Bernoulli source creates at most one packet per flit time: load {load} with packets of {wire_bytes:.0} \
         wire bytes needs {per_slot:.2} per slot (use Poisson, or larger packets)"
    )]
    BernoulliTooFast {
        /// the load asked for
        load: f64,
        /// the packets' mean size on the wire \[bytes\]
        wire_bytes: f64,
        /// the packets a slot would need
        per_slot: f64,
    },
    /// the model refused a packet (a bug in the generator)
    #[error(transparent)]
    Inject(#[from] InjectError),
}

/// Statistics of one operating point. Times in picoseconds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrafficResult {
    /// the offered load asked for (fraction of the link rate)
    pub offered_load: f64,
    /// the load the generators created during the window (drops included)
    pub created_load: f64,
    /// wire bytes that arrived during the window, same unit
    pub accepted_load: f64,
    /// packets created in the window
    pub created: u64,
    /// of those, dropped at a full source queue
    pub dropped: u64,
    /// of those, arrived (the latency samples)
    pub delivered: u64,
    /// of those, still travelling when the drain ended
    pub undelivered: u64,
    /// latency from creation of the measured packets \[ps\]
    pub latency: Option<Summary>,
    /// latency from injection (first byte out of the adapter) \[ps\]
    pub network_latency: Option<Summary>,
    /// links crossed by the measured packets (host links included); `None` when routes
    /// are chosen message by message, or the network has several rails or no links
    pub hops: Option<Summary>,
    /// utilisation of the links during the window; `None` as for `hops`
    pub links: Option<LinkLoad>,
    /// Little's law on the window
    pub little: Little,
    /// why the point counts as saturated; empty below saturation
    pub saturation: Vec<String>,
    /// flits that crossed a link, every delivered packet of the run (`None` as `hops`)
    pub flit_hops: Option<u64>,
    /// model events processed
    pub events: u64,
    /// simulated time at the end \[ps\]
    pub end: SimTime,
}

impl TrafficResult {
    /// Whether the network did not keep up with the offered load.
    pub fn saturated(&self) -> bool {
        !self.saturation.is_empty()
    }
}

/// Little's law, `L = λ W`, on the measurement window.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Little {
    /// time-average of the packets created and not yet arrived (`L`)
    pub in_system: f64,
    /// arrivals per picosecond during the window times the mean latency from creation
    /// of the measured packets (`λ W`)
    pub rate_times_latency: f64,
    /// `|L − λW| / L`
    pub relative_error: f64,
}

/// Link utilisation during the window: wire bytes of the packets that arrived in the
/// window, on every link of their path, over what the link could carry.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LinkLoad {
    /// links (directions) with a cable
    pub links: u32,
    /// mean over those links
    pub mean: f64,
    /// the busiest link's
    pub max: f64,
    /// the busiest links, busiest first: (`device.pPORT`, utilisation)
    pub busiest: Vec<(String, f64)>,
}

/// Runs one operating point on a freshly built network `net` (clock at zero).
pub fn run(net: &mut MultiRail, link: HostLink, spec: &TrafficSpec) -> Result<TrafficResult, TrafficError> {
    let hosts = net.hosts();
    check(spec, &link)?;
    let destinations = spec.pattern.destinations(hosts, spec.seed)?;
    let mut generator = Generator::new(hosts, link, spec)?;
    let mut meter = Meter::new(net, link, spec);
    let window_end = spec.warmup.saturating_add(spec.measure);
    let end = window_end.saturating_add(spec.drain);
    let mut deliveries = Vec::new();
    let mut rng = Rng::keyed(spec.seed, &[0x6465_7374]);
    if net.is_split() && spec.source_queue.is_none() {
        // Up to the window's end, no packet is dropped and the run cannot stop: the
        // partitions take the packets created in that time on their own, in parallel.
        let split = split_until_the_window_ends(net, generator, rng, &destinations, spec, &mut meter, window_end);
        (generator, rng) = split;
    }
    while let Some((at, host)) = generator.next_before(end) {
        if meter.all_measured_done(at, window_end) {
            break;
        }
        net.run_until(at, &mut deliveries);
        meter.record(|src, dst, ports| net.rails()[0].path(src, dst, ports), &deliveries);
        deliveries.clear();
        let size_bytes = spec.sizes.draw(&mut rng);
        let dst = destinations.pick(host, &mut rng);
        let measured = at >= spec.warmup && at < window_end;
        let wire = meter.wire_bytes(size_bytes);
        let full = spec
            .source_queue
            .is_some_and(|limit| net.source_backlog(host) >= limit as usize);
        if full {
            meter.dropped(at, measured, wire);
            continue;
        }
        meter.created(at, measured, wire);
        net.inject(
            at,
            MessageSpec {
                src: host,
                dst,
                size_bytes,
                cookie: 0,
            },
        )?;
    }
    // Drain: no more arrivals to wait for; run until the last measured packet is in.
    let mut limit = net.now();
    while !meter.all_measured_done(limit, window_end) && limit < end {
        limit = net.next_event_time().map_or(end, |t| t.min(end)).max(limit);
        net.run_until(limit, &mut deliveries);
        meter.record(|src, dst, ports| net.rails()[0].path(src, dst, ports), &deliveries);
        deliveries.clear();
    }
    Ok(meter.finish(net, spec, link, hosts))
}

/// An open-loop run's packets as a split network takes them
/// ([`MultiRail::run_open_loop`]): the generators and the draws of destinations and
/// sizes, in the order [`run`] makes them, up to the measurement window's end; and,
/// in each partition's copy, the statistics of that partition's packets.
#[derive(Debug, Clone)]
struct OpenLoop<'a> {
    generator: Generator,
    rng: Rng,
    destinations: &'a Destinations,
    sizes: Sizes,
    warmup: SimTime,
    /// the measurement window's end: the last packet taken is the last before it
    window_end: SimTime,
    /// packets taken so far (the last one's number)
    number: u64,
    meter: Meter,
}

impl Arrivals for OpenLoop<'_> {
    fn peek(&self) -> Option<SimTime> {
        self.generator
            .next
            .peek()
            .map(|Reverse((at, _))| *at)
            .filter(|&at| at < self.window_end)
    }

    fn take(&mut self) -> Option<(SimTime, MessageSpec, u64)> {
        let (at, host) = self.generator.next_before(self.window_end)?;
        let size_bytes = self.sizes.draw(&mut self.rng);
        let dst = self.destinations.pick(host, &mut self.rng);
        self.number += 1;
        let spec = MessageSpec {
            src: host,
            dst,
            size_bytes,
            cookie: 0,
        };
        Some((at, spec, self.number))
    }

    fn injected(&mut self, at: SimTime, spec: &MessageSpec) {
        let measured = at >= self.warmup && at < self.window_end;
        let wire = self.meter.wire_bytes(spec.size_bytes);
        self.meter.created(at, measured, wire);
    }

    fn completed(&mut self, sim: &Simulation, delivery: &Delivery) {
        self.meter.record(
            |src, dst, ports| sim.path(src, dst, ports),
            std::slice::from_ref(delivery),
        );
    }
}

/// Runs a split network (with no source queue limit) as [`run`]'s loop would, up to
/// the last packet created before the measurement window's end (till then no packet is
/// dropped and the loop cannot stop), with the partitions on threads, each measuring
/// its own packets; gives `meter` the sum, and returns the generator and the draws
/// where the loop goes on.
fn split_until_the_window_ends(
    net: &mut MultiRail,
    generator: Generator,
    rng: Rng,
    destinations: &Destinations,
    spec: &TrafficSpec,
    meter: &mut Meter,
    window_end: SimTime,
) -> (Generator, Rng) {
    let arrivals = OpenLoop {
        generator,
        rng,
        destinations,
        sizes: spec.sizes,
        warmup: spec.warmup,
        window_end,
        number: 0,
        meter: meter.clone(),
    };
    if arrivals.peek().is_none() {
        return (arrivals.generator, arrivals.rng);
    }
    let Some(copies) = net.run_open_loop(&arrivals) else {
        return (arrivals.generator, arrivals.rng);
    };
    // Every partition's meter is added as words: on ranks, this process has its own
    // partition's copy only, and the others' travel.
    let mut reached_start = false;
    let mut words = Vec::new();
    for copy in &copies {
        words.clear();
        copy.meter.put_words(&mut words);
        match net.rails()[0].ranks() {
            None => reached_start |= meter.absorb_words(&words),
            Some(ranks) => {
                for theirs in ranks.all_gather(&words) {
                    reached_start |= meter.absorb_words(&theirs);
                }
            }
        }
    }
    // The loop notes the population when time first reaches the window's start: every
    // packet created and delivered before then, none after.
    if reached_start {
        meter.population_start = Some(meter.created_before_start - meter.delivered_before_start);
    }
    let first = copies.into_iter().next().unwrap_or(arrivals);
    (first.generator, first.rng)
}

fn check(spec: &TrafficSpec, link: &HostLink) -> Result<(), TrafficError> {
    let load = spec.load;
    if !(load.is_finite() && load > 0.0) {
        return Err(TrafficError::LoadNotPositive { load });
    }
    // Far past any saturation; beyond, unbounded source queues only grow.
    if load > MAX_LOAD {
        return Err(TrafficError::LoadTooHigh { load, max: MAX_LOAD });
    }
    if spec.measure == SimTime::ZERO {
        return Err(TrafficError::EmptyWindow);
    }
    if link.flit_bytes == 0 {
        return Err(TrafficError::FlitEmpty);
    }
    match spec.sizes {
        Sizes::Uniform { min, max } if min > max => {
            return Err(TrafficError::SizesReversed { min, max });
        }
        Sizes::Bimodal { large_percent, .. } if large_percent > 100 => {
            return Err(TrafficError::SharePastHundred { large_percent });
        }
        _ => {}
    }
    if spec.sizes.mean_wire_bytes(&link.adapter) <= 0.0 {
        return Err(TrafficError::EmptyPackets);
    }
    Ok(())
}

/// The generators of every host: the next creation time of each.
#[derive(Debug, Clone)]
struct Generator {
    next: BinaryHeap<Reverse<(SimTime, u32)>>,
    rng: Rng,
    process: Process,
    /// Poisson: mean gap \[ps\]
    mean_gap_ps: f64,
    /// Bernoulli: slot length and the probability of a packet per slot
    slot: SimTime,
    probability: f64,
}

impl Generator {
    fn new(hosts: u32, link: HostLink, spec: &TrafficSpec) -> Result<Generator, TrafficError> {
        let flit_ps = link
            .bandwidth
            .serialization_time(u64::from(link.flit_bytes))
            .as_ps()
            .max(1);
        let bytes_per_ps = link.bandwidth.bytes_per_second_f64() * 1e-12;
        let mean_wire = spec.sizes.mean_wire_bytes(&link.adapter);
        // Packets per picosecond per host.
        let rate = spec.load * bytes_per_ps / mean_wire;
        let probability = rate * flit_ps as f64;
        if spec.process == Process::Bernoulli && probability > 1.0 {
            return Err(TrafficError::BernoulliTooFast {
                load: spec.load,
                wire_bytes: mean_wire,
                per_slot: probability,
            });
        }
        let mut g = Generator {
            next: BinaryHeap::with_capacity(hosts as usize),
            rng: Rng::keyed(spec.seed, &[0x6172_7276]),
            process: spec.process,
            mean_gap_ps: 1.0 / rate,
            slot: SimTime::from_ps(flit_ps),
            probability,
        };
        for host in 0..hosts {
            let first = g.gap(SimTime::ZERO);
            g.next.push(Reverse((first, host)));
        }
        Ok(g)
    }

    /// The time of the next packet after one at `now`.
    fn gap(&mut self, now: SimTime) -> SimTime {
        match self.process {
            Process::Poisson => {
                let gap = self.rng.exponential(self.mean_gap_ps).min(1e18) as u64;
                now.saturating_add(SimTime::from_ps(gap.max(1)))
            }
            Process::Bernoulli => {
                // Slots until the next success: geometric, at least one.
                let u = 1.0 - self.rng.unit();
                let slots = if self.probability >= 1.0 {
                    1.0
                } else {
                    // ln(1 − p) as ln_1p(−p): `1.0 - p` is exactly 1 for p below
                    // 1e-16, whose logarithm 0 made every slot a success.
                    (u.ln() / (-self.probability).ln_1p()).ceil().max(1.0)
                };
                let slot = self.slot.as_ps();
                // Slots are aligned on multiples of the slot length.
                let base = now.as_ps() / slot * slot;
                SimTime::from_ps(base.saturating_add((slots.min(1e15) as u64).saturating_mul(slot)))
            }
        }
    }

    /// The next (time, host) creation before `end`, scheduling that host's following one.
    fn next_before(&mut self, end: SimTime) -> Option<(SimTime, HostId)> {
        let Reverse((at, host)) = *self.next.peek()?;
        if at >= end {
            return None;
        }
        let following = self.gap(at);
        // The host's next creation takes its place at the top: one walk down the heap
        // instead of a pop's and a push's.
        if let Some(mut top) = self.next.peek_mut() {
            *top = Reverse((following, host));
        }
        Some((at, HostId(host)))
    }
}

/// Collects the statistics of a point as packets are created and arrive.
#[derive(Debug, Clone)]
struct Meter {
    adapter: AdapterParams,
    flit_bytes: u32,
    start: SimTime,
    window_end: SimTime,
    created: u64,
    created_bytes: u64,
    dropped: u64,
    delivered: u64,
    accepted_bytes: u64,
    arrivals_in_window: u64,
    latency: Histogram,
    network_latency: Histogram,
    hops: Option<Histogram>,
    flit_hops: u64,
    /// wire bytes per port during the window (only with fixed paths)
    port_bytes: Vec<u64>,
    path: Vec<u32>,
    /// ∫ packets in system dt over the window, as Σ(created) − Σ(arrived) of (end − t)
    area_in: u128,
    area_out: u128,
    /// packets in the system at the window's start and end
    population_start: Option<i64>,
    population: i64,
    /// packets created, and delivered, before the window's start (what the population
    /// at the start is, when partitions measure apart)
    created_before_start: i64,
    delivered_before_start: i64,
}

impl Meter {
    fn new(net: &MultiRail, link: HostLink, spec: &TrafficSpec) -> Meter {
        let fixed_paths = net.rails().len() == 1 && {
            let mut probe = Vec::new();
            net.rails()[0].path(HostId(0), HostId(net.hosts().saturating_sub(1)), &mut probe)
        };
        let ports = if fixed_paths { net.rails()[0].port_count() } else { 0 };
        Meter {
            adapter: link.adapter,
            flit_bytes: link.flit_bytes,
            start: spec.warmup,
            window_end: spec.warmup.saturating_add(spec.measure),
            created: 0,
            created_bytes: 0,
            dropped: 0,
            delivered: 0,
            accepted_bytes: 0,
            arrivals_in_window: 0,
            latency: Histogram::new(),
            network_latency: Histogram::new(),
            hops: fixed_paths.then(Histogram::new),
            flit_hops: 0,
            port_bytes: vec![0; ports],
            path: Vec::new(),
            area_in: 0,
            area_out: 0,
            population_start: None,
            population: 0,
            created_before_start: 0,
            delivered_before_start: 0,
        }
    }

    fn wire_bytes(&self, size_bytes: u32) -> u64 {
        u64::from(size_bytes) + u64::from(self.adapter.packets(size_bytes)) * u64::from(self.adapter.header_bytes)
    }

    /// Flits on one link of a message's packets (each packet its header and payload,
    /// rounded up to whole flits).
    fn flits(&self, size_bytes: u32) -> u64 {
        let payload = self.adapter.payload_bytes.max(1);
        let packets = self.adapter.packets(size_bytes);
        let last = size_bytes - (packets - 1) * payload;
        let per =
            |bytes: u32| (u64::from(bytes) + u64::from(self.adapter.header_bytes)).div_ceil(u64::from(self.flit_bytes));
        u64::from(packets - 1) * per(payload) + per(last)
    }

    /// Notes the population at the window's start once time passes it.
    fn tick(&mut self, now: SimTime) {
        if self.population_start.is_none() && now >= self.start {
            self.population_start = Some(self.population);
        }
    }

    fn created(&mut self, at: SimTime, measured: bool, wire: u64) {
        self.tick(at);
        self.population += 1;
        if at < self.start {
            self.created_before_start += 1;
        }
        if at < self.window_end {
            self.area_in += u128::from((self.window_end - at.max(self.start)).as_ps());
        }
        if measured {
            self.created += 1;
            self.created_bytes += wire;
        }
    }

    fn dropped(&mut self, at: SimTime, measured: bool, wire: u64) {
        self.tick(at);
        if measured {
            self.created += 1;
            self.created_bytes += wire;
            self.dropped += 1;
        }
    }

    /// Records `deliveries`; `path` gives the ports from a source to a destination.
    fn record(&mut self, path: impl Fn(HostId, HostId, &mut Vec<u32>) -> bool, deliveries: &[Delivery]) {
        for d in deliveries {
            self.tick(d.arrived);
            self.population -= 1;
            if d.arrived < self.start {
                self.delivered_before_start += 1;
            }
            let in_window = d.arrived >= self.start && d.arrived < self.window_end;
            if d.arrived < self.window_end {
                self.area_out += u128::from((self.window_end - d.arrived.max(self.start)).as_ps());
            }
            let wire = self.wire_bytes(d.size_bytes);
            let measured = d.injected_at >= self.start && d.injected_at < self.window_end;
            let fixed = self.hops.is_some();
            if fixed {
                self.path.clear();
                path(d.src, d.dst, &mut self.path);
                self.flit_hops += self.flits(d.size_bytes) * self.path.len() as u64;
                if in_window {
                    for &port in &self.path {
                        self.port_bytes[port as usize] += wire;
                    }
                }
            }
            if in_window {
                self.arrivals_in_window += 1;
                self.accepted_bytes += wire;
            }
            if measured {
                self.delivered += 1;
                self.latency.record((d.arrived - d.injected_at).as_ps());
                self.network_latency
                    .record(d.arrived.saturating_sub(d.first_byte_sent).as_ps());
                if let Some(h) = &mut self.hops {
                    h.record(self.path.len() as u64);
                }
            }
        }
    }

    /// Appends what this meter counted to `out` (the ports' bytes as the ports that
    /// carried any, and their bytes), for [`Meter::absorb_words`] in this process or on
    /// another rank.
    fn put_words(&self, out: &mut Vec<u8>) {
        for v in [
            self.created,
            self.created_bytes,
            self.dropped,
            self.delivered,
            self.accepted_bytes,
            self.arrivals_in_window,
            self.flit_hops,
        ] {
            put_u64(out, v);
        }
        self.latency.put_words(out);
        self.network_latency.put_words(out);
        match &self.hops {
            Some(h) => {
                out.push(1);
                h.put_words(out);
            }
            None => out.push(0),
        }
        let used = self.port_bytes.iter().filter(|&&b| b != 0).count();
        put_u64(out, used as u64);
        for (port, &b) in self.port_bytes.iter().enumerate().filter(|(_, b)| **b != 0) {
            put_u32(out, port as u32);
            put_u64(out, b);
        }
        put_u128(out, self.area_in);
        put_u128(out, self.area_out);
        put_u64(out, self.population_start.map_or(u64::MAX, |p| p as u64));
        for v in [self.population, self.created_before_start, self.delivered_before_start] {
            put_u64(out, v as u64);
        }
    }

    /// Adds what another partition's meter counted, as [`Meter::put_words`] wrote it
    /// (the population at the window's start is the caller's to set); returns whether
    /// that meter reached the window's start.
    fn absorb_words(&mut self, bytes: &[u8]) -> bool {
        let mut w = Words::new(bytes);
        self.created += w.u64();
        self.created_bytes += w.u64();
        self.dropped += w.u64();
        self.delivered += w.u64();
        self.accepted_bytes += w.u64();
        self.arrivals_in_window += w.u64();
        self.flit_hops += w.u64();
        self.latency.merge(&Histogram::from_words(&mut w));
        self.network_latency.merge(&Histogram::from_words(&mut w));
        if w.u8() == 1 {
            let theirs = Histogram::from_words(&mut w);
            if let Some(mine) = &mut self.hops {
                mine.merge(&theirs);
            }
        }
        for _ in 0..w.u64() {
            let port = w.u32() as usize;
            let b = w.u64();
            if let Some(mine) = self.port_bytes.get_mut(port) {
                *mine += b;
            }
        }
        self.area_in += w.u128();
        self.area_out += w.u128();
        let reached_start = w.u64() != u64::MAX;
        self.population += w.u64() as i64;
        self.created_before_start += w.u64() as i64;
        self.delivered_before_start += w.u64() as i64;
        reached_start
    }

    /// Whether, at `now`, the window is over and every measured packet has arrived.
    fn all_measured_done(&self, now: SimTime, window_end: SimTime) -> bool {
        now >= window_end && self.delivered + self.dropped == self.created
    }

    fn finish(mut self, net: &MultiRail, spec: &TrafficSpec, link: HostLink, hosts: u32) -> TrafficResult {
        self.tick(net.now());
        let window_ps = spec.measure.as_ps() as f64;
        let capacity = link.bandwidth.bytes_per_second_f64() * 1e-12 * window_ps * f64::from(hosts);
        let created_load = self.created_bytes as f64 / capacity;
        let accepted_load = self.accepted_bytes as f64 / capacity;
        let latency = self.latency.summary();
        let in_system = (self.area_in as f64 - self.area_out as f64) / window_ps;
        let rate_times_latency = self.arrivals_in_window as f64 / window_ps * latency.map_or(0.0, |l| l.mean);
        let little = Little {
            in_system,
            rate_times_latency,
            relative_error: if in_system > 0.0 {
                (in_system - rate_times_latency).abs() / in_system
            } else {
                0.0
            },
        };
        let undelivered = self.created - self.dropped - self.delivered;
        let mut saturation = Vec::new();
        // Accepted and created loads differ by noise of about 1/√n over n packets.
        let noise = 4.0 / (self.created.max(1) as f64).sqrt();
        let margin = created_load * noise.max(0.02);
        if accepted_load < created_load - margin {
            saturation.push(format!(
                "accepted {accepted_load:.3} is below the created load {created_load:.3}"
            ));
        }
        if undelivered > 0 {
            saturation.push(format!(
                "{undelivered} measured packets still travelling after the drain"
            ));
        }
        if self.dropped > 0 {
            saturation.push(format!("{} packets dropped at full source queues", self.dropped));
        }
        let grown = self.population - self.population_start.unwrap_or(0);
        if grown as f64 > 4.0 * (self.created as f64).sqrt() + f64::from(hosts) {
            saturation.push(format!(
                "{grown} more packets in the system at the end of the window than at its start"
            ));
        }
        let links = self.hops.is_some().then(|| self.link_load(net, window_ps));
        TrafficResult {
            offered_load: spec.load,
            created_load,
            accepted_load,
            created: self.created,
            dropped: self.dropped,
            delivered: self.delivered,
            undelivered,
            latency,
            network_latency: self.network_latency.summary(),
            hops: self.hops.as_ref().and_then(Histogram::summary),
            links,
            little,
            saturation,
            flit_hops: self.hops.is_some().then_some(self.flit_hops),
            events: net.events_processed(),
            end: net.now(),
        }
    }

    fn link_load(&self, net: &MultiRail, window_ps: f64) -> LinkLoad {
        let rail = &net.rails()[0];
        let mut loads: Vec<(f64, u32)> = (0..rail.port_count() as u32)
            .filter_map(|port| {
                let (_, link) = rail.port(port)?;
                let capacity = link?.bandwidth.bytes_per_second_f64() * 1e-12 * window_ps;
                Some((self.port_bytes[port as usize] as f64 / capacity, port))
            })
            .collect();
        let links = loads.len() as u32;
        let mean = loads.iter().map(|l| l.0).sum::<f64>() / f64::from(links.max(1));
        // Busiest first; ties by port number, for stable output.
        loads.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let name = |port: u32| {
            rail.port(port)
                .map_or_else(String::new, |(end, _)| format!("{}.p{}", end.device, end.port))
        };
        LinkLoad {
            links,
            mean,
            max: loads.first().map_or(0.0, |l| l.0),
            busiest: loads.iter().take(5).map(|&(u, port)| (name(port), u)).collect(),
        }
    }
}

#[cfg(test)]
mod tests;
