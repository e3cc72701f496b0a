//! The simulation thread's loop: it owns the current run's coordinator (and so the
//! simulation) and the client sockets the listener hands over, reads and writes them
//! without blocking, and applies each command as soon as its bytes are in.
//!
//! ```text
//!  tokio listener ──(accepted socket)──▶ driver thread: poll sockets ─▶ Session ─▶ Coordinator (run n)
//!                                                        ◀── one write per reply ───┘
//! ```
//!
//! Why the sockets live on this thread rather than in tokio tasks that talk to it over
//! channels: every hand-off between threads costs a wake-up, and on the machines we
//! measured a wake-up costs 30–40 µs, more than the whole round-trip budget (25 µs).
//! With the sockets here, a round trip costs only the client's own wake-up. After each
//! piece of work the thread keeps polling without sleeping for a short while (`spin`),
//! because the client usually answers within microseconds; then it sleeps in the poller
//! until a socket or the listener wakes it.
//!
//! Runs: a run is the group of `clients` clients the server waits for. A connection
//! joins the run under way with its first well-formed line if the run still has room;
//! otherwise it waits for the next run, read only to the end of the line or batch it
//! started (at most [`WAITING_READ`] bytes more), so that a stall there shows before its
//! turn: such a connection is dropped and costs no run. When every client of a run has
//! finished (or left), its report goes out, its connections are closed, and the next run
//! starts on a fresh network at time zero with the clients that wait, in the order they
//! spoke; nothing of a run outlives it.
//!
//! No client can starve the others or make the server allocate without bound:
//! - each client gets at most [`READ_BUDGET`] bytes read per turn, then the others;
//! - a client's commands are applied in order, and none while the client's last batch
//!   is unanswered: a client that sends ahead (batches, `FINISH`, or its close) is
//!   served as if it had waited for each reply; while commands wait, its socket is not
//!   read, unless the client has closed its side (then the rest is read, and applied
//!   in turn);
//! - while more than [`OUTPUT_LIMIT`] bytes of replies wait for a client to read them,
//!   its socket is not read either, so TCP holds the client back;
//! - a client whose socket fails on a write is dropped, as on a disconnect;
//! - a client that stops part way through a line or a batch, or leaves replies unread,
//!   for `client_timeout` is dropped, and so is a connection waiting for the next run
//!   that stops part way; a connection that sends no well-formed line within
//!   `silent_timeout` is closed, and the oldest such connection makes room for a new
//!   one when `max_connections` are open (or as many as one address may have, from its
//!   address: the listener refuses more clients than that from one address).
//!
//! The one wait with no limit is the one the synchronisation needs: a client that has
//! its last reply and sends nothing is computing, as far as the server can tell (a
//! replayer does not synchronise while it has no message in flight), and the run waits
//! for its next batch or `FINISH`.
//!
//! A connection counts as a client from its first well-formed line: one that closes
//! before (a port check) is not a client that left.

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token, Waker};
use tracing::{debug, error, info, warn};

use crate::config::ServerConfig;
use crate::error::ServerError;
use crate::report::Report;
use crate::sync::ClientId;
use crate::sync::coordinator::{Coordinator, SessionEvent};
use crate::sync::session::{Session, SessionLimits};

/// How often a long run logs where it is.
const STATUS_EVERY: Duration = Duration::from_secs(10);

/// Bytes read from one client before the others get their turn.
pub const READ_BUDGET: usize = 64 * 1024;

/// Reply bytes a client may leave unread before its socket is no longer read.
pub const OUTPUT_LIMIT: usize = 64 * 1024;

/// Bytes read from a connection that waits for the next run, past the piece that made
/// it a client, to find the end of the line or batch it started: a first batch of a few
/// hundred `SEND` lines. The rest of a longer one is read in its turn.
pub const WAITING_READ: usize = 16 * 1024;

/// The poller token of the listener's wake-ups.
pub const WAKER: Token = Token(usize::MAX);

/// What the listener tells the driver.
#[derive(Debug)]
pub enum Control {
    /// a client connected
    Accepted {
        /// its id, in accept order
        client: ClientId,
        /// its socket (non-blocking, `TCP_NODELAY` set)
        stream: std::net::TcpStream,
        /// its address
        peer: SocketAddr,
    },
    /// stop now
    Shutdown,
}

/// Makes the coordinator of run `n` (from 1): a fresh network at time zero.
pub type NewRun = Box<dyn FnMut(u64) -> Result<Coordinator, ServerError> + Send>;

/// Takes each run's report as the run ends.
pub type RunReports = Box<dyn FnMut(Report) + Send>;

/// How the serving ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    /// runs reported
    pub runs: u64,
    /// a shutdown came while a client had not finished (a run under way, or a client
    /// waiting for the next one), or before a one-run server's run was complete
    pub interrupted: bool,
}

/// Counts the driver shares with the listener.
#[derive(Debug, Default)]
pub struct Occupancy {
    /// connections open
    pub open: AtomicUsize,
    /// of which have not sent a well-formed line yet (they make room for new ones)
    pub silent: AtomicUsize,
    /// the same counts for each origin ([`origin`]) with a connection open
    by_origin: Mutex<BTreeMap<IpAddr, Counts>>,
}

/// Connections open from one origin.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// connections open
    pub open: usize,
    /// of which have not sent a well-formed line yet
    pub silent: usize,
}

impl Occupancy {
    /// A connection from `peer` opens, not spoken yet, unless its origin has `limit`
    /// clients (connections that have spoken) already (`None`: no limit): then `Err` with
    /// their number.
    pub fn open(&self, peer: SocketAddr, limit: Option<usize>) -> Result<(), usize> {
        let key = origin(peer.ip());
        let mut by_origin = self.by_origin.lock().unwrap_or_else(PoisonError::into_inner);
        let mut counts = by_origin.get(&key).copied().unwrap_or_default();
        let clients = counts.open.saturating_sub(counts.silent);
        if limit.is_some_and(|limit| clients >= limit) {
            return Err(clients);
        }
        counts.open += 1;
        counts.silent += 1;
        by_origin.insert(key, counts);
        self.open.fetch_add(1, Ordering::AcqRel);
        self.silent.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// The connections open from the origin of `peer`.
    pub fn from_origin(&self, peer: SocketAddr) -> Counts {
        let by_origin = self.by_origin.lock().unwrap_or_else(PoisonError::into_inner);
        by_origin.get(&origin(peer.ip())).copied().unwrap_or_default()
    }

    /// A connection from `peer` is no longer silent: it has spoken, or closed without a
    /// well-formed line.
    fn not_silent(&self, peer: SocketAddr) {
        self.silent.fetch_sub(1, Ordering::AcqRel);
        self.count(peer, |counts| counts.silent = counts.silent.saturating_sub(1));
    }

    /// A connection from `peer` is closed (the server no longer reads it).
    fn close(&self, peer: SocketAddr) {
        self.open.fetch_sub(1, Ordering::AcqRel);
        self.count(peer, |counts| counts.open = counts.open.saturating_sub(1));
    }

    /// Changes the counts of the origin of `peer`; an origin with nothing left is
    /// forgotten.
    fn count(&self, peer: SocketAddr, change: impl FnOnce(&mut Counts)) {
        let key = origin(peer.ip());
        let mut by_origin = self.by_origin.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(counts) = by_origin.get_mut(&key) {
            change(counts);
            if *counts == Counts::default() {
                by_origin.remove(&key);
            }
        }
    }
}

/// Where a connection comes from, as the limit per address counts: its IPv4 address
/// (also when it comes as an IPv4-mapped IPv6 address), or the /64 of its IPv6 address
/// (a single IPv6 host usually has a whole /64 to pick addresses from).
pub fn origin(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
        },
    }
}

/// [`origin`] as the log names it: `127.0.0.1`, `2001:db8::/64`.
pub fn origin_text(ip: IpAddr) -> String {
    match origin(ip) {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("{v6}/64"),
    }
}

struct Connection {
    stream: TcpStream,
    session: Session,
    peer: SocketAddr,
    input: BytesMut,
    /// reply bytes the socket did not take yet
    output: Vec<u8>,
    /// commands read and not yet applied, in order: none is applied while the client's
    /// last batch is unanswered
    pending: VecDeque<SessionEvent>,
    /// the socket may hold bytes not read yet (the read budget ran out, or reading
    /// was held back)
    unread: bool,
    /// it sent a well-formed line: it is a client
    spoke: bool,
    /// lines dropped before it spoke (counted against it once it joins a run)
    early_rejects: u64,
    /// it spoke while the run was full: it waits for the next run, read only to the end
    /// of the line or batch it started
    waiting: bool,
    /// bytes read while it waits for the next run (at most [`WAITING_READ`])
    read_waiting: usize,
    /// a write failed: the connection is dropped
    failed: bool,
    /// dropped by the server (a time limit, or room for another): what it sent part
    /// way is forgotten
    dropped: bool,
    /// the client closed its side (or the socket failed): what it sent is read to the
    /// end whatever waits
    hangup: bool,
    /// the socket is closed; the commands it sent are still applied in turn, as if the
    /// client had waited for each reply
    gone: bool,
    /// when it connected
    accepted: Instant,
    /// since when it has owed us the rest of a line or a batch: the last bytes read, or
    /// the moment it was read again after being held back
    quiet_since: Instant,
    /// since when its replies have waited unread: the last write the socket took
    unread_since: Instant,
}

impl Connection {
    /// Takes the commands its session made: lines dropped before the first good one
    /// are only counted until the connection is a client.
    fn queue(&mut self, commands: &mut Vec<SessionEvent>) {
        if !self.spoke {
            let before = commands.len();
            commands.retain(|c| !matches!(c, SessionEvent::Rejected { .. }));
            self.early_rejects += (before - commands.len()) as u64;
        }
        self.pending.extend(commands.drain(..));
    }

    /// It joins the run under way: its commands so far follow its `Connect`.
    fn join(&mut self, client: ClientId) {
        if self.held_back() {
            // Its time to send the rest starts now; a connection read while it waited
            // (part way through a line or a batch) keeps its time.
            self.quiet_since = Instant::now();
        }
        self.waiting = false;
        self.unread = true;
        let rejected = std::mem::take(&mut self.early_rejects);
        if rejected > 0 {
            self.pending.push_front(SessionEvent::Rejected {
                client,
                lines: rejected,
            });
        }
        self.pending.push_front(SessionEvent::Connect {
            client,
            peer: self.peer.to_string(),
        });
    }

    /// Whether it is part way through a line or a batch.
    fn part_way(&self) -> bool {
        !self.input.is_empty() || self.session.in_batch()
    }

    /// Whether its socket is left unread for now: it waits for the next run (and has
    /// ended the line and batch it started, or was read [`WAITING_READ`] bytes), its
    /// commands wait, or replies pile up (unless the client has hung up: then its last
    /// bytes and the close are read).
    fn held_back(&self) -> bool {
        if self.gone {
            return true;
        }
        if self.waiting {
            // Read on only as far as it takes to see whether it stalls.
            return !self.part_way() || self.read_waiting >= WAITING_READ;
        }
        !self.hangup && (!self.pending.is_empty() || self.output.len() >= OUTPUT_LIMIT)
    }

    /// Why it should be dropped now, if it should.
    fn timed_out(&self, now: Instant, config: &ServerConfig) -> Option<String> {
        if self.failed {
            return None;
        }
        // Replies left unread, by a client or by one that closed its side: only a client
        // has replies.
        if !self.output.is_empty() && now.duration_since(self.unread_since) >= config.client_timeout {
            return Some(format!(
                "left {} bytes of replies unread for {} s (--client-timeout)",
                self.output.len(),
                config.client_timeout.as_secs_f64()
            ));
        }
        if self.gone {
            return None;
        }
        if !self.spoke {
            let silent = now.duration_since(self.accepted);
            return (silent >= config.silent_timeout).then(|| {
                format!(
                    "sent no well-formed line in {} s (--silent-timeout)",
                    config.silent_timeout.as_secs_f64()
                )
            });
        }
        // A connection that waits for the next run too: stalled before its turn, it
        // costs no run.
        if self.part_way() && !self.held_back() && now.duration_since(self.quiet_since) >= config.client_timeout {
            let what = if self.input.is_empty() { "a batch" } else { "a line" };
            return Some(format!(
                "started {what} and sent nothing more for {} s (--client-timeout)",
                config.client_timeout.as_secs_f64()
            ));
        }
        None
    }
}

/// Runs the simulation thread until the run is complete or a shutdown.
pub struct Driver {
    config: ServerConfig,
    coordinator: Coordinator,
    new_run: NewRun,
    reports: RunReports,
    /// the run under way, from 1
    run: u64,
    /// runs reported
    reported: u64,
    /// clients that joined the run under way
    members: usize,
    /// connections that spoke while the run was full, in the order they spoke
    lobby: VecDeque<ClientId>,
    poll: Poll,
    control: Receiver<Control>,
    connections: BTreeMap<ClientId, Connection>,
    limits: SessionLimits,
    occupancy: Arc<Occupancy>,
    shutdown: Arc<AtomicBool>,
    commands: Vec<SessionEvent>,
    /// connections whose socket failed on a write, to drop
    failed: Vec<ClientId>,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("run", &self.run)
            .field("connections", &self.connections.len())
            .finish()
    }
}

impl Driver {
    /// A driver and the waker the listener uses to get its attention; `new_run` makes
    /// the first run's coordinator at once.
    pub fn new(
        config: ServerConfig,
        mut new_run: NewRun,
        reports: RunReports,
        control: Receiver<Control>,
        occupancy: Arc<Occupancy>,
        shutdown: Arc<AtomicBool>,
    ) -> Result<(Driver, Arc<Waker>), ServerError> {
        let thread = |e: io::Error| ServerError::Thread(e.to_string());
        let coordinator = new_run(1)?;
        let poll = Poll::new().map_err(thread)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER).map_err(thread)?);
        let driver = Driver {
            limits: SessionLimits {
                max_line: config.max_line,
                max_batch: config.max_batch,
            },
            config,
            coordinator,
            new_run,
            reports,
            run: 1,
            reported: 0,
            members: 0,
            lobby: VecDeque::new(),
            poll,
            control,
            connections: BTreeMap::new(),
            occupancy,
            shutdown,
            commands: Vec::new(),
            failed: Vec::new(),
        };
        Ok((driver, waker))
    }

    /// Serves runs until the first is complete (when configured so) or a shutdown;
    /// hands each run's report to the report sink as the run ends. If the coordinator
    /// stops a run, its clients' connections are closed (the protocol has no error
    /// reply): a one-run server returns the reason with the report, a server that keeps
    /// serving reports the reason and starts the next run.
    pub fn run(mut self) -> Result<Served, ServerError> {
        let mut events = Events::with_capacity(256);
        let mut last_work = Instant::now();
        let mut last_status = Instant::now();
        let mut last_timeouts = Instant::now();
        let tick = self.config.client_timeout.min(self.config.silent_timeout) / 4;
        let tick = tick.clamp(Duration::from_millis(10), Duration::from_secs(1));
        loop {
            if last_status.elapsed() >= STATUS_EVERY {
                last_status = Instant::now();
                if !self.connections.is_empty() {
                    info!("run {}: {}", self.run, self.coordinator.status());
                }
            }
            // Before the run's state is looked at: a drop may end it.
            if last_timeouts.elapsed() >= tick {
                last_timeouts = Instant::now();
                self.drop_timed_out();
            }
            if self.coordinator.is_complete() {
                info!("run {}: every client has finished; the run is complete", self.run);
                if self.config.exit_when_done {
                    self.end_run();
                    return Ok(self.served(false));
                }
                self.next_run()?;
                continue;
            }
            if let Some(stopped) = self.coordinator.stopped() {
                error!(
                    "run {}: {stopped}; the run stops and its clients are disconnected",
                    self.run
                );
                if self.config.exit_when_done {
                    return Err(ServerError::Stopped {
                        stopped,
                        report: Box::new(self.final_report()),
                    });
                }
                self.next_run()?;
                continue;
            }
            let spinning = last_work.elapsed() < self.config.spin;
            let more = self.connections.values().any(|c| c.unread && !c.held_back());
            // Sleep until a socket wakes us, but wake for the time limits and the status
            // line.
            let timeout = if spinning || more {
                Duration::ZERO
            } else if self.connections.is_empty() {
                STATUS_EVERY
            } else {
                tick
            };
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    warn!("poll failed: {e}");
                }
                continue;
            }
            for event in events.iter() {
                if event.token() == WAKER {
                    continue;
                }
                let client = event.token().0 as ClientId;
                if event.is_writable() {
                    self.flush(client);
                }
                if let Some(conn) = self.connections.get_mut(&client) {
                    if event.is_readable() || event.is_read_closed() || event.is_error() {
                        conn.unread = true;
                    }
                    if event.is_read_closed() || event.is_error() {
                        conn.hangup = true;
                    }
                    if conn.gone && (event.is_error() || event.is_write_closed()) {
                        // Gone for good: its last replies cannot be written.
                        conn.failed = true;
                        conn.output.clear();
                        self.forget_if_done(client);
                    }
                }
            }
            // One turn each, in client order.
            let mut worked = false;
            let mut next = 0;
            while let Some(client) = self.next_unread(next) {
                next = client + 1;
                worked |= self.read(client);
            }
            self.drop_failed();
            match self.take_control() {
                Ok(got) => worked |= got,
                Err(()) => break,
            }
            if self.shutdown.load(Ordering::Relaxed) {
                break;
            }
            if worked {
                last_work = Instant::now();
            }
        }
        // Shut down: the run under way is reported if anyone took part in it (or if no
        // run was reported at all).
        let under_way = self.members > 0 || !self.lobby.is_empty();
        let interrupted = if self.config.exit_when_done {
            !self.coordinator.is_complete()
        } else {
            under_way
        };
        if under_way || self.reported == 0 {
            self.end_run();
        }
        Ok(self.served(interrupted))
    }

    fn served(&self, interrupted: bool) -> Served {
        Served {
            runs: self.reported,
            interrupted,
        }
    }

    /// The run under way's report, its trace finished.
    fn final_report(&mut self) -> Report {
        self.coordinator.finish_trace();
        let mut report = self.coordinator.report();
        report.run = self.run;
        report
    }

    /// Ends the run under way: hands out its report.
    fn end_run(&mut self) {
        let report = self.final_report();
        self.reported += 1;
        (self.reports)(report);
    }

    /// Ends the run under way, closes its clients' connections and starts the next run
    /// on a fresh network with the clients that wait for it.
    fn next_run(&mut self) -> Result<(), ServerError> {
        self.end_run();
        let members: Vec<ClientId> = self
            .connections
            .iter()
            .filter(|(_, c)| c.spoke && !c.waiting)
            .map(|(&id, _)| id)
            .collect();
        for client in members {
            self.retire(client);
        }
        self.run += 1;
        self.members = 0;
        self.coordinator = (self.new_run)(self.run)?;
        info!("run {} starts", self.run);
        while self.members < self.config.clients
            && let Some(client) = self.lobby.pop_front()
        {
            self.join(client);
        }
        self.apply_pending();
        Ok(())
    }

    /// Closes the connection of a client whose run has ended: nothing more is read, and
    /// it is forgotten once its last replies are written.
    fn retire(&mut self, client: ClientId) {
        let Some(conn) = self.connections.get_mut(&client) else {
            return;
        };
        conn.pending.clear();
        self.stop_reading(client);
        self.forget_if_done(client);
    }

    /// Reads no more from `client`: it is gone, no longer counts as open, and its socket
    /// is watched only for the replies still owed (a client that only closed its sending
    /// side still reads them). Whether it was not gone before.
    fn stop_reading(&mut self, client: ClientId) -> bool {
        let Some(conn) = self.connections.get_mut(&client) else {
            return false;
        };
        if conn.gone {
            return false;
        }
        conn.gone = true;
        let _ = self
            .poll
            .registry()
            .reregister(&mut conn.stream, Token(client as usize), Interest::WRITABLE);
        self.occupancy.close(conn.peer);
        true
    }

    /// A client that waited joins the run under way.
    fn join(&mut self, client: ClientId) {
        let Some(conn) = self.connections.get_mut(&client) else {
            return;
        };
        info!("{}: joins run {}", conn.session.name(), self.run);
        conn.join(client);
        self.members += 1;
    }

    /// Drops the connections that ran out of time.
    fn drop_timed_out(&mut self) {
        let now = Instant::now();
        let late: Vec<(ClientId, String)> = self
            .connections
            .iter()
            .filter_map(|(&id, c)| c.timed_out(now, &self.config).map(|why| (id, why)))
            .collect();
        for (client, why) in late {
            let Some(conn) = self.connections.get_mut(&client) else {
                continue;
            };
            if conn.gone {
                // Already out of its run: only its socket is left to close.
                info!("{}: after its close, {why}; closed", conn.session.name());
                conn.failed = true;
                conn.output.clear();
                self.forget_if_done(client);
                continue;
            }
            if conn.waiting {
                // Not in a run yet: it goes without a trace in any.
                warn!(
                    "{}: {why} while waiting for the next run; dropped before its turn",
                    conn.session.name()
                );
                self.drop_waiting(client);
                continue;
            }
            if conn.spoke {
                warn!("{}: {why}; dropped, the others continue", conn.session.name());
            } else {
                info!("connection from {}: {why}; closed", conn.peer);
            }
            self.drop_connection(client);
        }
    }

    /// Drops a connection that waits for the next run: it was in no run, and leaves
    /// no trace in any.
    fn drop_waiting(&mut self, client: ClientId) {
        self.lobby.retain(|&waiting| waiting != client);
        self.stop_reading(client);
        if let Some(conn) = self.connections.remove(&client) {
            let _ = conn.stream.shutdown(std::net::Shutdown::Both);
        }
    }

    /// Drops a connection now: what it sent part way (a line, a batch) is forgotten,
    /// what it owes nothing more, and its client is gone from the run.
    fn drop_connection(&mut self, client: ClientId) {
        let Some(conn) = self.connections.get_mut(&client) else {
            return;
        };
        conn.dropped = true;
        conn.failed = true;
        conn.output.clear();
        let _ = conn.stream.shutdown(std::net::Shutdown::Both);
        self.close(client);
    }

    /// New connections and shutdown from the listener; `Err` means stop.
    fn take_control(&mut self) -> Result<bool, ()> {
        let mut got = false;
        loop {
            match self.control.try_recv() {
                Ok(Control::Accepted { client, stream, peer }) => {
                    got = true;
                    self.accept(client, stream, peer);
                }
                Ok(Control::Shutdown) | Err(TryRecvError::Disconnected) => return Err(()),
                Err(TryRecvError::Empty) => return Ok(got),
            }
        }
    }

    fn accept(&mut self, client: ClientId, stream: std::net::TcpStream, peer: SocketAddr) {
        let mut stream = TcpStream::from_std(stream);
        if let Err(e) = self
            .poll
            .registry()
            .register(&mut stream, Token(client as usize), Interest::READABLE)
        {
            warn!("client {client} ({peer}): cannot watch the socket: {e}; connection dropped");
            self.occupancy.close(peer);
            self.occupancy.not_silent(peer);
            return;
        }
        // Full: the oldest connection that has not spoken makes room.
        if self.occupancy.open.load(Ordering::Acquire) > self.config.max_connections
            && let Some((&oldest, conn)) = self.connections.iter().find(|(_, c)| !c.spoke && !c.gone)
        {
            info!(
                "connection from {}: closed, it sent no well-formed line and a new connection needs its place (--max-connections {})",
                conn.peer, self.config.max_connections
            );
            self.drop_connection(oldest);
        }
        // As many from its address as allowed: the oldest from there that has not
        // spoken makes room.
        if let Some(limit) = self.config.per_address_limit()
            && self.occupancy.from_origin(peer).open > limit
            && let Some((&oldest, conn)) = self
                .connections
                .iter()
                .find(|(_, c)| !c.spoke && !c.gone && origin(c.peer.ip()) == origin(peer.ip()))
        {
            info!(
                "connection from {}: closed, it sent no well-formed line and a new connection from {} needs its place (--max-connections-per-address {limit})",
                conn.peer,
                origin_text(peer.ip())
            );
            self.drop_connection(oldest);
        }
        let session = Session::new(client, &peer.to_string(), self.limits);
        let now = Instant::now();
        self.connections.insert(
            client,
            Connection {
                stream,
                session,
                peer,
                input: BytesMut::with_capacity(4096),
                output: Vec::new(),
                pending: VecDeque::new(),
                // Its bytes may have arrived before it was registered.
                unread: true,
                spoke: false,
                early_rejects: 0,
                waiting: false,
                read_waiting: 0,
                failed: false,
                dropped: false,
                hangup: false,
                gone: false,
                accepted: now,
                quiet_since: now,
                unread_since: now,
            },
        );
    }

    /// The first client from `from` on whose socket may have bytes to read now.
    fn next_unread(&self, from: ClientId) -> Option<ClientId> {
        self.connections
            .range(from..)
            .find(|(_, c)| c.unread && !c.held_back())
            .map(|(&id, _)| id)
    }

    /// Reads up to [`READ_BUDGET`] bytes from the socket, applies the commands they
    /// complete and writes the replies. Returns whether anything was read.
    fn read(&mut self, client: ClientId) -> bool {
        let Some(conn) = self.connections.get_mut(&client) else {
            return false;
        };
        conn.unread = false;
        let mut got = false;
        let mut closed = false;
        let mut buf = [0u8; 8192];
        let mut budget = READ_BUDGET;
        let mut newly_spoke = false;
        loop {
            if budget == 0 {
                // The others' turn; this socket is read again on the next one.
                conn.unread = true;
                break;
            }
            let mut want = budget.min(buf.len());
            if conn.waiting {
                want = want.min(WAITING_READ - conn.read_waiting);
            }
            match conn.stream.read(&mut buf[..want]) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => {
                    got = true;
                    budget -= n;
                    conn.quiet_since = Instant::now();
                    conn.input.extend_from_slice(&buf[..n]);
                    // Parsed as read: a FINISH just read is known if a reset follows.
                    conn.session.feed(&mut conn.input, &mut self.commands);
                    conn.queue(&mut self.commands);
                    if !conn.spoke && conn.session.heard() {
                        // A client now: into the run, or to wait, before reading on.
                        newly_spoke = true;
                        conn.unread = true;
                        break;
                    }
                    if conn.waiting {
                        conn.read_waiting += n;
                        if conn.held_back() {
                            // Far enough: the rest is read in its turn.
                            conn.unread = true;
                            break;
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // A reset after FINISH, or from a port check, is no news.
                    if conn.spoke && !conn.session.finished() {
                        warn!("{}: read failed: {e}", conn.session.name());
                    } else {
                        info!("{}: connection closed: {e}", conn.session.name());
                    }
                    closed = true;
                    break;
                }
            }
        }
        if newly_spoke {
            self.admit(client);
        }
        if closed {
            self.close(client);
        } else {
            self.apply_pending();
        }
        got || closed
    }

    /// A connection has sent its first well-formed line: it joins the run under way if
    /// the run has room, or waits for the next.
    fn admit(&mut self, client: ClientId) {
        let Some(conn) = self.connections.get_mut(&client) else {
            return;
        };
        conn.spoke = true;
        self.occupancy.not_silent(conn.peer);
        if self.members < self.config.clients {
            conn.join(client);
            self.members += 1;
        } else {
            info!(
                "{}: waits for the next run (run {} has its {} client(s))",
                conn.session.name(),
                self.run,
                self.config.clients
            );
            conn.waiting = true;
            self.lobby.push_back(client);
        }
    }

    /// Applies every command that may go now, for every client, writing the replies:
    /// a client's commands go once its last batch is answered, which another client's
    /// command may bring about. A closed connection goes once its commands have.
    fn apply_pending(&mut self) {
        loop {
            let mut applied = false;
            let mut next = 0;
            while let Some((&client, _)) = self
                .connections
                .range(next..)
                .find(|(_, c)| !c.pending.is_empty() && c.spoke && !c.waiting)
            {
                next = client + 1;
                while let Some(conn) = self.connections.get_mut(&client)
                    && !conn.pending.is_empty()
                    && !self.coordinator.is_waiting(client)
                {
                    let command = conn.pending.pop_front().expect("a front command");
                    // Read again from now: the time it may take to send is its own.
                    conn.quiet_since = Instant::now();
                    self.coordinator.apply(command);
                    self.write_replies();
                    applied = true;
                }
                self.forget_if_done(client);
            }
            if !applied {
                return;
            }
        }
    }

    /// The connection ended (closed by the client, or failed): a last line without its
    /// newline still counts, and every command it sent is applied in its turn, batches
    /// sent ahead included (each as if the client had waited for the reply before), then
    /// the client is gone.
    fn close(&mut self, client: ClientId) {
        if !self.stop_reading(client) {
            return;
        }
        let Some(conn) = self.connections.get_mut(&client) else {
            return;
        };
        if conn.spoke && !conn.pending.is_empty() {
            info!(
                "{}: closed with {} command(s) still to apply; they are applied in turn",
                conn.session.name(),
                conn.pending.len()
            );
        }
        if conn.dropped {
            conn.session.abandon(&mut self.commands);
        } else {
            conn.session.close(&mut conn.input, &mut self.commands);
        }
        conn.queue(&mut self.commands);
        if !conn.spoke {
            if !conn.session.heard() {
                if conn.early_rejects == 0 && conn.input.is_empty() && !conn.session.in_batch() {
                    // A port probe or a health check: routine, every few seconds.
                    debug!("connection from {} closed without a word; not a client", conn.peer);
                } else {
                    info!(
                        "connection from {} closed without a well-formed line; not counted as a client",
                        conn.peer
                    );
                }
                self.occupancy.not_silent(conn.peer);
                self.connections.remove(&client);
                return;
            }
            // Its last line, cut by the close, made it a client.
            self.admit(client);
        }
        self.apply_pending();
    }

    /// Forgets a closed connection once its commands are applied and its replies
    /// written (or refused).
    fn forget_if_done(&mut self, client: ClientId) {
        if self
            .connections
            .get(&client)
            .is_some_and(|c| c.gone && c.pending.is_empty() && (c.output.is_empty() || c.failed))
        {
            self.connections.remove(&client);
        }
    }

    /// Drops the connections whose socket failed on a write.
    fn drop_failed(&mut self) {
        while let Some(client) = self.failed.pop() {
            self.close(client);
        }
    }

    fn write_replies(&mut self) {
        let replies: Vec<(ClientId, Bytes)> = self.coordinator.take_replies().collect();
        for (client, reply) in replies {
            let Some(conn) = self.connections.get_mut(&client) else {
                continue;
            };
            if conn.failed {
                continue;
            }
            if !conn.output.is_empty() {
                // An earlier reply is still waiting: keep the order.
                conn.output.extend_from_slice(&reply);
                continue;
            }
            // One write per reply: the legacy client reads one recv() per batch.
            match conn.stream.write(&reply) {
                Ok(n) if n == reply.len() => {}
                Ok(n) => self.keep(client, &reply[n..]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.keep(client, &reply),
                Err(e) => self.write_failed(client, &e),
            }
        }
    }

    /// A write failed: nothing more is written to the client, and it is dropped (after
    /// this round of work) unless it is gone already.
    fn write_failed(&mut self, client: ClientId, e: &io::Error) {
        let Some(conn) = self.connections.get_mut(&client) else {
            return;
        };
        conn.failed = true;
        conn.output.clear();
        if conn.gone {
            // It closed its side and went away without reading its last replies.
            info!("{}: its last replies were not read: {e}", conn.session.name());
            return;
        }
        warn!("{}: write failed: {e}; connection dropped", conn.session.name());
        self.failed.push(client);
    }

    /// Keeps unwritten reply bytes and asks to be told when the socket takes more.
    fn keep(&mut self, client: ClientId, rest: &[u8]) {
        let Some(conn) = self.connections.get_mut(&client) else {
            return;
        };
        if conn.output.is_empty() {
            conn.unread_since = Instant::now();
        }
        conn.output.extend_from_slice(rest);
        let interest = if conn.gone {
            Interest::WRITABLE
        } else {
            Interest::READABLE | Interest::WRITABLE
        };
        if let Err(e) = self
            .poll
            .registry()
            .reregister(&mut conn.stream, Token(client as usize), interest)
        {
            warn!("{}: cannot watch the socket: {e}", conn.session.name());
        }
    }

    fn flush(&mut self, client: ClientId) {
        let Some(conn) = self.connections.get_mut(&client) else {
            return;
        };
        while !conn.output.is_empty() {
            match conn.stream.write(&conn.output) {
                Ok(n) => {
                    conn.output.drain(..n);
                    conn.unread_since = Instant::now();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    self.write_failed(client, &e);
                    return;
                }
            }
        }
        if conn.gone {
            // Its replies are all out.
            self.forget_if_done(client);
            return;
        }
        let _ = self
            .poll
            .registry()
            .reregister(&mut conn.stream, Token(client as usize), Interest::READABLE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(text: &str) -> SocketAddr {
        text.parse().expect("a socket address")
    }

    #[test]
    fn an_origin_is_an_ipv4_address_or_an_ipv6_slash_64() {
        let ip = |text: &str| peer(text).ip();
        assert_eq!(origin_text(ip("10.0.0.7:5000")), "10.0.0.7");
        assert_eq!(origin(ip("[::ffff:10.0.0.7]:5000")), ip("10.0.0.7:1"));
        assert_eq!(origin_text(ip("[2001:db8:1:2:aaaa::1]:5000")), "2001:db8:1:2::/64");
        assert_eq!(
            origin(ip("[2001:db8:1:2:aaaa::1]:1")),
            origin(ip("[2001:db8:1:2:bbbb::9]:2"))
        );
        assert_ne!(origin(ip("[2001:db8:1:2::1]:1")), origin(ip("[2001:db8:1:3::1]:1")));
    }

    #[test]
    fn an_origin_has_as_many_clients_as_allowed_and_silent_connections_do_not_count() {
        let occupancy = Occupancy::default();
        let (a, b) = (peer("10.0.0.1:1"), peer("10.0.0.2:1"));
        occupancy.open(a, Some(2)).expect("room");
        occupancy.open(a, Some(2)).expect("room");
        // Silent, they make room for more.
        occupancy.open(a, Some(2)).expect("room");
        occupancy.not_silent(a);
        occupancy.not_silent(a);
        assert_eq!(occupancy.open(a, Some(2)), Err(2));
        assert_eq!(occupancy.open(a, None), Ok(()));
        occupancy.open(b, Some(2)).expect("another origin");
        assert_eq!(occupancy.from_origin(a), Counts { open: 4, silent: 2 });
        // A client leaves: room again; an origin with nothing open is forgotten.
        occupancy.close(a);
        occupancy.open(a, Some(2)).expect("room");
        occupancy.close(b);
        occupancy.not_silent(b);
        assert_eq!(occupancy.from_origin(b), Counts::default());
        assert_eq!(occupancy.by_origin.lock().expect("unpoisoned").len(), 1);
        assert_eq!(occupancy.open.load(Ordering::Acquire), 4);
    }
}
