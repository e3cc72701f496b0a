//! The `vesper` binary as a user runs it, for what needs a process of its own: start,
//! serve a client, report, stop (servers on sockets, signals, exit statuses, open
//! files), the server's log, runs that must end within a time limit, a reader that
//! stops early, and `bench model --of-saturation`, which runs the binary again. The
//! commands called in the test's own process are in tests/commands.rs.

mod common;

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

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
        let mut stdout = String::new();
        child
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut stdout)
            .expect("stdout");
        let runs: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
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
    let mut stream = std::net::TcpStream::connect(addr).expect("connects");
    let batches = "STOP 1\nEND\n".repeat(200_000) + "FINISH\n";
    std::io::Write::write_all(&mut stream, batches.as_bytes()).expect("written");
    stream.shutdown(std::net::Shutdown::Write).expect("shutdown");
    let start = std::time::Instant::now();
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
/// gives, on packet switches and on wormhole switches stepping flit by flit (bubble
/// flow control on the torus).
#[test]
fn a_split_server_serves_several_clients_as_the_network_whole() {
    let workloads: [&[&str]; 2] = [
        &["--workload", "all-to-all", "--tasks", "8", "--size", "20000"],
        &["--workload", "random", "--tasks", "8", "--messages", "200"],
    ];
    let networks: [&[&str]; 3] = [
        &["--preset", "kary-ntree"],
        &["--preset", "fat-tree", "--granularity", "fine"],
        &["--preset", "torus-3d", "--granularity", "fine"],
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
