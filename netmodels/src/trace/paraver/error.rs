//! Why a trace cannot be set up or written: [`TraceError`].

use std::io;

use crate::build_error::BuildError;
use crate::partition::SplitError;

/// Why a trace cannot be set up or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// the network itself is invalid
    #[error(transparent)]
    Build(#[from] BuildError),
    /// the device selection names no device of the network
    #[error(
        "the device selection matches no device of the network (hosts are named host0…, switches sw0…; {switches} \
         switches{})",
        if *multi_rail { "; rails prefix them with r0., r1., …" } else { "" }
    )]
    NoDevice {
        /// the network's switches
        switches: usize,
        /// whether its devices' names carry their rail
        multi_rail: bool,
    },
    /// a backlog quantum of no bytes
    #[error("the backlog quantum must be at least 1 byte")]
    ZeroQuantum,
    /// the network cannot be split as asked
    #[error(transparent)]
    Split(SplitError),
    /// the output failed
    #[error("{0}")]
    Io(#[from] io::Error),
}
