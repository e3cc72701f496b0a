//! A server that lives for weeks, in small: 2,000 consecutive runs of `vesper serve
//! --keep-serving`, each with a client that checks the README transcript's exact reply,
//! and a hostile client every tenth run. Memory and the time of a run must stay flat
//! from the first hundred runs to the last (issue 26); each run is reported once.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use common::{signal, start, wait_up_to};

/// The README's eager exchange, as bash sends it.
const TRANSCRIPT: &[u8] =
    b"SEND 6500 0 1 7 1024 0x55a873d62cc0 0x55a873d62c60 0 1 0 0\nSTOP 6500\nEND\nSTOP 1000000000\nEND\nFINISH\n";

/// What a fresh server answers to it.
const TRANSCRIPT_REPLY: &str = "END\nCOMPLETED SEND 10810 0 1 1024 0x55a873d62cc0 0x55a873d62c60 0 1 6500\nEND\n";

const RUNS: usize = 2000;

/// `--client-timeout` of the soak \[s\]: stalled clients cost this much a time.
const CLIENT_TIMEOUT: &str = "0.2";

fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    stream
}

/// Sends `bytes`, closes the sending side, and reads until the server closes.
fn script(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut stream = connect(addr);
    stream.write_all(bytes).expect("write");
    stream.shutdown(std::net::Shutdown::Write).expect("shutdown");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("the replies");
    text
}

/// One of four hostile clients; returns a connection to keep open during the next
/// transcript, if it needs one.
fn hostile(addr: SocketAddr, kind: usize) -> Option<TcpStream> {
    match kind % 4 {
        // The poisoned clock: a run of its own at the end of time.
        0 => {
            let poison = b"SEND 9223372036850000 0 1 7 1024 0x1 0x2 0 1 0 0\nSTOP 9223372036850000\nEND\nSTOP 252000000000000000\nEND\nFINISH\n";
            script(addr, poison);
            None
        }
        // Bytes that never make a line, and a line that is not one: no client.
        1 => {
            let mut z = connect(addr);
            z.write_all(b"garbage\x00\xff\nZ").expect("write");
            Some(z)
        }
        // A client of the run that stalls part way through a line: the transcript
        // waits for the next run, until the stalled one is dropped.
        2 => {
            let mut stall = connect(addr);
            stall.write_all(b"STOP 0\nEND\nSEND 65").expect("write");
            let mut end = [0u8; 4];
            stall.read_exact(&mut end).expect("its reply");
            Some(stall)
        }
        // A client that leaves part way through a batch.
        _ => {
            let mut gone = connect(addr);
            gone.write_all(b"SEND 6500 0 1 7 1024 0x1 0x2 0 1 0 0\nSTOP 65")
                .expect("write");
            None
        }
    }
}

/// The server's resident memory [KiB].
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    line.split_whitespace().nth(1).expect("a number").parse().expect("KiB")
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

#[test]
fn two_thousand_runs_stay_flat_in_memory_and_time() {
    let (mut child, addr) = start(&[
        "--keep-serving",
        "--client-timeout",
        CLIENT_TIMEOUT,
        "--silent-timeout",
        "1",
    ]);
    let pid = child.id();
    // The reports (a JSON line a run) are read as they come, or the pipe fills.
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).expect("reports");
        text
    });
    let mut times = Vec::with_capacity(RUNS);
    let mut rss_after_100 = 0;
    let mut hostile_runs = 0;
    for run in 0..RUNS {
        let kept = if run % 10 == 9 {
            let kind = run / 10;
            hostile_runs += usize::from(kind % 4 != 1);
            hostile(addr, kind)
        } else {
            None
        };
        let start = Instant::now();
        assert_eq!(script(addr, TRANSCRIPT), TRANSCRIPT_REPLY, "run {run}");
        times.push(start.elapsed());
        drop(kept);
        if run == 99 {
            rss_after_100 = rss_kib(pid);
        }
    }
    let rss_at_end = rss_kib(pid);
    signal(&child, "TERM");
    assert_eq!(wait_up_to(&mut child, 10).code(), Some(0), "stopped between runs");
    let reports = reader.join().expect("the report reader");
    // Every run is reported once, in order, with its own clients only.
    let runs: Vec<serde_json::Value> = reports
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(runs.len(), RUNS + hostile_runs);
    for (n, report) in runs.iter().enumerate() {
        assert_eq!(report["run"], n + 1);
        assert_eq!(
            report["simulation"]["clients"].as_array().map(Vec::len),
            Some(1),
            "run {}",
            n + 1
        );
    }
    // Flat: the last hundred runs cost what the first hundred did (medians, so that a
    // stalled hostile run or a busy moment does not count), and memory did not grow
    // with the runs served.
    let (first, last) = (median(&times[..100]), median(&times[RUNS - 100..]));
    eprintln!(
        "soak: median run {first:?} at first, {last:?} at the end; RSS {rss_after_100} KiB after 100 runs, {rss_at_end} KiB after {RUNS}"
    );
    assert!(
        last <= first * 3,
        "a run took {first:?} in the first hundred and {last:?} in the last"
    );
    assert!(
        rss_at_end <= rss_after_100 + 2048,
        "memory grew from {rss_after_100} KiB after 100 runs to {rss_at_end} KiB after {RUNS}"
    );
}
