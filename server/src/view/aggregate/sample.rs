//! A bounded sample of timed records (a link's messages, a port's events): in each
//! group of [`GROUP_BINS`] bins of the time axis, the first `per_group` records by
//! (time, tie-break). The rest are counted in the owner's bins, not kept.
//!
//! "The first by key" is a choice that does not depend on the order the records come
//! in, and it survives the axis widening: the first `k` of a widened group are the
//! first `k` of its two halves' first `k`. So a sample kept as a stream grows equals the
//! sample of the finished trace, as the bins do.

use super::TimeAxis;

/// Bins per group of a sample.
pub const GROUP_BINS: usize = 4;

/// What a sample orders its records by: their time \[ns\] (which places them in a
/// bin), then a tie-break.
pub trait Timed {
    /// (time \[ns\], tie-break)
    fn key(&self) -> (u64, u64);
}

/// At most `per_group` records per group of [`GROUP_BINS`] bins, in key order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample<T> {
    items: Vec<T>,
}

impl<T> Default for Sample<T> {
    fn default() -> Self {
        Sample { items: Vec::new() }
    }
}

fn group(axis: TimeAxis, t_ns: u64) -> usize {
    axis.bin(t_ns) / GROUP_BINS
}

impl<T: Timed> Sample<T> {
    /// Keeps `item` if it is among the first `per_group` of its group (dropping the
    /// group's last one to make room); whether it was kept.
    pub fn insert(&mut self, axis: TimeAxis, per_group: usize, item: T) -> bool {
        let key = item.key();
        let g = group(axis, key.0);
        let lo = self.items.partition_point(|i| group(axis, i.key().0) < g);
        let hi = self.items.partition_point(|i| group(axis, i.key().0) <= g);
        let at = lo + self.items[lo..hi].partition_point(|i| i.key() <= key);
        if hi - lo < per_group {
            self.items.insert(at, item);
            true
        } else if at < hi {
            self.items.insert(at, item);
            self.items.remove(hi);
            true
        } else {
            false
        }
    }

    /// Drops what the axis, just widened, no longer keeps: each group's records beyond
    /// its first `per_group`.
    pub fn widen(&mut self, axis: TimeAxis, per_group: usize) {
        let mut current = usize::MAX;
        let mut in_group = 0;
        self.items.retain(|i| {
            let g = group(axis, i.key().0);
            if g != current {
                (current, in_group) = (g, 0);
            }
            in_group += 1;
            in_group <= per_group
        });
    }

    /// The records whose time is in `[from_ns, to_ns)`, in key order.
    pub fn within(&self, from_ns: u64, to_ns: u64) -> &[T] {
        let lo = self.items.partition_point(|i| i.key().0 < from_ns);
        let hi = self.items.partition_point(|i| i.key().0 < to_ns);
        &self.items[lo..hi.max(lo)]
    }

    /// The records kept, in key order.
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// Records kept.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether none are kept.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}
