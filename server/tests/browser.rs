//! `vesper view` in a real browser (feature `browser`; CI installs Debian's
//! `chromium`): a `vesper run` streams its network trace into `vesper view
//! --listen-trace` while headless Chromium loads the page; the page itself says, in its
//! DOM, that it drew every link of the run and that its busiest link is the one the
//! run's report names. The screenshot it takes is the README's (`docs/img/view.png`,
//! rewritten when `VESPER_UPDATE_SCREENSHOT=1`).
//!
//! Run it with `cargo test -p vesper-server --features browser --test browser`; the
//! browser is `chromium` on the PATH, or `VESPER_CHROMIUM`.
#![cfg(feature = "browser")]

use std::collections::BTreeSet;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A free TCP port on loopback (bound, then released for the command to take).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The headless browser, as root if need be (Chromium's sandbox refuses root).
fn chromium(args: &[&str]) -> Output {
    let browser = std::env::var("VESPER_CHROMIUM").unwrap_or_else(|_| "chromium".into());
    Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1400,1100",
            "--virtual-time-budget=4000",
        ])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{browser} does not start ({e}): install Debian's chromium, or set VESPER_CHROMIUM"))
}

/// The value of `name="…"` in the first tag with `id="id"` in `dom`.
fn attribute<'a>(dom: &'a str, id: &str, name: &str) -> Option<&'a str> {
    let tag = &dom[dom.find(&format!("id=\"{id}\""))?..];
    let tag = &tag[..tag.find('>')?];
    let value = &tag[tag.find(&format!("{name}=\""))? + name.len() + 2..];
    Some(&value[..value.find('"')?])
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

/// The run both tests replay: a 16-task all-to-all on the kary-ntree preset.
const RUN: [&str; 6] = ["--preset", "kary-ntree", "--tasks", "16", "--size", "20000"];

fn vesper(args: &[&str], extra: &[&std::ffi::OsStr]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vesper"));
    command.args(args).args(extra).env("NO_COLOR", "1");
    command
}

/// The links of a trace file, as (sending port, receiving port), from its text.
fn trace_links(prv: &Path) -> BTreeSet<(String, String)> {
    let mut text = String::new();
    std::fs::File::open(prv)
        .and_then(|mut f| f.read_to_string(&mut text))
        .expect("the trace");
    let row = std::fs::read_to_string(prv.with_extension("row")).expect("the .row");
    let threads: Vec<&str> = row
        .split("LEVEL THREAD SIZE ")
        .nth(1)
        .expect("threads")
        .lines()
        .skip(1)
        .collect();
    let tasks = text
        .lines()
        .next()
        .expect("a header")
        .rsplit_once('(')
        .expect("tasks")
        .1;
    let mut first = vec![0usize];
    for task in tasks.trim_end_matches(')').split(',') {
        let n: usize = task.split(':').next().and_then(|n| n.parse().ok()).expect("threads");
        first.push(first.last().expect("a first") + n);
    }
    let name = |task: &str, thread: &str| {
        let (task, thread): (usize, usize) = (task.parse().expect("a task"), thread.parse().expect("a thread"));
        threads[first[task - 1] + thread - 1].to_string()
    };
    text.lines()
        .filter(|l| l.starts_with("3:"))
        .map(|record| {
            let f: Vec<&str> = record.split(':').collect();
            (name(f[3], f[4]), name(f[9], f[10]))
        })
        .filter(|(from, to)| !(from.starts_with("host") && to.starts_with("host")))
        .collect()
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
    let links = trace_links(&file);
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
    let streamed = dir.join("streamed");
    let run = vesper(&["run"], &[])
        .args(RUN)
        .args(["--trace-stream", &listen, "--output"])
        .arg(&streamed)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vesper run starts");
    let page = format!("http://{http}/?width=all");
    // Loaded while the run streams, and until the page has drawn the finished run.
    let end = Instant::now() + Duration::from_secs(120);
    let mut run = Some(run);
    let dom = loop {
        let dump = chromium(&["--dump-dom", &page]);
        let dom = String::from_utf8_lossy(&dump.stdout).into_owned();
        if run.is_none() && attribute(&dom, "network", "data-state") == Some("finished") {
            break dom;
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
        assert!(
            Instant::now() < end,
            "the page never showed the finished run:\n{dom}\n{}",
            String::from_utf8_lossy(&dump.stderr)
        );
        std::thread::sleep(Duration::from_millis(200));
    };

    // Every link is drawn, idle or not.
    let drawn: usize = attribute(&dom, "network", "data-links-drawn")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the canvas says how many links it drew:\n{dom}"));
    assert_eq!(drawn, cables, "{dom}");

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
        (
            attribute(&dom, "top", "data-busiest-from"),
            attribute(&dom, "top", "data-busiest-to")
        ),
        (Some(from), Some(to)),
        "{dom}"
    );
    assert_eq!(
        attribute(&dom, "top", "data-busiest-bytes").and_then(|b| b.parse::<u64>().ok()),
        busiest["bytes"].as_u64(),
        "{dom}"
    );

    // The picture, for the README.
    let shot = dir.join("view.png");
    let out = chromium(&[&format!("--screenshot={}", shot.display()), &page]);
    let png = std::fs::read(&shot)
        .unwrap_or_else(|e| panic!("no screenshot ({e}): {}", String::from_utf8_lossy(&out.stderr)));
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
