//! The discrete-event engine: a queue of events ordered by (time, rank, origin,
//! the origin's own sequence).
//!
//! Ties in time are broken first by an optional rank (a model may say, for instance,
//! that a flow-control signal arriving at an instant takes effect before a send at that
//! instant), then by the component that scheduled the event (its *origin*: the device
//! whose event was being handled, or the host a message is injected at), then by the
//! order in which that origin scheduled its events (FIFO per origin). That makes a run
//! a pure function of its inputs, and the order of two events does not depend on how
//! the components are spread over partitions of the network: each origin's
//! sequence only counts its own events. A queue with one origin (the default) orders
//! ties by the order of scheduling alone. Events are small `Copy` values held by value:
//! no allocation per event.
//!
//! ```text
//!   schedule ──▶ lane of its delay class (0, < 66 ns, < 524 ns, …), if later than
//!                that lane's last event ── else ──▶ binary heap
//!   pop      ◀── the earliest of the heap's top and the lanes' fronts
//! ```
//!
//! Most events go to a lane, in O(1): events of one class scheduled one after the
//! other come in time order, as the clock only moves forward and their delays are
//! alike. The rest go to the heap. The order of events is the same either way.

use std::collections::VecDeque;

use crate::time::SimTime;

/// A pending event.
#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    /// (time, rank, place) packed into one integer, compared in one go: time in the
    /// high 64 bits, then the rank (`RANK_BITS`), then the place (the origin and its
    /// sequence, see [`EventQueue::reserve`])
    key: u128,
    event: E,
}

impl<E> Entry<E> {
    fn key(time: SimTime, rank: u8, place: u64) -> u128 {
        debug_assert!(u32::from(rank) < 1 << RANK_BITS, "rank {rank} out of range");
        (u128::from(time.as_ps()) << 64) | (u128::from(rank) << PLACE_BITS) | u128::from(place & PLACE_MASK)
    }

    fn time(&self) -> SimTime {
        SimTime::from_ps((self.key >> 64) as u64)
    }
}

/// Bits of an event's rank: ranks 0 to 7.
const RANK_BITS: u32 = 3;

/// Bits of an event's place: its origin in the high bits, as many as the origins need,
/// and its sequence among that origin's events in the rest. One origin leaves 61 bits
/// (2 × 10^18 events); 2^26 origins (the most devices a network may have) leave 35 (3 ×
/// 10^10 events of each device): far beyond any run either way.
const PLACE_BITS: u32 = 64 - RANK_BITS;
const PLACE_MASK: u64 = (1 << PLACE_BITS) - 1;

/// FIFO lanes beside the heap, one per class of delay (see `delay_class`).
const LANES: usize = 6;

/// The lane of an event scheduled `delay_ps` ahead: 0 for the current instant, then
/// classes eight times apart: below 2^16 ps (66 ns: cables), 2^19 ps (524 ns: routing),
/// 2^22 ps (4.2 µs: packets on fast links), 2^25 ps (34 µs: on slow ones), and the rest.
///
/// Events of one class scheduled one after the other mostly come in time order, as the
/// clock only moves forward and their delays are alike: each lane takes the events that
/// do (a queue, O(1)); the others go to the heap.
fn delay_class(delay_ps: u64) -> usize {
    if delay_ps == 0 {
        return 0;
    }
    let bits = 64 - delay_ps.leading_zeros();
    (1 + bits.saturating_sub(14) as usize / 3).min(LANES - 1)
}

/// A deterministic future-event list.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: Heap<E>,
    /// Per class of delay, events scheduled in key order (each later than the lane's
    /// last), popped from the front: no heap walk for them. The earliest event is the
    /// first of the heap's and the lanes' fronts.
    lanes: [VecDeque<Entry<E>>; LANES],
    /// per origin, the place its next event takes: the origin in the high bits, its
    /// count of events in the low `sequence_bits`
    next_place: Vec<u64>,
    /// the origin of the events scheduled now
    origin: usize,
    now: SimTime,
    /// the key of the last event popped
    last_key: u128,
    processed: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: Heap { items: Vec::new() },
            lanes: std::array::from_fn(|_| VecDeque::new()),
            next_place: vec![0],
            origin: 0,
            now: SimTime::ZERO,
            last_key: 0,
            processed: 0,
        }
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue at time zero with one origin: ties in (time, rank) go in the
    /// order events were scheduled.
    pub fn new() -> Self {
        Self::default()
    }

    /// The bytes of the origins' sequence counters (see [`crate::footprint`]).
    #[cfg(test)]
    pub(crate) fn origins_bytes(&self) -> u64 {
        (self.next_place.capacity() * size_of::<u64>()) as u64
    }

    /// An empty queue at time zero whose events come from `origins` components (at
    /// least one; at most 2^26), each with its own sequence (see [`Self::set_origin`]).
    pub fn with_origins(origins: usize) -> Self {
        let origins = origins.max(1);
        let origin_bits = usize::BITS - (origins - 1).leading_zeros();
        assert!(origin_bits <= 26, "{origins} origins: at most 2^26");
        let sequence_bits = PLACE_BITS - origin_bits;
        EventQueue {
            next_place: (0..origins as u64).map(|o| o << sequence_bits).collect(),
            ..Self::default()
        }
    }

    /// Makes `origin` (below the number of origins) the origin of the events scheduled
    /// and places reserved from now on: the component whose event is being handled.
    pub fn set_origin(&mut self, origin: usize) {
        debug_assert!(origin < self.next_place.len(), "origin {origin} out of range");
        self.origin = origin;
    }

    /// Every pending event with its time and its place in the order events are
    /// processed (a smaller place first), in no particular order.
    pub fn pending(&self) -> impl Iterator<Item = (SimTime, u128, &E)> {
        self.heap
            .items
            .iter()
            .chain(self.lanes.iter().flatten())
            .map(|entry| (entry.time(), entry.key, &entry.event))
    }

    /// The time of the last event popped (the simulation clock).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.heap.items.len() + self.lanes.iter().map(VecDeque::len).sum::<usize>()
    }

    /// Whether no event waits.
    pub fn is_empty(&self) -> bool {
        self.heap.items.is_empty() && self.lanes.iter().all(VecDeque::is_empty)
    }

    /// Schedules `event` at `time`, which must not be in the past (rank 0).
    pub fn schedule(&mut self, time: SimTime, event: E) {
        self.schedule_ranked(time, 0, event);
    }

    /// [`Self::schedule`], returning the event's order key (its place, as
    /// [`Self::pending`] gives it).
    pub(crate) fn schedule_placed(&mut self, time: SimTime, event: E) -> u128 {
        let sequence = self.reserve();
        self.schedule_reserved(time, 0, sequence, event);
        Entry::<E>::key(time.max(self.now), 0, sequence)
    }

    /// Schedules `event` at `time`; among events at one instant, lower ranks go first.
    pub fn schedule_ranked(&mut self, time: SimTime, rank: u8, event: E) {
        let sequence = self.reserve();
        self.schedule_reserved(time, rank, sequence, event);
    }

    /// Takes the place (origin and sequence) of an event that may be scheduled later,
    /// with [`Self::schedule_reserved`], among its instant's events: the place it would
    /// have had if scheduled now. A model keeps events that will probably not be needed
    /// out of the queue this way, and schedules them when they are, with no change in
    /// the order of events.
    pub fn reserve(&mut self) -> u64 {
        let place = &mut self.next_place[self.origin];
        let taken = *place;
        *place += 1;
        taken
    }

    /// Whether an event scheduled at `time` with `rank` in the reserved place `sequence`
    /// would have been popped already: it must not be scheduled now, its work is due.
    /// That is so if it comes before the last event popped, or before the clock, which
    /// [`Self::advance_clock`] moves past instants that had no event.
    pub fn passed(&self, time: SimTime, rank: u8, sequence: u64) -> bool {
        time < self.now || (self.processed > 0 && Entry::<E>::key(time, rank, sequence) <= self.last_key)
    }

    /// Schedules `event` at `time` in the place `sequence` from [`Self::reserve`]; it
    /// must not have [`Self::passed`].
    pub fn schedule_reserved(&mut self, time: SimTime, rank: u8, sequence: u64, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past: {time} < {}", self.now);
        let entry = Entry {
            key: Entry::<E>::key(time.max(self.now), rank, sequence),
            event,
        };
        // The lane of its delay's class, if it comes after that lane's last event.
        let class = delay_class((time - self.now.min(time)).as_ps());
        if self.lanes[class].back().is_none_or(|e| e.key < entry.key) {
            self.lanes[class].push_back(entry);
        } else {
            self.heap.push(entry);
        }
    }

    /// The time of the event whose order key is `key` (see [`Self::key_of`]).
    pub(crate) fn time_of(key: u128) -> SimTime {
        SimTime::from_ps((key >> 64) as u64)
    }

    /// The order key of an event at `time` with `rank` in `place` (from
    /// [`Self::reserve`]): what [`Self::schedule_keyed`] takes, in another queue.
    pub(crate) fn key_of(time: SimTime, rank: u8, place: u64) -> u128 {
        Entry::<E>::key(time, rank, place)
    }

    /// The key of the last event popped (or of the turn last taken).
    pub(crate) fn last_key(&self) -> u128 {
        self.last_key
    }

    /// Schedules `event` with the order key another queue gave it ([`Self::key_of`]):
    /// an event that crosses from one partition of a network to another keeps its place.
    pub(crate) fn schedule_keyed(&mut self, key: u128, event: E) {
        let time = SimTime::from_ps((key >> 64) as u64);
        debug_assert!(time >= self.now, "event scheduled in the past: {time} < {}", self.now);
        let entry = Entry { key, event };
        let class = delay_class((time - self.now.min(time)).as_ps());
        if self.lanes[class].back().is_none_or(|e| e.key < entry.key) {
            self.lanes[class].push_back(entry);
        } else {
            self.heap.push(entry);
        }
    }

    /// Whether every pending event comes after the event the current origin would
    /// schedule now at `rank`: true if that event would be the next one popped.
    pub fn nothing_before(&self, rank: u8) -> bool {
        // Written out, with an early exit: a search for the first key through iterator
        // adapters cost about 110 instructions here, on every injection and arbitration.
        let bound = Entry::<E>::key(self.now, rank, self.next_place[self.origin]);
        if self.heap.peek().is_some_and(|e| e.key <= bound) {
            return false;
        }
        for lane in &self.lanes {
            if lane.front().is_some_and(|e| e.key <= bound) {
                return false;
            }
        }
        true
    }

    /// If an event scheduled now at `rank` would be the next one popped, takes its
    /// place as if it had been scheduled and popped (its sequence number; [`Self::passed`]
    /// sees the queue there) and returns true: the caller does that event's work at once
    /// instead of scheduling it, with the same outcome and one event fewer.
    pub fn take_turn(&mut self, rank: u8) -> bool {
        if !self.nothing_before(rank) {
            return false;
        }
        let sequence = self.reserve();
        self.last_key = Entry::<E>::key(self.now, rank, sequence);
        true
    }

    /// Counts an event whose work the caller did at once after [`Self::take_turn`], so
    /// that the count does not depend on whether it took its turn.
    pub fn count_taken_turn(&mut self) {
        self.processed += 1;
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.first_key().map(|key| SimTime::from_ps((key >> 64) as u64))
    }

    /// The key of the earliest pending event.
    fn first_key(&self) -> Option<u128> {
        let mut first = self.heap.peek().map(|e| e.key);
        for lane in &self.lanes {
            if let Some(e) = lane.front()
                && first.is_none_or(|k| e.key < k)
            {
                first = Some(e.key);
            }
        }
        first
    }

    /// Pops the earliest event if it is at or before `limit`, advancing the clock.
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        // Where the earliest event is: a lane (its index) or the heap (LANES). The same
        // search as `first_key`'s, written out: sharing one function returning both
        // cost 2 % more instructions here, the hottest loop of a run.
        let mut from = LANES;
        let mut first = self.heap.peek().map_or(u128::MAX, |e| e.key);
        for (i, lane) in self.lanes.iter().enumerate() {
            if let Some(e) = lane.front()
                && e.key < first
            {
                first = e.key;
                from = i;
            }
        }
        if from == LANES && self.heap.peek().is_none() {
            return None;
        }
        if SimTime::from_ps((first >> 64) as u64) > limit {
            return None;
        }
        let entry = if from < LANES {
            self.lanes[from].pop_front()
        } else {
            self.heap.pop()
        }?;
        let time = entry.time();
        self.now = time;
        self.last_key = entry.key;
        self.processed += 1;
        Some((time, entry.event))
    }

    /// Moves the clock forward to `time` without an event (never backwards).
    pub fn advance_clock(&mut self, time: SimTime) {
        debug_assert!(
            self.peek_time().is_none_or(|t| t >= time),
            "clock moved past a pending event"
        );
        self.now = self.now.max(time);
    }
}

/// A binary min-heap of entries on their key.
///
/// Not `std`'s `BinaryHeap`, whose walk down branches on which child is smaller and
/// mispredicts about every other level on a simulation's keys: here the comparison is
/// turned into an index. Then the last entry sifts up from the bottom (Floyd's method,
/// as `std` does). A 4-ary heap (half the levels, three comparisons each) was slower.
#[derive(Debug)]
struct Heap<E> {
    items: Vec<Entry<E>>,
}

impl<E: Copy> Heap<E> {
    fn peek(&self) -> Option<&Entry<E>> {
        self.items.first()
    }

    fn push(&mut self, entry: Entry<E>) {
        let hole = self.items.len();
        self.items.push(entry);
        self.sift_up(hole, entry);
    }

    /// Puts `entry` at `hole` or above it, moving larger parents down.
    fn sift_up(&mut self, mut hole: usize, entry: Entry<E>) {
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if self.items[parent].key <= entry.key {
                break;
            }
            self.items[hole] = self.items[parent];
            hole = parent;
        }
        self.items[hole] = entry;
    }

    fn pop(&mut self) -> Option<Entry<E>> {
        let last = self.items.pop()?;
        let Some(&top) = self.items.first() else {
            return Some(last);
        };
        let len = self.items.len();
        let mut hole = 0;
        let mut child = 1;
        while child + 1 < len {
            child += usize::from(self.items[child + 1].key < self.items[child].key);
            self.items[hole] = self.items[child];
            hole = child;
            child = 2 * hole + 1;
        }
        if child < len {
            self.items[hole] = self.items[child];
            hole = child;
        }
        self.sift_up(hole, last);
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A queue checked against a sorted list at every step.
    struct Checked {
        q: EventQueue<u64>,
        reference: std::collections::BTreeSet<(SimTime, u8, u64, u64)>,
    }

    impl Checked {
        fn new() -> Self {
            Checked {
                q: EventQueue::new(),
                reference: std::collections::BTreeSet::new(),
            }
        }

        fn schedule(&mut self, time: SimTime, rank: u8, sequence: u64, step: u64) {
            self.q.schedule_reserved(time, rank, sequence, step);
            self.reference.insert((time, rank, sequence, step));
            assert_eq!(self.q.len(), self.reference.len());
        }

        fn pop(&mut self, step: u64) {
            let expected = self.reference.pop_first().map(|(time, _, _, event)| (time, event));
            assert_eq!(self.q.pop_until(SimTime::MAX), expected, "step {step}");
            assert_eq!(self.q.len(), self.reference.len());
        }

        fn drain(mut self) {
            while !self.reference.is_empty() {
                self.pop(u64::MAX);
            }
            assert!(self.q.is_empty());
        }
    }

    #[test]
    fn pops_in_time_order_and_fifo_on_ties() {
        let mut q = EventQueue::new();
        q.schedule(SimTime::from_ps(30), 'c');
        q.schedule(SimTime::from_ps(10), 'a');
        q.schedule(SimTime::from_ps(30), 'd');
        q.schedule(SimTime::from_ps(10), 'b');
        let mut order = Vec::new();
        while let Some((_, e)) = q.pop_until(SimTime::MAX) {
            order.push(e);
        }
        assert_eq!(order, ['a', 'b', 'c', 'd']);
        assert_eq!(q.now(), SimTime::from_ps(30));
        assert_eq!(q.processed(), 4);
    }

    #[test]
    fn ranks_order_events_of_one_instant() {
        let mut q = EventQueue::new();
        q.schedule_ranked(SimTime::from_ps(10), 2, 'c');
        q.schedule_ranked(SimTime::from_ps(10), 1, 'b');
        q.schedule(SimTime::from_ps(10), 'a');
        q.schedule_ranked(SimTime::from_ps(5), 7, 'z');
        let mut order = Vec::new();
        while let Some((_, e)) = q.pop_until(SimTime::MAX) {
            order.push(e);
        }
        assert_eq!(order, ['z', 'a', 'b', 'c']);
    }

    #[test]
    fn nothing_before_sees_the_events_of_the_instant() {
        let mut q = EventQueue::new();
        q.schedule_ranked(SimTime::from_ps(10), 3, 'a');
        q.schedule(SimTime::from_ps(20), 'b');
        assert!(q.nothing_before(5), "nothing is pending at time 0");
        q.pop_until(SimTime::MAX);
        assert!(q.nothing_before(0), "'b' is at a later instant");
        q.schedule_ranked(SimTime::from_ps(10), 4, 'c');
        assert!(q.nothing_before(3));
        assert!(!q.nothing_before(4), "'c' was scheduled first at rank 4");
        assert!(!q.nothing_before(5));
    }

    #[test]
    fn reserved_events_keep_their_place() {
        let mut q = EventQueue::new();
        let early = q.reserve();
        q.schedule(SimTime::from_ps(10), 'b');
        let late = q.reserve();
        q.schedule_reserved(SimTime::from_ps(10), 0, late, 'c');
        q.schedule_reserved(SimTime::from_ps(10), 0, early, 'a');
        assert!(!q.passed(SimTime::from_ps(10), 0, early));
        let mut order = Vec::new();
        while let Some((_, e)) = q.pop_until(SimTime::MAX) {
            order.push(e);
        }
        assert_eq!(order, ['a', 'b', 'c']);
        assert!(q.passed(SimTime::from_ps(10), 0, late));
        assert!(!q.passed(SimTime::from_ps(10), 1, early));
    }

    #[test]
    fn a_turn_taken_passes_the_reserved_places_before_it() {
        let mut q = EventQueue::new();
        q.schedule(SimTime::from_ps(10), 'a');
        q.pop_until(SimTime::MAX);
        let reserved = q.reserve();
        assert!(!q.passed(SimTime::from_ps(10), 0, reserved));
        assert!(q.take_turn(0));
        assert!(q.passed(SimTime::from_ps(10), 0, reserved));
        q.schedule(SimTime::from_ps(10), 'b');
        assert!(!q.take_turn(0), "'b' comes first");
    }

    #[test]
    fn pops_like_a_sorted_list_under_random_pushes_and_pops() {
        let mut rng = crate::rng::Rng::new(5);
        let mut c = Checked::new();
        let mut reserved = Vec::new();
        for step in 0..20_000u64 {
            if rng.below(3) > 0 {
                // A third at the current instant, the others close (ties) or of any
                // class of delay; in and out of each lane's order.
                let delay = match rng.below(3) {
                    0 => 0,
                    1 => rng.below(50),
                    _ => {
                        let bits = rng.below(28);
                        rng.below(1 << bits)
                    }
                };
                let time = c.q.now() + SimTime::from_ps(delay);
                let rank = rng.below(3) as u8;
                // A quarter in a place reserved earlier (each used once, never one
                // already passed), the others in a new one.
                if rng.below(4) == 0 {
                    reserved.push(c.q.reserve());
                }
                let sequence = match reserved.first() {
                    Some(&old) if rng.below(4) == 0 && !c.q.passed(time, rank, old) => reserved.swap_remove(0),
                    _ => c.q.reserve(),
                };
                c.schedule(time, rank, sequence, step);
            } else {
                c.pop(step);
            }
        }
        c.drain();
    }

    #[test]
    fn delay_classes_are_eight_times_apart() {
        let classes: Vec<usize> = [
            0,
            1,
            65_535,
            65_536,
            524_287,
            524_288,
            4_194_304,
            33_554_431,
            33_554_432,
            u64::MAX,
        ]
        .map(delay_class)
        .to_vec();
        assert_eq!(classes, [0, 1, 1, 2, 2, 3, 4, 4, 5, 5]);
    }

    #[test]
    fn keeps_its_order_as_the_time_scale_and_the_length_change() {
        // Phases of delays from picoseconds to milliseconds, with the queue growing and
        // shrinking: each lane takes a phase's events in turn, the heap the others, and
        // the order is a sorted list's throughout.
        let mut rng = crate::rng::Rng::new(11);
        let mut c = Checked::new();
        let mut step = 0u64;
        for (scale, pushes_in_4) in [(4, 3), (30, 3), (12, 1), (40, 3), (0, 2), (22, 1), (36, 2)] {
            for _ in 0..6_000 {
                step += 1;
                if rng.below(4) < pushes_in_4 {
                    // Mostly of the phase's scale, now and then far out or at once.
                    let delay = match rng.below(16) {
                        0 => 0,
                        1 => rng.below(1 << 44),
                        _ => rng.below(1 << scale),
                    };
                    let time = c.q.now() + SimTime::from_ps(delay);
                    let sequence = c.q.reserve();
                    c.schedule(time, rng.below(2) as u8, sequence, step);
                } else {
                    c.pop(step);
                }
            }
        }
        c.drain();
    }

    #[test]
    fn ties_go_by_origin_then_by_each_origins_order() {
        // Whatever order the origins schedule in, their events of one instant come
        // origin by origin, each origin's in its own order.
        let orders: [&[usize]; 2] = [&[2, 0, 1, 0, 2, 1], &[1, 1, 0, 2, 2, 0]];
        let popped: Vec<Vec<(usize, u32)>> = orders
            .iter()
            .map(|order| {
                let mut q = EventQueue::with_origins(3);
                let mut count = [0u32; 3];
                for &origin in *order {
                    q.set_origin(origin);
                    q.schedule(SimTime::from_ps(7), (origin, count[origin]));
                    count[origin] += 1;
                }
                std::iter::from_fn(|| q.pop_until(SimTime::MAX).map(|(_, e)| e)).collect()
            })
            .collect();
        let expected = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)];
        assert_eq!(popped, [expected, expected]);
    }

    #[test]
    fn a_turn_is_taken_only_before_every_earlier_origin() {
        let mut q = EventQueue::with_origins(3);
        q.set_origin(1);
        q.schedule(SimTime::ZERO, 'a');
        q.set_origin(2);
        assert!(!q.nothing_before(0), "origin 1's event comes before origin 2's");
        q.set_origin(0);
        assert!(q.take_turn(0), "origin 0's comes first");
    }

    #[test]
    fn pop_until_respects_the_limit() {
        let mut q = EventQueue::new();
        q.schedule(SimTime::from_ps(10), 1);
        q.schedule(SimTime::from_ps(20), 2);
        assert_eq!(q.pop_until(SimTime::from_ps(15)), Some((SimTime::from_ps(10), 1)));
        assert_eq!(q.pop_until(SimTime::from_ps(15)), None);
        assert_eq!(q.peek_time(), Some(SimTime::from_ps(20)));
    }
}
