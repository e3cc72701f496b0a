//! Why wormhole switches cannot be built with their parameters.

use crate::parameter::Parameter;
use crate::time::SimTime;

/// Why wormhole switches cannot be built with their parameters; each names the field at
/// fault ([`WormholeError::parameter`]) and carries the values that break the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WormholeError {
    /// flits of no bytes
    #[error("flit_bytes: a flit must hold at least one byte")]
    EmptyFlit,
    /// flits larger than a packet, which every packet would be padded to
    #[error(
        "flit_bytes: flits of {flit_bytes} bytes are larger than the largest packet ({payload_bytes} + \
         {header_bytes} bytes), which every packet would be padded to; use flits of at most {} bytes",
        u64::from(*payload_bytes) + u64::from(*header_bytes)
    )]
    FlitLargerThanPackets {
        /// the flit \[bytes\]
        flit_bytes: u32,
        /// the adapter's payload \[bytes\]
        payload_bytes: u32,
        /// the adapter's header \[bytes\]
        header_bytes: u32,
    },
    /// input buffers too small for stop/go to cover a cable's round trip
    #[error(
        "buffer_bytes: {buffer_bytes} bytes cannot cover the round trip of a {propagation} cable at {flit_time} per \
         flit; at least {needed_bytes} bytes are needed"
    )]
    BufferTooSmall {
        /// the buffer \[bytes\]
        buffer_bytes: u32,
        /// the cable's propagation
        propagation: SimTime,
        /// a flit's serialization on the cable
        flit_time: SimTime,
        /// the least buffer that works \[bytes\]
        needed_bytes: u64,
    },
    /// input buffers too small for bubble flow control's two packets
    #[error(
        "buffer_bytes: bubble flow control needs room for two packets of {packet_bytes} bytes (the adapter's \
         payload and header, in whole flits) below the STOP threshold; {buffer_bytes} bytes leave room for {room}, \
         at least {needed_bytes} bytes are needed"
    )]
    BubbleTooSmall {
        /// the largest packet, in whole flits \[bytes\]
        packet_bytes: u64,
        /// the buffer \[bytes\]
        buffer_bytes: u32,
        /// the packets that fit below the STOP threshold
        room: u64,
        /// the least buffer that works \[bytes\]
        needed_bytes: u64,
    },
    /// rings without bubble flow control
    #[error(
        "bubble: dimension-order routing around the rings of a torus deadlocks wormhole switches, which have no \
         virtual channels; turn bubble flow control on (or use a mesh)"
    )]
    RingsNeedBubble,
    /// a round-robin pointer's first port beyond every switch's ports
    #[error(
        "initial_pointer: port {port} is beyond the largest switch's ports (0 to {}); give a port below {ports}, or \
         \"random\"",
        ports - 1
    )]
    PointerBeyondPorts {
        /// the port given
        port: u32,
        /// the largest switch's ports
        ports: u32,
    },
    /// switches of one network given different wormhole parameters
    #[error("one set of wormhole parameters for the whole network")]
    OneParameterSet,
}

impl WormholeError {
    /// The parameter at fault.
    pub fn parameter(&self) -> Parameter {
        match self {
            WormholeError::EmptyFlit | WormholeError::FlitLargerThanPackets { .. } => Parameter::FlitBytes,
            WormholeError::BufferTooSmall { .. } | WormholeError::BubbleTooSmall { .. } => Parameter::BufferBytes,
            WormholeError::RingsNeedBubble => Parameter::Bubble,
            WormholeError::PointerBeyondPorts { .. } => Parameter::InitialPointer,
            WormholeError::OneParameterSet => Parameter::SwitchKind,
        }
    }
}
