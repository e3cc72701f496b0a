//! The network on the command line: a base (a built-in name, a preset, a file or a map)
//! and the flags that override its fields, as `vesper serve`, `run`, `topo` and `traffic`
//! take them, and errors said in the words of the flag or file that set a field.

use std::path::PathBuf;

use vesper_netmodels::{BuildError, Parameter};

use crate::config::NetworkConfig;
use crate::description::preset;
use crate::description::{self, Claim, Field, KindName, NetworkFlags, NetworkSpec, SwitchName};

/// The network, as `vesper serve`, `vesper run` and `vesper topo` take it: a base (a
/// built-in name, a preset or a file) and flags that override its fields.
#[derive(Debug, Clone, clap::Args)]
pub struct NetworkArgs {
    /// The network: `crossbar` (one output-queued switch, 2 Gb/s links), `ideal` (no
    /// contention: latency + size / bandwidth, to calibrate against the replayer), or a
    /// TOML network file (see docs/network-files.md: topology, switches, routing,
    /// mapping). The flags below override its fields.
    #[arg(long, value_name = "crossbar|ideal|FILE")]
    pub network: Option<String>,
    /// A built-in network instead: fat-tree, fat-tree-512, two-rail-fat-tree,
    /// kary-ntree, torus-3d, hypercube, dragonfly, dragonfly-large, crossbar (`vesper
    /// topo --presets` lists them).
    #[arg(long, value_name = "NAME", conflicts_with = "network")]
    pub preset: Option<String>,
    /// A Myrinet map file instead (hosts with several ports make a multi-rail network);
    /// routes by shortest paths unless --routes or --routing up-down.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["network", "preset"])]
    pub map: Option<PathBuf>,
    /// The fields the flags set.
    #[command(flatten)]
    pub fields: NetworkFlags,
    /// The most memory the network's model may take [bytes, or with a unit: 8G, 512M,
    /// 1.5G; 1K = 1024]: a network whose estimate (counted from its description, before
    /// anything is built) is larger is refused, naming both figures [default: the least
    /// of MemAvailable, the room left in the process's memory cgroup, and the address
    /// space RLIMIT_AS leaves].
    #[arg(long, value_name = "SIZE", value_parser = crate::memory::parse_size)]
    pub max_memory: Option<u64>,
    /// Flags a command renames (`vesper traffic`'s `--routing-pattern`), for messages.
    #[arg(skip)]
    pub renamed: Vec<(Field, &'static str)>,
}

/// `--partitions`, as `vesper serve`, `run` and `traffic` take it.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct PartitionsArg {
    /// Split the network into N partitions simulated side by side on N threads
    /// (output-queued, CIOQ and wormhole switches; cables between partitions need a
    /// delay); the results (and a network trace) do not depend on N [default: 1].
    #[arg(long = "partitions", id = "partitions", value_name = "N")]
    pub given: Option<u32>,
}

impl PartitionsArg {
    /// The number of partitions: 1 (the network whole) unless given.
    pub fn count(self) -> u32 {
        self.given.unwrap_or(1)
    }

    /// The number given, unless 1, which asks for nothing (the network whole).
    pub fn beyond_one(self) -> Option<u32> {
        self.given.filter(|&p| p != 1)
    }
}

/// The field of a description that sets a model's `parameter`.
pub fn field_of(parameter: Parameter) -> Option<Field> {
    Some(match parameter {
        Parameter::PayloadBytes => Field::PacketPayloadBytes,
        Parameter::RoutingLatency => Field::RoutingLatencyNs,
        Parameter::SwitchKind => Field::Switch,
        Parameter::LinkLatency => Field::LinkLatencyNs,
        Parameter::LinkBandwidth => Field::LinkBandwidthMbs,
        Parameter::IdealLatency => Field::LatencyNs,
        Parameter::IdealBandwidth => Field::BandwidthMbps,
        Parameter::FlitBytes => Field::FlitBytes,
        Parameter::BufferBytes => Field::BufferBytes,
        Parameter::Bubble => Field::Bubble,
        Parameter::InitialPointer => Field::InitialPointer,
        Parameter::Rails => Field::Rails,
        _ => return None,
    })
}

/// Of `given` ((field, flag as typed) pairs), the flag that set the parameter the model's
/// error `e` is about.
pub fn flag_of<'a>(e: &BuildError, given: &'a [(Field, String)]) -> Option<&'a str> {
    let field = field_of(e.parameter()?)?;
    given.iter().find(|(f, _)| *f == field).map(|(_, flag)| flag.as_str())
}

impl NetworkArgs {
    /// The fields the flags give, and each one's flag as typed (for messages).
    pub fn overrides(&self) -> (NetworkSpec, Vec<(Field, String)>) {
        let (spec, mut given) = self.fields.layer();
        for (field, typed) in &mut given {
            if let (Some(&(_, name)), Some(flag)) = (self.renamed.iter().find(|(f, _)| f == field), field.flag()) {
                *typed = typed.replacen(flag, name, 1);
            }
        }
        (spec, given)
    }

    /// The description: the base (the preset, the file, `crossbar`, `ideal`, or
    /// `default_preset` when none is named) with the flags' fields over it; and where
    /// the base came from, for messages.
    pub fn spec(&self, default_preset: Option<&str>) -> anyhow::Result<(NetworkSpec, String)> {
        let (mut spec, origin) = match (self.preset.as_deref(), self.network.as_deref(), default_preset) {
            _ if self.map.is_some() => {
                let map = self.map.clone().unwrap_or_default();
                let origin = format!("--map {}", map.display());
                let spec = NetworkSpec {
                    kind: Some(KindName::Map),
                    map: Some(map),
                    ..NetworkSpec::default()
                };
                (spec, origin)
            }
            (Some(name), _, _) | (None, None, Some(name)) => (
                preset::spec(name).map_err(anyhow::Error::msg)?,
                format!("preset {name}"),
            ),
            (None, None | Some("crossbar"), _) => (of_kind(KindName::Crossbar), "--network crossbar".into()),
            (None, Some("ideal"), _) => (of_kind(KindName::Ideal), "--network ideal".into()),
            (None, Some(file), _) => (description::read_spec(std::path::Path::new(file))?, file.to_string()),
        };
        spec.overlay(self.overrides().0);
        Ok((spec, origin))
    }

    /// A network the model refused to build (an error of the server's), said in the
    /// words of the flag that gave the parameter it is about, or else of where the
    /// network came from; any other error as it is.
    pub fn name_build_error(&self, e: anyhow::Error, origin: &str) -> anyhow::Error {
        let Some(crate::error::ServerError::Network(build)) = e.downcast_ref() else {
            return e;
        };
        let text = build.to_string();
        match flag_of(build, &self.overrides().1) {
            Some(flag) => anyhow::anyhow!("{flag}: {text}"),
            None => anyhow::anyhow!("{origin}: {text}"),
        }
    }

    /// The most memory a network's model may take: `--max-memory`, or what the machine
    /// leaves this process (`None`: not known, not Linux).
    pub fn memory_limit(&self) -> Option<crate::memory::Limit> {
        match self.max_memory {
            Some(bytes) => Some(crate::memory::Limit {
                bytes,
                from: "--max-memory allows".into(),
            }),
            None => crate::memory::machine_room().map(|room| crate::memory::Limit {
                bytes: room.bytes,
                from: format!("this process may use ({}; set another with --max-memory)", room.from),
            }),
        }
    }

    /// Refuses `network` (from `origin`), split into `partitions` partitions, before
    /// anything of it is built, when its model would take more memory than
    /// [`Self::memory_limit`].
    pub fn check_memory(&self, network: &NetworkConfig, origin: &str, partitions: u32) -> anyhow::Result<()> {
        let Some(limit) = self.memory_limit() else {
            return Ok(());
        };
        crate::memory::check(network, partitions, 1, &limit).map_err(|e| anyhow::anyhow!("{origin}: {e}"))
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
        elsewhere: &[(Field, String)],
    ) -> anyhow::Result<NetworkConfig> {
        spec.resolve().map_err(|e| {
            let Some(at) = e.at() else {
                return anyhow::anyhow!("{e}");
            };
            let mut given = self.overrides().1;
            given.extend_from_slice(elsewhere);
            // The flags set the network's own fields, and every rail's.
            let by_flag = at
                .field
                .filter(|_| at.table.is_none())
                .and_then(|f| given.iter().find(|(g, _)| *g == f))
                .map(|(_, flag)| flag.as_str());
            let rule = e.rule();
            match by_flag {
                // A default base the user did not name: say which it is.
                Some(flag) if self.names_no_base() && origin.starts_with("preset ") => anyhow::anyhow!(
                    "{flag}: {rule} (the network is {origin}, the default here; name another with --network or \
                     --preset)"
                ),
                Some(flag) => anyhow::anyhow!("{flag}: {}", said_once(flag, &rule)),
                // A built-in base has no file to name: name the flag to give.
                None if self.preset.is_none() && matches!(self.network.as_deref(), Some("ideal" | "crossbar")) => {
                    let plain = at.rail.is_none() && at.table.is_none() && at.index.is_none();
                    let flag = at.field.filter(|_| plain).and_then(Field::flag);
                    match flag {
                        Some(flag) => anyhow::anyhow!("{origin}: {flag}: {rule}"),
                        None => anyhow::anyhow!("{origin}: {at}: {rule}"),
                    }
                }
                // `--map FILE` names the file already.
                None if at.field == Some(Field::Map) && self.map.is_some() => {
                    anyhow::anyhow!("{origin}: {}", said_once(origin, &rule))
                }
                None => anyhow::anyhow!("{origin}: {e}"),
            }
        })
    }
}

/// `spec` (a base with the flags' fields `flags` over it) with switches of kind
/// `switch`: the base's fields of the other switch kinds do not apply to this one and
/// are left out (the flags' still do, and are refused as usual).
pub fn with_switch(spec: &mut NetworkSpec, flags: &NetworkSpec, switch: SwitchName) {
    spec.switch = Some(switch);
    let others: Vec<Field> = Field::ALL
        .iter()
        .copied()
        .filter(|f| matches!(f.claim(), Claim::Switches(list) if !list.contains(&switch)))
        .collect();
    let mut flags = flags.clone();
    for &f in Field::ALL {
        if others.contains(&f) {
            spec.clear(f);
        } else {
            flags.clear(f);
        }
    }
    spec.overlay(flags);
}

/// A description of `kind` with every other field left to its default.
fn of_kind(kind: KindName) -> NetworkSpec {
    NetworkSpec {
        kind: Some(kind),
        ..NetworkSpec::default()
    }
}

/// `rule` without the value that `flag` (`--routes FILE`) already says at its start.
pub fn said_once<'a>(flag: &str, rule: &'a str) -> &'a str {
    flag.split_once(' ')
        .and_then(|(_, value)| rule.strip_prefix(value)?.strip_prefix(": "))
        .unwrap_or(rule)
}

/// The network the flags describe (`default_preset` when they name no base), refused if
/// it would not fit in memory whole (see [`NetworkArgs::check_memory`]).
pub fn network(args: &NetworkArgs, default_preset: Option<&str>) -> anyhow::Result<NetworkConfig> {
    let (spec, origin) = args.spec(default_preset)?;
    let network = args.resolve(&spec, &origin, &[])?;
    args.check_memory(&network, &origin, 1)?;
    Ok(network)
}
