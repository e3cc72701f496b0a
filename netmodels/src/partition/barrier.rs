//! The meeting point of the partitions' threads at every window.
//!
//! `std::sync::Barrier` puts a waiting thread to sleep and the last one to arrive wakes
//! it: a futex round trip, tens of microseconds on a virtual machine, at every window.
//! With windows of a few hundred events that was most of a window's wall time (a
//! 512-host fat tree ran 2.8 times slower on two threads than on one). This barrier
//! spins for a while when the threads fit on the machine's cores, and then sleeps as
//! `std`'s does: a thread whose partner is not running (more threads than cores, or
//! other work on the machine) holds a core for at most the spin. The spin adapts: it
//! halves each time it ends in sleep, and doubles back each time the others come
//! while it spins, so that on a busy machine the threads soon just sleep.
//!
//! With more threads than cores, some of the threads a meeting waits for are not
//! running: a waiting thread yields its core (`sched_yield`) for up to
//! 200 µs, so that one of them runs at once, before it sleeps. Sleeping at once cost
//! a futex round trip a thread a meeting: a 16×16 torus on 3 partitions and 2 cores
//! ran 8 times slower than whole (see `bench/oversubscribed.sh`).
//!
//! The spin's ceiling is 2 ms, longer than a window's work on large networks: with
//! 200 µs, the 32-ary 3-tree of wormhole switches (windows of 25 ns, some 400 µs of
//! work a window on each of two threads) slept some 16,000 times in 25,000 meetings
//! and ran 1.56 times faster on two threads than on one; with 2 ms it seldom sleeps
//! and runs 1.7-1.8 times faster (BENCHMARKS.md). On a busy machine the spin still
//! halves to nothing within a few meetings.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The longest a waiting thread spins before it sleeps \[µs\].
const SPIN_US: u32 = 2_000;

/// With more threads than cores: the longest a waiting thread yields its core before
/// it sleeps \[µs\].
const YIELD_US: u32 = 200;

/// A reusable barrier for `n` threads that spins, then sleeps.
#[derive(Debug)]
pub(crate) struct SpinBarrier {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    /// threads asleep (changed under `lock`)
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    /// how long a waiting thread spins now \[µs\] (0 when there are more threads
    /// than cores)
    spin_us: AtomicU32,
    /// no more threads than cores: spinning may pay
    may_spin: bool,
}

impl SpinBarrier {
    pub(crate) fn new(n: usize) -> SpinBarrier {
        let may_spin = n <= std::thread::available_parallelism().map_or(1, usize::from);
        SpinBarrier {
            n,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            spin_us: AtomicU32::new(if may_spin { SPIN_US } else { 0 }),
            may_spin,
        }
    }

    /// Blocks until all `n` threads have called `wait`. What each did before it is seen
    /// by every other after it.
    pub(crate) fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            // The last: the next meeting starts from none, then the others go. The
            // generation changes under the lock, so that a thread going to sleep
            // either sees it or is counted asleep before it changes.
            self.arrived.store(0, Ordering::Relaxed);
            {
                let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                self.generation.store(generation.wrapping_add(1), Ordering::Release);
            }
            if self.sleepers.load(Ordering::Acquire) > 0 {
                self.wake.notify_all();
            }
            return;
        }
        let passed = || self.generation.load(Ordering::Acquire) != generation;
        let spin_us = self.spin_us.load(Ordering::Relaxed);
        if spin_us > 0 {
            let (start, limit) = (Instant::now(), Duration::from_micros(u64::from(spin_us)));
            let mut spun = 0u32;
            while !passed() {
                std::hint::spin_loop();
                spun = spun.wrapping_add(1);
                if spun.is_multiple_of(64) && start.elapsed() > limit {
                    break;
                }
            }
            let came = passed();
            let next = if came { (spin_us * 2).min(SPIN_US) } else { spin_us / 2 };
            self.spin_us.store(next, Ordering::Relaxed);
            if came {
                return;
            }
        } else if self.may_spin {
            // Spin again some day: the machine may be quiet again.
            self.spin_us.store(1, Ordering::Relaxed);
        } else {
            // More threads than cores: give this core to a thread that has not come yet.
            let (start, limit) = (Instant::now(), Duration::from_micros(u64::from(YIELD_US)));
            while !passed() && start.elapsed() < limit {
                std::thread::yield_now();
            }
            if passed() {
                return;
            }
        }
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.sleepers.fetch_add(1, Ordering::AcqRel);
        while !passed() {
            guard = self.wake.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
        self.sleepers.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn no_thread_passes_a_meeting_before_every_thread_has_come() {
        for n in [1, 2, 3, 8] {
            let barrier = SpinBarrier::new(n);
            let counts: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
            std::thread::scope(|scope| {
                for me in 0..n {
                    let (barrier, counts) = (&barrier, &counts);
                    scope.spawn(move || {
                        for round in 1..=500u64 {
                            counts[me].store(round, Ordering::Relaxed);
                            barrier.wait();
                            // Every thread has written this round, none the next yet.
                            for c in counts {
                                assert_eq!(c.load(Ordering::Relaxed), round, "{n} threads");
                            }
                            barrier.wait();
                        }
                    });
                }
            });
        }
    }
}
