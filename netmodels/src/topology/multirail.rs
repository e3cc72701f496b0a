//! How a multi-rail network chooses the rail of every message ([`RailPolicy`]), and
//! why rails may not fit together ([`RailsError`]). The rails themselves, each a
//! network of its own, run side by side in [`crate::rails`].

/// How a host's router picks the rail of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum RailPolicy {
    /// each source host uses its rails in turn
    #[default]
    RoundRobin,
    /// rail `dst mod N`: all the traffic to one host on one rail
    ByDestination,
    /// messages below `bytes` on rail 0; larger ones round-robin over the other rails
    /// (on rail 0 too when there is only one)
    SizeThreshold {
        /// the smallest size that leaves rail 0 \[bytes\]
        bytes: u32,
    },
    /// every message split over all rails, part `i` of `⌈size / N⌉` or `⌊size / N⌋`
    /// bytes on rail `i`; empty parts are not sent
    Striped,
}

/// In the command line's words: `round-robin`, `by-destination`,
/// `size-threshold (4096 B)`, `striped`.
impl std::fmt::Display for RailPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RailPolicy::RoundRobin => f.write_str("round-robin"),
            RailPolicy::ByDestination => f.write_str("by-destination"),
            RailPolicy::SizeThreshold { bytes } => write!(f, "size-threshold ({bytes} B)"),
            RailPolicy::Striped => f.write_str("striped"),
        }
    }
}

/// Why rails cannot make one multi-rail network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RailsError {
    /// no rail at all
    #[error("a multi-rail network needs at least one rail")]
    None,
    /// a rail joins another number of hosts than the first
    #[error("rails[{rail}] joins {hosts} hosts, rails[0] {first}: every rail joins the same hosts")]
    OtherHosts {
        /// the rail's index
        rail: usize,
        /// its hosts
        hosts: u32,
        /// the first rail's hosts
        first: u32,
    },
}
