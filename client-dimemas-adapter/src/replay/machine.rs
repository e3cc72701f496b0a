//! Dimemas's machine, as a configuration describes it: the machine's buses and, node
//! by node, what its node records ("multi node information", "node information") give.
//!
//! ```text
//!   nodes 0 .. c1-1        nodes c1 .. c1+c2-1        ...
//!   ┌───────────────┐      ┌───────────────┐
//!   │ first record  │      │ second record │          (records in file order)
//!   └───────────────┘      └───────────────┘
//!   each node: processors, CPU speed ratio, intra-node startup, bandwidth, buses and
//!   links per task; inter-node startup and links
//! ```
//!
//! Which node's values a message uses, as Dimemas does: the startup latency is the
//! *sender's* node's (a receive or a wait pays the latency of the node of the task it
//! receives from), within a node or between nodes by where the two tasks are; a copy
//! within a node takes that node's bandwidth; links are the sender's node's output links
//! and the receiver's input links (within a node: the two tasks' own links); buses are
//! the machine's between nodes and the node's within it. A CPU burst is divided by its
//! node's speed ratio.

use std::sync::Arc;

use super::Ps;

/// Links per owner (a node between nodes, a task within a node); both 0: unlimited;
/// one of them 0: half-duplex.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Links {
    /// input links
    pub input: u32,
    /// output links
    pub output: u32,
}

impl Links {
    /// Both counts 0: links do not limit.
    pub fn unlimited(self) -> bool {
        self.input == 0 && self.output == 0
    }

    /// Exactly one count 0: max(in, out) links, each one direction at a time.
    pub fn half_duplex(self) -> bool {
        (self.input == 0) != (self.output == 0)
    }
}

/// Below this, Dimemas takes a startup latency as none \[ps\]: 1 ns.
pub const SMALLEST_STARTUP: Ps = 1_000;

/// One node's part of Dimemas's model.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NodeModel {
    /// processors: at most this many of its tasks' threads run at once
    pub cpus: u32,
    /// speed of its CPUs relative to the traced ones: a burst takes its time divided
    /// by this; 0: every burst takes no time
    pub cpu_ratio: f64,
    /// startup of a message to a task of the same node \[ps\]
    pub intra_startup: Ps,
    /// bandwidth of a copy within the node as `(bytes, seconds)`; `None`: instantaneous
    pub intra_bandwidth: Option<(u64, u64)>,
    /// messages copied within the node at once (0: unlimited)
    pub intra_buses: u32,
    /// links of each of its tasks, within the node
    pub intra_links: Links,
    /// startup of a message to another node \[ps\]
    pub inter_startup: Ps,
    /// its links to the network
    pub inter_links: Links,
}

impl NodeModel {
    /// A node with one processor at the traced speed, free copies, no startups and
    /// unlimited links and buses.
    pub fn free() -> NodeModel {
        NodeModel {
            cpus: 1,
            cpu_ratio: 1.0,
            ..NodeModel::default()
        }
    }

    /// How long a burst traced as `d` takes on this node, if the clock counts it.
    pub fn burst(&self, d: Ps) -> Option<Ps> {
        if self.cpu_ratio == 0.0 {
            return Some(0);
        }
        super::ps_of_picoseconds(d as f64 / self.cpu_ratio)
    }
}

/// Dimemas's point-to-point model, as a configuration sets it: the machine's buses and
/// its nodes, in groups of nodes alike.
#[derive(Debug, Clone, PartialEq)]
pub struct DimemasModel {
    /// inter-node buses of the machine (0: unlimited)
    pub buses: u32,
    /// (first node, its group's model), by first node
    groups: Arc<[(u32, NodeModel)]>,
}

impl Default for DimemasModel {
    fn default() -> DimemasModel {
        DimemasModel::uniform(NodeModel::free(), 0)
    }
}

impl DimemasModel {
    /// Every node alike.
    pub fn uniform(node: NodeModel, buses: u32) -> DimemasModel {
        DimemasModel {
            buses,
            groups: Arc::from([(0, node)]),
        }
    }

    /// Groups of `count` nodes each, in order (node 0 is the first group's first);
    /// nodes past them are like the last group's. `None` without a group.
    pub fn groups(groups: &[(u32, NodeModel)], buses: u32) -> Option<DimemasModel> {
        let mut first = 0u32;
        let mut table = Vec::with_capacity(groups.len());
        for &(count, node) in groups {
            table.push((first, node));
            first = first.saturating_add(count);
        }
        (!table.is_empty()).then(|| DimemasModel {
            buses,
            groups: Arc::from(table),
        })
    }

    /// The model of node `node`.
    pub fn node(&self, node: u32) -> &NodeModel {
        let i = self.groups.partition_point(|&(first, _)| first <= node);
        &self.groups[i.saturating_sub(1)].1
    }

    /// Every group's first node and model.
    pub fn every_group(&self) -> impl Iterator<Item = &(u32, NodeModel)> {
        self.groups.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_fill_nodes_in_order() {
        let node = |cpus| NodeModel {
            cpus,
            ..NodeModel::free()
        };
        let model = DimemasModel::groups(&[(2, node(1)), (3, node(4)), (1, node(8))], 2).expect("groups");
        let cpus: Vec<u32> = (0..8).map(|n| model.node(n).cpus).collect();
        assert_eq!(cpus, [1, 1, 4, 4, 4, 8, 8, 8]);
        assert_eq!(model.buses, 2);
        assert!(DimemasModel::groups(&[], 0).is_none());
    }

    #[test]
    fn a_ratio_of_zero_makes_bursts_instantaneous() {
        let node = |cpu_ratio| NodeModel {
            cpu_ratio,
            ..NodeModel::free()
        };
        assert_eq!(node(0.0).burst(5_000), Some(0));
        assert_eq!(node(2.0).burst(5_000), Some(2_500));
        assert_eq!(node(0.5).burst(5_000), Some(10_000));
    }
}
