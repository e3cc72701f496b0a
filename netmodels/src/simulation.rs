//! The simulation: a frozen network (built by [`NetworkBuilder::build`]) and its event
//! loop.
//!
//! ```text
//!   inject ─▶ adapter: segment ─▶ out p0 ─▶ link ─▶ switch: route ─▶ output ─▶ link ─▶ … ─▶ adapter:
//!             (round-robin or     (link      (prop)  (latency)       (queue,           reassemble;
//!              FIFO packets)       rate)                              link rate)       complete at
//!                                                                                      last byte
//! ```
//!
//! Every output port (an adapter's or a switch's) sends one packet at a time at its
//! link's rate, cut-through: a packet may leave a switch before its tail has arrived,
//! but never finishes leaving before it. A message's first byte leaving the source
//! adapter is its physical send time; the last byte of its last packet reaching the
//! destination adapter completes it.
//!
//! This module holds what every fabric shares (messages, events, the event loop) and
//! the packet engine of the output-queued and CIOQ switches (adapters, packets, event
//! handling); the switches themselves live under [`crate::switch`]: output ports and
//! their queues in [`crate::switch::output_queued`], CIOQ input queues and crossbar in
//! [`crate::switch::cioq`], the wormhole fabric in [`crate::switch::wormhole`].

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use crate::adapter::{AdapterParams, Sender};
use crate::engine::EventQueue;
use crate::ids::{Device, HostId, MessageId, PortId, SwitchId};
use crate::link::LinkParams;
use crate::slab::Slab;
use crate::switch::cioq::Crossbar;
use crate::switch::output_queued::{OutPort, Ports};
use crate::switch::waiting::Waiting;
use crate::switch::wormhole::{Ctx, Signal, WormEvent, WormholeFabric};
use crate::switch::{SwitchKind, SwitchParams};
use crate::time::{Bandwidth, SimTime, seconds_text};
use crate::topology::{Endpoint, Route, RouteTable, Topology, TopologyError, Wiring, wire};
use crate::trace::{LinkTraversal, NullSink, PortRef, Source, TraceSink};

/// A message handed to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageSpec {
    /// source host
    pub src: HostId,
    /// destination host
    pub dst: HostId,
    /// payload \[bytes\]
    pub size_bytes: u32,
    /// the caller's own reference, returned in the [`Delivery`]
    pub cookie: u64,
}

/// A message whose last byte reached its destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    /// the caller's reference from the [`MessageSpec`]
    pub cookie: u64,
    /// source host
    pub src: HostId,
    /// destination host
    pub dst: HostId,
    /// payload \[bytes\]
    pub size_bytes: u32,
    /// when it was handed to the source adapter
    pub injected_at: SimTime,
    /// when its first byte left the source adapter
    pub first_byte_sent: SimTime,
    /// when its last byte reached the destination adapter
    pub arrived: SimTime,
}

/// Why a message was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InjectError {
    /// a host id beyond the network
    #[error("host {host} does not exist (the network has {hosts} hosts)")]
    UnknownHost {
        /// the host named
        host: HostId,
        /// hosts in the network
        hosts: u32,
    },
    /// a time before the simulation clock
    #[error("injection at {at} is before the simulation clock {now}")]
    InThePast {
        /// the time asked for
        at: SimTime,
        /// the clock
        now: SimTime,
    },
    /// a time after [`SimTime::LAST_INJECTION`]
    #[error(
        "injection at {at} leaves the message no room to arrive: messages must enter the network by {}",
        SimTime::LAST_INJECTION
    )]
    TooLate {
        /// the time asked for
        at: SimTime,
    },
}

/// Why a network cannot be built. Every variant names the parameter at fault (see
/// [`BuildError::parameter`]), so that a caller can say it in its own words: the flag or
/// the file line that set it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// the topology is invalid
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// the adapters cannot cut packets
    #[error("adapter.payload_bytes: a packet must carry at least one byte")]
    EmptyPayload,
    /// a packet's payload and header together do not fit in 32 bits
    #[error(
        "adapter.payload_bytes {payload_bytes} + adapter.header_bytes {header_bytes}: a packet's payload and header must add up to at most {} bytes",
        u32::MAX
    )]
    PacketTooLarge {
        /// largest payload of one packet \[bytes\]
        payload_bytes: u32,
        /// header of every packet \[bytes\]
        header_bytes: u32,
    },
    /// a time the parameters give is longer than the model's clock allows for it
    #[error(
        "{what} takes {}{}, longer than the {} the model allows for it (its clock counts 64-bit picoseconds, about 213 days)",
        if *took == SimTime::MAX { "more than " } else { "" },
        seconds_text(took.as_secs_f64()),
        seconds_text(limit.as_secs_f64())
    )]
    TooSlow {
        /// the parameter, and what it times
        what: Timed,
        /// how long it takes (saturated at [`SimTime::MAX`])
        took: SimTime,
        /// the most it may take: [`SimTime::LONGEST_STEP`], or
        /// [`IdealParams::LONGEST_DELAY`]
        limit: SimTime,
    },
    /// the wormhole switches' parameters do not work
    #[error("wormhole switches: {0}")]
    Wormhole(#[from] crate::switch::wormhole::WormholeError),
    /// the rails of a multi-rail network do not fit together
    #[error("rails: {0}")]
    Rails(#[from] crate::topology::multirail::RailsError),
    /// wormhole switches mixed with packet switches
    #[error("switch.kind: wormhole switches cannot share a network with output-queued or CIOQ switches")]
    MixedKinds,
    /// the network's records do not fit in memory
    #[error(
        "the network does not fit in memory: its {count} {what} take {:.1} GiB, which could not be allocated",
        *bytes as f64 / f64::from(1u32 << 30)
    )]
    TooLarge {
        /// what did not fit
        what: &'static str,
        /// how many of them
        count: usize,
        /// their size \[bytes\]
        bytes: u128,
    },
}

/// A parameter of a network's description, as a [`BuildError`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Parameter {
    /// [`AdapterParams::payload_bytes`]
    PayloadBytes,
    /// [`SwitchParams::routing_latency`]
    RoutingLatency,
    /// [`SwitchParams::kind`]
    SwitchKind,
    /// [`LinkParams::propagation`]
    LinkLatency,
    /// [`LinkParams::bandwidth`]
    LinkBandwidth,
    /// [`IdealParams::latency`]
    IdealLatency,
    /// [`IdealParams::bandwidth`]
    IdealBandwidth,
    /// [`WormholeParams::flit_bytes`](crate::WormholeParams::flit_bytes)
    FlitBytes,
    /// [`WormholeParams::buffer_bytes`](crate::WormholeParams::buffer_bytes)
    BufferBytes,
    /// [`WormholeParams::bubble`](crate::WormholeParams::bubble)
    Bubble,
    /// the round-robin arbiters' first port ([`InitialPointer`](crate::InitialPointer))
    InitialPointer,
    /// the rails of a multi-rail network
    Rails,
    /// the topology (its error names the part)
    Topology,
}

impl BuildError {
    /// The parameter at fault (`None`: the network as a whole, too large for memory).
    pub fn parameter(&self) -> Option<Parameter> {
        Some(match self {
            BuildError::Topology(_) => Parameter::Topology,
            BuildError::EmptyPayload | BuildError::PacketTooLarge { .. } => Parameter::PayloadBytes,
            BuildError::TooSlow { what, .. } => what.parameter(),
            BuildError::Wormhole(e) => e.parameter(),
            BuildError::Rails(_) => Parameter::Rails,
            BuildError::MixedKinds => Parameter::SwitchKind,
            BuildError::TooLarge { .. } => return None,
        })
    }
}

/// What takes too long, in a [`BuildError::TooSlow`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Timed {
    /// the ideal network's latency
    IdealLatency,
    /// the ideal network's transfer of its largest message
    IdealTransfer {
        /// the message \[bytes\]
        bytes: u64,
    },
    /// a switch's routing decision
    RoutingLatency,
    /// a cable's propagation
    Propagation {
        /// the cable's index
        cable: usize,
    },
    /// a packet's serialization on a cable
    Serialization {
        /// the cable's index
        cable: usize,
        /// the largest packet \[bytes\]
        bytes: u64,
    },
}

impl Timed {
    /// The parameter that sets the time.
    pub fn parameter(self) -> Parameter {
        match self {
            Timed::IdealLatency => Parameter::IdealLatency,
            Timed::IdealTransfer { .. } => Parameter::IdealBandwidth,
            Timed::RoutingLatency => Parameter::RoutingLatency,
            Timed::Propagation { .. } => Parameter::LinkLatency,
            Timed::Serialization { .. } => Parameter::LinkBandwidth,
        }
    }
}

impl std::fmt::Display for Timed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Timed::IdealLatency => write!(f, "ideal.latency"),
            Timed::IdealTransfer { bytes } => write!(f, "ideal.bandwidth: a message of {bytes} bytes"),
            Timed::RoutingLatency => write!(f, "switch.routing_latency"),
            Timed::Propagation { cable } => write!(f, "cables[{cable}].link.propagation"),
            Timed::Serialization { cable, bytes } => {
                write!(f, "cables[{cable}].link.bandwidth: a packet of {bytes} bytes")
            }
        }
    }
}

/// `took`, unless longer than `limit` ([`BuildError::TooSlow`], naming `what()`).
fn within(took: SimTime, limit: SimTime, what: Timed) -> Result<(), BuildError> {
    if took > limit {
        return Err(BuildError::TooSlow { what, took, limit });
    }
    Ok(())
}

/// An empty vector with room for `count` records, or [`BuildError::TooLarge`] instead of
/// the allocator's abort: a network just under the size limits may still not fit.
pub(crate) fn room_for<T>(count: usize, what: &'static str) -> Result<Vec<T>, BuildError> {
    let mut v = Vec::new();
    v.try_reserve_exact(count).map_err(|_| BuildError::TooLarge {
        what,
        count,
        bytes: count as u128 * size_of::<T>() as u128,
    })?;
    Ok(v)
}

/// The ideal network: every message arrives `latency + size / bandwidth` after it is
/// injected, whatever else is travelling. It adds nothing a replayer does not model
/// itself (Dimemas's point-to-point model), so a co-simulation over it must reproduce
/// the replayer's own prediction: the first step of a calibration.
///
/// Rounding: the serialisation time is rounded up to the next picosecond, once per
/// message; the latency is exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct IdealParams {
    /// rate of every transfer, with no sharing; `None`: instantaneous (Dimemas's
    /// bandwidth 0)
    pub bandwidth: Option<Bandwidth>,
    /// added to every transfer \[ps\]
    pub latency: SimTime,
}

impl IdealParams {
    /// How long `bytes` take to cross: no time when instantaneous.
    pub fn transfer(&self, bytes: u64) -> SimTime {
        self.bandwidth.map_or(SimTime::ZERO, |b| b.serialization_time(bytes))
    }

    /// The longest the latency may be, and the transfer of the largest message
    /// (`u32::MAX` bytes) take: 2^62 ps (about 53 days) each, so that a message that
    /// enters by [`SimTime::LAST_INJECTION`] arrives before the clock ends.
    pub const LONGEST_DELAY: SimTime = SimTime::from_ps(1 << 62);
}

#[derive(Debug, Clone)]
enum Kind {
    Switched {
        topology: Topology,
        switch: SwitchParams,
        adapter: AdapterParams,
        /// switches whose kind differs from `switch.kind`
        kinds: BTreeMap<SwitchId, SwitchKind>,
        /// hosts whose adapters differ from `adapter`
        adapters: BTreeMap<HostId, AdapterParams>,
    },
    Ideal {
        hosts: u32,
        params: IdealParams,
    },
}

/// Describes a network; [`NetworkBuilder::build`] validates it and freezes it.
#[derive(Debug, Clone)]
pub struct NetworkBuilder {
    kind: Kind,
}

impl NetworkBuilder {
    /// A network of `topology` with default switches and adapters.
    pub fn new(topology: Topology) -> Self {
        NetworkBuilder {
            kind: Kind::Switched {
                topology,
                switch: SwitchParams::default(),
                adapter: AdapterParams::default(),
                kinds: BTreeMap::new(),
                adapters: BTreeMap::new(),
            },
        }
    }

    /// Output-queued crossbar connecting `hosts` hosts with `link` cables.
    pub fn crossbar(hosts: u32, link: LinkParams) -> Self {
        NetworkBuilder::new(Topology::crossbar(hosts, link))
    }

    /// The ideal network of `hosts` hosts (see [`IdealParams`]).
    pub fn ideal(hosts: u32, params: IdealParams) -> Self {
        NetworkBuilder {
            kind: Kind::Ideal { hosts, params },
        }
    }

    /// Sets the parameters of every switch (no effect on the ideal network).
    pub fn switch_params(mut self, params: SwitchParams) -> Self {
        if let Kind::Switched { switch, .. } = &mut self.kind {
            *switch = params;
        }
        self
    }

    /// Sets the parameters of every adapter (no effect on the ideal network).
    pub fn adapter_params(mut self, params: AdapterParams) -> Self {
        if let Kind::Switched { adapter, .. } = &mut self.kind {
            *adapter = params;
        }
        self
    }

    /// Gives `host` adapters of other parameters than the others'.
    pub fn adapter_of(mut self, host: HostId, params: AdapterParams) -> Self {
        if let Kind::Switched { adapters, .. } = &mut self.kind {
            adapters.insert(host, params);
        }
        self
    }

    /// Makes `switch` of another kind than the others (output-queued and CIOQ switches
    /// mix; wormhole switches need a wormhole network).
    pub fn switch_kind_of(mut self, switch: SwitchId, kind: SwitchKind) -> Self {
        if let Kind::Switched { kinds, .. } = &mut self.kind {
            kinds.insert(switch, kind);
        }
        self
    }

    /// The switches' routing latency (zero for the ideal network).
    pub(crate) fn routing_latency(&self) -> SimTime {
        match &self.kind {
            Kind::Switched { switch, .. } => switch.routing_latency,
            Kind::Ideal { .. } => SimTime::ZERO,
        }
    }

    /// What a switch adds, after a cable's delay, before it acts on what came across
    /// it: a packet switch routes the head first; a wormhole switch acts at once on a
    /// STOP or GO.
    pub(crate) fn acting_latency(&self) -> SimTime {
        match &self.kind {
            Kind::Switched { switch, .. } if matches!(switch.kind, SwitchKind::Wormhole(_)) => SimTime::ZERO,
            _ => self.routing_latency(),
        }
    }

    /// The topology, unless the network is ideal.
    pub fn topology(&self) -> Option<&Topology> {
        match &self.kind {
            Kind::Switched { topology, .. } => Some(topology),
            Kind::Ideal { .. } => None,
        }
    }

    /// Number of hosts.
    pub fn hosts(&self) -> u32 {
        match &self.kind {
            Kind::Switched { topology, .. } => topology.hosts,
            Kind::Ideal { hosts, .. } => *hosts,
        }
    }

    /// Validates the description and builds the simulation, tracing nothing.
    pub fn build(self) -> Result<Simulation, BuildError> {
        self.build_with_sink(NullSink)
    }

    /// Validates the description and builds the simulation, tracing into `sink`.
    pub fn build_with_sink<S: TraceSink>(self, sink: S) -> Result<Simulation<S>, BuildError> {
        self.build_inner(sink, None)
    }

    /// The simulation of partition `part` of this network split as `of_device` says
    /// (the partition of every device, hosts first): the whole network but for the
    /// output ports' state, which it holds for its own devices only (see
    /// [`Simulation::share`], which it still needs).
    pub(crate) fn build_part<S: TraceSink>(
        self,
        part: u32,
        of_device: &[u32],
        sink: S,
    ) -> Result<Simulation<S>, BuildError> {
        self.build_inner(sink, Some((part, of_device)))
    }

    fn build_inner<S: TraceSink>(self, sink: S, part: Option<(u32, &[u32])>) -> Result<Simulation<S>, BuildError> {
        // Switches order the events of an instant by the device that scheduled them (see
        // `crate::engine`), so that partitions of the network order them alike; the
        // ideal network in the order of scheduling.
        let (hosts, fabric, reach, origins) = match self.kind {
            Kind::Ideal { hosts, params } => {
                if hosts == 0 {
                    return Err(TopologyError::NoHosts.into());
                }
                let longest = IdealParams::LONGEST_DELAY;
                within(params.latency, longest, Timed::IdealLatency)?;
                let largest = params.transfer(u64::from(u32::MAX));
                within(
                    largest,
                    longest,
                    Timed::IdealTransfer {
                        bytes: u64::from(u32::MAX),
                    },
                )?;
                // Messages never meet: nothing injected changes another's delivery.
                (hosts, Fabric::Ideal(params), SimTime::MAX, 1)
            }
            Kind::Switched {
                topology,
                switch,
                adapter,
                kinds,
                adapters,
            } => {
                let adapters: Vec<AdapterParams> = (0..topology.hosts)
                    .map(|h| adapters.get(&HostId(h)).copied().unwrap_or(adapter))
                    .collect();
                if adapters.iter().any(|a| a.payload_bytes == 0) {
                    return Err(BuildError::EmptyPayload);
                }
                // Packet sizes on the wire are u32: a packet must fit in one.
                if let Some(a) = adapters
                    .iter()
                    .find(|a| a.payload_bytes.checked_add(a.header_bytes).is_none())
                {
                    return Err(BuildError::PacketTooLarge {
                        payload_bytes: a.payload_bytes,
                        header_bytes: a.header_bytes,
                    });
                }
                // Times a path adds up stay far inside the clock (see `LONGEST_STEP`).
                let packet = adapters
                    .iter()
                    .map(|a| u64::from(a.payload_bytes) + u64::from(a.header_bytes))
                    .max()
                    .unwrap_or(0);
                within(switch.routing_latency, SimTime::LONGEST_STEP, Timed::RoutingLatency)?;
                for (i, cable) in topology.cables.iter().enumerate() {
                    within(
                        cable.link.propagation,
                        SimTime::LONGEST_STEP,
                        Timed::Propagation { cable: i },
                    )?;
                    let wire = cable.link.bandwidth.serialization_time(packet);
                    within(
                        wire,
                        SimTime::LONGEST_STEP,
                        Timed::Serialization {
                            cable: i,
                            bytes: packet,
                        },
                    )?;
                }
                let kind_of = |s: usize| kinds.get(&SwitchId(s as u32)).copied().unwrap_or(switch.kind);
                let wormholes = (0..topology.switch_ports.len())
                    .filter(|&s| matches!(kind_of(s), SwitchKind::Wormhole(_)))
                    .count();
                if wormholes != 0 && wormholes != topology.switch_ports.len() {
                    return Err(BuildError::MixedKinds);
                }
                if kinds
                    .values()
                    .any(|k| matches!(k, SwitchKind::Wormhole(_)) && *k != switch.kind)
                {
                    return Err(crate::switch::wormhole::WormholeError::OneParameterSet.into());
                }
                let wiring = wire(&topology)?;
                let routes = RouteTable::build(&topology, &wiring)?;
                if let SwitchKind::Wormhole(params) = switch.kind {
                    let reach = reach(&topology, switch.routing_latency, u64::from(params.flit_bytes));
                    let devices = topology.hosts as usize + topology.switch_ports.len();
                    let fabric = WormholeFabric::new(params, switch.routing_latency, adapters, wiring, routes)?;
                    return Ok(Simulation {
                        hosts: topology.hosts,
                        fabric: Fabric::Wormhole(Box::new(fabric)),
                        reach,
                        messages: Slab::new(),
                        injected: 0,
                        entered: 0,
                        delivered: 0,
                        injections_waiting: 0,
                        finals: Finals::default(),
                        queue: EventQueue::with_origins(devices),
                        sink,
                    });
                }
                let mut port_device = room_for(wiring.owner.len(), "ports")?;
                port_device.extend(wiring.owner.iter().map(|o| wiring.device_index(o.device) as u32));
                // A partition holds its own devices' ports only: another's are never
                // touched there.
                let own =
                    |port: usize| part.is_none_or(|(part, of_device)| of_device[port_device[port] as usize] == part);
                let mut ports = room_for((0..wiring.owner.len()).filter(|&p| own(p)).count(), "ports")?;
                ports.extend(
                    wiring
                        .owner
                        .iter()
                        .zip(&wiring.peer)
                        .enumerate()
                        .filter(|&(p, _)| own(p))
                        .map(|(_, (owner, peer))| OutPort::idle(*owner, *peer)),
                );
                let ports = match part {
                    None => Ports::every(ports),
                    Some(_) => Ports::of_some(ports, (0..wiring.owner.len()).map(own)),
                };
                let senders = (0..topology.hosts).map(|_| Sender::default()).collect();
                // Boxed: most switches have none (and a partition only its own).
                let hosts = topology.hosts as usize;
                let own_switch =
                    |s: usize| part.is_none_or(|(part, of_device)| of_device.get(hosts + s) == Some(&part));
                let crossbars = topology
                    .switch_ports
                    .iter()
                    .enumerate()
                    .map(|(s, &ports)| match kind_of(s) {
                        SwitchKind::Cioq(params) if own_switch(s) => Some(Box::new(Crossbar::new(params, ports))),
                        _ => None,
                    })
                    .collect();
                // Packets move whole from one device to the next, their heads first.
                let reach = reach(&topology, switch.routing_latency, 0);
                let switched = Switched {
                    crossbars,
                    switch,
                    adapters,
                    port_device,
                    wiring,
                    routes,
                    ports,
                    senders,
                    packets: Slab::new(),
                    waiting: Waiting::default(),
                    traversals: BTreeMap::new(),
                    sending: if S::ENABLED {
                        vec![(0, 0); topology.hosts as usize]
                    } else {
                        Vec::new()
                    },
                    scratch_matches: Vec::new(),
                    share: None,
                };
                let devices = topology.hosts as usize + topology.switch_ports.len();
                (topology.hosts, Fabric::Switched(Box::new(switched)), reach, devices)
            }
        };
        Ok(Simulation {
            hosts,
            fabric,
            reach,
            messages: Slab::new(),
            injected: 0,
            entered: 0,
            delivered: 0,
            injections_waiting: 0,
            finals: Finals::default(),
            queue: EventQueue::with_origins(origins),
            sink,
        })
    }
}

/// The least time from a message's injection to any change it can make to another
/// message's delivery on `topology` (see [`Simulation::safe_horizon`]): `unit_bytes` is
/// what a link must carry before the far end can act on it.
fn reach(topology: &Topology, routing_latency: SimTime, unit_bytes: u64) -> SimTime {
    let Some(cable) = topology
        .cables
        .iter()
        .map(|c| c.link.bandwidth.serialization_time(unit_bytes) + c.link.propagation)
        .min()
    else {
        return SimTime::MAX;
    };
    let host = |e: &Endpoint| matches!(e.device, Device::Host(_));
    if topology.cables.iter().any(|c| host(&c.a) && host(&c.b)) {
        return cable;
    }
    cable + routing_latency + cable
}

/// What carries the messages.
#[derive(Debug)]
enum Fabric {
    Ideal(IdealParams),
    Switched(Box<Switched>),
    Wormhole(Box<WormholeFabric>),
}

impl Fabric {
    /// What this partition keeps of the split, whatever the fabric (`None`: whole).
    fn split(&mut self) -> Option<&mut Split> {
        match self {
            Fabric::Switched(net) => net.share.as_mut().map(|s| &mut s.split),
            Fabric::Wormhole(net) => net.split(),
            Fabric::Ideal(_) => None,
        }
    }

    /// A message, number `number`, entered this partition's adapters: its record is
    /// found by number from now on (no effect unless partitioned).
    fn entered_here(&mut self, message: MessageId, number: u64) {
        match self {
            Fabric::Switched(net) => net.arrived_here(message, number),
            _ => {
                if let Some(split) = self.split() {
                    split.by_number.insert(number, message);
                }
            }
        }
    }

    /// A message, number `number`, was delivered here: its record goes (no effect
    /// unless partitioned).
    fn delivered_here(&mut self, message: MessageId, number: u64) {
        match self {
            Fabric::Switched(net) => {
                if let Some(share) = &mut net.share {
                    share.forget(message, number);
                }
            }
            _ => {
                if let Some(split) = self.split() {
                    split.by_number.remove(&number);
                }
            }
        }
    }
}

/// Adapters, links and switches: the packet engine of the output-queued and CIOQ
/// switches. Their own parts are `impl Switched` blocks beside them: output ports and
/// their queues in [`crate::switch::output_queued`], input queues and the crossbar in
/// [`crate::switch::cioq`].
#[derive(Debug)]
pub(crate) struct Switched {
    pub(crate) switch: SwitchParams,
    /// every host's adapter
    pub(crate) adapters: Vec<AdapterParams>,
    pub(crate) wiring: Wiring,
    /// the device (its index: hosts, then switches) of every port
    pub(crate) port_device: Vec<u32>,
    pub(crate) routes: RouteTable,
    pub(crate) ports: Ports,
    pub(crate) senders: Vec<Sender>,
    pub(crate) packets: Slab<Packet>,
    /// the packets waiting in queues, as runs (their slots in `packets` are free)
    pub(crate) waiting: Waiting,
    /// link traversals in progress, by (message, hop); only kept when tracing
    pub(crate) traversals: BTreeMap<(MessageId, u16), LinkTraversal>,
    /// per host, the message number and packet index of the segment its adapter is
    /// sending; only kept when tracing (in a split network the packet itself may have
    /// gone on to another partition before its tail left the adapter)
    pub(crate) sending: Vec<(u64, u32)>,
    /// the crossbar of each switch, for CIOQ switches
    pub(crate) crossbars: Vec<Option<Box<Crossbar>>>,
    /// the transfers a matching starts, kept between matchings (no allocation per match)
    pub(crate) scratch_matches: Vec<(u32, u32, PacketId)>,
    /// this network's part, when it is one partition of a larger one
    pub(crate) share: Option<Box<Share>>,
}

/// What a partition of a split network keeps, whatever its fabric (see
/// [`crate::partition::engine`]): where every device is, what it sent to the other
/// partitions, and the records of the messages it holds. Each fabric adds what it
/// needs to know when a message's record may go ([`Share`], and the wormhole's
/// `WormShare`).
#[derive(Debug)]
pub(crate) struct Split {
    /// this partition's number
    pub(crate) part: u32,
    /// the partition of every device: hosts, then switches
    pub(crate) of_device: Vec<u32>,
    /// what was sent to other partitions (packets, flits, signals), not yet handed over
    pub(crate) crossings: Vec<Crossing>,
    /// the messages this partition holds a record of, by number
    pub(crate) by_number: HashMap<u64, MessageId, BuildHasherDefault<NumberHasher>>,
    /// messages whose records this partition no longer needs, to release
    pub(crate) released: Vec<MessageId>,
}

impl Split {
    pub(crate) fn new(part: u32, of_device: Vec<u32>) -> Split {
        Split {
            part,
            of_device,
            crossings: Vec::new(),
            by_number: HashMap::default(),
            released: Vec::new(),
        }
    }

    /// The partition of the device of index `device` (hosts, then switches), if it is
    /// another than this one.
    #[inline(always)]
    pub(crate) fn elsewhere(&self, device: usize) -> Option<u32> {
        let to = self.of_device[device];
        (to != self.part).then_some(to)
    }

    /// The record here of the message `crossing` carries: found by its number, or made
    /// from the crossing's copy, its route made one of this partition's tables.
    pub(crate) fn record_of(
        &mut self,
        crossing: &Crossing,
        messages: &mut Slab<Message>,
        routes: &mut RouteTable,
    ) -> MessageId {
        *self.by_number.entry(crossing.message.number).or_insert_with(|| {
            let mut record = crossing.message;
            record.route = routes.localize(record.route, record.spec.src, record.spec.dst);
            MessageId(messages.insert(record))
        })
    }

    /// Message `message`, number `number`, has left this partition for good: its
    /// record goes at the end of the partition's step.
    pub(crate) fn let_go(&mut self, message: MessageId, number: u64) {
        self.by_number.remove(&number);
        self.released.push(message);
    }
}

/// What a partition of a network of packet switches keeps about the others.
#[derive(Debug)]
pub(crate) struct Share {
    split: Split,
    /// per message slot: its packets in this partition (cut and not yet gone, or
    /// arrived and not yet gone), and whether its last packet has left
    presence: Vec<(u32, bool)>,
}

impl Share {
    fn present(&mut self, message: MessageId, packets: u32) {
        let i = message.index();
        if self.presence.len() <= i {
            self.presence.resize(i + 1, (0, false));
        }
        self.presence[i].0 += packets;
    }

    fn forget(&mut self, message: MessageId, number: u64) {
        self.split.by_number.remove(&number);
        if let Some(p) = self.presence.get_mut(message.index()) {
            *p = (0, false);
        }
    }
}

/// Hashes message numbers (trusted, consecutive integers) with one multiplication
/// (Fibonacci hashing), which spreads them over every bit: the default hasher, built
/// against keys chosen to collide, cost 2 % of a split run.
#[derive(Debug, Default)]
pub(crate) struct NumberHasher(u64);

impl Hasher for NumberHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A packet sent across a cut cable, to the partition that handles its next event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Crossing {
    /// the partition it goes to
    pub(crate) to: u32,
    /// its next event's order key, the same in any partition
    pub(crate) key: u128,
    pub(crate) event: CrossingEvent,
    /// the packet (its message slot is the sender's)
    pub(crate) packet: Packet,
    /// its message's record as the sender has it
    pub(crate) message: Message,
}

/// The event a [`Crossing`] packet has next.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CrossingEvent {
    /// its head is routed at a switch, asking for `port`
    Routed { port: PortId },
    /// its tail reaches its destination adapter
    TailArrives,
    /// wormhole: one of its flits is wholly in input buffer `input`, at the switch of
    /// position `hop` on its path; the packet has `flits` flits
    Flit { input: u32, hop: u16, flits: u32 },
    /// wormhole: a STOP, a GO or a credit reaches the output `port` (no packet goes
    /// with it: the crossing's packet and message are empty)
    Signal { port: u32, signal: Signal },
}

impl Crossing {
    /// A crossing to partition `to` of `event`, with an empty packet and message (a
    /// signal's, or for the sender to fill in).
    pub(crate) fn bare(to: u32, key: u128, event: CrossingEvent) -> Crossing {
        let spec = MessageSpec {
            src: HostId(0),
            dst: HostId(0),
            size_bytes: 0,
            cookie: 0,
        };
        Crossing {
            to,
            key,
            event,
            packet: Packet {
                message: MessageId(0),
                index: 0,
                wire_bytes: 0,
                last: false,
                hop: 0,
                head_in: SimTime::ZERO,
                tail_at_next_input: SimTime::ZERO,
                in_port: 0,
            },
            message: Message {
                spec,
                number: 0,
                injected_at: SimTime::ZERO,
                first_byte_sent: SimTime::ZERO,
                bytes_unsent: 0,
                packets_cut: 0,
                packets_total: 0,
                packets_delivered: 0,
                route: Route::Table,
            },
        }
    }
}

/// A packet slot in the slab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PacketId(pub(crate) u32);

impl PacketId {
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// A packet inside the network.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Packet {
    pub(crate) message: MessageId,
    /// 0-based position within its message
    pub(crate) index: u32,
    /// header and payload \[bytes\]
    pub(crate) wire_bytes: u32,
    /// the last packet of its message
    pub(crate) last: bool,
    /// links crossed so far
    pub(crate) hop: u16,
    /// when the head reached the device it is at (or was cut, at the source)
    pub(crate) head_in: SimTime,
    /// when the tail reaches the input the head is heading for or waiting at
    pub(crate) tail_at_next_input: SimTime,
    /// global index of the input port it arrives at or waits in
    pub(crate) in_port: u32,
}

/// A message inside the model.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Message {
    pub(crate) spec: MessageSpec,
    /// its number in the simulation, 1 for the first injected (traces name it so)
    pub(crate) number: u64,
    pub(crate) injected_at: SimTime,
    pub(crate) first_byte_sent: SimTime,
    /// payload not yet cut into packets \[bytes\]
    pub(crate) bytes_unsent: u32,
    /// packets cut so far
    pub(crate) packets_cut: u32,
    /// packets it is cut into
    pub(crate) packets_total: u32,
    /// packets whose last byte reached the destination
    pub(crate) packets_delivered: u32,
    /// how its packets find their way
    pub(crate) route: Route,
}

/// The next packet an adapter cuts from a message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cut {
    /// 0-based position within the message
    pub(crate) index: u32,
    /// header and payload \[bytes\]
    pub(crate) wire_bytes: u32,
    /// the message's last packet
    pub(crate) last: bool,
}

impl Message {
    /// Where it comes from, for the trace of a partition it crosses into.
    pub(crate) fn source(&self) -> Source {
        Source {
            injected: self.injected_at,
            port: port_ref(host_port(self.spec.src)),
            first_out: self.first_byte_sent,
        }
    }

    /// The message's delivery, its last byte arriving at `arrived`.
    pub(crate) fn delivery(&self, arrived: SimTime) -> Delivery {
        Delivery {
            cookie: self.spec.cookie,
            src: self.spec.src,
            dst: self.spec.dst,
            size_bytes: self.spec.size_bytes,
            injected_at: self.injected_at,
            first_byte_sent: self.first_byte_sent,
            arrived,
        }
    }

    /// Cuts the next packet (payload up to the adapter's, plus its header) at `now`;
    /// the first one marks the message's physical send time.
    pub(crate) fn cut(&mut self, adapter: &AdapterParams, now: SimTime) -> Cut {
        let payload = self.bytes_unsent.min(adapter.payload_bytes);
        self.bytes_unsent -= payload;
        self.packets_cut += 1;
        if self.packets_cut == 1 {
            self.first_byte_sent = now;
        }
        Cut {
            index: self.packets_cut - 1,
            wire_bytes: payload + adapter.header_bytes,
            last: self.packets_cut == self.packets_total,
        }
    }
}

/// Everything that can happen. Small and `Copy`: the queue holds events by value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    /// the message enters its source adapter
    Inject { message: MessageId },
    /// a packet's head reached a switch and was routed: it requests the output
    Routed { packet: PacketId, port: PortId },
    /// an output finished sending its current packet
    PortFree { port: PortId },
    /// a packet's last byte reached its destination adapter
    TailArrives { packet: PacketId },
    /// a CIOQ switch matches free inputs to free outputs
    Match { switch: SwitchId },
    /// a CIOQ crossbar transfer ended (switch-local port numbers)
    CrossbarDone { switch: SwitchId, input: u32, output: u32 },
    /// the ideal network delivers a whole message
    Delivered { message: MessageId },
    /// an event of the wormhole fabric
    Worm(WormEvent),
}

/// A frozen network and its event loop, tracing into `S`.
#[derive(Debug)]
pub struct Simulation<S: TraceSink = NullSink> {
    hosts: u32,
    fabric: Fabric,
    /// the least time from a message's injection to any change it can make to another
    /// message's delivery (see [`Simulation::safe_horizon`]); `SimTime::MAX`: none
    reach: SimTime,
    messages: Slab<Message>,
    /// messages injected so far (the last message's number)
    injected: u64,
    /// messages that entered this simulation's adapters, and that it delivered (the
    /// same messages unless it is one partition of a network)
    entered: u64,
    delivered: u64,
    /// injections scheduled and not yet handled (see [`Self::events_processed`])
    injections_waiting: u64,
    /// the pending events that make final deliveries, once asked for (see [`Finals`])
    finals: Finals,
    queue: EventQueue<Event>,
    sink: S,
}

/// The pending events of the ideal network and the packet switches that make a final
/// delivery (the ideal network's, and a message's last packet arriving over its last
/// cable), by their place in the queue: the message each delivers. Kept from the first
/// [`Simulation::final_deliveries`] on (found then in the queue), as such events are
/// scheduled and handled: batched replies ask after every run, and a walk of the whole
/// queue each time cost a large network more than the round trips saved.
#[derive(Debug, Default)]
pub(crate) struct Finals {
    by_place: Option<BTreeMap<u128, MessageId>>,
}

impl Finals {
    /// Schedules `event` at `time` in `queue`; kept if it delivers `delivers`.
    pub(crate) fn schedule(
        &mut self,
        queue: &mut EventQueue<Event>,
        time: SimTime,
        event: Event,
        delivers: Option<MessageId>,
    ) {
        match (&mut self.by_place, delivers) {
            (Some(by_place), Some(message)) => {
                by_place.insert(queue.schedule_placed(time, event), message);
            }
            _ => queue.schedule(time, event),
        }
    }

    /// An event that delivers `message` came into the queue at `place`.
    fn scheduled(&mut self, place: u128, message: MessageId) {
        if let Some(by_place) = &mut self.by_place {
            by_place.insert(place, message);
        }
    }

    /// The event at `place` was handled.
    fn handled(&mut self, place: u128) {
        if let Some(by_place) = &mut self.by_place {
            by_place.remove(&place);
        }
    }
}

impl<S: TraceSink> Simulation<S> {
    /// The bytes of the records [`crate::footprint`] counts, as built: what the
    /// footprint's resident part estimates.
    #[cfg(test)]
    pub(crate) fn counted_bytes(&self) -> u64 {
        let bytes = |capacity: usize, size: usize| (capacity * size) as u64;
        let fabric = match &self.fabric {
            Fabric::Ideal(_) => 0,
            Fabric::Wormhole(net) => net.counted_bytes(),
            Fabric::Switched(net) => {
                bytes(net.adapters.capacity(), size_of::<AdapterParams>())
                    + net.wiring.counted_bytes()
                    + net.routes.counted_bytes()
                    + bytes(net.port_device.capacity(), size_of::<u32>())
                    + net.ports.counted_bytes()
                    + bytes(net.senders.capacity(), size_of::<Sender>())
                    + bytes(net.crossbars.capacity(), size_of::<Option<Box<Crossbar>>>())
                    + net.crossbars.iter().flatten().map(|x| x.counted_bytes()).sum::<u64>()
            }
        };
        fabric + self.queue.origins_bytes()
    }

    /// Number of hosts.
    pub fn hosts(&self) -> u32 {
        self.hosts
    }

    /// The simulation clock: the time of the last event processed.
    pub fn now(&self) -> SimTime {
        self.queue.now()
    }

    /// Time of the next pending event, if any.
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.queue.peek_time()
    }

    /// Appends to `out` the deliveries that no message injected at `since` or later can
    /// change, in the order the model will make them: those it has already fixed, the
    /// ideal network's (each is scheduled as its message enters, and messages never
    /// meet), the packet switches' whose last packet is on its last cable (its
    /// arrival is fixed when it starts, and the packets of a message arrive in order),
    /// and the wormhole switches' whose last worm nothing can hold any more (see
    /// `WormholeFabric::final_deliveries`: on the fine path its last flit is on the last
    /// cable; on the coarse path its plan stands, the worm holding its way to the
    /// destination with no flow-control signal under way). Deliveries within
    /// [`Simulation::safe_horizon`]`(since)` are final too, but the model only knows
    /// them by reaching them. The model still delivers each when it reaches its time.
    ///
    /// From the first call on, the ideal network and the packet switches keep the events
    /// that make such deliveries as they are scheduled and handled (`Finals`), so a
    /// call costs what it returns, not a walk of the queue; the wormhole fabric's are
    /// found in the queue each time.
    pub fn final_deliveries(&mut self, since: SimTime, out: &mut Vec<Delivery>) {
        // Fixed whatever comes later: `since` does not narrow them.
        let _ = since;
        let mut found = Vec::new();
        self.final_deliveries_keyed(&mut found);
        out.extend(found.into_iter().map(|(_, d)| d));
    }

    /// [`Self::final_deliveries`] with the keys of the events that make them, in key
    /// order (a partition's, to be merged with the others').
    pub(crate) fn final_deliveries_keyed(&mut self, out: &mut Vec<(u128, Delivery)>) {
        let delivery = |messages: &Slab<Message>, message: MessageId, arrived: SimTime| {
            messages[message.index()].delivery(arrived)
        };
        if let Fabric::Wormhole(net) = &self.fabric {
            // Found in the queue each time: whether nothing can hold a worm any more
            // changes as it goes.
            let events = self.queue.pending().filter_map(|(at, place, event)| match event {
                Event::Worm(e) => Some((at, place, e)),
                _ => None,
            });
            let mut fixed = Vec::new();
            net.final_deliveries::<S>(events, &self.messages, self.queue.now(), &mut fixed);
            fixed.sort_unstable_by_key(|&(place, _, _)| place);
            out.extend(
                fixed
                    .into_iter()
                    .map(|(place, at, message)| (place, delivery(&self.messages, message, at))),
            );
            return;
        }
        let by_place = self.finals.by_place.get_or_insert_with(|| {
            // The first time: the events already in the queue.
            let mut found = BTreeMap::new();
            for (_, place, event) in self.queue.pending() {
                match (event, &self.fabric) {
                    (Event::Delivered { message }, Fabric::Ideal(_)) => {
                        found.insert(place, *message);
                    }
                    (Event::TailArrives { packet }, Fabric::Switched(net)) => {
                        let p = &net.packets[packet.index()];
                        if p.last {
                            found.insert(place, p.message);
                        }
                    }
                    _ => {}
                }
            }
            found
        });
        // In the order the model will deliver them.
        out.extend(by_place.iter().map(|(&place, &message)| {
            let arrived = EventQueue::<Event>::time_of(place);
            (place, delivery(&self.messages, message, arrived))
        }));
    }

    /// The safe horizon at `t`: a time `h ≥ t` such that no message injected at `t` or
    /// later can change any delivery at or before `h` (deliveries at or before `h` that
    /// the model has reached are final).
    ///
    /// The argument, for a message M injected at host H at `t` or later:
    /// - on the ideal network messages never meet, so `h` is the end of time;
    /// - otherwise M can change another message's course only where it meets it: at
    ///   H's adapter (its packets are interleaved with the others of H, from `t`) or
    ///   at a switch (its head reaches the first one a cable later: a flit's
    ///   serialization for wormhole switches, whose links carry whole flits, nothing for
    ///   packet switches, whose heads run ahead of their tails; plus the cable's
    ///   propagation, plus the routing decision before it asks for an output; stop/go
    ///   signals and arbitration start from there too). A message it meets there then
    ///   needs at least one more cable to reach its host. A packet held at H's adapter
    ///   from `t` needs a cable, a routing decision and a cable too. So no delivery
    ///   changes before `t + reach`, `reach` = two of the quickest cables (each with
    ///   that serialization) and a routing decision, or one cable when a cable joins two
    ///   hosts;
    /// - a delivery at `t` itself that the model has reached is final: an injection at
    ///   `t` enters after the events of `t` already processed.
    ///
    /// So `h = t + reach − 1 ps` (`t` when `reach` is zero: zero-delay cables and
    /// routing, and packets of no serialization).
    pub fn safe_horizon(&self, t: SimTime) -> SimTime {
        if self.reach == SimTime::MAX {
            return SimTime::MAX;
        }
        t.saturating_add(self.reach.max(SimTime::from_ps(1))) - SimTime::from_ps(1)
    }

    /// Events processed so far.
    ///
    /// An injection counts from the moment it is handed over, whether its message enters
    /// the adapter at once or waits in the queue for the clock: so the count does not
    /// depend on where the clock stood when it came (on when clients synchronise, or on
    /// the partition its host is in).
    pub fn events_processed(&self) -> u64 {
        self.queue.processed() + self.injections_waiting
    }

    /// Messages injected and not yet delivered.
    pub fn in_flight(&self) -> usize {
        self.entered.saturating_sub(self.delivered) as usize
    }

    /// Messages that entered this simulation's adapters, and messages it delivered: in
    /// a partition of a network, those of its own hosts.
    pub(crate) fn entered_and_delivered(&self) -> (u64, u64) {
        (self.entered, self.delivered)
    }

    /// Appends to `ports` the output ports a message from `src` to `dst` leaves by (global
    /// port indices, see [`Self::port`]), its source adapter's first; its hop count is
    /// their number. Returns `false` (nothing appended) for the ideal network and for
    /// routes chosen message by message. Changes no routing state.
    pub fn path(&self, src: HostId, dst: HostId, ports: &mut Vec<u32>) -> bool {
        if src.0 >= self.hosts || dst.0 >= self.hosts {
            return false;
        }
        match &self.fabric {
            Fabric::Switched(net) => net.routes.walk(&net.wiring, src, dst, ports),
            Fabric::Wormhole(net) => {
                let (wiring, routes) = net.wiring_and_routes();
                routes.walk(wiring, src, dst, ports)
            }
            Fabric::Ideal(_) => false,
        }
    }

    /// Number of ports (every port of every host and switch): the range of the indices
    /// [`Self::path`] gives; 0 for the ideal network.
    pub fn port_count(&self) -> usize {
        self.wiring().map_or(0, |w| w.owner.len())
    }

    /// Port number `port` (a global index): the device port itself, and the link it
    /// transmits on if it has a cable.
    pub fn port(&self, port: u32) -> Option<(Endpoint, Option<LinkParams>)> {
        let wiring = self.wiring()?;
        let owner = *wiring.owner.get(port as usize)?;
        Some((owner, wiring.peer[port as usize].map(|(_, link)| link)))
    }

    fn wiring(&self) -> Option<&Wiring> {
        match &self.fabric {
            Fabric::Switched(net) => Some(&net.wiring),
            Fabric::Wormhole(net) => Some(net.wiring_and_routes().0),
            Fabric::Ideal(_) => None,
        }
    }

    /// Messages at `host`'s adapter with packets still to send (its source queue, the
    /// message being sent included); 0 for the ideal network, which has no adapters.
    pub fn source_backlog(&self, host: HostId) -> usize {
        match &self.fabric {
            Fabric::Switched(net) => net.senders.get(host.index()).map_or(0, Sender::len),
            Fabric::Wormhole(net) => net.source_backlog(host),
            Fabric::Ideal(_) => 0,
        }
    }

    /// Flow-control signals the wormhole fabric sent: (time, input, STOP?).
    #[cfg(test)]
    pub(crate) fn wormhole_signals(&self) -> Vec<(SimTime, u32, bool)> {
        match &self.fabric {
            Fabric::Wormhole(w) => w.signals.clone(),
            _ => Vec::new(),
        }
    }

    /// The trace sink.
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// The trace sink, for flushing.
    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    /// Hands a message to its source adapter at time `at` (not before [`Self::now`]).
    /// At the clock's own time (after [`Self::advance_clock`] to `at`), it enters the
    /// adapter at once if no other event comes first.
    pub fn inject(&mut self, at: SimTime, spec: MessageSpec) -> Result<MessageId, InjectError> {
        check_injection(self.hosts, self.now(), at, spec)?;
        let number = self.injected + 1;
        Ok(self.enter(at, spec, number))
    }

    /// Hands a checked message, the `number`th injected into the whole network, to its
    /// source adapter.
    pub(crate) fn enter(&mut self, at: SimTime, spec: MessageSpec, number: u64) -> MessageId {
        let route = match &mut self.fabric {
            Fabric::Switched(net) => net.routes.route(spec.src, spec.dst),
            Fabric::Wormhole(net) => net.routes_mut().route(spec.src, spec.dst),
            Fabric::Ideal(_) => Route::Table,
        };
        let packets_total = match &self.fabric {
            Fabric::Switched(net) => net.adapters[spec.src.index()].packets(spec.size_bytes),
            Fabric::Wormhole(net) => net.adapter(spec.src).packets(spec.size_bytes),
            Fabric::Ideal(_) => 1,
        };
        self.injected = number;
        let record = Message {
            spec,
            number,
            injected_at: at,
            first_byte_sent: SimTime::MAX,
            bytes_unsent: spec.size_bytes,
            packets_cut: 0,
            packets_total,
            packets_delivered: 0,
            route,
        };
        let message = MessageId(self.messages.insert(record));
        if S::ENABLED && !matches!(self.fabric, Fabric::Ideal(_)) {
            self.sink.injected(at, self.injected);
        }
        self.entered += 1;
        self.fabric.entered_here(message, number);
        if let Fabric::Switched(_) | Fabric::Wormhole(_) = self.fabric {
            // Its adapter schedules it: the host is the origin of its events.
            self.queue.set_origin(spec.src.index());
        }
        let event = Event::Inject { message };
        self.injections_waiting += 1;
        if !S::ENABLED && at == self.queue.now() && self.queue.take_turn(0) {
            // The clock is already there and the injection would be the next event: it
            // enters its adapter now, with no trip through the queue (an injection never
            // completes a message at once). Traces keep the event, for their clock. It
            // still counts as one, so that the count does not depend on where the clock
            // stood when the message came (which depends on when clients synchronise).
            self.queue.count_taken_turn();
            let mut none = Vec::new();
            self.handle(at, event, &mut none);
            debug_assert!(none.is_empty(), "an injection delivered a message at once");
        } else {
            self.queue.schedule(at, event);
        }
        message
    }

    /// Moves the clock to `time` when no event is pending before it.
    pub fn advance_clock(&mut self, time: SimTime) {
        self.queue.advance_clock(time);
    }

    /// Processes every event at or before `limit`, appending completed messages to
    /// `deliveries` in completion order.
    pub fn run_until(&mut self, limit: SimTime, deliveries: &mut Vec<Delivery>) {
        while let Some((now, event)) = self.queue.pop_until(limit) {
            if S::ENABLED {
                self.sink.clock(now);
            }
            self.handle(now, event, deliveries);
        }
    }

    fn handle(&mut self, now: SimTime, event: Event, deliveries: &mut Vec<Delivery>) {
        if let Event::Inject { .. } = event {
            self.injections_waiting -= 1;
        }
        let Simulation {
            fabric,
            messages,
            queue,
            sink,
            finals,
            ..
        } = self;
        let delivered = match (event, fabric) {
            (Event::Inject { message }, Fabric::Ideal(params)) => {
                let m = &mut messages[message.index()];
                m.first_byte_sent = now;
                let size = u64::from(m.spec.size_bytes);
                let arrival = now + params.latency + params.transfer(size);
                finals.schedule(queue, arrival, Event::Delivered { message }, Some(message));
                None
            }
            (Event::Delivered { message }, _) => Some(message),
            (Event::Inject { message }, Fabric::Wormhole(net)) => {
                queue.set_origin(messages[message.index()].spec.src.index());
                let mut ctx = Ctx {
                    now,
                    rank: 0,
                    messages,
                    queue,
                    sink,
                };
                net.inject(message, &mut ctx);
                None
            }
            (Event::Worm(event), Fabric::Wormhole(net)) => {
                queue.set_origin(net.device_of(event));
                let mut ctx = Ctx {
                    now,
                    rank: event.rank(),
                    messages,
                    queue,
                    sink,
                };
                net.handle(event, &mut ctx)
            }
            (event, Fabric::Switched(net)) => {
                let mut step = Step {
                    now,
                    messages,
                    queue,
                    sink,
                    finals,
                };
                net.handle(event, &mut step)
            }
            // Each fabric only ever sees its own events.
            (_, Fabric::Ideal(_) | Fabric::Wormhole(_)) => None,
        };
        if let Event::Delivered { .. } | Event::TailArrives { .. } = event {
            self.finals.handled(self.queue.last_key());
        }
        if let Some(message) = delivered {
            deliveries.push(self.messages[message.index()].delivery(now));
            let number = self.messages[message.index()].number;
            self.fabric.delivered_here(message, number);
            self.messages.release(message.0);
            self.delivered += 1;
        }
    }

    /// Releases the records of the messages whose last packet left this partition.
    fn release_gone(&mut self) {
        if let Some(split) = self.fabric.split() {
            for message in split.released.drain(..) {
                self.messages.release(message.0);
            }
        }
    }

    /// Makes this simulation partition `part` of a network split as `of_device` says
    /// (the part of every device: hosts, then switches): it then only handles the
    /// events of its own devices, and what it sends to another partition's goes to
    /// [`Self::take_crossings`]. Only switches can be split, the wormhole fabric when it
    /// steps flit by flit ([`Self::can_be_split`]); the ideal network is left whole.
    pub(crate) fn share(&mut self, part: u32, of_device: Vec<u32>) {
        let net = match &mut self.fabric {
            Fabric::Switched(net) => net,
            Fabric::Wormhole(net) => return net.share(part, of_device),
            Fabric::Ideal(_) => return,
        };
        net.share = Some(Box::new(Share {
            split: Split::new(part, of_device),
            presence: Vec::new(),
        }));
    }

    /// Whether the network can be split into partitions ([`Self::share`]): packet
    /// switches; wormhole switches stepping flit by flit (`Err` says what stands in
    /// the way).
    pub(crate) fn can_be_split(&self) -> Result<(), &'static str> {
        match &self.fabric {
            Fabric::Switched(_) => Ok(()),
            Fabric::Wormhole(net) => net.can_be_split::<S>(),
            Fabric::Ideal(_) => Err("the ideal network has no switch to split by"),
        }
    }

    /// The `number`th message entered another partition: this one draws the route
    /// that partition drew for it, when routes are drawn at random from one generator
    /// (explicit routes, [`crate::MultipathPolicy::Random`]). Every partition then
    /// draws for every message, in the order of their numbers, as the whole network
    /// does: their generators agree, and each message takes the route it takes whole.
    pub(crate) fn entered_elsewhere(&mut self, spec: &MessageSpec) {
        if let Fabric::Switched(net) = &mut self.fabric
            && net.routes.draws_at_random()
        {
            net.routes.route(spec.src, spec.dst);
        }
    }

    /// Moves what this partition sent to others since the last call into `out`.
    pub(crate) fn take_crossings(&mut self, out: &mut Vec<Crossing>) {
        if let Some(split) = self.fabric.split() {
            out.append(&mut split.crossings);
        }
    }

    /// Takes in a packet another partition sent, in the place among its instant's
    /// events the sender gave it.
    pub(crate) fn receive(&mut self, crossing: &Crossing) {
        let net = match &mut self.fabric {
            Fabric::Switched(net) => net,
            Fabric::Wormhole(net) => {
                return net.receive(crossing, &mut self.messages, &mut self.queue, &mut self.sink);
            }
            Fabric::Ideal(_) => return,
        };
        let Some(share) = &mut net.share else {
            return;
        };
        let number = crossing.message.number;
        let message = share.split.record_of(crossing, &mut self.messages, &mut net.routes);
        share.present(message, 1);
        if S::ENABLED {
            self.sink
                .arrived(number, crossing.packet.head_in, crossing.message.source());
        }
        let packet = PacketId(net.packets.insert(Packet {
            message,
            ..crossing.packet
        }));
        let event = match crossing.event {
            CrossingEvent::Routed { port } => Event::Routed { packet, port },
            CrossingEvent::TailArrives => {
                if crossing.packet.last {
                    self.finals.scheduled(crossing.key, message);
                }
                Event::TailArrives { packet }
            }
            // The wormhole fabric's own.
            CrossingEvent::Flit { .. } | CrossingEvent::Signal { .. } => return,
        };
        self.queue.schedule_keyed(crossing.key, event);
    }

    /// Processes every event at or before `limit`, appending completed messages to
    /// `deliveries` with their place in the order of the whole network's deliveries:
    /// the greatest key popped so far, `max_key` (see [`crate::partition::engine`]).
    pub(crate) fn run_window(&mut self, limit: SimTime, deliveries: &mut Vec<(u128, Delivery)>, max_key: &mut u128) {
        let mut one = Vec::new();
        while let Some((now, event)) = self.queue.pop_until(limit) {
            *max_key = (*max_key).max(self.queue.last_key());
            if S::ENABLED {
                self.sink.clock(now);
            }
            self.handle(now, event, &mut one);
            deliveries.extend(one.drain(..).map(|d| (*max_key, d)));
            self.release_gone();
        }
    }
}

/// Whether a message may be injected at `at` into a network of `hosts` hosts whose clock
/// is at `now`.
pub(crate) fn check_injection(hosts: u32, now: SimTime, at: SimTime, spec: MessageSpec) -> Result<(), InjectError> {
    for host in [spec.src, spec.dst] {
        if host.0 >= hosts {
            return Err(InjectError::UnknownHost { host, hosts });
        }
    }
    if at < now {
        return Err(InjectError::InThePast { at, now });
    }
    if at > SimTime::LAST_INJECTION {
        return Err(InjectError::TooLate { at });
    }
    Ok(())
}

/// What a packet-level handler works with besides the network itself.
pub(crate) struct Step<'a, S> {
    pub(crate) now: SimTime,
    pub(crate) messages: &'a mut [Message],
    pub(crate) queue: &'a mut EventQueue<Event>,
    pub(crate) sink: &'a mut S,
    pub(crate) finals: &'a mut Finals,
}

impl Switched {
    /// Handles one packet-level event; returns a message that just completed.
    fn handle<S: TraceSink>(&mut self, event: Event, step: &mut Step<'_, S>) -> Option<MessageId> {
        let now = step.now;
        step.queue.set_origin(self.device_of(event, step.messages));
        match event {
            Event::Inject { message } => {
                let src = step.messages[message.index()].spec.src;
                self.senders[src.index()].push(message);
                let port = self.port_id(host_port(src));
                if self.claim(port, step) {
                    self.send_next_packet(port, src, step);
                }
            }
            Event::Routed { packet, port } => {
                let owner = self.ports[port.index()].owner;
                if let Device::Switch(switch) = owner.device
                    && self.crossbars[switch.index()].is_some()
                {
                    self.cioq_arrive(switch, packet, port, step);
                    return None;
                }
                self.enter_output(port, packet, step);
            }
            Event::PortFree { port } => {
                let out = &mut self.ports[port.index()];
                out.busy = false;
                out.release_scheduled = false;
                let finished = out.current.take();
                match out.owner.device {
                    Device::Host(host) => {
                        if S::ENABLED && finished.is_some() {
                            let (number, index) = self.sending[host.index()];
                            step.sink.segment(now, port_ref(out.owner), number, index, false);
                        }
                        self.send_next_packet(port, host, step);
                    }
                    Device::Switch(_) => self.send_queued(port, step),
                }
            }
            Event::TailArrives { packet } => {
                let message = self.packets[packet.index()].message;
                self.packets.release(packet.0);
                let m = &mut step.messages[message.index()];
                m.packets_delivered += 1;
                if m.packets_delivered == m.packets_total {
                    return Some(message);
                }
            }
            Event::Match { switch } => self.cioq_match(switch, step),
            Event::CrossbarDone { switch, input, output } => {
                if let Some(x) = self.crossbars[switch.index()].as_mut() {
                    x.done(&self.waiting, input, output);
                }
                self.schedule_match(switch, step);
            }
            Event::Delivered { .. } | Event::Worm(_) => {}
        }
        None
    }

    /// Cuts the next packet at `host`'s adapter, if it has any, and sends it.
    fn send_next_packet<S: TraceSink>(&mut self, port: PortId, host: HostId, step: &mut Step<'_, S>) {
        let Some(message) = self.senders[host.index()].current() else {
            return;
        };
        let m = &mut step.messages[message.index()];
        let Cut {
            index,
            wire_bytes,
            last,
        } = m.cut(&self.adapters[host.index()], step.now);
        let record = Packet {
            message,
            index,
            wire_bytes,
            last,
            hop: 0,
            // The whole message sits in the adapter's memory.
            head_in: m.injected_at,
            tail_at_next_input: step.now,
            in_port: 0,
        };
        let number = m.number;
        self.senders[host.index()].cut(last, self.adapters[host.index()].interleave);
        let packet = PacketId(self.packets.insert(record));
        if let Some(share) = &mut self.share {
            share.present(message, 1);
        }
        if S::ENABLED {
            self.sending[host.index()] = (number, record.index);
            let owner = self.ports[port.index()].owner;
            step.sink.segment(step.now, port_ref(owner), number, record.index, true);
        }
        self.transmit(port, packet, step);
    }

    /// A message entered this partition's adapters (no effect unless partitioned).
    fn arrived_here(&mut self, message: MessageId, number: u64) {
        if let Some(share) = &mut self.share {
            share.split.by_number.insert(number, message);
            share.present(message, 0);
        }
    }

    /// If `peer` is in another partition, sends it `packet` with its next `event` at
    /// `at` and returns true: the packet and, once its last packet has gone (see
    /// [`Self::cross_to_share`]), its message leave this partition.
    #[inline(always)]
    pub(crate) fn cross<S: TraceSink>(
        &mut self,
        peer: Device,
        at: SimTime,
        packet: PacketId,
        event: CrossingEvent,
        step: &mut Step<'_, S>,
    ) -> bool {
        // A whole network (the common case) sends nothing across.
        self.share.is_some() && self.cross_to_share(peer, packet, (at, event), step)
    }

    /// [`Self::cross`] for a partition: `next` is the packet's next event and its time.
    ///
    /// A message's record here goes once its last packet has left and its destination
    /// is elsewhere. A path may leave a partition and come back to it (graph
    /// partitions, slabs of a hypercube): untraced, a message that comes back gets a
    /// record anew from its packet, but a trace's records of it here (link traversals
    /// in progress, the sink's hold) must live until its last packet has left for good,
    /// so a traced network walks the rest of the last packet's path to know (a walk the
    /// untraced engine is spared: it cost 7 % of a split fat tree's run).
    #[cold]
    fn cross_to_share<S: TraceSink>(
        &mut self,
        peer: Device,
        packet: PacketId,
        next: (SimTime, CrossingEvent),
        step: &mut Step<'_, S>,
    ) -> bool {
        let (at, event) = next;
        let Some(share) = &self.share else {
            return false;
        };
        let part = share.split.part;
        let Some(to) = share.split.elsewhere(self.wiring.device_index(peer)) else {
            return false;
        };
        let key = EventQueue::<Event>::key_of(at, 0, step.queue.reserve());
        let p = self.packets[packet.index()];
        self.packets.release(packet.0);
        let message = step.messages[p.message.index()];
        let dst_elsewhere = share.split.elsewhere(message.spec.dst.index()).is_some();
        let gone = p.last
            && match (S::ENABLED, peer, event) {
                (true, Device::Switch(switch), CrossingEvent::Routed { .. }) => {
                    // Routed there with the hop index it had here.
                    let hop = usize::from(p.hop) - 1;
                    dst_elsewhere && !self.path_returns(message.route, switch, hop, message.spec.dst, part)
                }
                _ => dst_elsewhere,
            };
        let Some(share) = &mut self.share else {
            return false;
        };
        share.split.crossings.push(Crossing {
            to,
            key,
            event,
            packet: p,
            message,
        });
        let presence = &mut share.presence[p.message.index()];
        presence.0 -= 1;
        presence.1 |= gone;
        if *presence == (0, true) {
            if S::ENABLED {
                step.sink.left(message.number);
            }
            share.forget(p.message, message.number);
            share.split.released.push(p.message);
        }
        true
    }

    /// Whether the path of a packet routed at `switch` with hop index `hop` comes back
    /// to partition `part` (its destination's switch included).
    fn path_returns(&self, route: Route, switch: SwitchId, hop: usize, dst: HostId, part: u32) -> bool {
        let Some(share) = &self.share else {
            return false;
        };
        let path = PathRest {
            route,
            switch,
            hop,
            dst,
        };
        path_returns(&self.wiring, &self.routes, &share.split.of_device, path, part)
    }

    /// The index (hosts first, then switches) of the device that handles `event`: the
    /// origin of the events it schedules.
    #[inline(always)]
    fn device_of(&self, event: Event, messages: &[Message]) -> usize {
        match event {
            Event::Routed { port, .. } | Event::PortFree { port } => self.port_device[port.index()] as usize,
            // The port it arrives at is its destination's.
            Event::TailArrives { packet } => self.port_device[self.packets[packet.index()].in_port as usize] as usize,
            Event::Inject { message } => messages[message.index()].spec.src.index(),
            Event::Match { switch } | Event::CrossbarDone { switch, .. } => self.adapters.len() + switch.index(),
            Event::Delivered { message } => messages[message.index()].spec.dst.index(),
            Event::Worm(_) => 0,
        }
    }

    pub(crate) fn port_id(&self, endpoint: Endpoint) -> PortId {
        PortId(self.wiring.port(endpoint) as u32)
    }
}

/// The rest of a packet's path: from `switch`, the switch at position `hop` on the
/// route of a message to `dst`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PathRest {
    pub(crate) route: Route,
    pub(crate) switch: SwitchId,
    pub(crate) hop: usize,
    pub(crate) dst: HostId,
}

/// Whether the rest of a path comes to partition `part` (`of_device`: the partition of
/// every device), its destination's switch included.
pub(crate) fn path_returns(wiring: &Wiring, routes: &RouteTable, of_device: &[u32], path: PathRest, part: u32) -> bool {
    let PathRest {
        route,
        mut switch,
        mut hop,
        dst,
    } = path;
    // Routes are at most `MAX_ROUTE_SWITCHES` long (checked when built).
    for _ in 0..=crate::topology::MAX_ROUTE_SWITCHES {
        let out = routes.port(route, switch, hop, dst);
        let port = wiring.port(Endpoint {
            device: Device::Switch(switch),
            port: out,
        });
        let Some((next, _)) = wiring.peer.get(port).copied().flatten() else {
            return false;
        };
        if of_device[wiring.device_index(next.device)] == part {
            return true;
        }
        match next.device {
            Device::Switch(s) => (switch, hop) = (s, hop + 1),
            Device::Host(_) => return false,
        }
    }
    false
}

fn host_port(host: HostId) -> Endpoint {
    Endpoint {
        device: Device::Host(host),
        port: 0,
    }
}

pub(crate) fn port_ref(endpoint: Endpoint) -> PortRef {
    PortRef {
        device: endpoint.device,
        port: endpoint.port,
    }
}

#[cfg(test)]
pub(crate) mod tests;
