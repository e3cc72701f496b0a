//! Where the replay takes each task's operations from: one at a time, in order, so
//! that a trace can be read as the replay goes instead of being held whole.
//!
//! A task has one program per thread; programs are numbered task by task (task 0's
//! threads, then task 1's, …), and a single-threaded workload's program `t` is task
//! `t`. Threads of a task run on its node, each on its own; messages between tasks go
//! from any thread to whichever thread of the destination receives first, as in
//! Dimemas, and a thread can send to another of its own task ([`THREAD`](super::workload::THREAD)).
//!
//! A [`Workload`] in memory is read through a [`Cursor`]; a `.dim` trace through
//! [`crate::dim::Stream`]. [`StartDelays`] puts a start imbalance in front of either.

use std::borrow::Borrow;

use super::Ps;
use super::workload::{Op, Workload, task_of_programs};
use crate::input::InputError;

/// Task programs, read one operation at a time.
pub trait Programs {
    /// a name for reports
    fn name(&self) -> &str;
    /// how many programs (threads of all tasks)
    fn programs(&self) -> u32;
    /// per task, its threads (one each unless said otherwise)
    fn threads(&self) -> Vec<u32> {
        vec![1; self.programs() as usize]
    }
    /// operations of all programs together (for progress)
    fn total(&self) -> u64;
    /// program `p`'s next operation; `None` once it has ended. An error says what could
    /// not be read, and where.
    fn next(&mut self, p: u32) -> Result<Option<Op>, InputError>;
}

/// A workload in memory, read task by task (`W` is a `Workload` or a reference to one).
#[derive(Debug, Clone)]
pub struct Cursor<W> {
    workload: W,
    /// per program: the next operation's index
    pc: Vec<usize>,
    /// per task, its threads (the workload's `tasks` are its programs)
    threads: Vec<u32>,
}

impl<W: Borrow<Workload>> Cursor<W> {
    /// Every program at its start, one per task.
    pub fn new(workload: W) -> Cursor<W> {
        let programs = workload.borrow().tasks.len();
        Cursor::threaded(workload, vec![1; programs])
    }

    /// Every program at its start, the workload's `tasks` being the programs of tasks
    /// with `threads` threads each.
    pub fn threaded(workload: W, threads: Vec<u32>) -> Cursor<W> {
        let programs = workload.borrow().tasks.len();
        Cursor {
            workload,
            pc: vec![0; programs],
            threads,
        }
    }
}

impl<W: Borrow<Workload>> Programs for Cursor<W> {
    fn name(&self) -> &str {
        &self.workload.borrow().name
    }

    fn programs(&self) -> u32 {
        self.workload.borrow().tasks.len() as u32
    }

    fn threads(&self) -> Vec<u32> {
        self.threads.clone()
    }

    fn total(&self) -> u64 {
        self.workload.borrow().tasks.iter().map(|p| p.len() as u64).sum()
    }

    fn next(&mut self, task: u32) -> Result<Option<Op>, InputError> {
        let t = task as usize;
        let op = self.workload.borrow().tasks[t].get(self.pc[t]).copied();
        self.pc[t] += usize::from(op.is_some());
        Ok(op)
    }
}

/// Programs whose task `t` first computes for `delays[t]`, every thread of it (tasks
/// beyond the list, and delays of 0, start at once): a start imbalance, as in seed 004
/// §5.2. The same as [`Workload::with_start_delays`], for programs not in memory.
#[derive(Debug)]
pub struct StartDelays<P> {
    inner: P,
    /// per program: its task's delay
    delays: Vec<Ps>,
    /// per program: whether its delay has been given
    started: Vec<bool>,
    name: String,
}

impl<P: Programs> StartDelays<P> {
    /// `inner`, task `t` delayed by `delays[t]`.
    pub fn new(inner: P, delays: Vec<Ps>) -> StartDelays<P> {
        let max = delays.iter().max().copied().unwrap_or(0);
        let name = format!("{}, start delays up to {:.3} µs", inner.name(), max as f64 / 1e6);
        let started = vec![false; inner.programs() as usize];
        let delays = task_of_programs(&inner.threads())
            .into_iter()
            .map(|t| delays.get(t as usize).copied().unwrap_or(0))
            .collect();
        StartDelays {
            inner,
            delays,
            started,
            name,
        }
    }
}

impl<P: Programs> Programs for StartDelays<P> {
    fn name(&self) -> &str {
        &self.name
    }

    fn programs(&self) -> u32 {
        self.inner.programs()
    }

    fn threads(&self) -> Vec<u32> {
        self.inner.threads()
    }

    fn total(&self) -> u64 {
        self.inner.total() + self.delays.iter().filter(|&&d| d > 0).count() as u64
    }

    fn next(&mut self, task: u32) -> Result<Option<Op>, InputError> {
        let t = task as usize;
        if !self.started[t] {
            self.started[t] = true;
            if let Some(&delay) = self.delays.get(t).filter(|&&d| d > 0) {
                return Ok(Some(Op::Compute(delay)));
            }
        }
        self.inner.next(task)
    }
}

impl<P: Programs + ?Sized> Programs for Box<P> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn programs(&self) -> u32 {
        (**self).programs()
    }

    fn threads(&self) -> Vec<u32> {
        (**self).threads()
    }

    fn total(&self) -> u64 {
        (**self).total()
    }

    fn next(&mut self, task: u32) -> Result<Option<Op>, InputError> {
        (**self).next(task)
    }
}

/// Every program, read through `programs` to its end, as a workload in memory (its
/// `tasks` are the programs).
pub fn drain(programs: &mut dyn Programs) -> Result<Workload, InputError> {
    let tasks = (0..programs.programs())
        .map(|t| std::iter::from_fn(|| programs.next(t).transpose()).collect::<Result<Vec<Op>, _>>())
        .collect::<Result<_, _>>()?;
    Ok(Workload {
        name: programs.name().to_string(),
        tasks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_each_program_in_order_then_ends() {
        let workload = Workload::ring(3, 100, 2, 7);
        let mut cursor = Cursor::new(&workload);
        assert_eq!(cursor.total(), 18);
        assert_eq!(drain(&mut cursor).expect("read"), workload);
        assert_eq!(cursor.next(0), Ok(None));
    }

    #[test]
    fn start_delays_match_the_workloads_own() {
        let workload = Workload::ping_pong(10, 2);
        let delays = vec![0, 5_000_000];
        let expected = workload.clone().with_start_delays(&delays);
        let mut delayed = StartDelays::new(Cursor::new(workload), delays);
        assert_eq!(delayed.name(), expected.name);
        assert_eq!(delayed.total(), Cursor::new(&expected).total());
        assert_eq!(drain(&mut delayed).expect("read"), expected);
    }
}
