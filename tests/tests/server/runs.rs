//! A server that lives for weeks (issue 26): runs that start fresh, clients that cannot
//! lock the others out. Each case is the reproducer, checked against the
//! README's transcript, which a fresh server answers byte for byte.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use vesper_server::ServerConfig;
use vesper_tests::{Client, TestServer};

/// The README's eager exchange, as bash sends it.
const TRANSCRIPT: &[u8] =
    b"SEND 6500 0 1 7 1024 0x55a873d62cc0 0x55a873d62c60 0 1 0 0\nSTOP 6500\nEND\nSTOP 1000000000\nEND\nFINISH\n";

/// What a fresh server answers to it on the default network.
const TRANSCRIPT_REPLY: &str = "END\nCOMPLETED SEND 10810 0 1 1024 0x55a873d62cc0 0x55a873d62c60 0 1 6500\nEND\n";

/// The first reproducer: a client that leaves the clock near its end.
const POISON: &[u8] = b"SEND 9223372036850000 0 1 7 1024 0x1 0x2 0 1 0 0\nSTOP 9223372036850000\nEND\nSTOP 252000000000000000\nEND\nFINISH\n";

/// The default network (the README's), served run after run.
fn keep_serving() -> ServerConfig {
    ServerConfig {
        exit_when_done: false,
        spin: Duration::from_micros(50),
        ..ServerConfig::default()
    }
}

/// A server of runs of two clients, with a short `--client-timeout`; the limit.
fn two_clients_with_a_short_limit() -> (TestServer, Duration) {
    let limit = Duration::from_millis(300);
    let server = TestServer::start(ServerConfig {
        clients: 2,
        client_timeout: limit,
        ..keep_serving()
    });
    (server, limit)
}

/// Sends `bytes` at once, closes the sending side and reads every reply byte until the
/// server closes the connection.
fn script(server: &TestServer, bytes: &[u8]) -> String {
    let mut stream = TcpStream::connect(server.addr()).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream
        .set_read_timeout(Some(vesper_tests::READ_TIMEOUT))
        .expect("read timeout");
    stream.write_all(bytes).expect("write");
    stream.shutdown(std::net::Shutdown::Write).expect("shutdown");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read the replies");
    text
}

#[test]
fn a_run_that_reaches_the_end_of_the_clock_does_not_poison_the_next() {
    let server = TestServer::start(keep_serving());
    let poisoned = script(&server, POISON);
    assert!(poisoned.ends_with("END\n"), "{poisoned:?}");
    assert_eq!(script(&server, TRANSCRIPT), TRANSCRIPT_REPLY);
    // A client that only reaches 2 simulated seconds, then the transcript again.
    let two_seconds = b"SEND 6500 0 1 7 1024 0x1 0x2 0 1 0 0\nSTOP 2000000000\nEND\nSTOP 2000000000\nEND\nFINISH\n";
    script(&server, two_seconds);
    assert_eq!(script(&server, TRANSCRIPT), TRANSCRIPT_REPLY);
    let (served, reports) = server.stop();
    assert!(!served.interrupted);
    let runs: Vec<(u64, usize, bool)> = reports
        .iter()
        .map(|r| (r.run, r.simulation.clients.len(), r.simulation.clients[0].finished))
        .collect();
    assert_eq!(runs, [(1, 1, true), (2, 1, true), (3, 1, true), (4, 1, true)]);
    // Each run is what a fresh server gives: the two transcript runs are equal but for
    // their clients' connection numbers.
    let simulation = |r: &vesper_server::Report| {
        let mut s = serde_json::to_value(&r.simulation).expect("json");
        s["clients"][0]["client"] = 0.into();
        s
    };
    assert_eq!(simulation(&reports[1]), simulation(&reports[3]));
}

#[test]
fn a_client_that_comes_during_a_run_waits_for_the_next() {
    let server = TestServer::start(keep_serving());
    let mut first = Client::connect(server.addr());
    first.send_raw(b"STOP 1000\nEND\n");
    assert_eq!(first.read_reply().text(), "END\n");
    // The run has its one client: the second waits, unanswered, until it ends.
    let mut second = TcpStream::connect(server.addr()).expect("connect");
    second.write_all(TRANSCRIPT).expect("write");
    second
        .set_read_timeout(Some(Duration::from_millis(300)))
        .expect("timeout");
    let mut buf = [0u8; 64];
    assert!(
        second.read(&mut buf).is_err(),
        "answered while the first run was under way"
    );
    first.finish();
    second
        .set_read_timeout(Some(vesper_tests::READ_TIMEOUT))
        .expect("timeout");
    second.shutdown(std::net::Shutdown::Write).expect("shutdown");
    let mut text = String::new();
    second.read_to_string(&mut text).expect("replies");
    // It started at time zero, on a fresh network.
    assert_eq!(text, TRANSCRIPT_REPLY);
    let (_, reports) = server.stop();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[1].simulation.clients[0].messages, 1);
}

#[test]
fn one_byte_that_never_becomes_a_line_holds_no_one() {
    let server = TestServer::start(keep_serving());
    // `Z` and the connection stays open: not a client, so the next one runs at once.
    let mut z = TcpStream::connect(server.addr()).expect("connect");
    z.write_all(b"Z").expect("write");
    assert_eq!(script(&server, TRANSCRIPT), TRANSCRIPT_REPLY);
    // A bad line alone makes no client either.
    z.write_all(b"\n").expect("write");
    assert_eq!(script(&server, TRANSCRIPT), TRANSCRIPT_REPLY);
    drop(z);
    let (_, reports) = server.stop();
    assert_eq!(reports.len(), 2, "the Z connection took part in no run");
}

#[test]
fn a_client_that_stops_part_way_through_a_line_is_dropped_after_its_limit() {
    let (server, limit) = two_clients_with_a_short_limit();
    // A member of the run that starts a line and stalls holds the clock at 0 ...
    let mut stall = TcpStream::connect(server.addr()).expect("connect");
    stall.write_all(b"STOP 0\nEND\nSEND 65").expect("write");
    let start = Instant::now();
    let text = script(&server, TRANSCRIPT);
    // ... until it is dropped; then the other gets what it would have got.
    assert_eq!(text, TRANSCRIPT_REPLY);
    assert!(
        start.elapsed() >= limit,
        "answered before the stalled client was dropped"
    );
    let mut rest = Vec::new();
    stall
        .set_read_timeout(Some(vesper_tests::READ_TIMEOUT))
        .expect("timeout");
    let _ = stall.read_to_end(&mut rest);
    assert_eq!(String::from_utf8_lossy(&rest), "END\n", "the stalled client is closed");
    let (_, reports) = server.stop();
    let clients = &reports[0].simulation.clients;
    assert_eq!(clients.len(), 2);
    assert!(!clients[0].finished && clients[1].finished, "{clients:?}");
}

#[test]
fn a_client_that_does_not_read_its_replies_is_dropped_after_its_limit() {
    let (server, _) = two_clients_with_a_short_limit();
    // Batch after batch, never reading: its replies fill the socket, and it holds
    // the clock at the last one it got.
    let mut deaf = TcpStream::connect(server.addr()).expect("connect");
    deaf.set_write_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let chunk = b"STOP 1\nEND\n".repeat(4096);
    let flooding = std::thread::spawn(move || {
        while deaf.write_all(&chunk).is_ok() {}
        deaf
    });
    assert_eq!(script(&server, TRANSCRIPT), TRANSCRIPT_REPLY);
    drop(flooding.join().expect("the flooding thread"));
    let (_, reports) = server.stop();
    let clients = &reports[0].simulation.clients;
    assert!(!clients[0].finished && clients[1].finished, "{clients:?}");
}

#[test]
fn connections_that_never_speak_lock_no_one_out() {
    let server = TestServer::start(ServerConfig {
        max_connections: 4,
        silent_timeout: Duration::from_millis(400),
        ..keep_serving()
    });
    // Twice the connection limit, silent.
    let silent: Vec<TcpStream> = (0..8)
        .map(|_| TcpStream::connect(server.addr()).expect("connect"))
        .collect();
    assert_eq!(script(&server, TRANSCRIPT), TRANSCRIPT_REPLY);
    // Every silent connection is closed: to make room, or after its limit.
    for mut s in silent {
        s.set_read_timeout(Some(vesper_tests::READ_TIMEOUT)).expect("timeout");
        let mut buf = [0u8; 8];
        match s.read(&mut buf) {
            Ok(0) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            other => panic!("a silent connection was not closed: {other:?}"),
        }
    }
    let (_, reports) = server.stop();
    assert_eq!(reports.len(), 1, "silent connections are not clients");
}

#[test]
fn a_shutdown_during_a_run_says_so_and_one_between_runs_does_not() {
    let server = TestServer::start(keep_serving());
    assert_eq!(script(&server, TRANSCRIPT), TRANSCRIPT_REPLY);
    let (served, reports) = server.stop();
    assert!(!served.interrupted);
    assert_eq!((served.runs, reports.len()), (1, 1));

    let server = TestServer::start(keep_serving());
    let mut c = Client::connect(server.addr());
    c.send_raw(b"STOP 1000\nEND\n");
    assert_eq!(c.read_reply().text(), "END\n");
    let (served, reports) = server.stop();
    assert!(served.interrupted);
    assert_eq!(reports.len(), 1, "the interrupted run is reported");
    assert!(!reports[0].simulation.clients[0].finished);
}
