//! The network descriptions read, checked and resolved.

use std::path::PathBuf;

use vesper_netmodels::{
    AdapterParams, Arbitration, Arrangement, CioqParams, Dragonfly, InitialPointer, Interleave, RailPolicy, SimTime,
    SwitchKind, Torus, Xgft,
};

use super::*;
use crate::config::{Placement, RoutingPolicy, SwitchedConfig};

fn switched(config: &NetworkConfig) -> &SwitchedConfig {
    match &config.fabric {
        FabricConfig::Switched(s) => s,
        _ => panic!("not one switched network: {config:?}"),
    }
}

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
    assert_eq!(params.transfer(250 << 20), SimTime::from_ns(1_000_000_000));
}

#[test]
fn reads_the_adapter_fields() {
    let text =
        "[network]\nkind = \"crossbar\"\npacket_payload_bytes = 2048\npacket_header_bytes = 8\ninterleave = \"fifo\"\n";
    let config = parse("n.toml", text).expect("valid");
    let adapter = switched(&config).adapter;
    assert_eq!(
        (adapter.payload_bytes, adapter.header_bytes, adapter.interleave),
        (2048, 8, Interleave::Fifo)
    );
}

#[test]
fn reads_a_wormhole_switch() {
    let text = "[network]\nkind = \"crossbar\"\nswitch = \"wormhole\"\nbuffer_bytes = 1024\ninitial_pointer = 3\n";
    let config = parse("n.toml", text).expect("valid");
    let SwitchKind::Wormhole(params) = switched(&config).switch.kind else {
        panic!("not wormhole: {config:?}");
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
            fabric: FabricConfig::Switched(SwitchedConfig::crossbar(8, AdapterParams::default())),
            ..NetworkConfig::default()
        }
    );
    assert_eq!(parse("n.toml", "[network]\n").expect("valid"), NetworkConfig::default());
}

#[test]
fn reads_fat_trees() {
    let tree = parse(
        "t.toml",
        "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\nrouting = \"s-mod-k\"\n",
    )
    .expect("valid");
    let s = switched(&tree);
    assert_eq!(tree.hosts, 64);
    assert_eq!(s.shape, Shape::Xgft(Xgft::kary_ntree(4, 3).expect("valid")));
    assert_eq!(s.routing, RoutingPolicy::SModK);
    let thin = parse("t.toml", "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\nk_up = 2\n").expect("valid");
    assert_eq!(
        switched(&thin).shape,
        Shape::Xgft(Xgft::new(vec![4, 4, 4], vec![1, 2, 2]).expect("valid"))
    );
    assert_eq!(switched(&thin).routing, RoutingPolicy::DModK);
    let xgft = parse(
        "t.toml",
        "[network]\nkind = \"xgft\"\nm = [16, 16]\nw = [1, 16]\nhosts = 256\n",
    )
    .expect("valid");
    assert_eq!(xgft.hosts, 256);
    let topology = switched(&xgft).topology();
    assert_eq!(topology.switch_ports.len(), 32);
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
    assert_eq!(
        err("[network]\nkind = \"crossbar\"\npacket_payload_bytes = 4096\npacket_header_bytes = 4294967295\n"),
        "n.toml: network.packet_payload_bytes: 4096 bytes of payload and a header of 4294967295 bytes add \
         up to more than 4294967295 bytes, the most a packet can hold"
    );
    let kind = err("[network]\nkind = \"moebius\"\n");
    assert!(kind.contains("moebius") && kind.contains("kary-ntree"), "{kind}");
    assert_eq!(
        err("[network]\nkind = \"ideal\"\n"),
        "n.toml: network.bandwidth_mbps: the ideal network needs a bandwidth (the replayer configuration's \
         inter-node one)"
    );
    assert_eq!(
        err("[network]\nkind = \"ideal\"\nbandwidth_mbps = -1\n"),
        "n.toml: network.bandwidth_mbps: expected a rate of 0 or more in MBps (2^20 bytes/s); 0: instantaneous \
         transfers"
    );
    // 0: instantaneous, as Dimemas reads it.
    let instant = parse("n.toml", "[network]\nkind = \"ideal\"\nbandwidth_mbps = 0\n").expect("valid");
    let FabricConfig::Ideal(params) = instant.fabric else {
        panic!("not ideal: {instant:?}");
    };
    assert_eq!(params.transfer(1 << 30), SimTime::ZERO);
    assert_eq!(
        err("[network]\nkind = \"ideal\"\nbandwidth_mbps = 1\nswitch = \"cioq\"\n"),
        "n.toml: network.switch: applies to kind = \"crossbar\", \"xgft\", \"kary-ntree\", \"torus\", \"mesh\", \
         \"hypercube\", \"dragonfly\", \"multi-rail\" or \"map\", not \"ideal\""
    );
    assert_eq!(
        err("[network]\nkind = \"crossbar\"\nlink_latency_ns = -1\n"),
        "n.toml: network.link_latency_ns: expected a non-negative time in ns"
    );
    assert_eq!(
        err("[network]\nkind = \"crossbar\"\nhosts = 0\n"),
        "n.toml: network.hosts: a network needs at least one host"
    );
    assert_eq!(
        err("[network]\nkind = \"crossbar\"\nk = 4\n"),
        "n.toml: network.k: applies to kind = \"kary-ntree\", not \"crossbar\""
    );
    assert_eq!(
        err("[network]\nkind = \"crossbar\"\nrouting = \"d-mod-k\"\n"),
        "n.toml: network.routing: d-mod-k, s-mod-k, random and pattern-aware route fat trees (kind = \"xgft\" or \"kary-ntree\")"
    );
    assert_eq!(
        err("[network]\nkind = \"xgft\"\nm = [4, 4]\nw = [2, 4]\n"),
        "n.toml: network.m: w1 must be 1 (hosts have one port)"
    );
    assert_eq!(
        err("[network]\nkind = \"xgft\"\nm = [4, 4]\n"),
        "n.toml: network.w: an XGFT needs w, e.g. w = [1, 16]"
    );
    assert_eq!(
        err("[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\nhosts = 17\n"),
        "n.toml: network.hosts: this tree has 16 hosts (the product of its m), not 17; leave hosts out"
    );
    assert_eq!(
        err("[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\nk_up = 5\n"),
        "n.toml: network.k_up: between 1 and k = 4"
    );
    assert_eq!(
        err("[network]\nswitch = \"wormhole\"\ninitial_pointer = \"left\"\n"),
        "n.toml: network.initial_pointer: expected \"random\" or a port number"
    );
}

#[test]
fn a_mapping_file_places_nodes_relative_to_the_network_file() {
    let dir = std::env::temp_dir().join(format!("vesper-mapping-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("tasks.map"), "host3\n# a comment\n\nhost3\n1  # by number\n").expect("write");
    std::fs::write(
        dir.join("net.toml"),
        "[network]\nkind = \"crossbar\"\nhosts = 4\nmapping = \"tasks.map\"\n",
    )
    .expect("write");
    let config = read(&dir.join("net.toml")).expect("valid");
    assert_eq!(
        config.placement,
        Placement::Listed(vec![HostId(3), HostId(3), HostId(1)])
    );
    assert_eq!(config.placement.host_of(1), HostId(3));
    assert_eq!(config.placement.nodes(4), 3);
    std::fs::write(dir.join("tasks.map"), "host0\nhost4\n").expect("write");
    let err = read(&dir.join("net.toml")).expect_err("refused").to_string();
    assert!(
        err.ends_with("tasks.map:2: expected a host name, host0 … host3 (or its number), got `host4`"),
        "{err}"
    );
    std::fs::write(
        dir.join("net.toml"),
        "[network]\nmapping = \"tasks.map\"\nnodes_per_host = 2\n",
    )
    .expect("write");
    let err = read(&dir.join("net.toml")).expect_err("refused").to_string();
    assert!(err.ends_with("network.nodes_per_host: give either nodes_per_host or a mapping file, not both"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn route_files_are_one_or_one_per_rail_relative_to_the_network_file() {
    let routes = |text: &str| parse_spec("r.toml", text).expect("valid").routes;
    assert_eq!(
        routes("[network]\nroutes = \"a.routes\"\n"),
        Some(vec![PathBuf::from("a.routes")])
    );
    assert_eq!(
        routes("[network]\nroutes = [\"r0.routes\", \"r1.routes\"]\n"),
        Some(vec![PathBuf::from("r0.routes"), PathBuf::from("r1.routes")])
    );
    assert_eq!(routes("[network]\n"), None);
    let dir = std::env::temp_dir().join(format!("vesper-routes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("net.toml"),
        "[network]\nroutes = [\"r0.routes\", \"/abs.routes\"]\n",
    )
    .expect("write");
    let spec = read_spec(&dir.join("net.toml")).expect("valid");
    assert_eq!(
        spec.routes,
        Some(vec![dir.join("r0.routes"), PathBuf::from("/abs.routes")])
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn reads_multi_rail_networks_and_presets_in_files() {
    let text = "[network]\nkind = \"multi-rail\"\nrail_policy = \"size-threshold\"\nrail_threshold_bytes = 4096\n\
                switch = \"cioq\"\nnodes_per_host = 2\n\
                [[network.rails]]\nkind = \"kary-ntree\"\nk = 4\nn = 2\n\
                [[network.rails]]\nkind = \"crossbar\"\nhosts = 16\nlink_bandwidth_mbs = 1000\n";
    let config = parse("r.toml", text).expect("valid");
    let FabricConfig::MultiRail { rails, policy } = &config.fabric else {
        panic!("not multi-rail: {config:?}");
    };
    assert_eq!((config.hosts, rails.len()), (16, 2));
    assert_eq!(*policy, RailPolicy::SizeThreshold { bytes: 4096 });
    assert_eq!(config.placement, Placement::Fill { nodes_per_host: 2 });
    // The top's switch applies to every rail; a rail keeps its own link rate.
    assert!(rails.iter().all(|r| matches!(r.switch.kind, SwitchKind::Cioq(_))));
    assert_eq!(rails[1].link.bandwidth.bytes_per_second_f64(), 1e9);
    assert_eq!(config.build().expect("builds").rails().len(), 2);
    // A preset as a base, its fields overridden.
    let tree = parse(
        "p.toml",
        "[network]\npreset = \"fat-tree\"\nswitch = \"output-queued\"\n",
    )
    .expect("valid");
    assert_eq!(tree.hosts, 256);
    assert_eq!(switched(&tree).switch.kind, SwitchKind::OutputQueued);
    let err = |text: &str| parse("r.toml", text).expect_err("refused").to_string();
    assert_eq!(
        err("[network]\nkind = \"multi-rail\"\n"),
        "r.toml: network.rails: a multi-rail network needs its rails: one [[network.rails]] table each"
    );
    assert_eq!(
        err(
            "[network]\nkind = \"multi-rail\"\n[[network.rails]]\nkind = \"kary-ntree\"\nk = 4\nn = 2\n\
             [[network.rails]]\nkind = \"kary-ntree\"\nk = 4\nn = 3\n"
        ),
        "r.toml: network.rails[1]: joins 64 hosts, rails[0] 16: every rail joins the same hosts"
    );
    assert_eq!(
        err("[network]\nkind = \"multi-rail\"\n[[network.rails]]\nkind = \"kary-ntree\"\nk = 4\n"),
        "r.toml: network.rails[0].n: a k-ary n-tree needs n, e.g. n = 2"
    );
    assert_eq!(
        err("[network]\nkind = \"multi-rail\"\n[[network.rails]]\nmapping = \"m\"\n"),
        "r.toml: network.rails[0].mapping: applies to the whole network: set it at the top"
    );
    assert_eq!(
        err("[network]\nkind = \"multi-rail\"\nrail_policy = \"size-threshold\"\n[[network.rails]]\n"),
        "r.toml: network.rail_threshold_bytes: rail_policy = \"size-threshold\" needs the size that leaves rail 0"
    );
    assert_eq!(
        err("[network]\nrail_policy = \"striped\"\n"),
        "r.toml: network.rail_policy: applies to kind = \"multi-rail\" or \"map\", not \"crossbar\""
    );
    assert!(err("[network]\npreset = \"nope\"\n").contains("network.preset: --preset nope: no such preset"));
}

#[test]
fn random_and_pattern_aware_routing() {
    let random = parse(
        "r.toml",
        "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\nrouting = \"random\"\nseed = 9\n",
    )
    .expect("valid");
    assert_eq!(switched(&random).routing, RoutingPolicy::Random { seed: 9 });
    let dir = std::env::temp_dir().join(format!("vesper-pattern-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // A transpose on a 4-ary 2-tree, nodes two per host: node n on host n / 2.
    let flows: String = (0..16u32)
        .map(|h| format!("{} {}\n", 2 * h, 2 * (4 * (h % 4) + h / 4)))
        .collect();
    std::fs::write(dir.join("transpose.txt"), format!("# transpose\n{flows}phase\n0 2\n")).expect("write");
    std::fs::write(
        dir.join("net.toml"),
        "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\nrouting = \"pattern-aware\"\npattern = \"transpose.txt\"\n\
         nodes_per_host = 2\n",
    )
    .expect("write");
    let config = read(&dir.join("net.toml")).expect("valid");
    let RoutingPolicy::PatternAware(Some(routes)) = &switched(&config).routing else {
        panic!("no pattern routes: {config:?}");
    };
    // The transpose's flows that leave their leaf, each on its own links.
    let x = Xgft::kary_ntree(4, 2).expect("valid");
    let transpose: Vec<_> = (0..16)
        .map(|h| (HostId(h), HostId(4 * (h % 4) + h / 4)))
        .filter(|(s, d)| s != d)
        .collect();
    let loads = x.phase_loads(&[transpose], |s, d| routes.path(s, d)).expect("valid");
    assert_eq!(loads[0].max_load, 1);
    let err = |text: &str| parse("r.toml", text).expect_err("refused").to_string();
    assert_eq!(
        err("[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\nrouting = \"pattern-aware\"\n"),
        "r.toml: network.pattern: routing = \"pattern-aware\" needs a communication pattern: pattern = FILE \
         (vesper run takes its workload's)"
    );
    assert_eq!(
        err("[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\npattern = \"p\"\n"),
        "r.toml: network.pattern: applies to routing = \"pattern-aware\" only"
    );
    std::fs::write(dir.join("transpose.txt"), "0 99\n").expect("write");
    let far = read(&dir.join("net.toml")).expect_err("refused").to_string();
    assert!(
        far.ends_with("network.pattern: node 99 is not in the network (16 hosts × 2 nodes per host)"),
        "{far}"
    );
    std::fs::write(dir.join("transpose.txt"), "0 1 2\n").expect("write");
    let bad = read(&dir.join("net.toml")).expect_err("refused").to_string();
    assert!(
        bad.ends_with("transpose.txt:1: expected `SRC DST` or `phase`, got `0 1 2`"),
        "{bad}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn levels_of_a_tree_take_their_own_switches() {
    let text = "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\n[network.levels.3]\nswitch = \"cioq\"\nspeedup = 2\n";
    let config = parse("l.toml", text).expect("valid");
    let spine = SwitchKind::Cioq(CioqParams {
        speedup: 2,
        virtual_output_queues: false,
    });
    assert_eq!(switched(&config).level_kinds, vec![(3, spine)]);
    let mut sim = config.build().expect("builds");
    // It carries traffic through the CIOQ spine.
    let spec = vesper_netmodels::MessageSpec {
        src: HostId(0),
        dst: HostId(63),
        size_bytes: 10_000,
        cookie: 1,
    };
    sim.inject(SimTime::ZERO, spec).expect("valid");
    let mut delivered = Vec::new();
    sim.run_until(SimTime::MAX, &mut delivered);
    assert_eq!(delivered.len(), 1);
    let err = |text: &str| parse("l.toml", text).expect_err("refused").to_string();
    assert_eq!(
        err("[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\n[network.levels.4]\nswitch = \"cioq\"\n"),
        "l.toml: network.levels.4: expected a level from 1 to 3"
    );
    assert_eq!(
        err(
            "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\nswitch = \"wormhole\"\n[network.levels.1]\nswitch = \"cioq\"\n"
        ),
        "l.toml: network.levels.1.switch: wormhole switches cannot share a network with other kinds: set switch = \
         \"wormhole\" for the whole network instead"
    );
    assert_eq!(
        err(
            "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\n[network.levels.1]\nswitch = \"output-queued\"\nspeedup = 2\n"
        ),
        "l.toml: network.levels.1.speedup: applies to switch = \"cioq\" only"
    );
    assert_eq!(
        err("[network]\n[network.levels.1]\nswitch = \"cioq\"\n"),
        "l.toml: network.levels: applies to kind = \"xgft\" or \"kary-ntree\", not \"crossbar\""
    );
}

#[test]
fn reads_tori_meshes_and_hypercubes() {
    let torus = parse(
        "t.toml",
        "[network]\nkind = \"torus\"\ndims = [4, 4]\nhosts_per_switch = 2\nswitch = \"wormhole\"\n\
         buffer_bytes = 9000\n",
    )
    .expect("valid");
    assert_eq!(torus.hosts, 32);
    let s = switched(&torus);
    assert_eq!(s.shape, Shape::Torus(Torus::new(vec![4, 4], true, 2).expect("valid")));
    assert_eq!(s.routing, RoutingPolicy::DimensionOrder);
    // Wormhole switches on rings take bubble flow control by default.
    assert!(matches!(s.switch.kind, SwitchKind::Wormhole(w) if w.bubble));
    torus.build().expect("builds");
    let mesh = parse(
        "m.toml",
        "[network]\nkind = \"mesh\"\ndims = [3, 5]\nswitch = \"wormhole\"\n",
    )
    .expect("valid");
    assert!(matches!(switched(&mesh).switch.kind, SwitchKind::Wormhole(w) if !w.bubble));
    mesh.build().expect("builds");
    let cube = parse("c.toml", "[network]\nkind = \"hypercube\"\ndimensions = 4\n").expect("valid");
    assert_eq!(
        (cube.hosts, switched(&cube).shape.clone()),
        (16, Shape::Torus(Torus::hypercube(4, 1).expect("valid")))
    );
    let err = |text: &str| parse("t.toml", text).expect_err("refused").to_string();
    assert_eq!(
        err("[network]\nkind = \"torus\"\ndims = [4, 1]\n"),
        "t.toml: network.dims[1]: every dimension needs at least 2 switches"
    );
    assert_eq!(
        err("[network]\nkind = \"torus\"\n"),
        "t.toml: network.dims: a torus needs its dims, e.g. dims = [8, 8, 8]"
    );
    assert_eq!(
        err("[network]\nkind = \"hypercube\"\ndimensions = 0\n"),
        "t.toml: network.dimensions: a hypercube needs at least one dimension"
    );
    assert_eq!(
        err("[network]\nkind = \"torus\"\ndims = [4, 4]\nrouting = \"d-mod-k\"\n"),
        "t.toml: network.routing: tori, meshes and hypercubes route in dimension order (routing = \
         \"dimension-order\")"
    );
    assert_eq!(
        err("[network]\nkind = \"kary-ntree\"\nk = 2\nn = 2\nrouting = \"dimension-order\"\n"),
        "t.toml: network.routing: dimension-order routes tori, meshes and hypercubes"
    );
    assert_eq!(
        err("[network]\nkind = \"mesh\"\ndims = [2, 2]\nhosts = 5\n"),
        "t.toml: network.hosts: this network has 4 hosts (its switches × hosts_per_switch), not 5; leave hosts out"
    );
    assert_eq!(
        err("[network]\nkind = \"mesh\"\ndims = [2, 2]\nbubble = true\n"),
        "t.toml: network.bubble: applies to switch = \"wormhole\" only"
    );
    // Bubble flow control off on a torus: the build says why it is needed.
    let off = parse(
        "t.toml",
        "[network]\nkind = \"torus\"\ndims = [4, 4]\nswitch = \"wormhole\"\nbubble = false\n",
    )
    .expect("valid description");
    let refused = off.build().expect_err("deadlock-prone").to_string();
    assert!(refused.contains("bubble"), "{refused}");
}

#[test]
fn reads_dragonflies() {
    // The balanced dragonfly of its p by default.
    let d = parse("d.toml", "[network]\nkind = \"dragonfly\"\np = 2\n").expect("valid");
    assert_eq!(d.hosts, 72);
    let s = switched(&d);
    assert_eq!(
        s.shape,
        Shape::Dragonfly(Dragonfly::new(2, 4, 2, 9, Arrangement::Absolute).expect("valid"))
    );
    assert_eq!(s.routing, RoutingPolicy::Minimal);
    d.build().expect("builds");
    let relative = parse(
        "d.toml",
        "[network]\nkind = \"dragonfly\"\np = 1\na = 3\nh = 2\ng = 5\narrangement = \"relative\"\n\
         routing = \"shortest-path\"\nswitch = \"cioq\"\n",
    )
    .expect("valid");
    assert_eq!(relative.hosts, 15);
    assert_eq!(switched(&relative).routing, RoutingPolicy::ShortestPath);
    relative.build().expect("builds");
    // Valiant and UGAL-L draw from the seed; UGAL-L's threshold is BookSim's 30 flits
    // unless given.
    let valiant = parse(
        "d.toml",
        "[network]\nkind = \"dragonfly\"\np = 2\nrouting = \"valiant\"\nseed = 9\n",
    )
    .expect("valid");
    assert_eq!(switched(&valiant).routing, RoutingPolicy::Valiant { seed: 9 });
    valiant.build().expect("builds");
    let ugal = |extra: &str| {
        let text = format!("[network]\nkind = \"dragonfly\"\np = 2\nrouting = \"ugal\"\nswitch = \"cioq\"\n{extra}");
        let d = parse("d.toml", &text).expect("valid");
        d.build().expect("builds");
        switched(&d).routing.clone()
    };
    assert_eq!(
        ugal(""),
        RoutingPolicy::Ugal {
            seed: 1,
            threshold: 240
        }
    );
    assert_eq!(
        ugal("ugal_threshold = 800\n"),
        RoutingPolicy::Ugal {
            seed: 1,
            threshold: 800
        }
    );
    let err = |text: &str| parse("d.toml", text).expect_err("refused").to_string();
    assert_eq!(
        err("[network]\nkind = \"dragonfly\"\n"),
        "d.toml: network.p: a dragonfly needs its hosts a router, e.g. p = 4 (1,056 hosts)"
    );
    assert_eq!(
        err("[network]\nkind = \"dragonfly\"\np = 2\ng = 10\n"),
        "d.toml: network.g: 10 groups need 9 global ports a group (one to each other group), but a·h = 8 (at \
         most 9 groups)"
    );
    assert_eq!(
        err("[network]\nkind = \"dragonfly\"\np = 2\nrouting = \"d-mod-k\"\n"),
        "d.toml: network.routing: dragonflies route minimal, valiant, ugal or shortest-path"
    );
    assert_eq!(
        err("[network]\nkind = \"dragonfly\"\np = 2\nugal_threshold = 100\n"),
        "d.toml: network.ugal_threshold: only routing = \"ugal\" has a threshold"
    );
    assert_eq!(
        err("[network]\nkind = \"torus\"\ndims = [4, 4]\nrouting = \"minimal\"\n"),
        "d.toml: network.routing: tori, meshes and hypercubes route in dimension order (routing = \
         \"dimension-order\")"
    );
    assert_eq!(
        err("[network]\nkind = \"crossbar\"\nrouting = \"minimal\"\n"),
        "d.toml: network.routing: minimal, valiant and ugal route dragonflies (kind = \"dragonfly\")"
    );
    assert_eq!(
        err("[network]\nkind = \"dragonfly\"\np = 2\ndims = [2]\n"),
        "d.toml: network.dims: applies to kind = \"torus\" or \"mesh\", not \"dragonfly\""
    );
    let wormhole = err("[network]\nkind = \"dragonfly\"\np = 2\nswitch = \"wormhole\"\n");
    assert!(
        wormhole.starts_with("d.toml: network.switch: wormhole switches without virtual channels"),
        "{wormhole}"
    );
}

/// Host cables take a delay of their own when given; the others keep the link's.
#[test]
fn host_cables_take_their_own_delay() {
    let d = parse(
        "h.toml",
        "[network]\nkind = \"kary-ntree\"\nk = 2\nn = 2\nhost_link_latency_ns = 5\n",
    )
    .expect("valid");
    let topology = switched(&d).topology();
    for cable in &topology.cables {
        let host = matches!(cable.a.device, vesper_netmodels::Device::Host(_))
            || matches!(cable.b.device, vesper_netmodels::Device::Host(_));
        let expected = if host { 5 } else { 25 };
        assert_eq!(cable.link.propagation, SimTime::from_ns(expected), "{cable:?}");
    }
    assert!(
        switched(&d)
            .describe()
            .contains("links 250 MB/s + 25.000 ns (host cables + 5.000 ns)")
    );
    let err = parse("h.toml", "[network]\nkind = \"crossbar\"\nhost_link_latency_ns = -2\n").expect_err("refused");
    assert_eq!(
        err.to_string(),
        "h.toml: network.host_link_latency_ns: expected a non-negative time in ns"
    );
}

#[test]
fn an_overlay_replaces_only_what_it_gives() {
    let mut spec = parse_spec("t.toml", "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\nseed = 3\n").expect("valid");
    spec.overlay(NetworkSpec {
        switch: Some(SwitchName::Wormhole),
        k: Some(8),
        ..NetworkSpec::default()
    });
    assert_eq!(
        (spec.kind, spec.k, spec.n, spec.seed),
        (Some(KindName::KaryNtree), Some(8), Some(2), Some(3))
    );
    assert_eq!(spec.resolve().expect("valid").hosts, 64);
}

#[test]
fn a_dimemas_machine_may_have_as_many_nodes_as_a_network_has_hosts() {
    // With `--network ideal` a configuration's nodes are the network's hosts.
    let most = vesper_client_dimemas_adapter::cfg::MAX_NODES;
    assert_eq!(host_count(most), Ok(most));
    assert!(host_count(most + 1).is_err());
}
