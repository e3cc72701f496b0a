//! `vesper run` with Dimemas inputs it cannot use: values the replay cannot hold,
//! files that are not regular, files and lines over their limits. Each is refused with
//! an error naming the file (its line and field, or the flag), never clamped and never
//! waited on.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The example trace: two tasks, a ping-pong.
fn pingpong() -> String {
    format!("{}/../examples/pingpong.dim", env!("CARGO_MANIFEST_DIR"))
}

/// A folder of this test process's own, made empty.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vesper-replay-inputs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a folder");
    dir
}

fn text(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// `vesper ARGS`, which must end within a minute (a reader that waits on a FIFO would not).
fn vesper(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vesper runs");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("waited for").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("vesper {args:?} did not end within a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("its output")
}

/// `vesper ARGS` fails, saying `expected` on standard error.
#[track_caller]
fn assert_refuses(args: &[&str], expected: &str) {
    let out = vesper(args);
    assert!(!out.status.success(), "{args:?} accepted");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
}

/// A configuration of the example's machine whose "multi node information" record, on
/// line 3, takes `cpu_ratio`, `intra_latency_s` and `intra_bw_mbps`.
fn config(dir: &Path, cpu_ratio: &str, intra_latency_s: &str, intra_bw_mbps: &str) -> PathBuf {
    let path = dir.join(format!("{cpu_ratio}-{intra_latency_s}-{intra_bw_mbps}.cfg"));
    let text = format!(
        "#DIMEMAS_CONFIGURATION\n\
         \"environment information\" {{\"\", 0, \"\", 1, 250.0, 0, 1}};;\n\
         \"multi node information\" {{0, 1, \"\", 2, {cpu_ratio}, {intra_latency_s}, {intra_bw_mbps}, 0, 1, 1, \
         0.0, 1, 1, 0.0}};;\n\
         \"predefined mapping information\" {{\"FILL_NODES\"}};;\n"
    );
    std::fs::write(&path, text).expect("written");
    path
}

#[test]
fn configuration_values_the_replay_cannot_hold_name_file_line_and_field() {
    let dir = scratch("values");
    let trace = pingpong();
    // The reproducer: predicted as 18,446,744 s before.
    let cfg = config(&dir, "2.0", "1e300", "1000.0");
    assert_refuses(
        &["run", &trace, "--config", text(&cfg)],
        &format!(
            "Error: {}:3: \"multi node information\": field 6 (intra_latency_s): intra-node latency 1e300 s: more \
             than vesper's clock counts (2^64 ps, about 18446744 s)",
            cfg.display()
        ),
    );
    let cfg = config(&dir, "2.0", "0.000001", "1e300");
    assert_refuses(
        &["run", &trace, "--config", text(&cfg)],
        &format!(
            "Error: {}:3: \"multi node information\": field 7 (intra_bw_MBps): intra-node bandwidth 1e300 MBps: more \
             digits than vesper holds",
            cfg.display()
        ),
    );
    // The same machine with sound values replays.
    let cfg = config(&dir, "2.0", "0.000001", "1000.0");
    let out = vesper(&["run", &trace, "--config", text(&cfg), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // CPUs so slow that a burst passes the clock: the replay says so, naming the task.
    let cfg = config(&dir, "1e-20", "0.000001", "1000.0");
    assert_refuses(
        &["run", &trace, "--config", text(&cfg)],
        "would end past what vesper's clock counts (2^64 ps, about 18446744 s)",
    );
    std::fs::remove_dir_all(&dir).expect("cleaned");
}

#[test]
fn configuration_values_that_mean_nothing_are_refused() {
    let dir = scratch("nothing");
    let trace = pingpong();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("written");
        path
    };
    // Only its header: no machine.
    let cfg = write("header.cfg", "#DIMEMAS_CONFIGURATION\n");
    assert_refuses(
        &["run", &trace, "--config", text(&cfg), "--network", "crossbar"],
        &format!(
            "Error: {}:1: no \"environment information\" record: a configuration declares its machine there",
            cfg.display()
        ),
    );
    // A machine of 10^9 nodes, on a crossbar (whose hosts are not the machine's nodes).
    let machine = std::fs::read_to_string(config(&dir, "2.0", "0.000001", "1000.0")).expect("read");
    let cfg = write(
        "huge.cfg",
        &machine.replace("{\"\", 0, \"\", 1, 250.0", "{\"\", 0, \"\", 1000000000, 250.0"),
    );
    assert_refuses(
        &["run", &trace, "--config", text(&cfg), "--network", "crossbar"],
        &format!(
            "Error: {}:2: \"environment information\": field 4 (n_nodes): 1000000000 nodes: vesper models at most \
             2^25 = 33,554,432 (the most hosts its networks have)",
            cfg.display()
        ),
    );
    // A fine-tuning file that tunes nothing: junk, or a file of the system's.
    write("junk.txt", "hello\nworld\n");
    for (tuning, shown, line, first) in [
        ("junk.txt", text(&dir.join("junk.txt")).to_string(), 1, "hello"),
        ("/proc/self/status", "/proc/self/status".to_string(), 1, "Name:"),
    ] {
        if !Path::new(&shown).exists() {
            continue;
        }
        let record = format!("\"configuration files\" {{\"\", \"\", \"{tuning}\", \"\"}};;\n");
        let cfg = write("tuned.cfg", &format!("{machine}{record}"));
        assert_refuses(
            &["run", &trace, "--config", text(&cfg), "--network", "crossbar"],
            &format!("Error: {shown}:{line}: '{first}"),
        );
        assert_refuses(
            &["run", &trace, "--config", text(&cfg), "--network", "crossbar"],
            &format!(
                "nor is any line after it: the file tunes nothing (Dimemas skips such lines, and would read it with \
                 no effect); name the file that holds the tuning, or \"\" for none (the communications fine tuning \
                 file that {}:5 names, \"configuration files\" field 3)",
                cfg.display()
            ),
        );
    }
    std::fs::remove_dir_all(&dir).expect("cleaned");
}

#[test]
fn trace_values_that_mean_nothing_are_refused() {
    let dir = scratch("trace");
    let example = std::fs::read_to_string(pingpong()).expect("read");
    let trace = |name: &str, from: &str, to: &str| {
        assert!(example.contains(from), "{from}");
        let path = dir.join(name);
        std::fs::write(&path, example.replace(from, to)).expect("written");
        path
    };
    let send = "2:0:0:1:-1:1024:7:1:0";
    for (name, from, to, expected) in [
        (
            "thread.dim",
            send,
            "2:0:0:1:3:1024:7:1:0",
            ":4: field 5 (dst_thread): thread 3 of task 1 does not exist (the header declares 1); expected 0, or -1 \
             for any thread",
        ),
        (
            "negative.dim",
            "s:1:153",
            "s:1:-153",
            ":13: the offsets table's line for task 1: thread 0's offset '-153' is before the file's start",
        ),
        (
            "huge.dim",
            "s:1:153",
            "s:1:99999999999999999999",
            ":13: the offsets table's line for task 1: thread 0's offset '99999999999999999999' is before the file's \
             start",
        ),
        (
            "past.dim",
            "s:1:153",
            "s:1:1530",
            ":13: the offsets table's line for task 1: thread 0's offset '1530' is past the end of the file",
        ),
    ] {
        let path = trace(name, from, to);
        assert_refuses(
            &["run", text(&path), "--network", "crossbar"],
            &format!("Error: {}{expected}", path.display()),
        );
    }
    // What Dimemas gives a meaning keeps it: a communicator no `d:` line defines, and
    // a negative tag, are where and what messages match on.
    for (name, tag_and_comm) in [("comm.dim", ":7:99:"), ("tag.dim", ":-7:1:")] {
        let path = dir.join(name);
        let text_of = example.replace(":1024:7:1:", &format!(":1024{tag_and_comm}"));
        std::fs::write(&path, text_of).expect("written");
        let out = vesper(&["run", text(&path), "--network", "crossbar"]);
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    }
    std::fs::remove_dir_all(&dir).expect("cleaned");
}

#[test]
fn a_huge_cpu_speed_ratio_makes_bursts_take_no_time() {
    // Dimemas takes any ratio of 0 or more: bursts take their time divided by it, so
    // 1e300 leaves them nothing, as 0 does.
    let dir = scratch("ratio");
    let json = |ratio: &str| {
        let cfg = config(&dir, ratio, "0.000001", "1000.0");
        let out = vesper(&[
            "run",
            &pingpong(),
            "--config",
            text(&cfg),
            "--network",
            "crossbar",
            "--json",
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("JSON")
    };
    let (huge, none, fast) = (json("1e300"), json("0"), json("2.0"));
    let computed = |json: &serde_json::Value| -> Vec<f64> {
        let rows = json["tasks"].as_array().expect("rows");
        rows.iter().map(|r| r["compute_ns"].as_f64().expect("a time")).collect()
    };
    assert_eq!(computed(&huge), [0.0, 0.0]);
    assert_eq!(computed(&fast), [900.0, 1000.0]);
    assert_eq!(huge["predicted_ns"], none["predicted_ns"]);
    std::fs::remove_dir_all(&dir).expect("cleaned");
}

#[test]
fn replay_flags_past_the_clock_name_the_flag() {
    assert_refuses(
        &["run", &pingpong(), "--imbalance-ns", "18446744073709552"],
        "Error: --imbalance-ns 18446744073709552: more than vesper's clock counts",
    );
    assert_refuses(
        &["run", &pingpong(), "--cpu-ratio", "1e-20", "--tasks-per-node", "2"],
        "would end past what vesper's clock counts (2^64 ps, about 18446744 s)",
    );
}

#[cfg(unix)]
#[test]
fn special_files_are_refused_by_name_without_waiting() {
    let dir = scratch("special");
    let fifo = dir.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let cfg = config(&dir, "2.0", "0.000001", "1000.0");
    let trace = pingpong();
    let kinds = [
        ("/dev/zero", "a character device"),
        (text(&fifo), "a FIFO (named pipe)"),
        (text(&dir), "a directory"),
    ];
    for (file, kind) in kinds {
        let refused =
            format!("Error: {file}:0: it is {kind}, not a regular file; inputs are read from regular files only");
        assert_refuses(&["run", &trace, "--config", file], &refused);
        // Streamed, and read whole (to be saved again).
        assert_refuses(&["run", file, "--config", text(&cfg)], &refused);
        let saved = dir.join("saved.dim");
        assert_refuses(&["run", file, "--save-trace", text(&saved)], &refused);
    }
    std::fs::remove_dir_all(&dir).expect("cleaned");
}

#[test]
fn files_and_lines_over_their_limits_are_refused() {
    let dir = scratch("limits");
    // Sparse: no disk taken, and nothing is read of a file over its limit.
    let sparse = |name: &str, size: u64| {
        let path = dir.join(name);
        std::fs::File::create(&path)
            .and_then(|f| f.set_len(size))
            .expect("a sparse file");
        path
    };
    let cfg = sparse("large.cfg", (16 << 20) + 1);
    assert_refuses(
        &["run", &pingpong(), "--config", text(&cfg)],
        &format!(
            "Error: {}:0: it holds 16777217 bytes, more than the 16777216 bytes (16 MiB) such a file may hold",
            cfg.display()
        ),
    );
    // A gibibyte of zeros: streamed, its first line is too long; read whole, it is too large.
    let trace = sparse("large.dim", (1 << 30) + 1);
    assert_refuses(
        &["run", text(&trace)],
        &format!(
            "Error: {}:1: the line is longer than 16777216 bytes, the longest line a .dim trace may hold",
            trace.display()
        ),
    );
    let saved = dir.join("saved.dim");
    assert_refuses(
        &["run", text(&trace), "--save-trace", text(&saved)],
        &format!(
            "Error: {}:0: it holds 1073741825 bytes, more than the 1073741824 bytes (1 GiB) such a file may hold; read \
             whole",
            trace.display()
        ),
    );
    std::fs::remove_dir_all(&dir).expect("cleaned");
}
