//! The network configuration file (TOML), selected with `vesper serve --network FILE`.
//!
//! ```toml
//! # a crossbar (the default network)
//! [network]
//! kind = "crossbar"
//! hosts = 256
//! nodes_per_host = 1            # client nodes (processors) per host, filled in order
//! link_bandwidth_mbs = 250      # per direction, 10^6 bytes/s
//! link_latency_ns = 25          # cable propagation
//! routing_latency_ns = 100      # switch routing decision
//! packet_payload_bytes = 4096   # adapters cut messages into packets of this payload
//! packet_header_bytes = 16      # … plus this header
//! interleave = "round-robin"    # or "fifo": how an adapter serves concurrent messages
//! switch = "output-queued"      # or "cioq", or "wormhole" (Myrinet-like, stop/go)
//! speedup = 1                   # cioq: crossbar speed over a link's
//! virtual_output_queues = false # cioq: one queue per output at every input
//! flit_bytes = 8                # wormhole: flow-control unit
//! buffer_bytes = 512            # wormhole: input (slack) buffer per port
//! arbitration = "round-robin"   # wormhole: or "oldest-first"
//! initial_pointer = "random"    # wormhole round-robin: "random" (seeded) or a port number
//! seed = 1                      # wormhole: seed of the random initial pointers
//!
//! # or the ideal network, for calibration against the replayer
//! [network]
//! kind = "ideal"
//! hosts = 256
//! bandwidth_mbps = 250          # Dimemas MBps: 2^20 bytes/s
//! latency_ns = 0
//! ```
//!
//! Every field but `kind` (and `bandwidth_mbps` for the ideal network) has the
//! default shown. Unknown fields are errors, so a typo cannot silently fall back to a
//! default. The topologies issue extends this file with topologies, switch kinds and
//! routing.

use std::path::Path;

use serde::Deserialize;
use vesper_netmodels::{
    AdapterParams, Arbitration, CioqParams, IdealParams, InitialPointer, Interleave, LinkParams, SwitchKind,
    SwitchParams, WormholeParams,
};

use crate::config::{DIMEMAS_MB, FabricConfig, MB, NetworkConfig, bandwidth, time_from_ns};

/// Why a network file was refused.
#[derive(Debug, thiserror::Error)]
pub enum NetworkFileError {
    /// the file could not be read
    #[error("{file}: {source}")]
    Read {
        /// the file
        file: String,
        /// why
        source: std::io::Error,
    },
    /// the file is not valid TOML or breaks the schema
    #[error("{file}: {message}")]
    Syntax {
        /// the file
        file: String,
        /// the parser's message (it names the line and the field)
        message: String,
    },
    /// a value is out of range
    #[error("{file}: network.{field}: {rule}")]
    Value {
        /// the file
        file: String,
        /// the field
        field: &'static str,
        /// the rule broken
        rule: &'static str,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    network: Network,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Network {
    Crossbar(Crossbar),
    Ideal(Ideal),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Crossbar {
    hosts: Option<u32>,
    nodes_per_host: Option<u32>,
    link_bandwidth_mbs: Option<f64>,
    link_latency_ns: Option<f64>,
    routing_latency_ns: Option<f64>,
    packet_payload_bytes: Option<u32>,
    packet_header_bytes: Option<u32>,
    interleave: Option<InterleaveName>,
    switch: Option<SwitchName>,
    flit_bytes: Option<u32>,
    buffer_bytes: Option<u32>,
    arbitration: Option<ArbitrationName>,
    initial_pointer: Option<toml::Value>,
    seed: Option<u64>,
    speedup: Option<u32>,
    virtual_output_queues: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum SwitchName {
    OutputQueued,
    Cioq,
    Wormhole,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum ArbitrationName {
    RoundRobin,
    OldestFirst,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum InterleaveName {
    RoundRobin,
    Fifo,
}

impl From<InterleaveName> for Interleave {
    fn from(name: InterleaveName) -> Interleave {
        match name {
            InterleaveName::RoundRobin => Interleave::RoundRobin,
            InterleaveName::Fifo => Interleave::Fifo,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Ideal {
    hosts: Option<u32>,
    nodes_per_host: Option<u32>,
    bandwidth_mbps: f64,
    latency_ns: Option<f64>,
}

/// Reads a network file.
pub fn read(path: &Path) -> Result<NetworkConfig, NetworkFileError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| NetworkFileError::Read {
        file: file.clone(),
        source,
    })?;
    parse(&file, &text)
}

/// Parses the text of a network file named `file` (for messages).
pub fn parse(file: &str, text: &str) -> Result<NetworkConfig, NetworkFileError> {
    let parsed: File = toml::from_str(text).map_err(|e| NetworkFileError::Syntax {
        file: file.to_string(),
        message: e.to_string().trim_end().to_string(),
    })?;
    let value = |field, rule| NetworkFileError::Value {
        file: file.to_string(),
        field,
        rule,
    };
    let defaults = NetworkConfig::default();
    let ns = |v: Option<f64>, default, field| match v {
        None => Ok(default),
        Some(v) => time_from_ns(v).ok_or_else(|| value(field, "expected a non-negative time in ns")),
    };
    let (hosts, nodes_per_host, fabric) = match parsed.network {
        Network::Crossbar(c) => {
            let link_default = LinkParams::default();
            let bandwidth = match c.link_bandwidth_mbs {
                None => link_default.bandwidth,
                Some(v) => bandwidth(v, MB).ok_or_else(|| value("link_bandwidth_mbs", "expected a positive rate"))?,
            };
            let link = LinkParams {
                bandwidth,
                propagation: ns(c.link_latency_ns, link_default.propagation, "link_latency_ns")?,
            };
            let wormhole_fields = [
                ("flit_bytes", c.flit_bytes.is_some()),
                ("buffer_bytes", c.buffer_bytes.is_some()),
                ("arbitration", c.arbitration.is_some()),
                ("initial_pointer", c.initial_pointer.is_some()),
                ("seed", c.seed.is_some()),
            ];
            let cioq_fields = [
                ("speedup", c.speedup.is_some()),
                ("virtual_output_queues", c.virtual_output_queues.is_some()),
            ];
            let switch_name = c.switch.unwrap_or(SwitchName::OutputQueued);
            if switch_name != SwitchName::Wormhole
                && let Some((field, _)) = wormhole_fields.iter().find(|(_, set)| *set)
            {
                return Err(value(field, "applies to switch = \"wormhole\" only"));
            }
            if switch_name != SwitchName::Cioq
                && let Some((field, _)) = cioq_fields.iter().find(|(_, set)| *set)
            {
                return Err(value(field, "applies to switch = \"cioq\" only"));
            }
            let kind = match switch_name {
                SwitchName::OutputQueued => SwitchKind::OutputQueued,
                SwitchName::Cioq => {
                    let speedup = c.speedup.unwrap_or(1);
                    if speedup == 0 {
                        return Err(value("speedup", "at least 1"));
                    }
                    SwitchKind::Cioq(CioqParams {
                        speedup,
                        virtual_output_queues: c.virtual_output_queues.unwrap_or(false),
                    })
                }
                SwitchName::Wormhole => {
                    let default = WormholeParams::default();
                    let seed = c.seed.unwrap_or(1);
                    let initial = match &c.initial_pointer {
                        None => InitialPointer::Random { seed },
                        Some(toml::Value::String(s)) if s == "random" => InitialPointer::Random { seed },
                        Some(toml::Value::Integer(n)) => InitialPointer::Fixed(
                            u32::try_from(*n)
                                .map_err(|_| value("initial_pointer", "expected \"random\" or a port number"))?,
                        ),
                        Some(_) => return Err(value("initial_pointer", "expected \"random\" or a port number")),
                    };
                    let arbitration = match c.arbitration.unwrap_or(ArbitrationName::RoundRobin) {
                        ArbitrationName::RoundRobin => Arbitration::RoundRobin { initial },
                        ArbitrationName::OldestFirst => Arbitration::OldestFirst,
                    };
                    SwitchKind::Wormhole(WormholeParams {
                        flit_bytes: c.flit_bytes.unwrap_or(default.flit_bytes),
                        buffer_bytes: c.buffer_bytes.unwrap_or(default.buffer_bytes),
                        arbitration,
                        ..WormholeParams::default()
                    })
                }
            };
            let switch = SwitchParams {
                routing_latency: ns(
                    c.routing_latency_ns,
                    SwitchParams::default().routing_latency,
                    "routing_latency_ns",
                )?,
                kind,
            };
            let adapter_default = AdapterParams::default();
            let adapter = AdapterParams {
                payload_bytes: c.packet_payload_bytes.unwrap_or(adapter_default.payload_bytes),
                header_bytes: c.packet_header_bytes.unwrap_or(adapter_default.header_bytes),
                interleave: c.interleave.map_or(adapter_default.interleave, Interleave::from),
            };
            if adapter.payload_bytes == 0 {
                return Err(value("packet_payload_bytes", "a packet must carry at least one byte"));
            }
            (
                c.hosts,
                c.nodes_per_host,
                FabricConfig::Crossbar { link, switch, adapter },
            )
        }
        Network::Ideal(i) => {
            let params = IdealParams {
                bandwidth: bandwidth(i.bandwidth_mbps, DIMEMAS_MB)
                    .ok_or_else(|| value("bandwidth_mbps", "expected a positive rate in MBps (2^20 bytes/s)"))?,
                latency: ns(i.latency_ns, vesper_netmodels::SimTime::ZERO, "latency_ns")?,
            };
            (i.hosts, i.nodes_per_host, FabricConfig::Ideal(params))
        }
    };
    let hosts = hosts.unwrap_or(defaults.hosts);
    if hosts == 0 {
        return Err(value("hosts", "a network needs at least one host"));
    }
    let nodes_per_host = nodes_per_host.unwrap_or(1);
    if nodes_per_host == 0 {
        return Err(value("nodes_per_host", "a host runs at least one node"));
    }
    Ok(NetworkConfig {
        hosts,
        nodes_per_host,
        fabric,
    })
}

#[cfg(test)]
mod tests {
    use vesper_netmodels::SimTime;

    use super::*;

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
        let FabricConfig::Crossbar { adapter, .. } = config.fabric else {
            panic!("not a crossbar: {config:?}");
        };
        assert_eq!(
            (adapter.payload_bytes, adapter.header_bytes, adapter.interleave),
            (2048, 8, Interleave::Fifo)
        );
    }

    #[test]
    fn reads_a_wormhole_switch() {
        let text = "[network]\nkind = \"crossbar\"\nswitch = \"wormhole\"\nbuffer_bytes = 1024\ninitial_pointer = 3\n";
        let config = parse("n.toml", text).expect("valid");
        let FabricConfig::Crossbar { switch, .. } = config.fabric else {
            panic!("not a crossbar: {config:?}");
        };
        let SwitchKind::Wormhole(params) = switch.kind else {
            panic!("not wormhole: {switch:?}");
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
        let kind = err("[network]\nkind = \"torus\"\n");
        assert!(kind.contains("torus"), "{kind}");
        let missing = err("[network]\nkind = \"ideal\"\n");
        assert!(missing.contains("bandwidth_mbps"), "{missing}");
        assert_eq!(
            err("[network]\nkind = \"ideal\"\nbandwidth_mbps = 0\n"),
            "n.toml: network.bandwidth_mbps: expected a positive rate in MBps (2^20 bytes/s)"
        );
        assert_eq!(
            err("[network]\nkind = \"crossbar\"\nlink_latency_ns = -1\n"),
            "n.toml: network.link_latency_ns: expected a non-negative time in ns"
        );
        assert_eq!(
            err("[network]\nkind = \"crossbar\"\nhosts = 0\n"),
            "n.toml: network.hosts: a network needs at least one host"
        );
    }
}
