//! Why a network cannot be built ([`BuildError`]), with the parameter at fault.

use crate::parameter::Parameter;
use crate::time::{SimTime, seconds_text};
use crate::topology::TopologyError;

/// Why a network cannot be built. Every variant names the parameter at fault (see
/// [`BuildError::parameter`]), so that a caller can say it in its own words: the flag or
/// the file line that set it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// the topology is invalid
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// the adapters cannot cut packets
    #[error("adapter.payload_bytes: a packet must carry at least one byte")]
    EmptyPayload,
    /// a packet's payload and header together do not fit in 32 bits
    #[error(
        "adapter.payload_bytes {payload_bytes} + adapter.header_bytes {header_bytes}: a packet's payload and header must add up to at most {} bytes",
        u32::MAX
    )]
    PacketTooLarge {
        /// largest payload of one packet \[bytes\]
        payload_bytes: u32,
        /// header of every packet \[bytes\]
        header_bytes: u32,
    },
    /// a time the parameters give is longer than the model's clock allows for it
    #[error(
        "{what} takes {}{}, longer than the {} the model allows for it (its clock counts 64-bit picoseconds, about 213 days)",
        if *took == SimTime::MAX { "more than " } else { "" },
        seconds_text(took.as_secs_f64()),
        seconds_text(limit.as_secs_f64())
    )]
    TooSlow {
        /// the parameter, and what it times
        what: Timed,
        /// how long it takes (saturated at [`SimTime::MAX`])
        took: SimTime,
        /// the most it may take: [`SimTime::LONGEST_STEP`], or
        /// [`IdealParams::LONGEST_DELAY`](crate::ideal::IdealParams::LONGEST_DELAY)
        limit: SimTime,
    },
    /// the wormhole switches' parameters do not work
    #[error("wormhole switches: {0}")]
    Wormhole(#[from] crate::switch::wormhole::error::WormholeError),
    /// the rails of a multi-rail network do not fit together
    #[error("rails: {0}")]
    Rails(#[from] crate::topology::multirail::RailsError),
    /// wormhole switches mixed with packet switches
    #[error("switch.kind: wormhole switches cannot share a network with output-queued or CIOQ switches")]
    MixedKinds,
    /// the network's records do not fit in memory
    #[error(
        "the network does not fit in memory: its {count} {what} take {:.1} GiB, which could not be allocated",
        *bytes as f64 / f64::from(1u32 << 30)
    )]
    TooLarge {
        /// what did not fit
        what: &'static str,
        /// how many of them
        count: usize,
        /// their size \[bytes\]
        bytes: u128,
    },
}

impl BuildError {
    /// The parameter at fault (`None`: the network as a whole, too large for memory).
    pub fn parameter(&self) -> Option<Parameter> {
        Some(match self {
            BuildError::Topology(_) => Parameter::Topology,
            BuildError::EmptyPayload | BuildError::PacketTooLarge { .. } => Parameter::PayloadBytes,
            BuildError::TooSlow { what, .. } => what.parameter(),
            BuildError::Wormhole(e) => e.parameter(),
            BuildError::Rails(_) => Parameter::Rails,
            BuildError::MixedKinds => Parameter::SwitchKind,
            BuildError::TooLarge { .. } => return None,
        })
    }
}

/// What takes too long, in a [`BuildError::TooSlow`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Timed {
    /// the ideal network's latency
    IdealLatency,
    /// the ideal network's transfer of its largest message
    IdealTransfer {
        /// the message \[bytes\]
        bytes: u64,
    },
    /// a switch's routing decision
    RoutingLatency,
    /// a cable's propagation
    Propagation {
        /// the cable's index
        cable: usize,
    },
    /// a packet's serialization on a cable
    Serialization {
        /// the cable's index
        cable: usize,
        /// the largest packet \[bytes\]
        bytes: u64,
    },
}

impl Timed {
    /// The parameter that sets the time.
    pub fn parameter(self) -> Parameter {
        match self {
            Timed::IdealLatency => Parameter::IdealLatency,
            Timed::IdealTransfer { .. } => Parameter::IdealBandwidth,
            Timed::RoutingLatency => Parameter::RoutingLatency,
            Timed::Propagation { .. } => Parameter::LinkLatency,
            Timed::Serialization { .. } => Parameter::LinkBandwidth,
        }
    }
}

impl std::fmt::Display for Timed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Timed::IdealLatency => write!(f, "ideal.latency"),
            Timed::IdealTransfer { bytes } => write!(f, "ideal.bandwidth: a message of {bytes} bytes"),
            Timed::RoutingLatency => write!(f, "switch.routing_latency"),
            Timed::Propagation { cable } => write!(f, "cables[{cable}].link.propagation"),
            Timed::Serialization { cable, bytes } => {
                write!(f, "cables[{cable}].link.bandwidth: a packet of {bytes} bytes")
            }
        }
    }
}

/// `took`, unless longer than `limit` ([`BuildError::TooSlow`], naming `what()`).
pub(crate) fn within(took: SimTime, limit: SimTime, what: Timed) -> Result<(), BuildError> {
    if took > limit {
        return Err(BuildError::TooSlow { what, took, limit });
    }
    Ok(())
}

/// An empty vector with room for `count` records, or [`BuildError::TooLarge`] instead of
/// the allocator's abort: a network just under the size limits may still not fit.
pub(crate) fn room_for<T>(count: usize, what: &'static str) -> Result<Vec<T>, BuildError> {
    let mut v = Vec::new();
    v.try_reserve_exact(count).map_err(|_| BuildError::TooLarge {
        what,
        count,
        bytes: count as u128 * size_of::<T>() as u128,
    })?;
    Ok(v)
}
