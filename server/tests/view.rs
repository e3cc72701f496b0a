//! `vesper view` as a user runs it: on a trace `vesper run --trace` wrote, its JSON
//! endpoints hold every link the trace shows with the bytes the trace says, and the
//! busiest link is the trace's; a broken trace is a message on the page, not a crash.

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::start_listening;
use serde_json::Value;

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
/// preset (a 4-ary 3-tree of 64 hosts), its network trace (with end-to-end records) in
/// `dir/net.prv.gz`.
fn run_traced(dir: &Path) -> PathBuf {
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
        .arg("--trace")
        .arg(&prv)
        .output()
        .expect("vesper runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    prv
}

/// The trace's own count of what crossed each link, from its text: per (sending
/// port, receiving port) of its communication records, the sum of their sizes; a
/// record between two hosts' ports is end to end, not a link.
fn trace_link_bytes(prv: &Path) -> BTreeMap<(String, String), u64> {
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(prv).expect("the trace"))
        .read_to_string(&mut text)
        .expect("gzip text");
    let row = std::fs::read_to_string(prv.with_extension("").with_extension("row")).expect("the .row");
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

#[test]
fn the_page_holds_every_link_of_the_trace_and_its_busiest() {
    let dir = scratch("links");
    let prv = run_traced(&dir);
    let expected = trace_link_bytes(&prv);
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
    let prv = run_traced(&dir);
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
    let prv = run_traced(&dir);
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
