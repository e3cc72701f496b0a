//! The simulation thread's loop: it owns the coordinator (and so the simulation) and
//! the client sockets the listener hands over, reads and writes them without blocking,
//! and applies each command as soon as its bytes are in.
//!
//! ```text
//!  tokio listener ──(accepted socket)──▶ driver thread: poll sockets ─▶ Session ─▶ Coordinator
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
//! No client can starve the others or make the server allocate without bound:
//! - each client gets at most [`READ_BUDGET`] bytes read per turn, then the others;
//! - a client's commands are applied in order, and none while the client's last batch
//!   is unanswered: a client that sends ahead (batches, `FINISH`, or its close) is
//!   served as if it had waited for each reply; while commands wait, its socket is not
//!   read, unless the client has closed its side (then the rest is read, and applied
//!   in turn);
//! - while more than [`OUTPUT_LIMIT`] bytes of replies wait for a client to read them,
//!   its socket is not read either, so TCP holds the client back;
//! - a client whose socket fails on a write is dropped, as on a disconnect.
//!
//! A connection counts as a client from its first byte: one that closes without a
//! word (a port check) is not a client that left.

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token, Waker};
use tracing::{error, info, warn};

use crate::coordinator::{ClientId, Command, Coordinator};
use crate::report::Report;
use crate::session::{Session, SessionLimits};

/// How often a long run logs where it is.
const STATUS_EVERY: Duration = Duration::from_secs(10);

/// Bytes read from one client before the others get their turn.
pub const READ_BUDGET: usize = 64 * 1024;

/// Reply bytes a client may leave unread before its socket is no longer read.
pub const OUTPUT_LIMIT: usize = 64 * 1024;

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
        peer: String,
    },
    /// stop now
    Shutdown,
}

struct Connection {
    stream: TcpStream,
    session: Session,
    peer: String,
    input: BytesMut,
    /// reply bytes the socket did not take yet
    output: Vec<u8>,
    /// commands read and not yet applied, in order: none is applied while the client's
    /// last batch is unanswered
    pending: VecDeque<Command>,
    /// the socket may hold bytes not read yet (the read budget ran out, or reading
    /// was held back)
    unread: bool,
    /// the client has sent something: it counts as a client
    spoke: bool,
    /// a write failed: the connection is dropped
    failed: bool,
    /// the client closed its side (or the socket failed): what it sent is read to the
    /// end whatever waits
    hangup: bool,
    /// the socket is closed; the commands it sent are still applied in turn, as if the
    /// client had waited for each reply
    gone: bool,
}

impl Connection {
    /// Whether its socket is left unread for now: commands wait, or replies pile up
    /// (unless the client has hung up: then its last bytes and the close are read).
    fn held_back(&self) -> bool {
        if self.gone {
            return true;
        }
        !self.hangup && (!self.pending.is_empty() || self.output.len() >= OUTPUT_LIMIT)
    }
}

/// Runs the simulation thread until the run is complete or a shutdown.
pub struct Driver {
    coordinator: Coordinator,
    poll: Poll,
    control: Receiver<Control>,
    connections: BTreeMap<ClientId, Connection>,
    limits: SessionLimits,
    spin: Duration,
    open_connections: Arc<AtomicUsize>,
    shutdown: Arc<AtomicBool>,
    commands: Vec<Command>,
    /// connections whose socket failed on a write, to drop
    failed: Vec<ClientId>,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("connections", &self.connections.len())
            .finish()
    }
}

impl Driver {
    /// A driver and the waker the listener uses to get its attention.
    pub fn new(
        coordinator: Coordinator,
        control: Receiver<Control>,
        limits: SessionLimits,
        spin: Duration,
        open_connections: Arc<AtomicUsize>,
        shutdown: Arc<AtomicBool>,
    ) -> io::Result<(Driver, Arc<Waker>)> {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let driver = Driver {
            coordinator,
            poll,
            control,
            connections: BTreeMap::new(),
            limits,
            spin,
            open_connections,
            shutdown,
            commands: Vec::new(),
            failed: Vec::new(),
        };
        Ok((driver, waker))
    }

    /// Serves until every expected client has finished (when configured so) or a
    /// shutdown; returns the statistics. If the coordinator stops the run, the clients'
    /// connections are closed (the protocol has no error reply) and the reason returned,
    /// with the statistics up to then.
    pub fn run(mut self) -> Result<Report, crate::ServerError> {
        let mut events = Events::with_capacity(256);
        let mut last_work = Instant::now();
        let mut last_status = Instant::now();
        loop {
            if last_status.elapsed() >= STATUS_EVERY {
                last_status = Instant::now();
                if !self.connections.is_empty() {
                    info!("{}", self.coordinator.status());
                }
            }
            if self.coordinator.is_complete() {
                info!("every client has finished; the run is complete");
                break;
            }
            if let Some(stopped) = self.coordinator.stopped() {
                error!("{stopped}; the run stops and its clients are disconnected");
                break;
            }
            let spinning = last_work.elapsed() < self.spin;
            let more = self.connections.values().any(|c| c.unread && !c.held_back());
            // Sleep until a socket wakes us, but wake for the status line on long runs.
            let timeout = if spinning || more {
                Some(Duration::ZERO)
            } else {
                Some(STATUS_EVERY)
            };
            if let Err(e) = self.poll.poll(&mut events, timeout) {
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
        self.coordinator.finish_trace();
        let report = self.coordinator.report();
        match self.coordinator.stopped() {
            Some(stopped) => Err(crate::ServerError::Stopped {
                stopped,
                report: Box::new(report),
            }),
            None => Ok(report),
        }
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

    fn accept(&mut self, client: ClientId, stream: std::net::TcpStream, peer: String) {
        let mut stream = TcpStream::from_std(stream);
        if let Err(e) = self
            .poll
            .registry()
            .register(&mut stream, Token(client as usize), Interest::READABLE)
        {
            warn!("client {client} ({peer}): cannot watch the socket: {e}; connection dropped");
            self.open_connections.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        let session = Session::new(client, &peer, self.limits);
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
                failed: false,
                hangup: false,
                gone: false,
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
        loop {
            if budget == 0 {
                // The others' turn; this socket is read again on the next one.
                conn.unread = true;
                break;
            }
            let want = budget.min(buf.len());
            match conn.stream.read(&mut buf[..want]) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => {
                    got = true;
                    budget -= n;
                    if !conn.spoke {
                        conn.spoke = true;
                        conn.pending.push_back(Command::Connect {
                            client,
                            peer: conn.peer.clone(),
                        });
                    }
                    conn.input.extend_from_slice(&buf[..n]);
                    // Parsed as read: a FINISH just read is known if a reset follows.
                    conn.session.feed(&mut conn.input, &mut self.commands);
                    conn.pending.extend(self.commands.drain(..));
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
        if closed {
            self.close(client);
        } else {
            self.apply_pending();
        }
        got || closed
    }

    /// Applies every command that may go now, for every client, writing the replies:
    /// a client's commands go once its last batch is answered, which another client's
    /// command may bring about. A closed connection goes once its commands have.
    fn apply_pending(&mut self) {
        loop {
            let mut applied = false;
            let mut next = 0;
            while let Some((&client, _)) = self.connections.range(next..).find(|(_, c)| !c.pending.is_empty()) {
                next = client + 1;
                while let Some(conn) = self.connections.get_mut(&client)
                    && !conn.pending.is_empty()
                    && !self.coordinator.is_waiting(client)
                {
                    let command = conn.pending.pop_front().expect("a front command");
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
        let Some(conn) = self.connections.get_mut(&client) else {
            return;
        };
        if conn.gone {
            return;
        }
        conn.gone = true;
        // Nothing more is read; the replies still owed are written if it still reads
        // (a client that only closed its sending side).
        let _ = self
            .poll
            .registry()
            .reregister(&mut conn.stream, Token(client as usize), Interest::WRITABLE);
        self.open_connections.fetch_sub(1, Ordering::AcqRel);
        if !conn.spoke && conn.input.is_empty() {
            info!(
                "connection from {} closed without a word; not counted as a client",
                conn.peer
            );
            self.connections.remove(&client);
            return;
        }
        if !conn.pending.is_empty() {
            info!(
                "{}: closed with {} command(s) still to apply; they are applied in turn",
                conn.session.name(),
                conn.pending.len()
            );
        }
        conn.session.close(&mut conn.input, &mut self.commands);
        conn.pending.extend(self.commands.drain(..));
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
