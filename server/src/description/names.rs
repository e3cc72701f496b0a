//! The names a network file and the flags give to kinds, switches and policies, and the
//! tables of tree levels and map device types.

use std::path::PathBuf;

use serde::Deserialize;

/// How a value is written on the command line (`output-queued`).
pub fn value_name<T: clap::ValueEnum>(value: &T) -> String {
    value
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
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
    /// groups of routers joined all to all, the groups by global cables
    Dragonfly,
    /// no contention (calibration)
    Ideal,
    /// several networks joining the same hosts
    MultiRail,
    /// read from a Myrinet map file (`map`), with its routes (`routes`) if given
    Map,
}

impl KindName {
    /// Every kind.
    pub const ALL: &[KindName] = &[
        KindName::Crossbar,
        KindName::Xgft,
        KindName::KaryNtree,
        KindName::Torus,
        KindName::Mesh,
        KindName::Hypercube,
        KindName::Dragonfly,
        KindName::Ideal,
        KindName::MultiRail,
        KindName::Map,
    ];

    /// Its name in a network file.
    pub fn name(self) -> &'static str {
        match self {
            KindName::Crossbar => "crossbar",
            KindName::Xgft => "xgft",
            KindName::KaryNtree => "kary-ntree",
            KindName::Torus => "torus",
            KindName::Mesh => "mesh",
            KindName::Hypercube => "hypercube",
            KindName::Dragonfly => "dragonfly",
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

/// How wormhole switches are simulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum GranularityName {
    /// runs of flits computed in closed form (the same times, several times faster)
    Coarse,
    /// flit by flit, the reference (a network split into partitions steps so)
    Fine,
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
    /// dragonflies: through the one cable between the two groups
    Minimal,
    /// dragonflies: through a random intermediate router, seeded by `seed`
    Valiant,
    /// dragonflies: minimal or Valiant's detour, chosen at the source router (UGAL-L)
    Ugal,
    /// maps: up*/down* routes, deadlock-free on any topology
    UpDown,
}

impl RoutingName {
    /// Whether it draws from the seed: random up ports, a dragonfly's intermediate
    /// routers.
    pub fn draws(self) -> bool {
        matches!(self, RoutingName::Random | RoutingName::Valiant | RoutingName::Ugal)
    }
}

/// How a dragonfly's global cables join its groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArrangementName {
    /// slot `s` of group `G` to group `s` (`s < G`) or `s + 1` (BookSim's `dragonflynew`)
    Absolute,
    /// slot `s` of group `G` to group `(G + s + 1) mod g`
    Relative,
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
pub(super) fn one_or_more_paths<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<PathBuf>>, D::Error> {
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

impl PointerSpec {
    /// `--initial-pointer`'s value: a port number, or a name (only `random` is taken, when
    /// the description is resolved).
    pub fn parse(text: &str) -> Result<PointerSpec, String> {
        Ok(match text.parse() {
            Ok(port) => PointerSpec::Port(port),
            Err(_) => PointerSpec::Name(text.to_string()),
        })
    }
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
