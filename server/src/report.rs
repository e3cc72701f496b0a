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
    /// what the network trace's stream did (`--trace-stream`): whether it reached its
    /// collector, and of the trace's records those it sent and those it dropped (timing
    /// decides them: they are not part of `simulation`)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_stream: Option<StreamReport>,
    /// deterministic results
    pub simulation: SimulationReport,
    /// wall-clock measurements
    pub wall: WallReport,
}

/// A run's trace stream, in the run's report (`trace_stream`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StreamReport {
    /// `--trace-stream`'s address
    pub address: String,
    /// whether the collector was reached (the named pipe opened)
    pub connected: bool,
    /// records handed to the stream: every record of the trace (the states, events
    /// and communications `simulation.network_trace` counts)
    pub records: u64,
    /// of which the collector's socket (or pipe) took
    pub sent_records: u64,
    /// and the others, dropped: the collector did not keep up, stopped reading, closed,
    /// or was not reached (`records = sent_records + dropped_records`)
    pub dropped_records: u64,
    /// why the stream failed, if it did (the rest of the run went untraced)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
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
    /// the latest simulated time reached (a completion or an answered STOP) \[ns\]
    pub simulated_end_ns: f64,
    /// replies written (each answers one batch)
    pub sync_round_trips: u64,
    /// message times earlier than the client's last reply, moved up to it
    pub clamped_times: u64,
    /// model events processed
    pub events_processed: u64,
    /// messages still queued or travelling when the run ended
    pub messages_in_flight_at_exit: usize,
    /// what the network trace holds, as the model produced it (`--trace`,
    /// `--trace-stream`): a `--trace` file holds all of it; of its records a stream
    /// sent those `trace_stream.sent_records` counts and dropped the rest (timing
    /// decides which, so they are counted there, not here)
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
    /// their payload \[bytes\]
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
    /// from reading a batch's `END` to handing its reply to the socket writer \[µs\]
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

/// Where run reports go: standard output or `--stats FILE`, checked for writability
/// before the first run.
///
/// - a server of one run writes its report as indented JSON when the run ends;
/// - a server that keeps serving writes each run's report when the run ends, one JSON
///   object a line (JSON Lines), so that nothing is held across runs;
/// - a file name holding `{run}` gets one file a run (indented JSON), `{run}` replaced
///   by the run's number.
#[derive(Debug)]
pub struct ReportWriter {
    target: Target,
    /// one object a line
    lines: bool,
}

#[derive(Debug)]
enum Target {
    Stdout,
    /// one file for every run, opened (and truncated) before the first
    File {
        path: std::path::PathBuf,
        file: std::fs::File,
    },
    /// a file a run: the path with `{run}`
    PerRun(std::path::PathBuf),
}

impl ReportWriter {
    /// Reports to `stats` (standard output if `None`), for a server of one run or one
    /// that keeps serving; a file that cannot be written is refused now, naming it.
    pub fn open(stats: Option<&std::path::Path>, keep_serving: bool) -> Result<ReportWriter, String> {
        let cannot =
            |path: &std::path::Path, e: std::io::Error| format!("--stats {}: cannot write it: {e}", path.display());
        let target = match stats {
            None => Target::Stdout,
            Some(path) if crate::config::is_per_run(path) => {
                // Try the first run's file, and leave no empty file behind.
                let first = crate::config::per_run(path, 1);
                let existed = first.exists();
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&first)
                    .map_err(|e| cannot(&first, e))?;
                if !existed {
                    let _ = std::fs::remove_file(&first);
                }
                Target::PerRun(path.to_path_buf())
            }
            Some(path) => Target::File {
                path: path.to_path_buf(),
                file: vesper_input::create(path).map_err(|e| cannot(path, e))?,
            },
        };
        let lines = keep_serving && !matches!(target, Target::PerRun(_));
        Ok(ReportWriter { target, lines })
    }

    /// Writes `report`; returns where it went, for the log.
    pub fn write(&mut self, report: &Report) -> Result<String, String> {
        use std::io::Write as _;
        let mut json = if self.lines {
            serde_json::to_string(report)
        } else {
            serde_json::to_string_pretty(report)
        }
        .map_err(|e| format!("the report cannot be written as JSON: {e}"))?;
        json.push('\n');
        match &mut self.target {
            Target::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(json.as_bytes())
                    .and_then(|()| out.flush())
                    .map_err(|e| format!("cannot write the report to standard output: {e}"))?;
                Ok("standard output".into())
            }
            Target::File { path, file } => {
                file.write_all(json.as_bytes())
                    .and_then(|()| file.flush())
                    .map_err(|e| format!("--stats {}: cannot write it: {e}", path.display()))?;
                Ok(path.display().to_string())
            }
            Target::PerRun(pattern) => {
                let path = crate::config::per_run(pattern, report.run);
                vesper_input::write(&path, json)
                    .map_err(|e| format!("--stats {}: cannot write it: {e}", path.display()))?;
                Ok(path.display().to_string())
            }
        }
    }
}
