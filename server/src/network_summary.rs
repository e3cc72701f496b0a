//! `vesper topo`: what a network is made of (hosts, switches, cables, diameter,
//! bisection) and a Graphviz picture of it.

use std::fmt::Write as _;

use vesper_netmodels::{Device, Topology};

use vesper_netmodels::topology::Shape as _;

use crate::config::{FabricConfig, NetworkConfig, SwitchedConfig};

/// The figures `vesper topo` prints.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// what the network is
    pub name: String,
    /// hosts
    pub hosts: u32,
    /// switches
    pub switches: u32,
    /// cables between a host and a switch
    pub host_cables: u64,
    /// cables between two switches
    pub switch_cables: u64,
    /// the cables between switches by kind, for shapes whose cables differ (a
    /// dragonfly's local and global)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub switch_cable_kinds: Vec<CableKind>,
    /// the most ports a switch has
    pub max_switch_ports: u32,
    /// links on the longest minimal path between two hosts
    pub diameter_links: Option<u32>,
    /// cables cut by the narrowest cut that splits the hosts in halves (`None`: not
    /// known in closed form for this shape)
    pub bisection_cables: Option<u64>,
    /// how packets find their way
    pub routing: String,
    /// the memory its model takes to build and simulate, estimated from its
    /// description (see `vesper_netmodels::footprint`) \[bytes\]
    pub memory_bytes: u64,
}

/// Cables of one kind between switches.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CableKind {
    /// what they join: `local`, `global`
    pub kind: String,
    /// how many
    pub cables: u64,
}

/// The summary of each rail of a network (one for a single network); none for the
/// ideal network.
pub fn summarize(config: &NetworkConfig) -> Vec<Summary> {
    match &config.fabric {
        FabricConfig::Switched(s) => vec![summarize_switched(s)],
        FabricConfig::MultiRail { rails, .. } => rails.iter().map(summarize_switched).collect(),
        FabricConfig::Ideal(_) => Vec::new(),
    }
}

/// The summary of one switched network.
pub fn summarize_switched(switched: &SwitchedConfig) -> Summary {
    let topology = switched.topology();
    let is_host = |d: Device| matches!(d, Device::Host(_));
    let host_cables = topology
        .cables
        .iter()
        .filter(|c| is_host(c.a.device) || is_host(c.b.device))
        .count() as u64;
    Summary {
        name: switched.shape.name(),
        hosts: topology.hosts,
        switches: topology.switch_ports.len() as u32,
        host_cables,
        switch_cables: topology.cables.len() as u64 - host_cables,
        switch_cable_kinds: (switched.shape.cable_kinds().into_iter())
            .map(|(kind, cables)| CableKind {
                kind: kind.to_string(),
                cables,
            })
            .collect(),
        max_switch_ports: topology.switch_ports.iter().copied().max().unwrap_or(0),
        diameter_links: switched.shape.diameter_links(),
        bisection_cables: switched.shape.bisection_cables(),
        routing: switched.routing.name().to_string(),
        memory_bytes: vesper_netmodels::footprint::Footprint::of_rails(&[crate::memory::rail_counts(switched)], 1).peak,
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let known = |v: Option<u64>| v.map_or_else(|| "not known in closed form".to_string(), |v| v.to_string());
        writeln!(f, "network: {}", self.name)?;
        writeln!(f, "hosts: {}", self.hosts)?;
        writeln!(f, "switches: {} (up to {} ports)", self.switches, self.max_switch_ports)?;
        let kinds: Vec<String> = (self.switch_cable_kinds.iter())
            .map(|k| format!("{} {}", k.cables, k.kind))
            .collect();
        let kinds = match kinds.is_empty() {
            true => String::new(),
            false => format!(": {}", kinds.join(", ")),
        };
        writeln!(
            f,
            "cables: {} ({} host, {} between switches{kinds})",
            self.host_cables + self.switch_cables,
            self.host_cables,
            self.switch_cables
        )?;
        writeln!(
            f,
            "diameter: {} links host to host",
            known(self.diameter_links.map(u64::from))
        )?;
        writeln!(f, "bisection: {} cables", known(self.bisection_cables))?;
        writeln!(f, "routing: {}", self.routing)?;
        write!(
            f,
            "memory: about {} to build and simulate (estimated)",
            crate::memory::size_text(self.memory_bytes)
        )
    }
}

/// The Graphviz picture of `switched`'s topology: hosts as ellipses, switches as boxes,
/// one edge per cable labelled with its port numbers.
pub fn dot(switched: &SwitchedConfig, hosts: u32) -> String {
    dot_rails(std::slice::from_ref(switched), hosts)
}

/// The picture of a multi-rail network: the hosts once, each rail's switches named
/// `r<rail>.sw<n>`; a host's cable to rail `r` leaves its port `r` (its adapter `r`).
pub fn dot_rails(rails: &[SwitchedConfig], hosts: u32) -> String {
    let mut out = String::from("graph network {\n  node [shape=box];\n");
    let topologies: Vec<Topology> = rails.iter().map(SwitchedConfig::topology).collect();
    let name = |rail: usize, device: Device| match (rails.len(), device) {
        (1, _) | (_, Device::Host(_)) => format!("\"{device}\""),
        _ => format!("\"r{rail}.{device}\""),
    };
    for (rail, topology) in topologies.iter().enumerate() {
        for s in 0..topology.switch_ports.len() as u32 {
            let _ = writeln!(out, "  {};", name(rail, Device::Switch(vesper_netmodels::SwitchId(s))));
        }
    }
    out.push_str("  node [shape=ellipse];\n");
    for h in 0..hosts {
        let _ = writeln!(out, "  \"host{h}\";");
    }
    for (rail, topology) in topologies.iter().enumerate() {
        for cable in &topology.cables {
            let port = |end: vesper_netmodels::Endpoint| match end.device {
                Device::Host(_) => rail as u32,
                Device::Switch(_) => end.port,
            };
            let _ = writeln!(
                out,
                "  {} -- {} [taillabel=\"{}\", headlabel=\"{}\"];",
                name(rail, cable.a.device),
                name(rail, cable.b.device),
                port(cable.a),
                port(cable.b)
            );
        }
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::description::parse;

    fn summary(text: &str) -> Summary {
        summarize(&parse("t.toml", text).expect("valid")).remove(0)
    }

    #[test]
    fn fat_trees_and_crossbars_are_counted() {
        let tree = summary("[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\n");
        assert_eq!(
            (tree.hosts, tree.switches, tree.host_cables, tree.switch_cables),
            (64, 48, 64, 128)
        );
        assert_eq!((tree.diameter_links, tree.bisection_cables), (Some(6), Some(32)));
        let thin = summary("[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\nk_up = 2\n");
        assert_eq!((thin.switches, thin.host_cables + thin.switch_cables), (28, 112));
        assert_eq!(thin.bisection_cables, Some(8));
        let two_level = summary("[network]\nkind = \"xgft\"\nm = [16, 16]\nw = [1, 16]\n");
        assert_eq!(
            (
                two_level.switches,
                two_level.max_switch_ports,
                two_level.bisection_cables
            ),
            (32, 32, Some(128))
        );
        let crossbar = summary("[network]\nhosts = 8\n");
        assert_eq!(
            (crossbar.switches, crossbar.diameter_links, crossbar.bisection_cables),
            (1, Some(2), Some(4))
        );
        assert!(
            crossbar.to_string().contains("cables: 8 (8 host, 0 between switches)"),
            "{crossbar}"
        );
    }

    #[test]
    fn the_picture_has_every_cable() {
        let config = parse("t.toml", "[network]\nkind = \"kary-ntree\"\nk = 2\nn = 2\n").expect("valid");
        let FabricConfig::Switched(s) = &config.fabric else {
            panic!("switched");
        };
        let picture = dot(s, config.hosts);
        assert_eq!(picture.matches(" -- ").count(), 8);
        assert!(
            picture.contains("\"host0\" -- \"sw0\" [taillabel=\"0\", headlabel=\"0\"];"),
            "{picture}"
        );
        assert!(picture.starts_with("graph network {") && picture.ends_with("}\n"));
        // Two rails: the hosts once, each rail's switches apart, adapter r on port r.
        let rails = dot_rails(&[s.clone(), s.clone()], config.hosts);
        assert_eq!(rails.matches(" -- ").count(), 16);
        assert_eq!(rails.matches("  \"host0\";").count(), 1);
        assert!(
            rails.contains("\"host0\" -- \"r1.sw0\" [taillabel=\"1\", headlabel=\"0\"];"),
            "{rails}"
        );
    }
}
