//! Dimemas's model where neither conformance suite reaches: analytic collectives that
//! meet point-to-point messages on a machine of limited buses. The expected times were
//! derived by hand from Dimemas 5.5.0's sources (`communic.c`: `global_op_get_all_buses`,
//! `start_global_op`, `free_global_communication_resources`, `close_global_communication`),
//! not printed by Dimemas: a collective takes every bus of the machine (the free ones at
//! once, then each one a message frees once it is at the head of the queue), runs once
//! it holds them, frees them when it ends (the waiters at the head go first), and its
//! members then go on node by node.
//!
//! Each case is replayed by `vesper run TRACE --config CFG --network ideal`, served and
//! `--no-server`. 1 MiB at 1000 MBps (2^20 bytes/s) takes 1 ms exactly; startups are
//! 1 µs between nodes; a barrier over four nodes takes 2 µs (CTE: a startup in and out).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A `.dim` trace of four single-threaded tasks, each with its records (without the
/// task and thread fields: `2:1:-1:1048576:1:1:0` is written `2:T:0:1:-1:...`).
fn trace(name: &str, tasks: &[&[&str]]) -> String {
    let mut text = format!(
        "#DIMEMAS:\"{name}\":0:{}({}),1\nd:1:1:{}:{}\n",
        tasks.len(),
        vec!["1"; tasks.len()].join(","),
        tasks.len(),
        (0..tasks.len()).map(|t| t.to_string()).collect::<Vec<_>>().join(":")
    );
    for (t, records) in tasks.iter().enumerate() {
        for record in records.iter() {
            let (op, fields) = record.split_once(':').expect("op:fields");
            text.push_str(&format!("{op}:{t}:0:{fields}\n"));
        }
    }
    text
}

/// A configuration of `nodes` nodes of `cpus` processors, `buses` network buses, one
/// input and one output link per node and per task, `tasks_per_node` tasks a node.
fn config(nodes: u32, cpus: u32, buses: u32, intra: &str, tasks_per_node: u32) -> String {
    format!(
        "#DIMEMAS_CONFIGURATION\n\
         \"wide area network information\" {{\"\", 1, 0, 4, 0.0, 0.0, 1}};;\n\
         \"environment information\" {{\"\", 0, \"\", {nodes}, 1000.0, {buses}, 1}};;\n\
         \"multi node information\" {{0, {nodes}, \"\", {cpus}, 1.0, {intra}, 1, 1, 1e-06, 1, 1, 0.0}};;\n\
         \"predefined mapping information\" {{\"{tasks_per_node} TASKS_PER_NODE\"}};;\n"
    )
}

/// vesper's prediction \[ns\] for `trace` under `config`, served or not.
fn predicted_ns(dir: &Path, name: &str, trace: &str, config: &str, served: bool) -> f64 {
    let (dim, cfg) = (dir.join(format!("{name}.dim")), dir.join(format!("{name}.cfg")));
    std::fs::write(&dim, trace).expect("trace written");
    std::fs::write(&cfg, config).expect("configuration written");
    let mut command = Command::new(env!("CARGO_BIN_EXE_vesper"));
    command.arg("run").arg(&dim).arg("--config").arg(&cfg).args([
        "--network",
        "ideal",
        "--json",
        "--client-spin-us",
        "0",
    ]);
    if !served {
        command.arg("--no-server");
    }
    let out = command.output().expect("vesper runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name}: {stderr}");
    assert!(!stderr.contains("warning"), "{name}: {stderr}");
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON result");
    result["predicted_ns"].as_f64().expect("predicted_ns")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vesper-dimemas-model-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// Runs each (name, trace, buses, expected ns) on four nodes of one task.
fn check(cases: &[(&str, &[&[&str]], u32, f64)]) {
    let dir = scratch(cases[0].0);
    for &(name, tasks, buses, expected) in cases {
        let trace = trace(name, tasks);
        let config = config(4, 1, buses, "0.0, 0.0, 0", 1);
        for served in [true, false] {
            let got = predicted_ns(&dir, &format!("{name}-{buses}"), &trace, &config, served);
            assert_eq!(got, expected, "{name} with {buses} bus(es), served: {served}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A barrier, its root saying so.
const ROOT_BARRIER: &str = "10:0:1:1:0:0:0";
const BARRIER: &str = "10:0:1:0:0:0:0";

#[test]
fn a_collective_waits_for_the_bus_a_long_message_holds_and_runs_from_then() {
    // Task 0 sends 1 MiB to task 1 (1 µs startup, then 1 ms on the one bus), then
    // enters a barrier; tasks 2 and 3 arrive last at 10 µs. The barrier waits for the
    // bus until 1,001 µs and ends at 1,003 µs; task 1's receive then pays its startup.
    let tasks: &[&[&str]] = &[
        &["1:0.000000000", "2:1:-1:1048576:1:1:0", ROOT_BARRIER],
        &["1:0.000000000", BARRIER, "3:0:-1:1048576:1:1:0"],
        &["1:0.000010000", BARRIER],
        &["1:0.000010000", BARRIER],
    ];
    // With unlimited buses the barrier runs at 10 µs, and task 1 waits for the data.
    check(&[("ex1", tasks, 1, 1_004_000.0), ("ex1", tasks, 0, 1_001_000.0)]);
}

#[test]
fn a_message_woken_while_a_collective_gathers_the_buses_queues_behind_it() {
    // Task 0 sends A to task 1 and B to task 2, 1 MiB each: B waits for node 0's output
    // link. When A lands, B gets its links but finds the bus counted and queues behind
    // the barrier, which takes the bus (with two buses it took the free one at once):
    // B leaves when the barrier ends, at 1,003 µs.
    let tasks: &[&[&str]] = &[
        &[
            "1:0.000000000",
            "2:1:-1:1048576:1:1:0",
            "2:2:-1:1048576:2:1:0",
            ROOT_BARRIER,
        ],
        &["1:0.000000000", BARRIER, "3:0:-1:1048576:1:1:0"],
        &["1:0.000000000", BARRIER, "3:0:-1:1048576:2:1:0"],
        &["1:0.000010000", BARRIER],
    ];
    check(&[
        ("ex2", tasks, 1, 2_003_000.0),
        ("ex2", tasks, 2, 2_003_000.0),
        ("ex2", tasks, 0, 2_001_000.0),
    ]);
}

#[test]
fn a_collective_at_the_head_of_the_queue_takes_each_bus_a_message_frees() {
    // Two buses, both busy (A: 1 MiB from task 0; C: 512 KiB from task 2) when the
    // barrier's last member arrives at 20 µs. C lands at 501 µs: its bus goes to the
    // barrier, not to D (task 2's next message, queued behind it); A's bus at 1,001 µs
    // completes it; D leaves when it ends, at 1,003 µs, and lands at 1,503 µs.
    let tasks: &[&[&str]] = &[
        &["1:0.000000000", "2:1:-1:1048576:1:1:0", ROOT_BARRIER],
        &["1:0.000020000", BARRIER, "3:0:-1:1048576:1:1:0"],
        &["1:0.000000000", "2:3:-1:524288:3:1:0", "2:3:-1:524288:4:1:0", BARRIER],
        &["1:0.000000000", BARRIER, "3:2:-1:524288:3:1:0", "3:2:-1:524288:4:1:0"],
    ];
    check(&[("ex3", tasks, 2, 1_503_000.0), ("ex3", tasks, 0, 1_001_000.0)]);
}

#[test]
fn the_members_of_a_collective_go_on_node_by_node() {
    // Arrivals: task 3 (at 0), 0 (5 µs), 1 and 2 (10 µs); the barrier ends at 12 µs.
    // Dimemas resumes the members node by node: task 0's message X to task 1 asks for
    // node 1's input link before task 3's Y does, so X lands at 1,013 µs and Y at 2,013.
    // (In the order they arrived, Y would go first, and the replay would end 1 µs later.)
    let tasks: &[&[&str]] = &[
        &["1:0.000005000", BARRIER, "2:1:-1:1048576:1:1:0"],
        &["1:0.000010000", BARRIER, "3:0:-1:1048576:1:1:0", "3:3:-1:1048576:2:1:0"],
        &["1:0.000010000", BARRIER],
        &["1:0.000000000", BARRIER, "2:1:-1:1048576:2:1:0"],
    ];
    check(&[("ex5", tasks, 0, 2_013_000.0), ("ex5", tasks, 1, 2_013_000.0)]);
}

#[test]
fn a_collective_takes_no_memory_bus_nor_link() {
    // Two nodes of two tasks: task 0 copies 1 MiB to task 1 within node 0 (one memory
    // bus, 100 ns startup) while the barrier runs from 10 µs; it does not wait for the
    // copy, which lands at 1,000.1 µs.
    let tasks: &[&[&str]] = &[
        &["1:0.000000000", "2:1:-1:1048576:1:1:0", ROOT_BARRIER],
        &["1:0.000000000", BARRIER, "3:0:-1:1048576:1:1:0"],
        &["1:0.000010000", BARRIER],
        &["1:0.000010000", BARRIER],
    ];
    let dir = scratch("ex4");
    let config = config(2, 2, 1, "1e-07, 1000.0, 1", 2);
    for served in [true, false] {
        let got = predicted_ns(&dir, "ex4", &trace("ex4", tasks), &config, served);
        assert_eq!(got, 1_000_100.0, "served: {served}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
