//! `vesper run --server HOST:PORT` as a user (or a `replay` container) runs it: against
//! an external `vesper serve` started with the same network, the prediction, the rows
//! and the report are the in-process run's; a server that comes up late is waited for,
//! one that never does is reported after `--server-wait`; what only a server of `run`'s
//! own would use is refused, naming the flag.

mod common;

use std::io::Read as _;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{start, wait_up_to};

/// `vesper run`'s default network, which the external servers must be given.
const RUN_NETWORK: &[&str] = &["--preset", "fat-tree"];

fn pingpong() -> String {
    format!("{}/../examples/pingpong.dim", env!("CARGO_MANIFEST_DIR"))
}

fn pingpong_config() -> String {
    format!("{}/../examples/pingpong.cfg", env!("CARGO_MANIFEST_DIR"))
}

fn vesper(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("vesper runs")
}

/// The JSON `vesper run ARGS --json` printed; panics with its error if it failed.
fn run_json(args: &[&str]) -> serde_json::Value {
    let out = vesper(&[&["run", "--json"], args].concat());
    json_of(&out, args)
}

fn json_of(out: &Output, args: &[&str]) -> serde_json::Value {
    assert!(
        out.status.success(),
        "vesper run {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON result")
}

/// The JSON report a `vesper serve` printed on its standard output, once it has exited.
fn report_of(server: &mut Child) -> serde_json::Value {
    assert!(wait_up_to(server, 10).success(), "the server failed");
    let mut stdout = String::new();
    server
        .stdout
        .take()
        .expect("stdout piped")
        .read_to_string(&mut stdout)
        .expect("a readable report");
    serde_json::from_str(&stdout).expect("a JSON report")
}

/// A loopback port nothing listens on (taken from the system, then freed).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    listener.local_addr().expect("an address").port()
}

/// Replays `args` in process and against an external `vesper serve` with `vesper run`'s
/// network, reached at `host` (`127.0.0.1` or a name), and checks that they agree: the
/// same result but the network's description and the report, which the external server
/// prints itself and which is the in-process one but for wall-clock figures. The
/// external server is also given `server_args`.
fn agrees_with_the_in_process_run(args: &[&str], host: &str, server_args: &[&str]) {
    let in_process = run_json(args);
    let (mut server, addr) = start(&[RUN_NETWORK, server_args].concat());
    let address = format!("{host}:{}", addr.port());
    let external = run_json(&[args, &["--server", &address]].concat());
    assert!(
        in_process["predicted_ns"].as_f64().is_some_and(|ns| ns > 0.0)
            && in_process["tasks"].as_array().is_some_and(|rows| !rows.is_empty()),
        "a prediction and rows to compare: {in_process}"
    );
    // What differs, by design: the network is the server's, and so is the report.
    assert_eq!(external["network"], format!("the server's, at {address}"));
    assert_eq!(external["server"], serde_json::Value::Null);
    let note = external["server_note"].as_str().expect("a note on the report");
    assert!(note.contains(&format!("vesper serve at {address}")), "{note}");
    // The rest, prediction and rows first, is exactly the in-process result.
    assert_eq!(external["predicted_ns"], in_process["predicted_ns"]);
    assert_eq!(external["tasks"], in_process["tasks"]);
    let mut server_report = report_of(&mut server);
    let mut in_process_report = in_process["server"].clone();
    assert!(in_process_report.is_object(), "{in_process}");
    for report in [&mut server_report, &mut in_process_report] {
        report["wall"] = serde_json::Value::Null;
    }
    assert_eq!(
        server_report, in_process_report,
        "the server ran what the in-process one did"
    );
    let without_server = |result: &serde_json::Value| {
        let mut result = result.clone();
        let object = result.as_object_mut().expect("a JSON object");
        for key in ["network", "server", "server_note"] {
            object.remove(key);
        }
        result
    };
    assert_eq!(without_server(&external), without_server(&in_process));
}

#[test]
fn a_trace_against_an_external_server_predicts_as_in_process() {
    agrees_with_the_in_process_run(&[&pingpong()], "127.0.0.1", &[]);
}

#[test]
fn a_trace_with_a_configuration_and_analytic_collectives_predicts_as_in_process() {
    // The configuration's mapping, CPU ratio and collective links are the replay's own
    // (its mapping puts both tasks on one node: the server sees no message).
    agrees_with_the_in_process_run(
        &[
            &pingpong(),
            "--config",
            &pingpong_config(),
            "--collective",
            "all=analytic",
        ],
        "127.0.0.1",
        &[],
    );
}

#[test]
fn a_synthetic_workload_against_a_named_server_predicts_as_in_process() {
    agrees_with_the_in_process_run(&["--workload", "all-to-all", "--tasks", "8"], "localhost", &[]);
}

/// A server with no reply limit writes replies longer than the legacy client's 500-byte
/// read (16 tasks' all-to-all: every completion at once); `vesper run --reply-limit 0`
/// reads them whole, in process and against it, alike.
#[test]
fn replies_without_a_limit_are_read_whole_against_an_external_server() {
    let args = [
        "--workload",
        "all-to-all",
        "--tasks",
        "16",
        "--size",
        "4096",
        "--reply-limit",
        "0",
    ];
    agrees_with_the_in_process_run(&args, "127.0.0.1", &["--reply-limit", "0"]);
}

#[test]
fn the_output_folder_holds_the_in_process_files_but_the_network_trace() {
    let dir = std::env::temp_dir().join(format!("vesper-run-server-{}", std::process::id()));
    let (in_process, external) = (dir.join("in-process"), dir.join("external"));
    let args = ["run", "--workload", "ring", "--tasks", "4"];
    let out = vesper(&[&args[..], &["--output", in_process.to_str().expect("UTF-8")]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (mut server, addr) = start(RUN_NETWORK);
    let address = addr.to_string();
    let out = vesper(
        &[
            &args[..],
            &["--output", external.to_str().expect("UTF-8"), "--server", &address],
        ]
        .concat(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(wait_up_to(&mut server, 10).success());
    for name in ["app.prv", "app.pcf", "app.row"] {
        let read = |dir: &std::path::Path| std::fs::read(dir.join(name)).expect("written");
        assert_eq!(read(&external), read(&in_process), "{name}");
    }
    assert!(in_process.join("network.prv").exists(), "the in-process server's trace");
    assert!(
        !external.join("network.prv").exists(),
        "the external server writes its own"
    );
    let result = std::fs::read_to_string(external.join("result.json")).expect("written");
    assert!(result.contains("\"server\": null"), "{result}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_server_that_starts_after_the_replay_is_waited_for() {
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let args = ["--workload", "all-to-all", "--tasks", "8"];
    let mut replay = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args(["run", "--json", "--server", &address, "--server-wait", "20"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vesper run starts");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        replay.try_wait().expect("waitable").is_none(),
        "vesper run should still be waiting for its server"
    );
    let mut server = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args(["serve", "--listen", &address, "--spin-us", "0"])
        .args(RUN_NETWORK)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("vesper serve starts");
    wait_up_to(&mut replay, 20);
    let out = replay.wait_with_output().expect("its output");
    let external = json_of(&out, &args);
    assert!(wait_up_to(&mut server, 10).success());
    let in_process = run_json(&args);
    assert_eq!(external["predicted_ns"], in_process["predicted_ns"]);
    assert_eq!(external["tasks"], in_process["tasks"]);
}

#[test]
fn no_server_within_the_wait_is_a_clear_error_after_it() {
    let address = format!("127.0.0.1:{}", free_port());
    let started = Instant::now();
    let out = vesper(&["run", "--server", &address, "--server-wait", "1"]);
    let took = started.elapsed();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("--server {address}: no server answered within 1 s: ")),
        "{stderr}"
    );
    assert!(
        (Duration::from_millis(900)..Duration::from_secs(5)).contains(&took),
        "gave up after {took:?}, not after about 1 s"
    );
}

/// `vesper ARGS` fails at once, saying `expected`.
#[track_caller]
fn assert_refuses(args: &[&str], expected: &str) {
    let started = Instant::now();
    let out = vesper(args);
    assert!(!out.status.success(), "{args:?} accepted");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{args:?} waited before refusing"
    );
}

#[test]
fn what_only_an_in_process_server_uses_is_refused_naming_the_flag() {
    // Nothing listens there; the refusals come before any attempt to connect.
    let address = format!("127.0.0.1:{}", free_port());
    let refused = |extra: &[&str], expected: &str| {
        assert_refuses(&[&["run", "--server", address.as_str()][..], extra].concat(), expected);
    };
    let network = "cannot be given with --server: the network is the external server's";
    refused(&["--hosts", "8"], &format!("--hosts {network}"));
    refused(&["--preset", "fat-tree"], &format!("--preset {network}"));
    refused(
        &["--network", "ideal", "--bandwidth", "250"],
        &format!("--network {network}"),
    );
    refused(&["--switch", "wormhole"], &format!("--switch {network}"));
    let trace = "cannot be given with --server: the external server writes its own network trace";
    refused(&["--trace", "net.prv"], &format!("--trace {trace}"));
    refused(&["--trace-stream", "127.0.0.1:9"], &format!("--trace-stream {trace}"));
    refused(
        &[&pingpong(), "--collective", "all=analytic"],
        "--collective all=analytic with --server needs --config FILE.cfg",
    );
    refused(&["--no-server"], "cannot be used with");
}

#[test]
fn the_address_must_be_host_and_port() {
    for address in ["vesper", "vesper:", ":10000", "vesper:0", "vesper:65536", "::1:10000"] {
        assert_refuses(
            &["run", "--server", address],
            &format!("--server {address}: expected HOST:PORT"),
        );
    }
    assert_refuses(&["run", "--server-wait", "3"], "--server <HOST:PORT>");
}

/// Two replays share one server (`--clients 2`) as two applications (`--application`):
/// they contend on the same nodes, and each gets the same prediction whichever starts
/// first. Under one application, the one whose lines come second is refused, and says
/// so: results never depend on which connected first.
#[test]
fn replays_sharing_a_server_each_need_an_application_of_their_own() {
    let alone = run_json(&[pingpong().as_str()])["predicted_ns"]
        .as_f64()
        .expect("a prediction");
    let mut shared = Vec::new();
    for apps in [["0", "1"], ["1", "0"], ["0", "0"]] {
        let (mut server, addr, lines) =
            common::start_listening(&[&["serve", "--listen", "127.0.0.1:0", "--clients", "2"], RUN_NETWORK].concat());
        let log = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>().join("\n"));
        let address = addr.to_string();
        let mut outs = Vec::new();
        for app in apps {
            let replay = Command::new(env!("CARGO_BIN_EXE_vesper"))
                .args(["run", "--json", &pingpong(), "--server", &address, "--application", app])
                .env("RUST_BACKTRACE", "0")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("vesper runs");
            outs.push((app, replay));
            // The first is connected (and has spoken) before the second starts.
            std::thread::sleep(Duration::from_millis(300));
        }
        let outs: Vec<(&str, Output)> = outs
            .into_iter()
            .map(|(app, r)| (app, r.wait_with_output().expect("ends")))
            .collect();
        assert!(wait_up_to(&mut server, 10).success());
        let log = log.join().expect("the log");
        if apps[0] != apps[1] {
            let mut predictions: Vec<(&str, f64)> = outs
                .iter()
                .map(|(app, out)| {
                    let result = json_of(out, &[]);
                    (*app, result["predicted_ns"].as_f64().expect("a prediction"))
                })
                .collect();
            predictions.sort_by(|a, b| a.0.cmp(b.0));
            assert!(
                predictions.iter().all(|&(_, ns)| ns >= alone),
                "{predictions:?} alone {alone}"
            );
            shared.push(predictions);
        } else {
            // The second is refused: its replay fails, the first's is the one alone.
            let refused = &outs[1].1;
            assert_eq!(
                refused.status.code(),
                Some(1),
                "{}\n{log}",
                String::from_utf8_lossy(&refused.stderr)
            );
            assert_eq!(json_of(&outs[0].1, &[])["predicted_ns"].as_f64(), Some(alone));
            assert!(
                log.contains("of application 0 sends for client 0 (")
                    && log.contains("a node of an application must be one client's"),
                "{log}"
            );
        }
    }
    assert_eq!(shared[0], shared[1], "the order of connections changed the predictions");
}

/// A server that never answers, or answers with text that never ends a batch, is given
/// up on after `--server-reply-timeout` with an error that says so, not waited for ever;
/// the value is checked.
#[test]
fn a_server_that_never_ends_a_reply_is_given_up_after_the_reply_timeout() {
    use std::io::{BufRead as _, BufReader, Write as _};
    for answer in ["", "hello\n", "STOP 1\nNOT END\n"] {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        let address = listener.local_addr().expect("an address").to_string();
        let fake = std::thread::spawn(move || {
            let (stream, _) = listener.accept().expect("the replay connects");
            let mut reader = BufReader::new(stream.try_clone().expect("a clone"));
            let mut writer = stream;
            let mut line = String::new();
            // Reads the first batch, answers it with `answer`, then holds the connection.
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && !line.starts_with("END") {
                line.clear();
            }
            let _ = writer.write_all(answer.as_bytes());
            std::thread::sleep(Duration::from_secs(4));
        });
        let started = Instant::now();
        let out = vesper(&["run", &pingpong(), "--server", &address, "--server-reply-timeout", "1"]);
        let took = started.elapsed();
        assert!(!out.status.success(), "{answer:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("no whole reply (a batch ending with END) within the reply timeout (1 s)"),
            "{answer:?}: {stderr}"
        );
        assert!(took < Duration::from_secs(3), "{answer:?}: gave up after {took:?}");
        fake.join().expect("the fake server");
    }
    for bad in ["-1", "x", "nan"] {
        let out = vesper(&["run", "--server", "127.0.0.1:1", "--server-reply-timeout", bad]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains("--server-reply-timeout"),
            "{bad}: {stderr}"
        );
    }
}
