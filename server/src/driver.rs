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

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token, Waker};
use tracing::{info, warn};

use crate::coordinator::{ClientId, Command, Coordinator};
use crate::report::Report;
use crate::session::{Session, SessionLimits};

/// How often a long run logs where it is.
const STATUS_EVERY: Duration = Duration::from_secs(10);

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
    input: BytesMut,
    /// reply bytes the socket did not take yet
    output: Vec<u8>,
    open: bool,
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
        };
        Ok((driver, waker))
    }

    /// Serves until every expected client has finished (when configured so) or a
    /// shutdown; returns the statistics.
    pub fn run(mut self) -> Report {
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
            let spinning = last_work.elapsed() < self.spin;
            // Sleep until a socket wakes us, but wake for the status line on long runs.
            let timeout = if spinning {
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
            let mut worked = false;
            for event in events.iter() {
                if event.token() == WAKER {
                    continue;
                }
                let client = event.token().0 as ClientId;
                if event.is_writable() {
                    self.flush(client);
                }
                if event.is_readable() || event.is_read_closed() || event.is_error() {
                    worked |= self.read(client);
                }
            }
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
        self.coordinator.report()
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
                input: BytesMut::with_capacity(4096),
                output: Vec::new(),
                open: true,
            },
        );
        self.coordinator.apply(Command::Connect { client, peer });
        // Its bytes may have arrived before it was registered.
        self.read(client);
    }

    /// Reads what the socket has, applies the commands it completes and writes the
    /// replies. Returns whether anything was read.
    fn read(&mut self, client: ClientId) -> bool {
        let Some(conn) = self.connections.get_mut(&client) else {
            return false;
        };
        let mut got = false;
        let mut closed = false;
        let mut buf = [0u8; 8192];
        loop {
            match conn.stream.read(&mut buf) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => {
                    got = true;
                    conn.input.extend_from_slice(&buf[..n]);
                    conn.session.feed(&mut conn.input, &mut self.commands);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    warn!("{}: read failed: {e}", conn.session.name());
                    closed = true;
                    break;
                }
            }
        }
        if closed {
            conn.session.close(&mut conn.input, &mut self.commands);
            conn.open = false;
            let _ = self.poll.registry().deregister(&mut conn.stream);
        }
        let mut commands = std::mem::take(&mut self.commands);
        for command in commands.drain(..) {
            self.coordinator.apply(command);
            self.write_replies();
        }
        self.commands = commands;
        if closed {
            self.connections.remove(&client);
            self.open_connections.fetch_sub(1, Ordering::AcqRel);
        }
        got || closed
    }

    fn write_replies(&mut self) {
        let replies: Vec<(ClientId, Bytes)> = self.coordinator.take_replies().collect();
        for (client, reply) in replies {
            let Some(conn) = self.connections.get_mut(&client) else {
                continue;
            };
            if !conn.open {
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
                Err(e) => warn!("{}: write failed: {e}", conn.session.name()),
            }
        }
    }

    /// Keeps unwritten reply bytes and asks to be told when the socket takes more.
    fn keep(&mut self, client: ClientId, rest: &[u8]) {
        let Some(conn) = self.connections.get_mut(&client) else {
            return;
        };
        conn.output.extend_from_slice(rest);
        let interest = Interest::READABLE | Interest::WRITABLE;
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
                    warn!("{}: write failed: {e}", conn.session.name());
                    conn.output.clear();
                }
            }
        }
        let _ = self
            .poll
            .registry()
            .reregister(&mut conn.stream, Token(client as usize), Interest::READABLE);
    }
}
