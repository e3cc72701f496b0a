//! Task programs, and synthetic workloads generated in memory.

use super::programs::THREAD;

/// The request of an immediate send that nothing waits for (a `.dim` trace has no
/// record of a wait for a send, only vesper's own events, [`crate::dim::LABEL_EVENT`]):
/// the replay forgets it once started, so that traces of many such sends replay in
/// constant memory.
pub const UNWAITED: u32 = u32::MAX;

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

    /// Two tasks bounce a message of `size` bytes `iterations` times.
    pub fn ping_pong(size: u32, iterations: u32) -> Workload {
        let mut ping = Vec::new();
        let mut pong = Vec::new();
        for i in 0..iterations as i32 {
            ping.push(Op::Send {
                to: 1,
                size,
                tag: i,
                synchronous: false,
            });
            ping.push(Op::Recv { from: 1, tag: i });
            pong.push(Op::Recv { from: 0, tag: i });
            pong.push(Op::Send {
                to: 0,
                size,
                tag: i,
                synchronous: false,
            });
        }
        Workload {
            name: format!("ping-pong of {size} bytes, {iterations} times"),
            tasks: vec![ping, pong],
        }
    }

    /// `tasks` tasks pass a message of `size` bytes to their right neighbour and
    /// receive one from the left, `iterations` times, with `compute` between rounds.
    /// Even tasks send first and odd tasks receive first, so the ring also runs with
    /// rendezvous (blocking) sends.
    pub fn ring(tasks: u32, size: u32, iterations: u32, compute: super::Ps) -> Workload {
        let programs = (0..tasks)
            .map(|t| {
                let right = (t + 1) % tasks;
                let left = (t + tasks - 1) % tasks;
                (0..iterations as i32)
                    .flat_map(|i| {
                        let send = Op::Send {
                            to: right,
                            size,
                            tag: i,
                            synchronous: false,
                        };
                        let recv = Op::Recv { from: left, tag: i };
                        let (first, second) = if t % 2 == 0 { (send, recv) } else { (recv, send) };
                        [Op::Compute(compute), first, second]
                    })
                    .collect()
            })
            .collect();
        Workload {
            name: format!("ring of {tasks} tasks, {size} bytes, {iterations} rounds"),
            tasks: programs,
        }
    }

    /// Personalised all-to-all, as MPI libraries do it: every task posts a receive from
    /// every other task, starts a send of `size` bytes to each (in the order t+1,
    /// t+2, …), then waits for all of them. Safe with rendezvous sends.
    pub fn all_to_all(tasks: u32, size: u32) -> Workload {
        let programs = (0..tasks)
            .map(|t| {
                // Task t − j sends to t as its j-th message.
                let from: Vec<u32> = (1..tasks).map(|j| (t + tasks - j) % tasks).collect();
                let to: Vec<u32> = (1..tasks).map(|k| (t + k) % tasks).collect();
                super::kernels::exchange(&from, &to, size, 0, 1)
            })
            .collect();
        Workload {
            name: format!("all-to-all of {tasks} tasks, {size} bytes"),
            tasks: programs,
        }
    }

    /// The weather-forecast (WRF) pattern of seed 004: task n posts receives from
    /// n − `distance` and n + `distance` (where those exist), starts sends of `size`
    /// bytes to n + `distance`, then to n − `distance`, and waits for all four.
    pub fn wrf(tasks: u32, distance: u32, size: u32) -> Workload {
        let programs = (0..tasks)
            .map(|n| {
                let up = n.checked_add(distance).filter(|&d| d < tasks);
                let down = n.checked_sub(distance);
                let from: Vec<u32> = [down, up].into_iter().flatten().collect();
                let to: Vec<u32> = [up, down].into_iter().flatten().collect();
                super::kernels::exchange(&from, &to, size, 0, 1)
            })
            .collect();
        Workload {
            name: format!("WRF pattern of {tasks} tasks, ±{distance}, {size} bytes"),
            tasks: programs,
        }
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
    pub fn check(&self) -> Result<usize, String> {
        self.check_threads(&vec![1; self.tasks.len()])
    }

    /// [`Workload::check`] of a workload whose `tasks` are the programs of tasks with
    /// `threads` threads each (task by task).
    pub fn check_threads(&self, threads: &[u32]) -> Result<usize, String> {
        use std::collections::{BTreeMap, BTreeSet};
        let task_of = super::programs::task_of_programs(threads);
        if task_of.len() != self.tasks.len() {
            return Err(format!(
                "{} programs, but its tasks' threads add up to {}",
                self.tasks.len(),
                task_of.len()
            ));
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
                            return Err(format!("task {t} sends to {}, which does not exist", peer_name(to)));
                        }
                        sends += 1;
                    }
                    Op::Recv { .. } | Op::IRecv { .. } => {}
                    Op::Global { call, members, .. } => {
                        let (expected, seen) = calls.entry(call).or_insert((members, 0));
                        if *expected != members {
                            return Err(format!(
                                "task {t} takes collective call {call} for one of {members} tasks, others of {expected}"
                            ));
                        }
                        *seen += 1;
                    }
                    Op::Compute(_) | Op::Wait { .. } => {}
                }
                match *op {
                    Op::ISend { request: UNWAITED, .. } => {}
                    Op::ISend { request, .. } | Op::IRecv { request, .. } if !started.insert(request) => {
                        return Err(format!("task {t} starts request {request} twice"));
                    }
                    Op::Wait { request } if !started.remove(&request) => {
                        return Err(format!(
                            "task {t} waits for request {request}, which it has not started"
                        ));
                    }
                    _ => {}
                }
            }
        }
        if let Some((call, (members, seen))) = calls.iter().find(|(_, (m, seen))| m != seen) {
            return Err(format!(
                "collective call {call} has {members} members, but {seen} tasks take part in it"
            ));
        }
        match balance.into_iter().find(|(_, n)| *n != 0) {
            Some((key, n)) => Err(unmatched(key, n)),
            None => Ok(sends),
        }
    }
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

/// One workload of every synthetic kind (those `vesper run --workload` names), small,
/// for tests.
#[cfg(test)]
pub(crate) fn every_kind() -> Vec<Workload> {
    let mut draws = 7u32;
    let pick = move |n: u32| {
        draws = draws.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        (draws >> 16) % n
    };
    vec![
        Workload::ping_pong(1000, 3),
        Workload::ring(5, 777, 2, 1_234_567),
        Workload::all_to_all(6, 1000),
        Workload::wrf(40, 16, 5000),
        Workload::binary_tree(13, 4000),
        Workload::inverse_binary_tree(16, 777),
        Workload::all_to_one(9, 10_000),
        Workload::one_to_all(9, 10_000),
        Workload::butterfly(12, 6000),
        Workload::wavefront(16, 2, 5000).expect("square"),
        Workload::wavefront(27, 3, 3000).expect("cube"),
        Workload::mesh_halo(36, 2, 8192).expect("square"),
        Workload::mesh_halo(8, 3, 100_000).expect("cube"),
        Workload::synchronized_random(20, 3000, 100, 16, pick).expect("random"),
    ]
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
            broken.check(),
            Err("1 message(s) from task 0 to task 1 with tag 0 have no matching receive".into())
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
            waits_twice.check(),
            Err("task 0 waits for request 7, which it has not started".into())
        );
        let mut starts_twice = waits_twice.clone();
        starts_twice.tasks[0].swap(1, 2);
        starts_twice.tasks[0][1] = starts_twice.tasks[0][0];
        assert_eq!(starts_twice.check(), Err("task 0 starts request 7 twice".into()));
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
