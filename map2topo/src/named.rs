//! A topology whose devices have names: what map files and dumps are read into.

use vesper_netmodels::{Device, Topology};

/// A topology whose devices have names: hosts `0..hosts` and switches in the order
/// of `host_names` and `switch_names`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedTopology {
    /// the devices and cables
    pub topology: Topology,
    /// the name of each host, by host id
    pub host_names: Vec<String>,
    /// the name of each switch, by switch id
    pub switch_names: Vec<String>,
    /// the `type` attribute of each switch (the switch model to instantiate), if given
    pub switch_types: Vec<Option<String>>,
    /// the `type` attribute of each host (the adapter model to instantiate), if given
    pub host_types: Vec<Option<String>>,
}

impl NamedTopology {
    /// Names every device as vesper does elsewhere (`host5`, `sw12`), for built-in
    /// topologies.
    pub fn with_default_names(topology: Topology) -> NamedTopology {
        let switches = topology.switch_ports.len() as u32;
        NamedTopology {
            host_names: (0..topology.hosts)
                .map(|h| Device::Host(vesper_netmodels::HostId(h)).to_string())
                .collect(),
            switch_names: (0..switches)
                .map(|s| Device::Switch(vesper_netmodels::SwitchId(s)).to_string())
                .collect(),
            switch_types: vec![None; switches as usize],
            host_types: vec![None; topology.hosts as usize],
            topology,
        }
    }

    /// Names every device as [`NamedTopology::with_default_names`] does, with the
    /// switches of rail `rail` > 0 prefixed `rail<r>.` (`rail1.sw12`), so that the rails of
    /// a multi-rail network can share one map file.
    pub fn with_rail_names(topology: Topology, rail: usize) -> NamedTopology {
        let mut named = NamedTopology::with_default_names(topology);
        if rail > 0 {
            for name in &mut named.switch_names {
                *name = format!("rail{rail}.{name}");
            }
        }
        named
    }

    /// The name of `device`.
    pub fn name(&self, device: Device) -> &str {
        match device {
            Device::Host(h) => self.host_names.get(h.index()).map_or("?", String::as_str),
            Device::Switch(s) => self.switch_names.get(s.index()).map_or("?", String::as_str),
        }
    }
}
