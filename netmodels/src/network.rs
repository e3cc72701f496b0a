//! [`Network`]: what a co-simulation coordinator needs of a network, object-safe, so
//! that it can hold a traced or an untraced network alike (`Box<dyn Network + Send>`).
//!
//! ```text
//!   coordinator ──dyn Network──▶ MultiRail<NullSink>            (tracing off)
//!                           └──▶ TracedNetwork (MultiRail<ParaverSink> + writer)
//! ```
//!
//! One dynamic call per injection or synchronisation step; the event loop inside stays
//! monomorphic, so the null sink still compiles to nothing.

use std::io;

use crate::message::{Delivery, InjectError, MessageSpec};
use crate::time::SimTime;
use crate::trace::summary::TraceSummary;

/// A network a coordinator drives (see [`MultiRail`](crate::rails::MultiRail) for the meaning of each call).
pub trait Network: std::fmt::Debug {
    /// Number of hosts.
    fn hosts(&self) -> u32;

    /// The simulation clock: no injection may come before it.
    fn now(&self) -> SimTime;

    /// Time of the next pending event, if any.
    fn next_event_time(&self) -> Option<SimTime>;

    /// A time `h ≥ t` such that no message injected at `t` or later can change any
    /// delivery at or before `h` (see [`Simulation::safe_horizon`](crate::Simulation::safe_horizon)).
    fn safe_horizon(&self, t: SimTime) -> SimTime;

    /// Appends to `out` the deliveries no message injected at `since` or later can
    /// change, in delivery order (see
    /// [`Simulation::final_deliveries`](crate::Simulation::final_deliveries)).
    fn final_deliveries(&mut self, since: SimTime, out: &mut Vec<Delivery>);

    /// Events processed so far.
    fn events_processed(&self) -> u64;

    /// Messages injected and not yet delivered.
    fn in_flight(&self) -> usize;

    /// Hands a message to its source host at `at` (not before [`Network::now`]).
    fn inject(&mut self, at: SimTime, spec: MessageSpec) -> Result<(), InjectError>;

    /// Moves the clock to `time` when no event is pending before it.
    fn advance_clock(&mut self, time: SimTime);

    /// Processes every event at or before `limit`, appending completed messages to
    /// `deliveries` in completion order.
    fn run_until(&mut self, limit: SimTime, deliveries: &mut Vec<Delivery>);

    /// Ends the trace, if the network writes one: writes what is left and the trace's
    /// other files. Later calls do nothing and return `Ok(None)`.
    fn finish_trace(&mut self) -> io::Result<Option<TraceSummary>> {
        Ok(None)
    }
}
