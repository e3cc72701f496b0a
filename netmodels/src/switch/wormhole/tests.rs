use super::*;
use crate::builder::NetworkBuilder;
use crate::ids::SwitchId;
use crate::rng::Rng;
use crate::simulation::Simulation;
use crate::simulation::tests::{run, send};
use crate::switch::{Arbitration, Granularity, InitialPointer, SwitchKind, SwitchParams};
use crate::time::Bandwidth;
use crate::topology::{Cable, Routing, Topology, Torus};
use crate::trace::{BufferSide, RecordingSink};

thread_local! {
    /// Tests: the coarse path even where routing of no delay sends networks to the fine one.
    pub(super) static FORCE_COARSE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

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
    build_with(topology, params, AdapterParams::default(), sink)
}

fn build_with<S: TraceSink>(
    topology: Topology,
    params: WormholeParams,
    adapter: AdapterParams,
    sink: S,
) -> Simulation<S> {
    NetworkBuilder::new(topology)
        .switch_params(wormhole(params))
        .adapter_params(adapter)
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
        routing: Routing::ShortestPath,
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
        message.starts_with("wormhole switches: buffer_bytes: 32 bytes cannot cover"),
        "{message}"
    );
}

#[test]
fn flits_larger_than_the_largest_packet_are_refused() {
    let built = |flit_bytes: u32| {
        let params = WormholeParams {
            flit_bytes,
            buffer_bytes: 64 * flit_bytes,
            ..WormholeParams::default()
        };
        NetworkBuilder::crossbar(2, LinkParams::default())
            .switch_params(wormhole(params))
            .adapter_params(small_packets())
            .build()
    };
    // A flit of a whole packet (256 + 16 bytes) is a packet's own size: no padding.
    assert!(built(272).is_ok());
    let message = built(273).err().map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(
        message,
        "wormhole switches: flit_bytes: flits of 273 bytes are larger than the largest packet (256 + 16 bytes), \
         which every packet would be padded to; use flits of at most 272 bytes"
    );
}

/// A co-simulation moves the clock to each message of a client as it comes, with no
/// event there. An idle adapter's last tail, whose event is kept out of the queue, left
/// before that: the message goes at once, on either path (the coarse path once scheduled
/// that event in the past), and both paths agree.
#[test]
fn a_message_after_the_clock_moved_past_the_last_tail_goes_at_once() {
    let paths = [Granularity::Coarse, Granularity::Fine].map(|granularity| {
        let mut sim = NetworkBuilder::new(Topology::crossbar(2, LinkParams::default()))
            .switch_params(wormhole(granular(WormholeParams::default(), granularity)))
            .build()
            .expect("valid network");
        let mut deliveries = Vec::new();
        for (cookie, at_ns) in [(0, 0), (1, 100), (2, 1000)] {
            let at = SimTime::from_ns(at_ns);
            sim.run_until(at, &mut deliveries);
            sim.advance_clock(at);
            send(&mut sim, at_ns, 0, 1, 0, cookie);
        }
        deliveries.extend(run(&mut sim));
        deliveries
            .iter()
            .map(|d| (d.cookie, d.first_byte_sent, d.arrived))
            .collect::<Vec<_>>()
    });
    assert_eq!(paths[0], paths[1], "coarse, fine");
    let sent: Vec<_> = paths[0]
        .iter()
        .map(|&(cookie, sent, _)| (cookie, sent.as_ps() / 1000))
        .collect();
    assert_eq!(sent, [(0, 0), (1, 100), (2, 1000)]);
    // A header alone (two flits) crosses the switch unobstructed, when it comes alone.
    let unobstructed = ROUTE + TAU + 2 * PROP + flits(0) * TAU;
    assert_eq!(paths[0][0].2, SimTime::from_ns(unobstructed));
    assert_eq!(paths[0][2].2, SimTime::from_ns(1000 + unobstructed));
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
fn fine_and_coarse(
    topology: &Topology,
    params: WormholeParams,
    adapter: AdapterParams,
    traffic: &[(u64, u32, u32, u32)],
) -> [PathRun; 2] {
    fine_and_coarse_routed(
        topology,
        params,
        SwitchParams::default().routing_latency,
        adapter,
        traffic,
    )
}

/// [`fine_and_coarse`] with switches of `routing_latency`.
fn fine_and_coarse_routed(
    topology: &Topology,
    params: WormholeParams,
    routing_latency: SimTime,
    adapter: AdapterParams,
    traffic: &[(u64, u32, u32, u32)],
) -> [PathRun; 2] {
    [Granularity::Fine, Granularity::Coarse].map(|g| {
        let mut sim = NetworkBuilder::new(topology.clone())
            .switch_params(SwitchParams {
                routing_latency,
                ..wormhole(granular(params, g))
            })
            .adapter_params(adapter)
            .build()
            .expect("valid network");
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
    assert_same_with(topology, params, AdapterParams::default(), traffic)
}

fn assert_same_with(
    topology: &Topology,
    params: WormholeParams,
    adapter: AdapterParams,
    traffic: &[(u64, u32, u32, u32)],
) -> (u64, u64) {
    let [
        (fine, fine_events, fine_signals),
        (coarse, coarse_events, coarse_signals),
    ] = fine_and_coarse(topology, params, adapter, traffic);
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
fn coarse_path_matches_the_fine_path_behind_a_granted_packet() {
    // On a two-level tree, hosts 0 and 1 (one leaf switch) each send a packet towards
    // host 4, then one towards host 8, whose output host 12's long message holds. A
    // second packet fills its input behind the first while the first streams on, so a
    // STOP is due once the first one's tail has left. The coarse path keeps that STOP
    // out of the queue until the tail's event, which a STOP further down (the two
    // first packets share the up-link) may delay past the STOP.
    let topology = crate::topology::Xgft::kary_ntree(4, 2)
        .expect("valid")
        .topology(LinkParams::default());
    for long in (4_000..40_000).step_by(1_500) {
        let traffic = [
            (0, 12, 8, long),
            (10, 0, 4, 4096),
            (15, 1, 4, 4096),
            (20, 0, 8, 4096),
            (25, 1, 8, 4096),
            (30, 0, 4, 2000),
        ];
        assert_same(&topology, WormholeParams::default(), &traffic);
    }
}

/// A message enters its idle adapter at the instant a STOP reaches the adapter: the
/// STOP holds its first flit on both paths. (The fine path sent it at the injection,
/// ahead of the STOP's arrival, and the coarse path held it: 132 ns apart.)
#[test]
fn coarse_path_matches_the_fine_path_when_a_stop_arrives_with_a_message() {
    let mut topology = Topology::crossbar(3, LinkParams::default());
    // Host 0's cable is long and the buffers barely cover its round trip: a short
    // message fills the switch's input to the STOP mark while its head is routed.
    topology.cables[0].link.propagation = SimTime::from_ns(371);
    let params = WormholeParams {
        buffer_bytes: 8 * 28,
        ..WormholeParams::default()
    };
    let first = (0, 0, 1, 102);
    let [(_, _, signals), _] = fine_and_coarse(&topology, params, AdapterParams::default(), &[first]);
    let &(stop, _, _) = signals.iter().find(|s| s.2).expect("the first message fills the input");
    let reaches_adapter = (stop + SimTime::from_ns(371)).as_ps() / 1000;
    assert_same(&topology, params, &[first, (reaches_adapter, 0, 2, 85)]);
}

/// Buffers of `buffer_bytes`, round-robin pointers drawn from `seed`.
fn random_pointers(buffer_bytes: u32, seed: u64) -> WormholeParams {
    WormholeParams {
        buffer_bytes,
        arbitration: Arbitration::RoundRobin {
            initial: InitialPointer::Random { seed },
        },
        ..WormholeParams::default()
    }
}

#[test]
fn coarse_path_matches_the_fine_path_with_buffers_full_of_small_packets() {
    // Packets of one payload byte (three flits) from many hosts towards two: buffers of
    // 1 KB hold dozens of them, fill up and STOP, and the search for the GO runs over
    // the packets that are still arriving only (the others count as a whole).
    let tree = crate::topology::Xgft::kary_ntree(4, 2)
        .expect("valid")
        .topology(LinkParams::default());
    let tiny = AdapterParams {
        payload_bytes: 1,
        ..AdapterParams::default()
    };
    for seed in 1..=3u64 {
        let mut rng = Rng::new(seed);
        let traffic: Vec<_> = (0..40)
            .map(|i| {
                (
                    i * rng.below(200),
                    rng.below(16) as u32,
                    [5, 10][i as usize % 2],
                    20 + rng.below(120) as u32,
                )
            })
            .collect();
        let params = random_pointers(1024, seed);
        let [(_, _, signals), _] = fine_and_coarse(&tree, params, tiny, &traffic);
        assert!(
            signals.iter().any(|&(_, _, stop)| stop),
            "seed {seed}: the buffers must fill"
        );
        assert_same_with(&tree, params, tiny, &traffic);
    }
}

#[test]
fn coarse_path_matches_the_fine_path_on_random_traffic() {
    let tree = crate::topology::Xgft::kary_ntree(4, 2)
        .expect("valid")
        .topology(LinkParams::default());
    let crossbar = Topology::crossbar(8, LinkParams::default());
    let seeds = equivalence_seeds(4);
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
        let small_buffers = random_pointers(128, seed);
        assert_same(topology, small_buffers, &traffic);
        assert_same(topology, WormholeParams::default(), &traffic);
    }
}

/// A random scenario of a shape the coarse path supports: topology, parameters, routing
/// latency and traffic (time ns, src, dst, size).
type Scenario = (Topology, WormholeParams, SimTime, Vec<(u64, u32, u32, u32)>);

/// The switches' routing latency: mostly the default (100 ns, above the flit time of
/// flits up to 16 bytes), else from zero to twice `flit_bytes`'s flit time at 250 MB/s,
/// so that the routing latency falls below the flit time too.
fn random_routing_latency(rng: &mut Rng, flit_bytes: u32) -> SimTime {
    if rng.below(2) == 0 {
        SwitchParams::default().routing_latency
    } else {
        SimTime::from_ns(rng.below(u64::from(8 * flit_bytes) + 1))
    }
}

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
    if let Routing::DModK(x) = &topology.routing
        && rng.below(2) == 0
    {
        topology.routing = Routing::SModK(x.clone());
    }
    let (params, routing) = random_cables_and_switches(&mut rng, &mut topology, &[8, 16, 32, 64], 12..72, seed);
    let traffic = random_traffic(&mut rng, topology.hosts);
    (topology, params, routing, traffic)
}

/// Cables of random delays (5 to 100 ns; the flit time stays the same everywhere) on
/// `topology`, switches with flits of one of `flit_sizes` and buffers of `buffer_flits`,
/// round-robin from a random pointer or (a quarter of the time) oldest-first; and their
/// routing latency.
fn random_cables_and_switches(
    rng: &mut Rng,
    topology: &mut Topology,
    flit_sizes: &[u32],
    buffer_flits: std::ops::Range<u32>,
    seed: u64,
) -> (WormholeParams, SimTime) {
    random_cable_delays(rng, topology);
    let flit_bytes = flit_sizes[rng.below(flit_sizes.len() as u64) as usize];
    let routing = random_routing_latency(rng, flit_bytes);
    let spread = u64::from(buffer_flits.end - buffer_flits.start);
    let params = WormholeParams {
        flit_bytes,
        buffer_bytes: flit_bytes * (buffer_flits.start + rng.below(spread) as u32),
        arbitration: random_arbitration(rng, seed),
        granularity: Granularity::Coarse,
        bubble: false,
    };
    (params, routing)
}

/// Cables of random delays, 5 to 100 ns (the flit time stays the same everywhere).
fn random_cable_delays(rng: &mut Rng, topology: &mut Topology) {
    for cable in &mut topology.cables {
        cable.link.propagation = SimTime::from_ns(5 * (1 + rng.below(20)));
    }
}

/// Round-robin from a pointer drawn with `seed`, or (a quarter of the time) oldest-first.
fn random_arbitration(rng: &mut Rng, seed: u64) -> Arbitration {
    if rng.below(4) == 0 {
        Arbitration::OldestFirst
    } else {
        Arbitration::RoundRobin {
            initial: InitialPointer::Random { seed },
        }
    }
}

/// 100 messages of mixed sizes between random hosts, at random gaps.
fn random_traffic(rng: &mut Rng, hosts: u32) -> Vec<(u64, u32, u32, u32)> {
    let gap = 1 + rng.below(4000);
    (0..100)
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
        .collect()
}

/// A random scenario of long cables and buffers barely above their round trip: the
/// STOP and GO marks lie a flit or two apart, so an input sends its GO (and its next
/// STOP) while the STOP before is still on its way up the cable.
fn random_long_cable_scenario(seed: u64) -> Scenario {
    let mut rng = Rng::new(seed);
    let mut topology = match rng.below(2) {
        0 => Topology::crossbar(4, LinkParams::default()),
        _ => crate::topology::Xgft::kary_ntree(2, 3)
            .expect("valid")
            .topology(LinkParams::default()),
    };
    for cable in &mut topology.cables {
        cable.link.propagation = SimTime::from_ns(150 + rng.below(451));
    }
    // 8-byte flits (32 ns): the longest cable (600 ns) has 39 flits in flight.
    let params = WormholeParams {
        buffer_bytes: 8 * (39 + 2 + rng.below(4) as u32),
        arbitration: Arbitration::RoundRobin {
            initial: InitialPointer::Random { seed },
        },
        ..WormholeParams::default()
    };
    let routing = random_routing_latency(&mut rng, params.flit_bytes);
    let traffic = random_traffic(&mut rng, topology.hosts);
    (topology, params, routing, traffic)
}

/// A random scenario of deep or slimmed trees under bursts on the flit times: packets
/// cross up to seven switches, many start at one instant, and half of them go to two
/// hot hosts, so that worms stall behind worms several switches up and down, and
/// events of one instant meet at many switches.
fn random_deep_scenario(seed: u64) -> Scenario {
    let mut rng = Rng::new(seed);
    let shape = match rng.below(3) {
        0 => crate::topology::Xgft::kary_ntree(2, 4),
        1 => crate::topology::Xgft::kary_ntree(3, 3),
        _ => crate::topology::Xgft::new(vec![4, 4], vec![1, 2]),
    };
    let mut topology = shape.expect("valid").topology(LinkParams::default());
    // Buffers from barely above the round trip of a 100 ns cable (10 flits of 8 bytes),
    // where an output drains its buffer dry before flits come after a GO, to roomy.
    let (params, routing) = random_cables_and_switches(&mut rng, &mut topology, &[8, 16], 10..60, seed);
    let traffic = bursts_to_hot_hosts(&mut rng, topology.hosts, params.flit_bytes);
    (topology, params, routing, traffic)
}

/// 100 messages in bursts on the flit times of `flit_bytes` (up to eight messages per
/// slot), half of them to two hot hosts, of mixed sizes.
fn bursts_to_hot_hosts(rng: &mut Rng, hosts: u32, flit_bytes: u32) -> Vec<(u64, u32, u32, u32)> {
    // The flit time at 250 MB/s, in ns.
    let slot = u64::from(4 * flit_bytes);
    let hosts = u64::from(hosts);
    let hot = [rng.below(hosts) as u32, rng.below(hosts) as u32];
    let mut at = 0;
    (0..100)
        .map(|_| {
            if rng.below(8) == 0 {
                at += slot * rng.below(200);
            }
            let dst = if rng.below(2) == 0 {
                hot[rng.below(2) as usize]
            } else {
                rng.below(hosts) as u32
            };
            let size = match rng.below(3) {
                0 => rng.below(64) as u32,
                1 => rng.below(4096) as u32,
                _ => rng.below(20_000) as u32,
            };
            (at, rng.below(hosts) as u32, dst, size)
        })
        .collect()
}

/// A random mesh (a line or a grid of switches, dimension-order routing, no bubble flow
/// control) under bursts: a worm crosses up to six switches in a row, each input but
/// the first fed by a switch, and worms entering at every switch stall the ones going
/// through, so STOPs and GOs travel up chains of switches (in a fat tree, at most the
/// few of one path up and down).
fn random_mesh_scenario(seed: u64) -> Scenario {
    let mut rng = Rng::new(seed);
    let shapes = [
        Torus::new(vec![6], false, 1),
        Torus::new(vec![4], false, 2),
        Torus::new(vec![3, 3], false, 1),
        Torus::new(vec![2, 4], false, 2),
    ];
    let shape = shapes[rng.below(shapes.len() as u64) as usize].clone().expect("valid");
    let mut topology = shape.topology(LinkParams::default());
    let (params, routing) = random_cables_and_switches(&mut rng, &mut topology, &[8, 16], 10..40, seed);
    let traffic = bursts_to_hot_hosts(&mut rng, topology.hosts, params.flit_bytes);
    (topology, params, routing, traffic)
}

/// A random torus, mesh or hypercube with bubble flow control, buffers just large enough
/// for two of the adapters' largest packets and a random margin, and random traffic.
fn random_torus_scenario(seed: u64) -> Scenario {
    let mut rng = Rng::new(seed);
    let shapes = [
        Torus::new(vec![8], true, 1),
        Torus::new(vec![3, 4], true, 2),
        Torus::new(vec![4, 4], true, 1),
        Torus::new(vec![2, 3, 3], true, 1),
        Torus::new(vec![3, 3], false, 1),
        Torus::hypercube(3, 2),
    ];
    let shape = shapes[rng.below(shapes.len() as u64) as usize].clone().expect("valid");
    let mut topology = shape.topology(LinkParams::default());
    random_cable_delays(&mut rng, &mut topology);
    let flit_bytes = [8, 16, 32, 64][rng.below(4) as usize];
    let routing = random_routing_latency(&mut rng, flit_bytes);
    // Two packets of 4096 + 16 bytes below the STOP mark of a 100 ns cable, and a margin.
    let largest = 4112u32.div_ceil(flit_bytes);
    let in_flight = 200u32.div_ceil(4 * flit_bytes) + 1;
    let params = WormholeParams {
        flit_bytes,
        buffer_bytes: flit_bytes * (2 * largest + 1 + in_flight + rng.below(3 * u64::from(largest)) as u32),
        arbitration: random_arbitration(&mut rng, seed),
        granularity: Granularity::Coarse,
        bubble: true,
    };
    let traffic = random_traffic(&mut rng, topology.hosts);
    (topology, params, routing, traffic)
}

/// A random crossbar or tree where cables, the routing, or both take no time (some
/// cables only, or every one), under bursts of messages from empty to a few flits and
/// larger ones: events of one instant then feed one another (a STOP reaches the output
/// it holds at the instant it is sent, a head is routed at the instant it arrives).
fn random_zero_delay_scenario(seed: u64) -> Scenario {
    let mut rng = Rng::new(seed);
    let mut topology = match rng.below(3) {
        0 => Topology::crossbar(3 + rng.below(6) as u32, LinkParams::default()),
        1 => crate::topology::Xgft::kary_ntree(2, 2)
            .expect("valid")
            .topology(LinkParams::default()),
        _ => crate::topology::Xgft::kary_ntree(2, 3)
            .expect("valid")
            .topology(LinkParams::default()),
    };
    let (params, mut routing) = random_cables_and_switches(&mut rng, &mut topology, &[8, 16], 10..40, seed);
    let (zero_cables, zero_routing) = match rng.below(3) {
        0 => (true, false),
        1 => (false, true),
        _ => (true, true),
    };
    if zero_cables {
        let every = rng.below(2) == 0;
        for cable in &mut topology.cables {
            if every || rng.below(2) == 0 {
                cable.link.propagation = SimTime::ZERO;
            }
        }
    }
    if zero_routing {
        routing = SimTime::ZERO;
    }
    let mut traffic = bursts_to_hot_hosts(&mut rng, topology.hosts, params.flit_bytes);
    for message in &mut traffic {
        if rng.below(2) == 0 {
            message.3 = rng.below(u64::from(3 * params.flit_bytes)) as u32;
        }
    }
    (topology, params, routing, traffic)
}

/// `None` if both paths agree on a random scenario, else a shrunk traffic that shows
/// the difference.
fn random_mismatch(seed: u64, scenario: fn(u64) -> Scenario) -> Option<String> {
    let (topology, params, routing, traffic) = scenario(seed);
    let Ok(_) = NetworkBuilder::new(topology.clone())
        .switch_params(wormhole(params))
        .build()
    else {
        return None; // buffers too small for the longest cable
    };
    let differs = |t: &[(u64, u32, u32, u32)]| {
        let [(f, _, fs), (c, _, cs)] = fine_and_coarse_routed(&topology, params, routing, AdapterParams::default(), t);
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
    let [(f, _, _), (c, _, _)] = fine_and_coarse_routed(&topology, params, routing, AdapterParams::default(), &t);
    Some(format!(
        "seed {seed} {params:?}, routing {routing}\ntraffic {t:?}\nfine   {f:?}\ncoarse {c:?}"
    ))
}

/// How many random scenarios a comparison of the paths runs: `default`, or
/// `VESPER_EQUIVALENCE_SEEDS`.
fn equivalence_seeds(default: u64) -> u64 {
    std::env::var("VESPER_EQUIVALENCE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Both paths agree on the random scenarios of seeds 1 to `seeds` (or
/// `VESPER_EQUIVALENCE_SEEDS`); `all_build`: every scenario must build, as a refused one
/// would be skipped unseen.
fn paths_agree(seeds: u64, scenario: fn(u64) -> Scenario, all_build: bool) {
    for seed in 1..=equivalence_seeds(seeds) {
        if all_build {
            let (topology, params, _, _) = scenario(seed);
            NetworkBuilder::new(topology)
                .switch_params(wormhole(params))
                .build()
                .expect("buffers large enough for the scenario");
        }
        if let Some(report) = random_mismatch(seed, scenario) {
            panic!("{report}");
        }
    }
}

#[test]
fn coarse_path_matches_the_fine_path_on_random_shapes() {
    // More seeds: VESPER_EQUIVALENCE_SEEDS=1000 cargo test --release coarse_path.
    paths_agree(12, random_scenario, false);
}

#[test]
fn coarse_path_matches_the_fine_path_with_signals_on_the_cable_together() {
    paths_agree(8, random_long_cable_scenario, true);
}

#[test]
fn coarse_path_matches_the_fine_path_on_deep_trees_under_bursts() {
    paths_agree(8, random_deep_scenario, false);
}

#[test]
fn coarse_path_matches_the_fine_path_on_meshes_under_bursts() {
    paths_agree(8, random_mesh_scenario, false);
}

#[test]
fn coarse_path_matches_the_fine_path_on_random_tori_with_bubble_flow_control() {
    paths_agree(6, random_torus_scenario, true);
}

/// A random scenario of every shape above (bursts on crossbars and trees, deep trees,
/// meshes, tori with bubble flow control) where some cables, or every one, take no time,
/// and the routing some: a STOP or GO then reaches the output it holds or frees at the
/// instant it is sent, and a tail reaches its destination at the instant its output is
/// done with it.
fn random_zero_cable_scenario(seed: u64) -> Scenario {
    let shapes: [fn(u64) -> Scenario; 4] = [
        random_zero_delay_scenario,
        random_deep_scenario,
        random_mesh_scenario,
        random_torus_scenario,
    ];
    let (mut topology, params, routing, traffic) = shapes[(seed % 4) as usize](seed);
    let mut rng = Rng::new(seed.wrapping_mul(31));
    let every = rng.below(2) == 0;
    for cable in &mut topology.cables {
        if every || rng.below(2) == 0 {
            cable.link.propagation = SimTime::ZERO;
        }
    }
    let routing = if routing == SimTime::ZERO {
        SimTime::from_ns(1 + rng.below(u64::from(8 * params.flit_bytes)))
    } else {
        routing
    };
    (topology, params, routing, traffic)
}

#[test]
fn coarse_path_matches_the_fine_path_with_cables_of_no_delay() {
    paths_agree(30, random_zero_cable_scenario, false);
}

/// A tail crossing a cable of no delay reaches its destination adapter at the instant
/// its output's `TailDone` frees its input: the adapter frees the packet's record first,
/// and an adapter's `TailDone` of that instant may cut its next packet into it. The
/// coarse path then took the flits of that new packet off the input's `held` bound
/// instead of those of the packet that left: the bound fell below the STOP mark and the
/// STOP that the packet behind it was due to send was never searched for.
#[test]
fn coarse_path_matches_the_fine_path_when_a_tail_arrives_as_its_output_is_done() {
    let mut topology = Topology::crossbar(3, LinkParams::default());
    for cable in &mut topology.cables {
        cable.link.propagation = SimTime::ZERO;
    }
    // 18 flits: STOP at 17.
    let params = WormholeParams {
        buffer_bytes: 8 * 18,
        ..WormholeParams::default()
    };
    let traffic = [
        // Host 1's output is busy for a long time...
        (0, 2, 1, 4000),
        // ... so host 0's second packet (20 flits) waits in the switch and fills its
        // input, behind a header-only packet (2 flits, record 1) that goes through to
        // host 2 and arrives there as its output is done with it (196 ns).
        (0, 0, 2, 0),
        (0, 0, 1, 144),
        // Host 1's adapter sends its last flit of 6 at 164 ns: at 196 ns it cuts a packet
        // of 20 flits into record 1.
        (4, 1, 0, 32),
        (4, 1, 0, 144),
    ];
    let [(_, _, signals), _] = fine_and_coarse(&topology, params, AdapterParams::default(), &traffic);
    assert!(signals.iter().any(|s| s.2), "host 0's second packet fills its input");
    assert_same(&topology, params, &traffic);
}

/// A random crossbar or tree whose routing takes no time: such networks step by flit,
/// asked for coarse steps or not, and so give the fine path's results.
fn random_zero_routing_scenario(seed: u64) -> Scenario {
    let (topology, params, _, traffic) = random_zero_delay_scenario(seed);
    (topology, params, SimTime::ZERO, traffic)
}

#[test]
fn networks_with_routing_of_no_delay_give_the_fine_paths_results() {
    paths_agree(30, random_zero_routing_scenario, true);
}

/// Why routing of no delay steps by flit. A head that comes to the front of its buffer
/// when the tail before it is sent, at a send (rank 6) or at its grant (rank 5: a packet
/// of one flit), is routed at that instant, after its arbitration; the fine path handles
/// its `Routed` next, ahead of the events of the instant still queued. So it joins an
/// arbitration of the instant still queued, or, when two heads freed at one instant want
/// one idle output, the one whose tail's event was queued first takes it: the order the
/// fine path's events happen to be queued in, which the coarse path's do not follow
/// (there, the tail leaves at its `TailLeaves`, rank 6, after every arbitration). Here,
/// host 2's one-flit message to itself is granted and sent at the instant host 2's leaf
/// switch arbitrates its up-link: host 2's empty message to host 1, behind it, joins that
/// arbitration and wins it (oldest-first, on its lower port) against the second packet
/// of host 3's message to host 1, which wins on the coarse path.
#[test]
fn the_coarse_path_would_differ_with_routing_of_no_delay() {
    let mut topology = crate::topology::Xgft::kary_ntree(2, 2)
        .expect("valid")
        .topology(LinkParams::default());
    for (cable, ns) in topology.cables.iter_mut().zip([10, 5, 15, 20, 70, 25, 20, 45]) {
        cable.link.propagation = SimTime::from_ns(ns);
    }
    let params = WormholeParams {
        flit_bytes: 16,
        buffer_bytes: 16 * 25,
        arbitration: Arbitration::OldestFirst,
        ..WormholeParams::default()
    };
    let traffic = [(0, 3, 1, 4542), (0, 3, 2, 2601), (22400, 2, 2, 0), (26816, 2, 1, 0)];
    let paths = || fine_and_coarse_routed(&topology, params, SimTime::ZERO, AdapterParams::default(), &traffic);
    let [(fine, _, _), (coarse, _, _)] = paths();
    assert_eq!(fine, coarse, "the fine path, whichever was asked for");
    FORCE_COARSE.with(|f| f.set(true));
    let [(fine, _, _), (coarse, _, _)] = paths();
    FORCE_COARSE.with(|f| f.set(false));
    // Host 2's empty message to host 1 goes first on the fine path, host 3's message on
    // the coarse one.
    let arrival = |d: &[(SimTime, u64, SimTime)], cookie| d.iter().find(|d| d.1 == cookie).map(|d| d.0);
    assert!(arrival(&fine, 3) < arrival(&fine, 0), "{fine:?}");
    assert!(arrival(&coarse, 3) > arrival(&coarse, 0), "{coarse:?}");
}

// ------------------------------------------------------------ tori: bubble flow control

/// Adapters cutting packets of 256 bytes of payload (34 flits with the header).
fn small_packets() -> AdapterParams {
    AdapterParams {
        payload_bytes: 256,
        ..AdapterParams::default()
    }
}

/// Room for two 34-flit packets below the STOP mark of a 25 ns cable: 2·34 + 1 + 3 flits.
const BUBBLE_BUFFER_BYTES: u32 = 72 * 8;

fn bubble() -> WormholeParams {
    WormholeParams {
        bubble: true,
        buffer_bytes: BUBBLE_BUFFER_BYTES,
        ..WormholeParams::default()
    }
}

/// Saturating traffic on a torus of one host per switch: every host sends 20 tornado
/// messages (half way round every ring, the longest path) and 20 to random hosts, all
/// of several packets, all at once.
fn saturation(t: &Torus) -> Vec<(u64, u32, u32, u32)> {
    let mut rng = Rng::new(3);
    let tornado = |mut h: u32| {
        let (mut dst, mut stride) = (0, 1);
        for &k in &t.dims {
            dst += (h % k + k / 2) % k * stride;
            (h, stride) = (h / k, stride * k);
        }
        dst
    };
    let hosts = t.hosts();
    let mut traffic = Vec::new();
    for round in 0..20u64 {
        for src in 0..hosts {
            let random = rng.below(u64::from(hosts)) as u32;
            for dst in [tornado(src), random] {
                traffic.push((round * 100, src, dst, 1000 + rng.below(1000) as u32));
            }
        }
    }
    traffic
}

fn saturated_tori() -> [Torus; 2] {
    [
        Torus::new(vec![8], true, 1).expect("valid"),
        Torus::new(vec![4, 4], true, 1).expect("valid"),
    ]
}

#[test]
fn a_saturated_torus_deadlocks_without_bubble_flow_control() {
    for t in saturated_tori() {
        // The builder refuses dimension-order routing on rings without bubble flow
        // control; breadth-first shortest paths route these cables the same way (see
        // the torus tests) and are not checked.
        let mut topology = t.topology(LinkParams::default());
        topology.routing = Routing::ShortestPath;
        let mut sim = build_with(
            topology,
            WormholeParams::default(),
            small_packets(),
            crate::trace::NullSink,
        );
        let traffic = saturation(&t);
        for (i, &(at, src, dst, size)) in traffic.iter().enumerate() {
            send(&mut sim, at, src, dst, size, i as u64);
        }
        let delivered = run(&mut sim).len();
        // The events ran out with messages still in the network: every worm waits for an
        // output that another worm of the ring holds.
        assert_eq!(sim.next_event_time(), None);
        assert_eq!(sim.in_flight(), traffic.len() - delivered, "{t:?}");
        assert!(sim.in_flight() > 0, "{t:?}: all {delivered} delivered");
    }
}

#[test]
fn bubble_flow_control_delivers_everything_on_a_saturated_torus() {
    for t in saturated_tori() {
        let traffic = saturation(&t);
        let [(fine, _, fine_signals), (coarse, _, coarse_signals)] =
            fine_and_coarse(&t.topology(LinkParams::default()), bubble(), small_packets(), &traffic);
        // Every message exactly once, at the same instant on both paths.
        let mut cookies: Vec<u64> = coarse.iter().map(|d| d.1).collect();
        cookies.sort_unstable();
        assert_eq!(cookies, (0..traffic.len() as u64).collect::<Vec<_>>(), "{t:?}");
        assert_eq!(fine, coarse, "{t:?}");
        // Admitted packets fit below the STOP mark: stop/go never acts.
        assert_eq!((fine_signals.len(), coarse_signals.len()), (0, 0), "{t:?}");
    }
}

#[test]
fn zero_load_latency_on_tori_matches_the_closed_form() {
    // One 27-flit packet at a time from host 0 to every host: each switch on the way
    // adds the routing latency and the head's flit time, each cable its delay.
    let torus = Torus::new(vec![4, 4], true, 1).expect("valid");
    let mut shortest = torus.topology(LinkParams::default());
    shortest.routing = Routing::ShortestPath;
    let mesh = Torus::new(vec![3, 3], false, 1).expect("valid");
    let cases = [
        (torus.topology(LinkParams::default()), &torus, true),
        (shortest, &torus, false),
        (mesh.topology(LinkParams::default()), &mesh, false),
        (mesh.topology(LinkParams::default()), &mesh, true),
    ];
    for (topology, t, on) in cases {
        let params = WormholeParams { bubble: on, ..bubble() };
        let mut sim = build_with(topology, params, small_packets(), crate::trace::NullSink);
        for dst in 0..t.hosts() {
            send(&mut sim, u64::from(dst) * 100_000, 0, dst, 200, u64::from(dst));
        }
        for d in run(&mut sim) {
            // Switch hops: the distance in each dimension, the short way round a ring.
            let (mut h, mut hops) = (d.dst.0, 1);
            for (i, &k) in t.dims.iter().enumerate() {
                let x = h % k;
                hops += if t.is_ring(i) { x.min(k - x) } else { x };
                h /= k;
            }
            let hops = u64::from(hops);
            let expected = d.cookie * 100_000 + hops * (ROUTE + TAU) + (hops + 1) * PROP + flits(200) * TAU;
            assert_eq!(
                d.arrived,
                SimTime::from_ns(expected),
                "{t:?} bubble {on}: host 0 → {}",
                d.dst
            );
        }
    }
}

#[test]
fn a_freed_slot_is_seen_upstream_after_the_cables_delay() {
    // Host 0 sends two 34-flit packets to host 1, one switch round a ring of four. The
    // second enters the ring at switch 0 and needs two free slots at switch 1: it waits
    // for the first's slot, freed when the first's tail leaves switch 1 (that output is
    // released), and seen at switch 0 when the credit has come back up the cable.
    let ring = Torus::new(vec![4], true, 1).expect("valid");
    for prop in [PROP, 0] {
        let link = LinkParams {
            propagation: SimTime::from_ns(prop),
            ..LinkParams::default()
        };
        let [(fine, ..), (coarse, ..)] =
            fine_and_coarse(&ring.topology(link), bubble(), small_packets(), &[(0, 0, 1, 512)]);
        // The first packet's tail leaves switch 1 for host 1.
        let released = 2 * (ROUTE + TAU) + 2 * prop + flits(256) * TAU;
        // The second crosses switch 0 to switch 1, is routed there, and reaches host 1.
        let credit = released + prop;
        let arrived = credit + (TAU + prop) + ROUTE + flits(256) * TAU + prop;
        assert_eq!(fine[0].0, SimTime::from_ns(arrived), "cables of {prop} ns");
        assert_eq!(fine, coarse, "cables of {prop} ns");
    }
}

#[test]
fn a_wait_for_a_bubble_slot_is_traced_at_the_output() {
    // As above: the second packet, at the front of switch 0's buffer as the first's
    // tail starts out, is routed, and finds the output to switch 1 free but no room
    // for two beyond the cable until the first's credit is back.
    let ring = Torus::new(vec![4], true, 1).expect("valid");
    let mut sim = build_with(
        ring.topology(LinkParams::default()),
        bubble(),
        small_packets(),
        RecordingSink::default(),
    );
    send(&mut sim, 0, 0, 1, 512, 0);
    let d = run(&mut sim);
    let waits = &sim.sink().room_waits;
    assert_eq!(waits.len(), 2, "{waits:?}");
    let routed = (ROUTE + TAU) + PROP + (flits(256) - 1) * TAU + ROUTE;
    let port = waits[0].1;
    assert_eq!(port.device, Device::Switch(SwitchId(0)));
    assert_eq!(waits[0], (SimTime::from_ns(routed), port, true));
    let credit = 2 * (ROUTE + TAU) + 3 * PROP + flits(256) * TAU;
    assert_eq!(waits[1], (SimTime::from_ns(credit), port, false));
    assert_eq!(d.len(), 1);
}

#[test]
fn a_torus_needs_bubble_flow_control() {
    let build = |t: Torus, params: WormholeParams| {
        NetworkBuilder::new(t.topology(LinkParams::default()))
            .switch_params(wormhole(params))
            .adapter_params(small_packets())
            .build()
            .err()
            .map(|e| e.to_string())
    };
    let torus = || Torus::new(vec![4, 2], true, 1).expect("valid");
    assert_eq!(
        build(torus(), WormholeParams::default()).as_deref(),
        Some(
            "wormhole switches: bubble: dimension-order routing around the rings of a torus deadlocks wormhole \
             switches, which have no virtual channels; turn bubble flow control on (or use a mesh)"
        )
    );
    // No ring, no cycle: meshes, hypercubes and tori of 2-switch dimensions need none.
    for t in [
        Torus::new(vec![4, 4], false, 1),
        Torus::hypercube(3, 1),
        Torus::new(vec![2, 2], true, 1),
    ] {
        assert_eq!(build(t.expect("valid"), WormholeParams::default()), None);
    }
    // The smallest buffer that holds two packets below the STOP mark is enough.
    assert_eq!(build(torus(), bubble()), None);
    let one_flit_short = WormholeParams {
        buffer_bytes: BUBBLE_BUFFER_BYTES - 8,
        ..bubble()
    };
    assert_eq!(
        build(torus(), one_flit_short).as_deref(),
        Some(
            "wormhole switches: buffer_bytes: bubble flow control needs room for two packets of 272 bytes \
             (the adapter's payload and header, in whole flits) below the STOP threshold; 568 bytes leave \
             room for 1, at least 576 bytes are needed"
        )
    );
}
