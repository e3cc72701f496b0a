//! Footprint: the memory a network's model takes, counted from what its description
//! says (hosts, switches, ports, cables, routes) before anything is built, so that a
//! network too large for the machine is refused with a figure instead of aborting the
//! process part way through its build.
//!
//! ```text
//!   description ──counts──▶ RailCounts ──┬─▶ Footprint { resident, peak }
//!   (no allocation)          (a rail each) │    resident: what the built network keeps
//!                                          │    peak: the most its build holds at once
//!                                          └─ the sizes of the model's own records
//! ```
//!
//! The figures are the model's own records, by their sizes in this build of the code:
//! per port, the wiring (owner, peer, global index) and the output (and, for wormhole
//! switches, input) port state; per host, the adapter, the sender and the event
//! queue's origin; per cable, the topology's record, kept while the network is built;
//! the routes (closed forms take a record per switch at most, shortest-path tables a
//! port per switch for each switch hosts hang off, explicit round-robin routes a turn
//! per pair of hosts). What a run adds (messages, packets and events in flight) grows
//! with the traffic, not with the network, and is not counted.

use crate::adapter::{AdapterParams, Sender};
use crate::link::LinkParams;
use crate::switch::packet::cioq::{Crossbar, InputQueues};
use crate::switch::packet::output_queued::OutPort;
use crate::topology::{Cable, Endpoint, MultipathPolicy, Routing, ShapeCounts};

/// What one switched network (a rail) is made of, counted from its description.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RailCounts {
    /// hosts (one port each)
    pub hosts: u64,
    /// switches
    pub switches: u64,
    /// ports of all the switches together
    pub switch_ports: u64,
    /// cables, the hosts' included
    pub cables: u64,
    /// CIOQ switches, and their ports (the others are output-queued or wormhole)
    pub cioq_switches: u64,
    /// ports of the CIOQ switches
    pub cioq_ports: u64,
    /// CIOQ switches with virtual output queues instead of one FIFO an input
    pub cioq_voq: bool,
    /// wormhole switches (a whole network of them)
    pub wormhole: bool,
    /// how routes are kept
    pub routes: RouteCounts,
}

/// How a network's routes are kept, as far as their memory goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RouteCounts {
    /// computed at each hop from the destination (dimension order) or from paths made
    /// as pairs first send (s-mod-k, random, pattern-aware): nothing per device
    #[default]
    Computed,
    /// d-mod-k: a record per switch
    DModK,
    /// shortest-path tables: a port per switch for each switch hosts hang off
    ShortestPath {
        /// switches that hosts hang off
        columns: u64,
        /// cables between two switches
        switch_cables: u64,
    },
    /// paths given pair by pair (held already, shared): a port per host, and a turn
    /// per pair of hosts when alternatives are taken in turn
    Explicit {
        /// alternatives taken in turn (round-robin)
        turns: bool,
    },
}

impl RouteCounts {
    /// How `routing` keeps the routes of a network that `counts` counts.
    pub fn of(routing: &Routing, counts: &ShapeCounts) -> RouteCounts {
        match routing {
            Routing::DModK(_) => RouteCounts::DModK,
            Routing::SModK(_)
            | Routing::Random { .. }
            | Routing::PatternAware(_)
            | Routing::DimensionOrder(_)
            | Routing::DragonflyMinimal(_)
            | Routing::DragonflyDetour(_) => RouteCounts::Computed,
            Routing::Explicit(routes) => RouteCounts::Explicit {
                turns: routes.policy() == MultipathPolicy::RoundRobin,
            },
            Routing::ShortestPath => RouteCounts::ShortestPath {
                columns: counts.switches_with_hosts,
                switch_cables: counts.switch_cables,
            },
        }
    }
}

/// Bytes of a network's model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footprint {
    /// what the built network keeps until it is dropped
    pub resident: u64,
    /// the most its build holds at once (the resident part, and the cables and working
    /// lists it frees once built)
    pub peak: u64,
}

impl Footprint {
    /// The footprint of a network of `rails` (one for a single network), each split
    /// into `partitions` partitions (1: whole). Rails are built one after the other, so
    /// the peak is the rails built before's resident part and the last one's peak; a
    /// split rail holds in each partition its own copy of the wiring and routes (and
    /// while it is built, of the cables), and every output port's state once.
    pub fn of_rails(rails: &[RailCounts], partitions: u32) -> Footprint {
        let mut total = Footprint::default();
        for rail in rails {
            let one = rail.footprint(partitions);
            total.peak = total.peak.max(total.resident.saturating_add(one.peak));
            total.resident = total.resident.saturating_add(one.resident);
        }
        total
    }
}

/// `count` records of `T`, in bytes (sums of such figures cannot overflow: counts are
/// 64-bit, records far smaller than 2^32 bytes).
fn of<T>(count: u64) -> u128 {
    u128::from(count) * size_of::<T>() as u128
}

/// `bytes`, or `u64::MAX` if more.
fn saturated(bytes: u128) -> u64 {
    u64::try_from(bytes).unwrap_or(u64::MAX)
}

impl RailCounts {
    /// Ports of hosts and switches together.
    pub fn ports(&self) -> u64 {
        self.hosts + self.switch_ports
    }

    /// Hosts and switches.
    pub fn devices(&self) -> u64 {
        self.hosts + self.switches
    }

    /// The cables and the switches' port counts: the topology, kept while the
    /// network is built (each partition builds from its own copy).
    pub fn topology_bytes(&self) -> u128 {
        of::<Cable>(self.cables) + of::<u32>(self.switches)
    }

    /// Where every port's cable leads: the first port of every device, the owner and
    /// peer of every port (`Wiring`).
    pub fn wiring_bytes(&self) -> u128 {
        of::<u32>(self.devices()) + of::<Endpoint>(self.ports()) + of::<Option<(Endpoint, LinkParams)>>(self.ports())
    }

    /// What the wiring's check holds while it runs: the cable on every port.
    fn wiring_work_bytes(&self) -> u128 {
        of::<Option<usize>>(self.ports())
    }

    /// The routes kept.
    pub fn route_bytes(&self) -> u128 {
        match self.routes {
            RouteCounts::Computed => 0,
            RouteCounts::DModK => of::<(u32, u32)>(self.switches),
            RouteCounts::ShortestPath { columns, .. } => {
                of::<(u32, u32)>(self.hosts)
                    + of::<u32>(self.switches)
                    + of::<u32>(columns.saturating_mul(self.switches))
            }
            RouteCounts::Explicit { turns } => {
                of::<u32>(self.hosts)
                    + if turns {
                        of::<u32>(self.hosts.saturating_mul(self.hosts))
                    } else {
                        0
                    }
            }
        }
    }

    /// What computing the routes holds while it runs (shortest paths: the cables
    /// between switches both ways, the distances, the queue and what each search
    /// found).
    fn route_work_bytes(&self) -> u128 {
        match self.routes {
            RouteCounts::ShortestPath { columns, switch_cables } => {
                of::<usize>(self.switches + 1)
                    + of::<(u32, u32)>(2 * switch_cables)
                    + of::<u32>(2 * self.switches)
                    + of::<Option<(Option<(usize, u32)>, Option<u32>)>>(columns)
            }
            _ => 0,
        }
    }

    /// Every host's adapter parameters, sender, and origin in the event queue; every
    /// port's device.
    fn engine_bytes(&self) -> u128 {
        of::<AdapterParams>(self.hosts) + of::<Sender>(self.hosts) + of::<u64>(self.devices()) + of::<u32>(self.ports())
    }

    /// The state of every output port (and input port, for wormhole switches), and
    /// the CIOQ switches' crossbars.
    pub fn port_state_bytes(&self) -> u128 {
        if self.wormhole {
            return u128::from(self.ports()) * crate::switch::wormhole::PORT_BYTES as u128;
        }
        // A crossbar of n ports: per port, an input (and its FIFO), and an output's
        // flags, pointer and list of the inputs that want it; a few lists a switch,
        // each a separate allocation (with the allocator's 16 bytes).
        let per_cioq_port = size_of::<InputQueues>()
            + size_of::<bool>() * 2
            + size_of::<u32>()
            + size_of::<Vec<u32>>()
            + if self.cioq_voq {
                0
            } else {
                size_of::<crate::switch::waiting::Queue>()
            };
        let per_cioq_switch = size_of::<Crossbar>() + 6 * 16;
        of::<OutPort>(self.ports())
            + of::<Option<Box<Crossbar>>>(self.switches)
            + u128::from(self.cioq_ports) * per_cioq_port as u128
            + u128::from(self.cioq_switches) * per_cioq_switch as u128
    }

    /// The footprint of this rail split into `partitions` partitions (1: whole).
    pub fn footprint(&self, partitions: u32) -> Footprint {
        let copies = u128::from(partitions.max(1));
        // What every partition holds of its own: the wiring, the routes, the engine's
        // lists; the port state once, spread over them.
        let shared = self.wiring_bytes() + self.route_bytes() + self.engine_bytes();
        let resident = copies * shared + self.port_state_bytes();
        // The last partition's build, the others built: its cables throughout; the
        // wiring and its check's list, then the routes and their working lists, then
        // its share of the port state. A split network also keeps the description's
        // cables (each partition builds from a copy) and the partition of every device.
        let (wiring, routes, ports) = (self.wiring_bytes(), self.route_bytes(), self.port_state_bytes());
        let adapters = of::<AdapterParams>(self.hosts);
        let stage = (wiring + adapters + self.wiring_work_bytes())
            .max(wiring + adapters + routes + self.route_work_bytes())
            .max(shared + ports / copies);
        let before = match copies {
            1 => 0,
            _ => (copies - 1) * (shared + ports / copies) + self.topology_bytes() + of::<u32>(self.devices()),
        };
        Footprint {
            resident: saturated(resident),
            peak: saturated(before + self.topology_bytes() + stage),
        }
    }
}

#[cfg(test)]
mod tests;
