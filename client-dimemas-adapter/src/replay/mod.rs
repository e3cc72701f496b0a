//! The replay engine: MPI-like task programs replayed against a network.
//!
//! ```text
//!   programs (per task: compute, send, receive) ──▶ task loop ──▶ Fabric
//!                                                    ▲  │          ├─ IdealBus: latency + size / bandwidth, local
//!                 arrivals wake blocked receives ────┘  │          └─ ServerFabric: SEND / STOP / END over TCP,
//!                                                       ▼                           as Dimemas's client does
//!                                                 predicted time, per-task split
//! ```
//!
//! Time is integer picoseconds (as in the server). The task loop ([`task_loop`])
//! advances conservatively: while messages are in flight it asks the fabric to run up
//! to its next own event (a STOP), and takes the completions the fabric reports first.
//! What a replay is told is in [`options`], what it yields in [`outcome`].
//!
//! Covered: compute bursts, eager and rendezvous sends (by the send's synchronous flag,
//! or by an eager limit that overrides it, or all eager), blocking and immediate sends and receives matched in order on
//! (source, tag), waits, several tasks per node (their messages copied locally, as
//! Dimemas's intra-node model), and collectives, either decomposed into messages by the
//! readers ([`collective`]) or modelled as Dimemas does ([`analytic`]). With a Dimemas
//! configuration the replay also follows Dimemas's own point-to-point model
//! ([`resources`]: the startup latency tasks pay, and the links and buses messages
//! hold), so that the ideal network reproduces Dimemas's prediction exactly. Programs come
//! from memory or are read as the replay goes ([`programs`]).
//!
//! Its files in layers, each using only those beside or below it:
//!
//! ```text
//!   task_loop                         the loop: tasks run their programs over a fabric
//!   options, kernels                  what a replay is told; synthetic workloads
//!   programs, collective, analytic,   where operations come from; collectives as
//!   fabric, resources                 messages or as Dimemas's model; the network;
//!                                     Dimemas's links and buses
//!   workload, machine, outcome        a task's operations; Dimemas's machine; results
//! ```

pub mod analytic;
pub mod collective;
pub mod fabric;
pub mod kernels;
pub mod machine;
pub mod options;
pub mod outcome;
pub mod programs;
pub mod resources;
pub mod task_loop;
pub mod workload;

pub use analytic::AnalyticCollectives;
pub use collective::MethodsError;
pub use fabric::{Fabric, FabricError, IdealBus, ServerFabric, Transfer, mbps_ratio};
pub use kernels::KernelError;
pub use machine::{DimemasModel, Links, NodeModel};
pub use options::{CpuRatio, Mapping, MemoryCopy, ReplayOptions};
pub use outcome::{Activity, Call, Communication, Outcome, Progress, Record, TaskTimes};
pub use programs::{Cursor, Programs, StartDelays, drain};
pub use resources::{Resources, Route};
pub use task_loop::{ReplayError, replay, replay_observed, replay_programs, replay_with};
pub use workload::{Op, THREAD, UNWAITED, Workload, WorkloadError, task_of_programs};

/// Picoseconds of simulated time.
pub type Ps = u64;

/// What the clock counts up to (2^64 ps, about 213 days), for messages.
pub const CLOCK_LIMIT: &str = "vesper's clock counts (2^64 ps, about 18446744 s)";

/// `seconds` as picoseconds (rounded to the nearest), if it is a duration the clock
/// counts: finite, not negative, below 2^64 ps.
pub fn ps_of_seconds(seconds: f64) -> Option<Ps> {
    ps_of_picoseconds(seconds * 1e12)
}

/// `ps` picoseconds rounded to the nearest, if the clock counts them: finite, not
/// negative, below 2^64.
pub fn ps_of_picoseconds(ps: f64) -> Option<Ps> {
    let ps = ps.round();
    // 2^64 is exact as an f64; every whole f64 below it converts exactly.
    (0.0..18_446_744_073_709_551_616.0).contains(&ps).then_some(ps as Ps)
}
