//! Every field of a network description, declared once: its key in a network file, its
//! type, which networks take it ([`Claim`]) and, for most, its command-line flag and
//! help. From this one list come the file's schema ([`NetworkSpec`]), the flags
//! ([`NetworkFlags`]), the field names errors carry ([`Field`]), the layering of a
//! preset, a file and flags ([`NetworkSpec::overlay`]), and the rule that refuses a
//! field a network does not take ([`Claim`], applied by
//! `NetworkSpec::check` in `super::checked`).
//!
//! To add a field: declare it below (its flag too, if the command line should set it),
//! take it into the description that uses it: a shape's spec in `shapes/` (its
//! `ShapeKind::take`), a switch kind's in `switches/` (`SwitchKindSpec::take`), or a
//! variant of [`Description`](super::Description) in
//! `checked.rs` (a field nothing takes is refused wherever it is given, by its claim),
//! and read it there or in `resolve.rs`. The test `claims_match_what_each_network_takes`
//! fails until the claim and what takes the field agree.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::names::{
    ArbitrationName, ArrangementName, GranularityName, InterleaveName, KindName, LevelSpec, ModelSpec, PointerSpec,
    RailPolicyName, RoutePolicyName, RoutingName, SwitchName, one_or_more_paths,
};

/// Which networks take a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// every network
    Any,
    /// the network as a whole, not one of its rails
    Whole,
    /// networks of these kinds
    Kinds(&'static [KindName]),
    /// every network of switches (any kind but `ideal`)
    Switched,
    /// networks of these switches
    Switches(&'static [SwitchName]),
}

/// A value a flag gives, as a field's value and as written on the command line.
pub trait FlagValue {
    /// The field's value.
    type Field;
    /// The value, and the flag's words for it (`""` for a switch such as `--voq`); `None`
    /// when the flag is not given.
    fn given(&self) -> Option<(Self::Field, String)>;
}

impl<T: FlagText + Clone> FlagValue for Option<T> {
    type Field = T;
    fn given(&self) -> Option<(T, String)> {
        self.as_ref().map(|v| (v.clone(), v.text()))
    }
}

impl FlagValue for bool {
    type Field = bool;
    fn given(&self) -> Option<(bool, String)> {
        self.then(|| (true, String::new()))
    }
}

impl FlagValue for Vec<PathBuf> {
    type Field = Vec<PathBuf>;
    fn given(&self) -> Option<(Vec<PathBuf>, String)> {
        let text: Vec<String> = self.iter().map(|p| p.display().to_string()).collect();
        (!self.is_empty()).then(|| (self.clone(), text.join(", ")))
    }
}

/// How a flag's value is written on the command line.
pub trait FlagText {
    /// The value as written.
    fn text(&self) -> String;
}

impl FlagText for u32 {
    fn text(&self) -> String {
        self.to_string()
    }
}

impl FlagText for u64 {
    fn text(&self) -> String {
        self.to_string()
    }
}

impl FlagText for f64 {
    fn text(&self) -> String {
        crate::config::number_text(*self)
    }
}

impl FlagText for PathBuf {
    fn text(&self) -> String {
        self.display().to_string()
    }
}

impl FlagText for PointerSpec {
    fn text(&self) -> String {
        match self {
            PointerSpec::Port(port) => port.to_string(),
            PointerSpec::Name(name) => name.clone(),
        }
    }
}

macro_rules! value_enum_text {
    ($($name:ty),*) => {
        $(impl FlagText for $name {
            fn text(&self) -> String {
                super::names::value_name(self)
            }
        })*
    };
}
value_enum_text!(
    ArbitrationName,
    GranularityName,
    InterleaveName,
    RailPolicyName,
    RoutePolicyName,
    RoutingName,
    SwitchName
);

/// Declares the fields (see the module documentation). Each entry:
/// `key (Variant): Type => claim` and, for a field with a flag,
/// `, flag name: FlagType [clap arguments]` after its help.
macro_rules! network_fields {
    ($(
        $(#[$spec_meta:meta])*
        $key:ident ($variant:ident) : $ty:ty => $claim:expr
        $(, $(#[doc = $help:literal])* flag $flag:ident : $flag_ty:ty [$($arg:tt)*])?
        ;
    )*) => {
        /// A network description with every field optional: what a file, a preset or the
        /// command line says. See the module documentation of
        /// [`description`](crate::description) for the fields.
        #[derive(Debug, Clone, Default, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(missing_docs, reason = "the fields are documented in the module's example file")]
        pub struct NetworkSpec {
            $( $(#[$spec_meta])* pub $key: Option<$ty>, )*
        }

        /// A field of a network description.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[allow(missing_docs, reason = "each variant is the field of its name")]
        pub enum Field {
            $( $variant, )*
        }

        impl Field {
            /// Every field, in the order of the declaration.
            pub const ALL: &[Field] = &[$( Field::$variant, )*];

            /// Its key in a network file.
            pub fn key(self) -> &'static str {
                match self {
                    $( Field::$variant => stringify!($key), )*
                }
            }

            /// The networks that take it.
            pub fn claim(self) -> Claim {
                match self {
                    $( Field::$variant => $claim, )*
                }
            }

            /// The id of the flag that sets it (`None`: it has none).
            fn flag_id(self) -> Option<&'static str> {
                match self {
                    $( Field::$variant => network_fields!(@id $($flag)?), )*
                }
            }
        }

        impl NetworkSpec {
            /// Overrides the fields `other` gives.
            pub fn overlay(&mut self, other: NetworkSpec) {
                $( if other.$key.is_some() { self.$key = other.$key; } )*
            }

            /// The fields it gives, in the order of the declaration.
            pub fn given(&self) -> Vec<Field> {
                let mut fields = Vec::new();
                $( if self.$key.is_some() { fields.push(Field::$variant); } )*
                fields
            }

            /// Leaves `field` out.
            pub fn clear(&mut self, field: Field) {
                match field {
                    $( Field::$variant => self.$key = None, )*
                }
            }
        }

        /// The flags that set fields of the network (`vesper serve`, `run`, `topo` and
        /// `traffic` take them, after the network they override).
        #[derive(Debug, Clone, Default, clap::Args)]
        pub struct NetworkFlags {
            $($(
                $(#[doc = $help])*
                #[arg(long, $($arg)*)]
                pub $flag: $flag_ty,
            )?)*
        }

        impl NetworkFlags {
            /// The fields the flags give, and each one's flag as typed (for messages).
            pub fn layer(&self) -> (NetworkSpec, Vec<(Field, String)>) {
                let mut spec = NetworkSpec::default();
                let mut typed = Vec::new();
                $($(
                    if let Some((value, text)) = FlagValue::given(&self.$flag) {
                        spec.$key = Some(value.into());
                        let flag = Field::$variant.flag().unwrap_or_default();
                        typed.push((Field::$variant, format!("{flag} {text}").trim_end().to_string()));
                    }
                )?)*
                (spec, typed)
            }
        }
    };
    (@id $flag:ident) => { Some(stringify!($flag)) };
    (@id) => { None };
}

use KindName::{Dragonfly, Hypercube, KaryNtree, Map, Mesh, MultiRail, Torus, Xgft};

network_fields! {
    /// a built-in network beneath the other fields (`--preset` chooses the base instead)
    preset (Preset): String => Claim::Any;
    /// crossbar (the default), xgft, kary-ntree, torus, mesh, hypercube, dragonfly,
    /// ideal, multi-rail or map
    kind (Kind): KindName => Claim::Any;
    hosts (Hosts): u32 => Claim::Any,
        /// Hosts of a crossbar or of the ideal network [default: 256].
        flag hosts: Option<u32> [];
    nodes_per_host (NodesPerHost): u32 => Claim::Whole,
        /// Client nodes (processors) per host: node n runs on host n / N, so nodes of one
        /// host share its adapter [default: 1].
        flag nodes_per_host: Option<u32> [value_name = "N"];
    mapping (Mapping): PathBuf => Claim::Whole,
        /// A task mapping file: one host name per line (host0, host1, …), client node n runs
        /// on the host of line n; several nodes may share a host.
        flag mapping: Option<PathBuf> [value_name = "FILE", conflicts_with = "nodes_per_host"];
    m (M): Vec<u32> => Claim::Kinds(&[Xgft]);
    w (W): Vec<u32> => Claim::Kinds(&[Xgft]);
    k (K): u32 => Claim::Kinds(&[KaryNtree]);
    n (N): u32 => Claim::Kinds(&[KaryNtree]);
    k_up (KUp): u32 => Claim::Kinds(&[KaryNtree]);
    dims (Dims): Vec<u32> => Claim::Kinds(&[Torus, Mesh]);
    dimensions (Dimensions): u32 => Claim::Kinds(&[Hypercube]);
    hosts_per_switch (HostsPerSwitch): u32 => Claim::Kinds(&[Torus, Mesh, Hypercube]);
    /// dragonfly: hosts a router
    p (P): u32 => Claim::Kinds(&[Dragonfly]);
    /// dragonfly: routers a group [default: 2p]
    a (A): u32 => Claim::Kinds(&[Dragonfly]);
    /// dragonfly: global cables a router [default: p]
    h (H): u32 => Claim::Kinds(&[Dragonfly]);
    /// dragonfly: groups, at most a·h + 1 [default: a·h + 1]
    g (G): u32 => Claim::Kinds(&[Dragonfly]);
    /// dragonfly: how the global cables join the groups, `absolute` (BookSim's, the
    /// default) or `relative`
    arrangement (Arrangement): ArrangementName => Claim::Kinds(&[Dragonfly]);
    global_link_latency_ns (GlobalLinkLatencyNs): f64 => Claim::Kinds(&[Dragonfly]),
        /// dragonfly: the global cables' propagation delay [ns; default: every cable's,
        /// --link-latency].
        flag global_link_latency: Option<f64> [value_name = "NS"];
    ugal_threshold (UgalThreshold): u64 => Claim::Kinds(&[Dragonfly]),
        /// dragonfly ugal: minimal when the bytes queued for the minimal first hop are at
        /// most twice the detour's plus this [bytes; default: 240, BookSim's 30 flits of
        /// 8 bytes].
        flag ugal_threshold: Option<u64> [value_name = "BYTES"];
    routing (Routing): RoutingName => Claim::Switched,
        /// Routing: on fat trees `d-mod-k`, `s-mod-k`, `random` (a static seeded choice per
        /// pair, --seed) or `pattern-aware` (routes chosen so that flows of one phase of a
        /// communication pattern share few links: --pattern, or `vesper run`'s workload);
        /// on tori, meshes and hypercubes `dimension-order`; on dragonflies `minimal`,
        /// `valiant` (through a random intermediate router, --seed) or `ugal` (UGAL-L:
        /// minimal or Valiant's detour, chosen at the source router from its queues);
        /// `shortest-path` on crossbars, trees and dragonflies.
        flag routing: Option<RoutingName> [value_enum];
    pattern (Pattern): PathBuf => Claim::Switched,
        /// pattern-aware routing: the communication pattern, one `SRC DST` flow of client
        /// nodes per line, a line `phase` between phases.
        flag pattern: Option<PathBuf> [value_name = "FILE"];
    /// the pattern of `routing = "pattern-aware"` given in memory: per phase, flows
    /// between client nodes (`vesper run` gives its workload's, whatever the network;
    /// only pattern-aware routes use it)
    #[serde(skip)]
    pattern_phases (PatternPhases): Vec<Vec<(u32, u32)>> => Claim::Any;
    link_bandwidth_mbs (LinkBandwidthMbs): f64 => Claim::Switched,
        /// Link rate per direction [MB/s, 10^6 bytes/s; default: 250, i.e. 2 Gb/s].
        flag link_bandwidth: Option<f64> [value_name = "MB/s"];
    link_latency_ns (LinkLatencyNs): f64 => Claim::Switched,
        /// Cable propagation delay [ns; default: 25, i.e. 5 m at 5 ns/m].
        flag link_latency: Option<f64> [value_name = "NS"];
    host_link_latency_ns (HostLinkLatencyNs): f64 => Claim::Switched,
        /// The host cables' propagation delay [ns; default: every cable's,
        /// --link-latency].
        flag host_link_latency: Option<f64> [value_name = "NS"];
    routing_latency_ns (RoutingLatencyNs): f64 => Claim::Switched,
        /// Switch routing decision time [ns; default: 100].
        flag routing_latency: Option<f64> [value_name = "NS"];
    packet_payload_bytes (PacketPayloadBytes): u32 => Claim::Switched,
        /// Largest payload of a packet; adapters cut messages into packets [bytes; default:
        /// 4096].
        flag packet_payload: Option<u32> [value_name = "BYTES"];
    packet_header_bytes (PacketHeaderBytes): u32 => Claim::Switched,
        /// Header added to every packet on the wire [bytes; default: 16].
        flag packet_header: Option<u32> [value_name = "BYTES"];
    interleave (Interleave): InterleaveName => Claim::Switched,
        /// How an adapter serves concurrent messages: one packet of each in turn
        /// (`round-robin`, as Myrinet adapters) or one message after the other (`fifo`)
        /// [default: round-robin].
        flag interleave: Option<InterleaveName> [value_enum];
    switch (Switch): SwitchName => Claim::Switched,
        /// The switch architecture: `output-queued` (ideal), `cioq` (input and output
        /// queues, a crossbar with a speedup) or `wormhole` (Myrinet-like, flits with
        /// stop/go flow control) [default: output-queued, or the preset's].
        flag switch: Option<SwitchName> [value_enum];
    speedup (Speedup): u32 => Claim::Switches(&[SwitchName::Cioq]),
        /// cioq: the crossbar runs this many times faster than a link [default: 1].
        flag speedup: Option<u32> [];
    virtual_output_queues (VirtualOutputQueues): bool => Claim::Switches(&[SwitchName::Cioq]),
        /// cioq: one virtual output queue per output at every input, instead of one FIFO.
        flag voq: bool [];
    flit_bytes (FlitBytes): u32 => Claim::Switches(&[SwitchName::Wormhole]),
        /// wormhole: flow-control unit [bytes; default: 8].
        flag flit_bytes: Option<u32> [value_name = "BYTES"];
    buffer_bytes (BufferBytes): u32 => Claim::Switches(&[SwitchName::Wormhole]),
        /// wormhole: input (slack) buffer per switch port [bytes; default: 512].
        flag buffer_bytes: Option<u32> [value_name = "BYTES"];
    bubble (Bubble): bool => Claim::Switches(&[SwitchName::Wormhole]);
    arbitration (Arbitration): ArbitrationName => Claim::Switches(&[SwitchName::Wormhole]),
        /// wormhole: output arbitration [default: round-robin].
        flag arbitration: Option<ArbitrationName> [value_enum];
    granularity (Granularity): GranularityName => Claim::Switches(&[SwitchName::Wormhole]),
        /// wormhole: `coarse` computes runs of flits in closed form, `fine` steps flit by
        /// flit (the same results, several times slower; splitting the network with
        /// --partitions or MPI ranks needs it, or a trace, which steps so anyway)
        /// [default: coarse].
        flag granularity: Option<GranularityName> [value_enum];
    initial_pointer (InitialPointer): PointerSpec => Claim::Switches(&[SwitchName::Wormhole]),
        /// wormhole round-robin: where every output's pointer starts: `random` (seeded by
        /// --seed) or a port number [default: random].
        flag initial_pointer: Option<PointerSpec> [value_name = "random|PORT", value_parser = PointerSpec::parse];
    seed (Seed): u64 => Claim::Switched,
        /// Seed of the wormhole switches' random initial pointers and of random routing
        /// [default: 1].
        flag seed: Option<u64> [];
    bandwidth_mbps (BandwidthMbps): f64 => Claim::Kinds(&[KindName::Ideal]),
        /// ideal: bandwidth of every transfer [MBps as in Dimemas configurations, 2^20
        /// bytes/s]; use the configuration's inter-node bandwidth.
        flag bandwidth: Option<f64> [value_name = "MBPS"];
    latency_ns (LatencyNs): f64 => Claim::Kinds(&[KindName::Ideal]),
        /// ideal: latency added to every transfer [ns; default: 0]; use the
        /// configuration's inter-node latency (and set it to 0 in the replayer).
        flag latency: Option<f64> [value_name = "NS"];
    levels (Levels): BTreeMap<String, LevelSpec> => Claim::Kinds(&[Xgft, KaryNtree]);
    models (Models): BTreeMap<String, ModelSpec> => Claim::Kinds(&[Map]);
    rails (Rails): Vec<NetworkSpec> => Claim::Kinds(&[MultiRail]);
    map (Map): PathBuf => Claim::Kinds(&[Map]);
    #[serde(default, deserialize_with = "one_or_more_paths")]
    routes (Routes): Vec<PathBuf> => Claim::Kinds(&[Map]),
        /// The map's routes: a route file, canonical (absolute output ports) or Myrinet
        /// (turns); several lines for one pair are alternatives. A map of several rails
        /// takes one per rail, in rail order (--routes r0.routes --routes r1.routes).
        flag routes: Vec<PathBuf> [value_name = "FILE", requires = "map"];
    route_policy (RoutePolicy): RoutePolicyName => Claim::Kinds(&[Map]),
        /// How a message picks one of its pair's routes: first, round-robin, random
        /// (--seed), hash [default: first].
        flag route_policy: Option<RoutePolicyName> [value_enum];
    rail_policy (RailPolicy): RailPolicyName => Claim::Kinds(&[MultiRail, Map]),
        /// multi-rail: how a host picks the rail of a message: in turn (`round-robin`),
        /// `by-destination` (rail dst mod N), `size-threshold` (below --rail-threshold on
        /// rail 0, the others over the other rails), or `striped` over every rail
        /// [default: round-robin].
        flag rail_policy: Option<RailPolicyName> [value_enum];
    rail_threshold_bytes (RailThresholdBytes): u32 => Claim::Kinds(&[MultiRail, Map]),
        /// multi-rail size-threshold: the smallest message that leaves rail 0 [bytes].
        flag rail_threshold: Option<u32> [value_name = "BYTES"];
}

impl Field {
    /// The flag that sets it, `--link-bandwidth` (`None`: it has none).
    pub fn flag(self) -> Option<&'static str> {
        static FLAGS: std::sync::OnceLock<BTreeMap<&'static str, String>> = std::sync::OnceLock::new();
        let flags = FLAGS.get_or_init(|| {
            let command = <NetworkFlags as clap::Args>::augment_args(clap::Command::new("flags"));
            command
                .get_arguments()
                .filter_map(|arg| {
                    let id = Field::ALL
                        .iter()
                        .find_map(|f| f.flag_id().filter(|id| arg.get_id() == *id))?;
                    Some((id, format!("--{}", arg.get_long()?)))
                })
                .collect()
        });
        flags.get(self.flag_id()?).map(String::as_str)
    }
}
