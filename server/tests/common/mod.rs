//! What the tests of the `vesper` binary share: starting a server on a free port and
//! waiting for it with a limit, network files to read.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Lines, Read};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use vesper_protocol::{ClientMessage, DataMessage, Token, WireTime};

/// Starts `vesper serve` on a free port and returns it with its address, read from
/// its "listening on" log line.
pub fn start(extra: &[&str]) -> (Child, SocketAddr) {
    let (child, addr, lines) =
        start_listening(&[&["serve", "--listen", "127.0.0.1:0", "--spin-us", "0"], extra].concat());
    // Keep draining the log so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

/// [`start`], the server's log lines coming through a channel as they are written
/// (for [`wait_for_log`]).
pub fn start_logged(extra: &[&str]) -> (Child, SocketAddr, Receiver<String>) {
    let (child, addr, lines) =
        start_listening(&[&["serve", "--listen", "127.0.0.1:0", "--spin-us", "0"], extra].concat());
    (child, addr, log_channel(lines))
}

/// The log lines of a process, sent as they come; read until the process closes its
/// standard error, so that it never blocks on a full pipe.
pub fn log_channel(lines: Lines<BufReader<ChildStderr>>) -> Receiver<String> {
    let (sender, log) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    log
}

/// Waits up to `within`, in all, for a log line that holds `what`; the lines up to
/// it, it included.
pub fn wait_for_log(log: &Receiver<String>, what: &str, within: Duration) -> String {
    let end = Instant::now() + within;
    let mut seen = String::new();
    loop {
        match log.recv_timeout(end.saturating_duration_since(Instant::now())) {
            Ok(line) => {
                seen.push_str(&line);
                seen.push('\n');
                if line.contains(what) {
                    return seen;
                }
            }
            Err(e) => panic!("no log line with `{what}` within {within:?} ({e}); got:\n{seen}"),
        }
    }
}

/// Starts `vesper ARGS` (a command that listens, logging "listening on ADDR") and
/// returns it, its address and the rest of its log, which the caller must drain.
pub fn start_listening(args: &[&str]) -> (Child, SocketAddr, Lines<BufReader<ChildStderr>>) {
    listening(Command::new(env!("CARGO_BIN_EXE_vesper")), args)
}

/// [`start_listening`] with `command` (the binary, or `mpirun` running it).
pub fn listening(mut command: Command, args: &[&str]) -> (Child, SocketAddr, Lines<BufReader<ChildStderr>>) {
    let mut child = command
        .args(args)
        .env("VESPER_LOG", "info")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vesper starts");
    let stderr = child.stderr.take().expect("stderr piped");
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines.next().expect("a log line").expect("readable log");
        if let Some(rest) = line.split("listening on ").nth(1) {
            let addr = rest.split(';').next().expect("an address");
            break addr.trim().parse().expect("a socket address");
        }
    };
    (child, addr, lines)
}

/// A SEND of `size` bytes from `src` to `dst` at `time` \[ns\], tagged 7.
pub fn send_bytes(time: f64, src: u32, dst: u32, size: u32) -> ClientMessage {
    ClientMessage::Send(DataMessage {
        time: WireTime(time),
        src,
        dst,
        tag: Some(7),
        size,
        ev: Token::new("0x55a873d62cc0").expect("token"),
        ev_out: Token::new("0x55a873d62c60").expect("token"),
        src_repeat: src,
        dst_repeat: dst,
        src_app: 0,
        dst_app: 0,
    })
}

/// Its exit status, or a panic if it runs for more than `seconds` (then it is killed).
pub fn wait_up_to(child: &mut Child, seconds: u64) -> std::process::ExitStatus {
    for _ in 0..seconds * 100 {
        if let Some(status) = child.try_wait().expect("waitable") {
            return status;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    panic!("vesper did not exit within {seconds} s");
}

/// Sends `signal` (`TERM`, `INT`) to `child`.
pub fn signal(child: &Child, signal: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill -{signal} failed");
}

/// The network trace `STEM.prv` in `dir` and its `.pcf` and `.row`.
pub fn trace_files(dir: &Path, stem: &str) -> [String; 3] {
    ["prv", "pcf", "row"].map(|ext| {
        let file = dir.join(format!("{stem}.{ext}"));
        std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
    })
}

/// Asserts that two network traces ([`trace_files`]) are the same, file for file.
pub fn assert_same_trace(got: &[String; 3], expected: &[String; 3], what: &str) {
    for (ext, (a, b)) in ["prv", "pcf", "row"].iter().zip(got.iter().zip(expected)) {
        assert!(a == b, "{what}: the .{ext} differs");
    }
}

/// Writes the kary-ntree preset in `dir` as a map with a route file of two paths a pair
/// (its d-mod-k and its s-mod-k routes, one file after the other); returns the map's
/// path and the routes' path.
pub fn map_with_two_paths_a_pair(dir: &Path) -> (String, String) {
    let path = |name: &str| dir.join(name).to_str().expect("UTF-8 path").to_string();
    let (map, routes) = (path("tree.map"), path("both.routes"));
    let mut both = String::new();
    for routing in ["d-mod-k", "s-mod-k"] {
        let file = path(&format!("{routing}.routes"));
        let out = Command::new(env!("CARGO_BIN_EXE_vesper"))
            .args(["topo", "--preset", "kary-ntree", "--routing", routing])
            .args(["--write-map", &map, "--write-routes", &file])
            .output()
            .expect("vesper starts");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let written = std::fs::read_to_string(&file).expect("routes written");
        // A header line, then every pair's routes.
        let skip = usize::from(!both.is_empty());
        both.extend(written.lines().skip(skip).map(|l| format!("{l}\n")));
    }
    std::fs::write(&routes, both).expect("writable dir");
    (map, routes)
}

/// `vesper serve NETWORK --clients N`, started by `server` (the binary, or `mpirun`
/// running it), serving the `vesper run` replays of `workloads`, each connected once
/// the one before is (their order decides their hosts): their predictions, in that
/// order.
pub fn served(server: Command, network: &[&str], workloads: &[&[&str]]) -> Vec<serde_json::Value> {
    let clients = workloads.len().to_string();
    let serve = [
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--spin-us",
            "0",
            "--clients",
            &clients,
        ][..],
        network,
    ]
    .concat();
    let (mut server, addr, mut log) = listening(server, &serve);
    let mut wait_for = |text: &str| loop {
        let line = log.next().expect("a log line").expect("readable log");
        if line.contains(text) {
            break;
        }
    };
    let addr = addr.to_string();
    let mut children = Vec::new();
    for (k, workload) in workloads.iter().enumerate() {
        if k > 0 {
            wait_for(&format!("client {} connected", k - 1));
        }
        let child = Command::new(env!("CARGO_BIN_EXE_vesper"))
            .args(
                [
                    &["run", "--json", "--server", &addr, "--application", &k.to_string()],
                    *workload,
                ]
                .concat(),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("a client starts");
        children.push(child);
    }
    let drained = std::thread::spawn(move || log.map_while(Result::ok).collect::<Vec<_>>().join("\n"));
    let predictions = children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().expect("the client ends");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "a client: {stderr}");
            let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
                panic!(
                    "a client: not one JSON document ({e}): {}",
                    String::from_utf8_lossy(&out.stdout)
                )
            });
            report["predicted_ns"].clone()
        })
        .collect();
    let status = server.wait().expect("the server ends");
    let log = drained.join().expect("log read");
    assert!(status.success(), "{log}");
    predictions
}

/// The JSON lines an exited server wrote on its standard output: one report a run.
pub fn reports(server: &mut Child) -> Vec<serde_json::Value> {
    use std::io::Read as _;
    let mut stdout = String::new();
    server
        .stdout
        .take()
        .expect("stdout piped")
        .read_to_string(&mut stdout)
        .expect("reports");
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// A trace's own count of what crossed each link (`FILE.prv` or `FILE.prv.gz`, its
/// `.row` beside it), from its text: per (sending
/// port, receiving port) of its communication records, the sum of their sizes; a
/// record between two hosts' ports is end to end, not a link.
pub fn trace_link_bytes(prv: &Path) -> BTreeMap<(String, String), u64> {
    let file = std::fs::File::open(prv).expect("the trace");
    let mut text = String::new();
    let gzip = prv.extension().is_some_and(|e| e == "gz");
    if gzip {
        flate2::read::MultiGzDecoder::new(file).read_to_string(&mut text)
    } else {
        BufReader::new(file).read_to_string(&mut text)
    }
    .expect("the trace's text");
    let base = if gzip {
        prv.with_extension("")
    } else {
        prv.to_path_buf()
    };
    let row = std::fs::read_to_string(base.with_extension("row")).expect("the .row");
    let threads: Vec<&str> = row
        .split("LEVEL THREAD SIZE ")
        .nth(1)
        .expect("threads")
        .lines()
        .skip(1)
        .collect();
    let header = text.lines().next().expect("a header");
    let tasks = header.rsplit_once('(').expect("tasks").1.trim_end_matches(')');
    let mut first = vec![0usize];
    for task in tasks.split(',') {
        let n: usize = task.split(':').next().and_then(|n| n.parse().ok()).expect("threads");
        first.push(first.last().expect("a first") + n);
    }
    let name = |task: &str, thread: &str| {
        let (task, thread): (usize, usize) = (task.parse().expect("a task"), thread.parse().expect("a thread"));
        threads[first[task - 1] + thread - 1].to_string()
    };
    let mut bytes = BTreeMap::new();
    for record in text.lines().filter(|l| l.starts_with("3:")) {
        let f: Vec<&str> = record.split(':').collect();
        let (from, to) = (name(f[3], f[4]), name(f[9], f[10]));
        if from.starts_with("host") && to.starts_with("host") {
            continue;
        }
        *bytes.entry((from, to)).or_insert(0) += f[13].parse::<u64>().expect("a size");
    }
    bytes
}
