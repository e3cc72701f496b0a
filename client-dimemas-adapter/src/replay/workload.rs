//! Task programs: the operations of a task, and a workload of them, with what every
//! layer above takes from them (the peers of a message, the channel it matches on).
//! The synthetic workloads are generated above, in `kernels`.

use crate::input::InputError;

/// The request of an immediate send that nothing waits for (a `.dim` trace has no
/// record of a wait for a send, only vesper's own events, [`crate::dim::LABEL_EVENT`]):
/// the replay forgets it once started, so that traces of many such sends replay in
/// constant memory.
pub const UNWAITED: u32 = u32::MAX;

/// A peer `THREAD | p` in a send or receive is program `p`, a thread of the same task
/// (Dimemas's messages between threads of one task); other peers are tasks.
pub const THREAD: u32 = 1 << 31;

/// The task of each program, given the threads of each task.
pub fn task_of_programs(threads: &[u32]) -> Vec<u32> {
    (0..threads.len() as u32)
        .flat_map(|t| std::iter::repeat_n(t, threads[t as usize] as usize))
        .collect()
}

/// One operation of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// compute for this long \[ps\]
    Compute(super::Ps),
    /// send `size` bytes to task `to` with `tag`: eager (the task goes on at once) or
    /// rendezvous (the task waits until the receiver is ready and the data has
    /// arrived), as [`super::ReplayOptions::rendezvous`] says: by `synchronous`, unless
    /// an eager limit or all-eager replay overrides it
    Send {
        /// destination task
        to: u32,
        /// payload \[bytes\]
        size: u32,
        /// MPI tag
        tag: i32,
        /// a synchronous send (the trace's sync bit): rendezvous unless the replay's
        /// options override it
        synchronous: bool,
    },
    /// wait for the next message from task `from` with `tag`
    Recv {
        /// source task
        from: u32,
        /// MPI tag
        tag: i32,
    },
    /// start a send and go on (`MPI_Isend`); `request` names it for a `Wait`, or is
    /// [`UNWAITED`]
    ISend {
        /// destination task
        to: u32,
        /// payload \[bytes\]
        size: u32,
        /// MPI tag
        tag: i32,
        /// a synchronous send (the trace's sync bit), as for `Send`
        synchronous: bool,
        /// the task's name for this operation
        request: u32,
    },
    /// post a receive and go on (`MPI_Irecv`)
    IRecv {
        /// source task
        from: u32,
        /// MPI tag
        tag: i32,
        /// the task's name for this operation
        request: u32,
    },
    /// wait until the operation `request` is complete (`MPI_Wait`)
    Wait {
        /// the task's name of an earlier `ISend` or `IRecv`
        request: u32,
    },
    /// take part in collective call `call` of `members` tasks, modelled analytically
    /// ([`super::analytic`]): wait for every member, then for the model's time
    Global {
        /// the call, the same number in every member's program (unique in the workload)
        call: u64,
        /// how many tasks take part
        members: u32,
        /// Dimemas's global-operation id (0–31)
        id: u8,
        /// whether this task's record says it is the root
        is_root: bool,
        /// the bytes this task's record says it sends and receives
        sent: u32,
        received: u32,
    },
}

/// A set of task programs; task `t` runs on node `t` (one task per node).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    /// a name for reports
    pub name: String,
    /// the program of each task
    pub tasks: Vec<Vec<Op>>,
}

impl Workload {
    /// The workload's communication pattern, as pattern-aware routing takes it: phase
    /// `k` holds the `k`-th point-to-point send of every task, (sender, receiver).
    pub fn send_phases(&self) -> Vec<Vec<(u32, u32)>> {
        let mut phases: Vec<Vec<(u32, u32)>> = Vec::new();
        for (task, program) in self.tasks.iter().enumerate() {
            let sends = program.iter().filter_map(|op| match op {
                Op::Send { to, .. } | Op::ISend { to, .. } => Some(*to),
                _ => None,
            });
            for (k, to) in sends.enumerate() {
                if phases.len() <= k {
                    phases.push(Vec::new());
                }
                phases[k].push((task as u32, to));
            }
        }
        phases
    }

    /// The same programs, task `t` starting `delays[t]` late (a compute burst first;
    /// tasks beyond the list start at once): a start imbalance, as in seed 004 §5.2.
    pub fn with_start_delays(mut self, delays: &[super::Ps]) -> Workload {
        for (program, &delay) in self.tasks.iter_mut().zip(delays) {
            if delay > 0 {
                program.insert(0, Op::Compute(delay));
            }
        }
        let max = delays.iter().max().copied().unwrap_or(0);
        self.name = format!("{}, start delays up to {:.3} µs", self.name, max as f64 / 1e6);
        self
    }

    /// Messages sent, and whether every send has a matching receive.
    pub fn check(&self) -> Result<usize, WorkloadError> {
        self.check_threads(&vec![1; self.tasks.len()])
    }

    /// [`Workload::check`] of a workload whose `tasks` are the programs of tasks with
    /// `threads` threads each (task by task).
    pub fn check_threads(&self, threads: &[u32]) -> Result<usize, WorkloadError> {
        use std::collections::{BTreeMap, BTreeSet};
        let task_of = task_of_programs(threads);
        if task_of.len() != self.tasks.len() {
            return Err(WorkloadError::Threads {
                programs: self.tasks.len(),
                threads: task_of.len(),
            });
        }
        // Messages by (receiver, sender, tag), as the replay matches them: tasks, or
        // threads of one task (THREAD peers).
        let mut balance: BTreeMap<(u32, u32, i32), i64> = BTreeMap::new();
        let mut sends = 0;
        // Per analytic collective call: its members, and the tasks that take part.
        let mut calls: BTreeMap<u64, (u32, u32)> = BTreeMap::new();
        for (t, program) in self.tasks.iter().enumerate() {
            let mut started = BTreeSet::new();
            for op in program {
                if let Some((key, one)) = channel(&task_of, t, op) {
                    *balance.entry(key).or_default() += one;
                }
                match *op {
                    Op::Send { to, .. } | Op::ISend { to, .. } => {
                        let exists = match to & THREAD {
                            0 => (to as usize) < threads.len(),
                            _ => task_of.get((to & !THREAD) as usize) == Some(&task_of[t]),
                        };
                        if !exists {
                            return Err(WorkloadError::NoPeer { task: t, to });
                        }
                        sends += 1;
                    }
                    Op::Recv { .. } | Op::IRecv { .. } => {}
                    Op::Global { call, members, .. } => {
                        let (expected, seen) = calls.entry(call).or_insert((members, 0));
                        if *expected != members {
                            return Err(WorkloadError::CallMembers {
                                task: t,
                                call,
                                members,
                                expected: *expected,
                            });
                        }
                        *seen += 1;
                    }
                    Op::Compute(_) | Op::Wait { .. } => {}
                }
                match *op {
                    Op::ISend { request: UNWAITED, .. } => {}
                    Op::ISend { request, .. } | Op::IRecv { request, .. } if !started.insert(request) => {
                        return Err(WorkloadError::StartedTwice { task: t, request });
                    }
                    Op::Wait { request } if !started.remove(&request) => {
                        return Err(WorkloadError::NotStarted { task: t, request });
                    }
                    _ => {}
                }
            }
        }
        if let Some((call, (members, seen))) = calls.iter().find(|(_, (m, seen))| m != seen) {
            return Err(WorkloadError::CallTakers {
                call: *call,
                members: *members,
                seen: *seen,
            });
        }
        match balance.into_iter().find(|(_, n)| *n != 0) {
            Some(((to, from, tag), surplus)) => Err(WorkloadError::Unmatched { to, from, tag, surplus }),
            None => Ok(sends),
        }
    }
}

/// Why a workload cannot be replayed: its programs do not fit together, or could not
/// be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WorkloadError {
    /// the tasks' threads are not as many as the programs
    #[error("{programs} programs, but its tasks' threads add up to {threads}")]
    Threads {
        /// programs in the workload
        programs: usize,
        /// threads of all tasks
        threads: usize,
    },
    /// a send's destination does not exist
    #[error("task {task} sends to {}, which does not exist", peer_name(*to))]
    NoPeer {
        /// the sending program
        task: usize,
        /// its destination (a task, or a [`THREAD`] peer)
        to: u32,
    },
    /// members of one collective call disagree on how many they are
    #[error("task {task} takes collective call {call} for one of {members} tasks, others of {expected}")]
    CallMembers {
        /// the program taking part
        task: usize,
        /// the call
        call: u64,
        /// the members it says
        members: u32,
        /// the members those before it said
        expected: u32,
    },
    /// an immediate operation's request is started again before its wait
    #[error("task {task} starts request {request} twice")]
    StartedTwice {
        /// the program
        task: usize,
        /// the request
        request: u32,
    },
    /// a wait for a request not started (or already waited for)
    #[error("task {task} waits for request {request}, which it has not started")]
    NotStarted {
        /// the program
        task: usize,
        /// the request
        request: u32,
    },
    /// a collective call is not taken by as many tasks as its members
    #[error("collective call {call} has {members} members, but {seen} tasks take part in it")]
    CallTakers {
        /// the call
        call: u64,
        /// its members
        members: u32,
        /// the tasks that take part
        seen: u32,
    },
    /// sends and receives of a channel do not pair up
    #[error("{}", unmatched((*to, *from, *tag), *surplus))]
    Unmatched {
        /// the receiver
        to: u32,
        /// the sender
        from: u32,
        /// the tag
        tag: i32,
        /// sends more than receives (negative: fewer)
        surplus: i64,
    },
    /// a program could not be read
    #[error(transparent)]
    Read(#[from] InputError),
}

/// A channel messages match on: (receiver, sender, tag), peers being tasks, or threads
/// of one task ([`THREAD`] peers).
pub(crate) type Channel = (u32, u32, i32);

/// The channel a point-to-point operation of program `program` (of task
/// `task_of[program]`) matches on, as the replay matches it, and 1 for a send or -1 for
/// a receive; `None` for other operations.
pub(crate) fn channel(task_of: &[u32], program: usize, op: &Op) -> Option<(Channel, i64)> {
    let me = |peer: u32| match peer & THREAD {
        0 => task_of[program],
        _ => THREAD | program as u32,
    };
    match *op {
        Op::Send { to, tag, .. } | Op::ISend { to, tag, .. } => Some(((to, me(to), tag), 1)),
        Op::Recv { from, tag } | Op::IRecv { from, tag, .. } => Some(((me(from), from, tag), -1)),
        _ => None,
    }
}

/// What is wrong with `channel` when it has `surplus` more sends than receives.
pub(crate) fn unmatched((to, from, tag): Channel, surplus: i64) -> String {
    format!(
        "{} message(s) from {} to {} with tag {tag} have no matching {}",
        surplus.abs(),
        peer_name(from),
        peer_name(to),
        if surplus > 0 { "receive" } else { "send" }
    )
}

/// A peer for messages: `task n`, or `program n` for a [`THREAD`] peer.
fn peer_name(peer: u32) -> String {
    match peer & THREAD {
        0 => format!("task {peer}"),
        _ => format!("program {}", peer & !THREAD),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_phases_take_each_tasks_kth_send() {
        // Task n sends to n + 2, then to n − 2, edges excepted.
        let phases = Workload::wrf(5, 2, 100).send_phases();
        assert_eq!(phases, vec![vec![(0, 2), (1, 3), (2, 4), (3, 1), (4, 2)], vec![(2, 0)]]);
        assert_eq!(Workload::ping_pong(1, 2).send_phases(), vec![vec![(0, 1), (1, 0)]; 2]);
    }

    #[test]
    fn synthetic_workloads_are_balanced() {
        assert_eq!(Workload::ping_pong(8, 3).check(), Ok(6));
        assert_eq!(Workload::ring(5, 8, 2, 0).check(), Ok(10));
        assert_eq!(Workload::all_to_all(4, 8).check(), Ok(12));
        // 256 tasks: 240 send up, 240 send down.
        assert_eq!(Workload::wrf(256, 16, 8).check(), Ok(480));
        let broken = Workload {
            name: "broken".into(),
            tasks: vec![
                vec![Op::Send {
                    to: 1,
                    size: 1,
                    tag: 0,
                    synchronous: false,
                }],
                vec![],
            ],
        };
        assert_eq!(
            broken.check().expect_err("unmatched").to_string(),
            "1 message(s) from task 0 to task 1 with tag 0 have no matching receive"
        );
        let waits_twice = Workload {
            name: "waits twice".into(),
            tasks: vec![vec![
                Op::IRecv {
                    from: 0,
                    tag: 0,
                    request: 7,
                },
                Op::Send {
                    to: 0,
                    size: 1,
                    tag: 0,
                    synchronous: false,
                },
                Op::Wait { request: 7 },
                Op::Wait { request: 7 },
            ]],
        };
        assert_eq!(
            waits_twice.check().expect_err("waits twice").to_string(),
            "task 0 waits for request 7, which it has not started"
        );
        let mut starts_twice = waits_twice.clone();
        starts_twice.tasks[0].swap(1, 2);
        starts_twice.tasks[0][1] = starts_twice.tasks[0][0];
        assert_eq!(
            starts_twice.check().expect_err("starts twice").to_string(),
            "task 0 starts request 7 twice"
        );
    }

    #[test]
    fn every_fault_of_a_workload_says_what_it_is() {
        let send = |to| Op::Send {
            to,
            size: 1,
            tag: 3,
            synchronous: false,
        };
        let global = |call, members| Op::Global {
            call,
            members,
            id: 0,
            is_root: false,
            sent: 0,
            received: 0,
        };
        let workload = |tasks: Vec<Vec<Op>>| Workload {
            name: "w".into(),
            tasks,
        };
        let fault = |w: Workload, threads: &[u32]| w.check_threads(threads).expect_err("a fault").to_string();
        assert_eq!(
            fault(workload(vec![vec![], vec![]]), &[3]),
            "2 programs, but its tasks' threads add up to 3"
        );
        assert_eq!(
            fault(workload(vec![vec![send(2)], vec![]]), &[1, 1]),
            "task 0 sends to task 2, which does not exist"
        );
        assert_eq!(
            fault(workload(vec![vec![send(THREAD | 1)], vec![]]), &[1, 1]),
            "task 0 sends to program 1, which does not exist"
        );
        assert_eq!(
            fault(workload(vec![vec![global(4, 2)], vec![global(4, 3)]]), &[1, 1]),
            "task 1 takes collective call 4 for one of 3 tasks, others of 2"
        );
        assert_eq!(
            fault(workload(vec![vec![global(4, 2)], vec![]]), &[1, 1]),
            "collective call 4 has 2 members, but 1 tasks take part in it"
        );
        let receives = vec![Op::Recv { from: THREAD, tag: 3 }; 2];
        assert_eq!(
            fault(workload(vec![vec![send(THREAD | 1)], receives]), &[2]),
            "1 message(s) from program 0 to program 1 with tag 3 have no matching send"
        );
        let read = WorkloadError::Read(InputError {
            file: "t.dim".into(),
            line: 7,
            message: "bad".into(),
        });
        assert_eq!(read.to_string(), "t.dim:7: bad");
    }

    #[test]
    fn start_delays_come_first() {
        let delayed = Workload::ping_pong(8, 1).with_start_delays(&[0, 2_500_000]);
        assert_eq!(delayed.tasks[0], Workload::ping_pong(8, 1).tasks[0]);
        assert_eq!(delayed.tasks[1][0], Op::Compute(2_500_000));
        assert_eq!(delayed.tasks[1].len(), 3);
        assert!(
            delayed.name.ends_with("start delays up to 2.500 µs"),
            "{}",
            delayed.name
        );
    }
}
