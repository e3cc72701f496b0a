use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use vesper_netmodels::{DeviceSelection, MemoryOutput, Network as _, NetworkBuilder, ParaverOptions, TracedNetwork};

use super::*;
use crate::config::NetworkConfig;
use crate::view::header::{Names, parse_header};
use crate::view::http::trace_json;
use crate::view::layout::Kind;
use crate::view::reader::{TraceFiles, load};
use crate::view::{Shared, read_lock};

/// A fresh scratch directory for `name`.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vesper-view-topology-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// The network a description's text gives.
fn network(text: &str) -> NetworkConfig {
    crate::description::parse("net.toml", text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn preset(name: &str) -> NetworkConfig {
    network(crate::description::preset::find(name).expect("a preset").file)
}

/// The trace of `config` (no traffic: the topology is known before any record), its
/// devices selected by `devices`.
fn traced(config: &NetworkConfig, devices: DeviceSelection) -> MemoryOutput {
    let (rails, policy) = config.rails().expect("rails");
    let options = ParaverOptions {
        devices,
        shapes: config.trace_shapes(),
        ..ParaverOptions::default()
    };
    let mut net = TracedNetwork::build(rails, policy, &options, MemoryOutput::default()).expect("a valid network");
    net.finish_trace().expect("written").expect("traced");
    net.output().clone()
}

/// Each rail's builder (the model's own cables).
fn builders(config: &NetworkConfig) -> Vec<NetworkBuilder> {
    config.rails().expect("rails").0
}

fn names_of(out: &MemoryOutput) -> Names {
    let header = parse_header(&out.header).expect("a header");
    Names::of_row(&out.row, &header).expect("a .row")
}

/// The networks vesper generates, each with the kind its topology should say.
fn kinds() -> Vec<(NetworkConfig, &'static str)> {
    let dir = scratch("map");
    let map = dir.join("tree.map");
    crate::cli::topo::write_map_files(&preset("kary-ntree"), Some(&map), None, &mut std::io::sink()).expect("a map");
    vec![
        (preset("fat-tree"), "xgft"),
        (preset("kary-ntree"), "xgft"),
        (
            network("[network]\nkind = \"torus\"\ndims = [4, 3, 2]\nhosts_per_switch = 2\n"),
            "torus",
        ),
        (
            network("[network]\nkind = \"mesh\"\ndims = [3, 3]\nhosts_per_switch = 1\n"),
            "mesh",
        ),
        (preset("hypercube"), "hypercube"),
        (
            network("[network]\nkind = \"dragonfly\"\np = 2\nrouting = \"ugal\"\n"),
            "dragonfly",
        ),
        (preset("crossbar"), "crossbar"),
        (preset("two-rail-fat-tree"), "xgft"),
        (
            network(&format!(
                "[network]\nkind = \"map\"\nmap = {:?}\n",
                map.display().to_string()
            )),
            "map",
        ),
    ]
}

/// The topology each generated kind writes parses against its own trace, names every
/// port of it (the devices' threads run 1 to the last without a gap), and holds both
/// directions of every cable the model has.
#[test]
fn every_generated_kind_writes_a_topology_of_every_port_and_cable() {
    for (config, kind) in kinds() {
        let out = traced(&config, DeviceSelection::all());
        let names = names_of(&out);
        let topology = Topology::parse(&out.topology, &names).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(topology.kind, kind);
        // A live stream's names, before its .row: the same.
        let header = parse_header(&out.header).expect("a header");
        assert_eq!(Topology::names(&out.topology, &header), Ok(names.clone()), "{kind}");
        let rails = builders(&config);
        assert_eq!(topology.rails as usize, rails.len());
        // The devices' threads, in order, cover every thread once.
        let mut next = 1;
        for (i, d) in out.topology.lines().filter(|l| l.starts_with("{\"name\"")).enumerate() {
            let d: serde_json::Value = serde_json::from_str(d.trim_end_matches(',')).expect("a device");
            assert_eq!(d["name"], names.tasks[i].as_str());
            assert_eq!(d["threads"][0], next, "{kind}: {d}");
            next = d["threads"][1].as_u64().expect("a thread") + 1;
        }
        assert_eq!(next, names.threads.len() as u64 + 1, "{kind}: every thread named");
        let cables: usize = rails.iter().map(|r| r.topology().map_or(0, |t| t.cables.len())).sum();
        assert_eq!(topology.links.len(), 2 * cables, "{kind}");
        let rate = rails[0].topology().expect("switched").cables[0]
            .link
            .bandwidth
            .bytes_per_second_f64()
            / 1e6;
        assert_eq!(topology.links[0].mbs, rate, "{kind}");
        // Deterministic: the same network writes the same bytes.
        assert_eq!(traced(&config, DeviceSelection::all()).topology, out.topology);
    }
}

/// A selection keeps only the devices traced, and only the cables whose two ports are.
#[test]
fn a_selection_keeps_the_links_between_traced_devices() {
    let config = preset("kary-ntree");
    let out = traced(&config, DeviceSelection::parse("sw*").expect("a selection"));
    let names = names_of(&out);
    let topology = Topology::parse(&out.topology, &names).expect("a topology");
    assert!(names.tasks.iter().all(|t| t.starts_with("sw")));
    let between_switches = builders(&config)[0]
        .topology()
        .expect("switched")
        .cables
        .iter()
        .filter(|c| {
            matches!(
                (c.a.device, c.b.device),
                (vesper_netmodels::Device::Switch(_), vesper_netmodels::Device::Switch(_))
            )
        })
        .count();
    assert_eq!(topology.links.len(), 2 * between_switches);
    assert!(topology.devices.iter().all(|d| d.level.is_some_and(|l| l >= 1)));
}

/// The view's picture of a torus puts every switch at its coordinates (dimension 0
/// across, 1 up, 2 the slice), whatever the links, and its hosts beside it.
#[test]
fn a_torus_is_drawn_on_its_grid_a_slice_at_a_time() {
    let config = network("[network]\nkind = \"torus\"\ndims = [4, 3, 2]\nhosts_per_switch = 2\n");
    let out = traced(&config, DeviceSelection::all());
    let names = names_of(&out);
    let topology = Topology::parse(&out.topology, &names).expect("a topology");
    let host: Vec<bool> = (0..names.tasks.len()).map(|t| names.is_host(t)).collect();
    let picture = crate::view::layout::picture(&host, &[], Some(&topology));
    assert_eq!(picture.kind, Kind::Grid);
    assert_eq!(picture.slices, ["x2 = 0", "x2 = 1"]);
    assert_eq!(picture.aspect, Some(3.0 / 4.0));
    let mut switches = 0;
    for (d, name) in names.tasks.iter().enumerate() {
        let spot = picture.spots[d];
        let switch = match name.strip_prefix("sw") {
            Some(s) => s.parse::<u32>().expect("a switch number"),
            None => name["host".len()..].parse::<u32>().expect("a host number") / 2,
        };
        let (x0, x1, x2) = (switch % 4, switch / 4 % 3, switch / 12);
        assert_eq!(spot.slice, x2, "{name}");
        let (left, top) = (f64::from(x0) / 4.0, f64::from(2 - x1) / 3.0);
        if host[d] {
            // In its switch's cell, right of and below the switch.
            assert!(
                spot.x > left + 0.5 / 4.0 && spot.x < left + 1.0 / 4.0,
                "{name}: {spot:?}"
            );
            assert!(spot.y > top + 0.5 / 3.0 && spot.y < top + 1.0 / 3.0, "{name}: {spot:?}");
        } else {
            switches += 1;
            assert!((spot.x - (left + 0.35 / 4.0)).abs() < 1e-12, "{name}: {spot:?}");
            assert!((spot.y - (top + 0.35 / 3.0)).abs() < 1e-12, "{name}: {spot:?}");
        }
    }
    assert_eq!(switches, 24);
    // The wraparound cables are known as such: 2 per ring of 4 (dimension 0, 6 rings)
    // and of 3 (dimension 1, 8 rings); dimension 2 (of 2) has none.
    let task = |t: Thread| names.task_of[t as usize];
    let wraps = topology
        .links
        .iter()
        .filter(|l| crate::view::layout::wraps(&topology, task(l.from), task(l.to)))
        .count();
    assert_eq!(wraps, 2 * (6 + 8));
}

/// The view's picture of a dragonfly: every group's routers around a centre of their
/// own, on a circle of groups, each router's hosts beyond it; a broken place is named.
#[test]
fn a_dragonfly_is_drawn_in_groups() {
    let out = traced(
        &network("[network]\nkind = \"dragonfly\"\np = 2\n"),
        DeviceSelection::all(),
    );
    let names = names_of(&out);
    let topology = Topology::parse(&out.topology, &names).expect("a topology");
    assert_eq!(
        (topology.shape["a"].as_u64(), topology.shape["g"].as_u64()),
        (Some(4), Some(9))
    );
    let host: Vec<bool> = (0..names.tasks.len()).map(|t| names.is_host(t)).collect();
    let picture = crate::view::layout::picture(&host, &[], Some(&topology));
    assert_eq!((picture.kind, picture.aspect), (Kind::Groups, Some(1.0)));
    // Each group's centre: the mean of its 4 routers.
    let router = |name: &str| match name.strip_prefix("sw") {
        Some(s) => s.parse::<u32>().expect("a switch number"),
        None => name["host".len()..].parse::<u32>().expect("a host number") / 2,
    };
    let mut centres = [(0.0, 0.0); 9];
    for (d, name) in names.tasks.iter().enumerate().filter(|&(d, _)| !host[d]) {
        let spot = picture.spots[d];
        let c = &mut centres[(router(name) / 4) as usize];
        (c.0, c.1) = (c.0 + spot.x / 4.0, c.1 + spot.y / 4.0);
    }
    let distance = |(x, y): (f64, f64), (u, v): (f64, f64)| ((x - u).powi(2) + (y - v).powi(2)).sqrt();
    for (d, name) in names.tasks.iter().enumerate() {
        let spot = picture.spots[d];
        assert!(
            (0.0..=1.0).contains(&spot.x) && (0.0..=1.0).contains(&spot.y),
            "{name}: {spot:?}"
        );
        let group = (router(name) / 4) as usize;
        let own = distance((spot.x, spot.y), centres[group]);
        // Nearer its own group's centre than any other's; hosts farther out than routers.
        assert!(
            centres
                .iter()
                .enumerate()
                .all(|(g, &c)| g == group || distance((spot.x, spot.y), c) > own),
            "{name}: {spot:?}"
        );
        assert!(if host[d] { own > 0.085 } else { own < 0.085 }, "{name}: {own}");
    }
    // Group 0 at the top.
    assert!(centres[0].1 < centres.iter().skip(1).map(|c| c.1).fold(1.0, f64::min));
    let broken = out.topology.replacen("\"coords\":[0,0]", "\"coords\":[9,0]", 1);
    let err = Topology::parse(&broken, &names).expect_err("refused");
    assert!(
        err.contains("coords Some([9, 0]); a dragonfly of 9 groups of 4 routers places every device"),
        "{err}"
    );
}

/// A hypercube on its Gray-code grid: every switch in a cell of its own, and the
/// neighbours along dimension 0 side by side.
#[test]
fn a_hypercube_is_a_gray_code_grid() {
    let out = traced(&preset("hypercube"), DeviceSelection::all());
    let names = names_of(&out);
    let topology = Topology::parse(&out.topology, &names).expect("a topology");
    let host: Vec<bool> = (0..names.tasks.len()).map(|t| names.is_host(t)).collect();
    let picture = crate::view::layout::picture(&host, &[], Some(&topology));
    assert_eq!((picture.kind, picture.aspect), (Kind::Grid, Some(1.0)));
    assert!(picture.slices.is_empty());
    let mut cells: Vec<(i64, i64)> = (0..names.tasks.len())
        .filter(|&d| !host[d])
        .map(|d| {
            let s = picture.spots[d];
            ((s.x * 16.0).floor() as i64, (s.y * 16.0).floor() as i64)
        })
        .collect();
    cells.sort_unstable();
    cells.dedup();
    assert_eq!(cells.len(), 256, "a cell each");
    let spot = |name: &str| picture.spots[names.tasks.iter().position(|t| t == name).expect("a switch")];
    assert!((spot("sw1").x - spot("sw0").x - 1.0 / 16.0).abs() < 1e-12);
    assert_eq!(spot("sw1").y, spot("sw0").y);
}

/// Writes `out` as `FILE.prv`, `.row` and (when given) `.topology` text in `dir`.
fn write_trace(dir: &Path, out: &MemoryOutput, topology: Option<&str>) -> PathBuf {
    let prv = dir.join("net.prv");
    std::fs::write(&prv, out.prv()).expect("write");
    std::fs::write(dir.join("net.row"), &out.row).expect("write");
    if let Some(text) = topology {
        std::fs::write(dir.join("net.topology"), text).expect("write");
    }
    prv
}

fn view_of(prv: &Path) -> Arc<RwLock<Shared>> {
    let shared = Arc::new(RwLock::new(Shared::new(prv.display().to_string(), 250.0)));
    load(TraceFiles::open(prv).expect("opens"), &shared);
    shared
}

/// With its topology, the view shows every link (idle ones included) at its own
/// rate; a broken topology is said, naming the file, and the layout is derived.
#[test]
fn a_broken_topology_falls_back_with_a_message() {
    let dir = scratch("broken");
    let config = network("[network]\nkind = \"mesh\"\ndims = [3, 3]\nhosts_per_switch = 1\n");
    let out = traced(&config, DeviceSelection::all());
    let good = view_of(&write_trace(&dir, &out, Some(&out.topology)));
    let state = read_lock(&good);
    let json = trace_json(&state);
    assert_eq!(json.topology_problem, None);
    assert_eq!(json.topology.as_deref(), Some("mesh 3×3"));
    assert_eq!(json.layout.kind, Kind::Grid);
    assert_eq!(json.links.len(), state.topology.as_ref().expect("read").links.len());
    assert!(
        json.links.iter().all(|l| l.bytes == 0 && l.mbs > 0.0),
        "idle links, with their rate"
    );
    drop(state);
    let cut = &out.topology[..out.topology.len() / 2];
    let wrong_name = out.topology.replacen("\"host0\"", "\"host9\"", 1);
    for (text, expected) in [
        (cut, "expected a trace's topology (JSON)"),
        ("{\"vesper_topology\": 2}", "format version 2"),
        ("[1, 2]", "expected a trace's topology (JSON)"),
        (wrong_name.as_str(), "devices[0] (host0): named \"host9\""),
    ] {
        let shared = view_of(&write_trace(&dir, &out, Some(text)));
        let state = read_lock(&shared);
        let json = trace_json(&state);
        let problem = json.topology_problem.expect("a problem");
        assert!(
            problem.contains("net.topology: ") && problem.contains(expected),
            "{problem}"
        );
        assert_eq!(json.layout.kind, Kind::Levels);
        assert_eq!(json.problem, None, "the trace itself is read");
        assert!(json.links.is_empty(), "no records, no links seen");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two torus rails: one grid, its slices per rail; rails of different shapes say so
/// and are drawn by levels.
#[test]
fn rails_are_slices_of_one_grid_or_levels_when_they_differ() {
    let rail = "kind = \"torus\"\ndims = [3, 3, 2]\nhosts_per_switch = 1\n";
    let two = network(&format!(
        "[network]\nkind = \"multi-rail\"\nrail_policy = \"round-robin\"\n[[network.rails]]\n{rail}[[network.rails]]\n{rail}"
    ));
    let out = traced(&two, DeviceSelection::all());
    let names = names_of(&out);
    let topology = Topology::parse(&out.topology, &names).expect("a topology");
    assert_eq!((topology.kind.as_str(), topology.rails), ("torus", 2));
    let host: Vec<bool> = (0..names.tasks.len()).map(|t| names.is_host(t)).collect();
    let picture = crate::view::layout::picture(&host, &[], Some(&topology));
    assert_eq!(
        picture.slices,
        ["rail 0, x2 = 0", "rail 0, x2 = 1", "rail 1, x2 = 0", "rail 1, x2 = 1"]
    );
    for (d, name) in names.tasks.iter().enumerate() {
        let rail: u32 = name[1..2].parse().expect("r0. or r1.");
        let switch = match name[3..].strip_prefix("sw") {
            Some(s) => s.parse::<u32>().expect("a switch"),
            None => name[3 + "host".len()..].parse::<u32>().expect("a host"),
        };
        assert_eq!(picture.spots[d].slice, 2 * rail + switch / 9, "{name}");
    }

    let mesh = "kind = \"mesh\"\ndims = [3, 3]\nhosts_per_switch = 2\n";
    let mixed = network(&format!(
        "[network]\nkind = \"multi-rail\"\nrail_policy = \"round-robin\"\n[[network.rails]]\n{mesh}[[network.rails]]\n{}",
        "kind = \"torus\"\ndims = [3, 3, 2]\nhosts_per_switch = 1\n"
    ));
    let out = traced(&mixed, DeviceSelection::all());
    let names = names_of(&out);
    let topology = Topology::parse(&out.topology, &names).expect("a topology");
    assert_eq!((topology.kind.as_str(), topology.rails), ("rails", 2));
    assert_eq!(topology.shape["rails"][0]["kind"], "mesh");
    assert_eq!(topology.shape["rails"][1]["kind"], "torus");
    let host: Vec<bool> = (0..names.tasks.len()).map(|t| names.is_host(t)).collect();
    let picture = crate::view::layout::picture(&host, &[], Some(&topology));
    assert_eq!(picture.kind, Kind::Levels);
    assert_eq!(picture.rows.len(), 2, "hosts and their switches: {:?}", picture.rows);
}
