//! Built-in networks, selected by name with `--preset NAME`: network files compiled
//! into the binary (`vesper topo --preset NAME --print` shows one as a file to edit).

use super::{NetworkFileError, NetworkSpec, parse_spec};

/// A built-in network.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// its name
    pub name: &'static str,
    /// one line on what it is
    pub summary: &'static str,
    /// its network file
    pub file: &'static str,
}

/// Every preset, the default of `vesper run` first.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "fat-tree",
        summary: "two-level fat tree of 32-port Myrinet-like wormhole switches, 256 hosts (seed 004 §5)",
        file: r#"# Two-level fat tree, XGFT(2; 16,16; 1,16): 16 leaf switches of 16 hosts and 16 up
# links each (32-port elements), 16 spine switches, d-mod-k routing; Myrinet-like
# wormhole switches with stop/go flow control, 2 Gb/s links.
[network]
kind = "xgft"
m = [16, 16]
w = [1, 16]
routing = "d-mod-k"
switch = "wormhole"
"#,
    },
    Preset {
        name: "fat-tree-512",
        summary: "two-level fat tree of 32-port wormhole switches, every port used, 512 hosts",
        file: r#"# Two-level fat tree, XGFT(2; 16,32; 1,16): 32 leaf switches of 16 hosts and 16 up
# links, 16 spine switches of 32 down links; d-mod-k routing, wormhole switches.
[network]
kind = "xgft"
m = [16, 32]
w = [1, 16]
routing = "d-mod-k"
switch = "wormhole"
"#,
    },
    Preset {
        name: "two-rail-fat-tree",
        summary: "two fat-tree rails joining 256 hosts, one adapter on each; messages take the rails in turn",
        file: r#"# Two independent rails, each the fat-tree preset (XGFT(2; 16,16; 1,16) of wormhole
# switches); every host has an adapter on each and sends its messages on them in turn.
[network]
kind = "multi-rail"
rail_policy = "round-robin"

[[network.rails]]
preset = "fat-tree"

[[network.rails]]
preset = "fat-tree"
"#,
    },
    Preset {
        name: "kary-ntree",
        summary: "4-ary 3-tree of output-queued switches, 64 hosts (seed 002's tree)",
        file: r#"# A 4-ary 3-tree: 64 hosts, 48 switches of 8 ports, d-mod-k routing,
# output-queued switches.
[network]
kind = "kary-ntree"
k = 4
n = 3
routing = "d-mod-k"
"#,
    },
    Preset {
        name: "torus-3d",
        summary: "8×8×8 torus of wormhole switches with bubble flow control, 512 hosts (BlueGene-like)",
        file: r#"# A three-dimensional torus, 8×8×8 switches with one host each, dimension-order
# routing; wormhole switches whose bubble flow control (virtual cut-through admission,
# two packets of room to enter a ring) keeps the wraparound links deadlock-free. Packets
# of 1 KiB, and input buffers of 2.5 KiB that hold two of them.
[network]
kind = "torus"
dims = [8, 8, 8]
hosts_per_switch = 1
switch = "wormhole"
bubble = true
buffer_bytes = 2560
packet_payload_bytes = 1024
"#,
    },
    Preset {
        name: "hypercube",
        summary: "8-dimensional hypercube of output-queued switches (e-cube routing), 256 hosts",
        file: r#"# An 8-cube: 256 switches with one host each, e-cube (dimension-order) routing,
# output-queued switches.
[network]
kind = "hypercube"
dimensions = 8
hosts_per_switch = 1
"#,
    },
    Preset {
        name: "dragonfly",
        summary: "balanced dragonfly of output-queued routers, 33 groups of 8, 1,056 hosts (BookSim's example)",
        file: r#"# A dragonfly, BookSim's dragonflynew of k = 4: 4 hosts and 4 global cables a router,
# 8 routers a group joined all to all, 33 groups each joined to every other by one
# global cable (absolute arrangement); minimal routing; output-queued routers (the
# wormhole switch needs virtual channels to route a dragonfly without deadlock).
[network]
kind = "dragonfly"
p = 4
a = 8
h = 4
g = 33
arrangement = "absolute"
routing = "minimal"
"#,
    },
    Preset {
        name: "dragonfly-large",
        summary: "balanced dragonfly of output-queued routers, 129 groups of 16, 16,512 hosts",
        file: r#"# A balanced dragonfly of p = 8: 8 hosts and 8 global cables a router, 16 routers a
# group, 129 groups (2,064 routers of 31 ports); minimal routing; output-queued routers.
[network]
kind = "dragonfly"
p = 8
routing = "minimal"
"#,
    },
    Preset {
        name: "crossbar",
        summary: "one output-queued switch joining 256 hosts (vesper serve's default)",
        file: r#"# One output-queued switch with a port per host.
[network]
kind = "crossbar"
hosts = 256
"#,
    },
];

/// The description of preset `name`.
pub fn spec(name: &str) -> Result<NetworkSpec, String> {
    let preset = find(name)?;
    parse_spec(&format!("preset {name}"), preset.file).map_err(|e: NetworkFileError| e.to_string())
}

/// Preset `name`, or a message listing them.
pub fn find(name: &str) -> Result<&'static Preset, String> {
    PRESETS.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
        format!("--preset {name}: no such preset; the presets are {}", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_builds() {
        for preset in PRESETS {
            let config = spec(preset.name)
                .and_then(|s| s.resolve().map_err(|e| e.to_string()))
                .unwrap_or_else(|e| panic!("{}: {e}", preset.name));
            config.build().unwrap_or_else(|e| panic!("{}: {e}", preset.name));
        }
        assert_eq!(spec("fat-tree").expect("known").resolve().expect("valid").hosts, 256);
        assert_eq!(
            find("torus-9d").err(),
            Some(
                "--preset torus-9d: no such preset; the presets are fat-tree, fat-tree-512, two-rail-fat-tree, kary-ntree, torus-3d, hypercube, dragonfly, dragonfly-large, crossbar"
                    .into()
            )
        );
    }
}
