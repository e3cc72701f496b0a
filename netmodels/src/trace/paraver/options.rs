//! How a trace is written: [`ParaverOptions`], and the header's date unless told
//! otherwise ([`DEFAULT_DATE`]).

use super::topology::TraceShape;
use crate::time::SimTime;
use crate::trace::select::{DeviceSelection, TimeWindow};
use crate::trace::summary::BacklogCount;

/// The header's date unless told otherwise: fixed, so that traces are reproducible.
pub const DEFAULT_DATE: &str = "01/01/2026 at 00:00";

/// How the trace is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParaverOptions {
    /// size of one backlog level \[bytes\], at least 1
    pub quantum_bytes: u64,
    /// which buffers count
    pub backlog: BacklogCount,
    /// also one communication record per message between its hosts
    pub end_to_end: bool,
    /// the header's `DD/MM/YYYY at HH:MM`
    pub date: String,
    /// which devices are traced
    pub devices: DeviceSelection,
    /// which part of the run is traced
    pub window: TimeWindow,
    /// states are cut at multiples of this (bounds the reorder window) \[ps\]
    pub state_split: SimTime,
    /// each rail's shape, for the topology text (a rail not listed: the shape its
    /// routing shows, [`TraceShape::of`])
    pub shapes: Vec<TraceShape>,
}

impl Default for ParaverOptions {
    fn default() -> Self {
        ParaverOptions {
            quantum_bytes: 1024,
            backlog: BacklogCount::Both,
            end_to_end: false,
            date: DEFAULT_DATE.to_string(),
            devices: DeviceSelection::all(),
            window: TimeWindow::default(),
            state_split: SimTime::from_ns(100_000),
            shapes: Vec::new(),
        }
    }
}
