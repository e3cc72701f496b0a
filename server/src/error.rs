//! Why the server cannot run: its network or trace cannot be set up, or a run could not
//! go on.

use crate::report::Report;

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// the network description is invalid
    #[error("network: {0}")]
    Network(#[from] vesper_netmodels::BuildError),
    /// the network or its trace cannot be set up
    #[error(transparent)]
    Trace(#[from] TraceSetupError),
    /// the network cannot be split as asked
    #[error("{asked}: {error}")]
    Split {
        /// what asked for the split (`--partitions N`, `N MPI ranks`)
        asked: String,
        /// why not
        error: vesper_netmodels::partition::SplitError,
    },
    /// the run could not go on; the report of what it did until then
    #[error("{stopped}")]
    Stopped {
        /// why
        stopped: Stopped,
        /// the statistics up to the stop
        report: Box<Report>,
    },
    /// the simulation thread could not start or died
    #[error("simulation thread: {0}")]
    Thread(String),
}

/// Why a trace cannot be set up.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TraceSetupError(pub String);

/// Why the coordinator stopped a run before its clients finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Stopped {
    /// the model has work at its clock's last instant: times that ran past the clock
    /// stopped there, and nothing there can be reported as it happened
    #[error(
        "simulated time ran out: the network model has work at its last instant ({} ns, about 213 simulated \
         days; its clock counts 64-bit picoseconds) with {in_flight} message(s) in flight: the network is too \
         slow for this run (its bandwidth, latencies or load), or the run too long",
        vesper_netmodels::SimTime::MAX.as_ps() / vesper_netmodels::time::PS_PER_NS
    )]
    ClockRanOut {
        /// messages in the model
        in_flight: usize,
    },
}
