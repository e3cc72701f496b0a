use std::collections::BTreeSet;
use std::sync::Arc;

use super::*;
use crate::builder::NetworkBuilder;
use crate::ids::{Device, HostId, SwitchId};
use crate::link::LinkParams;
use crate::switch::{CioqParams, SwitchKind, SwitchParams, WormholeParams};
use crate::topology::{ExplicitRoutes, MultipathPolicy, Routing, Topology, Torus, Xgft};

/// The counts of `topology` with every switch of `kind`, read off the topology itself.
fn counts_of(topology: &Topology, kind: SwitchKind) -> RailCounts {
    let switch_ports: u64 = topology.switch_ports.iter().map(|&p| u64::from(p)).sum();
    let switches = topology.switch_ports.len() as u64;
    let is_switch = |d: Device| matches!(d, Device::Switch(_));
    let routes = match &topology.routing {
        Routing::ShortestPath => RouteCounts::ShortestPath {
            columns: topology
                .cables
                .iter()
                .filter_map(|c| match (c.a.device, c.b.device) {
                    (Device::Host(_), Device::Switch(s)) | (Device::Switch(s), Device::Host(_)) => Some(s),
                    _ => None,
                })
                .collect::<BTreeSet<SwitchId>>()
                .len() as u64,
            switch_cables: topology
                .cables
                .iter()
                .filter(|c| is_switch(c.a.device) && is_switch(c.b.device))
                .count() as u64,
        },
        Routing::DModK(_) => RouteCounts::DModK,
        Routing::Explicit(r) => RouteCounts::Explicit {
            turns: r.policy() == MultipathPolicy::RoundRobin,
        },
        _ => RouteCounts::Computed,
    };
    let cioq = matches!(kind, SwitchKind::Cioq(_));
    RailCounts {
        hosts: u64::from(topology.hosts),
        switches,
        switch_ports,
        cables: topology.cables.len() as u64,
        cioq_switches: if cioq { switches } else { 0 },
        cioq_ports: if cioq { switch_ports } else { 0 },
        cioq_voq: matches!(kind, SwitchKind::Cioq(c) if c.virtual_output_queues),
        wormhole: matches!(kind, SwitchKind::Wormhole(_)),
        routes,
    }
}

/// The footprint's resident part of `topology` with switches of `kind`, the bytes of
/// the same records in the network built, and what the estimate adds for the
/// allocator's own bytes (16 for each of a CIOQ switch's six lists).
fn estimated_and_built(topology: Topology, kind: SwitchKind) -> (u64, u64, u64) {
    let counts = counts_of(&topology, kind);
    let allocator = counts.cioq_switches * 6 * 16;
    let sim = NetworkBuilder::new(topology)
        .switch_params(SwitchParams {
            kind,
            ..SwitchParams::default()
        })
        .build()
        .expect("valid network");
    (counts.footprint(1).resident, sim.counted_bytes(), allocator)
}

#[test]
fn the_estimate_is_the_records_the_build_makes() {
    let link = LinkParams::default();
    let tree = Xgft::kary_ntree(4, 3).expect("valid tree");
    let routed = |routing: Routing, t: Topology| Topology { routing, ..t };
    let voq = SwitchKind::Cioq(CioqParams {
        speedup: 2,
        virtual_output_queues: true,
    });
    // Alternatives in turn: a turn per pair, besides the given paths (shared).
    let pairs = Topology::crossbar(3, link);
    let explicit = ExplicitRoutes::new(
        3,
        MultipathPolicy::RoundRobin,
        (0..3u32)
            .flat_map(|s| {
                (0..3u32)
                    .filter(move |&d| d != s)
                    .map(move |d| ((HostId(s), HostId(d)), vec![d]))
            })
            .collect(),
    )
    .expect("valid routes");
    let cases: Vec<(&str, Topology, SwitchKind)> = vec![
        ("crossbar", Topology::crossbar(1000, link), SwitchKind::OutputQueued),
        (
            "crossbar cioq",
            Topology::crossbar(500, link),
            SwitchKind::Cioq(CioqParams::default()),
        ),
        ("crossbar voq", Topology::crossbar(500, link), voq),
        (
            "crossbar wormhole",
            Topology::crossbar(300, link),
            SwitchKind::Wormhole(WormholeParams::default()),
        ),
        (
            "tree d-mod-k",
            routed(Routing::DModK(tree.clone()), tree.topology(link)),
            SwitchKind::OutputQueued,
        ),
        (
            "tree shortest paths",
            routed(Routing::ShortestPath, tree.topology(link)),
            SwitchKind::OutputQueued,
        ),
        (
            "tree s-mod-k wormhole",
            routed(Routing::SModK(tree.clone()), tree.topology(link)),
            SwitchKind::Wormhole(WormholeParams::default()),
        ),
        (
            "mesh",
            {
                let t = Torus::new(vec![6, 5], false, 2).expect("valid mesh");
                routed(Routing::DimensionOrder(t.clone()), t.topology(link))
            },
            SwitchKind::Cioq(CioqParams::default()),
        ),
        (
            "explicit round-robin",
            routed(Routing::Explicit(Arc::new(explicit)), pairs),
            SwitchKind::OutputQueued,
        ),
    ];
    for (name, topology, kind) in cases {
        let (estimated, built, allocator) = estimated_and_built(topology, kind);
        let close = estimated == built + allocator;
        assert!(close, "{name}: estimated {estimated} bytes, built {built}");
    }
}

#[test]
fn the_peak_holds_the_cables_and_the_partitions_their_copies() {
    let tree = Xgft::kary_ntree(16, 3).expect("valid tree");
    let topology = Topology {
        routing: Routing::DModK(tree.clone()),
        ..tree.topology(LinkParams::default())
    };
    let counts = counts_of(&topology, SwitchKind::OutputQueued);
    let whole = counts.footprint(1);
    assert_eq!(u128::from(whole.peak - whole.resident), counts.topology_bytes());
    // Four partitions: the wiring, routes and engine lists four times, the port state
    // once; while built, two copies of the cables and a partition per device.
    let split = counts.footprint(4);
    let shared = counts.wiring_bytes() + counts.route_bytes() + counts.engine_bytes();
    assert_eq!(u128::from(split.resident), u128::from(whole.resident) + 3 * shared);
    assert_eq!(
        u128::from(split.peak),
        u128::from(split.resident) + 2 * counts.topology_bytes() + 4 * u128::from(counts.devices())
    );
    // Rails built one after the other: the first one's resident part, the second's peak.
    let two = Footprint::of_rails(&[counts, counts], 1);
    assert_eq!(two.resident, 2 * whole.resident);
    assert_eq!(two.peak, whole.resident + whole.peak);
}

#[test]
fn the_estimate_grows_with_the_network_alone() {
    // A crossbar's shortest-path table is a column of one switch: linear in its hosts,
    // where a table per host and switch would grow with their product.
    let crossbar = |hosts: u64| RailCounts {
        hosts,
        switches: 1,
        switch_ports: hosts,
        cables: hosts,
        routes: RouteCounts::ShortestPath {
            columns: 1,
            switch_cables: 0,
        },
        ..RailCounts::default()
    };
    let (small, large) = (crossbar(1 << 10).footprint(1), crossbar(1 << 20).footprint(1));
    assert!(large.peak <= 1025 * small.peak, "{small:?} {large:?}");
    assert!(large.peak >= 1000 * small.peak, "{small:?} {large:?}");
    // Saturates rather than wrapping at the largest counts a description may give.
    let huge = RailCounts {
        routes: RouteCounts::Explicit { turns: true },
        ..crossbar(u64::from(u32::MAX))
    };
    assert!(huge.footprint(u32::MAX).peak >= huge.footprint(1).peak);
}
