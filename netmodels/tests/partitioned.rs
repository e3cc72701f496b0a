//! The partitioned engine gives what one event queue gives: the same deliveries, in
//! the same order, the same event count and clock, for P = 1, 2, 3 and 4 partitions, on
//! fat trees (table and source routing, explicit routes drawn at random), tori, meshes,
//! hypercubes and an irregular graph, output-queued, CIOQ and wormhole switches (with
//! bubble flow control on a torus), zero-delay cables, tiny packets, messages to
//! oneself, injections one at a time between short runs (one window at a time) and all
//! at once before long ones (windows on threads).

use std::sync::Arc;

use vesper_netmodels::partition::{Followed, Lead, PartitionError, Partitioned, Ranks, SplitError, ThreadRanks};
use vesper_netmodels::rng::Rng;
use vesper_netmodels::topology::{Cable, Detour, Endpoint, ExplicitRoutes, MultipathPolicy, Routing, Shape, Topology};
use vesper_netmodels::{
    AdapterParams, Arbitration, Arrangement, BacklogCount, CioqParams, Delivery, Device, Dragonfly, Granularity,
    HostId, IdealParams, InitialPointer, LinkParams, MemoryOutput, MessageSpec, MultiRail, Network, NetworkBuilder,
    ParaverOptions, RailPolicy, SimTime, SwitchId, SwitchKind, SwitchParams, Torus, TraceSummary, TracedNetwork,
    WormholeParams, Xgft,
};

fn link() -> LinkParams {
    LinkParams::default()
}

fn cioq(speedup: u32, virtual_output_queues: bool) -> SwitchKind {
    SwitchKind::Cioq(CioqParams {
        speedup,
        virtual_output_queues,
    })
}

/// Wormhole switches stepping flit by flit (the fabric splits only so).
fn wormhole(flit_bytes: u32, arbitration: Arbitration) -> SwitchKind {
    SwitchKind::Wormhole(WormholeParams {
        flit_bytes,
        buffer_bytes: 1024,
        granularity: Granularity::Fine,
        bubble: false,
        arbitration,
    })
}

/// The same wormhole switches on the coarse path (runs of flits, the default).
fn coarse(kind: SwitchKind) -> SwitchKind {
    match kind {
        SwitchKind::Wormhole(params) => SwitchKind::Wormhole(WormholeParams {
            granularity: Granularity::Coarse,
            ..params
        }),
        other => other,
    }
}

/// Wormhole switches with bubble flow control, for the rings of a torus: buffers of
/// two packets of 512 bytes and a little more.
fn bubble() -> SwitchKind {
    SwitchKind::Wormhole(WormholeParams {
        flit_bytes: 32,
        buffer_bytes: 1600,
        granularity: Granularity::Fine,
        bubble: true,
        arbitration: Arbitration::RoundRobin {
            initial: InitialPointer::Fixed(0),
        },
    })
}

fn network(topology: Topology, kind: SwitchKind, routing_latency: SimTime, payload_bytes: u32) -> NetworkBuilder {
    NetworkBuilder::new(topology)
        .switch_params(SwitchParams { kind, routing_latency })
        .adapter_params(AdapterParams {
            payload_bytes,
            ..AdapterParams::default()
        })
}

/// The balanced dragonfly of 72 hosts routed through intermediate routers: Valiant, or
/// UGAL-L with `ugal` as its threshold.
fn detour(ugal: Option<u64>) -> Topology {
    let dragonfly = Dragonfly::balanced(2, Arrangement::Absolute).expect("valid");
    let mut topology = dragonfly.try_topology(link()).expect("fits");
    topology.routing = Routing::DragonflyDetour(Detour {
        dragonfly,
        seed: 5,
        ugal_threshold: ugal,
    });
    topology
}

/// Six switches in a ring with two chords, two hosts each: shortest-path routing on a
/// graph with no shape.
fn irregular(link: LinkParams) -> Topology {
    let switch = |s: u32, port: u32| Endpoint {
        device: Device::Switch(SwitchId(s)),
        port,
    };
    let mut cables = Vec::new();
    for h in 0..12 {
        cables.push(Cable {
            a: Endpoint {
                device: Device::Host(HostId(h)),
                port: 0,
            },
            b: switch(h / 2, h % 2),
            link,
        });
    }
    let mut next_port = [2u32; 6];
    for (a, b) in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (0, 3), (1, 4)] {
        cables.push(Cable {
            a: switch(a, next_port[a as usize]),
            b: switch(b, next_port[b as usize]),
            link,
        });
        next_port[a as usize] += 1;
        next_port[b as usize] += 1;
    }
    Topology {
        hosts: 12,
        switch_ports: next_port.to_vec(),
        cables,
        routing: Routing::ShortestPath,
    }
}

/// A 4-ary 2-tree whose pairs across leaves have four paths, one per spine, a message
/// taking one drawn at random (one generator for every host's messages).
fn random_paths() -> Topology {
    let tree = Xgft::kary_ntree(4, 2).expect("valid");
    let mut paths = Vec::new();
    for s in 0..16 {
        for d in (0..16).filter(|&d| d != s) {
            let first = tree.d_mod_k_path(HostId(s), HostId(d));
            let ups = if first.len() == 3 { 4..8 } else { first[0]..first[0] + 1 };
            for up in ups {
                let mut path = first.clone();
                path[0] = up;
                paths.push(((HostId(s), HostId(d)), path));
            }
        }
    }
    let routes = ExplicitRoutes::new(16, MultipathPolicy::Random { seed: 5 }, paths).expect("valid");
    let mut topology = tree.topology(link());
    topology.routing = Routing::Explicit(Arc::new(routes));
    topology
}

/// The networks tried, by name.
fn networks() -> Vec<(&'static str, NetworkBuilder)> {
    let routing = SwitchParams::default().routing_latency;
    let tree = Xgft::kary_ntree(4, 2).expect("valid");
    let mut s_mod_k = tree.topology(link());
    s_mod_k.routing = Routing::SModK(tree.clone());
    let zero = LinkParams {
        propagation: SimTime::ZERO,
        ..link()
    };
    vec![
        (
            "fat tree, d-mod-k, OQ",
            network(tree.topology(link()), SwitchKind::OutputQueued, routing, 4096),
        ),
        (
            "fat tree, s-mod-k, CIOQ",
            network(s_mod_k, cioq(1, false), routing, 1024),
        ),
        (
            "fat tree, explicit routes drawn at random, OQ",
            network(random_paths(), SwitchKind::OutputQueued, routing, 2048),
        ),
        (
            "torus 4x4x2, OQ, tiny packets",
            network(
                Torus::new(vec![4, 4, 2], true, 2).expect("valid").topology(link()),
                SwitchKind::OutputQueued,
                routing,
                64,
            ),
        ),
        (
            "mesh 3x5, CIOQ with virtual output queues",
            network(
                Torus::new(vec![3, 5], false, 1).expect("valid").topology(link()),
                cioq(2, true),
                routing,
                2048,
            ),
        ),
        (
            "hypercube 4, OQ",
            network(
                Torus::hypercube(4, 1).expect("valid").topology(link()),
                SwitchKind::OutputQueued,
                routing,
                4096,
            ),
        ),
        (
            "irregular graph, OQ",
            network(irregular(link()), SwitchKind::OutputQueued, routing, 4096),
        ),
        (
            "fat tree, wormhole",
            network(
                tree.topology(link()),
                wormhole(
                    32,
                    Arbitration::RoundRobin {
                        initial: InitialPointer::Random { seed: 7 },
                    },
                ),
                routing,
                1024,
            ),
        ),
        (
            "hypercube 4, wormhole, oldest first",
            network(
                Torus::hypercube(4, 1).expect("valid").topology(link()),
                wormhole(64, Arbitration::OldestFirst),
                routing,
                2048,
            ),
        ),
        (
            "mesh 3x5, wormhole, routing of no delay",
            network(
                Torus::new(vec![3, 5], false, 2).expect("valid").topology(link()),
                wormhole(
                    32,
                    Arbitration::RoundRobin {
                        initial: InitialPointer::Fixed(0),
                    },
                ),
                SimTime::ZERO,
                512,
            ),
        ),
        (
            "torus 4x3, wormhole, bubble flow control",
            network(
                Torus::new(vec![4, 3], true, 2).expect("valid").topology(link()),
                bubble(),
                routing,
                512,
            ),
        ),
        (
            "fat tree, wormhole, coarse",
            network(
                tree.topology(link()),
                coarse(wormhole(
                    32,
                    Arbitration::RoundRobin {
                        initial: InitialPointer::Random { seed: 7 },
                    },
                )),
                routing,
                1024,
            ),
        ),
        (
            "hypercube 4, wormhole, oldest first, coarse",
            network(
                Torus::hypercube(4, 1).expect("valid").topology(link()),
                coarse(wormhole(64, Arbitration::OldestFirst)),
                routing,
                2048,
            ),
        ),
        (
            "torus 4x3, wormhole, bubble flow control, coarse",
            network(
                Torus::new(vec![4, 3], true, 2).expect("valid").topology(link()),
                coarse(bubble()),
                routing,
                512,
            ),
        ),
        (
            "dragonfly p 2 (72 hosts, 9 groups), minimal, OQ",
            network(
                Dragonfly::balanced(2, Arrangement::Absolute)
                    .expect("valid")
                    .try_topology(link())
                    .expect("fits"),
                SwitchKind::OutputQueued,
                routing,
                2048,
            ),
        ),
        (
            "dragonfly p 2, Valiant, OQ",
            network(detour(None), SwitchKind::OutputQueued, routing, 2048),
        ),
        (
            "dragonfly p 2, UGAL-L, CIOQ speed-up 2",
            network(detour(Some(240)), cioq(2, true), routing, 1024),
        ),
        (
            "irregular graph, zero-delay cables, CIOQ",
            network(irregular(zero), cioq(1, false), SimTime::from_ns(20), 512),
        ),
    ]
}

/// `count` messages between random hosts (a tenth to themselves), of 1 to 20,000
/// bytes, at random times within 30 µs (a third on a 100 ns grid, where they meet other
/// events of their instant), in time order.
fn workload(hosts: u32, count: usize, seed: u64) -> Vec<(SimTime, MessageSpec)> {
    let mut rng = Rng::new(seed);
    let mut messages: Vec<(SimTime, MessageSpec)> = (0..count)
        .map(|i| {
            let src = rng.below(u64::from(hosts)) as u32;
            let dst = if rng.below(10) == 0 {
                src
            } else {
                rng.below(u64::from(hosts)) as u32
            };
            let mut at = SimTime::from_ps(rng.below(30_000_000));
            if rng.below(3) == 0 {
                at = SimTime::from_ns(at.as_ps() / 100_000 * 100);
            }
            let spec = MessageSpec {
                src: HostId(src),
                dst: HostId(dst),
                size_bytes: 1 + rng.below(20_000) as u32,
                cookie: i as u64,
            };
            (at, spec)
        })
        .collect();
    messages.sort_by_key(|&(at, spec)| (at, spec.cookie));
    messages
}

/// What a run gives: every delivery in order, the events processed and the clock, and
/// the events processed after each injection (the count a driver that stops there
/// reports).
#[derive(Debug, PartialEq)]
struct Outcome {
    deliveries: Vec<Delivery>,
    events: u64,
    now: SimTime,
    counts: Vec<u64>,
}

/// Replays `messages` on `builder`'s network split into `parts` (0: one plain
/// simulation), each message injected after a run up to its time (`stepwise`) or every
/// one before a single run.
fn replay(builder: &NetworkBuilder, parts: u32, messages: &[(SimTime, MessageSpec)], stepwise: bool) -> Outcome {
    let sim = match parts {
        // The plain simulation itself: one partition's engine calls nothing else.
        0 => Partitioned::whole(builder.clone().build().expect("valid")),
        _ => Partitioned::build(builder.clone(), parts).expect("splits"),
    };
    replay_on(sim, messages, stepwise)
}

/// What [`replay`] gives with one partition per rank, the ranks threads of this
/// process (the code path of MPI ranks, on an in-process transport): every rank's
/// outcome.
fn replay_on_ranks(
    builder: &NetworkBuilder,
    ranks: u32,
    messages: &[(SimTime, MessageSpec)],
    stepwise: bool,
) -> Vec<Outcome> {
    ThreadRanks::each(ranks, |rank| {
        let sim = Partitioned::build_on_ranks(builder.clone(), rank).expect("splits");
        replay_on(sim, messages, stepwise)
    })
}

fn replay_on(mut sim: Partitioned, messages: &[(SimTime, MessageSpec)], stepwise: bool) -> Outcome {
    let parts = sim.partitions();
    let mut deliveries = Vec::new();
    let mut counts = Vec::new();
    for &(at, spec) in messages {
        if stepwise {
            sim.run_until(at, &mut deliveries);
        }
        sim.inject(at, spec).expect("valid");
        counts.push(sim.events_processed());
    }
    sim.run_until(SimTime::MAX, &mut deliveries);
    assert_eq!(sim.in_flight(), 0);
    if parts > 1 {
        assert!(sim.crossings() > 0, "packets crossed partitions");
        assert!(sim.windows() > 0);
    }
    Outcome {
        deliveries,
        events: sim.events_processed(),
        now: sim.now(),
        counts,
    }
}

#[test]
fn any_number_of_partitions_gives_what_one_queue_gives() {
    for (name, builder) in networks() {
        let hosts = builder.hosts();
        for seed in [1] {
            let messages = workload(hosts, 200, seed);
            for stepwise in [true, false] {
                let expected = replay(&builder, 0, &messages, stepwise);
                assert_eq!(expected.deliveries.len(), messages.len());
                for parts in 1..=4 {
                    let got = replay(&builder, parts, &messages, stepwise);
                    if got != expected {
                        let first = got
                            .deliveries
                            .iter()
                            .zip(&expected.deliveries)
                            .position(|(a, b)| a != b);
                        let step = got.counts.iter().zip(&expected.counts).position(|(a, b)| a != b);
                        panic!(
                            "{name}, seed {seed}, stepwise {stepwise}: {parts} partitions differ from one queue: events {} against {} (first different after injection {step:?}), clock {} against {}, first different delivery {first:?}: {:?} against {:?}",
                            got.events,
                            expected.events,
                            got.now,
                            expected.now,
                            first.map(|i| got.deliveries[i]),
                            first.map(|i| expected.deliveries[i]),
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn ranks_give_what_one_queue_gives() {
    for (name, builder) in networks() {
        let messages = workload(builder.hosts(), 120, 2);
        for stepwise in [true, false] {
            let expected = replay(&builder, 0, &messages, stepwise);
            for ranks in 2..=4 {
                for (rank, got) in replay_on_ranks(&builder, ranks, &messages, stepwise).iter().enumerate() {
                    assert!(
                        *got == expected,
                        "{name}, stepwise {stepwise}: rank {rank} of {ranks} differs from one queue: events {} against {}, clock {} against {}, {} deliveries against {}",
                        got.events,
                        expected.events,
                        got.now,
                        expected.now,
                        got.deliveries.len(),
                        expected.deliveries.len()
                    );
                }
            }
        }
    }
}

/// What [`replay`] gives when rank 0 alone drives the network (as a co-simulation
/// server does, hearing the clients) and the other ranks follow its calls.
fn replay_led(builder: &NetworkBuilder, ranks: u32, messages: &[(SimTime, MessageSpec)], stepwise: bool) -> Outcome {
    let outcomes = ThreadRanks::each(ranks, |rank| {
        let build = || Partitioned::build_on_ranks(builder.clone(), rank.clone()).expect("splits");
        if rank.rank() == 0 {
            // A network built and dropped unused, then the run's, then the
            // end: the followers follow each in turn.
            let lead = Lead::new(rank.clone());
            build().lead(&lead);
            let mut sim = build();
            sim.lead(&lead);
            let outcome = replay_on(sim, messages, stepwise);
            lead.close();
            // Dropped after the end: tells nothing.
            build().lead(&lead);
            Some(outcome)
        } else {
            let mut networks = 0;
            while build().follow() == Followed::End {
                networks += 1;
            }
            assert_eq!(networks, 2, "rank {} followed both networks", rank.rank());
            None
        }
    });
    let mut outcomes: Vec<Outcome> = outcomes.into_iter().flatten().collect();
    assert_eq!(outcomes.len(), 1, "rank 0 alone answers");
    outcomes.remove(0)
}

#[test]
fn followers_of_rank_zero_give_what_one_queue_gives() {
    for (name, builder) in networks() {
        let messages = workload(builder.hosts(), 100, 3);
        for stepwise in [true, false] {
            let expected = replay(&builder, 0, &messages, stepwise);
            for ranks in [2, 3] {
                let got = replay_led(&builder, ranks, &messages, stepwise);
                assert!(
                    got == expected,
                    "{name}, stepwise {stepwise}: {ranks} ranks led by rank 0 differ from one queue: events {} against {}, clock {} against {}",
                    got.events,
                    expected.events,
                    got.now,
                    expected.now
                );
            }
        }
    }
}

#[test]
fn a_busy_network_splits_alike() {
    // Every host sends to every other at once: long queues at every switch, worms
    // stopped and started again across the cut cables.
    let tree = Xgft::kary_ntree(4, 2).expect("valid");
    let arbitration = Arbitration::RoundRobin {
        initial: InitialPointer::Fixed(0),
    };
    for kind in [
        SwitchKind::OutputQueued,
        wormhole(64, arbitration),
        coarse(wormhole(64, arbitration)),
    ] {
        busy_network_splits_alike(network(tree.topology(link()), kind, SimTime::from_ns(100), 1024));
    }
    // Packets wait for room in the rings, and the credits that free it cross the cut
    // cables.
    let torus = Torus::new(vec![4, 4], true, 1).expect("valid");
    for kind in [bubble(), coarse(bubble())] {
        busy_network_splits_alike(network(torus.topology(link()), kind, SimTime::from_ns(100), 512));
    }
}

#[test]
fn ugal_detours_split_alike_under_group_shift_traffic() {
    // Every host sends to hosts of the next group at once: the minimal paths' queues
    // fill, UGAL-L detours, and credits cross the cut global cables.
    let mut messages = Vec::new();
    for src in 0..72 {
        for k in 0..40 {
            let spec = MessageSpec {
                src: HostId(src),
                dst: HostId((src + 8 + k % 8) % 72),
                size_bytes: 200 + 100 * (src + k) % 700,
                cookie: u64::from(src * 40 + k),
            };
            messages.push((SimTime::from_ns(u64::from(k) * 170 + u64::from(src) * 3), spec));
        }
    }
    messages.sort_by_key(|&(at, spec)| (at, spec.cookie));
    for kind in [SwitchKind::OutputQueued, cioq(2, true)] {
        let builder = network(detour(Some(240)), kind, SimTime::from_ns(100), 512);
        let expected = replay(&builder, 0, &messages, false);
        let minimal = Dragonfly::balanced(2, Arrangement::Absolute)
            .expect("valid")
            .try_topology(link())
            .expect("fits");
        let minimal = network(minimal, kind, SimTime::from_ns(100), 512);
        assert_ne!(replay(&minimal, 0, &messages, false), expected, "UGAL-L took detours");
        for parts in 2..=4 {
            assert_eq!(
                replay(&builder, parts, &messages, false),
                expected,
                "{kind:?}, {parts} partitions"
            );
        }
    }
}

fn busy_network_splits_alike(builder: NetworkBuilder) {
    let mut messages = Vec::new();
    for src in 0..16 {
        for dst in 0..16 {
            let spec = MessageSpec {
                src: HostId(src),
                dst: HostId(dst),
                size_bytes: 3000,
                cookie: u64::from(src * 16 + dst),
            };
            messages.push((SimTime::ZERO, spec));
        }
    }
    let expected = replay(&builder, 0, &messages, false);
    for parts in 2..=4 {
        assert_eq!(
            replay(&builder, parts, &messages, false),
            expected,
            "{parts} partitions"
        );
    }
}

#[test]
fn networks_that_cannot_be_split_say_why() {
    let routing = SwitchParams::default().routing_latency;
    let tree = || Xgft::kary_ntree(2, 2).expect("valid").topology(link());
    let split = |builder: NetworkBuilder, parts| Partitioned::build(builder, parts).map(|_| ()).unwrap_err();
    assert_eq!(
        split(network(tree(), SwitchKind::OutputQueued, routing, 4096), 0),
        SplitError::Partition(PartitionError::Zero)
    );
    assert_eq!(
        split(network(tree(), SwitchKind::OutputQueued, routing, 4096), 7),
        SplitError::Partition(PartitionError::MoreThanSwitches { parts: 7, switches: 4 })
    );
    let ideal = NetworkBuilder::ideal(
        4,
        IdealParams {
            bandwidth: Some(link().bandwidth),
            latency: SimTime::from_ns(500),
        },
    );
    assert_eq!(
        split(ideal.clone(), 2),
        SplitError::Partition(PartitionError::MoreThanSwitches { parts: 2, switches: 0 })
    );
    assert!(Partitioned::build(ideal, 1).is_ok(), "one partition is any network");
    let zero = LinkParams {
        propagation: SimTime::ZERO,
        ..link()
    };
    let instant = network(
        Xgft::kary_ntree(2, 2).expect("valid").topology(zero),
        SwitchKind::OutputQueued,
        SimTime::ZERO,
        4096,
    );
    assert_eq!(split(instant, 2), SplitError::NoLookahead { parts: 2 });
    // A wormhole switch acts on a STOP or GO as it arrives, and on the coarse path on
    // a new plan of the flits coming down a cable: its routing latency gives no
    // lookahead, on either path.
    for kind in [
        wormhole(8, Arbitration::OldestFirst),
        coarse(wormhole(8, Arbitration::OldestFirst)),
    ] {
        let signals_at_once = network(
            Xgft::kary_ntree(2, 2).expect("valid").topology(zero),
            kind,
            routing,
            4096,
        );
        let err = split(signals_at_once, 2);
        assert_eq!(err, SplitError::NoLookahead { parts: 2 });
        assert!(
            err.to_string().contains("a wormhole switch acts on a STOP or GO"),
            "{err}"
        );
    }
    // So does a packet switch under UGAL-L on a credit; Valiant's draws need none.
    let dragonfly = |ugal| {
        let mut topology = detour(ugal);
        for cable in &mut topology.cables {
            cable.link = zero;
        }
        network(topology, SwitchKind::OutputQueued, routing, 4096)
    };
    let err = split(dragonfly(Some(240)), 2);
    assert_eq!(err, SplitError::NoLookahead { parts: 2 });
    assert!(
        err.to_string()
            .contains("a packet switch under UGAL-L routing on a credit"),
        "{err}"
    );
    assert!(Partitioned::build(dragonfly(None), 2).is_ok());
}

/// The network trace `messages` give on `builder`'s network split into `parts`, with
/// `options` (each message injected after a run up to its time, or all before one run).
fn traced(
    builder: &NetworkBuilder,
    parts: u32,
    options: &ParaverOptions,
    messages: &[(SimTime, MessageSpec)],
    stepwise: bool,
) -> (MemoryOutput, TraceSummary) {
    let rails = vec![builder.clone()];
    let net = TracedNetwork::build_split(rails, RailPolicy::RoundRobin, options, MemoryOutput::default(), parts)
        .expect("splits");
    traced_on(net, messages, stepwise)
}

fn traced_on(
    mut net: TracedNetwork<MemoryOutput>,
    messages: &[(SimTime, MessageSpec)],
    stepwise: bool,
) -> (MemoryOutput, TraceSummary) {
    let mut deliveries = Vec::new();
    for &(at, spec) in messages {
        if stepwise {
            net.run_until(at, &mut deliveries);
        }
        net.inject(at, spec).expect("valid");
    }
    net.run_until(SimTime::MAX, &mut deliveries);
    let summary = net.finish_trace().expect("written").expect("traced");
    (net.output().clone(), summary)
}

/// A network split over ranks that rank 0 can lead and the others follow.
trait Leads {
    fn lead(&mut self, lead: &Arc<Lead>);
    fn follow(&mut self) -> Followed;
}

impl Leads for MultiRail {
    fn lead(&mut self, lead: &Arc<Lead>) {
        MultiRail::lead(self, lead);
    }

    fn follow(&mut self) -> Followed {
        MultiRail::follow(self)
    }
}

impl Leads for TracedNetwork<MemoryOutput> {
    fn lead(&mut self, lead: &Arc<Lead>) {
        TracedNetwork::lead(self, lead);
    }

    fn follow(&mut self) -> Followed {
        TracedNetwork::follow(self)
    }
}

/// On `rank`: rank 0 leads the network `build` gives through `run`, then closes its
/// lead, and gives what `run` gave; the other ranks follow that one network.
fn led_once<N: Leads, T>(rank: &Arc<dyn Ranks>, build: impl Fn() -> N, run: impl FnOnce(N) -> T) -> Option<T> {
    if rank.rank() == 0 {
        let lead = Lead::new(rank.clone());
        let mut net = build();
        net.lead(&lead);
        let outcome = run(net);
        lead.close();
        Some(outcome)
    } else {
        let mut networks = 0;
        while build().follow() == Followed::End {
            networks += 1;
        }
        assert_eq!(networks, 1, "rank {} followed the network", rank.rank());
        None
    }
}

/// The network traces `messages` give on the network of `rails` joined by `policy`,
/// split over `ranks` thread-ranks, by rank: every rank making the same calls (`led`:
/// false), or rank 0 leading and the others following (as a server on MPI ranks does).
fn traced_on_ranks(
    rails: &[NetworkBuilder],
    policy: RailPolicy,
    ranks: u32,
    options: &ParaverOptions,
    messages: &[(SimTime, MessageSpec)],
    led: bool,
) -> Vec<Option<(MemoryOutput, TraceSummary)>> {
    ThreadRanks::each(ranks, |rank| {
        let build = || {
            let output = MemoryOutput::default();
            TracedNetwork::build_on_ranks(rails.to_vec(), policy, options, output, rank.clone()).expect("splits")
        };
        if !led {
            return Some(traced_on(build(), messages, true));
        }
        led_once(&rank, build, |net| traced_on(net, messages, true))
    })
}

#[test]
fn ranks_write_the_trace_of_the_network_whole() {
    let options = ParaverOptions {
        quantum_bytes: 512,
        end_to_end: true,
        state_split: SimTime::from_ns(700),
        ..ParaverOptions::default()
    };
    for (name, builder) in networks() {
        let messages = workload(builder.hosts(), 120, 5);
        let (whole, summary) = traced(&builder, 1, &options, &messages, true);
        assert!(summary.communications > 0, "{name}");
        for ranks in [2, 3] {
            for led in [false, true] {
                let rails = [builder.clone()];
                let traces = traced_on_ranks(&rails, RailPolicy::RoundRobin, ranks, &options, &messages, led);
                let Some((zero, summary)) = &traces[0] else {
                    panic!("rank 0 traces");
                };
                assert_eq!((summary.late_records, summary.unfinished_messages), (0, 0), "{name}");
                assert!(
                    zero.prv() == whole.prv(),
                    "{name}, {ranks} ranks (led: {led}): rank 0's trace differs from the network whole's"
                );
                assert_eq!((&zero.pcf, &zero.row), (&whole.pcf, &whole.row), "{name}");
                for (rank, other) in traces.iter().enumerate().skip(1) {
                    if let Some((out, _)) = other {
                        assert!(out.body.is_empty(), "{name}: rank {rank} wrote records");
                    }
                }
            }
        }
    }
}

#[test]
fn a_split_network_writes_the_trace_of_the_network_whole() {
    let states_split_often = ParaverOptions {
        quantum_bytes: 512,
        end_to_end: true,
        state_split: SimTime::from_ns(700),
        ..ParaverOptions::default()
    };
    let per_link = ParaverOptions {
        quantum_bytes: 64,
        backlog: BacklogCount::Output,
        ..ParaverOptions::default()
    };
    let (mut states, mut room_waits) = (0, 0);
    for (name, builder) in networks() {
        for (seed, options) in [(3, &states_split_often), (4, &per_link)] {
            let messages = workload(builder.hosts(), 150, seed);
            for stepwise in [true, false] {
                let (whole, summary) = traced(&builder, 1, options, &messages, stepwise);
                assert!(summary.communications > 0 && summary.events > 0, "{name}: {summary:?}");
                states += summary.states;
                room_waits += whole.prv().matches(":70000007:").count();
                for parts in 2..=4 {
                    let (split, summary) = traced(&builder, parts, options, &messages, stepwise);
                    let (late, unfinished) = (summary.late_records, summary.unfinished_messages);
                    assert_eq!(
                        (late, unfinished),
                        (0, 0),
                        "{name}, seed {seed}, stepwise {stepwise}, {parts} partitions: records out of order, messages unfinished"
                    );
                    if split.prv() != whole.prv() {
                        if std::env::var_os("DUMP_TRACES").is_some() {
                            std::fs::write("/tmp/whole.prv", whole.prv()).ok();
                            std::fs::write("/tmp/split.prv", split.prv()).ok();
                        }
                        let line = split.prv().lines().zip(whole.prv().lines()).position(|(a, b)| a != b);
                        let at = |out: &MemoryOutput| line.and_then(|l| out.prv().lines().nth(l).map(str::to_string));
                        panic!(
                            "{name}, seed {seed}, stepwise {stepwise}: the trace of {parts} partitions differs from the network whole's at line {line:?}: {:?} against {:?}",
                            at(&split),
                            at(&whole)
                        );
                    }
                    assert_eq!((&split.pcf, &split.row), (&whole.pcf, &whole.row), "{name}");
                }
            }
        }
    }
    assert!(states > 1000, "backlogs were traced: {states} states");
    assert!(room_waits > 10, "bubble flow control's waits were traced: {room_waits}");
}

/// Two rails of 16 hosts, a fat tree and a hypercube.
fn two_rails() -> Vec<NetworkBuilder> {
    let named = networks();
    let rail = |name: &str| {
        named
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, b)| b.clone())
            .expect("a rail")
    };
    vec![rail("fat tree, d-mod-k, OQ"), rail("hypercube 4, OQ")]
}

/// `messages` injected stepwise into a network of several rails: its deliveries, clock
/// and event count.
fn replay_rails(mut net: MultiRail, messages: &[(SimTime, MessageSpec)]) -> (Vec<Delivery>, SimTime, u64) {
    let mut deliveries = Vec::new();
    for &(at, spec) in messages {
        net.run_until(at, &mut deliveries);
        net.inject(at, spec).expect("valid");
    }
    net.run_until(SimTime::MAX, &mut deliveries);
    assert_eq!(net.in_flight(), 0);
    (deliveries, net.now(), net.events_processed())
}

/// A network of several rails split over ranks, rank 0 leading and the others following
/// (as `mpirun vesper serve` or `run` with several rails): each told call names its
/// rail. The same as the rails whole in one process, under both policies.
#[test]
fn followers_of_rank_zero_drive_several_rails_as_one_process_does() {
    for policy in [RailPolicy::RoundRobin, RailPolicy::Striped] {
        let messages = workload(16, 150, 6);
        let whole = two_rails()
            .into_iter()
            .map(|b| Partitioned::whole(b.build().expect("valid")))
            .collect();
        let expected = replay_rails(MultiRail::of_rails(whole, policy).expect("rails"), &messages);
        for ranks in [2, 3] {
            let outcomes = ThreadRanks::each(ranks, |rank| {
                let build = || {
                    let rails = two_rails()
                        .into_iter()
                        .map(|b| Partitioned::build_on_ranks(b, rank.clone()).expect("splits"))
                        .collect();
                    MultiRail::of_rails(rails, policy).expect("rails")
                };
                led_once(&rank, build, |net| replay_rails(net, &messages))
            });
            let got: Vec<_> = outcomes.into_iter().flatten().collect();
            assert!(
                got == [expected.clone()],
                "{policy:?}, {ranks} ranks: rank 0's outcome differs"
            );
        }
    }
}

/// The same, traced: rank 0 writes the trace of the rails whole.
#[test]
fn followers_of_rank_zero_trace_several_rails_as_one_process_does() {
    let options = ParaverOptions {
        quantum_bytes: 512,
        end_to_end: true,
        ..ParaverOptions::default()
    };
    let messages = workload(16, 120, 7);
    let whole =
        TracedNetwork::build(two_rails(), RailPolicy::Striped, &options, MemoryOutput::default()).expect("builds");
    let (whole, summary) = traced_on(whole, &messages, true);
    assert!(summary.communications > 0);
    for ranks in [2, 3] {
        let traces = traced_on_ranks(&two_rails(), RailPolicy::Striped, ranks, &options, &messages, true);
        let Some((zero, summary)) = &traces[0] else {
            panic!("rank 0 traces");
        };
        assert_eq!((summary.late_records, summary.unfinished_messages), (0, 0));
        assert!(
            zero.prv() == whole.prv(),
            "{ranks} ranks: rank 0's trace of two rails differs"
        );
        assert_eq!((&zero.pcf, &zero.row), (&whole.pcf, &whole.row));
    }
}
