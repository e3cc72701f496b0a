//! The network builder: a description of a network ([`NetworkBuilder`]), validated and
//! frozen into a [`Simulation`].

use std::collections::BTreeMap;

use crate::adapter::{AdapterParams, Sender};
use crate::build_error::{BuildError, Timed, room_for, within};
use crate::fabric::Fabric;
use crate::ideal::IdealParams;
use crate::ids::{Device, HostId, SwitchId};
use crate::link::LinkParams;
use crate::simulation::Simulation;
use crate::slab::Slab;
use crate::switch::packet::PacketFabric;
use crate::switch::packet::cioq::Crossbar;
use crate::switch::packet::output_queued::{OutPort, Ports};
use crate::switch::waiting::Waiting;
use crate::switch::wormhole::WormholeFabric;
use crate::switch::{SwitchKind, SwitchParams};
use crate::time::SimTime;
use crate::topology::{Endpoint, RouteTable, Topology, TopologyError, wire};
use crate::trace::{NullSink, TraceSink};

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
    /// STOP or GO, and a packet switch under UGAL-L on a credit.
    pub(crate) fn acting_latency(&self) -> SimTime {
        match &self.kind {
            Kind::Switched { switch, topology, .. }
                if matches!(switch.kind, SwitchKind::Wormhole(_)) || topology.routing.counts_credits() =>
            {
                SimTime::ZERO
            }
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
                (hosts, Fabric::Ideal(Box::new(params)), SimTime::MAX, 1)
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
                    let fabric = Fabric::Wormhole(Box::new(fabric));
                    return Ok(Simulation::built(topology.hosts, fabric, reach, devices, sink));
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
                let packets = PacketFabric {
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
                (topology.hosts, Fabric::Packet(Box::new(packets)), reach, devices)
            }
        };
        Ok(Simulation::built(hosts, fabric, reach, origins, sink))
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
