//! `vesper view`: a web page, served by vesper itself, that shows where a network
//! congests: the topology drawn as it is recognised (levels, grids), every link
//! coloured by its utilisation in a time window chosen with a slider, or following the
//! live edge of runs as they stream (issue 44; see `docs/view.md`).
//!
//! ```text
//!   FILE.prv[.gz], .row, .pcf, ─▶ reader (thread) ──records─▶ Aggregate ◀─read lock─ http (tokio, axum)
//!   .topology                                                per-link bins          GET /, /view.js, /api/runs,
//!   vesper serve|run           ─▶ listen: a thread ─records─▶ per-port bins          /api/trace, /api/window
//!   --trace-stream ADDR           a stream, each              (a Shared a run;       (?run=N), /api/events (SSE)
//!   (one connection a run)        one run                      Runs: the last              │ JSON: only what the
//!                                 └─▶ --forward-trace: the       --keep-runs)              ▼ page draws; ticks
//!                                     same bytes to a collector                   browser (canvas, no build step)
//! ```
//!
//! # Where it lives
//!
//! A verb of the `server` crate (the architecture guide: the crate that owns the
//! command line, the sockets and tokio): [`reader`] turns trace text into typed
//! records, [`aggregate`] folds them into bins and knows nothing of files or HTTP,
//! [`topology`] reads the trace's `.topology` (or a stream's topology block),
//! [`layout`] places the devices, [`listen`] reads live streams (`--listen-trace`),
//! [`detail`] answers the panels, [`http`] serves the page and its JSON. It depends
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
//! A trace of more than [`header::MAX_THREADS`] threads is refused, so the bound holds
//! for any file.
//!
//! # HTTP API
//!
//! Served on `--http ADDR` (`127.0.0.1:8080` by default: loopback only unless told,
//! and a warning in the log when not); nothing but these routes, all `GET`. A file is
//! run 1; with `--listen-trace` each stream is a run, numbered as `vesper collect`
//! numbers them; `run=N` picks one (the newest when left out; a run not kept is a 404
//! that says which are):
//!
//! | route | answer |
//! |---|---|
//! | `/` | the page (HTML, embedded in the binary) |
//! | `/view.js` | its script (plain JavaScript, embedded; no build step, nothing fetched from elsewhere) |
//! | `/api/runs` | where streams are awaited (`null` for a file), the runs kept at most and dropped, and per run: number, source, state (`live`, `finished`, `problem`), problem, records, the server's dropped records (from a stream's end line), end, bins and their width, links, whether the ports are named yet, start time |
//! | `/api/events` | server-sent events: a `tick` when a run starts or ends or its records reach further, at most ten a second |
//! | `/api/trace[?run=N]` | what the trace is: file, whether it is still being read, the problem met if any, end time, the bins' width and count, the default link rate, the topology described and the problem with its file if any, the layout (levels or grid, rows, slices, aspect), the backlog quantum, record counts, the devices (name, host or not, level, x, y, slice) and the links (from and to port and device, bytes, messages, rate, wraparound) in a fixed order, and the bytes per bin over all links (the slider's histogram) |
//! | `/api/window?from_ns=A&to_ns=B[&bins=true][&run=N]` | the window `[A, B)` snapped to whole bins (or `last=K`: the last K bins, the live edge): its bounds, the trace's end and bins so far, what a link can carry in it, every link's bytes in it (in `/api/trace`'s order), with `bins=true` every link's bins in it, the ten busiest links and the highest backlog |
//! | `/detail.js`, `/api/link`, `/api/port`, `/api/app` | the panels: a link's messages, a port's backlog and events, the application's task states (see [`detail`]; each takes `run=N` too) |
//!
//! The page asks for `/api/runs` once, then for a file `/api/trace` once (and again
//! while the trace is being read, or when a window shows more links than it knows),
//! then one `/api/window` per slider move: a few bytes a link, never a record. Live,
//! it listens to `/api/events`: each tick costs one `/api/runs` and one
//! `/api/window` (`last=K` in follow mode), and `/api/trace` only when the run's
//! links, names or state changed (at most once a second while it is live). A
//! selected link or port asks its route once per window.
//!
//! # Live runs: lag and memory
//!
//! Each stream is read on a thread of its own and folded a batch at a time, when
//! [`listen::BATCH`] records are read or nothing more has arrived: the page is at most
//! a batch behind what the socket delivered. The reader never waits for the page;
//! when folding is slower than the server, the socket's buffers fill and TCP slows the
//! server, whose stream queue then drops records after `--trace-stream-wait-ms` (the
//! simulation is never held longer); the count arrives in the stream's end line and is
//! shown with the run. Measured (2-core development machine, release build): about
//! 2 million records (117 MB) a second checked and folded on one core, a hundred times
//! what a simulation of the fat-tree preset produces. Memory: the last `--keep-runs` runs (default
//! [`DEFAULT_KEEP_RUNS`]), each bounded as above (325 MB of bins for a 4,096-host
//! fat tree), at most 16 streams read at once.

pub mod aggregate;
pub mod app;
pub mod detail;
pub mod header;
pub mod http;
pub mod layout;
pub mod listen;
pub mod reader;
pub mod topology;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, SystemTime};

pub use aggregate::{Aggregate, BINS};
pub use header::Names;
pub use reader::{OpenError, TraceFiles};

/// The models' default link rate \[MB/s\] (2 Gb/s, Myrinet-2000 class).
pub const DEFAULT_LINK_MBS: f64 = 250.0;

/// Runs kept by default with `--listen-trace`.
pub const DEFAULT_KEEP_RUNS: usize = 8;

/// `vesper view`'s options.
#[derive(Debug, Clone, clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["trace", "listen_trace"])))]
// Its doc comments are `--help` text: units stay in plain brackets ([s]).
#[allow(rustdoc::broken_intra_doc_links)]
pub struct ViewArgs {
    /// The network trace to show: FILE.prv or FILE.prv.gz, with FILE.row beside it (and
    /// FILE.pcf, for the backlog's unit), as `--trace` or `vesper collect` writes them.
    #[arg(value_name = "FILE.prv[.gz]")]
    pub trace: Option<PathBuf>,
    /// Instead of a file, show live runs: listen here (HOST:PORT; port 0 picks a free
    /// port, logged) for the trace streams of `vesper serve|run --trace-stream ADDR`,
    /// each connection a run.
    #[arg(long, value_name = "ADDR")]
    pub listen_trace: Option<String>,
    /// With --listen-trace: the runs kept, the newest; older ones are dropped (the page
    /// says how many).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_KEEP_RUNS, value_parser = keep_runs)]
    pub keep_runs: usize,
    /// With --listen-trace: give up on a stream that has started and then sends nothing
    /// for this long [s] (what it sent stays shown, with a message); 0: never.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub stall_timeout_s: u64,
    /// With --listen-trace: copy every run's stream, byte for byte, to this address
    /// (HOST:PORT), for a `vesper collect` behind the view (a server streams to one
    /// address). A collector out of reach leaves runs unforwarded, with a warning.
    #[arg(long, value_name = "ADDR", requires = "listen_trace")]
    pub forward_trace: Option<String>,
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
    #[arg(long, value_name = "FILE.prv[.gz]", requires = "trace")]
    pub app: Option<PathBuf>,
}

fn keep_runs(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!("expected a number of runs from 1 to 1024, got {text:?}")),
    }
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
    /// the page's address, or the streams'
    #[error("{flag} {addr}: cannot listen there: {source}")]
    Listen {
        /// `--http` or `--listen-trace`
        flag: &'static str,
        /// the address given
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
    /// a stream's topology block (`#vesper-topology`), as sent: JSON text
    pub topology_text: Option<String>,
    /// records the server dropped from a stream (its end line's count less those that
    /// arrived); `None` until the end line, and for files
    pub dropped_records: Option<u64>,
    /// the run was dropped from the page (`--keep-runs`): its reader stops
    pub abandoned: bool,
    /// the ports are named by number (a stream whose `.row` has not come)
    pub numbered: bool,
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
            topology_text: None,
            dropped_records: None,
            abandoned: false,
            numbered: false,
        }
    }
}

/// A run on the page: a trace file's, or a stream's.
#[derive(Debug)]
pub struct Run {
    /// its number: 1 for a file; a stream's in the order the connections came, as
    /// `vesper collect` numbers them
    pub number: u64,
    /// when it started \[ms since the Unix epoch\]
    pub started_ms: u64,
    /// what has been read of it
    pub shared: Arc<RwLock<Shared>>,
}

/// The runs the page shows (the newest `keep`), and the ticks that tell the page
/// something moved.
#[derive(Debug)]
pub struct Runs {
    list: Mutex<RunList>,
    keep: usize,
    /// where the streams come (`--listen-trace`'s address), or `None` for a file
    pub listening: Option<String>,
    ticks: tokio::sync::watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct RunList {
    runs: VecDeque<Arc<Run>>,
    dropped: u64,
}

/// The run a route's `run=N` names (the newest when left out).
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
pub struct RunQuery {
    /// the run's number
    pub run: Option<u64>,
}

/// Run `query.run`, or the text of a 404 that says which runs there are.
fn run_of(runs: &Runs, query: RunQuery) -> Result<Arc<Run>, String> {
    runs.get(query.run).ok_or_else(|| {
        let (kept, dropped) = runs.all();
        let numbers: Vec<String> = kept.iter().map(|r| r.number.to_string()).collect();
        let what = match query.run {
            Some(n) => format!("no run {n}"),
            None => "no run yet".to_string(),
        };
        format!(
            "{what}: the runs kept are [{}], {dropped} dropped (--keep-runs {}){}",
            numbers.join(", "),
            runs.keep(),
            runs.listening
                .as_ref()
                .map_or(String::new(), |at| format!("; streams are awaited on {at}"))
        )
    })
}

impl Runs {
    /// No run yet; `keep` runs kept at most (at least 1).
    pub fn new(keep: usize, listening: Option<String>) -> Runs {
        Runs {
            list: Mutex::default(),
            keep: keep.max(1),
            listening,
            ticks: tokio::sync::watch::Sender::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RunList> {
        self.list.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds run `number`; the oldest beyond `keep` is dropped (and its reader told).
    pub fn add(&self, number: u64, shared: Arc<RwLock<Shared>>) -> Arc<Run> {
        let started_ms = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let run = Arc::new(Run {
            number,
            started_ms,
            shared,
        });
        let mut list = self.lock();
        // In number order (streams may start in another order than their numbers).
        let at = list.runs.partition_point(|r| r.number < number);
        list.runs.insert(at, Arc::clone(&run));
        while list.runs.len() > self.keep {
            if let Some(old) = list.runs.pop_front() {
                write_lock(&old.shared).abandoned = true;
                list.dropped += 1;
            }
        }
        drop(list);
        self.tick();
        run
    }

    /// Run `number`, or the newest when `None`.
    pub fn get(&self, number: Option<u64>) -> Option<Arc<Run>> {
        let list = self.lock();
        match number {
            None => list.runs.back().cloned(),
            Some(n) => list.runs.iter().find(|r| r.number == n).cloned(),
        }
    }

    /// The runs kept, oldest first, and how many were dropped.
    pub fn all(&self) -> (Vec<Arc<Run>>, u64) {
        let list = self.lock();
        (list.runs.iter().cloned().collect(), list.dropped)
    }

    /// The runs kept at most.
    pub fn keep(&self) -> usize {
        self.keep
    }

    /// Something moved: a run started or ended, or its records reached further.
    pub fn tick(&self) {
        self.ticks.send_modify(|t| *t = t.wrapping_add(1));
    }

    /// The ticks, for the page's events.
    pub fn ticks(&self) -> tokio::sync::watch::Receiver<u64> {
        self.ticks.subscribe()
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

/// Runs `vesper view`: opens the trace and starts reading it on a thread, or listens
/// for streams (`--listen-trace`), and serves the page until the process is stopped
/// (Ctrl-C, SIGTERM).
pub fn view(args: &ViewArgs) -> Result<(), ViewError> {
    let files = match (&args.trace, &args.listen_trace) {
        (Some(trace), None) => Some(TraceFiles::open(trace)?),
        _ => None,
    };
    let app = match &args.app {
        Some(path) => Some(app::spawn(path).map_err(ViewError::Serve)?),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("vesper-view")
        .enable_all()
        .build()
        .map_err(ViewError::Serve)?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(&args.http))
        .map_err(|source| ViewError::Listen {
            flag: "--http",
            addr: args.http.clone(),
            source,
        })?;
    let local: SocketAddr = listener.local_addr().map_err(ViewError::Serve)?;
    if !local.ip().is_loopback() {
        tracing::warn!("--http {local}: the page can be reached from other machines");
    }
    let runs = match files {
        Some(files) => {
            let path = files.prv_path.display().to_string();
            tracing::info!("listening on {local}; open http://{local}/ to see {path}");
            let runs = Arc::new(Runs::new(1, None));
            let shared = Arc::new(RwLock::new(Shared::new(path, args.link_bandwidth)));
            write_lock(&shared).app = app;
            runs.add(1, Arc::clone(&shared));
            let ticks = Arc::clone(&runs);
            std::thread::Builder::new()
                .name("vesper-view-reader".into())
                .spawn(move || {
                    reader::load(files, &shared);
                    ticks.tick();
                    log_loaded(&read_lock(&shared));
                })
                .map_err(ViewError::Serve)?;
            runs
        }
        None => {
            let addr = args.listen_trace.clone().unwrap_or_default();
            let streams = std::net::TcpListener::bind(&addr).map_err(|source| ViewError::Listen {
                flag: "--listen-trace",
                addr: addr.clone(),
                source,
            })?;
            let streams_at = streams.local_addr().map_or(addr, |a| a.to_string());
            tracing::info!(
                "listening on {local}; open http://{local}/ to watch the runs streamed to {streams_at} \
                 (vesper serve|run --trace-stream {streams_at})"
            );
            let runs = Arc::new(Runs::new(args.keep_runs, Some(streams_at.clone())));
            let accepting = Arc::clone(&runs);
            let options = listen::StreamOptions {
                stall: (args.stall_timeout_s > 0).then(|| Duration::from_secs(args.stall_timeout_s)),
                link_mbs: args.link_bandwidth,
                forward: args.forward_trace.clone(),
            };
            std::thread::Builder::new()
                .name("vesper-view-accept".into())
                .spawn(move || listen::accept(&streams, &streams_at, &accepting, &options))
                .map_err(ViewError::Serve)?;
            runs
        }
    };
    runtime
        .block_on(http::serve(listener, runs, shutdown()))
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
