//! Synthetic workloads, generated in memory for any number of tasks: ping-pong, ring,
//! all-to-all and the WRF pattern, and the application kernels of seed 002 (INSEE,
//! §3.2.2): collectives, virtual-mesh patterns and synchronized random traffic. They
//! are built from the message patterns of [`super::collective`].
//!
//! Where the seed's node sends and then waits (butterfly, mesh distribution, random
//! waves), the kernel posts its receives first and starts immediate sends, as MPI
//! codes do, so it also runs with rendezvous sends; where it waits and then sends
//! (the trees, the wave-front), blocking operations keep the seed's causality.

use super::collective::{exchange, tree};
use super::workload::{Op, Workload};

/// Why a kernel cannot be generated for the numbers given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// a virtual mesh's tasks are not a square or cube
    #[error(
        "a {dims}-D virtual mesh needs a number of tasks that is a {} ({below} or {above}, not {tasks})",
        if *dims == 2 { "square" } else { "cube" }
    )]
    NotAPower {
        /// the mesh's dimensions
        dims: u32,
        /// the tasks asked for
        tasks: u32,
        /// the nearest power below (or at) `tasks`
        below: u64,
        /// the nearest power above it
        above: u64,
    },
    /// synchronized random traffic of fewer than 2 tasks
    #[error("synchronized random traffic needs at least 2 tasks, not {tasks}")]
    TooFewTasks {
        /// the tasks asked for
        tasks: u32,
    },
    /// synchronized random traffic in waves of no message
    #[error("synchronized random traffic needs waves of at least 1 message")]
    EmptyWave,
}

/// An eager (unless over the eager limit) blocking send.
fn send(to: u32, size: u32) -> Op {
    Op::Send {
        to,
        size,
        tag: 0,
        synchronous: false,
    }
}

fn recv(from: u32) -> Op {
    Op::Recv { from, tag: 0 }
}

/// Steps of a tree or butterfly over `tasks`: t with 2^t < tasks.
fn steps(tasks: u32) -> impl Iterator<Item = u32> + Clone {
    (0..32).take_while(move |&t| 1u64 << t < u64::from(tasks))
}

/// Task `node`'s part of a binomial tree over `tasks` rooted at 0: towards the root,
/// or (`down`) from it.
fn tree_program(tasks: u32, node: u32, down: bool, size: u32) -> Vec<Op> {
    tree(tasks as usize, node as usize, down, size, 0, |peer| peer as u32)
}

/// Side k of a virtual mesh of `dims` dimensions with k^dims = `tasks`.
fn mesh_side(tasks: u32, dims: u32) -> Result<u32, KernelError> {
    let power = |k: u32| u64::from(k).pow(dims);
    let mut k = f64::from(tasks).powf(1.0 / f64::from(dims)).round() as u32;
    while power(k) > u64::from(tasks) {
        k -= 1;
    }
    while power(k + 1) <= u64::from(tasks) {
        k += 1;
    }
    if power(k) == u64::from(tasks) {
        return Ok(k);
    }
    Err(KernelError::NotAPower {
        dims,
        tasks,
        below: power(k),
        above: power(k + 1),
    })
}

/// The neighbour of `node` along dimension `d` of a mesh of side `k`, `+1` or `-1`
/// away, if inside the mesh.
fn neighbour(node: u32, k: u32, d: u32, up: bool) -> Option<u32> {
    let stride = k.pow(d);
    let coordinate = node / stride % k;
    match up {
        true if coordinate + 1 < k => Some(node + stride),
        false if coordinate > 0 => Some(node - stride),
        _ => None,
    }
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

    /// Personalised all-to-all, as MPI libraries do it: every task posts a receive from
    /// every other task, starts a send of `size` bytes to each (in the order t+1,
    /// t+2, …), then waits for all of them. Safe with rendezvous sends.
    pub fn all_to_all(tasks: u32, size: u32) -> Workload {
        let programs = (0..tasks)
            .map(|t| {
                // Task t − j sends to t as its j-th message.
                let from: Vec<u32> = (1..tasks).map(|j| (t + tasks - j) % tasks).collect();
                let to: Vec<u32> = (1..tasks).map(|k| (t + k) % tasks).collect();
                exchange(&from, &to, size, 0, 1)
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
                exchange(&from, &to, size, 0, 1)
            })
            .collect();
        Workload {
            name: format!("WRF pattern of {tasks} tasks, ±{distance}, {size} bytes"),
            tasks: programs,
        }
    }

    /// Binary-tree reduction to task 0 (BT): at step t, tasks that are multiples of
    /// 2^(t+1) receive from task + 2^t, the other multiples of 2^t send to task − 2^t.
    pub fn binary_tree(tasks: u32, size: u32) -> Workload {
        let programs = (0..tasks).map(|node| tree_program(tasks, node, false, size)).collect();
        Workload {
            name: format!("binary tree of {tasks} tasks, {size} bytes"),
            tasks: programs,
        }
    }

    /// Binary-tree broadcast from task 0 (IB), the binary tree backwards: at step t
    /// (from the widest), multiples of 2^(t+1) send to task + 2^t, which receive.
    pub fn inverse_binary_tree(tasks: u32, size: u32) -> Workload {
        let programs = (0..tasks).map(|node| tree_program(tasks, node, true, size)).collect();
        Workload {
            name: format!("inverse binary tree of {tasks} tasks, {size} bytes"),
            tasks: programs,
        }
    }

    /// Every task sends to task 0, which receives in task order (A2O).
    pub fn all_to_one(tasks: u32, size: u32) -> Workload {
        let mut programs = vec![(1..tasks).map(recv).collect::<Vec<_>>()];
        programs.extend((1..tasks).map(|_| vec![send(0, size)]));
        Workload {
            name: format!("all-to-one of {tasks} tasks, {size} bytes"),
            tasks: programs,
        }
    }

    /// Task 0 sends to every other task in order (O2A).
    pub fn one_to_all(tasks: u32, size: u32) -> Workload {
        let mut programs = vec![(1..tasks).map(|to| send(to, size)).collect::<Vec<_>>()];
        programs.extend((1..tasks).map(|_| vec![recv(0)]));
        Workload {
            name: format!("one-to-all of {tasks} tasks, {size} bytes"),
            tasks: programs,
        }
    }

    /// Recursive doubling (BU): at step t every task exchanges `size` bytes with
    /// task XOR 2^t (where it exists).
    pub fn butterfly(tasks: u32, size: u32) -> Workload {
        let programs = (0..tasks)
            .map(|node| {
                let mut ops = Vec::new();
                for t in steps(tasks) {
                    let partner = node ^ (1 << t);
                    if partner < tasks {
                        ops.extend(exchange(&[partner], &[partner], size, 0, 2 * t));
                    }
                }
                ops
            })
            .collect();
        Workload {
            name: format!("butterfly of {tasks} tasks, {size} bytes"),
            tasks: programs,
        }
    }

    /// Wave-front (2W, 3W) over a virtual mesh of `dims` dimensions: each task waits
    /// for its lower neighbours, then sends to its upper ones; the sweep runs from
    /// task 0 to the last. `tasks` must be a square (2-D) or cube (3-D).
    pub fn wavefront(tasks: u32, dims: u32, size: u32) -> Result<Workload, KernelError> {
        let k = mesh_side(tasks, dims)?;
        let programs = (0..tasks)
            .map(|node| {
                let lower = (0..dims).filter_map(|d| neighbour(node, k, d, false)).map(recv);
                let upper = (0..dims).filter_map(|d| neighbour(node, k, d, true));
                lower.chain(upper.map(|to| send(to, size))).collect()
            })
            .collect();
        Ok(Workload {
            name: format!("{dims}-D wave-front of {tasks} tasks, {size} bytes"),
            tasks: programs,
        })
    }

    /// Mesh distribution, the halo exchange (2M, 3M): every task sends `size` bytes
    /// to each neighbour of a virtual mesh of `dims` dimensions (+ then − per
    /// dimension) and receives from each. `tasks` must be a square or cube.
    pub fn mesh_halo(tasks: u32, dims: u32, size: u32) -> Result<Workload, KernelError> {
        let k = mesh_side(tasks, dims)?;
        let programs = (0..tasks)
            .map(|node| {
                let peers: Vec<u32> = (0..dims)
                    .flat_map(|d| [true, false].map(|up| neighbour(node, k, d, up)))
                    .flatten()
                    .collect();
                exchange(&peers, &peers, size, 0, 0)
            })
            .collect();
        Ok(Workload {
            name: format!("{dims}-D mesh halo of {tasks} tasks, {size} bytes"),
            tasks: programs,
        })
    }

    /// Synchronized random traffic (SR): `messages` messages between uniformly drawn
    /// pairs of distinct tasks, in waves of `wave`: within a wave every message
    /// is started at once, and each task waits for all its wave's messages before
    /// the next. `pick(n)` draws uniformly from 0..n (the caller's seeded generator).
    pub fn synchronized_random(
        tasks: u32,
        size: u32,
        messages: u32,
        wave: u32,
        mut pick: impl FnMut(u32) -> u32,
    ) -> Result<Workload, KernelError> {
        if tasks < 2 {
            return Err(KernelError::TooFewTasks { tasks });
        }
        if wave == 0 {
            return Err(KernelError::EmptyWave);
        }
        let mut programs = vec![Vec::new(); tasks as usize];
        let mut left = messages;
        while left > 0 {
            let n = left.min(wave);
            left -= n;
            let mut receives = vec![Vec::new(); tasks as usize];
            let mut sends = vec![Vec::new(); tasks as usize];
            for _ in 0..n {
                let src = pick(tasks);
                // Another task, uniformly.
                let dst = (src + 1 + pick(tasks - 1)) % tasks;
                sends[src as usize].push(dst);
                receives[dst as usize].push(src);
            }
            for (t, program) in programs.iter_mut().enumerate() {
                program.extend(exchange(&receives[t], &sends[t], size, 0, 0));
            }
        }
        Ok(Workload {
            name: format!(
                "synchronized random of {tasks} tasks, {messages} messages of {size} bytes in waves of {wave}"
            ),
            tasks: programs,
        })
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
    use crate::replay::{IdealBus, ReplayOptions, replay_with};

    /// 1 byte per ns, 100 ns latency: a 1000-byte message takes 1.1 µs.
    fn predicted(workload: &Workload, rendezvous: bool) -> u64 {
        let mut bus = IdealBus::new(1_000_000_000, 1, 100_000);
        let options = ReplayOptions {
            eager_limit: rendezvous.then_some(1),
            ..ReplayOptions::default()
        };
        replay_with(workload, &mut bus, &options).expect("replayed").predicted
    }

    const HOP: u64 = 1_100_000;

    #[test]
    fn trees_take_one_message_time_per_level() {
        // 16 tasks: 4 levels. 13 tasks: 4 levels but the longest chain is 3 messages
        // (0 ← 8 ← 10 ← 11, and 0 ← 4 ← 6 ← 7; task 12 has nothing to gather).
        for (tasks, levels) in [(16, 4), (13, 3), (2, 1), (1, 0)] {
            let up = Workload::binary_tree(tasks, 1000);
            let down = Workload::inverse_binary_tree(tasks, 1000);
            assert_eq!(up.check(), Ok(tasks as usize - 1));
            assert_eq!(down.check(), Ok(tasks as usize - 1));
            assert_eq!(predicted(&up, false), levels * HOP, "{}", up.name);
            assert_eq!(predicted(&down, false), levels * HOP, "{}", down.name);
        }
        // Rendezvous: a level's sender waits for its data, which its receiver is
        // ready for; the tree still takes a message time per level.
        assert_eq!(predicted(&Workload::binary_tree(16, 1000), true), 4 * HOP);
    }

    #[test]
    fn all_to_one_and_one_to_all_move_every_message_once() {
        // No contention on the ideal bus: everything lands after one message time.
        assert_eq!(Workload::all_to_one(8, 1000).check(), Ok(7));
        assert_eq!(predicted(&Workload::all_to_one(8, 1000), false), HOP);
        // One-to-all with rendezvous: task 0 sends one after the other.
        assert_eq!(predicted(&Workload::one_to_all(8, 1000), false), HOP);
        assert_eq!(predicted(&Workload::one_to_all(8, 1000), true), 7 * HOP);
    }

    #[test]
    fn the_butterfly_exchanges_once_per_step() {
        let workload = Workload::butterfly(8, 1000);
        assert_eq!(workload.check(), Ok(24));
        assert_eq!(predicted(&workload, false), 3 * HOP);
        assert_eq!(predicted(&workload, true), 3 * HOP);
        // 6 tasks: tasks 4 and 5 have no partner at step 1, tasks 2 and 3 none at step 2.
        assert_eq!(Workload::butterfly(6, 1000).check(), Ok(6 + 4 + 4));
    }

    #[test]
    fn the_wave_front_sweeps_the_diagonal() {
        // A 4 × 4 mesh: the last task is 6 hops from task 0.
        let two = Workload::wavefront(16, 2, 1000).expect("square");
        assert_eq!(two.check(), Ok(2 * 4 * 3));
        assert_eq!(predicted(&two, false), 6 * HOP);
        // 3 × 3 × 3: 6 hops too.
        let three = Workload::wavefront(27, 3, 1000).expect("cube");
        assert_eq!(three.check(), Ok(3 * 9 * 2));
        assert_eq!(predicted(&three, false), 6 * HOP);
        assert_eq!(
            Workload::wavefront(30, 2, 1).expect_err("not a square").to_string(),
            "a 2-D virtual mesh needs a number of tasks that is a square (25 or 36, not 30)"
        );
        assert_eq!(
            Workload::mesh_halo(9, 3, 1).expect_err("not a cube").to_string(),
            "a 3-D virtual mesh needs a number of tasks that is a cube (8 or 27, not 9)"
        );
    }

    #[test]
    fn the_mesh_halo_exchanges_with_every_neighbour_at_once() {
        let two = Workload::mesh_halo(16, 2, 1000).expect("square");
        // 2 × 4 × 3 links, both ways.
        assert_eq!(two.check(), Ok(48));
        assert_eq!(predicted(&two, false), HOP);
        assert_eq!(predicted(&two, true), HOP);
        let three = Workload::mesh_halo(8, 3, 1000).expect("cube");
        assert_eq!(three.check(), Ok(24));
        // Every task of a 2 × 2 × 2 mesh has 3 neighbours: 3 receives, 3 sends, 6 waits.
        assert!(three.tasks.iter().all(|ops| ops.len() == 12));
    }

    #[test]
    fn synchronized_random_waves_wait_for_each_other() {
        // A fixed sequence of draws: an LCG.
        let mut state = 7u64;
        let pick = move |n: u32| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) % u64::from(n)) as u32
        };
        let workload = Workload::synchronized_random(8, 1000, 9, 3, pick).expect("generated");
        assert_eq!(workload.check(), Ok(9));
        // Three waves of messages landing after one message time each (no contention
        // on the bus), every task waiting for its own part only: at most 3 × 1.1 µs.
        let time = predicted(&workload, false);
        assert!((HOP..=3 * HOP).contains(&time), "{time}");
        // One wave of everything (GUPS): one message time.
        let gups = Workload::synchronized_random(8, 1000, 50, 50, |n| n - 1).expect("generated");
        assert_eq!(predicted(&gups, true), HOP);
        assert_eq!(
            Workload::synchronized_random(1, 1, 1, 1, |_| 0)
                .expect_err("one task")
                .to_string(),
            "synchronized random traffic needs at least 2 tasks, not 1"
        );
        assert_eq!(
            Workload::synchronized_random(4, 1, 1, 0, |_| 0)
                .expect_err("empty waves")
                .to_string(),
            "synchronized random traffic needs waves of at least 1 message"
        );
    }
}
