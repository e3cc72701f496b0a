//! Operating points checked against physics: offered = accepted below saturation, the
//! saturation throughput of a k-ary n-tree, Little's law, determinism.

use super::*;
use crate::switch::{SwitchKind, SwitchParams, WormholeParams};
use crate::topology::{Routing, Xgft};
use crate::{LinkParams, NetworkBuilder};

/// A 4-ary 3-tree (64 hosts), d-mod-k, of `kind` switches.
fn tree(kind: SwitchKind, payload_bytes: u32) -> (MultiRail, HostLink) {
    let x = Xgft::kary_ntree(4, 3).expect("valid");
    let link = LinkParams::default();
    let mut topology = x.topology(link);
    topology.routing = Routing::DModK(x);
    let adapter = AdapterParams {
        payload_bytes,
        ..AdapterParams::default()
    };
    let sim = NetworkBuilder::new(topology)
        .switch_params(SwitchParams {
            kind,
            ..SwitchParams::default()
        })
        .adapter_params(adapter)
        .build()
        .expect("valid");
    let host = HostLink {
        bandwidth: link.bandwidth,
        adapter,
        flit_bytes: 8,
    };
    (MultiRail::single(sim), host)
}

fn spec(load: f64, payload_bytes: u32, measure_us: u64) -> TrafficSpec {
    TrafficSpec {
        pattern: Pattern::Uniform { self_allowed: false },
        process: Process::Bernoulli,
        load,
        sizes: Sizes::Fixed(payload_bytes),
        source_queue: None,
        warmup: SimTime::from_ns(1000 * (measure_us / 4)),
        measure: SimTime::from_ns(1000 * (measure_us)),
        drain: SimTime::from_ns(1000 * (measure_us)),
        seed: 5,
    }
}

fn point(kind: SwitchKind, payload_bytes: u32, s: &TrafficSpec) -> TrafficResult {
    let (mut net, link) = tree(kind, payload_bytes);
    run(&mut net, link, s).expect("runs")
}

const WORMHOLE: SwitchKind = SwitchKind::Wormhole(WormholeParams {
    flit_bytes: 8,
    buffer_bytes: 512,
    arbitration: crate::switch::Arbitration::RoundRobin {
        initial: crate::switch::InitialPointer::Fixed(0),
    },
    granularity: crate::switch::Granularity::Coarse,
    bubble: false,
});

/// Below saturation the network carries what is offered. The generators' own noise over
/// `n` packets is about `1/√n` of the load; four of those is the tolerance. Accepted
/// and created loads of one run differ only by the packets in flight at the window's
/// edges.
fn accepted_equals_offered(kind: SwitchKind) {
    // 112-byte payloads: 16 flits of 8 bytes with the 16-byte header.
    let s = spec(0.4, 112, 400);
    let r = point(kind, 112, &s);
    let noise = 4.0 / (r.created as f64).sqrt();
    assert!(r.created > 5000, "{}", r.created);
    assert!((r.created_load - 0.4).abs() < 0.4 * noise, "{r:?}");
    assert!((r.accepted_load - r.created_load).abs() < 0.4 * noise, "{r:?}");
    assert!(!r.saturated(), "{:?}", r.saturation);
    assert_eq!((r.undelivered, r.dropped), (0, 0));
    // Little's law at steady state.
    assert!(r.little.relative_error < 0.05, "{:?}", r.little);
    // Uniform traffic on a 4-ary 3-tree: 2 links to a sibling (3 of 63 hosts), 4 within
    // a subtree of 16 (12 of 63), 6 otherwise (48 of 63): 5.43 on average.
    let hops = r.hops.expect("fixed paths");
    assert!(
        (hops.mean - (2.0 * 3.0 + 4.0 * 12.0 + 6.0 * 48.0) / 63.0).abs() < 0.1,
        "{hops:?}"
    );
    assert_eq!((hops.min, hops.max), (2, 6));
    let links = r.links.expect("fixed paths");
    assert!(links.max < 0.6 && links.mean > 0.3, "{links:?}");
}

#[test]
fn accepted_equals_offered_output_queued() {
    accepted_equals_offered(SwitchKind::OutputQueued);
}

#[test]
fn accepted_equals_offered_wormhole() {
    accepted_equals_offered(WORMHOLE);
}

/// Saturation throughput of a 4-ary 3-tree under uniform traffic, offered 1.0.
///
/// Output-queued switches with unbounded queues lose nothing to head-of-line blocking:
/// with d-mod-k routing every up link carries a fair share, and the only limit is the
/// links themselves (1.0 of the link rate), so the accepted load stays close to it.
#[test]
fn saturation_throughput_output_queued_tree() {
    let s = TrafficSpec {
        process: Process::Poisson,
        drain: SimTime::ZERO,
        ..spec(1.0, 112, 300)
    };
    let r = point(SwitchKind::OutputQueued, 112, &s);
    assert!((0.85..=1.0).contains(&r.accepted_load), "{r:?}");
}

/// Wormhole switches are input-queued: a blocked worm holds its input and the packets
/// behind it. A single switch with FIFO inputs saturates at 2 − √2 ≈ 0.586 of the link
/// rate under uniform traffic when its radix is large (Karol, Hluchyj and Morgan, 1987);
/// a multistage tree, whose worms hold several links at once, saturates lower still.
/// Seed 002 (§3.2.1) shows such networks saturating well short of the link rate; we
/// require the accepted load clearly below the output-queued bound and near the HOL
/// bound's region.
#[test]
fn saturation_throughput_wormhole_tree() {
    let s = TrafficSpec {
        drain: SimTime::ZERO,
        ..spec(1.0, 112, 300)
    };
    let r = point(WORMHOLE, 112, &s);
    assert!(r.saturated());
    assert!((0.35..=0.65).contains(&r.accepted_load), "{r:?}");
}

#[test]
fn same_seed_same_point() {
    let s = TrafficSpec {
        pattern: Pattern::RandomPermutation,
        process: Process::Poisson,
        sizes: Sizes::Uniform { min: 16, max: 600 },
        ..spec(0.5, 0, 100)
    };
    let a = point(WORMHOLE, 256, &s);
    assert_eq!(a, point(WORMHOLE, 256, &s));
    assert_ne!(a, point(WORMHOLE, 256, &TrafficSpec { seed: 6, ..s }));
}

#[test]
fn bounded_source_queues_drop_and_report_saturation() {
    let s = TrafficSpec {
        source_queue: Some(4),
        pattern: "hot-spot:0:0.5".parse().expect("valid"),
        ..spec(0.6, 112, 100)
    };
    let r = point(SwitchKind::OutputQueued, 112, &s);
    assert!(r.dropped > 0, "{r:?}");
    assert!(r.saturated());
    assert!(r.accepted_load < r.created_load);
}

#[test]
fn bad_parameters_are_refused() {
    let (mut net, link) = tree(SwitchKind::OutputQueued, 112);
    let err = |s: TrafficSpec, net: &mut MultiRail| run(net, link, &s).expect_err("refused").to_string();
    assert_eq!(
        err(spec(0.0, 112, 10), &mut net),
        "the offered load must be a positive number, not 0"
    );
    assert_eq!(
        run(&mut net, link, &spec(f64::NAN, 112, 10))
            .err()
            .map(|e| e.to_string()),
        Some("the offered load must be a positive number, not NaN".into())
    );
    assert_eq!(
        run(&mut net, link, &spec(4.5, 112, 10)).err(),
        Some(TrafficError::LoadTooHigh { load: 4.5, max: 4.0 })
    );
    assert_eq!(
        err(spec(4.5, 112, 10), &mut net),
        "the offered load 4.5 is above 4 times the link rate"
    );
    assert_eq!(
        err(spec(0.5, 112, 0), &mut net),
        "the measurement window must be longer than zero"
    );
    let flitless = HostLink { flit_bytes: 0, ..link };
    assert_eq!(
        run(&mut net, flitless, &spec(0.5, 112, 10)).err(),
        Some(TrafficError::FlitEmpty)
    );
    let share = TrafficSpec {
        sizes: Sizes::Bimodal {
            small: 8,
            large: 64,
            large_percent: 101,
        },
        ..spec(0.5, 112, 10)
    };
    assert_eq!(err(share, &mut net), "the large-size share is a percentage, not 101");
    assert_eq!(
        err(spec(3.0, 0, 10), &mut net),
        "a Bernoulli source creates at most one packet per flit time: load 3 with packets of 16 wire bytes needs \
         1.50 per slot (use Poisson, or larger packets)"
    );
    let backwards = TrafficSpec {
        sizes: Sizes::Uniform { min: 9, max: 3 },
        ..spec(0.5, 112, 10)
    };
    assert_eq!(err(backwards, &mut net), "sizes 9..3: the minimum is above the maximum");
    let headless = HostLink {
        adapter: AdapterParams {
            header_bytes: 0,
            ..link.adapter
        },
        ..link
    };
    let empty = TrafficSpec {
        process: Process::Poisson,
        ..spec(0.5, 0, 10)
    };
    assert_eq!(
        run(&mut net, headless, &empty).err().map(|e| e.to_string()),
        Some("packets of zero bytes on the wire (no payload and no header) cannot load a link".into())
    );
    let odd = TrafficSpec {
        pattern: Pattern::BitReversal,
        ..spec(0.5, 112, 10)
    };
    // 64 hosts: a power of two, so the bit reversal runs; a crossbar of 12 refuses.
    assert!(run(&mut net, link, &odd).is_ok());
    let mut twelve = MultiRail::single(
        NetworkBuilder::crossbar(12, LinkParams::default())
            .build()
            .expect("valid"),
    );
    assert!(err(odd, &mut twelve).contains("power-of-two"));
}

/// Zero-load latency against the closed form: on an idle crossbar a packet takes the
/// host cable's propagation, the routing decision, its serialisation once (cut-through)
/// and the second cable: 25 + 100 + 128 B at 250 MB/s (512 ns) + 25 = 662 ns.
#[test]
fn zero_load_latency_is_the_closed_form() {
    let link = LinkParams::default();
    let adapter = AdapterParams {
        payload_bytes: 112,
        ..AdapterParams::default()
    };
    let sim = NetworkBuilder::crossbar(16, link)
        .adapter_params(adapter)
        .build()
        .expect("valid");
    let host = HostLink {
        bandwidth: link.bandwidth,
        adapter,
        flit_bytes: 8,
    };
    let r = run(&mut MultiRail::single(sim), host, &spec(0.002, 112, 2000)).expect("runs");
    let network = r.network_latency.expect("samples");
    assert_eq!(network.min, 662_000);
    assert_eq!(network.p50, 662_000, "{network:?}");
    assert_eq!(r.hops.map(|h| (h.min, h.max)), Some((2, 2)));
}

#[test]
fn a_bernoulli_source_at_a_tiny_load_is_nearly_silent() {
    // A probability per slot below 1e-16 once made every slot a success: the network
    // was flooded at a load of 1e-16. At 1e-12, 64 hosts over a millisecond of 32 ns
    // slots expect 2e-3 packets.
    for load in [1e-12, 1e-17, 5e-324] {
        let (_, link) = tree(SwitchKind::OutputQueued, 112);
        let s = spec(load, 112, 1000);
        let mut g = Generator::new(64, link, &s).expect("a generator");
        let created = std::iter::from_fn(|| g.next_before(SimTime::from_ns(1_000_000))).count();
        assert!(created <= 1, "load {load}: {created} packets");
    }
}

/// A network of `kind` switches on `topology`, whole or split into `partitions`, one
/// rail or two (round-robin).
fn split(
    topology: crate::topology::Topology,
    kind: SwitchKind,
    partitions: u32,
    rails: usize,
) -> (MultiRail, HostLink) {
    split_with(topology, kind, rails, |builder| {
        crate::partition::Partitioned::build(builder, partitions).expect("splits")
    })
}

/// A network of `kind` switches on `topology`, each rail made by `make`.
fn split_with(
    topology: crate::topology::Topology,
    kind: SwitchKind,
    rails: usize,
    make: impl Fn(NetworkBuilder) -> crate::partition::Partitioned,
) -> (MultiRail, HostLink) {
    let adapter = AdapterParams {
        payload_bytes: 256,
        ..AdapterParams::default()
    };
    let link = LinkParams::default();
    let builder = NetworkBuilder::new(topology)
        .switch_params(SwitchParams {
            kind,
            ..SwitchParams::default()
        })
        .adapter_params(adapter);
    let rails = (0..rails).map(|_| make(builder.clone())).collect();
    let net = MultiRail::of_rails(rails, crate::RailPolicy::RoundRobin).expect("valid");
    let host = HostLink {
        bandwidth: link.bandwidth,
        adapter,
        flit_bytes: 8,
    };
    (net, host)
}

#[test]
fn split_networks_give_the_points_of_whole_ones() {
    let tree = || Xgft::kary_ntree(4, 3).expect("valid").topology(LinkParams::default());
    let torus = || {
        crate::Torus::new(vec![4, 4, 4], true, 1)
            .expect("valid")
            .topology(LinkParams::default())
    };
    let cioq = SwitchKind::Cioq(crate::CioqParams {
        speedup: 1,
        virtual_output_queues: true,
    });
    let bimodal = Sizes::Bimodal {
        small: 64,
        large: 2000,
        large_percent: 20,
    };
    // Below saturation, past it (a growing backlog), Poisson arrivals of several
    // packets, a source queue limit (the sequential loop throughout: packets are
    // dropped), and two rails (likewise).
    let cases: Vec<(&str, crate::topology::Topology, SwitchKind, TrafficSpec, usize)> = vec![
        ("tree, OQ, 0.3", tree(), SwitchKind::OutputQueued, spec(0.3, 256, 8), 1),
        ("tree, CIOQ, 1.4", tree(), cioq, spec(1.4, 256, 8), 1),
        (
            "torus, OQ, Poisson, bimodal",
            torus(),
            SwitchKind::OutputQueued,
            TrafficSpec {
                process: Process::Poisson,
                sizes: bimodal,
                ..spec(0.5, 256, 8)
            },
            1,
        ),
        (
            "torus, OQ, source queue",
            torus(),
            SwitchKind::OutputQueued,
            TrafficSpec {
                source_queue: Some(2),
                ..spec(1.5, 256, 8)
            },
            1,
        ),
        (
            "tree, two rails",
            tree(),
            SwitchKind::OutputQueued,
            spec(0.6, 256, 8),
            2,
        ),
    ];
    for (name, topology, kind, s, rails) in cases {
        let whole = {
            let (mut net, link) = split(topology.clone(), kind, 1, rails);
            run(&mut net, link, &s).expect("runs")
        };
        assert!(whole.delivered > 100, "{name}: {whole:?}");
        for partitions in [2, 3, 4] {
            let (mut net, link) = split(topology.clone(), kind, partitions, rails);
            assert_eq!(
                run(&mut net, link, &s).expect("runs"),
                whole,
                "{name}, {partitions} partitions"
            );
        }
        // One partition per rank, the ranks threads of this process: every rank gets
        // the whole point.
        for ranks in [2, 3] {
            let points = crate::partition::ThreadRanks::each(ranks, |rank| {
                let (mut net, link) = split_with(topology.clone(), kind, rails, |builder| {
                    crate::partition::Partitioned::build_on_ranks(builder, rank.clone()).expect("splits")
                });
                run(&mut net, link, &s).expect("runs")
            });
            for (rank, point) in points.iter().enumerate() {
                assert_eq!(*point, whole, "{name}, rank {rank} of {ranks}");
            }
        }
    }
}
