//! `vesper view` as a user runs it: on a trace `vesper run --trace` wrote, its JSON
//! endpoints hold every link the trace shows with the bytes the trace says, and the
//! busiest link is the trace's; a broken trace is a message on the page, not a crash.
//! Live (`--listen-trace`): a run streamed into it is the same run as its file, each
//! stream of a server that keeps serving is a run, the last `--keep-runs` are kept,
//! and a cut stream or a connection that is no stream leaves a message and the
//! listener accepting.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use common::{log_channel, send_bytes, signal, start, start_listening, wait_for_log, wait_up_to};
use serde_json::Value;
use vesper_client_dimemas_adapter::LegacyConnection;
use vesper_protocol::{ClientMessage, WireTime};

/// A fresh scratch directory for `name`.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vesper-view-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// `vesper view ARGS` serving on a free port; its address.
struct Viewer {
    child: Child,
    addr: SocketAddr,
}

/// `vesper view --listen-trace` on free ports: the page's address, the streams' and
/// its log.
struct Live {
    viewer: Viewer,
    streams: SocketAddr,
    log: Receiver<String>,
}

impl Live {
    fn start(args: &[&str]) -> Live {
        let mut child = Command::new(env!("CARGO_BIN_EXE_vesper"))
            .args(["view", "--http", "127.0.0.1:0", "--listen-trace", "127.0.0.1:0"])
            .args(args)
            .env("VESPER_LOG", "debug")
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("vesper starts");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr piped")).lines();
        let line = loop {
            let line = lines.next().expect("a log line").expect("readable log");
            if line.contains("listening on ") {
                break line;
            }
        };
        let after = |word: &str, end: char| -> SocketAddr {
            let rest = line.split(word).nth(1).expect("an address");
            rest.split(end)
                .next()
                .expect("an address")
                .trim()
                .parse()
                .expect("a socket address")
        };
        let (addr, streams) = (after("listening on ", ';'), after("--trace-stream ", ')'));
        Live {
            viewer: Viewer { child, addr },
            streams,
            log: log_channel(lines),
        }
    }

    /// `/api/runs` once `done` holds of it (waits up to 20 s).
    fn runs_until(&self, done: impl Fn(&Value) -> bool) -> Value {
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            let runs = self.viewer.json("/api/runs");
            if done(&runs) {
                return runs;
            }
            assert!(Instant::now() < end, "not there after 20 s: {runs}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `bytes` as a connection to the streams' address, then closes it.
    fn send(&self, bytes: &[u8]) {
        let mut socket = TcpStream::connect(self.streams).expect("the view accepts streams");
        socket.write_all(bytes).expect("sent");
    }
}

impl Viewer {
    fn start(args: &[&str]) -> Viewer {
        let (child, addr, lines) = start_listening(&[&["view", "--http", "127.0.0.1:0"], args].concat());
        std::thread::spawn(move || for _ in lines {});
        Viewer { child, addr }
    }

    /// `GET path`: the status code, the content type and the body.
    fn get(&self, path: &str) -> (u16, String, String) {
        let mut socket = TcpStream::connect(self.addr).expect("vesper view accepts");
        socket
            .set_read_timeout(Some(Duration::from_secs(20)))
            .expect("a timeout");
        write!(socket, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").expect("a request");
        let mut answer = String::new();
        socket.read_to_string(&mut answer).expect("an answer");
        let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
        let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status");
        let content_type = head
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-type: ").map(String::from))
            .unwrap_or_default();
        (status, content_type, body.to_string())
    }

    fn json(&self, path: &str) -> Value {
        let (status, content_type, body) = self.get(path);
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(content_type, "application/json");
        serde_json::from_str(&body).expect("JSON")
    }

    /// `/api/trace` once the trace has been read (waits up to 20 s).
    fn trace(&self) -> Value {
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            let trace = self.json("/api/trace");
            if trace["loading"] == false {
                return trace;
            }
            assert!(Instant::now() < end, "still reading the trace after 20 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `vesper run` of a 16-task all-to-all of 20,000-byte messages on the kary-ntree
/// preset (a 4-ary 3-tree of 64 hosts) with `extra` arguments, its network trace (with
/// end-to-end records) in `dir/net.prv.gz`.
fn run_traced(dir: &Path, extra: &[&str]) -> PathBuf {
    let prv = dir.join("net.prv.gz");
    let out = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args([
            "run",
            "--preset",
            "kary-ntree",
            "--tasks",
            "16",
            "--size",
            "20000",
            "--trace-end-to-end",
        ])
        .args(extra)
        .arg("--trace")
        .arg(&prv)
        .output()
        .expect("vesper runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    prv
}

#[test]
fn the_page_holds_every_link_of_the_trace_and_its_busiest() {
    let dir = scratch("links");
    let prv = run_traced(&dir, &[]);
    let expected = common::trace_link_bytes(&prv);
    assert!(expected.len() > 20, "{expected:?}");
    let viewer = Viewer::start(&[prv.to_str().expect("a UTF-8 path")]);
    let trace = viewer.trace();
    assert_eq!(trace["problem"], Value::Null, "{trace}");
    assert_eq!(trace["records"]["end_to_end_communications"], 16 * 15);

    // Every link, with the trace's bytes; from the trace's topology (net.topology)
    // the idle ones too: both directions of every cable of the 4-ary 3-tree.
    let links = trace["links"].as_array().expect("links");
    let served: BTreeMap<(String, String), u64> = links
        .iter()
        .map(|l| {
            let name = |k: &str| l[k].as_str().expect("a port").to_string();
            ((name("from"), name("to")), l["bytes"].as_u64().expect("bytes"))
        })
        .filter(|(_, bytes)| *bytes > 0)
        .collect();
    assert_eq!(served, expected);
    let cables = vesper_netmodels::Xgft::kary_ntree(4, 3).expect("a tree").links();
    assert_eq!(links.len() as u64, 2 * cables);
    assert_eq!(trace["topology"], "xgft(3; 4,4,4; 1,4,4)", "{trace}");
    assert!(links.iter().all(|l| l["mbs"] == 250.0), "the model's default rate");

    // Drawn by levels: hosts at 0, and every link joins neighbouring levels (a tree).
    let devices = trace["devices"].as_array().expect("devices");
    for d in devices {
        assert_eq!(d["host"] == true, d["level"] == 0, "{d}");
    }
    let level = |i: &Value| devices[i.as_u64().expect("an index") as usize]["level"].as_u64();
    for l in links {
        let (a, b) = (
            level(&l["from_device"]).expect("a level"),
            level(&l["to_device"]).expect("a level"),
        );
        assert_eq!(a.abs_diff(b), 1, "{l}");
    }

    // The whole run as one window: each link's bins add up to its bytes, and the
    // busiest link is the trace's.
    let window = viewer.json("/api/window?bins=true");
    let bytes = window["bytes"].as_array().expect("bytes");
    let bins = window["bins"].as_array().expect("bins");
    assert_eq!((bytes.len(), bins.len()), (links.len(), links.len()));
    for ((link, b), bins) in links.iter().zip(bytes).zip(bins) {
        let sum: u64 = bins
            .as_array()
            .expect("bins")
            .iter()
            .map(|b| b.as_u64().expect("a bin"))
            .sum();
        assert_eq!(Some(sum), b.as_u64(), "{link}");
        assert_eq!(link["bytes"], *b);
    }
    assert_eq!(
        (window["from_ns"].as_u64(), window["to_ns"].as_u64()),
        (Some(0), trace["end_ns"].as_u64())
    );
    let most = *expected.values().max().expect("links");
    let top = window["top"].as_array().expect("the busiest links");
    assert_eq!(top.len(), 10);
    assert_eq!(top[0]["bytes"].as_u64(), Some(most), "{top:?}");
    for (rank, l) in top.iter().enumerate() {
        let key = (
            l["from"].as_str().expect("a port").to_string(),
            l["to"].as_str().expect("a port").to_string(),
        );
        assert_eq!(l["bytes"].as_u64(), Some(expected[&key]), "{l}");
        assert_eq!(l["bytes"], bytes[l["link"].as_u64().expect("an index") as usize]);
        if rank > 0 {
            assert!(top[rank - 1]["bytes"].as_u64() >= l["bytes"].as_u64(), "{top:?}");
        }
    }

    // A window of one bin holds that bin.
    let bin_ns = trace["bin_ns"].as_u64().expect("a width");
    let one = viewer.json(&format!(
        "/api/window?from_ns={}&to_ns={}&bins=true",
        3 * bin_ns,
        3 * bin_ns + 1
    ));
    assert_eq!(one["to_ns"].as_u64(), Some(4 * bin_ns));
    for (b, all) in one["bytes"].as_array().expect("bytes").iter().zip(bins) {
        assert_eq!(*b, all[3]);
    }
}

#[test]
fn the_page_and_its_script_are_served_and_nothing_else() {
    let dir = scratch("page");
    let prv = run_traced(&dir, &[]);
    let viewer = Viewer::start(&[prv.to_str().expect("a UTF-8 path")]);
    let (status, content_type, page) = viewer.get("/");
    assert_eq!((status, content_type.as_str()), (200, "text/html; charset=utf-8"));
    assert!(page.contains(r#"<canvas id="network""#) && page.contains(r#"<script src="/view.js">"#));
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "fetches nothing from elsewhere"
    );
    let (status, content_type, script) = viewer.get("/view.js");
    assert_eq!((status, content_type.as_str()), (200, "text/javascript; charset=utf-8"));
    assert!(script.contains("/api/window"));
    assert!(!script.contains("http://") && !script.contains("https://"));
    for path in ["/net.prv.gz", "/../net.row", "/api", "/api/trace/../../etc/passwd"] {
        assert_eq!(viewer.get(path).0, 404, "{path}");
    }
    assert_eq!(viewer.get("/api/window?from_ns=-1").0, 400);
}

/// A trace broken in its middle is shown as far as it goes, with a message that names
/// the file and the line; the page is still served.
#[test]
fn a_broken_trace_is_a_message_on_the_page() {
    let dir = scratch("broken");
    let prv = dir.join("net.prv");
    std::fs::write(
        &prv,
        "#Paraver (01/01/2026 at 00:00):100_ns:0:1:2(1:0,2:0)\n\
         3:0:1:1:1:0:0:0:1:2:1:5:9:10:1\n\
         3:0:1:1:1:9:9:0:1:2:1:15:19:1\n\
         3:0:1:1:1:20:20:0:1:2:1:25:29:10:3\n",
    )
    .expect("a trace");
    std::fs::write(
        dir.join("net.row"),
        "LEVEL TASK SIZE 2\nhost0\nsw0\n\nLEVEL THREAD SIZE 3\nhost0.p0\nsw0.p0\nsw0.p1\n",
    )
    .expect("a .row");
    let viewer = Viewer::start(&[prv.to_str().expect("a UTF-8 path")]);
    let trace = viewer.trace();
    let problem = trace["problem"].as_str().expect("a problem");
    assert!(problem.ends_with("net.prv line 3: expected a state (1, 8 fields), an event (2, 8 or more) or a communication (3, 15): `3:0:1:1:1:9:9:0:1:2:1:15:19:1`"), "{problem}");
    assert_eq!(trace["links"][0]["bytes"], 10);
    assert_eq!(viewer.get("/").0, 200);
}

#[test]
fn a_trace_that_cannot_be_opened_or_an_address_that_cannot_be_bound_is_refused() {
    let dir = scratch("refused");
    let vesper = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_vesper"))
            .arg("view")
            .args(args)
            .output()
            .expect("vesper runs");
        assert!(!out.status.success(), "{args:?} accepted");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let missing = dir.join("missing.prv");
    let stderr = vesper(&[missing.to_str().expect("a UTF-8 path")]);
    assert!(stderr.contains("missing.prv: No such file"), "{stderr}");
    let stderr = vesper(&["net.txt"]);
    assert!(
        stderr.contains("net.txt: expected a network trace FILE.prv or FILE.prv.gz"),
        "{stderr}"
    );
    std::fs::write(dir.join("net.prv"), "").expect("a .prv");
    let prv = dir.join("net.prv");
    let stderr = vesper(&[prv.to_str().expect("a UTF-8 path")]);
    assert!(stderr.contains("net.row: No such file"), "{stderr}");
    std::fs::write(dir.join("net.row"), "").expect("a .row");
    let stderr = vesper(&[prv.to_str().expect("a UTF-8 path"), "--http", "256.0.0.1:80"]);
    assert!(stderr.contains("--http 256.0.0.1:80: cannot listen there"), "{stderr}");
    let stderr = vesper(&[prv.to_str().expect("a UTF-8 path"), "--link-bandwidth", "0"]);
    assert!(stderr.contains("expected a positive number of MB/s"), "{stderr}");
}

/// A trace's text, with its ports' names.
struct TraceText {
    text: String,
    threads: Vec<String>,
    /// per task (1-based): its first thread (0-based)
    first: Vec<usize>,
}

impl TraceText {
    fn read(prv: &Path, row: Option<&Path>) -> TraceText {
        let text = std::fs::read_to_string(prv).expect("the trace");
        let threads = row.map_or_else(Vec::new, |row| {
            let row = std::fs::read_to_string(row).expect("the .row");
            let names = row.split("LEVEL THREAD SIZE ").nth(1).expect("threads");
            names.lines().skip(1).map(String::from).collect()
        });
        let header = text.lines().next().expect("a header");
        let tasks = header.rsplit_once('(').expect("tasks").1.trim_end_matches(')');
        let mut first = vec![0usize, 0];
        for task in tasks.split(',') {
            let n: usize = task.split(':').next().and_then(|n| n.parse().ok()).expect("threads");
            first.push(first.last().expect("a first") + n);
        }
        TraceText { text, threads, first }
    }

    /// The 0-based thread of a record's task and thread fields.
    fn thread(&self, task: &str, thread: &str) -> usize {
        let (task, thread): (usize, usize) = (task.parse().expect("a task"), thread.parse().expect("a thread"));
        self.first[task] + thread - 1
    }

    fn records(&self, kind: &str) -> impl Iterator<Item = Vec<&str>> {
        let prefix = format!("{kind}:");
        self.text
            .lines()
            .filter(move |l| l.starts_with(&prefix))
            .map(|l| l.split(':').collect())
    }
}

/// `vesper run` of a 16-task all-to-all on the kary-ntree preset with wormhole switches
/// (STOP/GO flow control), its outputs in `dir`: `network.prv` and `app.prv`.
fn run_wormhole(dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args([
            "run",
            "--preset",
            "kary-ntree",
            "--switch",
            "wormhole",
            "--tasks",
            "16",
            "--size",
            "20000",
        ])
        .arg("--output")
        .arg(dir)
        .arg("--trace")
        .arg(dir.join("network.prv"))
        .output()
        .expect("vesper runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The panels' routes against the trace's own text: a link's messages are its
/// records (all counted; those kept add up to its bytes when none were dropped), a
/// port's STOP/GO/head-of-line/bubble-wait counts are its event records, and each
/// task's state time is its state records' time in `app.prv`.
#[test]
fn the_panels_hold_a_links_messages_a_ports_events_and_the_tasks_states() {
    let dir = scratch("detail");
    run_wormhole(&dir);
    let net = TraceText::read(&dir.join("network.prv"), Some(&dir.join("network.row")));
    let app_path = dir.join("app.prv");
    let viewer = Viewer::start(&[
        dir.join("network.prv").to_str().expect("a UTF-8 path"),
        "--app",
        app_path.to_str().expect("a UTF-8 path"),
    ]);
    let trace = viewer.trace();
    assert_eq!(trace["problem"], Value::Null, "{trace}");

    // A link's messages: per (from, to) port, the records' (tag, size).
    let mut records: BTreeMap<(String, String), Vec<(u64, u64)>> = BTreeMap::new();
    for f in net.records("3") {
        let (from, to) = (
            &net.threads[net.thread(f[3], f[4])],
            &net.threads[net.thread(f[9], f[10])],
        );
        let message = (f[14].parse().expect("a tag"), f[13].parse().expect("a size"));
        records.entry((from.clone(), to.clone())).or_default().push(message);
    }
    let links = trace["links"].as_array().expect("links");
    let mut whole = 0;
    for (i, link) in links.iter().enumerate() {
        let m = viewer.json(&format!("/api/link?link={i}"));
        let key = (
            link["from"].as_str().expect("a port").to_string(),
            link["to"].as_str().expect("a port").to_string(),
        );
        assert_eq!((&m["from"], &m["to"]), (&link["from"], &link["to"]));
        // A link of the topology that carried nothing has no record.
        let text = records.get(&key).map_or(&[][..], Vec::as_slice);
        assert_eq!(m["messages"].as_u64(), Some(text.len() as u64), "{m}");
        assert_eq!(m["bytes"], link["bytes"]);
        let listed = m["listed"].as_array().expect("messages");
        for l in listed {
            let message = (
                l["tag"].as_u64().expect("a tag"),
                l["size_bytes"].as_u64().expect("a size"),
            );
            assert!(text.contains(&message), "{l} is no record of {key:?}");
        }
        if m["kept"].as_u64() == m["messages"].as_u64() {
            whole += 1;
            let sum: u64 = listed.iter().map(|l| l["size_bytes"].as_u64().expect("a size")).sum();
            assert_eq!(Some(sum), link["bytes"].as_u64(), "{m}");
        } else {
            assert!(m["kept"].as_u64() < m["messages"].as_u64(), "{m}");
        }
    }
    assert!(whole > 0, "no link kept all its messages");

    // In a window, the messages with bytes on the link in it: from the first byte
    // leaving (physical send) to the last arriving (physical receive).
    let bin_ns = trace["bin_ns"].as_u64().expect("a width");
    let mut on: BTreeMap<(String, String), Vec<(u64, u64)>> = BTreeMap::new();
    for f in net.records("3") {
        let (from, to) = (
            &net.threads[net.thread(f[3], f[4])],
            &net.threads[net.thread(f[9], f[10])],
        );
        let (send, receive): (u64, u64) = (f[6].parse().expect("a time"), f[12].parse().expect("a time"));
        on.entry((from.clone(), to.clone()))
            .or_default()
            .push((send, receive.saturating_sub(1).max(send)));
    }
    let mut seen = 0;
    for (i, link) in links.iter().enumerate() {
        let m = viewer.json(&format!(
            "/api/link?link={i}&from_ns={}&to_ns={}",
            40 * bin_ns + 3,
            56 * bin_ns
        ));
        let (a, b) = (
            m["from_ns"].as_u64().expect("a start"),
            m["to_ns"].as_u64().expect("an end"),
        );
        assert_eq!((a, b), (40 * bin_ns, 56 * bin_ns));
        let key = (
            link["from"].as_str().expect("a port").to_string(),
            link["to"].as_str().expect("a port").to_string(),
        );
        let expected = on
            .get(&key)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter(|&&(send, last)| send < b && last >= a)
            .count() as u64;
        assert_eq!(m["messages"].as_u64(), Some(expected), "{m}");
        seen += expected;
    }
    assert!(seen > 0);

    // A port's events: per port, STOP, GO, head-of-line and bubble-wait starts.
    let mut events: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    for f in net.records("2") {
        let port = &net.threads[net.thread(f[3], f[4])];
        for pair in f[6..].chunks(2) {
            let kind = match (pair[0], pair[1]) {
                ("70000001" | "70000002", "1") => 0,
                ("70000001" | "70000002", "2") => 1,
                ("70000003", "1") => 2,
                ("70000007", "1") => 3,
                _ => continue,
            };
            events.entry(port.clone()).or_default()[kind] += 1;
        }
    }
    let stops: u64 = events.values().map(|e| e[0]).sum();
    assert!(stops > 0, "a wormhole all-to-all sends STOP");
    for (port, counts) in &events {
        let p = viewer.json(&format!("/api/port?port={port}"));
        let totals = &p["totals"];
        assert_eq!(
            [&totals["stop"], &totals["go"], &totals["hol"], &totals["wait"]].map(|v| v.as_u64().expect("a count")),
            *counts,
            "{port}"
        );
        let per_bin: u64 = p["marks"]["stop"]
            .as_array()
            .expect("bins")
            .iter()
            .map(|c| c.as_u64().expect("a count"))
            .sum();
        assert_eq!(per_bin, counts[0]);
        assert_eq!(
            p["max_level"].as_array().expect("bins").len(),
            trace["bins"].as_u64().expect("bins") as usize
        );
    }

    // The tasks' states: each thread's time is its state records' time.
    let app = TraceText::read(&app_path, None);
    let mut state_ns = vec![0u64; app.first.last().copied().expect("threads")];
    for f in app.records("1") {
        let (begin, end): (u64, u64) = (f[5].parse().expect("a time"), f[6].parse().expect("a time"));
        state_ns[app.thread(f[3], f[4])] += end - begin;
    }
    let states = viewer.json("/api/app");
    assert_eq!(states["problem"], Value::Null, "{states}");
    let threads = states["threads"].as_array().expect("threads");
    assert_eq!(threads.len(), 16);
    for (thread, expected) in threads.iter().zip(&state_ns) {
        let sum: u64 = thread["time_ns"]
            .as_array()
            .expect("times")
            .iter()
            .map(|t| t.as_u64().expect("ns"))
            .sum();
        assert_eq!(sum, *expected, "{}", thread["name"]);
        assert!(*expected > 0);
    }
    assert!(
        states["states"]
            .as_array()
            .expect("states")
            .iter()
            .all(|s| s["name"].as_str().is_some_and(|n| !n.starts_with("state "))),
        "the .pcf names them"
    );

    // The panels' script, and what is not there.
    let (status, content_type, script) = viewer.get("/detail.js");
    assert_eq!((status, content_type.as_str()), (200, "text/javascript; charset=utf-8"));
    assert!(script.contains("/api/link") && !script.contains("http://") && !script.contains("https://"));
    assert_eq!(viewer.get(&format!("/api/link?link={}", links.len())).0, 404);
    assert_eq!(viewer.get("/api/link").0, 400);
    assert_eq!(viewer.get("/api/port?port=nowhere.p0").0, 404);
}

/// An application trace that cannot be read is a message on the page; without
/// `--app` there is none to ask for.
#[test]
fn a_broken_or_missing_application_trace_is_a_message_on_the_page() {
    let dir = scratch("app-broken");
    let prv = run_traced(&dir, &[]);
    let prv = prv.to_str().expect("a UTF-8 path");
    let junk = dir.join("app.prv");
    std::fs::write(
        &junk,
        "#Paraver (01/01/2026 at 00:00):100_ns:0:1:1(1:0)\n1:0:1:1:1:0:50:1\n1:0:1:1:1:50:999:3\n",
    )
    .expect("an app trace");
    let missing = dir.join("gone.prv");
    for (app, expected) in [
        (
            &junk,
            "app.prv line 3: a state ending at 999 ns, after the header's end (100 ns)",
        ),
        (&missing, "gone.prv: No such file"),
    ] {
        let viewer = Viewer::start(&[prv, "--app", app.to_str().expect("a UTF-8 path")]);
        let end = Instant::now() + Duration::from_secs(20);
        let states = loop {
            let states = viewer.json("/api/app");
            if states["loading"] == false {
                break states;
            }
            assert!(Instant::now() < end, "still reading after 20 s");
            std::thread::sleep(Duration::from_millis(20));
        };
        let problem = states["problem"].as_str().expect("a problem");
        assert!(problem.contains(expected), "{problem}");
        assert_eq!(viewer.get("/").0, 200);
        assert_eq!(viewer.trace()["problem"], Value::Null);
    }
    let viewer = Viewer::start(&[prv]);
    assert_eq!(viewer.get("/api/app").0, 404);
}

/// The states of the runs in an `/api/runs` answer, by number.
fn states(runs: &Value) -> Vec<(u64, String)> {
    runs["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            (
                r["run"].as_u64().expect("a number"),
                r["state"].as_str().expect("a state").to_string(),
            )
        })
        .collect()
}

/// `/api/trace` without what says where it came from: the source, and its lines read
/// (a stream's count its topology block's lines too).
fn without_source(mut trace: Value) -> Value {
    let trace_object = trace.as_object_mut().expect("an object");
    trace_object.remove("file");
    trace_object.remove("lines");
    trace
}

/// A run streamed into `vesper view --listen-trace` is, once finished, the run its
/// `--trace` file shows: the same JSON for the trace (but its source) and for the
/// whole run's bins, every link with the trace's own bytes.
#[test]
fn a_streamed_run_is_the_run_of_its_file() {
    let dir = scratch("live");
    let live = Live::start(&[]);
    let prv = run_traced(&dir, &["--trace-stream", &live.streams.to_string()]);
    let runs = live.runs_until(|r| states(r) == [(1, "finished".to_string())]);
    let run = &runs["runs"][0];
    let expected = common::trace_link_bytes(&prv);
    // Every link of the topology (the stream carries it), idle ones too.
    let topology: Value = serde_json::from_str(
        &std::fs::read_to_string(prv.with_extension("").with_extension("topology")).expect("the topology"),
    )
    .expect("JSON");
    let cables = topology["links"].as_array().expect("links").len();
    assert!(cables > expected.len(), "{cables}");
    assert_eq!(run["links"].as_u64(), Some(cables as u64), "{run}");
    assert_eq!(
        (run["dropped_records"].as_u64(), run["named"].as_bool()),
        (Some(0), Some(true))
    );
    let streamed = live.viewer.json("/api/trace?run=1");
    assert_eq!(
        streamed["file"]
            .as_str()
            .map(|f| f.starts_with("run 1 from 127.0.0.1:")),
        Some(true)
    );
    assert_eq!(
        streamed,
        live.viewer.json("/api/trace"),
        "the newest run is the default"
    );
    let file = Viewer::start(&[prv.to_str().expect("a UTF-8 path")]);
    let from_file = file.trace();
    assert_eq!(without_source(streamed.clone()), without_source(from_file));
    // The links with the trace's own bytes (as the file view's test counts them).
    let served: BTreeMap<(String, String), u64> = streamed["links"]
        .as_array()
        .expect("links")
        .iter()
        .filter(|l| l["bytes"] != 0)
        .map(|l| {
            let name = |k: &str| l[k].as_str().expect("a port").to_string();
            ((name("from"), name("to")), l["bytes"].as_u64().expect("bytes"))
        })
        .collect();
    assert_eq!(served, expected);
    for query in ["bins=true", "from_ns=100000&to_ns=300000&bins=true", "last=16"] {
        assert_eq!(
            live.viewer.json(&format!("/api/window?run=1&{query}")),
            file.json(&format!("/api/window?{query}")),
            "{query}"
        );
    }
    let (status, _, body) = live.viewer.get("/api/trace?run=2");
    assert_eq!(status, 404);
    assert!(
        body.starts_with("no run 2: the runs kept are [1], 0 dropped (--keep-runs 8)"),
        "{body}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every run of a server that keeps serving is a run on the page, numbered in order.
#[test]
fn each_run_of_a_server_that_keeps_serving_is_a_run() {
    let live = Live::start(&[]);
    let (mut server, addr) = start(&[
        "--keep-serving",
        "--hosts",
        "4",
        "--trace-stream",
        &live.streams.to_string(),
    ]);
    for run in 1..=2u32 {
        let mut client = LegacyConnection::connect(addr).expect("connects");
        let sends: Vec<ClientMessage> = (0..run)
            .map(|n| send_bytes(1000.0 * f64::from(n), n % 4, (n + 1) % 4, 20_000))
            .collect();
        client
            .exchange(&[sends, vec![ClientMessage::Stop(WireTime(1e9)), ClientMessage::End]].concat())
            .expect("reply");
        client.finish().expect("finish");
    }
    let runs = live.runs_until(|r| states(r) == [(1, "finished".into()), (2, "finished".into())]);
    signal(&server, "TERM");
    assert_eq!(wait_up_to(&mut server, 10).code(), Some(0));
    // Run n sent n messages: run 2's links carried twice run 1's bytes.
    let bytes = |run: u64| -> u64 {
        let trace = live.viewer.json(&format!("/api/trace?run={run}"));
        trace["links"]
            .as_array()
            .expect("links")
            .iter()
            .map(|l| l["bytes"].as_u64().expect("bytes"))
            .sum()
    };
    assert!(
        bytes(1) > 0 && bytes(2) == 2 * bytes(1),
        "{} and {}",
        bytes(1),
        bytes(2)
    );
    assert_eq!(runs["dropped_runs"], 0);
}

const HEADER: &str = "#Paraver (01/01/2026 at 00:00):0_ns:0:1:2(1:0,2:0)";
const RECORDS: &str = "3:0:1:1:1:0:0:0:1:2:1:5:9:10:1\n3:0:1:1:1:20:20:0:1:2:1:25:29:30:3\n";

/// A whole stream of `RECORDS` on a host and a switch, as a server sends it.
fn whole_stream() -> String {
    let pcf = "DEFAULT_OPTIONS\n\nSTATES\n0    Empty\n1    Backlog 1-1024 bytes\n";
    let row = "LEVEL TASK SIZE 2\nhost0\nsw0\n\nLEVEL THREAD SIZE 3\nhost0.p0\nsw0.p0\nsw0.p1\n";
    format!(
        "{HEADER}\n#vesper-topology 14\n{{\"devices\":[]}}{RECORDS}{}\n#vesper-pcf {}\n{pcf}#vesper-row {}\n{row}#vesper-end 2\n",
        HEADER.replace(":0_ns:", ":40_ns:"),
        pcf.len(),
        row.len()
    )
}

/// A probe, a connection that is no trace stream and a stream cut short leave the
/// listener accepting: the cut run shows its records with a message; the probe and
/// the garbage are no runs, and no warning.
#[test]
fn a_cut_stream_or_garbage_leaves_a_message_and_the_listener_alive() {
    let live = Live::start(&[]);
    drop(TcpStream::connect(live.streams).expect("a probe"));
    live.send(b"GET / HTTP/1.1\r\n\r\n\x00\xff");
    let cut = format!("{HEADER}\n{RECORDS}3:0:1:1:1:30:30:0:1:2");
    live.send(cut.as_bytes());
    let runs = live.runs_until(|r| states(r) == [(1, "problem".into())]);
    let problem = runs["runs"][0]["problem"].as_str().expect("a problem");
    assert_eq!(
        problem,
        "the stream ended in the middle of line 4 (records up to line 3 shown)"
    );
    let trace = live.viewer.json("/api/trace?run=1");
    assert_eq!(trace["problem"].as_str(), Some(problem));
    assert_eq!(trace["links"][0]["bytes"], 40, "{trace}");
    assert_eq!(
        trace["links"][0]["from"], "task1.t1",
        "named by number: the .row never came"
    );
    assert_eq!(runs["runs"][0]["named"], false);
    // A stream that breaks a rule, then a whole one: the listener is still there.
    live.send(format!("{HEADER}\n3:0:1:1:1:0:0:0:1:9:1:5:9:10:1\n").as_bytes());
    live.send(whole_stream().as_bytes());
    let runs = live.runs_until(|r| states(r).len() == 3 && states(r)[2].1 != "live");
    assert_eq!(
        states(&runs),
        [(1, "problem".into()), (2, "problem".into()), (3, "finished".into())]
    );
    assert!(
        runs["runs"][1]["problem"]
            .as_str()
            .expect("a problem")
            .starts_with("line 2: task or thread beyond the header"),
        "{runs}"
    );
    let trace = live.viewer.json("/api/trace?run=3");
    assert_eq!(
        (trace["links"][0]["from"].as_str(), trace["links"][0]["to"].as_str()),
        (Some("host0.p0"), Some("sw0.p0"))
    );
    assert_eq!(
        (trace["end_ns"].as_u64(), trace["quantum_bytes"].as_u64()),
        (Some(40), Some(1024))
    );
    assert_eq!(trace["records"]["link_communications"], 2);
    let log = std::iter::from_fn(|| live.log.recv_timeout(Duration::from_millis(200)).ok())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        log.contains("closed without sending anything (a probe): not a run"),
        "{log}"
    );
    assert!(log.contains("not a trace stream"), "{log}");
    for line in log.lines().filter(|l| l.contains("not a run")) {
        assert!(!line.contains("WARN"), "{line}");
    }
}

/// `--keep-runs 2`: the third run drops the first, and the page says so.
#[test]
fn only_the_last_keep_runs_runs_are_kept() {
    let live = Live::start(&["--keep-runs", "2"]);
    for _ in 0..3 {
        live.send(whole_stream().as_bytes());
        // One after the other: each is numbered before the next connects.
        let _ = wait_for_log(&live.log, "records, finished", Duration::from_secs(20));
    }
    let runs = live.runs_until(|r| states(r).len() == 2 && states(r)[1].0 == 3);
    assert_eq!(states(&runs), [(2, "finished".into()), (3, "finished".into())]);
    assert_eq!(
        (runs["dropped_runs"].as_u64(), runs["keep_runs"].as_u64()),
        (Some(1), Some(2))
    );
    let (status, _, body) = live.viewer.get("/api/window?run=1");
    assert_eq!(status, 404);
    assert!(
        body.starts_with("no run 1: the runs kept are [2, 3], 1 dropped (--keep-runs 2)"),
        "{body}"
    );
}

/// A file or a listener, one of the two.
#[test]
fn view_takes_a_file_or_a_listener() {
    for args in [&["view"][..], &["view", "net.prv", "--listen-trace", "127.0.0.1:0"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_vesper"))
            .args(args)
            .output()
            .expect("vesper runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains("--listen-trace"), "{args:?}: {stderr}");
    }
}

/// The events route ticks when something moves: a run that starts.
#[test]
fn the_events_tick_when_a_run_starts() {
    let live = Live::start(&[]);
    let mut socket = TcpStream::connect(live.viewer.addr).expect("vesper view accepts");
    socket
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("a timeout");
    write!(socket, "GET /api/events HTTP/1.1\r\nHost: localhost\r\n\r\n").expect("a request");
    let mut events = BufReader::new(socket);
    let mut next_tick = || loop {
        let mut line = String::new();
        assert!(events.read_line(&mut line).expect("an event") > 0, "the events ended");
        if line.starts_with("data: ") {
            return line;
        }
    };
    let first = next_tick();
    live.send(whole_stream().as_bytes());
    let second = next_tick();
    assert_ne!(first, second);
}

/// `--forward-trace`: a collector behind the view writes the run's trace byte for byte
/// as `--trace` does, while the view shows it.
#[test]
fn a_forwarded_stream_is_collected_as_the_file_trace() {
    let dir = scratch("forward");
    let collected = dir.join("collected.prv");
    let (mut collector, at, lines) = start_listening(&[
        "collect",
        "--listen",
        "127.0.0.1:0",
        "--output",
        collected.to_str().expect("UTF-8"),
    ]);
    let collector_log = log_channel(lines);
    let live = Live::start(&["--forward-trace", &at.to_string()]);
    // A probe and garbage are no runs, and are not forwarded.
    drop(TcpStream::connect(live.streams).expect("a probe"));
    live.send(b"garbage\n");
    let file = dir.join("file.prv");
    let out = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args(["run", "--preset", "kary-ntree", "--tasks", "16", "--size", "20000"])
        .args(["--trace-stream", &live.streams.to_string()])
        .arg("--trace")
        .arg(&file)
        .output()
        .expect("vesper runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let status = wait_up_to(&mut collector, 20);
    let log = collector_log.try_iter().collect::<Vec<_>>().join("\n");
    assert!(status.success(), "{log}");
    for ext in ["prv", "pcf", "row"] {
        let read = |p: &Path| std::fs::read(p.with_extension(ext)).expect("a trace file");
        assert!(read(&collected) == read(&file), ".{ext} differs");
    }
    let runs = live.runs_until(|r| states(r) == [(1, "finished".into())]);
    assert_eq!(runs["runs"][0]["dropped_records"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}
