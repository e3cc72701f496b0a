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
//! The crate is built in layers, each file using only its own layer and those below it
//! (`docs/layers.txt` declares them and a test holds the code to them; `docs/layout.md`
//! says where to add a switch kind or a topology):
//!
//! ```text
//!   beside:   trace/paraver (the Paraver writer), traffic (open-loop generators),
//!             stats, footprint (the memory a network takes, from its description)
//!   parallel: partition (partitioners; windows: partitions run on threads or MPI
//!             ranks), rails (multi-rail networks, each rail a network of its own)
//!   network:  fabric (the registry of fabrics: the enum a simulation holds and its
//!             dispatch), builder (NetworkBuilder: validate and freeze), simulation
//!             (the event loop), network (the `dyn Network` a coordinator drives)
//!   parts:    part (FabricPart: the one interface the network drives), and each
//!             fabric behind it with its own events: ideal, switch/packet (the
//!             output-queued and CIOQ switches, with output_queued and cioq),
//!             switch/wormhole (the flit-level fabric: build, fine, coarse, arbiter,
//!             deliver, split); adapter, message (messages and packets), event (what
//!             the queue holds: an injection or a fabric's own event), crossing (what
//!             partitions send each other), build_error, parameter
//!   topology: which devices exist, how cables join them, routes; the Shape trait
//!             (shape) and the shapes (xgft, torus, with their cuts), explicit routes,
//!             the rail policy of multi-rail networks
//!   hooks:    trace (the sink trait the parts report through, device selection, the
//!             trace checker, what a trace counted)
//!   ground:   ids, time, rng, slab, queue (the event queue), link
//! ```
//!
//! The parts read the topology's routes, so the topology lies below them. The trace
//! hooks lie below everything that reports through them.
//!
//! Nothing here knows about sockets, the wire protocol or wall-clock time: time is
//! [`SimTime`] (integer picoseconds), events are ordered by (time, sequence), and the
//! same inputs always give the same outputs.

pub mod adapter;
pub mod build_error;
pub mod builder;
pub(crate) mod crossing;
pub(crate) mod event;
pub(crate) mod fabric;
pub mod footprint;
pub mod ideal;
pub mod ids;
pub mod link;
pub mod message;
pub mod network;
pub mod parameter;
pub(crate) mod part;
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
    Arrangement, Cable, Dragonfly, DragonflyError, Endpoint, ExplicitError, ExplicitRoutes, MultipathPolicy, PathList,
    PatternRoutes, PhaseLoad, Routing, Topology, TopologyError, Torus, TorusError, Xgft, XgftError,
};
pub use trace::paraver::{
    BacklogCount, LinkBytes, MemoryOutput, NoOutput, ParaverOptions, TraceError, TraceOutput, TraceShape, TraceSummary,
    TracedNetwork,
};
pub use trace::select::{DeviceSelection, SelectError, TimeWindow};
pub use trace::{BufferSide, FlowSignal, LinkTraversal, NullSink, PortRef, RecordingSink, Source, TraceSink};
