//! The replay loop: tasks run their programs; sends go to the fabric; receives wait for
//! arrivals; the fabric is advanced conservatively up to the next local event.
//!
//! Every send and receive is a request: an immediate one (`ISend`, `IRecv`) is named
//! by the task and completed later by a `Wait`; a blocking one is the same request,
//! waited for at once. Messages match receives per (destination, source, tag) in send
//! order and post order, as MPI's non-overtaking rule says. An eager send's request is
//! complete when it starts; a rendezvous send's data starts when it is matched, and
//! both its requests complete when the data lands.
//!
//! With Dimemas's model ([`ReplayOptions::dimemas`], from a configuration), as Dimemas
//! replays:
//! - a task's bursts take their time divided by its node's CPU speed ratio (no time at a
//!   ratio of 0);
//! - a task pays the startup latency (between or within nodes, as the two tasks' nodes
//!   are; the sender's node's: a receive or wait pays the latency of the node it
//!   receives from; none below 1 ns) before each send, immediate send, blocking receive
//!   and wait, blocked meanwhile; an immediate receive costs nothing;
//! - a message's data leaves once it holds its links and bus ([`super::resources`]),
//!   which it frees when it lands, before it is delivered;
//! - a rendezvous sender goes on as soon as its receiver is ready (the data's
//!   transfer is then asked for), not when the data lands; the receiver still waits
//!   for the data;
//! - events of the same time run in the order they were scheduled (Dimemas's FIFO event
//!   queue): a landing was scheduled when its data left, and a task that goes on past
//!   an operation (other than into a burst) does so in a new event behind those due;
//!   at the start, tasks begin node by node, and within a node task by task (Dimemas's
//!   scheduler starts the nodes in turn);
//! - an analytic collective, once its last member arrives, takes every bus of the
//!   machine ([`Resources::request_all_buses`]); its time runs from when it holds them;
//!   when it ends it frees them (the waiters they let go leave first), then its members
//!   go on node by node, and within a node in the order they arrived, the root last;
//! - the predicted time is when the last task's first thread ended, or, if that is 0,
//!   the 10 s tick of Dimemas's periodic timer ([`DIMEMAS_TIMER`]).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::Ps;
use super::analytic::AnalyticCollectives;
use super::fabric::{Fabric, FabricError, IdealBus, Transfer};
use super::machine::{DimemasModel, SMALLEST_STARTUP};
use super::programs::{Cursor, Programs};
use super::resources::{Resources, Route};
use super::workload::{Op, THREAD, UNWAITED, Workload, WorkloadError, task_of_programs};

/// Where one task's time went: `compute + communication + waiting = end`.
///
/// A task is always either computing or blocked (in a receive, a rendezvous send, a
/// wait, or an analytic collective); what it does between takes no time. Each time it
/// is blocked, from `since` to `until`, is split at the moment its data started to
/// move, `started` (clamped to the interval):
///
/// ```text
///   since ─── waiting ───▶ started ─── communication ───▶ until
/// ```
///
/// - a receive, or a wait for an immediate one: `started` is when the message's data
///   left the sender (an eager send's call; a rendezvous's match) or began its copy
///   within the node; before it, the task waited for a partner that had not sent yet;
/// - a rendezvous send, or a wait for an immediate one: `started` is when the
///   receiver was ready and the data left; before it, the task waited for the
///   receiver;
/// - an analytic collective: `started` is when the last member arrived; the model's
///   fan-in and fan-out time after it is communication.
///
/// So communication is the time a task is blocked while its own message's data is in
/// the network (or its collective's stages run), contention included; waiting is the
/// time it is blocked for a partner that has not arrived.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskTimes {
    /// computing \[ps\]
    pub compute: Ps,
    /// blocked while its data was in transfer \[ps\]
    pub communication: Ps,
    /// blocked for a partner that was not there yet \[ps\]
    pub waiting: Ps,
    /// when its program ended \[ps\]
    pub end: Ps,
}

/// The result of a replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// when the last task ended \[ps\]
    pub predicted: Ps,
    /// per task
    pub tasks: Vec<TaskTimes>,
    /// messages sent
    pub messages: u64,
    /// of which between tasks of one node (copied, not sent over the fabric)
    pub intra_node: u64,
    /// what each task did when, if `ReplayOptions::record` asked for it
    pub record: Option<Record>,
    /// per task, its threads: `tasks` (and the record's task numbers) are per program,
    /// task 0's threads first
    pub threads: Vec<u32>,
}

/// What a task was doing over an interval (Paraver's MPI states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Activity {
    /// computing
    Running,
    /// blocked in a receive
    WaitingMessage,
    /// blocked in a rendezvous send
    BlockingSend,
    /// blocked in a wait for an immediate operation
    Waiting,
    /// in a collective call modelled analytically
    Collective,
}

/// One message's life, as Paraver's communication record says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Communication {
    /// sending task
    pub from: u32,
    /// receiving task
    pub to: u32,
    /// the send was called \[ps\]
    pub logical_send: Ps,
    /// the data left \[ps\]
    pub physical_send: Ps,
    /// the receive was called \[ps\]
    pub logical_recv: Ps,
    /// the data had landed \[ps\]
    pub physical_recv: Ps,
    /// payload \[bytes\]
    pub size: u32,
    /// MPI tag
    pub tag: i32,
}

/// An MPI call of a task program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Call {
    /// a blocking send
    Send,
    /// a blocking receive
    Recv,
    /// an immediate send
    Isend,
    /// an immediate receive
    Irecv,
    /// a wait for an immediate operation
    Wait,
    /// a collective call modelled analytically
    Collective,
}

/// What every task did when: intervals of activity, MPI calls, and messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    /// (task, begin, end, activity), in the order they ended
    pub states: Vec<(u32, Ps, Ps, Activity)>,
    /// (task, begin, end, call), in the order they ended
    pub calls: Vec<(u32, Ps, Ps, Call)>,
    /// in the order they completed
    pub communications: Vec<Communication>,
}

/// Why a replay failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// the workload does not match its sends and receives, or could not be read
    #[error("workload {name}: {reason}")]
    Workload {
        /// the workload
        name: String,
        /// what is wrong
        reason: WorkloadError,
    },
    /// the fabric failed
    #[error(transparent)]
    Fabric(#[from] FabricError),
    /// every task waits and nothing is in flight
    #[error("deadlock at {at} ps: tasks {tasks:?} all wait, for receives or rendezvous sends that cannot match")]
    Deadlock {
        /// when
        at: Ps,
        /// the blocked tasks
        tasks: Vec<u32>,
    },
    /// a task's next time is past what the clock counts
    #[error("task {task} at {at} ps: {what} would end past what {}", super::CLOCK_LIMIT)]
    Clock {
        /// the task
        task: u32,
        /// when it began
        at: Ps,
        /// what it began
        what: String,
    },
}

/// How the replay treats sends, and where tasks run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplayOptions {
    /// sends of at least this many bytes use the rendezvous protocol, smaller ones are
    /// eager, whatever the trace's synchronous bit says (like Dimemas's `-S`, which
    /// overrides the bit); `None`: the bit decides
    pub eager_limit: Option<u32>,
    /// every send is eager, whatever its size or synchronous bit (like Dimemas's `-F`);
    /// wins over `eager_limit`
    pub all_eager: bool,
    /// which node each task runs on
    pub mapping: Mapping,
    /// how messages between tasks of one node travel (they never reach the fabric)
    pub memory_copy: MemoryCopy,
    /// keep a [`Record`] of states and messages (for an application Paraver trace)
    pub record: bool,
    /// speed of the simulated CPUs relative to the traced ones (Dimemas's CPU speed
    /// ratio): a burst of d takes d / ratio, rounded to the picosecond; `None`: 1
    pub cpu_ratio: Option<CpuRatio>,
    /// the model of collectives that are not decomposed into messages ([`Op::Global`])
    pub collectives: AnalyticCollectives,
    /// Dimemas's point-to-point model (startup latencies, links and buses); `None`:
    /// messages leave at once and tasks pay no startup
    pub dimemas: Option<DimemasModel>,
}

impl ReplayOptions {
    /// Whether a send of `size` bytes, synchronous or not by the trace's bit, uses the
    /// rendezvous protocol: never with `all_eager`; with an eager limit, when the size
    /// reaches it (the bit is overridden, as by Dimemas's `-S`); otherwise when the
    /// bit is set.
    pub fn rendezvous(&self, size: u32, synchronous: bool) -> bool {
        match (self.all_eager, self.eager_limit) {
            (true, _) => false,
            (false, Some(limit)) => size >= limit,
            (false, None) => synchronous,
        }
    }
}

/// A positive CPU speed ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuRatio(f64);

impl CpuRatio {
    /// `ratio` if it is positive and finite.
    pub fn new(ratio: f64) -> Option<CpuRatio> {
        (ratio.is_finite() && ratio > 0.0).then_some(CpuRatio(ratio))
    }

    /// How long a burst of `d` takes at this speed, if the clock counts that long.
    pub fn scale(self, d: Ps) -> Option<Ps> {
        super::ps_of_picoseconds(d as f64 / self.0)
    }
}

impl Eq for CpuRatio {}

/// Where tasks run, as Dimemas's mapping records say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Mapping {
    /// task t on node t
    #[default]
    OnePerNode,
    /// n tasks per node, filling nodes in order (`FILL_NODES` with n CPUs per node, or
    /// `n TASKS_PER_NODE`): task t on node t / n
    TasksPerNode(u32),
    /// task t on node t mod `nodes` (`INTERLEAVED`)
    Interleaved {
        /// nodes used
        nodes: u32,
    },
    /// task t on node `nodes[t]` (tasks beyond the list: on node t)
    Explicit(Vec<u32>),
    /// `FILL_NODES` over nodes of different processor counts: each node, in order,
    /// takes as many tasks as it has processors; tasks left over go to the last node
    FillNodes {
        /// (nodes, processors of each), in node order
        groups: Vec<(u32, u32)>,
    },
}

impl Mapping {
    /// The node of `task`.
    pub fn node_of(&self, task: u32) -> u32 {
        match self {
            Mapping::OnePerNode => task,
            Mapping::TasksPerNode(n) => task / (*n).max(1),
            Mapping::Interleaved { nodes } => task % (*nodes).max(1),
            Mapping::Explicit(nodes) => nodes.get(task as usize).copied().unwrap_or(task),
            Mapping::FillNodes { groups } => {
                let (mut node, mut first) = (0u64, 0u64);
                for &(count, cpus) in groups {
                    let held = u64::from(count) * u64::from(cpus);
                    if u64::from(task) < first + held {
                        return (node + (u64::from(task) - first) / u64::from(cpus.max(1))) as u32;
                    }
                    first += held;
                    node += u64::from(count);
                }
                node.saturating_sub(1) as u32
            }
        }
    }

    /// `FILL_NODES` over `groups` of (nodes, processors each), in node order: n tasks
    /// per node when every node has n processors.
    pub fn fill_nodes(groups: Vec<(u32, u32)>) -> Mapping {
        Mapping::FillNodes { groups }
    }

    /// How many nodes `tasks` tasks occupy (the highest node used, plus one).
    pub fn nodes_for(&self, tasks: u32) -> u64 {
        (0..tasks).map(|t| u64::from(self.node_of(t)) + 1).max().unwrap_or(0)
    }
}

/// Dimemas's intra-node model: a message between two tasks of one node takes
/// latency + size / bandwidth, with no contention.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryCopy {
    /// \[ps\]
    pub latency: Ps,
    /// `(bytes, seconds)`: that many bytes per that many seconds; `None`: unlimited
    pub bandwidth: Option<(u64, u64)>,
}

impl MemoryCopy {
    fn bus(self) -> IdealBus {
        match self.bandwidth {
            Some((bytes, seconds)) => IdealBus::new(bytes, seconds, self.latency),
            None => IdealBus::unlimited(self.latency),
        }
    }
}

/// A task's name for one of its requests: the `request` of an immediate operation,
/// or [`BLOCKING`] for the blocking send or receive it is in.
type Key = u64;

/// The request of a blocking send or receive (above every `u32` request name).
const BLOCKING: Key = 1 << 32;

/// The request of an analytic collective call.
const GLOBAL: Key = BLOCKING + 1;

/// An analytic collective call while its members arrive.
#[derive(Debug, Default)]
struct Gathering {
    /// the members arrived so far, in order
    arrived: Vec<u32>,
    /// the bytes sent and received of the root's record: the last arrival that says it
    /// is the root, or else the last arrival (as Dimemas takes them)
    sizes: (u32, u32),
    /// that root (a program)
    root: u32,
    /// whether an arrival said it is the root
    rooted: bool,
}

/// An analytic collective whose members have all arrived, with Dimemas's model.
#[derive(Debug)]
struct Collective {
    /// its members, in the order they go on when it ends (Dimemas's: node by node, and
    /// within a node in the order they arrived, the root last)
    members: Vec<u32>,
    /// how long it takes once it holds the machine's buses \[ps\]
    took: Ps,
    /// when it started, holding them
    started: Ps,
    /// the last member, for errors
    last: u32,
    /// its operation, for errors
    id: u8,
}

/// The resources' ids of collectives: above every message's.
const COLLECTIVE: u64 = 1 << 63;

#[derive(Debug, Clone, Copy)]
enum State {
    /// ready to go on at the time in the `ready` set
    Ready,
    /// waiting since `since` for its request `key` to complete, in `why`
    Waiting { key: Key, since: Ps, why: Activity },
    /// its program is over
    Done,
}

/// A message from its send until both its data has landed and a receive took it.
#[derive(Debug, Clone, Copy)]
struct Message {
    /// sending task
    from: u32,
    /// receiving task
    to: u32,
    /// the receiving program's task
    dst_task: u32,
    /// between their nodes
    transfer: Transfer,
    /// the sender's request
    send: Key,
    /// the matching receive's request, once matched
    recv: Option<Key>,
    /// when the data landed
    arrived: Option<Ps>,
    /// when the send was called
    sent: Ps,
    /// when the data left
    started: Option<Ps>,
    /// its landing's order among events of the same time, with Dimemas's model
    seq: u64,
    /// when the matching receive was called
    posted: Option<Ps>,
}

/// The blocking call a task waits in.
fn call_of(why: Activity) -> Call {
    match why {
        Activity::WaitingMessage => Call::Recv,
        Activity::BlockingSend => Call::Send,
        Activity::Running | Activity::Waiting => Call::Wait,
        Activity::Collective => Call::Collective,
    }
}

/// Unmatched sends and receives of one (destination, source, tag); at most one of the
/// two is non-empty.
#[derive(Debug, Default)]
struct Channel {
    /// messages sent and not yet received, in send order
    messages: VecDeque<u64>,
    /// receives posted and not yet matched, in post order: by which program, its
    /// request, and when
    receives: VecDeque<(u32, Key, Ps)>,
}

/// Replays `workload` over `fabric` (task `t` on node `t`), every send eager unless
/// synchronous.
pub fn replay(workload: &Workload, fabric: &mut dyn Fabric) -> Result<Outcome, ReplayError> {
    replay_with(workload, fabric, &ReplayOptions::default())
}

/// How far a replay has got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// operations done, of all tasks
    pub done: u64,
    /// operations in the workload
    pub total: u64,
    /// simulated time reached \[ps\]
    pub now: Ps,
}

/// Replays `workload` over `fabric`, with tasks on nodes as `options.mapping` says.
pub fn replay_with(
    workload: &Workload,
    fabric: &mut dyn Fabric,
    options: &ReplayOptions,
) -> Result<Outcome, ReplayError> {
    replay_observed(workload, fabric, options, &mut |_| {})
}

/// [`replay_with`], telling `progress` how far it has got each time a task blocks,
/// computes or ends.
pub fn replay_observed(
    workload: &Workload,
    fabric: &mut dyn Fabric,
    options: &ReplayOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Outcome, ReplayError> {
    workload.check().map_err(|reason| ReplayError::Workload {
        name: workload.name.clone(),
        reason,
    })?;
    replay_programs(&mut Cursor::new(workload), fabric, options, progress)
}

/// Replays `programs` (already checked: every send has its receive) over `fabric`,
/// reading each task's operations as it goes, telling `progress` how far it has got.
pub fn replay_programs(
    programs: &mut dyn Programs,
    fabric: &mut dyn Fabric,
    options: &ReplayOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Outcome, ReplayError> {
    let tasks = programs.programs() as usize;
    let threads = programs.threads();
    let task_of = task_of_programs(&threads);
    if task_of.len() != tasks {
        return Err(ReplayError::Workload {
            name: programs.name().to_string(),
            reason: WorkloadError::Threads {
                programs: tasks,
                threads: task_of.len(),
            },
        });
    }
    let total = programs.total();
    let memory = options.memory_copy.bus();
    let mut r = Replay {
        ready: first_events(&task_of, options),
        programs,
        task_of,
        state: vec![State::Ready; tasks],
        times: vec![TaskTimes::default(); tasks],
        pending: vec![BTreeMap::new(); tasks],
        seq: tasks as u64,
        channels: BTreeMap::new(),
        messages: BTreeMap::new(),
        gatherings: BTreeMap::new(),
        collectives: BTreeMap::new(),
        collective_ends: BTreeSet::new(),
        collectives_made: 0,
        next_id: 0,
        options: options.clone(),
        resources: options.dimemas.clone().map(Resources::new),
        deferred: vec![None; tasks],
        wait_startup: vec![BTreeMap::new(); tasks],
        memory,
        intra_node: 0,
        last_landing: 0,
        done: 0,
        record: options.record.then(Record::default),
    };
    if r.options.dimemas.is_some() {
        r.run_in_event_order(fabric, total, progress)?;
    }
    loop {
        // The next own event: a task going on, or an intra-node message landing.
        let next_task = r.ready.first().map(|&(t, _, _)| t);
        let next_copy = r.memory.next_completion();
        let next_local = match (next_task, next_copy) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if fabric.in_flight() > 0
            && let Some((at, ids)) = fabric.advance(next_local)?
        {
            for id in ids {
                r.landed(id, at, fabric)?;
            }
            continue;
        }
        if next_copy.is_some() && next_copy == next_local {
            if let Some((at, ids)) = r.memory.advance(next_copy)? {
                for id in ids {
                    r.landed(id, at, fabric)?;
                }
            }
            continue;
        }
        let Some((now, _, task)) = r.ready.pop_first() else {
            let stuck: Vec<u32> = (0..tasks as u32)
                .filter(|&t| !matches!(r.state[t as usize], State::Done))
                .collect();
            if stuck.is_empty() {
                break;
            }
            return Err(ReplayError::Deadlock {
                at: r.times.iter().map(|t| t.end).max().unwrap_or(0),
                tasks: stuck,
            });
        };
        r.run(task, now, fabric)?;
        progress(Progress {
            done: r.done,
            total,
            now,
        });
    }
    let predicted = match r.options.dimemas {
        Some(_) => dimemas_end(&r.times, &r.task_of, r.last_landing),
        None => r.times.iter().map(|t| t.end).max().unwrap_or(0),
    };
    Ok(Outcome {
        predicted,
        tasks: r.times,
        messages: r.next_id,
        intra_node: r.intra_node,
        record: r.record,
        threads,
    })
}

/// Dimemas's periodic timer \[ps\]: it schedules an event every 10 s of simulated time
/// while others are due, so its simulations end at 10 s at the earliest.
pub const DIMEMAS_TIMER: Ps = 10_000_000_000_000;

/// The execution time Dimemas prints: when the last task's first thread ended (a
/// task's other threads do not count); if that is 0 (every task ends at once, say
/// when bursts and latencies are all 0), the end of its simulation instead, the first
/// tick of its periodic 10 s timer after the last message landed.
fn dimemas_end(times: &[TaskTimes], task_of: &[u32], last_landing: Ps) -> Ps {
    let first_threads = (0..times.len()).filter(|&p| p == 0 || task_of[p] != task_of[p - 1]);
    match first_threads.map(|p| times[p].end).max().unwrap_or(0) {
        0 => last_landing
            .div_ceil(DIMEMAS_TIMER)
            .max(1)
            .saturating_mul(DIMEMAS_TIMER),
        end => end,
    }
}

/// Every program's first event, at 0. With Dimemas's model in Dimemas's order: node by
/// node, and within a node task by task (its scheduler fills each node's ready queue
/// from the node's tasks, then starts the nodes in turn), numbered from 1; otherwise
/// by program.
fn first_events(task_of: &[u32], options: &ReplayOptions) -> BTreeSet<(Ps, u64, u32)> {
    let mut order: Vec<u32> = (0..task_of.len() as u32).collect();
    if options.dimemas.is_none() {
        return order.into_iter().map(|p| (0, 0, p)).collect();
    }
    order.sort_by_key(|&p| (options.mapping.node_of(task_of[p as usize]), p));
    order.into_iter().zip(1..).map(|(p, seq)| (0, seq, p)).collect()
}

struct Replay<'a> {
    programs: &'a mut dyn Programs,
    /// the task of each program (the engine's "tasks" below are programs: threads)
    task_of: Vec<u32>,
    state: Vec<State>,
    times: Vec<TaskTimes>,
    /// per task: its requests started and not yet waited for, and whether complete
    pending: Vec<BTreeMap<Key, bool>>,
    /// tasks to go on: when, in what order at that time (with Dimemas's model: the
    /// order they were scheduled in; otherwise 0, by task), which
    ready: BTreeSet<(Ps, u64, u32)>,
    /// the last order number given to an event, with Dimemas's model
    seq: u64,
    /// by (destination, source, tag)
    channels: BTreeMap<(u32, u32, i32), Channel>,
    /// by id: messages not yet both landed and received
    messages: BTreeMap<u64, Message>,
    /// analytic collective calls with members still to arrive
    gatherings: BTreeMap<u64, Gathering>,
    /// with Dimemas's model, analytic collectives whose members have all arrived, by
    /// their resources' id, until they end
    collectives: BTreeMap<u64, Collective>,
    /// their ends: (when, order, id)
    collective_ends: BTreeSet<(Ps, u64, u64)>,
    /// collectives made so far
    collectives_made: u64,
    next_id: u64,
    options: ReplayOptions,
    /// Dimemas's links and buses, with its model
    resources: Option<Resources>,
    /// per task: the operation it performs when it goes on next, and whether it has
    /// paid its startup latency
    deferred: Vec<Option<(Op, bool)>>,
    /// per task: the startup latency of a wait for each of its immediate receives \[ps\]
    wait_startup: Vec<BTreeMap<Key, Ps>>,
    /// messages between tasks of one node
    memory: IdealBus,
    intra_node: u64,
    /// when the last message landed \[ps\]
    last_landing: Ps,
    /// operations done
    done: u64,
    record: Option<Record>,
}

impl Replay<'_> {
    /// Runs `task` from `now` until it computes, blocks or ends.
    fn run(&mut self, task: u32, now: Ps, fabric: &mut dyn Fabric) -> Result<(), ReplayError> {
        let t = task as usize;
        // With Dimemas's model, a task that goes on past an operation (other than to
        // compute) does so in a new event at the same time, after those already due.
        let mut went_on = false;
        loop {
            let resumed = self.deferred[t].take();
            let (op, paid) = match resumed {
                Some(op) => op,
                None => {
                    let next = self.programs.next(task).map_err(|e| ReplayError::Workload {
                        name: self.programs.name().to_string(),
                        reason: WorkloadError::Read(e),
                    })?;
                    let Some(op) = next else {
                        self.state[t] = State::Done;
                        self.times[t].end = now;
                        return Ok(());
                    };
                    self.done += 1;
                    (op, false)
                }
            };
            if went_on && self.options.dimemas.is_some() && !matches!(op, Op::Compute(_)) {
                self.deferred[t] = Some((op, paid));
                self.schedule(now, task);
                return Ok(());
            }
            went_on = true;
            if !paid {
                let startup = self.startup(task, op);
                if startup > 0 {
                    // Dimemas's startup: the task is busy, then performs the operation.
                    let end = now.checked_add(startup).ok_or_else(|| ReplayError::Clock {
                        task,
                        at: now,
                        what: format!("a startup latency of {startup} ps"),
                    })?;
                    self.times[t].communication += startup;
                    self.deferred[t] = Some((op, true));
                    self.schedule(end, task);
                    return Ok(());
                }
            }
            let why = match op {
                Op::Global { .. } => Activity::Collective,
                Op::Recv { .. } => Activity::WaitingMessage,
                Op::Send { .. } => Activity::BlockingSend,
                _ => Activity::Waiting,
            };
            if let Some(record) = &mut self.record {
                match op {
                    Op::ISend { .. } => record.calls.push((task, now, now, Call::Isend)),
                    Op::IRecv { .. } => record.calls.push((task, now, now, Call::Irecv)),
                    _ => {}
                }
            }
            let wait_for = match op {
                Op::Compute(traced) => {
                    // With Dimemas's model, by the speed ratio of the task's node.
                    let d = match (&self.options.dimemas, self.options.cpu_ratio) {
                        (Some(model), _) => model.node(self.node_of_program(task)).burst(traced),
                        (None, Some(ratio)) => ratio.scale(traced),
                        (None, None) => Some(traced),
                    };
                    let Some((d, end)) = d.and_then(|d| Some((d, now.checked_add(d)?))) else {
                        return Err(ReplayError::Clock {
                            task,
                            at: now,
                            what: format!("a burst of {traced} ps (traced; before the CPU speed ratio)"),
                        });
                    };
                    // Within the end time, which the clock counts.
                    self.times[t].compute += d;
                    if let Some(record) = &mut self.record
                        && d > 0
                    {
                        record.states.push((task, now, end, Activity::Running));
                    }
                    self.schedule(end, task);
                    return Ok(());
                }
                Op::Send {
                    to,
                    size,
                    tag,
                    synchronous,
                } => {
                    self.send(task, to, size, tag, synchronous, BLOCKING, now, fabric)?;
                    BLOCKING
                }
                Op::ISend {
                    to,
                    size,
                    tag,
                    synchronous,
                    request,
                } => {
                    self.send(task, to, size, tag, synchronous, request.into(), now, fabric)?;
                    continue;
                }
                Op::Recv { from, tag } => {
                    self.receive(task, from, tag, BLOCKING, now, fabric)?;
                    BLOCKING
                }
                Op::IRecv { from, tag, request } => {
                    if let Some(model) = &self.options.dimemas {
                        let startup = self.peer_startup(model, task, from, false);
                        self.wait_startup[t].insert(request.into(), startup);
                    }
                    self.receive(task, from, tag, request.into(), now, fabric)?;
                    continue;
                }
                Op::Wait { request } => {
                    self.wait_startup[t].remove(&request.into());
                    request.into()
                }
                Op::Global {
                    call,
                    members,
                    id,
                    is_root,
                    sent,
                    received,
                } => {
                    self.state[t] = State::Waiting {
                        key: GLOBAL,
                        since: now,
                        why: Activity::Collective,
                    };
                    self.pending[t].insert(GLOBAL, false);
                    let g = self.gatherings.entry(call).or_default();
                    g.arrived.push(task);
                    if is_root || !g.rooted {
                        g.sizes = (sent, received);
                        g.root = task;
                        g.rooted |= is_root;
                    }
                    if g.arrived.len() >= members as usize
                        && let Some(g) = self.gatherings.remove(&call)
                    {
                        // The last member is here: everyone leaves after the model's time.
                        let node = |m: &u32| self.options.mapping.node_of(self.task_of[*m as usize]);
                        let nodes: Vec<u32> = g.arrived.iter().map(node).collect();
                        let (sent, received) = g.sizes;
                        let clock = || ReplayError::Clock {
                            task,
                            at: now,
                            what: format!("global operation {id} of {} members, the last to arrive", nodes.len()),
                        };
                        let took = self
                            .options
                            .collectives
                            .time(u32::from(id), &nodes, node(&g.root), sent, received)
                            .ok_or_else(clock)?;
                        if self.resources.is_some() {
                            // Dimemas's model: it first takes the machine's buses.
                            let mut members: Vec<u32> = g.arrived.iter().copied().filter(|&m| m != g.root).collect();
                            members.push(g.root);
                            members.sort_by_key(node);
                            self.collective_arrived(members, took, task, id, now)?;
                            return Ok(());
                        }
                        let end = now.checked_add(took).ok_or_else(clock)?;
                        for member in g.arrived {
                            self.complete(member, GLOBAL, now, end);
                        }
                    }
                    return Ok(());
                }
            };
            if self.pending[t].get(&wait_for) == Some(&true) {
                self.pending[t].remove(&wait_for);
                if let Some(record) = &mut self.record {
                    record.calls.push((task, now, now, call_of(why)));
                }
                continue;
            }
            self.state[t] = State::Waiting {
                key: wait_for,
                since: now,
                why,
            };
            return Ok(());
        }
    }

    /// `task` goes on at `at`: with Dimemas's model after every event scheduled before.
    fn schedule(&mut self, at: Ps, task: u32) {
        let seq = self.next_seq();
        self.ready.insert((at, seq, task));
    }

    /// The next order number of an event, with Dimemas's model (0 without).
    fn next_seq(&mut self) -> u64 {
        if self.options.dimemas.is_none() {
            return 0;
        }
        self.seq += 1;
        self.seq
    }

    /// Replays to the end with Dimemas's model: task events and message landings in
    /// Dimemas's order, by time, then by when they were scheduled (a landing when its
    /// data left), as Dimemas's event queue does.
    fn run_in_event_order(
        &mut self,
        fabric: &mut dyn Fabric,
        total: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), ReplayError> {
        // Landed messages not yet handled: (when, order, id).
        let mut landings: BTreeSet<(Ps, u64, u64)> = BTreeSet::new();
        loop {
            let next_task = self.ready.first().map(|&(at, seq, _)| (at, seq));
            let next_landing = landings.first().map(|&(at, seq, _)| (at, seq));
            let next_end = self.collective_ends.first().map(|&(at, seq, _)| (at, seq));
            let horizon = [next_task, next_landing, next_end]
                .into_iter()
                .flatten()
                .min()
                .map(|(at, _)| at);
            // Every landing up to the horizon is known before the next event is chosen.
            if fabric.in_flight() > 0
                && let Some((at, ids)) = fabric.advance(horizon)?
            {
                for id in ids {
                    landings.insert((at, self.messages.get(&id).map_or(0, |m| m.seq), id));
                }
                continue;
            }
            if let Some(copy) = self.memory.next_completion()
                && horizon.is_none_or(|h| copy <= h)
            {
                if let Some((at, ids)) = self.memory.advance(Some(copy))? {
                    for id in ids {
                        landings.insert((at, self.messages.get(&id).map_or(0, |m| m.seq), id));
                    }
                }
                continue;
            }
            if let Some(end) = next_end
                && [next_task, next_landing].into_iter().flatten().all(|other| end < other)
            {
                if let Some((at, _, cid)) = self.collective_ends.pop_first() {
                    self.collective_ends(cid, at, fabric)?;
                }
                continue;
            }
            match (next_task, next_landing) {
                (None, None) => return Ok(()),
                (Some(task), Some(landing)) if landing < task => {}
                (Some(_), _) => {
                    if let Some((now, _, task)) = self.ready.pop_first() {
                        self.run(task, now, fabric)?;
                        progress(Progress {
                            done: self.done,
                            total,
                            now,
                        });
                    }
                    continue;
                }
                (None, Some(_)) => {}
            }
            if let Some((at, _, id)) = landings.pop_first() {
                self.landed(id, at, fabric)?;
            }
        }
    }

    /// The startup latency `task` pays before `op`, with Dimemas's model: for sends,
    /// blocking receives and waits for immediate receives, by the partner's node.
    fn startup(&self, task: u32, op: Op) -> Ps {
        let Some(model) = &self.options.dimemas else {
            return 0;
        };
        match op {
            Op::Send { to, .. } | Op::ISend { to, .. } => self.peer_startup(model, task, to, true),
            Op::Recv { from, .. } => self.peer_startup(model, task, from, false),
            Op::Wait { request } => self.wait_startup[task as usize]
                .get(&Key::from(request))
                .copied()
                .unwrap_or(0),
            _ => 0,
        }
    }

    /// The startup between program `task` and `peer` (a task, or a thread of its own
    /// task), `task` sending or not: the sender's node's, within a node or between
    /// nodes (Dimemas takes less than 1 ns as none).
    fn peer_startup(&self, model: &DimemasModel, task: u32, peer: u32, sending: bool) -> Ps {
        let own = self.task_of[task as usize];
        let other = match peer & THREAD {
            0 => peer,
            _ => own,
        };
        let node = |t| self.options.mapping.node_of(t);
        let sender = model.node(node(if sending { own } else { other }));
        let startup = match node(own) == node(other) {
            true => sender.intra_startup,
            false => sender.inter_startup,
        };
        match startup < SMALLEST_STARTUP {
            true => 0,
            false => startup,
        }
    }

    /// The node of program `program`'s task.
    fn node_of_program(&self, program: u32) -> u32 {
        self.options.mapping.node_of(self.task_of[program as usize])
    }

    /// `task` starts sending; its request `key` completes at once if the send is eager.
    #[allow(clippy::too_many_arguments)]
    fn send(
        &mut self,
        task: u32,
        to: u32,
        size: u32,
        tag: i32,
        synchronous: bool,
        key: Key,
        now: Ps,
        fabric: &mut dyn Fabric,
    ) -> Result<(), ReplayError> {
        let rendezvous = self.options.rendezvous(size, synchronous);
        let id = self.next_id;
        self.next_id += 1;
        // A peer is a task, or (THREAD) a thread of this task.
        let (dst_task, from) = match to & THREAD {
            0 => (to, self.task_of[task as usize]),
            _ => (self.task_of[(to & !THREAD) as usize], THREAD | task),
        };
        let transfer = Transfer {
            src: self.options.mapping.node_of(self.task_of[task as usize]),
            dst: self.options.mapping.node_of(dst_task),
            size,
            tag,
            rendezvous,
        };
        if key != Key::from(UNWAITED) {
            self.pending[task as usize].insert(key, !rendezvous);
        }
        let channel = self.channels.entry((to, from, tag)).or_default();
        let matched = channel.receives.pop_front();
        let recv = matched.map(|(_, key, _)| key);
        if recv.is_none() {
            channel.messages.push_back(id);
        } else if channel.receives.is_empty() {
            // Channels come and go: traces with a tag per message would keep one each.
            self.channels.remove(&(to, from, tag));
        }
        self.messages.insert(
            id,
            Message {
                from: task,
                // the receiving program, once known
                to: matched.map_or(to, |(program, _, _)| program),
                dst_task,
                transfer,
                send: key,
                recv,
                arrived: None,
                sent: now,
                started: None,
                seq: 0,
                posted: matched.map(|(_, _, posted)| posted),
            },
        );
        if rendezvous && transfer.src != transfer.dst {
            fabric.request_to_send(now, transfer)?;
        }
        if !rendezvous || recv.is_some() {
            // Eager, or the receiver is ready: the data starts now.
            self.start(id, now, transfer, fabric)?;
        }
        Ok(())
    }

    /// The data of message `id` may leave at `now`: it does once it holds its
    /// resources, if Dimemas's model has any; a rendezvous sender goes on (Dimemas's
    /// model).
    fn start(&mut self, id: u64, now: Ps, transfer: Transfer, fabric: &mut dyn Fabric) -> Result<(), ReplayError> {
        if self.resources.is_none() {
            return self.launch(id, now, transfer, fabric);
        }
        let Some(&m) = self.messages.get(&id) else {
            return Ok(());
        };
        let route = if transfer.src == transfer.dst {
            Route::Memory {
                node: transfer.src,
                from: self.task_of[m.from as usize],
                to: m.dst_task,
            }
        } else {
            Route::Network {
                from: transfer.src,
                to: transfer.dst,
            }
        };
        if transfer.rendezvous {
            self.complete(m.from, m.send, now, now);
        }
        if self.resources.as_mut().is_some_and(|r| r.request(id, route)) {
            self.launch(id, now, transfer, fabric)?;
        }
        Ok(())
    }

    /// The data of message `id` leaves at `now`: over the fabric, or copied within a
    /// node.
    fn launch(&mut self, id: u64, now: Ps, transfer: Transfer, fabric: &mut dyn Fabric) -> Result<(), ReplayError> {
        let seq = self.next_seq();
        if let Some(message) = self.messages.get_mut(&id) {
            message.started = Some(now);
            message.seq = seq;
        }
        if transfer.src == transfer.dst {
            self.intra_node += 1;
            match &self.options.dimemas {
                // At the bandwidth of the node, with no latency: the tasks pay it.
                Some(model) => self
                    .memory
                    .send_over(id, now, transfer, 0, model.node(transfer.src).intra_bandwidth)?,
                None => self.memory.send(id, now, transfer)?,
            }
        } else {
            fabric.send(id, now, transfer)?;
        }
        Ok(())
    }

    /// `task` posts a receive as its request `key`.
    fn receive(
        &mut self,
        task: u32,
        from: u32,
        tag: i32,
        key: Key,
        now: Ps,
        fabric: &mut dyn Fabric,
    ) -> Result<(), ReplayError> {
        let to = match from & THREAD {
            0 => self.task_of[task as usize],
            _ => THREAD | task,
        };
        let channel = self.channels.entry((to, from, tag)).or_default();
        let Some(id) = channel.messages.pop_front() else {
            channel.receives.push_back((task, key, now));
            self.pending[task as usize].insert(key, false);
            return Ok(());
        };
        if channel.messages.is_empty() {
            self.channels.remove(&(to, from, tag));
        }
        let Some(message) = self.messages.get_mut(&id) else {
            unreachable!("an unmatched message is remembered until received");
        };
        message.posted = Some(now);
        message.to = task;
        if message.arrived.is_some() {
            // An eager message that landed before its receive.
            let m = *message;
            self.messages.remove(&id);
            self.received(&m);
            self.pending[task as usize].insert(key, true);
            return Ok(());
        }
        message.recv = Some(key);
        let transfer = message.transfer;
        self.pending[task as usize].insert(key, false);
        if transfer.rendezvous {
            // Both sides are ready: the data starts now.
            self.start(id, now, transfer, fabric)?;
        }
        Ok(())
    }

    /// Message `id` landed at `at`: it frees its resources (the messages they let go
    /// leave now), then it is delivered.
    fn landed(&mut self, id: u64, at: Ps, fabric: &mut dyn Fabric) -> Result<(), ReplayError> {
        self.last_landing = self.last_landing.max(at);
        if let Some(resources) = &mut self.resources {
            let started = resources.release(id);
            self.go(started, at, fabric)?;
        }
        self.delivered(id, at);
        Ok(())
    }

    /// The messages and collectives of `started` got their resources at `at`: their
    /// data leaves, they start.
    fn go(&mut self, started: Vec<u64>, at: Ps, fabric: &mut dyn Fabric) -> Result<(), ReplayError> {
        for next in started {
            if next & COLLECTIVE != 0 {
                self.collective_starts(next, at)?;
            } else if let Some(transfer) = self.messages.get(&next).map(|m| m.transfer) {
                self.launch(next, at, transfer, fabric)?;
            }
        }
        Ok(())
    }

    /// The last member (`last`) of an analytic collective of operation `id` arrived at
    /// `now`, with Dimemas's model: it asks for the machine's buses, and starts once it
    /// holds them.
    fn collective_arrived(
        &mut self,
        members: Vec<u32>,
        took: Ps,
        last: u32,
        id: u8,
        now: Ps,
    ) -> Result<(), ReplayError> {
        let cid = COLLECTIVE | self.collectives_made;
        self.collectives_made += 1;
        self.collectives.insert(
            cid,
            Collective {
                members,
                took,
                started: now,
                last,
                id,
            },
        );
        if self.resources.as_mut().is_some_and(|r| r.request_all_buses(cid)) {
            self.collective_starts(cid, now)?;
        }
        Ok(())
    }

    /// Collective `cid` holds the machine's buses at `now`: its time runs.
    fn collective_starts(&mut self, cid: u64, now: Ps) -> Result<(), ReplayError> {
        let seq = self.next_seq();
        let Some(c) = self.collectives.get_mut(&cid) else {
            return Ok(());
        };
        c.started = now;
        let end = now.checked_add(c.took).ok_or_else(|| ReplayError::Clock {
            task: c.last,
            at: now,
            what: format!("global operation {} of {} members", c.id, c.members.len()),
        })?;
        self.collective_ends.insert((end, seq, cid));
        Ok(())
    }

    /// Collective `cid` ends at `at`: it frees the machine's buses (the waiters they
    /// let go leave now), then its members go on, node by node.
    fn collective_ends(&mut self, cid: u64, at: Ps, fabric: &mut dyn Fabric) -> Result<(), ReplayError> {
        if let Some(resources) = &mut self.resources {
            let started = resources.release_all_buses(cid);
            self.go(started, at, fabric)?;
        }
        if let Some(c) = self.collectives.remove(&cid) {
            for member in c.members {
                self.complete(member, GLOBAL, c.started, at);
            }
        }
        Ok(())
    }

    /// Message `id` was delivered at `at`.
    fn delivered(&mut self, id: u64, at: Ps) {
        let Some(message) = self.messages.get_mut(&id) else {
            return;
        };
        message.arrived = Some(at);
        let m = *message;
        // It landed, so it started.
        let started = m.started.unwrap_or(m.sent);
        // With Dimemas's model the rendezvous sender went on when its data was asked for.
        if m.transfer.rendezvous && self.options.dimemas.is_none() {
            self.complete(m.from, m.send, started, at);
        }
        if let Some(key) = m.recv {
            self.messages.remove(&id);
            self.received(&m);
            self.complete(m.to, key, started, at);
        }
    }

    /// Message `m` has landed and been received: recorded, if asked.
    fn received(&mut self, m: &Message) {
        let Some(record) = &mut self.record else { return };
        let arrived = m.arrived.unwrap_or(m.sent);
        record.communications.push(Communication {
            from: m.from,
            to: m.to,
            logical_send: m.sent,
            physical_send: m.started.unwrap_or(m.sent),
            logical_recv: m.posted.unwrap_or(arrived),
            physical_recv: arrived,
            size: m.transfer.size,
            tag: m.transfer.tag,
        });
    }

    /// Request `key` of `task` completed at `at`, its data having started at `started`
    /// (see [`TaskTimes`]): the task goes on if it waits for it.
    fn complete(&mut self, task: u32, key: Key, started: Ps, at: Ps) {
        let t = task as usize;
        match self.state[t] {
            State::Waiting { key: k, since, why } if k == key => {
                self.pending[t].remove(&key);
                let started = started.clamp(since, at.max(since));
                let times = &mut self.times[t];
                times.waiting = times.waiting.saturating_add(started - since);
                times.communication = times.communication.saturating_add(at.saturating_sub(started));
                if let Some(record) = &mut self.record {
                    if at > since {
                        record.states.push((task, since, at, why));
                    }
                    record.calls.push((task, since, at, call_of(why)));
                }
                self.state[t] = State::Ready;
                self.schedule(at, task);
            }
            _ => {
                if let Some(done) = self.pending[t].get_mut(&key) {
                    *done = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::IdealBus;

    /// 1 byte per ns (10^9 bytes per second), 100 ns latency.
    fn bus() -> IdealBus {
        IdealBus::new(1_000_000_000, 1, 100_000)
    }

    #[test]
    fn ping_pong_takes_two_transfers_per_round() {
        let outcome = replay(&Workload::ping_pong(1000, 3), &mut bus()).expect("replayed");
        // Each way: 100 ns + 1000 ns.
        assert_eq!(outcome.predicted, 6 * 1_100_000);
        assert_eq!(outcome.messages, 6);
        // The pong is blocked for the first ping, 1.1 µs in flight from the start, then
        // 2.2 µs per round: 1.1 µs until the ping is sent, 1.1 µs while it travels.
        assert_eq!(
            outcome.tasks[1],
            TaskTimes {
                compute: 0,
                communication: 3 * 1_100_000,
                waiting: 2 * 1_100_000,
                end: 5 * 1_100_000
            }
        );
        assert_sums(&outcome);
    }

    /// Every task's time is computing, communicating or waiting.
    fn assert_sums(outcome: &Outcome) {
        for (t, times) in outcome.tasks.iter().enumerate() {
            assert_eq!(
                times.compute + times.communication + times.waiting,
                times.end,
                "task {t}: {times:?}"
            );
        }
    }

    #[test]
    fn compute_communication_and_waiting_add_up_to_the_end() {
        use crate::replay::analytic::{AnalyticCollectives, FanModel};
        let mut workloads = crate::replay::kernels::every_kind();
        workloads.push(Workload::all_to_all(6, 1000).with_start_delays(&[0, 3_000_000, 500_000]));
        workloads.push(exchange(true));
        let rendezvous = ReplayOptions {
            eager_limit: Some(1),
            ..ReplayOptions::default()
        };
        let shared = ReplayOptions {
            mapping: Mapping::TasksPerNode(3),
            memory_copy: MemoryCopy {
                latency: 50_000,
                bandwidth: Some((1_000_000_000, 1)),
            },
            cpu_ratio: CpuRatio::new(3.0),
            ..rendezvous.clone()
        };
        for workload in &workloads {
            for options in [&ReplayOptions::default(), &rendezvous, &shared] {
                let outcome = replay_with(workload, &mut bus(), options).expect("replayed");
                assert_sums(&outcome);
                assert!(
                    outcome.tasks.iter().any(|t| t.communication > 0),
                    "{}: {:?}",
                    workload.name,
                    outcome.tasks
                );
            }
        }
        // An analytic collective: task 1 arrives 2 µs late; the model's LOG stages over
        // 2 nodes take 2 × 1.1 µs, communication for both.
        let global = |task: u32| Op::Global {
            call: 0,
            members: 2,
            id: 11,
            is_root: task == 0,
            sent: 1000,
            received: 1000,
        };
        let workload = Workload {
            name: "allreduce".into(),
            tasks: vec![vec![global(0)], vec![Op::Compute(2_000_000), global(1)]],
        };
        let options = ReplayOptions {
            collectives: AnalyticCollectives {
                inter: crate::replay::analytic::Link {
                    latency: 100_000,
                    bandwidth: Some((1_000_000_000, 1)),
                },
                ..AnalyticCollectives::uniform(FanModel::Logarithmic)
            },
            ..ReplayOptions::default()
        };
        let outcome = replay_with(&workload, &mut bus(), &options).expect("replayed");
        assert_sums(&outcome);
        assert_eq!(
            outcome.tasks,
            [
                TaskTimes {
                    compute: 0,
                    communication: 2_200_000,
                    waiting: 2_000_000,
                    end: 4_200_000
                },
                TaskTimes {
                    compute: 2_000_000,
                    communication: 2_200_000,
                    waiting: 0,
                    end: 4_200_000
                }
            ]
        );
    }

    #[test]
    fn messages_that_arrive_early_wait_in_the_mailbox() {
        // Task 1 computes for 5 µs; the message arrived at 1.1 µs: no waiting.
        let workload = Workload {
            name: "early".into(),
            tasks: vec![
                vec![Op::Send {
                    to: 1,
                    size: 1000,
                    tag: 3,
                    synchronous: false,
                }],
                vec![Op::Compute(5_000_000), Op::Recv { from: 0, tag: 3 }],
            ],
        };
        let outcome = replay(&workload, &mut bus()).expect("replayed");
        assert_eq!(outcome.predicted, 5_000_000);
        assert_eq!(
            outcome.tasks[1],
            TaskTimes {
                compute: 5_000_000,
                communication: 0,
                waiting: 0,
                end: 5_000_000
            }
        );
    }

    #[test]
    fn ring_and_all_to_all_complete() {
        let ring = replay(&Workload::ring(4, 1000, 2, 500_000), &mut bus()).expect("replayed");
        // Even tasks send after 0.5 µs of compute; odd ones receive (1.1 µs later) and
        // pass theirs on: a round takes 0.5 + 2 × 1.1 µs, the second starting when the
        // even tasks have received (2.7 µs).
        assert_eq!(ring.predicted, 2 * (500_000 + 2 * 1_100_000));
        let all = replay(&Workload::all_to_all(4, 1000), &mut bus()).expect("replayed");
        // No contention on the ideal bus: every message lands at 1.1 µs.
        assert_eq!(all.predicted, 1_100_000);
        assert_eq!(all.messages, 12);
    }

    #[test]
    fn rendezvous_waits_for_the_receiver() {
        // Task 1 computes 5 µs before its receive: the 1000-byte rendezvous data starts
        // then, and both tasks go on when it lands, 1.1 µs later.
        let send = Op::Send {
            to: 1,
            size: 1000,
            tag: 0,
            synchronous: true,
        };
        let workload = Workload {
            name: "rendezvous".into(),
            tasks: vec![vec![send], vec![Op::Compute(5_000_000), Op::Recv { from: 0, tag: 0 }]],
        };
        let outcome = replay(&workload, &mut bus()).expect("replayed");
        assert_eq!(
            outcome.tasks[0],
            TaskTimes {
                compute: 0,
                communication: 1_100_000,
                waiting: 5_000_000,
                end: 6_100_000
            }
        );
        assert_sums(&outcome);
        assert_eq!(outcome.tasks[1].end, 6_100_000);
        // The same send, eager: the sender does not wait at all.
        let eager = Workload {
            tasks: vec![
                vec![Op::Send {
                    to: 1,
                    size: 1000,
                    tag: 0,
                    synchronous: false,
                }],
                workload.tasks[1].clone(),
            ],
            ..workload.clone()
        };
        let outcome = replay(&eager, &mut bus()).expect("replayed");
        assert_eq!((outcome.tasks[0].end, outcome.tasks[1].end), (0, 5_000_000));
    }

    #[test]
    fn the_eager_limit_turns_large_sends_into_rendezvous() {
        let options = ReplayOptions {
            eager_limit: Some(1000),
            ..ReplayOptions::default()
        };
        let small = replay_with(&Workload::ping_pong(999, 1), &mut bus(), &options).expect("replayed");
        let large = replay_with(&Workload::ping_pong(1000, 1), &mut bus(), &options).expect("replayed");
        // A rendezvous sender waits for its data; the pong's sender thus ends later.
        assert_eq!(small.tasks[1].end, 1_099_000);
        assert_eq!(large.tasks[1].end, 2 * 1_100_000);
    }

    #[test]
    fn an_eager_limit_overrides_the_synchronous_bit_and_all_eager_overrides_both() {
        // Task 0 sends 1000 bytes with the synchronous bit set, then computes 1 µs; task
        // 1 computes 5 µs before its receive. Rendezvous: the data starts at 5 µs and
        // lands 1.1 µs later, when task 0 goes on. Eager: it lands at 1.1 µs, and task
        // 0 is done at 1 µs.
        let workload = Workload {
            name: "synchronous".into(),
            tasks: vec![
                vec![
                    Op::Send {
                        to: 1,
                        size: 1000,
                        tag: 0,
                        synchronous: true,
                    },
                    Op::Compute(1_000_000),
                ],
                vec![Op::Compute(5_000_000), Op::Recv { from: 0, tag: 0 }],
            ],
        };
        let ends = |eager_limit: Option<u32>, all_eager: bool| {
            let options = ReplayOptions {
                eager_limit,
                all_eager,
                ..ReplayOptions::default()
            };
            let outcome = replay_with(&workload, &mut bus(), &options).expect("replayed");
            (outcome.tasks[0].end, outcome.tasks[1].end)
        };
        let rendezvous = (6_100_000 + 1_000_000, 6_100_000);
        let eager = (1_000_000, 5_000_000);
        assert_eq!(ends(None, false), rendezvous, "the bit, with no limit");
        assert_eq!(ends(Some(1001), false), eager, "under the limit");
        assert_eq!(ends(Some(1000), false), rendezvous, "at the limit");
        assert_eq!(ends(None, true), eager, "all eager");
        assert_eq!(ends(Some(1), true), eager, "all eager wins over a limit");
    }

    #[test]
    fn immediate_operations_let_all_to_all_run_with_rendezvous_sends() {
        // Every task posts its receives before starting its sends: every rendezvous is
        // matched at 0 and every message lands at 1.1 µs, as with eager sends.
        let options = ReplayOptions {
            eager_limit: Some(1),
            ..ReplayOptions::default()
        };
        let all = replay_with(&Workload::all_to_all(4, 1000), &mut bus(), &options).expect("replayed");
        assert_eq!(all.predicted, 1_100_000);
        assert_eq!(all.messages, 12);
        let wrf = replay_with(&Workload::wrf(12, 4, 1000), &mut bus(), &options).expect("replayed");
        assert_eq!(wrf.predicted, 1_100_000);
    }

    /// Tasks 0 and 1 both send 1000 bytes synchronously to each other, then receive:
    /// with blocking sends, or immediate ones waited for after the receive.
    fn exchange(immediate: bool) -> Workload {
        let program = |me: u32| {
            let other = 1 - me;
            let (to, size, tag, synchronous) = (other, 1000, 0, true);
            let recv = Op::Recv { from: other, tag };
            if immediate {
                let request = 1;
                vec![
                    Op::ISend {
                        to,
                        size,
                        tag,
                        synchronous,
                        request,
                    },
                    recv,
                    Op::Wait { request },
                ]
            } else {
                vec![
                    Op::Send {
                        to,
                        size,
                        tag,
                        synchronous,
                    },
                    recv,
                ]
            }
        };
        Workload {
            name: "exchange".into(),
            tasks: vec![program(0), program(1)],
        }
    }

    #[test]
    fn head_to_head_synchronous_sends_deadlock_unless_immediate() {
        let err = replay(&exchange(false), &mut bus()).expect_err("deadlock");
        assert_eq!(
            err.to_string(),
            "deadlock at 0 ps: tasks [0, 1] all wait, for receives or rendezvous sends that cannot match"
        );
        let outcome = replay(&exchange(true), &mut bus()).expect("replayed");
        assert_eq!(outcome.predicted, 1_100_000);
        // Both sends are matched at once: the time is all communication.
        assert_eq!(
            (outcome.tasks[0].communication, outcome.tasks[0].waiting),
            (1_100_000, 0)
        );
    }

    #[test]
    fn receives_match_in_post_order_and_complete_in_arrival_order() {
        // Task 0 sends 1000 bytes, then 10 (landing at 1.1 µs and 0.11 µs); task 1's
        // first receive takes the first message, its second the second.
        let send = |size| Op::Send {
            to: 1,
            size,
            tag: 0,
            synchronous: false,
        };
        let receives = [1, 2].map(|request| Op::IRecv {
            from: 0,
            tag: 0,
            request,
        });
        let waiting_for = |order: [u32; 2]| Workload {
            name: "order".into(),
            tasks: vec![
                vec![send(1000), send(10)],
                receives
                    .into_iter()
                    .chain(order.map(|request| Op::Wait { request }))
                    .collect(),
            ],
        };
        let second_first = replay(&waiting_for([2, 1]), &mut bus()).expect("replayed");
        assert_eq!(second_first.tasks[1].end, 1_100_000);
        // Waiting only for the short one ends at its arrival; the long one still lands.
        let mut short_only = waiting_for([2, 1]);
        short_only.tasks[1].pop();
        let outcome = replay(&short_only, &mut bus()).expect("replayed");
        assert_eq!((outcome.tasks[1].end, outcome.messages), (110_000, 2));
    }

    #[test]
    fn tasks_of_one_node_copy_their_messages_locally() {
        // 50 ns + 1 byte per ns: 1000 bytes take 1.05 µs within a node, 1.1 µs over the
        // bus.
        let options = ReplayOptions {
            mapping: Mapping::TasksPerNode(2),
            memory_copy: MemoryCopy {
                latency: 50_000,
                bandwidth: Some((1_000_000_000, 1)),
            },
            ..ReplayOptions::default()
        };
        let mut fabric = bus();
        let local = replay_with(&Workload::ping_pong(1000, 3), &mut fabric, &options).expect("replayed");
        assert_eq!(
            (local.predicted, local.messages, local.intra_node),
            (6 * 1_050_000, 6, 6)
        );
        // A ring of 4 on 2 nodes: 0 → 1 and 2 → 3 are copies, 1 → 2 and 3 → 0 cross.
        let ring = replay_with(&Workload::ring(4, 1000, 2, 500_000), &mut fabric, &options).expect("replayed");
        assert_eq!(ring.predicted, 2 * (500_000 + 1_050_000 + 1_100_000));
        assert_eq!(ring.intra_node, 4);
        // Rendezvous within a node: the data starts when the receive is posted.
        let rendezvous = ReplayOptions {
            eager_limit: Some(1),
            ..options
        };
        let exchange = replay_with(&exchange(true), &mut fabric, &rendezvous).expect("replayed");
        assert_eq!(exchange.predicted, 1_050_000);
        // By default a copy takes no time.
        let free = ReplayOptions {
            mapping: Mapping::TasksPerNode(2),
            ..ReplayOptions::default()
        };
        assert_eq!(
            replay_with(&Workload::ping_pong(1000, 3), &mut fabric, &free)
                .expect("replayed")
                .predicted,
            0
        );
    }

    #[test]
    fn mappings_place_tasks_as_dimemas_does() {
        let place = |m: &Mapping| (0..6).map(|t| m.node_of(t)).collect::<Vec<_>>();
        assert_eq!(place(&Mapping::OnePerNode), [0, 1, 2, 3, 4, 5]);
        assert_eq!(place(&Mapping::TasksPerNode(4)), [0, 0, 0, 0, 1, 1]);
        assert_eq!(place(&Mapping::Interleaved { nodes: 4 }), [0, 1, 2, 3, 0, 1]);
        assert_eq!(place(&Mapping::Explicit(vec![3, 3, 0, 1, 2, 0])), [3, 3, 0, 1, 2, 0]);
        assert_eq!(Mapping::TasksPerNode(4).nodes_for(6), 2);
        assert_eq!(Mapping::Explicit(vec![7, 0]).nodes_for(2), 8);
        // Interleaved, tasks 0 and 2 share node 0: their message is copied.
        let options = ReplayOptions {
            mapping: Mapping::Interleaved { nodes: 2 },
            ..ReplayOptions::default()
        };
        let ring = replay_with(&Workload::ring(4, 1000, 1, 0), &mut bus(), &options).expect("replayed");
        assert_eq!(ring.intra_node, 0);
        let all = replay_with(&Workload::all_to_all(4, 1000), &mut bus(), &options).expect("replayed");
        assert_eq!(all.intra_node, 4);
    }

    #[test]
    fn the_cpu_ratio_scales_bursts() {
        let twice = ReplayOptions {
            cpu_ratio: CpuRatio::new(2.0),
            ..ReplayOptions::default()
        };
        // Bursts of 0.5 µs take 0.25 µs on CPUs twice as fast.
        let ring = replay_with(&Workload::ring(4, 1000, 2, 500_000), &mut bus(), &twice).expect("replayed");
        assert_eq!(ring.predicted, 2 * (250_000 + 2 * 1_100_000));
        assert_eq!(ring.tasks[0].compute, 500_000);
        assert_eq!(CpuRatio::new(3.0).and_then(|r| r.scale(1_000_000)), Some(333_333));
        assert_eq!(CpuRatio::new(0.0), None);
        assert_eq!(CpuRatio::new(f64::NAN), None);
    }

    #[test]
    fn times_past_the_clock_are_errors_not_clamped() {
        // Bursts of 1,000 s on CPUs 10^5 times slower: 10^8 s.
        let slow = ReplayOptions {
            cpu_ratio: CpuRatio::new(1e-5),
            ..ReplayOptions::default()
        };
        let ring = Workload::ring(2, 1000, 1, 1_000_000_000_000_000);
        assert_eq!(
            replay_with(&ring, &mut bus(), &slow)
                .expect_err("past the clock")
                .to_string(),
            "task 0 at 0 ps: a burst of 1000000000000000 ps (traced; before the CPU speed ratio) would end past \
             what vesper's clock counts (2^64 ps, about 18446744 s)"
        );
        assert_eq!(CpuRatio::new(1e-5).and_then(|r| r.scale(1_000_000_000_000_000)), None);
        // 1,000 bytes at a byte per 10^6 s: 10^9 s.
        let err = replay(&Workload::ring(2, 1000, 1, 0), &mut IdealBus::new(1, 1_000_000, 0)).expect_err("past");
        assert_eq!(
            err.to_string(),
            "a message of 1000 bytes from node 0 to node 1, sent at 0 ps, would arrive past what vesper's clock \
             counts (2^64 ps, about 18446744 s)"
        );
    }

    #[test]
    fn progress_reaches_every_operation() {
        let workload = Workload::ring(4, 1000, 2, 500_000);
        let mut seen = Vec::new();
        replay_observed(&workload, &mut bus(), &ReplayOptions::default(), &mut |p| seen.push(p)).expect("replayed");
        let last = seen.last().copied().expect("progress");
        assert_eq!((last.done, last.total), (24, 24));
        assert!(seen.windows(2).all(|w| w[0].done <= w[1].done && w[0].now <= w[1].now));
    }

    #[test]
    fn unmatched_receives_are_refused_before_replaying() {
        let workload = Workload {
            name: "lonely".into(),
            tasks: vec![vec![Op::Recv { from: 1, tag: 0 }], vec![]],
        };
        let err = replay(&workload, &mut bus()).expect_err("refused");
        assert_eq!(
            err.to_string(),
            "workload lonely: 1 message(s) from task 1 to task 0 with tag 0 have no matching send"
        );
    }

    /// Dimemas's model: `startup` before sends, receives and waits (within and between
    /// nodes), `links` input and output links per node and `buses` buses between
    /// nodes, and within nodes `task_links` per task (0: unlimited).
    fn dimemas(startup: Ps, links: u32, buses: u32, task_links: u32) -> ReplayOptions {
        use crate::replay::machine::Links;
        use crate::replay::machine::NodeModel;
        let both = |n| Links { input: n, output: n };
        let node = NodeModel {
            inter_startup: startup,
            intra_startup: startup,
            inter_links: both(links),
            intra_links: both(task_links),
            ..NodeModel::free()
        };
        ReplayOptions {
            dimemas: Some(DimemasModel::uniform(node, buses)),
            ..ReplayOptions::default()
        }
    }

    /// 1 byte per ns and no latency: with Dimemas's model the tasks pay the latency.
    fn wire() -> IdealBus {
        IdealBus::new(1_000_000_000, 1, 0)
    }

    fn eager(to: u32) -> Op {
        Op::Send {
            to,
            size: 1000,
            tag: 0,
            synchronous: false,
        }
    }

    #[test]
    fn dimemas_startup_is_paid_by_the_tasks_before_sends_and_receives() {
        // 100 ns before the send, 1000 ns of data: a ping-pong's round takes 2 × 1.1 µs,
        // as with the latency in the network.
        let outcome =
            replay_with(&Workload::ping_pong(1000, 3), &mut wire(), &dimemas(100_000, 0, 0, 0)).expect("replayed");
        assert_eq!(outcome.predicted, 6 * 1_100_000);
        assert_sums(&outcome);
        // A receive whose message has long landed still pays its startup: task 1 computes
        // 5 µs, then receives at 5.1 µs.
        let late = Workload {
            name: "late".into(),
            tasks: vec![
                vec![eager(1)],
                vec![Op::Compute(5_000_000), Op::Recv { from: 0, tag: 0 }],
            ],
        };
        let outcome = replay_with(&late, &mut wire(), &dimemas(100_000, 0, 0, 0)).expect("replayed");
        assert_eq!((outcome.tasks[0].end, outcome.tasks[1].end), (100_000, 5_100_000));
        // A wait pays it too, an immediate receive does not.
        let waited = Workload {
            name: "waited".into(),
            tasks: vec![
                vec![eager(1)],
                vec![
                    Op::IRecv {
                        from: 0,
                        tag: 0,
                        request: 1,
                    },
                    Op::Compute(5_000_000),
                    Op::Wait { request: 1 },
                ],
            ],
        };
        let outcome = replay_with(&waited, &mut wire(), &dimemas(100_000, 0, 0, 0)).expect("replayed");
        assert_eq!(outcome.tasks[1].end, 5_100_000);
    }

    #[test]
    fn dimemas_input_links_serialise_an_incast() {
        // Tasks 1 and 2 send 1000 bytes to task 0 at once; node 0 has one input link: the
        // second message leaves when the first lands (1 µs), and lands at 2 µs.
        let incast = Workload {
            name: "incast".into(),
            tasks: vec![
                vec![Op::Recv { from: 1, tag: 0 }, Op::Recv { from: 2, tag: 0 }],
                vec![eager(0)],
                vec![eager(0)],
            ],
        };
        let one = replay_with(&incast, &mut wire(), &dimemas(0, 1, 0, 0)).expect("replayed");
        assert_eq!(one.tasks[0].end, 2_000_000);
        // The senders go on at once (eager): their messages wait for the link.
        assert_eq!((one.tasks[1].end, one.tasks[2].end), (0, 0));
        // Two links, or unlimited ones: both land at 1 µs.
        for links in [2, 0] {
            let outcome = replay_with(&incast, &mut wire(), &dimemas(0, links, 0, 0)).expect("replayed");
            assert_eq!(outcome.tasks[0].end, 1_000_000, "{links} links");
        }
        // With 100 ns of startup: sends leave at 0.1 µs, land at 1.1 and 2.1 µs.
        let late = replay_with(&incast, &mut wire(), &dimemas(100_000, 1, 0, 0)).expect("replayed");
        assert_eq!(late.tasks[0].end, 2_100_000);
        assert_sums(&late);
    }

    #[test]
    fn dimemas_buses_limit_the_messages_in_flight_between_nodes() {
        // 0 → 1 and 2 → 3 at once over one bus: the second lands at 2 µs.
        let pairs = Workload {
            name: "pairs".into(),
            tasks: vec![
                vec![eager(1)],
                vec![Op::Recv { from: 0, tag: 0 }],
                vec![eager(3)],
                vec![Op::Recv { from: 2, tag: 0 }],
            ],
        };
        let one_bus = replay_with(&pairs, &mut wire(), &dimemas(0, 0, 1, 0)).expect("replayed");
        assert_eq!((one_bus.tasks[1].end, one_bus.tasks[3].end), (1_000_000, 2_000_000));
        let two = replay_with(&pairs, &mut wire(), &dimemas(0, 0, 2, 0)).expect("replayed");
        assert_eq!(two.predicted, 1_000_000);
    }

    #[test]
    fn dimemas_rendezvous_senders_go_on_when_the_receiver_is_ready() {
        // Task 1 receives at 5 µs: the synchronous send's data leaves then and lands at
        // 6 µs; the sender goes on at 5 µs, not when the data lands.
        let workload = Workload {
            name: "rendezvous".into(),
            tasks: vec![
                vec![Op::Send {
                    to: 1,
                    size: 1000,
                    tag: 0,
                    synchronous: true,
                }],
                vec![Op::Compute(5_000_000), Op::Recv { from: 0, tag: 0 }],
            ],
        };
        let outcome = replay_with(&workload, &mut wire(), &dimemas(0, 1, 0, 0)).expect("replayed");
        assert_eq!((outcome.tasks[0].end, outcome.tasks[1].end), (5_000_000, 6_000_000));
        assert_sums(&outcome);
    }

    #[test]
    fn dimemas_links_within_a_node_belong_to_each_task() {
        // Tasks 0 and 1 share a node (memory at 1 byte per ns): task 0's two immediate
        // sends to task 1 go one after the other over its one output link.
        let isend = |request| Op::ISend {
            to: 1,
            size: 1000,
            tag: 0,
            synchronous: false,
            request,
        };
        let workload = Workload {
            name: "local".into(),
            tasks: vec![
                vec![isend(1), isend(2)],
                vec![Op::Recv { from: 0, tag: 0 }, Op::Recv { from: 0, tag: 0 }],
            ],
        };
        let local = |task_links| {
            use crate::replay::machine::NodeModel;
            let node = NodeModel {
                intra_links: crate::replay::Links {
                    input: task_links,
                    output: task_links,
                },
                intra_bandwidth: Some((1_000_000_000, 1)),
                ..NodeModel::free()
            };
            ReplayOptions {
                mapping: Mapping::TasksPerNode(2),
                dimemas: Some(DimemasModel::uniform(node, 0)),
                ..ReplayOptions::default()
            }
        };
        let one = replay_with(&workload, &mut wire(), &local(1)).expect("replayed");
        assert_eq!((one.tasks[1].end, one.intra_node), (2_000_000, 2));
        let unlimited = replay_with(&workload, &mut wire(), &local(0)).expect("replayed");
        assert_eq!(unlimited.tasks[1].end, 1_000_000);
    }
}
