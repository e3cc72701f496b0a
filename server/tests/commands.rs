//! The `vesper` commands run in this process, as the binary runs them: the command line
//! read by `cli::parse`, the command run by `cli::execute` (what it prints, its notes,
//! its error as the binary prints it), or `serve`'s checks before it listens
//! (`cli::serve::prepare`). What needs a process of its own (signals, exit statuses,
//! servers on sockets, the server's log, timeouts, a closed standard output) is in
//! tests/cli.rs.

use vesper_server::cli::{self, Verb};

mod common;

/// What `vesper ARGS` did in this process.
#[derive(Debug)]
struct Output {
    success: bool,
    /// what it printed on standard output
    stdout: String,
    /// its notes, then its error as the binary prints it
    stderr: String,
}

/// `vesper ARGS` (not `serve` nor `collect`, which run servers) in this process.
fn vesper(args: &[&str]) -> Output {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let result = match cli::parse(std::iter::once("vesper").chain(args.iter().copied())) {
        Err(e) => Err(e.to_string()),
        Ok(cli::Cli {
            verb: Verb::Serve(_) | Verb::Collect(_),
        }) => panic!("{args:?}: a server runs in a process of its own (tests/cli.rs)"),
        Ok(cli) => cli::execute(cli.verb, &mut stdout, &mut stderr).map_err(|e| error_text(&e)),
    };
    let mut stderr = String::from_utf8(stderr).expect("UTF-8 notes");
    if let Err(error) = &result {
        stderr.push_str(error);
    }
    Output {
        success: result.is_ok(),
        stdout: String::from_utf8(stdout).expect("UTF-8 output"),
        stderr,
    }
}

/// `e` as the binary prints it, without the backtrace anyhow adds when RUST_BACKTRACE
/// asks for one: in this process it would name the tests' own functions.
fn error_text(e: &anyhow::Error) -> String {
    let text = cli::error_text(e);
    match text.split_once("\n\nStack backtrace:\n") {
        Some((error, _)) => error.to_string(),
        None => text,
    }
}

/// `vesper serve ARGS` is refused, saying `expected`, before it listens (what it checks
/// as it starts, the address and the network the model builds, is tested in
/// tests/cli.rs).
#[track_caller]
fn assert_serve_refuses(args: &[&str], expected: &str) {
    let line = ["vesper", "serve"].into_iter().chain(args.iter().copied());
    let refusal = match cli::parse(line) {
        Err(e) => e.to_string(),
        Ok(cli::Cli {
            verb: Verb::Serve(serve),
        }) => match cli::serve::prepare(&serve) {
            Ok(_) => panic!("{args:?} accepted"),
            Err(e) => error_text(&e),
        },
        Ok(other) => unreachable!("{other:?}"),
    };
    assert!(refusal.contains(expected), "{args:?}: {refusal}");
}

/// `vesper ARGS` fails, saying `expected`.
#[track_caller]
fn assert_refuses(args: &[&str], expected: &str) {
    let out = vesper(args);
    assert!(!out.success, "{args:?} accepted");
    assert!(out.stderr.contains(expected), "{args:?}: {}", out.stderr);
}

/// Writes `text` to a file of this name (made unique per process) in the temporary
/// directory; returns its path.
fn temp_file(name: &str, text: &str) -> String {
    let path = std::env::temp_dir().join(format!("vesper-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("written");
    path.to_str().expect("a UTF-8 path").to_string()
}

/// `vesper ARGS`, which must succeed, and the JSON it prints.
fn vesper_json(args: &[&str]) -> serde_json::Value {
    let out = vesper(args);
    assert!(out.success, "{args:?}: {}", out.stderr);
    serde_json::from_str(&out.stdout).expect("JSON")
}

/// `vesper traffic ARGS`: its standard output, or its error.
fn traffic(args: &[&str]) -> Result<String, String> {
    let out = vesper(&[&["traffic"], args].concat());
    match out.success {
        true => Ok(out.stdout),
        false => Err(out.stderr),
    }
}

/// `vesper bench model ARGS --json`: its points.
fn bench_model(args: &[&str]) -> Vec<serde_json::Value> {
    let out = vesper(&[&["bench", "model", "--duration-us", "300", "--json"], args].concat());
    assert!(out.success, "{args:?}: {}", out.stderr);
    serde_json::from_str(&out.stdout).expect("JSON points")
}

#[test]
fn outputs_that_cannot_be_written_and_values_out_of_range_are_refused_before_anything_runs() {
    assert_serve_refuses(
        &["--stats", "/nonexistent-vesper-dir/stats.json"],
        "--stats /nonexistent-vesper-dir/stats.json: cannot write it",
    );
    assert_serve_refuses(
        &["--stats", "/nonexistent-vesper-dir/stats-{run}.json"],
        "--stats /nonexistent-vesper-dir/stats-1.json: cannot write it",
    );
    assert_serve_refuses(
        &["--keep-serving", "--trace", "net.prv"],
        "--trace net.prv with --keep-serving: every run writes its own trace; put {run} in the name",
    );
    // `vesper run` too: its output folder and its network trace, before the replay.
    let file = temp_file("not-a-folder", "");
    let inside = format!("{file}/out");
    assert_refuses(
        &["run", "--output", &inside],
        &format!("--output {inside}: cannot write there"),
    );
    assert_refuses(
        &["run", "--trace", "/nonexistent-vesper-dir/net.prv"],
        "/nonexistent-vesper-dir/net.prv",
    );
    // Values the model cannot hold are refused, not clamped.
    assert_refuses(
        &["run", "--workload", "ring", "--compute-ns", "98446744073709551"],
        "--compute-ns 98446744073709551: more than vesper's clock counts",
    );
    assert_refuses(
        &["bench", "model", "--duration-us", "98446744073709551"],
        "--duration-us 98446744073709551: more than vesper's clock counts",
    );
    assert_refuses(
        &["traffic", "--load", "0.1", "--threads", "0"],
        "--threads 0: at least 1",
    );
    for (args, expected) in [
        (vec!["--max-line", "10"], "--max-line 10: at least 64 bytes"),
        (vec!["--max-connections", "0"], "--max-connections 0: at least 1"),
        (vec!["--max-batch", "0"], "--max-batch 0: at least 1"),
        (vec!["--clients", "0"], "--clients 0: a run needs at least one client"),
        (vec!["--client-timeout", "0"], "expected a positive number of seconds"),
        (vec!["--silent-timeout=-1"], "expected a positive number of seconds"),
        // A wait without end would keep the server from ever stopping.
        (
            vec!["--trace-stream-wait-ms", "18446744073709551615"],
            "--trace-stream-wait-ms 18446744073709551615: at most 3600000 (an hour)",
        ),
        (
            vec!["--keep-serving", "--trace-stream-connect-ms", "3600001"],
            "--trace-stream-connect-ms 3600001: at most 3600000 (an hour)",
        ),
    ] {
        assert_serve_refuses(&args, expected);
    }
}

#[test]
fn the_served_network_trace_takes_a_date_in_paraver_form() {
    assert_serve_refuses(
        &["--trace-date", "22/11/26"],
        "expected DD/MM/YYYY at HH:MM, e.g. \"22/11/2026 at 09:30\", found \"22/11/26\"",
    );
    // Well shaped, but no day or time: it would go into the trace's header as given.
    for (date, expected) in [
        ("99/99/9999 at 99:99", "month 99: expected 01 to 12"),
        ("31/04/2026 at 10:00", "day 31: month 04 of 2026 has days 01 to 30"),
        ("29/02/2026 at 10:00", "day 29: month 02 of 2026 has days 01 to 28"),
        ("00/01/2026 at 10:00", "day 00: month 01 of 2026 has days 01 to 31"),
        ("01/01/2026 at 24:00", "24:00: expected a time of day, 00:00 to 23:59"),
        ("01/01/2026 at 12:60", "12:60: expected a time of day"),
    ] {
        assert_serve_refuses(&["--trace-date", date], expected);
        assert_refuses(&["run", "--trace-date", date], expected);
    }
    for date in ["29/02/2024 at 23:59", "31/12/1999 at 00:00"] {
        assert!(cli::paraver_date(date).is_ok(), "{date}");
    }
}

#[test]
fn bad_options_are_refused_with_a_clear_message() {
    for (args, expected) in [
        (
            vec!["--link-bandwidth", "0"],
            "--link-bandwidth 0: expected a positive rate in MB/s",
        ),
        (vec!["--hosts", "0"], "--hosts 0: a network needs at least one host"),
    ] {
        assert_serve_refuses(&args, expected);
    }
    assert_refuses(
        &[
            "run",
            "--preset",
            "kary-ntree",
            "--switch",
            "wormhole",
            "--initial-pointer",
            "999",
        ],
        "initial_pointer: port 999 is beyond the largest switch's ports (0 to 7); give a port below 8, or \"random\"",
    );
    let pointer = |port: &str| {
        vesper(&[
            "topo",
            "--preset",
            "kary-ntree",
            "--switch",
            "wormhole",
            "--initial-pointer",
            port,
        ])
    };
    assert!(pointer("7").success && !pointer("7").stderr.contains("cannot be simulated"));
}

#[test]
fn network_choices_are_checked() {
    let dir = std::env::temp_dir().join(format!("vesper-cli-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("net.toml");
    std::fs::write(&file, "[network]\nkind = \"ideal\"\nbandwidth_mbps = -1\n").expect("write");
    let file = file.to_str().expect("utf-8 path").to_string();
    let tree = dir.join("tree.toml");
    std::fs::write(&tree, "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\n").expect("write");
    let tree = tree.to_str().expect("utf-8 path").to_string();
    for (args, expected) in [
        (
            vec!["--network", "ideal"],
            "--network ideal: --bandwidth: the ideal network needs a bandwidth",
        ),
        (
            vec!["--network", "ideal", "--bandwidth", "250", "--link-latency", "3"],
            "--link-latency 3: applies to kind = \"crossbar\", \"xgft\", \"kary-ntree\", \"torus\", \"mesh\", \"hypercube\", \"dragonfly\", \"multi-rail\" or \"map\", not \"ideal\"",
        ),
        (
            vec!["--bandwidth", "250"],
            "--bandwidth 250: applies to kind = \"ideal\"",
        ),
        (
            vec!["--network", &tree, "--hosts", "4"],
            "--hosts 4: this tree has 16 hosts (the product of its m), not 4; leave hosts out",
        ),
        (
            vec!["--network", &tree, "--routing", "s-mod-k", "--flit-bytes", "4"],
            "--flit-bytes 4: applies to switch = \"wormhole\" only",
        ),
        (
            vec!["--network", &file],
            "network.bandwidth_mbps: expected a rate of 0 or more",
        ),
        (
            vec!["--preset", "moebius"],
            "--preset moebius: no such preset; the presets are fat-tree",
        ),
        (
            vec!["--preset", "fat-tree", "--network", "ideal"],
            "cannot be used with",
        ),
        (vec!["--network", "no-such-file.toml"], "no-such-file.toml"),
    ] {
        assert_serve_refuses(&args, expected);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_flag_that_does_not_fit_the_default_network_names_that_network() {
    for (args, expected) in [
        (
            vec!["run", "--hosts", "4"],
            "--hosts 4: this tree has 256 hosts (the product of its m), not 4; leave hosts out (the network is \
             preset fat-tree, the default here; name another with --network or --preset)",
        ),
        (
            vec!["traffic", "--hosts", "4", "--load", "0.1"],
            "(the network is preset kary-ntree, the default here;",
        ),
    ] {
        assert_refuses(&args, expected);
    }
    // A network the user named is not called a default.
    let out = vesper(&["run", "--preset", "fat-tree", "--hosts", "4"]);
    let stderr = &out.stderr;
    assert!(
        stderr.contains("not 4; leave hosts out") && !stderr.contains("default"),
        "{stderr}"
    );
}

#[test]
fn an_ideal_networks_field_from_a_configuration_is_named_by_the_configuration() {
    let trace = format!("{}/../examples/pingpong.dim", env!("CARGO_MANIFEST_DIR"));
    let config = |bw_mbps: &str, inter_latency_s: &str| {
        temp_file(
            &format!("calibration-{bw_mbps}-{inter_latency_s}.cfg"),
            &format!(
                "#DIMEMAS_CONFIGURATION\n\
                 \"environment information\" {{\"\", 0, \"\", 2, {bw_mbps}, 0, 1}};;\n\
                 \"multi node information\" {{0, 2, \"\", 1, 1.0, 0.0, 0.0, 0, 1, 1, {inter_latency_s}, 1, 1, 0.0}};;\n"
            ),
        )
    };
    let slow = config("1e-12", "0.000001");
    assert_refuses(
        &["run", &trace, "--config", &slow, "--network", "ideal"],
        &format!("Error: {slow}: \"environment information\" bw_MBps 1e-12: 1e-12 MBps makes the largest message"),
    );
    let late = config("1000.0", "1e7");
    assert_refuses(
        &["run", &trace, "--config", &late, "--network", "ideal"],
        // The replay pays it before each send, as Dimemas does (the ideal network's own
        // latency stays 0).
        &format!(
            "Error: {late}:3: \"multi node information\" inter_latency_s 10000000: 1e16 ns is more than the 4.612e6 \
             s vesper allows a startup latency"
        ),
    );
    // Beyond the clock, the configuration's reader refuses it first, by line and field.
    let beyond = config("1000.0", "1e12");
    assert_refuses(
        &["run", &trace, "--config", &beyond, "--network", "ideal"],
        "(inter_latency_s): inter-node latency 1e12 s: more than vesper's clock counts",
    );
    // A flag given instead is named as the flag.
    let fine = config("1000.0", "0.000001");
    assert_refuses(
        &[
            "run",
            &trace,
            "--config",
            &fine,
            "--network",
            "ideal",
            "--latency",
            "1e21",
        ],
        "Error: --latency 1e21: 1e21 ns is more than",
    );
}

#[test]
fn a_network_the_model_refuses_is_named_by_its_file_or_flag() {
    let file = temp_file(
        "small-buffers.toml",
        "[network]\nkind = \"crossbar\"\nhosts = 4\nswitch = \"wormhole\"\nbuffer_bytes = 16\n",
    );
    let refused = "wormhole switches: buffer_bytes: 16 bytes cannot cover the round trip";
    // `run` with as many tasks as the network has hosts (`serve`: in tests/cli.rs, as
    // the model builds the network once the server listens).
    let command = &["run", "--tasks", "4"][..];
    assert_refuses(
        &[command, &["--network", &file]].concat(),
        &format!("Error: {file}: {refused}"),
    );
    let flags = [
        "--network",
        "crossbar",
        "--hosts",
        "4",
        "--switch",
        "wormhole",
        "--buffer-bytes",
        "16",
    ];
    assert_refuses(
        &[command, &flags].concat(),
        &format!("Error: --buffer-bytes 16: {refused}"),
    );
    // With a network trace too (the traced network is built on another path).
    let trace = std::env::temp_dir().join(format!("vesper-{}-refused.prv", std::process::id()));
    let trace = trace.to_str().expect("a UTF-8 path");
    assert_refuses(
        &["run", "--tasks", "4", "--network", &file, "--trace", trace],
        &format!("Error: {file}: {refused}"),
    );
    let _ = std::fs::remove_file(&file);
}

#[test]
fn run_replays_a_workload_against_an_in_process_server() {
    let out = vesper(&[
        "run",
        "--workload",
        "ping-pong",
        "--size",
        "1024",
        "--iterations",
        "2",
        "--network",
        "crossbar",
    ]);
    assert!(out.success, "{}", out.stderr);
    let stdout = &out.stdout;
    // Four crossings of 1024 + 16 bytes at 4 ns, 2 × 25 ns of cable, 100 ns of routing.
    assert!(
        stdout.contains("predicted execution time: 17.240 µs (4 messages)"),
        "{stdout}"
    );
    assert!(stdout.contains("server: 5 sync round trips"), "{stdout}");
    // No files unless asked for; the summary says how.
    assert!(
        stdout.contains("(--output DIR writes this as result.json, with the Paraver traces app.prv and network.prv;"),
        "{stdout}"
    );
    assert!(
        stdout.contains("compute µs communication µs     waiting µs         end µs"),
        "{stdout}"
    );
}

/// The `network: ` line `vesper run` prints for a one-message ping-pong on `network`.
fn network_line(network: &[&str]) -> String {
    let mut args = vec!["run", "--workload", "ping-pong", "--iterations", "1"];
    args.extend_from_slice(network);
    let out = vesper(&args);
    assert!(out.success, "{}", out.stderr);
    let stdout = out.stdout.clone();
    let line = stdout.lines().find(|l| l.starts_with("network: "));
    line.unwrap_or_else(|| panic!("no network line in {stdout}"))
        .to_string()
}

#[test]
fn the_network_line_speaks_the_flags_words() {
    let wormhole = |extra: &[&str]| {
        let mut args = vec!["--network", "crossbar", "--switch", "wormhole"];
        args.extend_from_slice(extra);
        network_line(&args)
    };
    let line = wormhole(&["--link-bandwidth", "333.333333333333"]);
    assert!(
        line.contains("round-robin (pointers random, seed 1) arbitration"),
        "{line}"
    );
    assert!(line.contains("links 333.333 MB/s"), "{line}");
    assert!(line.contains("(round-robin interleaving)"), "{line}");
    let line = wormhole(&["--arbitration", "oldest-first", "--interleave", "fifo"]);
    assert!(line.contains("oldest-first arbitration"), "{line}");
    assert!(line.contains("links 250 MB/s"), "{line}");
    assert!(line.contains("(fifo interleaving)"), "{line}");
    let line = wormhole(&["--initial-pointer", "3"]);
    assert!(line.contains("round-robin (pointers at port 3) arbitration"), "{line}");
    // No Rust debug text anywhere.
    assert!(!line.contains('{') && !line.contains("RoundRobin"), "{line}");
    let line = network_line(&[
        "--preset",
        "two-rail-fat-tree",
        "--rail-policy",
        "size-threshold",
        "--rail-threshold",
        "4096",
    ]);
    assert!(line.contains("2 rails (size-threshold (4096 B)); rail 0: "), "{line}");
}

#[test]
fn run_without_server_predicts_what_the_ideal_server_does() {
    let predicted = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--workload",
            "ring",
            "--tasks",
            "6",
            "--network",
            "ideal",
            "--bandwidth",
            "312.5",
            "--latency",
            "1500",
            "--json",
        ];
        args.extend_from_slice(extra);
        let json = vesper_json(&args);
        (
            json["predicted_ns"].as_f64().expect("a prediction"),
            json["tasks"].clone(),
        )
    };
    let served = predicted(&[]);
    assert_eq!(predicted(&["--no-server"]), served);
    assert!(served.0 > 0.0);
    // Rendezvous sends too: the local bus honours the eager limit (the odd tasks then
    // wait for their sends to land, and end later).
    let rendezvous = predicted(&["--eager-limit", "1"]);
    assert_eq!(predicted(&["--eager-limit", "1", "--no-server"]), rendezvous);
    assert_ne!(rendezvous.1, served.1);
    assert_refuses(&["run", "--no-server"], "--no-server replays over the local bus model");
    let out = vesper(&["run", "--tasks", "300"]);
    assert!(out.stderr.contains("needs 300 nodes; the network has 256"));
}

/// Seed 004 §5.2: a 32-task all-to-all of 32,679-byte messages (the default workload) on
/// the default network, a two-level fat tree of Myrinet-like wormhole switches.
/// Rendezvous sends are slower than eager ones; a random start imbalance under 10 µs
/// makes them much slower, because the protocol messages wait behind data segments. The
/// paper saw 4.3, 4.8 and 6.3 ms (+12 %, +46 %); vesper gives 4.09, 5.21 and 6.49 ms.
#[test]
fn rendezvous_and_start_imbalance_slow_the_all_to_all_as_in_seed_004() {
    let predicted = |extra: &[&str]| {
        let mut args = vec!["run", "--json"];
        args.extend_from_slice(extra);
        let json = vesper_json(&args);
        assert!(
            json["network"]
                .as_str()
                .is_some_and(|n| n.contains("wormhole") && n.contains("XGFT(2; 16,16; 1,16)")),
            "{json}"
        );
        json["predicted_ns"].as_f64().expect("a prediction") / 1e6
    };
    let eager = predicted(&[]);
    let rendezvous = predicted(&["--eager-limit", "32679"]);
    let imbalanced = predicted(&["--eager-limit", "32679", "--imbalance-ns", "10000"]);
    eprintln!("eager {eager:.2} ms, rendezvous {rendezvous:.2} ms, with imbalance {imbalanced:.2} ms");
    assert!((3.5..5.0).contains(&eager), "{eager} ms");
    assert!(rendezvous > eager * 1.05, "{rendezvous} vs {eager} ms");
    assert!(
        imbalanced > eager * 1.4 && imbalanced > rendezvous * 1.1,
        "{imbalanced} vs {rendezvous} ms"
    );
    // Eager sends hardly notice the imbalance.
    let eager_imbalanced = predicted(&["--imbalance-ns", "10000"]);
    assert!(eager_imbalanced < eager * 1.05, "{eager_imbalanced} vs {eager} ms");
}

#[test]
fn run_replays_the_seed_002_kernels_and_explains_bad_task_counts() {
    let json = vesper_json(&["run", "--workload", "mesh-3d", "--tasks", "27", "--json"]);
    // 3 dimensions × 9 rows × 2 links, both ways.
    assert_eq!(json["messages"], 108);
    // Four tasks per node: 6 of each node's 12 messages stay within it.
    let out = vesper(&["run", "--workload", "mesh-2d", "--tasks", "16", "--tasks-per-node", "4"]);
    assert!(out.success, "{}", out.stderr);
    let stdout = &out.stdout;
    assert!(stdout.contains("(48 messages, 24 within nodes)"), "{stdout}");
    assert_refuses(
        &["run", "--workload", "wavefront-2d"],
        "a 2-D virtual mesh needs a number of tasks that is a square (25 or 36, not 32)",
    );
}

#[test]
fn run_replays_a_dimemas_trace() {
    let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/pingpong.dim");
    let predicted = |extra: &[&str]| {
        let mut args = vec!["run", trace, "--network", "ideal", "--bandwidth", "1000", "--json"];
        args.extend_from_slice(extra);
        let out = vesper(&args);
        assert!(out.success, "{}", out.stderr);
        assert!(out.stderr.contains("1 collective calls decomposed"));
        let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
        json["predicted_ns"].as_f64().expect("a prediction")
    };
    // 1024 bytes at 1000 MBps take 976.5625 ns, rounded up to 976.563: task 0 sends at
    // 1500 ns, task 1 answers at 2476.563 ns, task 0 has the answer at 3453.126 ns and
    // computes 300 ns more.
    assert_eq!(predicted(&[]), 3753.126);
    assert_eq!(predicted(&["--no-server"]), 3753.126);
    // The all-reduce done flat instead: task 0 gets task 1's part, then sends the
    // result back. Task 0's own end does not move (its send is eager).
    assert_eq!(predicted(&["--collective", "allreduce=flat"]), 3753.126);
    let out = vesper(&["run", trace, "--collective", "alltoall=binomial"]);
    assert!(
        out.stderr
            .contains("--collective alltoall=binomial: binomial does not carry out AllToAll collectives"),
        "{}",
        out.stderr
    );
    // A synthetic workload saved as a trace replays the same.
    let saved = std::env::temp_dir().join(format!("vesper-cli-{}.dim", std::process::id()));
    let saved = saved.to_str().expect("a UTF-8 path");
    let json = |args: &[&str]| {
        let json = vesper_json(args);
        json["predicted_ns"].as_f64().expect("a prediction")
    };
    let synthetic = json(&[
        "run",
        "--workload",
        "butterfly",
        "--tasks",
        "12",
        "--json",
        "--save-trace",
        saved,
    ]);
    assert_eq!(json(&["run", saved, "--json"]), synthetic);
    // The trace is streamed (read as the replay goes) unless it is saved again, which
    // reads it whole: both replay alike, with a start imbalance and with routes chosen
    // for the trace's pattern.
    let again = format!("{saved}.again.dim");
    for extra in [&["--imbalance-ns", "3000"][..], &["--routing", "pattern-aware"]] {
        let streamed = json(&[&["run", saved, "--json"][..], extra].concat());
        let whole = json(&[&["run", saved, "--json", "--save-trace", &again][..], extra].concat());
        assert_eq!(streamed, whole, "{extra:?}");
        if extra[0] == "--imbalance-ns" {
            assert_ne!(streamed, synthetic);
        }
    }
    let _ = std::fs::remove_file(&again);
    let _ = std::fs::remove_file(saved);
    assert_refuses(&["run", "Cargo.toml"], "Cargo.toml:1: expected a header #DIMEMAS:");
}

#[test]
fn a_trace_message_larger_than_the_protocol_carries_is_refused_by_the_client() {
    // 3 GB: a C int cannot carry it, so the server path refuses it by name; the local
    // bus takes it.
    let trace = temp_file(
        "big.dim",
        "#DIMEMAS:\"big\":0:2(1,1),0\n2:0:0:1:-1:3000000000:7:1:0\n3:1:0:0:-1:3000000000:7:1:0\n",
    );
    assert_refuses(
        &["run", &trace, "--network", "ideal", "--bandwidth", "250"],
        "Error: a message of 3000000000 bytes from node 0 to node 1: the wire protocol carries at most \
         2147483647 bytes",
    );
    let local = [
        "run",
        &trace,
        "--network",
        "ideal",
        "--bandwidth",
        "250",
        "--no-server",
        "--json",
    ];
    assert!(vesper_json(&local)["predicted_ns"].as_f64().is_some_and(|t| t > 1e10));
    let _ = std::fs::remove_file(&trace);
}

#[test]
fn run_replays_a_trace_longer_than_seven_simulated_hours() {
    // Task 0 computes 30,000 s, then sends 1024 bytes to task 1: the replay's "until the
    // next completion" STOP must reach past any time the trace gets to.
    let trace = temp_file(
        "long.dim",
        "#DIMEMAS:\"long\":0:2(1,1),0\n1:0:0:30000.0\n2:0:0:1:-1:1024:7:1:0\n3:1:0:0:-1:1024:7:1:0\n",
    );
    let mut ends = Vec::new();
    for local in [&[][..], &["--no-server"]] {
        let args = [
            &["run", &trace, "--network", "ideal", "--bandwidth", "250", "--json"],
            local,
        ]
        .concat();
        ends.push(vesper_json(&args)["tasks"][1]["end_ns"].as_f64().expect("an end"));
    }
    // 30,000 s, then 1024 bytes at 250 MBps (2^20 bytes/s): 3906.25 ns (to a few ps:
    // the JSON's nanoseconds are a double).
    for end in ends {
        assert!((end - (30_000e9 + 3906.25)).abs() < 0.01, "{end}");
    }
}

#[test]
fn run_refuses_workload_flags_that_would_be_ignored() {
    let trace = format!("{}/../examples/pingpong.dim", env!("CARGO_MANIFEST_DIR"));
    for (args, expected) in [
        (
            &["--iterations", "3"][..],
            "Error: --iterations is for the ping-pong and ring workloads; the workload is all-to-all, the default; \
             name another with --workload",
        ),
        (
            &["--workload", "ring", "--messages", "5"][..],
            "Error: --messages is for the random workload; the workload is ring",
        ),
        (
            &["--workload", "ping-pong", "--tasks", "4"][..],
            "Error: --tasks is for every workload but the ping-pong; the workload is ping-pong",
        ),
        (
            &["--workload", "butterfly", "--compute-ns", "5"][..],
            "Error: --compute-ns is for the ring workload; the workload is butterfly",
        ),
        (
            &["--tasks", "0"][..],
            "Error: --tasks 0: a workload needs at least one task",
        ),
        (
            &[trace.as_str(), "--size", "5"][..],
            "is for synthetic workloads; the trace",
        ),
    ] {
        assert_refuses(&[&["run"][..], args].concat(), expected);
    }
    // Each flag where it applies.
    let ring = [
        "run",
        "--workload",
        "ring",
        "--tasks",
        "4",
        "--iterations",
        "1",
        "--compute-ns",
        "5",
        "--json",
    ];
    assert_eq!(vesper_json(&ring)["messages"], 4);
    let random = [
        "run",
        "--workload",
        "random",
        "--tasks",
        "4",
        "--messages",
        "8",
        "--wave",
        "4",
        "--json",
    ];
    assert_eq!(vesper_json(&random)["messages"], 8);
}

#[test]
fn run_lets_the_eager_limit_or_all_eager_override_a_traces_synchronous_bit() {
    // Task 0 sends 1000 bytes with the synchronous bit set (sync 1), then computes 1 µs;
    // task 1 computes 5 µs, then receives. 1000 bytes at 1000 MBps take 953.674316 ns,
    // rounded up to the picosecond: 953.675 ns.
    let trace = temp_file(
        "sync.dim",
        "#DIMEMAS:\"sync\":0:2(1,1),1\n2:0:0:1:-1:1000:0:1:1\n1:0:0:0.000001\n1:1:0:0.000005\n3:1:0:0:-1:1000:0:1:0\n",
    );
    let ends = |extra: &[&str]| {
        let mut served = None;
        for local in [&[][..], &["--no-server"]] {
            let mut args = vec!["run", &trace, "--network", "ideal", "--bandwidth", "1000", "--json"];
            args.extend_from_slice(extra);
            args.extend_from_slice(local);
            let json = vesper_json(&args);
            let rows = json["tasks"].as_array().expect("rows");
            let ps = |r: &serde_json::Value, k: &str| (r[k].as_f64().expect("a time") * 1e3).round() as u64;
            for r in rows {
                let split = ps(r, "compute_ns") + ps(r, "communication_ns") + ps(r, "waiting_ns");
                assert_eq!(split, ps(r, "end_ns"), "{r}");
            }
            if extra.is_empty() {
                // Task 0 computes 1 µs, waits 5 µs for task 1's receive, and is blocked
                // 953.675 ns while its data travels; task 1 only while it travels.
                let row = |r: &serde_json::Value| ["compute_ns", "communication_ns", "waiting_ns"].map(|k| ps(r, k));
                assert_eq!(row(&rows[0]), [1_000_000, 953_675, 5_000_000]);
                assert_eq!(row(&rows[1]), [5_000_000, 953_675, 0]);
            }
            let ends: Vec<f64> = rows.iter().map(|r| r["end_ns"].as_f64().expect("an end")).collect();
            assert!(
                served.as_ref().is_none_or(|s| *s == ends),
                "{extra:?}: {served:?} vs {ends:?}"
            );
            served = Some(ends);
        }
        served.expect("two runs")
    };
    // Rendezvous: the data leaves when task 1 receives, at 5 µs, and lands at
    // 5953.675 ns, when task 0 goes on to compute 1 µs. Eager: task 0 is done at 1 µs,
    // task 1 at 5 µs (the data landed long before).
    let rendezvous = vec![6953.675, 5953.675];
    let eager = vec![1000.0, 5000.0];
    assert_eq!(ends(&[]), rendezvous, "the trace's bit");
    assert_eq!(ends(&["--eager-limit", "1000000"]), eager, "a limit above the size");
    assert_eq!(ends(&["--eager-limit", "1000"]), rendezvous, "a limit the size reaches");
    assert_eq!(ends(&["--all-eager"]), eager);
    assert_refuses(
        &["run", &trace, "--all-eager", "--eager-limit", "1"],
        "the argument '--all-eager' cannot be used with '--eager-limit <BYTES>'",
    );
    let _ = std::fs::remove_file(&trace);
}

#[test]
fn run_takes_mapping_and_speeds_from_a_dimemas_configuration() {
    let file = |name: &str| format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let (trace, config) = (file("pingpong.dim"), file("pingpong.cfg"));
    let json = vesper_json(&["run", &trace, "--config", &config, "--json"]);
    // Both tasks on node 0, CPUs twice as fast, Dimemas's model: task 0 computes until
    // 0.75 µs, pays the 1 µs startup and copies for 976.563 ns: task 1 (computing until
    // 1 µs, then its receive's startup) has it at 2.726563 µs, answers after its own
    // startup, and task 0 has the answer at 4.703126 µs. The allreduce is Dimemas's
    // (analytic by default with a configuration): CTE fan-in and fan-out within the node,
    // 2 × (1 µs + 7.630 ns), until 6.718386 µs; task 0 then computes 0.15 µs.
    assert_eq!(json["intra_node_messages"], 2);
    assert_eq!(json["predicted_ns"], 6868.386);
    assert_eq!(json["server"]["simulation"]["messages"], 0);
    // Two nodes of one CPU, 1000 MBps and 1 µs between them: the ideal network takes
    // the bandwidth, the tasks pay the latency, and the local bus agrees. Task 0 sends
    // at 2.5 µs (1.5 µs of compute, 1 µs of startup), task 1 has it at 3.476563 µs and
    // answers at 4.476563 µs, task 0 has it at 5.453126 µs; the analytic allreduce
    // (CTE between the two nodes: 2 × (1 µs + 7.630 ns)) ends at 7.468386 µs, and task 0
    // computes 0.3 µs more.
    let two_nodes = std::env::temp_dir().join(format!("vesper-two-{}.cfg", std::process::id()));
    std::fs::write(
        &two_nodes,
        "#DIMEMAS_CONFIGURATION\n\
         \"environment information\" {\"\", 0, \"\", 2, 1000.0, 0, 1};;\n\
         \"multi node information\" {0, 2, \"\", 1, 1.0, 0.0, 0.0, 0, 1, 1, 0.000001, 1, 1, 0.0};;\n",
    )
    .expect("written");
    let calibrated = |extra: &[&str]| {
        let mut args = vec![
            "run",
            &trace,
            "--config",
            two_nodes.to_str().expect("UTF-8"),
            "--network",
            "ideal",
            "--json",
        ];
        args.extend_from_slice(extra);
        let json = vesper_json(&args);
        json["predicted_ns"].as_f64().expect("a prediction")
    };
    assert_eq!(calibrated(&[]), 7768.386);
    assert_eq!(calibrated(&["--no-server"]), 7768.386);
    // Decomposed, the allreduce is an exchange of 8-byte messages: task 0's receive
    // pays its own startup after its send's, so it ends at 7.453126 µs (task 1's message
    // landed long before), then computes 0.3 µs.
    assert_eq!(calibrated(&["--collective", "allreduce=recursive-doubling"]), 7753.126);
    let _ = std::fs::remove_file(&two_nodes);
    assert_refuses(
        &["run", &trace, "--config", &config, "--cpu-ratio", "3"],
        "cannot be used with",
    );
}

#[test]
fn the_ideal_network_is_sized_to_a_configurations_nodes() {
    // 1,024 nodes, more than the ideal network's 256 hosts by default: 600 tasks in a
    // ring, one per node, replay without --hosts, served and without a server alike.
    let config = temp_file(
        "nodes-1024.cfg",
        "#DIMEMAS_CONFIGURATION\n\
         \"environment information\" {\"\", 0, \"\", 1024, 1000.0, 0, 1};;\n\
         \"multi node information\" {0, 1024, \"\", 1, 1.0, 0.0, 0.0, 0, 1, 1, 0.000001, 1, 1, 0.0};;\n",
    );
    let predicted = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--workload",
            "ring",
            "--tasks",
            "600",
            "--iterations",
            "1",
            "--config",
            &config,
            "--network",
            "ideal",
            "--json",
        ];
        args.extend_from_slice(extra);
        let json = vesper_json(&args);
        assert!(
            json["network"].as_str().expect("a network").contains("1024 hosts"),
            "{json}"
        );
        json["predicted_ns"].as_f64().expect("a prediction")
    };
    assert_eq!(predicted(&[]), predicted(&["--no-server"]));
    let _ = std::fs::remove_file(&config);
}

#[test]
fn run_refuses_a_configuration_that_does_not_fit_naming_its_line_and_field() {
    let trace = format!("{}/../examples/pingpong.dim", env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("vesper-badcfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let path = dir.join("bad.cfg");
    let refused = |record: &str| {
        std::fs::write(
            &path,
            format!(
                "#DIMEMAS_CONFIGURATION\n\
                 \"environment information\" {{\"\", 0, \"\", 2, 1000.0, 0, 1}};;\n\
                 \"multi node information\" {{0, 2, \"\", 1, 1.0, 0.0, 0.0, 0, 1, 1, 0.0, 1, 1, 0.0}};;\n\
                 {record}\n"
            ),
        )
        .expect("written");
        let out = vesper(&["run", &trace, "--config", path.to_str().expect("UTF-8")]);
        assert!(!out.success);
        out.stderr.clone()
    };
    let cfg = path.display().to_string();
    let stderr = refused("\"mapping information\" {\"pingpong.dim\", 3, [3] {0,1,1}};;");
    assert!(
        stderr.contains(&format!(
            "{cfg}:4: \"mapping information\": field 2 (n_tasks): maps 3 tasks, but the trace {trace} has 2"
        )),
        "{stderr}"
    );
    let stderr = refused("\"configuration files\" {\"\", \"\", \"nofile.cfg\", \"\"};;");
    assert!(
        stderr.contains(&format!(
            "{cfg}:4: \"configuration files\": field 3 (communication file): cannot read {}:",
            dir.join("nofile.cfg").display()
        )),
        "{stderr}"
    );
    let stderr = refused("/* a comment that never ends");
    assert!(
        stderr.contains(&format!(
            "{cfg}:4: a comment opened with /* here is never closed with */"
        )),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_writes_its_result_and_an_application_trace_into_an_output_folder() {
    let dir = |n: u32| std::env::temp_dir().join(format!("vesper-out-{}-{n}", std::process::id()));
    let run = |n: u32| {
        let out_dir = dir(n);
        let out = vesper(&[
            "run",
            "--workload",
            "butterfly",
            "--tasks",
            "8",
            "--output",
            out_dir.to_str().expect("a UTF-8 path"),
        ]);
        assert!(out.success, "{}", out.stderr);
        let read = |name: &str| std::fs::read_to_string(out_dir.join(name)).expect("written");
        let mut json: serde_json::Value = serde_json::from_str(&read("result.json")).expect("JSON");
        // Wall-clock measurements differ from run to run; the rest must not.
        json["server"]["wall"] = serde_json::Value::Null;
        (json, read("app.prv"), read("app.pcf"), read("app.row"))
    };
    let first = run(1);
    // Same inputs, same outputs, byte for byte for the trace.
    assert!(run(2) == first, "two runs differ");
    let (json, prv, _, _) = first;
    assert!(prv.starts_with("#Paraver (01/01/2026 at 00:00):"), "{prv}");
    // One communication record per message: 8 tasks × 3 steps.
    assert_eq!(prv.lines().filter(|l| l.starts_with("3:")).count(), 24);
    assert_eq!(json["messages"], 24);
    for n in [1, 2] {
        let _ = std::fs::remove_dir_all(dir(n));
    }
}

#[test]
fn topo_refuses_a_network_that_cannot_be_simulated() {
    // It describes the shape, then says why `serve` or `run` would refuse it.
    let file = temp_file(
        "topo-b0.toml",
        "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 2\nswitch = \"wormhole\"\nbuffer_bytes = 0\n",
    );
    let out = vesper(&["topo", &file]);
    let stderr = &out.stderr;
    assert!(!out.success, "{stderr}");
    assert!(
        stderr.contains("cannot be simulated") && stderr.contains("buffer_bytes"),
        "{stderr}"
    );
    assert!(out.stdout.contains("hosts: 16"));
}

#[test]
fn topo_describes_presets_files_and_draws_them() {
    let out = vesper(&["topo", "--preset", "kary-ntree"]);
    assert!(out.success, "{}", out.stderr);
    let stdout = &out.stdout;
    for line in [
        "network: XGFT(3; 4,4,4; 1,4,4)",
        "hosts: 64",
        "switches: 48 (up to 8 ports)",
        "cables: 192 (64 host, 128 between switches)",
        "diameter: 6 links host to host",
        "bisection: 32 cables",
    ] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    let dir = std::env::temp_dir().join(format!("vesper-cli-topo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("thin.toml");
    std::fs::write(&file, "[network]\nkind = \"kary-ntree\"\nk = 4\nn = 3\nk_up = 2\n").expect("write");
    let picture = dir.join("thin.dot");
    let json = vesper_json(&[
        "topo",
        file.to_str().expect("utf-8"),
        "--dot",
        picture.to_str().expect("utf-8"),
        "--json",
    ]);
    assert_eq!(
        (json["switches"].as_u64(), json["bisection_cables"].as_u64()),
        (Some(28), Some(8))
    );
    let dot = std::fs::read_to_string(&picture).expect("a picture");
    assert_eq!(dot.matches(" -- ").count(), 112);
    let out = vesper(&["topo", "--presets"]);
    assert!(out.stdout.contains("fat-tree "));
    let out = vesper(&["topo", "--preset", "fat-tree", "--print"]);
    let printed = out.stdout.clone();
    std::fs::write(&file, &printed).expect("write");
    let out = vesper(&["topo", file.to_str().expect("utf-8")]);
    assert!(out.stdout.contains("XGFT(2; 16,16; 1,16)"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_routes_a_tree_for_its_own_workload() {
    let predicted = |routing: &str| {
        let json = vesper_json(&[
            "run",
            "--preset",
            "kary-ntree",
            "--workload",
            "wrf",
            "--tasks",
            "64",
            "--routing",
            routing,
            "--json",
        ]);
        assert!(
            json["network"]
                .as_str()
                .is_some_and(|n| n.contains(&format!("{routing} routing")))
        );
        json["predicted_ns"].as_f64().expect("a prediction")
    };
    // The shifts of the WRF pattern are conflict-free under d-mod-k already; the
    // routes chosen for the pattern do as well, random ones do not.
    assert_eq!(predicted("pattern-aware"), predicted("d-mod-k"));
    assert!(predicted("random") > predicted("d-mod-k"));
}

/// Issue 5's round trip through the command line: a preset written as a map with its
/// routes, loaded back with --map and --routes, predicts exactly what the preset does.
#[test]
fn a_preset_written_as_a_map_loads_back_and_predicts_the_same() {
    let dir = std::env::temp_dir().join(format!("vesper-cli-map-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = |name: &str| dir.join(name).to_str().expect("utf-8").to_string();
    let (map, routes) = (path("tree.map"), path("tree.routes"));
    let out = vesper(&[
        "topo",
        "--preset",
        "kary-ntree",
        "--write-map",
        &map,
        "--write-routes",
        &routes,
    ]);
    assert!(out.success, "{}", out.stderr);
    let predicted = |network: &[&str]| {
        let mut args = vec!["run", "--workload", "wrf", "--tasks", "64", "--json"];
        args.extend_from_slice(network);
        let json = vesper_json(&args);
        json["predicted_ns"].as_f64().expect("a prediction")
    };
    assert_eq!(
        predicted(&["--map", &map, "--routes", &routes]),
        predicted(&["--preset", "kary-ntree"])
    );
    // A two-rail network becomes a map of hosts with two ports, read back as two rails,
    // with a route file per rail.
    let (rails, rail_routes) = (path("rails.map"), path("rails.routes"));
    let out = vesper(&[
        "topo",
        "--preset",
        "two-rail-fat-tree",
        "--write-map",
        &rails,
        "--write-routes",
        &rail_routes,
    ]);
    assert!(out.success, "{}", out.stderr);
    let out = vesper(&["topo", "--map", &rails]);
    let stdout = &out.stdout;
    assert!(stdout.contains("rail 1:") && stdout.contains("hosts: 256"), "{stdout}");
    assert!(stdout.contains("diameter: 4 links host to host"), "{stdout}");
    let (r0, r1) = (path("rails.r0.routes"), path("rails.r1.routes"));
    // (The preset's switches are wormhole switches; a map's are output-queued unless
    // told.)
    assert_eq!(
        predicted(&[
            "--map", &rails, "--routes", &r0, "--routes", &r1, "--switch", "wormhole"
        ]),
        predicted(&["--preset", "two-rail-fat-tree"])
    );
    assert_refuses(
        &["run", "--map", &rails, "--routes", &r0],
        "the map has 2 rail(s) and 1 route file(s) are given: one per rail, in rail order",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn traffic_runs_a_point_and_a_compared_sweep() {
    let json = traffic(&["--load", "0.3", "--measure", "20", "--json"]).expect("runs");
    let curves: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let point = &curves[0]["points"][0];
    assert_eq!(curves[0]["unit"], "ns");
    assert_eq!(point["offered_load"], 0.3);
    assert!(point["accepted_load"].as_f64().expect("a number") > 0.25, "{point}");
    let svg = std::env::temp_dir().join(format!("vesper-traffic-{}.svg", std::process::id()));
    let table = traffic(&[
        "--sweep",
        "0.2:0.4:0.2",
        "--cycles",
        "--router-delay",
        "3",
        "--measure",
        "2000",
        "--compare-routing",
        "d-mod-k,random",
        "--pattern",
        "bit-reversal",
        "--svg",
        svg.to_str().expect("a UTF-8 path"),
    ])
    .expect("runs");
    assert!(table.contains("d-mod-k: ") && table.contains("random: "), "{table}");
    assert!(table.contains("bit-reversal traffic, latency in cycles"), "{table}");
    let picture = std::fs::read_to_string(&svg).expect("the plot");
    assert_eq!(picture.matches("<polyline").count(), 4);
    let _ = std::fs::remove_file(&svg);
}

/// The 1,056-host dragonfly under its adversarial traffic: minimal routing sends a
/// group's whole load over one global cable and saturates at 1/32 of the link rate;
/// Valiant and UGAL-L spread it. Under uniform traffic UGAL-L stays near minimal. The
/// detours do not depend on the partition count.
#[test]
fn dragonfly_routings_draw_the_textbook_curves_and_split_alike() {
    let point = |args: &[&str]| {
        let base = [
            "--preset",
            "dragonfly",
            "--cycles",
            "--size-flits",
            "10",
            "--warmup",
            "1000",
            "--measure",
            "3000",
            "--json",
        ];
        let json = traffic(&[&base[..], args].concat()).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let mut curves: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        for curve in curves.as_array_mut().expect("curves") {
            for p in curve["points"].as_array_mut().expect("points") {
                p["wall_seconds"] = 0.into();
                p["build_seconds"] = 0.into();
            }
        }
        curves
    };
    let shift = point(&[
        "--load",
        "0.1",
        "--pattern",
        "group-shift",
        "--compare-routing",
        "minimal,valiant,ugal",
    ]);
    let accepted = |c: &serde_json::Value| c["points"][0]["accepted_load"].as_f64().expect("a number");
    let [minimal, valiant, ugal] = [&shift[0], &shift[1], &shift[2]];
    assert_eq!(
        shift[0]["pattern"], "group-shift:32",
        "the dragonfly's p·a hosts a group"
    );
    assert!(accepted(minimal) < 0.035, "{minimal}");
    assert_eq!(minimal["points"][0]["saturated"], true);
    assert!(accepted(valiant) > 0.095 && accepted(ugal) > 0.095, "{valiant} {ugal}");
    // Adaptive routes are chosen message by message: no fixed path to count hops on.
    assert_eq!(ugal["points"][0]["mean_hops"], serde_json::Value::Null);
    let uniform = point(&["--load", "0.3", "--compare-routing", "minimal,ugal"]);
    let mean = |c: &serde_json::Value| c["points"][0]["latency"]["mean"].as_f64().expect("a number");
    assert!(mean(&uniform[1]) < mean(&uniform[0]) * 1.1, "{uniform}");
    let split = |partitions: &str| {
        point(&[
            "--load",
            "0.2",
            "--pattern",
            "group-shift",
            "--routing",
            "ugal",
            "--switch",
            "cioq",
            "--speedup",
            "2",
            "--partitions",
            partitions,
        ])
    };
    assert_eq!(split("3"), split("1"));
    let refused = traffic(&["--load", "0.1", "--pattern", "group-shift"]).expect_err("refused");
    assert!(
        refused.contains("group-shift: give the hosts of a group as group-shift:N"),
        "{refused}"
    );
    let given = traffic(&["--load", "0.1", "--pattern", "group-shift:16", "--measure", "20"]);
    assert!(given.is_ok(), "{given:?}");
}

#[test]
fn traffic_refuses_what_it_cannot_run() {
    let refused = |args: &[&str], expected: &str| {
        let err = traffic(args).expect_err("refused");
        assert!(err.contains(expected), "{args:?}: {err}");
    };
    refused(
        &[
            "--load",
            "0.3",
            "--preset",
            "crossbar",
            "--hosts",
            "12",
            "--pattern",
            "transpose",
        ],
        "--pattern transpose: a bit permutation needs a power-of-two number of hosts, the network has 12",
    );
    refused(
        &["--load", "0.3", "--pattern", "spiral"],
        "--pattern spiral: no such pattern",
    );
    refused(&["--load", "0"], "--load 0: the offered load must be a positive");
    refused(&["--load", "9", "--process", "poisson"], "above 4 times the link rate");
    refused(&["--sweep", "0.5:0.1:0.1"], "--sweep 0.5:0.1:0.1: give FROM:TO:STEP");
    refused(
        &["--load", "0.3", "--size-flits", "2"],
        "--size-flits 2: 2 flits of 8 bytes must hold",
    );
    refused(
        &["--load", "0.3", "--size-range", "9:3"],
        "--size-range 9:3: MIN above MAX",
    );
    refused(&["--load", "0.3", "--source-queue", "0"], "--source-queue 0");
    refused(
        &["--load", "0.3", "--network", "ideal", "--bandwidth", "100"],
        "the ideal network has no links",
    );
    refused(&["--load", "0.3", "--router-delay", "2"], "--cycles");
    refused(
        &["--load", "0.3", "--past-saturation", "3"],
        "--past-saturation is for a --sweep",
    );
    refused(&["--load", "0.3", "--routing-pattern", "x"], "--routing-pattern x");
}

/// Bit reversal on the fat-tree preset: d-mod-k sends the 16 hosts of a leaf up one
/// spine (their destinations share the digit it routes by), so the tree carries about
/// 1/16 of the link rate; routes chosen for the permutation carry all of it.
#[test]
fn traffic_pattern_aware_routing_follows_the_permutation() {
    let json = traffic(&[
        "--preset",
        "fat-tree",
        "--pattern",
        "bit-reversal",
        "--load",
        "0.2",
        "--measure",
        "40",
        "--compare-routing",
        "d-mod-k,pattern-aware",
        "--json",
    ])
    .expect("runs");
    let curves: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let accepted = |i: usize| curves[i]["points"][0]["accepted_load"].as_f64().expect("a number");
    assert!(accepted(0) < 0.1, "d-mod-k: {}", accepted(0));
    assert!(accepted(1) > 0.19, "pattern-aware: {}", accepted(1));
    let err = traffic(&["--preset", "fat-tree", "--load", "0.2", "--routing", "pattern-aware"]).expect_err("refused");
    assert!(
        err.contains("needs a permutation pattern or --routing-pattern FILE"),
        "{err}"
    );
}

#[test]
fn run_models_collectives_analytically() {
    let file = |name: &str| format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let trace = file("pingpong.dim");
    let predicted = |extra: &[&str]| {
        let mut args = vec!["run", &trace, "--collective", "all=analytic", "--json"];
        args.extend_from_slice(extra);
        let out = vesper(&args);
        assert!(out.success, "{}", out.stderr);
        assert!(out.stderr.contains("1 collective calls modelled analytically"));
        let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
        assert_eq!(json["messages"], 2, "the all-reduce sends nothing");
        json["predicted_ns"].as_f64().expect("a prediction")
    };
    // The ping-pong as in run_replays_a_dimemas_trace: task 0 has the answer at
    // 3453.126 ns and is the last into the all-reduce; LOG stages over 2 nodes are one
    // step each way of 8 bytes at 1000 MBps (7.630 ns); then task 0 computes 300 ns.
    let ideal = ["--network", "ideal", "--bandwidth", "1000"];
    assert_eq!(predicted(&ideal), 3768.386);
    assert_eq!(predicted(&[&ideal[..], &["--no-server"]].concat()), 3768.386);
    // From a configuration: its CTE model, 1 µs between nodes (and so 5453.126 ns for
    // task 0's answer): each stage takes 1007.630 ns.
    let dir = std::env::temp_dir().join(format!("vesper-analytic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let config = |tuning: &str| {
        let path = dir.join("two.cfg");
        std::fs::write(
            &path,
            format!(
                "#DIMEMAS_CONFIGURATION\n\
                 \"environment information\" {{\"\", 0, \"\", 2, 1000.0, 0, 1}};;\n\
                 \"multi node information\" {{0, 2, \"\", 1, 1.0, 0.0, 0.0, 0, 1, 1, 0.000001, 1, 1, 0.0}};;\n\
                 \"configuration files\" {{\"\", \"\", \"{tuning}\", \"\"}};;\n"
            ),
        )
        .expect("written");
        path.to_str().expect("UTF-8").to_string()
    };
    assert_eq!(predicted(&["--config", &config(""), "--network", "ideal"]), 7768.386);
    // A fine-tuning file (relative to the configuration) can make the all-reduce free.
    std::fs::write(dir.join("comm.cfg"), "Policy: FIFO\n11 0 MIN 0 MIN 0.0\n").expect("written");
    assert_eq!(
        predicted(&["--config", &config("comm.cfg"), "--network", "ideal"]),
        5753.126
    );
    std::fs::write(dir.join("comm.cfg"), "11 LOG CURR LOG MAX 0.0\n").expect("written");
    assert_refuses(
        &[
            "run",
            &trace,
            "--collective",
            "all=analytic",
            "--config",
            &config("comm.cfg"),
        ],
        "comm.cfg:1: fan-in size: expected MIN, MAX, MEAN, 2MAX or S+R, found 'CURR'",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_replays_tasks_of_several_threads() {
    let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/threads.dim");
    // Task 0's thread 0 sends 1000 bytes to task 1 after 1 µs (953.675 ns at 1000
    // MBps); task 1 answers twice, one message for each of task 0's threads: both have
    // theirs at 2907.35 ns (the two go at once on the ideal network).
    for extra in [&[][..], &["--no-server"]] {
        let mut args = vec!["run", trace, "--network", "ideal", "--bandwidth", "1000", "--json"];
        args.extend_from_slice(extra);
        let json = vesper_json(&args);
        assert_eq!(json["predicted_ns"], 2907.35);
        assert_eq!(json["messages"], 3);
        assert_eq!(json["intra_node_messages"], 0);
        let rows: Vec<(u64, u64, f64)> = json["tasks"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| {
                let n = |k: &str| r[k].as_u64().expect("a number");
                (n("task"), n("thread"), r["end_ns"].as_f64().expect("an end"))
            })
            .collect();
        assert_eq!(rows, [(0, 0, 2907.35), (0, 1, 2907.35), (1, 0, 1953.675)]);
    }
    assert_refuses(
        &["run", trace, "--save-trace", "/dev/null"],
        "--save-trace writes tasks of one thread",
    );
}

#[test]
fn the_examples_and_saved_traces_run_without_a_warning() {
    // Each keeps Dimemas's rules, which vesper's readers warn about (the offsets
    // table, each thread's records together and beginning with a CPU burst, the
    // records a configuration needs).
    let file = |name: &str| format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let saved = std::env::temp_dir().join(format!("vesper-saved-{}.dim", std::process::id()));
    let saved = saved.to_str().expect("a UTF-8 path");
    let ideal = ["--network", "ideal", "--bandwidth", "1000", "--no-server"];
    let out = vesper(
        &[
            &["run", "--workload", "all-to-all", "--tasks", "8", "--save-trace", saved][..],
            &ideal,
        ]
        .concat(),
    );
    assert!(out.success, "{}", out.stderr);
    let (pingpong, threads, config) = (file("pingpong.dim"), file("threads.dim"), file("pingpong.cfg"));
    for args in [
        &["run", &pingpong][..],
        &["run", &pingpong, "--config", &config],
        &["run", &threads],
        &["run", saved],
    ] {
        let out = vesper(&[args, &ideal].concat());
        assert!(out.success, "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("warning:"), "{args:?}: {}", out.stderr);
    }
    // A trace that breaks them replays, with Dimemas's reason (an event of as many
    // bytes in place of task 0's first burst).
    let text = std::fs::read_to_string(saved).expect("saved");
    let broken = text.replace("\n1:0:0:0.000000000\n", "\n20:0:0:1:10000000\n");
    std::fs::write(saved, broken).expect("written");
    let out = vesper(&[&["run", saved][..], &ideal].concat());
    assert!(out.success, "{}", out.stderr);
    assert_eq!(out.stderr.matches("warning:").count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "warning: {saved}:3: thread (0, 0) begins with an event, not a CPU burst: Dimemas does not simulate it \
             (\"will not be simulated: not begins execution with work\")"
        )),
        "{}",
        out.stderr
    );
    let _ = std::fs::remove_file(saved);
}

#[test]
fn run_refuses_synthetic_workloads_too_large_to_build() {
    // An all-to-all of 100,000 tasks is 10^10 messages: refused before it is built
    // (it used to grow until the allocator aborted), as is a random workload of 10^8.
    for args in [
        &["--tasks", "100000"][..],
        &["--workload", "random", "--messages", "100000000"],
    ] {
        assert_refuses(
            &[
                &["run", "--no-server", "--network", "ideal", "--bandwidth", "250"],
                args,
            ]
            .concat(),
            "at most 33554432 messages",
        );
    }
}

#[test]
fn run_refuses_an_intra_node_latency_beyond_its_clock() {
    // 10^30 ns used to come out as a run of exactly 2^64 ps.
    assert_refuses(
        &[
            "run",
            "--no-server",
            "--network",
            "ideal",
            "--bandwidth",
            "250",
            "--workload",
            "ping-pong",
            "--tasks-per-node",
            "2",
            "--intra-latency",
            "1e30",
        ],
        "from 0 to 10^12",
    );
}

#[test]
fn packets_too_large_for_32_bits_are_refused_not_overflowed() {
    // A payload and header adding up to 2^32 bytes used to panic in the simulation
    // (or wrap around in a release build); a file, or flags, that say so are refused.
    let expected = "a header of 4294967295 bytes add up to more than 4294967295 bytes, the most a packet can hold";
    let file = temp_file(
        "huge-header.toml",
        "[network]\nkind = \"crossbar\"\nhosts = 2\npacket_header_bytes = 4294967295\n",
    );
    // In the file's words, naming the file.
    assert_refuses(
        &[
            "run",
            "--network",
            &file,
            "--workload",
            "ping-pong",
            "--size",
            "1",
            "--iterations",
            "1",
        ],
        &format!("huge-header.toml: network.packet_payload_bytes: 4096 bytes of payload and {expected}"),
    );
    let _ = std::fs::remove_file(&file);
    let err = traffic(&[
        "--network",
        "crossbar",
        "--hosts",
        "4",
        "--packet-payload",
        "1",
        "--packet-header",
        "4294967295",
        "--size",
        "2",
        "--load",
        "0.3",
    ])
    .expect_err("refused");
    assert!(
        err.contains(&format!("--packet-payload 1: 1 bytes of payload and {expected}")),
        "{err}"
    );
}

#[test]
fn the_model_benchmark_refuses_what_would_exhaust_memory() {
    // An overload's source queues grow without bound; a crossbar of 10^8 hosts would
    // allocate gigabytes of cables before the network's size check. Both are refused
    // before anything runs, as are networks too small to measure.
    for (args, expected) in [
        (&["--loads", "1e9"][..], "at most 4"),
        (&["--loads", "inf"][..], "at most 4"),
        (&["--loads", "0.5,5"][..], "offered load 5"),
        (&["--hosts", "100000000"][..], "at most 2^25"),
        (&["--hosts", "0"][..], "--hosts 0: a network needs at least one host"),
        (
            &["--hosts", "1"][..],
            "--hosts 1: the model benchmark needs two hosts or more",
        ),
    ] {
        let out = vesper(&[&["bench", "model", "--duration-us", "200"], args].concat());
        let stderr = &out.stderr;
        assert!(!out.success && stderr.contains(expected), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing measured first");
    }
}

#[test]
fn the_model_benchmark_refuses_no_simulated_time() {
    // No time used to report an accepted load of 0/0, printed as NaN.
    let out = vesper(&["bench", "model", "--hosts", "4", "--duration-us", "0"]);
    let stderr = &out.stderr;
    assert!(!out.success, "{stderr}");
    assert!(
        stderr.contains("--duration-us 0: the model benchmark needs at least 1 µs of simulated time per load"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "refused before the table's header");
}

#[test]
fn the_model_benchmark_sets_the_wormhole_buffers() {
    let base = ["bench", "model", "--hosts", "8", "--duration-us", "200"];
    let run = |args: &[&str]| vesper(&[&base[..], args].concat());
    // Too small for the cable's round trip: the model refuses it, so the flag took effect.
    let out = run(&["--switch", "wormhole", "--buffer-bytes", "16"]);
    assert!(!out.success);
    let stderr = &out.stderr;
    assert!(
        stderr.contains("--buffer-bytes 16: wormhole switches: buffer_bytes: 16 bytes cannot cover the round trip"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "refused before the table's header");
    // The same for flits too large for the default buffers.
    let out = run(&["--switch", "wormhole", "--flit-bytes", "256"]);
    let stderr = &out.stderr;
    assert!(
        !out.success
            && stderr.contains("--flit-bytes 256: wormhole switches: buffer_bytes: 512 bytes")
            && stderr.contains("at least 1024 bytes are needed"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "refused before the table's header");
    // Of two flags, the one whose field the model names.
    let flags = [
        "--switch",
        "wormhole",
        "--buffer-bytes",
        "8192",
        "--flit-bytes",
        "100000",
    ];
    assert_refuses(
        &[&["bench", "model", "--duration-us", "200"][..], &flags].concat(),
        "Error: --flit-bytes 100000: wormhole switches: flit_bytes: flits of 100000 bytes",
    );
    // Large enough for a whole packet: no STOP is ever sent, every packet still arrives.
    let points = bench_model(&[
        "--hosts",
        "8",
        "--switch",
        "wormhole",
        "--buffer-bytes",
        "8192",
        "--loads",
        "0.3",
    ]);
    assert!(points[0]["packets"].as_u64().expect("packets") > 0);
    // Only wormhole switches have flits.
    assert_refuses(
        &[&base[..], &["--switch", "cioq", "--flit-bytes", "16"]].concat(),
        "are for wormhole switches",
    );
}

#[test]
fn the_model_benchmark_keeps_a_wormhole_presets_switches() {
    // `--switch wormhole` on the wormhole torus used to swap its bubble flow control and
    // buffers for the defaults, which the model refuses on a torus's rings.
    let preset = bench_model(&["--preset", "torus-3d", "--loads", "0.1"]);
    let switched = bench_model(&["--preset", "torus-3d", "--switch", "wormhole", "--loads", "0.1"]);
    assert!(switched[0]["packets"].as_u64().expect("packets") > 0, "{switched:?}");
    assert_eq!(switched[0]["packets"], preset[0]["packets"], "the same network");
    // A flag changes only its own parameter: buffers too small for the preset's
    // 1 KiB packets are refused by bubble flow control, which is still on.
    assert_refuses(
        &[
            "bench",
            "model",
            "--preset",
            "torus-3d",
            "--switch",
            "wormhole",
            "--buffer-bytes",
            "1024",
            "--duration-us",
            "100",
        ],
        "bubble flow control needs room for two packets",
    );
}

#[test]
fn the_model_benchmark_counts_each_packets_links() {
    let field = |p: &serde_json::Value, f: &str| p[f].as_u64().expect(f);
    // A crossbar: into the switch and out of it.
    for p in bench_model(&["--hosts", "16", "--switch", "cioq", "--loads", "0.2,0.5"]) {
        assert!(field(&p, "packets") > 0, "{p}");
        assert_eq!(field(&p, "packet_hops"), 2 * field(&p, "packets"), "{p}");
        // The model's own time is a part of the run's, and its speed follows from it.
        let seconds = |f: &str| p[f].as_f64().expect(f);
        assert!(
            seconds("model_seconds") > 0.0 && seconds("model_seconds") <= seconds("wall_seconds"),
            "{p}"
        );
        let speed = field(&p, "packet_hops") as f64 / seconds("model_seconds");
        assert!(
            (seconds("packet_hops_per_model_second") / speed - 1.0).abs() < 1e-9,
            "{p}"
        );
    }
    // The two-level fat tree: 2 links within a leaf switch (15 of a host's 255 peers),
    // 4 through a spine; uniform traffic averages 3.88.
    let points = bench_model(&["--preset", "fat-tree", "--loads", "0.2"]);
    let (hops, packets) = (field(&points[0], "packet_hops"), field(&points[0], "packets"));
    let mean = hops as f64 / packets as f64;
    assert!((3.6..4.0).contains(&mean), "{hops} packet-hops for {packets} packets");
    assert!(
        points[0]["flit_hops"].as_u64().is_some(),
        "the preset's wormhole switches"
    );
    // Several rails, or routes per message, have no single hop count per pair.
    assert_refuses(
        &[
            "bench",
            "model",
            "--preset",
            "two-rail-fat-tree",
            "--duration-us",
            "100",
        ],
        "one rail",
    );
}

#[test]
fn run_refuses_a_message_size_the_wire_protocol_cannot_carry() {
    // 2^32 − 1 bytes used to be accepted, and every SEND line then refused by the
    // server: "the server reported no completion", with no word of --size.
    let ideal: Vec<&str> = "run --no-server --network ideal --bandwidth 250 --workload ping-pong"
        .split(' ')
        .collect();
    for size in ["4294967295", "2147483648"] {
        let out = vesper(&[&ideal[..], &["--size", size]].concat());
        let stderr = &out.stderr;
        assert!(
            !out.success
                && stderr.contains(&format!("invalid value '{size}' for '--size <SIZE>'"))
                && stderr.contains("expected at most 2147483647 bytes, the largest message the wire protocol carries"),
            "{size}: {stderr}"
        );
    }
    let largest = vesper(&[&ideal[..], &["--size", "2147483647", "--iterations", "1"]].concat());
    assert!(largest.success, "{}", largest.stderr);
}

/// A network split on threads writes the network trace the network whole writes, file
/// for file, on one rail and on two (records of every rail and partition merged).
#[test]
fn a_split_network_writes_the_same_network_trace() {
    let dir = std::env::temp_dir().join(format!("vesper-{}-split-traces", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    for (preset, switch) in [("kary-ntree", "cioq"), ("two-rail-fat-tree", "output-queued")] {
        let files = |partitions: &str| {
            let prv = dir.join(format!("{preset}-{partitions}.prv"));
            let prv = prv.to_str().expect("UTF-8 path");
            let out = vesper(&[
                "run",
                "--workload",
                "all-to-all",
                "--tasks",
                "64",
                "--size",
                "20000",
                "--preset",
                preset,
                "--switch",
                switch,
                "--trace",
                prv,
                "--trace-end-to-end",
                "--partitions",
                partitions,
            ]);
            assert!(out.success, "{preset}, {partitions} partitions: {}", out.stderr);
            common::trace_files(&dir, &format!("{preset}-{partitions}"))
        };
        let whole = files("1");
        assert!(
            whole[0].lines().filter(|l| l.starts_with("1:")).count() > 100,
            "{preset}: backlogs traced"
        );
        for partitions in ["2", "3"] {
            let what = format!("{preset}, {partitions} partitions against the network whole");
            common::assert_same_trace(&files(partitions), &whole, &what);
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Splitting the network into partitions changes nothing but the wall clock: the
/// traffic curves of packet-switched presets (two rails included) and `vesper run`'s
/// prediction and report. What cannot be split is refused, naming the flag.
#[test]
fn partitions_change_nothing_but_the_wall_clock() {
    let untimed = |json: &str| {
        let mut curves: serde_json::Value = serde_json::from_str(json).expect("JSON");
        for curve in curves.as_array_mut().expect("curves") {
            for p in curve["points"].as_array_mut().expect("points") {
                p["wall_seconds"] = 0.into();
                p["build_seconds"] = 0.into();
            }
        }
        curves
    };
    let networks: [&[&str]; 7] = [
        &["--preset", "kary-ntree"],
        &["--preset", "hypercube"],
        &["--preset", "fat-tree", "--switch", "cioq"],
        &["--preset", "two-rail-fat-tree", "--switch", "output-queued"],
        &["--preset", "fat-tree", "--granularity", "fine"],
        &["--preset", "fat-tree"],
        &["--preset", "torus-3d"],
    ];
    for network in networks {
        let curves = |partitions: &str| {
            let args = [
                &[
                    "--load",
                    "0.4",
                    "--measure",
                    "1000",
                    "--json",
                    "--partitions",
                    partitions,
                ],
                network,
            ]
            .concat();
            untimed(&traffic(&args).unwrap_or_else(|e| panic!("{network:?}: {e}")))
        };
        assert_eq!(curves("3"), curves("1"), "{network:?}");
    }
    // How the partitions ran goes to the notes, not into the results.
    let notes = |args: &[&str]| {
        let out = vesper(&[&["traffic"], args].concat());
        assert!(out.success, "{}", out.stderr);
        out.stderr
    };
    let tree = notes(&[
        "--load",
        "0.4",
        "--measure",
        "200",
        "--preset",
        "kary-ntree",
        "--partitions",
        "3",
    ]);
    assert!(
        tree.contains("preset kary-ntree, load 0.4: 3 partitions, windows of 125.000 ns: "),
        "{tree}"
    );
    assert!(
        tree.contains("crossing packets a window; events by partition "),
        "{tree}"
    );
    let torus = [
        "--load",
        "0.2",
        "--measure",
        "100",
        "--preset",
        "torus-3d",
        "--granularity",
        "fine",
    ];
    let torus = notes(&[&torus[..], &["--partitions", "2"]].concat());
    assert!(
        torus.contains("crossing flits and signals a window; events by partition "),
        "{torus}"
    );
    let run = |network: &[&str], partitions: &str| {
        let args = [
            &["run", "--workload", "all-to-all", "--size", "4096"],
            network,
            &["--partitions", partitions],
        ]
        .concat();
        let out = vesper(&args);
        assert!(out.success, "{}", out.stderr);
        out.stdout
    };
    let tree = ["--preset", "kary-ntree"];
    let one = run(&tree, "1");
    assert!(
        one.contains("predicted execution time: 510.538 µs (992 messages)"),
        "{one}"
    );
    assert_eq!(run(&tree, "2"), one);
    // Wormhole switches split flit by flit and in runs of flits (the default), and
    // predict the same either way (in more events flit by flit), with the same round
    // trips split and whole.
    let fine = ["--preset", "fat-tree", "--granularity", "fine", "--tasks", "32"];
    let one = run(&fine, "1");
    assert_eq!(run(&fine, "3"), one);
    let prediction = |out: &str| out.lines().filter(|l| l.starts_with("predicted")).collect::<String>();
    let coarse = ["--preset", "fat-tree", "--tasks", "32"];
    let coarse_one = run(&coarse, "1");
    assert_eq!(prediction(&coarse_one), prediction(&one));
    assert!(prediction(&one).contains("512.424 µs"), "{one}");
    assert_eq!(run(&coarse, "2"), coarse_one);
    assert_eq!(run(&coarse, "3"), coarse_one);
    // Bubble flow control splits: its credits cross the cut cables.
    for granularity in ["fine", "coarse"] {
        let torus = ["--preset", "torus-3d", "--granularity", granularity, "--tasks", "32"];
        let one = run(&torus, "1");
        assert_eq!(run(&torus, "4"), one, "{granularity}");
    }
    let refused = |args: &[&str], expected: &str| {
        let err = traffic(&[&["--load", "0.3"], args].concat()).expect_err("refused");
        assert!(err.contains(expected), "{args:?}: {err}");
    };
    refused(
        &["--preset", "crossbar", "--partitions", "2"],
        "--partitions 2: 2 partitions asked for, but the network has 1 switches",
    );
    refused(
        &["--partitions", "0"],
        "--partitions 0: at least one partition is needed",
    );
    // Cables of no delay leave a wormhole network nothing to run apart on.
    refused(
        &["--preset", "fat-tree", "--link-latency", "0", "--partitions", "2"],
        "--partitions 2: a cable between two of the 2 partitions and the routing decision after it take no time",
    );
    assert_refuses(
        &[
            "run",
            "--workload",
            "ping-pong",
            "--server",
            "127.0.0.1:1",
            "--partitions",
            "2",
        ],
        "--partitions: a server started apart runs as it was started",
    );
}

/// A Dimemas trace over the 1,056-host dragonfly (64 tasks: two groups of 32 hosts),
/// minimal, Valiant and UGAL-L: each predicts its own time, and the network split over
/// threads predicts the same, round trips included; the replayer alone (`--no-server`)
/// replays the trace too.
#[test]
fn a_dimemas_trace_replays_over_a_dragonfly_split_alike() {
    let saved = std::env::temp_dir().join(format!("vesper-dragonfly-{}.dim", std::process::id()));
    let saved = saved.to_str().expect("a UTF-8 path");
    let out = vesper(&[
        "run",
        "--workload",
        "all-to-all",
        "--tasks",
        "64",
        "--size",
        "8192",
        "--save-trace",
        saved,
    ]);
    assert!(out.success, "{}", out.stderr);
    let run = |routing: &str, partitions: &str| {
        let out = vesper(&[
            "run",
            saved,
            "--preset",
            "dragonfly",
            "--routing",
            routing,
            "--partitions",
            partitions,
        ]);
        assert!(out.success, "{routing}: {}", out.stderr);
        out.stdout
    };
    let prediction = |out: &str| out.lines().filter(|l| l.starts_with("predicted")).collect::<String>();
    let mut predictions = Vec::new();
    for routing in ["minimal", "valiant", "ugal"] {
        let whole = run(routing, "1");
        assert!(whole.contains("dragonfly (p 4, a 8, h 4, g 33, absolute)"), "{whole}");
        assert_eq!(run(routing, "3"), whole, "{routing}");
        predictions.push(prediction(&whole));
    }
    assert_ne!(predictions[0], predictions[1], "Valiant's detours take longer");
    // The replayer alone, over its bus model at the links' rate, predicts less than any
    // routing over the dragonfly, whose cables and routers it leaves out.
    let bus = vesper(&[
        "run",
        saved,
        "--no-server",
        "--network",
        "ideal",
        "--bandwidth",
        "238",
        "--json",
    ]);
    assert!(bus.success, "{}", bus.stderr);
    let bus: serde_json::Value = serde_json::from_str(&bus.stdout).expect("JSON");
    let served = vesper_json(&["run", saved, "--preset", "dragonfly", "--json"]);
    assert!(
        bus["predicted_ns"].as_f64() < served["predicted_ns"].as_f64(),
        "{bus} {served}"
    );
    let _ = std::fs::remove_file(saved);
}

/// Routes drawn at random from a route file with two paths per pair split alike: every
/// partition draws for every message (one generator for every host's messages), so each
/// message takes the path it takes in the network whole.
#[test]
fn routes_drawn_at_random_split_alike() {
    let dir = std::env::temp_dir().join(format!("vesper-cli-random-routes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (map, both) = common::map_with_two_paths_a_pair(&dir);
    let point = |policy: &str, partitions: &str| {
        let args = [
            "--map",
            &map,
            "--routes",
            &both,
            "--route-policy",
            policy,
            "--load",
            "0.5",
            "--measure",
            "500",
            "--json",
            "--partitions",
            partitions,
        ];
        let json = traffic(&args).unwrap_or_else(|e| panic!("{policy}, {partitions}: {e}"));
        let curves: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        let mut point = curves[0]["points"][0].clone();
        point["wall_seconds"] = 0.into();
        point["build_seconds"] = 0.into();
        point
    };
    let whole = point("random", "1");
    assert_ne!(
        whole,
        point("first", "1"),
        "the draws choose other paths than the first"
    );
    for partitions in ["2", "3"] {
        assert_eq!(point("random", partitions), whole, "{partitions} partitions");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
