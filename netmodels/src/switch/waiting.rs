//! Packets waiting in a switch's queues, kept as runs: memory that grows with the
//! messages that wait, not with their bytes.
//!
//! A queue is a FIFO: packets leave in the order they arrived. Holding a record per
//! waiting packet made a few valid `SEND`s of 2 GiB to one host take gigabytes (each
//! message is half a million packets of 4 KiB, and an incast queues nearly all of
//! them). But the packets of one message that wait in one queue are regular: they
//! arrived one after the other, at a steady rate, in a steady place among the others.
//! So a queue keeps **runs**: a run is the packets `i, i+1, …, i+n−1` of one message
//! whose arrival tickets (their places in the queue's arrival order), heads' and
//! tails' times each form an arithmetic progression. Any packet is rebuilt exactly from
//! its run's first packet, its position and the three steps.
//!
//! ```text
//!   arrivals:  a0 b0 c0 a1 b1 c1 a2 b2 c2 …   (three messages interleaved, tickets 0, 1, 2, …)
//!   runs:      a: tickets 0, 3, 6, …   b: tickets 1, 4, 7, …   c: tickets 2, 5, 8, …
//!   queue:     the runs, by the ticket of their next packet: the oldest packet is the
//!              front run's next one
//! ```
//!
//! A packet that arrives joins the newest run of its message at this queue when it
//! continues all three progressions (and every packet but a message's last has the
//! same size); else it starts a run of its own. So the result is the same FIFO, packet
//! for packet, at any pattern of arrivals; a steady pattern costs one run per message,
//! an irregular one at worst a run per packet.
//!
//! Runs live in one store ([`Waiting`]) shared by every queue of a network; each queue
//! ([`Queue`]) lists its runs by the ticket of their next packet.
//!
//! Short queues, the common case below saturation, stay plain: the first [`PLAIN`]
//! packets waiting in a queue keep their records (no run to open and close for a packet
//! that waits one packet time); the packets that arrive while those wait go to runs, and
//! leave after them, so the order is the FIFO's still.

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;

use crate::ids::NumberHasher;
use crate::message::{Packet, PacketId};
use crate::slab::Slab;
use crate::time::SimTime;

/// Which queue of a switch a packet waits in, with its message and hop: the key of
/// the newest run of that message there (a message's packets at one hop follow one
/// path, so they meet one input queue and one output queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// a CIOQ switch's input queue
    Input = 0,
    /// an output port's queue
    Output = 1,
}

/// The runs of every queue of a network.
#[derive(Debug, Default)]
pub(crate) struct Waiting {
    runs: Slab<Run>,
    /// the newest run of each (message, hop, side) with packets waiting
    newest: HashMap<u64, u32, BuildHasherDefault<NumberHasher>>,
}

/// Packets a queue holds as records before it keeps the next ones as runs.
pub(crate) const PLAIN: usize = 128;

/// One queue: its oldest packets as records, the later ones as runs.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    /// (tag, packet): the oldest packets, at most [`PLAIN`]
    plain: VecDeque<(u32, PacketId)>,
    /// the packets behind them, if any arrived while `PLAIN` waited
    runs: Option<Box<RunList>>,
}

/// The runs of one queue.
#[derive(Debug, Default)]
struct RunList {
    /// (ticket of the run's next packet, run), by ticket
    order: VecDeque<(u64, u32)>,
    /// the ticket of the next packet to arrive
    tickets: u64,
}

/// Packets `first.index`, … of one message, waiting in one queue.
#[derive(Debug, Clone, Copy)]
struct Run {
    key: u64,
    /// the run's first packet as it arrived
    first: Packet,
    /// the first packet's ticket
    ticket: u64,
    /// what the queue keeps beside each packet (a CIOQ input: the output it wants)
    tag: u32,
    /// packets in the run
    count: u32,
    /// packets that have left
    taken: u32,
    /// the size of its last packet (a message's last may be shorter)
    last_wire_bytes: u32,
    /// its last packet is its message's last
    ends_message: bool,
    /// steps from one packet to the next (set by the second packet)
    ticket_step: u64,
    head_step: SimTime,
    tail_step: SimTime,
}

impl Run {
    fn key(packet: &Packet, side: Side) -> u64 {
        // The message in the low bits: the map's hasher keeps them apart there.
        (u64::from(packet.hop) << 1 | side as u64) << 32 | u64::from(packet.message.0)
    }

    /// Takes `p`, ticket `ticket`, as its next packet if it continues the run.
    fn extend(&mut self, p: &Packet, ticket: u64, tag: u32) -> bool {
        let n = self.count;
        let f = &self.first;
        if self.ends_message
            || p.index != f.index + n
            || p.in_port != f.in_port
            || tag != self.tag
            || self.last_wire_bytes != f.wire_bytes
        {
            return false;
        }
        if n == 1 {
            let (Some(head), Some(tail)) = (
                p.head_in.as_ps().checked_sub(f.head_in.as_ps()),
                p.tail_at_next_input.as_ps().checked_sub(f.tail_at_next_input.as_ps()),
            ) else {
                return false;
            };
            self.ticket_step = ticket - self.ticket;
            self.head_step = SimTime::from_ps(head);
            self.tail_step = SimTime::from_ps(tail);
        } else if ticket != self.ticket + self.ticket_step * u64::from(n)
            || p.head_in != f.head_in + self.head_step * u64::from(n)
            || p.tail_at_next_input != f.tail_at_next_input + self.tail_step * u64::from(n)
        {
            return false;
        }
        self.count += 1;
        self.last_wire_bytes = p.wire_bytes;
        self.ends_message = p.last;
        true
    }

    /// The run's `j`-th packet, exactly as it arrived.
    fn packet(&self, j: u32) -> Packet {
        let k = u64::from(j);
        let final_one = j + 1 == self.count;
        Packet {
            index: self.first.index + j,
            wire_bytes: if final_one {
                self.last_wire_bytes
            } else {
                self.first.wire_bytes
            },
            last: final_one && self.ends_message,
            head_in: self.first.head_in + self.head_step * k,
            tail_at_next_input: self.first.tail_at_next_input + self.tail_step * k,
            ..self.first
        }
    }

    fn ticket_of(&self, j: u32) -> u64 {
        self.ticket + self.ticket_step * u64::from(j)
    }
}

impl Queue {
    /// Whether no packet waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.plain.is_empty()
    }
}

impl Waiting {
    /// `packet` (with `tag`) arrives at the back of `queue`, on `side` of its switch; a
    /// packet that goes to a run leaves its slot in `packets`.
    #[inline]
    pub(crate) fn push(
        &mut self,
        queue: &mut Queue,
        side: Side,
        packet: PacketId,
        tag: u32,
        packets: &mut Slab<Packet>,
    ) {
        if queue.runs.is_none() && queue.plain.len() < PLAIN {
            queue.plain.push_back((tag, packet));
        } else {
            self.push_to_runs(queue, side, packet, tag, packets);
        }
    }

    /// `push` behind [`PLAIN`] packets.
    #[inline(never)]
    fn push_to_runs(&mut self, queue: &mut Queue, side: Side, packet: PacketId, tag: u32, packets: &mut Slab<Packet>) {
        let runs = queue.runs.get_or_insert_default();
        let p = packets[packet.index()];
        packets.release(packet.0);
        let ticket = runs.tickets;
        runs.tickets += 1;
        let key = Run::key(&p, side);
        // A message's first packet has no run to join; its last leaves none to join.
        if p.index > 0
            && let Some(&r) = self.newest.get(&key)
            && self.runs[r as usize].extend(&p, ticket, tag)
        {
            // The run's next packet is unchanged: so is the queue's order.
            if p.last {
                self.newest.remove(&key);
            }
            return;
        }
        let r = self.runs.insert(Run {
            key,
            first: p,
            ticket,
            tag,
            count: 1,
            taken: 0,
            last_wire_bytes: p.wire_bytes,
            ends_message: p.last,
            ticket_step: 0,
            head_step: SimTime::ZERO,
            tail_step: SimTime::ZERO,
        });
        if !p.last {
            self.newest.insert(key, r);
        }
        // The newest ticket: its place is at the back.
        runs.order.push_back((ticket, r));
    }

    /// The oldest packet of `queue` (with its tag) leaves it; one from a run takes a
    /// slot in `packets` again.
    #[inline]
    pub(crate) fn pop(&mut self, queue: &mut Queue, packets: &mut Slab<Packet>) -> Option<(PacketId, u32)> {
        let (tag, oldest) = queue.plain.pop_front()?;
        if queue.runs.is_some() {
            self.refill(queue, packets);
        }
        Some((oldest, tag))
    }

    /// The oldest packet of `queue`'s runs takes the place at the back of its plain ones.
    #[inline(never)]
    fn refill(&mut self, queue: &mut Queue, packets: &mut Slab<Packet>) {
        if let Some(runs) = &mut queue.runs
            && let Some((next, tag)) = self.take(runs)
        {
            queue.plain.push_back((tag, PacketId(packets.insert(next))));
            if runs.order.is_empty() {
                queue.runs = None;
            }
        }
    }

    /// The oldest packet of `runs`, with its tag.
    fn take(&mut self, runs: &mut RunList) -> Option<(Packet, u32)> {
        let (_, r) = runs.order.pop_front()?;
        let run = &mut self.runs[r as usize];
        let packet = run.packet(run.taken);
        let tag = run.tag;
        run.taken += 1;
        if run.taken == run.count {
            if !run.ends_message && self.newest.get(&run.key) == Some(&r) {
                self.newest.remove(&run.key);
            }
            self.runs.release(r);
        } else {
            let next = run.ticket_of(run.taken);
            // Runs interleave: the next packet's place is usually at the back.
            let at = runs.order.partition_point(|&(t, _)| t < next);
            runs.order.insert(at, (next, r));
        }
        Some((packet, tag))
    }

    /// The tag of `queue`'s oldest packet.
    pub(crate) fn front_tag(&self, queue: &Queue) -> Option<u32> {
        queue.plain.front().map(|&(tag, _)| tag)
    }

    /// Packets waiting in `queue`.
    #[cfg(test)]
    pub(crate) fn len(&self, queue: &Queue) -> usize {
        let left = |&(_, r): &(u64, u32)| {
            let run = &self.runs[r as usize];
            (run.count - run.taken) as usize
        };
        let runs = queue.runs.as_ref().map_or(0, |runs| runs.order.iter().map(left).sum());
        queue.plain.len() + runs
    }

    /// The most runs held at once, in every queue.
    #[cfg(test)]
    pub(crate) fn peak_runs(&self) -> usize {
        self.runs.capacity()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::ids::MessageId;
    use crate::rng::Rng;

    /// Packet `index` of message `message`, its head and tail in at `at` ps.
    fn packet(message: u32, index: u32, at: u64, last: bool) -> Packet {
        Packet {
            message: MessageId(message),
            index,
            wire_bytes: if last { 100 } else { 4112 },
            last,
            hop: 2,
            head_in: SimTime::from_ps(at),
            tail_at_next_input: SimTime::from_ps(at + 16_448),
            in_port: message % 3,
        }
    }

    fn same(a: &Packet, b: &Packet) -> bool {
        (
            a.message,
            a.index,
            a.wire_bytes,
            a.last,
            a.hop,
            a.head_in,
            a.tail_at_next_input,
            a.in_port,
        ) == (
            b.message,
            b.index,
            b.wire_bytes,
            b.last,
            b.hop,
            b.head_in,
            b.tail_at_next_input,
            b.in_port,
        )
    }

    /// Packets of several messages arrive, steadily or not, and leave in between: they
    /// leave exactly as from a FIFO of records.
    #[test]
    fn runs_give_back_the_fifo_packet_for_packet() {
        for seed in 0..40 {
            let mut rng = Rng::new(seed);
            let mut waiting = Waiting::default();
            let mut queue = Queue::default();
            let mut slab = Slab::new();
            let mut reference = VecDeque::new();
            let messages = 1 + rng.below(6) as u32;
            let mut next = vec![0u32; messages as usize];
            let total = 40u32;
            let mut at = 0u64;
            for _ in 0..600 {
                if rng.below(3) > 0 {
                    let m = rng.below(u64::from(messages)) as u32;
                    if next[m as usize] < total {
                        // Mostly steady (a packet time apart), now and then a gap.
                        at += if rng.below(8) == 0 { rng.below(5000) } else { 16_448 };
                        let i = next[m as usize];
                        next[m as usize] += 1;
                        let p = packet(m, i, at, i + 1 == total);
                        let id = PacketId(slab.insert(p));
                        waiting.push(&mut queue, Side::Output, id, m % 2, &mut slab);
                        reference.push_back((p, m % 2));
                    }
                } else {
                    let got = waiting.pop(&mut queue, &mut slab);
                    let want = reference.pop_front();
                    assert_eq!(got.is_some(), want.is_some(), "seed {seed}");
                    if let (Some((id, gt)), Some((w, wt))) = (got, want) {
                        let g = slab[id.index()];
                        assert!(same(&g, &w) && gt == wt, "seed {seed}: {g:?} against {w:?}");
                        slab.release(id.0);
                    }
                }
                assert_eq!(waiting.len(&queue), reference.len());
                assert_eq!(waiting.front_tag(&queue), reference.front().map(|&(_, t)| t));
            }
            while let Some((w, _)) = reference.pop_front() {
                let (g, _) = waiting.pop(&mut queue, &mut slab).expect("as many packets");
                assert!(same(&slab[g.index()], &w), "seed {seed}");
            }
            assert!(queue.is_empty() && waiting.newest.is_empty(), "seed {seed}");
        }
    }

    /// Three messages interleaved round-robin, 1,000 packets each: three runs.
    #[test]
    fn a_steady_interleaving_is_a_run_per_message() {
        let mut waiting = Waiting::default();
        let mut queue = Queue::default();
        let mut slab = Slab::new();
        for i in 0..1000 {
            for m in 0..3 {
                let at = u64::from(i) * 3 * 16_448 + u64::from(m) * 16_448;
                let id = PacketId(slab.insert(packet(m, i, at, i == 999)));
                waiting.push(&mut queue, Side::Output, id, 0, &mut slab);
            }
        }
        // The first ones wait as records, the rest as a run per message.
        assert_eq!(waiting.peak_runs(), 3);
        assert_eq!(slab.capacity(), PLAIN + 1);
        assert_eq!(waiting.len(&queue), 3000);
        let mut order = Vec::new();
        while let Some((id, _)) = waiting.pop(&mut queue, &mut slab) {
            order.push(slab[id.index()].message.0);
            slab.release(id.0);
        }
        let expected: Vec<u32> = (0..3000).map(|k| k % 3).collect();
        assert_eq!(order, expected);
        assert_eq!(
            slab.capacity(),
            PLAIN + 1,
            "a packet leaves as one arrives in its place"
        );
    }
}
