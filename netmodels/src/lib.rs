//! vesper's network models: a deterministic discrete-event engine and the components
//! of an interconnect (adapters, links, switches), arranged by a topology.
//!
//! ```text
//!   NetworkBuilder (topology, switch and link parameters)
//!        │ build()  (validation errors name the field and the rule)
//!        ▼
//!   Simulation ── inject(at, MessageSpec) ──▶ event loop ──▶ Delivery (arrival, first byte sent)
//! ```
//!
//! Where things are: [`simulation`] (the builder, the event loop, the packet engine),
//! [`partition`] (which partition of the parallel engine simulates each device),
//! [`switch`] (every switch model: `output_queued`, `cioq`, `wormhole`), [`topology`]
//! (topologies and routing), [`adapter`], [`link`], [`trace`] (trace sinks, the
//! Paraver writer), [`traffic`] (open-loop traffic), [`stats`], [`footprint`] (the memory
//! a network takes, counted from its description).
//!
//! Nothing here knows about sockets, the wire protocol or wall-clock time: time is
//! [`SimTime`] (integer picoseconds), events are ordered by (time, sequence), and the
//! same inputs always give the same outputs.

pub mod adapter;
pub mod build_error;
pub mod builder;
pub(crate) mod crossing;
pub(crate) mod event;
pub mod footprint;
pub mod ideal;
pub mod ids;
pub mod link;
pub mod message;
pub mod network;
pub mod parameter;
pub mod partition;
pub mod queue;
pub mod rails;
pub mod rng;
pub mod simulation;
pub mod slab;
pub mod stats;
pub mod switch;
pub mod time;
pub mod topology;
pub mod trace;
pub mod traffic;

pub use adapter::{AdapterParams, Interleave};
pub use build_error::{BuildError, Timed};
pub use builder::NetworkBuilder;
pub use ideal::IdealParams;
pub use ids::{Device, HostId, MessageId, PortId, SwitchId};
pub use link::LinkParams;
pub use message::{Delivery, InjectError, MessageSpec};
pub use network::Network;
pub use parameter::Parameter;
pub use rails::MultiRail;
pub use simulation::Simulation;
pub use switch::wormhole::WormholeError;
pub use switch::{Arbitration, CioqParams, Granularity, InitialPointer, SwitchKind, SwitchParams, WormholeParams};
pub use time::{Bandwidth, SimTime, WireTimeError};
pub use topology::multirail::{RailPolicy, RailsError};
pub use topology::{
    Cable, Endpoint, ExplicitError, ExplicitRoutes, MultipathPolicy, PathList, PatternRoutes, PhaseLoad, Routing,
    Topology, TopologyError, Torus, TorusError, Xgft, XgftError,
};
pub use trace::paraver::{
    BacklogCount, LinkBytes, MemoryOutput, NoOutput, ParaverOptions, TraceError, TraceOutput, TraceShape, TraceSummary,
    TracedNetwork,
};
pub use trace::select::{DeviceSelection, SelectError, TimeWindow};
pub use trace::{BufferSide, FlowSignal, LinkTraversal, NullSink, PortRef, RecordingSink, Source, TraceSink};
