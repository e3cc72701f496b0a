//! Dragonfly routings in a running network: Valiant's detours and UGAL-L's choice,
//! on output-queued and CIOQ routers.

use vesper_netmodels::topology::{Detour, Routing, Shape};
use vesper_netmodels::{
    AdapterParams, Arrangement, CioqParams, Delivery, Dragonfly, HostId, MessageSpec, NetworkBuilder, SimTime,
    SwitchKind, SwitchParams,
};

/// The 72-host balanced dragonfly (p = 2: 9 groups of 4 routers) routed minimally
/// (`None`), by Valiant (`Some(None)`) or by UGAL-L of threshold `t` (`Some(Some(t))`).
fn network(detour: Option<Option<u64>>, kind: SwitchKind) -> NetworkBuilder {
    let dragonfly = Dragonfly::balanced(2, Arrangement::Absolute).expect("valid");
    let mut topology = dragonfly.try_topology(Default::default()).expect("fits");
    if let Some(ugal_threshold) = detour {
        topology.routing = Routing::DragonflyDetour(Detour {
            dragonfly,
            seed: 3,
            ugal_threshold,
        });
    }
    NetworkBuilder::new(topology)
        .switch_params(SwitchParams {
            kind,
            routing_latency: SimTime::from_ns(50),
        })
        .adapter_params(AdapterParams {
            payload_bytes: 256,
            ..AdapterParams::default()
        })
}

fn cioq() -> SwitchKind {
    SwitchKind::Cioq(CioqParams {
        speedup: 2,
        virtual_output_queues: true,
    })
}

/// Every message delivered, in the order of their cookies.
fn run(builder: NetworkBuilder, messages: &[(SimTime, MessageSpec)]) -> Vec<Delivery> {
    let mut sim = builder.build().expect("valid");
    for &(at, spec) in messages {
        sim.inject(at, spec).expect("valid");
    }
    let mut deliveries = Vec::new();
    sim.run_until(SimTime::MAX, &mut deliveries);
    assert_eq!(deliveries.len(), messages.len(), "every message delivered");
    deliveries.sort_by_key(|d| d.cookie);
    deliveries
}

fn mean_latency_ns(deliveries: &[Delivery]) -> f64 {
    let total: u64 = deliveries.iter().map(|d| (d.arrived - d.injected_at).as_ps()).sum();
    total as f64 / deliveries.len() as f64 / 1e3
}

/// One message of `bytes` from every host to the host of the same place in the next
/// group, `rounds` times, `gap` apart.
fn group_shift(rounds: u32, gap: SimTime, bytes: u32) -> Vec<(SimTime, MessageSpec)> {
    let (hosts, per_group) = (72, 8);
    let mut messages = Vec::new();
    for round in 0..rounds {
        for src in 0..hosts {
            let spec = MessageSpec {
                src: HostId(src),
                dst: HostId((src + per_group) % hosts),
                size_bytes: bytes,
                cookie: messages.len() as u64,
            };
            messages.push((SimTime::from_ps(gap.as_ps() * u64::from(round)), spec));
        }
    }
    messages
}

#[test]
fn on_an_idle_network_ugal_goes_minimally_and_valiant_goes_further() {
    // One message at a time: every queue is empty when UGAL-L chooses.
    let messages: Vec<_> = (0..72u32)
        .map(|src| {
            let spec = MessageSpec {
                src: HostId(src),
                dst: HostId((src * 29 + 11) % 72),
                size_bytes: 1_000,
                cookie: u64::from(src),
            };
            (SimTime::from_ns(u64::from(src) * 100_000), spec)
        })
        .collect();
    for kind in [SwitchKind::OutputQueued, cioq()] {
        let minimal = run(network(None, kind), &messages);
        assert_eq!(run(network(Some(Some(240)), kind), &messages), minimal);
        let valiant = run(network(Some(None), kind), &messages);
        let longer = valiant
            .iter()
            .zip(&minimal)
            .filter(|(v, m)| v.arrived > m.arrived)
            .count();
        assert!(valiant.iter().zip(&minimal).all(|(v, m)| v.arrived >= m.arrived));
        assert!(longer > 50, "{longer} of 72 messages took a detour");
    }
}

#[test]
fn under_group_shift_traffic_ugal_and_valiant_beat_minimal() {
    // Every host of a group sends to the next group: minimal routes all of it over the
    // one global cable between the two.
    let messages = group_shift(20, SimTime::from_ns(2_000), 1_000);
    for kind in [SwitchKind::OutputQueued, cioq()] {
        let minimal = mean_latency_ns(&run(network(None, kind), &messages));
        let valiant = mean_latency_ns(&run(network(Some(None), kind), &messages));
        let ugal = mean_latency_ns(&run(network(Some(Some(240)), kind), &messages));
        assert!(
            valiant < minimal / 2.0,
            "{kind:?}: Valiant {valiant} ns, minimal {minimal} ns"
        );
        assert!(ugal < minimal / 2.0, "{kind:?}: UGAL {ugal} ns, minimal {minimal} ns");
    }
}

#[test]
fn the_same_seed_gives_the_same_detours() {
    let messages = group_shift(5, SimTime::from_ns(1_000), 3_000);
    let again = |seed| {
        let dragonfly = Dragonfly::balanced(2, Arrangement::Absolute).expect("valid");
        let mut topology = dragonfly.try_topology(Default::default()).expect("fits");
        topology.routing = Routing::DragonflyDetour(Detour {
            dragonfly,
            seed,
            ugal_threshold: Some(240),
        });
        run(
            NetworkBuilder::new(topology).switch_params(SwitchParams {
                kind: SwitchKind::OutputQueued,
                routing_latency: SimTime::from_ns(50),
            }),
            &messages,
        )
    };
    assert_eq!(again(3), again(3));
    assert_ne!(again(3), again(4));
}
