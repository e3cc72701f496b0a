//! Topology: which devices exist and how cables join their ports; and routing: where a
//! packet may go. Topologies never touch buffers or timing.
//!
//! ```text
//!   host0.p0 ──cable── sw0.p0        hosts have one port (p0);
//!   host1.p0 ──cable── sw0.p1        switch ports are numbered 0..ports
//!      …                  …
//!   hostN.p0 ──cable── sw0.pN        (the built-in crossbar)
//! ```
//!
//! Here: the topology, its cables and routing choice, and its errors; in `wiring.rs`
//! where each port's cable leads once checked (`Wiring`); in `routes.rs` the routes
//! built from both (`RouteTable`); in `shape.rs` the trait every shape answers
//! ([`Shape`]: counts, cables, routing, diameter, its cut into parts) and the crossbar;
//! the shapes (`xgft`, `torus`, with their cuts beside them) and `explicit` routes and
//! `multirail` in their own files.

use std::sync::Arc;

use crate::ids::{Device, HostId, SwitchId};
use crate::link::LinkParams;

pub mod dragonfly;
pub mod explicit;
pub mod multirail;
mod routes;
pub mod shape;
pub mod torus;
mod wiring;
pub mod xgft;

pub use dragonfly::{Arrangement, Detour, Dragonfly, DragonflyError};
pub use explicit::{ExplicitError, ExplicitRoutes, MultipathPolicy, PathList};

pub use shape::{Crossbar, Shape, ShapeCounts, Strategy};
pub use torus::{Torus, TorusError};
pub use xgft::{PatternRoutes, PhaseLoad, Xgft, XgftError};

pub(crate) use routes::{Route, RouteTable};
pub(crate) use wiring::{Wiring, wire};

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
    /// dragonfly, minimal: a local hop to the router with the cable towards the
    /// destination's group, that cable, a local hop (table routing; see [`dragonfly`])
    DragonflyMinimal(Dragonfly),
    /// dragonfly, Valiant or UGAL-L: minimal through an intermediate router drawn for
    /// each message, always (Valiant) or when the source router's queues say so (UGAL-L;
    /// see [`Detour`])
    DragonflyDetour(Detour),
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
            Routing::ShortestPath
            | Routing::DimensionOrder(_)
            | Routing::DragonflyMinimal(_)
            | Routing::DragonflyDetour(_)
            | Routing::Explicit(_) => None,
            Routing::DModK(x) => Some(x.d_mod_k_path(src, dst)),
            Routing::SModK(x) => Some(x.s_mod_k_path(src, dst)),
            Routing::Random { xgft, seed } => Some(xgft.random_path(*seed, src, dst)),
            Routing::PatternAware(routes) => Some(routes.path(src, dst)),
        }
    }

    /// Whether packet switches send credits up their cables for it (UGAL-L's view of
    /// the next switch, see [`Detour`]).
    pub(crate) fn counts_credits(&self) -> bool {
        matches!(
            self,
            Routing::DragonflyDetour(Detour {
                ugal_threshold: Some(_),
                ..
            })
        )
    }

    /// The shape this routing is made for (`None`: it follows any cables).
    pub fn shape(&self) -> Option<&dyn Shape> {
        match self {
            Routing::DModK(x) | Routing::SModK(x) | Routing::Random { xgft: x, .. } => Some(x),
            Routing::PatternAware(routes) => Some(routes.xgft()),
            Routing::DimensionOrder(t) => Some(t),
            Routing::DragonflyMinimal(d) => Some(d),
            Routing::DragonflyDetour(x) => Some(&x.dragonfly),
            Routing::ShortestPath | Routing::Explicit(_) => None,
        }
    }
}

/// How packets find their way, as a description chooses it (each shape allows some);
/// [`Shape::routing`] makes it a [`Routing`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoutingPolicy {
    /// breadth-first shortest paths, lowest port among equals (any shape)
    ShortestPath,
    /// XGFT: up port chosen by the destination (table routing)
    DModK,
    /// XGFT: up port chosen by the source (source routing)
    SModK,
    /// XGFT: up ports drawn once per (source, destination) pair from `seed` (source
    /// routing)
    Random {
        /// the seed of the draws
        seed: u64,
    },
    /// XGFT: up ports chosen for a communication pattern (source routing); `None` until
    /// the pattern is known, d-mod-k meanwhile
    PatternAware(Option<Arc<PatternRoutes>>),
    /// torus, mesh, hypercube: one dimension after the other, the shorter way round
    DimensionOrder,
    /// dragonfly: the one shortest way through the cable between the two groups
    Minimal,
    /// dragonfly: minimal through an intermediate router drawn for each message
    Valiant {
        /// the seed of the draws
        seed: u64,
    },
    /// dragonfly: minimal, or Valiant's detour when the minimal path's first queue is
    /// longer (see [`Detour`])
    Ugal {
        /// the seed of the draws
        seed: u64,
        /// minimal when `q_min ≤ 2·q_detour + threshold` \[bytes\]
        threshold: u64,
    },
    /// paths given one by one: a route file, or routes generated for a map
    Explicit {
        /// where they come from: "routes" (a file) or "up-down"
        name: &'static str,
        /// the paths
        routes: Arc<ExplicitRoutes>,
    },
}

impl RoutingPolicy {
    /// The name used in network files and on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            RoutingPolicy::ShortestPath => "shortest-path",
            RoutingPolicy::DModK => "d-mod-k",
            RoutingPolicy::SModK => "s-mod-k",
            RoutingPolicy::Random { .. } => "random",
            RoutingPolicy::PatternAware(_) => "pattern-aware",
            RoutingPolicy::DimensionOrder => "dimension-order",
            RoutingPolicy::Minimal => "minimal",
            RoutingPolicy::Valiant { .. } => "valiant",
            RoutingPolicy::Ugal { .. } => "ugal",
            RoutingPolicy::Explicit { name, .. } => name,
        }
    }

    /// The routing of a topology of `shape` under this policy: shortest paths and
    /// explicit routes whatever the shape, then what the shape says, else shortest paths.
    pub fn on(&self, shape: &dyn Shape) -> Routing {
        match self {
            RoutingPolicy::ShortestPath => Routing::ShortestPath,
            RoutingPolicy::Explicit { routes, .. } => Routing::Explicit(Arc::clone(routes)),
            policy => shape.routing(policy).unwrap_or(Routing::ShortestPath),
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
    /// the minimal routing names an invalid dragonfly
    #[error("routing: {0}")]
    Dragonfly(#[from] DragonflyError),
    /// the routing's shape (a torus, a dragonfly) is not the topology's
    #[error(
        "routing: the {shape} has {shape_switches} switches and {shape_hosts} hosts, \
         the topology {switches} switches and {hosts} hosts"
    )]
    ShapeMismatch {
        /// what the routing's shape is: "torus", "dragonfly"
        shape: &'static str,
        /// switches of the routing's shape
        shape_switches: u32,
        /// hosts of the routing's shape
        shape_hosts: u32,
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

#[cfg(test)]
mod tests;
