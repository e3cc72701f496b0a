//! Partitioning a network for the parallel engine: which partition (thread or rank)
//! simulates each switch and each host.
//!
//! ```text
//!   part 0                 │ cut │                 part 1
//!   host0 ── sw0 ── sw1 ───┼─────┼─── sw2 ── sw3 ── host2
//!              │           │     │           │
//!            host1         │     │         host3
//! ```
//!
//! # What is partitioned
//!
//! Switches are the unit: [`partition`] puts every switch in one of `P` parts, and every
//! host goes with the switch its one cable (port 0) leads to. A host talks only to that
//! switch, so keeping it there means a host cable is never cut: the messages a host
//! injects and receives stay inside one partition until a switch forwards them, and the
//! adapter's interleaving of its packets never waits on another partition. Hosts cost
//! little beside the switches (an adapter, one port), so balance is counted in switches.
//! A host cabled straight to another host (a network of two hosts, no switch) goes with
//! the lower id's part, which is part 0: such a pair never reaches a switch, so it cuts
//! nothing. A host with no cable (which a valid topology does not have) goes to part 0.
//!
//! # What "cut" means
//!
//! A cable is *cut* when its two ends are in different parts ([`Partitioning::cut_cables`]).
//! Everything that crosses a partition boundary crosses it on a cut cable, in either
//! direction: packets, flits, credits and stop/go signals. So cut cables are where the
//! partitions must talk, and the fewer there are, the less they talk.
//!
//! # Lookahead
//!
//! The engine runs in windows: within a window a partition simulates on its own, and what
//! it sends to another partition is delivered at the window's end. That is safe when
//! nothing sent within a window can take effect at the receiver within the same window,
//! so a window is at most the least latency over cut cables, from a send at one end to
//! the first event it causes at the other: the cable's propagation, plus the
//! serialization of the smallest unit the link carries whole (a packet's header or a
//! wormhole flit), plus the routing decision when the receiving end is a packet switch
//! (it acts on a head only once it is routed; a wormhole switch acts on a STOP or GO at
//! once, so its lookahead is the cable's propagation alone). [`lookahead`] computes it, taking the least
//! over both directions of every cut cable; `None` when nothing is cut (a single part, or
//! parts that share no cable), when the partitions never need to synchronise. Cutting
//! few cables helps here too: the least latency is taken over fewer cables.
//!
//! # The partitioners
//!
//! [`partition`] chooses by the routing, which knows the shape the topology was built
//! with ([`Routing::shape`](crate::topology::Routing::shape)): a shape's own cut
//! ([`Shape::cut`](crate::topology::Shape::cut), beside the shape in `topology/`) when it
//! has one for so many parts, else the graph partitioner ([`Partitioning::strategy`]
//! tells which was used):
//!
//! - **XGFT** (d-mod-k, s-mod-k, random, pattern-aware): by subtrees
//!   ([`Strategy::Subtrees`]). The leaf switches, which the tree numbers so that every
//!   subtree's leaves are consecutive, are split into `P` contiguous balanced ranges; when
//!   `P` divides the number of subtrees at some level the ranges are unions of whole
//!   subtrees. A switch above the leaves goes with its subtree (the leaves below it) when
//!   that subtree lies in one part, so its cables stay inside the part; a switch whose
//!   subtree spans several parts (the top level always does, when `P` > 1) goes to the
//!   least loaded of the parts it spans, level by level from the bottom, so that the top
//!   level, spread over every part, evens out the counts. A k-ary n-tree split into k
//!   parts cuts only cables to the top level: each part is one subtree of the root.
//! - **Torus, mesh, hypercube** (dimension order): slabs along the largest dimension
//!   ([`Strategy::Slabs`]; among equal dimensions the last, whose slabs are ranges of
//!   consecutive switch ids). The `k` planes of that dimension are split into `P`
//!   contiguous ranges of ⌊k/P⌋ or ⌈k/P⌉ planes; each boundary cuts one cable per line
//!   along the dimension, `N/k` cables, and a ring has `P` boundaries (a mesh `P − 1`).
//!   When `P` exceeds the largest dimension (a hypercube into more than 2), the graph
//!   partitioner takes over.
//! - **Dragonfly** (minimal): whole groups in `P` contiguous balanced ranges
//!   ([`Strategy::Groups`]): only global cables are cut. With more parts than groups,
//!   the graph partitioner.
//! - **Everything else** (shortest paths on any graph, maps, explicit routes), and a
//!   routing whose shape does not match the topology: a balanced graph partition of the
//!   switches that cuts few cables ([`Strategy::Graph`], [`partition_graph`]): recursive
//!   bisection, each bisection multilevel in the manner of METIS. The switch graph is
//!   coarsened by merging neighbours along their heaviest edges down to a hundred-odd
//!   vertices; there one side is grown greedily from a few seeds (each time the vertex
//!   whose move cuts the least) and the best kept; then the sides are projected back
//!   level by level and refined at each by passes of Fiduccia–Mattheyses moves (the
//!   move that cuts the fewest cables, within a balance window, each switch once a
//!   pass; the best state met is kept). Every bisection of the switch graph itself is
//!   exact, so parts differ by at most about log₂ P switches. Each step is linear in
//!   the cables: a 100×100×100 torus splits into 4 in about a second (release build),
//!   cutting 41,400 cables where slabs cut 40,000; a 30×30 grid splits along a line.
//!
//! Every partitioner is deterministic: the same topology and `P` give the same
//! partitioning (no hashing, no threads, ties broken by ids). No partitioning crate is
//! used: the one pure-Rust candidate (`coupe`) pulls in linear-algebra and thread-pool
//! crates and had a single release, for what some hundreds of lines do here.
//!
//! Every part holds at least one switch; so `P` is at most the number of switches, and a
//! network without switches (two hosts on one cable) runs as one part.

mod barrier;
mod graph;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod ranks;
pub mod windows;

#[cfg(feature = "mpi")]
pub use mpi::{MpiError, MpiRanks};
pub use ranks::{Ranks, Reduce, ThreadRanks};
pub use windows::{Followed, Lead, Partitioned, SplitError, Told, TraceStep};

pub use crate::topology::Strategy;

use crate::ids::{Device, HostId, SwitchId};
use crate::time::SimTime;
use crate::topology::{Cable, Topology};

/// The part of every switch and every host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partitioning {
    parts: u32,
    of_switch: Vec<u32>,
    of_host: Vec<u32>,
    strategy: Strategy,
}

/// Why a network cannot be partitioned as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartitionError {
    /// zero parts asked for
    #[error("at least one partition is needed (got 0)")]
    Zero,
    /// more parts than switches: every part needs a switch
    #[error(
        "{parts} partitions asked for, but the network has {switches} switches and every partition holds at least \
         one (a network without switches runs as one partition)"
    )]
    MoreThanSwitches {
        /// parts asked for
        parts: u32,
        /// switches in the network
        switches: u32,
    },
    /// a cable names a device the topology does not have
    #[error("cables[{cable}]: {device} does not exist")]
    UnknownDevice {
        /// index of the cable
        cable: usize,
        /// the device named
        device: Device,
    },
    /// a given assignment does not list one part per switch
    #[error("partitions: {given} switches assigned, the network has {switches}")]
    WrongLength {
        /// entries given
        given: usize,
        /// switches in the network
        switches: u32,
    },
    /// a given assignment names a part beyond the parts
    #[error("partitions: sw{switch} is assigned part {part}, but there are {parts} parts (0..{parts})")]
    PartOutOfRange {
        /// the switch
        switch: u32,
        /// the part given
        part: u32,
        /// the number of parts
        parts: u32,
    },
    /// a given assignment leaves a part without switches
    #[error("partitions: part {part} holds no switch")]
    EmptyPart {
        /// the empty part
        part: u32,
    },
}

/// Splits `topology`'s switches into `parts` parts, each host with its switch, choosing
/// the partitioner by the routing's shape (see the [module documentation](self)).
pub fn partition(topology: &Topology, parts: u32) -> Result<Partitioning, PartitionError> {
    let switches = check(topology, parts)?;
    if parts == 1 {
        return Partitioning::assemble(topology, 1, vec![0; switches as usize], Strategy::Whole);
    }
    if let Some(shape) = topology.routing.shape()
        && let counts = shape.counts()
        && counts.switches == u64::from(switches)
        && counts.hosts == u64::from(topology.hosts)
        && let Some((of_switch, strategy)) = shape.cut(parts)
    {
        return Partitioning::assemble(topology, parts, of_switch, strategy);
    }
    partition_graph(topology, parts)
}

/// Splits `topology`'s switches into `parts` parts with the graph partitioner, whatever
/// the routing: balanced parts that cut few cables (see the [module documentation](self)).
pub fn partition_graph(topology: &Topology, parts: u32) -> Result<Partitioning, PartitionError> {
    let switches = check(topology, parts)?;
    if parts == 1 {
        return Partitioning::assemble(topology, 1, vec![0; switches as usize], Strategy::Whole);
    }
    let of_switch = graph::partition(topology, parts);
    Partitioning::assemble(topology, parts, of_switch, Strategy::Graph)
}

/// The engine's window for `partitioning`: the least latency over both directions of
/// every cut cable, each the cable's propagation, plus the serialization of `unit_bytes`
/// at its rate, plus `routing_latency` when the receiving end is a switch. `None` when no
/// cable is cut. Additions saturate at [`SimTime::MAX`].
///
/// # Panics
///
/// If `partitioning` was not made for `topology` (a device it does not know).
pub fn lookahead(
    topology: &Topology,
    partitioning: &Partitioning,
    routing_latency: SimTime,
    unit_bytes: u64,
) -> Option<SimTime> {
    partitioning
        .cut_cables(topology)
        .flat_map(|cable| {
            let wire = cable
                .link
                .propagation
                .saturating_add(cable.link.bandwidth.serialization_time(unit_bytes));
            [cable.a, cable.b].map(|receiver| match receiver.device {
                Device::Switch(_) => wire.saturating_add(routing_latency),
                Device::Host(_) => wire,
            })
        })
        .min()
}

impl Partitioning {
    /// A partitioning given switch by switch (`of_switch\[s\]` is switch `s`'s part), each
    /// host placed with its switch as [`partition`] places it. Every part must hold a
    /// switch; a network without switches takes `parts` = 1 and an empty list.
    pub fn from_switches(topology: &Topology, parts: u32, of_switch: Vec<u32>) -> Result<Partitioning, PartitionError> {
        let switches = check(topology, parts)?;
        if of_switch.len() != switches as usize {
            return Err(PartitionError::WrongLength {
                given: of_switch.len(),
                switches,
            });
        }
        let mut counts = vec![0u32; parts as usize];
        for (s, &part) in of_switch.iter().enumerate() {
            if part >= parts {
                return Err(PartitionError::PartOutOfRange {
                    switch: s as u32,
                    part,
                    parts,
                });
            }
            counts[part as usize] += 1;
        }
        if switches > 0
            && let Some(part) = counts.iter().position(|&c| c == 0)
        {
            return Err(PartitionError::EmptyPart { part: part as u32 });
        }
        Partitioning::assemble(topology, parts, of_switch, Strategy::Given)
    }

    /// Places the hosts of `topology` with their switches (the topology is checked).
    fn assemble(
        topology: &Topology,
        parts: u32,
        of_switch: Vec<u32>,
        strategy: Strategy,
    ) -> Result<Partitioning, PartitionError> {
        let mut of_host = vec![0u32; topology.hosts as usize];
        let mut placed = vec![false; topology.hosts as usize];
        for cable in &topology.cables {
            for (end, other) in [(cable.a, cable.b), (cable.b, cable.a)] {
                if let Device::Host(h) = end.device
                    && !placed[h.index()]
                {
                    match other.device {
                        Device::Switch(s) => {
                            of_host[h.index()] = of_switch[s.index()];
                            placed[h.index()] = true;
                        }
                        // Host to host: the pair stays in part 0 (see the module docs);
                        // `of_host` starts there.
                        Device::Host(_) => {}
                    }
                }
            }
        }
        Ok(Partitioning {
            parts,
            of_switch,
            of_host,
            strategy,
        })
    }

    /// The number of parts.
    pub fn parts(&self) -> u32 {
        self.parts
    }

    /// The partitioner that made this partitioning.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The part of `switch`.
    ///
    /// # Panics
    ///
    /// If the network has no such switch.
    pub fn of_switch(&self, switch: SwitchId) -> u32 {
        self.of_switch[switch.index()]
    }

    /// The part of `host`.
    ///
    /// # Panics
    ///
    /// If the network has no such host.
    pub fn of_host(&self, host: HostId) -> u32 {
        self.of_host[host.index()]
    }

    /// The part of `device`.
    ///
    /// # Panics
    ///
    /// If the network has no such device.
    pub fn of_device(&self, device: Device) -> u32 {
        match device {
            Device::Host(h) => self.of_host(h),
            Device::Switch(s) => self.of_switch(s),
        }
    }

    /// The part of every switch, by switch id.
    pub fn switch_parts(&self) -> &[u32] {
        &self.of_switch
    }

    /// The part of every host, by host id.
    pub fn host_parts(&self) -> &[u32] {
        &self.of_host
    }

    /// The switches of `part`, in id order.
    pub fn switches_in(&self, part: u32) -> impl Iterator<Item = SwitchId> + '_ {
        (0..self.of_switch.len() as u32)
            .filter(move |&s| self.of_switch[s as usize] == part)
            .map(SwitchId)
    }

    /// The hosts of `part`, in id order.
    pub fn hosts_in(&self, part: u32) -> impl Iterator<Item = HostId> + '_ {
        (0..self.of_host.len() as u32)
            .filter(move |&h| self.of_host[h as usize] == part)
            .map(HostId)
    }

    /// How many switches each part holds, part by part.
    pub fn switches_per_part(&self) -> Vec<u32> {
        count(self.parts, &self.of_switch)
    }

    /// How many hosts each part holds, part by part.
    pub fn hosts_per_part(&self) -> Vec<u32> {
        count(self.parts, &self.of_host)
    }

    /// The cables of `topology` whose ends are in different parts, in cable order.
    ///
    /// # Panics
    ///
    /// When iterated, if `topology` is not the one partitioned (a device it does not know).
    pub fn cut_cables<'t>(&'t self, topology: &'t Topology) -> impl Iterator<Item = &'t Cable> + 't {
        topology
            .cables
            .iter()
            .filter(|cable| self.of_device(cable.a.device) != self.of_device(cable.b.device))
    }

    /// How many cables of `topology` are cut ([`Self::cut_cables`]).
    ///
    /// # Panics
    ///
    /// If `topology` is not the one partitioned.
    pub fn cut_count(&self, topology: &Topology) -> usize {
        self.cut_cables(topology).count()
    }
}

fn count(parts: u32, of: &[u32]) -> Vec<u32> {
    let mut counts = vec![0u32; parts as usize];
    for &p in of {
        counts[p as usize] += 1;
    }
    counts
}

/// Checks `parts` against the topology and that every cable names devices it has;
/// returns the number of switches.
fn check(topology: &Topology, parts: u32) -> Result<u32, PartitionError> {
    let switches = u32::try_from(topology.switch_ports.len()).unwrap_or(u32::MAX);
    if parts == 0 {
        return Err(PartitionError::Zero);
    }
    if parts > switches.max(1) {
        return Err(PartitionError::MoreThanSwitches { parts, switches });
    }
    for (index, cable) in topology.cables.iter().enumerate() {
        for end in [cable.a, cable.b] {
            let exists = match end.device {
                Device::Host(h) => h.0 < topology.hosts,
                Device::Switch(s) => s.0 < switches,
            };
            if !exists {
                return Err(PartitionError::UnknownDevice {
                    cable: index,
                    device: end.device,
                });
            }
        }
    }
    Ok(switches)
}
