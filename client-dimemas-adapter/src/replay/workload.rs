//! Task programs, and synthetic workloads generated in memory.

/// One operation of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// compute for this long [ps]
    Compute(super::Ps),
    /// send `size` bytes to task `to` with `tag`: eager (the task goes on at once) or,
    /// when `synchronous` or at least the replay's eager limit, rendezvous (the task
    /// waits until the receiver is ready and the data has arrived)
    Send {
        /// destination task
        to: u32,
        /// payload [bytes]
        size: u32,
        /// MPI tag
        tag: i32,
        /// a synchronous send (the trace's sync bit): always rendezvous
        synchronous: bool,
    },
    /// wait for the next message from task `from` with `tag`
    Recv {
        /// source task
        from: u32,
        /// MPI tag
        tag: i32,
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

    /// Personalised all-to-all: every task sends `size` bytes to every other task
    /// (in the order t+1, t+2, …), then receives from each. All sends come first, as
    /// with eager (or immediate) sends: with rendezvous sends it deadlocks, as MPI would.
    pub fn all_to_all(tasks: u32, size: u32) -> Workload {
        let programs = (0..tasks)
            .map(|t| {
                let others: Vec<u32> = (1..tasks).map(|k| (t + k) % tasks).collect();
                let sends = others.iter().map(|&to| Op::Send {
                    to,
                    size,
                    tag: 0,
                    synchronous: false,
                });
                // Task t − j sends to t as its j-th message: receive in that order.
                let recvs = (1..tasks).map(|j| Op::Recv {
                    from: (t + tasks - j) % tasks,
                    tag: 0,
                });
                sends.chain(recvs).collect()
            })
            .collect();
        Workload {
            name: format!("all-to-all of {tasks} tasks, {size} bytes"),
            tasks: programs,
        }
    }

    /// The weather-forecast (WRF) pattern of seed 004: task n sends `size` bytes to
    /// n + `distance`, then to n − `distance` (where those exist), then receives from
    /// n − `distance` and n + `distance` (eager sends, like the all-to-all).
    pub fn wrf(tasks: u32, distance: u32, size: u32) -> Workload {
        let programs = (0..tasks)
            .map(|n| {
                let up = n.checked_add(distance).filter(|&d| d < tasks);
                let down = n.checked_sub(distance);
                let mut ops: Vec<Op> = [up, down]
                    .into_iter()
                    .flatten()
                    .map(|to| Op::Send {
                        to,
                        size,
                        tag: 0,
                        synchronous: false,
                    })
                    .collect();
                ops.extend([down, up].into_iter().flatten().map(|from| Op::Recv { from, tag: 0 }));
                ops
            })
            .collect();
        Workload {
            name: format!("WRF pattern of {tasks} tasks, ±{distance}, {size} bytes"),
            tasks: programs,
        }
    }

    /// Messages sent, and whether every send has a matching receive.
    pub fn check(&self) -> Result<usize, String> {
        use std::collections::BTreeMap;
        let mut balance: BTreeMap<(u32, u32, i32), i64> = BTreeMap::new();
        let mut sends = 0;
        for (t, program) in self.tasks.iter().enumerate() {
            for op in program {
                match *op {
                    Op::Send { to, tag, .. } => {
                        if to as usize >= self.tasks.len() {
                            return Err(format!("task {t} sends to task {to}, which does not exist"));
                        }
                        *balance.entry((t as u32, to, tag)).or_default() += 1;
                        sends += 1;
                    }
                    Op::Recv { from, tag } => *balance.entry((from, t as u32, tag)).or_default() -= 1,
                    Op::Compute(_) => {}
                }
            }
        }
        match balance.iter().find(|(_, n)| **n != 0) {
            Some(((from, to, tag), n)) => Err(format!(
                "{} message(s) from task {from} to task {to} with tag {tag} have no matching {}",
                n.abs(),
                if *n > 0 { "receive" } else { "send" }
            )),
            None => Ok(sends),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
