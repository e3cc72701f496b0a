//! Ranks: partitions of one simulation that live in separate processes (MPI ranks, one
//! partition each), and the small transport they talk through.
//!
//! Every rank runs the same program on the same inputs (SPMD): it builds the same
//! network, keeps only its own partition's state, and calls the same
//! [`Partitioned`](super::Partitioned) methods in the same order. The methods that need
//! the whole network (running windows, the clock, the deliveries, the event counts) are
//! collective: each rank does its part and the ranks combine the results through
//! [`Ranks`], so every rank gets the same answers and takes the same branches. What
//! crosses ranks:
//!
//! | when | what | how |
//! |---|---|---|
//! | before the first window | each rank's next event time | all-reduce (min) |
//! | after a window | packets that crossed a cut cable, then the earliest time the rank knows of work (the next window starts at the least) | all-to-all, by destination rank |
//! | after a run | the deliveries, with their order tags | all-gather |
//! | on a query | clock, counts, a host's backlog | all-reduce |
//! | co-simulation: before each call | the call rank 0 makes, and its rail ([`Partitioned::lead`](super::Partitioned::lead)) | broadcast |
//! | a network trace's writing step | how far every rank's records are final; the records, to rank 0 | all-reduce (min); all-to-all |
//!
//! [`ThreadRanks`] implements the transport between threads of one process (the tests
//! run the ranks' code path with it, no MPI needed); `MpiRanks` (feature `mpi`) over
//! MPI. Packets and deliveries travel as little-endian words ([`Words`]).

use std::sync::{Arc, Mutex};

use super::barrier::SpinBarrier;
use crate::crossing::{Crossing, CrossingEvent};
use crate::ids::{HostId, MessageId, PortId};
use crate::message::{Delivery, Message, MessageSpec, Packet};
use crate::switch::wormhole::Signal;
use crate::switch::wormhole::runs::Run;
use crate::time::SimTime;
use crate::topology::Route;

/// How [`Ranks::all_reduce`] combines the ranks' values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduce {
    /// the least
    Min,
    /// the greatest
    Max,
    /// the sum (wrapping)
    Sum,
}

/// The collective operations the ranks of one simulation share. Every rank must make
/// the same calls in the same order (each call returns only once every rank made it).
pub trait Ranks: Send + Sync + std::fmt::Debug {
    /// This process's rank, from 0.
    fn rank(&self) -> u32;
    /// Number of ranks.
    fn size(&self) -> u32;
    /// Combines `values` element-wise with every rank's, in place.
    fn all_reduce(&self, values: &mut [u64], op: Reduce);
    /// Every rank's `bytes`, by rank.
    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>>;
    /// Sends `out[r]` to rank `r`; returns what each rank sent to this one, by rank.
    fn exchange(&self, out: Vec<Vec<u8>>) -> Vec<Vec<u8>>;
    /// Rank 0's `bytes`, on every rank (the others' `bytes` are not read).
    fn broadcast(&self, bytes: Vec<u8>) -> Vec<u8>;
}

/// Ranks that are threads of one process: [`ThreadRanks::group`] makes `n`, one for each
/// thread, that share slots and a barrier; [`ThreadRanks::each`] runs them.
#[derive(Debug)]
pub struct ThreadRanks {
    rank: u32,
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    size: u32,
    barrier: SpinBarrier,
    /// slot `from * size + to`: what rank `from` sent to rank `to`
    slots: Mutex<Vec<Vec<u8>>>,
}

impl ThreadRanks {
    /// `n` ranks, to be handed one to each of `n` threads.
    pub fn group(n: u32) -> Vec<ThreadRanks> {
        let shared = Arc::new(Shared {
            size: n,
            barrier: SpinBarrier::new(n as usize),
            slots: Mutex::new(vec![Vec::new(); (n * n) as usize]),
        });
        (0..n)
            .map(|rank| ThreadRanks {
                rank,
                shared: shared.clone(),
            })
            .collect()
    }

    /// Runs `f` on `n` threads, each a rank of one group, and returns what each
    /// returned, by rank (a thread's panic is raised again here).
    pub fn each<T: Send>(n: u32, f: impl Fn(Arc<dyn Ranks>) -> T + Sync) -> Vec<T> {
        let f = &f;
        std::thread::scope(|scope| {
            let handles: Vec<_> = ThreadRanks::group(n)
                .into_iter()
                .map(|rank| scope.spawn(move || f(Arc::new(rank))))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<Vec<u8>>> {
        self.shared.slots.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Ranks for ThreadRanks {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.shared.size
    }

    fn all_reduce(&self, values: &mut [u64], op: Reduce) {
        let mut bytes = Vec::new();
        for &v in values.iter() {
            put_u64(&mut bytes, v);
        }
        values.fill(match op {
            Reduce::Min => u64::MAX,
            Reduce::Max | Reduce::Sum => 0,
        });
        for theirs in self.all_gather(&bytes) {
            let mut words = Words::new(&theirs);
            for v in values.iter_mut() {
                let w = words.u64();
                *v = match op {
                    Reduce::Min => (*v).min(w),
                    Reduce::Max => (*v).max(w),
                    Reduce::Sum => v.wrapping_add(w),
                };
            }
        }
    }

    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let n = self.shared.size as usize;
        let out = (0..n).map(|_| bytes.to_vec()).collect();
        self.exchange(out)
    }

    fn broadcast(&self, bytes: Vec<u8>) -> Vec<u8> {
        let n = self.shared.size as usize;
        let out = match self.rank {
            0 => vec![bytes; n],
            _ => vec![Vec::new(); n],
        };
        self.exchange(out).swap_remove(0)
    }

    fn exchange(&self, out: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let n = self.shared.size as usize;
        let me = self.rank as usize;
        {
            let mut slots = self.slots();
            for (to, bytes) in out.into_iter().enumerate().take(n) {
                slots[me * n + to] = bytes;
            }
        }
        self.shared.barrier.wait();
        let received = {
            let mut slots = self.slots();
            (0..n).map(|from| std::mem::take(&mut slots[from * n + me])).collect()
        };
        // Nobody writes the next call's slots before everybody has read this one's.
        self.shared.barrier.wait();
        received
    }
}

/// Little-endian words read off a byte slice; reading past its end gives zeros (the
/// bytes come from the same program on another rank, so they are well formed).
#[derive(Debug)]
pub struct Words<'a> {
    bytes: &'a [u8],
}

impl<'a> Words<'a> {
    /// Words read from the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Words<'a> {
        Words { bytes }
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut word = [0u8; N];
        let n = N.min(self.bytes.len());
        word[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        word
    }

    /// The next `u8`.
    pub fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }

    /// The next `u32`.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }

    /// The next `u64`.
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }

    /// The next `u128`.
    pub fn u128(&mut self) -> u128 {
        u128::from_le_bytes(self.take())
    }

    /// The next time.
    pub fn time(&mut self) -> SimTime {
        SimTime::from_ps(self.u64())
    }
}

/// Appends `v` to `out`, little-endian (the writing side of [`Words`]).
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` to `out`, little-endian.
pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` to `out`, little-endian.
pub fn put_u128(out: &mut Vec<u8>, v: u128) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `delivery` to `out`, with its order tag.
pub(crate) fn put_delivery(out: &mut Vec<u8>, tag: u128, d: &Delivery) {
    put_u128(out, tag);
    put_u64(out, d.cookie);
    put_u32(out, d.src.0);
    put_u32(out, d.dst.0);
    put_u32(out, d.size_bytes);
    put_u64(out, d.injected_at.as_ps());
    put_u64(out, d.first_byte_sent.as_ps());
    put_u64(out, d.arrived.as_ps());
}

/// The next delivery and its order tag.
pub(crate) fn delivery(words: &mut Words<'_>) -> (u128, Delivery) {
    let tag = words.u128();
    let d = Delivery {
        cookie: words.u64(),
        src: HostId(words.u32()),
        dst: HostId(words.u32()),
        size_bytes: words.u32(),
        injected_at: words.time(),
        first_byte_sent: words.time(),
        arrived: words.time(),
    };
    (tag, d)
}

/// Appends a packet that crosses to another rank (its message slot is the sender's, and
/// does not travel); a wormhole signal goes without the empty packet and message.
pub(crate) fn put_crossing(out: &mut Vec<u8>, c: &Crossing) {
    put_u32(out, c.to);
    put_u128(out, c.key);
    match c.event {
        CrossingEvent::Routed { port } => {
            out.push(0);
            put_u32(out, port.0);
        }
        CrossingEvent::TailArrives => out.push(1),
        CrossingEvent::Flit { input, hop, flits } => {
            out.push(2);
            put_u32(out, input);
            put_u32(out, u32::from(hop));
            put_u32(out, flits);
        }
        CrossingEvent::Plan {
            input,
            hop,
            flits,
            committed,
            run,
        } => {
            out.push(4);
            put_u32(out, input);
            put_u32(out, u32::from(hop));
            put_u32(out, flits);
            put_u32(out, committed);
            match run {
                None => out.push(0),
                Some(run) => {
                    out.push(1);
                    put_u32(out, run.first);
                    put_u32(out, run.end);
                    put_u64(out, run.start.as_ps());
                }
            }
        }
        CrossingEvent::Signal { port, signal } => {
            out.push(3);
            put_u32(out, port);
            out.push(match signal {
                Signal::Stop => 0,
                Signal::Go => 1,
                Signal::Credit => 2,
            });
            return;
        }
        CrossingEvent::Credit { port, bytes } => {
            out.push(5);
            put_u32(out, port);
            put_u32(out, bytes);
            return;
        }
    }
    let p = &c.packet;
    put_u32(out, p.index);
    put_u32(out, p.wire_bytes);
    out.push(u8::from(p.last));
    put_u32(out, u32::from(p.hop));
    put_u64(out, p.head_in.as_ps());
    put_u64(out, p.tail_at_next_input.as_ps());
    put_u32(out, p.in_port);
    let m = &c.message;
    put_u32(out, m.spec.src.0);
    put_u32(out, m.spec.dst.0);
    put_u32(out, m.spec.size_bytes);
    put_u64(out, m.spec.cookie);
    put_u64(out, m.number);
    put_u64(out, m.injected_at.as_ps());
    put_u64(out, m.first_byte_sent.as_ps());
    put_u32(out, m.bytes_unsent);
    put_u32(out, m.packets_cut);
    put_u32(out, m.packets_total);
    put_u32(out, m.packets_delivered);
    match m.route {
        Route::Table => out.push(0),
        Route::Source(id) => {
            out.push(1);
            put_u32(out, id);
        }
        Route::Explicit(id) => {
            out.push(2);
            put_u32(out, id);
        }
        Route::Detour { via, hops } => {
            out.push(3);
            put_u32(out, via);
            out.push(hops);
        }
        Route::Choose { via, hops } => {
            out.push(4);
            put_u32(out, via);
            out.push(hops);
        }
    }
}

/// The next packet that crossed from another rank.
pub(crate) fn crossing(words: &mut Words<'_>) -> Crossing {
    let to = words.u32();
    let key = words.u128();
    let event = match words.u8() {
        0 => CrossingEvent::Routed {
            port: PortId(words.u32()),
        },
        1 => CrossingEvent::TailArrives,
        2 => CrossingEvent::Flit {
            input: words.u32(),
            hop: words.u32() as u16,
            flits: words.u32(),
        },
        4 => CrossingEvent::Plan {
            input: words.u32(),
            hop: words.u32() as u16,
            flits: words.u32(),
            committed: words.u32(),
            run: match words.u8() {
                0 => None,
                _ => Some(Run {
                    first: words.u32(),
                    end: words.u32(),
                    start: words.time(),
                }),
            },
        },
        5 => {
            let credit = CrossingEvent::Credit {
                port: words.u32(),
                bytes: words.u32(),
            };
            return Crossing::bare(to, key, credit);
        }
        _ => {
            let port = words.u32();
            let signal = match words.u8() {
                0 => Signal::Stop,
                1 => Signal::Go,
                _ => Signal::Credit,
            };
            let signal = CrossingEvent::Signal { port, signal };
            return Crossing::bare(to, key, signal);
        }
    };
    let packet = Packet {
        message: MessageId(0),
        index: words.u32(),
        wire_bytes: words.u32(),
        last: words.u8() != 0,
        hop: words.u32() as u16,
        head_in: words.time(),
        tail_at_next_input: words.time(),
        in_port: words.u32(),
    };
    let spec = MessageSpec {
        src: HostId(words.u32()),
        dst: HostId(words.u32()),
        size_bytes: words.u32(),
        cookie: words.u64(),
    };
    let message = Message {
        spec,
        number: words.u64(),
        injected_at: words.time(),
        first_byte_sent: words.time(),
        bytes_unsent: words.u32(),
        packets_cut: words.u32(),
        packets_total: words.u32(),
        packets_delivered: words.u32(),
        route: match words.u8() {
            0 => Route::Table,
            1 => Route::Source(words.u32()),
            2 => Route::Explicit(words.u32()),
            3 => Route::Detour {
                via: words.u32(),
                hops: words.u8(),
            },
            _ => Route::Choose {
                via: words.u32(),
                hops: words.u8(),
            },
        },
    };
    Crossing {
        to,
        key,
        event,
        packet,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_ranks_reduce_gather_and_exchange() {
        let results = ThreadRanks::each(3, |r| {
            let me = u64::from(r.rank());
            let mut sum = [me, 10 * me];
            r.all_reduce(&mut sum, Reduce::Sum);
            let mut min = [me + 5];
            r.all_reduce(&mut min, Reduce::Min);
            let mut max = [me + 5];
            r.all_reduce(&mut max, Reduce::Max);
            let gathered = r.all_gather(&[r.rank() as u8; 2]);
            let out = (0..3).map(|to| vec![r.rank() as u8, to as u8]).collect();
            let received = r.exchange(out);
            assert_eq!(r.broadcast(vec![r.rank() as u8 + 7; 3]), vec![7; 3]);
            (sum, min[0], max[0], gathered, received)
        });
        for (me, (sum, min, max, gathered, received)) in results.into_iter().enumerate() {
            assert_eq!(sum, [3, 30]);
            assert_eq!((min, max), (5, 7));
            assert_eq!(gathered, vec![vec![0, 0], vec![1, 1], vec![2, 2]]);
            let me = me as u8;
            assert_eq!(received, vec![vec![0, me], vec![1, me], vec![2, me]]);
        }
    }

    #[test]
    fn a_signal_travels_without_records_and_the_next_crossing_reads_whole() {
        let flit = CrossingEvent::Flit {
            input: 4,
            hop: 2,
            flits: 33,
        };
        let mut with_records = Crossing::bare(1, 77, flit);
        with_records.packet.index = 5;
        with_records.packet.last = true;
        with_records.message.number = 1234;
        for signal in [Signal::Stop, Signal::Go, Signal::Credit] {
            let mut bytes = Vec::new();
            put_crossing(
                &mut bytes,
                &Crossing::bare(1, 76, CrossingEvent::Signal { port: 9, signal }),
            );
            let signal_bytes = bytes.len();
            put_crossing(&mut bytes, &with_records);
            assert!(signal_bytes < bytes.len() - signal_bytes, "a signal carries no records");
            let mut words = Words::new(&bytes);
            let first = crossing(&mut words);
            assert!(
                matches!(first.event, CrossingEvent::Signal { port: 9, signal: s } if s == signal),
                "{signal:?} read back as {:?}",
                first.event
            );
            assert_eq!((first.to, first.key), (1, 76));
            let second = crossing(&mut words);
            assert!(matches!(
                second.event,
                CrossingEvent::Flit {
                    input: 4,
                    hop: 2,
                    flits: 33
                }
            ));
            assert_eq!((second.key, second.packet.index, second.packet.last), (77, 5, true));
            assert_eq!(second.message.number, 1234);
        }
    }

    #[test]
    fn deliveries_travel_whole() {
        let d = Delivery {
            cookie: u64::MAX - 3,
            src: HostId(7),
            dst: HostId(70_000),
            size_bytes: 123_456,
            injected_at: SimTime::from_ps(1),
            first_byte_sent: SimTime::from_ps(u64::MAX - 1),
            arrived: SimTime::from_ns(99),
        };
        let mut bytes = Vec::new();
        put_delivery(&mut bytes, u128::MAX - 9, &d);
        put_delivery(&mut bytes, 5, &d);
        let mut words = Words::new(&bytes);
        assert_eq!(delivery(&mut words), (u128::MAX - 9, d));
        assert_eq!(delivery(&mut words), (5, d));
        assert!(words.is_empty());
    }
}
