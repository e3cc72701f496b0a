//! Server configuration: what `vesper serve` is told on its command line.

use std::time::Duration;

use vesper_netmodels::{Bandwidth, LinkParams, NetworkBuilder, SimTime, SwitchParams};

/// The first network model: an output-queued crossbar joining every host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkConfig {
    /// number of hosts; client node `n` runs on host `n`
    pub hosts: u32,
    /// every cable's rate and delay
    pub link: LinkParams,
    /// every switch's parameters
    pub switch: SwitchParams,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig {
            hosts: 256,
            link: LinkParams::default(),
            switch: SwitchParams::default(),
        }
    }
}

impl NetworkConfig {
    /// The network builder for this configuration.
    pub fn builder(&self) -> NetworkBuilder {
        NetworkBuilder::crossbar(self.hosts, self.link).switch_params(self.switch)
    }

    /// A one-line description for logs and reports.
    pub fn describe(&self) -> String {
        format!(
            "output-queued crossbar, {} hosts, links {} MB/s + {}, routing {}",
            self.hosts,
            self.link.bandwidth.bytes_per_second() / 1_000_000,
            self.link.propagation,
            self.switch.routing_latency
        )
    }
}

/// How rendezvous (`PROTO`) lines are modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RendezvousMode {
    /// the data starts at the `READY_TO_RECV` time; `OK_TO_SEND` is only counted
    #[default]
    Dimemas,
    /// the request and the acknowledgment travel the network as control packets of
    /// `control_bytes`, and the data starts when the acknowledgment arrives
    Wire {
        /// size of a request or acknowledgment [bytes]
        control_bytes: u32,
    },
}

/// Everything the server needs to run.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// the network to simulate
    pub network: NetworkConfig,
    /// clients to wait for before simulated time starts to advance
    pub clients: usize,
    /// connections accepted at once; more are refused with a warning
    pub max_connections: usize,
    /// longest line accepted [bytes]
    pub max_line: usize,
    /// largest reply written at once [bytes]; `None` writes every due completion at once
    pub reply_limit: Option<usize>,
    /// messages a client may have in the server (queued or in the network) at once
    pub max_in_flight: usize,
    /// `SEND`/`PROTO` lines one batch may hold; the rest of a longer batch is dropped
    pub max_batch: usize,
    /// after the last client finished, stop (true) or wait for new clients (false)
    pub exit_when_done: bool,
    /// how long to wait before retrying after a failed accept
    pub accept_backoff: Duration,
    /// how long the simulation thread keeps polling without sleeping after work
    pub spin: Duration,
    /// how `PROTO` lines are modelled
    pub rendezvous: RendezvousMode,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            network: NetworkConfig::default(),
            clients: 1,
            max_connections: 256,
            max_line: vesper_protocol::DEFAULT_MAX_LINE,
            reply_limit: Some(vesper_protocol::LEGACY_REPLY_LIMIT),
            max_in_flight: 1 << 20,
            max_batch: 1 << 16,
            exit_when_done: true,
            accept_backoff: Duration::from_millis(100),
            spin: Duration::from_micros(200),
            rendezvous: RendezvousMode::Dimemas,
        }
    }
}

/// A link rate given in MB/s (10^6 bytes per second).
pub fn bandwidth_from_mb_per_s(mb_per_s: f64) -> Option<Bandwidth> {
    if !(mb_per_s.is_finite() && mb_per_s > 0.0) {
        return None;
    }
    Bandwidth::from_bytes_per_second((mb_per_s * 1e6).round() as u64)
}

/// A delay given in nanoseconds (fractions allowed, down to the picosecond).
pub fn time_from_ns(ns: f64) -> Option<SimTime> {
    SimTime::from_wire_ns(ns).ok()
}
