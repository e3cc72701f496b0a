//! The trace's topology (`FILE.topology`): what the `.row` cannot say about the network
//! a trace shows, for viewers that draw it (`vesper view`).
//!
//! ```text
//!   {"vesper_topology": 1,
//!    "shape": {"kind": "torus", "dims": [4,4], "wrap": true, "hosts_per_switch": 1, "hosts": 16, "switches": 16},
//!    "rails": 1,
//!    "devices": [
//!     {"name": "host0", "host": true, "threads": [1, 1], "level": 0, "coords": [0, 0], "rail": 0},
//!     …],
//!    "links": [
//!     {"from": 1, "to": 17, "mbs": 250, "latency_ns": 10},
//!     …]}
//! ```
//!
//! - `shape`: the rails' shape (`kind`: `xgft` with `levels`, `down` (m1…mh) and `up`
//!   (w1…wh); `torus`, `mesh` or `hypercube` with `dims`, `wrap` and
//!   `hosts_per_switch`; `dragonfly` with `p`, `a`, `h` and `g`; `crossbar`; `map` (a
//!   map file); `graph` (cables without a known shape); `ideal` (no switches)), with the rail's `hosts` and `switches`. When
//!   the rails differ: `{"kind": "rails", "rails": [shape, …]}`;
//! - `devices`: the traced devices, in the trace's task order: `threads` the first and
//!   last of its ports' threads, numbered from 1 over the whole trace (thread `t` is
//!   the `t`-th name under `LEVEL THREAD` of the `.row`; a record's task `i`, thread
//!   `j` is thread `first(i) + j − 1`); `level` the cables from the nearest host (null:
//!   none reaches it); `coords` a torus', mesh's or hypercube's switch coordinates, a
//!   dragonfly router's group and place in it (a host: its switch's), else null;
//! - `links`: one per direction of every cable whose two ports are traced, idle or
//!   not, rail by rail in the topology's cable order: `from` and `to` threads, the
//!   rate in MB/s (10^6 bytes/s) and the propagation delay in whole ns.
//!
//! The text is a function of the network and the device selection only: one device
//! and one link a line, fixed order, so that the same run writes the same bytes.

use std::fmt::Write as _;

use super::layout::{Layout, switch_levels};
use crate::builder::NetworkBuilder;
use crate::ids::{Device, HostId, SwitchId};
use crate::topology::{Dragonfly, Endpoint, Routing, Topology, Torus, Xgft};
use crate::trace::PortRef;

/// The version of the format written (`vesper_topology`).
pub const TOPOLOGY_VERSION: u32 = 1;

/// A rail's shape, as its description gave it (or as its routing shows it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceShape {
    /// no switches: the ideal network
    Ideal,
    /// one switch with every host on it
    Crossbar,
    /// an extended generalised fat tree
    Xgft(Xgft),
    /// a torus, mesh or hypercube
    Torus(Torus),
    /// a dragonfly
    Dragonfly(Dragonfly),
    /// read from a map file
    Map,
    /// cables of no known shape
    Graph,
}

impl TraceShape {
    /// The shape a topology's routing shows (`None`: the ideal network): XGFT routings
    /// give the tree, dimension order the torus, a dragonfly's routings the dragonfly,
    /// one switch a crossbar, anything else a graph. Descriptions that know better say so ([`super::ParaverOptions::shapes`]).
    pub fn of(topology: Option<&Topology>) -> TraceShape {
        let Some(topology) = topology else {
            return TraceShape::Ideal;
        };
        match &topology.routing {
            Routing::DModK(x) | Routing::SModK(x) | Routing::Random { xgft: x, .. } => TraceShape::Xgft(x.clone()),
            Routing::PatternAware(routes) => TraceShape::Xgft(routes.xgft().clone()),
            Routing::DimensionOrder(t) => TraceShape::Torus(t.clone()),
            Routing::DragonflyMinimal(d) => TraceShape::Dragonfly(d.clone()),
            Routing::DragonflyDetour(x) => TraceShape::Dragonfly(x.dragonfly.clone()),
            Routing::ShortestPath | Routing::Explicit(_) if topology.switch_ports.len() == 1 => TraceShape::Crossbar,
            Routing::ShortestPath | Routing::Explicit(_) => TraceShape::Graph,
        }
    }

    /// Its JSON object, with the rail's `hosts` and `switches`.
    fn json(&self, hosts: u32, switches: usize) -> String {
        let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        let kind = match self {
            TraceShape::Ideal => "\"kind\":\"ideal\"".to_string(),
            TraceShape::Crossbar => "\"kind\":\"crossbar\"".to_string(),
            TraceShape::Map => "\"kind\":\"map\"".to_string(),
            TraceShape::Graph => "\"kind\":\"graph\"".to_string(),
            TraceShape::Dragonfly(d) => format!(
                "\"kind\":\"dragonfly\",\"p\":{},\"a\":{},\"h\":{},\"g\":{}",
                d.p, d.a, d.h, d.g
            ),
            TraceShape::Xgft(x) => format!(
                "\"kind\":\"xgft\",\"levels\":{},\"down\":[{}],\"up\":[{}]",
                x.height(),
                list(&x.children),
                list(&x.parents)
            ),
            TraceShape::Torus(t) => {
                let kind = match (t.dims.iter().all(|&k| k == 2), t.wrap) {
                    (true, _) => "hypercube",
                    (false, true) => "torus",
                    (false, false) => "mesh",
                };
                format!(
                    "\"kind\":\"{kind}\",\"dims\":[{}],\"wrap\":{},\"hosts_per_switch\":{}",
                    list(&t.dims),
                    t.wrap,
                    t.hosts_per_switch
                )
            }
        };
        format!("{{{kind},\"hosts\":{hosts},\"switches\":{switches}}}")
    }

    /// A device's coordinates on a torus, mesh or hypercube, or its group and place in
    /// it on a dragonfly (a host: its switch's).
    fn coords(&self, device: Device) -> Option<Vec<u32>> {
        if let TraceShape::Dragonfly(d) = self {
            let router = match device {
                Device::Host(h) => h.0 / d.p,
                Device::Switch(s) => s.0,
            };
            return Some(vec![router / d.a, router % d.a]);
        }
        let TraceShape::Torus(t) = self else { return None };
        let switch = match device {
            Device::Host(h) => h.0 / t.hosts_per_switch.max(1),
            Device::Switch(s) => s.0,
        };
        let mut rest = switch;
        Some(
            t.dims
                .iter()
                .map(|&k| {
                    let x = rest % k.max(1);
                    rest /= k.max(1);
                    x
                })
                .collect(),
        )
    }
}

/// `text` as a JSON string.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The topology text of a trace laid out as `layout` over `rails`, rail `r` of shape
/// `shapes[r]` (derived from its routing when not given).
pub(super) fn topology_json(layout: &Layout, rails: &[NetworkBuilder], shapes: &[TraceShape]) -> String {
    let shapes: Vec<TraceShape> = rails
        .iter()
        .enumerate()
        .map(|(r, rail)| {
            shapes
                .get(r)
                .cloned()
                .unwrap_or_else(|| TraceShape::of(rail.topology()))
        })
        .collect();
    let shape_json: Vec<String> = rails
        .iter()
        .zip(&shapes)
        .map(|(rail, shape)| shape.json(rail.hosts(), rail.topology().map_or(0, |t| t.switch_ports.len())))
        .collect();
    let shape = match shape_json.split_first() {
        Some((first, rest)) if rest.iter().all(|s| s == first) => first.clone(),
        _ => format!("{{\"kind\":\"rails\",\"rails\":[{}]}}", shape_json.join(",")),
    };
    let mut devices = Vec::with_capacity(layout.tasks.len());
    let mut links = Vec::new();
    for (r, (rail, shape)) in rails.iter().zip(&shapes).enumerate() {
        let levels = rail.topology().map(switch_levels).unwrap_or_default();
        let hosts = (0..rail.hosts()).map(|h| (Device::Host(HostId(h)), Some(0)));
        let switches = (0..layout.switch_thread[r].len())
            .map(|s| (Device::Switch(SwitchId(s as u32)), levels.get(s).copied().flatten()));
        for (device, level) in hosts.chain(switches) {
            let Some(first) = layout.thread(r, PortRef { device, port: 0 }) else {
                continue;
            };
            let (task, _, _) = &layout.threads[first as usize];
            let (name, ports) = &layout.tasks[*task as usize - 1];
            let coords = shape.coords(device).map_or("null".to_string(), |c| {
                format!("[{}]", c.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
            });
            let level = level.map_or("null".to_string(), |l| l.to_string());
            devices.push((
                first,
                format!(
                    "{{\"name\":{},\"host\":{},\"threads\":[{},{}],\"level\":{level},\"coords\":{coords},\"rail\":{r}}}",
                    quoted(name),
                    matches!(device, Device::Host(_)),
                    first + 1,
                    first + ports
                ),
            ));
        }
        for cable in rail.topology().map_or(&[][..], |t| &t.cables) {
            let end = |e: Endpoint| {
                layout.thread(
                    r,
                    PortRef {
                        device: e.device,
                        port: e.port,
                    },
                )
            };
            let (Some(a), Some(b)) = (end(cable.a), end(cable.b)) else {
                continue;
            };
            let mbs = cable.link.bandwidth.bytes_per_second_f64() / 1e6;
            let latency_ns = cable.link.propagation.as_ps() / 1000;
            for (from, to) in [(a, b), (b, a)] {
                links.push(format!(
                    "{{\"from\":{},\"to\":{},\"mbs\":{mbs},\"latency_ns\":{latency_ns}}}",
                    from + 1,
                    to + 1
                ));
            }
        }
    }
    // The trace's task order.
    devices.sort_by_key(|(first, _)| *first);
    let devices: Vec<String> = devices.into_iter().map(|(_, d)| d).collect();
    format!(
        "{{\"vesper_topology\":{TOPOLOGY_VERSION},\n\"shape\":{shape},\n\"rails\":{},\n\"devices\":[\n{}\n],\n\"links\":[\n{}\n]}}\n",
        rails.len(),
        devices.join(",\n"),
        links.join(",\n")
    )
}
