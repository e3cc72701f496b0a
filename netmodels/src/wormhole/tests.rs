use super::*;
use crate::ids::SwitchId;
use crate::simulation::tests::{run, send};
use crate::simulation::{NetworkBuilder, Simulation};
use crate::switch::{Granularity, SwitchKind, SwitchParams};
use crate::time::Bandwidth;
use crate::topology::{Cable, Topology};
use crate::trace::RecordingSink;

const TAU: u64 = 32; // ns per 8-byte flit at 250 MB/s
const PROP: u64 = 25;
const ROUTE: u64 = 100;

fn wormhole(params: WormholeParams) -> SwitchParams {
    SwitchParams {
        kind: SwitchKind::Wormhole(params),
        ..SwitchParams::default()
    }
}

fn build<S: TraceSink>(topology: Topology, params: WormholeParams, sink: S) -> Simulation<S> {
    NetworkBuilder::new(topology)
        .switch_params(wormhole(params))
        .build_with_sink(sink)
        .expect("valid network")
}

fn crossbar(hosts: u32, params: WormholeParams) -> Simulation<RecordingSink> {
    build(
        Topology::crossbar(hosts, LinkParams::default()),
        params,
        RecordingSink::default(),
    )
}

fn flits(size_bytes: u32) -> u64 {
    u64::from(size_bytes + 16).div_ceil(8)
}

fn fixed(pointer: u32) -> WormholeParams {
    WormholeParams {
        arbitration: Arbitration::RoundRobin {
            initial: InitialPointer::Fixed(pointer),
        },
        ..WormholeParams::default()
    }
}

#[test]
fn thresholds_cover_the_round_trip() {
    // 64 flits, 32 ns per flit, 25 ns cable: 3 flits can be in flight after a STOP.
    let t = Thresholds::new(64, SimTime::from_ns(32), SimTime::from_ns(25)).expect("large enough");
    assert_eq!(
        t,
        Thresholds {
            capacity: 64,
            high: 61,
            low: 3
        }
    );
    // A 100 m cable (500 ns) needs 33 flits of slack.
    let t = Thresholds::new(64, SimTime::from_ns(32), SimTime::from_ns(500)).expect("large enough");
    assert_eq!((t.high, t.low), (31, 30));
    assert_eq!(Thresholds::new(4, SimTime::from_ns(32), SimTime::from_ns(25)), None);
}

#[test]
fn zero_load_latency_matches_the_closed_form() {
    // One switch: the head waits one flit time to be wholly received, the routing
    // latency, and the cables; the packet streams at one flit per flit time.
    for size in [0, 1, 8, 100, 1024, 4096] {
        let mut sim = crossbar(4, WormholeParams::default());
        send(&mut sim, 1000, 0, 3, size, 1);
        let d = run(&mut sim);
        let expected = 1000 + (ROUTE + TAU) + 2 * PROP + flits(size) * TAU;
        assert_eq!(d[0].arrived, SimTime::from_ns(expected), "size {size}");
        assert_eq!(d[0].first_byte_sent, SimTime::from_ns(1000));
    }
}

#[test]
fn zero_load_latency_over_two_switches() {
    let link = LinkParams::default();
    let host = |h| Endpoint {
        device: Device::Host(HostId(h)),
        port: 0,
    };
    let switch = |s, port| Endpoint {
        device: Device::Switch(SwitchId(s)),
        port,
    };
    let topology = Topology {
        routing: crate::topology::Routing::ShortestPath,
        hosts: 2,
        switch_ports: vec![4, 4],
        cables: vec![
            Cable {
                a: host(0),
                b: switch(0, 0),
                link,
            },
            Cable {
                a: host(1),
                b: switch(1, 1),
                link,
            },
            Cable {
                a: switch(0, 3),
                b: switch(1, 2),
                link,
            },
        ],
    };
    let mut sim = build(topology, WormholeParams::default(), RecordingSink::default());
    send(&mut sim, 0, 0, 1, 1024, 1);
    let d = run(&mut sim);
    let expected = 2 * (ROUTE + TAU) + 3 * PROP + flits(1024) * TAU;
    assert_eq!(d[0].arrived, SimTime::from_ns(expected));
}

#[test]
fn a_slow_receiver_stops_the_sender_without_loss() {
    // The cable to host 1 runs at half rate: the switch input from host 0 fills at
    // twice the rate it drains, reaches its high-water mark, and STOPs host 0's
    // adapter; GO restarts it early enough that the slow link never idles.
    let mut topology = Topology::crossbar(2, LinkParams::default());
    topology.cables[1].link.bandwidth = Bandwidth::from_bytes_per_second(125_000_000).expect("non-zero");
    let mut sim = build(topology, WormholeParams::default(), RecordingSink::default());
    send(&mut sim, 0, 0, 1, 4096, 1);
    let d = run(&mut sim);
    let slow_tau = 2 * TAU;
    let expected = TAU + PROP + ROUTE + flits(4096) * slow_tau + PROP;
    assert_eq!(d[0].arrived, SimTime::from_ns(expected));
    let sink = sim.sink();
    let host0 = PortRef {
        device: Device::Host(HostId(0)),
        port: 0,
    };
    let input = PortRef {
        device: Device::Switch(SwitchId(0)),
        port: 0,
    };
    let stops_received = sink
        .flow_controls
        .iter()
        .filter(|f| f.1 == host0 && f.2 == FlowSignal::Stop && !f.3)
        .count();
    let stops_sent = sink
        .flow_controls
        .iter()
        .filter(|f| f.1 == input && f.2 == FlowSignal::Stop && f.3)
        .count();
    assert!(
        stops_received > 0 && stops_received == stops_sent,
        "{stops_received} {stops_sent}"
    );
    // The buffer never held more than it can (512 bytes).
    let peak = sink
        .backlogs
        .iter()
        .filter(|b| b.1 == input && b.2 == BufferSide::Input)
        .map(|b| b.3)
        .max()
        .unwrap_or(0);
    assert!((61 * 8..=512).contains(&peak), "peak backlog {peak}");
    // The sender finished long after it would have without flow control.
    let sent = sink
        .segments
        .iter()
        .find(|s| s.1 == host0 && !s.4)
        .expect("segment end");
    assert!(sent.0 > SimTime::from_ns(flits(4096) * TAU * 3 / 2), "{:?}", sent.0);
}

#[test]
fn round_robin_pointer_decides_who_goes_first() {
    // Hosts 0 and 1 send to host 2 at once: the output's pointer picks the winner.
    for (pointer, winner) in [(0, 0), (1, 1), (2, 0)] {
        let mut sim = crossbar(3, fixed(pointer));
        send(&mut sim, 0, 0, 2, 1024, 0);
        send(&mut sim, 0, 1, 2, 1024, 1);
        let d = run(&mut sim);
        assert_eq!(d[0].cookie, winner, "pointer {pointer}");
        let first = (ROUTE + TAU) + 2 * PROP + flits(1024) * TAU;
        assert_eq!(d[0].arrived, SimTime::from_ns(first));
        // The loser streams right after the winner's tail, from its full buffer.
        assert_eq!(d[1].arrived, SimTime::from_ns(first + flits(1024) * TAU));
    }
}

#[test]
fn oldest_first_serves_the_earliest_request() {
    let params = WormholeParams {
        arbitration: Arbitration::OldestFirst,
        ..WormholeParams::default()
    };
    let mut sim = crossbar(3, params);
    send(&mut sim, 10, 0, 2, 1024, 0);
    send(&mut sim, 0, 1, 2, 1024, 1);
    send(&mut sim, 20, 1, 0, 8, 2);
    let d = run(&mut sim);
    assert_eq!(
        d.iter().map(|d| d.cookie).filter(|&c| c != 2).collect::<Vec<_>>(),
        vec![1, 0]
    );
}

#[test]
fn head_of_line_blocking_is_detected() {
    // Host 0 streams a long packet to host 2. Host 1 sends a short packet to host 2
    // (it must wait) and then one to host 3 (free): the second is stuck behind the
    // first in the switch's input buffer.
    let mut sim = crossbar(4, fixed(0));
    send(&mut sim, 0, 0, 2, 4096, 0);
    send(&mut sim, 100, 1, 2, 64, 1);
    send(&mut sim, 100, 1, 3, 64, 2);
    let d = run(&mut sim);
    let input1 = PortRef {
        device: Device::Switch(SwitchId(0)),
        port: 1,
    };
    let hol: Vec<_> = sim
        .sink()
        .hol
        .iter()
        .filter(|h| h.1 == input1)
        .map(|h| (h.0, h.2))
        .collect();
    assert_eq!(hol.len(), 2, "{hol:?}");
    assert!(hol[0].1 && !hol[1].1);
    // Blocking starts when the second packet's head is in the buffer behind the first,
    // and ends when the long packet releases host 2's output.
    let second_head = 100 + flits(64) * TAU + TAU + PROP;
    assert_eq!(hol[0].0, SimTime::from_ns(second_head));
    let long_done = TAU + PROP + ROUTE + flits(4096) * TAU;
    assert_eq!(hol[1].0, SimTime::from_ns(long_done));
    // The packet to the free host 3 was late because of it.
    let to3 = d.iter().find(|d| d.cookie == 2).expect("delivered");
    let unblocked = 100 + 2 * flits(64) * TAU + (ROUTE + TAU) + 2 * PROP;
    assert!(to3.arrived > SimTime::from_ns(unblocked));
}

#[test]
fn every_message_is_delivered_once_under_random_traffic() {
    let mut rng = Rng::new(5);
    let mut sim = crossbar(8, WormholeParams::default());
    let mut cookies = Vec::new();
    for i in 0..300u64 {
        let src = rng.below(8) as u32;
        let dst = rng.below(8) as u32;
        let size = rng.below(10_000) as u32;
        send(&mut sim, i * 200, src, dst, size, i);
        cookies.push(i);
    }
    let mut delivered: Vec<u64> = run(&mut sim).iter().map(|d| d.cookie).collect();
    delivered.sort_unstable();
    assert_eq!(delivered, cookies);
    assert_eq!(sim.in_flight(), 0);
    // Every flow-control STOP was followed by a GO.
    let sink = sim.sink();
    let stops = sink.flow_controls.iter().filter(|f| f.2 == FlowSignal::Stop).count();
    let gos = sink.flow_controls.iter().filter(|f| f.2 == FlowSignal::Go).count();
    assert_eq!(stops, gos);
}

#[test]
fn same_inputs_give_the_same_run() {
    let scenario = || {
        let mut rng = Rng::new(9);
        let mut sim = crossbar(16, WormholeParams::default());
        for i in 0..200u64 {
            let (src, dst) = (rng.below(16) as u32, rng.below(16) as u32);
            send(&mut sim, i * 50, src, dst, rng.below(20_000) as u32, i);
        }
        let d = run(&mut sim);
        (format!("{d:?}"), format!("{:?}", sim.sink()))
    };
    assert_eq!(scenario(), scenario());
}

#[test]
fn buffers_too_small_for_the_cable_are_refused() {
    let params = WormholeParams {
        buffer_bytes: 32,
        ..WormholeParams::default()
    };
    let built = NetworkBuilder::crossbar(2, LinkParams::default())
        .switch_params(wormhole(params))
        .build();
    let message = built.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.starts_with("switch.wormhole.buffer_bytes: 32 bytes cannot cover"),
        "{message}"
    );
}

#[test]
fn a_new_message_waits_for_the_tail_to_leave() {
    // Message 0 is 3 flits (8 bytes + 16 of header): its tail is on the wire from 64 to
    // 96 ns. Message 1, injected at 80 ns, starts at 96 ns, not over the tail.
    let mut sim = crossbar(3, WormholeParams::default());
    send(&mut sim, 0, 0, 1, 8, 0);
    send(&mut sim, 80, 0, 2, 8, 1);
    let d = run(&mut sim);
    let second = d.iter().find(|d| d.cookie == 1).expect("delivered");
    assert_eq!(second.first_byte_sent, SimTime::from_ns(3 * TAU));
    // Two worms arriving at one switch output back to back do not overlap either.
    let mut sim = crossbar(3, fixed(0));
    send(&mut sim, 0, 0, 2, 8, 0);
    send(&mut sim, 0, 1, 2, 8, 1);
    let d = run(&mut sim);
    assert_eq!(d[1].arrived - d[0].arrived, SimTime::from_ns(3 * TAU));
}

// ------------------------------------------------------- coarse and fine paths agree

fn granular(params: WormholeParams, granularity: Granularity) -> WormholeParams {
    WormholeParams { granularity, ..params }
}

/// What one path produced: deliveries (arrival, message, first byte sent), events
/// processed, flow-control signals (time, input, STOP?).
type PathRun = (Vec<(SimTime, u64, SimTime)>, u64, Vec<(SimTime, u32, bool)>);

/// Runs `traffic` (time ns, src, dst, size) on `topology` with the fine and the coarse
/// path; returns the deliveries of each, sorted, and the events each processed.
fn fine_and_coarse(topology: &Topology, params: WormholeParams, traffic: &[(u64, u32, u32, u32)]) -> [PathRun; 2] {
    [Granularity::Fine, Granularity::Coarse].map(|g| {
        let mut sim = build(topology.clone(), granular(params, g), crate::trace::NullSink);
        for (i, &(at, src, dst, size)) in traffic.iter().enumerate() {
            send(&mut sim, at, src, dst, size, i as u64);
        }
        let mut d: Vec<_> = run(&mut sim)
            .iter()
            .map(|d| (d.arrived, d.cookie, d.first_byte_sent))
            .collect();
        d.sort_unstable();
        let mut signals = sim.wormhole_signals();
        signals.sort_unstable();
        (d, sim.events_processed(), signals)
    })
}

fn assert_same(topology: &Topology, params: WormholeParams, traffic: &[(u64, u32, u32, u32)]) -> (u64, u64) {
    let [
        (fine, fine_events, fine_signals),
        (coarse, coarse_events, coarse_signals),
    ] = fine_and_coarse(topology, params, traffic);
    assert_eq!(
        (fine.len(), coarse.len()),
        (traffic.len(), traffic.len()),
        "every message delivered"
    );
    for (f, c) in fine.iter().zip(&coarse) {
        assert_eq!(f, c, "first difference (arrival, message, first byte sent)");
    }
    // The same STOPs and GOs, sent at the same instants by the same inputs.
    assert_eq!(fine_signals, coarse_signals);
    (fine_events, coarse_events)
}

#[test]
fn coarse_path_matches_the_fine_path_unobstructed() {
    let topology = Topology::crossbar(4, LinkParams::default());
    let traffic: Vec<_> = [0, 1, 100, 1024, 4096, 40_000]
        .iter()
        .enumerate()
        .map(|(i, &s)| (i as u64 * 200_000, 0, 3, s))
        .collect();
    let (fine, coarse) = assert_same(&topology, WormholeParams::default(), &traffic);
    // One event per flit per hop against a handful per packet per hop.
    assert!(coarse * 20 < fine, "coarse {coarse} events, fine {fine}");
}

#[test]
fn coarse_path_matches_the_fine_path_under_contention_and_stop_go() {
    // Long packets from two hosts to one: the loser's input buffer fills, STOPs its
    // adapter, and is released by GO when the output frees.
    let topology = Topology::crossbar(4, LinkParams::default());
    for pointer in 0..3 {
        let traffic = [
            (0, 0, 2, 20_000),
            (0, 1, 2, 20_000),
            (500, 3, 2, 3000),
            (700, 1, 0, 9000),
        ];
        assert_same(&topology, fixed(pointer), &traffic);
    }
    let oldest = WormholeParams {
        arbitration: Arbitration::OldestFirst,
        ..WormholeParams::default()
    };
    assert_same(
        &topology,
        oldest,
        &[(0, 0, 2, 20_000), (3, 1, 2, 20_000), (5, 3, 2, 100)],
    );
}

#[test]
fn coarse_path_matches_the_fine_path_on_random_traffic() {
    let tree = crate::topology::Xgft::kary_ntree(4, 2)
        .expect("valid")
        .topology(LinkParams::default());
    let crossbar = Topology::crossbar(8, LinkParams::default());
    let seeds: u64 = std::env::var("VESPER_EQUIVALENCE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    for seed in 1..=seeds {
        let topology = if seed % 2 == 0 { &tree } else { &crossbar };
        let mut rng = Rng::new(seed);
        let hosts = topology.hosts;
        let traffic: Vec<_> = (0..150)
            .map(|i| {
                let size = match rng.below(3) {
                    0 => rng.below(64) as u32,
                    1 => rng.below(4096) as u32,
                    _ => rng.below(30_000) as u32,
                };
                (
                    i * rng.below(3000),
                    rng.below(u64::from(hosts)) as u32,
                    rng.below(u64::from(hosts)) as u32,
                    size,
                )
            })
            .collect();
        let small_buffers = WormholeParams {
            buffer_bytes: 128,
            arbitration: Arbitration::RoundRobin {
                initial: InitialPointer::Random { seed },
            },
            ..WormholeParams::default()
        };
        assert_same(topology, small_buffers, &traffic);
        assert_same(topology, WormholeParams::default(), &traffic);
    }
}

/// A random scenario of a shape the coarse path supports: topology, parameters and
/// traffic (time ns, src, dst, size).
type Scenario = (Topology, WormholeParams, Vec<(u64, u32, u32, u32)>);

fn random_scenario(seed: u64) -> Scenario {
    let mut rng = Rng::new(seed);
    let mut topology = match rng.below(3) {
        0 => Topology::crossbar(8, LinkParams::default()),
        1 => crate::topology::Xgft::kary_ntree(4, 2)
            .expect("valid")
            .topology(LinkParams::default()),
        _ => crate::topology::Xgft::kary_ntree(2, 3)
            .expect("valid")
            .topology(LinkParams::default()),
    };
    // Source-routed (s-mod-k) instead of table-routed (d-mod-k), half of the time.
    if let crate::topology::Routing::DModK(x) = &topology.routing
        && rng.below(2) == 0
    {
        topology.routing = crate::topology::Routing::SModK(x.clone());
    }
    // Cables of different lengths (the flit time stays the same everywhere).
    for cable in &mut topology.cables {
        cable.link.propagation = SimTime::from_ns(5 * (1 + rng.below(20)));
    }
    let flit_bytes = [8, 16, 32][rng.below(3) as usize];
    let params = WormholeParams {
        flit_bytes,
        buffer_bytes: flit_bytes * (12 + rng.below(60) as u32),
        arbitration: if rng.below(4) == 0 {
            Arbitration::OldestFirst
        } else {
            Arbitration::RoundRobin {
                initial: InitialPointer::Random { seed },
            }
        },
        granularity: Granularity::Coarse,
    };
    let hosts = topology.hosts;
    let gap = 1 + rng.below(4000);
    let traffic: Vec<_> = (0..100)
        .map(|i| {
            let size = match rng.below(3) {
                0 => rng.below(64) as u32,
                1 => rng.below(4096) as u32,
                _ => rng.below(30_000) as u32,
            };
            (
                i * rng.below(gap),
                rng.below(u64::from(hosts)) as u32,
                rng.below(u64::from(hosts)) as u32,
                size,
            )
        })
        .collect();
    (topology, params, traffic)
}

/// `None` if both paths agree on a random scenario, else a shrunk traffic that shows
/// the difference.
fn random_mismatch(seed: u64) -> Option<String> {
    let (topology, params, traffic) = random_scenario(seed);
    let Ok(_) = NetworkBuilder::new(topology.clone())
        .switch_params(wormhole(params))
        .build()
    else {
        return None; // buffers too small for the longest cable
    };
    let differs = |t: &[(u64, u32, u32, u32)]| {
        let [(f, _, fs), (c, _, cs)] = fine_and_coarse(&topology, params, t);
        f != c || f.len() != t.len() || fs != cs
    };
    if !differs(&traffic) {
        return None;
    }
    let mut t = traffic.clone();
    let mut i = 0;
    while i < t.len() {
        let mut smaller = t.clone();
        smaller.remove(i);
        if differs(&smaller) { t = smaller } else { i += 1 }
    }
    let [(f, _, _), (c, _, _)] = fine_and_coarse(&topology, params, &t);
    Some(format!(
        "seed {seed} {params:?}\ntraffic {t:?}\nfine   {f:?}\ncoarse {c:?}"
    ))
}

#[test]
fn coarse_path_matches_the_fine_path_on_random_shapes() {
    // More seeds: VESPER_EQUIVALENCE_SEEDS=1000 cargo test --release coarse_path.
    let seeds: u64 = std::env::var("VESPER_EQUIVALENCE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    for seed in 1..=seeds {
        if let Some(report) = random_mismatch(seed) {
            panic!("{report}");
        }
    }
}
