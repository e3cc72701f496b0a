//! The `vesper` binary as a user runs it, for what needs a process of its own: start,
//! serve a client, report, stop (servers on sockets, signals, exit statuses, open
//! files), the server's log, runs that must end within a time limit, a reader that
//! stops early, and `bench model --of-saturation`, which runs the binary again. The
//! commands called in the test's own process are in tests/commands.rs.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use common::{signal, start, wait_up_to};
use vesper_client_dimemas_adapter::LegacyConnection;
use vesper_protocol::{ClientMessage, WireTime};

/// `vesper serve ARGS` exits with an error that says `expected`.
#[track_caller]
fn assert_serve_refuses(args: &[&str], expected: &str) {
    assert_refuses(&[&["serve"], args].concat(), expected);
}

/// `vesper ARGS` fails, saying `expected`.
fn assert_refuses(args: &[&str], expected: &str) {
    let out = vesper(args);
    assert!(!out.status.success(), "{args:?} accepted");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
}

fn send(time: f64, src: u32, dst: u32) -> ClientMessage {
    common::send_bytes(time, src, dst, 1024)
}

fn wait(child: &mut Child) -> std::process::ExitStatus {
    wait_up_to(child, 5)
}

/// The JSON report `vesper serve` printed on its standard output, once it has exited.
fn printed_report(child: &mut Child) -> serde_json::Value {
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .expect("report");
    serde_json::from_str(&stdout).expect("a JSON report")
}

#[test]
fn serves_a_client_then_prints_the_report_and_exits() {
    let (mut child, addr) = start(&[]);
    let mut client = LegacyConnection::connect(addr).expect("connects");
    let reply = client
        .exchange(&[
            send(6500.0, 0, 1),
            ClientMessage::Stop(WireTime(6500.0)),
            ClientMessage::End,
        ])
        .expect("reply");
    assert!(reply.completions.is_empty());
    let reply = client
        .exchange(&[ClientMessage::Stop(WireTime(1e9)), ClientMessage::End])
        .expect("reply");
    assert_eq!(reply.completions.len(), 1);
    // 1024 bytes and a 16-byte header at 4 ns/byte, two 25 ns cables, 100 ns routing.
    assert_eq!(reply.completions[0].time, WireTime(6500.0 + 4160.0 + 150.0));
    client.finish().expect("finish");
    assert!(wait(&mut child).success());
    let report = printed_report(&mut child);
    assert_eq!(report["simulation"]["messages"], 1);
    assert_eq!(report["simulation"]["sync_round_trips"], 2);
    assert_eq!(report["simulation"]["latency_ns"]["max"], 4310.0);
    assert_eq!(report["simulation"]["simulated_end_ns"], 10810.0);
}

#[test]
fn a_served_run_the_model_stops_still_prints_its_report() {
    // As slow links as allowed: a message of a million packets sent just before the
    // last instant one may enter runs past the clock's end, and the model stops the run.
    let slow = [
        "--network",
        "crossbar",
        "--hosts",
        "2",
        "--link-bandwidth",
        "0.000118",
        "--packet-payload",
        "2048",
    ];
    for keep_serving in [false, true] {
        let args = [&slow[..], if keep_serving { &["--keep-serving"] } else { &[] }].concat();
        let (mut child, addr) = start(&args);
        let mut client = LegacyConnection::connect(addr).expect("connects");
        let ClientMessage::Send(mut large) = send(9e15, 0, 1) else {
            unreachable!("send makes a SEND")
        };
        large.size = vesper_protocol::MAX_MESSAGE_BYTES;
        let reply = client.exchange(&[
            ClientMessage::Send(large),
            ClientMessage::Stop(WireTime(
                vesper_client_dimemas_adapter::replay::fabric::UNTIL_NEXT_COMPLETION_NS,
            )),
            ClientMessage::End,
        ]);
        assert!(reply.is_err(), "the connection is closed: {reply:?}");
        if !keep_serving {
            assert!(!wait_up_to(&mut child, 60).success(), "the run failed");
            let report = printed_report(&mut child);
            assert_eq!(report["simulation"]["messages"], 1);
            assert_eq!(report["simulation"]["messages_in_flight_at_exit"], 1);
            continue;
        }
        // The next run starts on a fresh network: a small message arrives as usual.
        let mut next = LegacyConnection::connect(addr).expect("connects");
        let reply = next
            .exchange(&[send(0.0, 0, 1), ClientMessage::Stop(WireTime(1e12)), ClientMessage::End])
            .expect("a reply");
        assert_eq!(reply.completions.len(), 1);
        next.finish().expect("finish");
        std::thread::sleep(Duration::from_millis(100));
        signal(&child, "TERM");
        assert_eq!(wait_up_to(&mut child, 60).code(), Some(0));
        let runs = common::reports(&mut child);
        assert_eq!(runs.len(), 2);
        assert!(
            runs[0]["stopped"]
                .as_str()
                .is_some_and(|s| s.contains("simulated time ran out")),
            "{}",
            runs[0]
        );
        assert_eq!(runs[1]["stopped"], serde_json::Value::Null);
        assert_eq!(runs[1]["simulation"]["messages"], 1);
    }
}

#[test]
fn the_served_network_trace_takes_a_date() {
    let trace = std::env::temp_dir().join(format!("vesper-serve-date-{}.prv", std::process::id()));
    let path = trace.to_str().expect("utf-8 path");
    let (mut child, addr) = start(&["--trace", path, "--trace-date", "22/11/2026 at 09:30"]);
    let mut client = LegacyConnection::connect(addr).expect("connects");
    client
        .exchange(&[send(0.0, 0, 1), ClientMessage::Stop(WireTime(1e9)), ClientMessage::End])
        .expect("reply");
    client.finish().expect("finish");
    assert!(wait(&mut child).success());
    let text = std::fs::read_to_string(&trace).expect("a trace");
    assert!(
        text.starts_with("#Paraver (22/11/2026 at 09:30):"),
        "{}",
        &text[..80.min(text.len())]
    );
    for stem in ["prv", "pcf", "row"] {
        let _ = std::fs::remove_file(trace.with_extension(stem));
    }
    // A date not in Paraver's form is refused: in tests/commands.rs.
}

#[test]
fn a_signal_during_a_run_writes_the_report_and_exits_128_plus_the_signal() {
    for (name, code) in [("TERM", 143), ("INT", 130)] {
        let stats = std::env::temp_dir().join(format!("vesper-cli-test-{}-{name}.json", std::process::id()));
        let _ = std::fs::remove_file(&stats);
        let stats_arg = stats.to_str().expect("utf-8 path");
        let (mut child, addr) = start(&["--stats", stats_arg]);
        let mut client = LegacyConnection::connect(addr).expect("connects");
        // A client that waits on a message in flight when the signal comes.
        client
            .exchange(&[send(0.0, 0, 1), ClientMessage::Stop(WireTime(0.0)), ClientMessage::End])
            .expect("reply");
        signal(&child, name);
        assert_eq!(wait(&mut child).code(), Some(code), "SIG{name}");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).expect("stats written")).expect("JSON");
        assert_eq!(report["simulation"]["messages"], 1);
        assert_eq!(report["simulation"]["clients"][0]["finished"], false);
        let _ = std::fs::remove_file(&stats);
    }
    // A one-run server stopped before its client came did not do its job either.
    let (mut child, _) = start(&[]);
    signal(&child, "TERM");
    assert_eq!(wait(&mut child).code(), Some(143));
}

#[test]
fn a_server_that_keeps_serving_reports_each_run_as_it_ends_and_exits_0_between_runs() {
    let dir = std::env::temp_dir().join(format!("vesper-cli-runs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let pattern = dir.join("stats-{run}.json");
    for stats in [None, Some(pattern.to_str().expect("utf-8"))] {
        let mut args = vec!["--keep-serving"];
        args.extend(stats.iter().flat_map(|s| ["--stats", s]));
        let (mut child, addr) = start(&args);
        for _ in 0..2 {
            let mut client = LegacyConnection::connect(addr).expect("connects");
            let reply = client
                .exchange(&[
                    send(6500.0, 0, 1),
                    ClientMessage::Stop(WireTime(1e9)),
                    ClientMessage::End,
                ])
                .expect("reply");
            // Every run starts at time zero.
            assert_eq!(reply.completions[0].time, WireTime(10810.0));
            client.finish().expect("finish");
        }
        // The second run's report is out before its client's connection is closed.
        std::thread::sleep(Duration::from_millis(100));
        signal(&child, "TERM");
        assert_eq!(wait(&mut child).code(), Some(0), "stopped between runs");
        let mut stdout = String::new();
        child
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut stdout)
            .expect("stdout");
        let reports: Vec<serde_json::Value> = match stats {
            // One JSON object a line, a line a run.
            None => stdout
                .lines()
                .map(|l| serde_json::from_str(l).expect("a JSON line"))
                .collect(),
            Some(_) => (1..=2)
                .map(|run| {
                    let text = std::fs::read_to_string(dir.join(format!("stats-{run}.json"))).expect("a file a run");
                    serde_json::from_str(&text).expect("JSON")
                })
                .collect(),
        };
        let runs: Vec<_> = reports
            .iter()
            .map(|r| (r["run"].clone(), r["simulation"]["messages"].clone()))
            .collect();
        assert_eq!(runs, [(1.into(), 1.into()), (2.into(), 1.into())], "{stats:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// (The other bad options of `serve`, refused before it listens, are in
/// tests/commands.rs.)
#[test]
fn an_address_serve_cannot_listen_on_is_refused() {
    assert_serve_refuses(
        &["--listen", "not-an-address"],
        "--listen not-an-address: cannot listen there",
    );
}

/// As `run` (tests/commands.rs) names it: the model builds the network once the server
/// listens.
#[test]
fn a_network_the_model_refuses_to_serve_is_named_by_its_file_or_flag() {
    let file = temp_file(
        "small-buffers-serve.toml",
        "[network]\nkind = \"crossbar\"\nhosts = 4\nswitch = \"wormhole\"\nbuffer_bytes = 16\n",
    );
    let refused = "wormhole switches: buffer_bytes: 16 bytes cannot cover the round trip";
    assert_serve_refuses(&["--network", &file], &format!("Error: {file}: {refused}"));
    let flags: Vec<&str> = "--network crossbar --hosts 4 --switch wormhole --buffer-bytes 16"
        .split(' ')
        .collect();
    assert_serve_refuses(&flags, &format!("Error: --buffer-bytes 16: {refused}"));
    let _ = std::fs::remove_file(&file);
}

#[test]
fn the_ideal_network_serves_from_a_file() {
    let dir = std::env::temp_dir().join(format!("vesper-cli-ideal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("ideal.toml");
    let text = "[network]\nkind = \"ideal\"\nhosts = 4\nbandwidth_mbps = 250\nlatency_ns = 1500\n";
    std::fs::write(&file, text).expect("write");
    // Each reply at one completion time, as the protocol first had it.
    let (mut child, addr) = start(&["--network", file.to_str().expect("utf-8 path"), "--replies", "earliest"]);
    let mut client = LegacyConnection::connect(addr).expect("connects");
    client
        .exchange(&[
            send(6500.0, 0, 1),
            ClientMessage::Stop(WireTime(6500.0)),
            ClientMessage::End,
        ])
        .expect("reply");
    let reply = client
        .exchange(&[ClientMessage::Stop(WireTime(1e9)), ClientMessage::End])
        .expect("reply");
    assert_eq!(reply.completions[0].time, WireTime(6500.0 + 1500.0 + 3906.25));
    client.finish().expect("finish");
    assert!(wait(&mut child).success());
    let _ = std::fs::remove_dir_all(&dir);
}

fn vesper(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args(args)
        .output()
        .expect("vesper runs")
}

/// Writes `text` to a file of this name (made unique per process) in the temporary
/// directory; returns its path.
fn temp_file(name: &str, text: &str) -> String {
    let path = std::env::temp_dir().join(format!("vesper-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("written");
    path.to_str().expect("a UTF-8 path").to_string()
}

#[test]
fn a_send_too_late_to_arrive_is_named_as_the_reason_the_replay_got_no_completion() {
    // Task 0 computes 10^7 s (about 116 days), then sends: past the 106 days by which
    // the server takes a message, so it ignores the line and never completes it. Just
    // past the limit, the two times printed still differ (exact to the picosecond).
    for (seconds, sent) in [
        ("10000000.0", "10000000000000000.000 ns"),
        ("9223372.036854776", "9223372036854776.000 ns"),
    ] {
        let trace = temp_file(
            "late.dim",
            &format!("#DIMEMAS:\"late\":0:2(1,1),0\n1:0:0:{seconds}\n2:0:0:1:-1:1024:7:1:0\n3:1:0:0:-1:1024:7:1:0\n"),
        );
        let out = vesper(&["run", &trace, "--network", "ideal", "--bandwidth", "250"]);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        for expected in [
            &format!(
                "line 1: sent at {sent}, the message has no room to arrive: messages must be sent by \
                 9223372036854775.807 ns"
            ),
            "Error: the server ignored 1 of the replay's lines (its warnings above say why)",
            "the server reported no completion although 1 messages are in flight",
        ] {
            assert!(stderr.contains(expected), "{expected}: {stderr}");
        }
        let _ = std::fs::remove_file(&trace);
    }
}

/// `vesper traffic ARGS`: its standard output, or its error.
fn traffic(args: &[&str]) -> Result<String, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .arg("traffic")
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("vesper runs");
    match out.status.success() {
        true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
    }
}

/// `vesper bench model ARGS --json`: its points.
fn bench_model(args: &[&str]) -> Vec<serde_json::Value> {
    let out = vesper(&[&["bench", "model", "--duration-us", "300", "--json"], args].concat());
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON points")
}

#[test]
fn the_model_benchmark_offers_fractions_of_the_measured_saturation() {
    let offered = |args: &[&str]| -> Vec<f64> {
        bench_model(args)
            .iter()
            .map(|p| p["offered_load"].as_f64().expect("offered_load"))
            .collect()
    };
    let cioq = ["--hosts", "16", "--switch", "cioq", "--loads", "0.5,1"];
    assert_eq!(offered(&cioq), [0.5, 1.0]);
    // Measured by an overloaded run (in a child process): FIFO inputs saturate well
    // below the link rate, from head-of-line blocking.
    let scaled = offered(&[&cioq[..], &["--of-saturation"]].concat());
    assert!((0.3..0.9).contains(&scaled[1]), "{scaled:?}");
    assert!((2.0 * scaled[0] - scaled[1]).abs() < 1e-12, "{scaled:?}");
}

#[test]
fn the_model_benchmarks_saturation_run_measures_the_network_of_the_flags() {
    // The overloaded run (a child process) takes the network's flags as given: virtual
    // output queues and a faster crossbar saturate above FIFO inputs.
    let saturation = |network: &[&str]| {
        let points = bench_model(&[network, &["--loads", "1", "--of-saturation"]].concat());
        points[0]["offered_load"].as_f64().expect("offered_load")
    };
    let fifo = saturation(&["--hosts", "16", "--switch", "cioq"]);
    let voq = saturation(&["--hosts", "16", "--switch", "cioq", "--voq", "--speedup", "2"]);
    assert!(
        voq > fifo + 0.1,
        "FIFO inputs saturate at {fifo}, virtual output queues at {voq}"
    );
}

/// `vesper run ARGS` on two hosts: its error, or a panic if it succeeds or runs for
/// more than `seconds`.
fn run_error_within(args: &[&str], seconds: u64) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args(["run", "--hosts", "2", "--tasks", "2"])
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .stderr(Stdio::piped())
        .spawn()
        .expect("vesper starts");
    let stderr = child.stderr.take().expect("stderr piped");
    let reader = std::thread::spawn(move || std::io::read_to_string(stderr).expect("readable"));
    let status = wait_up_to(&mut child, seconds);
    let stderr = reader.join().expect("read");
    assert!(!status.success(), "{args:?} accepted");
    stderr
}

#[test]
fn times_the_clock_cannot_count_are_refused_instead_of_hanging() {
    // Each used to make arrivals stop at the clock's last instant, after which no
    // instant comes: the replay client waited for ever for its completions.
    let step = "more than the 17.592 s the model allows one link, cable or routing decision";
    for (args, expected) in [
        (
            &["--link-bandwidth", "1e-12"][..],
            "--link-bandwidth 1e-12: 1e-12 MB/s makes a packet (4112 bytes) take 4.112e9 s, ",
        ),
        (&["--link-latency", "1e16"], "--link-latency 1e16: 1e16 ns is "),
        (&["--routing-latency", "1e16"], "--routing-latency 1e16: 1e16 ns is "),
        (
            &["--switch", "wormhole", "--link-latency", "1e16"],
            "--link-latency 1e16: 1e16 ns is ",
        ),
    ] {
        let stderr = run_error_within(&[&["--network", "crossbar"], args].concat(), 20);
        assert!(stderr.contains(expected) && stderr.contains(step), "{args:?}: {stderr}");
    }
    let stderr = run_error_within(&["--network", "crossbar", "--link-bandwidth", "1e-12"], 20);
    assert!(stderr.contains("; expected at least 0.000234 MB/s"), "{stderr}");
    let stderr = run_error_within(&["--network", "crossbar", "--link-latency", "1e30"], 20);
    assert!(stderr.contains("; expected at most 17592186044.416 ns"), "{stderr}");
    // The ideal network: its latency and its transfer of the largest message.
    let stderr = run_error_within(&["--network", "ideal", "--bandwidth", "1e-12"], 20);
    assert!(
        stderr.contains("--bandwidth 1e-12: 1e-12 MBps makes the largest message (4294967295 bytes) take")
            && stderr.contains("expected at least 0.000889 MBps"),
        "{stderr}"
    );
    // A network file, in its words; and the traffic generator.
    let file = temp_file(
        "slow-link.toml",
        "[network]\nkind = \"crossbar\"\nhosts = 2\nlink_bandwidth_mbs = 1e-12\n",
    );
    let stderr = run_error_within(&["--network", &file], 20);
    assert!(
        stderr.contains("slow-link.toml: network.link_bandwidth_mbs: 1e-12 MB/s makes a packet"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(&file);
    let flags: Vec<&str> = "--network crossbar --hosts 2 --load 0.5 --link-latency 1e16"
        .split(' ')
        .collect();
    let err = traffic(&flags).expect_err("refused");
    assert!(err.contains(step), "{err}");
    // Too large a rate is said to be so (it used to be "expected a positive rate").
    let stderr = run_error_within(&["--network", "crossbar", "--link-bandwidth", "1e30"], 20);
    assert!(
        stderr.contains("1e30 MB/s is beyond the rates vesper represents; expected at most 18446744073709 MB/s"),
        "{stderr}"
    );
}

#[test]
fn a_run_whose_load_outlasts_the_clock_stops_with_the_reason() {
    // Links as slow as allowed, and a message of a million packets from each host just
    // before the last instant one may enter: the queue runs past the clock's end. The
    // server stops the run, closing the connection, and `run` says why.
    let stderr = run_error_within(
        &[
            "--network",
            "crossbar",
            "--workload",
            "ring",
            "--iterations",
            "1",
            "--compute-ns",
            "9000000000000000",
            "--size",
            "2147483647",
            "--packet-payload",
            "2048",
            "--link-bandwidth",
            "0.000118",
        ],
        60,
    );
    assert!(
        stderr.contains("Error: simulated time ran out: the network model has work at its last instant"),
        "{stderr}"
    );
}

/// The server's open file descriptors.
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

#[test]
fn a_client_that_closes_its_side_and_never_reads_is_let_go_and_its_run_ends() {
    let (mut child, addr) = start(&["--keep-serving", "--client-timeout", "0.3"]);
    let pid = child.id();
    let baseline = open_fds(pid);
    // Thousands of batches and FINISH, its sending side closed, and never a read:
    // its replies outgrow the socket's buffers and wait on the server.
    let mut stream = TcpStream::connect(addr).expect("connects");
    let batches = "STOP 1\nEND\n".repeat(200_000) + "FINISH\n";
    stream.write_all(batches.as_bytes()).expect("written");
    stream.shutdown(std::net::Shutdown::Write).expect("shutdown");
    let start = Instant::now();
    let within = |limit: u64, what: &str, done: &dyn Fn() -> bool| {
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(limit), "{what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    within(10, "the server never took the connection", &|| open_fds(pid) > baseline);
    within(
        30,
        "the server still holds the socket of a client gone for good",
        &|| open_fds(pid) <= baseline,
    );
    drop(stream);
    // Its run ended with its FINISH: the server is between runs.
    signal(&child, "TERM");
    assert_eq!(wait(&mut child).code(), Some(0));
}

/// `vesper run | head -1`: a reader that stops early ends the output quietly, with
/// status 0 (about 200 kB of rows, more than a pipe holds).
#[test]
fn a_reader_that_stops_early_ends_vesper_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args([
            "run",
            "--workload",
            "ring",
            "--tasks",
            "3000",
            "--iterations",
            "1",
            "--network",
            "ideal",
            "--bandwidth",
            "100",
            "--hosts",
            "3000",
            "--no-server",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vesper starts");
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().expect("stdout")),
        &mut first,
    )
    .expect("a line");
    assert!(first.starts_with("workload: ring of 3000 tasks"), "{first}");
    let stderr = child.stderr.take().expect("stderr piped");
    let reader = std::thread::spawn(move || std::io::read_to_string(stderr).expect("readable"));
    assert_eq!(wait_up_to(&mut child, 60).code(), Some(0));
    assert_eq!(reader.join().expect("read"), "", "nothing said of the closed pipe");
}

/// A vesper built without MPI, started by `mpirun` with several ranks, stops with a
/// message rather than run the whole simulation once per rank.
#[cfg(not(feature = "mpi"))]
#[test]
fn without_mpi_a_run_under_mpirun_says_how_to_build() {
    let out = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args(["traffic", "--load", "0.3"])
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .expect("vesper runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("started by mpirun with 2 ranks, but this vesper was built without MPI")
            && stderr.contains("--features mpi"),
        "{stderr}"
    );
    // One rank is one process: nothing to split.
    let out = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args(["traffic", "--load", "0.3", "--measure", "100"])
        .env("OMPI_COMM_WORLD_SIZE", "1")
        .output()
        .expect("vesper runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `vesper serve --partitions N` with several clients: the partitions advance to the
/// times the clients allow, and every client's prediction is what the network whole
/// gives, on packet switches and on wormhole switches, flit by flit and in runs of flits
/// (bubble flow control on the torus).
#[test]
fn a_split_server_serves_several_clients_as_the_network_whole() {
    let workloads: [&[&str]; 2] = [
        &["--workload", "all-to-all", "--tasks", "8", "--size", "20000"],
        &["--workload", "random", "--tasks", "8", "--messages", "200"],
    ];
    // A dragonfly of 2 hosts a group: the 8 tasks span 4 groups, and UGAL-L chooses.
    let dragonfly = temp_file(
        "dragonfly.toml",
        "[network]\nkind = \"dragonfly\"\np = 1\na = 2\nh = 2\ng = 5\nrouting = \"ugal\"\n",
    );
    let networks: [&[&str]; 6] = [
        &["--preset", "kary-ntree"],
        &["--preset", "fat-tree", "--granularity", "fine"],
        &["--preset", "torus-3d", "--granularity", "fine"],
        &["--preset", "fat-tree"],
        &["--preset", "torus-3d"],
        &["--network", &dragonfly],
    ];
    for network in networks {
        let served = |partitions: &str| {
            let network = [network, &["--partitions", partitions]].concat();
            common::served(Command::new(env!("CARGO_BIN_EXE_vesper")), &network, &workloads)
        };
        let whole = served("1");
        assert!(whole.iter().all(serde_json::Value::is_number), "{network:?}: {whole:?}");
        assert_ne!(whole[0], whole[1], "{network:?}: two different workloads");
        for partitions in ["2", "3"] {
            assert_eq!(served(partitions), whole, "{network:?}, {partitions} partitions");
        }
    }
}

/// More partitions than cores run, with the same results, and a warning that says
/// what they cost; as many as the cores run without one.
#[test]
fn more_partitions_than_cores_are_warned_about() {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    // A ring of one output-queued switch more than the cores, one host each.
    let network = temp_file(
        "ring.toml",
        &format!(
            "[network]\nkind = \"torus\"\ndims = [{}]\nhosts_per_switch = 1\n",
            cores + 1
        ),
    );
    let run = |partitions: usize| {
        let out = vesper(&[
            "traffic",
            "--network",
            &network,
            "--load",
            "0.2",
            "--measure",
            "5000",
            "--partitions",
            &partitions.to_string(),
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // The table, without the wall clock's lines below it.
        let stdout: String = String::from_utf8_lossy(&out.stdout).lines().take(3).collect();
        (stdout, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (whole, quiet) = run(1);
    assert!(!quiet.contains("WARN"), "{quiet}");
    let (over, warned) = run(cores + 1);
    assert_eq!(over, whole);
    let expected = format!(
        "--partitions {} on {cores} cores: the partitions take turns on the cores, handing them over at every \
         window",
        cores + 1
    );
    assert!(warned.contains(&expected), "{warned}");
    if cores > 1 {
        let (fitting, quiet) = run(cores);
        assert_eq!(fitting, whole);
        assert!(!quiet.contains("WARN"), "{quiet}");
    }
    let _ = std::fs::remove_file(&network);
}

/// A user's error (a missing file, a bad value) prints its message and causes alone,
/// even with `RUST_BACKTRACE=1` in the environment, as many Rust users have it: a
/// backtrace is for bugs.
#[test]
fn a_user_error_prints_no_backtrace_even_with_rust_backtrace_set() {
    let missing = std::env::temp_dir().join(format!("vesper-{}-missing.dim", std::process::id()));
    let bad_value = temp_file("bad-value.toml", "[network]\nkind = \"crossbar\"\nhosts = 0\n");
    for args in [
        vec!["run", missing.to_str().expect("UTF-8")],
        vec!["topo", "--network", &bad_value],
    ] {
        for backtrace in ["1", "full"] {
            let out = Command::new(env!("CARGO_BIN_EXE_vesper"))
                .args(&args)
                .env("RUST_BACKTRACE", backtrace)
                .env("RUST_LIB_BACKTRACE", backtrace)
                .output()
                .expect("vesper runs");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
            assert!(stderr.starts_with("Error: "), "{args:?}: {stderr}");
            assert!(!stderr.to_lowercase().contains("backtrace"), "{args:?}: {stderr}");
            // A backtrace's frames: `   0: name` then `at path.rs:line`.
            let frame = |l: &str| l.trim_start().starts_with("at ") && l.contains(".rs:");
            assert!(!stderr.lines().any(frame), "{args:?}: {stderr}");
        }
    }
}

/// A negative value reaches the option's own check, which says what it expects, rather
/// than clap's "unexpected argument '-2' found".
#[test]
fn a_negative_value_is_refused_by_what_the_option_expects() {
    assert_refuses(
        &["run", "--link-bandwidth", "-250"],
        "--link-bandwidth -250: expected a positive rate in MB/s",
    );
    assert_refuses(&["traffic", "--load", "-0.5"], "-0.5");
    for args in [&["run", "--link-bandwidth", "-250"][..], &["traffic", "--load", "-0.5"]] {
        let stderr = String::from_utf8_lossy(&vesper(args).stderr).into_owned();
        assert!(!stderr.contains("unexpected argument"), "{args:?}: {stderr}");
    }
}

/// An output at a named pipe no one reads is refused at once, naming it, instead of
/// waiting for ever for a reader; one with its reader there is written.
#[test]
fn an_output_at_a_named_pipe_with_no_reader_is_refused_not_waited_on() {
    let dir = std::env::temp_dir().join(format!("vesper-fifo-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let fifo = dir.join("out.prv");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let fifo = fifo.to_str().expect("UTF-8").to_string();
    for args in [
        vec!["run", "--save-trace", fifo.as_str()],
        vec!["topo", "--dot", fifo.as_str()],
        vec!["run", "--trace", fifo.as_str()],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_vesper"))
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("vesper runs");
        let status = wait_up_to(&mut child, 60);
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .expect("piped")
            .read_to_string(&mut stderr)
            .expect("text");
        assert!(!status.success(), "{args:?}: {stderr}");
        assert!(
            stderr.contains("a FIFO (named pipe) with no reader")
                || stderr.contains("is a FIFO (named pipe): the trace is written whole"),
            "{args:?}: {stderr}"
        );
    }
    // With a reader there, the pipe is written.
    let reader = std::thread::spawn({
        let fifo = fifo.clone();
        move || std::fs::read_to_string(&fifo).expect("the pipe read")
    });
    std::thread::sleep(Duration::from_millis(200));
    let out = vesper(&["topo", "--preset", "crossbar", "--dot", &fifo]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let drawn = reader.join().expect("read");
    assert!(drawn.contains("graph") && drawn.contains("host0"), "{drawn}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The README's eager exchange, then `FINISH`, as a script sends it.
const TRANSCRIPT: &[u8] =
    b"SEND 6500 0 1 7 1024 0x55a873d62cc0 0x55a873d62c60 0 1 0 0\nSTOP 6500\nEND\nSTOP 1000000000\nEND\nFINISH\n";

/// What a fresh server answers to [`TRANSCRIPT`].
const TRANSCRIPT_REPLY: &str = "END\nCOMPLETED SEND 10810 0 1 1024 0x55a873d62cc0 0x55a873d62c60 0 1 6500\nEND\n";

/// The loopback address the tests connect from, and another one: on Linux all of
/// 127.0.0.0/8 is this machine, so a test can play two machines.
const HERE: [u8; 4] = [127, 0, 0, 1];
const ELSEWHERE: [u8; 4] = [127, 0, 0, 2];

/// `vesper serve ARGS` started on a free port: the server, its address, and its log.
fn serve_logged(args: &[&str]) -> (Child, std::net::SocketAddr, Log) {
    let (child, addr, lines) =
        common::start_listening(&[&["serve", "--listen", "127.0.0.1:0", "--spin-us", "0"], args].concat());
    let (sender, log) = channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    (
        child,
        addr,
        Log {
            lines: log,
            seen: Vec::new(),
        },
    )
}

/// A server's log lines, read as they come (so that the server never blocks on a full
/// pipe), and kept.
struct Log {
    lines: Receiver<String>,
    /// the lines so far
    seen: Vec<String>,
}

impl Log {
    /// Waits up to `seconds` for a log line that holds `what` and returns it (a panic that
    /// shows the lines so far if none does).
    #[track_caller]
    fn wait_for(&mut self, what: &str, seconds: u64) -> String {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(what) {
                        return line;
                    }
                }
                Err(e) => panic!(
                    "no log line with `{what}` within {seconds} s ({e}); got:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Whether a line so far holds `what` (without waiting for more).
    fn holds(&mut self, what: &str) -> bool {
        self.seen.extend(self.lines.try_iter());
        self.seen.iter().any(|l| l.contains(what))
    }

    /// The whole log, once the server has exited.
    fn all(mut self) -> String {
        self.seen.extend(self.lines.iter());
        self.seen.join("\n")
    }
}

/// A connection to `addr` from the loopback address `source`.
fn connect_from(source: [u8; 4], addr: std::net::SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("a socket");
    socket
        .bind(&std::net::SocketAddr::from((source, 0)).into())
        .expect("a loopback address to connect from");
    socket.connect(&addr.into()).expect("connects");
    let stream = TcpStream::from(socket);
    stream.set_nodelay(true).expect("nodelay");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    stream
}

/// Sends `bytes` on `stream`, closes its sending side and reads what comes until the
/// server closes: the replies, or nothing at all if the server refused the connection
/// (it closes it at once: the client reads the end, or a reset).
fn script(mut stream: TcpStream, bytes: &[u8]) -> String {
    let sent = stream
        .write_all(bytes)
        .and_then(|()| stream.shutdown(std::net::Shutdown::Write));
    let mut text = String::new();
    match sent.and_then(|()| stream.read_to_string(&mut text)) {
        Ok(_) => text,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::TimedOut => {
            panic!("the server neither answered nor closed the connection within 10 s")
        }
        Err(_) => String::new(),
    }
}

/// How many connections the log says were refused for `flag`: one a line, and the
/// counts of the lines that sum up those not logged one by one.
fn refusals_logged(log: &str, flag: &str) -> u64 {
    log.lines()
        .filter(|l| l.contains(flag) && l.contains("refused"))
        .map(|l| match l.split_once(" more connection") {
            Some((before, _)) => before
                .split_whitespace()
                .last()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0),
            None => 1,
        })
        .sum()
}

/// Whether the server took `stream`, which has sent a batch, as a client that waits
/// for the next run (its log says so), rather than refusing it (it closes it at once).
fn waits_for_the_next_run(stream: &mut TcpStream, log: &mut Log) -> bool {
    let waits = format!("({}): waits for the next run", stream.local_addr().expect("an address"));
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .expect("read timeout");
    let deadline = Instant::now() + Duration::from_secs(10);
    let waiting = loop {
        match stream.read(&mut [0u8; 64]) {
            Ok(0) => break false,
            Ok(_) => panic!("a reply while the run under way goes on"),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                if log.holds(&waits) {
                    break true;
                }
                assert!(Instant::now() < deadline, "neither refused nor waiting");
            }
            Err(_) => break false,
        }
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    waiting
}

/// `n` clients from 127.0.0.1 that each send an empty batch: the first is run 1's
/// client (and, for the server, computes after its reply), the others wait for the next
/// run.
fn hold_clients(addr: std::net::SocketAddr, log: &mut Log, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|k| {
            let mut stream = connect_from(HERE, addr);
            stream.write_all(b"STOP 0\nEND\n").expect("written");
            if k == 0 {
                let mut reply = [0u8; 4];
                stream.read_exact(&mut reply).expect("a reply");
            } else {
                assert!(waits_for_the_next_run(&mut stream, log), "client {} refused", k + 1);
            }
            stream
        })
        .collect()
}

/// Issue 42 item 5: one address gets at most `--max-connections-per-address` clients
/// (by default twice `--clients`, at least 8); more are refused at once, and logged at
/// most once every 10 s with a count, so that a flood of them cannot fill the log. Other
/// addresses still get in, and so does this one once its clients have gone.
#[test]
fn clients_beyond_their_address_s_limit_are_refused_and_other_addresses_get_in() {
    let (mut child, addr, mut log) = serve_logged(&["--keep-serving"]);
    let held = hold_clients(addr, &mut log, 8);
    let flood = 20;
    for n in 0..flood {
        let reply = script(connect_from(HERE, addr), TRANSCRIPT);
        assert_eq!(reply, "", "client {} from 127.0.0.1 served", 9 + n);
    }
    let refused = log.wait_for("refused", 10);
    assert!(
        refused.contains("connection from 127.0.0.1:")
            && refused
                .contains("refused: 8 clients from 127.0.0.1 already connected (--max-connections-per-address 8)"),
        "{refused}"
    );
    let mut other = connect_from(ELSEWHERE, addr);
    other.write_all(TRANSCRIPT).expect("written");
    assert!(waits_for_the_next_run(&mut other, &mut log), "127.0.0.2 refused");
    // Run 1 ends as its client leaves, and every run of those waiting ends at once.
    drop(held);
    let mut text = String::new();
    other.read_to_string(&mut text).expect("its replies");
    assert_eq!(text, TRANSCRIPT_REPLY, "127.0.0.2 served");
    assert_eq!(
        script(connect_from(HERE, addr), TRANSCRIPT),
        TRANSCRIPT_REPLY,
        "127.0.0.1 served again"
    );
    signal(&child, "TERM");
    assert_eq!(wait(&mut child).code(), Some(0), "stopped between runs");
    let all = log.all();
    let lines = all.lines().filter(|l| l.contains("refused")).count();
    // One at once, then a count every 10 s at most, and the last count at the end.
    assert!(lines <= 3, "{flood} refusals took {lines} log lines:\n{all}");
    assert_eq!(
        refusals_logged(&all, "--max-connections-per-address"),
        flood,
        "every refusal is counted:\n{all}"
    );
}

/// Connections that have not spoken do not count against their address's limit: the
/// oldest of them makes room for a new one from there (as for `--max-connections`).
#[test]
fn an_address_s_silent_connections_make_room_for_its_clients() {
    let (mut child, addr, mut log) = serve_logged(&["--keep-serving", "--max-connections-per-address", "2"]);
    let mut silent: Vec<TcpStream> = (0..2).map(|_| connect_from(HERE, addr)).collect();
    assert_eq!(script(connect_from(HERE, addr), TRANSCRIPT), TRANSCRIPT_REPLY);
    let oldest = silent[0].read(&mut [0u8; 8]);
    assert!(
        matches!(&oldest, Ok(0)) || matches!(&oldest, Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset),
        "the oldest is not closed: {oldest:?}"
    );
    let line = log.wait_for("needs its place", 10);
    assert!(
        line.contains("a new connection from 127.0.0.1 needs its place (--max-connections-per-address 2)"),
        "{line}"
    );
    silent.clear();
    signal(&child, "TERM");
    assert_eq!(wait(&mut child).code(), Some(0), "stopped between runs");
}

/// `--max-connections-per-address 0`: no limit, one address may take every connection.
#[test]
fn without_a_limit_per_address_one_address_may_take_every_connection() {
    let (mut child, addr, mut log) = serve_logged(&["--keep-serving", "--max-connections-per-address", "0"]);
    let held = hold_clients(addr, &mut log, 12);
    let mut last = connect_from(HERE, addr);
    last.write_all(TRANSCRIPT).expect("written");
    assert!(waits_for_the_next_run(&mut last, &mut log), "client 13 refused");
    drop(held);
    let mut text = String::new();
    last.read_to_string(&mut text).expect("its replies");
    assert_eq!(text, TRANSCRIPT_REPLY);
    signal(&child, "TERM");
    assert_eq!(wait(&mut child).code(), Some(0), "stopped between runs");
}

/// Issue 42 item 5, scaled down (there `--max-connections 10 --client-timeout 5` kept a
/// clean client out for 51 s, 256 × 60 s at the defaults): connections that each send a
/// well-formed batch and stall part way through the next line fill `--max-connections`
/// while a client holds the run under way. Waiting for the next run, they used to be
/// left unread until their turn, then cost a run of `--client-timeout` each, one after
/// the other. Now a waiting connection is read to the end of the line or batch it
/// started, and dropped if it stalls there: the stalled ones go within about the
/// timeout, at once, and cost no run, while one that sends its batch slowly in pieces
/// stays and is served in its turn, and a clean client gets in.
#[test]
fn connections_that_stall_while_waiting_for_the_next_run_are_dropped_and_cost_no_run() {
    let timeout = 2;
    let (mut child, addr, mut log) = serve_logged(&[
        "--keep-serving",
        "--max-connections",
        "5",
        "--client-timeout",
        &timeout.to_string(),
    ]);
    // A client of run 1 that computes (for the server: it sends nothing after a reply).
    let mut first = LegacyConnection::connect(addr).expect("connects");
    let reply = first
        .exchange(&[
            send(6500.0, 0, 1),
            ClientMessage::Stop(WireTime(6500.0)),
            ClientMessage::End,
        ])
        .expect("reply");
    assert!(reply.completions.is_empty());
    let stalled: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut stream = connect_from(HERE, addr);
            stream
                .write_all(b"SEND 6500 0 1 7 1024 0x1 0x2 0 1 0 0\nSTOP 6500\nEND\nSTOP 65")
                .expect("written");
            stream
        })
        .collect();
    for _ in &stalled {
        log.wait_for("waits for the next run", 10);
    }
    let stalled_at = Instant::now();
    // Live but slow: its batch in pieces, each within the timeout, the whole longer.
    let slow = std::thread::spawn(move || {
        let mut stream = connect_from(HERE, addr);
        let pieces: [&[u8]; 4] = [
            b"SEND 6500 0 1 7 10",
            b"24 0x3 0x4 0 1 0 0\nST",
            b"OP 1000000",
            b"000\nEND\n",
        ];
        for piece in pieces {
            stream.write_all(piece).expect("written");
            std::thread::sleep(Duration::from_millis(900));
        }
        let mut reply = [0u8; 256];
        let n = stream.read(&mut reply).expect("its reply");
        stream.write_all(b"FINISH\n").expect("finish");
        String::from_utf8_lossy(&reply[..n]).into_owned()
    });
    log.wait_for("waits for the next run", 10);
    // Full (--max-connections 5): a clean client is refused (the server closes its
    // connection at once) until the stalled ones go.
    let clean = loop {
        assert!(
            stalled_at.elapsed() < Duration::from_secs(4 * timeout),
            "stalled connections waiting for the next run kept a clean client out for {:?}",
            stalled_at.elapsed()
        );
        let mut stream = connect_from(HERE, addr);
        stream.write_all(TRANSCRIPT).expect("written");
        if waits_for_the_next_run(&mut stream, &mut log) {
            break stream;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    first.finish().expect("finish");
    assert_eq!(
        slow.join().expect("the slow client"),
        "COMPLETED SEND 10810 0 1 1024 0x3 0x4 0 1 6500\nEND\n",
        "served in run 2"
    );
    let mut text = String::new();
    (&clean).read_to_string(&mut text).expect("its replies");
    assert_eq!(text, TRANSCRIPT_REPLY, "served in run 3");
    drop(stalled);
    signal(&child, "TERM");
    assert_eq!(wait(&mut child).code(), Some(0), "stopped between runs");
    let rest = log.all();
    let dropped = rest
        .lines()
        .filter(|l| l.contains("while waiting for the next run") && l.contains("--client-timeout"))
        .count();
    assert_eq!(dropped, 3, "{rest}");
    // The stalled connections had no run of their own.
    let runs = common::reports(&mut child);
    let clients: Vec<_> = runs
        .iter()
        .map(|r| (r["run"].clone(), r["simulation"]["messages"].clone()))
        .collect();
    assert_eq!(
        clients,
        [(1.into(), 1.into()), (2.into(), 1.into()), (3.into(), 1.into())]
    );
}
