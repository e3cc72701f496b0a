//! `vesper collect` as a container runs it: a server streams its network trace
//! (`--trace-stream HOST:PORT`), the collector writes the same files `--trace` would.

mod common;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use common::{send_bytes, signal, start, start_listening, wait_up_to};
use vesper_client_dimemas_adapter::LegacyConnection;
use vesper_protocol::{ClientMessage, WireTime};

/// A fresh scratch directory for `name`.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vesper-collect-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

fn text(path: &Path) -> String {
    path.to_str().expect("a UTF-8 path").to_string()
}

/// `vesper collect ARGS` started; its address (from its "listening on" line) and its
/// log lines as they come.
fn collector(args: &[&str]) -> (Child, SocketAddr, Receiver<String>) {
    let (child, addr, lines) = start_listening(&[&["collect", "--listen", "127.0.0.1:0"], args].concat());
    let (sender, log) = channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    (child, addr, log)
}

/// Waits (up to 20 s) for a log line that holds `what`; the lines up to it.
fn wait_for_log(log: &Receiver<String>, what: &str) -> String {
    let mut seen = String::new();
    loop {
        match log.recv_timeout(Duration::from_secs(20)) {
            Ok(line) => {
                seen.push_str(&line);
                seen.push('\n');
                if line.contains(what) {
                    return seen;
                }
            }
            Err(e) => panic!("no log line with `{what}` ({e}); got:\n{seen}"),
        }
    }
}

/// The log the collector wrote until it exited.
fn rest_of_log(log: &Receiver<String>) -> String {
    log.iter().collect::<Vec<_>>().join("\n")
}

/// `vesper run` of an all-to-all on a 16-host crossbar (a trace of 668 kB, ten
/// chunks of the stream) with `trace` flags.
fn run_traced(trace: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args(["run", "--network", "crossbar", "--hosts", "16", "--tasks", "16"])
        .args(["--size", "100000"])
        .args(trace)
        .output()
        .expect("vesper runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The `.prv` (or `.prv.gz`), `.pcf` and `.row` of `stem` in `dir`.
fn trace_files(dir: &Path, stem: &str, prv: &str) -> [Vec<u8>; 3] {
    [format!("{stem}.{prv}"), format!("{stem}.pcf"), format!("{stem}.row")]
        .map(|name| std::fs::read(dir.join(&name)).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// A run streamed to a collector, by address or by host name, plain or compressed,
/// gives the bytes of the same run written with --trace.
#[test]
fn a_collected_trace_is_byte_identical_to_the_file_trace() {
    let dir = scratch("identical");
    for (host, prv) in [("127.0.0.1", "prv"), ("localhost", "prv.gz")] {
        let collected = dir.join(format!("collected.{prv}"));
        let (mut child, addr, log) = collector(&["--output", &text(&collected)]);
        run_traced(&["--trace-stream", &format!("{host}:{}", addr.port())]);
        assert!(wait_up_to(&mut child, 20).success(), "{}", rest_of_log(&log));
        assert!(rest_of_log(&log).contains("run 1: "), "the run is logged");
        run_traced(&["--trace", &text(&dir.join(format!("file.{prv}")))]);
        let [prv_bytes, pcf, row] = trace_files(&dir, "collected", prv);
        assert!(prv_bytes.len() > 50_000, "a trace of some size: {}", prv_bytes.len());
        assert!(pcf.starts_with(b"DEFAULT_OPTIONS") && row.starts_with(b"LEVEL"));
        assert!(
            [prv_bytes, pcf, row] == trace_files(&dir, "file", prv),
            "{host}, {prv}: the collector's files differ from --trace's"
        );
        assert!(!dir.join(format!("collected.{prv}.part")).exists(), "no spool left");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `runs` runs of a `--keep-serving` server with `trace` flags; run n sends n
/// messages. Stops the server between runs.
fn serve_runs(trace: &[&str], runs: u32) {
    let (mut server, addr) = start(&[&["--keep-serving", "--hosts", "4"], trace].concat());
    for run in 1..=runs {
        let mut client = LegacyConnection::connect(addr).expect("connects");
        let sends: Vec<ClientMessage> = (0..run)
            .map(|n| send_bytes(1000.0 * f64::from(n), n % 4, (n + 1) % 4, 20_000))
            .collect();
        client
            .exchange(&[sends, vec![ClientMessage::Stop(WireTime(1e9)), ClientMessage::End]].concat())
            .expect("reply");
        client.finish().expect("finish");
    }
    // The last run's trace is out before its client's connection is closed.
    std::thread::sleep(Duration::from_millis(200));
    signal(&server, "TERM");
    assert_eq!(wait_up_to(&mut server, 10).code(), Some(0), "stopped between runs");
}

/// A collector that keeps collecting writes each run of a server that keeps serving
/// to its own file, the same as the server's own `--trace` with `{run}`.
#[test]
fn a_collector_across_runs_numbers_them() {
    let dir = scratch("runs");
    let pattern = text(&dir.join("collected-{run}.prv"));
    let (mut child, addr, log) = collector(&["--output", &pattern, "--keep-collecting"]);
    serve_runs(&["--trace-stream", &addr.to_string()], 2);
    wait_for_log(&log, "run 2: ");
    // Still collecting.
    assert!(child.try_wait().expect("waitable").is_none(), "the collector exited");
    child.kill().expect("killed");
    let _ = child.wait();
    serve_runs(&["--trace", &text(&dir.join("file-{run}.prv"))], 2);
    for run in 1..=2 {
        assert!(
            trace_files(&dir, &format!("collected-{run}"), "prv") == trace_files(&dir, &format!("file-{run}"), "prv"),
            "run {run}: the collector's files differ from --trace's"
        );
    }
    let [one, ..] = trace_files(&dir, "collected-1", "prv");
    let [two, ..] = trace_files(&dir, "collected-2", "prv");
    assert!(one.len() < two.len(), "run 2 sent more messages");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server that stops mid-stream: the collector writes what it got, a valid `.prv`
/// with the last record's time, says so, and fails.
#[test]
fn an_early_disconnect_is_written_as_far_as_it_got_with_a_warning() {
    let dir = scratch("early");
    let output = dir.join("cut.prv");
    let (mut child, addr, log) = collector(&["--output", &text(&output)]);
    // A port probe first: not a run.
    drop(TcpStream::connect(addr).expect("connects"));
    let mut server = TcpStream::connect(addr).expect("connects");
    server
        .write_all(
            b"#Paraver (01/01/2026 at 00:00):0_ns:0:1:2(1:0,1:0)\n\
              2:0:1:1:1:0:70000004:1\n\
              3:0:1:1:1:0:0:0:1:2:1:25:4185:1024:1\n\
              1:0:1:2:1:25:41",
        )
        .expect("sent");
    drop(server);
    let status = wait_up_to(&mut child, 20);
    let log = rest_of_log(&log);
    assert!(!status.success(), "a one-run collector fails on a cut stream:\n{log}");
    assert!(log.contains("closed without sending a trace; still waiting"), "{log}");
    let stderr_end = format!(
        "run 1: {} written incomplete: the stream ended after 2 records, before the final header",
        output.display()
    );
    assert!(log.contains(&stderr_end), "{log}");
    assert_eq!(
        std::fs::read_to_string(&output).expect("written"),
        "#Paraver (01/01/2026 at 00:00):4185_ns:0:1:2(1:0,1:0)\n\
         2:0:1:1:1:0:70000004:1\n\
         3:0:1:1:1:0:0:0:1:2:1:25:4185:1024:1\n"
    );
    assert!(!dir.join("cut.pcf").exists() && !dir.join("cut.prv.part").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn collect_flags_are_checked() {
    for (args, expected) in [
        (
            vec!["--output", "net.prv", "--keep-collecting"],
            "--output net.prv with --keep-collecting: every run writes its own trace; put {run} in the name",
        ),
        (
            vec!["--output", "net.txt"],
            "--output net.txt: expected a file name ending in .prv or .prv.gz",
        ),
        (
            vec!["--output", "/nonexistent-vesper-dir/n-{run}.prv"],
            "--output /nonexistent-vesper-dir/n-1.prv: expected an existing directory",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_vesper"))
            .args(["collect", "--listen", "127.0.0.1:0"])
            .args(&args)
            .output()
            .expect("vesper runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(expected), "{args:?}: {stderr}");
    }
    // A --trace-stream of no known form is refused before the server listens.
    let out = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args(["serve", "--listen", "127.0.0.1:0", "--trace-stream", "collector"])
        .output()
        .expect("vesper runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("--trace-stream collector: expected HOST:PORT"),
        "{stderr}"
    );
}
