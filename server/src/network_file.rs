//! Network descriptions. A TOML network file (`vesper serve --network FILE`), a
//! built-in preset (`--preset NAME`, see [`crate::preset`]) and the command line's
//! network flags all fill one [`NetworkSpec`]; flags override the file or preset field
//! by field; [`NetworkSpec::resolve`] checks the result and gives the
//! [`NetworkConfig`].
//!
//! ```toml
//! [network]
//! kind = "kary-ntree"           # crossbar | xgft | kary-ntree | ideal
//! k = 16                        # kary-ntree: switch half-radix …
//! n = 2                         # … and levels: 16^2 = 256 hosts
//! # k_up = 8                    # kary-ntree: parents per switch (a k:k' thin tree)
//! # m = [16, 16]                # xgft: children per switch, level by level
//! # w = [1, 16]                 # xgft: parents per node, level by level (w1 = 1)
//! # hosts = 256                 # crossbar and ideal only: the others fix their hosts
//! routing = "d-mod-k"           # trees: d-mod-k | s-mod-k | shortest-path
//! nodes_per_host = 1            # client nodes (processors) per host, filled in order
//! # mapping = "tasks.map"       # or: one host name per line, node n on line n's host
//! link_bandwidth_mbs = 250      # per direction, 10^6 bytes/s
//! link_latency_ns = 25          # cable propagation
//! routing_latency_ns = 100      # switch routing decision
//! packet_payload_bytes = 4096   # adapters cut messages into packets of this payload
//! packet_header_bytes = 16      # … plus this header
//! interleave = "round-robin"    # or "fifo": how an adapter serves concurrent messages
//! switch = "wormhole"           # or "output-queued" (default), or "cioq"
//! # speedup = 1                 # cioq: crossbar speed over a link's
//! # virtual_output_queues = false # cioq: one queue per output at every input
//! flit_bytes = 8                # wormhole: flow-control unit
//! buffer_bytes = 512            # wormhole: input (slack) buffer per port
//! arbitration = "round-robin"   # wormhole: or "oldest-first"
//! initial_pointer = "random"    # wormhole round-robin: "random" (seeded) or a port number
//! seed = 1                      # wormhole: seed of the random initial pointers
//!
//! # [network.levels.2]          # trees: the level-2 switches (1 = the leaves) …
//! # switch = "cioq"             # … of another kind (not with wormhole switches)
//! # speedup = 2
//!
//! # or the ideal network, for calibration against the replayer
//! [network]
//! kind = "ideal"
//! hosts = 256
//! bandwidth_mbps = 250          # Dimemas MBps: 2^20 bytes/s (required)
//! latency_ns = 0
//! ```
//!
//! Every field has the default shown (`kind`: crossbar, 256 hosts). Unknown fields are
//! errors, and so are fields that do not apply to the network described (a
//! `flit_bytes` without wormhole switches), so a typo cannot silently fall back to a
//! default.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use vesper_input::{InputError, MIB};
use vesper_netmodels::time::seconds_text;
use vesper_netmodels::{
    AdapterParams, Arbitration, Bandwidth, CioqParams, HostId, IdealParams, InitialPointer, Interleave, LinkParams,
    RailPolicy, SimTime, SwitchKind, SwitchParams, Torus, TorusError, WormholeParams, Xgft,
};

use crate::config::{
    DIMEMAS_MB, FabricConfig, MB, NetworkConfig, Placement, RoutingPolicy, Shape, SwitchedConfig, bandwidth,
    number_text, time_from_ns,
};

/// Why a network file was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NetworkFileError {
    /// the file could not be read
    #[error("{file}: {source}")]
    Read {
        /// the file
        file: String,
        /// why
        source: InputError,
    },
    /// the file is not valid TOML or breaks the schema
    #[error("{file}: {message}")]
    Syntax {
        /// the file
        file: String,
        /// the parser's message (it names the line and the field)
        message: String,
    },
    /// the description breaks a rule
    #[error("{file}: {error}")]
    Spec {
        /// the file
        file: String,
        /// the rule broken
        error: SpecError,
    },
}

/// A rule a network description breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// a field's value, or its presence
    #[error("network.{field}: {rule}")]
    Field {
        /// the field
        field: String,
        /// the rule broken
        rule: String,
    },
    /// the task mapping file (the message names its file and line)
    #[error("{0}")]
    Mapping(String),
}

/// The largest network file read [bytes]: a description takes a few hundred bytes, and
/// its longest lists (`m`, `dims`, `rails`) a few more.
pub const MAX_NETWORK_FILE_BYTES: u64 = MIB;

/// The largest task mapping file read [bytes]: a line of about ten bytes per client
/// node; 64 MiB place millions of nodes, a few hundred on each of 32,768 hosts.
pub const MAX_MAPPING_BYTES: u64 = 64 * MIB;

/// `hosts`, if a network may have that many: at least one, and at most 2^25, so that
/// their ports (two each at the least) stay within `MAX_PORTS`.
pub fn host_count(hosts: u32) -> Result<u32, &'static str> {
    if hosts == 0 {
        return Err("a network needs at least one host");
    }
    if u64::from(hosts) > vesper_netmodels::topology::MAX_PORTS / 2 {
        return Err("vesper models at most 2^25 = 33,554,432 hosts");
    }
    Ok(hosts)
}

fn field(field: impl Into<String>, rule: impl Into<String>) -> SpecError {
    SpecError::Field {
        field: field.into(),
        rule: rule.into(),
    }
}

/// The packets an adapter cuts, in the file's words (the model checks them too, in its
/// own): a payload of at least one byte, and a payload and header whose sum fits in 32
/// bits. `at`: the table holding the fields, as a prefix (`""` for the network's own).
fn check_packets(at: &str, adapter: AdapterParams) -> Result<(), SpecError> {
    if adapter.payload_bytes == 0 {
        return Err(field(
            format!("{at}packet_payload_bytes"),
            "a packet must carry at least one byte",
        ));
    }
    if adapter.payload_bytes.checked_add(adapter.header_bytes).is_none() {
        return Err(field(
            format!("{at}packet_payload_bytes"),
            format!(
                "{} bytes of payload and a header of {} bytes add up to more than {} bytes, the most a packet \
                 can hold",
                adapter.payload_bytes,
                adapter.header_bytes,
                u32::MAX
            ),
        ));
    }
    Ok(())
}

/// The error of rail `index`, its field named within the rail.
fn in_rail(index: usize, error: SpecError) -> SpecError {
    match error {
        SpecError::Field { field, rule } => SpecError::Field {
            field: format!("rails[{index}].{field}"),
            rule,
        },
        other => other,
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    network: NetworkSpec,
}

/// What kind of network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KindName {
    /// one switch joining every host
    #[default]
    Crossbar,
    /// XGFT(h; m; w)
    Xgft,
    /// a k-ary n-tree, or a k:k' thin tree
    KaryNtree,
    /// a torus of any number of dimensions
    Torus,
    /// a mesh of any number of dimensions
    Mesh,
    /// an n-dimensional hypercube
    Hypercube,
    /// no contention (calibration)
    Ideal,
    /// several networks joining the same hosts
    MultiRail,
    /// read from a Myrinet map file (`map`), with its routes (`routes`) if given
    Map,
}

impl KindName {
    fn name(self) -> &'static str {
        match self {
            KindName::Crossbar => "crossbar",
            KindName::Xgft => "xgft",
            KindName::KaryNtree => "kary-ntree",
            KindName::Torus => "torus",
            KindName::Mesh => "mesh",
            KindName::Hypercube => "hypercube",
            KindName::Ideal => "ideal",
            KindName::MultiRail => "multi-rail",
            KindName::Map => "map",
        }
    }
}

/// Switch architectures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum SwitchName {
    /// ideal output queues
    OutputQueued,
    /// input and output queues, a crossbar with a speedup
    Cioq,
    /// Myrinet-like: flits under stop/go flow control
    Wormhole,
}

/// Output arbitration of wormhole switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ArbitrationName {
    /// round-robin from an initial pointer
    RoundRobin,
    /// the earliest request first
    OldestFirst,
}

/// How an adapter serves concurrent messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum InterleaveName {
    /// one packet of each in turn (Myrinet adapters)
    RoundRobin,
    /// one message after the other
    Fifo,
}

/// Routing policies by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RoutingName {
    /// breadth-first shortest paths, lowest port among equals
    ShortestPath,
    /// trees: the up port follows the destination
    DModK,
    /// trees: the up port follows the source
    SModK,
    /// trees: up ports drawn once per pair, seeded by `seed`
    Random,
    /// trees: up ports chosen for a communication pattern (`pattern`)
    PatternAware,
    /// tori, meshes, hypercubes: one dimension after the other
    DimensionOrder,
    /// maps: up*/down* routes, deadlock-free on any topology
    UpDown,
}

/// How a message picks one of its pair's routes (multipath route files).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RoutePolicyName {
    /// always the first route listed
    First,
    /// the pair's routes in turn
    RoundRobin,
    /// a random route per message, seeded by `seed`
    Random,
    /// one route per pair, by a hash of the pair
    Hash,
}

/// Rail policies by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RailPolicyName {
    /// each host uses its rails in turn
    RoundRobin,
    /// rail dst mod N
    ByDestination,
    /// small messages on rail 0, the others over the remaining rails
    SizeThreshold,
    /// every message split over all rails
    Striped,
}

/// The round-robin initial pointer: `"random"` or a port number.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum PointerSpec {
    /// a port number
    Port(u32),
    /// `"random"` (anything else is refused when resolved)
    Name(String),
}

/// `routes = "FILE"` or `routes = ["RAIL0", "RAIL1", …]`.
fn one_or_more_paths<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<PathBuf>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Paths {
        One(PathBuf),
        More(Vec<PathBuf>),
    }
    Ok(Some(match Paths::deserialize(deserializer)? {
        Paths::One(path) => vec![path],
        Paths::More(paths) => paths,
    }))
}

/// A network description with every field optional: what a file, a preset or the
/// command line says. See the module documentation for the fields.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs, reason = "the fields are documented in the module's example file")]
pub struct NetworkSpec {
    pub preset: Option<String>,
    pub kind: Option<KindName>,
    pub hosts: Option<u32>,
    pub nodes_per_host: Option<u32>,
    pub mapping: Option<PathBuf>,
    pub m: Option<Vec<u32>>,
    pub w: Option<Vec<u32>>,
    pub k: Option<u32>,
    pub n: Option<u32>,
    pub k_up: Option<u32>,
    pub dims: Option<Vec<u32>>,
    pub dimensions: Option<u32>,
    pub hosts_per_switch: Option<u32>,
    pub routing: Option<RoutingName>,
    pub pattern: Option<PathBuf>,
    /// the pattern of `routing = "pattern-aware"` given in memory: per phase, flows
    /// between client nodes (`vesper run` takes its workload's)
    #[serde(skip)]
    pub pattern_phases: Option<Vec<Vec<(u32, u32)>>>,
    pub link_bandwidth_mbs: Option<f64>,
    pub link_latency_ns: Option<f64>,
    pub routing_latency_ns: Option<f64>,
    pub packet_payload_bytes: Option<u32>,
    pub packet_header_bytes: Option<u32>,
    pub interleave: Option<InterleaveName>,
    pub switch: Option<SwitchName>,
    pub speedup: Option<u32>,
    pub virtual_output_queues: Option<bool>,
    pub flit_bytes: Option<u32>,
    pub buffer_bytes: Option<u32>,
    pub bubble: Option<bool>,
    pub arbitration: Option<ArbitrationName>,
    pub initial_pointer: Option<PointerSpec>,
    pub seed: Option<u64>,
    pub bandwidth_mbps: Option<f64>,
    pub latency_ns: Option<f64>,
    pub levels: Option<std::collections::BTreeMap<String, LevelSpec>>,
    pub models: Option<std::collections::BTreeMap<String, ModelSpec>>,
    pub rails: Option<Vec<NetworkSpec>>,
    pub map: Option<PathBuf>,
    #[serde(default, deserialize_with = "one_or_more_paths")]
    pub routes: Option<Vec<PathBuf>>,
    pub route_policy: Option<RoutePolicyName>,
    pub rail_policy: Option<RailPolicyName>,
    pub rail_threshold_bytes: Option<u32>,
}

/// The switches of one level of a tree, when they differ from the others
/// (`[network.levels.2]`: the level-2 switches; 1 = the leaves).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    missing_docs,
    reason = "the fields mean what the network's fields of the same names mean"
)]
pub struct LevelSpec {
    pub switch: Option<SwitchName>,
    pub speedup: Option<u32>,
    pub virtual_output_queues: Option<bool>,
}

/// The devices of one `type` in a map (`[network.models.TYPE]`): switches of another
/// kind, or hosts whose adapters cut other packets.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    missing_docs,
    reason = "the fields mean what the network's fields of the same names mean"
)]
pub struct ModelSpec {
    pub switch: Option<SwitchName>,
    pub speedup: Option<u32>,
    pub virtual_output_queues: Option<bool>,
    pub packet_payload_bytes: Option<u32>,
    pub packet_header_bytes: Option<u32>,
    pub interleave: Option<InterleaveName>,
}

/// Sets every field of `$to` that `$from` gives.
macro_rules! overlay_fields {
    ($to:ident, $from:ident, $($field:ident),* $(,)?) => {
        $( if $from.$field.is_some() { $to.$field = $from.$field; } )*
    };
}

impl NetworkSpec {
    /// A description of `kind` with every other field left to its default.
    pub fn of_kind(kind: KindName) -> NetworkSpec {
        NetworkSpec {
            kind: Some(kind),
            ..NetworkSpec::default()
        }
    }

    /// Overrides the fields `other` gives.
    pub fn overlay(&mut self, other: NetworkSpec) {
        overlay_fields!(
            self,
            other,
            preset,
            kind,
            hosts,
            nodes_per_host,
            mapping,
            m,
            w,
            k,
            n,
            k_up,
            dims,
            dimensions,
            hosts_per_switch,
            routing,
            pattern,
            pattern_phases,
            link_bandwidth_mbs,
            link_latency_ns,
            routing_latency_ns,
            packet_payload_bytes,
            packet_header_bytes,
            interleave,
            switch,
            speedup,
            virtual_output_queues,
            flit_bytes,
            buffer_bytes,
            bubble,
            arbitration,
            initial_pointer,
            seed,
            bandwidth_mbps,
            latency_ns,
            levels,
            models,
            rails,
            map,
            routes,
            route_policy,
            rail_policy,
            rail_threshold_bytes,
        );
    }

    /// The description with its `preset` (if any) beneath its own fields.
    fn expanded(&self) -> Result<NetworkSpec, SpecError> {
        let Some(name) = &self.preset else {
            return Ok(self.clone());
        };
        let mut base = crate::preset::spec(name).map_err(|e| field("preset", e))?;
        if base.preset.is_some() {
            return Err(field("preset", format!("preset {name} names another preset")));
        }
        base.overlay(NetworkSpec {
            preset: None,
            ..self.clone()
        });
        base.preset = None;
        Ok(base)
    }

    /// Checks the description and gives the network it describes.
    pub fn resolve(&self) -> Result<NetworkConfig, SpecError> {
        let spec = self.expanded()?;
        let (hosts, fabric) = spec.fabric()?;
        let placement = match (&spec.mapping, spec.nodes_per_host) {
            (Some(_), Some(_)) => {
                return Err(field(
                    "nodes_per_host",
                    "give either nodes_per_host or a mapping file, not both",
                ));
            }
            (Some(path), None) => Placement::Listed(read_mapping(path, hosts, map_host_names(&fabric))?),
            (None, Some(0)) => return Err(field("nodes_per_host", "a host runs at least one node")),
            (None, n) => Placement::Fill {
                nodes_per_host: n.unwrap_or(1),
            },
        };
        let mut config = NetworkConfig {
            hosts,
            placement,
            fabric,
        };
        spec.route_pattern(&mut config)?;
        Ok(config)
    }

    /// Chooses the routes of pattern-aware trees for the pattern (`pattern_phases`, or
    /// the `pattern` file), its client nodes placed on their hosts.
    fn route_pattern(&self, config: &mut NetworkConfig) -> Result<(), SpecError> {
        let switched: Vec<&mut SwitchedConfig> = match &mut config.fabric {
            FabricConfig::Switched(s) => vec![s],
            FabricConfig::MultiRail { rails, .. } => rails.iter_mut().collect(),
            FabricConfig::Ideal(_) => Vec::new(),
        };
        let waiting: Vec<&mut SwitchedConfig> = switched
            .into_iter()
            .filter(|s| s.routing == RoutingPolicy::PatternAware(None))
            .collect();
        if waiting.is_empty() {
            if self.pattern.is_some() {
                return Err(field("pattern", "applies to routing = \"pattern-aware\" only"));
            }
            return Ok(());
        }
        let phases = match (&self.pattern_phases, &self.pattern) {
            (Some(phases), _) => phases.clone(),
            (None, Some(path)) => read_pattern(path)?,
            (None, None) => {
                return Err(field(
                    "pattern",
                    "routing = \"pattern-aware\" needs a communication pattern: pattern = FILE (vesper run \
                     takes its workload's)",
                ));
            }
        };
        let nodes = config.placement.nodes(config.hosts);
        let mut hosts = Vec::with_capacity(phases.len());
        for phase in &phases {
            let mut flows = Vec::with_capacity(phase.len());
            for &(src, dst) in phase {
                if let Some(node) = [src, dst].into_iter().find(|&n| u64::from(n) >= nodes) {
                    return Err(field(
                        "pattern",
                        format!(
                            "node {node} is not in the network ({})",
                            config.placement.describe(config.hosts)
                        ),
                    ));
                }
                let (s, d) = (config.placement.host_of(src), config.placement.host_of(dst));
                if s != d {
                    flows.push((s, d));
                }
            }
            hosts.push(flows);
        }
        for s in waiting {
            if let Shape::Xgft(x) = &s.shape {
                let routes = x
                    .pattern_aware_routes(&hosts)
                    .map_err(|e| field("pattern", e.to_string()))?;
                s.routing = RoutingPolicy::PatternAware(Some(std::sync::Arc::new(routes)));
            }
        }
        Ok(())
    }

    /// The hosts and what joins them.
    fn fabric(&self) -> Result<(u32, FabricConfig), SpecError> {
        let kind = self.kind.unwrap_or_default();
        let kind_rule = |kinds: &str| format!("applies to kind = {kinds}, not \"{}\"", kind.name());
        let refuse = |fields: &[(&'static str, bool)], kinds: &str| match fields.iter().find(|(_, set)| *set) {
            Some((name, _)) => Err(field(*name, kind_rule(kinds))),
            None => Ok(()),
        };
        if !matches!(kind, KindName::Xgft) {
            refuse(&[("m", self.m.is_some()), ("w", self.w.is_some())], "\"xgft\"")?;
        }
        if !matches!(kind, KindName::KaryNtree) {
            refuse(
                &[
                    ("k", self.k.is_some()),
                    ("n", self.n.is_some()),
                    ("k_up", self.k_up.is_some()),
                ],
                "\"kary-ntree\"",
            )?;
        }
        if !matches!(kind, KindName::Xgft | KindName::KaryNtree) {
            refuse(&[("levels", self.levels.is_some())], "\"xgft\" or \"kary-ntree\"")?;
        }
        if !matches!(kind, KindName::Torus | KindName::Mesh) {
            refuse(&[("dims", self.dims.is_some())], "\"torus\" or \"mesh\"")?;
        }
        if !matches!(kind, KindName::Hypercube) {
            refuse(&[("dimensions", self.dimensions.is_some())], "\"hypercube\"")?;
        }
        if !matches!(kind, KindName::Torus | KindName::Mesh | KindName::Hypercube) {
            refuse(
                &[("hosts_per_switch", self.hosts_per_switch.is_some())],
                "\"torus\", \"mesh\" or \"hypercube\"",
            )?;
        }
        if !matches!(kind, KindName::MultiRail) {
            refuse(&[("rails", self.rails.is_some())], "\"multi-rail\"")?;
        }
        if !matches!(kind, KindName::MultiRail | KindName::Map) {
            refuse(
                &[
                    ("rail_policy", self.rail_policy.is_some()),
                    ("rail_threshold_bytes", self.rail_threshold_bytes.is_some()),
                ],
                "\"multi-rail\" or \"map\"",
            )?;
        }
        if !matches!(kind, KindName::Map) {
            refuse(
                &[
                    ("models", self.models.is_some()),
                    ("map", self.map.is_some()),
                    ("routes", self.routes.is_some()),
                    ("route_policy", self.route_policy.is_some()),
                ],
                "\"map\"",
            )?;
        }
        if !matches!(kind, KindName::Ideal) {
            refuse(
                &[
                    ("bandwidth_mbps", self.bandwidth_mbps.is_some()),
                    ("latency_ns", self.latency_ns.is_some()),
                ],
                "\"ideal\" (switched networks take link_bandwidth_mbs and link_latency_ns)",
            )?;
        }
        let hosts = |given: Option<u32>| {
            host_count(given.unwrap_or(NetworkConfig::default().hosts)).map_err(|rule| field("hosts", rule))
        };
        match kind {
            KindName::Ideal => {
                refuse(
                    &self.switched_fields(),
                    "\"crossbar\", \"xgft\", \"kary-ntree\", \"torus\", \"mesh\", \"hypercube\" or \"multi-rail\"",
                )?;
                let mbps = self.bandwidth_mbps.ok_or_else(|| {
                    field(
                        "bandwidth_mbps",
                        "the ideal network needs a bandwidth (the replayer configuration's inter-node one)",
                    )
                })?;
                let params = IdealParams {
                    bandwidth: rate(
                        mbps,
                        ("bandwidth_mbps", DIMEMAS_MB, "MBps (2^20 bytes/s)"),
                        (u64::from(u32::MAX), "the largest message"),
                        &IDEAL,
                    )?,
                    latency: delay(self.latency_ns, SimTime::ZERO, "latency_ns", &IDEAL)?,
                };
                Ok((hosts(self.hosts)?, FabricConfig::Ideal(params)))
            }
            KindName::MultiRail => self.multi_rail(),
            KindName::Map => self.map_fabric(),
            _ => {
                let switched = self.switched(kind)?;
                let hosts = match &switched.shape {
                    Shape::Xgft(x) => {
                        if let Some(given) = self.hosts.filter(|&h| h != x.hosts()) {
                            return Err(field(
                                "hosts",
                                format!(
                                    "this tree has {} hosts (the product of its m), not {given}; leave hosts out",
                                    x.hosts()
                                ),
                            ));
                        }
                        x.hosts()
                    }
                    Shape::Torus(t) => {
                        if let Some(given) = self.hosts.filter(|&h| h != t.hosts()) {
                            return Err(field(
                                "hosts",
                                format!(
                                    "this network has {} hosts (its switches × hosts_per_switch), not {given}; leave \
                                     hosts out",
                                    t.hosts()
                                ),
                            ));
                        }
                        t.hosts()
                    }
                    Shape::Crossbar => hosts(self.hosts)?,
                    Shape::Map { net, .. } => net.topology.hosts,
                };
                Ok((hosts, FabricConfig::Switched(switched)))
            }
        }
    }

    /// A multi-rail network: each `[[network.rails]]` table a switched network (or a
    /// `preset`); the switch, link and adapter fields at the top apply to every rail,
    /// over the rail's own.
    fn multi_rail(&self) -> Result<(u32, FabricConfig), SpecError> {
        let rails = self.rails.as_deref().unwrap_or_default();
        if rails.is_empty() {
            return Err(field(
                "rails",
                "a multi-rail network needs its rails: one [[network.rails]] table each",
            ));
        }
        let mut over = self.clone();
        (over.kind, over.hosts, over.nodes_per_host, over.mapping, over.rails) = (None, None, None, None, None);
        (over.rail_policy, over.rail_threshold_bytes) = (None, None);
        let mut configs = Vec::new();
        let mut hosts = None;
        for (index, rail) in rails.iter().enumerate() {
            let mut spec = rail.expanded().map_err(|e| in_rail(index, e))?;
            let whole = [
                ("nodes_per_host", spec.nodes_per_host.is_some()),
                ("mapping", spec.mapping.is_some()),
            ];
            if let Some((name, _)) = whole.iter().find(|(_, set)| *set) {
                return Err(field(
                    format!("rails[{index}].{name}"),
                    "applies to the whole network: set it at the top",
                ));
            }
            if matches!(spec.kind, Some(KindName::Ideal | KindName::MultiRail)) {
                return Err(field(
                    format!("rails[{index}].kind"),
                    "a rail is a switched network: any kind but \"ideal\" and \"multi-rail\"",
                ));
            }
            if spec.hosts.is_none() && spec.kind.unwrap_or_default() == KindName::Crossbar {
                spec.hosts = self.hosts;
            }
            spec.overlay(over.clone());
            let (rail_hosts, fabric) = spec.fabric().map_err(|e| in_rail(index, e))?;
            let FabricConfig::Switched(config) = fabric else {
                unreachable!("a rail of a switched kind is switched");
            };
            match hosts {
                Some(first) if first != rail_hosts => {
                    return Err(field(
                        format!("rails[{index}]"),
                        format!("joins {rail_hosts} hosts, rails[0] {first}: every rail joins the same hosts"),
                    ));
                }
                _ => hosts = Some(rail_hosts),
            }
            configs.push(config);
        }
        let hosts = hosts.unwrap_or_default();
        if let Some(given) = self.hosts.filter(|&h| h != hosts) {
            return Err(field("hosts", format!("the rails join {hosts} hosts, not {given}")));
        }
        // Each rail is within the limit: all of them together must be too.
        let ports: u64 = configs.iter().map(|c| c.ports(hosts)).sum();
        if ports > vesper_netmodels::topology::MAX_PORTS {
            return Err(field(
                "rails",
                format!(
                    "the {} rails have {ports} ports (hosts' and switches' together); vesper models at most 2^26 = \
                     67,108,864",
                    configs.len()
                ),
            ));
        }
        let policy = self.rail_policy()?;
        Ok((hosts, FabricConfig::MultiRail { rails: configs, policy }))
    }

    fn switched_fields(&self) -> [(&'static str, bool); 16] {
        [
            ("routing", self.routing.is_some()),
            ("link_bandwidth_mbs", self.link_bandwidth_mbs.is_some()),
            ("link_latency_ns", self.link_latency_ns.is_some()),
            ("routing_latency_ns", self.routing_latency_ns.is_some()),
            ("packet_payload_bytes", self.packet_payload_bytes.is_some()),
            ("packet_header_bytes", self.packet_header_bytes.is_some()),
            ("interleave", self.interleave.is_some()),
            ("switch", self.switch.is_some()),
            ("speedup", self.speedup.is_some()),
            ("virtual_output_queues", self.virtual_output_queues.is_some()),
            ("flit_bytes", self.flit_bytes.is_some()),
            ("buffer_bytes", self.buffer_bytes.is_some()),
            ("bubble", self.bubble.is_some()),
            ("arbitration", self.arbitration.is_some()),
            ("initial_pointer", self.initial_pointer.is_some()),
            ("seed", self.seed.is_some()),
        ]
    }

    fn shape(&self, kind: KindName) -> Result<Shape, SpecError> {
        let tree = |built: Result<Xgft, vesper_netmodels::XgftError>, name| {
            built.map_err(|e| field(name, e.to_string().trim_start_matches("xgft: ").to_string()))
        };
        Ok(match kind {
            KindName::Xgft => {
                let m = self
                    .m
                    .clone()
                    .ok_or_else(|| field("m", "an XGFT needs m, e.g. m = [16, 16]"))?;
                let w = self
                    .w
                    .clone()
                    .ok_or_else(|| field("w", "an XGFT needs w, e.g. w = [1, 16]"))?;
                Shape::Xgft(tree(Xgft::new(m, w), "m")?)
            }
            KindName::KaryNtree => {
                let k = self
                    .k
                    .ok_or_else(|| field("k", "a k-ary n-tree needs k, e.g. k = 16"))?;
                let n = self.n.ok_or_else(|| field("n", "a k-ary n-tree needs n, e.g. n = 2"))?;
                if k < 2 || n == 0 {
                    let name = if k < 2 { "k" } else { "n" };
                    return Err(field(name, "a k-ary n-tree needs k ≥ 2 and n ≥ 1"));
                }
                let up = self.k_up.unwrap_or(k);
                if up == 0 || up > k {
                    return Err(field("k_up", format!("between 1 and k = {k}")));
                }
                // Too large with k = 2 as well: the levels are at fault.
                let name = if Xgft::kary_ntree(2, n).is_err() { "n" } else { "k" };
                Shape::Xgft(tree(Xgft::thin_tree(k, n, up), name)?)
            }
            KindName::Torus | KindName::Mesh | KindName::Hypercube => {
                let per_switch = self.hosts_per_switch.unwrap_or(1);
                let make: Box<dyn Fn(u32) -> Result<Torus, TorusError>> = match kind {
                    KindName::Hypercube => {
                        let n = self.dimensions.ok_or_else(|| {
                            field("dimensions", "a hypercube needs its dimensions, e.g. dimensions = 8")
                        })?;
                        if n == 0 {
                            return Err(field("dimensions", "a hypercube needs at least one dimension"));
                        }
                        Box::new(move |per_switch| Torus::hypercube(n, per_switch))
                    }
                    _ => {
                        let dims = self.dims.clone().ok_or_else(|| {
                            field(
                                "dims",
                                format!("a {} needs its dims, e.g. dims = [8, 8, 8]", kind.name()),
                            )
                        })?;
                        Box::new(move |per_switch| Torus::new(dims.clone(), kind == KindName::Torus, per_switch))
                    }
                };
                // Too large only with its hosts: hosts_per_switch is at fault.
                let hosts_at_fault = per_switch > 1 && make(1).is_ok();
                // "torus.dims[1]: rule" → field dims[1] (dimensions for a hypercube)
                Shape::Torus(make(per_switch).map_err(|e| {
                    let text = e.to_string();
                    let (name, rule) = text.split_once(": ").unwrap_or(("torus.dims", &text));
                    let name = name.trim_start_matches("torus.");
                    match kind {
                        _ if e == TorusError::TooLarge && hosts_at_fault => field("hosts_per_switch", rule),
                        KindName::Hypercube if name.starts_with("dims") => field("dimensions", rule),
                        _ => field(name.to_string(), rule),
                    }
                })?)
            }
            KindName::Crossbar | KindName::Ideal | KindName::MultiRail | KindName::Map => Shape::Crossbar,
        })
    }

    /// A network read from a map file: a single network, or one rail per host port.
    fn map_fabric(&self) -> Result<(u32, FabricConfig), SpecError> {
        let path = self
            .map
            .as_ref()
            .ok_or_else(|| field("map", "kind = \"map\" needs its map file: map = FILE"))?;
        let file = path.display().to_string();
        let text = vesper_input::read_text(path, vesper_map2topo::MAX_MAP_BYTES)
            .map_err(|e| field("map", format!("{file}: {e}")))?;
        let rails = vesper_map2topo::read_map(&file, &text, LinkParams::default())
            .map_err(|e| SpecError::Mapping(e.to_string()))?;
        let hosts = rails.first().map_or(0, |r| r.topology.hosts);
        if let Some(given) = self.hosts.filter(|&h| h != hosts) {
            return Err(field(
                "hosts",
                format!("the map has {hosts} hosts, not {given}; leave hosts out"),
            ));
        }
        if let Some(routes) = self.routes.as_ref().filter(|r| r.len() != rails.len()) {
            return Err(field(
                "routes",
                format!(
                    "the map has {} rail(s) and {} route file(s) are given: one per rail, in rail order \
                     (routes = [\"rail0.routes\", \"rail1.routes\"], or --routes once per rail)",
                    rails.len(),
                    routes.len()
                ),
            ));
        }
        let mut configs = rails
            .into_iter()
            .enumerate()
            .map(|(rail, net)| {
                // Each rail with its own route file.
                let rail_spec = NetworkSpec {
                    routes: self.routes.as_ref().map(|r| vec![r[rail].clone()]),
                    ..self.clone()
                };
                rail_spec.switched_on(Shape::Map {
                    file: file.clone(),
                    net: std::sync::Arc::new(net),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if configs.len() == 1 {
            if self.rail_policy.is_some() || self.rail_threshold_bytes.is_some() {
                return Err(field(
                    "rail_policy",
                    "the map has one rail: its hosts have one port each",
                ));
            }
            return Ok((hosts, FabricConfig::Switched(configs.remove(0))));
        }
        Ok((
            hosts,
            FabricConfig::MultiRail {
                rails: configs,
                policy: self.rail_policy()?,
            },
        ))
    }

    /// How a host picks the rail of a message.
    fn rail_policy(&self) -> Result<RailPolicy, SpecError> {
        let policy = match self.rail_policy.unwrap_or(RailPolicyName::RoundRobin) {
            RailPolicyName::RoundRobin => RailPolicy::RoundRobin,
            RailPolicyName::ByDestination => RailPolicy::ByDestination,
            RailPolicyName::Striped => RailPolicy::Striped,
            RailPolicyName::SizeThreshold => RailPolicy::SizeThreshold {
                bytes: self.rail_threshold_bytes.ok_or_else(|| {
                    field(
                        "rail_threshold_bytes",
                        "rail_policy = \"size-threshold\" needs the size that leaves rail 0",
                    )
                })?,
            },
        };
        if self.rail_threshold_bytes.is_some() && !matches!(policy, RailPolicy::SizeThreshold { .. }) {
            return Err(field(
                "rail_threshold_bytes",
                "applies to rail_policy = \"size-threshold\" only",
            ));
        }
        Ok(policy)
    }

    /// The routes of a map: shortest paths (tables), up*/down*, or the route file.
    fn map_routing(&self, net: &vesper_map2topo::NamedTopology) -> Result<RoutingPolicy, SpecError> {
        use vesper_netmodels::{ExplicitRoutes, MultipathPolicy};
        let policy = match self.route_policy {
            None | Some(RoutePolicyName::First) => MultipathPolicy::First,
            Some(RoutePolicyName::RoundRobin) => MultipathPolicy::RoundRobin,
            Some(RoutePolicyName::Hash) => MultipathPolicy::Hash,
            Some(RoutePolicyName::Random) => MultipathPolicy::Random {
                seed: self.seed.unwrap_or(1),
            },
        };
        let hosts = net.topology.hosts;
        let pairs = u64::from(hosts) * u64::from(hosts);
        if (self.routes.is_some() || self.routing == Some(RoutingName::UpDown))
            && pairs > vesper_netmodels::topology::explicit::MAX_PAIRS
        {
            return Err(field(
                "routing",
                format!(
                    "route files and up*/down* routes are listed pair by pair: {hosts} hosts make {pairs} pairs, \
                     beyond the 2^26 (8,192 hosts) vesper keeps; use shortest-path tables"
                ),
            ));
        }
        let explicit = |name, list| {
            ExplicitRoutes::from_paths(hosts, policy, list)
                .map(|routes| RoutingPolicy::Explicit {
                    name,
                    routes: std::sync::Arc::new(routes),
                })
                .map_err(|e| field("routes", e.to_string()))
        };
        match (self.routes.as_ref().and_then(|r| r.first()), self.routing) {
            (Some(path), None) => {
                let file = path.display().to_string();
                // Read a line at a time: a route file may hold gigabytes, no line more
                // than MAX_ROUTE_LINE_BYTES.
                let opened = vesper_input::open(path).map_err(|e| field("routes", format!("{file}: {e}")))?;
                let reader = std::io::BufReader::with_capacity(1 << 20, opened);
                let list = vesper_map2topo::routes::read_any_from(&file, reader, net)
                    .map_err(|e| field("routes", e.to_string()))?;
                explicit("routes", list)
            }
            (Some(_), Some(_)) => Err(field("routing", "a route file gives the routes: leave routing out")),
            (None, None | Some(RoutingName::ShortestPath)) => {
                if self.route_policy.is_some() {
                    return Err(field("route_policy", "applies to route files (routes = FILE) only"));
                }
                Ok(RoutingPolicy::ShortestPath)
            }
            (None, Some(RoutingName::UpDown)) => {
                let (_, routes) = vesper_map2topo::generate::up_down(&net.topology).map_err(|e| field("routing", e))?;
                explicit("up-down", routes)
            }
            (None, Some(_)) => Err(field(
                "routing",
                "a map routes by \"shortest-path\" (the default), \"up-down\", or a route file (routes = FILE)",
            )),
        }
    }

    fn switched(&self, kind: KindName) -> Result<SwitchedConfig, SpecError> {
        self.switched_on(self.shape(kind)?)
    }

    fn switched_on(&self, shape: Shape) -> Result<SwitchedConfig, SpecError> {
        // Sizes were checked as the shape was made (Xgft::new, Torus::new, host_count,
        // the map's reader): nothing too large to build gets here.
        let routing = match (&shape, self.routing) {
            (Shape::Map { net, .. }, _) => self.map_routing(net)?,
            (Shape::Torus(_), None | Some(RoutingName::DimensionOrder)) => RoutingPolicy::DimensionOrder,
            (Shape::Torus(_), Some(_)) => {
                return Err(field(
                    "routing",
                    "tori, meshes and hypercubes route in dimension order (routing = \"dimension-order\")",
                ));
            }
            (_, Some(RoutingName::ShortestPath)) => RoutingPolicy::ShortestPath,
            (Shape::Crossbar, None) => RoutingPolicy::ShortestPath,
            (Shape::Xgft(_), None | Some(RoutingName::DModK)) => RoutingPolicy::DModK,
            (Shape::Xgft(_), Some(RoutingName::SModK)) => RoutingPolicy::SModK,
            (Shape::Xgft(_), Some(RoutingName::Random)) => RoutingPolicy::Random {
                seed: self.seed.unwrap_or(1),
            },
            (Shape::Xgft(_), Some(RoutingName::PatternAware)) => RoutingPolicy::PatternAware(None),
            (_, Some(RoutingName::UpDown)) => {
                return Err(field("routing", "up-down routes maps (kind = \"map\")"));
            }
            (_, Some(RoutingName::DimensionOrder)) => {
                return Err(field("routing", "dimension-order routes tori, meshes and hypercubes"));
            }
            (Shape::Crossbar, Some(_)) => {
                return Err(field(
                    "routing",
                    "d-mod-k, s-mod-k, random and pattern-aware route fat trees (kind = \"xgft\" or \"kary-ntree\")",
                ));
            }
        };
        let link_default = LinkParams::default();
        let propagation = delay(self.link_latency_ns, link_default.propagation, "link_latency_ns", &STEP)?;
        let switch = SwitchParams {
            routing_latency: delay(
                self.routing_latency_ns,
                SwitchParams::default().routing_latency,
                "routing_latency_ns",
                &STEP,
            )?,
            kind: self.switch_kind(matches!(&shape, Shape::Torus(t) if t.has_rings()))?,
        };
        let adapter_default = AdapterParams::default();
        let adapter = AdapterParams {
            payload_bytes: self.packet_payload_bytes.unwrap_or(adapter_default.payload_bytes),
            header_bytes: self.packet_header_bytes.unwrap_or(adapter_default.header_bytes),
            interleave: match self.interleave {
                None => adapter_default.interleave,
                Some(InterleaveName::RoundRobin) => Interleave::RoundRobin,
                Some(InterleaveName::Fifo) => Interleave::Fifo,
            },
        };
        check_packets("", adapter)?;
        if let (Shape::Map { net, .. }, SwitchKind::Wormhole(_)) = (&shape, switch.kind) {
            deadlock_free(net, &routing)?;
        }
        let level_kinds = self.level_kinds(&shape, switch.kind)?;
        let (switch_kinds, host_adapters) = self.models(&shape, switch.kind, adapter)?;
        // The largest packet any adapter cuts must cross a link within one step.
        let packet = host_adapters
            .iter()
            .map(|(_, a)| a)
            .chain([&adapter])
            .map(|a| u64::from(a.payload_bytes) + u64::from(a.header_bytes))
            .max()
            .unwrap_or(0);
        let link = LinkParams {
            bandwidth: match self.link_bandwidth_mbs {
                None => link_default.bandwidth,
                Some(v) => rate(
                    v,
                    ("link_bandwidth_mbs", MB, "MB/s (10^6 bytes/s)"),
                    (packet, "a packet"),
                    &STEP,
                )?,
            },
            propagation,
        };
        Ok(SwitchedConfig {
            level_kinds,
            switch_kinds,
            host_adapters,
            shape,
            routing,
            link,
            switch,
            adapter,
        })
    }

    /// The switch kinds of `[network.levels.N]` tables, checked against the tree.
    fn level_kinds(&self, shape: &Shape, kind: SwitchKind) -> Result<Vec<(u32, SwitchKind)>, SpecError> {
        let (Some(levels), Shape::Xgft(x)) = (&self.levels, shape) else {
            return Ok(Vec::new());
        };
        let mut kinds = Vec::new();
        for (name, level) in levels {
            let number = name
                .parse::<u32>()
                .ok()
                .filter(|&l| (1..=x.height() as u32).contains(&l))
                .ok_or_else(|| {
                    field(
                        format!("levels.{name}"),
                        format!("expected a level from 1 to {}", x.height()),
                    )
                })?;
            kinds.push((number, other_kind(&format!("levels.{name}"), level, kind)?));
        }
        Ok(kinds)
    }

    /// The switch kind of every switch, and the adapters of every host, of a map whose
    /// `type` has a `[network.models.TYPE]` table.
    #[allow(clippy::type_complexity, reason = "two lists of (device, parameters)")]
    fn models(
        &self,
        shape: &Shape,
        kind: SwitchKind,
        adapter: AdapterParams,
    ) -> Result<(Vec<(u32, SwitchKind)>, Vec<(u32, AdapterParams)>), SpecError> {
        let (Some(models), Shape::Map { net, .. }) = (&self.models, shape) else {
            return Ok((Vec::new(), Vec::new()));
        };
        let (mut kinds, mut adapters) = (Vec::new(), Vec::new());
        for (name, model) in models {
            let at = format!("models.{name}");
            let of_type = |types: &[Option<String>]| -> Vec<u32> {
                (0..types.len() as u32)
                    .filter(|&i| types[i as usize].as_deref() == Some(name.as_str()))
                    .collect()
            };
            let (switches, hosts) = (of_type(&net.switch_types), of_type(&net.host_types));
            let switch_fields = [
                ("switch", model.switch.is_some()),
                ("speedup", model.speedup.is_some()),
                ("virtual_output_queues", model.virtual_output_queues.is_some()),
            ];
            let adapter_fields = [
                ("packet_payload_bytes", model.packet_payload_bytes.is_some()),
                ("packet_header_bytes", model.packet_header_bytes.is_some()),
                ("interleave", model.interleave.is_some()),
            ];
            let given = |fields: &[(&'static str, bool)]| fields.iter().find(|(_, set)| *set).map(|(f, _)| *f);
            match (switches.is_empty(), hosts.is_empty()) {
                (true, true) => {
                    return Err(field(at, format!("no switch or host of the map has type {name}")));
                }
                (false, false) => {
                    return Err(field(
                        at,
                        format!("both switches and hosts of the map have type {name}"),
                    ));
                }
                (false, true) => {
                    if let Some(f) = given(&adapter_fields) {
                        return Err(field(
                            format!("{at}.{f}"),
                            format!("type {name} is a switch's: no adapter"),
                        ));
                    }
                    let spec = LevelSpec {
                        switch: model.switch,
                        speedup: model.speedup,
                        virtual_output_queues: model.virtual_output_queues,
                    };
                    let model_kind = other_kind(&at, &spec, kind)?;
                    kinds.extend(switches.into_iter().map(|s| (s, model_kind)));
                }
                (true, false) => {
                    if let Some(f) = given(&switch_fields) {
                        return Err(field(
                            format!("{at}.{f}"),
                            format!("type {name} is a host's: no switch"),
                        ));
                    }
                    let params = AdapterParams {
                        payload_bytes: model.packet_payload_bytes.unwrap_or(adapter.payload_bytes),
                        header_bytes: model.packet_header_bytes.unwrap_or(adapter.header_bytes),
                        interleave: match model.interleave {
                            None => adapter.interleave,
                            Some(InterleaveName::RoundRobin) => Interleave::RoundRobin,
                            Some(InterleaveName::Fifo) => Interleave::Fifo,
                        },
                    };
                    check_packets(&format!("{at}."), params)?;
                    adapters.extend(hosts.into_iter().map(|h| (h, params)));
                }
            }
        }
        kinds.sort_unstable_by_key(|&(s, _)| s);
        adapters.sort_unstable_by_key(|&(h, _)| h);
        Ok((kinds, adapters))
    }

    /// The switch kind; wormhole switches on a network with rings (`rings`) take bubble
    /// flow control unless told otherwise.
    fn switch_kind(&self, rings: bool) -> Result<SwitchKind, SpecError> {
        let name = self.switch.unwrap_or(SwitchName::OutputQueued);
        let wormhole_fields = [
            ("flit_bytes", self.flit_bytes.is_some()),
            ("buffer_bytes", self.buffer_bytes.is_some()),
            ("bubble", self.bubble.is_some()),
            ("arbitration", self.arbitration.is_some()),
            ("initial_pointer", self.initial_pointer.is_some()),
            // Random routing draws from the seed too.
            ("seed", self.seed.is_some() && self.routing != Some(RoutingName::Random)),
        ];
        let cioq_fields = [
            ("speedup", self.speedup.is_some()),
            ("virtual_output_queues", self.virtual_output_queues.is_some()),
        ];
        let only = |fields: &[(&'static str, bool)], switch: &str| match fields.iter().find(|(_, set)| *set) {
            Some((name, _)) => Err(field(*name, format!("applies to switch = \"{switch}\" only"))),
            None => Ok(()),
        };
        if name != SwitchName::Wormhole {
            only(&wormhole_fields, "wormhole")?;
        }
        if name != SwitchName::Cioq {
            only(&cioq_fields, "cioq")?;
        }
        Ok(match name {
            SwitchName::OutputQueued => SwitchKind::OutputQueued,
            SwitchName::Cioq => {
                let speedup = self.speedup.unwrap_or(1);
                if speedup == 0 {
                    return Err(field("speedup", "at least 1"));
                }
                SwitchKind::Cioq(CioqParams {
                    speedup,
                    virtual_output_queues: self.virtual_output_queues.unwrap_or(false),
                })
            }
            SwitchName::Wormhole => {
                let default = WormholeParams::default();
                let seed = self.seed.unwrap_or(1);
                let initial = match &self.initial_pointer {
                    None => InitialPointer::Random { seed },
                    Some(PointerSpec::Name(s)) if s == "random" => InitialPointer::Random { seed },
                    Some(PointerSpec::Port(p)) => InitialPointer::Fixed(*p),
                    Some(PointerSpec::Name(_)) => {
                        return Err(field("initial_pointer", "expected \"random\" or a port number"));
                    }
                };
                let flit_bytes = self.flit_bytes.unwrap_or(default.flit_bytes);
                if flit_bytes == 0 {
                    return Err(field("flit_bytes", "a flit must hold at least one byte"));
                }
                SwitchKind::Wormhole(WormholeParams {
                    flit_bytes,
                    buffer_bytes: self.buffer_bytes.unwrap_or(default.buffer_bytes),
                    bubble: self.bubble.unwrap_or(rings),
                    arbitration: match self.arbitration.unwrap_or(ArbitrationName::RoundRobin) {
                        ArbitrationName::RoundRobin => Arbitration::RoundRobin { initial },
                        ArbitrationName::OldestFirst => Arbitration::OldestFirst,
                    },
                    ..default
                })
            }
        })
    }
}

/// The switch kind a `[network.levels.N]` or `[network.models.TYPE]` table (`at`) gives,
/// beside the network's `kind`: output-queued or CIOQ (wormhole switches make a whole
/// network).
fn other_kind(at: &str, spec: &LevelSpec, kind: SwitchKind) -> Result<SwitchKind, SpecError> {
    let at = |what: &str| format!("{at}.{what}");
    let switch = spec
        .switch
        .ok_or_else(|| field(at("switch"), "the table names a switch kind"))?;
    if switch == SwitchName::Wormhole || matches!(kind, SwitchKind::Wormhole(_)) {
        return Err(field(
            at("switch"),
            "wormhole switches cannot share a network with other kinds: set switch = \"wormhole\" for the \
             whole network instead",
        ));
    }
    Ok(match switch {
        SwitchName::Cioq => {
            let speedup = spec.speedup.unwrap_or(1);
            if speedup == 0 {
                return Err(field(at("speedup"), "at least 1"));
            }
            SwitchKind::Cioq(CioqParams {
                speedup,
                virtual_output_queues: spec.virtual_output_queues.unwrap_or(false),
            })
        }
        _ => {
            if let Some(f) = [
                ("speedup", spec.speedup.is_some()),
                ("virtual_output_queues", spec.virtual_output_queues.is_some()),
            ]
            .iter()
            .find(|(_, set)| *set)
            {
                return Err(field(at(f.0), "applies to switch = \"cioq\" only"));
            }
            SwitchKind::OutputQueued
        }
    })
}

/// Refuses routes of a map that could deadlock wormhole switches (a cycle of channels
/// waiting on each other), naming the cycle.
fn deadlock_free(net: &vesper_map2topo::NamedTopology, routing: &RoutingPolicy) -> Result<(), SpecError> {
    use vesper_map2topo::generate::{deadlock_cycle_of, table_deadlock_cycle};
    let cycle = match routing {
        RoutingPolicy::Explicit { routes, .. } => {
            deadlock_cycle_of(&net.topology, routes.iter().map(|((src, _), path)| (src, path)))
        }
        _ => table_deadlock_cycle(&net.topology),
    };
    match cycle {
        None => Ok(()),
        Some(channels) => {
            let named: Vec<String> = channels
                .iter()
                .map(|&(s, p)| format!("{}.p{p}", net.name(vesper_netmodels::Device::Switch(s))))
                .collect();
            Err(field(
                "routing",
                format!(
                    "routing \"{}\" can deadlock wormhole switches: channels {} wait on each other in a cycle; use \
                     routing = \"up-down\"",
                    routing.name(),
                    named.join(" → ")
                ),
            ))
        }
    }
}

/// A bound the model's clock puts on a time of the network (the model checks it too, in
/// its own words).
struct TimeLimit {
    /// the most the time may be
    longest: SimTime,
    /// what it bounds, and why
    allows: &'static str,
}

/// Every step of a switched network (see `SimTime::LONGEST_STEP`).
const STEP: TimeLimit = TimeLimit {
    longest: SimTime::LONGEST_STEP,
    allows: "one link, cable or routing decision (so that a packet crossing 65,536 of them stays within its clock: \
             64-bit picoseconds, about 213 days)",
};

/// The ideal network's latency and transfers (see `IdealParams::LONGEST_DELAY`).
const IDEAL: TimeLimit = TimeLimit {
    longest: IdealParams::LONGEST_DELAY,
    allows: "the ideal network's latency, and its transfer of a message, each (so that a message sent at the \
             last instant a client may send at still arrives within its clock: 64-bit picoseconds, about 213 days)",
};

impl TimeLimit {
    /// "more than the 17.592 s the model allows …"
    fn exceeded(&self) -> String {
        format!(
            "more than the {} the model allows {}",
            seconds_text(self.longest.as_secs_f64()),
            self.allows
        )
    }
}

/// A delay in ns within `limit`, or `default`.
fn delay(value: Option<f64>, default: SimTime, name: &str, limit: &TimeLimit) -> Result<SimTime, SpecError> {
    let Some(v) = value else {
        return Ok(default);
    };
    if v.is_nan() || v < 0.0 {
        return Err(field(name, "expected a non-negative time in ns"));
    }
    match time_from_ns(v) {
        Some(t) if t <= limit.longest => Ok(t),
        _ => Err(field(
            name,
            format!(
                "{} ns is {}; expected at most {}",
                number_text(v),
                limit.exceeded(),
                limit.longest
            ),
        )),
    }
}

/// Field `name`'s rate of `value` in `unit` (`unit_bytes` bytes per second), fast enough
/// to send `bytes` (`what`, for messages) within `limit`.
fn rate(
    value: f64,
    (name, unit_bytes, unit): (&str, u64, &str),
    (bytes, what): (u64, &str),
    limit: &TimeLimit,
) -> Result<Bandwidth, SpecError> {
    if value.is_nan() || value <= 0.0 {
        return Err(field(name, format!("expected a positive rate in {unit}")));
    }
    let short = unit.split(' ').next().unwrap_or(unit);
    let exact = bandwidth(value, unit_bytes);
    if let Some(b) = exact
        && b.serialization_time(bytes) <= limit.longest
    {
        return Ok(b);
    }
    if exact.is_none() && value >= 1.0 {
        return Err(field(
            name,
            format!(
                "{} {short} is beyond the rates vesper represents; expected at most {} {short}",
                number_text(value),
                u64::MAX / unit_bytes
            ),
        ));
    }
    let least = bytes as f64 / limit.longest.as_secs_f64() / unit_bytes as f64;
    Err(field(
        name,
        format!(
            "{} {short} makes {what} ({bytes} bytes) take {}, {}; expected at least {} {short}",
            number_text(value),
            seconds_text(bytes as f64 / (value * unit_bytes as f64)),
            limit.exceeded(),
            rounded_up(least)
        ),
    ))
}

/// `x` rounded up to three significant digits, written out (`0.000234`).
fn rounded_up(x: f64) -> String {
    let decimals = (2 - x.log10().floor() as i32).max(0);
    let scale = 10f64.powi(decimals);
    format!("{:.*}", decimals as usize, (x * scale).ceil() / scale)
}

/// The host names of a network read from a map (`None`: vesper's own, `host<i>`).
fn map_host_names(fabric: &FabricConfig) -> Option<&[String]> {
    let shape = match fabric {
        FabricConfig::Switched(s) => &s.shape,
        FabricConfig::MultiRail { rails, .. } => &rails.first()?.shape,
        FabricConfig::Ideal(_) => return None,
    };
    match shape {
        Shape::Map { net, .. } => Some(&net.host_names),
        _ => None,
    }
}

/// Reads a task mapping file: one host per line, node `n` on the host of the `n`-th
/// line. A host is named as its map names it (`names`), or `host<i>` as `vesper topo`
/// and the Paraver traces name vesper's own; or by its number `<i>`. Text after `#`
/// and blank lines are ignored.
pub fn read_mapping(path: &Path, hosts: u32, names: Option<&[String]>) -> Result<Vec<HostId>, SpecError> {
    let file = path.display();
    let text =
        vesper_input::read_text(path, MAX_MAPPING_BYTES).map_err(|e| field("mapping", format!("{file}: {e}")))?;
    let by_name: std::collections::BTreeMap<&str, u32> = names
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(h, n)| (n.as_str(), h as u32))
        .collect();
    let mut mapping = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let name = line.split('#').next().unwrap_or("").trim();
        if name.is_empty() {
            continue;
        }
        let host = match names {
            Some(_) => by_name.get(name).copied().or_else(|| name.parse().ok()),
            None => name.strip_prefix("host").unwrap_or(name).parse().ok(),
        };
        match host {
            Some(h) if h < hosts => mapping.push(HostId(h)),
            _ => {
                let expected = match names {
                    Some(n) => format!(
                        "a host of the map ({} … {})",
                        n.first().map_or("", String::as_str),
                        n.last().map_or("", String::as_str)
                    ),
                    None => format!("a host name, host0 … host{}", hosts - 1),
                };
                return Err(SpecError::Mapping(format!(
                    "{file}:{}: expected {expected} (or its number), got `{name}`",
                    number + 1,
                )));
            }
        }
    }
    if mapping.is_empty() {
        return Err(SpecError::Mapping(format!(
            "{file}: expected one host name per line (node n runs on line n's host), found none"
        )));
    }
    Ok(mapping)
}

/// Reads a communication pattern file: one flow per line, `SRC DST` (client node
/// numbers); a line `phase` starts the next phase; text after `#` and blank lines are
/// ignored.
pub fn read_pattern(path: &Path) -> Result<Vec<Vec<(u32, u32)>>, SpecError> {
    let file = path.display().to_string();
    let text = vesper_input::read_text(path, vesper_map2topo::generate::MAX_PATTERN_BYTES)
        .map_err(|e| field("pattern", format!("{file}: {e}")))?;
    vesper_map2topo::generate::read_phases(&file, &text, |w| w.parse().ok(), "two node numbers")
        .map_err(SpecError::Mapping)
}

/// Reads a network file: its `[network]` table as a description, with a relative
/// `mapping` path taken from the file's folder.
pub fn read_spec(path: &Path) -> Result<NetworkSpec, NetworkFileError> {
    let file = path.display().to_string();
    let text = vesper_input::read_text(path, MAX_NETWORK_FILE_BYTES).map_err(|source| NetworkFileError::Read {
        file: file.clone(),
        source,
    })?;
    let mut spec = parse_spec(&file, &text)?;
    if let Some(folder) = path.parent() {
        let routes = spec.routes.iter_mut().flatten().map(Some);
        for relative in [spec.mapping.as_mut(), spec.pattern.as_mut(), spec.map.as_mut()]
            .into_iter()
            .chain(routes)
        {
            if let Some(p) = relative.filter(|p| p.is_relative()) {
                *p = folder.join(&*p);
            }
        }
    }
    Ok(spec)
}

/// Parses the text of a network file named `file` (for messages) as a description.
pub fn parse_spec(file: &str, text: &str) -> Result<NetworkSpec, NetworkFileError> {
    let parsed: File = toml::from_str(text).map_err(|e| NetworkFileError::Syntax {
        file: file.to_string(),
        message: e.to_string().trim_end().to_string(),
    })?;
    Ok(parsed.network)
}

/// Reads a network file and resolves it.
pub fn read(path: &Path) -> Result<NetworkConfig, NetworkFileError> {
    let spec = read_spec(path)?;
    spec.resolve().map_err(|error| NetworkFileError::Spec {
        file: path.display().to_string(),
        error,
    })
}

/// Parses the text of a network file named `file` and resolves it.
pub fn parse(file: &str, text: &str) -> Result<NetworkConfig, NetworkFileError> {
    parse_spec(file, text)?
        .resolve()
        .map_err(|error| NetworkFileError::Spec {
            file: file.to_string(),
            error,
        })
}

#[cfg(test)]
mod tests {
    use vesper_netmodels::SimTime;

    use super::*;

    fn switched(config: &NetworkConfig) -> &SwitchedConfig {
        match &config.fabric {
            FabricConfig::Switched(s) => s,
            _ => panic!("not one switched network: {config:?}"),
        }
    }

    #[test]
    fn reads_an_ideal_network() {
        let config = parse(
            "n.toml",
            "[network]\nkind = \"ideal\"\nbandwidth_mbps = 250\nlatency_ns = 1500\n",
        )
        .expect("valid");
        assert_eq!(config.hosts, 256);
        let FabricConfig::Ideal(params) = config.fabric else {
            panic!("not ideal: {config:?}");
        };
        assert_eq!(params.latency, SimTime::from_ns(1500));
        assert_eq!(
            params.bandwidth.serialization_time(250 << 20),
            SimTime::from_ns(1_000_000_000)
        );
    }

    #[test]
    fn reads_the_adapter_fields() {
        let text = "[network]\nkind = \"crossbar\"\npacket_payload_bytes = 2048\npacket_header_bytes = 8\ninterleave = \"fifo\"\n";
        let config = parse("n.toml", text).expect("valid");
        let adapter = switched(&config).adapter;
        assert_eq!(
            (adapter.payload_bytes, adapter.header_bytes, adapter.interleave),
            (2048, 8, Interleave::Fifo)
        );
    }

    #[test]
    fn reads_a_wormhole_switch() {
        let text = "[network]\nkind = \"crossbar\"\nswitch = \"wormhole\"\nbuffer_bytes = 1024\ninitial_pointer = 3\n";
        let config = parse("n.toml", text).expect("valid");
        let SwitchKind::Wormhole(params) = switched(&config).switch.kind else {
            panic!("not wormhole: {config:?}");
        };
        assert_eq!(params.buffer_bytes, 1024);
        assert_eq!(
            params.arbitration,
            Arbitration::RoundRobin {
                initial: InitialPointer::Fixed(3)
            }
        );
        let err = parse("n.toml", "[network]\nkind = \"crossbar\"\nflit_bytes = 16\n").expect_err("refused");
        assert_eq!(
            err.to_string(),
            "n.toml: network.flit_bytes: applies to switch = \"wormhole\" only"
        );
    }

    #[test]
    fn a_crossbar_takes_the_defaults() {
        let config = parse("n.toml", "[network]\nkind = \"crossbar\"\nhosts = 8\n").expect("valid");
        assert_eq!(
            config,
            NetworkConfig {
                hosts: 8,
                ..NetworkConfig::default()
            }
        );
        assert_eq!(parse("n.toml", "[network]\n").expect("valid"), NetworkConfig::default());
    }

    #[test]
    fn reads_fat_trees() {
        let tree = parse(
            "t.toml",
            "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\nrouting = \"s-mod-k\"\n",
        )
        .expect("valid");
        let s = switched(&tree);
        assert_eq!(tree.hosts, 64);
        assert_eq!(s.shape, Shape::Xgft(Xgft::kary_ntree(4, 3).expect("valid")));
        assert_eq!(s.routing, RoutingPolicy::SModK);
        let thin = parse("t.toml", "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\nk_up = 2\n").expect("valid");
        assert_eq!(
            switched(&thin).shape,
            Shape::Xgft(Xgft::new(vec![4, 4, 4], vec![1, 2, 2]).expect("valid"))
        );
        assert_eq!(switched(&thin).routing, RoutingPolicy::DModK);
        let xgft = parse(
            "t.toml",
            "[network]\nkind = \"xgft\"\nm = [16, 16]\nw = [1, 16]\nhosts = 256\n",
        )
        .expect("valid");
        assert_eq!(xgft.hosts, 256);
        let topology = switched(&xgft).topology(xgft.hosts);
        assert_eq!(topology.switch_ports.len(), 32);
    }

    #[test]
    fn mistakes_are_named() {
        let err = |text: &str| parse("n.toml", text).expect_err("refused").to_string();
        let typo = err("[network]\nkind = \"crossbar\"\nhostz = 8\n");
        assert!(typo.starts_with("n.toml: ") && typo.contains("hostz"), "{typo}");
        let interleave = err("[network]\nkind = \"crossbar\"\ninterleave = \"random\"\n");
        assert!(interleave.contains("random"), "{interleave}");
        assert_eq!(
            err("[network]\nkind = \"crossbar\"\npacket_payload_bytes = 0\n"),
            "n.toml: network.packet_payload_bytes: a packet must carry at least one byte"
        );
        assert_eq!(
            err("[network]\nkind = \"crossbar\"\npacket_payload_bytes = 4096\npacket_header_bytes = 4294967295\n"),
            "n.toml: network.packet_payload_bytes: 4096 bytes of payload and a header of 4294967295 bytes add \
             up to more than 4294967295 bytes, the most a packet can hold"
        );
        let kind = err("[network]\nkind = \"moebius\"\n");
        assert!(kind.contains("moebius") && kind.contains("kary-ntree"), "{kind}");
        assert_eq!(
            err("[network]\nkind = \"ideal\"\n"),
            "n.toml: network.bandwidth_mbps: the ideal network needs a bandwidth (the replayer configuration's \
             inter-node one)"
        );
        assert_eq!(
            err("[network]\nkind = \"ideal\"\nbandwidth_mbps = 0\n"),
            "n.toml: network.bandwidth_mbps: expected a positive rate in MBps (2^20 bytes/s)"
        );
        assert_eq!(
            err("[network]\nkind = \"ideal\"\nbandwidth_mbps = 1\nswitch = \"cioq\"\n"),
            "n.toml: network.switch: applies to kind = \"crossbar\", \"xgft\", \"kary-ntree\", \"torus\", \"mesh\", \
             \"hypercube\" or \"multi-rail\", not \"ideal\""
        );
        assert_eq!(
            err("[network]\nkind = \"crossbar\"\nlink_latency_ns = -1\n"),
            "n.toml: network.link_latency_ns: expected a non-negative time in ns"
        );
        assert_eq!(
            err("[network]\nkind = \"crossbar\"\nhosts = 0\n"),
            "n.toml: network.hosts: a network needs at least one host"
        );
        assert_eq!(
            err("[network]\nkind = \"crossbar\"\nk = 4\n"),
            "n.toml: network.k: applies to kind = \"kary-ntree\", not \"crossbar\""
        );
        assert_eq!(
            err("[network]\nkind = \"crossbar\"\nrouting = \"d-mod-k\"\n"),
            "n.toml: network.routing: d-mod-k, s-mod-k, random and pattern-aware route fat trees (kind = \"xgft\" or \"kary-ntree\")"
        );
        assert_eq!(
            err("[network]\nkind = \"xgft\"\nm = [4, 4]\nw = [2, 4]\n"),
            "n.toml: network.m: w1 must be 1 (hosts have one port)"
        );
        assert_eq!(
            err("[network]\nkind = \"xgft\"\nm = [4, 4]\n"),
            "n.toml: network.w: an XGFT needs w, e.g. w = [1, 16]"
        );
        assert_eq!(
            err("[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\nhosts = 17\n"),
            "n.toml: network.hosts: this tree has 16 hosts (the product of its m), not 17; leave hosts out"
        );
        assert_eq!(
            err("[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\nk_up = 5\n"),
            "n.toml: network.k_up: between 1 and k = 4"
        );
        assert_eq!(
            err("[network]\nswitch = \"wormhole\"\ninitial_pointer = \"left\"\n"),
            "n.toml: network.initial_pointer: expected \"random\" or a port number"
        );
    }

    #[test]
    fn a_mapping_file_places_nodes_relative_to_the_network_file() {
        let dir = std::env::temp_dir().join(format!("vesper-mapping-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("tasks.map"), "host3\n# a comment\n\nhost3\n1  # by number\n").expect("write");
        std::fs::write(
            dir.join("net.toml"),
            "[network]\nkind = \"crossbar\"\nhosts = 4\nmapping = \"tasks.map\"\n",
        )
        .expect("write");
        let config = read(&dir.join("net.toml")).expect("valid");
        assert_eq!(
            config.placement,
            Placement::Listed(vec![HostId(3), HostId(3), HostId(1)])
        );
        assert_eq!(config.placement.host_of(1), HostId(3));
        assert_eq!(config.placement.nodes(4), 3);
        std::fs::write(dir.join("tasks.map"), "host0\nhost4\n").expect("write");
        let err = read(&dir.join("net.toml")).expect_err("refused").to_string();
        assert!(
            err.ends_with("tasks.map:2: expected a host name, host0 … host3 (or its number), got `host4`"),
            "{err}"
        );
        std::fs::write(
            dir.join("net.toml"),
            "[network]\nmapping = \"tasks.map\"\nnodes_per_host = 2\n",
        )
        .expect("write");
        let err = read(&dir.join("net.toml")).expect_err("refused").to_string();
        assert!(err.ends_with("network.nodes_per_host: give either nodes_per_host or a mapping file, not both"));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn route_files_are_one_or_one_per_rail_relative_to_the_network_file() {
        let routes = |text: &str| parse_spec("r.toml", text).expect("valid").routes;
        assert_eq!(
            routes("[network]\nroutes = \"a.routes\"\n"),
            Some(vec![PathBuf::from("a.routes")])
        );
        assert_eq!(
            routes("[network]\nroutes = [\"r0.routes\", \"r1.routes\"]\n"),
            Some(vec![PathBuf::from("r0.routes"), PathBuf::from("r1.routes")])
        );
        assert_eq!(routes("[network]\n"), None);
        let dir = std::env::temp_dir().join(format!("vesper-routes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(
            dir.join("net.toml"),
            "[network]\nroutes = [\"r0.routes\", \"/abs.routes\"]\n",
        )
        .expect("write");
        let spec = read_spec(&dir.join("net.toml")).expect("valid");
        assert_eq!(
            spec.routes,
            Some(vec![dir.join("r0.routes"), PathBuf::from("/abs.routes")])
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn reads_multi_rail_networks_and_presets_in_files() {
        let text = "[network]\nkind = \"multi-rail\"\nrail_policy = \"size-threshold\"\nrail_threshold_bytes = 4096\n\
                    switch = \"cioq\"\nnodes_per_host = 2\n\
                    [[network.rails]]\nkind = \"kary-ntree\"\nk = 4\nn = 2\n\
                    [[network.rails]]\nkind = \"crossbar\"\nhosts = 16\nlink_bandwidth_mbs = 1000\n";
        let config = parse("r.toml", text).expect("valid");
        let FabricConfig::MultiRail { rails, policy } = &config.fabric else {
            panic!("not multi-rail: {config:?}");
        };
        assert_eq!((config.hosts, rails.len()), (16, 2));
        assert_eq!(*policy, RailPolicy::SizeThreshold { bytes: 4096 });
        assert_eq!(config.placement, Placement::Fill { nodes_per_host: 2 });
        // The top's switch applies to every rail; a rail keeps its own link rate.
        assert!(rails.iter().all(|r| matches!(r.switch.kind, SwitchKind::Cioq(_))));
        assert_eq!(rails[1].link.bandwidth.bytes_per_second_f64(), 1e9);
        assert_eq!(config.build().expect("builds").rails().len(), 2);
        // A preset as a base, its fields overridden.
        let tree = parse(
            "p.toml",
            "[network]\npreset = \"fat-tree\"\nswitch = \"output-queued\"\n",
        )
        .expect("valid");
        assert_eq!(tree.hosts, 256);
        assert_eq!(switched(&tree).switch.kind, SwitchKind::OutputQueued);
        let err = |text: &str| parse("r.toml", text).expect_err("refused").to_string();
        assert_eq!(
            err("[network]\nkind = \"multi-rail\"\n"),
            "r.toml: network.rails: a multi-rail network needs its rails: one [[network.rails]] table each"
        );
        assert_eq!(
            err(
                "[network]\nkind = \"multi-rail\"\n[[network.rails]]\nkind = \"kary-ntree\"\nk = 4\nn = 2\n\
                 [[network.rails]]\nkind = \"kary-ntree\"\nk = 4\nn = 3\n"
            ),
            "r.toml: network.rails[1]: joins 64 hosts, rails[0] 16: every rail joins the same hosts"
        );
        assert_eq!(
            err("[network]\nkind = \"multi-rail\"\n[[network.rails]]\nkind = \"kary-ntree\"\nk = 4\n"),
            "r.toml: network.rails[0].n: a k-ary n-tree needs n, e.g. n = 2"
        );
        assert_eq!(
            err("[network]\nkind = \"multi-rail\"\n[[network.rails]]\nmapping = \"m\"\n"),
            "r.toml: network.rails[0].mapping: applies to the whole network: set it at the top"
        );
        assert_eq!(
            err("[network]\nkind = \"multi-rail\"\nrail_policy = \"size-threshold\"\n[[network.rails]]\n"),
            "r.toml: network.rail_threshold_bytes: rail_policy = \"size-threshold\" needs the size that leaves rail 0"
        );
        assert_eq!(
            err("[network]\nrail_policy = \"striped\"\n"),
            "r.toml: network.rail_policy: applies to kind = \"multi-rail\" or \"map\", not \"crossbar\""
        );
        assert!(err("[network]\npreset = \"nope\"\n").contains("network.preset: --preset nope: no such preset"));
    }

    #[test]
    fn random_and_pattern_aware_routing() {
        let random = parse(
            "r.toml",
            "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\nrouting = \"random\"\nseed = 9\n",
        )
        .expect("valid");
        assert_eq!(switched(&random).routing, RoutingPolicy::Random { seed: 9 });
        let dir = std::env::temp_dir().join(format!("vesper-pattern-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        // A transpose on a 4-ary 2-tree, nodes two per host: node n on host n / 2.
        let flows: String = (0..16u32)
            .map(|h| format!("{} {}\n", 2 * h, 2 * (4 * (h % 4) + h / 4)))
            .collect();
        std::fs::write(dir.join("transpose.txt"), format!("# transpose\n{flows}phase\n0 2\n")).expect("write");
        std::fs::write(
            dir.join("net.toml"),
            "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\nrouting = \"pattern-aware\"\npattern = \"transpose.txt\"\n\
             nodes_per_host = 2\n",
        )
        .expect("write");
        let config = read(&dir.join("net.toml")).expect("valid");
        let RoutingPolicy::PatternAware(Some(routes)) = &switched(&config).routing else {
            panic!("no pattern routes: {config:?}");
        };
        // The transpose's flows that leave their leaf, each on its own links.
        let x = Xgft::kary_ntree(4, 2).expect("valid");
        let transpose: Vec<_> = (0..16)
            .map(|h| (HostId(h), HostId(4 * (h % 4) + h / 4)))
            .filter(|(s, d)| s != d)
            .collect();
        let loads = x.phase_loads(&[transpose], |s, d| routes.path(s, d)).expect("valid");
        assert_eq!(loads[0].max_load, 1);
        let err = |text: &str| parse("r.toml", text).expect_err("refused").to_string();
        assert_eq!(
            err("[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\nrouting = \"pattern-aware\"\n"),
            "r.toml: network.pattern: routing = \"pattern-aware\" needs a communication pattern: pattern = FILE \
             (vesper run takes its workload's)"
        );
        assert_eq!(
            err("[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\npattern = \"p\"\n"),
            "r.toml: network.pattern: applies to routing = \"pattern-aware\" only"
        );
        std::fs::write(dir.join("transpose.txt"), "0 99\n").expect("write");
        let far = read(&dir.join("net.toml")).expect_err("refused").to_string();
        assert!(
            far.ends_with("network.pattern: node 99 is not in the network (16 hosts × 2 nodes per host)"),
            "{far}"
        );
        std::fs::write(dir.join("transpose.txt"), "0 1 2\n").expect("write");
        let bad = read(&dir.join("net.toml")).expect_err("refused").to_string();
        assert!(
            bad.ends_with("transpose.txt:1: expected `SRC DST` or `phase`, got `0 1 2`"),
            "{bad}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn levels_of_a_tree_take_their_own_switches() {
        let text =
            "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\n[network.levels.3]\nswitch = \"cioq\"\nspeedup = 2\n";
        let config = parse("l.toml", text).expect("valid");
        let spine = SwitchKind::Cioq(CioqParams {
            speedup: 2,
            virtual_output_queues: false,
        });
        assert_eq!(switched(&config).level_kinds, vec![(3, spine)]);
        let mut sim = config.build().expect("builds");
        // It carries traffic through the CIOQ spine.
        let spec = vesper_netmodels::MessageSpec {
            src: HostId(0),
            dst: HostId(63),
            size_bytes: 10_000,
            cookie: 1,
        };
        sim.inject(SimTime::ZERO, spec).expect("valid");
        let mut delivered = Vec::new();
        sim.run_until(SimTime::MAX, &mut delivered);
        assert_eq!(delivered.len(), 1);
        let err = |text: &str| parse("l.toml", text).expect_err("refused").to_string();
        assert_eq!(
            err("[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\n[network.levels.4]\nswitch = \"cioq\"\n"),
            "l.toml: network.levels.4: expected a level from 1 to 3"
        );
        assert_eq!(
            err(
                "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\nswitch = \"wormhole\"\n[network.levels.1]\nswitch = \"cioq\"\n"
            ),
            "l.toml: network.levels.1.switch: wormhole switches cannot share a network with other kinds: set switch = \
             \"wormhole\" for the whole network instead"
        );
        assert_eq!(
            err(
                "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\n[network.levels.1]\nswitch = \"output-queued\"\nspeedup = 2\n"
            ),
            "l.toml: network.levels.1.speedup: applies to switch = \"cioq\" only"
        );
        assert_eq!(
            err("[network]\n[network.levels.1]\nswitch = \"cioq\"\n"),
            "l.toml: network.levels: applies to kind = \"xgft\" or \"kary-ntree\", not \"crossbar\""
        );
    }

    #[test]
    fn reads_tori_meshes_and_hypercubes() {
        let torus = parse(
            "t.toml",
            "[network]\nkind = \"torus\"\ndims = [4, 4]\nhosts_per_switch = 2\nswitch = \"wormhole\"\n\
             buffer_bytes = 9000\n",
        )
        .expect("valid");
        assert_eq!(torus.hosts, 32);
        let s = switched(&torus);
        assert_eq!(s.shape, Shape::Torus(Torus::new(vec![4, 4], true, 2).expect("valid")));
        assert_eq!(s.routing, RoutingPolicy::DimensionOrder);
        // Wormhole switches on rings take bubble flow control by default.
        assert!(matches!(s.switch.kind, SwitchKind::Wormhole(w) if w.bubble));
        torus.build().expect("builds");
        let mesh = parse(
            "m.toml",
            "[network]\nkind = \"mesh\"\ndims = [3, 5]\nswitch = \"wormhole\"\n",
        )
        .expect("valid");
        assert!(matches!(switched(&mesh).switch.kind, SwitchKind::Wormhole(w) if !w.bubble));
        mesh.build().expect("builds");
        let cube = parse("c.toml", "[network]\nkind = \"hypercube\"\ndimensions = 4\n").expect("valid");
        assert_eq!(
            (cube.hosts, switched(&cube).shape.clone()),
            (16, Shape::Torus(Torus::hypercube(4, 1).expect("valid")))
        );
        let err = |text: &str| parse("t.toml", text).expect_err("refused").to_string();
        assert_eq!(
            err("[network]\nkind = \"torus\"\ndims = [4, 1]\n"),
            "t.toml: network.dims[1]: every dimension needs at least 2 switches"
        );
        assert_eq!(
            err("[network]\nkind = \"torus\"\n"),
            "t.toml: network.dims: a torus needs its dims, e.g. dims = [8, 8, 8]"
        );
        assert_eq!(
            err("[network]\nkind = \"hypercube\"\ndimensions = 0\n"),
            "t.toml: network.dimensions: a hypercube needs at least one dimension"
        );
        assert_eq!(
            err("[network]\nkind = \"torus\"\ndims = [4, 4]\nrouting = \"d-mod-k\"\n"),
            "t.toml: network.routing: tori, meshes and hypercubes route in dimension order (routing = \
             \"dimension-order\")"
        );
        assert_eq!(
            err("[network]\nkind = \"kary-ntree\"\nk = 2\nn = 2\nrouting = \"dimension-order\"\n"),
            "t.toml: network.routing: dimension-order routes tori, meshes and hypercubes"
        );
        assert_eq!(
            err("[network]\nkind = \"mesh\"\ndims = [2, 2]\nhosts = 5\n"),
            "t.toml: network.hosts: this network has 4 hosts (its switches × hosts_per_switch), not 5; leave hosts out"
        );
        assert_eq!(
            err("[network]\nkind = \"mesh\"\ndims = [2, 2]\nbubble = true\n"),
            "t.toml: network.bubble: applies to switch = \"wormhole\" only"
        );
        // Bubble flow control off on a torus: the build says why it is needed.
        let off = parse(
            "t.toml",
            "[network]\nkind = \"torus\"\ndims = [4, 4]\nswitch = \"wormhole\"\nbubble = false\n",
        )
        .expect("valid description");
        let refused = off.build().expect_err("deadlock-prone").to_string();
        assert!(refused.contains("bubble"), "{refused}");
    }

    #[test]
    fn an_overlay_replaces_only_what_it_gives() {
        let mut spec =
            parse_spec("t.toml", "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\nseed = 3\n").expect("valid");
        spec.overlay(NetworkSpec {
            switch: Some(SwitchName::Wormhole),
            k: Some(8),
            ..NetworkSpec::default()
        });
        assert_eq!(
            (spec.kind, spec.k, spec.n, spec.seed),
            (Some(KindName::KaryNtree), Some(8), Some(2), Some(3))
        );
        assert_eq!(spec.resolve().expect("valid").hosts, 64);
    }
}
