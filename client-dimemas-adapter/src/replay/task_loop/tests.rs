//! Tests of the task loop: replays of small workloads whose times are known.

use super::*;
use crate::replay::{CpuRatio, IdealBus, Mapping, MemoryCopy};

/// 1 byte per ns (10^9 bytes per second), 100 ns latency.
fn bus() -> IdealBus {
    IdealBus::new(1_000_000_000, 1, 100_000)
}

#[test]
fn ping_pong_takes_two_transfers_per_round() {
    let outcome = replay(&Workload::ping_pong(1000, 3), &mut bus()).expect("replayed");
    // Each way: 100 ns + 1000 ns.
    assert_eq!(outcome.predicted, 6 * 1_100_000);
    assert_eq!(outcome.messages, 6);
    // The pong is blocked for the first ping, 1.1 µs in flight from the start, then
    // 2.2 µs per round: 1.1 µs until the ping is sent, 1.1 µs while it travels.
    assert_eq!(
        outcome.tasks[1],
        TaskTimes {
            compute: 0,
            communication: 3 * 1_100_000,
            waiting: 2 * 1_100_000,
            end: 5 * 1_100_000
        }
    );
    assert_sums(&outcome);
}

/// Every task's time is computing, communicating or waiting.
fn assert_sums(outcome: &Outcome) {
    for (t, times) in outcome.tasks.iter().enumerate() {
        assert_eq!(
            times.compute + times.communication + times.waiting,
            times.end,
            "task {t}: {times:?}"
        );
    }
}

#[test]
fn compute_communication_and_waiting_add_up_to_the_end() {
    use crate::replay::analytic::{AnalyticCollectives, FanModel};
    let mut workloads = crate::replay::kernels::every_kind();
    workloads.push(Workload::all_to_all(6, 1000).with_start_delays(&[0, 3_000_000, 500_000]));
    workloads.push(exchange(true));
    let rendezvous = ReplayOptions {
        eager_limit: Some(1),
        ..ReplayOptions::default()
    };
    let shared = ReplayOptions {
        mapping: Mapping::TasksPerNode(3),
        memory_copy: MemoryCopy {
            latency: 50_000,
            bandwidth: Some((1_000_000_000, 1)),
        },
        cpu_ratio: CpuRatio::new(3.0),
        ..rendezvous.clone()
    };
    for workload in &workloads {
        for options in [&ReplayOptions::default(), &rendezvous, &shared] {
            let outcome = replay_with(workload, &mut bus(), options).expect("replayed");
            assert_sums(&outcome);
            assert!(
                outcome.tasks.iter().any(|t| t.communication > 0),
                "{}: {:?}",
                workload.name,
                outcome.tasks
            );
        }
    }
    // An analytic collective: task 1 arrives 2 µs late; the model's LOG stages over
    // 2 nodes take 2 × 1.1 µs, communication for both.
    let global = |task: u32| Op::Global {
        call: 0,
        members: 2,
        id: 11,
        is_root: task == 0,
        sent: 1000,
        received: 1000,
    };
    let workload = Workload {
        name: "allreduce".into(),
        tasks: vec![vec![global(0)], vec![Op::Compute(2_000_000), global(1)]],
    };
    let options = ReplayOptions {
        collectives: AnalyticCollectives {
            inter: crate::replay::analytic::Link {
                latency: 100_000,
                bandwidth: Some((1_000_000_000, 1)),
            },
            ..AnalyticCollectives::uniform(FanModel::Logarithmic)
        },
        ..ReplayOptions::default()
    };
    let outcome = replay_with(&workload, &mut bus(), &options).expect("replayed");
    assert_sums(&outcome);
    assert_eq!(
        outcome.tasks,
        [
            TaskTimes {
                compute: 0,
                communication: 2_200_000,
                waiting: 2_000_000,
                end: 4_200_000
            },
            TaskTimes {
                compute: 2_000_000,
                communication: 2_200_000,
                waiting: 0,
                end: 4_200_000
            }
        ]
    );
}

#[test]
fn messages_that_arrive_early_wait_in_the_mailbox() {
    // Task 1 computes for 5 µs; the message arrived at 1.1 µs: no waiting.
    let workload = Workload {
        name: "early".into(),
        tasks: vec![
            vec![Op::Send {
                to: 1,
                size: 1000,
                tag: 3,
                synchronous: false,
            }],
            vec![Op::Compute(5_000_000), Op::Recv { from: 0, tag: 3 }],
        ],
    };
    let outcome = replay(&workload, &mut bus()).expect("replayed");
    assert_eq!(outcome.predicted, 5_000_000);
    assert_eq!(
        outcome.tasks[1],
        TaskTimes {
            compute: 5_000_000,
            communication: 0,
            waiting: 0,
            end: 5_000_000
        }
    );
}

#[test]
fn ring_and_all_to_all_complete() {
    let ring = replay(&Workload::ring(4, 1000, 2, 500_000), &mut bus()).expect("replayed");
    // Even tasks send after 0.5 µs of compute; odd ones receive (1.1 µs later) and
    // pass theirs on: a round takes 0.5 + 2 × 1.1 µs, the second starting when the
    // even tasks have received (2.7 µs).
    assert_eq!(ring.predicted, 2 * (500_000 + 2 * 1_100_000));
    let all = replay(&Workload::all_to_all(4, 1000), &mut bus()).expect("replayed");
    // No contention on the ideal bus: every message lands at 1.1 µs.
    assert_eq!(all.predicted, 1_100_000);
    assert_eq!(all.messages, 12);
}

#[test]
fn rendezvous_waits_for_the_receiver() {
    // Task 1 computes 5 µs before its receive: the 1000-byte rendezvous data starts
    // then, and both tasks go on when it lands, 1.1 µs later.
    let send = Op::Send {
        to: 1,
        size: 1000,
        tag: 0,
        synchronous: true,
    };
    let workload = Workload {
        name: "rendezvous".into(),
        tasks: vec![vec![send], vec![Op::Compute(5_000_000), Op::Recv { from: 0, tag: 0 }]],
    };
    let outcome = replay(&workload, &mut bus()).expect("replayed");
    assert_eq!(
        outcome.tasks[0],
        TaskTimes {
            compute: 0,
            communication: 1_100_000,
            waiting: 5_000_000,
            end: 6_100_000
        }
    );
    assert_sums(&outcome);
    assert_eq!(outcome.tasks[1].end, 6_100_000);
    // The same send, eager: the sender does not wait at all.
    let eager = Workload {
        tasks: vec![
            vec![Op::Send {
                to: 1,
                size: 1000,
                tag: 0,
                synchronous: false,
            }],
            workload.tasks[1].clone(),
        ],
        ..workload.clone()
    };
    let outcome = replay(&eager, &mut bus()).expect("replayed");
    assert_eq!((outcome.tasks[0].end, outcome.tasks[1].end), (0, 5_000_000));
}

#[test]
fn the_eager_limit_turns_large_sends_into_rendezvous() {
    let options = ReplayOptions {
        eager_limit: Some(1000),
        ..ReplayOptions::default()
    };
    let small = replay_with(&Workload::ping_pong(999, 1), &mut bus(), &options).expect("replayed");
    let large = replay_with(&Workload::ping_pong(1000, 1), &mut bus(), &options).expect("replayed");
    // A rendezvous sender waits for its data; the pong's sender thus ends later.
    assert_eq!(small.tasks[1].end, 1_099_000);
    assert_eq!(large.tasks[1].end, 2 * 1_100_000);
}

#[test]
fn an_eager_limit_overrides_the_synchronous_bit_and_all_eager_overrides_both() {
    // Task 0 sends 1000 bytes with the synchronous bit set, then computes 1 µs; task
    // 1 computes 5 µs before its receive. Rendezvous: the data starts at 5 µs and
    // lands 1.1 µs later, when task 0 goes on. Eager: it lands at 1.1 µs, and task
    // 0 is done at 1 µs.
    let workload = Workload {
        name: "synchronous".into(),
        tasks: vec![
            vec![
                Op::Send {
                    to: 1,
                    size: 1000,
                    tag: 0,
                    synchronous: true,
                },
                Op::Compute(1_000_000),
            ],
            vec![Op::Compute(5_000_000), Op::Recv { from: 0, tag: 0 }],
        ],
    };
    let ends = |eager_limit: Option<u32>, all_eager: bool| {
        let options = ReplayOptions {
            eager_limit,
            all_eager,
            ..ReplayOptions::default()
        };
        let outcome = replay_with(&workload, &mut bus(), &options).expect("replayed");
        (outcome.tasks[0].end, outcome.tasks[1].end)
    };
    let rendezvous = (6_100_000 + 1_000_000, 6_100_000);
    let eager = (1_000_000, 5_000_000);
    assert_eq!(ends(None, false), rendezvous, "the bit, with no limit");
    assert_eq!(ends(Some(1001), false), eager, "under the limit");
    assert_eq!(ends(Some(1000), false), rendezvous, "at the limit");
    assert_eq!(ends(None, true), eager, "all eager");
    assert_eq!(ends(Some(1), true), eager, "all eager wins over a limit");
}

#[test]
fn immediate_operations_let_all_to_all_run_with_rendezvous_sends() {
    // Every task posts its receives before starting its sends: every rendezvous is
    // matched at 0 and every message lands at 1.1 µs, as with eager sends.
    let options = ReplayOptions {
        eager_limit: Some(1),
        ..ReplayOptions::default()
    };
    let all = replay_with(&Workload::all_to_all(4, 1000), &mut bus(), &options).expect("replayed");
    assert_eq!(all.predicted, 1_100_000);
    assert_eq!(all.messages, 12);
    let wrf = replay_with(&Workload::wrf(12, 4, 1000), &mut bus(), &options).expect("replayed");
    assert_eq!(wrf.predicted, 1_100_000);
}

/// Tasks 0 and 1 both send 1000 bytes synchronously to each other, then receive:
/// with blocking sends, or immediate ones waited for after the receive.
fn exchange(immediate: bool) -> Workload {
    let program = |me: u32| {
        let other = 1 - me;
        let (to, size, tag, synchronous) = (other, 1000, 0, true);
        let recv = Op::Recv { from: other, tag };
        if immediate {
            let request = 1;
            vec![
                Op::ISend {
                    to,
                    size,
                    tag,
                    synchronous,
                    request,
                },
                recv,
                Op::Wait { request },
            ]
        } else {
            vec![
                Op::Send {
                    to,
                    size,
                    tag,
                    synchronous,
                },
                recv,
            ]
        }
    };
    Workload {
        name: "exchange".into(),
        tasks: vec![program(0), program(1)],
    }
}

#[test]
fn head_to_head_synchronous_sends_deadlock_unless_immediate() {
    let err = replay(&exchange(false), &mut bus()).expect_err("deadlock");
    assert_eq!(
        err.to_string(),
        "deadlock at 0 ps: tasks [0, 1] all wait, for receives or rendezvous sends that cannot match"
    );
    let outcome = replay(&exchange(true), &mut bus()).expect("replayed");
    assert_eq!(outcome.predicted, 1_100_000);
    // Both sends are matched at once: the time is all communication.
    assert_eq!(
        (outcome.tasks[0].communication, outcome.tasks[0].waiting),
        (1_100_000, 0)
    );
}

#[test]
fn receives_match_in_post_order_and_complete_in_arrival_order() {
    // Task 0 sends 1000 bytes, then 10 (landing at 1.1 µs and 0.11 µs); task 1's
    // first receive takes the first message, its second the second.
    let send = |size| Op::Send {
        to: 1,
        size,
        tag: 0,
        synchronous: false,
    };
    let receives = [1, 2].map(|request| Op::IRecv {
        from: 0,
        tag: 0,
        request,
    });
    let waiting_for = |order: [u32; 2]| Workload {
        name: "order".into(),
        tasks: vec![
            vec![send(1000), send(10)],
            receives
                .into_iter()
                .chain(order.map(|request| Op::Wait { request }))
                .collect(),
        ],
    };
    let second_first = replay(&waiting_for([2, 1]), &mut bus()).expect("replayed");
    assert_eq!(second_first.tasks[1].end, 1_100_000);
    // Waiting only for the short one ends at its arrival; the long one still lands.
    let mut short_only = waiting_for([2, 1]);
    short_only.tasks[1].pop();
    let outcome = replay(&short_only, &mut bus()).expect("replayed");
    assert_eq!((outcome.tasks[1].end, outcome.messages), (110_000, 2));
}

#[test]
fn tasks_of_one_node_copy_their_messages_locally() {
    // 50 ns + 1 byte per ns: 1000 bytes take 1.05 µs within a node, 1.1 µs over the
    // bus.
    let options = ReplayOptions {
        mapping: Mapping::TasksPerNode(2),
        memory_copy: MemoryCopy {
            latency: 50_000,
            bandwidth: Some((1_000_000_000, 1)),
        },
        ..ReplayOptions::default()
    };
    let mut fabric = bus();
    let local = replay_with(&Workload::ping_pong(1000, 3), &mut fabric, &options).expect("replayed");
    assert_eq!(
        (local.predicted, local.messages, local.intra_node),
        (6 * 1_050_000, 6, 6)
    );
    // A ring of 4 on 2 nodes: 0 → 1 and 2 → 3 are copies, 1 → 2 and 3 → 0 cross.
    let ring = replay_with(&Workload::ring(4, 1000, 2, 500_000), &mut fabric, &options).expect("replayed");
    assert_eq!(ring.predicted, 2 * (500_000 + 1_050_000 + 1_100_000));
    assert_eq!(ring.intra_node, 4);
    // Rendezvous within a node: the data starts when the receive is posted.
    let rendezvous = ReplayOptions {
        eager_limit: Some(1),
        ..options
    };
    let exchange = replay_with(&exchange(true), &mut fabric, &rendezvous).expect("replayed");
    assert_eq!(exchange.predicted, 1_050_000);
    // By default a copy takes no time.
    let free = ReplayOptions {
        mapping: Mapping::TasksPerNode(2),
        ..ReplayOptions::default()
    };
    assert_eq!(
        replay_with(&Workload::ping_pong(1000, 3), &mut fabric, &free)
            .expect("replayed")
            .predicted,
        0
    );
}

#[test]
fn mappings_place_tasks_as_dimemas_does() {
    let place = |m: &Mapping| (0..6).map(|t| m.node_of(t)).collect::<Vec<_>>();
    assert_eq!(place(&Mapping::OnePerNode), [0, 1, 2, 3, 4, 5]);
    assert_eq!(place(&Mapping::TasksPerNode(4)), [0, 0, 0, 0, 1, 1]);
    assert_eq!(place(&Mapping::Interleaved { nodes: 4 }), [0, 1, 2, 3, 0, 1]);
    assert_eq!(place(&Mapping::Explicit(vec![3, 3, 0, 1, 2, 0])), [3, 3, 0, 1, 2, 0]);
    assert_eq!(Mapping::TasksPerNode(4).nodes_for(6), 2);
    assert_eq!(Mapping::Explicit(vec![7, 0]).nodes_for(2), 8);
    // Interleaved, tasks 0 and 2 share node 0: their message is copied.
    let options = ReplayOptions {
        mapping: Mapping::Interleaved { nodes: 2 },
        ..ReplayOptions::default()
    };
    let ring = replay_with(&Workload::ring(4, 1000, 1, 0), &mut bus(), &options).expect("replayed");
    assert_eq!(ring.intra_node, 0);
    let all = replay_with(&Workload::all_to_all(4, 1000), &mut bus(), &options).expect("replayed");
    assert_eq!(all.intra_node, 4);
}

#[test]
fn the_cpu_ratio_scales_bursts() {
    let twice = ReplayOptions {
        cpu_ratio: CpuRatio::new(2.0),
        ..ReplayOptions::default()
    };
    // Bursts of 0.5 µs take 0.25 µs on CPUs twice as fast.
    let ring = replay_with(&Workload::ring(4, 1000, 2, 500_000), &mut bus(), &twice).expect("replayed");
    assert_eq!(ring.predicted, 2 * (250_000 + 2 * 1_100_000));
    assert_eq!(ring.tasks[0].compute, 500_000);
    assert_eq!(CpuRatio::new(3.0).and_then(|r| r.scale(1_000_000)), Some(333_333));
    assert_eq!(CpuRatio::new(0.0), None);
    assert_eq!(CpuRatio::new(f64::NAN), None);
}

#[test]
fn times_past_the_clock_are_errors_not_clamped() {
    // Bursts of 1,000 s on CPUs 10^5 times slower: 10^8 s.
    let slow = ReplayOptions {
        cpu_ratio: CpuRatio::new(1e-5),
        ..ReplayOptions::default()
    };
    let ring = Workload::ring(2, 1000, 1, 1_000_000_000_000_000);
    assert_eq!(
        replay_with(&ring, &mut bus(), &slow)
            .expect_err("past the clock")
            .to_string(),
        "task 0 at 0 ps: a burst of 1000000000000000 ps (traced; before the CPU speed ratio) would end past \
             what vesper's clock counts (2^64 ps, about 18446744 s)"
    );
    assert_eq!(CpuRatio::new(1e-5).and_then(|r| r.scale(1_000_000_000_000_000)), None);
    // 1,000 bytes at a byte per 10^6 s: 10^9 s.
    let err = replay(&Workload::ring(2, 1000, 1, 0), &mut IdealBus::new(1, 1_000_000, 0)).expect_err("past");
    assert_eq!(
        err.to_string(),
        "a message of 1000 bytes from node 0 to node 1, sent at 0 ps, would arrive past what vesper's clock \
             counts (2^64 ps, about 18446744 s)"
    );
}

#[test]
fn progress_reaches_every_operation() {
    let workload = Workload::ring(4, 1000, 2, 500_000);
    let mut seen = Vec::new();
    replay_observed(&workload, &mut bus(), &ReplayOptions::default(), &mut |p| seen.push(p)).expect("replayed");
    let last = seen.last().copied().expect("progress");
    assert_eq!((last.done, last.total), (24, 24));
    assert!(seen.windows(2).all(|w| w[0].done <= w[1].done && w[0].now <= w[1].now));
}

#[test]
fn unmatched_receives_are_refused_before_replaying() {
    let workload = Workload {
        name: "lonely".into(),
        tasks: vec![vec![Op::Recv { from: 1, tag: 0 }], vec![]],
    };
    let err = replay(&workload, &mut bus()).expect_err("refused");
    assert_eq!(
        err.to_string(),
        "workload lonely: 1 message(s) from task 1 to task 0 with tag 0 have no matching send"
    );
}

/// Dimemas's model: `startup` before sends, receives and waits (within and between
/// nodes), `links` input and output links per node and `buses` buses between
/// nodes, and within nodes `task_links` per task (0: unlimited).
fn dimemas(startup: Ps, links: u32, buses: u32, task_links: u32) -> ReplayOptions {
    use crate::replay::machine::Links;
    use crate::replay::machine::NodeModel;
    let both = |n| Links { input: n, output: n };
    let node = NodeModel {
        inter_startup: startup,
        intra_startup: startup,
        inter_links: both(links),
        intra_links: both(task_links),
        ..NodeModel::free()
    };
    ReplayOptions {
        dimemas: Some(DimemasModel::uniform(node, buses)),
        ..ReplayOptions::default()
    }
}

/// 1 byte per ns and no latency: with Dimemas's model the tasks pay the latency.
fn wire() -> IdealBus {
    IdealBus::new(1_000_000_000, 1, 0)
}

fn eager(to: u32) -> Op {
    Op::Send {
        to,
        size: 1000,
        tag: 0,
        synchronous: false,
    }
}

#[test]
fn dimemas_startup_is_paid_by_the_tasks_before_sends_and_receives() {
    // 100 ns before the send, 1000 ns of data: a ping-pong's round takes 2 × 1.1 µs,
    // as with the latency in the network.
    let outcome =
        replay_with(&Workload::ping_pong(1000, 3), &mut wire(), &dimemas(100_000, 0, 0, 0)).expect("replayed");
    assert_eq!(outcome.predicted, 6 * 1_100_000);
    assert_sums(&outcome);
    // A receive whose message has long landed still pays its startup: task 1 computes
    // 5 µs, then receives at 5.1 µs.
    let late = Workload {
        name: "late".into(),
        tasks: vec![
            vec![eager(1)],
            vec![Op::Compute(5_000_000), Op::Recv { from: 0, tag: 0 }],
        ],
    };
    let outcome = replay_with(&late, &mut wire(), &dimemas(100_000, 0, 0, 0)).expect("replayed");
    assert_eq!((outcome.tasks[0].end, outcome.tasks[1].end), (100_000, 5_100_000));
    // A wait pays it too, an immediate receive does not.
    let waited = Workload {
        name: "waited".into(),
        tasks: vec![
            vec![eager(1)],
            vec![
                Op::IRecv {
                    from: 0,
                    tag: 0,
                    request: 1,
                },
                Op::Compute(5_000_000),
                Op::Wait { request: 1 },
            ],
        ],
    };
    let outcome = replay_with(&waited, &mut wire(), &dimemas(100_000, 0, 0, 0)).expect("replayed");
    assert_eq!(outcome.tasks[1].end, 5_100_000);
}

#[test]
fn dimemas_input_links_serialise_an_incast() {
    // Tasks 1 and 2 send 1000 bytes to task 0 at once; node 0 has one input link: the
    // second message leaves when the first lands (1 µs), and lands at 2 µs.
    let incast = Workload {
        name: "incast".into(),
        tasks: vec![
            vec![Op::Recv { from: 1, tag: 0 }, Op::Recv { from: 2, tag: 0 }],
            vec![eager(0)],
            vec![eager(0)],
        ],
    };
    let one = replay_with(&incast, &mut wire(), &dimemas(0, 1, 0, 0)).expect("replayed");
    assert_eq!(one.tasks[0].end, 2_000_000);
    // The senders go on at once (eager): their messages wait for the link.
    assert_eq!((one.tasks[1].end, one.tasks[2].end), (0, 0));
    // Two links, or unlimited ones: both land at 1 µs.
    for links in [2, 0] {
        let outcome = replay_with(&incast, &mut wire(), &dimemas(0, links, 0, 0)).expect("replayed");
        assert_eq!(outcome.tasks[0].end, 1_000_000, "{links} links");
    }
    // With 100 ns of startup: sends leave at 0.1 µs, land at 1.1 and 2.1 µs.
    let late = replay_with(&incast, &mut wire(), &dimemas(100_000, 1, 0, 0)).expect("replayed");
    assert_eq!(late.tasks[0].end, 2_100_000);
    assert_sums(&late);
}

#[test]
fn dimemas_buses_limit_the_messages_in_flight_between_nodes() {
    // 0 → 1 and 2 → 3 at once over one bus: the second lands at 2 µs.
    let pairs = Workload {
        name: "pairs".into(),
        tasks: vec![
            vec![eager(1)],
            vec![Op::Recv { from: 0, tag: 0 }],
            vec![eager(3)],
            vec![Op::Recv { from: 2, tag: 0 }],
        ],
    };
    let one_bus = replay_with(&pairs, &mut wire(), &dimemas(0, 0, 1, 0)).expect("replayed");
    assert_eq!((one_bus.tasks[1].end, one_bus.tasks[3].end), (1_000_000, 2_000_000));
    let two = replay_with(&pairs, &mut wire(), &dimemas(0, 0, 2, 0)).expect("replayed");
    assert_eq!(two.predicted, 1_000_000);
}

#[test]
fn dimemas_rendezvous_senders_go_on_when_the_receiver_is_ready() {
    // Task 1 receives at 5 µs: the synchronous send's data leaves then and lands at
    // 6 µs; the sender goes on at 5 µs, not when the data lands.
    let workload = Workload {
        name: "rendezvous".into(),
        tasks: vec![
            vec![Op::Send {
                to: 1,
                size: 1000,
                tag: 0,
                synchronous: true,
            }],
            vec![Op::Compute(5_000_000), Op::Recv { from: 0, tag: 0 }],
        ],
    };
    let outcome = replay_with(&workload, &mut wire(), &dimemas(0, 1, 0, 0)).expect("replayed");
    assert_eq!((outcome.tasks[0].end, outcome.tasks[1].end), (5_000_000, 6_000_000));
    assert_sums(&outcome);
}

#[test]
fn dimemas_links_within_a_node_belong_to_each_task() {
    // Tasks 0 and 1 share a node (memory at 1 byte per ns): task 0's two immediate
    // sends to task 1 go one after the other over its one output link.
    let isend = |request| Op::ISend {
        to: 1,
        size: 1000,
        tag: 0,
        synchronous: false,
        request,
    };
    let workload = Workload {
        name: "local".into(),
        tasks: vec![
            vec![isend(1), isend(2)],
            vec![Op::Recv { from: 0, tag: 0 }, Op::Recv { from: 0, tag: 0 }],
        ],
    };
    let local = |task_links| {
        use crate::replay::machine::NodeModel;
        let node = NodeModel {
            intra_links: crate::replay::Links {
                input: task_links,
                output: task_links,
            },
            intra_bandwidth: Some((1_000_000_000, 1)),
            ..NodeModel::free()
        };
        ReplayOptions {
            mapping: Mapping::TasksPerNode(2),
            dimemas: Some(DimemasModel::uniform(node, 0)),
            ..ReplayOptions::default()
        }
    };
    let one = replay_with(&workload, &mut wire(), &local(1)).expect("replayed");
    assert_eq!((one.tasks[1].end, one.intra_node), (2_000_000, 2));
    let unlimited = replay_with(&workload, &mut wire(), &local(0)).expect("replayed");
    assert_eq!(unlimited.tasks[1].end, 1_000_000);
}
