//! Server configuration: what `vesper serve` is told on its command line.

use std::sync::Arc;
use std::time::Duration;

use vesper_map2topo::MapShape;
use vesper_netmodels::partition::{Lead, Partitioned, Ranks, SplitError};
pub use vesper_netmodels::topology::RoutingPolicy;
use vesper_netmodels::topology::{Crossbar, Shape as ShapeModel, ShapeCounts, Strategy};
use vesper_netmodels::{
    AdapterParams, Bandwidth, BuildError, Device, Dragonfly, HostId, IdealParams, LinkParams, MultiRail,
    NetworkBuilder, RailPolicy, Routing, SimTime, SwitchId, SwitchKind, SwitchParams, Topology, TopologyError, Torus,
    TraceShape, Xgft,
};

/// How a simulation's network is split (see `vesper_netmodels::partition`).
#[derive(Debug, Clone)]
pub enum Split {
    /// into N partitions side by side on threads of this process (1: whole)
    Threads(u32),
    /// one partition per rank of an MPI run, each process holding its own: every rank
    /// runs the same program, and rank 0 writes the outputs
    Ranks(Arc<dyn Ranks>),
    /// one partition per rank of an MPI run, this process being rank 0, which hears the
    /// clients and leads the others through `Lead` (co-simulation)
    Led(Arc<Lead>),
}

/// Closes rank 0's lead of the other ranks when dropped, however the command ends
/// (see `vesper_netmodels::partition::Lead::close`); nothing for other splits.
pub(crate) struct Closing<'a>(pub(crate) &'a Split);

impl Drop for Closing<'_> {
    fn drop(&mut self) {
        if let Split::Led(lead) = self.0 {
            lead.close();
        }
    }
}

impl Split {
    /// The MPI ranks it splits over (`None`: threads of this process).
    pub fn ranks(&self) -> Option<&Arc<dyn Ranks>> {
        match self {
            Split::Threads(_) => None,
            Split::Ranks(ranks) => Some(ranks),
            Split::Led(lead) => Some(lead.ranks()),
        }
    }

    /// The number of partitions.
    pub fn partitions(&self) -> u32 {
        match (self, self.ranks()) {
            (Split::Threads(n), _) => *n,
            (_, ranks) => ranks.map_or(1, |r| r.size()),
        }
    }

    /// Whether this process writes the outputs (rank 0, or the only process).
    pub fn writes(&self) -> bool {
        self.ranks().is_none_or(|r| r.rank() == 0)
    }

    /// What asked for the split, as errors name it: `--partitions N` or `N MPI ranks`.
    pub fn named(&self) -> String {
        match self.ranks() {
            None => format!("--partitions {}", self.partitions()),
            Some(ranks) => format!("{} MPI ranks", ranks.size()),
        }
    }
}

/// The network to simulate: its hosts, where the client nodes run, and what joins the
/// hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkConfig {
    /// number of hosts
    pub hosts: u32,
    /// which host each client node (processor) runs on
    pub placement: Placement,
    /// what carries the messages
    pub fabric: FabricConfig,
}

/// Which host each client node runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// `nodes_per_host` nodes on every host, filled in order: node `n` on host
    /// `n / nodes_per_host`
    Fill {
        /// processors per host
        nodes_per_host: u32,
    },
    /// node `n` on the `n`-th host of the list (a task mapping file)
    Listed(Vec<HostId>),
}

impl Placement {
    /// One node per host: node `n` on host `n`.
    pub const ONE_PER_HOST: Placement = Placement::Fill { nodes_per_host: 1 };

    /// The host of `node`; a host beyond the network (which the model refuses) for a
    /// node beyond [`Placement::nodes`].
    pub fn host_of(&self, node: u32) -> HostId {
        match self {
            Placement::Fill { nodes_per_host } => HostId(node / (*nodes_per_host).max(1)),
            Placement::Listed(hosts) => hosts.get(node as usize).copied().unwrap_or(HostId(u32::MAX)),
        }
    }

    /// How many client nodes a network of `hosts` hosts runs.
    pub fn nodes(&self, hosts: u32) -> u64 {
        match self {
            Placement::Fill { nodes_per_host } => u64::from(hosts) * u64::from(*nodes_per_host),
            Placement::Listed(list) => list.len() as u64,
        }
    }

    /// Where the node count comes from, for messages.
    pub fn describe(&self, hosts: u32) -> String {
        match self {
            Placement::Fill { nodes_per_host: 1 } => format!("{hosts} hosts, one node each"),
            Placement::Fill { nodes_per_host } => format!("{hosts} hosts × {nodes_per_host} nodes per host"),
            Placement::Listed(list) => format!("{} nodes in the task mapping", list.len()),
        }
    }
}

/// What carries the messages between hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(
    clippy::large_enum_variant,
    reason = "a description, made once per network: its size does not matter"
)]
pub enum FabricConfig {
    /// adapters, cables and switches arranged by a topology
    Switched(SwitchedConfig),
    /// no contention: latency + size / bandwidth per message (calibration)
    Ideal(IdealParams),
    /// independent switched networks joining the same hosts
    MultiRail {
        /// the networks
        rails: Vec<SwitchedConfig>,
        /// how a host picks the rail of a message
        policy: RailPolicy,
    },
}

/// A network of adapters, cables and switches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchedConfig {
    /// how the switches are arranged
    pub shape: Shape,
    /// how packets find their way
    pub routing: RoutingPolicy,
    /// every cable's rate and delay
    pub link: LinkParams,
    /// the host cables' delay, when not the link's (BookSim's injection and ejection
    /// channels take 1 cycle where its cables take 10)
    pub host_propagation: Option<SimTime>,
    /// every switch's parameters
    pub switch: SwitchParams,
    /// trees: the switch kind of some levels (1 = the leaves), instead of `switch.kind`
    pub level_kinds: Vec<(u32, SwitchKind)>,
    /// maps: the switch kind of some switches (by their `type`), instead of `switch.kind`
    pub switch_kinds: Vec<(u32, SwitchKind)>,
    /// maps: the adapters of some hosts (by their `type`), instead of `adapter`
    pub host_adapters: Vec<(u32, AdapterParams)>,
    /// every adapter's packets
    pub adapter: AdapterParams,
}

/// Declares the shapes a network may have: each line a variant and the model it holds,
/// which implements [`ShapeModel`] (`vesper_netmodels::topology::Shape`). Gives the enum
/// [`Shape`] and its own `ShapeModel` implementation, each call a `match` over the
/// variants: adding a shape is one line here (see `docs/layout.md`).
macro_rules! shapes {
    ($( $(#[$doc:meta])* $variant:ident($model:ty), )*) => {
        /// The arrangement of the switches.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Shape {
            $( $(#[$doc])* $variant($model), )*
        }

        /// Each call goes to the variant's model.
        impl ShapeModel for Shape {
            fn name(&self) -> String {
                match self { $( Shape::$variant(s) => s.name(), )* }
            }
            fn describe(&self) -> String {
                match self { $( Shape::$variant(s) => s.describe(), )* }
            }
            fn counts(&self) -> ShapeCounts {
                match self { $( Shape::$variant(s) => s.counts(), )* }
            }
            fn try_topology(&self, link: LinkParams) -> Result<Topology, TopologyError> {
                match self { $( Shape::$variant(s) => s.try_topology(link), )* }
            }
            fn routing(&self, policy: &RoutingPolicy) -> Option<Routing> {
                match self { $( Shape::$variant(s) => s.routing(policy), )* }
            }
            fn diameter_links(&self) -> Option<u32> {
                match self { $( Shape::$variant(s) => s.diameter_links(), )* }
            }
            fn bisection_cables(&self) -> Option<u64> {
                match self { $( Shape::$variant(s) => s.bisection_cables(), )* }
            }
            fn cable_kinds(&self) -> Vec<(&'static str, u64)> {
                match self { $( Shape::$variant(s) => s.cable_kinds(), )* }
            }
            fn level(&self, level: u32) -> Option<(std::ops::Range<u32>, u32)> {
                match self { $( Shape::$variant(s) => s.level(level), )* }
            }
            fn cut(&self, parts: u32) -> Option<(Vec<u32>, Strategy)> {
                match self { $( Shape::$variant(s) => s.cut(parts), )* }
            }
        }
    };
}

shapes! {
    /// one switch with a port per host
    Crossbar(Crossbar),
    /// an extended generalized fat tree (k-ary n-trees and thin trees included)
    Xgft(Xgft),
    /// a torus, mesh or hypercube
    Torus(Torus),
    /// a dragonfly
    Dragonfly(Dragonfly),
    /// read from a map file (one rail of it)
    Map(MapShape),
}

impl SwitchedConfig {
    /// A crossbar of `hosts` hosts, default links and switches, with `adapter` adapters.
    pub fn crossbar(hosts: u32, adapter: AdapterParams) -> SwitchedConfig {
        SwitchedConfig {
            shape: Shape::Crossbar(Crossbar { hosts }),
            routing: RoutingPolicy::ShortestPath,
            link: LinkParams::default(),
            host_propagation: None,
            switch: SwitchParams::default(),
            level_kinds: Vec::new(),
            switch_kinds: Vec::new(),
            host_adapters: Vec::new(),
            adapter,
        }
    }

    /// The network builder of this network; refused if its cables do not fit in memory.
    pub fn builder(&self) -> Result<NetworkBuilder, BuildError> {
        let mut builder = NetworkBuilder::new(self.try_topology()?)
            .switch_params(self.switch)
            .adapter_params(self.adapter);
        for &(level, kind) in &self.level_kinds {
            for s in self.shape.level(level).map_or(0..0, |(switches, _)| switches) {
                builder = builder.switch_kind_of(SwitchId(s), kind);
            }
        }
        for &(s, kind) in &self.switch_kinds {
            builder = builder.switch_kind_of(SwitchId(s), kind);
        }
        for &(h, params) in &self.host_adapters {
            builder = builder.adapter_of(HostId(h), params);
        }
        Ok(builder)
    }

    /// The topology, routed as configured.
    ///
    /// # Panics
    ///
    /// If its cables do not fit in memory (see [`Self::try_topology`]).
    pub fn topology(&self) -> Topology {
        self.try_topology().unwrap_or_else(|e| panic!("{e}"))
    }

    /// The topology routed as configured, or [`TopologyError::NoRoom`] instead of the
    /// allocator's abort (its size comes from the description).
    pub fn try_topology(&self) -> Result<Topology, TopologyError> {
        let mut topology = self.shape.try_topology(self.link)?;
        topology.routing = self.routing.on(&self.shape);
        if let Some(propagation) = self.host_propagation {
            for cable in &mut topology.cables {
                if matches!(cable.a.device, Device::Host(_)) || matches!(cable.b.device, Device::Host(_)) {
                    cable.link.propagation = propagation;
                }
            }
        }
        Ok(topology)
    }

    /// Ports of this network, hosts' and switches' together, counted without building it.
    pub fn ports(&self) -> u64 {
        self.shape.counts().ports()
    }
}

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig {
            hosts: 256,
            placement: Placement::ONE_PER_HOST,
            fabric: FabricConfig::Switched(SwitchedConfig::crossbar(256, AdapterParams::default())),
        }
    }
}

impl NetworkConfig {
    /// Builds the network (every rail of a multi-rail one).
    pub fn build(&self) -> Result<MultiRail, BuildError> {
        match &self.fabric {
            FabricConfig::Switched(s) => Ok(MultiRail::single(s.builder()?.build()?)),
            FabricConfig::Ideal(params) => Ok(MultiRail::single(NetworkBuilder::ideal(self.hosts, *params).build()?)),
            FabricConfig::MultiRail { rails, policy } => {
                let rails = rails
                    .iter()
                    .map(|r| r.builder()?.build())
                    .collect::<Result<Vec<_>, _>>()?;
                MultiRail::new(rails, *policy)
            }
        }
    }

    /// Builds the network with every rail split into `partitions` partitions, run side
    /// by side on threads (see `vesper_netmodels::partition`); 1: [`Self::build`].
    pub fn build_split(&self, partitions: u32) -> Result<MultiRail, SplitError> {
        self.build_as(&Split::Threads(partitions))
    }

    /// Builds the network split as `split` says.
    pub fn build_as(&self, split: &Split) -> Result<MultiRail, SplitError> {
        if split.partitions() == 1 {
            return Ok(self.build()?);
        }
        let (builders, policy) = self.rails()?;
        let rails = builders
            .into_iter()
            .map(|b| match split {
                Split::Threads(partitions) => Partitioned::build(b, *partitions),
                Split::Ranks(ranks) => Partitioned::build_on_ranks(b, ranks.clone()),
                Split::Led(lead) => Partitioned::build_on_ranks(b, lead.ranks().clone()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut net = MultiRail::of_rails(rails, policy)?;
        if let Split::Led(lead) = split {
            net.lead(lead);
        }
        Ok(net)
    }

    /// Every rail's builder and the rails' policy (one rail for a single network).
    pub fn rails(&self) -> Result<(Vec<NetworkBuilder>, RailPolicy), BuildError> {
        Ok(match &self.fabric {
            FabricConfig::Switched(s) => (vec![s.builder()?], RailPolicy::RoundRobin),
            FabricConfig::Ideal(params) => (vec![NetworkBuilder::ideal(self.hosts, *params)], RailPolicy::RoundRobin),
            FabricConfig::MultiRail { rails, policy } => (
                rails.iter().map(SwitchedConfig::builder).collect::<Result<_, _>>()?,
                *policy,
            ),
        })
    }

    /// Each rail's shape, for the network trace's topology (`FILE.topology`).
    pub fn trace_shapes(&self) -> Vec<TraceShape> {
        let shape = |s: &SwitchedConfig| match &s.shape {
            Shape::Crossbar(_) => TraceShape::Crossbar,
            Shape::Xgft(x) => TraceShape::Xgft(x.clone()),
            Shape::Torus(t) => TraceShape::Torus(t.clone()),
            Shape::Map(_) => TraceShape::Map,
            Shape::Dragonfly(d) => TraceShape::Dragonfly(d.clone()),
        };
        match &self.fabric {
            FabricConfig::Switched(s) => vec![shape(s)],
            FabricConfig::Ideal(_) => vec![TraceShape::Ideal],
            FabricConfig::MultiRail { rails, .. } => rails.iter().map(shape).collect(),
        }
    }

    /// A one-line description for logs and reports.
    pub fn describe(&self) -> String {
        let fabric = self.describe_fabric();
        match &self.placement {
            Placement::Fill { nodes_per_host: 1 } => fabric,
            Placement::Fill { nodes_per_host } => format!("{fabric}, {nodes_per_host} nodes per host"),
            Placement::Listed(list) => format!("{fabric}, {} nodes placed by a task mapping", list.len()),
        }
    }

    fn describe_fabric(&self) -> String {
        match &self.fabric {
            FabricConfig::Switched(s) => s.describe(),
            FabricConfig::Ideal(params) => format!(
                "ideal network, {} hosts, {} + {}, no contention",
                self.hosts,
                match params.bandwidth {
                    Some(b) => format!(
                        "{} MBps (2^20 B/s)",
                        three_decimals(b.bytes_per_second_f64() / f64::from(1u32 << 20))
                    ),
                    None => "instantaneous transfers (bandwidth 0)".into(),
                },
                params.latency
            ),
            FabricConfig::MultiRail { rails, policy } => {
                let each: Vec<String> = rails
                    .iter()
                    .enumerate()
                    .map(|(i, r)| format!("rail {i}: {}", r.describe()))
                    .collect();
                format!("{} rails ({policy}); {}", rails.len(), each.join("; "))
            }
        }
    }
}

impl SwitchedConfig {
    /// A one-line description.
    pub fn describe(&self) -> String {
        let s = self;
        format!(
            "{} {}, {} routing, links {} MB/s + {}{}, routing {}, packets of {} + {} bytes ({} interleaving)",
            match s.switch.kind {
                SwitchKind::OutputQueued => "output-queued".to_string(),
                SwitchKind::Cioq(c) => format!(
                    "CIOQ (speedup {}, {})",
                    c.speedup,
                    if c.virtual_output_queues {
                        "virtual output queues"
                    } else {
                        "FIFO inputs"
                    }
                ),
                SwitchKind::Wormhole(w) => format!(
                    "wormhole ({} B flits, {} B buffers, {} arbitration{}{})",
                    w.flit_bytes,
                    w.buffer_bytes,
                    w.arbitration,
                    if w.bubble { ", bubble flow control" } else { "" },
                    match w.granularity {
                        vesper_netmodels::Granularity::Fine => ", flit by flit",
                        vesper_netmodels::Granularity::Coarse => "",
                    }
                ),
            },
            s.shape.describe(),
            s.routing.name(),
            three_decimals(s.link.bandwidth.bytes_per_second_f64() / 1e6),
            s.link.propagation,
            s.host_propagation
                .map(|p| format!(" (host cables + {p})"))
                .unwrap_or_default(),
            s.switch.routing_latency,
            s.adapter.payload_bytes,
            s.adapter.header_bytes,
            s.adapter.interleave
        )
    }
}

/// `x` with at most three decimals, and none that are zeros at the end: 250, 333.333, 0.5.
fn three_decimals(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// How rendezvous (`PROTO`) lines are modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RendezvousMode {
    /// the data starts at the `READY_TO_RECV` time; `OK_TO_SEND` is only counted
    #[default]
    Dimemas,
    /// the request and the acknowledgment travel the network as control packets of
    /// `control_bytes`, and the data starts when the acknowledgment arrives
    Wire {
        /// size of a request or acknowledgment [bytes]
        control_bytes: u32,
    },
}

/// How a waiting client is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Replies {
    /// the completions at its earliest completion time, and with them every later one
    /// the model has already fixed within its safe horizon (no message any client may
    /// still send can change them): fewer round trips, the same predictions
    #[default]
    Batched,
    /// the completions at its earliest completion time only
    Earliest,
}

/// How long a client may stall part way through a line or a batch, or leave its
/// replies unread (the legacy client writes each batch with one `send()` and reads
/// every reply at once, so a live one never comes near it).
pub const DEFAULT_CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a connection may stay without sending a well-formed line (a replayer
/// sends its first batch when its replay first puts a message on the network).
pub const DEFAULT_SILENT_TIMEOUT: Duration = Duration::from_secs(30);

/// `path` for run `run` of a server: `{run}` in it becomes the run's number.
pub fn per_run(path: &std::path::Path, run: u64) -> std::path::PathBuf {
    match path.to_str() {
        Some(text) if text.contains(RUN_PLACEHOLDER) => text.replace(RUN_PLACEHOLDER, &run.to_string()).into(),
        _ => path.to_path_buf(),
    }
}

/// Whether `path` names a file a run: it holds `{run}` where [`per_run`] replaces it.
pub fn is_per_run(path: &std::path::Path) -> bool {
    path.to_str().is_some_and(|text| text.contains(RUN_PLACEHOLDER))
}

/// What stands for the run's number in an output's file name.
pub const RUN_PLACEHOLDER: &str = "{run}";

/// Everything the server needs to run.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// the network to simulate
    pub network: NetworkConfig,
    /// clients to wait for before simulated time starts to advance
    pub clients: usize,
    /// connections accepted at once; more are refused with a warning
    pub max_connections: usize,
    /// clients one IP address (an IPv6 /64) may have connected at once; more are refused
    /// with a warning, and its connections that have not spoken make room for new ones.
    /// `None`: the default, twice `clients` and at least 8 (see
    /// [`ServerConfig::per_address_limit`]); `Some(0)`: no limit
    pub max_connections_per_address: Option<usize>,
    /// longest line accepted [bytes]
    pub max_line: usize,
    /// largest reply written at once [bytes]; `None` writes every due completion at once
    pub reply_limit: Option<usize>,
    /// messages a client may have in the server (queued or in the network) at once
    pub max_in_flight: usize,
    /// `SEND`/`PROTO` lines one batch may hold; the rest of a longer batch is dropped
    pub max_batch: usize,
    /// after the first run (every expected client finished), stop (true) or start the
    /// next run on a fresh network (false)
    pub exit_when_done: bool,
    /// a client that started a line or a batch and sends nothing more for this long, or
    /// leaves its replies unread this long, is dropped
    pub client_timeout: Duration,
    /// a connection that sends no well-formed line for this long after connecting is
    /// closed
    pub silent_timeout: Duration,
    /// how long to wait before retrying after a failed accept
    pub accept_backoff: Duration,
    /// how long the simulation thread keeps polling without sleeping after work
    pub spin: Duration,
    /// how `PROTO` lines are modelled
    pub rendezvous: RendezvousMode,
    /// how a waiting client is answered
    pub replies: Replies,
    /// how the network is split: partitions side by side on threads, or MPI ranks
    /// (this process being rank 0, which hears the clients and leads the others)
    pub split: Split,
    /// the network's Paraver trace, if one is written
    pub trace: Option<TraceConfig>,
}

/// Where and how the network trace is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceConfig {
    /// the `.prv` (or `.prv.gz`) file
    pub file: Option<std::path::PathBuf>,
    /// a TCP address or a named pipe
    pub stream: Option<String>,
    /// how long to wait for room in the stream's buffer
    pub stream_wait: Duration,
    /// when the stream connects, and what a collector out of reach does
    pub stream_connect: StreamConnect,
    /// what the trace holds
    pub options: vesper_netmodels::ParaverOptions,
}

/// When a run's stream connects, and what a collector out of reach does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamConnect {
    /// As the run is set up, once: a collector out of reach is an error that ends the
    /// server (a server of one run, `vesper run`: nobody would see the trace).
    AtSetup,
    /// When the run's first records are ready, trying for up to this long: a collector
    /// out of reach leaves the run untraced, with a warning in the log and in the
    /// run's report (a server that keeps serving: it must stay up).
    Retrying(Duration),
}

impl TraceConfig {
    /// The trace of run `run` of a server: `{run}` in the file's name becomes the
    /// run's number; a stream opens anew for every run.
    pub fn for_run(&self, run: u64) -> TraceConfig {
        TraceConfig {
            file: self.file.as_deref().map(|f| per_run(f, run)),
            ..self.clone()
        }
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            network: NetworkConfig::default(),
            clients: 1,
            max_connections: 256,
            max_connections_per_address: None,
            max_line: vesper_protocol::DEFAULT_MAX_LINE,
            reply_limit: Some(vesper_protocol::LEGACY_REPLY_LIMIT),
            max_in_flight: 1 << 20,
            max_batch: 1 << 16,
            exit_when_done: true,
            client_timeout: DEFAULT_CLIENT_TIMEOUT,
            silent_timeout: DEFAULT_SILENT_TIMEOUT,
            accept_backoff: Duration::from_millis(100),
            spin: Duration::from_micros(200),
            rendezvous: RendezvousMode::Dimemas,
            replies: Replies::default(),
            split: Split::Threads(1),
            trace: None,
        }
    }
}

impl ServerConfig {
    /// The most clients one IP address may have connected at once (`None`: no limit).
    pub fn per_address_limit(&self) -> Option<usize> {
        match self.max_connections_per_address {
            Some(0) => None,
            Some(limit) => Some(limit),
            None => Some(default_connections_per_address(self.clients)),
        }
    }
}

/// The default of `--max-connections-per-address` for runs of `clients` clients: room
/// for a run's clients on one machine and as many waiting for the next run, and at
/// least 8.
pub fn default_connections_per_address(clients: usize) -> usize {
    clients.saturating_mul(2).max(8)
}

/// A rate of `value` units of `unit_bytes` bytes per second, exact for any decimal
/// `value` (its shortest decimal form is taken as written); `None` if not positive or
/// beyond what the model can represent.
pub fn bandwidth(value: f64, unit_bytes: u64) -> Option<Bandwidth> {
    let (digits, scale) = vesper_input::decimal(value)?;
    let bytes = u128::from(digits) * u128::from(unit_bytes);
    let seconds = 10u128.checked_pow(scale)?;
    let divisor = gcd(bytes, seconds);
    Bandwidth::from_ratio(
        u64::try_from(bytes / divisor).ok()?,
        u64::try_from(seconds / divisor).ok()?,
    )
}

/// Bytes in a MB of link rates (10^6).
pub const MB: u64 = 1_000_000;

/// Bytes in Dimemas's MBps unit (2^20).
pub const DIMEMAS_MB: u64 = 1 << 20;

/// `value` as Rust reads it back, shortest: `250`, `0.5`, and `1e-12` or `1e30` rather
/// than a screenful of zeros.
pub fn number_text(value: f64) -> String {
    let text = format!("{value:?}");
    match text.strip_suffix(".0") {
        Some(whole) => whole.to_string(),
        None => text,
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

/// A delay given in nanoseconds (fractions allowed, down to the picosecond).
pub fn time_from_ns(ns: f64) -> Option<SimTime> {
    SimTime::from_wire_ns(ns).ok()
}

/// The reply limit of `--reply-limit BYTES` (0: none): at least 256 bytes, which holds
/// any one line.
pub fn reply_limit(bytes: usize) -> anyhow::Result<Option<usize>> {
    anyhow::ensure!(
        bytes == 0 || bytes >= 256,
        "--reply-limit {bytes}: a reply must hold at least one line (256 bytes or more, or 0)"
    );
    Ok((bytes > 0).then_some(bytes))
}

/// Whether a client must read replies whole, joining lines across reads, from a server
/// of reply limit `limit` (`None`: no limit): past the legacy client's 500-byte read.
pub fn replies_read_whole(limit: Option<usize>) -> bool {
    limit.is_none_or(|l| l > vesper_protocol::LEGACY_REPLY_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_rates_are_exact() {
        let b = bandwidth(312.5, MB).expect("positive");
        assert_eq!(b.serialization_time(5), SimTime::from_ns(16));
        let tenth = bandwidth(0.1, MB).expect("positive");
        assert_eq!(tenth.serialization_time(1), SimTime::from_ns(10_000));
        let dimemas = bandwidth(250.0, DIMEMAS_MB).expect("positive");
        assert_eq!(dimemas.serialization_time(250 << 20), SimTime::from_ns(1_000_000_000));
        assert_eq!(bandwidth(0.0, MB), None);
        assert_eq!(bandwidth(-1.0, MB), None);
        assert_eq!(bandwidth(f64::NAN, MB), None);
    }

    #[test]
    fn one_address_gets_room_for_two_runs_by_default_at_least_8_connections() {
        let limit = |clients, per_address| {
            ServerConfig {
                clients,
                max_connections_per_address: per_address,
                ..ServerConfig::default()
            }
            .per_address_limit()
        };
        assert_eq!(limit(1, None), Some(8));
        assert_eq!(limit(4, None), Some(8));
        assert_eq!(limit(10, None), Some(20));
        assert_eq!(limit(10, Some(3)), Some(3));
        assert_eq!(limit(10, Some(0)), None);
    }

    #[test]
    fn numbers_are_written_shortest() {
        let texts = [250.0, 0.5, 1e-12, 1e30, 0.000234, -1.0].map(number_text);
        assert_eq!(texts, ["250", "0.5", "1e-12", "1e30", "0.000234", "-1"]);
    }
}
