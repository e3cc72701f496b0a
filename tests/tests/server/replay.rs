//! The replay client against the server: over the ideal network it predicts exactly
//! what its own local bus model predicts (issue "calibration", item 3), workload by
//! workload; over a contended network it predicts later.

use vesper_client_dimemas_adapter::LegacyConnection;
use vesper_client_dimemas_adapter::replay::{
    IdealBus, Mapping, MemoryCopy, Outcome, ReplayOptions, ServerFabric, Workload, replay_with,
};
use vesper_tests::{TestServer, config, ideal_config, lcg};

fn workloads() -> Vec<Workload> {
    vec![
        Workload::ping_pong(1, 5),
        Workload::ping_pong(100_000, 3),
        Workload::ring(6, 32_679, 3, 1_234_567),
        Workload::all_to_all(8, 32_679),
        Workload::all_to_all(5, 3),
        Workload::wrf(48, 16, 5000),
        Workload::binary_tree(13, 40_000),
        Workload::inverse_binary_tree(16, 777),
        Workload::all_to_one(9, 10_000),
        Workload::one_to_all(9, 10_000),
        Workload::butterfly(12, 6000),
        Workload::wavefront(16, 2, 5000).expect("square"),
        Workload::wavefront(27, 3, 3000).expect("cube"),
        Workload::mesh_halo(36, 2, 8192).expect("square"),
        Workload::mesh_halo(8, 3, 100_000).expect("cube"),
        Workload::synchronized_random(20, 3000, 100, 16, lcg()).expect("random"),
    ]
}

fn over_server(server: TestServer, workload: &Workload, options: &ReplayOptions) -> Outcome {
    let connection = LegacyConnection::connect(server.addr()).expect("connects");
    let mut fabric = ServerFabric::new(connection, 0);
    let outcome = replay_with(workload, &mut fabric, options).expect("replayed");
    fabric.finish().expect("finished");
    let report = server.wait();
    // Messages between tasks of one node never reach the server.
    assert_eq!(report.simulation.messages, outcome.messages - outcome.intra_node);
    // Every task's time is computing, communicating or waiting.
    for t in &outcome.tasks {
        assert_eq!(
            t.compute + t.communication + t.waiting,
            t.end,
            "{}: {t:?}",
            workload.name
        );
    }
    outcome
}

#[test]
fn the_ideal_network_reproduces_the_local_prediction_exactly() {
    // Eager, and with large messages as rendezvous (PROTO OK_TO_SEND / READY_TO_RECV).
    let eager = ReplayOptions::default();
    let rendezvous = ReplayOptions {
        eager_limit: Some(4096),
        ..ReplayOptions::default()
    };
    // Three tasks per node, intra-node copies at 1.5 GBps + 300 ns.
    let shared = ReplayOptions {
        mapping: Mapping::TasksPerNode(3),
        memory_copy: MemoryCopy {
            latency: 300_000,
            bandwidth: Some((3 << 29, 1)),
        },
        ..rendezvous.clone()
    };
    for (mbps, latency_ns) in [(250.0, 0.0), (3.0, 1500.0), (1000.5, 7.25)] {
        for workload in workloads() {
            for options in [&eager, &rendezvous, &shared] {
                let mut bus = IdealBus::from_mbps(mbps, (latency_ns * 1000.0) as u64).expect("bus");
                let local = replay_with(&workload, &mut bus, options).expect("replayed locally");
                let server = TestServer::start(ideal_config(48, mbps, latency_ns));
                let served = over_server(server, &workload, options);
                assert_eq!(
                    served, local,
                    "{} at {mbps} MBps + {latency_ns} ns, {options:?}",
                    workload.name
                );
            }
        }
    }
}

#[test]
fn a_contended_network_predicts_later_than_the_ideal_one() {
    // The default crossbar (250 MB/s links, 150 ns of cables and routing, no headers in
    // the test configuration): the 8-task all-to-all contends at every destination.
    let workload = Workload::all_to_all(8, 32_679);
    let crossbar = over_server(TestServer::start(config(8, 1)), &workload, &ReplayOptions::default());
    let bytes_per_second = 250_000_000;
    let mut bus = IdealBus::new(bytes_per_second, 1, 150_000);
    let ideal = replay_with(&workload, &mut bus, &ReplayOptions::default()).expect("replayed");
    assert!(
        crossbar.predicted > ideal.predicted,
        "{} vs {}",
        crossbar.predicted,
        ideal.predicted
    );
    // Every task receives 7 messages through one 250 MB/s link: at least 7 × 32679 × 4 ns.
    assert!(crossbar.predicted >= 7 * 32_679 * 4_000);
}
