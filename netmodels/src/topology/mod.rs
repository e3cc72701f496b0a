//! Topology: which devices exist and how cables join their ports; and routing: where a
//! packet may go. Topologies never touch buffers or timing.
//!
//! ```text
//!   host0.p0 ──cable── sw0.p0        hosts have one port (p0);
//!   host1.p0 ──cable── sw0.p1        switch ports are numbered 0..ports
//!      …                  …
//!   hostN.p0 ──cable── sw0.pN        (the built-in crossbar)
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::ids::{Device, HostId, SwitchId};
use crate::link::LinkParams;
use crate::rng::Rng;

pub mod explicit;
pub mod multirail;
pub mod torus;
pub mod xgft;

pub use explicit::{ExplicitError, ExplicitRoutes, MultipathPolicy, PathList};

pub use torus::{Torus, TorusError};
pub use xgft::{PatternRoutes, PhaseLoad, Xgft, XgftError};

/// How switches choose the output towards a destination.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub enum Routing {
    /// breadth-first shortest paths; among equals, the lowest port
    #[default]
    ShortestPath,
    /// XGFT d-mod-k: up port ⌊d / (w1·…·wl)⌋ mod w(l+1), down by the destination's digit
    /// (table routing: a switch needs only the destination)
    DModK(Xgft),
    /// XGFT s-mod-k: the same with the source; the route depends on the source, so it is
    /// computed at the source and carried in the packet's header (source routing)
    SModK(Xgft),
    /// XGFT random: each pair's up ports drawn once from a generator keyed by (seed,
    /// source, destination, level); source routing
    Random {
        /// the tree
        xgft: Xgft,
        /// the seed of every draw
        seed: u64,
    },
    /// XGFT pattern-aware ("colored"): up ports chosen for a communication pattern by
    /// [`Xgft::pattern_aware_routes`], d-mod-k paths for other pairs; source routing
    /// (boxed: a pattern's table is large beside the other variants)
    PatternAware(Box<PatternRoutes>),
    /// torus, mesh or hypercube: dimension 0 first, each dimension the shorter way
    /// round, ties to + (table routing; see [`torus`])
    DimensionOrder(Torus),
    /// paths given one by one, several per pair (route files; see [`explicit`]);
    /// source routing
    Explicit(Arc<ExplicitRoutes>),
}

impl Routing {
    /// The output ports, switch by switch, of the path from `src` to `dst` under an
    /// XGFT routing (see [`Xgft::d_mod_k_path`] and its siblings); `None` for routings
    /// that are not defined by paths.
    pub fn xgft_path(&self, src: HostId, dst: HostId) -> Option<Vec<u32>> {
        match self {
            Routing::ShortestPath | Routing::DimensionOrder(_) | Routing::Explicit(_) => None,
            Routing::DModK(x) => Some(x.d_mod_k_path(src, dst)),
            Routing::SModK(x) => Some(x.s_mod_k_path(src, dst)),
            Routing::Random { xgft, seed } => Some(xgft.random_path(*seed, src, dst)),
            Routing::PatternAware(routes) => Some(routes.path(src, dst)),
        }
    }
}

/// One end of a cable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Endpoint {
    /// the device
    pub device: Device,
    /// its port, 0-based
    pub port: u32,
}

/// A full-duplex cable between two ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Cable {
    /// one end
    pub a: Endpoint,
    /// the other end
    pub b: Endpoint,
    /// rate and delay of both directions
    pub link: LinkParams,
}

/// A network's devices and cables.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Topology {
    /// number of hosts (each with one port, p0)
    pub hosts: u32,
    /// number of ports of each switch
    pub switch_ports: Vec<u32>,
    /// every cable
    pub cables: Vec<Cable>,
    /// how switches route
    pub routing: Routing,
}

impl Topology {
    /// One switch with a port per host: host `h` on switch port `h`.
    pub fn crossbar(hosts: u32, link: LinkParams) -> Topology {
        Topology::crossbar_onto(hosts, link, Vec::with_capacity(hosts as usize))
    }

    /// [`Topology::crossbar`], or [`TopologyError::NoRoom`] instead of the allocator's
    /// abort.
    pub fn try_crossbar(hosts: u32, link: LinkParams) -> Result<Topology, TopologyError> {
        Ok(Topology::crossbar_onto(hosts, link, room(hosts as usize, "cables")?))
    }

    /// The crossbar, its cables pushed onto `cables` (empty, with room for them).
    fn crossbar_onto(hosts: u32, link: LinkParams, mut cables: Vec<Cable>) -> Topology {
        cables.extend((0..hosts).map(|h| Cable {
            a: Endpoint {
                device: Device::Host(HostId(h)),
                port: 0,
            },
            b: Endpoint {
                device: Device::Switch(SwitchId(0)),
                port: h,
            },
            link,
        }));
        Topology {
            hosts,
            switch_ports: vec![hosts],
            cables,
            routing: Routing::ShortestPath,
        }
    }

    /// Number of ports of `device`.
    pub fn ports_of(&self, device: Device) -> u32 {
        match device {
            Device::Host(_) => 1,
            Device::Switch(s) => self.switch_ports.get(s.index()).copied().unwrap_or(0),
        }
    }

    fn contains(&self, device: Device) -> bool {
        match device {
            Device::Host(h) => h.0 < self.hosts,
            Device::Switch(s) => s.index() < self.switch_ports.len(),
        }
    }
}

/// Why a topology cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// a network needs hosts
    #[error("topology.hosts: a network needs at least one host")]
    NoHosts,
    /// a cable names a device that does not exist
    #[error("cables[{cable}]: {device} does not exist")]
    UnknownDevice {
        /// index of the cable
        cable: usize,
        /// the device named
        device: Device,
    },
    /// a cable names a port beyond the device's ports
    #[error("cables[{cable}]: {device} has {ports} ports, no port {port}")]
    NoSuchPort {
        /// index of the cable
        cable: usize,
        /// the device named
        device: Device,
        /// the port named
        port: u32,
        /// the device's port count
        ports: u32,
    },
    /// two cables on one port
    #[error("cables[{cable}]: {device}.p{port} is already used by cables[{first}]")]
    PortUsedTwice {
        /// index of the second cable
        cable: usize,
        /// index of the first cable
        first: usize,
        /// the device
        device: Device,
        /// the port
        port: u32,
    },
    /// a host with no cable
    #[error("host{0}.p0 has no cable: every host must be connected")]
    HostNotConnected(u32),
    /// the dimension-order routing names an invalid torus
    #[error("routing: {0}")]
    Torus(#[from] TorusError),
    /// the dimension-order routing's torus is not the topology's shape
    #[error(
        "routing: the torus has {torus_switches} switches and {torus_hosts} hosts, \
         the topology {switches} switches and {hosts} hosts"
    )]
    TorusShape {
        /// switches of the routing's torus
        torus_switches: u32,
        /// hosts of the routing's torus
        torus_hosts: u32,
        /// switches of the topology
        switches: u32,
        /// hosts of the topology
        hosts: u32,
    },
    /// more ports than the simulator models
    #[error("the network has {ports} ports (hosts' and switches'); vesper models at most 2^26 = 67,108,864")]
    TooLarge {
        /// ports asked for
        ports: u64,
    },
    /// explicit routes for another number of hosts than the network's
    #[error("routes: the routes are for {routes} hosts, the network has {hosts}")]
    RoutesHosts {
        /// hosts of the routes
        routes: u32,
        /// hosts of the network
        hosts: u32,
    },
    /// two distinct hosts without a route between them
    #[error("routes: no route from host{src} to host{dst}")]
    NoRoute {
        /// the source host
        src: u32,
        /// the destination host
        dst: u32,
    },
    /// an explicit route that leaves the switches before its last port
    #[error("routes: route {route} from host{src} to host{dst} reaches a host after {hop} of its {ports} ports")]
    RouteReachesHost {
        /// which of the pair's routes (0 for the first)
        route: usize,
        /// the source host
        src: u32,
        /// the destination host
        dst: u32,
        /// the ports taken before the host was reached
        hop: usize,
        /// the route's ports
        ports: usize,
    },
    /// an explicit route through a port its switch does not have
    #[error("routes: route {route} from host{src} to host{dst}: sw{switch} has no port {port}")]
    RouteNoSuchPort {
        /// which of the pair's routes (0 for the first)
        route: usize,
        /// the source host
        src: u32,
        /// the destination host
        dst: u32,
        /// the switch
        switch: u32,
        /// the port named
        port: u32,
    },
    /// an explicit route through a port without a cable
    #[error("routes: route {route} from host{src} to host{dst}: sw{switch}.p{port} has no cable")]
    RouteNoCable {
        /// which of the pair's routes (0 for the first)
        route: usize,
        /// the source host
        src: u32,
        /// the destination host
        dst: u32,
        /// the switch
        switch: u32,
        /// the port
        port: u32,
    },
    /// an explicit route that ends elsewhere than at its destination
    #[error(
        "routes: route {route} from host{src} to host{dst} ends at {}, not at host{dst}",
        end.map_or_else(|| "nothing".to_string(), |e| format!("{}.p{}", e.device, e.port))
    )]
    RouteEndsElsewhere {
        /// which of the pair's routes (0 for the first)
        route: usize,
        /// the source host
        src: u32,
        /// the destination host
        dst: u32,
        /// where it ends (`None`: at a port without a cable)
        end: Option<Endpoint>,
    },
    /// a route through more switches than a packet counts
    #[error("routing: {route} crosses {switches} switches; vesper counts at most 65,535 on a route")]
    RouteTooLong {
        /// which route (or which bound on every route)
        route: String,
        /// the switches it crosses
        switches: u64,
    },
    /// the network's records do not fit in memory
    #[error(
        "the network does not fit in memory: its {count} {what} take {:.1} GiB, which could not be allocated",
        *bytes as f64 / f64::from(1u32 << 30)
    )]
    NoRoom {
        /// what did not fit
        what: &'static str,
        /// how many of them
        count: usize,
        /// their size \[bytes\]
        bytes: u128,
    },
    /// no path from a switch to a host
    #[error("no path from sw{switch} to host{host}: the network is not connected")]
    Unreachable {
        /// the switch
        switch: u32,
        /// the host
        host: u32,
    },
}

/// The most ports (hosts' and switches' together) a network may have: far beyond the
/// largest machines (a 32,768-host three-level tree has about 3 million), and little
/// enough that building never asks for more memory than a workstation has.
pub const MAX_PORTS: u64 = 1 << 26;

/// The most switches a route may cross: packets count their hops in 16 bits, which
/// keeps the fabric's events small (a ring of 131,070 switches would need more).
pub const MAX_ROUTE_SWITCHES: u64 = u16::MAX as u64;

/// An empty vector with room for `count` records, or [`TopologyError::NoRoom`] instead of
/// the allocator's abort (the sizes come from a description).
pub(crate) fn room<T>(count: usize, what: &'static str) -> Result<Vec<T>, TopologyError> {
    let mut v = Vec::new();
    v.try_reserve_exact(count).map_err(|_| TopologyError::NoRoom {
        what,
        count,
        bytes: count as u128 * size_of::<T>() as u128,
    })?;
    Ok(v)
}

/// A vector of `count` copies of `value`, or [`TopologyError::NoRoom`].
pub(crate) fn filled<T: Clone>(count: usize, value: T, what: &'static str) -> Result<Vec<T>, TopologyError> {
    let mut v = room(count, what)?;
    v.resize(count, value);
    Ok(v)
}

/// `route` crosses `switches` switches: refused if packets cannot count them.
fn check_route_length(switches: u64, route: impl FnOnce() -> String) -> Result<(), TopologyError> {
    if switches > MAX_ROUTE_SWITCHES {
        return Err(TopologyError::RouteTooLong {
            route: route(),
            switches,
        });
    }
    Ok(())
}

/// Where each port's cable leads, and the link behind it, after validation.
#[derive(Debug, Clone)]
pub(crate) struct Wiring {
    /// first port index of each host (`hosts` entries) then of each switch
    pub(crate) port_base: Vec<u32>,
    /// for every port: the port itself
    pub(crate) owner: Vec<Endpoint>,
    /// for every port: the peer endpoint and the link
    pub(crate) peer: Vec<Option<(Endpoint, LinkParams)>>,
    pub(crate) hosts: u32,
}

impl Wiring {
    /// The bytes of its lists, as built (see [`crate::footprint`]).
    #[cfg(test)]
    pub(crate) fn counted_bytes(&self) -> u64 {
        let bytes = |capacity: usize, size: usize| (capacity * size) as u64;
        bytes(self.port_base.capacity(), size_of::<u32>())
            + bytes(self.owner.capacity(), size_of::<Endpoint>())
            + bytes(self.peer.capacity(), size_of::<Option<(Endpoint, LinkParams)>>())
    }

    pub(crate) fn device_index(&self, device: Device) -> usize {
        match device {
            Device::Host(h) => h.index(),
            Device::Switch(s) => self.hosts as usize + s.index(),
        }
    }

    /// Number of ports of switch `s`.
    pub(crate) fn switch_ports(&self, s: SwitchId) -> u32 {
        let index = self.hosts as usize + s.index();
        let end = self
            .port_base
            .get(index + 1)
            .copied()
            .unwrap_or(self.owner.len() as u32);
        end - self.port_base[index]
    }

    /// Global port index of `endpoint`.
    pub(crate) fn port(&self, endpoint: Endpoint) -> usize {
        self.port_base[self.device_index(endpoint.device)] as usize + endpoint.port as usize
    }
}

pub(crate) fn wire(topology: &Topology) -> Result<Wiring, TopologyError> {
    if topology.hosts == 0 {
        return Err(TopologyError::NoHosts);
    }
    let devices = (0..topology.hosts)
        .map(|h| Device::Host(HostId(h)))
        .chain((0..topology.switch_ports.len() as u32).map(|s| Device::Switch(SwitchId(s))));
    // Checked before anything is allocated: a description may ask for more than memory.
    let all: u64 = u64::from(topology.hosts) + topology.switch_ports.iter().map(|&p| u64::from(p)).sum::<u64>();
    if all > MAX_PORTS {
        return Err(TopologyError::TooLarge { ports: all });
    }
    let mut port_base = room(topology.hosts as usize + topology.switch_ports.len(), "devices")?;
    let mut owner = room(all as usize, "ports")?;
    let mut total = 0u32;
    for device in devices {
        port_base.push(total);
        let ports = topology.ports_of(device);
        total += ports;
        owner.extend((0..ports).map(|port| Endpoint { device, port }));
    }
    let mut wiring = Wiring {
        port_base,
        owner,
        peer: filled(total as usize, None, "ports")?,
        hosts: topology.hosts,
    };
    let mut used_by: Vec<Option<usize>> = filled(total as usize, None, "ports")?;
    for (index, cable) in topology.cables.iter().enumerate() {
        for (end, other) in [(cable.a, cable.b), (cable.b, cable.a)] {
            if !topology.contains(end.device) {
                return Err(TopologyError::UnknownDevice {
                    cable: index,
                    device: end.device,
                });
            }
            let ports = topology.ports_of(end.device);
            if end.port >= ports {
                return Err(TopologyError::NoSuchPort {
                    cable: index,
                    device: end.device,
                    port: end.port,
                    ports,
                });
            }
            let port = wiring.port(end);
            if let Some(first) = used_by[port] {
                return Err(TopologyError::PortUsedTwice {
                    cable: index,
                    first,
                    device: end.device,
                    port: end.port,
                });
            }
            used_by[port] = Some(index);
            wiring.peer[port] = Some((other, cable.link));
        }
    }
    if let Some(h) = (0..topology.hosts).find(|&h| wiring.peer[wiring.port_base[h as usize] as usize].is_none()) {
        return Err(TopologyError::HostNotConnected(h));
    }
    Ok(wiring)
}

/// Routes: for table routing, the output port of each switch towards each destination;
/// for source routing, the list of output ports of each (source, destination) path,
/// computed once per pair when first used and shared by every packet of the pair.
///
/// Table routes of arbitrary topologies come from breadth-first search from each
/// destination: a switch forwards on the lowest-numbered port that leads one hop closer.
/// Shortest paths, deterministic (see [`ShortestPaths`]).
#[derive(Debug, Clone)]
pub(crate) struct RouteTable {
    hosts: u32,
    /// table routing: computed at each hop, or looked up in shortest-path tables
    closed: Option<ClosedForm>,
    /// source routing: how paths are computed ([`Routing::xgft_path`])
    source: Option<Routing>,
    /// dimension-order routing: the torus, whose rings flow control must know
    torus: Option<Torus>,
    /// source routing: path id of each (source, destination) pair used so far
    path_of: BTreeMap<(u32, u32), u32>,
    /// source routing: the output port at each switch of each path
    paths: Vec<Vec<u32>>,
    /// explicit routing: the given paths
    explicit: Option<Arc<ExplicitRoutes>>,
    /// explicit routing: the port of each host at its switch (a message to itself)
    self_port: Vec<u32>,
    /// explicit round-robin: the next alternative of each pair
    turns: Vec<u32>,
    /// explicit random: the draws
    rng: Option<Rng>,
}

#[cfg(test)]
thread_local! {
    /// The ports, cables and switches the last shortest-path search of this thread
    /// looked at.
    static SHORTEST_PATH_STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Table routings: a closed form, or shortest-path tables.
#[derive(Debug, Clone)]
enum ClosedForm {
    DModK(xgft::DModKRoutes),
    DimensionOrder(Torus),
    ShortestPath(ShortestPaths),
}

/// Shortest-path tables, one column per switch that hosts hang off: the hosts of one
/// switch are the same distance from every other switch, so every other switch takes
/// the same port towards each of them; only their own switch tells them apart (by the
/// port each hangs off). A crossbar's table is then its one switch's port of each
/// host, and a tree's has a column per leaf switch instead of one per host.
///
/// ```text
///   host h ──▶ attach[h] = (its switch s, s's port to h)
///   switch t ≠ s: ports[column[s] · switches + t]
/// ```
#[derive(Debug, Clone)]
pub(crate) struct ShortestPaths {
    /// per host: its switch and that switch's port to it (`u32::MAX`: no switch)
    attach: Vec<(u32, u32)>,
    /// per switch: its column in `ports` (`u32::MAX`: no host hangs off it)
    column: Vec<u32>,
    /// `ports[column · switches + switch]`: the port of `switch` towards the hosts of
    /// the column's switch (`u32::MAX` at that switch itself)
    ports: Vec<u32>,
    switches: u32,
}

impl ShortestPaths {
    /// The output port of `switch` towards `host`.
    fn port(&self, switch: SwitchId, host: HostId) -> u32 {
        let Some(&(at, port)) = self.attach.get(host.index()) else {
            return u32::MAX;
        };
        if at == switch.0 {
            return port;
        }
        match self.column.get(at as usize) {
            Some(&column) if column != u32::MAX => {
                self.ports[column as usize * self.switches as usize + switch.index()]
            }
            _ => u32::MAX,
        }
    }
}

/// How a packet finds its way: by the switches' tables, or by the path in its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// each switch looks the destination up
    Table,
    /// the header carries this path (an id into the route table's paths)
    Source(u32),
    /// the header carries this given path (an id into the explicit routes)
    Explicit(u32),
}

impl RouteTable {
    /// The bytes of the routes kept from the build on, as built (see
    /// [`crate::footprint`]; the explicit routes themselves are shared, not counted).
    #[cfg(test)]
    pub(crate) fn counted_bytes(&self) -> u64 {
        let bytes = |capacity: usize, size: usize| (capacity * size) as u64;
        let closed = match &self.closed {
            Some(ClosedForm::DModK(routes)) => routes.counted_bytes(),
            Some(ClosedForm::ShortestPath(t)) => {
                bytes(t.attach.capacity(), size_of::<(u32, u32)>())
                    + bytes(t.column.capacity(), size_of::<u32>())
                    + bytes(t.ports.capacity(), size_of::<u32>())
            }
            Some(ClosedForm::DimensionOrder(_)) | None => 0,
        };
        closed + bytes(self.self_port.capacity(), size_of::<u32>()) + bytes(self.turns.capacity(), size_of::<u32>())
    }

    /// The routes of `topology`'s routing.
    pub(crate) fn build(topology: &Topology, wiring: &Wiring) -> Result<RouteTable, TopologyError> {
        let xgft = match &topology.routing {
            Routing::DModK(x) | Routing::SModK(x) | Routing::Random { xgft: x, .. } => Some(x),
            Routing::PatternAware(routes) => Some(routes.xgft()),
            Routing::ShortestPath | Routing::DimensionOrder(_) | Routing::Explicit(_) => None,
        };
        if let Some(x) = xgft {
            check_route_length(x.longest_route(), || "the longest route of the XGFT".into())?;
        }
        match &topology.routing {
            Routing::ShortestPath => RouteTable::shortest_paths(topology, wiring),
            // Closed forms instead of switches × hosts tables: cheap to compute at every
            // hop, and a 32,768-host network would need gigabytes of table.
            Routing::DModK(x) => Ok(RouteTable {
                closed: Some(ClosedForm::DModK(x.d_mod_k_routes())),
                ..RouteTable::table(topology.hosts)
            }),
            Routing::DimensionOrder(t) => {
                t.check()?;
                let (hosts, switches) = (topology.hosts, topology.switch_ports.len() as u32);
                if (t.switches(), t.hosts()) != (switches, hosts) {
                    return Err(TopologyError::TorusShape {
                        torus_switches: t.switches(),
                        torus_hosts: t.hosts(),
                        switches,
                        hosts,
                    });
                }
                Ok(RouteTable {
                    torus: Some(t.clone()),
                    closed: Some(ClosedForm::DimensionOrder(t.clone())),
                    ..RouteTable::table(hosts)
                })
            }
            Routing::Explicit(routes) => RouteTable::explicit(topology, wiring, routes),
            Routing::SModK(_) | Routing::Random { .. } | Routing::PatternAware(_) => Ok(RouteTable {
                source: Some(topology.routing.clone()),
                ..RouteTable::table(topology.hosts)
            }),
        }
    }

    fn table(hosts: u32) -> RouteTable {
        RouteTable {
            hosts,
            closed: None,
            source: None,
            torus: None,
            path_of: BTreeMap::new(),
            paths: Vec::new(),
            explicit: None,
            self_port: Vec::new(),
            turns: Vec::new(),
            rng: None,
        }
    }

    /// Explicit routes, checked: every pair of distinct hosts has a path, and every
    /// path leads from its source's switch to its destination.
    fn explicit(
        topology: &Topology,
        wiring: &Wiring,
        routes: &Arc<ExplicitRoutes>,
    ) -> Result<RouteTable, TopologyError> {
        let hosts = topology.hosts;
        if routes.hosts() != hosts {
            return Err(TopologyError::RoutesHosts {
                routes: routes.hosts(),
                hosts,
            });
        }
        let host_peer = |h: u32| wiring.peer[wiring.port_base[h as usize] as usize].map(|(end, _)| end);
        for src in 0..hosts {
            for dst in 0..hosts {
                let alternatives = routes.alternatives(HostId(src), HostId(dst));
                if alternatives.is_empty() && src != dst {
                    return Err(TopologyError::NoRoute { src, dst });
                }
                for (route, id) in alternatives.enumerate() {
                    let path = routes.path(id);
                    check_route_length(path.len() as u64, || {
                        format!("route {route} from host{src} to host{dst}")
                    })?;
                    let mut at = host_peer(src);
                    for (hop, &port) in path.iter().enumerate() {
                        let here = match at {
                            Some(Endpoint {
                                device: Device::Switch(s),
                                ..
                            }) => s,
                            _ => {
                                return Err(TopologyError::RouteReachesHost {
                                    route,
                                    src,
                                    dst,
                                    hop,
                                    ports: path.len(),
                                });
                            }
                        };
                        if port >= wiring.switch_ports(here) {
                            return Err(TopologyError::RouteNoSuchPort {
                                route,
                                src,
                                dst,
                                switch: here.0,
                                port,
                            });
                        }
                        let next = wiring.port(Endpoint {
                            device: Device::Switch(here),
                            port,
                        });
                        at = wiring.peer[next].map(|(end, _)| end);
                        if at.is_none() {
                            return Err(TopologyError::RouteNoCable {
                                route,
                                src,
                                dst,
                                switch: here.0,
                                port,
                            });
                        }
                    }
                    if at.map(|e| e.device) != Some(Device::Host(HostId(dst))) {
                        return Err(TopologyError::RouteEndsElsewhere {
                            route,
                            src,
                            dst,
                            end: at,
                        });
                    }
                }
            }
        }
        let self_port = (0..hosts)
            .map(|h| host_peer(h).map_or(u32::MAX, |end| end.port))
            .collect();
        let policy = routes.policy();
        Ok(RouteTable {
            explicit: Some(Arc::clone(routes)),
            self_port,
            turns: match policy {
                MultipathPolicy::RoundRobin => filled(hosts as usize * hosts as usize, 0, "route turns")?,
                _ => Vec::new(),
            },
            rng: match policy {
                MultipathPolicy::Random { seed } => Some(Rng::new(seed)),
                _ => None,
            },
            ..RouteTable::table(hosts)
        })
    }

    /// The route of packets from `src` to `dst`.
    pub(crate) fn route(&mut self, src: HostId, dst: HostId) -> Route {
        if let Some(routes) = &self.explicit {
            let alternatives = routes.alternatives(src, dst);
            let count = alternatives.len() as u32;
            if count == 0 {
                return self.source_path(src, dst);
            }
            let pick = match routes.policy() {
                MultipathPolicy::First => 0,
                MultipathPolicy::RoundRobin => {
                    let turn = &mut self.turns[src.index() * self.hosts as usize + dst.index()];
                    let pick = *turn % count;
                    *turn = (pick + 1) % count;
                    pick
                }
                MultipathPolicy::Random { .. } => self.rng.as_mut().map_or(0, |r| r.below(u64::from(count)) as u32),
                MultipathPolicy::Hash => {
                    Rng::keyed(0, &[u64::from(src.0), u64::from(dst.0)]).below(u64::from(count)) as u32
                }
            };
            return Route::Explicit(alternatives.start + pick);
        }
        if self.source.is_none() {
            return Route::Table;
        }
        self.source_path(src, dst)
    }

    /// The path from `src` to `dst` that sources carry (source routing, or a message
    /// of explicit routes to itself, down the host's own port), numbered in the order
    /// this table met them.
    fn source_path(&mut self, src: HostId, dst: HostId) -> Route {
        let next = self.paths.len() as u32;
        let id = *self.path_of.entry((src.0, dst.0)).or_insert(next);
        if id == next {
            let path = match (&self.explicit, &self.source) {
                (Some(_), _) => vec![self.self_port[src.index()]],
                (None, Some(routing)) => routing.xgft_path(src, dst).unwrap_or_default(),
                (None, None) => Vec::new(),
            };
            self.paths.push(path);
        }
        Route::Source(id)
    }

    /// `route`, of a message from `src` to `dst` that another copy of this table chose
    /// (another partition's), in this table's terms: each copy numbers the paths
    /// sources carry as it meets them.
    pub(crate) fn localize(&mut self, route: Route, src: HostId, dst: HostId) -> Route {
        match route {
            Route::Source(_) => self.source_path(src, dst),
            other => other,
        }
    }

    /// Whether routes are drawn at random, message by message, from one generator:
    /// the draws depend on the order of every host's messages.
    pub(crate) fn draws_at_random(&self) -> bool {
        self.rng.is_some()
    }

    /// Appends to `ports` the output ports (global indices) a packet from `src` to `dst`
    /// leaves by, the source's own port first, without changing any routing state.
    /// Returns `false` (with nothing appended) when the path is not fixed by the pair:
    /// explicit routes with several alternatives taken in turn or at random.
    pub(crate) fn walk(&self, wiring: &Wiring, src: HostId, dst: HostId, ports: &mut Vec<u32>) -> bool {
        let path: Option<std::borrow::Cow<'_, [u32]>> = if let Some(routes) = &self.explicit {
            let alternatives = routes.alternatives(src, dst);
            let count = alternatives.len() as u32;
            let pick = match routes.policy() {
                _ if count <= 1 => 0,
                MultipathPolicy::First => 0,
                MultipathPolicy::Hash => {
                    Rng::keyed(0, &[u64::from(src.0), u64::from(dst.0)]).below(u64::from(count)) as u32
                }
                MultipathPolicy::RoundRobin | MultipathPolicy::Random { .. } => return false,
            };
            Some(match count {
                0 => vec![self.self_port[src.index()]].into(),
                _ => routes.path(alternatives.start + pick).into(),
            })
        } else {
            self.source
                .as_ref()
                .map(|routing| match self.path_of.get(&(src.0, dst.0)) {
                    Some(&id) => self.paths[id as usize].as_slice().into(),
                    None => routing.xgft_path(src, dst).unwrap_or_default().into(),
                })
        };
        let before = ports.len();
        let mut port = wiring.port_base[src.index()] as usize;
        for hop in 0..=wiring.owner.len() {
            ports.push(port as u32);
            let Some((at, _)) = wiring.peer[port] else { break };
            let Device::Switch(switch) = at.device else {
                return true;
            };
            let out = match &path {
                Some(path) => path.get(hop).copied().unwrap_or(u32::MAX),
                None => self.next_port(switch, dst),
            };
            if out >= wiring.switch_ports(switch) {
                break;
            }
            port = wiring.port(Endpoint {
                device: at.device,
                port: out,
            });
        }
        // Routes are checked when the network is built: only a broken table ends here.
        ports.truncate(before);
        false
    }

    /// The output port of `switch`, the `hop`-th switch of the path (from 0), towards
    /// host `dst`.
    pub(crate) fn port(&self, route: Route, switch: SwitchId, hop: usize, dst: HostId) -> u32 {
        match route {
            Route::Table => self.next_port(switch, dst),
            Route::Source(id) => self.paths[id as usize].get(hop).copied().unwrap_or(u32::MAX),
            Route::Explicit(id) => self
                .explicit
                .as_ref()
                .and_then(|r| r.path(id).get(hop).copied())
                .unwrap_or(u32::MAX),
        }
    }

    /// Shortest-path tables ([`ShortestPaths`]): a breadth-first search over the cables
    /// between switches from each switch that hosts hang off, in time about the number
    /// of such switches × (switches + cables between them), and a column of that many
    /// ports each. Refuses, as it meets them host by host, a route longer than packets
    /// count and a switch with no path to a host.
    pub(crate) fn shortest_paths(topology: &Topology, wiring: &Wiring) -> Result<RouteTable, TopologyError> {
        let hosts = topology.hosts;
        let switches = topology.switch_ports.len();
        // The cables between switches: each switch's (port, neighbour), in port order.
        let mut first = room(switches + 1, "switches")?;
        let mut links: Vec<(u32, u32)> = Vec::new();
        // What the search looks at (tests check that it grows with the network alone).
        #[cfg(test)]
        let mut steps = u64::from(hosts);
        for s in 0..switches {
            first.push(links.len());
            #[cfg(test)]
            {
                steps += u64::from(topology.switch_ports[s]);
            }
            let base = wiring.port_base[hosts as usize + s] as usize;
            for port in 0..topology.switch_ports[s] {
                if let Some((
                    Endpoint {
                        device: Device::Switch(n),
                        ..
                    },
                    _,
                )) = wiring.peer[base + port as usize]
                {
                    links.push((port, n.0));
                }
            }
        }
        first.push(links.len());
        let mut attach = room(hosts as usize, "hosts")?;
        attach.extend(
            (0..hosts).map(|h| match wiring.peer[wiring.port_base[h as usize] as usize] {
                Some((
                    Endpoint {
                        device: Device::Switch(s),
                        port,
                    },
                    _,
                )) => (s.0, port),
                _ => (u32::MAX, u32::MAX),
            }),
        );
        // The switches routes start from: those with hosts, a column each.
        let mut column = vec![u32::MAX; switches];
        let mut columns = 0u32;
        for &(s, _) in &attach {
            if let Some(c) = column.get_mut(s as usize)
                && *c == u32::MAX
            {
                *c = columns;
                columns += 1;
            }
        }
        let mut ports = filled(columns as usize * switches, u32::MAX, "shortest-path routes")?;
        // Per column, once searched: the farthest switch with hosts (the last of the
        // farthest, as `max_by_key` gives) and its distance, and the first switch with
        // no path.
        type Found = (Option<(usize, u32)>, Option<u32>);
        let mut searched: Vec<Option<Found>> = vec![None; columns as usize];
        let mut distance = vec![u32::MAX; switches];
        let mut queue = VecDeque::new();
        for host in 0..hosts {
            let (at, _) = attach[host as usize];
            let Some(&c) = column.get(at as usize) else {
                // A host cabled to a host: no switch has a path to it.
                if switches > 0 {
                    return Err(TopologyError::Unreachable { switch: 0, host });
                }
                continue;
            };
            let (farthest, unreachable) = match searched[c as usize] {
                Some(found) => found,
                None => {
                    distance.fill(u32::MAX);
                    queue.clear();
                    distance[at as usize] = 0;
                    queue.push_back(at);
                    while let Some(s) = queue.pop_front() {
                        #[cfg(test)]
                        {
                            steps += (first[s as usize + 1] - first[s as usize]) as u64 + 1;
                        }
                        for &(_, n) in &links[first[s as usize]..first[s as usize + 1]] {
                            if distance[n as usize] == u32::MAX {
                                distance[n as usize] = distance[s as usize] + 1;
                                queue.push_back(n);
                            }
                        }
                    }
                    let farthest = (0..switches)
                        .filter(|&s| column[s] != u32::MAX && distance[s] != u32::MAX)
                        .max_by_key(|&s| distance[s])
                        .map(|s| (s, distance[s]));
                    let unreachable = (0..switches).find(|&s| distance[s] == u32::MAX).map(|s| s as u32);
                    // Each switch forwards on its lowest port one hop closer.
                    let out = &mut ports[c as usize * switches..(c as usize + 1) * switches];
                    for (s, port) in out.iter_mut().enumerate() {
                        #[cfg(test)]
                        {
                            steps += (first[s + 1] - first[s]) as u64 + 1;
                        }
                        let Some(closer) = distance[s].checked_sub(1).filter(|_| distance[s] != u32::MAX) else {
                            continue;
                        };
                        *port = links[first[s]..first[s + 1]]
                            .iter()
                            .find(|&&(_, n)| distance[n as usize] == closer)
                            .map_or(u32::MAX, |&(p, _)| p);
                    }
                    searched[c as usize] = Some((farthest, unreachable));
                    (farthest, unreachable)
                }
            };
            if let Some((s, longest)) = farthest {
                check_route_length(u64::from(longest) + 1, || {
                    format!("the shortest route from sw{s} to host{host}")
                })?;
            }
            if let Some(switch) = unreachable {
                return Err(TopologyError::Unreachable { switch, host });
            }
        }
        #[cfg(test)]
        SHORTEST_PATH_STEPS.set(steps);
        let tables = ShortestPaths {
            attach,
            column,
            ports,
            switches: switches as u32,
        };
        Ok(RouteTable {
            closed: Some(ClosedForm::ShortestPath(tables)),
            ..RouteTable::table(hosts)
        })
    }

    /// The torus of a dimension-order routing.
    pub(crate) fn torus(&self) -> Option<&Torus> {
        self.torus.as_ref()
    }

    /// The ring that switch port `port` belongs to: the dimension it leads along, if
    /// that dimension closes a cycle (every switch of a torus has the same ports).
    /// `None` for host ports, for mesh dimensions and for other topologies.
    pub(crate) fn ring(&self, port: u32) -> Option<u32> {
        let t = self.torus.as_ref()?;
        t.port_dimension(port).filter(|&d| t.is_ring(d as usize))
    }

    /// The output port of `switch` towards `host` (table routing).
    pub(crate) fn next_port(&self, switch: SwitchId, host: HostId) -> u32 {
        match &self.closed {
            Some(ClosedForm::DModK(routes)) => routes.port(switch, host),
            Some(ClosedForm::DimensionOrder(t)) => t.dimension_order(switch, host),
            Some(ClosedForm::ShortestPath(tables)) => tables.port(switch, host),
            None => u32::MAX,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(h: u32, port: u32) -> Endpoint {
        Endpoint {
            device: Device::Host(HostId(h)),
            port,
        }
    }

    /// A default cable from `a` to `b`.
    fn cable(a: Endpoint, b: Endpoint) -> Cable {
        Cable {
            a,
            b,
            link: LinkParams::default(),
        }
    }

    fn switch(s: u32, port: u32) -> Endpoint {
        Endpoint {
            device: Device::Switch(SwitchId(s)),
            port,
        }
    }

    #[test]
    fn crossbar_routes_each_host_to_its_port() {
        let t = Topology::crossbar(4, LinkParams::default());
        let w = wire(&t).expect("valid");
        let r = RouteTable::shortest_paths(&t, &w).expect("connected");
        for h in 0..4 {
            assert_eq!(r.next_port(SwitchId(0), HostId(h)), h);
        }
    }

    #[test]
    fn two_switches_route_over_the_trunk() {
        let link = LinkParams::default();
        let t = Topology {
            routing: Routing::ShortestPath,
            hosts: 2,
            switch_ports: vec![4, 4],
            cables: vec![
                Cable {
                    a: host(0, 0),
                    b: switch(0, 1),
                    link,
                },
                Cable {
                    a: host(1, 0),
                    b: switch(1, 2),
                    link,
                },
                Cable {
                    a: switch(0, 3),
                    b: switch(1, 0),
                    link,
                },
            ],
        };
        let w = wire(&t).expect("valid");
        let r = RouteTable::shortest_paths(&t, &w).expect("connected");
        assert_eq!(r.next_port(SwitchId(0), HostId(1)), 3);
        assert_eq!(r.next_port(SwitchId(1), HostId(0)), 0);
        assert_eq!(r.next_port(SwitchId(1), HostId(1)), 2);
    }

    #[test]
    fn bad_wiring_is_named() {
        let link = LinkParams::default();
        let mut t = Topology::crossbar(2, link);
        t.cables.push(Cable {
            a: host(1, 0),
            b: switch(0, 0),
            link,
        });
        assert_eq!(
            wire(&t).err().map(|e| e.to_string()),
            Some("cables[2]: host1.p0 is already used by cables[1]".to_string())
        );
        let mut t = Topology::crossbar(2, link);
        t.cables[1].b.port = 9;
        assert_eq!(
            wire(&t).err().map(|e| e.to_string()),
            Some("cables[1]: sw0 has 2 ports, no port 9".to_string())
        );
        let mut t = Topology::crossbar(3, link);
        t.cables.pop();
        assert_eq!(wire(&t).err(), Some(TopologyError::HostNotConnected(2)));
        assert_eq!(wire(&Topology::crossbar(0, link)).err(), Some(TopologyError::NoHosts));
    }

    #[test]
    fn disconnected_networks_are_refused() {
        let t = Topology {
            routing: Routing::ShortestPath,
            hosts: 2,
            switch_ports: vec![1, 1],
            cables: vec![cable(host(0, 0), switch(0, 0)), cable(host(1, 0), switch(1, 0))],
        };
        let w = wire(&t).expect("valid wiring");
        assert_eq!(
            RouteTable::shortest_paths(&t, &w).err(),
            Some(TopologyError::Unreachable { switch: 1, host: 0 })
        );
    }

    /// The shortest-path table as it was first computed, kept as the reference: a
    /// search from every destination host over every port, then every switch's lowest
    /// port one hop closer (`out[switch * hosts + host]`).
    fn reference_shortest_paths(t: &Topology, w: &Wiring) -> Result<Vec<u32>, TopologyError> {
        let (hosts, switches) = (t.hosts, t.switch_ports.len());
        let host_switch = |h: u32| match w.peer[w.port_base[h as usize] as usize] {
            Some((
                Endpoint {
                    device: Device::Switch(s),
                    ..
                },
                _,
            )) => Some(s.index()),
            _ => None,
        };
        let peer = |s: usize, port: u32| {
            w.peer[w.port(Endpoint {
                device: Device::Switch(SwitchId(s as u32)),
                port,
            })]
            .map(|(end, _)| end.device)
        };
        let has_host: Vec<bool> = (0..switches)
            .map(|s| (0..hosts).any(|h| host_switch(h) == Some(s)))
            .collect();
        let mut out = vec![u32::MAX; switches * hosts as usize];
        for host in 0..hosts {
            let mut distance = vec![u32::MAX; switches];
            let mut queue = VecDeque::new();
            if let Some(s) = host_switch(host) {
                distance[s] = 0;
                queue.push_back(s);
            }
            while let Some(s) = queue.pop_front() {
                for port in 0..t.switch_ports[s] {
                    if let Some(Device::Switch(n)) = peer(s, port)
                        && distance[n.index()] == u32::MAX
                    {
                        distance[n.index()] = distance[s] + 1;
                        queue.push_back(n.index());
                    }
                }
            }
            let farthest = (0..switches)
                .filter(|&s| has_host[s] && distance[s] != u32::MAX)
                .max_by_key(|&s| distance[s]);
            if let Some(s) = farthest {
                check_route_length(u64::from(distance[s]) + 1, || {
                    format!("the shortest route from sw{s} to host{host}")
                })?;
            }
            for s in 0..switches {
                let port = (0..t.switch_ports[s]).find(|&port| match peer(s, port) {
                    Some(Device::Host(h)) => h.0 == host,
                    Some(Device::Switch(n)) => {
                        distance[s] != u32::MAX && distance[s].checked_sub(1) == Some(distance[n.index()])
                    }
                    None => false,
                });
                match port {
                    Some(port) => out[s * hosts as usize + host as usize] = port,
                    None => return Err(TopologyError::Unreachable { switch: s as u32, host }),
                }
            }
        }
        Ok(out)
    }

    #[test]
    fn shortest_path_tables_equal_a_search_from_every_host() {
        let mut rng = Rng::new(11);
        let mut refused = 0;
        for case in 0..400 {
            // Random switches with random free ports; hosts on random ports; random
            // cables between switches (some networks end up disconnected, some hosts
            // cabled to each other).
            let switches = 1 + rng.below(7) as u32;
            let hosts = 1 + rng.below(12) as u32;
            let switch_ports: Vec<u32> = (0..switches).map(|_| 2 + rng.below(6) as u32).collect();
            let mut free: Vec<Endpoint> = (0..switches)
                .flat_map(|s| (0..switch_ports[s as usize]).map(move |p| switch(s, p)))
                .collect();
            let take = |rng: &mut Rng, free: &mut Vec<Endpoint>| {
                (!free.is_empty()).then(|| free.swap_remove(rng.below(free.len() as u64) as usize))
            };
            let mut cables = Vec::new();
            let mut h = 0;
            while h < hosts {
                if case % 10 == 0 && h + 1 < hosts && rng.below(4) == 0 {
                    cables.push(cable(host(h, 0), host(h + 1, 0)));
                    h += 2;
                    continue;
                }
                let Some(end) = take(&mut rng, &mut free) else { break };
                cables.push(cable(host(h, 0), end));
                h += 1;
            }
            if h < hosts {
                continue;
            }
            for _ in 0..rng.below(u64::from(switches) * 2 + 1) {
                let (Some(a), Some(b)) = (take(&mut rng, &mut free), take(&mut rng, &mut free)) else {
                    break;
                };
                cables.push(cable(a, b));
            }
            let t = Topology {
                routing: Routing::ShortestPath,
                hosts,
                switch_ports,
                cables,
            };
            let w = wire(&t).expect("valid wiring");
            let expected = reference_shortest_paths(&t, &w);
            let got = RouteTable::shortest_paths(&t, &w).map(|r| {
                (0..switches)
                    .flat_map(|s| (0..hosts).map(move |h| (s, h)))
                    .map(|(s, h)| r.next_port(SwitchId(s), HostId(h)))
                    .collect::<Vec<u32>>()
            });
            refused += usize::from(expected.is_err());
            assert_eq!(got, expected, "case {case}: {t:?}");
        }
        // Both kinds of networks were met.
        assert!((20..380).contains(&refused), "{refused} of 400 refused");
    }

    #[test]
    fn shortest_paths_take_time_linear_in_a_crossbar_and_in_a_tree_s_leaves() {
        let steps = |t: Topology| {
            let w = wire(&t).expect("valid wiring");
            RouteTable::shortest_paths(&t, &w).expect("connected");
            SHORTEST_PATH_STEPS.get()
        };
        // A search from every host over every port made a crossbar of n hosts n² steps
        // (256,000 hosts: 71 s); one search from its switch makes it about 3n.
        let link = LinkParams::default();
        let (small, large) = (
            steps(Topology::crossbar(1000, link)),
            steps(Topology::crossbar(16_000, link)),
        );
        assert!(small <= 3 * 1000 + 10, "{small}");
        assert!(large <= 16 * small, "{small} then {large}");
        // A tree: a search per leaf switch, over the switches and their cables.
        let tree = |k: u32| {
            let x = Xgft::kary_ntree(k, 2).expect("valid tree");
            let t = x.topology(link);
            let switch_ports: u64 = t.switch_ports.iter().map(|&p| u64::from(p)).sum();
            let bound = u64::from(x.nodes(1)) * (2 * (u64::from(x.switches()) + switch_ports)) + u64::from(x.hosts());
            (
                steps(Topology {
                    routing: Routing::ShortestPath,
                    ..t
                }),
                bound,
            )
        };
        for k in [4, 8, 16] {
            let (taken, bound) = tree(k);
            assert!(taken <= bound, "k = {k}: {taken} steps, more than {bound}");
        }
    }

    /// `switches` switches in a line, a host at each end: host0 on sw0.p0, sw i.p1 to
    /// sw i+1.p0, host1 on the last switch's p1.
    fn chain(switches: u32, routing: Routing) -> Topology {
        let last = switches - 1;
        let mut cables = vec![cable(host(0, 0), switch(0, 0)), cable(host(1, 0), switch(last, 1))];
        cables.extend((0..last).map(|s| cable(switch(s, 1), switch(s + 1, 0))));
        Topology {
            routing,
            hosts: 2,
            switch_ports: vec![2; switches as usize],
            cables,
        }
    }

    #[test]
    fn routes_longer_than_packets_count_are_refused() {
        let max = MAX_ROUTE_SWITCHES as u32;
        let routes = |t: &Topology| {
            wire(t)
                .and_then(|w| RouteTable::build(t, &w))
                .err()
                .map(|e| e.to_string())
        };
        let too_long = |route: &str| {
            Some(format!(
                "routing: {route} crosses {} switches; vesper counts at most 65,535 on a route",
                max + 1
            ))
        };
        // Shortest paths.
        assert_eq!(routes(&chain(max, Routing::ShortestPath)), None);
        assert_eq!(
            routes(&chain(max + 1, Routing::ShortestPath)),
            too_long(&format!("the shortest route from sw{max} to host0"))
        );
        // Explicit routes: right along the chain, back left.
        let explicit = |switches: u32| {
            let n = switches as usize;
            let paths = vec![
                ((HostId(0), HostId(1)), vec![1; n]),
                ((HostId(1), HostId(0)), vec![0; n]),
            ];
            Routing::Explicit(Arc::new(
                ExplicitRoutes::new(2, MultipathPolicy::First, paths).expect("stored"),
            ))
        };
        assert_eq!(routes(&chain(max, explicit(max))), None);
        assert_eq!(
            routes(&chain(max + 1, explicit(max + 1))),
            too_long("route 0 from host0 to host1")
        );
        // Dimension order: a mesh line of k switches, a ring of k reaching k/2 + 1;
        // refused as the torus is checked, before anything is built (`Torus::new`), and
        // again by the routes (the fields are public).
        let torus = |k: u32, wrap: bool| {
            let t = Torus {
                dims: vec![k],
                wrap,
                hosts_per_switch: 1,
            };
            Topology {
                routing: Routing::DimensionOrder(t.clone()),
                ..t.topology(LinkParams::default())
            }
        };
        let refused = Some(format!(
            "routing: torus.dims: its longest dimension-order route crosses {} switches; vesper counts at most \
             65,535 on a route",
            max + 1
        ));
        assert_eq!(routes(&torus(max, false)), None);
        assert_eq!(routes(&torus(max + 1, false)), refused);
        assert_eq!(routes(&torus(2 * max - 2, true)), None);
        assert_eq!(routes(&torus(2 * max, true)), refused);
        for (k, wrap) in [(max + 1, false), (2 * max, true)] {
            assert_eq!(
                Torus::new(vec![k], wrap, 1),
                Err(TorusError::RouteTooLong {
                    switches: u64::from(max) + 1
                })
            );
        }
        assert!(Torus::new(vec![max], false, 1).is_ok());
        // XGFT: up to the top level with several children and down, 2L − 1; refused
        // before its nodes are counted.
        let tree = |levels: u32| {
            let mut children = vec![1; levels as usize];
            children[levels as usize - 1] = 2;
            Xgft {
                children,
                parents: vec![1; levels as usize],
            }
        };
        let top = max.div_ceil(2);
        assert_eq!(tree(top).longest_route(), u64::from(max));
        let Xgft { children, parents } = tree(top + 1);
        assert_eq!(
            Xgft::new(children, parents).err().map(|e| e.to_string()),
            Some(format!(
                "xgft: its longest route crosses {} switches (up to level {} and down); vesper counts at most 65,535 on a route",
                max + 2,
                top + 1
            ))
        );
        // The tree's fields are public: the routes check it again.
        let tall = Xgft {
            children: vec![2; top as usize + 1],
            parents: vec![1; top as usize + 1],
        };
        let crossbar = Topology {
            routing: Routing::DModK(tall),
            ..Topology::crossbar(2, LinkParams::default())
        };
        assert_eq!(
            routes(&crossbar),
            Some(format!(
                "routing: the longest route of the XGFT crosses {} switches; vesper counts at most 65,535 on a route",
                max + 2
            ))
        );
    }
}
