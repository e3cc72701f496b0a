//! Statistics the model keeps as counters and histograms, never as logs.

use serde::Serialize;

use crate::partition::ranks::{Words, put_u32, put_u64, put_u128};

/// Values below `2^SUB_BITS` are counted exactly; above, each power of two is split
/// into `2^SUB_BITS` buckets, so a reported percentile is within 1/128 (0.8 %) of the
/// true value. Memory is fixed (about 60 KB) whatever the number of samples.
const SUB_BITS: u32 = 7;
const SUB_BUCKETS: usize = 1 << SUB_BITS;
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB_BUCKETS;

/// A log-linear histogram of `u64` samples with exact count, sum, min and max.
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

/// A summary of a histogram, in the samples' unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// number of samples
    pub count: u64,
    /// smallest sample (exact)
    pub min: u64,
    /// arithmetic mean (exact up to f64 rounding)
    pub mean: f64,
    /// median (within 0.8 %)
    pub p50: u64,
    /// 99th percentile (within 0.8 %)
    pub p99: u64,
    /// largest sample (exact)
    pub max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BUCKETS],
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

fn bucket_of(value: u64) -> usize {
    if value < SUB_BUCKETS as u64 {
        return value as usize;
    }
    let shift = 63 - value.leading_zeros() - SUB_BITS;
    (shift as usize + 1) * SUB_BUCKETS + ((value >> shift) as usize - SUB_BUCKETS)
}

/// The smallest and largest value that fall into `bucket`.
fn bucket_range(bucket: usize) -> (u64, u64) {
    if bucket < SUB_BUCKETS {
        return (bucket as u64, bucket as u64);
    }
    let shift = (bucket / SUB_BUCKETS - 1) as u32;
    let low = ((bucket % SUB_BUCKETS + SUB_BUCKETS) as u64) << shift;
    (low, low + ((1u64 << shift) - 1))
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one sample.
    pub fn record(&mut self, value: u64) {
        self.counts[bucket_of(value)] += 1;
        self.count += 1;
        self.sum += u128::from(value);
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Appends the histogram to `out` as words (its nonzero buckets only), for another
    /// rank of the same simulation to read back with [`Histogram::from_words`].
    pub fn put_words(&self, out: &mut Vec<u8>) {
        let nonzero = self.counts.iter().filter(|&&c| c != 0).count();
        put_u64(out, nonzero as u64);
        for (bucket, &c) in self.counts.iter().enumerate().filter(|(_, c)| **c != 0) {
            put_u32(out, bucket as u32);
            put_u64(out, c);
        }
        put_u64(out, self.count);
        put_u128(out, self.sum);
        put_u64(out, self.min);
        put_u64(out, self.max);
    }

    /// The histogram [`Histogram::put_words`] wrote.
    pub fn from_words(words: &mut Words<'_>) -> Histogram {
        let mut h = Histogram::new();
        for _ in 0..words.u64() {
            let bucket = words.u32() as usize;
            let c = words.u64();
            if let Some(slot) = h.counts.get_mut(bucket) {
                *slot = c;
            }
        }
        h.count = words.u64();
        h.sum = words.u128();
        h.min = words.u64();
        h.max = words.u64();
        h
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The nearest-rank percentile `p` (0 < p ≤ 100), the middle of its bucket clamped
    /// to the exact min and max; `None` when empty.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((p / 100.0 * self.count as f64).ceil() as u64).clamp(1, self.count);
        if rank == self.count {
            return Some(self.max);
        }
        let mut seen = 0;
        for (bucket, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let (low, high) = bucket_range(bucket);
                let middle = low + (high - low) / 2;
                return Some(middle.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// Count, min, mean, p50, p99 and max; `None` when empty.
    pub fn summary(&self) -> Option<Summary> {
        Some(Summary {
            count: self.count,
            min: (self.count > 0).then_some(self.min)?,
            mean: self.sum as f64 / self.count as f64,
            p50: self.percentile(50.0)?,
            p99: self.percentile(99.0)?,
            max: self.max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_once() {
        for value in (0..5000).chain([u64::MAX, u64::MAX / 3, 1 << 40, (1 << 40) - 1]) {
            let (low, high) = bucket_range(bucket_of(value));
            assert!(low <= value && value <= high, "{value} not in [{low}, {high}]");
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn small_values_are_exact() {
        let mut h = Histogram::new();
        for v in 1..=100 {
            h.record(v);
        }
        let s = h.summary().expect("samples");
        assert_eq!((s.count, s.min, s.p50, s.p99, s.max), (100, 1, 50, 99, 100));
        assert!((s.mean - 50.5).abs() < 1e-9);
    }

    #[test]
    fn histograms_travel_whole() {
        let mut h = Histogram::new();
        for v in [0, 3, 3, 999, 1 << 40, u64::MAX] {
            h.record(v);
        }
        let mut bytes = Vec::new();
        h.put_words(&mut bytes);
        Histogram::new().put_words(&mut bytes);
        let mut words = Words::new(&bytes);
        let back = Histogram::from_words(&mut words);
        assert_eq!(
            (back.counts.clone(), back.count, back.sum),
            (h.counts.clone(), h.count, h.sum)
        );
        assert_eq!(back.summary(), h.summary());
        let empty = Histogram::from_words(&mut words);
        assert_eq!((empty.count, empty.min, empty.max), (0, u64::MAX, 0));
        assert!(words.is_empty());
    }

    #[test]
    fn large_values_are_within_the_precision() {
        let mut h = Histogram::new();
        for v in 0..10_000u64 {
            h.record(1_000_000 + v * 1000);
        }
        let p50 = h.percentile(50.0).expect("samples") as f64;
        let exact = 1_000_000.0 + 4999.0 * 1000.0;
        assert!((p50 - exact).abs() / exact < 1.0 / 128.0, "{p50} vs {exact}");
        assert_eq!(h.percentile(100.0), Some(1_000_000 + 9999 * 1000));
        assert_eq!(Histogram::new().summary(), None);
    }
}
