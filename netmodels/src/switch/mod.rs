//! Switch models, every kind in a module of its own here. A switch kind combines three
//! separate questions: where may a packet go (the topology's route table), is there
//! room downstream (flow control), and who wins an output (arbitration).
//!
//! Kinds ([`SwitchKind`]):
//!
//! - **output-queued** (ideal, speedup N), in [`packet::output_queued`]: a packet's head is routed after the routing
//!   latency and joins the FIFO queue of its output port; the output is never blocked
//!   by other inputs (unbounded output buffers), so the only contention is for the
//!   output link itself. Transmission is cut-through at packet level: the output may
//!   start before the tail has arrived, but never finishes before it.
//!
//!   ```text
//!     in p0 ──▶ route (latency) ──▶ [queue] out p0 ──▶
//!     in p1 ──▶ route (latency) ──▶ [queue] out p1 ──▶
//!   ```
//!
//! - **CIOQ** (combined input-output queued), in [`packet::cioq`]: packets wait in input
//!   queues (one FIFO, or one virtual output queue per output), cross the crossbar at
//!   `speedup` × the link rate when both their input and their output crossbar ports
//!   are free, and wait again in the output queue for the link.
//!
//! - **wormhole** (Myrinet-like), in [`crate::switch::wormhole`]: flits, small input (slack)
//!   buffers with stop/go flow control, an output held by one worm from its head to its
//!   tail, round-robin or oldest-first output arbitration; optionally bubble flow
//!   control (virtual cut-through admission) for the rings of tori.
//!
//! The output-queued and CIOQ switches move whole packets: they share the packet engine
//! of [`packet`] (adapters, packets moving from device to device, its events), and their
//! own parts are `impl` blocks of it in their modules, so one network may mix them
//! (levels of a tree, types of a map). Their queues keep waiting packets as runs
//! (module `waiting`): memory grows with the messages that wait, not with their bytes.
//! The wormhole fabric is a model of its own, flit by flit. Each fabric is behind the
//! one interface the network drives (`crate::part::FabricPart`), with its events in a
//! variant of the network's `Event`, and named in the registry `fabrics!`
//! (`crate::fabric`).

use crate::time::SimTime;

pub mod packet;
pub(crate) mod waiting;
pub mod wormhole;

/// Default routing decision time of a Myrinet Xbar32-class switch.
pub const DEFAULT_ROUTING_LATENCY: SimTime = SimTime::from_ns(100);

/// Parameters of the switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SwitchParams {
    /// time from a head's arrival at an input to its request at the output \[ps\]
    pub routing_latency: SimTime,
    /// what kind of switch
    pub kind: SwitchKind,
}

impl Default for SwitchParams {
    fn default() -> Self {
        SwitchParams {
            routing_latency: DEFAULT_ROUTING_LATENCY,
            kind: SwitchKind::OutputQueued,
        }
    }
}

/// The switch architecture (one kind for every switch of a network).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum SwitchKind {
    /// ideal output-queued crossbar, packet-level cut-through
    #[default]
    OutputQueued,
    /// combined input-output queued switch
    Cioq(CioqParams),
    /// Myrinet-like wormhole switch with stop/go flow control
    Wormhole(WormholeParams),
}

/// Parameters of CIOQ switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CioqParams {
    /// the crossbar runs this many times faster than a link (at least 1)
    pub speedup: u32,
    /// one queue per output at every input (no head-of-line blocking), instead of one
    /// FIFO per input
    pub virtual_output_queues: bool,
}

impl Default for CioqParams {
    fn default() -> Self {
        CioqParams {
            speedup: 1,
            virtual_output_queues: false,
        }
    }
}

/// Default flow-control unit: 8 bytes.
pub const DEFAULT_FLIT_BYTES: u32 = 8;

/// Default input (slack) buffer of a wormhole switch port: 512 bytes.
pub const DEFAULT_BUFFER_BYTES: u32 = 512;

/// Parameters of wormhole switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct WormholeParams {
    /// the flow-control unit \[bytes\]: links carry whole flits
    pub flit_bytes: u32,
    /// input (slack) buffer of every switch port \[bytes\]
    pub buffer_bytes: u32,
    /// who wins an output that several inputs want
    pub arbitration: Arbitration,
    /// how finely the model steps (same results either way)
    pub granularity: Granularity,
    /// bubble flow control: outputs admit whole packets only (virtual cut-through), and
    /// a packet entering a torus ring needs room for two; required by dimension-order
    /// routing on a torus with rings. Needs `buffer_bytes` to hold two of the adapters'
    /// largest packets below the STOP threshold (see [`crate::switch::wormhole`])
    pub bubble: bool,
}

/// How the wormhole model steps through time. Both give identical results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Granularity {
    /// unobstructed runs of flits are computed in closed form, with events only at
    /// packet heads and tails, flow-control thresholds and stalls; used whenever every
    /// link has the same rate, the routing takes some time (with none, a head freed by
    /// the tail before it is routed and granted at that instant in the order the fine
    /// path's events happen to be queued, which the closed forms do not follow), and no
    /// trace is written (traces need every flit)
    #[default]
    Coarse,
    /// one event per flit per hop
    Fine,
}

impl Default for WormholeParams {
    fn default() -> Self {
        WormholeParams {
            flit_bytes: DEFAULT_FLIT_BYTES,
            buffer_bytes: DEFAULT_BUFFER_BYTES,
            arbitration: Arbitration::RoundRobin {
                initial: InitialPointer::Random { seed: 1 },
            },
            granularity: Granularity::Coarse,
            bubble: false,
        }
    }
}

/// Output arbitration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Arbitration {
    /// the first requesting input at or after the pointer wins; the pointer then moves
    /// just past the winner
    RoundRobin {
        /// where every output's pointer starts
        initial: InitialPointer,
    },
    /// the input that has waited longest wins (ties: lowest port)
    OldestFirst,
}

/// In the command line's words: `round-robin (pointers random, seed 1)`, `oldest-first`.
impl std::fmt::Display for Arbitration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arbitration::RoundRobin {
                initial: InitialPointer::Random { seed },
            } => write!(f, "round-robin (pointers random, seed {seed})"),
            Arbitration::RoundRobin {
                initial: InitialPointer::Fixed(port),
            } => write!(f, "round-robin (pointers at port {port})"),
            Arbitration::OldestFirst => f.write_str("oldest-first"),
        }
    }
}

/// Where round-robin pointers start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum InitialPointer {
    /// every output's pointer at this input port (modulo the port count)
    Fixed(u32),
    /// each output's pointer drawn from a generator with this seed
    Random {
        /// the seed
        seed: u64,
    },
}

/// The distance from `from` to `port` going up and wrapping round `ports` (both below
/// it), for round-robin pointers: a subtraction, not a division, as it runs for every
/// candidate of an arbitration.
pub(crate) fn rotated(port: u32, from: u32, ports: u32) -> u32 {
    if port >= from { port - from } else { port + ports - from }
}
