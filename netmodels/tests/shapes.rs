//! Every shape answers for itself ([`Shape`]): its counts, diameter and cut agree with
//! the topology it builds, and a network of it carries a message between every pair of
//! hosts. The shapes vesper has are checked here, and so is a toy one, `Star`, written
//! here as a template: a new shape is a type with an `impl Shape` (then one line in the
//! server's `shapes!` registry, see `docs/layout.md`); adding it to `shapes()` below
//! checks it as the others are.

use std::collections::{BTreeSet, VecDeque};

use vesper_netmodels::partition::Partitioning;
use vesper_netmodels::topology::{Crossbar, RoutingPolicy, Shape, ShapeCounts, Strategy, TopologyError};
use vesper_netmodels::{
    Arrangement, Cable, Device, Dragonfly, Endpoint, HostId, LinkParams, MessageSpec, NetworkBuilder, Routing, SimTime,
    SwitchId, Topology, Torus, Xgft,
};

/// The toy shape: a hub switch with `leaves` leaf switches, each with `hosts_per_leaf`
/// hosts. Hub port `i` leads to leaf `i` (switch `i + 1`); a leaf's ports are its hosts,
/// then the hub.
#[derive(Debug)]
struct Star {
    leaves: u32,
    hosts_per_leaf: u32,
}

impl Shape for Star {
    fn name(&self) -> String {
        format!("star of {} leaves", self.leaves)
    }

    fn counts(&self) -> ShapeCounts {
        let (leaves, hosts) = (u64::from(self.leaves), u64::from(self.leaves * self.hosts_per_leaf));
        ShapeCounts {
            hosts,
            switches: leaves + 1,
            switch_ports: leaves + leaves * (u64::from(self.hosts_per_leaf) + 1),
            cables: hosts + leaves,
            switches_with_hosts: leaves,
            switch_cables: leaves,
        }
    }

    fn try_topology(&self, link: LinkParams) -> Result<Topology, TopologyError> {
        let c = self.hosts_per_leaf;
        let end = |device, port| Endpoint { device, port };
        let mut cables: Vec<Cable> = (0..self.leaves * c)
            .map(|h| Cable {
                a: end(Device::Host(HostId(h)), 0),
                b: end(Device::Switch(SwitchId(h / c + 1)), h % c),
                link,
            })
            .collect();
        cables.extend((0..self.leaves).map(|i| Cable {
            a: end(Device::Switch(SwitchId(0)), i),
            b: end(Device::Switch(SwitchId(i + 1)), c),
            link,
        }));
        let mut switch_ports = vec![self.leaves];
        switch_ports.extend(std::iter::repeat_n(c + 1, self.leaves as usize));
        Ok(Topology {
            hosts: self.leaves * c,
            switch_ports,
            cables,
            routing: Routing::ShortestPath,
        })
    }

    fn diameter_links(&self) -> Option<u32> {
        Some(match (self.leaves, self.hosts_per_leaf) {
            (l, _) if l > 1 => 4,
            (_, c) if c > 1 => 2,
            _ => 0,
        })
    }

    fn bisection_cables(&self) -> Option<u64> {
        // Half the leaves on each side, the hub on one: the other half's hub cables.
        self.leaves.is_multiple_of(2).then_some(u64::from(self.leaves / 2))
    }

    fn cut(&self, parts: u32) -> Option<(Vec<u32>, Strategy)> {
        // The leaves in contiguous runs, the hub with the first. (A shape of vesper's
        // names its cut in `Strategy`, as the trees' `Subtrees` and the tori's `Slabs`;
        // this toy borrows `Graph`.)
        (parts <= self.leaves).then(|| {
            let leaf_parts = (0..self.leaves).map(|i| i * parts / self.leaves);
            (std::iter::once(0).chain(leaf_parts).collect(), Strategy::Graph)
        })
    }
}

/// Every shape checked, with a name for messages.
fn shapes() -> Vec<(String, Box<dyn Shape>)> {
    let mut shapes: Vec<Box<dyn Shape>> = vec![
        Box::new(Crossbar { hosts: 1 }),
        Box::new(Crossbar { hosts: 7 }),
        Box::new(Xgft::kary_ntree(2, 3).expect("valid")),
        Box::new(Xgft::thin_tree(4, 2, 2).expect("valid")),
        Box::new(Xgft::new(vec![3, 2, 2], vec![1, 2, 3]).expect("valid")),
        Box::new(Torus::new(vec![4, 3], true, 1).expect("valid")),
        Box::new(Torus::new(vec![5, 2], true, 2).expect("valid")),
        Box::new(Torus::new(vec![3, 3, 2], false, 1).expect("valid")),
        Box::new(Torus::hypercube(3, 2).expect("valid")),
        Box::new(Dragonfly::balanced(1, Arrangement::Absolute).expect("valid")),
        Box::new(Dragonfly::balanced(2, Arrangement::Relative).expect("valid")),
        Box::new(Dragonfly::new(2, 4, 2, 6, Arrangement::Absolute).expect("valid")),
        Box::new(Dragonfly::new(1, 3, 2, 4, Arrangement::Relative).expect("valid")),
        Box::new(Dragonfly::new(3, 1, 2, 3, Arrangement::Absolute).expect("valid")),
        Box::new(Dragonfly::new(2, 3, 0, 1, Arrangement::Absolute).expect("valid")),
        Box::new(Star {
            leaves: 4,
            hosts_per_leaf: 3,
        }),
        Box::new(Star {
            leaves: 3,
            hosts_per_leaf: 1,
        }),
    ];
    shapes.drain(..).map(|s| (s.name(), s)).collect()
}

/// The most links between two hosts on shortest paths, walked breadth first.
fn walked_diameter(t: &Topology) -> u32 {
    let index = |d: Device| match d {
        Device::Host(h) => h.0 as usize,
        Device::Switch(s) => t.hosts as usize + s.0 as usize,
    };
    let devices = t.hosts as usize + t.switch_ports.len();
    let mut next = vec![Vec::new(); devices];
    for c in &t.cables {
        next[index(c.a.device)].push(index(c.b.device));
        next[index(c.b.device)].push(index(c.a.device));
    }
    let mut longest = 0;
    for from in 0..t.hosts as usize {
        let mut distance = vec![u32::MAX; devices];
        distance[from] = 0;
        let mut queue = VecDeque::from([from]);
        while let Some(d) = queue.pop_front() {
            for &n in &next[d] {
                if distance[n] == u32::MAX {
                    distance[n] = distance[d] + 1;
                    queue.push_back(n);
                }
            }
        }
        longest = distance[..t.hosts as usize].iter().copied().fold(longest, u32::max);
    }
    longest
}

#[test]
fn every_shape_counts_what_it_builds() {
    for (name, shape) in shapes() {
        let topology = shape.try_topology(LinkParams::default()).expect("fits");
        assert_eq!(shape.counts(), ShapeCounts::of(&topology), "{name}");
        assert_eq!(
            shape.counts().ports(),
            u64::from(topology.hosts) + ShapeCounts::of(&topology).switch_ports
        );
        if let Some(diameter) = shape.diameter_links() {
            assert_eq!(diameter, walked_diameter(&topology), "{name}");
        }
        // Levels, where a shape has them, hold every switch once, with its ports.
        let mut in_levels = 0;
        for level in 1.. {
            let Some((switches, ports)) = shape.level(level) else {
                break;
            };
            assert_eq!(switches.start, in_levels, "{name}: level {level}");
            for s in switches {
                assert_eq!(topology.switch_ports[s as usize], ports, "{name}: level {level}, sw{s}");
                in_levels += 1;
            }
        }
        assert!(
            in_levels == 0 || in_levels as usize == topology.switch_ports.len(),
            "{name}"
        );
        let described = shape.describe();
        let hosts = format!("{} hosts", topology.hosts);
        assert!(described.contains(&hosts), "{name}: {described}");
    }
}

#[test]
fn every_shape_cut_is_a_partitioning() {
    for (name, shape) in shapes() {
        let topology = shape.try_topology(LinkParams::default()).expect("fits");
        for parts in 2..=4 {
            if let Some((of_switch, _)) = shape.cut(parts) {
                let p = Partitioning::from_switches(&topology, parts, of_switch)
                    .unwrap_or_else(|e| panic!("{name} in {parts} parts: {e}"));
                assert_eq!(p.parts(), parts);
            }
        }
    }
}

#[test]
fn every_shape_carries_every_pair_under_its_routing() {
    for (name, shape) in shapes() {
        // The policy the shape routes by: its own when it has one, else shortest paths.
        let policies = [
            RoutingPolicy::DModK,
            RoutingPolicy::DimensionOrder,
            RoutingPolicy::Minimal,
            RoutingPolicy::ShortestPath,
        ];
        let policy = policies
            .iter()
            .find(|p| shape.routing(p).is_some())
            .unwrap_or(&policies[3]);
        let mut topology = shape.try_topology(LinkParams::default()).expect("fits");
        topology.routing = policy.on(shape.as_ref());
        let mut sim = NetworkBuilder::new(topology.clone()).build().expect("builds");
        let hosts = topology.hosts;
        let mut expected = BTreeSet::new();
        for src in 0..hosts {
            for dst in (0..hosts).filter(|&d| d != src) {
                let cookie = u64::from(src) * u64::from(hosts) + u64::from(dst);
                let spec = MessageSpec {
                    src: HostId(src),
                    dst: HostId(dst),
                    size_bytes: 100,
                    cookie,
                };
                sim.inject(SimTime::ZERO, spec).expect("valid");
                expected.insert(cookie);
            }
        }
        let mut deliveries = Vec::new();
        sim.run_until(SimTime::MAX, &mut deliveries);
        let delivered: BTreeSet<u64> = deliveries.iter().map(|d| d.cookie).collect();
        assert_eq!(delivered, expected, "{name}");
    }
}

#[test]
fn the_graph_partitioner_splits_a_shape_whose_routing_names_none() {
    // A star routes by shortest paths, which name no shape: its own cut is not found
    // through the routing, and the graph partitioner splits it.
    let star = Star {
        leaves: 4,
        hosts_per_leaf: 2,
    };
    let topology = star.try_topology(LinkParams::default()).expect("fits");
    assert!(topology.routing.shape().is_none());
    let p = vesper_netmodels::partition::partition(&topology, 2).expect("splits");
    assert_eq!(p.strategy(), Strategy::Graph);
    // A tree's routing names the tree, and its subtrees cut it.
    let tree = Xgft::kary_ntree(4, 2).expect("valid");
    let topology = tree.try_topology(LinkParams::default()).expect("fits");
    assert_eq!(topology.routing.shape().map(|s| s.name()), Some(tree.name()));
    let p = vesper_netmodels::partition::partition(&topology, 2).expect("splits");
    assert_eq!(p.strategy(), Strategy::Subtrees);
    // A dragonfly's minimal routing names it, and whole groups cut it.
    let dragonfly = Dragonfly::balanced(2, Arrangement::Absolute).expect("valid");
    let topology = dragonfly.try_topology(LinkParams::default()).expect("fits");
    let p = vesper_netmodels::partition::partition(&topology, 3).expect("splits");
    assert_eq!(p.strategy(), Strategy::Groups);
}
