//! The replay loop: tasks run their programs; sends go to the fabric; receives wait for
//! arrivals; the fabric is advanced conservatively up to the next local event.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::Ps;
use super::fabric::{Fabric, FabricError};
use super::workload::{Op, Workload};

/// Where one task's time went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskTimes {
    /// computing [ps]
    pub compute: Ps,
    /// blocked in receives [ps]
    pub waiting: Ps,
    /// when its program ended [ps]
    pub end: Ps,
}

/// The result of a replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// when the last task ended [ps]
    pub predicted: Ps,
    /// per task
    pub tasks: Vec<TaskTimes>,
    /// messages sent
    pub messages: u64,
}

/// Why a replay failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// the workload does not match its sends and receives
    #[error("workload {name}: {reason}")]
    Workload {
        /// the workload
        name: String,
        /// what is wrong
        reason: String,
    },
    /// the fabric failed
    #[error(transparent)]
    Fabric(#[from] FabricError),
    /// every task waits and nothing is in flight
    #[error("deadlock at {at} ps: tasks {tasks:?} wait for messages that were never sent")]
    Deadlock {
        /// when
        at: Ps,
        /// the blocked tasks
        tasks: Vec<u32>,
    },
}

#[derive(Debug, Clone, Copy)]
enum State {
    /// ready to go on at the time in the `ready` set
    Ready,
    /// waiting since `since` for a message from `from` with `tag`
    Blocked { from: u32, tag: i32, since: Ps },
    /// its program is over
    Done,
}

/// Replays `workload` over `fabric` (task `t` on node `t`).
pub fn replay(workload: &Workload, fabric: &mut dyn Fabric) -> Result<Outcome, ReplayError> {
    workload.check().map_err(|reason| ReplayError::Workload {
        name: workload.name.clone(),
        reason,
    })?;
    let tasks = workload.tasks.len();
    let mut pc = vec![0usize; tasks];
    let mut state = vec![State::Ready; tasks];
    let mut times = vec![TaskTimes::default(); tasks];
    let mut ready: BTreeSet<(Ps, u32)> = (0..tasks as u32).map(|t| (0, t)).collect();
    // Messages that arrived before their receive: by (destination, source, tag).
    let mut mailbox: BTreeMap<(u32, u32, i32), VecDeque<Ps>> = BTreeMap::new();
    // Messages in the fabric: id → (source, destination, tag).
    let mut travelling: BTreeMap<u64, (u32, u32, i32)> = BTreeMap::new();
    let mut next_id = 0u64;
    loop {
        let next_local = ready.first().map(|&(t, _)| t);
        if fabric.in_flight() > 0
            && let Some((at, ids)) = fabric.advance(next_local)?
        {
            for id in ids {
                let Some((from, to, tag)) = travelling.remove(&id) else {
                    continue;
                };
                match state[to as usize] {
                    State::Blocked { from: f, tag: g, since } if f == from && g == tag => {
                        times[to as usize].waiting += at - since;
                        pc[to as usize] += 1;
                        state[to as usize] = State::Ready;
                        ready.insert((at, to));
                    }
                    _ => mailbox.entry((to, from, tag)).or_default().push_back(at),
                }
            }
            continue;
        }
        let Some((now, task)) = ready.pop_first() else {
            let blocked: Vec<u32> = (0..tasks as u32)
                .filter(|&t| matches!(state[t as usize], State::Blocked { .. }))
                .collect();
            if blocked.is_empty() {
                break;
            }
            return Err(ReplayError::Deadlock {
                at: times.iter().map(|t| t.end).max().unwrap_or(0),
                tasks: blocked,
            });
        };
        // Run the task until it computes, blocks or ends.
        let t = task as usize;
        loop {
            let Some(&op) = workload.tasks[t].get(pc[t]) else {
                state[t] = State::Done;
                times[t].end = now;
                break;
            };
            match op {
                Op::Compute(d) => {
                    times[t].compute += d;
                    pc[t] += 1;
                    ready.insert((now + d, task));
                    break;
                }
                Op::Send { to, size, tag } => {
                    fabric.send(next_id, now, task, to, size, tag)?;
                    travelling.insert(next_id, (task, to, tag));
                    next_id += 1;
                    pc[t] += 1;
                }
                Op::Recv { from, tag } => {
                    let arrived = mailbox.get_mut(&(task, from, tag)).and_then(VecDeque::pop_front);
                    if arrived.is_some() {
                        pc[t] += 1;
                        continue;
                    }
                    state[t] = State::Blocked { from, tag, since: now };
                    break;
                }
            }
        }
    }
    Ok(Outcome {
        predicted: times.iter().map(|t| t.end).max().unwrap_or(0),
        tasks: times,
        messages: next_id,
    })
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
        // The pong waits for the first ping, 1.1 µs, then 2.2 µs per round.
        assert_eq!(outcome.tasks[1].waiting, 1_100_000 + 2 * 2_200_000);
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
                waiting: 0,
                end: 5_000_000
            }
        );
    }

    #[test]
    fn ring_and_all_to_all_complete() {
        let ring = replay(&Workload::ring(4, 1000, 2, 500_000), &mut bus()).expect("replayed");
        // Each round: 0.5 µs compute, then 1.1 µs for the neighbour's message.
        assert_eq!(ring.predicted, 2 * (500_000 + 1_100_000));
        let all = replay(&Workload::all_to_all(4, 1000), &mut bus()).expect("replayed");
        // No contention on the ideal bus: every message lands at 1.1 µs.
        assert_eq!(all.predicted, 1_100_000);
        assert_eq!(all.messages, 12);
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
}
