//! What a replay yields: each task's split of its time ([`TaskTimes`]), the
//! predicted time ([`Outcome`]), and, when asked for, a [`Record`] of what every task
//! did when (for a Paraver trace); and how far a replay has got ([`Progress`]).

use super::Ps;

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
