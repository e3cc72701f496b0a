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
use super::fabric::{Fabric, FabricError, IdealBus, Transfer};
use super::machine::{DimemasModel, SMALLEST_STARTUP};
use super::options::ReplayOptions;
use super::outcome::{Activity, Call, Communication, Outcome, Progress, Record, TaskTimes};
use super::programs::{Cursor, Programs};
use super::resources::{Resources, Route};
use super::workload::{Op, THREAD, UNWAITED, Workload, WorkloadError, task_of_programs};

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
    /// the task of each program (the loop's "tasks" below are programs: threads)
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
mod tests;
