//! The ideal network's parameters: a fabric with no switches.

use crate::time::{Bandwidth, SimTime};

/// The ideal network: every message arrives `latency + size / bandwidth` after it is
/// injected, whatever else is travelling. It adds nothing a replayer does not model
/// itself (Dimemas's point-to-point model), so a co-simulation over it must reproduce
/// the replayer's own prediction: the first step of a calibration.
///
/// Rounding: the serialisation time is rounded up to the next picosecond, once per
/// message; the latency is exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct IdealParams {
    /// rate of every transfer, with no sharing; `None`: instantaneous (Dimemas's
    /// bandwidth 0)
    pub bandwidth: Option<Bandwidth>,
    /// added to every transfer \[ps\]
    pub latency: SimTime,
}

impl IdealParams {
    /// How long `bytes` take to cross: no time when instantaneous.
    pub fn transfer(&self, bytes: u64) -> SimTime {
        self.bandwidth.map_or(SimTime::ZERO, |b| b.serialization_time(bytes))
    }

    /// The longest the latency may be, and the transfer of the largest message
    /// (`u32::MAX` bytes) take: 2^62 ps (about 53 days) each, so that a message that
    /// enters by [`SimTime::LAST_INJECTION`] arrives before the clock ends.
    pub const LONGEST_DELAY: SimTime = SimTime::from_ps(1 << 62);
}
