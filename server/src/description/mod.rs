//! Network descriptions. Every field is declared once, in [`fields`]: its key in a
//! file, its flag, and which networks take it. A TOML network file (`vesper serve
//! --network FILE`), a built-in preset (`--preset NAME`, see [`preset`]) and the
//! command line's flags each give a [`NetworkSpec`], one layered over the other field by
//! field; [`NetworkSpec::check`] makes it a typed [`Description`] (a kind and a switch
//! kind, each with only its own fields: `checked`, each shape's in a file of
//! [`shapes`], each switch kind's in a file of [`switches`]), and [`Description::resolve`]
//! checks values and gives the [`NetworkConfig`] the model is built from (`resolve`).
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
//! granularity = "coarse"        # wormhole: or "fine", flit by flit (a split network needs it)
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

mod checked;
mod error;
pub mod fields;
mod names;
pub mod preset;
mod resolve;
pub mod shapes;
pub mod switches;

use std::path::Path;

use vesper_input::MIB;
use vesper_netmodels::HostId;

pub use checked::{Description, FabricSpec, SwitchedSpec};
pub use error::{At, NetworkFileError, SpecError, Table};
pub use fields::{Claim, Field, NetworkFlags, NetworkSpec};
pub use names::{
    ArbitrationName, GranularityName, InterleaveName, KindName, LevelSpec, ModelSpec, PointerSpec, RailPolicyName,
    RoutePolicyName, RoutingName, SwitchName, value_name,
};
pub use shapes::ShapeSpec;
pub use switches::SwitchSpec;

use crate::config::{FabricConfig, NetworkConfig, Shape};
use error::field;

/// A network file: its `[network]` table.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    network: NetworkSpec,
}

/// The largest network file read \[bytes\]: a description takes a few hundred bytes, and
/// its longest lists (`m`, `dims`, `rails`) a few more.
pub const MAX_NETWORK_FILE_BYTES: u64 = MIB;

/// The largest task mapping file read \[bytes\]: a line of about ten bytes per client
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

/// The host names of a network read from a map (`None`: vesper's own, `host<i>`).
fn map_host_names(fabric: &FabricConfig) -> Option<&[String]> {
    let shape = match fabric {
        FabricConfig::Switched(s) => &s.shape,
        FabricConfig::MultiRail { rails, .. } => &rails.first()?.shape,
        FabricConfig::Ideal(_) => return None,
    };
    match shape {
        Shape::Map(map) => Some(&map.net.host_names),
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
        vesper_input::read_text(path, MAX_MAPPING_BYTES).map_err(|e| field(Field::Mapping, format!("{file}: {e}")))?;
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
        .map_err(|e| field(Field::Pattern, format!("{file}: {e}")))?;
    vesper_map2topo::generate::read_phases(&file, &text, |w| w.parse().ok(), "two node numbers")
        .map_err(|e| SpecError::Mapping(e.to_string()))
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
mod tests;
