//! What the tests of the `vesper` binary share: starting a server on a free port and
//! waiting for it with a limit.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Starts `vesper serve` on a free port and returns it with its address, read from
/// its "listening on" log line.
pub fn start(extra: &[&str]) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args(["serve", "--listen", "127.0.0.1:0", "--spin-us", "0"])
        .args(extra)
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
    // Keep draining the log so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
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
