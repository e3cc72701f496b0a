use super::*;
use crate::adapter::{AdapterParams, Interleave};
use crate::build_error::{BuildError, room_for};
use crate::builder::NetworkBuilder;
use crate::ideal::IdealParams;
use crate::ids::{Device, SwitchId};
use crate::switch::{SwitchKind, SwitchParams};
use crate::time::Bandwidth;
use crate::topology::{Topology, TopologyError};
use crate::trace::{BufferSide, PortRef, RecordingSink, TraceSink};

const KIB: u32 = 1024;

fn crossbar(hosts: u32) -> Simulation {
    NetworkBuilder::crossbar(hosts, LinkParams::default())
        .build()
        .expect("valid network")
}

/// Injects a message of `size_bytes` from host `src` to `dst` at `at_ns`.
pub(crate) fn send<S: TraceSink>(
    sim: &mut Simulation<S>,
    at_ns: u64,
    src: u32,
    dst: u32,
    size_bytes: u32,
    cookie: u64,
) {
    let spec = MessageSpec {
        src: HostId(src),
        dst: HostId(dst),
        size_bytes,
        cookie,
    };
    sim.inject(SimTime::from_ns(at_ns), spec).expect("valid injection");
}

/// Runs `sim` to the end; its deliveries.
pub(crate) fn run<S: TraceSink>(sim: &mut Simulation<S>) -> Vec<Delivery> {
    let mut out = Vec::new();
    sim.run_until(SimTime::MAX, &mut out);
    out
}

/// Time on one default link of a message's packets, headers included.
fn wire(size_bytes: u32) -> SimTime {
    let adapter = AdapterParams::default();
    let bytes = size_bytes + adapter.packets(size_bytes) * adapter.header_bytes;
    LinkParams::default().bandwidth.serialization_time(u64::from(bytes))
}

/// hops × per-hop latency + serialisation of headers and payload, for
/// host → switch → host: the packets stream back to back through the cut-through switch.
fn zero_load_latency(size_bytes: u32) -> SimTime {
    let link = LinkParams::default();
    wire(size_bytes) + link.propagation + link.propagation + SwitchParams::default().routing_latency
}

#[test]
fn zero_load_latency_matches_the_closed_form() {
    for size in [0, 1, 8, KIB, 64 * KIB, 1 << 20] {
        let mut sim = crossbar(4);
        send(&mut sim, 1000, 0, 3, size, 7);
        let d = run(&mut sim);
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].arrived,
            SimTime::from_ns(1000) + zero_load_latency(size),
            "size {size}"
        );
        assert_eq!(d[0].first_byte_sent, SimTime::from_ns(1000));
        assert_eq!(
            (d[0].cookie, d[0].src, d[0].dst, d[0].size_bytes),
            (7, HostId(0), HostId(3), size)
        );
    }
    // The default Myrinet-class numbers: 1024 + 16 bytes at 4 ns each on the wire,
    // 2 × 25 ns cable, 100 ns route; 64 KiB is 16 packets of 4 KiB + 16.
    assert_eq!(zero_load_latency(KIB), SimTime::from_ns(4310));
    assert_eq!(
        zero_load_latency(64 * KIB),
        SimTime::from_ns(65536 * 4 + 16 * 16 * 4 + 150)
    );
}

#[test]
fn contention_at_the_destination_port_serialises_messages() {
    let mut sim = crossbar(3);
    send(&mut sim, 0, 0, 2, KIB, 0);
    send(&mut sim, 0, 1, 2, KIB, 1);
    let d = run(&mut sim);
    assert_eq!(d[0].arrived, zero_load_latency(KIB));
    assert_eq!(d[1].arrived, zero_load_latency(KIB) + wire(KIB));
    // Both left their adapters at once: the wait was in the switch.
    assert_eq!(
        (d[0].first_byte_sent, d[1].first_byte_sent),
        (SimTime::ZERO, SimTime::ZERO)
    );
}

#[test]
fn different_destinations_do_not_contend() {
    let mut sim = crossbar(4);
    send(&mut sim, 0, 0, 2, KIB, 0);
    send(&mut sim, 0, 1, 3, KIB, 1);
    let d = run(&mut sim);
    assert_eq!(d[0].arrived, d[1].arrived);
}

#[test]
fn one_adapter_sends_one_message_at_a_time() {
    let mut sim = crossbar(3);
    send(&mut sim, 0, 0, 1, KIB, 0);
    send(&mut sim, 0, 0, 2, KIB, 1);
    let d = run(&mut sim);
    assert_eq!(d[1].first_byte_sent, wire(KIB));
    assert_eq!(d[1].arrived, zero_load_latency(KIB) + wire(KIB));
}

#[test]
fn a_slow_upstream_link_holds_the_tail_back() {
    // Cut-through never lets an output finish before the tail has arrived.
    let slow = LinkParams {
        bandwidth: Bandwidth::from_bytes_per_second(125_000_000).expect("non-zero"),
        propagation: SimTime::from_ns(25),
    };
    let fast = LinkParams::default();
    let mut topology = Topology::crossbar(2, fast);
    topology.cables[0].link = slow;
    let mut sim = NetworkBuilder::new(topology).build().expect("valid");
    send(&mut sim, 0, 0, 1, KIB, 0);
    let d = run(&mut sim);
    let tail_at_switch = slow.bandwidth.serialization_time(u64::from(KIB + 16)) + slow.propagation;
    assert_eq!(d[0].arrived, tail_at_switch + fast.propagation);
}

#[test]
fn every_injected_message_is_delivered_exactly_once() {
    let mut sim = crossbar(8);
    let mut cookies = Vec::new();
    for i in 0..200u64 {
        let src = (i * 7 % 8) as u32;
        let dst = (i * 3 % 8) as u32;
        send(&mut sim, i * 10, src, dst, (i as u32 % 5) * 1000, i);
        cookies.push(i);
    }
    let mut delivered: Vec<u64> = run(&mut sim).iter().map(|d| d.cookie).collect();
    delivered.sort_unstable();
    assert_eq!(delivered, cookies);
    assert_eq!(sim.in_flight(), 0);
}

#[test]
fn deliveries_come_out_in_time_order() {
    let mut sim = crossbar(8);
    for i in 0..100u64 {
        send(
            &mut sim,
            i,
            (i % 8) as u32,
            ((i + 3) % 8) as u32,
            (i as u32 * 37) % 9000,
            i,
        );
    }
    let d = run(&mut sim);
    assert!(d.windows(2).all(|w| w[0].arrived <= w[1].arrived));
}

#[test]
fn same_inputs_give_the_same_run() {
    let scenario = || {
        let mut sim = crossbar(16);
        for i in 0..500u64 {
            send(
                &mut sim,
                i * 3,
                (i * 5 % 16) as u32,
                (i * 11 % 16) as u32,
                (i as u32 * 101) % 5000,
                i,
            );
        }
        let d = run(&mut sim);
        (format!("{d:?}"), sim.events_processed())
    };
    assert_eq!(scenario(), scenario());
}

#[test]
fn run_until_stops_at_the_limit() {
    let mut sim = crossbar(2);
    send(&mut sim, 0, 0, 1, KIB, 0);
    let mut d = Vec::new();
    sim.run_until(SimTime::from_ns(4309), &mut d);
    assert!(d.is_empty());
    assert_eq!(sim.next_event_time(), Some(SimTime::from_ns(4310)));
    sim.run_until(SimTime::from_ns(4310), &mut d);
    assert_eq!(d.len(), 1);
}

#[test]
fn bad_injections_are_refused() {
    let mut sim = crossbar(2);
    let spec = MessageSpec {
        src: HostId(0),
        dst: HostId(5),
        size_bytes: 1,
        cookie: 0,
    };
    assert_eq!(
        sim.inject(SimTime::ZERO, spec),
        Err(InjectError::UnknownHost {
            host: HostId(5),
            hosts: 2
        })
    );
    send(&mut sim, 100, 0, 1, 1, 0);
    run(&mut sim);
    let ok = MessageSpec { dst: HostId(1), ..spec };
    assert!(matches!(
        sim.inject(SimTime::ZERO, ok),
        Err(InjectError::InThePast { .. })
    ));
    // A message must leave itself room to arrive before the clock runs out.
    let late = SimTime::from_ps(SimTime::LAST_INJECTION.as_ps() + 1);
    assert!(matches!(sim.inject(late, ok), Err(InjectError::TooLate { .. })));
    sim.inject(SimTime::LAST_INJECTION, ok)
        .expect("the last instant is allowed");
    let d = run(&mut sim);
    assert!(
        d.iter()
            .all(|d| d.arrived > SimTime::LAST_INJECTION && d.arrived < SimTime::MAX)
    );
    assert_eq!(d.len(), 1);
}

#[test]
fn message_slots_are_reused() {
    let mut sim = crossbar(2);
    for round in 0..10u64 {
        send(&mut sim, round * 100_000, 0, 1, 1, round);
        run(&mut sim);
    }
    assert_eq!(sim.messages.len(), 1);
}

fn ideal(hosts: u32, bytes_per_second: u64, latency: SimTime) -> Simulation {
    let params = IdealParams {
        bandwidth: Some(Bandwidth::from_bytes_per_second(bytes_per_second).expect("non-zero")),
        latency,
    };
    NetworkBuilder::ideal(hosts, params).build().expect("valid network")
}

#[test]
fn ideal_network_takes_latency_plus_size_over_bandwidth() {
    // 1 MBps in Dimemas's unit (2^20 B/s): 1024 bytes take 1/1024 s.
    let mut sim = ideal(4, 1 << 20, SimTime::from_ns(1500));
    send(&mut sim, 6500, 0, 1, KIB, 0);
    let d = run(&mut sim);
    assert_eq!(
        d[0].arrived,
        SimTime::from_ns(6500 + 1500 + 976_562) + SimTime::from_ps(500)
    );
    assert_eq!(d[0].first_byte_sent, SimTime::from_ns(6500));
}

#[test]
fn ideal_network_has_no_contention() {
    // Many messages to one destination at once all take the same time.
    let mut sim = ideal(64, 250_000_000, SimTime::ZERO);
    for src in 0..64 {
        send(&mut sim, 0, src, 0, KIB, u64::from(src));
    }
    let d = run(&mut sim);
    assert_eq!(d.len(), 64);
    assert!(d.iter().all(|d| d.arrived == SimTime::from_ns(4096)));
}

#[test]
fn ideal_network_needs_hosts() {
    let params = IdealParams {
        bandwidth: Some(Bandwidth::from_bytes_per_second(1).expect("non-zero")),
        latency: SimTime::ZERO,
    };
    assert!(matches!(
        NetworkBuilder::ideal(0, params).build(),
        Err(BuildError::Topology(TopologyError::NoHosts))
    ));
}

#[test]
fn round_robin_adapters_interleave_packets_of_concurrent_messages() {
    // Two 8 KiB messages (2 packets each) from host 0: packets go m0, m1, m0, m1, so
    // both finish late; FIFO finishes the first a packet-time earlier.
    let packet = wire(4096);
    let run_with = |interleave| {
        let adapter = AdapterParams {
            interleave,
            ..AdapterParams::default()
        };
        let mut sim = NetworkBuilder::crossbar(3, LinkParams::default())
            .adapter_params(adapter)
            .build()
            .expect("valid");
        send(&mut sim, 0, 0, 1, 8 * KIB, 0);
        send(&mut sim, 0, 0, 2, 8 * KIB, 1);
        run(&mut sim).iter().map(|d| (d.cookie, d.arrived)).collect::<Vec<_>>()
    };
    let tail = zero_load_latency(4096) - packet;
    assert_eq!(
        run_with(Interleave::RoundRobin),
        vec![(0, tail + packet * 3), (1, tail + packet * 4)]
    );
    assert_eq!(
        run_with(Interleave::Fifo),
        vec![(0, tail + packet * 2), (1, tail + packet * 4)]
    );
}

#[test]
fn bad_adapters_are_refused() {
    let adapter = AdapterParams {
        payload_bytes: 0,
        ..AdapterParams::default()
    };
    let built = NetworkBuilder::crossbar(2, LinkParams::default())
        .adapter_params(adapter)
        .build();
    assert_eq!(built.err(), Some(BuildError::EmptyPayload));
}

#[test]
fn adapters_whose_packets_do_not_fit_in_32_bits_are_refused() {
    // A payload and header that add up to 2^32 bytes used to overflow when the first
    // packet was cut; on either switch, and for the network's or one host's adapter.
    let huge = AdapterParams {
        payload_bytes: 1,
        header_bytes: u32::MAX,
        ..AdapterParams::default()
    };
    let wormhole = SwitchParams {
        kind: SwitchKind::Wormhole(crate::WormholeParams::default()),
        ..SwitchParams::default()
    };
    let built = [
        NetworkBuilder::crossbar(2, LinkParams::default()).adapter_params(huge),
        NetworkBuilder::crossbar(2, LinkParams::default())
            .adapter_params(huge)
            .switch_params(wormhole),
        NetworkBuilder::crossbar(2, LinkParams::default()).adapter_of(HostId(1), huge),
    ];
    for builder in built {
        let refused = builder.build().expect_err("refused");
        assert_eq!(
            refused,
            BuildError::PacketTooLarge {
                payload_bytes: 1,
                header_bytes: u32::MAX
            }
        );
        assert_eq!(
            refused.to_string(),
            "adapter.payload_bytes 1 + adapter.header_bytes 4294967295: a packet's payload and header must add up to at most 4294967295 bytes"
        );
    }
    // The largest packet that fits is built.
    let largest = AdapterParams {
        payload_bytes: 1,
        header_bytes: u32::MAX - 1,
        ..AdapterParams::default()
    };
    NetworkBuilder::crossbar(2, LinkParams::default())
        .adapter_params(largest)
        .build()
        .expect("fits");
}

#[test]
fn times_the_clock_cannot_carry_are_refused() {
    // A 1e-6 B/s link, or a cable of 10^19 ps, used to saturate arrival times at the
    // clock's end, where no one could be told of them (a co-simulation hung).
    let step = SimTime::LONGEST_STEP;
    let slow = LinkParams {
        bandwidth: Bandwidth::from_ratio(1, 1_000_000).expect("non-zero"),
        ..LinkParams::default()
    };
    let long = LinkParams {
        propagation: SimTime::from_ps(10_000_000_000_000_000_000),
        ..LinkParams::default()
    };
    let deciding = SwitchParams {
        routing_latency: step + SimTime::from_ps(1),
        ..SwitchParams::default()
    };
    let refused = |builder: NetworkBuilder| builder.build().expect_err("refused").to_string();
    assert_eq!(
        refused(NetworkBuilder::crossbar(2, slow)),
        "cables[0].link.bandwidth: a packet of 4112 bytes takes more than 1.845e7 s, longer than the 17.592 s the model \
         allows for it (its clock counts 64-bit picoseconds, about 213 days)"
    );
    assert!(refused(NetworkBuilder::crossbar(2, long)).starts_with("cables[0].link.propagation takes 1.000e7 s,"));
    assert!(
        refused(NetworkBuilder::crossbar(2, LinkParams::default()).switch_params(deciding))
            .starts_with("switch.routing_latency takes 17.592 s, longer than the 17.592 s")
    );
    let ideal = |bytes_per_second, latency| {
        let bandwidth = Bandwidth::from_bytes_per_second(bytes_per_second);
        NetworkBuilder::ideal(2, IdealParams { bandwidth, latency })
    };
    assert!(refused(ideal(1, SimTime::ZERO)).starts_with("ideal.bandwidth: a message of 4294967295 bytes takes"));
    let late = IdealParams::LONGEST_DELAY + SimTime::from_ps(1);
    assert!(refused(ideal(1 << 30, late)).starts_with("ideal.latency takes"));
    // The limits themselves are allowed.
    let at_limit = SwitchParams {
        routing_latency: step,
        ..SwitchParams::default()
    };
    let cable = LinkParams {
        propagation: step,
        ..LinkParams::default()
    };
    NetworkBuilder::crossbar(2, cable)
        .switch_params(at_limit)
        .build()
        .expect("at the limit");
    ideal(1 << 30, IdealParams::LONGEST_DELAY)
        .build()
        .expect("at the limit");
}

#[test]
fn the_trace_sees_segments_backlogs_and_link_traversals() {
    let mut sim = NetworkBuilder::crossbar(3, LinkParams::default())
        .build_with_sink(RecordingSink::default())
        .expect("valid");
    send(&mut sim, 0, 0, 2, 8 * KIB, 10);
    send(&mut sim, 0, 1, 2, KIB, 11);
    let d = run(&mut sim);
    let sink = sim.sink();
    let host = |h| PortRef {
        device: Device::Host(HostId(h)),
        port: 0,
    };
    let switch_port = |p| PortRef {
        device: Device::Switch(SwitchId(0)),
        port: p,
    };
    // Two segments of message 10 start and end at host 0, back to back.
    let segments: Vec<_> = sink.segments.iter().filter(|s| s.1 == host(0)).collect();
    let packet = wire(4096);
    assert_eq!(
        segments.iter().map(|s| (s.0, s.3, s.4)).collect::<Vec<_>>(),
        vec![
            (SimTime::ZERO, 0, true),
            (packet, 0, false),
            (packet, 1, true),
            (packet * 2, 1, false)
        ]
    );
    // Message 11 waits behind message 10's first packet at the switch output to host 2.
    assert!(
        sink.backlogs
            .iter()
            .any(|b| b.1 == switch_port(2) && b.2 == BufferSide::Output && b.3 == u64::from(KIB + 16))
    );
    assert_eq!(sink.backlogs.last().map(|b| b.3), Some(0));
    // One traversal per message per link: 2 messages × 2 links, each announced when
    // its first byte starts; messages are numbered in injection order.
    assert_eq!(sink.traversals.len(), 4);
    assert_eq!(sink.started.len(), 4);
    for t in &sink.traversals {
        assert_eq!(t.message, t.cookie - 9, "{t:?}");
        let s = sink
            .started
            .iter()
            .find(|s| (s.message, s.sender) == (t.message, t.sender));
        assert_eq!(s.map(|s| (s.first_in, s.first_out)), Some((t.first_in, t.first_out)));
    }
    let prop = LinkParams::default().propagation;
    let first = sink
        .traversals
        .iter()
        .find(|t| t.cookie == 10 && t.sender == host(0))
        .expect("message 10 leaves host 0");
    assert_eq!(first.receiver, switch_port(0));
    assert_eq!(
        (first.first_in, first.first_out, first.last_out),
        (SimTime::ZERO, SimTime::ZERO, packet * 2)
    );
    assert_eq!((first.first_arrival, first.last_arrival), (prop, packet * 2 + prop));
    let last = sink
        .traversals
        .iter()
        .find(|t| t.cookie == 10 && t.sender == switch_port(2))
        .expect("message 10 reaches host 2");
    assert_eq!(last.receiver, host(2));
    assert_eq!(
        last.last_arrival,
        d.iter().find(|d| d.cookie == 10).expect("delivered").arrived
    );
    for t in &sink.traversals {
        assert!(t.first_in <= t.first_out && t.first_out <= t.last_out, "{t:?}");
        assert!(
            t.first_out < t.first_arrival && t.first_arrival <= t.last_arrival,
            "{t:?}"
        );
    }
}

#[test]
fn a_host_may_have_adapters_of_its_own() {
    // Host 0 cuts 1 KiB packets (eight headers for 8 KiB), host 1 the default 4 KiB.
    let small = AdapterParams {
        payload_bytes: 1024,
        ..AdapterParams::default()
    };
    for wormhole in [false, true] {
        let mut builder = NetworkBuilder::crossbar(3, LinkParams::default()).adapter_of(HostId(0), small);
        if wormhole {
            builder = builder.switch_params(SwitchParams {
                kind: SwitchKind::Wormhole(crate::WormholeParams::default()),
                ..SwitchParams::default()
            });
        }
        let mut sim = builder.build().expect("valid");
        send(&mut sim, 0, 0, 2, 8 * KIB, 0);
        send(&mut sim, 0, 1, 2, 8 * KIB, 1);
        let delivered = run(&mut sim);
        let took = |cookie: u64| {
            let d = delivered.iter().find(|d| d.cookie == cookie).expect("delivered");
            d.arrived - d.first_byte_sent
        };
        // Six more headers of 16 bytes at 4 ns a byte, at least.
        assert!(
            took(0) >= took(1) + SimTime::from_ns(6 * 16 * 4),
            "wormhole {wormhole}: {:?}",
            delivered
        );
    }
    let empty = AdapterParams {
        payload_bytes: 0,
        ..AdapterParams::default()
    };
    let refused = NetworkBuilder::crossbar(2, LinkParams::default())
        .adapter_of(HostId(1), empty)
        .build();
    assert_eq!(refused.err(), Some(BuildError::EmptyPayload));
}

#[test]
fn records_that_cannot_be_allocated_are_an_error_not_an_abort() {
    // More than the address space: refused by the allocator's bookkeeping at once.
    let refused = room_for::<[u64; 1024]>(usize::MAX / 1024, "ports").expect_err("too large");
    assert!(matches!(refused, BuildError::TooLarge { what: "ports", .. }));
    assert!(
        refused.to_string().starts_with("the network does not fit in memory"),
        "{refused}"
    );
    assert_eq!(room_for::<u64>(16, "ports").map(|v| v.capacity()), Ok(16));
}

/// A message along the longest route a packet counts (65,535 switches, a mesh line) on
/// every switch kind, traced and not: every hop is counted, none wraps.
#[test]
fn a_message_crosses_the_longest_route_packets_count() {
    let switches = crate::topology::MAX_ROUTE_SWITCHES as u32;
    let torus = crate::Torus::new(vec![switches], false, 1).expect("valid torus");
    let link = LinkParams::default();
    let topology = Topology {
        routing: crate::Routing::DimensionOrder(torus.clone()),
        ..torus.topology(link)
    };
    let wormhole = |granularity| {
        SwitchKind::Wormhole(crate::WormholeParams {
            granularity,
            ..crate::WormholeParams::default()
        })
    };
    let kinds = [
        SwitchKind::OutputQueued,
        SwitchKind::Cioq(crate::CioqParams::default()),
        wormhole(crate::Granularity::Coarse),
        wormhole(crate::Granularity::Fine),
    ];
    let last = switches - 1;
    for kind in kinds {
        let builder = || {
            NetworkBuilder::new(topology.clone()).switch_params(SwitchParams {
                kind,
                ..SwitchParams::default()
            })
        };
        let mut sim = builder().build().expect("valid network");
        send(&mut sim, 0, 0, last, 1, 7);
        let took = run(&mut sim)[0].arrived;
        // Host to host: the host cables and every switch's latency and cable on.
        let hops = u64::from(switches);
        let floor = link.propagation * (hops + 1) + SwitchParams::default().routing_latency * hops;
        assert!(took > floor, "{kind:?}: {took:?}");
        let mut traced = builder()
            .build_with_sink(RecordingSink::default())
            .expect("valid network");
        send(&mut traced, 0, 0, last, 1, 7);
        assert_eq!(run(&mut traced)[0].arrived, took, "{kind:?}");
        assert_eq!(traced.sink().traversals.len(), switches as usize + 1, "{kind:?}");
    }
}

/// An incast of big messages (eight hosts send 4 MiB each to one): the queues hold a run
/// per message, not a record per packet (before, about 7,000 packet records waited at
/// once), and the last byte arrives when the destination's link has carried every
/// packet back to back.
#[test]
fn an_incast_waits_as_a_run_per_message_not_a_record_per_packet() {
    use crate::switch::waiting::PLAIN;
    let size = 4 << 20;
    let voq = crate::CioqParams {
        virtual_output_queues: true,
        ..crate::CioqParams::default()
    };
    let kinds = [
        SwitchKind::OutputQueued,
        SwitchKind::Cioq(crate::CioqParams::default()),
        SwitchKind::Cioq(voq),
    ];
    for kind in kinds {
        let mut sim = NetworkBuilder::crossbar(9, LinkParams::default())
            .switch_params(SwitchParams {
                kind,
                ..SwitchParams::default()
            })
            .build()
            .expect("valid network");
        for src in 1..9 {
            send(&mut sim, 0, src, 0, size, u64::from(src));
        }
        let d = run(&mut sim);
        assert_eq!(d.len(), 8, "{kind:?}");
        let last = d.iter().map(|d| d.arrived).max().expect("deliveries");
        assert_eq!(last, zero_load_latency(size) + wire(size) * 7, "{kind:?}");
        let Fabric::Packet(net) = &sim.fabric else {
            panic!("a packet network");
        };
        // At most `PLAIN` records a queue (the destination's output, and each CIOQ
        // input), the packets on the move, and a run per message and queue.
        let held = net.packets.capacity() + net.waiting.peak_runs();
        assert!(held <= 9 * PLAIN + 64, "{kind:?}: {held} records at once");
    }
}
