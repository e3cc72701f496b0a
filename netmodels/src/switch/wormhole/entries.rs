//! The packets in an input buffer, in arrival order.

use std::collections::VecDeque;

use super::Entry;

/// The packets in an input buffer, front first. The front packet, the one nearly every
/// event of the input reads, is held in place; the packets behind it, in a queue. On
/// large networks the input's record and its front packet then come in one load from
/// memory, not two in a row.
#[derive(Debug, Default)]
pub(super) struct Entries {
    front: Option<Entry>,
    rest: VecDeque<Entry>,
}

impl Entries {
    pub(super) fn len(&self) -> usize {
        usize::from(self.front.is_some()) + self.rest.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.front.is_none()
    }

    pub(super) fn front(&self) -> Option<&Entry> {
        self.front.as_ref()
    }

    pub(super) fn front_mut(&mut self) -> Option<&mut Entry> {
        self.front.as_mut()
    }

    pub(super) fn back(&self) -> Option<&Entry> {
        self.rest.back().or(self.front.as_ref())
    }

    pub(super) fn back_mut(&mut self) -> Option<&mut Entry> {
        match self.rest.back_mut() {
            Some(back) => Some(back),
            None => self.front.as_mut(),
        }
    }

    /// The `i`-th packet from the front.
    pub(super) fn get(&self, i: usize) -> Option<&Entry> {
        match i {
            0 => self.front.as_ref(),
            _ => self.rest.get(i - 1),
        }
    }

    pub(super) fn push_back(&mut self, entry: Entry) {
        if self.front.is_none() {
            self.front = Some(entry);
        } else {
            self.rest.push_back(entry);
        }
    }

    pub(super) fn pop_front(&mut self) -> Option<Entry> {
        let front = self.front.take();
        self.front = self.rest.pop_front();
        front
    }

    pub(super) fn pop_back(&mut self) -> Option<Entry> {
        self.rest.pop_back().or_else(|| self.front.take())
    }

    /// Front to back.
    pub(super) fn iter(&self) -> impl DoubleEndedIterator<Item = &Entry> {
        self.front.iter().chain(self.rest.iter())
    }

    /// From the `start`-th packet to the back, without a walk over those before it.
    pub(super) fn from(&self, start: usize) -> impl Iterator<Item = &Entry> {
        let front = self.front.iter().take(usize::from(start == 0));
        front.chain(self.rest.range(start.saturating_sub(1).min(self.rest.len())..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::wormhole::runs::Runs;
    use crate::time::SimTime;

    fn entry(packet: u32) -> Entry {
        Entry {
            packet,
            head_arrived: SimTime::ZERO,
            arrived: 0,
            departed: 0,
            route: None,
            hop: 0,
            arrivals: Runs::default(),
        }
    }

    #[test]
    fn behaves_like_a_deque() {
        let mut entries = Entries::default();
        let mut reference = VecDeque::new();
        let mut rng = crate::rng::Rng::new(3);
        let packets = |e: &Entries| e.iter().map(|e| e.packet).collect::<Vec<_>>();
        for step in 0..2_000u32 {
            match rng.below(4) {
                0 | 1 => {
                    entries.push_back(entry(step));
                    reference.push_back(step);
                }
                2 => assert_eq!(entries.pop_front().map(|e| e.packet), reference.pop_front()),
                _ => assert_eq!(entries.pop_back().map(|e| e.packet), reference.pop_back()),
            }
            assert_eq!(packets(&entries), reference.iter().copied().collect::<Vec<_>>());
            assert_eq!(entries.len(), reference.len());
            assert_eq!(entries.is_empty(), reference.is_empty());
            assert_eq!(entries.front().map(|e| e.packet), reference.front().copied());
            assert_eq!(entries.back().map(|e| e.packet), reference.back().copied());
            assert_eq!(entries.get(1).map(|e| e.packet), reference.get(1).copied());
            for start in 0..4 {
                let from: Vec<u32> = entries.from(start).map(|e| e.packet).collect();
                assert_eq!(from, reference.iter().skip(start).copied().collect::<Vec<_>>());
            }
            // The back is the one changed through `back_mut`.
            if let Some(back) = entries.back_mut() {
                back.arrived = step;
                assert_eq!(entries.iter().last().map(|e| e.arrived), Some(step));
            }
        }
    }
}
