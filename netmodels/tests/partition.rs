//! The partitioners of the parallel engine: every device in a part, no part empty,
//! balance, the cables each partitioner cuts, determinism, errors and lookahead.

use std::time::Instant;

use vesper_netmodels::partition::{PartitionError, Partitioning, Strategy, lookahead, partition, partition_graph};
use vesper_netmodels::rng::Rng;
use vesper_netmodels::{
    Bandwidth, Cable, Device, Endpoint, HostId, LinkParams, Routing, SimTime, SwitchId, Topology, Torus, Xgft,
};

fn link() -> LinkParams {
    LinkParams::default()
}

fn torus(dims: &[u32], wrap: bool, hosts_per_switch: u32) -> Topology {
    Torus::new(dims.to_vec(), wrap, hosts_per_switch)
        .expect("valid torus")
        .topology(link())
}

fn kary_ntree(k: u32, n: u32) -> Topology {
    Xgft::kary_ntree(k, n).expect("valid tree").topology(link())
}

fn hypercube(n: u32) -> Topology {
    Torus::hypercube(n, 1).expect("valid hypercube").topology(link())
}

fn switch(s: u32, port: u32) -> Endpoint {
    Endpoint {
        device: Device::Switch(SwitchId(s)),
        port,
    }
}

fn host(h: u32) -> Endpoint {
    Endpoint {
        device: Device::Host(HostId(h)),
        port: 0,
    }
}

/// A `side`×`side` torus of switches, one host each, numbered at random, with `extra`
/// random cables on a spare port, routed by shortest paths: a graph whose ids say
/// nothing about where a switch is.
fn scrambled_torus(side: u32, extra: u32, seed: u64) -> Topology {
    let n = side * side;
    let mut rng = Rng::new(seed);
    let mut label: Vec<u32> = (0..n).collect();
    for i in (1..n as usize).rev() {
        label.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut cables: Vec<Cable> = (0..n)
        .map(|h| Cable {
            a: host(h),
            b: switch(h, 0),
            link: link(),
        })
        .collect();
    for y in 0..side {
        for x in 0..side {
            let here = label[(y * side + x) as usize];
            let east = label[(y * side + (x + 1) % side) as usize];
            let north = label[(((y + 1) % side) * side + x) as usize];
            cables.push(Cable {
                a: switch(here, 1),
                b: switch(east, 2),
                link: link(),
            });
            cables.push(Cable {
                a: switch(here, 3),
                b: switch(north, 4),
                link: link(),
            });
        }
    }
    let mut spare: Vec<u32> = (0..n).collect();
    for _ in 0..extra {
        let a = spare.swap_remove(rng.below(spare.len() as u64) as usize);
        let b = spare.swap_remove(rng.below(spare.len() as u64) as usize);
        cables.push(Cable {
            a: switch(a, 5),
            b: switch(b, 5),
            link: link(),
        });
    }
    Topology {
        hosts: n,
        switch_ports: vec![6; n as usize],
        cables,
        routing: Routing::ShortestPath,
    }
}

/// Parts of consecutive switch ids, ⌊n/P⌋ or ⌈n/P⌉ each.
fn contiguous(topology: &Topology, parts: u32) -> Partitioning {
    let n = topology.switch_ports.len() as u64;
    let of_switch = (0..n).map(|s| (s * u64::from(parts) / n) as u32).collect();
    Partitioning::from_switches(topology, parts, of_switch).expect("valid assignment")
}

/// Every switch and host in a part below P, no part without switches, counts that add
/// up, and each host in its switch's part.
fn check_assignment(topology: &Topology, p: &Partitioning) {
    let parts = p.parts();
    for s in 0..topology.switch_ports.len() as u32 {
        assert!(p.of_switch(SwitchId(s)) < parts);
    }
    for h in 0..topology.hosts {
        assert!(p.of_host(HostId(h)) < parts);
    }
    let switches = p.switches_per_part();
    assert_eq!(switches.len(), parts as usize);
    assert!(switches.iter().all(|&c| c > 0), "an empty part: {switches:?}");
    assert_eq!(switches.iter().sum::<u32>() as usize, topology.switch_ports.len());
    assert_eq!(p.hosts_per_part().iter().sum::<u32>(), topology.hosts);
    for cable in &topology.cables {
        if let (Device::Host(h), Device::Switch(s)) | (Device::Switch(s), Device::Host(h)) =
            (cable.a.device, cable.b.device)
        {
            assert_eq!(p.of_host(h), p.of_switch(s), "host{h} is not with sw{s}");
        }
    }
    assert_eq!(p.switches_in(0).count() as u32, switches[0]);
    assert_eq!(p.hosts_in(0).count() as u32, p.hosts_per_part()[0]);
}

fn spread(p: &Partitioning) -> u32 {
    let counts = p.switches_per_part();
    counts.iter().max().unwrap() - counts.iter().min().unwrap()
}

fn zoo() -> Vec<(&'static str, Topology)> {
    vec![
        ("crossbar", Topology::crossbar(8, link())),
        ("4-ary 3-tree", kary_ntree(4, 3)),
        ("2-ary 4-tree", kary_ntree(2, 4)),
        (
            "slimmed tree",
            Xgft::new(vec![4, 4, 3], vec![1, 2, 3]).unwrap().topology(link()),
        ),
        ("6x4x5 torus", torus(&[6, 4, 5], true, 2)),
        ("5x3 mesh", torus(&[5, 3], false, 1)),
        ("5-cube", hypercube(5)),
        ("scrambled torus", scrambled_torus(12, 10, 7)),
    ]
}

#[test]
fn every_device_is_in_a_part_and_no_part_is_empty() {
    for (name, topology) in zoo() {
        let switches = topology.switch_ports.len() as u32;
        for parts in 1..=switches.min(17) {
            let p = partition(&topology, parts).unwrap_or_else(|e| panic!("{name} into {parts}: {e}"));
            assert_eq!(p.parts(), parts);
            check_assignment(&topology, &p);
        }
    }
}

#[test]
fn partitions_are_deterministic() {
    for (name, topology) in zoo() {
        let switches = topology.switch_ports.len() as u32;
        for parts in [2, 3, 5] {
            if parts <= switches {
                assert_eq!(
                    partition(&topology, parts),
                    partition(&topology, parts),
                    "{name} into {parts}"
                );
                assert_eq!(
                    partition_graph(&topology, parts),
                    partition_graph(&topology, parts),
                    "{name} into {parts}"
                );
            }
        }
    }
}

#[test]
fn torus_slabs_cut_the_expected_cables() {
    // 8×8×8 into 4: slabs of two planes across dimension 2 (the last of the largest);
    // a ring of 4 slabs has 4 boundaries, each cutting the 64 lines along dimension 2.
    let topology = torus(&[8, 8, 8], true, 1);
    let p = partition(&topology, 4).unwrap();
    assert_eq!(p.strategy(), Strategy::Slabs { dimension: 2 });
    assert_eq!(p.switches_per_part(), [128; 4]);
    assert_eq!(p.hosts_per_part(), [128; 4]);
    assert_eq!(p.cut_count(&topology), 4 * 64);
    // every cut cable runs along dimension 2: ports 1 + 2·2 (+) and 6 (−)
    assert!(p.cut_cables(&topology).all(|c| c.a.port == 5 && c.b.port == 6));

    // a mesh has no wraparound: 3 boundaries
    let mesh = torus(&[8, 8, 8], false, 1);
    assert_eq!(partition(&mesh, 4).unwrap().cut_count(&mesh), 3 * 64);

    // 10 planes into 3: 3, 3 and 4 planes of 6 switches, 3 boundaries of 6 lines
    let uneven = torus(&[10, 6], true, 2);
    let p = partition(&uneven, 3).unwrap();
    assert_eq!(p.strategy(), Strategy::Slabs { dimension: 0 });
    assert_eq!(p.switches_per_part(), [18, 18, 24]);
    assert_eq!(p.hosts_per_part(), [36, 36, 48]);
    assert_eq!(p.cut_count(&uneven), 3 * 6);

    // as many parts as planes
    let p = partition(&uneven, 10).unwrap();
    assert_eq!(p.switches_per_part(), [6; 10]);
    assert_eq!(p.cut_count(&uneven), 10 * 6);
}

#[test]
fn more_parts_than_planes_fall_back_to_the_graph_partitioner() {
    // the 6-cube into 4: the best cut, two dimensions' 32 cables each
    let cube = hypercube(6);
    let p = partition(&cube, 4).unwrap();
    assert_eq!(p.strategy(), Strategy::Graph);
    assert_eq!(p.switches_per_part(), [16; 4]);
    assert_eq!(p.cut_count(&cube), 64);
    // into 2: one dimension
    let p = partition(&cube, 2).unwrap();
    assert_eq!(p.strategy(), Strategy::Slabs { dimension: 5 });
    assert_eq!(p.cut_count(&cube), 32);

    let small = torus(&[4, 3], true, 1);
    let p = partition(&small, 6).unwrap();
    assert_eq!(p.strategy(), Strategy::Graph);
    assert_eq!(p.switches_per_part(), [2; 6]);
}

#[test]
fn a_kary_ntree_into_k_parts_cuts_only_cables_to_the_top() {
    for (k, n) in [(4, 3), (2, 4), (8, 2), (3, 4)] {
        let xgft = Xgft::kary_ntree(k, n).unwrap();
        let topology = xgft.topology(link());
        let p = partition(&topology, k).unwrap();
        assert_eq!(p.strategy(), Strategy::Subtrees);
        let per_level = k.pow(n - 1);
        let switches = xgft.switches();
        assert_eq!(
            p.switches_per_part(),
            vec![switches / k; k as usize],
            "{k}-ary {n}-tree"
        );
        assert_eq!(p.hosts_per_part(), vec![xgft.hosts() / k; k as usize]);
        let top = switches - per_level;
        let is_top = |e: Endpoint| matches!(e.device, Device::Switch(s) if s.0 >= top);
        assert!(p.cut_cables(&topology).all(|c| is_top(c.a) || is_top(c.b)));
        // each top switch keeps one of its k cables down
        assert_eq!(p.cut_count(&topology) as u32, per_level * (k - 1), "{k}-ary {n}-tree");
    }
}

#[test]
fn subtrees_follow_the_tree_and_stay_balanced() {
    // 4-ary 3-tree into 2: halves of the root's subtrees
    let topology = kary_ntree(4, 3);
    let p = partition(&topology, 2).unwrap();
    assert_eq!(p.switches_per_part(), [24, 24]);
    assert_eq!(p.cut_count(&topology), 16 * 2);
    // leaves 0..8 left, 8..16 right, level 2 with them
    for s in 0..32 {
        assert_eq!(p.of_switch(SwitchId(s)), (s % 16) / 8, "sw{s}");
    }
    // 4-ary 3-tree into 16: a leaf each, with a switch of level 2 and of level 3
    let p = partition(&topology, 16).unwrap();
    assert_eq!(p.switches_per_part(), [3; 16]);
    for s in 0..16 {
        assert_eq!(p.of_switch(SwitchId(s)), s);
    }
    // not divisible: within a switch or two of each other
    for (name, topology) in zoo() {
        if matches!(topology.routing, Routing::DModK(_)) {
            let leaves = match &topology.routing {
                Routing::DModK(x) => x.nodes(1),
                _ => unreachable!(),
            };
            for parts in 2..=leaves {
                let p = partition(&topology, parts).unwrap();
                assert_eq!(p.strategy(), Strategy::Subtrees);
                assert!(spread(&p) <= 1, "{name} into {parts}: {:?}", p.switches_per_part());
            }
        }
    }
}

#[test]
fn the_graph_partitioner_cuts_fewer_cables_than_a_contiguous_split() {
    let topology = scrambled_torus(30, 40, 2026);
    let switches = topology.switch_ports.len() as u32;
    for parts in [2, 3, 4, 7, 16] {
        let p = partition(&topology, parts).unwrap();
        assert_eq!(p.strategy(), Strategy::Graph);
        check_assignment(&topology, &p);
        let naive = contiguous(&topology, parts).cut_count(&topology);
        let cut = p.cut_count(&topology);
        println!("scrambled 30×30 torus into {parts}: cut {cut}, contiguous ids {naive}");
        // a clean 30×30 torus cut into parts of rows cuts 60 per boundary: allow for
        // the extra cables and the parts' shapes, far below the naive split
        assert!(cut * 3 < naive, "into {parts}: cut {cut}, naive {naive}");
        // exact halves at every bisection: off by at most log2(P) from ⌊n/P⌋
        let floor = switches / parts;
        let counts = p.switches_per_part();
        let bound = parts.ilog2() + 1;
        assert!(
            counts.iter().all(|&c| c + bound >= floor && c <= floor + bound),
            "into {parts}: {counts:?}"
        );
    }
}

#[test]
fn the_graph_partitioner_handles_disconnected_networks_and_parallel_cables() {
    // two lines of 3 switches, no cable between the lines; double cables in each line
    let mut cables = Vec::new();
    for first in [0, 3] {
        for s in first..first + 3 {
            cables.push(Cable {
                a: host(s),
                b: switch(s, 0),
                link: link(),
            });
        }
        for s in first..first + 2 {
            for lane in 0..2 {
                cables.push(Cable {
                    a: switch(s, 1 + lane),
                    b: switch(s + 1, 3 + lane),
                    link: link(),
                });
            }
        }
    }
    let topology = Topology {
        hosts: 6,
        switch_ports: vec![5; 6],
        cables,
        routing: Routing::ShortestPath,
    };
    let p = partition(&topology, 2).unwrap();
    check_assignment(&topology, &p);
    assert_eq!(p.cut_count(&topology), 0);
    assert_eq!(lookahead(&topology, &p, SimTime::from_ns(100), 64), None);
    // three parts of two: each line is cut once, two cables each
    let p = partition(&topology, 3).unwrap();
    check_assignment(&topology, &p);
    assert_eq!(p.switches_per_part(), [2; 3]);
    assert_eq!(p.cut_count(&topology), 4);
}

#[test]
fn hosts_go_with_their_switch() {
    let topology = torus(&[6, 4], true, 3);
    let p = partition(&topology, 3).unwrap();
    for h in 0..topology.hosts {
        assert_eq!(p.of_host(HostId(h)), p.of_switch(SwitchId(h / 3)));
    }
    assert_eq!(
        p.hosts_per_part(),
        p.switches_per_part().iter().map(|c| 3 * c).collect::<Vec<_>>()
    );

    // a pair of hosts on one cable: one part, nothing cut
    let pair = Topology {
        hosts: 2,
        switch_ports: vec![],
        cables: vec![Cable {
            a: host(1),
            b: host(0),
            link: link(),
        }],
        routing: Routing::ShortestPath,
    };
    let p = partition(&pair, 1).unwrap();
    assert_eq!(p.strategy(), Strategy::Whole);
    assert_eq!((p.of_host(HostId(0)), p.of_host(HostId(1))), (0, 0));
    assert_eq!(p.cut_count(&pair), 0);
}

#[test]
fn errors_name_the_parts_and_the_switches() {
    let topology = kary_ntree(2, 2);
    assert_eq!(partition(&topology, 0), Err(PartitionError::Zero));
    assert_eq!(partition_graph(&topology, 0), Err(PartitionError::Zero));
    let too_many = partition(&topology, 5).unwrap_err();
    assert_eq!(too_many, PartitionError::MoreThanSwitches { parts: 5, switches: 4 });
    assert!(
        too_many
            .to_string()
            .contains("5 partitions asked for, but the network has 4 switches")
    );
    assert!(partition(&topology, 4).is_ok());
    assert_eq!(
        partition(&Topology::crossbar(4, link()), 2),
        Err(PartitionError::MoreThanSwitches { parts: 2, switches: 1 })
    );
    let pair = Topology {
        hosts: 2,
        switch_ports: vec![],
        cables: vec![Cable {
            a: host(0),
            b: host(1),
            link: link(),
        }],
        routing: Routing::ShortestPath,
    };
    assert_eq!(
        partition(&pair, 2),
        Err(PartitionError::MoreThanSwitches { parts: 2, switches: 0 })
    );

    let mut broken = Topology::crossbar(2, link());
    broken.cables[1].b = switch(3, 1);
    assert_eq!(
        partition(&broken, 1),
        Err(PartitionError::UnknownDevice {
            cable: 1,
            device: Device::Switch(SwitchId(3))
        })
    );

    assert_eq!(
        Partitioning::from_switches(&topology, 2, vec![0, 1, 0]),
        Err(PartitionError::WrongLength { given: 3, switches: 4 })
    );
    assert_eq!(
        Partitioning::from_switches(&topology, 2, vec![0, 1, 2, 0]),
        Err(PartitionError::PartOutOfRange {
            switch: 2,
            part: 2,
            parts: 2
        })
    );
    assert_eq!(
        Partitioning::from_switches(&topology, 3, vec![0, 2, 2, 0]),
        Err(PartitionError::EmptyPart { part: 1 })
    );
    let given = Partitioning::from_switches(&topology, 2, vec![0, 1, 1, 0]).unwrap();
    assert_eq!(given.strategy(), Strategy::Given);
    check_assignment(&topology, &given);
}

#[test]
fn lookahead_is_the_quickest_cut_cable() {
    let mut topology = torus(&[8, 4], true, 1);
    let routing = SimTime::from_ns(100);
    let p = partition(&topology, 2).unwrap();
    assert_eq!(p.strategy(), Strategy::Slabs { dimension: 0 });
    // 25 ns of cable, 64 bytes at 250 B/µs (256 ns), a routing decision
    let expected = SimTime::from_ns(25 + 256 + 100);
    assert_eq!(lookahead(&topology, &p, routing, 64), Some(expected));
    assert_eq!(lookahead(&topology, &p, SimTime::ZERO, 0), Some(SimTime::from_ns(25)));

    // a quicker cable inside a part changes nothing; across the cut it does
    let inside = topology
        .cables
        .iter()
        .position(|c| p.of_device(c.a.device) == p.of_device(c.b.device) && matches!(c.a.device, Device::Switch(_)))
        .unwrap();
    topology.cables[inside].link.propagation = SimTime::from_ns(1);
    assert_eq!(lookahead(&topology, &p, routing, 64), Some(expected));
    let across = topology
        .cables
        .iter()
        .position(|c| p.of_device(c.a.device) != p.of_device(c.b.device))
        .unwrap();
    topology.cables[across].link = LinkParams {
        bandwidth: Bandwidth::from_bytes_per_second(1_000_000_000).unwrap(),
        propagation: SimTime::from_ns(5),
    };
    assert_eq!(
        lookahead(&topology, &p, routing, 64),
        Some(SimTime::from_ns(5 + 64 + 100))
    );

    // one part: nothing is cut
    let whole = partition(&topology, 1).unwrap();
    assert_eq!(whole.cut_count(&topology), 0);
    assert_eq!(lookahead(&topology, &whole, routing, 64), None);
}

#[test]
fn a_million_switch_torus_partitions_quickly() {
    let started = Instant::now();
    let topology = torus(&[100, 100, 100], true, 1);
    println!("built the 100×100×100 torus in {:?}", started.elapsed());
    let started = Instant::now();
    let p = partition(&topology, 4).unwrap();
    println!("slabs into 4 in {:?}", started.elapsed());
    assert_eq!(p.strategy(), Strategy::Slabs { dimension: 2 });
    assert_eq!(p.switches_per_part(), [250_000; 4]);
    assert_eq!(p.cut_count(&topology), 4 * 10_000);
}

#[test]
fn the_graph_partitioner_nearly_finds_the_slabs_of_a_torus() {
    let topology = torus(&[40, 40, 40], true, 1);
    let started = Instant::now();
    let p = partition_graph(&topology, 4).unwrap();
    let cut = p.cut_count(&topology);
    println!(
        "graph partitioner, 40×40×40 torus into 4: {:?}, cut {cut} (slabs: 6400)",
        started.elapsed()
    );
    assert_eq!(p.switches_per_part(), [16_000; 4]);
    assert!(cut * 10 <= 6400 * 12, "cut {cut}");
}

/// The graph partitioner on the million switches: about 10 s in a debug build, 1 s in
/// a release build, so run by hand
/// (`cargo test --release -p vesper-netmodels --test partition -- --ignored`).
#[test]
#[ignore = "10 s in a debug build"]
fn the_graph_partitioner_handles_a_million_switches() {
    let topology = torus(&[100, 100, 100], true, 1);
    let started = Instant::now();
    let p = partition_graph(&topology, 4).unwrap();
    let cut = p.cut_count(&topology);
    println!(
        "graph partitioner, 100×100×100 torus into 4: {:?}, cut {cut} (slabs: 40000), parts {:?}",
        started.elapsed(),
        p.switches_per_part()
    );
    assert!(spread(&p) <= 2);
    assert!(cut * 10 <= 40_000 * 11, "cut {cut}");
}
