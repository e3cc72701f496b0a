//! Validation of the network models against physics, for each switch kind: closed-form
//! zero-load latency, conservation, throughput bounds, Little's law, the
//! head-of-line blocking scenario of seed 004, section 5.4, and the contention the XGFT
//! routings (d-mod-k, s-mod-k, random, pattern-aware) cause or avoid.
//!
//! Scenario functions take the switch kind; thin `#[test]` wrappers name the variant.

use vesper_netmodels::rng::Rng;
use vesper_netmodels::{
    AdapterParams, Arbitration, CioqParams, Delivery, Device, HostId, InitialPointer, LinkParams, MessageSpec,
    NetworkBuilder, RecordingSink, Routing, SimTime, Simulation, SwitchId, SwitchKind, SwitchParams, TraceSink,
    WormholeParams, Xgft,
};

fn output_queued() -> SwitchKind {
    SwitchKind::OutputQueued
}

fn cioq(speedup: u32, virtual_output_queues: bool) -> SwitchKind {
    SwitchKind::Cioq(CioqParams {
        speedup,
        virtual_output_queues,
    })
}

fn wormhole() -> SwitchKind {
    SwitchKind::Wormhole(WormholeParams::default())
}

fn network<S: TraceSink>(xgft: &Xgft, kind: SwitchKind, adapter: AdapterParams, sink: S) -> Simulation<S> {
    NetworkBuilder::new(xgft.topology(LinkParams::default()))
        .switch_params(SwitchParams {
            kind,
            ..SwitchParams::default()
        })
        .adapter_params(adapter)
        .build_with_sink(sink)
        .expect("valid network")
}

fn spec(src: u32, dst: u32, size_bytes: u32, cookie: u64) -> MessageSpec {
    MessageSpec {
        src: HostId(src),
        dst: HostId(dst),
        size_bytes,
        cookie,
    }
}

fn run_all<S: TraceSink>(sim: &mut Simulation<S>) -> Vec<Delivery> {
    let mut out = Vec::new();
    sim.run_until(SimTime::MAX, &mut out);
    out
}

// ---------------------------------------------------------------- zero-load latency

/// hops × per-switch latency + (hops + 1) × cable + serialisation of header + payload.
/// Per switch: the routing decision, plus (wormhole) one flit time to receive a flit
/// wholly before forwarding it.
fn zero_load_latency(kind: SwitchKind) {
    let tree = Xgft::kary_ntree(4, 3).expect("valid");
    let link = LinkParams::default();
    let routing = SwitchParams::default().routing_latency;
    for (src, dst, switches) in [(0, 1, 1u64), (0, 5, 3), (0, 63, 5)] {
        for size in [0u32, 100, 4096] {
            let mut sim = network(&tree, kind, AdapterParams::default(), vesper_netmodels::NullSink);
            sim.inject(SimTime::ZERO, spec(src, dst, size, 0)).expect("valid");
            let d = run_all(&mut sim);
            let wire_bytes = u64::from(size + 16);
            let (per_switch, serialisation) = match kind {
                SwitchKind::Wormhole(w) => {
                    let flit = link.bandwidth.serialization_time(u64::from(w.flit_bytes));
                    (routing + flit, flit * wire_bytes.div_ceil(u64::from(w.flit_bytes)))
                }
                // CIOQ: the crossbar transfer overlaps the output link (cut-through).
                SwitchKind::OutputQueued | SwitchKind::Cioq(_) => {
                    (routing, link.bandwidth.serialization_time(wire_bytes))
                }
            };
            let expected = per_switch * switches + link.propagation * (switches + 1) + serialisation;
            assert_eq!(d[0].arrived, expected, "{kind:?} {src}→{dst} {size} B");
        }
    }
}

#[test]
fn zero_load_latency_output_queued() {
    zero_load_latency(output_queued());
}

#[test]
fn zero_load_latency_cioq() {
    zero_load_latency(cioq(1, false));
    zero_load_latency(cioq(2, true));
}

#[test]
fn zero_load_latency_wormhole() {
    zero_load_latency(wormhole());
}

// ---------------------------------------------- open-loop traffic: bounds, Little's law

/// What an open-loop run measured in its window.
#[derive(Debug)]
struct Measured {
    /// offered load, fraction of a host link
    offered: f64,
    /// accepted load, same unit
    accepted: f64,
    /// messages delivered in the window per ps
    throughput: f64,
    /// mean latency of those messages \[ps\]
    mean_latency: f64,
    /// time-average of messages in the network, sampled
    mean_in_flight: f64,
    /// every message injected was delivered exactly once (after draining)
    conserved: bool,
}

/// Uniform random traffic of single-packet messages at `load` of the link rate, Poisson
/// arrivals, on a 4-ary 2-tree; measured between `warmup` and `end`, sampled every
/// `sample` for the in-flight average.
fn open_loop(kind: SwitchKind, load: f64, payload: u32, seed: u64) -> Measured {
    let tree = Xgft::kary_ntree(4, 2).expect("valid");
    let hosts = tree.hosts();
    let adapter = AdapterParams::default();
    let mut sim = network(&tree, kind, adapter, vesper_netmodels::NullSink);
    let link = LinkParams::default();
    let packet_time = link
        .bandwidth
        .serialization_time(u64::from(payload + adapter.header_bytes));
    let mean_gap = packet_time.as_ps() as f64 / load;
    let (warmup, end) = (SimTime::from_ns(200_000), SimTime::from_ns(2_200_000));
    let sample = SimTime::from_ns(200);
    let mut rng = Rng::new(seed);
    let mut next: Vec<SimTime> = (0..hosts)
        .map(|_| SimTime::from_ps(rng.exponential(mean_gap) as u64))
        .collect();
    let mut deliveries = Vec::new();
    let mut window = Vec::new();
    let mut injected = 0u64;
    let mut samples = (0u64, 0u64);
    let mut t = SimTime::ZERO;
    while t < end {
        // Inject everything due before the next sample point, in time order.
        let until = t + sample;
        loop {
            let (host, at) = next
                .iter()
                .enumerate()
                .min_by_key(|&(_, &at)| at)
                .map(|(h, &at)| (h as u32, at))
                .expect("hosts");
            if at >= until {
                break;
            }
            sim.run_until(at, &mut deliveries);
            let mut dst = rng.below(u64::from(hosts - 1)) as u32;
            if dst >= host {
                dst += 1;
            }
            sim.inject(at, spec(host, dst, payload, injected)).expect("valid");
            injected += 1;
            next[host as usize] = at + SimTime::from_ps(rng.exponential(mean_gap).max(1.0) as u64);
        }
        sim.run_until(until, &mut deliveries);
        t = until;
        if t > warmup && t <= end {
            samples.0 += sim.in_flight() as u64;
            samples.1 += 1;
        }
        window.extend(deliveries.drain(..).filter(|d| d.arrived > warmup && d.arrived <= end));
    }
    // Drain, then check conservation.
    let mut rest = Vec::new();
    sim.run_until(SimTime::MAX, &mut rest);
    let delivered_total = injected as usize - sim.in_flight();
    let span = (end - warmup).as_ps() as f64;
    let bytes: f64 = window.iter().map(|d| f64::from(d.size_bytes)).sum();
    let capacity = link.bandwidth.bytes_per_second_f64() * span * 1e-12 * f64::from(hosts);
    Measured {
        offered: load * f64::from(payload) / f64::from(payload + adapter.header_bytes),
        accepted: bytes / capacity,
        throughput: window.len() as f64 / span,
        mean_latency: window
            .iter()
            .map(|d| (d.arrived - d.injected_at).as_ps() as f64)
            .sum::<f64>()
            / window.len() as f64,
        mean_in_flight: samples.0 as f64 / samples.1 as f64,
        conserved: sim.in_flight() == 0 && delivered_total == injected as usize,
    }
}

fn bounds_and_littles_law(kind: SwitchKind) {
    for load in [0.2, 0.4] {
        let m = open_loop(kind, load, 256, 11);
        assert!(m.conserved, "{kind:?} {m:?}");
        // Accepted never above offered (beyond sampling noise) nor the link rate.
        assert!(m.accepted <= m.offered * 1.05 && m.accepted <= 1.0, "{kind:?} {m:?}");
        // Below saturation, all that is offered is accepted.
        assert!(m.accepted >= m.offered * 0.95, "{kind:?} {m:?}");
        // Little's law: messages in flight = throughput × mean latency, within 2 %.
        let little = m.throughput * m.mean_latency;
        let error = (m.mean_in_flight - little).abs() / little;
        assert!(
            error < 0.02,
            "{kind:?} load {load}: sampled {} vs λW {little} ({m:?})",
            m.mean_in_flight
        );
    }
}

#[test]
fn bounds_and_littles_law_output_queued() {
    bounds_and_littles_law(output_queued());
}

#[test]
fn bounds_and_littles_law_cioq() {
    bounds_and_littles_law(cioq(1, false));
    bounds_and_littles_law(cioq(2, true));
}

#[test]
fn bounds_and_littles_law_wormhole() {
    bounds_and_littles_law(wormhole());
}

#[test]
fn saturated_wormhole_switches_accept_less_than_output_queued_ones() {
    // Offered far beyond what the network carries: input FIFOs of wormhole switches
    // lose throughput to head-of-line blocking (about 59 % of the links for uniform
    // traffic in theory); output-queued switches carry close to the link rate.
    let wormhole = open_loop(wormhole(), 1.2, 256, 3);
    let output_queued = open_loop(output_queued(), 1.2, 256, 3);
    assert!(wormhole.accepted <= 1.0 && output_queued.accepted <= 1.0);
    assert!((0.45..0.75).contains(&wormhole.accepted), "{wormhole:?}");
    assert!(output_queued.accepted > 0.85, "{output_queued:?}");
}

#[test]
fn cioq_needs_virtual_queues_or_speedup_to_escape_head_of_line_blocking() {
    // One FIFO per input at speedup 1: HOL-limited like an input-queued switch. Virtual
    // output queues and a speedup of 2 come close to output queueing.
    let fifo = open_loop(cioq(1, false), 1.2, 256, 3);
    let voq = open_loop(cioq(2, true), 1.2, 256, 3);
    assert!((0.45..0.75).contains(&fifo.accepted), "{fifo:?}");
    assert!(voq.accepted > 0.85 && voq.accepted <= 1.0, "{voq:?}");
}

// ------------------------------------------------ seed 004 §5.4: head-of-line blocking

/// The WRF pattern on a two-level fat tree of 256 hosts (XGFT(2; 16,16; 1,16), d-mod-k):
/// node n sends to n + 16, then to n − 16 (nodes 0–15 only the first, 240–255 only the
/// second). Returns each node's finish time and the spines whose inputs saw HOL
/// blocking.
fn wrf(kind: SwitchKind) -> (Vec<SimTime>, Vec<u32>) {
    let tree = Xgft::new(vec![16, 16], vec![1, 16]).expect("valid");
    let mut sim = network(&tree, kind, AdapterParams::default(), RecordingSink::default());
    let mut cookie = 0;
    for n in 0..256u32 {
        for dst in [n.checked_add(16).filter(|&d| d < 256), n.checked_sub(16)]
            .into_iter()
            .flatten()
        {
            sim.inject(SimTime::ZERO, spec(n, dst, 256, u64::from(n) << 16 | cookie))
                .expect("valid");
            cookie += 1;
        }
    }
    let mut finish = vec![SimTime::ZERO; 256];
    for d in run_all(&mut sim) {
        let n = (d.cookie >> 16) as usize;
        finish[n] = finish[n].max(d.arrived);
    }
    let mut spines: Vec<u32> = sim
        .sink()
        .hol
        .iter()
        .filter(|h| h.2)
        .filter_map(|h| match h.1.device {
            Device::Switch(SwitchId(s)) if s >= 16 => Some(s - 16),
            _ => None,
        })
        .collect();
    spines.sort_unstable();
    spines.dedup();
    (finish, spines)
}

fn fixed_pointer(pointer: u32) -> SwitchKind {
    SwitchKind::Wormhole(WormholeParams {
        arbitration: Arbitration::RoundRobin {
            initial: InitialPointer::Fixed(pointer),
        },
        ..WormholeParams::default()
    })
}

/// Nodes that finish clearly after the common finish time.
fn late(finish: &[SimTime]) -> Vec<u32> {
    let mut sorted = finish.to_vec();
    sorted.sort_unstable();
    let common = sorted[sorted.len() / 2];
    (0..finish.len() as u32)
        .filter(|&n| finish[n as usize] > common + SimTime::from_ns(500))
        .collect()
}

#[test]
fn wrf_pattern_hol_blocking_with_random_pointers() {
    // Destinations 224–239 get two messages at once (from 208–223 and 240–255), through
    // spine n mod 16. Where the spine's output to leaf 14 serves leaf 15 first, the
    // message from leaf 13 waits, and that node's second message (to n − 16, a free
    // output) is stuck behind it: HOL blocking, and that node finishes late.
    let (finish, spines) = wrf(wormhole());
    assert!(!spines.is_empty() && spines.len() < 16, "HOL on spines {spines:?}");
    let late = late(&finish);
    assert!(late.len() < 32, "most nodes finish together: late {late:?}");
    // Every HOL-blocked spine j delays node 208 + j.
    for j in &spines {
        assert!(
            late.contains(&(208 + j)),
            "spine {j} blocked, node {} on time ({late:?})",
            208 + j
        );
    }
}

#[test]
fn wrf_pattern_hol_blocking_on_all_or_none_of_the_spines() {
    // All pointers alike: the same arbitration happens on every spine. A pointer past
    // leaf 13's port (14) serves leaf 15 first everywhere; pointer 0 serves leaf 13.
    let (_, all) = wrf(fixed_pointer(14));
    assert_eq!(all, (0..16).collect::<Vec<_>>());
    let (_, none) = wrf(fixed_pointer(0));
    assert_eq!(none, Vec::<u32>::new());
}

#[test]
fn wrf_pattern_output_queued_switches_never_block() {
    let (finish, spines) = wrf(output_queued());
    assert!(spines.is_empty());
    let late = late(&finish);
    assert!(late.len() < 32, "{late:?}");
}

// ------------------------------------------- source routing (s-mod-k) against tables

/// The 4-ary 2-tree routed `routing`: hosts 0 and 1 (one leaf) send 4 KiB to hosts 4
/// and 8 (two other leaves) at once. d-mod-k sends both up through spine 0 (4 and 8
/// are 0 mod 4): they share the leaf's up link. s-mod-k (source-routed) spreads them
/// by source over spines 0 and 1. Returns both arrival times.
fn two_flows(kind: SwitchKind, source_routed: bool) -> Vec<SimTime> {
    let tree = Xgft::kary_ntree(4, 2).expect("valid");
    let mut topology = tree.topology(LinkParams::default());
    if source_routed {
        topology.routing = Routing::SModK(tree);
    }
    let mut sim = NetworkBuilder::new(topology)
        .switch_params(SwitchParams {
            kind,
            ..SwitchParams::default()
        })
        .build()
        .expect("valid network");
    sim.inject(SimTime::ZERO, spec(0, 4, 4096, 0)).expect("valid");
    sim.inject(SimTime::ZERO, spec(1, 8, 4096, 1)).expect("valid");
    let mut d = run_all(&mut sim);
    d.sort_by_key(|d| d.cookie);
    d.iter().map(|d| d.arrived).collect()
}

fn source_routing_spreads_what_tables_concentrate(kind: SwitchKind) {
    let table = two_flows(kind, false);
    let source = two_flows(kind, true);
    // Source-routed: no shared link, both at the zero-load time.
    assert_eq!(source[0], source[1], "{kind:?}");
    // Table-routed: one waits for the other on the shared up link.
    assert!(table[0].max(table[1]) > source[0], "{kind:?}: {table:?} vs {source:?}");
    assert_eq!(table[0].min(table[1]), source[0], "{kind:?}");
}

#[test]
fn source_routing_output_queued() {
    source_routing_spreads_what_tables_concentrate(output_queued());
}

#[test]
fn source_routing_cioq() {
    source_routing_spreads_what_tables_concentrate(cioq(1, false));
}

#[test]
fn source_routing_wormhole() {
    source_routing_spreads_what_tables_concentrate(wormhole());
}

#[test]
fn source_routed_all_to_all_is_delivered_on_every_switch_kind() {
    let tree = Xgft::kary_ntree(4, 2).expect("valid");
    for kind in [output_queued(), cioq(2, true), wormhole()] {
        let mut topology = tree.topology(LinkParams::default());
        topology.routing = Routing::SModK(tree.clone());
        let mut sim = NetworkBuilder::new(topology)
            .switch_params(SwitchParams {
                kind,
                ..SwitchParams::default()
            })
            .build()
            .expect("valid network");
        let mut n = 0;
        for src in 0..16 {
            for dst in 0..16 {
                sim.inject(SimTime::ZERO, spec(src, dst, 3000, n)).expect("valid");
                n += 1;
            }
        }
        let d = run_all(&mut sim);
        assert_eq!(d.len() as u64, n, "{kind:?}");
        assert_eq!(sim.in_flight(), 0);
    }
}

// ------------------------------------------------- random and pattern-aware routing

/// The 4-ary 2-tree routed `routing` on switches of `kind`.
fn routed(kind: SwitchKind, routing: Routing) -> Simulation {
    let tree = Xgft::kary_ntree(4, 2).expect("valid");
    let mut topology = tree.topology(LinkParams::default());
    topology.routing = routing;
    NetworkBuilder::new(topology)
        .switch_params(SwitchParams {
            kind,
            ..SwitchParams::default()
        })
        .build()
        .expect("valid network")
}

/// Host (a, b) sends to host (b, a) on the 4-ary 2-tree, a ≠ b: 12 flows, 3 per leaf,
/// all to hosts ≡ a mod 4, so d-mod-k sends each leaf's three up one link.
fn transpose() -> Vec<(HostId, HostId)> {
    (0..16)
        .filter(|s| s / 4 != s % 4)
        .map(|s| (HostId(s), HostId((s % 4) * 4 + s / 4)))
        .collect()
}

#[test]
fn random_and_pattern_aware_routes_deliver_everything_on_every_switch_kind() {
    let tree = Xgft::kary_ntree(4, 2).expect("valid");
    let pattern = tree
        .pattern_aware_routes(&[
            transpose(),
            (0..16).map(|s| (HostId(s), HostId((s + 5) % 16))).collect(),
        ])
        .expect("valid pattern");
    for kind in [output_queued(), cioq(2, true), wormhole()] {
        for routing in [
            Routing::Random {
                xgft: tree.clone(),
                seed: 11,
            },
            Routing::PatternAware(Box::new(pattern.clone())),
        ] {
            let all_to_all = || {
                let mut sim = routed(kind, routing.clone());
                let mut n = 0;
                for src in 0..16 {
                    for dst in 0..16 {
                        sim.inject(SimTime::ZERO, spec(src, dst, 3000 + dst, n)).expect("valid");
                        n += 1;
                    }
                }
                let d = run_all(&mut sim);
                assert_eq!(sim.in_flight(), 0);
                d
            };
            let d = all_to_all();
            // The same run twice, delivery for delivery.
            assert_eq!(d, all_to_all(), "{kind:?} {routing:?}");
            // Every message exactly once, to the right host, whole.
            let mut cookies: Vec<u64> = d.iter().map(|d| d.cookie).collect();
            cookies.sort_unstable();
            assert_eq!(cookies, (0..256).collect::<Vec<_>>());
            assert!(
                d.iter()
                    .all(|d| d.size_bytes == 3000 + d.dst.0 && d.cookie == u64::from(d.src.0 * 16 + d.dst.0)),
                "{kind:?} {routing:?}"
            );
        }
    }
}

/// Every transpose flow sends 4 KiB at once; the latest arrival under `routing`, and
/// the arrival of one flow alone.
fn transpose_finish(kind: SwitchKind, routing: Routing) -> (SimTime, SimTime) {
    let mut sim = routed(kind, routing.clone());
    for (n, &(s, d)) in transpose().iter().enumerate() {
        sim.inject(SimTime::ZERO, spec(s.0, d.0, 4096, n as u64))
            .expect("valid");
    }
    let last = run_all(&mut sim)
        .iter()
        .map(|d| d.arrived)
        .max()
        .unwrap_or(SimTime::ZERO);
    let mut alone = routed(kind, routing);
    alone.inject(SimTime::ZERO, spec(1, 4, 4096, 0)).expect("valid");
    (last, run_all(&mut alone)[0].arrived)
}

/// Colored routes share no link on the transpose: every flow arrives as if alone.
/// d-mod-k's shared up links delay some.
fn colored_routes_run_a_transpose_without_contention(kind: SwitchKind) {
    let tree = Xgft::kary_ntree(4, 2).expect("valid");
    let pattern = tree.pattern_aware_routes(&[transpose()]).expect("valid pattern");
    let (colored, alone) = transpose_finish(kind, Routing::PatternAware(Box::new(pattern)));
    assert_eq!(colored, alone, "{kind:?}");
    let (d_mod_k, _) = transpose_finish(kind, Routing::DModK(tree));
    assert!(d_mod_k > alone, "{kind:?}: {d_mod_k} vs {alone}");
}

#[test]
fn colored_transpose_output_queued() {
    colored_routes_run_a_transpose_without_contention(output_queued());
}

#[test]
fn colored_transpose_cioq() {
    colored_routes_run_a_transpose_without_contention(cioq(1, false));
}

#[test]
fn colored_transpose_wormhole() {
    colored_routes_run_a_transpose_without_contention(wormhole());
}

// ------------------------------------------------------ switch kinds chosen per switch

#[test]
fn output_queued_leaves_with_cioq_spines() {
    // The 4-ary 2-tree: switches 0–3 are leaves, 4–7 spines.
    let tree = Xgft::kary_ntree(4, 2).expect("valid");
    let build = || {
        (4..8)
            .fold(NetworkBuilder::new(tree.topology(LinkParams::default())), |b, s| {
                b.switch_kind_of(SwitchId(s), cioq(1, false))
            })
            .build()
            .expect("valid network")
    };
    // Zero load: the same closed form as output-queued switches (cut-through crossbar).
    let mut sim = build();
    sim.inject(SimTime::ZERO, spec(0, 15, 1000, 0)).expect("valid");
    let link = LinkParams::default();
    let expected =
        SwitchParams::default().routing_latency * 3 + link.propagation * 4 + link.bandwidth.serialization_time(1016);
    assert_eq!(run_all(&mut sim)[0].arrived, expected);
    // Under load: everything delivered, and head-of-line blocking at the spines' FIFO
    // inputs makes the mix slower than output queueing everywhere.
    let all_to_all = |mut sim: Simulation| {
        for src in 0..16u32 {
            for dst in 0..16u32 {
                sim.inject(SimTime::ZERO, spec(src, dst, 4096, u64::from(src * 16 + dst)))
                    .expect("valid");
            }
        }
        let d = run_all(&mut sim);
        assert_eq!(d.len(), 256);
        d.iter().map(|d| d.arrived).max().expect("deliveries")
    };
    let mixed = all_to_all(build());
    let oq = all_to_all(NetworkBuilder::new(tree.topology(link)).build().expect("valid"));
    assert!(mixed >= oq, "mixed {mixed} vs output-queued {oq}");
}

#[test]
fn wormhole_switches_do_not_mix_with_packet_switches() {
    let tree = Xgft::kary_ntree(4, 2).expect("valid");
    let built = NetworkBuilder::new(tree.topology(LinkParams::default()))
        .switch_kind_of(SwitchId(5), wormhole())
        .build();
    assert_eq!(
        built.err().map(|e| e.to_string()),
        Some("switch.kind: wormhole switches cannot share a network with output-queued or CIOQ switches".into())
    );
}
