//! `vesper view`: a web page, served by vesper itself, that shows where a network
//! congests: the topology drawn as it is recognised (levels, grids), every link
//! coloured by its utilisation in a time window chosen with a slider (issue 44; see
//! `docs/view.md`).
//!
//! ```text
//!   FILE.prv[.gz], .row, .pcf, ─▶ reader (thread) ─records─▶ Aggregate ◀─read lock─ http (tokio, axum)
//!   .topology
//!   (later: the stream of                                    per-link bins          GET /, /view.js,
//!    `serve --trace-stream`)                                 per-port bins          /api/trace, /api/window
//!                                                                                     ▲ JSON: only what the page draws
//!                                                                                  browser (canvas, no build step)
//! ```
//!
//! # Where it lives
//!
//! A verb of the `server` crate (the architecture guide: the crate that owns the
//! command line, the sockets and tokio): [`reader`] turns trace text into typed
//! records, [`aggregate`] folds them into bins and knows nothing of files or HTTP,
//! [`topology`] reads the trace's `.topology`, [`layout`] places the devices, [`http`]
//! serves the page and its JSON. It depends
//! on no other crate of the workspace: the trace's text is the interface, as it is
//! for Paraver and `vesper collect`. The CPU work (reading, folding, answering a
//! window) runs on a thread of its own or in `spawn_blocking`, never on the runtime's
//! workers.
//!
//! # Links, from the trace
//!
//! The network trace (`docs/network-trace.md`) holds one communication record per
//! message per link traversal, from the transmitting port to the port at the far end
//! (`3:…:task_s:thread_s:…:task_r:thread_r:…:size:tag`). A *link* is one direction
//! of a cable: the pair (from port, to port) of those records, identified by its
//! sending thread (a port sends on one cable only: a port seen sending to two ports is
//! a problem in the trace, reported with its line). The `.row` names the ports
//! (`host5.p0`, `sw12.p3`, `r0.host5.p0`); a record between two hosts' ports is an
//! end-to-end record (`--trace-end-to-end`), counted but not a link. A link's bytes are
//! the sizes of its records; they are spread evenly over `[physical send, physical
//! receive]`, from the first byte leaving to the last arriving.
//!
//! # The picture's layout: the trace should carry the topology
//!
//! The `.row` names carry no levels or coordinates, and the communication records show
//! only the links that carried something. Derived from the names and the link graph,
//! a layout can place a fat tree by levels (a breadth-first search from the hosts, as
//! `switch_levels` does for `--trace-devices level=`), but it cannot
//! - draw a link that carried nothing (the issue wants every link coloured: an idle
//!   link is information, a missing one a wrong picture of the network);
//! - place a torus or mesh on its grid (the switch numbers are coordinates only for
//!   someone who knows the dimensions), let alone slice a 3-D one;
//! - say what a link can carry (utilisation needs the link's rate; multi-rail networks
//!   and maps mix rates);
//! - name anything of a live stream before its end, where the `.row` comes today.
//!
//! So the decision: **the trace carries the topology.** The writer knows it
//! (`vesper_netmodels::trace::paraver::Layout` is built from the rails' topologies):
//! beside `FILE.pcf` and `FILE.row` it writes `FILE.topology` (JSON: the shape —
//! `xgft` with its levels, `torus`/`mesh` with its dimensions, `hypercube`, `map`,
//! `crossbar` —, every device with its thread range, level or coordinates, and both
//! directions of every cable as pairs of threads with their rate and latency), and a stream sends the
//! same text right after its first header line (`#vesper-topology BYTES`, as
//! `#vesper-pcf` frames the `.pcf`), so that a live page can draw the network before
//! the first record and name what it shows. Paraver ignores the extra file; `vesper
//! collect` writes it like the others.
//!
//! Done: the writer is `vesper_netmodels::trace::paraver::topology` (its docs give the
//! format, `docs/network-trace.md` too), the stream's block is
//! `crate::network_trace::stream_topology`, and [`topology`] reads it. With it, the
//! view registers every link of the topology before the first record (idle links are
//! drawn, in the topology's order), takes each link's rate from it, and lays the
//! devices out by its shape ([`layout`]): tori, meshes and hypercubes on grids, the
//! rest by the topology's levels. A `.topology` that is not this trace's is said on
//! the page (naming the file) and ignored.
//!
//! Without one (every trace written before it, or one refused), the view derives the
//! layout from the trace itself ([`layout`]): levels by breadth-first search from the
//! hosts over the links seen, rows ordered by barycentre; the link rate from
//! `--link-bandwidth` (the models' default, 250 MB/s, when not given). That is exact
//! for fat trees, and a readable layered picture of any other network.
//!
//! # Time bins
//!
//! [`aggregate`] keeps, per link, the bytes that crossed it in each of [`BINS`] bins
//! of `2^s` ns from time 0, and per port that ever had a backlog the highest backlog
//! level and the level integrated over time in each bin. A finished trace starts at
//! the narrowest width that holds its header's end time; a stream (whose header says
//! 0) starts at 1 ns and, when a record reaches past the last bin, doubles the width
//! by merging bins in pairs, as often as needed. Bytes are cut along the bins by a
//! cumulative split, so a link's bins always add up to its records' bytes, and bins
//! widened as a run grows equal the bins made at the final width from the start: the
//! live view and the file view of one run agree.
//!
//! Beside the bins, for the page's panels ([`detail`]): per link, the messages whose
//! first byte left and whose last byte arrived in each bin (counted: a window's
//! messages are those that started by its end but did not end before it), and a
//! sample of them (the first [`aggregate::MESSAGES_PER_GROUP`] of every
//! [`aggregate::GROUP_BINS`] bins, 48 bytes each); per port with STOP/GO,
//! head-of-line or bubble-wait events, their counts per bin by kind and a sample (the
//! first [`aggregate::EVENTS_PER_GROUP`] of every [`aggregate::GROUP_BINS`] bins, 16
//! bytes each).
//!
//! Memory, whatever the run's length (`L` links, `P` ports with a backlog, `E` ports
//! with events, `T` threads):
//!
//! ```text
//!   bins    = BINS × (8 L + 10 P) bytes     (+ 8 T for the thread indexes, + the names)
//!   panels ≤ BINS × (8 L + 16 E) bytes      counts
//!           + BINS / 4 × (2 × 48 L + 2 × 16 E) samples, full when every 4 bins hold 2
//!   = at most 10,240 L + 2,560 P + 6,144 E bytes
//!   256-host fat-tree preset:  1,024 links, 1,280 ports →  13.8 MB (+ 7.9 MB if every port has events)
//!   4,096-host 3-level fat tree (16-ary 3-tree, 32-port switches):
//!                             24,576 links, 28,672 ports →  325 MB (+ 176 MB if every port has events)
//! ```
//!
//! (Events come from wormhole switches: the 256-host `fat-tree` preset's all-to-all
//! gives 512 of its 1,024 ports flow-control events, 14.4 MB in all.) The
//! application trace (`--app`, [`app`]) adds `BINS × 8` bytes per thread per state it
//! holds (at most [`app::MAX_STATES`]): 4,096 tasks in 5 states, 42 MB.
//!
//! A trace of more than [`reader::MAX_THREADS`] threads is refused, so the bound holds
//! for any file.
//!
//! # HTTP API
//!
//! Served on `--http ADDR` (`127.0.0.1:8080` by default: loopback only unless told,
//! and a warning in the log when not); nothing but these routes, all `GET`:
//!
//! | route | answer |
//! |---|---|
//! | `/` | the page (HTML, embedded in the binary) |
//! | `/view.js` | its script (plain JavaScript, embedded; no build step, nothing fetched from elsewhere) |
//! | `/api/trace` | what the trace is: file, whether it is still being read, the problem met if any, end time, the bins' width and count, the default link rate, the topology described and the problem with its file if any, the layout (levels or grid, rows, slices, aspect), the backlog quantum, record counts, the devices (name, host or not, level, x, y, slice) and the links (from and to port and device, bytes, messages, rate, wraparound) in a fixed order, and the bytes per bin over all links (the slider's histogram) |
//! | `/api/window?from_ns=A&to_ns=B[&bins=true]` | the window `[A, B)` snapped to whole bins: its bounds, what a link can carry in it, every link's bytes in it (in `/api/trace`'s order), with `bins=true` every link's bins in it, the ten busiest links and the highest backlog |
//! | `/detail.js`, `/api/link`, `/api/port`, `/api/app` | the panels: a link's messages, a port's backlog and events, the application's task states (see [`detail`]) |
//!
//! The page asks for `/api/trace` once (and again while the trace is being read, or
//! when a window shows more links than it knows), then one `/api/window` per slider
//! move: a few bytes a link, never a record. Later steps add `GET /api/events`
//! (server-sent events: the live edge moved, a run started) for `--listen-trace` and
//! follow mode. A selected link or port asks its route once per window.

pub mod aggregate;
pub mod app;
pub mod detail;
pub mod http;
pub mod layout;
pub mod reader;
pub mod topology;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

pub use aggregate::{Aggregate, BINS};
pub use reader::{Names, OpenError, TraceFiles};

/// The models' default link rate \[MB/s\] (2 Gb/s, Myrinet-2000 class).
pub const DEFAULT_LINK_MBS: f64 = 250.0;

/// `vesper view`'s options.
#[derive(Debug, Clone, clap::Args)]
pub struct ViewArgs {
    /// The network trace to show: FILE.prv or FILE.prv.gz, with FILE.row beside it (and
    /// FILE.pcf, for the backlog's unit), as `--trace` or `vesper collect` writes them.
    #[arg(value_name = "FILE.prv[.gz]")]
    pub trace: PathBuf,
    /// Serve the page here (HOST:PORT; port 0 picks a free port, logged). Loopback by
    /// default: give an outside address only on a network you trust.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub http: String,
    /// Each link's rate, for utilisation [MB/s, 10^6 bytes/s]; the trace does not say
    /// it. The default is the models' (2 Gb/s).
    #[arg(long, value_name = "MB/s", default_value_t = DEFAULT_LINK_MBS, value_parser = positive_mbs)]
    pub link_bandwidth: f64,
    /// The application trace of the same run (app.prv or app.prv.gz, as `vesper run
    /// --output` writes it beside network.prv, its .pcf beside it for the states' names):
    /// the tasks' states drawn under the network on the same time axis. A file that
    /// cannot be read is a message on the page.
    #[arg(long, value_name = "FILE.prv[.gz]")]
    pub app: Option<PathBuf>,
}

fn positive_mbs(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("expected a positive number of MB/s, got {text:?}")),
    }
}

/// Why `vesper view` cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// the trace's files cannot be read
    #[error(transparent)]
    Open(#[from] OpenError),
    /// the page's address
    #[error("--http {addr}: cannot listen there: {source}")]
    Listen {
        /// the `--http` given
        addr: String,
        /// why
        source: std::io::Error,
    },
    /// the runtime or the server
    #[error("the web server: {0}")]
    Serve(std::io::Error),
}

/// What the reader has made of the trace so far, shared with the web server.
#[derive(Debug)]
pub struct Shared {
    /// the trace, as given
    pub file: String,
    /// the link rate \[MB/s\]
    pub link_mbs: f64,
    /// the names (empty until the header and `.row` are read)
    pub names: Names,
    /// the records so far
    pub aggregate: Aggregate,
    /// the backlog quantum \[bytes\], from the `.pcf`
    pub quantum_bytes: Option<u64>,
    /// whether the reader is still at work
    pub loading: bool,
    /// lines of the `.prv` read
    pub lines: u64,
    /// what stopped the reader early (names the file and line); what came before it
    /// is shown
    pub problem: Option<String>,
    /// the trace's topology (`FILE.topology`), when there is a good one
    pub topology: Option<topology::Topology>,
    /// why the `.topology` beside the trace was not used (names the file)
    pub topology_problem: Option<String>,
    /// the application trace (`--app`), if given
    pub app: Option<Arc<RwLock<app::App>>>,
}

impl Shared {
    /// Nothing read yet of `file`.
    pub fn new(file: String, link_mbs: f64) -> Shared {
        Shared {
            file,
            link_mbs,
            names: Names::default(),
            aggregate: Aggregate::new(Vec::new(), 0),
            quantum_bytes: None,
            loading: true,
            lines: 0,
            problem: None,
            topology: None,
            topology_problem: None,
            app: None,
        }
    }
}

/// The shared state to read (a reader that panicked left it consistent: every change
/// is a whole record).
pub fn read_lock(shared: &RwLock<Shared>) -> RwLockReadGuard<'_, Shared> {
    shared.read().unwrap_or_else(PoisonError::into_inner)
}

/// The shared state to change.
pub fn write_lock(shared: &RwLock<Shared>) -> RwLockWriteGuard<'_, Shared> {
    shared.write().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `vesper view`: opens the trace, starts reading it on a thread, and serves the
/// page until the process is stopped (Ctrl-C, SIGTERM).
pub fn view(args: &ViewArgs) -> Result<(), ViewError> {
    let files = TraceFiles::open(&args.trace)?;
    let shared = Arc::new(RwLock::new(Shared::new(
        args.trace.display().to_string(),
        args.link_bandwidth,
    )));
    if let Some(path) = &args.app {
        write_lock(&shared).app = Some(app::spawn(path).map_err(ViewError::Serve)?);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("vesper-view")
        .enable_all()
        .build()
        .map_err(ViewError::Serve)?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(&args.http))
        .map_err(|source| ViewError::Listen {
            addr: args.http.clone(),
            source,
        })?;
    let local: SocketAddr = listener.local_addr().map_err(ViewError::Serve)?;
    tracing::info!(
        "listening on {local}; open http://{local}/ to see {}",
        args.trace.display()
    );
    if !local.ip().is_loopback() {
        tracing::warn!("--http {local}: the page can be reached from other machines");
    }
    let reader = Arc::clone(&shared);
    std::thread::Builder::new()
        .name("vesper-view-reader".into())
        .spawn(move || {
            reader::load(files, &reader);
            log_loaded(&read_lock(&reader));
        })
        .map_err(ViewError::Serve)?;
    runtime
        .block_on(http::serve(listener, shared, shutdown()))
        .map_err(ViewError::Serve)
}

fn log_loaded(state: &Shared) {
    let a = &state.aggregate;
    let c = a.counts();
    let summary = format!(
        "{}: {} links, {} link records, {} states, {} events; {} ({:.1} MB of bins)",
        state.file,
        a.links().len(),
        c.link_communications,
        c.states,
        c.events,
        a.axis(),
        a.bin_bytes() as f64 / 1e6
    );
    match &state.problem {
        Some(problem) => tracing::warn!("{summary}; reading stopped: {problem}"),
        None => tracing::info!("{summary}"),
    }
}

/// Resolves when the process is asked to stop.
async fn shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
