use std::collections::VecDeque;

use super::routes::{SHORTEST_PATH_STEPS, check_route_length};
use super::*;
use crate::rng::Rng;

fn host(h: u32, port: u32) -> Endpoint {
    Endpoint {
        device: Device::Host(HostId(h)),
        port,
    }
}

/// A default cable from `a` to `b`.
fn cable(a: Endpoint, b: Endpoint) -> Cable {
    Cable {
        a,
        b,
        link: LinkParams::default(),
    }
}

fn switch(s: u32, port: u32) -> Endpoint {
    Endpoint {
        device: Device::Switch(SwitchId(s)),
        port,
    }
}

#[test]
fn crossbar_routes_each_host_to_its_port() {
    let t = Topology::crossbar(4, LinkParams::default());
    let w = wire(&t).expect("valid");
    let r = RouteTable::shortest_paths(&t, &w).expect("connected");
    for h in 0..4 {
        assert_eq!(r.next_port(SwitchId(0), HostId(h)), h);
    }
}

#[test]
fn two_switches_route_over_the_trunk() {
    let link = LinkParams::default();
    let t = Topology {
        routing: Routing::ShortestPath,
        hosts: 2,
        switch_ports: vec![4, 4],
        cables: vec![
            Cable {
                a: host(0, 0),
                b: switch(0, 1),
                link,
            },
            Cable {
                a: host(1, 0),
                b: switch(1, 2),
                link,
            },
            Cable {
                a: switch(0, 3),
                b: switch(1, 0),
                link,
            },
        ],
    };
    let w = wire(&t).expect("valid");
    let r = RouteTable::shortest_paths(&t, &w).expect("connected");
    assert_eq!(r.next_port(SwitchId(0), HostId(1)), 3);
    assert_eq!(r.next_port(SwitchId(1), HostId(0)), 0);
    assert_eq!(r.next_port(SwitchId(1), HostId(1)), 2);
}

#[test]
fn bad_wiring_is_named() {
    let link = LinkParams::default();
    let mut t = Topology::crossbar(2, link);
    t.cables.push(Cable {
        a: host(1, 0),
        b: switch(0, 0),
        link,
    });
    assert_eq!(
        wire(&t).err().map(|e| e.to_string()),
        Some("cables[2]: host1.p0 is already used by cables[1]".to_string())
    );
    let mut t = Topology::crossbar(2, link);
    t.cables[1].b.port = 9;
    assert_eq!(
        wire(&t).err().map(|e| e.to_string()),
        Some("cables[1]: sw0 has 2 ports, no port 9".to_string())
    );
    let mut t = Topology::crossbar(3, link);
    t.cables.pop();
    assert_eq!(wire(&t).err(), Some(TopologyError::HostNotConnected(2)));
    assert_eq!(wire(&Topology::crossbar(0, link)).err(), Some(TopologyError::NoHosts));
}

#[test]
fn disconnected_networks_are_refused() {
    let t = Topology {
        routing: Routing::ShortestPath,
        hosts: 2,
        switch_ports: vec![1, 1],
        cables: vec![cable(host(0, 0), switch(0, 0)), cable(host(1, 0), switch(1, 0))],
    };
    let w = wire(&t).expect("valid wiring");
    assert_eq!(
        RouteTable::shortest_paths(&t, &w).err(),
        Some(TopologyError::Unreachable { switch: 1, host: 0 })
    );
}

/// The shortest-path table as it was first computed, kept as the reference: a
/// search from every destination host over every port, then every switch's lowest
/// port one hop closer (`out[switch * hosts + host]`).
fn reference_shortest_paths(t: &Topology, w: &Wiring) -> Result<Vec<u32>, TopologyError> {
    let (hosts, switches) = (t.hosts, t.switch_ports.len());
    let host_switch = |h: u32| match w.peer[w.port_base[h as usize] as usize] {
        Some((
            Endpoint {
                device: Device::Switch(s),
                ..
            },
            _,
        )) => Some(s.index()),
        _ => None,
    };
    let peer = |s: usize, port: u32| {
        w.peer[w.port(Endpoint {
            device: Device::Switch(SwitchId(s as u32)),
            port,
        })]
        .map(|(end, _)| end.device)
    };
    let has_host: Vec<bool> = (0..switches)
        .map(|s| (0..hosts).any(|h| host_switch(h) == Some(s)))
        .collect();
    let mut out = vec![u32::MAX; switches * hosts as usize];
    for host in 0..hosts {
        let mut distance = vec![u32::MAX; switches];
        let mut queue = VecDeque::new();
        if let Some(s) = host_switch(host) {
            distance[s] = 0;
            queue.push_back(s);
        }
        while let Some(s) = queue.pop_front() {
            for port in 0..t.switch_ports[s] {
                if let Some(Device::Switch(n)) = peer(s, port)
                    && distance[n.index()] == u32::MAX
                {
                    distance[n.index()] = distance[s] + 1;
                    queue.push_back(n.index());
                }
            }
        }
        let farthest = (0..switches)
            .filter(|&s| has_host[s] && distance[s] != u32::MAX)
            .max_by_key(|&s| distance[s]);
        if let Some(s) = farthest {
            check_route_length(u64::from(distance[s]) + 1, || {
                format!("the shortest route from sw{s} to host{host}")
            })?;
        }
        for s in 0..switches {
            let port = (0..t.switch_ports[s]).find(|&port| match peer(s, port) {
                Some(Device::Host(h)) => h.0 == host,
                Some(Device::Switch(n)) => {
                    distance[s] != u32::MAX && distance[s].checked_sub(1) == Some(distance[n.index()])
                }
                None => false,
            });
            match port {
                Some(port) => out[s * hosts as usize + host as usize] = port,
                None => return Err(TopologyError::Unreachable { switch: s as u32, host }),
            }
        }
    }
    Ok(out)
}

#[test]
fn shortest_path_tables_equal_a_search_from_every_host() {
    let mut rng = Rng::new(11);
    let mut refused = 0;
    for case in 0..400 {
        // Random switches with random free ports; hosts on random ports; random
        // cables between switches (some networks end up disconnected, some hosts
        // cabled to each other).
        let switches = 1 + rng.below(7) as u32;
        let hosts = 1 + rng.below(12) as u32;
        let switch_ports: Vec<u32> = (0..switches).map(|_| 2 + rng.below(6) as u32).collect();
        let mut free: Vec<Endpoint> = (0..switches)
            .flat_map(|s| (0..switch_ports[s as usize]).map(move |p| switch(s, p)))
            .collect();
        let take = |rng: &mut Rng, free: &mut Vec<Endpoint>| {
            (!free.is_empty()).then(|| free.swap_remove(rng.below(free.len() as u64) as usize))
        };
        let mut cables = Vec::new();
        let mut h = 0;
        while h < hosts {
            if case % 10 == 0 && h + 1 < hosts && rng.below(4) == 0 {
                cables.push(cable(host(h, 0), host(h + 1, 0)));
                h += 2;
                continue;
            }
            let Some(end) = take(&mut rng, &mut free) else { break };
            cables.push(cable(host(h, 0), end));
            h += 1;
        }
        if h < hosts {
            continue;
        }
        for _ in 0..rng.below(u64::from(switches) * 2 + 1) {
            let (Some(a), Some(b)) = (take(&mut rng, &mut free), take(&mut rng, &mut free)) else {
                break;
            };
            cables.push(cable(a, b));
        }
        let t = Topology {
            routing: Routing::ShortestPath,
            hosts,
            switch_ports,
            cables,
        };
        let w = wire(&t).expect("valid wiring");
        let expected = reference_shortest_paths(&t, &w);
        let got = RouteTable::shortest_paths(&t, &w).map(|r| {
            (0..switches)
                .flat_map(|s| (0..hosts).map(move |h| (s, h)))
                .map(|(s, h)| r.next_port(SwitchId(s), HostId(h)))
                .collect::<Vec<u32>>()
        });
        refused += usize::from(expected.is_err());
        assert_eq!(got, expected, "case {case}: {t:?}");
    }
    // Both kinds of networks were met.
    assert!((20..380).contains(&refused), "{refused} of 400 refused");
}

#[test]
fn shortest_paths_take_time_linear_in_a_crossbar_and_in_a_tree_s_leaves() {
    let steps = |t: Topology| {
        let w = wire(&t).expect("valid wiring");
        RouteTable::shortest_paths(&t, &w).expect("connected");
        SHORTEST_PATH_STEPS.get()
    };
    // A search from every host over every port made a crossbar of n hosts n² steps
    // (256,000 hosts: 71 s); one search from its switch makes it about 3n.
    let link = LinkParams::default();
    let (small, large) = (
        steps(Topology::crossbar(1000, link)),
        steps(Topology::crossbar(16_000, link)),
    );
    assert!(small <= 3 * 1000 + 10, "{small}");
    assert!(large <= 16 * small, "{small} then {large}");
    // A tree: a search per leaf switch, over the switches and their cables.
    let tree = |k: u32| {
        let x = Xgft::kary_ntree(k, 2).expect("valid tree");
        let t = x.topology(link);
        let switch_ports: u64 = t.switch_ports.iter().map(|&p| u64::from(p)).sum();
        let bound = u64::from(x.nodes(1)) * (2 * (u64::from(x.switches()) + switch_ports)) + u64::from(x.hosts());
        (
            steps(Topology {
                routing: Routing::ShortestPath,
                ..t
            }),
            bound,
        )
    };
    for k in [4, 8, 16] {
        let (taken, bound) = tree(k);
        assert!(taken <= bound, "k = {k}: {taken} steps, more than {bound}");
    }
}

/// `switches` switches in a line, a host at each end: host0 on sw0.p0, sw i.p1 to
/// sw i+1.p0, host1 on the last switch's p1.
fn chain(switches: u32, routing: Routing) -> Topology {
    let last = switches - 1;
    let mut cables = vec![cable(host(0, 0), switch(0, 0)), cable(host(1, 0), switch(last, 1))];
    cables.extend((0..last).map(|s| cable(switch(s, 1), switch(s + 1, 0))));
    Topology {
        routing,
        hosts: 2,
        switch_ports: vec![2; switches as usize],
        cables,
    }
}

#[test]
fn routes_longer_than_packets_count_are_refused() {
    let max = MAX_ROUTE_SWITCHES as u32;
    let routes = |t: &Topology| {
        wire(t)
            .and_then(|w| RouteTable::build(t, &w))
            .err()
            .map(|e| e.to_string())
    };
    let too_long = |route: &str| {
        Some(format!(
            "routing: {route} crosses {} switches; vesper counts at most 65,535 on a route",
            max + 1
        ))
    };
    // Shortest paths.
    assert_eq!(routes(&chain(max, Routing::ShortestPath)), None);
    assert_eq!(
        routes(&chain(max + 1, Routing::ShortestPath)),
        too_long(&format!("the shortest route from sw{max} to host0"))
    );
    // Explicit routes: right along the chain, back left.
    let explicit = |switches: u32| {
        let n = switches as usize;
        let paths = vec![
            ((HostId(0), HostId(1)), vec![1; n]),
            ((HostId(1), HostId(0)), vec![0; n]),
        ];
        Routing::Explicit(Arc::new(
            ExplicitRoutes::new(2, MultipathPolicy::First, paths).expect("stored"),
        ))
    };
    assert_eq!(routes(&chain(max, explicit(max))), None);
    assert_eq!(
        routes(&chain(max + 1, explicit(max + 1))),
        too_long("route 0 from host0 to host1")
    );
    // Dimension order: a mesh line of k switches, a ring of k reaching k/2 + 1;
    // refused as the torus is checked, before anything is built (`Torus::new`), and
    // again by the routes (the fields are public).
    let torus = |k: u32, wrap: bool| {
        let t = Torus {
            dims: vec![k],
            wrap,
            hosts_per_switch: 1,
        };
        Topology {
            routing: Routing::DimensionOrder(t.clone()),
            ..t.topology(LinkParams::default())
        }
    };
    let refused = Some(format!(
        "routing: torus.dims: its longest dimension-order route crosses {} switches; vesper counts at most \
         65,535 on a route",
        max + 1
    ));
    assert_eq!(routes(&torus(max, false)), None);
    assert_eq!(routes(&torus(max + 1, false)), refused);
    assert_eq!(routes(&torus(2 * max - 2, true)), None);
    assert_eq!(routes(&torus(2 * max, true)), refused);
    for (k, wrap) in [(max + 1, false), (2 * max, true)] {
        assert_eq!(
            Torus::new(vec![k], wrap, 1),
            Err(TorusError::RouteTooLong {
                switches: u64::from(max) + 1
            })
        );
    }
    assert!(Torus::new(vec![max], false, 1).is_ok());
    // XGFT: up to the top level with several children and down, 2L − 1; refused
    // before its nodes are counted.
    let tree = |levels: u32| {
        let mut children = vec![1; levels as usize];
        children[levels as usize - 1] = 2;
        Xgft {
            children,
            parents: vec![1; levels as usize],
        }
    };
    let top = max.div_ceil(2);
    assert_eq!(tree(top).longest_route(), u64::from(max));
    let Xgft { children, parents } = tree(top + 1);
    assert_eq!(
        Xgft::new(children, parents).err().map(|e| e.to_string()),
        Some(format!(
            "xgft: its longest route crosses {} switches (up to level {} and down); vesper counts at most 65,535 on a route",
            max + 2,
            top + 1
        ))
    );
    // The tree's fields are public: the routes check it again.
    let tall = Xgft {
        children: vec![2; top as usize + 1],
        parents: vec![1; top as usize + 1],
    };
    let crossbar = Topology {
        routing: Routing::DModK(tall),
        ..Topology::crossbar(2, LinkParams::default())
    };
    assert_eq!(
        routes(&crossbar),
        Some(format!(
            "routing: the longest route of the XGFT crosses {} switches; vesper counts at most 65,535 on a route",
            max + 2
        ))
    );
}
