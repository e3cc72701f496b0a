//! The network's Paraver trace (`shared/spec/formats.md` §1; seed 004, §4.2 and its
//! Table 1): every adapter and every switch is a Paraver task, each of its ports a
//! thread, all in one application.
//!
//! ```text
//!   Simulation ─hooks─▶ ParaverSink (one per rail)         ParaverWriter
//!                        records ─▶ reorder window ──────▶ merge by (time, kind, thread)
//!                        (held back while something        ─▶ TraceOutput: .prv body,
//!                         may still come earlier)             then header, .pcf, .row
//! ```
//!
//! Records (times in integer ns, rounded down from the model's picoseconds):
//! - state: the backlog of a port, quantized: level `k ≥ 1` means
//!   `(k − 1)·quantum < bytes ≤ k·quantum` (capped at [`MAX_LEVEL`]); an empty port has
//!   no state record. Input buffers, output queues or both are counted
//!   ([`BacklogCount`]). A state is written in pieces that end at multiples of
//!   `state_split` (Paraver allows consecutive records of one state), which bounds the
//!   reorder window; the cuts do not depend on when the clock passed them (which
//!   differs from partition to partition of a split network);
//! - event: flow control sent ([`FLOW_CONTROL_SENT`]) and received
//!   ([`FLOW_CONTROL_RECEIVED`]), head-of-line blocking ([`HOL_BLOCKING`]) and segment
//!   (packet) transmission ([`SEGMENT`], with [`SEGMENT_MESSAGE`] and [`SEGMENT_NUMBER`]
//!   in the same record);
//! - communication: one per message per link, sender = the transmitting port, receiver =
//!   the peer port; logical send = the sender's device got the message's first byte,
//!   physical send = the first byte left, logical receive = the first byte arrived,
//!   physical receive = the last byte arrived; size = the message's bytes; tag = the
//!   message's number (on `R` rails, `(n − 1)·R + r + 1` for message `n` of rail `r`).
//!   With `end_to_end`, also one per message from the source host's port to the
//!   destination host's: injected, first byte sent, first byte in, last byte in.
//!
//! Ordering: records come out sorted by time, then events before states before
//! communications, then by thread, then in the order the model reported them (but
//! end-to-end communications: after the thread's others of their instant, by message
//! number, since they are reported where a message ends). The
//! model reports a communication when the message's last byte starts on the link and a
//! state when it ends, after later records: each sink keeps its records until nothing
//! earlier can come (the *watermark*: the clock, the oldest open state, the oldest
//! message whose next link record is pending). Memory therefore depends on how long a
//! state or a message stays open, not on the length of the run.
//!
//! Split networks ([`crate::partition`], [`TracedNetwork::build_split`]): one sink per
//! partition, merged like rails; every record of a port comes from its device's
//! partition, so the merge gives the network whole's trace. On MPI ranks
//! ([`TracedNetwork::build_on_ranks`]) each writing step is collective: the least
//! watermark of every rank's sinks (an all-reduce), then every rank's records below it
//! to rank 0 (an all-to-all), which merges and writes them.
//!
//! Multi-rail networks: one trace for all rails; rail `r`'s devices are named
//! `r{r}.host{h}` and `r{r}.sw{s}` (a host's adapter on each rail is a task of its own).
//! A single network's are `host{h}` and `sw{s}`.

mod error;
mod layout;
mod options;
mod output;
mod record;
mod sink;
pub mod topology;
mod traced;
mod writer;

pub use crate::trace::summary::{BacklogCount, LinkBytes, TraceSummary};
pub use error::TraceError;
pub use layout::Layout;
pub use options::{DEFAULT_DATE, ParaverOptions};
pub use output::{MemoryOutput, NoOutput, TraceOutput};
pub use record::{
    FLOW_CONTROL_RECEIVED, FLOW_CONTROL_SENT, HOL_BLOCKING, MAX_LEVEL, ROOM_WAIT, SEGMENT, SEGMENT_MESSAGE,
    SEGMENT_NUMBER,
};
pub use sink::ParaverSink;
pub use topology::{TOPOLOGY_VERSION, TraceShape};
pub use traced::TracedNetwork;
pub use writer::ParaverWriter;

#[cfg(test)]
mod tests;
