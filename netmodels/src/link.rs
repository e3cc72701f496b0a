//! Links: full-duplex cables, each direction a channel of its own.
//!
//! A link does not run: the transmitting port schedules the arrival of a message's head
//! at the far end after the propagation delay, and of its tail after serialisation plus
//! propagation.

use crate::time::{Bandwidth, SimTime};

/// Default link rate: 2 Gb/s per direction (Myrinet-2000), 250 bytes/µs.
pub const DEFAULT_BANDWIDTH: Bandwidth = match Bandwidth::from_bytes_per_second(250_000_000) {
    Some(b) => b,
    None => panic!("non-zero"),
};

/// Default cable: 5 m at 5 ns/m.
pub const DEFAULT_PROPAGATION: SimTime = SimTime::from_ns(25);

/// The physical parameters of one cable (both directions alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct LinkParams {
    /// rate of each direction
    pub bandwidth: Bandwidth,
    /// propagation delay of the cable \[ps\]
    pub propagation: SimTime,
}

impl Default for LinkParams {
    fn default() -> Self {
        LinkParams {
            bandwidth: DEFAULT_BANDWIDTH,
            propagation: DEFAULT_PROPAGATION,
        }
    }
}
