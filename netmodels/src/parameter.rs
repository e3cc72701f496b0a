//! The parameters of a network's description, as a build error names them.

/// A parameter of a network's description, as a [`BuildError`](crate::build_error::BuildError) names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Parameter {
    /// [`AdapterParams::payload_bytes`](crate::adapter::AdapterParams::payload_bytes)
    PayloadBytes,
    /// [`SwitchParams::routing_latency`](crate::switch::SwitchParams::routing_latency)
    RoutingLatency,
    /// [`SwitchParams::kind`](crate::switch::SwitchParams::kind)
    SwitchKind,
    /// [`LinkParams::propagation`](crate::link::LinkParams::propagation)
    LinkLatency,
    /// [`LinkParams::bandwidth`](crate::link::LinkParams::bandwidth)
    LinkBandwidth,
    /// [`IdealParams::latency`](crate::ideal::IdealParams::latency)
    IdealLatency,
    /// [`IdealParams::bandwidth`](crate::ideal::IdealParams::bandwidth)
    IdealBandwidth,
    /// [`WormholeParams::flit_bytes`](crate::WormholeParams::flit_bytes)
    FlitBytes,
    /// [`WormholeParams::buffer_bytes`](crate::WormholeParams::buffer_bytes)
    BufferBytes,
    /// [`WormholeParams::bubble`](crate::WormholeParams::bubble)
    Bubble,
    /// the round-robin arbiters' first port ([`InitialPointer`](crate::InitialPointer))
    InitialPointer,
    /// the rails of a multi-rail network
    Rails,
    /// the topology (its error names the part)
    Topology,
}
