//! The network on the command line: a base (a built-in name, a preset, a file or a map)
//! and the flags that override its fields, as `vesper serve`, `run`, `topo` and `traffic`
//! take them, and errors said in the words of the flag or file that set a field.

use std::path::PathBuf;

use crate::config::{NetworkConfig, number_text};
use crate::network_file::{
    self, ArbitrationName, InterleaveName, KindName, NetworkSpec, PointerSpec, RailPolicyName, RoutePolicyName,
    RoutingName, SpecError, SwitchName,
};
use crate::preset;

use super::*;

/// The network, as `vesper serve`, `vesper run` and `vesper topo` take it: a base (a
/// built-in name, a preset or a file) and flags that override its fields.
#[derive(Debug, clap::Args)]
pub struct NetworkArgs {
    /// The network: `crossbar` (one output-queued switch, 2 Gb/s links), `ideal` (no
    /// contention: latency + size / bandwidth, to calibrate against the replayer), or a
    /// TOML network file (see docs/network-files.md: topology, switches, routing,
    /// mapping). The flags below override its fields.
    #[arg(long, value_name = "crossbar|ideal|FILE")]
    pub network: Option<String>,
    /// A built-in network instead: fat-tree, fat-tree-512, two-rail-fat-tree,
    /// kary-ntree, torus-3d, hypercube, crossbar (`vesper topo --presets` lists them).
    #[arg(long, value_name = "NAME", conflicts_with = "network")]
    pub preset: Option<String>,
    /// A Myrinet map file instead (hosts with several ports make a multi-rail network);
    /// routes by shortest paths unless --routes or --routing up-down.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["network", "preset"])]
    pub map: Option<PathBuf>,
    /// The map's routes: a route file, canonical (absolute output ports) or Myrinet
    /// (turns); several lines for one pair are alternatives. A map of several rails
    /// takes one per rail, in rail order (--routes r0.routes --routes r1.routes).
    #[arg(long, value_name = "FILE", requires = "map")]
    pub routes: Vec<PathBuf>,
    /// How a message picks one of its pair's routes: first, round-robin, random
    /// (--seed), hash [default: first].
    #[arg(long, value_enum)]
    pub route_policy: Option<RoutePolicyName>,
    /// Hosts of a crossbar or of the ideal network [default: 256].
    #[arg(long)]
    pub hosts: Option<u32>,
    /// Client nodes (processors) per host: node n runs on host n / N, so nodes of one
    /// host share its adapter [default: 1].
    #[arg(long, value_name = "N")]
    pub nodes_per_host: Option<u32>,
    /// A task mapping file: one host name per line (host0, host1, …), client node n runs
    /// on the host of line n; several nodes may share a host.
    #[arg(long, value_name = "FILE", conflicts_with = "nodes_per_host")]
    pub mapping: Option<PathBuf>,
    /// Routing: on fat trees `d-mod-k`, `s-mod-k`, `random` (a static seeded choice per
    /// pair, --seed) or `pattern-aware` (routes chosen so that flows of one phase of a
    /// communication pattern share few links: --pattern, or `vesper run`'s workload);
    /// on tori, meshes and hypercubes `dimension-order`; `shortest-path` on crossbars
    /// and trees.
    #[arg(long, value_enum)]
    pub routing: Option<RoutingName>,
    /// pattern-aware routing: the communication pattern, one `SRC DST` flow of client
    /// nodes per line, a line `phase` between phases.
    #[arg(long, value_name = "FILE")]
    pub pattern: Option<PathBuf>,
    /// Link rate per direction [MB/s, 10^6 bytes/s; default: 250, i.e. 2 Gb/s].
    #[arg(long, value_name = "MB/s")]
    pub link_bandwidth: Option<f64>,
    /// Cable propagation delay [ns; default: 25, i.e. 5 m at 5 ns/m].
    #[arg(long, value_name = "NS")]
    pub link_latency: Option<f64>,
    /// Switch routing decision time [ns; default: 100].
    #[arg(long, value_name = "NS")]
    pub routing_latency: Option<f64>,
    /// Largest payload of a packet; adapters cut messages into packets [bytes; default:
    /// 4096].
    #[arg(long, value_name = "BYTES")]
    pub packet_payload: Option<u32>,
    /// Header added to every packet on the wire [bytes; default: 16].
    #[arg(long, value_name = "BYTES")]
    pub packet_header: Option<u32>,
    /// How an adapter serves concurrent messages: one packet of each in turn
    /// (`round-robin`, as Myrinet adapters) or one message after the other (`fifo`)
    /// [default: round-robin].
    #[arg(long, value_enum)]
    pub interleave: Option<InterleaveName>,
    /// The switch architecture: `output-queued` (ideal), `cioq` (input and output
    /// queues, a crossbar with a speedup) or `wormhole` (Myrinet-like, flits with
    /// stop/go flow control) [default: output-queued, or the preset's].
    #[arg(long, value_enum)]
    pub switch: Option<SwitchName>,
    /// cioq: the crossbar runs this many times faster than a link [default: 1].
    #[arg(long)]
    pub speedup: Option<u32>,
    /// cioq: one virtual output queue per output at every input, instead of one FIFO.
    #[arg(long)]
    pub voq: bool,
    /// wormhole: flow-control unit [bytes; default: 8].
    #[arg(long, value_name = "BYTES")]
    pub flit_bytes: Option<u32>,
    /// wormhole: input (slack) buffer per switch port [bytes; default: 512].
    #[arg(long, value_name = "BYTES")]
    pub buffer_bytes: Option<u32>,
    /// wormhole: output arbitration [default: round-robin].
    #[arg(long, value_enum)]
    pub arbitration: Option<ArbitrationName>,
    /// wormhole round-robin: where every output's pointer starts: `random` (seeded by
    /// --seed) or a port number [default: random].
    #[arg(long, value_name = "random|PORT")]
    pub initial_pointer: Option<String>,
    /// Seed of the wormhole switches' random initial pointers and of random routing
    /// [default: 1].
    #[arg(long)]
    pub seed: Option<u64>,
    /// multi-rail: how a host picks the rail of a message: in turn (`round-robin`),
    /// `by-destination` (rail dst mod N), `size-threshold` (below --rail-threshold on
    /// rail 0, the others over the other rails), or `striped` over every rail
    /// [default: round-robin].
    #[arg(long, value_enum)]
    pub rail_policy: Option<RailPolicyName>,
    /// multi-rail size-threshold: the smallest message that leaves rail 0 [bytes].
    #[arg(long, value_name = "BYTES")]
    pub rail_threshold: Option<u32>,
    /// ideal: bandwidth of every transfer [MBps as in Dimemas configurations, 2^20
    /// bytes/s]; use the configuration's inter-node bandwidth.
    #[arg(long, value_name = "MBPS")]
    pub bandwidth: Option<f64>,
    /// ideal: latency added to every transfer [ns; default: 0]; use the
    /// configuration's inter-node latency (and set it to 0 in the replayer).
    #[arg(long, value_name = "NS")]
    pub latency: Option<f64>,
}

/// The flag that sets each field of a network description.
pub const FIELD_FLAGS: &[(&str, &str)] = &[
    ("hosts", "--hosts"),
    ("nodes_per_host", "--nodes-per-host"),
    ("mapping", "--mapping"),
    ("routing", "--routing"),
    ("routes", "--routes"),
    ("route_policy", "--route-policy"),
    ("map", "--map"),
    ("pattern", "--pattern"),
    ("link_bandwidth_mbs", "--link-bandwidth"),
    ("link_latency_ns", "--link-latency"),
    ("routing_latency_ns", "--routing-latency"),
    ("packet_payload_bytes", "--packet-payload"),
    ("packet_header_bytes", "--packet-header"),
    ("interleave", "--interleave"),
    ("switch", "--switch"),
    ("speedup", "--speedup"),
    ("virtual_output_queues", "--voq"),
    ("flit_bytes", "--flit-bytes"),
    ("buffer_bytes", "--buffer-bytes"),
    ("arbitration", "--arbitration"),
    ("initial_pointer", "--initial-pointer"),
    ("seed", "--seed"),
    ("rail_policy", "--rail-policy"),
    ("rail_threshold_bytes", "--rail-threshold"),
    ("bandwidth_mbps", "--bandwidth"),
    ("latency_ns", "--latency"),
];

impl NetworkArgs {
    /// The fields the flags give, and each one's flag as typed (for messages).
    pub fn overrides(&self) -> (NetworkSpec, Vec<(&'static str, String)>) {
        let mut flags = Vec::new();
        let mut note = |field: &'static str, value: Option<String>| {
            if let (Some(value), Some((_, flag))) = (value, FIELD_FLAGS.iter().find(|(f, _)| *f == field)) {
                flags.push((field, format!("{flag} {value}").trim_end().to_string()));
            }
        };
        let text = |v: &Option<f64>| v.map(number_text);
        note("hosts", self.hosts.map(|v| v.to_string()));
        note("nodes_per_host", self.nodes_per_host.map(|v| v.to_string()));
        note("mapping", self.mapping.as_ref().map(|p| p.display().to_string()));
        note("routing", self.routing.as_ref().map(value_name));
        let routes: Vec<String> = self.routes.iter().map(|p| p.display().to_string()).collect();
        note("routes", (!routes.is_empty()).then(|| routes.join(", ")));
        note("route_policy", self.route_policy.as_ref().map(value_name));
        note("pattern", self.pattern.as_ref().map(|p| p.display().to_string()));
        note("link_bandwidth_mbs", text(&self.link_bandwidth));
        note("link_latency_ns", text(&self.link_latency));
        note("routing_latency_ns", text(&self.routing_latency));
        note("packet_payload_bytes", self.packet_payload.map(|v| v.to_string()));
        note("packet_header_bytes", self.packet_header.map(|v| v.to_string()));
        note("interleave", self.interleave.as_ref().map(value_name));
        note("switch", self.switch.as_ref().map(value_name));
        note("speedup", self.speedup.map(|v| v.to_string()));
        note("virtual_output_queues", self.voq.then(String::new));
        note("flit_bytes", self.flit_bytes.map(|v| v.to_string()));
        note("buffer_bytes", self.buffer_bytes.map(|v| v.to_string()));
        note("arbitration", self.arbitration.as_ref().map(value_name));
        note("initial_pointer", self.initial_pointer.clone());
        note("seed", self.seed.map(|v| v.to_string()));
        note("rail_policy", self.rail_policy.as_ref().map(value_name));
        note("rail_threshold_bytes", self.rail_threshold.map(|v| v.to_string()));
        note("bandwidth_mbps", text(&self.bandwidth));
        note("latency_ns", text(&self.latency));
        let spec = NetworkSpec {
            hosts: self.hosts,
            nodes_per_host: self.nodes_per_host,
            mapping: self.mapping.clone(),
            routing: self.routing,
            routes: (!self.routes.is_empty()).then(|| self.routes.clone()),
            route_policy: self.route_policy,
            pattern: self.pattern.clone(),
            link_bandwidth_mbs: self.link_bandwidth,
            link_latency_ns: self.link_latency,
            routing_latency_ns: self.routing_latency,
            packet_payload_bytes: self.packet_payload,
            packet_header_bytes: self.packet_header,
            interleave: self.interleave,
            switch: self.switch,
            speedup: self.speedup,
            virtual_output_queues: self.voq.then_some(true),
            flit_bytes: self.flit_bytes,
            buffer_bytes: self.buffer_bytes,
            arbitration: self.arbitration,
            initial_pointer: self.initial_pointer.as_ref().map(|p| match p.parse() {
                Ok(port) => PointerSpec::Port(port),
                Err(_) => PointerSpec::Name(p.clone()),
            }),
            seed: self.seed,
            bandwidth_mbps: self.bandwidth,
            latency_ns: self.latency,
            rail_policy: self.rail_policy,
            rail_threshold_bytes: self.rail_threshold,
            ..NetworkSpec::default()
        };
        (spec, flags)
    }

    /// The description: the base (the preset, the file, `crossbar`, `ideal`, or
    /// `default_preset` when none is named) with the flags' fields over it; and where
    /// the base came from, for messages.
    pub fn spec(&self, default_preset: Option<&str>) -> anyhow::Result<(NetworkSpec, String)> {
        let (mut spec, origin) = match (self.preset.as_deref(), self.network.as_deref(), default_preset) {
            _ if self.map.is_some() => {
                let map = self.map.clone().unwrap_or_default();
                let origin = format!("--map {}", map.display());
                (
                    NetworkSpec {
                        map: Some(map),
                        ..NetworkSpec::of_kind(KindName::Map)
                    },
                    origin,
                )
            }
            (Some(name), _, _) | (None, None, Some(name)) => (
                preset::spec(name).map_err(anyhow::Error::msg)?,
                format!("preset {name}"),
            ),
            (None, None | Some("crossbar"), None) => {
                (NetworkSpec::of_kind(KindName::Crossbar), "--network crossbar".into())
            }
            (None, Some("crossbar"), Some(_)) => {
                (NetworkSpec::of_kind(KindName::Crossbar), "--network crossbar".into())
            }
            (None, Some("ideal"), _) => (NetworkSpec::of_kind(KindName::Ideal), "--network ideal".into()),
            (None, Some(file), _) => (network_file::read_spec(std::path::Path::new(file))?, file.to_string()),
        };
        spec.overlay(self.overrides().0);
        Ok((spec, origin))
    }

    /// A network the model refused to build (an error of the server's), said in the
    /// words of the flag that gave the field it names, or else of where the network came
    /// from; any other error as it is.
    pub fn name_build_error(&self, e: anyhow::Error, origin: &str) -> anyhow::Error {
        let Some(crate::ServerError::Network(build)) = e.downcast_ref() else {
            return e;
        };
        let text = build.to_string();
        match flag_of_field_named(&text, &self.overrides().1) {
            Some(flag) => anyhow::anyhow!("{flag}: {text}"),
            None => anyhow::anyhow!("{origin}: {text}"),
        }
    }

    /// Whether the flags name no network (`spec` then takes its default).
    pub fn names_no_base(&self) -> bool {
        self.preset.is_none() && self.network.is_none() && self.map.is_none()
    }

    /// Resolves `spec`, naming the flag of a field the flags gave, or the source of a
    /// field `elsewhere` gave (a Dimemas configuration's field, say).
    pub fn resolve(
        &self,
        spec: &NetworkSpec,
        origin: &str,
        elsewhere: &[(&'static str, String)],
    ) -> anyhow::Result<NetworkConfig> {
        spec.resolve().map_err(|e| {
            let mut flags = self.overrides().1;
            flags.extend_from_slice(elsewhere);
            match &e {
                SpecError::Field { field, rule } => match flags
                    .iter()
                    .find(|(f, _)| f == field || field.ends_with(&format!(".{f}")))
                {
                    // A default base the user did not name: say which it is.
                    Some((_, flag)) if self.names_no_base() && origin.starts_with("preset ") => anyhow::anyhow!(
                        "{flag}: {rule} (the network is {origin}, the default here; name another with --network \
                         or --preset)"
                    ),
                    Some((_, flag)) => anyhow::anyhow!("{flag}: {}", said_once(flag, rule)),
                    // A built-in base has no file to name: name the flag to give.
                    None if self.preset.is_none() && matches!(self.network.as_deref(), Some("ideal" | "crossbar")) => {
                        let flag = FIELD_FLAGS
                            .iter()
                            .find(|(f, _)| f == field)
                            .map_or(field.as_str(), |(_, flag)| flag);
                        anyhow::anyhow!("{origin}: {flag}: {rule}")
                    }
                    // `--map FILE` names the file already.
                    None if field.ends_with("map") && origin.starts_with("--map ") => {
                        anyhow::anyhow!("{origin}: {}", said_once(origin, rule))
                    }
                    None => anyhow::anyhow!("{origin}: {e}"),
                },
                SpecError::Mapping(_) => anyhow::anyhow!("{e}"),
            }
        })
    }
}

/// Of `flags` ((field, flag as given) pairs), the flag whose field the model's error
/// `text` names (`buffer_bytes: ...`).
/// `rule` without the value that `flag` (`--routes FILE`) already says at its start.
pub fn said_once<'a>(flag: &str, rule: &'a str) -> &'a str {
    flag.split_once(' ')
        .and_then(|(_, value)| rule.strip_prefix(value)?.strip_prefix(": "))
        .unwrap_or(rule)
}

pub fn flag_of_field_named<'a>(text: &str, flags: &'a [(&str, String)]) -> Option<&'a str> {
    flags
        .iter()
        .find(|(field, _)| text.contains(&format!("{field}: ")))
        .map(|(_, flag)| flag.as_str())
}

/// The network the flags describe (`default_preset` when they name no base).
pub fn network(args: &NetworkArgs, default_preset: Option<&str>) -> anyhow::Result<NetworkConfig> {
    let (spec, origin) = args.spec(default_preset)?;
    args.resolve(&spec, &origin, &[])
}
