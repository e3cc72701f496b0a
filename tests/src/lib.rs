//! Helpers for the over-TCP tests of the vesper server.
//!
//! ```text
//!  test ──▶ TestServer::start(config) ──▶ thread: tokio runtime ─▶ vesper_server::serve(127.0.0.1:0)
//!   │                                                                  ▲        │
//!   └──▶ Client (LegacyConnection) ── lines ──────────────────────────┘        ▼
//!        (one recv() ≤ 500 bytes per chunk, as the Dimemas client)           Report
//! ```
//!
//! [`TestServer`] runs a server on an ephemeral port in a background thread with a
//! watchdog: if a test hangs (a reply that never comes, a run that never ends), the
//! watchdog shuts the server down, its sockets close, and every blocked read in the test
//! fails instead of hanging. [`Client`] wraps the adapter crate's `LegacyConnection`,
//! which reads replies exactly as the legacy client does (one `recv()` of at most 500
//! bytes per chunk; a chunk that ends inside a line is an error), with read timeouts
//! and assertions.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::oneshot;
use vesper_client_dimemas_adapter::connection::RECV_SIZE;
use vesper_client_dimemas_adapter::{LegacyConnection, Reply};
use vesper_netmodels::{AdapterParams, IdealParams};
use vesper_protocol::{ClientMessage, Completion, DataMessage, Token, WireTime};
use vesper_server::config::{
    DIMEMAS_MB, FabricConfig, NetworkConfig, Placement, Replies, ServerConfig, SwitchedConfig, bandwidth, time_from_ns,
};
use vesper_server::{Report, ServerError};

/// After this long a test server shuts itself down: turns a hang into a failure.
pub const WATCHDOG: Duration = Duration::from_secs(15);

/// How long a [`Client`] waits for a reply before failing.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// The client's "run until the next completion" STOP \[ns\] (beyond `u64` picoseconds).
pub const HUGE_STOP_NS: f64 = 2.52e17;

/// Zero-load latency of a message of `size` bytes on the default crossbar \[ns\]:
/// serialisation at 250 bytes/µs (4 ns/byte, cut-through so paid once), two cables of
/// 25 ns each, one routing decision of 100 ns.
pub fn zero_load_ns(size: u64) -> u64 {
    size * 4 + 2 * 25 + 100
}

/// A configuration for tests: a crossbar of `hosts` hosts without packet headers (so
/// that [`zero_load_ns`] holds: these tests are about the protocol and
/// synchronisation; the model's own tests cover headers), `clients` expected clients,
/// a short spin so idle servers do not burn the CPU.
pub fn config(hosts: u32, clients: usize) -> ServerConfig {
    let adapter = AdapterParams {
        header_bytes: 0,
        ..AdapterParams::default()
    };
    ServerConfig {
        network: NetworkConfig {
            hosts,
            placement: Placement::ONE_PER_HOST,
            fabric: FabricConfig::Switched(SwitchedConfig::crossbar(hosts, adapter)),
        },
        clients,
        spin: Duration::from_micros(50),
        // The exchanges these tests check are the protocol's first form: each reply at
        // one completion time. Batched replies have tests of their own (replies.rs,
        // random.rs).
        replies: Replies::Earliest,
        ..ServerConfig::default()
    }
}

/// A configuration for tests of the ideal network: `hosts` hosts, every transfer taking
/// `latency_ns` + size / (`mbps` × 2^20 bytes/s).
pub fn ideal_config(hosts: u32, mbps: f64, latency_ns: f64) -> ServerConfig {
    let params = IdealParams {
        bandwidth: Some(bandwidth(mbps, DIMEMAS_MB).expect("a positive bandwidth")),
        latency: time_from_ns(latency_ns).expect("a non-negative latency"),
    };
    ServerConfig {
        network: NetworkConfig {
            hosts,
            placement: Placement::ONE_PER_HOST,
            fabric: FabricConfig::Ideal(params),
        },
        ..config(hosts, 1)
    }
}

/// A server running on `127.0.0.1:0` in a background thread.
#[derive(Debug)]
pub struct TestServer {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<Result<vesper_server::Served, ServerError>>>,
    watchdog_fired: Arc<AtomicBool>,
    reports: Arc<Mutex<Vec<Report>>>,
}

impl TestServer {
    /// Binds `127.0.0.1:0` and starts `vesper_server::serve` with `config`, keeping
    /// every run's report.
    pub fn start(config: ServerConfig) -> TestServer {
        let reports = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&reports);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("non-blocking listener");
        let addr = listener.local_addr().expect("local address");
        let (shutdown, shutdown_rx) = oneshot::channel::<()>();
        let watchdog_fired = Arc::new(AtomicBool::new(false));
        let fired = Arc::clone(&watchdog_fired);
        let thread = std::thread::Builder::new()
            .name("vesper-test-server".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                    let shutdown = async move {
                        tokio::select! {
                            // Fires on a shutdown request, or when the TestServer is dropped.
                            _ = shutdown_rx => {}
                            () = tokio::time::sleep(WATCHDOG) => fired.store(true, Ordering::SeqCst),
                        }
                    };
                    let reports =
                        Box::new(move |report| kept.lock().unwrap_or_else(PoisonError::into_inner).push(report));
                    vesper_server::serve(listener, config, shutdown, reports).await
                })
            })
            .expect("spawn the server thread");
        TestServer {
            addr,
            shutdown: Some(shutdown),
            thread: Some(thread),
            watchdog_fired,
            reports,
        }
    }

    /// Waits (up to [`READ_TIMEOUT`]) until `runs` runs have ended; their reports.
    #[track_caller]
    pub fn wait_for_runs(&self, runs: usize) -> Vec<Report> {
        let start = std::time::Instant::now();
        loop {
            let reports = self.reports();
            if reports.len() >= runs {
                return reports;
            }
            assert!(
                start.elapsed() < READ_TIMEOUT,
                "{} run(s) ended, expected {runs}",
                reports.len()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The reports of the runs that have ended, in order.
    pub fn reports(&self) -> Vec<Report> {
        self.reports.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A new scripted client connected to this server.
    pub fn client(&self) -> Client {
        Client::connect(self.addr)
    }

    /// Waits for the run to end on its own (every expected client finished); fails if
    /// the watchdog had to stop it. Returns the last run's report.
    pub fn wait(mut self) -> Report {
        let report = self.join();
        assert!(
            !self.watchdog_fired.load(Ordering::SeqCst),
            "the server run did not end on its own: the watchdog stopped it after {WATCHDOG:?}"
        );
        report
    }

    /// Triggers the shutdown future and waits for the last run's report.
    pub fn shutdown(mut self) -> Report {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let report = self.join();
        assert!(
            !self.watchdog_fired.load(Ordering::SeqCst),
            "the server ignored the shutdown: the watchdog stopped it after {WATCHDOG:?}"
        );
        report
    }

    /// Triggers the shutdown future and waits for the server to end: how it ended, and
    /// every run's report.
    pub fn stop(mut self) -> (vesper_server::Served, Vec<Report>) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        (self.end(), self.reports())
    }

    /// Waits for the server thread to end: how it ended.
    fn end(&mut self) -> vesper_server::Served {
        let thread = self.thread.take().expect("the server is joined once");
        thread
            .join()
            .expect("the server thread panicked")
            .expect("the server run failed")
    }

    fn join(&mut self) -> Report {
        self.end();
        self.reports().pop().expect("a report")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // A test that panicked leaves its server behind: stop it (without waiting).
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// A reply batch as the legacy client received it.
pub type RawReply = Reply;

/// A scripted client: the adapter crate's [`LegacyConnection`] (which reads exactly as
/// the Dimemas client does) with a read timeout, and assertions that fail the test.
#[derive(Debug)]
pub struct Client {
    connection: LegacyConnection,
}

impl Client {
    /// Connects with `TCP_NODELAY` and a read timeout of [`READ_TIMEOUT`].
    pub fn connect(addr: SocketAddr) -> Client {
        let mut connection = LegacyConnection::connect(addr).expect("connect to the test server");
        connection.set_read_timeout(Some(READ_TIMEOUT)).expect("read timeout");
        Client { connection }
    }

    /// Writes the lines in one `send()`.
    pub fn send(&mut self, lines: &[ClientMessage]) {
        self.connection.send(lines).expect("write to the server");
    }

    /// Writes raw bytes in one `send()`.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.connection.send_raw(bytes).expect("write to the server");
    }

    /// Reads one reply batch; panics on anything the legacy client would choke on.
    #[track_caller]
    pub fn read_reply(&mut self) -> RawReply {
        match self.connection.read_reply() {
            Ok(reply) => reply,
            Err(e) => panic!("reading a reply: {e}"),
        }
    }

    /// Sends a batch and reads its reply.
    #[track_caller]
    pub fn exchange(&mut self, lines: &[ClientMessage]) -> RawReply {
        self.send(lines);
        self.read_reply()
    }

    /// Sends a batch; checks its reply is one legacy write with no line the client
    /// would ignore; returns its completions.
    #[track_caller]
    pub fn batch(&mut self, lines: &[ClientMessage]) -> Vec<Completion> {
        let reply = self.exchange(lines);
        assert_eq!(reply.ignored, Vec::<String>::new(), "lines the client would ignore");
        assert_one_write(&reply);
        reply.completions
    }

    /// `STOP t` + `END`, and the reply.
    #[track_caller]
    pub fn stop(&mut self, t: f64) -> RawReply {
        self.exchange(&[stop(t), ClientMessage::End])
    }

    /// Asserts that the server writes nothing for `wait`.
    ///
    /// Can only miss a wrong write on a very slow machine, never fail a correct server.
    #[track_caller]
    pub fn expect_silence(&mut self, wait: Duration) {
        self.connection.set_read_timeout(Some(wait)).expect("read timeout");
        let mut buf = [0u8; RECV_SIZE];
        let got = self.connection.read_raw(&mut buf);
        self.connection
            .set_read_timeout(Some(READ_TIMEOUT))
            .expect("read timeout");
        match got {
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Ok(0) => panic!("expected silence, but the server closed the connection"),
            Ok(n) => panic!(
                "expected silence, but the server wrote {:?}",
                String::from_utf8_lossy(&buf[..n])
            ),
            Err(e) => panic!("expected silence, got a socket error: {e}"),
        }
    }

    /// Asserts that the server closes the connection (end of file or reset) without
    /// writing anything.
    #[track_caller]
    pub fn expect_closed(&mut self) {
        let mut buf = [0u8; RECV_SIZE];
        match self.connection.read_raw(&mut buf) {
            Ok(0) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted
                ) => {}
            Ok(n) => panic!(
                "expected the connection closed, got {:?}",
                String::from_utf8_lossy(&buf[..n])
            ),
            Err(e) => panic!("expected the connection closed, got {e}"),
        }
    }

    /// Every reply byte received so far.
    pub fn transcript(&self) -> &[u8] {
        self.connection.transcript()
    }

    /// Sends `FINISH` and closes the connection.
    pub fn finish(self) {
        self.connection.finish().expect("FINISH");
    }

    /// Closes the socket without `FINISH`.
    pub fn vanish(self) {
        self.connection.close();
    }
}

/// Asserts the spec's legacy rule: a reply is one write of at most 500 bytes, `END`
/// included, so the client gets it in one `recv()` ending with `END\n`.
#[track_caller]
pub fn assert_one_write(reply: &RawReply) {
    assert!(
        reply.bytes.len() <= RECV_SIZE,
        "a reply of {} bytes (limit {RECV_SIZE}): {:?}",
        reply.bytes.len(),
        reply.text()
    );
    assert_eq!(
        reply.chunks.len(),
        1,
        "reply arrived in {:?} chunks: {:?}",
        reply.chunks,
        reply.text()
    );
    assert!(reply.bytes.ends_with(b"END\n"), "reply {:?}", reply.text());
}

/// The lines, each ending with `\n`.
pub fn lines_text(lines: &[ClientMessage]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// A pointer-like token, distinct for every `n`.
pub fn token(n: u64) -> Token {
    Token::new(&format!("0x55a8{n:08x}")).expect("a valid token")
}

/// An eager data message between applications 0 and 0, tag 7, with tokens
/// `token(2n)` and `token(2n + 1)`.
pub fn message(t: f64, src: u32, dst: u32, size: u32, n: u64) -> DataMessage {
    DataMessage {
        time: WireTime(t),
        src,
        dst,
        tag: Some(7),
        size,
        ev: token(2 * n),
        ev_out: token(2 * n + 1),
        src_repeat: src,
        dst_repeat: dst,
        src_app: 0,
        dst_app: 0,
    }
}

/// `SEND …`
pub fn send(m: DataMessage) -> ClientMessage {
    ClientMessage::Send(m)
}

/// `STOP t`
pub fn stop(t: f64) -> ClientMessage {
    ClientMessage::Stop(WireTime(t))
}

/// The `COMPLETED SEND` line (with its newline) the server owes for `m`.
pub fn completed_line(arrival: &str, m: &DataMessage, phys_send: &str) -> String {
    format!(
        "COMPLETED SEND {arrival} {src} {dst} {size} {ev} {ev_out} {src} {dst} {phys_send}\n",
        src = m.src,
        dst = m.dst,
        size = m.size,
        ev = m.ev,
        ev_out = m.ev_out,
    )
}

/// Asserts that `reply` holds one completion, that of `m` at `arrival` ns, first byte
/// sent at `phys_send` ns (see [`assert_completion`]).
#[track_caller]
pub fn assert_only_completion(reply: &RawReply, m: &DataMessage, arrival: f64, phys_send: f64) {
    assert_eq!(reply.completions.len(), 1, "{}", reply.text());
    assert_completion(&reply.completions[0], m, arrival, phys_send);
}

/// Asserts that `c` is the completion of `m` at `arrival` ns, first byte sent at
/// `phys_send` ns, every echoed field equal to the request's.
#[track_caller]
pub fn assert_completion(c: &Completion, m: &DataMessage, arrival: f64, phys_send: f64) {
    assert_eq!(
        (c.src, c.dst, c.size, c.ev, c.ev_out, c.src_repeat, c.dst_repeat),
        (m.src, m.dst, m.size, m.ev, m.ev_out, m.src, m.dst),
        "echoed fields of {c:?}"
    );
    assert_eq!(c.time, WireTime(arrival), "arrival time of {c:?}");
    assert_eq!(
        c.phys_send_time,
        Some(WireTime(phys_send)),
        "physical send time of {c:?}"
    );
}

/// Replays `workload` (default options) over TCP against a fresh server on `network`,
/// checking that the server saw every message and kept none; returns the outcome.
pub fn replay_on(
    network: NetworkConfig,
    workload: &vesper_client_dimemas_adapter::replay::Workload,
) -> vesper_client_dimemas_adapter::replay::Outcome {
    use vesper_client_dimemas_adapter::replay::{ReplayOptions, ServerFabric, replay_with};
    let server = TestServer::start(ServerConfig {
        network,
        ..config(1, 1)
    });
    let connection = LegacyConnection::connect(server.addr()).expect("connects");
    let mut fabric = ServerFabric::new(connection, 0);
    let outcome = replay_with(workload, &mut fabric, &ReplayOptions::default()).expect("replayed");
    fabric.finish().expect("finished");
    let report = server.wait();
    assert_eq!(report.simulation.messages, outcome.messages);
    assert_eq!(report.simulation.messages_in_flight_at_exit, 0);
    outcome
}

/// One small workload of every synthetic kind that `vesper run --workload` names (14
/// kinds), with messages of `size` bytes: few enough tasks (at most 27) for every
/// preset, and quick in a debug build.
pub fn every_synthetic_workload(size: u32) -> Vec<vesper_client_dimemas_adapter::replay::Workload> {
    use vesper_client_dimemas_adapter::replay::Workload;
    vec![
        Workload::ping_pong(size, 3),
        Workload::ring(8, size, 2, 1_000_000),
        Workload::all_to_all(8, size),
        // Tasks n and n + 16 exchange: 8 pairs.
        Workload::wrf(24, 16, size),
        Workload::binary_tree(13, size),
        Workload::inverse_binary_tree(16, size),
        Workload::all_to_one(9, size),
        Workload::one_to_all(9, size),
        Workload::butterfly(8, size),
        Workload::wavefront(16, 2, size).expect("a square"),
        Workload::wavefront(27, 3, size).expect("a cube"),
        Workload::mesh_halo(16, 2, size).expect("a square"),
        Workload::mesh_halo(8, 3, size).expect("a cube"),
        Workload::synchronized_random(16, size, 64, 16, lcg()).expect("random pairs"),
    ]
}

/// A fixed sequence of draws in 0..n.
pub fn lcg() -> impl FnMut(u32) -> u32 {
    let mut x = 1u32;
    move |n| {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        (x >> 16) % n
    }
}
