//! [`Shape`]: everything vesper asks of one arrangement of switches, in one trait, so
//! that a shape is one file: the crossbar here, [`Xgft`](super::Xgft) in `xgft.rs`,
//! [`Torus`](super::Torus) (meshes and hypercubes too) in `torus.rs`, a map's in
//! map2topo. What a shape answers:
//!
//! ```text
//!   name, describe   what `vesper topo` and the logs call it
//!   counts           hosts, switches, ports and cables, counted without building
//!   try_topology     its devices and cables
//!   routing          how it routes under a policy (DModK on a tree, …)
//!   diameter_links   the longest route, bisection_cables the cut of two halves
//!   level            the switches of one level (trees), for kinds of their own
//!   cut              its own way to split switches into parts (subtrees, slabs)
//! ```
//!
//! The server's network descriptions hold one of them (`config::Shape`, an enum made by
//! a registry macro, dispatched statically); `docs/layout.md` walks through adding one.

use std::ops::Range;

use super::{Routing, RoutingPolicy, Topology, TopologyError};
use crate::ids::Device;
use crate::link::LinkParams;

/// One arrangement of switches (see the [module documentation](self)).
pub trait Shape {
    /// Its name in summaries: `XGFT(2; 16,16; 1,16)`, `8×8×8 torus`, `crossbar of 256
    /// ports`.
    fn name(&self) -> String;

    /// One line for logs and reports: the name with its hosts and switches.
    fn describe(&self) -> String {
        let counts = self.counts();
        format!("{} ({} hosts, {} switches)", self.name(), counts.hosts, counts.switches)
    }

    /// What it is made of, counted without building it.
    fn counts(&self) -> ShapeCounts;

    /// Its devices and cables, every cable `link` (routed as the shape routes by
    /// default; [`Shape::routing`] says how under a policy), or
    /// [`TopologyError::NoRoom`] instead of the allocator's abort.
    fn try_topology(&self, link: LinkParams) -> Result<Topology, TopologyError>;

    /// How it routes under `policy`, when the shape decides (`None`: the policy's own
    /// routing, or shortest paths for a policy of other shapes).
    fn routing(&self, _policy: &RoutingPolicy) -> Option<Routing> {
        None
    }

    /// Links of the longest route between two hosts, host cables included (`None`: not
    /// known without walking the cables).
    fn diameter_links(&self) -> Option<u32>;

    /// Cables cut between two halves of the hosts (`None`: not known).
    fn bisection_cables(&self) -> Option<u64>;

    /// The cables between switches by kind, for a shape whose cables differ (a
    /// dragonfly's `local` and `global`); empty: one kind.
    fn cable_kinds(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    /// The switches of level `level` (1 = those the hosts hang off) of a shape built in
    /// levels, as a range of ids, and the ports of each (`None`: no such level, or a
    /// shape without levels). Descriptions give a level's switches a kind of their own.
    fn level(&self, _level: u32) -> Option<(Range<u32>, u32)> {
        None
    }

    /// The part of every switch in `parts` parts by the shape's own cut, and what cut
    /// it is (`None`: the shape has none for so many parts; the graph partitioner
    /// splits it instead).
    fn cut(&self, _parts: u32) -> Option<(Vec<u32>, Strategy)> {
        None
    }
}

/// What a shape is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeCounts {
    /// hosts
    pub hosts: u64,
    /// switches
    pub switches: u64,
    /// ports of all switches
    pub switch_ports: u64,
    /// cables, host cables included
    pub cables: u64,
    /// switches with a host on a port
    pub switches_with_hosts: u64,
    /// cables between two switches
    pub switch_cables: u64,
}

impl ShapeCounts {
    /// The counts read off a built topology (what a shape counts without building it).
    pub fn of(topology: &Topology) -> ShapeCounts {
        let is_switch = |d: Device| matches!(d, Device::Switch(_));
        let mut with_hosts = std::collections::BTreeSet::new();
        let mut switch_cables = 0;
        for c in &topology.cables {
            match (c.a.device, c.b.device) {
                (Device::Host(_), Device::Switch(sw)) | (Device::Switch(sw), Device::Host(_)) => {
                    with_hosts.insert(sw);
                }
                (a, b) if is_switch(a) && is_switch(b) => switch_cables += 1,
                _ => {}
            }
        }
        ShapeCounts {
            hosts: u64::from(topology.hosts),
            switches: topology.switch_ports.len() as u64,
            switch_ports: topology.switch_ports.iter().map(|&p| u64::from(p)).sum(),
            cables: topology.cables.len() as u64,
            switches_with_hosts: with_hosts.len() as u64,
            switch_cables,
        }
    }

    /// Ports, hosts' and switches' together.
    pub fn ports(&self) -> u64 {
        self.hosts + self.switch_ports
    }
}

/// Which partitioner made a [`Partitioning`](crate::partition::Partitioning).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Strategy {
    /// one part: nothing to partition
    Whole,
    /// an XGFT by subtrees
    Subtrees,
    /// a torus, mesh or hypercube in slabs across `dimension`
    Slabs {
        /// the dimension cut across (0-based)
        dimension: usize,
    },
    /// a dragonfly by whole groups
    Groups,
    /// the graph partitioner
    Graph,
    /// given switch by switch
    /// ([`Partitioning::from_switches`](crate::partition::Partitioning::from_switches))
    Given,
}

/// One switch with a port per host: host `h` on port `h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crossbar {
    /// its hosts, as many as its ports
    pub hosts: u32,
}

impl Shape for Crossbar {
    fn name(&self) -> String {
        format!("crossbar of {} ports", self.hosts)
    }

    fn describe(&self) -> String {
        format!("crossbar of {} hosts", self.hosts)
    }

    fn counts(&self) -> ShapeCounts {
        let h = u64::from(self.hosts);
        ShapeCounts {
            hosts: h,
            switches: 1,
            switch_ports: h,
            cables: h,
            switches_with_hosts: 1,
            switch_cables: 0,
        }
    }

    fn try_topology(&self, link: LinkParams) -> Result<Topology, TopologyError> {
        Topology::try_crossbar(self.hosts, link)
    }

    fn diameter_links(&self) -> Option<u32> {
        Some(if self.hosts > 1 { 2 } else { 0 })
    }

    fn bisection_cables(&self) -> Option<u64> {
        Some(u64::from(self.hosts / 2))
    }
}

/// The part of item `x` when `n` items are split into `parts` contiguous ranges, part
/// `p` holding items ⌊p·n/P⌋ .. ⌊(p+1)·n/P⌋ (sizes ⌊n/P⌋ or ⌈n/P⌉). Needs `x` < `n`.
pub(crate) fn balanced_part(x: u64, n: u64, parts: u64) -> u32 {
    // x is in part p iff ⌊p·n/P⌋ ≤ x, i.e. p·n < (x+1)·P: the largest such p.
    (((x + 1) * parts - 1) / n) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_part_matches_the_ranges() {
        for n in 1..40u64 {
            for parts in 1..=n {
                for x in 0..n {
                    let p = u64::from(balanced_part(x, n, parts));
                    assert!(p * n / parts <= x && x < (p + 1) * n / parts, "n {n} P {parts} x {x}");
                }
            }
        }
    }
}
