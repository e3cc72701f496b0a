//! The safe horizon (`Network::safe_horizon`): a message injected at `t` or later
//! changes no delivery at or before `safe_horizon(t)`. Each case replays the same
//! messages twice, once with extra messages injected from `t` on (at `t` itself, at the
//! horizon, just after it, and later), and finds every delivery up to the horizon the
//! same, on every kind of network: ideal, output-queued, CIOQ, wormhole (coarse and
//! fine, on a crossbar, a fat tree and a torus with bubble flow control), zero-delay
//! cables and routing, tiny packets, and two rails.

use proptest::prelude::*;
use vesper_netmodels::{
    AdapterParams, Arbitration, Bandwidth, CioqParams, Delivery, Granularity, HostId, IdealParams, InitialPointer,
    Interleave, LinkParams, MessageSpec, MultiRail, Network, NetworkBuilder, RailPolicy, SimTime, SwitchKind,
    SwitchParams, Torus, WormholeParams, Xgft,
};

/// A network to try, built afresh for each replay.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Ideal,
    OutputQueued,
    Cioq,
    WormholeCoarse,
    WormholeFine,
    FatTreeWormhole,
    FatTreeOutputQueued,
    TorusBubble,
    ZeroDelayOutputQueued,
    ZeroDelayWormhole,
    TinyPackets,
    TwoRailsStriped,
}

const HOSTS: u32 = 8;

fn wormhole(granularity: Granularity, flit_bytes: u32, buffer_bytes: u32, bubble: bool) -> SwitchKind {
    SwitchKind::Wormhole(WormholeParams {
        flit_bytes,
        buffer_bytes,
        granularity,
        bubble,
        arbitration: Arbitration::RoundRobin {
            initial: InitialPointer::Random { seed: 7 },
        },
    })
}

fn switched(
    builder: NetworkBuilder,
    kind: SwitchKind,
    routing_latency: SimTime,
    adapter: AdapterParams,
) -> Box<dyn Network> {
    let sim = builder
        .switch_params(SwitchParams { kind, routing_latency })
        .adapter_params(adapter)
        .build()
        .expect("a valid network");
    Box::new(MultiRail::single(sim))
}

impl Kind {
    fn build(self) -> Box<dyn Network> {
        let link = LinkParams::default();
        let routing = SwitchParams::default().routing_latency;
        let adapter = AdapterParams {
            payload_bytes: 1024,
            ..AdapterParams::default()
        };
        let zero = LinkParams {
            propagation: SimTime::ZERO,
            ..link
        };
        let crossbar = |link| NetworkBuilder::crossbar(HOSTS, link);
        let tree = || NetworkBuilder::new(Xgft::kary_ntree(2, 3).expect("valid").topology(link));
        match self {
            Kind::Ideal => Box::new(MultiRail::single(
                NetworkBuilder::ideal(
                    HOSTS,
                    IdealParams {
                        bandwidth: Some(Bandwidth::from_bytes_per_second(250_000_000).expect("positive")),
                        latency: SimTime::from_ns(500),
                    },
                )
                .build()
                .expect("valid"),
            )),
            Kind::OutputQueued => switched(crossbar(link), SwitchKind::OutputQueued, routing, adapter),
            Kind::Cioq => switched(
                crossbar(link),
                SwitchKind::Cioq(CioqParams {
                    speedup: 1,
                    virtual_output_queues: false,
                }),
                routing,
                adapter,
            ),
            Kind::WormholeCoarse => switched(
                crossbar(link),
                wormhole(Granularity::Coarse, 8, 512, false),
                routing,
                adapter,
            ),
            Kind::WormholeFine => switched(
                crossbar(link),
                wormhole(Granularity::Fine, 8, 512, false),
                routing,
                adapter,
            ),
            Kind::FatTreeWormhole => switched(tree(), wormhole(Granularity::Coarse, 8, 512, false), routing, adapter),
            Kind::FatTreeOutputQueued => switched(tree(), SwitchKind::OutputQueued, routing, adapter),
            Kind::TorusBubble => switched(
                NetworkBuilder::new(Torus::new(vec![4, 2], true, 1).expect("valid").topology(link)),
                wormhole(Granularity::Coarse, 8, 2560, true),
                routing,
                adapter,
            ),
            Kind::ZeroDelayOutputQueued => switched(crossbar(zero), SwitchKind::OutputQueued, SimTime::ZERO, adapter),
            Kind::ZeroDelayWormhole => switched(
                crossbar(zero),
                wormhole(Granularity::Coarse, 8, 64, false),
                SimTime::ZERO,
                adapter,
            ),
            Kind::TinyPackets => switched(
                crossbar(zero),
                wormhole(Granularity::Fine, 1, 16, false),
                SimTime::ZERO,
                AdapterParams {
                    payload_bytes: 3,
                    header_bytes: 1,
                    interleave: Interleave::RoundRobin,
                },
            ),
            Kind::TwoRailsStriped => {
                let rail = |kind| {
                    NetworkBuilder::crossbar(HOSTS, link)
                        .switch_params(SwitchParams {
                            kind,
                            routing_latency: routing,
                        })
                        .adapter_params(adapter)
                        .build()
                        .expect("valid")
                };
                let rails = vec![
                    rail(SwitchKind::OutputQueued),
                    rail(wormhole(Granularity::Coarse, 8, 512, false)),
                ];
                Box::new(MultiRail::new(rails, RailPolicy::Striped).expect("same hosts"))
            }
        }
    }
}

/// Injects `messages` (time, spec) as the server does (those of an instant before its
/// events) and runs to the end; with `probe` (t, since), also gives the deliveries the
/// model called final for messages injected from `since` on, once it had processed
/// every event before `t`.
fn replay(
    mut net: Box<dyn Network>,
    messages: &[(SimTime, MessageSpec)],
    probe: Option<(SimTime, SimTime)>,
) -> (Vec<Delivery>, Vec<Delivery>) {
    let mut sorted = messages.to_vec();
    sorted.sort_by_key(|(at, spec)| (*at, spec.cookie));
    let (mut deliveries, mut known) = (Vec::new(), Vec::new());
    let mut probe = probe;
    let mut look = |net: &mut Box<dyn Network>, deliveries: &mut Vec<Delivery>, before: SimTime| {
        if let Some((t, since)) = probe.filter(|&(t, _)| t <= before) {
            if t > SimTime::ZERO {
                net.run_until(t - SimTime::from_ps(1), deliveries);
            }
            net.final_deliveries(since, &mut known);
            probe = None;
        }
    };
    for (at, spec) in sorted {
        look(&mut net, &mut deliveries, at);
        if at > SimTime::ZERO {
            net.run_until(at - SimTime::from_ps(1), &mut deliveries);
        }
        net.inject(at, spec).expect("injected at or after the clock");
    }
    look(&mut net, &mut deliveries, SimTime::MAX);
    net.run_until(SimTime::MAX, &mut deliveries);
    (deliveries, known)
}

fn message(src: u32, hop: u32, size_bytes: u32, cookie: u64) -> MessageSpec {
    MessageSpec {
        src: HostId(src),
        dst: HostId((src + 1 + hop) % HOSTS),
        size_bytes,
        cookie,
    }
}

/// Messages as (time \[ns\], source, hop to the destination, size).
fn messages(count: usize) -> impl Strategy<Value = Vec<(u64, u32, u32, u32)>> {
    prop::collection::vec((0u64..20_000, 0..HOSTS, 0..HOSTS - 1, 0u32..6_000), 1..count)
}

fn check(kind: Kind, base: &[(u64, u32, u32, u32)], t_ns: u64, extra: &[(u64, u32, u32, u32)]) {
    let t = SimTime::from_ns(t_ns);
    let horizon = kind.build().safe_horizon(t);
    assert!(horizon >= t, "{kind:?}: the horizon {horizon} is before {t}");
    let base: Vec<(SimTime, MessageSpec)> = (0u64..)
        .zip(base)
        .map(|(i, &(at, src, hop, size))| (SimTime::from_ns(at), message(src, hop, size, i)))
        .collect();
    // Extra messages at t, at the horizon, just after it, and later.
    let span = horizon.min(t + SimTime::from_ns(1_000_000)) - t;
    let extra_at = |i: usize, later_ns: u64| match i % 4 {
        0 => t,
        1 => t + span,
        2 => t + span + SimTime::from_ps(1),
        _ => t + SimTime::from_ns(later_ns),
    };
    let mut with_extra = base.clone();
    with_extra.extend(
        extra
            .iter()
            .enumerate()
            .map(|(i, &(later, src, hop, size))| (extra_at(i, later), message(src, hop, size, 1_000_000 + i as u64))),
    );
    let (alone, _) = replay(kind.build(), &base, None);
    let (together, known) = replay(kind.build(), &with_extra, Some((t, t)));
    let early = |deliveries: &[Delivery]| -> Vec<(u64, SimTime)> {
        let mut list: Vec<(u64, SimTime)> = deliveries
            .iter()
            .filter(|d| d.cookie < 1_000_000 && d.arrived <= horizon)
            .map(|d| (d.cookie, d.arrived))
            .collect();
        list.sort_unstable();
        list
    };
    assert_eq!(
        early(&alone),
        early(&together),
        "{kind:?}: messages injected from {t} changed deliveries at or before the horizon {horizon}"
    );
    // What the model had fixed by `t` within the horizon it delivers, at that time and
    // in that order.
    let places: Vec<usize> = known
        .iter()
        .map(|k| {
            together
                .iter()
                .position(|d| d == k)
                .unwrap_or_else(|| panic!("{kind:?}: {k:?} was known at {t} but not delivered so"))
        })
        .collect();
    assert!(
        places.windows(2).all(|w| w[0] < w[1]),
        "{kind:?}: known deliveries out of the model's order"
    );
    if matches!(kind, Kind::Ideal) {
        let pending = base.iter().filter(|(at, _)| *at < t).count();
        let delivered = alone.iter().filter(|d| d.injected_at < t && d.arrived < t).count();
        assert_eq!(
            known.len(),
            pending - delivered,
            "the ideal network knows every message in flight"
        );
    }
}

const KINDS: [Kind; 12] = [
    Kind::Ideal,
    Kind::OutputQueued,
    Kind::Cioq,
    Kind::WormholeCoarse,
    Kind::WormholeFine,
    Kind::FatTreeWormhole,
    Kind::FatTreeOutputQueued,
    Kind::TorusBubble,
    Kind::ZeroDelayOutputQueued,
    Kind::ZeroDelayWormhole,
    Kind::TinyPackets,
    Kind::TwoRailsStriped,
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn no_later_message_changes_a_delivery_within_the_horizon(
        base in messages(24),
        extra in messages(8),
        t_ns in 0u64..20_000,
    ) {
        for kind in KINDS {
            check(kind, &base, t_ns, &extra);
        }
    }
}

/// Messages crowding one destination, small and close together, so that the later
/// ones meet the earlier ones within a few cable times of their injection.
fn crowded(count: usize) -> impl Strategy<Value = Vec<(u64, u32, u32, u32)>> {
    prop::collection::vec((0u64..3_000, 1..HOSTS, Just(HOSTS - 1), 0u32..48), 1..count)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn no_later_message_changes_a_crowded_delivery_within_the_horizon(
        base in crowded(32),
        extra in crowded(8),
        t_ns in 0u64..3_000,
    ) {
        for kind in KINDS {
            check(kind, &base, t_ns, &extra);
        }
    }
}

/// The horizon is not empty where the model allows it: two cables and a routing
/// decision on the default crossbar, the end of time on the ideal network.
#[test]
fn the_horizon_reaches_as_far_as_the_argument_allows() {
    let t = SimTime::from_ns(1000);
    assert_eq!(Kind::Ideal.build().safe_horizon(t), SimTime::MAX);
    // 25 ns cables, 100 ns routing; packet switches' heads need no serialization.
    assert_eq!(
        Kind::OutputQueued.build().safe_horizon(t),
        t + SimTime::from_ns(150) - SimTime::from_ps(1)
    );
    // Wormhole links carry 8-byte flits: 32 ns at 250 MB/s, on each of the two cables.
    assert_eq!(
        Kind::WormholeCoarse.build().safe_horizon(t),
        t + SimTime::from_ns(214) - SimTime::from_ps(1)
    );
    // Zero-delay cables and routing, packets of no serialization: the instant only.
    assert_eq!(Kind::ZeroDelayOutputQueued.build().safe_horizon(t), t);
}

/// A wormhole delivery is known ahead once nothing can hold its tail any more. On the
/// coarse path that is as soon as its worm holds every output to its destination with no
/// flow control under way (here, a lone message: once its head is granted the last
/// switch's output), on the fine path once its last flit is on the last cable. Known or
/// not, it is delivered then (the property tests above check that under load).
#[test]
fn a_wormhole_delivery_is_known_once_nothing_can_hold_its_tail() {
    // One packet of 1,024 bytes and its header: about 130 flits of 32 ns.
    let lone = [(SimTime::ZERO, message(0, 0, 1024, 0))];
    for kind in [Kind::WormholeCoarse, Kind::WormholeFine, Kind::FatTreeWormhole] {
        let (deliveries, _) = replay(kind.build(), &lone, None);
        let arrived = deliveries[0].arrived;
        let known_at = |t: SimTime| replay(kind.build(), &lone, Some((t, t))).1;
        // Its head has not reached the last switch's output yet.
        assert_eq!(known_at(SimTime::from_ns(100)), vec![], "{kind:?}");
        // Its last flit is on the last cable.
        assert_eq!(known_at(arrived - SimTime::from_ns(1)), deliveries, "{kind:?}");
        // Half its flits are still in its adapter.
        let halfway = known_at(arrived - SimTime::from_ns(2_000));
        match kind {
            Kind::WormholeFine => assert_eq!(halfway, vec![], "{kind:?}"),
            _ => assert_eq!(halfway, deliveries, "{kind:?}"),
        }
    }
}

/// Messages from a fixed seed, in time order: (time, spec).
fn seeded(count: u64) -> Vec<(SimTime, MessageSpec)> {
    let mut rng = vesper_netmodels::rng::Rng::new(11);
    let mut list: Vec<(SimTime, MessageSpec)> = (0..count)
        .map(|i| {
            let at = SimTime::from_ns(rng.below(6_000));
            let (src, hop) = (
                rng.below(u64::from(HOSTS)) as u32,
                rng.below(u64::from(HOSTS - 1)) as u32,
            );
            (at, message(src, hop, rng.below(5_000) as u32, i))
        })
        .collect();
    list.sort_by_key(|&(at, spec)| (at, spec.cookie));
    list
}

/// The ideal network and the packet switches keep the events that make final
/// deliveries as they come and go, from the first time they are asked: asked after
/// every injection, a network tells what a fresh one, brought to the same point and
/// asked once (found in its queue), tells. Also split into partitions.
#[test]
fn final_deliveries_kept_as_events_come_and_go_are_those_found_in_the_queue() {
    let messages = seeded(40);
    let split = |kind: SwitchKind| {
        move || -> Box<dyn Network> {
            let link = LinkParams::default();
            let tree = NetworkBuilder::new(Xgft::kary_ntree(2, 3).expect("valid").topology(link)).switch_params(
                SwitchParams {
                    kind,
                    ..SwitchParams::default()
                },
            );
            let rail = vesper_netmodels::partition::Partitioned::build(tree, 2).expect("splits");
            Box::new(MultiRail::of_rails(vec![rail], RailPolicy::RoundRobin).expect("a rail"))
        }
    };
    let fine = SwitchKind::Wormhole(WormholeParams {
        granularity: Granularity::Fine,
        ..WormholeParams::default()
    });
    type Build = Box<dyn Fn() -> Box<dyn Network>>;
    let builds: Vec<(String, Build)> = KINDS
        .iter()
        .map(|&kind| (format!("{kind:?}"), Box::new(move || kind.build()) as Build))
        .chain([
            (
                "fat tree in 2 partitions".to_string(),
                Box::new(split(SwitchKind::OutputQueued)) as Build,
            ),
            (
                "Wormhole fat tree, flit by flit, in 2 partitions".to_string(),
                Box::new(split(fine)) as Build,
            ),
        ])
        .collect();
    for (name, build) in &builds {
        let to = |net: &mut Box<dyn Network>, upto: usize| {
            let mut deliveries = Vec::new();
            for &(at, spec) in &messages[..upto] {
                if at > SimTime::ZERO {
                    net.run_until(at - SimTime::from_ps(1), &mut deliveries);
                }
                net.inject(at, spec).expect("injected");
            }
        };
        let mut asked = build();
        let mut deliveries = Vec::new();
        let mut told = 0;
        for (i, &(at, spec)) in messages.iter().enumerate() {
            if at > SimTime::ZERO {
                asked.run_until(at - SimTime::from_ps(1), &mut deliveries);
            }
            asked.inject(at, spec).expect("injected");
            let mut known = Vec::new();
            asked.final_deliveries(at, &mut known);
            let mut fresh = build();
            to(&mut fresh, i + 1);
            let mut found = Vec::new();
            fresh.final_deliveries(at, &mut found);
            assert_eq!(known, found, "{name}, after message {i}");
            told += known.len();
        }
        if !name.contains("Wormhole") && !name.contains("Bubble") && !name.contains("Tiny") {
            assert!(told > 0, "{name}: nothing told");
        }
    }
}
