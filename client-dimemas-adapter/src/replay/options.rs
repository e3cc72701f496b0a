//! How a replay runs: which sends are rendezvous, where tasks run ([`Mapping`]), how
//! messages within a node travel ([`MemoryCopy`]), how fast the CPUs are, and whether
//! it follows Dimemas's model ([`ReplayOptions`]).

use super::Ps;
use super::analytic::AnalyticCollectives;
use super::fabric::IdealBus;
use super::machine::DimemasModel;

/// How the replay treats sends, and where tasks run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplayOptions {
    /// sends of at least this many bytes use the rendezvous protocol, smaller ones are
    /// eager, whatever the trace's synchronous bit says (like Dimemas's `-S`, which
    /// overrides the bit); `None`: the bit decides
    pub eager_limit: Option<u32>,
    /// every send is eager, whatever its size or synchronous bit (like Dimemas's `-F`);
    /// wins over `eager_limit`
    pub all_eager: bool,
    /// which node each task runs on
    pub mapping: Mapping,
    /// how messages between tasks of one node travel (they never reach the fabric)
    pub memory_copy: MemoryCopy,
    /// keep a [`Record`](super::outcome::Record) of states and messages (for an application Paraver trace)
    pub record: bool,
    /// speed of the simulated CPUs relative to the traced ones (Dimemas's CPU speed
    /// ratio): a burst of d takes d / ratio, rounded to the picosecond; `None`: 1
    pub cpu_ratio: Option<CpuRatio>,
    /// the model of collectives that are not decomposed into messages ([`Op::Global`](super::workload::Op::Global))
    pub collectives: AnalyticCollectives,
    /// Dimemas's point-to-point model (startup latencies, links and buses); `None`:
    /// messages leave at once and tasks pay no startup
    pub dimemas: Option<DimemasModel>,
}

impl ReplayOptions {
    /// Whether a send of `size` bytes, synchronous or not by the trace's bit, uses the
    /// rendezvous protocol: never with `all_eager`; with an eager limit, when the size
    /// reaches it (the bit is overridden, as by Dimemas's `-S`); otherwise when the
    /// bit is set.
    pub fn rendezvous(&self, size: u32, synchronous: bool) -> bool {
        match (self.all_eager, self.eager_limit) {
            (true, _) => false,
            (false, Some(limit)) => size >= limit,
            (false, None) => synchronous,
        }
    }
}

/// A positive CPU speed ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuRatio(f64);

impl CpuRatio {
    /// `ratio` if it is positive and finite.
    pub fn new(ratio: f64) -> Option<CpuRatio> {
        (ratio.is_finite() && ratio > 0.0).then_some(CpuRatio(ratio))
    }

    /// How long a burst of `d` takes at this speed, if the clock counts that long.
    pub fn scale(self, d: Ps) -> Option<Ps> {
        super::ps_of_picoseconds(d as f64 / self.0)
    }
}

impl Eq for CpuRatio {}

/// Where tasks run, as Dimemas's mapping records say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Mapping {
    /// task t on node t
    #[default]
    OnePerNode,
    /// n tasks per node, filling nodes in order (`FILL_NODES` with n CPUs per node, or
    /// `n TASKS_PER_NODE`): task t on node t / n
    TasksPerNode(u32),
    /// task t on node t mod `nodes` (`INTERLEAVED`)
    Interleaved {
        /// nodes used
        nodes: u32,
    },
    /// task t on node `nodes[t]` (tasks beyond the list: on node t)
    Explicit(Vec<u32>),
    /// `FILL_NODES` over nodes of different processor counts: each node, in order,
    /// takes as many tasks as it has processors; tasks left over go to the last node
    FillNodes {
        /// (nodes, processors of each), in node order
        groups: Vec<(u32, u32)>,
    },
}

impl Mapping {
    /// The node of `task`.
    pub fn node_of(&self, task: u32) -> u32 {
        match self {
            Mapping::OnePerNode => task,
            Mapping::TasksPerNode(n) => task / (*n).max(1),
            Mapping::Interleaved { nodes } => task % (*nodes).max(1),
            Mapping::Explicit(nodes) => nodes.get(task as usize).copied().unwrap_or(task),
            Mapping::FillNodes { groups } => {
                let (mut node, mut first) = (0u64, 0u64);
                for &(count, cpus) in groups {
                    let held = u64::from(count) * u64::from(cpus);
                    if u64::from(task) < first + held {
                        return (node + (u64::from(task) - first) / u64::from(cpus.max(1))) as u32;
                    }
                    first += held;
                    node += u64::from(count);
                }
                node.saturating_sub(1) as u32
            }
        }
    }

    /// `FILL_NODES` over `groups` of (nodes, processors each), in node order: n tasks
    /// per node when every node has n processors.
    pub fn fill_nodes(groups: Vec<(u32, u32)>) -> Mapping {
        Mapping::FillNodes { groups }
    }

    /// How many nodes `tasks` tasks occupy (the highest node used, plus one).
    pub fn nodes_for(&self, tasks: u32) -> u64 {
        (0..tasks).map(|t| u64::from(self.node_of(t)) + 1).max().unwrap_or(0)
    }
}

/// Dimemas's intra-node model: a message between two tasks of one node takes
/// latency + size / bandwidth, with no contention.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryCopy {
    /// \[ps\]
    pub latency: Ps,
    /// `(bytes, seconds)`: that many bytes per that many seconds; `None`: unlimited
    pub bandwidth: Option<(u64, u64)>,
}

impl MemoryCopy {
    /// The bus that carries messages within a node.
    pub(super) fn bus(self) -> IdealBus {
        match self.bandwidth {
            Some((bytes, seconds)) => IdealBus::new(bytes, seconds, self.latency),
            None => IdealBus::unlimited(self.latency),
        }
    }
}
