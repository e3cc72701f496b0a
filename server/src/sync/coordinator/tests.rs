use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use vesper_protocol::{DataMessage, RendezvousRequest, ServerMessage, Token, WireTime, parse_server_line};

use super::*;
use vesper_netmodels::{AdapterParams, HostId, Interleave};

use crate::config::{FabricConfig, NetworkConfig, Placement, RendezvousMode, ServerConfig, SwitchedConfig};
use crate::report::Report;

/// The default crossbar without packet headers, so that a message of S bytes takes the
/// closed form S × 4 ns + 2 × 25 ns + 100 ns: these tests are about synchronisation.
fn network(hosts: u32) -> NetworkConfig {
    NetworkConfig {
        hosts,
        placement: Placement::ONE_PER_HOST,
        fabric: FabricConfig::Switched(SwitchedConfig::crossbar(
            hosts,
            AdapterParams {
                header_bytes: 0,
                ..AdapterParams::default()
            },
        )),
    }
}

fn coordinator(clients: usize) -> Coordinator {
    coordinator_replying(clients, Replies::Earliest)
}

/// A coordinator of `clients` on 32 hosts of a crossbar, answering as `replies` says.
fn coordinator_replying(clients: usize, replies: Replies) -> Coordinator {
    let config = ServerConfig {
        network: network(32),
        clients,
        replies,
        ..ServerConfig::default()
    };
    let sim = config.network.build().expect("valid network");
    Coordinator::new(config, sim, Arc::new(AtomicBool::new(false)))
}

fn connect(c: &mut Coordinator, client: ClientId) {
    c.apply(SessionEvent::Connect {
        client,
        peer: format!("test{client}"),
    });
}

fn data(t: f64, src: u32, dst: u32, size: u32, app: u32, ev: u64) -> BatchItem {
    BatchItem::Data {
        line: 1,
        message: DataMessage {
            time: WireTime(t),
            src,
            dst,
            tag: Some(0),
            size,
            ev: Token::new(&format!("{ev:#x}")).expect("token"),
            ev_out: Token::NIL,
            src_repeat: src,
            dst_repeat: dst,
            src_app: app,
            dst_app: app,
        },
        rendezvous: false,
    }
}

fn batch(c: &mut Coordinator, client: ClientId, items: Vec<BatchItem>, stop: f64) {
    c.apply(SessionEvent::Batch {
        client,
        items,
        stop: Some((2, WireTime(stop))),
        received: Instant::now(),
    });
}

/// Replies as text, per client.
fn replies(c: &mut Coordinator) -> Vec<(ClientId, String)> {
    c.take_replies()
        .map(|(id, bytes)| (id, String::from_utf8_lossy(&bytes).into_owned()))
        .collect()
}

fn completion_times(reply: &str) -> Vec<f64> {
    reply
        .lines()
        .filter_map(|l| match parse_server_line(l) {
            Ok(ServerMessage::Completed(c)) => Some(c.time.0),
            _ => None,
        })
        .collect()
}

#[test]
fn eager_message_is_reported_at_its_arrival_only() {
    let mut c = coordinator(1);
    connect(&mut c, 0);
    batch(&mut c, 0, vec![data(6500.0, 0, 1, 1024, 0, 1)], 6500.0);
    assert_eq!(replies(&mut c), vec![(0, "END\n".to_string())]);
    batch(&mut c, 0, vec![], 1e9);
    assert_eq!(
        replies(&mut c),
        vec![(0, "COMPLETED SEND 10746 0 1 1024 0x1 (nil) 0 1 6500\nEND\n".to_string())]
    );
    // The clock stands at the completion: a STOP there is answered at once.
    batch(&mut c, 0, vec![], 10746.0);
    assert_eq!(replies(&mut c), vec![(0, "END\n".to_string())]);
    let report = c.report().simulation;
    assert_eq!(
        (report.messages, report.sync_round_trips, report.clamped_times),
        (1, 3, 0)
    );
}

#[test]
fn nothing_is_answered_before_the_stop_is_reached() {
    let mut c = coordinator(1);
    connect(&mut c, 0);
    batch(&mut c, 0, vec![data(0.0, 0, 1, 1024, 0, 1)], 4245.0);
    assert_eq!(replies(&mut c), vec![(0, "END\n".to_string())]);
    batch(&mut c, 0, vec![], 4246.0);
    assert_eq!(completion_times(&replies(&mut c)[0].1), vec![4246.0]);
}

#[test]
fn replies_fit_the_legacy_limit_and_the_rest_waits_for_the_next_stop() {
    let mut c = coordinator(1);
    connect(&mut c, 0);
    let items = (0..16)
        .map(|n| data(0.0, n, n + 16, 1024, 0, 0x55a873d62cc0 + u64::from(n)))
        .collect();
    batch(&mut c, 0, items, 2.52e17);
    let mut tokens = Vec::new();
    for round in 0..16 {
        let got = replies(&mut c);
        assert_eq!(got.len(), 1, "round {round}");
        let reply = &got[0].1;
        assert!(reply.len() <= 500, "{} bytes", reply.len());
        assert!(reply.ends_with("END\n"));
        let times = completion_times(reply);
        assert!(times.iter().all(|&t| t == 4246.0));
        tokens.extend(reply.lines().filter_map(|l| l.split(' ').nth(6).map(str::to_string)));
        if tokens.len() == 16 {
            break;
        }
        // The client sees a completion at 4246 and STOPs there again.
        batch(&mut c, 0, vec![], 4246.0);
    }
    tokens.sort();
    tokens.dedup();
    assert_eq!(tokens.len(), 16);
}

#[test]
fn past_times_are_clamped_to_the_last_reply_and_counted() {
    let mut c = coordinator(1);
    connect(&mut c, 0);
    batch(&mut c, 0, vec![], 5000.0);
    replies(&mut c);
    batch(&mut c, 0, vec![data(1000.0, 0, 1, 1024, 0, 1)], 2.52e17);
    assert_eq!(completion_times(&replies(&mut c)[0].1), vec![5000.0 + 4246.0]);
    assert_eq!(c.report().simulation.clamped_times, 1);
}

#[test]
fn a_stop_below_the_last_reply_is_answered_at_once() {
    let mut c = coordinator(1);
    connect(&mut c, 0);
    batch(&mut c, 0, vec![], 9000.0);
    replies(&mut c);
    batch(&mut c, 0, vec![], 10.0);
    assert_eq!(replies(&mut c), vec![(0, "END\n".to_string())]);
}

#[test]
fn until_next_completion_with_nothing_in_flight_does_not_hang() {
    let mut c = coordinator(1);
    connect(&mut c, 0);
    batch(&mut c, 0, vec![], 2.52e17);
    assert_eq!(replies(&mut c), vec![(0, "END\n".to_string())]);
}

/// Every STOP beyond the last instant a message may be sent means what the client's
/// 2.52e17 means, until the next completion: with nothing in flight it is answered at
/// once and the clock stays; a later SEND is served as if the STOP had not come. A STOP
/// within the range moves the clock there.
#[test]
fn every_stop_beyond_the_last_injection_waits_for_a_completion_alike() {
    let last = SimTime::LAST_INJECTION.to_wire_ns();
    for stop in [2.52e17, 1e300, f64::MAX, 1e16, 1.8e16, last.next_up()] {
        let mut c = coordinator(1);
        connect(&mut c, 0);
        batch(&mut c, 0, vec![], stop);
        assert_eq!(replies(&mut c), vec![(0, "END\n".to_string())], "STOP {stop}");
        batch(&mut c, 0, vec![data(1000.0, 0, 1, 1024, 0, 1)], 2.52e17);
        assert_eq!(
            completion_times(&replies(&mut c)[0].1),
            vec![1000.0 + 4246.0],
            "STOP {stop}"
        );
        assert_eq!(c.report().simulation.clients[0].bad_lines, 0, "STOP {stop}");
    }
    // Within the range the clock stands at the STOP: a SEND stamped earlier starts there.
    let mut c = coordinator(1);
    connect(&mut c, 0);
    batch(&mut c, 0, vec![], 9e15);
    assert_eq!(replies(&mut c), vec![(0, "END\n".to_string())]);
    batch(&mut c, 0, vec![data(1000.0, 0, 1, 1024, 0, 1)], 2.52e17);
    assert_eq!(completion_times(&replies(&mut c)[0].1), vec![9e15 + 4246.0]);
}

#[test]
fn a_run_past_the_clocks_end_stops_with_its_reason_instead_of_hanging() {
    // Links as slow as the model allows (a 4 KiB packet takes 17.5 s), and two of the
    // largest messages from one host about when the last a message may enter: their
    // million packets queue past the clock's end. Arrivals there used to stop at its
    // last instant, after which no instant comes, so that no one was ever answered.
    let mut network = network(2);
    if let FabricConfig::Switched(s) = &mut network.fabric {
        s.link.bandwidth = vesper_netmodels::Bandwidth::from_bytes_per_second(234).expect("non-zero");
    }
    let config = ServerConfig {
        network,
        ..ServerConfig::default()
    };
    let sim = config.network.build().expect("slow, but valid");
    let mut c = Coordinator::new(config, sim, Arc::new(AtomicBool::new(false)));
    connect(&mut c, 0);
    let last = 9.2e15; // ns: just before SimTime::LAST_INJECTION
    let size = i32::MAX as u32;
    batch(
        &mut c,
        0,
        vec![data(last, 0, 1, size, 0, 1), data(last, 0, 1, size, 0, 2)],
        2.52e17,
    );
    assert_eq!(c.stopped(), Some(Stopped::ClockRanOut { in_flight: 2 }));
    assert!(replies(&mut c).is_empty());
    assert!(c.stopped().is_some_and(|s| s.to_string().starts_with(
        "simulated time ran out: the network model has work at its \
             last instant (18446744073709551 ns, about 213 simulated days;"
    )));
}

#[test]
fn a_batch_without_stop_is_answered_at_the_last_reply() {
    let mut c = coordinator(1);
    connect(&mut c, 0);
    c.apply(SessionEvent::Batch {
        client: 0,
        items: vec![data(0.0, 0, 1, 8, 0, 1)],
        stop: None,
        received: Instant::now(),
    });
    assert_eq!(replies(&mut c), vec![(0, "END\n".to_string())]);
}

#[test]
fn time_does_not_advance_until_every_expected_client_has_connected() {
    let mut c = coordinator(2);
    connect(&mut c, 0);
    batch(&mut c, 0, vec![data(0.0, 0, 1, 1024, 0, 1)], 1e9);
    assert!(replies(&mut c).is_empty());
    connect(&mut c, 1);
    // Client 1 has promised nothing beyond 0 yet.
    assert!(replies(&mut c).is_empty());
    batch(&mut c, 1, vec![], 1e9);
    let got = replies(&mut c);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].0, 0);
    assert_eq!(completion_times(&got[0].1), vec![4246.0]);
    // Client 1 has nothing in flight: nothing can complete for it before its STOP,
    // whatever client 0 does next, so it is answered too.
    assert_eq!(got[1], (1, "END\n".to_string()));
}

#[test]
fn a_client_with_messages_in_flight_waits_for_the_slowest_promise() {
    let mut c = coordinator(2);
    connect(&mut c, 0);
    connect(&mut c, 1);
    batch(&mut c, 0, vec![data(0.0, 0, 1, 1024, 0, 1)], 1e9);
    batch(&mut c, 1, vec![data(0.0, 2, 3, 64 * 1024, 1, 2)], 1e9);
    // Client 0's message arrives first; client 1's is still travelling.
    let got = replies(&mut c);
    assert_eq!(got.len(), 1);
    assert_eq!(completion_times(&got[0].1), vec![4246.0]);
    // Client 0 now computes: it may still send at 4246, which could delay client 1's
    // message, so client 1 is not answered until client 0 promises more.
    assert!(replies(&mut c).is_empty());
    batch(&mut c, 0, vec![], 1e9);
    let got = replies(&mut c);
    let for_client_1: Vec<_> = got.iter().filter(|(id, _)| *id == 1).collect();
    assert_eq!(for_client_1.len(), 1);
    assert_eq!(completion_times(&for_client_1[0].1), vec![65536.0 * 4.0 + 150.0]);
    // And client 0, with nothing in flight, reaches its STOP.
    assert!(got.contains(&(0, "END\n".to_string())));
}

/// The two clients that both send from node 0 of application 0: the first to
/// send keeps it, the other's lines are refused (counted), whichever connected first;
/// the same lines from two applications, or from two nodes of one, are served alike in
/// either order.
#[test]
fn a_sending_node_belongs_to_the_first_client_that_sends_from_it() {
    let run = |first: ClientId, apps: [u32; 2], srcs: [u32; 2]| {
        let mut c = coordinator(2);
        connect(&mut c, 0);
        connect(&mut c, 1);
        let second = 1 - first;
        for client in [first, second] {
            let size = if client == 0 { 1024 } else { 1 << 20 };
            let (app, src) = (apps[client as usize], srcs[client as usize]);
            batch(&mut c, client, vec![data(6500.0, src, 2, size, app, 1)], 2.52e17);
        }
        // Each client finishes once answered: with its completion, or with none when
        // its line was refused.
        let mut times = vec![Vec::new(), Vec::new()];
        for _ in 0..2 {
            for (id, reply) in replies(&mut c) {
                times[id as usize].extend(completion_times(&reply));
                c.apply(SessionEvent::Finish { client: id });
            }
        }
        let bad: Vec<u64> = c.report().simulation.clients.iter().map(|r| r.bad_lines).collect();
        (times, bad)
    };
    let (times, bad) = run(1, [0, 0], [0, 0]);
    assert_eq!(bad, vec![1, 0], "{times:?}");
    assert!(times[0].is_empty() && times[1].len() == 1, "{times:?}");
    let (times, bad) = run(0, [0, 0], [0, 0]);
    assert_eq!(bad, vec![0, 1], "{times:?}");
    assert!(times[0].len() == 1 && times[1].is_empty(), "{times:?}");
    for (apps, srcs) in [([0, 1], [0, 0]), ([0, 0], [0, 1])] {
        let (a, bad_a) = run(0, apps, srcs);
        let (b, bad_b) = run(1, apps, srcs);
        assert_eq!((bad_a, bad_b), (vec![0, 0], vec![0, 0]));
        assert_eq!(a, b, "{apps:?} {srcs:?}");
        assert!(a.iter().all(|t| t.len() == 1), "{a:?}");
    }
}

#[test]
fn simultaneous_injections_do_not_depend_on_arrival_order() {
    // Two applications send to the same node at the same time: who wins the output
    // port must not depend on which batch arrived first.
    let run = |first: ClientId| {
        let mut c = coordinator(2);
        connect(&mut c, 0);
        connect(&mut c, 1);
        let second = 1 - first;
        for client in [first, second] {
            let src = client + 1;
            batch(
                &mut c,
                client,
                vec![data(100.0, src, 0, 4096, client, u64::from(client))],
                1e9,
            );
        }
        let mut times = vec![Vec::new(), Vec::new()];
        for (id, reply) in replies(&mut c) {
            times[id as usize].extend(completion_times(&reply));
        }
        while times.iter().any(Vec::is_empty) {
            // Whoever was answered STOPs again at its completion.
            for id in [0, 1] {
                if !times[id as usize].is_empty() && times[id as usize].len() == 1 {
                    batch(&mut c, id, vec![], 1e9);
                    times[id as usize].push(-1.0);
                }
            }
            for (id, reply) in replies(&mut c) {
                times[id as usize].extend(completion_times(&reply));
            }
        }
        times
    };
    let a = run(0);
    let b = run(1);
    assert_eq!(a, b);
    // Application 0 wins the tie: it is ordered first.
    assert_eq!(a[0][0], 100.0 + 16384.0 + 150.0);
    assert_eq!(a[1][a[1].len() - 1], 100.0 + 2.0 * 16384.0 + 150.0);
}

#[test]
fn a_finished_client_no_longer_holds_time_back() {
    let mut c = coordinator(2);
    connect(&mut c, 0);
    connect(&mut c, 1);
    batch(&mut c, 0, vec![data(0.0, 0, 1, 1024, 0, 1)], 1e9);
    assert!(replies(&mut c).is_empty());
    c.apply(SessionEvent::Finish { client: 1 });
    assert_eq!(completion_times(&replies(&mut c)[0].1), vec![4246.0]);
    c.apply(SessionEvent::Disconnect { client: 1 });
    assert!(!c.is_complete());
    c.apply(SessionEvent::Finish { client: 0 });
    assert!(c.is_complete());
}

#[test]
fn a_vanished_client_is_dropped_and_its_completions_discarded() {
    let mut c = coordinator(2);
    connect(&mut c, 0);
    connect(&mut c, 1);
    batch(&mut c, 1, vec![data(0.0, 2, 3, 1024, 1, 9)], 1e9);
    c.apply(SessionEvent::Disconnect { client: 1 });
    batch(&mut c, 0, vec![data(0.0, 0, 1, 1024, 0, 1)], 1e9);
    let got = replies(&mut c);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, 0);
    assert_eq!(completion_times(&got[0].1), vec![4246.0]);
}

#[test]
fn unknown_nodes_and_bad_times_are_rejected_without_harm() {
    let mut c = coordinator(1);
    connect(&mut c, 0);
    let items = vec![
        data(0.0, 0, 99, 1024, 0, 1),
        data(3e17, 0, 1, 1024, 0, 2),
        data(0.0, 0, 1, 1024, 0, 3),
    ];
    batch(&mut c, 0, items, 2.52e17);
    let got = replies(&mut c);
    assert_eq!(
        got,
        vec![(0, "COMPLETED SEND 4246 0 1 1024 0x3 (nil) 0 1 0\nEND\n".to_string())]
    );
    assert_eq!(c.report().simulation.clients[0].bad_lines, 2);
}

fn wire_coordinator() -> Coordinator {
    let config = ServerConfig {
        network: network(4),
        rendezvous: RendezvousMode::Wire { control_bytes: 64 },
        ..ServerConfig::default()
    };
    let sim = config.network.build().expect("valid network");
    Coordinator::new(config, sim, Arc::new(AtomicBool::new(false)))
}

fn request_to_send(t: f64, src: u32, dst: u32, size: u32) -> BatchItem {
    BatchItem::RequestToSend {
        line: 1,
        request: RendezvousRequest {
            time: WireTime(t),
            src,
            dst,
            tag: 0,
            size,
            src_app: 0,
            dst_app: 0,
        },
    }
}

fn ready_to_recv(t: f64, src: u32, dst: u32, size: u32, ev: u64) -> BatchItem {
    match data(t, src, dst, size, 0, ev) {
        BatchItem::Data { line, message, .. } => BatchItem::Data {
            line,
            message,
            rendezvous: true,
        },
        other => other,
    }
}

/// Runs one rendezvous 0 → 1 of 1 MiB and returns the completion line.
fn rendezvous_completion(c: &mut Coordinator, request_at: f64, ready_at: f64) -> String {
    connect(c, 0);
    let items = vec![
        request_to_send(request_at, 0, 1, 1 << 20),
        ready_to_recv(ready_at, 0, 1, 1 << 20, 5),
    ];
    batch(c, 0, items, ready_at);
    assert_eq!(replies(c), vec![(0, "END\n".to_string())]);
    batch(c, 0, vec![], 2.52e13);
    let got = replies(c);
    assert_eq!(got.len(), 1);
    got[0].1.clone()
}

/// Every completion line a fixed script of batches gets, in wire rendezvous, answered
/// as `replies` says (the script's batches, then empty ones far ahead until all is
/// told), in order, and how many the script's own stops were told.
fn wire_completions(replies_mode: Replies) -> (Vec<String>, usize) {
    let config = ServerConfig {
        network: network(4),
        rendezvous: RendezvousMode::Wire { control_bytes: 64 },
        replies: replies_mode,
        ..ServerConfig::default()
    };
    let sim = config.network.build().expect("valid network");
    let mut c = Coordinator::new(config, sim, Arc::new(AtomicBool::new(false)));
    connect(&mut c, 0);
    let script = vec![
        (
            vec![
                request_to_send(1000.0, 0, 1, 1 << 20),
                ready_to_recv(1000.0, 0, 1, 1 << 20, 5),
                data(1500.0, 2, 3, 4096, 0, 6),
                request_to_send(1500.0, 1, 2, 65536),
                ready_to_recv(2000.0, 1, 2, 65536, 7),
            ],
            2000.0,
        ),
        (
            vec![data(3000.0, 3, 0, 100_000, 0, 8), data(3000.0, 2, 1, 64, 0, 9)],
            3000.0,
        ),
    ];
    let told = |c: &mut Coordinator| -> Vec<String> {
        replies(c)
            .iter()
            .flat_map(|(_, reply)| reply.lines().filter(|l| l.starts_with("COMPLETED")).map(String::from))
            .collect()
    };
    let mut lines = Vec::new();
    for (items, stop) in script {
        batch(&mut c, 0, items, stop);
        lines.extend(told(&mut c));
    }
    let during_script = lines.len();
    for _ in 0..8 {
        batch(&mut c, 0, vec![], 2.52e13);
        lines.extend(told(&mut c));
    }
    lines.sort();
    (lines, during_script)
}

#[test]
fn wire_rendezvous_completes_alike_with_batched_and_earliest_replies() {
    let (earliest, told_early) = wire_completions(Replies::Earliest);
    assert_eq!(earliest.len(), 5, "{earliest:?}");
    let (batched, told_early_batched) = wire_completions(Replies::Batched);
    assert_eq!(batched, earliest);
    // The batches differ: batched replies told a completion before the far stops.
    assert!(
        told_early_batched > told_early,
        "told during the script: earliest {told_early}, batched {told_early_batched}"
    );
}

const MIB_ON_THE_WIRE: f64 = 1048576.0 * 4.0 + 150.0;
const CONTROL_ON_THE_WIRE: f64 = 64.0 * 4.0 + 150.0;

#[test]
fn dimemas_rendezvous_starts_the_data_at_ready() {
    let mut c = coordinator(1);
    let reply = rendezvous_completion(&mut c, 6500.0, 7000.0);
    assert_eq!(completion_times(&reply), vec![7000.0 + MIB_ON_THE_WIRE]);
    assert_eq!(c.report().simulation.clients[0].rendezvous_requests, 1);
}

#[test]
fn wire_rendezvous_sends_request_and_ack_through_the_network() {
    // The request arrives before the receiver is ready: the ack leaves at ready.
    let mut c = wire_coordinator();
    let reply = rendezvous_completion(&mut c, 6500.0, 7000.0);
    let data_start = 7000.0 + CONTROL_ON_THE_WIRE;
    assert_eq!(completion_times(&reply), vec![data_start + MIB_ON_THE_WIRE]);
    // The physical send time is when the data really left, after the ack.
    assert!(reply.ends_with(&format!(" {data_start}\nEND\n")), "{reply}");
}

#[test]
fn wire_rendezvous_ack_waits_for_the_request() {
    // The receiver is ready before the request arrives: the ack leaves on arrival.
    let mut c = wire_coordinator();
    let reply = rendezvous_completion(&mut c, 6500.0, 6600.0);
    let data_start = 6500.0 + 2.0 * CONTROL_ON_THE_WIRE;
    assert_eq!(completion_times(&reply), vec![data_start + MIB_ON_THE_WIRE]);
}

/// Node 1 is busy sending 1 MiB to node 0 when node 0's rendezvous needs an ack from
/// node 1; returns the completion times (eager data, rendezvous data).
fn ack_behind_data(interleave: Interleave) -> Vec<f64> {
    let config = ServerConfig {
        network: NetworkConfig {
            hosts: 4,
            placement: Placement::ONE_PER_HOST,
            fabric: FabricConfig::Switched(SwitchedConfig::crossbar(
                4,
                AdapterParams {
                    header_bytes: 0,
                    interleave,
                    ..AdapterParams::default()
                },
            )),
        },
        rendezvous: RendezvousMode::Wire { control_bytes: 64 },
        ..ServerConfig::default()
    };
    let sim = config.network.build().expect("valid network");
    let mut c = Coordinator::new(config, sim, Arc::new(AtomicBool::new(false)));
    connect(&mut c, 0);
    let items = vec![
        data(0.0, 1, 0, 1 << 20, 0, 9),
        request_to_send(6500.0, 0, 1, 1 << 20),
        ready_to_recv(7000.0, 0, 1, 1 << 20, 5),
    ];
    batch(&mut c, 0, items, 7000.0);
    replies(&mut c);
    let mut times = Vec::new();
    while times.len() < 2 {
        batch(&mut c, 0, vec![], 2.52e13);
        for (_, reply) in replies(&mut c) {
            times.extend(completion_times(&reply));
        }
    }
    times
}

#[test]
fn wire_rendezvous_ack_is_delayed_behind_data() {
    // The protocol messages share the network with data (seed 004, section 5.2).
    let packet = 4096.0 * 4.0;
    let ack = 64.0 * 4.0;
    // FIFO adapters: the ack (ready at 7000) waits for all of node 1's 1 MiB, then
    // crosses the switch behind its tail: it arrives after 1 MiB + 125 ns + 64 B + 25 ns.
    let fifo = ack_behind_data(Interleave::Fifo);
    let ack_arrives = 125.0 + 1048576.0 * 4.0 + ack + 25.0;
    assert_eq!(fifo, vec![MIB_ON_THE_WIRE, ack_arrives + MIB_ON_THE_WIRE]);
    // Round-robin adapters: the ack waits only for the packet in progress (it leaves at
    // 16384), and behind that packet's tail at the switch (16509); the eager data is
    // delayed by the ack's 256 ns.
    let round_robin = ack_behind_data(Interleave::RoundRobin);
    let ack_arrives = 125.0 + packet + ack + 25.0;
    assert_eq!(round_robin, vec![MIB_ON_THE_WIRE + ack, ack_arrives + MIB_ON_THE_WIRE]);
}

#[test]
fn wire_ready_without_request_starts_the_data_at_once() {
    let mut c = wire_coordinator();
    connect(&mut c, 0);
    batch(&mut c, 0, vec![ready_to_recv(7000.0, 0, 1, 1024, 5)], 2.52e13);
    assert_eq!(completion_times(&replies(&mut c)[0].1), vec![7000.0 + 4246.0]);
}

#[test]
fn wire_requests_count_towards_the_in_flight_limit() {
    let config = ServerConfig {
        network: network(4),
        rendezvous: RendezvousMode::Wire { control_bytes: 64 },
        max_in_flight: 2,
        ..ServerConfig::default()
    };
    let sim = config.network.build().expect("valid network");
    let mut c = Coordinator::new(config, sim, Arc::new(AtomicBool::new(false)));
    connect(&mut c, 0);
    // Requests that never get their READY_TO_RECV must not pile up without bound.
    let items = (0..5).map(|_| request_to_send(0.0, 0, 1, 1 << 20)).collect();
    batch(&mut c, 0, items, 1e9);
    assert_eq!(c.report().simulation.clients[0].bad_lines, 3);
    assert_eq!(c.rendezvous.unmatched_requests(), 2);
}

#[test]
fn the_status_line_names_who_holds_time_back() {
    let mut c = coordinator(3);
    connect(&mut c, 0);
    connect(&mut c, 1);
    batch(&mut c, 0, vec![data(0.0, 0, 1, 1024, 0, 1)], 1e9);
    let status = c.status();
    assert!(
        status.contains("waiting for the next batch of client 1 (test1)"),
        "{status}"
    );
    assert!(
        status.contains("waiting for 1 more client(s) to connect (--clients 3)"),
        "{status}"
    );
}

/// Runs `items` on a 4-host crossbar whose nodes are placed by `placement`; returns
/// the completion times and the report.
fn placed(placement: Placement, items: Vec<BatchItem>) -> (Vec<f64>, Report) {
    let config = ServerConfig {
        network: NetworkConfig {
            placement,
            ..network(4)
        },
        ..ServerConfig::default()
    };
    let sim = config.network.build().expect("valid network");
    let mut c = Coordinator::new(config, sim, Arc::new(AtomicBool::new(false)));
    connect(&mut c, 0);
    batch(&mut c, 0, items, 2.52e13);
    let mut times = completion_times(&replies(&mut c)[0].1);
    batch(&mut c, 0, vec![], 2.52e13);
    times.extend(completion_times(&replies(&mut c)[0].1));
    (times, c.report())
}

#[test]
fn nodes_of_one_host_share_its_adapter() {
    // Nodes 0 and 1 run on host 0: their messages leave one after the other.
    let items = vec![
        data(0.0, 0, 2, 4096, 0, 1),
        data(0.0, 1, 4, 4096, 0, 2),
        data(0.0, 0, 8, 1, 0, 3),
    ];
    let (times, report) = placed(Placement::Fill { nodes_per_host: 2 }, items);
    assert_eq!(times, vec![16384.0 + 150.0, 2.0 * 16384.0 + 150.0]);
    // Node 8 would be on host 4, which does not exist.
    assert_eq!(report.simulation.clients[0].bad_lines, 1);
    assert!(report.simulation.network.ends_with(", 2 nodes per host"));
}

#[test]
fn a_task_mapping_places_nodes_on_the_hosts_it_lists() {
    // Nodes 0 and 2 share host 3; node 1 is alone on host 0.
    let items = vec![
        data(0.0, 0, 1, 4096, 0, 1),
        data(0.0, 2, 1, 4096, 0, 2),
        data(0.0, 3, 1, 1, 0, 3),
    ];
    let (times, report) = placed(Placement::Listed(vec![HostId(3), HostId(0), HostId(3)]), items);
    // Both messages leave host 3's adapter, one after the other.
    assert_eq!(times, vec![16384.0 + 150.0, 2.0 * 16384.0 + 150.0]);
    // The mapping lists three nodes: node 3 has no host.
    assert_eq!(report.simulation.clients[0].bad_lines, 1);
    assert!(
        report
            .simulation
            .network
            .ends_with(", 3 nodes placed by a task mapping")
    );
}

#[test]
fn batched_replies_tell_what_the_model_has_fixed_with_the_first_answer() {
    let mut c = coordinator_replying(1, Replies::Batched);
    connect(&mut c, 0);
    // Two messages on separate paths: 0→1 arrives at 4246 ns, 2→3 with twice the bytes
    // later; the client stops before either.
    batch(
        &mut c,
        0,
        vec![data(0.0, 0, 1, 1024, 0, 1), data(0.0, 2, 3, 2048, 0, 2)],
        4245.0,
    );
    let got = replies(&mut c);
    // Answered at its STOP, with both completions told ahead: each packet is on its
    // last cable, so nothing can change its arrival.
    assert_eq!(completion_times(&got[0].1), vec![4246.0, 8342.0]);
    // Told: no longer in flight for the client, which may finish now without a warning
    // of messages still in flight.
    assert_eq!(c.clients.get(&0).map(|client| client.in_flight), Some(0));
    // Told once: nothing more to say when the model reaches them.
    batch(&mut c, 0, vec![], 1e9);
    assert_eq!(replies(&mut c), vec![(0, "END\n".to_string())]);
    let mut earliest = coordinator(1);
    connect(&mut earliest, 0);
    batch(
        &mut earliest,
        0,
        vec![data(0.0, 0, 1, 1024, 0, 1), data(0.0, 2, 3, 2048, 0, 2)],
        4245.0,
    );
    assert_eq!(replies(&mut earliest), vec![(0, "END\n".to_string())]);
}

#[test]
fn batched_replies_keep_the_legacy_limit_and_tell_the_rest_in_time() {
    let mut c = coordinator_replying(1, Replies::Batched);
    connect(&mut c, 0);
    // 16 messages at 4246 ns and 16 later ones: more than 500 bytes.
    let items = (0..16)
        .flat_map(|n| {
            [
                data(0.0, n, n + 16, 1024, 0, 0x55a873d62cc0 + u64::from(n)),
                data(100.0, n + 16, n, 1024, 0, 0x55a873d63cc0 + u64::from(n)),
            ]
        })
        .collect();
    batch(&mut c, 0, items, 2.52e17);
    let mut told = Vec::new();
    for round in 0..32 {
        let got = replies(&mut c);
        assert_eq!(got.len(), 1, "round {round}");
        let reply = &got[0].1;
        assert!(reply.len() <= 500, "{} bytes", reply.len());
        let times = completion_times(reply);
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "in time order: {times:?}");
        told.extend(times);
        if told.len() == 32 {
            break;
        }
        // The client STOPs at its earliest completion not yet taken.
        let next = if told.iter().filter(|&&t| t == 4246.0).count() < 16 {
            4246.0
        } else {
            2.52e17
        };
        batch(&mut c, 0, vec![], next);
    }
    assert_eq!(told.len(), 32, "every completion told once");
    assert_eq!(told.iter().filter(|&&t| t == 4346.0).count(), 16);
}
