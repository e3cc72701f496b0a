//! Tests of the trace reader and writer.

use super::*;
use crate::replay::{Cursor, IdealBus, ReplayOptions, THREAD, UNWAITED, replay, replay_programs, replay_with};

#[test]
fn the_spec_example_replays_with_times_by_hand() {
    let trace = parse(examples::PING_PONG, "pingpong.dim").expect("parsed");
    assert_eq!(trace.collectives, 1);
    assert_eq!(trace.workload.name, "pingpong");
    // Then the allreduce: an exchange of 8 bytes with task 0 (4 operations).
    assert_eq!(trace.workload.tasks[1].len(), 3 + 4);
    assert_eq!(
        trace.workload.tasks[1][..3],
        [
            Op::Compute(2_000_000),
            Op::Recv { from: 0, tag: 7 },
            Op::Send {
                to: 0,
                size: 1024,
                tag: 8,
                synchronous: false
            }
        ]
    );
    // 1 byte per ns, no latency: task 0 sends at 1.5 µs, task 1 has it at 2.524 µs
    // (it computed until 2 µs), answers, task 0 has it at 3.548 µs. The allreduce
    // exchanges 8 bytes: task 1's (sent at 2.524 µs) is there; task 0's lands at
    // 3.556 µs, when task 1 ends; task 0 computes 0.3 µs more.
    let outcome = replay(&trace.workload, &mut IdealBus::new(1_000_000_000, 1, 0)).expect("replayed");
    assert_eq!(outcome.tasks[1].end, 3_556_000);
    assert_eq!(outcome.predicted, 3_848_000);
}

#[test]
fn collectives_are_decomposed_by_the_methods_chosen() {
    // An all-reduce of 1000 bytes over 8 tasks, rooted at task 0.
    let mut text = String::from("#DIMEMAS:\"a\":0:8(1,1,1,1,1,1,1,1),1\nd:1:1:8:0:1:2:3:4:5:6:7\n");
    for t in 0..8 {
        text.push_str(&format!("10:{t}:0:11:1:{}:0:1000:1000\n", u8::from(t == 0)));
    }
    let predicted = |choice: Option<&str>| {
        let mut methods = Methods::default();
        if let Some(c) = choice {
            methods.choose(c).expect("valid");
        }
        let trace = parse_with(&text, "a.dim", &methods).expect("parsed");
        // 1 byte per ns, 100 ns latency: 1.1 µs a message.
        let mut bus = IdealBus::new(1_000_000_000, 1, 100_000);
        replay(&trace.workload, &mut bus).expect("replayed").predicted
    };
    let hop = 1_100_000;
    assert_eq!(predicted(None), 3 * hop);
    assert_eq!(predicted(Some("allreduce=flat")), 2 * hop);
    assert_eq!(predicted(Some("allreduce=reduce-broadcast")), 6 * hop);
}

#[test]
fn a_reduce_names_its_root_by_task() {
    // MPI_Reduce (10) over 3 tasks naming task 2 its root; then one naming task 1 of
    // a communicator without it (so no root); then an all-reduce whose field 1 says
    // task 0 is its root, and whose field 2 says nothing.
    let mut text = String::from("#DIMEMAS:\"r\":0:3(1,1,1),1\n");
    for t in 0..3 {
        text.push_str(&format!("10:{t}:0:10:1:2:0:100:{}\n", if t == 2 { 100 } else { 0 }));
        text.push_str(&format!("10:{t}:0:10:1:{}:0:8:8\n", if t == 1 { 5 } else { 7 }));
        text.push_str(&format!("10:{t}:0:11:1:{}:0:8:8\n", [1, 2, 0][t]));
    }
    let mut methods = Methods::default();
    methods.choose("all=analytic").expect("valid");
    let trace = parse_with(&text, "r.dim", &methods).expect("parsed");
    let roots = |workload: &Workload| -> Vec<Vec<bool>> {
        let root = |op: &Op| match *op {
            Op::Global { is_root, .. } => Some(is_root),
            _ => None,
        };
        workload
            .tasks
            .iter()
            .map(|p| p.iter().filter_map(root).collect())
            .collect()
    };
    let expected = vec![
        vec![false, false, true],
        vec![false, false, false],
        vec![true, false, false],
    ];
    assert_eq!(roots(&trace.workload), expected);
    // Written and read back, the roots are the same.
    let mut bytes = Vec::new();
    write(&trace.workload, &mut bytes).expect("written");
    let written = String::from_utf8(bytes).expect("UTF-8");
    assert!(written.contains("10:0:0:10:1:2:0:100:0"), "{written}");
    assert!(written.contains("10:0:0:10:1:3:0:8:8"), "{written}");
    let again = parse_with(&written, "w.dim", &methods).expect("read back");
    assert_eq!(roots(&again.workload), expected);
}

#[test]
fn collectives_modelled_analytically_wait_for_the_last_member() {
    use crate::replay::analytic::{AnalyticCollectives, FanModel, Link};
    // An all-reduce of 1000 bytes over 8 tasks (task 3 computes 5 µs first), then
    // a broadcast of 10 bytes from task 2 over tasks 0, 2 and 4 (communicator 2).
    let mut text = String::from("#DIMEMAS:\"a\":0:8(1,1,1,1,1,1,1,1),2\nd:1:2:3:0:2:4\n");
    for t in 0..8 {
        if t == 3 {
            text.push_str("1:3:0:0.000005\n");
        }
        text.push_str(&format!("10:{t}:0:11:1:{}:0:1000:1000\n", u8::from(t == 0)));
        if t % 2 == 0 && t < 6 {
            text.push_str(&format!("10:{t}:0:1:2:{}:0:10:10\n", u8::from(t == 2)));
        }
    }
    let mut methods = Methods::default();
    methods.choose("all=analytic").expect("valid");
    let trace = parse_with(&text, "a.dim", &methods).expect("parsed");
    assert_eq!(trace.collectives, 2);
    assert_eq!(trace.workload.tasks[0].len(), 2);
    // Between nodes: 1 byte per ns and 100 ns a transfer; one task per node.
    let replayed = |model: FanModel| {
        let options = ReplayOptions {
            collectives: AnalyticCollectives {
                inter: Link {
                    latency: 100_000,
                    bandwidth: Some((1_000_000_000, 1)),
                },
                ..AnalyticCollectives::uniform(model)
            },
            ..ReplayOptions::default()
        };
        replay_with(&trace.workload, &mut IdealBus::new(1, 1, 0), &options).expect("replayed")
    };
    // LOG: ⌈log2 8⌉ = 3 steps in and out of 1.1 µs, after task 3 arrives at 5 µs;
    // then ⌈log2 3⌉ = 2 steps in and out of 110 ns.
    let log = replayed(FanModel::Logarithmic);
    assert_eq!(log.tasks[7].end, 5_000_000 + 6 * 1_100_000);
    assert_eq!(log.tasks[0].end, 5_000_000 + 6 * 1_100_000 + 4 * 110_000);
    // Task 0 waits for task 3 (5 µs), then communicates in both stages; task 3
    // computed 5 µs and waited for nobody.
    assert_eq!(log.tasks[0].waiting, 5_000_000);
    assert_eq!(log.tasks[0].communication, log.tasks[0].end - 5_000_000);
    assert_eq!(log.tasks[3].waiting, 0);
    assert_eq!(log.tasks[3].communication, log.tasks[3].end - 5_000_000);
    assert_eq!(log.messages, 0);
    // LIN: 7 and 2 transfers each way.
    let lin = replayed(FanModel::Linear);
    assert_eq!(lin.predicted, 5_000_000 + 14 * 1_100_000 + 4 * 110_000);
    // A call longer than the clock counts stops the replay; it was clamped to it.
    let endless = ReplayOptions {
        collectives: AnalyticCollectives {
            inter: Link {
                latency: u64::MAX / 8,
                bandwidth: None,
            },
            ..AnalyticCollectives::uniform(FanModel::Linear)
        },
        ..ReplayOptions::default()
    };
    let err = replay_with(&trace.workload, &mut IdealBus::new(1, 1, 0), &endless).expect_err("past the clock");
    assert_eq!(
        err.to_string(),
        "task 3 at 5000000 ps: global operation 11 of 8 members, the last to arrive would end past what vesper's \
             clock counts (2^64 ps, about 18446744 s)"
    );
    // Written as a trace: calls over every task are (on communicator 1); the
    // broadcast over part of them cannot be.
    let refused = write(&trace.workload, &mut Vec::new()).expect_err("refused");
    assert_eq!(
        refused.to_string(),
        "collective calls over part of the tasks, or in different orders, cannot be written (only communicator 1 \
             of every task is)"
    );
    let allreduce = parse_with(
        // without the broadcast's records (operation 1 on communicator 2)
        &text
            .lines()
            .filter(|l| !l.contains(":0:1:2:"))
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
        "b.dim",
        &methods,
    )
    .expect("parsed")
    .workload;
    let mut bytes = Vec::new();
    write(&allreduce, &mut bytes).expect("written");
    let again = parse_with(&String::from_utf8(bytes).expect("UTF-8"), "w.dim", &methods).expect("read back");
    assert_eq!(again.workload.tasks, with_first_bursts(&allreduce).tasks);
    // The same trace streamed reads and replays alike.
    let file = std::env::temp_dir().join(format!("vesper-analytic-{}.dim", std::process::id()));
    std::fs::write(&file, &text).expect("written");
    let mut opened = open(&file, &methods).expect("opened");
    let _ = std::fs::remove_file(&file);
    assert!(opened.streamed);
    assert_eq!(opened.programs.total(), 8 + 3 + 1);
    assert_eq!(
        crate::replay::drain(&mut opened.programs).expect("read"),
        trace.workload
    );
}

#[test]
fn threads_take_messages_for_their_task_and_from_each_other() {
    // Task 0 has two threads. Thread 0 computes 1 µs, sends to task 1, then waits
    // for a message from its thread 1 (thread fields given, within the task);
    // thread 1 receives task 1's answer (sent to the task: thread -1) and passes a
    // zero-byte message to thread 0.
    let text = "#DIMEMAS:\"th\":0:2(2,1),1
1:0:0:0.000001
2:0:0:1:-1:1000:5:1:0
3:0:0:0:1:0:9:1:0
3:0:1:1:-1:1000:6:1:0
2:0:1:0:0:0:9:1:0
3:1:0:0:-1:1000:5:1:0
2:1:0:0:-1:1000:6:1:0
";
    let trace = parse(text, "th.dim").expect("parsed");
    assert_eq!(trace.threads, vec![2, 1]);
    assert_eq!(trace.workload.tasks.len(), 3);
    assert_eq!(
        trace.workload.tasks[0][2],
        Op::Recv {
            from: THREAD | 1,
            tag: 9
        }
    );
    assert_eq!(trace.workload.tasks[1][0], Op::Recv { from: 1, tag: 6 });
    assert_eq!(trace.workload.check_threads(&trace.threads), Ok(3));
    // 1 byte per ns and 100 ns between nodes; threads of a task share its node and
    // copy for free: task 1 has the first message at 2.1 µs and answers; task 0's
    // thread 1 has it at 3.2 µs and wakes thread 0 at once.
    let mut programs = Cursor::threaded(&trace.workload, trace.threads.clone());
    let bus = &mut IdealBus::new(1_000_000_000, 1, 100_000);
    let outcome = replay_programs(&mut programs, bus, &ReplayOptions::default(), &mut |_| {}).expect("replayed");
    let ends: Vec<u64> = outcome.tasks.iter().map(|t| t.end).collect();
    assert_eq!(ends, [3_200_000, 3_200_000, 2_100_000]);
    assert_eq!((outcome.messages, outcome.intra_node), (3, 1));
    assert_eq!(outcome.threads, [2, 1]);
    // Messages between threads name threads of their own task only; collectives
    // count tasks, so one thread per task takes part.
    let refused = |records: &str| {
        let text = format!("#DIMEMAS:\"th\":0:2(2,1),1\n{records}\n");
        parse(&text, "th.dim").expect_err("refused").to_string()
    };
    assert_eq!(
        refused("3:0:0:0:2:0:9:1:0"),
        "th.dim:2: field 5 (src_thread): thread 2 of task 0 does not exist (the header declares 2); expected 0 to \
             1, or -1 for any thread"
    );
    assert_eq!(
        refused("10:0:0:0:1:0:0:0:0\n10:0:1:0:1:0:0:0:0"),
        "th.dim:3: task 0 calls collectives on communicator 1 from threads 0 and 1: one thread per task \
             takes part"
    );
    // Streamed, the trace reads and replays alike.
    let file = std::env::temp_dir().join(format!("vesper-threads-{}.dim", std::process::id()));
    std::fs::write(&file, text).expect("written");
    let mut opened = open(&file, &Methods::default()).expect("opened");
    let _ = std::fs::remove_file(&file);
    assert!(opened.streamed);
    assert_eq!(opened.programs.threads(), [2, 1]);
    let bus = &mut IdealBus::new(1_000_000_000, 1, 100_000);
    let streamed =
        replay_programs(&mut opened.programs, bus, &ReplayOptions::default(), &mut |_| {}).expect("replayed");
    assert_eq!(streamed, outcome);
}

#[test]
fn messages_match_within_their_communicator() {
    // Matched by tag alone, task 0's small message would complete task 1's first
    // receive.
    let text = examples::COMMUNICATORS;
    let trace = parse(text, "c.dim").expect("parsed");
    assert_eq!(
        trace.workload.tasks[1],
        vec![Op::Recv { from: 0, tag: -1 }, Op::Recv { from: 0, tag: 7 }]
    );
    // At 1 MBps (2^20 bytes/s) the large message takes about 95 ms; in order, task 1
    // is done when it arrives.
    let mut bus = IdealBus::from_mbps(1.0, 0).expect("bus");
    let outcome = replay_with(&trace.workload, &mut bus, &ReplayOptions::default()).expect("replayed");
    let large = 100_000u64 * 1_000_000_000_000 / (1 << 20);
    assert!(outcome.tasks[1].end >= large, "{:?}", outcome.tasks);
    // A point-to-point communicator needs no `d:` line (Dimemas looks communicators
    // up for collectives only): communicator 99 is where its messages match.
    let undefined = "#DIMEMAS:\"u\":0:2(1,1),1\nd:1:1:2:0:1\n2:0:0:1:-1:8:7:99:0\n3:1:0:0:-1:8:7:99:0\n";
    assert_eq!(parse(undefined, "u.dim").map(|t| t.workload.tasks[1].len()), Ok(1));
    let apart = undefined.replace("3:1:0:0:-1:8:7:99:0", "3:1:0:0:-1:8:7:1:0");
    assert_eq!(
        parse(&apart, "u.dim").expect_err("unmatched").to_string(),
        "u.dim:4: 1 message(s) from task 0 to task 1 with tag 7 on communicator 1 have no matching send; the \
             first is this receive"
    );
}

#[test]
fn immediate_receives_are_waited_for_in_order() {
    let text = "#DIMEMAS:\"i\":0:2(1,1),1
3:0:0:1:-1:10:5:1:1
3:0:0:1:-1:10:5:1:1
3:0:0:1:-1:10:5:1:2
3:0:0:1:-1:10:5:1:2
2:1:0:0:10:5:1:2
2:1:0:0:-1:10:5:1:3
";
    let trace = parse(text, "i.dim").expect("parsed");
    assert_eq!(
        trace.workload.tasks[0],
        vec![
            Op::IRecv {
                from: 1,
                tag: 5,
                request: 0
            },
            Op::IRecv {
                from: 1,
                tag: 5,
                request: 1
            },
            Op::Wait { request: 0 },
            Op::Wait { request: 1 },
        ]
    );
    // The 5-field send form (immediate), then an immediate synchronous send.
    assert_eq!(
        trace.workload.tasks[1][0],
        Op::ISend {
            to: 0,
            size: 10,
            tag: 5,
            synchronous: false,
            request: UNWAITED
        }
    );
    assert_eq!(
        trace.workload.tasks[1][1],
        Op::ISend {
            to: 0,
            size: 10,
            tag: 5,
            synchronous: true,
            request: UNWAITED
        }
    );
    assert_eq!(trace.workload.check(), Ok(2));
}

/// `workload` as written and read back: a burst of 0 s first in each task that
/// does not begin with a burst.
fn with_first_bursts(workload: &Workload) -> Workload {
    let mut workload = workload.clone();
    for program in &mut workload.tasks {
        if !matches!(program.first(), Some(Op::Compute(_))) {
            program.insert(0, Op::Compute(0));
        }
    }
    workload
}

/// Task 0 starts synchronous immediate sends of 1000 and 10 bytes to task 1, waits
/// for the second, computes 1 µs and waits for the first. Task 1 computes 3 µs,
/// posts receives for both from task 0 with the same tag, waits for the second
/// receive first (not the oldest pending), computes 1 µs and waits for the first.
fn waits_a_trace_cannot_say() -> Workload {
    let isend = |size, request| Op::ISend {
        to: 1,
        size,
        tag: 4,
        synchronous: true,
        request,
    };
    let irecv = |request| Op::IRecv {
        from: 0,
        tag: 4,
        request,
    };
    Workload {
        name: "waits".into(),
        tasks: vec![
            vec![
                isend(1000, 8),
                isend(10, 9),
                Op::Wait { request: 9 },
                Op::Compute(1_000_000),
                Op::Wait { request: 8 },
            ],
            vec![
                Op::Compute(3_000_000),
                irecv(1),
                irecv(2),
                Op::Wait { request: 2 },
                Op::Compute(1_000_000),
                Op::Wait { request: 1 },
            ],
        ],
    }
}

#[test]
fn waits_a_trace_cannot_say_are_written_as_events() {
    let workload = waits_a_trace_cannot_say();
    let mut bytes = Vec::new();
    write(&workload, &mut bytes).expect("written");
    let text = String::from_utf8(bytes).expect("UTF-8");
    let records: Vec<&str> = text.lines().filter(|l| !l.starts_with(['#', 'd', 's'])).collect();
    assert_eq!(
        records,
        [
            "1:0:0:0.000000000",
            "20:0:0:70000101:8",
            "2:0:0:1:-1:1000:4:1:3",
            "20:0:0:70000101:9",
            "2:0:0:1:-1:10:4:1:3",
            "20:0:0:70000102:9",
            "1:0:0:0.000001000000",
            "20:0:0:70000102:8",
            "1:1:0:0.000003000000",
            "3:1:0:0:-1:1000:4:1:1",
            "20:1:0:70000101:2",
            "3:1:0:0:-1:10:4:1:1",
            "20:1:0:70000103:2",
            "3:1:0:0:-1:10:4:1:2",
            "1:1:0:0.000001000000",
            "3:1:0:0:-1:1000:4:1:2",
        ]
    );
    // Read back: the same operations, requests renamed (from 0, per task), after a
    // burst of 0 s where task 0 began with no burst.
    let read = parse(&text, "w.dim").expect("read back").workload;
    let [sends, receives] = [&read.tasks[0], &read.tasks[1]];
    assert_eq!(sends[0], Op::Compute(0));
    assert!(matches!(sends[1], Op::ISend { request: 0, .. }), "{sends:?}");
    assert!(matches!(sends[2], Op::ISend { request: 1, .. }), "{sends:?}");
    assert_eq!((sends[3], sends[5]), (Op::Wait { request: 1 }, Op::Wait { request: 0 }));
    assert_eq!(
        (receives[3], receives[5]),
        (Op::Wait { request: 1 }, Op::Wait { request: 0 })
    );
    // 1 byte per ns, 100 ns: both rendezvous start at 3 µs, when task 1 receives;
    // the 10 bytes land at 3.11 µs, the 1000 at 4.1 µs. Both tasks wait for the
    // short one, compute 1 µs and end at 4.11 µs. Without its waits task 0 would
    // end at 1 µs; waiting for the oldest receive first, task 1 at 5.1 µs.
    let outcome = replay(&read, &mut IdealBus::new(1_000_000_000, 1, 100_000)).expect("replayed");
    assert_eq!(
        outcome,
        replay(&workload, &mut IdealBus::new(1_000_000_000, 1, 100_000)).expect("replayed")
    );
    assert_eq!((outcome.tasks[0].end, outcome.tasks[1].end), (4_110_000, 4_110_000));
    // Dimemas's own records only: no label, and the type-2 wait is the oldest's.
    let plain: String = text
        .lines()
        .filter(|l| !l.starts_with("20:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let dimemas = parse(&plain, "d.dim").expect("read").workload;
    assert!(matches!(dimemas.tasks[0][1], Op::ISend { request: UNWAITED, .. }));
    assert_eq!(dimemas.tasks[1][3], Op::Wait { request: 0 });
    let dimemas = replay(&dimemas, &mut IdealBus::new(1_000_000_000, 1, 100_000)).expect("replayed");
    assert_eq!((dimemas.tasks[0].end, dimemas.tasks[1].end), (1_000_000, 5_100_000));
    // Labels that do not fit are refused, naming the line and the field.
    let bad = |records: &str| {
        let text = format!("#DIMEMAS:\"b\":0:2(1,1),1\n{records}\n");
        parse(&text, "b.dim").expect_err("refused").to_string()
    };
    assert_eq!(
        bad("20:0:0:70000102:5"),
        "b.dim:2: field 5 (value): a wait (event 70000102) for label 5, but no immediate operation labelled 5 \
             (event 70000101) is pending"
    );
    assert_eq!(
        bad("20:0:0:70000101:5\n2:0:0:1:-1:10:4:1:0"),
        "b.dim:3: a blocking send after label 5 (event 70000101, line 2), which names the next immediate send \
             or receive"
    );
    assert_eq!(
        bad("20:0:0:70000101:5\n20:0:0:70000101:6"),
        "b.dim:3: field 5 (value): label 6 (event 70000101) while label 5 of line 2 has not been given to an \
             immediate send or receive yet"
    );
    assert_eq!(
        bad("3:0:0:1:-1:10:4:1:1\n20:0:0:70000103:0\n3:0:0:1:-1:10:4:1:2"),
        "b.dim:4: a wait (type 2) for label 0 (event 70000103), but no immediate receive from task 1 with tag 4 \
             labelled 0 is pending"
    );
    assert_eq!(
        bad("20:0:0:70000101:x"),
        "b.dim:2: field 5 (value): expected a number, found 'x'"
    );
    // Other events are not looked at.
    assert!(parse("#DIMEMAS:\"b\":0:1(1),1\n20:0:0:50000001:x:y\n", "b.dim").is_ok());
}

#[test]
fn written_workloads_read_back_and_replay_alike() {
    let mut workloads = crate::replay::kernels::every_kind();
    workloads.extend([
        Workload::all_to_one(5, 1).with_start_delays(&[3, 1_000_000_000_007]),
        waits_a_trace_cannot_say(),
    ]);
    // Eager (but for synchronous sends), every send rendezvous, every send eager.
    let rendezvous = ReplayOptions {
        eager_limit: Some(1),
        ..ReplayOptions::default()
    };
    let eager = ReplayOptions {
        all_eager: true,
        ..ReplayOptions::default()
    };
    for workload in workloads {
        let mut bytes = Vec::new();
        write(&workload, &mut bytes).expect("written");
        let text = String::from_utf8(bytes).expect("UTF-8");
        assert_dimemas_reads(&text);
        let trace = parse(&text, "w.dim").expect("read back");
        assert_eq!(trace.warnings, Vec::<String>::new(), "{}", workload.name);
        let read = trace.workload;
        assert_eq!(read.name, workload.name);
        // Every task begins with a burst, of 0 s where it began with none.
        assert!(read.tasks.iter().all(|p| matches!(p.first(), Some(Op::Compute(_)))));
        for options in [&ReplayOptions::default(), &rendezvous, &eager] {
            let bus = || IdealBus::new(1_000_000_000, 1, 100_000);
            let before = replay_with(&workload, &mut bus(), options).expect("replayed");
            let after = replay_with(&read, &mut bus(), options).expect("replayed");
            assert_eq!(before, after, "{}, {options:?}", workload.name);
        }
        // Streamed, the written trace reads as it does whole.
        let file = std::env::temp_dir().join(format!("vesper-written-{}.dim", std::process::id()));
        std::fs::write(&file, &text).expect("written");
        let mut opened = open(&file, &Methods::default()).expect("opened");
        let _ = std::fs::remove_file(&file);
        assert!(opened.streamed, "{}", workload.name);
        assert_eq!(crate::replay::drain(&mut opened.programs).expect("read"), read);
        assert_eq!(opened.warnings, Vec::<String>::new());
    }
}

/// Dimemas's rules (`rules.rs`), checked on a trace vesper wrote without them: the
/// header names the trace and gives the byte of the offsets table, the line
/// `s:0:`; the table has a line per task, in order, with one offset, the byte of
/// its task's first record, a CPU burst; each task's records follow each other.
fn assert_dimemas_reads(text: &str) {
    let header = text.lines().next().expect("a header");
    let (name, after_name) = header
        .strip_prefix("#DIMEMAS:\"")
        .and_then(|rest| rest.split_once('"'))
        .expect("a name");
    assert!(!name.is_empty() && !name.contains('\n'), "{header}");
    let (offset, tasks) = after_name
        .strip_prefix(":1,")
        .and_then(|rest| rest.split_once(':'))
        .expect("an offset");
    let offset: usize = offset.parse().expect("an offset");
    let tasks: usize = tasks.split('(').next().and_then(|n| n.parse().ok()).expect("tasks");
    assert!(text[offset..].starts_with("s:0:"), "{header}");
    let table: Vec<&str> = text[offset..].lines().collect();
    assert_eq!(table.len(), tasks, "{header}");
    let mut firsts = Vec::new();
    for (t, line) in table.iter().enumerate() {
        let at: usize = line
            .strip_prefix(&format!("s:{t}:"))
            .and_then(|o| o.parse().ok())
            .unwrap_or_else(|| panic!("{line}: not task {t}'s one offset"));
        assert_eq!(text.as_bytes()[at - 1], b'\n', "{line}");
        assert!(text[at..].starts_with(&format!("1:{t}:0:")), "{line}");
        firsts.push(at);
    }
    // After the header and the communicator, each task's records, in task order.
    let mut at = header.len() + 1;
    let mut tasks_seen = Vec::new();
    for line in text[..offset].lines().skip(1) {
        if !line.starts_with("d:") {
            let task: usize = line.split(':').nth(1).and_then(|t| t.parse().ok()).expect("a task");
            assert!(line.split(':').nth(2) == Some("0"), "{line}");
            if tasks_seen.last() != Some(&task) {
                assert_eq!(firsts.get(task), Some(&at), "{line}");
                tasks_seen.push(task);
            }
        }
        at += line.len() + 1;
    }
    assert_eq!(tasks_seen, (0..tasks).collect::<Vec<_>>());
}

#[test]
fn written_traces_keep_dimemas_s_rules() {
    // A task with nothing to do, and names Dimemas cannot read.
    for name in ["", "\"quoted\"\nand broken"] {
        let workload = Workload {
            name: name.into(),
            tasks: vec![vec![], vec![Op::Compute(1_000)]],
        };
        let mut bytes = Vec::new();
        write(&workload, &mut bytes).expect("written");
        let text = String::from_utf8(bytes).expect("UTF-8");
        assert_dimemas_reads(&text);
        let trace = parse(&text, "w.dim").expect("read back");
        assert_eq!(trace.warnings, Vec::<String>::new());
        assert_eq!(trace.workload.tasks, [vec![Op::Compute(0)], vec![Op::Compute(1_000)]]);
        let expected = if name.is_empty() {
            "vesper"
        } else {
            "'quoted' and broken"
        };
        assert_eq!(trace.workload.name, expected);
    }
    // Written again, a trace read back gets no second burst of 0 s.
    let bursts = |workload: &Workload| {
        let mut bytes = Vec::new();
        write(workload, &mut bytes).expect("written");
        let text = String::from_utf8(bytes).expect("UTF-8");
        let count = text.lines().filter(|l| l.starts_with("1:")).count();
        (count, parse(&text, "w.dim").expect("read back").workload)
    };
    let (first, read) = bursts(&Workload::all_to_all(4, 100));
    assert_eq!((first, bursts(&read).0), (4, 4));
}

/// The examples in the repository's `examples/`.
fn repository_examples() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut traces: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "dim"))
        .collect();
    traces.sort();
    traces
}

#[test]
fn the_examples_keep_dimemas_s_rules() {
    let traces = repository_examples();
    assert_eq!(traces.len(), 2, "{traces:?}");
    for path in traces {
        let trace = read(&path).expect("read");
        assert_eq!(trace.warnings, Vec::<String>::new(), "{}", path.display());
        let opened = open(&path, &Methods::default()).expect("opened");
        assert!(opened.streamed);
        assert_eq!(opened.warnings, Vec::<String>::new(), "{}", path.display());
    }
    // examples/pingpong.dim is the formats spec's example, its offsets right.
    let pingpong = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/pingpong.dim");
    assert_eq!(
        std::fs::read_to_string(pingpong).expect("read"),
        ping_pong_as_dimemas_reads_it()
    );
}

/// The warnings of `text`, named t.dim, read whole; read as the replay goes, the
/// same ones.
fn warnings(text: &str) -> Vec<String> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let whole = parse(text, "t.dim").expect("read").warnings;
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file = std::env::temp_dir().join(format!("vesper-rules-{}-{n}.dim", std::process::id()));
    std::fs::write(&file, text).expect("written");
    let opened = open(&file, &Methods::default()).expect("opened");
    let _ = std::fs::remove_file(&file);
    let name = file.display().to_string();
    let streamed: Vec<String> = opened.warnings.iter().map(|w| w.replace(&name, "t.dim")).collect();
    assert_eq!(streamed, whole, "{text}");
    whole
}

/// The spec's ping-pong with its offsets right (header 39 bytes, so the table is at
/// byte 237 and the tasks' first records at 51 and 153): `examples/pingpong.dim`.
fn ping_pong_as_dimemas_reads_it() -> String {
    examples::PING_PONG
        .replace("1,249:", "1,237:")
        .replace("s:0:63", "s:0:51")
        .replace("s:1:165", "s:1:153")
}

#[test]
fn the_offsets_table_is_checked_where_dimemas_reads_it() {
    let good = ping_pong_as_dimemas_reads_it();
    assert_eq!(warnings(&good), Vec::<String>::new());
    // The header's offset 12 bytes past the table: Dimemas reads "65" of s:1:165.
    assert_eq!(
        warnings(examples::PING_PONG),
        [
            "t.dim:1: the header's offset of the offsets table, byte 249, is inside line 13, but the table's \
                 first line, s:0:, is at byte 237 (line 12): Dimemas refuses the trace (\"wrong offset definition \
                 (65)\")"
        ]
    );
    let with = |from: &str, to: &str| warnings(&good.replace(from, to));
    assert_eq!(
        with("1,237:", "1,400:"),
        [
            "t.dim:1: the header's offset of the offsets table (400) is past the end of the file (252 bytes): \
                 Dimemas refuses the trace (\"number of tasks offsets lower than application tasks (2 expected, 0 \
                 read)\")"
        ]
    );
    assert_eq!(
        with("1,237:", "1,244:"),
        [
            "t.dim:13: the offsets table's line for task 0 is task 1's: Dimemas refuses the trace (\"wrong task \
                 sequence when reading offsets (0 expected, 1 read)\")"
        ]
    );
    assert_eq!(
        with("1,237:", "1,153:"),
        [
            "t.dim:1: the header's offset of the offsets table, byte 153, is the start of line 8, but the table's \
                 first line, s:0:, is at byte 237 (line 12): Dimemas refuses the trace (\"wrong offset definition \
                 (1:1:0:0.000002000)\")"
        ]
    );
    assert_eq!(
        with("s:1:153\n", ""),
        [
            "t.dim:12: the offsets table ends with the file after the lines of 1 of the 2 tasks: Dimemas refuses \
                 the trace (\"number of tasks offsets lower than application tasks (2 expected, 1 read)\")"
        ]
    );
    assert_eq!(
        with("s:1:153", "s:1:153:160"),
        [
            "t.dim:13: the offsets table's line for task 1 gives more offsets than its 1 thread(s): Dimemas \
                 refuses the trace (\"number of threads offsets bigger than task threads (1 expected, 1 read)\")"
        ]
    );
    assert_eq!(
        with("s:1:153", "s:1:"),
        [
            "t.dim:13: the offsets table's line for task 1 ('s:1:') is not s:1:<offset>[:<offset>…]: Dimemas \
                 refuses the trace (\"wrong offset definition (s:1:)\")"
        ]
    );
    // Offsets are read as C's strtoul reads them: 063 is octal, 51.
    assert_eq!(with("s:0:51", "s:0:063"), Vec::<String>::new());
    assert_eq!(with("s:0:51", "s:0:0x33"), Vec::<String>::new());
    assert_eq!(
        with("s:0:51", "s:0:051"),
        [
            "t.dim:12: the offsets table gives thread (0, 0) byte 41, but its first record starts at byte 51 \
                 (line 3): Dimemas reads the thread's records from byte 41"
        ]
    );
    // Offsets that are no byte of the file are refused, read whole or streamed.
    let refused = |from: &str, to: &str| {
        let text = good.replace(from, to);
        let whole = parse(&text, "t.dim").expect_err("refused").to_string();
        let file = std::env::temp_dir().join(format!("vesper-offsets-{}.dim", std::process::id()));
        std::fs::write(&file, &text).expect("written");
        let streamed = open(&file, &Methods::default()).err().map(|e| e.to_string());
        let _ = std::fs::remove_file(&file);
        let name = file.display().to_string();
        assert_eq!(streamed.map(|e| e.replace(&name, "t.dim")), Some(whole.clone()));
        whole
    };
    let negative = "is before the file's start as Dimemas reads it (a signed offset), so it cannot read there \
                        (\"unable to position the trace\"); expected the byte where the thread's first record starts, \
                        153";
    assert_eq!(
        refused("s:1:153", "s:1:-153"),
        format!("t.dim:13: the offsets table's line for task 1: thread 0's offset '-153' {negative}")
    );
    assert_eq!(
        refused("s:1:153", "s:1:99999999999999999999"),
        format!("t.dim:13: the offsets table's line for task 1: thread 0's offset '99999999999999999999' {negative}")
    );
    assert_eq!(
        refused("s:1:153", "s:1:1530"),
        "t.dim:13: the offsets table's line for task 1: thread 0's offset '1530' is past the end of the file \
             (253 bytes), where Dimemas reads no record (\"P00 T01 (t00) initialized without actions\"); expected \
             the byte where the thread's first record starts, 153"
    );
    // The header's offsets field.
    assert_eq!(
        with("1,237:", "1,x:"),
        [
            "t.dim:1: the header announces an offsets table but gives no byte offset for it ('1,x'): Dimemas \
                 refuses the trace (\"wrong offsets offset position on trace header\")"
        ]
    );
    assert_eq!(
        with("1,237:", "0,237:"),
        [
            "t.dim:1: the header says the trace has no offsets table (0) but gives a byte offset ('0,237'): \
                 Dimemas refuses the trace (\"offsets offset wrong set\")"
        ]
    );
    assert_eq!(
        with("1,237:", "2,237:"),
        [
            "t.dim:1: the header's offsets flag is 2, neither 0 (no offsets table) nor 1 (a table at the byte \
                 offset after it): Dimemas refuses the trace (\"unknown offsets hint value on header '2'\")"
        ]
    );
    // The rest of the header: a name, and no blank among the counts.
    assert_eq!(
        warnings("#DIMEMAS:\"\":0:1(1),1\n1:0:0:0\n"),
        ["t.dim:1: the trace's name is empty: Dimemas refuses the trace (\"wrong header format\")"]
    );
    assert_eq!(
        warnings("#DIMEMAS:\"b\":0:2(1, 1),1\n1:0:0:0\n1:1:0:0\n"),
        [
            "t.dim:1: the header's tasks, threads and communicators ('2(1, 1),1') are not N(threads,…),C with no \
                 blank: Dimemas refuses the trace (\"wrong application definition on trace header (2(1,)\")"
        ]
    );
}

#[test]
fn records_dimemas_would_not_read_are_warned_about() {
    // Interleaved: Dimemas reads each thread up to the other's line.
    let text = "#DIMEMAS:\"i\":0:2(1,1),1\n1:0:0:0.5\n1:1:0:0\n2:0:0:1:-1:10:0:1:0\n3:1:0:0:-1:10:0:1:0\n";
    assert_eq!(
        warnings(text),
        [
            "t.dim:4: 1 record(s) of thread (0, 0) from here on come after other lines: Dimemas reads a \
                 thread's records from its first (line 2) up to the first line that is not one of them (line 3), \
                 and never reads these",
            "t.dim:5: 1 record(s) of thread (1, 0) from here on come after other lines: Dimemas reads a \
                 thread's records from its first (line 3) up to the first line that is not one of them (line 4), \
                 and never reads these",
        ]
    );
    // A comment, or a communicator, where a thread's next record would be.
    assert_eq!(
        warnings("#DIMEMAS:\"c\":0:1(1),1\n1:0:0:0.5\n# a note\n\n"),
        [
            "t.dim:3: this line follows thread (0, 0)'s records, which Dimemas reads up to the next line of \
                 another thread or of the offsets table: it reads this one as a record and stops (\"wrong operation \
                 record format (# a note)\")"
        ]
    );
    assert_eq!(
        warnings("#DIMEMAS:\"d\":0:2(1,1),1\n\n1:0:0:0\n1:1:0:0\nd:1:1:2:0:1\n"),
        [
            "t.dim:5: a communicator after line 2, which is not one: Dimemas reads definitions (d:) only right \
                 after the header, so it does not know this communicator",
            "t.dim:5: this line follows thread (1, 0)'s records, which Dimemas reads up to the next line of \
                 another thread or of the offsets table: it reads this one as a record and stops (\"wrong operation \
                 record format (d:1:1:2:0:1)\")",
        ]
    );
    assert_eq!(
        warnings("#DIMEMAS:\"d\":0:2(1,1),1\nd:4:1:2:0:1\n1:0:0:0\n1:1:0:0\n"),
        [
            "t.dim:2: a definition of type 4, not 1 (communicator), 2 (file) or 3 (window): Dimemas refuses the \
                 trace (\"unknown object definition type (d:4:1:2:0:1)\")"
        ]
    );
    assert_eq!(
        warnings("#DIMEMAS:\"n\":0:1(1),1\n1:0:0:0\n0:0:0:5\n0:0:0\n"),
        [
            "t.dim:3: a no-op (op 0) with fields: Dimemas takes only 0:task:thread for a no-op and stops here \
                 (\"unknown action (5)\")"
        ]
    );
    // Without an offsets table, thread (0,0) begins right after the definitions, and
    // threads' first records come in (task, thread) order.
    assert_eq!(
        warnings("#DIMEMAS:\"f\":0:2(1,1),1\n1:1:0:0\n1:0:0:0\n"),
        [
            "t.dim:2: with no offsets table (header flag 0), Dimemas takes thread (0, 0)'s records to begin on \
                 the first line after the header and its definitions, this one, which is not one of them: it stops \
                 (\"P00 T00 (t00) initialized without actions\")",
            "t.dim:2: thread (1, 0)'s first record comes before thread (0, 0)'s (line 3): with no offsets table \
                 (header flag 0), Dimemas looks for each thread's first record after the previous thread's, in \
                 (task, thread) order, and does not find it there (\"error locating offset for task 1, thread 0\", \
                 or its records skipped up to a later one)",
        ]
    );
    assert_eq!(
        warnings("#DIMEMAS:\"f\":0:3(1,1,1),1\n1:0:0:0\n1:2:0:0\n1:1:0:0\n"),
        [
            "t.dim:3: thread (2, 0)'s first record comes before thread (1, 0)'s (line 4): with no offsets table \
                 (header flag 0), Dimemas looks for each thread's first record after the previous thread's, in \
                 (task, thread) order, and does not find it there (\"error locating offset for task 2, thread 0\", \
                 or its records skipped up to a later one)"
        ]
    );
    // A thread with no record.
    assert_eq!(
        warnings("#DIMEMAS:\"e\":0:2(1,1),1\n1:0:0:0\n"),
        [
            "t.dim:1: thread (1, 0) has no record: Dimemas refuses the trace (\"error locating offset for task \
                 1, thread 0\")"
        ]
    );
    assert_eq!(
        warnings("#DIMEMAS:\"e\":1,35:2(1,1),1\n1:0:0:0\ns:0:27\ns:1:35\n"),
        [
            "t.dim:1: thread (1, 0) has no record: Dimemas refuses the trace (\"P00 T01 (t00) initialized \
                 without actions\")"
        ]
    );
}

#[test]
fn threads_that_do_not_begin_with_a_cpu_burst_are_warned_about() {
    let mut text = String::from("#DIMEMAS:\"e\":0:8(1,1,1,1,1,1,1,1),1\n");
    for t in 0..8 {
        text.push_str(&format!("20:{t}:0:50000001:1\n"));
    }
    let said = |task: u32| {
        format!(
            "t.dim:{}: thread ({task}, 0) begins with an event, not a CPU burst: Dimemas does not simulate it \
                 (\"will not be simulated: not begins execution with work\"); a burst of 0 s first will do \
                 (1:{task}:0:0)",
            task + 2
        )
    };
    // Three named, the others counted.
    assert_eq!(
        warnings(&text),
        [
            said(0),
            said(1),
            said(2),
            "t.dim: and 5 more thread(s) that do not begin with a CPU burst".to_string(),
            "t.dim:1: no thread begins with a CPU burst: Dimemas would simulate none of them, and report the \
                 time of its first periodic event, 10 s (1 s with --venus)"
                .to_string(),
        ]
    );
    // One that does is simulated: no summary.
    let one = text.replace("20:3:0:50000001:1\n", "1:3:0:0\n");
    assert_eq!(warnings(&one).len(), 4);
    assert_eq!(
        warnings(&one)[3],
        "t.dim: and 4 more thread(s) that do not begin with a CPU burst"
    );
    // A message between threads of one task.
    let text = "#DIMEMAS:\"a\":0:1(2),1\n1:0:0:0\n2:0:0:0:1:8:1:1:0\n1:0:1:0\n3:0:1:0:0:8:1:1:0\n";
    assert_eq!(
        warnings(text),
        [
            "t.dim:3: a send from thread (0, 0) to its own task (thread 1): Dimemas takes a message between \
                 threads of one task for an accelerator (CUDA) transfer, always rendezvous, and may fail on it in a \
                 task the header does not declare an accelerator task (2 such record(s))"
        ]
    );
}

#[test]
fn receives_take_the_size_of_their_send() {
    let mut bytes = Vec::new();
    write(&Workload::ping_pong(4096, 1), &mut bytes).expect("written");
    let text = String::from_utf8(bytes).expect("UTF-8");
    assert!(text.contains("\n3:1:0:0:-1:4096:0:1:0\n"), "{text}");
    assert!(text.contains("\n2:0:0:1:-1:4096:0:1:0\n"), "{text}");
    assert!(text.lines().next().expect("header").ends_with(' '));
}

#[test]
fn collectives_follow_their_communicator_and_root() {
    let text = examples::COLLECTIVES;
    let trace = parse(text, "c.dim").expect("parsed");
    assert_eq!(trace.collectives, 3);
    trace.workload.check().expect("balanced");
    // The broadcast from task 2: relative ranks 0..4 are tasks 2, 3, 0, 1; 2 sends
    // to 0 (relative 2) then 3, and 0 passes it to 1: 2 message times of 1.1 µs on
    // a 1 byte/ns bus with 100 ns latency. Then tasks 1 and 3 exchange 8 bytes
    // (108 ns), and the barrier takes 4 zero-byte messages of 100 ns.
    let outcome = replay(&trace.workload, &mut IdealBus::new(1_000_000_000, 1, 100_000)).expect("replayed");
    assert_eq!(outcome.predicted, 2 * 1_100_000 + 108_000 + 4 * 100_000);
}

#[test]
fn errors_name_the_line_and_the_field() {
    let bad = |line: &str| {
        let text = format!("#DIMEMAS:\"b\":0:2(1,1),1\n1:0:0:0.5\n{line}\n");
        parse(&text, "b.dim").expect_err("refused").to_string()
    };
    assert_eq!(
        bad("2:0:0:1:-1:many:7:1:0"),
        "b.dim:3: field 6 (size): expected a number, found 'many'"
    );
    assert_eq!(
        bad("3:0:0:1:-1:8:7:1"),
        "b.dim:3: a receive (src_task:src_thread:size:tag:comm:type): expected 6 fields, found 5"
    );
    assert_eq!(
        bad("2:5:0:1:-1:8:7:1:0"),
        "b.dim:3: task 5 does not exist (the header declares 2)"
    );
    assert_eq!(
        bad("2:0:0:9:-1:8:7:1:0"),
        "b.dim:3: the destination task 9 does not exist (the header declares 2)"
    );
    assert_eq!(
        bad("1:0:1:0.5"),
        "b.dim:3: thread 1 of task 0 does not exist (the header declares 1)"
    );
    // A thread past 32 bits is named as written (it was named as 4294967295).
    assert_eq!(
        bad("2:0:0:0:4294967296:8:7:1:0"),
        "b.dim:3: field 5 (dst_thread): thread 4294967296 of task 0 does not exist (the header declares 1); \
             expected 0, or -1 for any thread"
    );
    // The peer's thread, between tasks too (Dimemas fails on it): one of its
    // threads, or -1 (-2, as Dimemas reads it) for any.
    assert_eq!(
        bad("2:0:0:1:5:8:7:1:0"),
        "b.dim:3: field 5 (dst_thread): thread 5 of task 1 does not exist (the header declares 1); expected 0, or \
             -1 for any thread"
    );
    assert_eq!(
        bad("3:1:0:0:-7:8:7:1:0"),
        "b.dim:3: field 5 (src_thread): thread -7 of task 0 does not exist (the header declares 1); expected 0, \
             or -1 for any thread"
    );
    assert!(
        parse(
            "#DIMEMAS:\"b\":0:2(1,1),1\n2:0:0:1:-2:8:7:1:0\n3:1:0:0:0:8:7:1:0\n",
            "b.dim"
        )
        .is_ok()
    );
    assert_eq!(
        bad("1:0:0:-3"),
        "b.dim:3: field 4 (seconds): expected a duration, found '-3'"
    );
    assert_eq!(bad("7:0:0:1"), "b.dim:3: unknown record type 7");
    assert_eq!(
        bad("2:0:0:1:-1:8:7:1:4"),
        "b.dim:3: field 9 (sync): expected 0 to 3 (bit 0 synchronous, bit 1 immediate), found 4"
    );
    assert_eq!(
        bad("2:0:0:1:8:7:1:9"),
        "b.dim:3: field 8 (sync): expected 0 to 3 (bit 0 synchronous, bit 1 immediate), found 9"
    );
    assert_eq!(
        bad("1:0:0:1e300"),
        "b.dim:3: field 4 (seconds): a burst of 1e300 s is longer than vesper's clock counts (2^64 ps, about \
             18446744 s)"
    );
    assert_eq!(
        bad("1:0:0:18446745"),
        "b.dim:3: field 4 (seconds): a burst of 18446745 s is longer than vesper's clock counts (2^64 ps, about \
             18446744 s)"
    );
    assert!(parse("#DIMEMAS:\"b\":0:1(1),1\n1:0:0:18446744\n", "b.dim").is_ok());
    // Sends and receives match in order: the last sends of a channel have no
    // receive, the last receives no send.
    assert_eq!(
        bad("2:0:0:1:-1:8:7:1:0\n2:0:0:1:-1:8:7:1:0\n3:1:0:0:-1:8:7:1:0\n2:0:0:1:-1:8:7:1:0"),
        "b.dim:4: 2 message(s) from task 0 to task 1 with tag 7 on communicator 1 have no matching receive; the \
             first is this send"
    );
    assert_eq!(
        bad("3:1:0:0:-1:8:7:1:0\n2:0:0:1:-1:8:7:1:0\n3:1:0:0:-1:8:7:1:1"),
        "b.dim:5: 1 message(s) from task 0 to task 1 with tag 7 on communicator 1 have no matching send; the \
             first is this receive"
    );
    assert_eq!(
        bad("10:0:0:40:1:0:0:8:8"),
        "b.dim:3: field 4 (glop_id): unknown global operation 40 (0 to 31)"
    );
    assert_eq!(
        bad("10:0:0:11:1:0:0:8:8\n10:1:0:0:1:0:0:0:0"),
        "b.dim:4: collective call 1 on communicator 1: task 0 calls operation 11, task 1 operation 0"
    );
    assert_eq!(
        bad("10:0:0:11:1:0:0:8:8"),
        "b.dim:3: task 1 makes 0 collective calls on communicator 1, others 1"
    );
    assert_eq!(
        bad("d:1:1:3:0:1"),
        "b.dim:3: communicator 1 declares 3 tasks but lists 2"
    );
    assert_eq!(
        bad("3:0:0:1:-1:8:7:1:2"),
        "b.dim:3: a wait (type 2) for a receive from task 1 with tag 7, but no immediate receive (type 1) of it is pending"
    );
    assert_eq!(
        bad("2:0:0:1:-1:8:-3:1:0\n2:0:0:1:-1:8:7:2:0"),
        "b.dim:4: field 8 (comm): messages on communicator 2 beside negative tags on communicator 1 (line 3): \
             vesper gives the (communicator, tag) pairs of communicators but the first tags of their own from -1 \
             down, which negative tags would meet; renumber the tags from 0"
    );
    assert_eq!(
        bad("2:0:0:1:-1:8:7:1:0\n2:0:0:1:-1:8:7:2:0\n2:0:0:1:-1:8:-3:1:0"),
        "b.dim:5: field 7 (tag): a negative tag (-3) on communicator 1 beside messages on other communicators: \
             vesper gives the (communicator, tag) pairs of communicators but the first tags of their own from -1 \
             down, which negative tags would meet; renumber the tags from 0"
    );
    // Negative tags match as any tag does (as in Dimemas), above those vesper gives
    // the messages of decomposed collectives.
    let negative = "2:0:0:1:-1:8:-7:1:0\n3:1:0:0:-1:8:-7:1:0\n10:0:0:0:1:0:0:0:0\n10:1:0:0:1:0:0:0:0";
    assert!(parse(&format!("#DIMEMAS:\"b\":0:2(1,1),1\n1:0:0:0.5\n{negative}\n"), "b.dim").is_ok());
    assert_eq!(
        bad(&negative.replace("-7", "-2147483648")),
        "b.dim:3: field 7 (tag): tag -2147483648 is among those vesper gives the messages of the trace's 1 \
             collective call(s), -2147483648 to -2147483648; expected a tag above -2147483648"
    );
    let header = |text: &str| parse(text, "h.dim").expect_err("refused").to_string();
    assert_eq!(header(""), "h.dim:0: an empty file; expected a #DIMEMAS header");
    assert!(header("hello\n").starts_with("h.dim:1: expected a header #DIMEMAS:"));
    assert_eq!(
        header("#DIMEMAS:\"t\":0:2(1,0),1\n"),
        "h.dim:1: task 1 has 0 threads; expected 1 or more"
    );
    assert_eq!(
        header("#DIMEMAS:\"t\":0:3(1,1),1\n"),
        "h.dim:1: the header lists 2 thread counts for 3 tasks"
    );
    // Refused before a thread's state is allocated (a billion threads aborted).
    for counts in ["1(1000000000)", "2(4294967295,1)", "2(1048576,1)"] {
        let refused = header(&format!("#DIMEMAS:\"t\":0:{counts},0\n1:0:0:0.1\n"));
        assert!(
            refused.contains("more than 1048576 threads in all"),
            "{counts}: {refused}"
        );
    }
    assert_eq!(
        read(Path::new("/nonexistent/x.dim")).expect_err("missing").to_string(),
        "/nonexistent/x.dim:0: cannot read it: No such file or directory (os error 2)"
    );
}

#[test]
fn a_workload_that_cannot_be_written_says_why() {
    let unmatched = Workload {
        name: "u".into(),
        tasks: vec![vec![Op::Recv { from: 1, tag: 0 }], vec![]],
    };
    assert_eq!(
        write(&unmatched, &mut Vec::new()).expect_err("unmatched").to_string(),
        "1 message(s) from task 1 to task 0 with tag 0 have no matching send"
    );
    /// A writer whose disk is full.
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    assert_eq!(
        write(&Workload::ping_pong(1, 1), &mut Full)
            .expect_err("full")
            .to_string(),
        "cannot write the trace: disk full"
    );
}
