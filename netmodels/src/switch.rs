//! Switch models. A switch kind combines three separate questions: where may a packet
//! go (the topology's route table), is there room downstream (flow control), and who
//! wins an output (arbitration).
//!
//! The model here is the **output-queued crossbar**: a message's head is routed after
//! the routing latency and joins the FIFO queue of its output port; the output is never
//! blocked by other inputs (unbounded output buffers, ideal internal speedup), so the
//! only contention is for the output link itself. Transmission is cut-through: the
//! output may start before the tail has arrived, but never finishes before it.
//!
//! ```text
//!   in p0 ──▶ route (latency) ──▶ [queue] out p0 ──▶
//!   in p1 ──▶ route (latency) ──▶ [queue] out p1 ──▶
//! ```
//!
//! Wormhole switches with stop/go flow control and CIOQ switches come with the
//! detailed-models issue, behind the same `Simulation` interface.

use crate::time::SimTime;

/// Default routing decision time of a Myrinet Xbar32-class switch.
pub const DEFAULT_ROUTING_LATENCY: SimTime = SimTime::from_ns(100);

/// Parameters of the output-queued switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SwitchParams {
    /// time from a head's arrival at an input to its request at the output [ps]
    pub routing_latency: SimTime,
}

impl Default for SwitchParams {
    fn default() -> Self {
        SwitchParams {
            routing_latency: DEFAULT_ROUTING_LATENCY,
        }
    }
}
