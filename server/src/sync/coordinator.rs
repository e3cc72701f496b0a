//! The coordinator: owns the simulation on a dedicated thread and runs the conservative
//! null-message synchronisation with every connected client.
//!
//! ```text
//!  session 0 ─┐  SessionEvent (Connect, Batch, Finish, Disconnect)   ┌─▶ Simulation
//!  session 1 ─┼─────────────────────────────────▶ Coordinator ─┤
//!  session n ─┘  ◀──── replies (one write each) ────────────────┘   statistics
//! ```
//!
//! The coordinator is pure logic: it takes commands and hands out replies, and the
//! driver ([`crate::sync::driver`]) does the I/O on the same thread.
//!
//! Invariants (see `shared/spec/protocol.md`, "Synchronisation"):
//! - the model processes events at time `e` only if every client allows it: a client
//!   waiting on `STOP s` allows `e ≤ s`; a client that is not waiting (computing, or
//!   not yet connected though expected) allows only `e < p`, `p` the time of the last
//!   reply it got (0 at first). Strictly before `p`, because it may still send messages
//!   stamped `p`;
//! - injections are buffered and enter the model in (time, application, source node,
//!   client sequence, client) order just before the model reaches their time, so the
//!   result never depends on which socket's bytes arrived first;
//! - a waiting client is answered as soon as everything up to its earliest completion
//!   `c` (or its STOP) has been processed, with the completions at `c`: the model
//!   cannot run past `c` before the client answers, since it then allows only `e < c`;
//! - with batched replies (the default) the answer also carries, in the model's
//!   delivery order, the client's later completions that no message injected from `E`
//!   on can change, `E` the earliest time any client may still send at (a computing
//!   client's last reply; a waiting one's STOP, next completion or the frontier; zero
//!   while clients are expected): the model has fixed them ahead of its clock
//!   (`Network::final_deliveries`). Each is told once; when the model reaches it, it
//!   is not queued again. The client's promise is still `c`, so the model stays behind
//!   everything the client may still send, and the predictions are those of
//!   `--replies earliest`;
//! - a reply never exceeds the reply limit: the completions at `c` first (what does not
//!   fit waits for the next STOP), then as many told-ahead ones as fit (the others are
//!   told when the model reaches them).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use bytes::{BufMut, Bytes, BytesMut};
use tracing::{info, warn};
use vesper_netmodels::slab::Slab;
use vesper_netmodels::stats::Histogram;
use vesper_netmodels::{Delivery, MessageSpec, MultiRail, Network, SimTime, TraceSummary};
use vesper_protocol::{Completion, DataMessage, RendezvousRequest, ServerMessage, WireTime};

use crate::config::{RendezvousMode, Replies, ServerConfig};
use crate::error::Stopped;
use crate::log_budget::LogBudget;
use crate::report::{ClientReport, Report, SimulationReport, WallReport};
use crate::sync::ClientId;
use crate::sync::rendezvous::{Ready, RendezvousId, RendezvousTable};
use crate::translate;

/// One line of a batch that asks for something, with its line number.
#[derive(Debug, Clone, Copy)]
pub enum BatchItem {
    /// `SEND` (eager) or `PROTO READY_TO_RECV` (rendezvous data): inject a message
    Data {
        /// line number on the connection
        line: u64,
        /// the request
        message: DataMessage,
        /// came as `PROTO READY_TO_RECV`
        rendezvous: bool,
    },
    /// `PROTO OK_TO_SEND`: recorded (the `dimemas` rendezvous mode)
    RequestToSend {
        /// line number on the connection
        line: u64,
        /// the request
        request: RendezvousRequest,
    },
}

/// What sessions tell the coordinator.
#[derive(Debug)]
pub enum SessionEvent {
    /// a client connected
    Connect {
        /// its id
        client: ClientId,
        /// its address, for logs
        peer: String,
    },
    /// a batch ended with `END`
    Batch {
        /// who sent it
        client: ClientId,
        /// the `SEND`/`PROTO` lines, in order
        items: Vec<BatchItem>,
        /// the last `STOP` of the batch and its line number
        stop: Option<(u64, WireTime)>,
        /// when the `END` line was read (for the reply latency statistics)
        received: Instant,
    },
    /// the client sent `FINISH`
    Finish {
        /// who
        client: ClientId,
    },
    /// the session dropped lines (malformed, too long, beyond the batch limit)
    Rejected {
        /// whose lines
        client: ClientId,
        /// how many
        lines: u64,
    },
    /// the connection closed (after `FINISH` or not)
    Disconnect {
        /// who
        client: ClientId,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientState {
    /// computing, or between batches: allows the model only strictly before `promise`
    Running,
    /// blocked on a reply to `STOP stop`
    Waiting { stop: SimTime, received: Instant },
    /// sent `FINISH` or disconnected: holds nothing back
    Gone,
}

#[derive(Debug)]
struct Client {
    name: String,
    state: ClientState,
    /// time of the last reply (or of joining): the client sends nothing earlier
    promise: SimTime,
    /// completions not yet handed out, in time order
    completions: VecDeque<(SimTime, Completion)>,
    /// messages accepted and not yet reported (buffered or in the network)
    in_flight: usize,
    /// `wire` mode: requests not yet matched by a `READY_TO_RECV`
    open_requests: usize,
    /// per-client sequence number of injections, for deterministic ordering
    sequence: u64,
    report: ClientReport,
    warned_idle_wait: bool,
    /// warnings about its lines
    log: LogBudget,
}

/// A message the client sent, kept until its completion is reported.
#[derive(Debug, Clone, Copy)]
struct SendRecord {
    client: ClientId,
    request: DataMessage,
    requested_at: SimTime,
    /// its completion was told ahead of the model's delivery (batched replies)
    told: bool,
}

/// What a message inside the model is, by its cookie.
#[derive(Debug, Clone, Copy)]
enum Record {
    /// client data: reported with `COMPLETED SEND`
    Data(SendRecord),
    /// a rendezvous request (`wire` mode), receiver-bound
    Request { client: ClientId, rendezvous: RendezvousId },
    /// a rendezvous acknowledgment (`wire` mode), sender-bound
    Ack { client: ClientId, rendezvous: RendezvousId },
}

/// Order of simultaneous injections: (time, application, source node, sequence, client).
type InjectionKey = (SimTime, u32, u32, u64, ClientId);

/// The coordinator's state; the driver's thread hands it every session event
/// ([`Coordinator::apply`], from `super::driver`).
#[derive(Debug)]
pub struct Coordinator {
    config: ServerConfig,
    /// the network, traced or not (one dynamic call per injection or step; the event
    /// loop inside is monomorphic)
    sim: Box<dyn Network + Send>,
    /// what the network trace held, once finished
    trace: Option<TraceSummary>,
    /// what the trace's stream does, for the report
    stream: Option<crate::network_trace::StreamStatus>,
    clients: BTreeMap<ClientId, Client>,
    /// clients that ever connected
    connected: usize,
    records: Slab<Option<Record>>,
    rendezvous: RendezvousTable,
    pending: BTreeMap<InjectionKey, MessageSpec>,
    deliveries: Vec<Delivery>,
    latency_ps: Histogram,
    reply_latency_ns: Histogram,
    round_trips: u64,
    clamped: u64,
    simulated_end: SimTime,
    started: Instant,
    shutdown: Arc<AtomicBool>,
    /// replies to write, in order; each is one write
    outbox: Vec<(ClientId, Bytes)>,
    /// deliveries the model has fixed ahead of its clock (batched replies), scratch
    known: Vec<Delivery>,
    /// why the run cannot go on, if it cannot
    stopped: Option<Stopped>,
    /// which client each sender (application, node) belongs to: the first to send from it
    senders: BTreeMap<(u32, u32), ClientId>,
}

impl Coordinator {
    /// A coordinator for `sim`; `shutdown` is polled between time steps.
    pub fn new(config: ServerConfig, sim: MultiRail, shutdown: Arc<AtomicBool>) -> Self {
        Coordinator::with_network(config, Box::new(sim), shutdown)
    }

    /// A coordinator for any network (a traced one, say).
    pub fn with_network(config: ServerConfig, sim: Box<dyn Network + Send>, shutdown: Arc<AtomicBool>) -> Self {
        Coordinator {
            config,
            sim,
            trace: None,
            stream: None,
            clients: BTreeMap::new(),
            connected: 0,
            records: Slab::new(),
            rendezvous: RendezvousTable::default(),
            pending: BTreeMap::new(),
            deliveries: Vec::new(),
            latency_ps: Histogram::new(),
            reply_latency_ns: Histogram::new(),
            round_trips: 0,
            clamped: 0,
            simulated_end: SimTime::ZERO,
            started: Instant::now(),
            shutdown,
            outbox: Vec::new(),
            known: Vec::new(),
            stopped: None,
            senders: BTreeMap::new(),
        }
    }

    /// Tells in the report what the network trace's stream did, if it has one.
    pub fn report_stream(&mut self, stream: Option<crate::network_trace::StreamStatus>) {
        self.stream = stream;
    }

    /// Why the run cannot go on, if it cannot: the clients cannot be answered.
    pub fn stopped(&self) -> Option<Stopped> {
        self.stopped
    }

    /// Whether the run is over: every expected client came and has gone.
    pub fn is_complete(&self) -> bool {
        self.connected >= self.config.clients && self.clients.values().all(|c| c.state == ClientState::Gone)
    }

    /// Whether `client` waits for the reply to its last batch.
    pub fn is_waiting(&self, client: ClientId) -> bool {
        self.clients
            .get(&client)
            .is_some_and(|c| matches!(c.state, ClientState::Waiting { .. }))
    }

    /// Replies to write, in order, each in one write; empties the outbox.
    pub fn take_replies(&mut self) -> std::vec::Drain<'_, (ClientId, Bytes)> {
        self.outbox.drain(..)
    }

    /// Applies one command and advances the model as far as the clients allow.
    pub fn apply(&mut self, command: SessionEvent) {
        self.handle(command);
        self.progress();
    }

    fn handle(&mut self, command: SessionEvent) {
        match command {
            SessionEvent::Connect { client, peer } => {
                self.connected += 1;
                // A client joining a run in progress cannot send into the past.
                let promise = self.sim.now();
                if promise > SimTime::ZERO {
                    warn!("client {client} ({peer}) joined at simulated time {promise}");
                }
                info!("client {client} connected from {peer}");
                let report = ClientReport {
                    client,
                    ..ClientReport::default()
                };
                self.clients.insert(
                    client,
                    Client {
                        name: format!("client {client} ({peer})"),
                        state: ClientState::Running,
                        promise,
                        completions: VecDeque::new(),
                        in_flight: 0,
                        open_requests: 0,
                        sequence: 0,
                        report,
                        warned_idle_wait: false,
                        log: LogBudget::default(),
                    },
                );
            }
            SessionEvent::Batch {
                client,
                items,
                stop,
                received,
            } => self.batch(client, items, stop, received),
            SessionEvent::Finish { client } => {
                if let Some(c) = self.clients.get_mut(&client) {
                    if c.in_flight > 0 {
                        warn!("{} finished with {} messages still in flight", c.name, c.in_flight);
                    }
                    info!("{} finished", c.name);
                    c.state = ClientState::Gone;
                    c.report.finished = true;
                }
            }
            SessionEvent::Rejected { client, lines } => {
                if let Some(c) = self.clients.get_mut(&client) {
                    c.report.bad_lines += lines;
                }
            }
            SessionEvent::Disconnect { client } => {
                if let Some(c) = self.clients.get_mut(&client)
                    && c.state != ClientState::Gone
                {
                    warn!("{} disconnected before FINISH; dropped, the others continue", c.name);
                    c.state = ClientState::Gone;
                }
            }
        }
    }

    fn batch(&mut self, id: ClientId, items: Vec<BatchItem>, stop: Option<(u64, WireTime)>, received: Instant) {
        let Some(client) = self.clients.get_mut(&id) else {
            return;
        };
        if client.state == ClientState::Gone {
            client
                .log
                .warn(&client.name, format_args!(": batch after FINISH ignored"));
            return;
        }
        for item in items {
            match item {
                BatchItem::RequestToSend { line, request } => self.request_to_send(id, line, &request),
                BatchItem::Data {
                    line,
                    message,
                    rendezvous,
                } => self.data(id, line, &message, rendezvous),
            }
        }
        let Some(client) = self.clients.get_mut(&id) else {
            return;
        };
        let stop = match stop {
            None => {
                client.log.warn(
                    &client.name,
                    format_args!(": batch ended without a valid STOP line; answering at its last time"),
                );
                client.promise
            }
            Some((line, t)) => match translate::stop_time(t) {
                // No message may be sent after the last injection, so a STOP beyond it
                // promises nothing more than the client's 2.52e17 does: until the next
                // completion. Every such STOP means that (the clock could not stand at
                // most of them).
                Ok(s) if s > SimTime::LAST_INJECTION => SimTime::MAX,
                Ok(s) => s,
                Err(e) => {
                    client.log.warn(
                        &client.name,
                        format_args!(" line {line}: {e}; answering at its last time"),
                    );
                    client.report.bad_lines += 1;
                    client.promise
                }
            },
        };
        // A STOP below the last reply changes nothing: the client cannot go back.
        let stop = stop.max(client.promise);
        client.state = ClientState::Waiting { stop, received };
    }

    /// Checks a line's nodes, sender and time; returns its time, clamped to the
    /// client's last reply, or `None` (logged and counted) if the line is unusable.
    fn checked_time(
        &mut self,
        id: ClientId,
        line: u64,
        nodes: (u32, u32),
        src_app: u32,
        time: WireTime,
    ) -> Option<SimTime> {
        let network = &self.config.network;
        let limit = network.placement.nodes(self.sim.hosts());
        let client = self.clients.get_mut(&id)?;
        if u64::from(nodes.0) >= limit || u64::from(nodes.1) >= limit {
            client.log.warn(
                &client.name,
                format_args!(
                    " line {line}: expected node ids below {limit} ({}), got {} → {}; line ignored",
                    network.placement.describe(self.sim.hosts()),
                    nodes.0,
                    nodes.1
                ),
            );
            client.report.bad_lines += 1;
            return None;
        }
        if !self.claim(id, line, (src_app, nodes.0)) {
            return None;
        }
        let client = self.clients.get_mut(&id)?;
        let at = match translate::message_time(time) {
            Ok(t) => t,
            Err(e) => {
                client
                    .log
                    .warn(&client.name, format_args!(" line {line}: {e}; line ignored"));
                client.report.bad_lines += 1;
                return None;
            }
        };
        // Never before the client's last reply (nor the model's clock, which does not
        // pass it).
        let floor = client.promise.max(self.sim.now());
        let sent = at.max(floor);
        if sent > SimTime::LAST_INJECTION {
            let moved = if sent > at {
                format!(" (stamped {} ns, moved up to its last reply)", time.0)
            } else {
                String::new()
            };
            client.log.warn(
                &client.name,
                format_args!(
                    " line {line}: sent at {sent}{moved}, the message has no room to arrive: messages must be \
                     sent by {}; line ignored",
                    SimTime::LAST_INJECTION
                ),
            );
            client.report.bad_lines += 1;
            return None;
        }
        if sent > at {
            self.clamped += 1;
            client.report.clamped_times += 1;
        }
        Some(sent)
    }

    /// Whether the line's sender, task `src` of application `app`, is the client's: a
    /// task belongs to the first client that sends from it, and another client's line
    /// from it is refused (logged and counted). Simultaneous injections are ordered by
    /// (application, source node) first, so two clients sending from one task would be
    /// ordered by which spoke first.
    fn claim(&mut self, id: ClientId, line: u64, (app, src): (u32, u32)) -> bool {
        let owner = *self.senders.entry((app, src)).or_insert(id);
        if owner == id {
            return true;
        }
        let owner_name = self
            .clients
            .get(&owner)
            .map_or_else(|| format!("client {owner}"), |c| c.name.clone());
        let Some(client) = self.clients.get_mut(&id) else {
            return false;
        };
        client.log.warn(
            &client.name,
            format_args!(
                " line {line}: node {src} of application {app} sends for {owner_name}, the first to send from it; \
                 a node of an application must be one client's, so that results do not depend on which connects \
                 first; line ignored"
            ),
        );
        client.report.bad_lines += 1;
        false
    }

    /// `SEND` or `PROTO READY_TO_RECV`: a data message to report when it completes.
    fn data(&mut self, id: ClientId, line: u64, message: &DataMessage, rendezvous: bool) {
        let max_in_flight = self.config.max_in_flight;
        let nodes = (message.src, message.dst);
        let Some(at) = self.checked_time(id, line, nodes, message.src_app, message.time) else {
            return;
        };
        let Some(client) = self.clients.get_mut(&id) else {
            return;
        };
        if client.in_flight >= max_in_flight {
            client.log.warn(
                &client.name,
                format_args!(" line {line}: more than {max_in_flight} messages in flight; message ignored"),
            );
            client.report.bad_lines += 1;
            return;
        }
        if message.src_repeat != message.src || message.dst_repeat != message.dst {
            client.log.warn(
                &client.name,
                format_args!(
                    " line {line}: repeated node pair {} {} differs from {} {}; using the first",
                    message.src_repeat, message.dst_repeat, message.src, message.dst
                ),
            );
        }
        client.in_flight += 1;
        client.report.messages += 1;
        client.report.bytes += u64::from(message.size);
        if rendezvous {
            client.report.rendezvous_messages += 1;
        }
        let slot = self.new_record(Record::Data(SendRecord {
            client: id,
            request: *message,
            requested_at: at,
            told: false,
        }));
        if rendezvous && let RendezvousMode::Wire { .. } = self.config.rendezvous {
            let key = (
                id,
                message.src_app,
                message.dst_app,
                message.src,
                message.dst,
                message.tag,
                message.size,
            );
            let ready = self.rendezvous.ready(key, at, slot);
            if ready != Ready::Unmatched
                && let Some(client) = self.clients.get_mut(&id)
            {
                client.open_requests = client.open_requests.saturating_sub(1);
            }
            match ready {
                Ready::AckAt(rendezvous, ack_at) => {
                    self.acknowledge(id, rendezvous, ack_at);
                    return;
                }
                Ready::AwaitRequest => return,
                Ready::Unmatched => {
                    if let Some(client) = self.clients.get_mut(&id) {
                        client.log.warn(
                            &client.name,
                            format_args!(
                                " line {line}: READY_TO_RECV without a matching OK_TO_SEND; the data starts now"
                            ),
                        );
                    }
                }
            }
        }
        self.schedule(id, at, (message.src_app, message.src, message.dst), message.size, slot);
    }

    /// `PROTO OK_TO_SEND`: recorded (`dimemas` mode) or a request injected (`wire` mode).
    fn request_to_send(&mut self, id: ClientId, line: u64, request: &RendezvousRequest) {
        let nodes = (request.src, request.dst);
        let Some(at) = self.checked_time(id, line, nodes, request.src_app, request.time) else {
            return;
        };
        let Some(client) = self.clients.get_mut(&id) else {
            return;
        };
        client.report.rendezvous_requests += 1;
        if let RendezvousMode::Wire { control_bytes } = self.config.rendezvous {
            // A request waits in the table until its READY_TO_RECV: bound them too.
            let max_in_flight = self.config.max_in_flight;
            if client.in_flight + client.open_requests >= max_in_flight {
                client.log.warn(
                    &client.name,
                    format_args!(
                        " line {line}: more than {max_in_flight} messages and requests in flight; request ignored"
                    ),
                );
                client.report.bad_lines += 1;
                return;
            }
            client.open_requests += 1;
            let key = (
                id,
                request.src_app,
                request.dst_app,
                request.src,
                request.dst,
                Some(request.tag),
                request.size,
            );
            let rendezvous = self.rendezvous.request(key);
            let slot = self.new_record(Record::Request { client: id, rendezvous });
            self.schedule(id, at, (request.src_app, request.src, request.dst), control_bytes, slot);
        }
    }

    fn new_record(&mut self, record: Record) -> usize {
        self.records.insert(Some(record)) as usize
    }

    /// Queues an injection of `size` bytes from `route.1` to `route.2` at `at`, ordered
    /// by (time, application `route.0`, source node, the client's sequence, client).
    fn schedule(&mut self, id: ClientId, at: SimTime, route: (u32, u32, u32), size: u32, slot: usize) {
        let (app, src, dst) = route;
        let sequence = match self.clients.get_mut(&id) {
            Some(client) => {
                client.sequence += 1;
                client.sequence
            }
            None => 0,
        };
        let spec = MessageSpec {
            src: self.config.network.placement.host_of(src),
            dst: self.config.network.placement.host_of(dst),
            size_bytes: size,
            cookie: slot as u64,
        };
        self.pending.insert((at, app, src, sequence, id), spec);
    }

    /// The earliest time at which something is pending: a model event or an injection.
    fn next_time(&self) -> Option<SimTime> {
        let injection = self.pending.keys().next().map(|k| k.0);
        match (self.sim.next_event_time(), injection) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether every client allows the model to process events at time `e`.
    fn may_process(&self, e: SimTime) -> bool {
        self.connected >= self.config.clients
            && self.clients.values().all(|c| match c.state {
                ClientState::Waiting { stop, .. } => e <= stop,
                ClientState::Running => e < c.promise,
                ClientState::Gone => true,
            })
    }

    /// Answers every client that can be answered and advances the model as far as the
    /// clients allow, until nothing more can happen without a client.
    fn progress(&mut self) {
        while self.stopped.is_none() {
            self.answer_clients();
            let Some(e) = self.next_time() else { break };
            if !self.may_process(e) || self.shutdown.load(Ordering::Relaxed) {
                break;
            }
            if e == SimTime::MAX {
                // Only a time that ran past the clock stops at its last instant (the
                // network's parameters are checked so that none does on its own, but
                // load can add up). Completions there would never be answered, as no
                // instant comes after it: the clients would wait for ever.
                self.stopped = Some(Stopped::ClockRanOut {
                    in_flight: self.sim.in_flight(),
                });
                break;
            }
            // Injections due by `e` enter the model in their deterministic order.
            while let Some(entry) = self.pending.first_entry() {
                if entry.key().0 > e {
                    break;
                }
                let ((at, .., id), spec) = entry.remove_entry();
                // `at ≥ now` holds: the model never passes a time a client may still use.
                if let Err(err) = self.sim.inject(at, spec) {
                    self.dropped(id, spec, &err);
                }
            }
            self.sim.run_until(e, &mut self.deliveries);
            self.take_deliveries();
        }
    }

    /// A message the model refused (it should not happen: its time was checked):
    /// logged and counted against its client, and no longer in flight, so that no one
    /// waits for it.
    fn dropped(&mut self, id: ClientId, spec: MessageSpec, err: &vesper_netmodels::InjectError) {
        let record = self.take_record(spec.cookie as usize);
        let Some(client) = self.clients.get_mut(&id) else {
            return;
        };
        warn!("{}: message from node {} dropped: {err}", client.name, spec.src);
        client.report.bad_lines += 1;
        if let Some(Record::Data(_)) = record {
            client.in_flight = client.in_flight.saturating_sub(1);
        }
    }

    /// The record in `slot`, taken out and its slot freed.
    fn take_record(&mut self, slot: usize) -> Option<Record> {
        let record = self.records.get_mut(slot).and_then(Option::take)?;
        self.records.release(slot as u32);
        Some(record)
    }

    fn take_deliveries(&mut self) {
        let mut deliveries = std::mem::take(&mut self.deliveries);
        for delivery in deliveries.drain(..) {
            let slot = delivery.cookie as usize;
            let Some(record) = self.take_record(slot) else {
                continue;
            };
            match record {
                Record::Data(record) => self.completed(&record, &delivery),
                Record::Request { client, rendezvous } => {
                    // The receiver may already be ready: then the ack leaves.
                    if let Some(ack_at) = self.rendezvous.request_arrived(rendezvous, delivery.arrived) {
                        self.acknowledge(client, rendezvous, ack_at);
                    }
                }
                Record::Ack { client, rendezvous } => {
                    // The sender has its ack: the data starts now.
                    let Some(data) = self.rendezvous.acked(rendezvous) else {
                        continue;
                    };
                    if let Some(Some(Record::Data(record))) = self.records.get(data) {
                        let m = record.request;
                        self.schedule(client, delivery.arrived, (m.src_app, m.src, m.dst), m.size, data);
                    }
                }
            }
        }
        self.deliveries = deliveries;
    }

    /// Injects the ack of `rendezvous`, from the receiver back to the sender, at `at`.
    fn acknowledge(&mut self, client: ClientId, rendezvous: RendezvousId, at: SimTime) {
        let RendezvousMode::Wire { control_bytes } = self.config.rendezvous else {
            return;
        };
        let data = self.rendezvous.data_of(rendezvous);
        let Some(Some(Record::Data(record))) = data.and_then(|d| self.records.get(d)) else {
            return;
        };
        let m = record.request;
        let ack = self.new_record(Record::Ack { client, rendezvous });
        self.schedule(client, at, (m.dst_app, m.dst, m.src), control_bytes, ack);
    }

    /// A data message completed: queue its `COMPLETED SEND` for its client.
    fn completed(&mut self, record: &SendRecord, delivery: &Delivery) {
        self.latency_ps.record((delivery.arrived - record.requested_at).as_ps());
        self.simulated_end = self.simulated_end.max(delivery.arrived);
        let Some(client) = self.clients.get_mut(&record.client) else {
            return;
        };
        if record.told {
            // Reported, and counted, when it was told ahead.
            return;
        }
        client.in_flight -= 1;
        if client.state == ClientState::Gone {
            return;
        }
        // Never report earlier than the client's last reply (only possible with a
        // zero-delay network).
        let at = delivery.arrived.max(client.promise);
        let line = translate::completion(&record.request, delivery, at);
        client.completions.push_back((at, line));
    }

    /// The earliest time any client may still send at (`frontier`: everything strictly
    /// before it has been processed): a computing client's last reply; a waiting
    /// client's STOP, its next completion or the frontier, whichever comes first (it
    /// sends once answered); zero while clients are expected.
    fn earliest_send(&self, frontier: SimTime) -> SimTime {
        if self.connected < self.config.clients {
            return SimTime::ZERO;
        }
        let next = |c: &Client| c.completions.front().map_or(SimTime::MAX, |(t, _)| *t);
        self.clients
            .values()
            .map(|c| match c.state {
                ClientState::Running => c.promise,
                ClientState::Waiting { stop, .. } => stop.min(frontier).min(next(c)),
                ClientState::Gone => SimTime::MAX,
            })
            .min()
            .unwrap_or(SimTime::MAX)
    }

    /// Answers every waiting client whose answer is due: at its earliest completion
    /// time `c` with the completions of `c` (or at its STOP, or at once when it waits
    /// with nothing in flight). Batched replies add, in time order, its later
    /// completions that no message sent from the earliest time any client may still
    /// send at can change ([`Network::final_deliveries`]).
    fn answer_clients(&mut self) {
        // Everything strictly before `frontier` has been processed.
        let frontier = self.next_time().unwrap_or(SimTime::MAX);
        let mut answers = Vec::new();
        for (&id, client) in self.clients.iter_mut() {
            let ClientState::Waiting { stop, .. } = client.state else {
                continue;
            };
            let due = client.completions.front().map(|(t, _)| *t).filter(|&c| c <= stop);
            let answer_at = match due {
                Some(c) if c < frontier => c,
                Some(_) => continue,
                None if stop == SimTime::MAX && client.in_flight == 0 => {
                    // "Until the next completion" with nothing in flight would never
                    // end: answer at once rather than run the model to infinity.
                    if !client.warned_idle_wait {
                        warn!(
                            "{} sent a STOP beyond {} (the last instant a message may be sent): it waits for \
                             a completion, but has no message in flight; answered at once, its clock stays at {}",
                            client.name,
                            SimTime::LAST_INJECTION,
                            client.promise
                        );
                        client.warned_idle_wait = true;
                    }
                    client.promise
                }
                None if stop < frontier => stop,
                None => continue,
            };
            answers.push((id, answer_at));
        }
        if answers.is_empty() {
            return;
        }
        self.known.clear();
        if self.config.replies == Replies::Batched {
            self.sim.final_deliveries(self.earliest_send(frontier), &mut self.known);
        }
        let reply_limit = self.config.reply_limit;
        for (id, answer_at) in answers {
            // Its completions fixed after `c`, in the order the model will deliver them.
            let mut ahead: Vec<(usize, Completion)> = Vec::new();
            for delivery in self.known.iter().filter(|d| d.arrived > answer_at) {
                let slot = delivery.cookie as usize;
                if let Some(Some(Record::Data(record))) = self.records.get(slot)
                    && record.client == id
                    && !record.told
                {
                    ahead.push((slot, translate::completion(&record.request, delivery, delivery.arrived)));
                }
            }
            let Some(client) = self.clients.get_mut(&id) else {
                continue;
            };
            let ClientState::Waiting { received, .. } = client.state else {
                continue;
            };
            let lines: Vec<Completion> = ahead.iter().map(|(_, line)| *line).collect();
            let (reply, told) = take_reply(&mut client.completions, answer_at, reply_limit, &lines);
            client.report.round_trips += 1;
            client.promise = answer_at;
            client.state = ClientState::Running;
            self.round_trips += 1;
            self.simulated_end = self.simulated_end.max(answer_at);
            self.reply_latency_ns.record(received.elapsed().as_nanos() as u64);
            self.outbox.push((id, reply));
            for &(slot, _) in &ahead[..told] {
                if let Some(Some(Record::Data(record))) = self.records.get_mut(slot) {
                    record.told = true;
                    // Reported: no longer in flight for its client.
                    client.in_flight -= 1;
                }
            }
        }
    }

    /// One line on where the run is, for the periodic status log.
    pub fn status(&self) -> String {
        let wall = self.started.elapsed().as_secs_f64().max(1e-9);
        let messages: u64 = self.clients.values().map(|c| c.report.messages).sum();
        let active = self.clients.values().filter(|c| c.state != ClientState::Gone).count();
        let mut line = format!(
            "simulated time {}, {active} clients active, {messages} messages, {} in flight, {} round trips, {:.2} M events/s",
            self.simulated_end,
            self.sim.in_flight() + self.pending.len(),
            self.round_trips,
            self.sim.events_processed() as f64 / wall / 1e6
        );
        // Say who holds time back when someone is waiting for it.
        let waiting = self
            .clients
            .values()
            .any(|c| matches!(c.state, ClientState::Waiting { .. }));
        let holding: Vec<&str> = self
            .clients
            .values()
            .filter(|c| c.state == ClientState::Running)
            .map(|c| c.name.as_str())
            .collect();
        if waiting && !holding.is_empty() {
            line.push_str(&format!("; waiting for the next batch of {}", holding.join(", ")));
        }
        if self.connected < self.config.clients {
            line.push_str(&format!(
                "; waiting for {} more client(s) to connect (--clients {})",
                self.config.clients - self.connected,
                self.config.clients
            ));
        }
        line
    }

    /// Ends the network trace, if there is one: writes what is left, the header, the
    /// `.pcf` and the `.row`. Errors are logged (the run's results stand without it).
    pub fn finish_trace(&mut self) {
        match self.sim.finish_trace() {
            Ok(Some(summary)) => {
                info!(
                    "network trace: {} tasks, {} threads, {} states, {} events, {} communications, up to {} ns",
                    summary.tasks,
                    summary.threads,
                    summary.states,
                    summary.events,
                    summary.communications,
                    summary.end_ns
                );
                if summary.late_records > 0 {
                    warn!("network trace: {} records out of order", summary.late_records);
                }
                self.trace = Some(summary);
            }
            Ok(None) => {}
            Err(e) => warn!("network trace: cannot write it: {e}"),
        }
    }

    /// The statistics so far.
    pub fn report(&self) -> Report {
        let wall = self.started.elapsed();
        let events = self.sim.events_processed();
        let ns = |h: &Histogram| h.summary();
        Report {
            run: 1,
            stopped: self.stopped.map(|s| s.to_string()),
            trace_stream: self.stream.as_ref().map(crate::network_trace::StreamStatus::report),
            simulation: SimulationReport {
                network: self.config.network.describe(),
                clients: self.clients.values().map(|c| c.report.clone()).collect(),
                messages: self.clients.values().map(|c| c.report.messages).sum(),
                bytes: self.clients.values().map(|c| c.report.bytes).sum(),
                latency_ns: ns(&self.latency_ps).map(crate::report::LatencySummary::from_ps),
                simulated_end_ns: self.simulated_end.to_wire_ns(),
                sync_round_trips: self.round_trips,
                clamped_times: self.clamped,
                events_processed: events,
                messages_in_flight_at_exit: self.sim.in_flight() + self.pending.len(),
                network_trace: self.trace.clone(),
            },
            wall: WallReport {
                wall_seconds: wall.as_secs_f64(),
                events_per_second: events as f64 / wall.as_secs_f64().max(1e-9),
                reply_latency_us: self
                    .reply_latency_ns
                    .summary()
                    .map(crate::report::LatencySummary::from_ns_to_us),
            },
        }
    }
}

/// The reply at `at`: as many completions due at `at` as fit in `limit` bytes together
/// with the closing `END`, whole lines only, the rest staying for the client's next
/// STOP; then, once every one due at `at` is in, as many of `ahead` (later completions
/// told early, in time order) as fit. Gives the reply and how many of `ahead` it holds.
fn take_reply(
    completions: &mut VecDeque<(SimTime, Completion)>,
    at: SimTime,
    limit: Option<usize>,
    ahead: &[Completion],
) -> (Bytes, usize) {
    const END: &[u8] = b"END\n";
    let mut out = BytesMut::with_capacity(limit.unwrap_or(512));
    let mut line = BytesMut::new();
    // Whether `line` fits (at least one line always does, or the client could never
    // progress).
    let fits = |out: &BytesMut, line: &BytesMut| {
        limit.is_none_or(|l| out.len() + line.len() + END.len() <= l || out.is_empty())
    };
    let mut all_due = true;
    while let Some((t, completion)) = completions.front() {
        if *t != at {
            break;
        }
        line.clear();
        vesper_protocol::codec::encode_line(&ServerMessage::Completed(*completion), &mut line);
        if !fits(&out, &line) {
            all_due = false;
            break;
        }
        out.put_slice(&line);
        completions.pop_front();
    }
    let mut told = 0;
    if all_due {
        for completion in ahead {
            line.clear();
            vesper_protocol::codec::encode_line(&ServerMessage::Completed(*completion), &mut line);
            if !fits(&out, &line) {
                break;
            }
            out.put_slice(&line);
            told += 1;
        }
    }
    out.put_slice(END);
    (out.freeze(), told)
}

#[cfg(test)]
mod tests;
