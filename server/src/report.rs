//! The statistics report of a run, written when it ends (`--stats FILE`, or standard
//! output).
//!
//! `simulation` depends only on the inputs (same script, same bytes); `wall` measures
//! this machine and changes from run to run.

use serde::Serialize;
use vesper_netmodels::stats::Summary;

/// Everything measured in one run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// the run's number on this server, from 1 (a run is the group of `--clients`
    /// clients the server waits for)
    pub run: u64,
    /// why the model stopped the run before its clients finished, if it did
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// deterministic results
    pub simulation: SimulationReport,
    /// wall-clock measurements
    pub wall: WallReport,
}

/// Results that depend only on the inputs.
#[derive(Debug, Clone, Serialize)]
pub struct SimulationReport {
    /// the network simulated
    pub network: String,
    /// per client, in connection order
    pub clients: Vec<ClientReport>,
    /// messages accepted from all clients
    pub messages: u64,
    /// payload bytes accepted from all clients
    pub bytes: u64,
    /// message latency, from the requested send time to the arrival of the last byte
    pub latency_ns: Option<LatencySummary>,
    /// the latest simulated time reached (a completion or an answered STOP) [ns]
    pub simulated_end_ns: f64,
    /// replies written (each answers one batch)
    pub sync_round_trips: u64,
    /// message times earlier than the client's last reply, moved up to it
    pub clamped_times: u64,
    /// model events processed
    pub events_processed: u64,
    /// messages still queued or travelling when the run ended
    pub messages_in_flight_at_exit: usize,
    /// what the network trace holds (`--trace`), when one was written
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_trace: Option<vesper_netmodels::TraceSummary>,
}

/// One client's counters.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ClientReport {
    /// connection number
    pub client: u32,
    /// data messages accepted (`SEND` and `PROTO READY_TO_RECV`)
    pub messages: u64,
    /// their payload [bytes]
    pub bytes: u64,
    /// of which came as `PROTO READY_TO_RECV`
    pub rendezvous_messages: u64,
    /// `PROTO OK_TO_SEND` lines
    pub rendezvous_requests: u64,
    /// replies written to it
    pub round_trips: u64,
    /// its message times moved up to its last reply
    pub clamped_times: u64,
    /// its lines rejected (malformed, out of range)
    pub bad_lines: u64,
    /// it sent `FINISH`
    pub finished: bool,
}

/// Wall-clock measurements.
#[derive(Debug, Clone, Serialize)]
pub struct WallReport {
    /// from the coordinator's start to the report
    pub wall_seconds: f64,
    /// model events per wall second
    pub events_per_second: f64,
    /// from reading a batch's `END` to handing its reply to the socket writer [µs]
    pub reply_latency_us: Option<LatencySummary>,
}

/// Count, min, mean, median, 99th percentile and max, in the unit of the field name.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencySummary {
    /// samples
    pub count: u64,
    /// smallest
    pub min: f64,
    /// mean
    pub mean: f64,
    /// median (within 0.8 %)
    pub p50: f64,
    /// 99th percentile (within 0.8 %)
    pub p99: f64,
    /// largest
    pub max: f64,
}

impl LatencySummary {
    fn scaled(s: Summary, divisor: f64) -> Self {
        LatencySummary {
            count: s.count,
            min: s.min as f64 / divisor,
            mean: s.mean / divisor,
            p50: s.p50 as f64 / divisor,
            p99: s.p99 as f64 / divisor,
            max: s.max as f64 / divisor,
        }
    }

    /// From picoseconds to nanoseconds.
    pub fn from_ps(s: Summary) -> Self {
        Self::scaled(s, 1e3)
    }

    /// From nanoseconds to microseconds.
    pub fn from_ns_to_us(s: Summary) -> Self {
        Self::scaled(s, 1e3)
    }
}
