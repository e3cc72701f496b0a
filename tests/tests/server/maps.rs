//! Networks read from map and route files, over TCP: a built-in network written as a
//! map with its routes and read back replays exactly as the built-in one; up*/down*
//! routes keep wormhole switches on a ring out of deadlock; a task mapping names the
//! map's hosts.

use std::path::PathBuf;

use vesper_client_dimemas_adapter::replay::Workload;
use vesper_map2topo::routes::{RouteList, write_canonical, write_myrinet};
use vesper_map2topo::{NamedTopology, WriteOptions, write_map};
use vesper_netmodels::{HostId, LinkParams, Torus, Xgft};
use vesper_server::description::{parse, read};
use vesper_tests::replay_on;

/// A fresh folder for this test's files.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vesper-maps-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn a_tree_written_as_a_map_with_its_routes_replays_as_the_built_in_tree() {
    let dir = folder("tree");
    let x = Xgft::kary_ntree(4, 3).expect("valid");
    let net = NamedTopology::with_default_names(x.topology(LinkParams::default()));
    std::fs::write(
        dir.join("tree.map"),
        write_map(&net, WriteOptions::default()).expect("writable"),
    )
    .expect("write");
    let routes: RouteList = (0..64)
        .flat_map(|s| (0..64).filter(move |&d| d != s).map(move |d| (HostId(s), HostId(d))))
        .map(|(s, d)| ((s, d), x.d_mod_k_path(s, d)))
        .collect();
    std::fs::write(dir.join("tree.routes"), write_canonical(&routes, &net)).expect("write");
    std::fs::write(dir.join("tree.myri"), write_myrinet(&routes, &net).expect("turns fit")).expect("write");
    let built_in = parse(
        "preset",
        "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\nswitch = \"wormhole\"\n",
    )
    .expect("valid");
    let workloads = [Workload::all_to_all(16, 32_679), Workload::wrf(64, 16, 5000)];
    for routes in ["tree.routes", "tree.myri"] {
        let file = dir.join(format!("{routes}.toml"));
        std::fs::write(
            &file,
            format!("[network]\nkind = \"map\"\nmap = \"tree.map\"\nroutes = \"{routes}\"\nswitch = \"wormhole\"\n"),
        )
        .expect("write");
        let from_files = read(&file).expect("valid");
        for workload in &workloads {
            assert_eq!(
                replay_on(from_files.clone(), workload),
                replay_on(built_in.clone(), workload),
                "{routes}: {}",
                workload.name
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn up_down_routes_keep_a_wormhole_ring_out_of_deadlock() {
    let dir = folder("ring");
    let ring = Torus::new(vec![6], true, 2)
        .expect("valid")
        .topology(LinkParams::default());
    let net = NamedTopology::with_default_names(ring);
    std::fs::write(
        dir.join("ring.map"),
        write_map(&net, WriteOptions::default()).expect("writable"),
    )
    .expect("write");
    let text = |routing: &str| {
        format!("[network]\nkind = \"map\"\nmap = \"ring.map\"\nswitch = \"wormhole\"\nbuffer_bytes = 1024\n{routing}")
    };
    std::fs::write(dir.join("shortest.toml"), text("")).expect("write");
    let refused = read(&dir.join("shortest.toml"))
        .expect_err("deadlock-prone")
        .to_string();
    assert!(
        refused.contains("network.routing: routing \"shortest-path\" can deadlock wormhole switches: channels sw")
            && refused.ends_with("wait on each other in a cycle; use routing = \"up-down\""),
        "{refused}"
    );
    std::fs::write(dir.join("updown.toml"), text("routing = \"up-down\"\n")).expect("write");
    let network = read(&dir.join("updown.toml")).expect("valid");
    // Every host sends to every other at once: a ring's worst case.
    let outcome = replay_on(network, &Workload::all_to_all(12, 20_000));
    assert_eq!(outcome.messages, 12 * 11);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_task_mapping_names_the_maps_hosts() {
    let dir = folder("names");
    std::fs::write(
        dir.join("two.map"),
        "s - \"sw0\" 8\n0 h - \"n0\" 0\n1 h - \"n1\" 0\n7 s - \"sw1\" 4\n\n\
         s - \"sw1\" 8\n2 h - \"n2\" 0\n4 s - \"sw0\" 7\n\n\
         h - \"n0\" 1\n0 s - \"sw0\" 0\naddress 0060dd7f0001\n\n\
         h - \"n1\" 1\n0 s - \"sw0\" 1\n\n\
         h - \"n2\" 1\n0 s - \"sw1\" 2\n",
    )
    .expect("write");
    std::fs::write(dir.join("tasks"), "n2\nn0\n").expect("write");
    std::fs::write(
        dir.join("net.toml"),
        "[network]\nkind = \"map\"\nmap = \"two.map\"\nmapping = \"tasks\"\n",
    )
    .expect("write");
    let network = read(&dir.join("net.toml")).expect("valid");
    assert_eq!(network.hosts, 3);
    assert_eq!(network.placement.host_of(0), HostId(2));
    assert_eq!(network.placement.host_of(1), HostId(0));
    // Nodes 0 and 1 sit on different switches: two switches and the trunk apart.
    let outcome = replay_on(network, &Workload::ping_pong(1000, 2));
    assert_eq!(outcome.messages, 4);
    std::fs::write(dir.join("tasks"), "n9\n").expect("write");
    let err = read(&dir.join("net.toml")).expect_err("unknown host").to_string();
    assert!(
        err.ends_with("tasks:1: expected a host of the map (n0 … n2) (or its number), got `n9`"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_maps_types_choose_switch_and_adapter_models() {
    let dir = folder("models");
    std::fs::write(
        dir.join("typed.map"),
        "s - \"sw0\" 8\n0 h - \"n0\" 0\n7 s - \"sw1\" 4\ntype xbar32\n\n\
         s - \"sw1\" 8\n2 h - \"n1\" 0\n4 s - \"sw0\" 7\ntype xbar16\n\n\
         h - \"n0\" 1\n0 s - \"sw0\" 0\ntype lanai9\n\nh - \"n1\" 1\n0 s - \"sw1\" 2\n",
    )
    .expect("write");
    let text = |models: &str| format!("[network]\nkind = \"map\"\nmap = \"typed.map\"\n{models}");
    std::fs::write(
        dir.join("net.toml"),
        text(
            "[network.models.xbar16]\nswitch = \"cioq\"\nspeedup = 2\n\
             [network.models.lanai9]\npacket_payload_bytes = 1024\n",
        ),
    )
    .expect("write");
    let network = read(&dir.join("net.toml")).expect("valid");
    let vesper_server::config::FabricConfig::Switched(s) = &network.fabric else {
        panic!("one network");
    };
    assert_eq!(
        s.switch_kinds,
        vec![(
            1,
            vesper_netmodels::SwitchKind::Cioq(vesper_netmodels::CioqParams {
                speedup: 2,
                virtual_output_queues: false
            })
        )]
    );
    // Host n0's adapter cuts 1 KiB packets.
    assert_eq!(
        s.host_adapters,
        vec![(
            0,
            vesper_netmodels::AdapterParams {
                payload_bytes: 1024,
                ..vesper_netmodels::AdapterParams::default()
            }
        )]
    );
    assert_eq!(replay_on(network, &Workload::ping_pong(5000, 2)).messages, 4);
    std::fs::write(
        dir.join("net.toml"),
        text("[network.models.xbar64]\nswitch = \"cioq\"\n"),
    )
    .expect("write");
    let err = read(&dir.join("net.toml")).expect_err("no such type").to_string();
    assert!(
        err.ends_with("network.models.xbar64: no switch or host of the map has type xbar64"),
        "{err}"
    );
    std::fs::write(
        dir.join("net.toml"),
        text("[network.models.lanai9]\nswitch = \"cioq\"\n"),
    )
    .expect("write");
    let err = read(&dir.join("net.toml")).expect_err("a host type").to_string();
    assert!(
        err.ends_with("network.models.lanai9.switch: type lanai9 is a host's: no switch"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
