use vesper_netmodels::Topology;

use super::*;

/// The counts of a rail read off the topology it builds (what the footprint counts
/// without building it).
fn counts_built(s: &SwitchedConfig) -> RailCounts {
    let t: Topology = s.topology();
    // The built topology's own counts and routing.
    let counts = ShapeCounts::of(&t);
    let routes = RouteCounts::of(&t.routing, &counts);
    // The kind of every switch, as `SwitchedConfig::builder` gives them.
    let mut kinds = vec![s.switch.kind; t.switch_ports.len()];
    if let Shape::Xgft(x) = &s.shape {
        for &(level, kind) in &s.level_kinds {
            let first: u32 = (1..level as usize).map(|l| x.nodes(l)).sum();
            for sw in first..first + x.nodes(level as usize) {
                kinds[sw as usize] = kind;
            }
        }
    }
    for &(sw, kind) in &s.switch_kinds {
        kinds[sw as usize] = kind;
    }
    let cioq: Vec<usize> = (0..kinds.len())
        .filter(|&i| matches!(kinds[i], SwitchKind::Cioq(_)))
        .collect();
    RailCounts {
        hosts: counts.hosts,
        switches: counts.switches,
        switch_ports: counts.switch_ports,
        cables: counts.cables,
        cioq_switches: cioq.len() as u64,
        cioq_ports: cioq.iter().map(|&i| u64::from(t.switch_ports[i])).sum(),
        cioq_voq: !cioq.is_empty()
            && cioq
                .iter()
                .all(|&i| matches!(kinds[i], SwitchKind::Cioq(c) if c.virtual_output_queues)),
        wormhole: matches!(s.switch.kind, SwitchKind::Wormhole(_)),
        routes,
    }
}

fn network(text: &str) -> NetworkConfig {
    crate::description::parse("net.toml", text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn counts_from_the_description_are_the_built_networks() {
    let dir = std::env::temp_dir().join(format!("vesper-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    // A map, with routes taken in turn (a turn per pair of hosts).
    let tree = network("[network]\nkind = \"xgft\"\nm = [4, 3]\nw = [1, 2]\n");
    let FabricConfig::Switched(s) = &tree.fabric else {
        panic!("one rail")
    };
    let named = vesper_map2topo::NamedTopology::with_default_names(s.topology());
    let map = dir.join("tree.map");
    let text =
        vesper_map2topo::MapFile::from_rails(std::slice::from_ref(&named), vesper_map2topo::WriteOptions::default())
            .expect("a map")
            .to_string();
    std::fs::write(&map, text).expect("map written");
    let routes = dir.join("tree.routes");
    let list = vesper_map2topo::generate::routes_of(&named.topology).expect("routes");
    std::fs::write(&routes, vesper_map2topo::routes::write_canonical(&list, &named)).expect("routes written");
    let networks = [
        "[network]\nkind = \"crossbar\"\nhosts = 100\n".to_string(),
        "[network]\nkind = \"crossbar\"\nhosts = 30\nswitch = \"cioq\"\nvirtual_output_queues = true\n".into(),
        "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\n".into(),
        "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\nk_up = 2\nrouting = \"shortest-path\"\n".into(),
        "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\nrouting = \"s-mod-k\"\nswitch = \"wormhole\"\n".into(),
        "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\nswitch = \"cioq\"\n[network.levels.2]\nswitch = \
         \"output-queued\"\n"
            .into(),
        "[network]\nkind = \"xgft\"\nm = [4, 3]\nw = [1, 2]\n[network.levels.2]\nswitch = \"cioq\"\n".into(),
        "[network]\nkind = \"torus\"\ndims = [4, 3, 2]\nhosts_per_switch = 2\n".into(),
        "[network]\nkind = \"mesh\"\ndims = [5, 2]\nswitch = \"cioq\"\n".into(),
        "[network]\nkind = \"hypercube\"\ndimensions = 4\n".into(),
        "[network]\nkind = \"multi-rail\"\n[[network.rails]]\npreset = \"kary-ntree\"\n[[network.rails]]\nkind = \
         \"xgft\"\nm = [8, 8]\nw = [1, 4]\nrouting = \"shortest-path\"\n"
            .into(),
        format!("[network]\nkind = \"map\"\nmap = \"{}\"\n", map.display()),
        format!(
            "[network]\nkind = \"map\"\nmap = \"{}\"\nroutes = [\"{}\"]\nroute_policy = \"round-robin\"\n",
            map.display(),
            routes.display()
        ),
    ];
    for text in &networks {
        let net = network(text);
        let rails: Vec<&SwitchedConfig> = match &net.fabric {
            FabricConfig::Switched(s) => vec![s],
            FabricConfig::MultiRail { rails, .. } => rails.iter().collect(),
            FabricConfig::Ideal(_) => Vec::new(),
        };
        let built: Vec<RailCounts> = rails.iter().map(|s| counts_built(s)).collect();
        assert_eq!(network_counts(&net), built, "{text}");
    }
    let ideal = network("[network]\nkind = \"ideal\"\nbandwidth_mbps = 250\n");
    assert_eq!(footprint(&ideal, 4), Footprint::default());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn sizes_are_read_with_binary_units() {
    let sizes = ["8G", "512M", "1.5G", "1000000", "64k", "2GiB", "3 MB", "1T"].map(parse_size);
    assert_eq!(
        sizes,
        [
            Ok(8 << 30),
            Ok(512 << 20),
            Ok(3 << 29),
            Ok(1_000_000),
            Ok(64 << 10),
            Ok(2 << 30),
            Ok(3 << 20),
            Ok(1 << 40)
        ]
    );
    for bad in ["", "G", "8X", "-1G", "0", "1e3", "8G8"] {
        assert!(parse_size(bad).is_err(), "{bad:?}");
    }
    assert_eq!(
        [100, 2048, 3 << 20, 5 << 29].map(size_text),
        ["100 bytes", "2.0 KiB", "3.0 MiB", "2.50 GiB"]
    );
}

#[test]
fn the_machine_is_read_from_proc_and_the_cgroups() {
    let meminfo = "MemTotal:       24684092 kB\nMemFree:        23285164 kB\nMemAvailable:   24016520 kB\n";
    assert_eq!(meminfo_available(meminfo), Some(24_016_520 * 1024));
    let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                  Max address space         2147483648           unlimited            bytes     \n";
    assert_eq!(address_space_limit(limits), Some(1 << 31));
    let unlimited = "Max address space         unlimited            unlimited            bytes     \n";
    assert_eq!(address_space_limit(unlimited), None);
    let root = Path::new("/sys/fs/cgroup");
    // v2: the process's cgroup and each above it; v1: the memory controller's.
    assert_eq!(
        cgroup_dirs("0::/a/b\n", root),
        [root.join("a/b"), root.join("a"), root.to_path_buf()]
    );
    assert_eq!(
        cgroup_dirs("5:cpu:/x\n4:memory,foo:/c\n", root),
        [root.join("memory/c"), root.join("memory")]
    );
    // Limits and usages, v2 then v1; "max" and v1's huge number are no limit.
    let files = |dir: &str, list: &'static [(&'static str, &'static str)]| {
        let dir = dir.to_string();
        move |path: &Path| {
            list.iter()
                .find(|(name, _)| path == Path::new(&dir).join(name))
                .map(|(_, text)| text.to_string())
        }
    };
    let v2 = files(
        "/g",
        &[("memory.max", "1073741824\n"), ("memory.current", "73741824\n")],
    );
    assert_eq!(cgroup_room(Path::new("/g"), &v2), Some(1_000_000_000));
    let v2_none = files("/g", &[("memory.max", "max\n"), ("memory.current", "5\n")]);
    assert_eq!(cgroup_room(Path::new("/g"), &v2_none), None);
    let v1 = files(
        "/m",
        &[("memory.limit_in_bytes", "2000\n"), ("memory.usage_in_bytes", "500\n")],
    );
    assert_eq!(cgroup_room(Path::new("/m"), &v1), Some(1500));
    let v1_none = files(
        "/m",
        &[
            ("memory.limit_in_bytes", "9223372036854771712\n"),
            ("memory.usage_in_bytes", "500\n"),
        ],
    );
    assert_eq!(cgroup_room(Path::new("/m"), &v1_none), None);
    // This machine: some figure, or none off Linux.
    if cfg!(target_os = "linux") {
        assert!(machine_room().is_some_and(|l| l.bytes > 0));
    }
}

#[test]
fn a_network_larger_than_the_limit_is_refused_with_both_figures() {
    let net = network("[network]\nkind = \"torus\"\ndims = [200, 200, 200]\n");
    let peak = footprint(&net, 1).peak;
    let limit = |bytes| Limit {
        bytes,
        from: "--max-memory allows".into(),
    };
    assert!(check(&net, 1, 1, &limit(peak)).is_ok());
    let refused = check(&net, 1, 1, &limit(peak - 1)).expect_err("too large").to_string();
    assert_eq!(
        refused,
        format!(
            "the network does not fit in memory: it needs about {} to build and simulate (estimated from its \
             description: 8000000 hosts, 8000000 switches, 64000000 ports, 32000000 cables), more than the {} \
             --max-memory allows",
            size_text(peak),
            size_text(peak - 1)
        )
    );
    // Partitions hold their own wiring and routes; points built at once, a network each.
    assert!(footprint(&net, 4).peak > peak);
    let two = check(&net, 1, 2, &limit(2 * peak - 1))
        .expect_err("two at once")
        .to_string();
    assert!(two.contains("each, 2 built at once"), "{two}");
}
