//! The network's Paraver trace on the command line (`--trace`, `--trace-stream` and
//! their options) and its outputs: a file (gzip-compressed when its name ends in
//! `.gz`) and a stream to a visualiser or a collector.
//!
//! ```text
//!   TracedNetwork ──records──▶ TraceTarget ─┬─▶ FILE.prv.part (spool) ──▶ FILE.prv = header + spool
//!   (netmodels)                             │                              FILE.pcf, FILE.row, FILE.topology
//!                                           └─▶ bounded channel ─thread─▶ TCP ADDR or a named pipe
//! ```
//!
//! The `.prv` header holds the trace's end time, known only at the end: the records
//! are spooled beside the file and the file is written, header first, when the run
//! ends (a gzip file then holds two gzip members, which every gzip reader joins).
//!
//! The stream never blocks the simulation for long. Records travel in chunks of
//! [`STREAM_CHUNK`] bytes through a queue of [`STREAM_CHUNKS`] chunks; when the queue is
//! full the simulation waits up to `--trace-stream-wait-ms` for room, then drops the
//! chunk (whole records); while the queue stays full after such a drop, further chunks
//! are dropped at once, so a stalled collector costs the run one wait per stall. A
//! collector that stops reading (a write that takes nothing for that wait, at least a
//! second), fails or closes drops the rest. The records sent (taken by the collector's
//! socket) and dropped are counted in the log and in the run's report (`trace_stream`:
//! records = sent + dropped). The end of the stream (final header, `.pcf`, `.row`)
//! gets its wait even after a stall. Once the server is stopping (a signal), every wait
//! of the stream ends within half a second.
//!
//! When the stream connects ([`StreamConnect`]): a server of one run (and `vesper
//! run`) connects as the run is set up, and cannot start without its collector. A
//! server that keeps serving must stay up whatever its collector does: each run's
//! stream connects only when the run's first records are ready (a full chunk, or the
//! end of the run; a run may wait hours for its clients), in the stream's thread,
//! trying for `--trace-stream-connect-ms`; a collector out of reach leaves that run
//! untraced (its records are dropped), which the log and the run's report
//! (`trace_stream`) say, and the next run tries again.
//!
//! `ADDR` is `HOST:PORT` (a numeric address, or a host name resolved when the run
//! starts: `collector:9000` in a Docker network) or the path of a named pipe.
//!
//! The stream (what `vesper collect` reads, [`crate::collect`]):
//!
//! ```text
//!   #Paraver (01/01/2026 at 00:00):0_ns:…       the header as known at the start
//!   #vesper-topology 2345                       then 2345 bytes: the .topology
//!   1:0:1:1:1:0:1200:1                          the records, exactly the file's
//!   …
//!   #Paraver (01/01/2026 at 00:00):5000_ns:…    the final header: the .prv text ends here
//!   #vesper-pcf 1234                            then 1234 bytes: the .pcf
//!   #vesper-row 567                             then 567 bytes: the .row
//!   #vesper-end 9876                            records handed to the stream, dropped included
//! ```
//!
//! The topology block (the `.topology` text, see
//! `vesper_netmodels::trace::paraver::topology`) comes right after the first header, so
//! that a live viewer can draw the network before the first record; a reader from
//! before it sees a line that is no record there (`vesper collect` accepts streams with
//! and without it).
//!
//! Invariants: records never start with `#`, so the second `#Paraver` line is the
//! final header (the topology block is skipped by its length, not by lines), and a
//! reader that wants only the `.prv` text stops there (streams
//! before the trailer ended at that line; a reader that took the stream's last line
//! as the header must now take the second `#Paraver` line). The collector's `.prv`,
//! `.pcf`, `.row` and `.topology` are byte-identical to the file target's for the same run when
//! nothing was dropped, and it tells when something was: its record count falls short
//! of the end line's.

pub mod read;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, SendTimeoutError, Sender, TrySendError};
use flate2::Compression;
use flate2::write::GzEncoder;
use tracing::{info, warn};
use vesper_netmodels::trace::paraver::DEFAULT_DATE;
use vesper_netmodels::{
    BacklogCount, DeviceSelection, Network, ParaverOptions, TimeWindow, TraceOutput, TracedNetwork,
};

use crate::config::{NetworkConfig, StreamConnect, TraceConfig};
use crate::error::{ServerError, TraceSetupError};
use crate::report::StreamReport;

/// Bytes of records sent to the stream at once.
pub const STREAM_CHUNK: usize = 64 * 1024;
/// Chunks the stream's queue holds (4 MiB).
pub const STREAM_CHUNKS: usize = 64;

/// The network trace's options, as `vesper serve` and `vesper run` take them.
#[derive(Debug, Clone, clap::Args)]
// Its doc comments are `--help` text: units stay in plain brackets ([ns]).
#[allow(rustdoc::broken_intra_doc_links)]
pub struct TraceArgs {
    /// Write the network's Paraver trace here (FILE.prv, or FILE.prv.gz compressed; the
    /// .pcf, .row and .topology go beside it): every adapter and switch a task, every
    /// port a thread; backlog states, flow-control, head-of-line and segment events,
    /// one communication per message per link.
    #[arg(long = "trace", id = "network_trace", value_name = "FILE.prv[.gz]")]
    pub file: Option<PathBuf>,
    /// Send the same records as they are produced to this TCP address (HOST:PORT) or
    /// named pipe (a path).
    #[arg(long, value_name = "ADDR")]
    pub trace_stream: Option<String>,
    /// Backlog quantum of the trace's states [bytes]: state k means (k−1)·Q < bytes ≤ k·Q.
    #[arg(long, value_name = "BYTES", default_value_t = 1024)]
    pub trace_quantum: u64,
    /// Which buffers a port's backlog counts.
    #[arg(long, value_enum, default_value_t = BacklogArg::Both)]
    pub trace_backlog: BacklogArg,
    /// Also one communication record per message between its two hosts.
    #[arg(long)]
    pub trace_end_to_end: bool,
    /// Trace only these devices: comma-separated name patterns (`sw*`, `host1?`,
    /// `r1.*` on multi-rail networks) or levels (`level=1`, `level=1-2`; hosts are
    /// level 0, their switches 1, …).
    #[arg(long, value_name = "PATTERN")]
    pub trace_devices: Option<String>,
    /// Trace only this part of the run: START_NS:END_NS (either may be left out).
    #[arg(long, value_name = "START_NS:END_NS")]
    pub trace_window: Option<String>,
    /// How long the simulation waits for room in the stream's buffer before dropping
    /// records [ms]; 0 drops at once. At most 3600000 (an hour).
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub trace_stream_wait_ms: u64,
    /// With --keep-serving: how long each run tries to reach its stream's collector
    /// before it goes on untraced [ms]. At most 3600000 (an hour).
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    pub trace_stream_connect_ms: u64,
}

/// Which buffers a port's backlog counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BacklogArg {
    /// input buffers (wormhole slack buffers, CIOQ input queues)
    Input,
    /// output queues
    Output,
    /// both, added
    Both,
}

/// The longest `--trace-stream-wait-ms` and `--trace-stream-connect-ms` (an hour):
/// longer waits are mistakes (the largest numbers would overflow the clock).
pub const MAX_STREAM_WAIT_MS: u64 = 3_600_000;

impl TraceArgs {
    /// The trace these flags ask for (`None`: no trace), its header dated `date`.
    pub fn config(&self, date: &str) -> Result<Option<TraceConfig>, TraceSetupError> {
        self.config_in(date, None)
    }

    /// The same, for a server that keeps serving (`keep_serving`): each run's stream
    /// then connects when the run has records, and a collector out of reach leaves the
    /// run untraced instead of ending the server.
    pub fn config_serving(&self, date: &str, keep_serving: bool) -> Result<Option<TraceConfig>, TraceSetupError> {
        let mut config = self.config(date)?;
        if keep_serving && let Some(config) = &mut config {
            config.stream_connect = StreamConnect::Retrying(Duration::from_millis(self.trace_stream_connect_ms));
        }
        Ok(config)
    }

    /// The same, for `vesper run`: with `--output DIR` the trace goes to
    /// `DIR/network.prv` unless `--trace` names a file; with `--no-server` there is no
    /// network to trace.
    pub fn config_for_run(
        &self,
        date: &str,
        output: Option<&Path>,
        no_server: bool,
    ) -> Result<Option<TraceConfig>, TraceSetupError> {
        if no_server {
            if self.file.is_some() || self.trace_stream.is_some() {
                return Err(TraceSetupError(
                    "--trace and --trace-stream need the server's network; drop --no-server".into(),
                ));
            }
            return Ok(None);
        }
        self.config_in(date, output)
    }

    fn config_in(&self, date: &str, output: Option<&Path>) -> Result<Option<TraceConfig>, TraceSetupError> {
        let file = match (&self.file, output) {
            (Some(file), _) => Some(file.clone()),
            (None, Some(dir)) => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| TraceSetupError(format!("--output {}: cannot create it: {e}", dir.display())))?;
                Some(dir.join("network.prv"))
            }
            (None, None) => None,
        };
        for (flag, ms) in [
            ("--trace-stream-wait-ms", self.trace_stream_wait_ms),
            ("--trace-stream-connect-ms", self.trace_stream_connect_ms),
        ] {
            if ms > MAX_STREAM_WAIT_MS {
                return Err(TraceSetupError(format!(
                    "{flag} {ms}: at most {MAX_STREAM_WAIT_MS} (an hour)"
                )));
            }
        }
        let asked = file.is_some() || self.trace_stream.is_some();
        let option_without_trace = [
            (self.trace_devices.is_some(), "--trace-devices"),
            (self.trace_window.is_some(), "--trace-window"),
            (self.trace_end_to_end, "--trace-end-to-end"),
        ]
        .into_iter()
        .find(|(given, _)| *given);
        if !asked {
            if let Some((_, flag)) = option_without_trace {
                return Err(TraceSetupError(format!(
                    "{flag} shapes the network trace: give --trace FILE.prv or --trace-stream ADDR too"
                )));
            }
            return Ok(None);
        }
        if let Some(file) = &file {
            check_file_name(file, "--trace")?;
        }
        if let Some(addr) = &self.trace_stream {
            // Its form now; a host name is resolved when a run starts (a collector in
            // a container may come up after the server).
            stream_addr(addr)?;
        }
        if self.trace_quantum == 0 {
            return Err(TraceSetupError(
                "--trace-quantum 0: expected a backlog quantum of at least 1 byte".into(),
            ));
        }
        let devices = match &self.trace_devices {
            Some(text) => DeviceSelection::parse(text).map_err(|e| TraceSetupError(format!("--trace-devices {e}")))?,
            None => DeviceSelection::all(),
        };
        let window = match &self.trace_window {
            Some(text) => TimeWindow::parse(text).map_err(|e| TraceSetupError(format!("--trace-window {e}")))?,
            None => TimeWindow::default(),
        };
        Ok(Some(TraceConfig {
            file,
            stream: self.trace_stream.clone(),
            stream_wait: Duration::from_millis(self.trace_stream_wait_ms),
            stream_connect: StreamConnect::AtSetup,
            options: ParaverOptions {
                quantum_bytes: self.trace_quantum,
                backlog: match self.trace_backlog {
                    BacklogArg::Input => BacklogCount::Input,
                    BacklogArg::Output => BacklogCount::Output,
                    BacklogArg::Both => BacklogCount::Both,
                },
                end_to_end: self.trace_end_to_end,
                date: date.to_string(),
                devices,
                window,
                ..ParaverOptions::default()
            },
        }))
    }
}

impl Default for TraceArgs {
    fn default() -> Self {
        TraceArgs {
            file: None,
            trace_stream: None,
            trace_quantum: 1024,
            trace_backlog: BacklogArg::Both,
            trace_end_to_end: false,
            trace_devices: None,
            trace_window: None,
            trace_stream_wait_ms: 1000,
            trace_stream_connect_ms: 5000,
        }
    }
}

/// Checks that `file`, given with `flag`, names a trace file (`FILE.prv` or
/// `FILE.prv.gz`) in an existing directory.
pub fn check_file_name(file: &Path, flag: &str) -> Result<(), TraceSetupError> {
    let (pcf, row) = sibling_names(file, flag)?;
    let topology = topology_name(file);
    // The trace is written whole when its run ends: a named pipe (or anything but a
    // regular file) in its place would be found only then.
    for path in [file, &pcf, &row, &topology] {
        let Ok(meta) = std::fs::metadata(path) else { continue };
        if !meta.is_file() {
            #[cfg(unix)]
            let fifo = std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type());
            #[cfg(not(unix))]
            let fifo = false;
            let what = match (meta.is_dir(), fifo) {
                (true, _) => "a directory",
                (_, true) => {
                    "a FIFO (named pipe): the trace is written whole as its run ends; stream it with \
                              --trace-stream PATH instead"
                }
                _ => "not a regular file",
            };
            return Err(TraceSetupError(format!(
                "{flag} {}: {} is {what}",
                file.display(),
                path.display()
            )));
        }
    }
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
        return Err(TraceSetupError(format!(
            "{flag} {}: expected an existing directory, {} is not one",
            file.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// The `.topology` beside `FILE.prv` or `FILE.prv.gz` (a name `sibling_names`
/// accepts).
pub fn topology_name(file: &Path) -> PathBuf {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem = name
        .strip_suffix(".prv.gz")
        .or_else(|| name.strip_suffix(".prv"))
        .unwrap_or(name);
    file.with_file_name(format!("{stem}.topology"))
}

/// The `.pcf` and `.row` beside `FILE.prv` or `FILE.prv.gz`, given with `flag`.
fn sibling_names(file: &Path, flag: &str) -> Result<(PathBuf, PathBuf), TraceSetupError> {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem = name
        .strip_suffix(".prv.gz")
        .or_else(|| name.strip_suffix(".prv"))
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            TraceSetupError(format!(
                "{flag} {}: expected a file name ending in .prv or .prv.gz",
                file.display()
            ))
        })?;
    Ok((
        file.with_file_name(format!("{stem}.pcf")),
        file.with_file_name(format!("{stem}.row")),
    ))
}

/// The network `config` describes, split as `split` says, writing the trace `trace`
/// asks for, if any; and what its stream does, if it has one. The stream's waits end
/// soon after `stop` is set (a signal: the server is stopping).
pub fn build(
    config: &NetworkConfig,
    trace: Option<&TraceConfig>,
    split: &crate::config::Split,
    stop: &Arc<AtomicBool>,
) -> Result<(Box<dyn Network + Send>, Option<StreamStatus>), ServerError> {
    use crate::config::Split;
    use vesper_netmodels::partition::SplitError;
    let refused = |error| ServerError::Split {
        asked: split.named(),
        error,
    };
    let Some(trace) = trace else {
        return match config.build_as(split) {
            Ok(net) => Ok((Box::new(net), None)),
            Err(SplitError::Build(e)) => Err(ServerError::Network(e)),
            Err(e) => Err(refused(e)),
        };
    };
    let (rails, policy) = config.rails().map_err(ServerError::Network)?;
    let target = TraceTarget::open(trace, stop)?;
    let stream = target.stream.as_ref().map(StreamTarget::status);
    let options = &ParaverOptions {
        shapes: config.trace_shapes(),
        ..trace.options.clone()
    };
    let net = match split {
        Split::Threads(parts) => TracedNetwork::build_split(rails, policy, options, target, *parts),
        Split::Ranks(ranks) => TracedNetwork::build_on_ranks(rails, policy, options, target, ranks.clone()),
        Split::Led(lead) => {
            TracedNetwork::build_on_ranks(rails, policy, options, target, lead.ranks().clone()).map(|mut net| {
                net.lead(lead);
                net
            })
        }
    };
    let net = net.map_err(|e| match e {
        vesper_netmodels::TraceError::Build(e) => ServerError::Network(e),
        vesper_netmodels::TraceError::Split(e) => refused(e),
        e @ vesper_netmodels::TraceError::NoDevice { .. } => TraceSetupError(format!("--trace-devices: {e}")).into(),
        e @ vesper_netmodels::TraceError::ZeroQuantum => {
            TraceSetupError(format!("--trace-quantum {}: {e}", trace.options.quantum_bytes)).into()
        }
        // an output that failed
        e => TraceSetupError(format!("trace: {e}")).into(),
    })?;
    Ok((Box::new(net), stream))
}

/// The header date `vesper serve` uses (fixed, so that traces are reproducible).
pub const SERVE_DATE: &str = DEFAULT_DATE;

/// The trace's outputs: a file, a stream, or both.
#[derive(Debug)]
pub struct TraceTarget {
    file: Option<FileTarget>,
    stream: Option<StreamTarget>,
    /// the topology text, once [`TraceOutput::begin`] gave it
    topology: Option<String>,
}

impl TraceTarget {
    /// Opens what `config` names; the stream's waits end soon after `stop` is set.
    pub fn open(config: &TraceConfig, stop: &Arc<AtomicBool>) -> Result<TraceTarget, TraceSetupError> {
        let file = config
            .file
            .as_deref()
            .map(|path| FileTarget::create(path, "--trace"))
            .transpose()?;
        let stream = config
            .stream
            .as_deref()
            .map(|addr| StreamTarget::open(addr, config.stream_wait, config.stream_connect, stop))
            .transpose()?;
        Ok(TraceTarget {
            file,
            stream,
            topology: None,
        })
    }

    /// A file target alone, for `path` given with `flag` (the collector's `--output`).
    pub fn file(path: &Path, flag: &str) -> Result<TraceTarget, TraceSetupError> {
        Ok(TraceTarget {
            file: Some(FileTarget::create(path, flag)?),
            stream: None,
            topology: None,
        })
    }

    /// Completes the file without its `.pcf` and `.row` (a collector that did not
    /// receive them): the `.prv` alone (and the `.topology`, if it came), and no stale
    /// `.pcf` or `.row` beside it.
    pub fn complete_prv_only(&mut self, header: &str) -> io::Result<()> {
        match self.file.as_mut() {
            Some(file) => file.complete(header, None, self.topology.as_deref()),
            None => Ok(()),
        }
    }
}

impl Write for TraceTarget {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(stream) = &mut self.stream {
            stream.send(buf, lines_in(buf));
        }
        match self.file.as_mut().and_then(|f| f.spool.as_mut()) {
            Some(spool) => spool.write_all(buf).map(|()| buf.len()),
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.file.as_mut().and_then(|f| f.spool.as_mut()) {
            Some(spool) => spool.flush(),
            None => Ok(()),
        }
    }
}

impl TraceOutput for TraceTarget {
    fn begin(&mut self, provisional_header: &str, topology: &str) -> io::Result<()> {
        if let Some(stream) = &mut self.stream {
            // Kept until records follow, however long (a large network's): a run does
            // not reach for its collector before it has records.
            stream
                .chunk
                .extend_from_slice(format!("{provisional_header}\n").as_bytes());
            stream.chunk.extend_from_slice(stream_topology(topology).as_bytes());
        }
        self.topology = Some(topology.to_string());
        Ok(())
    }

    fn complete(&mut self, header: &str, pcf: &str, row: &str) -> io::Result<()> {
        if let Some(mut stream) = self.stream.take() {
            stream.send(format!("{header}\n").as_bytes(), 0);
            stream.send(stream_trailer(pcf, row, stream.records).as_bytes(), 0);
            stream.close();
        }
        match self.file.as_mut() {
            Some(file) => file.complete(header, Some((pcf, row)), self.topology.as_deref()),
            None => Ok(()),
        }
    }
}

/// The body spooled beside the file until the header is known.
enum Spool {
    Plain(BufWriter<File>),
    Gzip(GzEncoder<BufWriter<File>>),
}

impl std::fmt::Debug for Spool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Spool::Plain(_) => "Spool::Plain",
            Spool::Gzip(_) => "Spool::Gzip",
        })
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Spool::Plain(w) => w.write(buf),
            Spool::Gzip(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Spool::Plain(w) => w.flush(),
            // A gzip flush ends a deflate block: the file's bytes would depend on when
            // the writer flushed, and the collector's would differ from the file
            // target's. The spool is read only once complete, so nothing needs it.
            Spool::Gzip(_) => Ok(()),
        }
    }
}

#[derive(Debug)]
struct FileTarget {
    path: PathBuf,
    spool_path: PathBuf,
    /// `None` once complete
    spool: Option<Spool>,
    gzip: bool,
}

impl Drop for FileTarget {
    /// A trace never completed (a failed setup, a panic) leaves no spool behind.
    fn drop(&mut self) {
        if self.spool.take().is_some() {
            let _ = std::fs::remove_file(&self.spool_path);
        }
    }
}

impl FileTarget {
    /// Starts the spool of `path`, given with `flag` (named in errors).
    fn create(path: &Path, flag: &str) -> Result<FileTarget, TraceSetupError> {
        sibling_names(path, flag)?;
        let gzip = path.extension().is_some_and(|e| e == "gz");
        let mut spool_path = path.as_os_str().to_owned();
        spool_path.push(".part");
        let spool_path = PathBuf::from(spool_path);
        let file = File::create(&spool_path).map_err(|e| {
            TraceSetupError(format!(
                "{flag} {}: cannot create {}: {e}",
                path.display(),
                spool_path.display()
            ))
        })?;
        let writer = BufWriter::with_capacity(1 << 16, file);
        let spool = if gzip {
            Spool::Gzip(GzEncoder::new(writer, Compression::default()))
        } else {
            Spool::Plain(writer)
        };
        Ok(FileTarget {
            path: path.to_path_buf(),
            spool_path,
            spool: Some(spool),
            gzip,
        })
    }

    /// Writes the file: header, then the spooled records; and the `.pcf` and `.row`
    /// when `sidecars` holds them, the `.topology` when `topology` does (otherwise any
    /// beside the file are removed: they would describe another trace).
    fn complete(&mut self, header: &str, sidecars: Option<(&str, &str)>, topology: Option<&str>) -> io::Result<()> {
        let context =
            |what: &str, path: &Path, e: io::Error| io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()));
        let Some(spool) = self.spool.take() else {
            return Ok(());
        };
        let spooled = match spool {
            Spool::Plain(w) => w.into_inner().map_err(|e| e.into_error()),
            Spool::Gzip(w) => w.finish().and_then(|w| w.into_inner().map_err(|e| e.into_error())),
        }
        .and_then(|f| f.sync_all())
        .map_err(|e| context("cannot write", &self.spool_path, e));
        spooled?;
        let write = || -> io::Result<()> {
            let mut out = BufWriter::new(vesper_input::create(&self.path)?);
            if self.gzip {
                let mut member = GzEncoder::new(&mut out, Compression::default());
                member.write_all(header.as_bytes())?;
                member.write_all(b"\n")?;
                member.finish()?;
            } else {
                out.write_all(header.as_bytes())?;
                out.write_all(b"\n")?;
            }
            io::copy(&mut File::open(&self.spool_path)?, &mut out)?;
            out.flush()
        };
        if let Err(e) = write() {
            // No half-written trace that looks whole: a regular file is removed (a named
            // pipe's reader has seen what it has seen).
            let removed =
                std::fs::metadata(&self.path).is_ok_and(|m| m.is_file()) && std::fs::remove_file(&self.path).is_ok();
            let e = io::Error::new(e.kind(), format!("{e}{}", if removed { "; removed it" } else { "" }));
            return Err(context("cannot write", &self.path, e));
        }
        std::fs::remove_file(&self.spool_path).map_err(|e| context("cannot remove", &self.spool_path, e))?;
        let (pcf_path, row_path) = sibling_names(&self.path, "trace").map_err(|e| io::Error::other(e.0))?;
        let topology_path = topology_name(&self.path);
        match topology {
            Some(text) => {
                vesper_input::write(&topology_path, text).map_err(|e| context("cannot write", &topology_path, e))?
            }
            None => match std::fs::remove_file(&topology_path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(context("cannot remove", &topology_path, e));
                }
                _ => {}
            },
        }
        match sidecars {
            Some((pcf, row)) => {
                vesper_input::write(&pcf_path, pcf).map_err(|e| context("cannot write", &pcf_path, e))?;
                vesper_input::write(&row_path, row).map_err(|e| context("cannot write", &row_path, e))?;
            }
            None => {
                for path in [&pcf_path, &row_path] {
                    match std::fs::remove_file(path) {
                        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(context("cannot remove", path, e)),
                        _ => {}
                    }
                }
            }
        }
        info!("network trace written to {}", self.path.display());
        Ok(())
    }
}

/// What the simulation and the stream's thread both count, and what the run's report
/// tells of the stream ([`StreamStatus`]). The counts are read once the thread has
/// ended (or, if it does not end in time, as they stand then).
///
/// A record is sent once the collector's socket (or pipe) took the whole chunk that
/// holds it; every other record handed to the stream is dropped: thrown away while
/// the queue was full, lost with the collector, or still in the thread's hands when the
/// run could wait no longer. So `records = sent + dropped`, by construction.
#[derive(Debug, Default)]
struct Tally {
    /// the collector was not reached, or failed: everything from now on is dropped
    failed: OnceLock<String>,
    /// the collector was reached (the pipe opened)
    connected: AtomicBool,
    /// records handed to the stream, known once it is closed
    records: AtomicU64,
    /// records the collector's socket took
    sent_records: AtomicU64,
    sent_bytes: AtomicU64,
}

impl Tally {
    /// Records handed to the stream, sent, and dropped.
    fn counts(&self) -> (u64, u64, u64) {
        let records = self.records.load(Ordering::Relaxed);
        let sent = self.sent_records.load(Ordering::Relaxed).min(records);
        (records, sent, records - sent)
    }
}

/// What a run's trace stream did, for the run's report.
#[derive(Debug, Clone)]
pub struct StreamStatus {
    addr: String,
    tally: Arc<Tally>,
}

impl StreamStatus {
    /// What the stream did, as it stands (final once the trace is complete).
    pub fn report(&self) -> StreamReport {
        let (records, sent_records, dropped_records) = self.tally.counts();
        StreamReport {
            address: self.addr.clone(),
            connected: self.tally.connected.load(Ordering::Relaxed),
            records,
            sent_records,
            dropped_records,
            error: self.tally.failed.get().cloned(),
        }
    }
}

/// A chunk of whole lines, and how many of them are records.
type Chunk = (Vec<u8>, u64);

/// Opens the stream's sink, in the stream's thread; or says why it cannot.
type OpenSink = Box<dyn FnOnce() -> Result<Box<dyn Write + Send>, String> + Send>;

/// How often a wait of the stream looks whether the server is stopping.
const STOP_POLL: Duration = Duration::from_millis(50);
/// How long the stream's waits may still take, in all, once the server is stopping (a
/// signal): time for a collector that keeps up to take the end of the trace.
const STOP_GRACE: Duration = Duration::from_millis(500);
/// How long connecting to the collector may take as a run is set up
/// ([`StreamConnect::AtSetup`]).
const SETUP_ATTEMPT: Duration = Duration::from_secs(5);
/// The longest one attempt to connect may take while retrying, so that an address that
/// drops the request does not use up the time on its own.
const CONNECT_ATTEMPT: Duration = Duration::from_secs(1);
/// The pause between rounds of attempts to connect.
const CONNECT_RETRY: Duration = Duration::from_millis(100);

/// The server's stop flag as the stream's waits see it: once it is set, they all end
/// [`STOP_GRACE`] after it was first seen, whatever they were to last.
#[derive(Debug)]
struct Stop {
    flag: Arc<AtomicBool>,
    /// when the waits end, once the flag was seen
    by: Option<Instant>,
}

impl Stop {
    /// How long to block next in a wait that ends at `end`: at most [`STOP_POLL`], so
    /// that the flag is seen; `None` once the wait is over.
    fn slice(&mut self, end: Instant) -> Option<Duration> {
        if self.by.is_none() && self.flag.load(Ordering::Relaxed) {
            self.by = Some(Instant::now() + STOP_GRACE);
        }
        let end = self.by.map_or(end, |by| end.min(by));
        let left = end.saturating_duration_since(Instant::now());
        (!left.is_zero()).then(|| left.min(STOP_POLL))
    }
}

/// The instant `wait` from now (an hour from now if the clock cannot hold that).
fn after(wait: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_millis(MAX_STREAM_WAIT_MS))
}

#[derive(Debug)]
struct StreamTarget {
    addr: String,
    /// the chunks for the thread, at most [`STREAM_CHUNKS`] waiting; `None` once closed
    chunks: Option<Sender<Chunk>>,
    /// disconnected when the thread has ended
    finished: Receiver<()>,
    tally: Arc<Tally>,
    chunk: Vec<u8>,
    /// records in `chunk`
    chunk_records: u64,
    wait: Duration,
    /// how long the thread may take to connect once it has the first chunk
    connect: Duration,
    stop: Stop,
    /// the queue was full for longer than `wait`: drop without waiting until it drains
    stalled: bool,
    /// the simulation has waited for room before (the first wait is logged)
    waited: bool,
    /// record lines handed to the stream (sent or dropped), for the trailer
    records: u64,
    thread: Option<JoinHandle<()>>,
}

/// The first word of the trailer line that announces the `.pcf`.
pub const STREAM_PCF: &str = "#vesper-pcf";
/// The first word of the trailer line that announces the `.row`.
pub const STREAM_ROW: &str = "#vesper-row";
/// The first word of the stream's last line.
pub const STREAM_END: &str = "#vesper-end";
/// The first word of the line that announces the topology, right after the first
/// header line.
pub const STREAM_TOPOLOGY: &str = "#vesper-topology";

/// What the stream sends right after its first header line: the topology text
/// (`FILE.topology`), announced by a line with its length in bytes.
pub fn stream_topology(topology: &str) -> String {
    format!("{STREAM_TOPOLOGY} {}\n{topology}", topology.len())
}

/// What the stream sends after the final header line: the `.pcf` and the `.row`, each
/// announced by a line with its length in bytes, and an end line with the number of
/// records handed to the stream (a collector that counts fewer knows some were dropped).
pub fn stream_trailer(pcf: &str, row: &str, records: u64) -> String {
    format!(
        "{STREAM_PCF} {}\n{pcf}{STREAM_ROW} {}\n{row}{STREAM_END} {records}\n",
        pcf.len(),
        row.len()
    )
}

fn lines_in(chunk: &[u8]) -> u64 {
    chunk.iter().filter(|&&b| b == b'\n').count() as u64
}

impl StreamTarget {
    /// The stream to `addr`, its waits for room up to `wait`, ended soon after `stop`
    /// is set. A TCP address is connected as `connect` says: now (within 5 s, a host
    /// name's addresses tried in turn), or by the stream's thread when the run's first
    /// records are ready. A path is opened by the thread then (a named pipe waits there
    /// for its reader).
    fn open(
        addr: &str,
        wait: Duration,
        connect: StreamConnect,
        stop: &Arc<AtomicBool>,
    ) -> Result<StreamTarget, TraceSetupError> {
        let (sink, connect): (OpenSink, Duration) = match (stream_addr(addr)?, connect) {
            (StreamAddr::Pipe(path), _) => (Box::new(move || open_pipe(&path)), Duration::ZERO),
            (_, StreamConnect::Retrying(within)) => {
                let (addr, stop) = (addr.to_string(), Arc::clone(stop));
                (Box::new(move || connect_retrying(&addr, within, &stop, wait)), within)
            }
            (_, StreamConnect::AtSetup) => {
                let stream = resolve(addr)
                    .and_then(|addresses| connect_first(&addresses, SETUP_ATTEMPT))
                    .map_err(|e| TraceSetupError(format!("--trace-stream {addr}: {e}")))?;
                (Box::new(move || Ok(tcp_sink(stream, wait))), Duration::ZERO)
            }
        };
        let (chunks, queued) = crossbeam_channel::bounded(STREAM_CHUNKS);
        let (finishing, finished) = crossbeam_channel::bounded(1);
        let tally = Arc::new(Tally::default());
        let thread = std::thread::Builder::new()
            .name("vesper-trace-stream".into())
            .spawn({
                let tally = Arc::clone(&tally);
                let addr = addr.to_string();
                move || {
                    // Dropped when the thread ends, even by a panic: `close` hears it.
                    let _finishing: Sender<()> = finishing;
                    stream_thread(&addr, sink, queued, &tally, wait);
                }
            })
            .map_err(|e| TraceSetupError(format!("--trace-stream {addr}: cannot start its thread: {e}")))?;
        Ok(StreamTarget {
            addr: addr.to_string(),
            chunks: Some(chunks),
            finished,
            tally,
            chunk: Vec::with_capacity(STREAM_CHUNK),
            chunk_records: 0,
            wait,
            connect,
            stop: Stop {
                flag: Arc::clone(stop),
                by: None,
            },
            stalled: false,
            waited: false,
            records: 0,
            thread: Some(thread),
        })
    }

    /// What the stream does, for the run's report.
    fn status(&self) -> StreamStatus {
        StreamStatus {
            addr: self.addr.clone(),
            tally: Arc::clone(&self.tally),
        }
    }

    /// Adds `bytes`, whole lines of which `records` are records; hands a full chunk to
    /// the thread.
    fn send(&mut self, bytes: &[u8], records: u64) {
        self.records += records;
        self.chunk.extend_from_slice(bytes);
        self.chunk_records += records;
        if self.chunk.len() >= STREAM_CHUNK {
            self.push();
        }
    }

    fn push(&mut self) {
        if self.chunk.is_empty() {
            return;
        }
        let chunk = std::mem::replace(&mut self.chunk, Vec::with_capacity(STREAM_CHUNK));
        let records = std::mem::take(&mut self.chunk_records);
        let Some(chunks) = &self.chunks else { return };
        let queued = self.tally.failed.get().is_none()
            && match chunks.try_send((chunk, records)) {
                Ok(()) => true,
                // Full: wait for room, unless stalled. A thread that fails closes the
                // channel, which ends the wait too.
                Err(TrySendError::Full(chunk)) if !self.stalled => {
                    if !self.waited {
                        self.waited = true;
                        info!(
                            "network trace stream {}: its buffer is full; the simulation waits up to {} ms for the \
                             collector (--trace-stream-wait-ms)",
                            self.addr,
                            self.wait.as_millis()
                        );
                    }
                    send_waiting(chunks, chunk, after(self.wait), &mut self.stop)
                }
                Err(_) => false,
            };
        if queued {
            self.stalled = false;
            return;
        }
        let failed = self.tally.failed.get().is_some();
        if !failed && !self.stalled {
            warn!(
                "network trace stream {}: the collector is not keeping up; dropping records",
                self.addr
            );
        }
        // Stalled: drop at once until the channel has room again. (Dropped records
        // are those not sent: `Tally::counts`.)
        self.stalled = !failed;
    }

    /// Sends what is left and waits for the thread: up to the time a write may wait
    /// ([`write_timeout`]), and the time left to connect. A thread still writing then
    /// has a collector that stopped reading (or reads too slowly to matter).
    fn close(&mut self) {
        // The end (final header, .pcf, .row) gets its wait even after a stall: the run
        // is over, and a collector without it has no usable trace.
        self.stalled = false;
        self.push();
        // No more chunks: the thread ends once it has written those in the channel.
        self.chunks = None;
        self.tally.records.store(self.records, Ordering::Relaxed);
        let connecting = match self.tally.connected.load(Ordering::Relaxed) {
            true => Duration::ZERO,
            false => self.connect,
        };
        let waited = write_timeout(self.wait) + connecting;
        let end = after(waited);
        if let Some(thread) = self.thread.take() {
            let ended = loop {
                let Some(slice) = self.stop.slice(end) else { break false };
                match self.finished.recv_timeout(slice) {
                    Err(RecvTimeoutError::Timeout) => {}
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => break true,
                }
            };
            if ended {
                let _ = thread.join();
            } else {
                let reason = match (self.stop.by.is_some(), self.tally.connected.load(Ordering::Relaxed)) {
                    (true, _) => "the server stopped before the collector took the end of the trace".to_string(),
                    (false, false) => format!("the collector was not reached within {} ms", waited.as_millis()),
                    (false, true) => format!(
                        "the collector stopped reading: it did not take the end of the trace within {} ms",
                        waited.as_millis()
                    ),
                };
                warn!("network trace stream {}: {reason}", self.addr);
                let _ = self.tally.failed.set(reason);
            }
        }
        let (records, sent, dropped) = self.tally.counts();
        if dropped > 0 {
            warn!(
                "network trace stream {}: {sent} of {records} records sent, {dropped} dropped",
                self.addr
            );
        }
        let sent = self.tally.sent_bytes.load(Ordering::Relaxed);
        info!("network trace stream {}: {sent} bytes sent", self.addr);
    }
}

impl Drop for StreamTarget {
    fn drop(&mut self) {
        if self.thread.is_none() {
            return;
        }
        if self.records == 0 {
            // A run that never began (a server stopped between runs, a setup that
            // failed): the collector hears nothing of it, and the thread ends without
            // connecting.
            self.chunks = None;
            return;
        }
        self.close();
    }
}

/// Sends `chunk`, waiting for room until `end` (or less, once the server is stopping);
/// whether it went.
fn send_waiting(chunks: &Sender<Chunk>, mut chunk: Chunk, end: Instant, stop: &mut Stop) -> bool {
    while let Some(slice) = stop.slice(end) {
        match chunks.send_timeout(chunk, slice) {
            Ok(()) => return true,
            Err(SendTimeoutError::Timeout(back)) => chunk = back,
            // The thread failed, which closed the channel.
            Err(SendTimeoutError::Disconnected(_)) => return false,
        }
    }
    false
}

/// Where `--trace-stream` sends the trace.
#[derive(Debug, PartialEq, Eq)]
enum StreamAddr {
    /// a numeric `IP:PORT`
    Socket(std::net::SocketAddr),
    /// a path (a named pipe, or a file)
    Pipe(PathBuf),
    /// `HOST:PORT` with a host name, resolved when the stream opens; the host
    Host(String),
}

/// The form of `--trace-stream ADDR`: a numeric address, a path (it holds a `/` or
/// exists), or `HOST:PORT`.
fn stream_addr(addr: &str) -> Result<StreamAddr, TraceSetupError> {
    if let Ok(socket) = addr.parse() {
        return Ok(StreamAddr::Socket(socket));
    }
    if addr.contains('/') || Path::new(addr).exists() {
        return Ok(StreamAddr::Pipe(PathBuf::from(addr)));
    }
    match addr.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => Ok(StreamAddr::Host(host.into())),
        _ => Err(TraceSetupError(format!(
            "--trace-stream {addr}: expected HOST:PORT (127.0.0.1:9000, collector:9000) or the path of a named pipe"
        ))),
    }
}

/// The addresses `addr` (`HOST:PORT`, HOST a name or a numeric address) stands for now.
fn resolve(addr: &str) -> Result<Vec<std::net::SocketAddr>, String> {
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    let resolved = std::net::ToSocketAddrs::to_socket_addrs(addr).map_err(|e| format!("cannot resolve {host}: {e}"))?;
    Ok(resolved.collect())
}

/// Connects to the first of `addresses` that accepts within `attempt`; or says why none
/// did.
fn connect_first(addresses: &[std::net::SocketAddr], attempt: Duration) -> Result<std::net::TcpStream, String> {
    let mut failure = "expected a host with an address, it resolves to none".to_string();
    for socket in addresses {
        match std::net::TcpStream::connect_timeout(socket, attempt) {
            Ok(stream) => return Ok(stream),
            Err(e) if addresses.len() == 1 => failure = format!("cannot connect: {e}"),
            Err(e) => failure = format!("cannot connect to {socket}: {e}"),
        }
    }
    Err(failure)
}

/// Connects to `addr`, resolved afresh at every round (a collector's container that
/// restarted may have a new address), for up to `within`; gives up once `stop` is set.
fn connect_retrying(
    addr: &str,
    within: Duration,
    stop: &AtomicBool,
    wait: Duration,
) -> Result<Box<dyn Write + Send>, String> {
    let end = after(within);
    loop {
        let attempt = end
            .saturating_duration_since(Instant::now())
            .clamp(CONNECT_RETRY, CONNECT_ATTEMPT);
        let failure = match resolve(addr).and_then(|addresses| connect_first(&addresses, attempt)) {
            Ok(stream) => return Ok(tcp_sink(stream, wait)),
            Err(failure) => failure,
        };
        if stop.load(Ordering::Relaxed) {
            return Err(format!("{failure}; the server stopped before it could connect"));
        }
        if end.saturating_duration_since(Instant::now()) <= CONNECT_RETRY {
            return Err(format!(
                "{failure} (tried for {} ms, --trace-stream-connect-ms)",
                within.as_millis()
            ));
        }
        std::thread::sleep(CONNECT_RETRY);
    }
}

/// The sink of a connected collector.
fn tcp_sink(stream: std::net::TcpStream, wait: Duration) -> Box<dyn Write + Send> {
    let _ = stream.set_nodelay(true);
    // A collector that stops reading fails the writes instead of hanging them.
    let _ = stream.set_write_timeout(Some(write_timeout(wait)));
    Box::new(stream)
}

/// Opens the named pipe (or file) `path` for writing: a pipe waits for its reader.
fn open_pipe(path: &Path) -> Result<Box<dyn Write + Send>, String> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    Ok(Box::new(file))
}

/// Waits for the run's first records, opens the sink, then writes the channel's chunks
/// until the channel is closed and empty. Nothing is opened before the first records:
/// a run may wait long for its clients, and a collector reached then may be gone when
/// the records come. A failure is logged, told in `tally`, and ends the thread, which
/// closes the channel (the receiver is dropped on return, after `failed` is set): the
/// chunks in it are dropped (not sent: [`Tally::counts`]), later ones are refused, and
/// a sender waiting for room stops waiting.
fn stream_thread(addr: &str, open: OpenSink, chunks: Receiver<Chunk>, tally: &Tally, wait: Duration) {
    let fail = |reason: String, consequence: &str| {
        warn!("network trace stream {addr}: {reason}; {consequence}");
        let _ = tally.failed.set(reason);
    };
    // Closed without a chunk: the run never began.
    let Ok(first) = chunks.recv() else { return };
    let mut out = match open() {
        Ok(out) => out,
        Err(reason) => return fail(reason, "this run goes on untraced"),
    };
    tally.connected.store(true, Ordering::Relaxed);
    for (chunk, records) in std::iter::once(first).chain(&chunks) {
        if let Err(e) = out.write_all(&chunk) {
            return fail(write_failure(&e, wait), "the rest of this run's trace is dropped");
        }
        tally.sent_records.fetch_add(records, Ordering::Relaxed);
        tally.sent_bytes.fetch_add(chunk.len() as u64, Ordering::Relaxed);
    }
    let _ = out.flush();
}

/// Why writing to the collector failed, `e`, in words: a write that timed out (after
/// [`write_timeout`] of `wait`) is a collector that stopped reading.
fn write_failure(e: &io::Error, wait: Duration) -> String {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => format!(
            "the collector stopped reading: it took nothing for {} ms",
            write_timeout(wait).as_millis()
        ),
        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => {
            format!("the collector closed the connection ({e})")
        }
        _ => format!("the collector failed: {e}"),
    }
}

/// How long a write to the collector may wait for it to read, given the stream's
/// `--trace-stream-wait-ms`: that wait, and at least a second.
fn write_timeout(wait: Duration) -> Duration {
    wait.max(Duration::from_secs(1))
}

#[cfg(test)]
mod tests;
