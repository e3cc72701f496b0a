//! The replay loop: tasks run their programs; sends go to the fabric; receives wait for
//! arrivals; the fabric is advanced conservatively up to the next local event.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::Ps;
use super::fabric::{Fabric, FabricError, Transfer};
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
    #[error("deadlock at {at} ps: tasks {tasks:?} all wait, for receives or rendezvous sends that cannot match")]
    Deadlock {
        /// when
        at: Ps,
        /// the blocked tasks
        tasks: Vec<u32>,
    },
}

/// How the replay treats sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayOptions {
    /// sends of at least this many bytes use the rendezvous protocol (like Dimemas's
    /// `-S`); `None`: only synchronous sends do
    pub eager_limit: Option<u32>,
}

#[derive(Debug, Clone, Copy)]
enum State {
    /// ready to go on at the time in the `ready` set
    Ready,
    /// waiting since `since` for a message from `from` with `tag`
    Receiving { from: u32, tag: i32, since: Ps },
    /// waiting since `since` for its rendezvous send to complete
    Sending { since: Ps },
    /// its program is over
    Done,
}

/// A message on its way to a receive, in send order per (destination, source, tag).
#[derive(Debug, Clone, Copy)]
struct Incoming {
    id: u64,
    rendezvous: bool,
    /// eager: when it arrived
    arrived: Option<Ps>,
    /// rendezvous: the data has been started (the receiver was ready)
    started: bool,
}

/// A message in the fabric, or a rendezvous waiting for its receiver.
#[derive(Debug, Clone, Copy)]
struct Travelling {
    from: u32,
    to: u32,
    tag: i32,
    size: u32,
    rendezvous: bool,
}

/// Replays `workload` over `fabric` (task `t` on node `t`), every send eager unless
/// synchronous.
pub fn replay(workload: &Workload, fabric: &mut dyn Fabric) -> Result<Outcome, ReplayError> {
    replay_with(workload, fabric, ReplayOptions::default())
}

/// Replays `workload` over `fabric` (task `t` on node `t`).
pub fn replay_with(
    workload: &Workload,
    fabric: &mut dyn Fabric,
    options: ReplayOptions,
) -> Result<Outcome, ReplayError> {
    workload.check().map_err(|reason| ReplayError::Workload {
        name: workload.name.clone(),
        reason,
    })?;
    let tasks = workload.tasks.len();
    let mut r = Replay {
        workload,
        pc: vec![0; tasks],
        state: vec![State::Ready; tasks],
        times: vec![TaskTimes::default(); tasks],
        ready: (0..tasks as u32).map(|t| (0, t)).collect(),
        queues: BTreeMap::new(),
        travelling: BTreeMap::new(),
        next_id: 0,
        options,
    };
    loop {
        let next_local = r.ready.first().map(|&(t, _)| t);
        if fabric.in_flight() > 0
            && let Some((at, ids)) = fabric.advance(next_local)?
        {
            for id in ids {
                r.delivered(id, at);
            }
            continue;
        }
        let Some((now, task)) = r.ready.pop_first() else {
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
    }
    Ok(Outcome {
        predicted: r.times.iter().map(|t| t.end).max().unwrap_or(0),
        tasks: r.times,
        messages: r.next_id,
    })
}

struct Replay<'a> {
    workload: &'a Workload,
    pc: Vec<usize>,
    state: Vec<State>,
    times: Vec<TaskTimes>,
    ready: BTreeSet<(Ps, u32)>,
    /// by (destination, source, tag)
    queues: BTreeMap<(u32, u32, i32), VecDeque<Incoming>>,
    travelling: BTreeMap<u64, Travelling>,
    next_id: u64,
    options: ReplayOptions,
}

impl Replay<'_> {
    /// Runs `task` from `now` until it computes, blocks or ends.
    fn run(&mut self, task: u32, now: Ps, fabric: &mut dyn Fabric) -> Result<(), ReplayError> {
        let t = task as usize;
        loop {
            let Some(&op) = self.workload.tasks[t].get(self.pc[t]) else {
                self.state[t] = State::Done;
                self.times[t].end = now;
                return Ok(());
            };
            match op {
                Op::Compute(d) => {
                    self.times[t].compute += d;
                    self.pc[t] += 1;
                    self.ready.insert((now + d, task));
                    return Ok(());
                }
                Op::Send {
                    to,
                    size,
                    tag,
                    synchronous,
                } => {
                    let rendezvous = synchronous || self.options.eager_limit.is_some_and(|limit| size >= limit);
                    let id = self.next_id;
                    self.next_id += 1;
                    let transfer = Transfer {
                        src: task,
                        dst: to,
                        size,
                        tag,
                        rendezvous,
                    };
                    self.travelling.insert(
                        id,
                        Travelling {
                            from: task,
                            to,
                            tag,
                            size,
                            rendezvous,
                        },
                    );
                    let queue = self.queues.entry((to, task, tag)).or_default();
                    queue.push_back(Incoming {
                        id,
                        rendezvous,
                        arrived: None,
                        started: false,
                    });
                    self.pc[t] += 1;
                    if !rendezvous {
                        fabric.send(id, now, transfer)?;
                        continue;
                    }
                    fabric.request_to_send(now, transfer)?;
                    // The receiver may be waiting for exactly this message already.
                    let waiting = matches!(
                        self.state[to as usize],
                        State::Receiving { from, tag: g, .. } if from == task && g == tag
                    );
                    if waiting && queue.len() == 1 {
                        if let Some(front) = queue.front_mut() {
                            front.started = true;
                        }
                        fabric.send(id, now, transfer)?;
                    }
                    self.state[t] = State::Sending { since: now };
                    return Ok(());
                }
                Op::Recv { from, tag } => {
                    let queue = self.queues.entry((task, from, tag)).or_default();
                    match queue.front().copied() {
                        Some(Incoming { arrived: Some(_), .. }) => {
                            queue.pop_front();
                            self.pc[t] += 1;
                            continue;
                        }
                        Some(Incoming {
                            id,
                            rendezvous: true,
                            started: false,
                            ..
                        }) => {
                            // Both sides are ready: the data starts now.
                            if let Some(front) = queue.front_mut() {
                                front.started = true;
                            }
                            let m = self.travelling[&id];
                            let transfer = Transfer {
                                src: m.from,
                                dst: m.to,
                                size: m.size,
                                tag: m.tag,
                                rendezvous: true,
                            };
                            fabric.send(id, now, transfer)?;
                        }
                        _ => {}
                    }
                    self.state[t] = State::Receiving { from, tag, since: now };
                    return Ok(());
                }
            }
        }
    }

    /// Message `id` arrived at `at`.
    fn delivered(&mut self, id: u64, at: Ps) {
        let Some(m) = self.travelling.remove(&id) else { return };
        let queue = self.queues.entry((m.to, m.from, m.tag)).or_default();
        if let Some(item) = queue.iter_mut().find(|i| i.id == id) {
            item.arrived = Some(at);
        }
        if m.rendezvous {
            // The sender's synchronous send is over.
            let sender = m.from as usize;
            if let State::Sending { since } = self.state[sender] {
                self.times[sender].waiting += at - since;
                self.state[sender] = State::Ready;
                self.ready.insert((at, m.from));
            }
        }
        // The receiver takes it if it is waiting for it and it is next in order.
        let receiver = m.to as usize;
        if let State::Receiving { from, tag, since } = self.state[receiver]
            && from == m.from
            && tag == m.tag
            && queue.front().is_some_and(|i| i.id == id)
        {
            queue.pop_front();
            self.times[receiver].waiting += at - since;
            self.pc[receiver] += 1;
            self.state[receiver] = State::Ready;
            self.ready.insert((at, m.to));
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
                waiting: 6_100_000,
                end: 6_100_000
            }
        );
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
        };
        let small = replay_with(&Workload::ping_pong(999, 1), &mut bus(), options).expect("replayed");
        let large = replay_with(&Workload::ping_pong(1000, 1), &mut bus(), options).expect("replayed");
        // A rendezvous sender waits for its data; the pong's sender thus ends later.
        assert_eq!(small.tasks[1].end, 1_099_000);
        assert_eq!(large.tasks[1].end, 2 * 1_100_000);
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
