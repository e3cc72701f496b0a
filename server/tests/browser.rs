//! `vesper view` in a real browser (feature `browser`; CI installs Debian's
//! `chromium`): a `vesper run` streams its network trace into `vesper view
//! --listen-trace` while headless Chromium, driven over the DevTools protocol, loads the
//! page; the page itself says, in its DOM, that it drew every link of the network and
//! that its busiest link is the one the run's report names. The screenshot it takes is the README's (`docs/img/view.png`,
//! rewritten when `VESPER_UPDATE_SCREENSHOT=1`).
//!
//! Run it with `cargo test -p vesper-server --features browser --test browser`; the
//! browser is `chromium` on the PATH, or `VESPER_CHROMIUM`.
#![cfg(feature = "browser")]

mod common;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A free TCP port on loopback (bound, then released for the command to take).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Headless Chromium driven over the DevTools protocol (a WebSocket: the page's
/// server-sent events keep it from ever being idle, so `--dump-dom` cannot wait for
/// it), as root if need be (its sandbox refuses root).
struct Browser {
    _child: Killed,
    socket: TcpStream,
    next_id: u64,
}

impl Browser {
    fn start(dir: &Path) -> Browser {
        let browser = std::env::var("VESPER_CHROMIUM").unwrap_or_else(|_| "chromium".into());
        let profile = dir.join("chromium-profile");
        let child = Command::new(&browser)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{browser} does not start ({e}): install Debian's chromium, or set VESPER_CHROMIUM")
            });
        let child = Killed(child);
        // Chromium writes the port it took into the profile.
        let end = Instant::now() + Duration::from_secs(60);
        let port: u16 = loop {
            if let Ok(text) = std::fs::read_to_string(profile.join("DevToolsActivePort"))
                && let Some(port) = text.lines().next().and_then(|p| p.parse().ok())
            {
                break port;
            }
            assert!(Instant::now() < end, "{browser} opened no DevTools port in 60 s");
            std::thread::sleep(Duration::from_millis(100));
        };
        // The page's target.
        let path = loop {
            let body = http_get(port, "/json/list");
            let url = serde_json::from_str::<Value>(&body).ok().and_then(|targets| {
                let page = targets.as_array()?.iter().find(|t| t["type"] == "page")?;
                page["webSocketDebuggerUrl"].as_str().map(String::from)
            });
            if let Some(url) = url
                && let Some(at) = url.find("/devtools/")
            {
                break url[at..].to_string();
            }
            assert!(Instant::now() < end, "no page target: {body}");
            std::thread::sleep(Duration::from_millis(100));
        };
        let mut socket = TcpStream::connect(("127.0.0.1", port)).expect("the DevTools port");
        socket
            .set_read_timeout(Some(Duration::from_secs(60)))
            .expect("a timeout");
        write!(
            socket,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dmVzcGVyIHZpZXcgdGVzdA==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .expect("the upgrade");
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            socket.read_exact(&mut byte).expect("the upgrade's answer");
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head);
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        Browser {
            _child: child,
            socket,
            next_id: 0,
        }
    }

    /// Calls `method` and returns its result (events that come meanwhile are skipped).
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let text = serde_json::json!({"id": id, "method": method, "params": params}).to_string();
        self.send(text.as_bytes());
        loop {
            let message: Value = serde_json::from_slice(&self.receive()).expect("a JSON message");
            if message["id"] == id {
                assert!(message["error"].is_null(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    /// A masked text frame (a client's frames are masked; the mask may be any).
    fn send(&mut self, payload: &[u8]) {
        let mut frame = vec![0x81u8];
        match payload.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n < 65536 => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        let mask = [0x12u8, 0x34, 0x56, 0x78];
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.socket.write_all(&frame).expect("a frame sent");
    }

    /// A whole message (its frames joined); control frames are skipped.
    fn receive(&mut self) -> Vec<u8> {
        let mut message = Vec::new();
        loop {
            let mut head = [0u8; 2];
            self.socket.read_exact(&mut head).expect("a frame");
            let mut len = u64::from(head[1] & 0x7f);
            if len == 126 {
                let mut n = [0u8; 2];
                self.socket.read_exact(&mut n).expect("a length");
                len = u64::from(u16::from_be_bytes(n));
            } else if len == 127 {
                let mut n = [0u8; 8];
                self.socket.read_exact(&mut n).expect("a length");
                len = u64::from_be_bytes(n);
            }
            let mut payload = vec![0u8; len as usize];
            self.socket.read_exact(&mut payload).expect("a payload");
            if head[0] & 0x0f >= 8 {
                continue;
            }
            message.extend_from_slice(&payload);
            if head[0] & 0x80 != 0 {
                return message;
            }
        }
    }

    /// The value of a JavaScript expression in the page.
    fn evaluate(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            serde_json::json!({"expression": expression, "returnByValue": true}),
        );
        result["result"]["value"].clone()
    }
}

/// `GET path` of Chromium's DevTools HTTP server: the body (it keeps connections
/// open, so the length is read from the head).
fn http_get(port: u16, path: &str) -> String {
    let mut socket = TcpStream::connect(("127.0.0.1", port)).expect("the DevTools port");
    socket
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("a timeout");
    write!(
        socket,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .expect("a request");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if socket.read_exact(&mut byte).is_err() {
            return String::new();
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    if socket.read_exact(&mut body).is_err() {
        return String::new();
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// Standard base64 (the screenshot's encoding), decoded.
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    let mut bytes = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &d)| n | u32::from(d) << (18 - 6 * i));
        bytes.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    bytes
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits until something accepts on `port`.
fn wait_accepting(port: u16, what: &str) {
    let end = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < end, "{what} does not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The run replayed: a 16-task all-to-all on the kary-ntree preset of wormhole switches
/// (traced, the flit by flit path: a few seconds of streaming in a debug build).
const RUN: [&str; 8] = [
    "--preset",
    "kary-ntree",
    "--switch",
    "wormhole",
    "--tasks",
    "16",
    "--size",
    "20000",
];

fn vesper(args: &[&str], extra: &[&std::ffi::OsStr]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vesper"));
    command.args(args).args(extra).env("NO_COLOR", "1");
    command
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vesper-browser-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

#[test]
fn the_page_draws_every_link_of_a_streamed_run_and_its_busiest_is_the_reports() {
    let dir = scratch();
    // The same run to a file: the links it has, counted from the text.
    std::fs::create_dir_all(dir.join("file")).expect("a directory");
    let file = dir.join("file/network.prv");
    let out = vesper(&["run"], &[])
        .args(RUN)
        .arg("--trace")
        .arg(&file)
        .output()
        .expect("vesper runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let links: BTreeSet<(String, String)> = common::trace_link_bytes(&file).into_keys().collect();
    assert!(links.len() > 50, "{links:?}");
    // Every cable's two directions, idle ones included: the topology beside the trace.
    let topology: Value =
        serde_json::from_str(&std::fs::read_to_string(file.with_extension("topology")).expect("the topology"))
            .expect("JSON");
    let cables = topology["links"].as_array().expect("links").len();
    assert!(cables > links.len(), "{cables} links, {} with records", links.len());

    // The view, listening for the stream; the run streaming into it.
    let (stream_port, http_port) = (free_port(), free_port());
    let listen = format!("127.0.0.1:{stream_port}");
    let http = format!("127.0.0.1:{http_port}");
    let _view = Killed(
        vesper(&["view", "--listen-trace", &listen, "--http", &http], &[])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("vesper view starts"),
    );
    wait_accepting(http_port, "vesper view's page");
    wait_accepting(stream_port, "vesper view's trace listener");
    // The page, waiting for a stream; then the run, streaming while the page watches.
    let mut browser = Browser::start(&dir);
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        serde_json::json!({"width": 1400, "height": 1200, "deviceScaleFactor": 1, "mobile": false}),
    );
    browser.call(
        "Page.navigate",
        serde_json::json!({"url": format!("http://{http}/?width=all")}),
    );
    let shown = "(() => { const n = document.getElementById('network'); \
                 const t = document.getElementById('top'); \
                 return n && t ? JSON.stringify({state: n.dataset.state || null, drawn: n.dataset.linksDrawn || null, \
                 from: t.dataset.busiestFrom || null, to: t.dataset.busiestTo || null, \
                 bytes: t.dataset.busiestBytes || null, draw_ms: n.dataset.drawMs || null}) : null; })()";
    let end = Instant::now() + Duration::from_secs(60);
    while !browser
        .evaluate("document.getElementById('runs') ? document.getElementById('runs').textContent : ''")
        .as_str()
        .is_some_and(|text| text.starts_with("waiting for a trace stream"))
    {
        assert!(Instant::now() < end, "the page never said it waits for a stream");
        std::thread::sleep(Duration::from_millis(100));
    }
    let streamed = dir.join("streamed");
    let run = vesper(&["run"], &[])
        .args(RUN)
        .args(["--trace-stream", &listen, "--output"])
        .arg(&streamed)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vesper run starts");
    let end = Instant::now() + Duration::from_secs(120);
    let mut run = Some(run);
    let page: Value = loop {
        let page: Value = browser
            .evaluate(shown)
            .as_str()
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or(Value::Null);
        if run.is_none() && page["state"] == "finished" {
            break page;
        }
        if let Some(child) = run.as_mut()
            && let Some(status) = child.try_wait().expect("the run")
        {
            let mut stderr = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut stderr);
            }
            assert!(status.success(), "{stderr}");
            run = None;
        }
        assert!(Instant::now() < end, "the page never showed the finished run: {page}");
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!("the page: {page}");

    // Every link is drawn, idle or not.
    let drawn: Option<usize> = page["drawn"].as_str().and_then(|n| n.parse().ok());
    assert_eq!(drawn, Some(cables), "{page}");

    // The busiest link of the whole run is the report's.
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(streamed.join("result.json")).expect("the run's result"))
            .expect("JSON");
    let busiest = &report["server"]["simulation"]["network_trace"]["busiest_link"];
    let (from, to) = (
        busiest["from"].as_str().expect("a port"),
        busiest["to"].as_str().expect("a port"),
    );
    assert!(links.contains(&(from.to_string(), to.to_string())), "{busiest}");
    assert_eq!(
        (page["from"].as_str(), page["to"].as_str()),
        (Some(from), Some(to)),
        "{page}"
    );
    assert_eq!(
        page["bytes"].as_str().and_then(|b| b.parse::<u64>().ok()),
        busiest["bytes"].as_u64(),
        "{page}"
    );

    // The picture, for the README.
    let shot = browser.call("Page.captureScreenshot", serde_json::json!({"format": "png"}));
    let png = base64(shot["data"].as_str().expect("the screenshot"));
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
    if std::env::var_os("VESPER_UPDATE_SCREENSHOT").is_some() {
        let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/img/view.png");
        std::fs::write(&readme, &png).expect("docs/img/view.png");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
