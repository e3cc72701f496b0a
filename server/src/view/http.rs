//! The page and its JSON, served with axum (see the routes in [`crate::view`]).
//!
//! Every answer is made from the shared state under a read lock, in `spawn_blocking`
//! (a window over every link of a large network is milliseconds of work); the page's
//! assets are compiled in (`include_str!`).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Json, Response};
use axum::routing::get;
use serde::{Deserialize, Serialize};

use super::aggregate::Counts;
use super::{RunQuery, Runs, Shared, layout, read_lock, run_of};

const INDEX_HTML: &str = include_str!("page/index.html");
const VIEW_JS: &str = include_str!("page/view.js");

/// Serves the page on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    runs: Arc<Runs>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(runs))
        .with_graceful_shutdown(shutdown)
        .await
}

/// The routes.
pub fn router(runs: Arc<Runs>) -> Router {
    Router::new()
        .route("/", get(|| async { Html(INDEX_HTML) }))
        .route(
            "/view.js",
            get(|| async { ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], VIEW_JS) }),
        )
        .route("/api/trace", get(trace))
        .route("/api/window", get(window))
        .merge(super::detail::routes())
        .route("/api/runs", get(runs_answer))
        .route("/api/events", get(events))
        .with_state(runs)
}

/// `/api/runs`: the runs kept.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunsJson {
    /// where streams are awaited (`--listen-trace`), or `None` for a file
    pub listening: Option<String>,
    /// runs kept at most (`--keep-runs`)
    pub keep_runs: usize,
    /// runs dropped, the oldest first, to keep that many
    pub dropped_runs: u64,
    /// the runs kept, oldest first
    pub runs: Vec<RunJson>,
}

/// A run in `/api/runs`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunJson {
    /// its number (`run=N` in the other routes)
    pub run: u64,
    /// what it is: the file, or `run N from PEER`
    pub source: String,
    /// `live` (being read), `finished`, or `problem` (see `problem`)
    pub state: &'static str,
    /// what stopped or troubles it
    pub problem: Option<String>,
    /// records read
    pub records: u64,
    /// records the server dropped (its end line's count less those that arrived);
    /// `None` until a stream's end
    pub dropped_records: Option<u64>,
    /// the end so far \[ns\]
    pub end_ns: u64,
    /// bins used, and their width \[ns\]
    pub bins: usize,
    /// a bin's width \[ns\]
    pub bin_ns: u64,
    /// links seen
    pub links: usize,
    /// whether the ports have their names (a stream's `.row` comes at its end)
    pub named: bool,
    /// when it started \[ms since the Unix epoch\]
    pub started_ms: u64,
}

/// What `/api/runs` answers.
pub fn runs_json(runs: &Runs) -> RunsJson {
    let (kept, dropped_runs) = runs.all();
    let runs_kept = kept
        .iter()
        .map(|run| {
            let state = read_lock(&run.shared);
            let a = &state.aggregate;
            let c = a.counts();
            RunJson {
                run: run.number,
                source: state.file.clone(),
                state: match (state.loading, &state.problem) {
                    (true, _) => "live",
                    (false, None) => "finished",
                    (false, Some(_)) => "problem",
                },
                problem: state.problem.clone(),
                records: c.link_communications + c.end_to_end_communications + c.states + c.events,
                dropped_records: state.dropped_records,
                end_ns: a.end_ns(),
                bins: a.used_bins(),
                bin_ns: a.axis().bin_ns(),
                links: a.links().len(),
                named: !state.numbered,
                started_ms: run.started_ms,
            }
        })
        .collect();
    RunsJson {
        listening: runs.listening.clone(),
        keep_runs: runs.keep(),
        dropped_runs,
        runs: runs_kept,
    }
}

async fn runs_answer(State(runs): State<Arc<Runs>>) -> Response {
    blocking(move || Json(runs_json(&runs)).into_response()).await
}

/// Ticks sent at most this often: the page redraws at most ten times a second.
pub const TICK_EVERY: Duration = Duration::from_millis(100);

/// `/api/events`: server-sent events, a `tick` (its data a counter) whenever a run
/// starts or ends or its records reach further, at most one per [`TICK_EVERY`]; the
/// page then asks for what it shows. Nothing is sent while nothing moves (but a
/// comment every 15 s keeps the connection open).
async fn events(State(runs): State<Arc<Runs>>) -> Sse<impl futures_util::Stream<Item = Result<Event, Infallible>>> {
    let ticks = runs.ticks();
    let stream = futures_util::stream::unfold((ticks, true), |(mut ticks, first)| async move {
        if !first {
            tokio::time::sleep(TICK_EVERY).await;
            ticks.changed().await.ok()?;
        }
        let tick = *ticks.borrow_and_update();
        Some((
            Ok(Event::default().event("tick").data(tick.to_string())),
            (ticks, false),
        ))
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// `/api/trace`: what the trace is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceJson {
    /// the trace, as given
    pub file: String,
    /// whether it is still being read
    pub loading: bool,
    /// lines read so far
    pub lines: u64,
    /// what stopped the reading, if anything (names the file and line)
    pub problem: Option<String>,
    /// the trace's end \[ns\]
    pub end_ns: u64,
    /// a bin's width \[ns\]
    pub bin_ns: u64,
    /// bins up to the end
    pub bins: usize,
    /// the link rate of links the topology does not give \[MB/s\] (`--link-bandwidth`)
    pub link_bandwidth_mbs: f64,
    /// the topology, described (`torus 8×8×8`), when the trace has one
    pub topology: Option<String>,
    /// why the `.topology` beside the trace was not used (names the file)
    pub topology_problem: Option<String>,
    /// how the devices are laid out: `kind` (`levels` or `grid`), the levels' `rows`
    /// (`label`, `y`), the grid's `slices` (names, when more than one) and `aspect`
    pub layout: layout::Picture,
    /// the backlog quantum \[bytes\], when the `.pcf` says it
    pub quantum_bytes: Option<u64>,
    /// records read, by kind
    pub records: Counts,
    /// the devices, in the trace's order
    pub devices: Vec<DeviceJson>,
    /// the links, in the order their first records came (a link's index in `/api/window`)
    pub links: Vec<LinkJson>,
    /// bytes per bin over all links
    pub activity: Vec<u64>,
}

/// A device (a task of the trace).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceJson {
    /// `host5`, `sw12`, `r0.host5`
    pub name: String,
    /// a host's adapter (else a switch)
    pub host: bool,
    /// links from the nearest host (`None`: no host reaches it)
    pub level: Option<u32>,
    /// where, from 0 (left) to 1 (right)
    pub x: f64,
    /// where, from 0 (top) to 1 (bottom)
    pub y: f64,
    /// the slice of the picture it is in (`layout.slices`)
    pub slice: u32,
}

/// A link: one direction of a cable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkJson {
    /// the sending port (`sw12.p3`)
    pub from: String,
    /// the port at the far end
    pub to: String,
    /// the sending device's index in `devices`
    pub from_device: u32,
    /// the receiving device's index
    pub to_device: u32,
    /// bytes that crossed it in the whole trace
    pub bytes: u64,
    /// messages that crossed it
    pub messages: u64,
    /// its rate \[MB/s\]: the topology's, or `link_bandwidth_mbs`
    pub mbs: f64,
    /// a torus' wraparound cable (drawn off the grid's edges)
    pub wrap: bool,
}

impl Shared {
    /// Per link of the aggregate: its rate \[MB/s\], the topology's or `link_mbs`.
    pub fn link_rates(&self) -> Vec<f64> {
        let mut by_thread = vec![f64::NAN; self.names.threads.len()];
        for link in self.topology.iter().flat_map(|t| &t.links) {
            if let Some(rate) = by_thread.get_mut(link.from as usize) {
                *rate = link.mbs;
            }
        }
        self.aggregate
            .links()
            .iter()
            .map(|l| {
                let rate = by_thread.get(l.from as usize).copied().unwrap_or(f64::NAN);
                if rate.is_nan() { self.link_mbs } else { rate }
            })
            .collect()
    }
}

async fn trace(State(runs): State<Arc<Runs>>, Query(query): Query<RunQuery>) -> Response {
    let run = match run_of(&runs, query) {
        Ok(run) => run,
        Err(text) => return (StatusCode::NOT_FOUND, text).into_response(),
    };
    blocking(move || Json(trace_json(&read_lock(&run.shared))).into_response()).await
}

/// What `/api/trace` answers for `state`.
pub fn trace_json(state: &Shared) -> TraceJson {
    let (names, a) = (&state.names, &state.aggregate);
    let device = |thread: u32| names.task_of.get(thread as usize).copied().unwrap_or(0);
    let port = |thread: u32| names.threads.get(thread as usize).cloned().unwrap_or_default();
    let topology = state.topology.as_ref();
    let links: Vec<LinkJson> = a
        .links()
        .iter()
        .zip(state.link_rates())
        .map(|(l, mbs)| LinkJson {
            from: port(l.from),
            to: port(l.to),
            from_device: device(l.from),
            to_device: device(l.to),
            bytes: l.bytes,
            messages: l.messages,
            mbs,
            wrap: topology.is_some_and(|t| layout::wraps(t, device(l.from), device(l.to))),
        })
        .collect();
    let host: Vec<bool> = (0..names.tasks.len()).map(|t| names.is_host(t)).collect();
    let edges: Vec<(u32, u32)> = links.iter().map(|l| (l.from_device, l.to_device)).collect();
    let picture = layout::picture(&host, &edges, topology);
    let devices = picture
        .spots
        .iter()
        .zip(&names.tasks)
        .zip(&host)
        .map(|((spot, name), &host)| DeviceJson {
            name: name.clone(),
            host,
            level: spot.level,
            x: spot.x,
            y: spot.y,
            slice: spot.slice,
        })
        .collect();
    TraceJson {
        file: state.file.clone(),
        loading: state.loading,
        lines: state.lines,
        problem: state.problem.clone(),
        end_ns: a.end_ns(),
        bin_ns: a.axis().bin_ns(),
        bins: a.used_bins(),
        link_bandwidth_mbs: state.link_mbs,
        topology: topology.map(|t| t.describe()),
        topology_problem: state.topology_problem.clone(),
        layout: picture,
        quantum_bytes: state.quantum_bytes,
        records: a.counts(),
        devices,
        links,
        activity: a.activity(),
    }
}

/// `/api/window`'s query.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct WindowQuery {
    /// from \[ns\] (0 when left out)
    pub from_ns: Option<u64>,
    /// to \[ns\] (the trace's end when left out)
    pub to_ns: Option<u64>,
    /// instead of `from_ns` and `to_ns`: the last `last` bins (follow mode: the live edge)
    pub last: Option<usize>,
    /// the run (the newest when left out)
    pub run: Option<u64>,
    /// every link's bins too
    #[serde(default)]
    pub bins: bool,
}

/// `/api/window`: a time window's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowJson {
    /// the window's start, snapped to a bin \[ns\]
    pub from_ns: u64,
    /// its end: a bin's end, or the trace's \[ns\]
    pub to_ns: u64,
    /// the trace's end so far \[ns\]
    pub end_ns: u64,
    /// a bin's width \[ns\]
    pub bin_ns: u64,
    /// bins up to the trace's end so far
    pub trace_bins: usize,
    /// what a link of `link_bandwidth_mbs` can carry in the window \[bytes\] (a link
    /// of rate `mbs` carries `mbs / link_bandwidth_mbs` times that)
    pub capacity_bytes: f64,
    /// per link (in `/api/trace`'s order): the bytes that crossed it in the window
    pub bytes: Vec<u64>,
    /// per link, with `bins=true`: its bins in the window
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bins: Option<Vec<Vec<u64>>>,
    /// the [`TOP_LINKS`] links that carried the most in the window, busiest first (ties
    /// in link order); none that carried nothing
    pub top: Vec<LinkLoadJson>,
    /// the port with the highest backlog in the window (the first such)
    pub highest_backlog: Option<BacklogJson>,
}

/// Links in a window's top list.
pub const TOP_LINKS: usize = 10;

/// A link's load in a window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkLoadJson {
    /// its index
    pub link: usize,
    /// the sending port
    pub from: String,
    /// the port at the far end
    pub to: String,
    /// bytes in the window
    pub bytes: u64,
    /// bytes over what it can carry in the window, at its own rate
    pub utilisation: f64,
}

/// The highest backlog of a window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BacklogJson {
    /// the port
    pub port: String,
    /// its highest backlog level
    pub max_level: u16,
    /// what that level means: at most this many bytes (with the `.pcf`'s quantum)
    pub max_bytes: Option<u64>,
    /// its mean level over the window
    pub mean_level: f64,
}

async fn window(State(runs): State<Arc<Runs>>, Query(query): Query<WindowQuery>) -> Response {
    let run = match run_of(&runs, RunQuery { run: query.run }) {
        Ok(run) => run,
        Err(text) => return (StatusCode::NOT_FOUND, text).into_response(),
    };
    blocking(move || Json(window_json(&read_lock(&run.shared), query)).into_response()).await
}

/// What `/api/window` answers for `state`.
pub fn window_json(state: &Shared, query: WindowQuery) -> WindowJson {
    let a = &state.aggregate;
    let (from_ns, to_ns) = match query.last {
        Some(last) => {
            let bins = a.used_bins() as u64;
            (bins.saturating_sub(last as u64) * a.axis().bin_ns(), u64::MAX)
        }
        None => (query.from_ns.unwrap_or(0), query.to_ns.unwrap_or(u64::MAX)),
    };
    let w = a.window(from_ns, to_ns, query.bins);
    // MB/s = bytes per µs; the window in ns.
    let capacity_bytes = state.link_mbs * (w.to_ns - w.from_ns) as f64 / 1000.0;
    let name = |thread: u32| state.names.threads.get(thread as usize).cloned().unwrap_or_default();
    let bytes: Vec<u64> = w.links.iter().map(|l| l.bytes).collect();
    let rates = state.link_rates();
    let span_us = (w.to_ns - w.from_ns) as f64 / 1000.0;
    let mut top: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] > 0).collect();
    // Ties: the sending port first in the `.row` (as the trace summary's busiest link).
    top.sort_by_key(|&i| (std::cmp::Reverse(bytes[i]), a.links()[i].from));
    top.truncate(TOP_LINKS);
    let top = top
        .into_iter()
        .map(|i| LinkLoadJson {
            link: i,
            from: name(a.links()[i].from),
            to: name(a.links()[i].to),
            bytes: bytes[i],
            utilisation: bytes[i] as f64 / (rates[i] * span_us),
        })
        .collect();
    let highest_backlog = w
        .ports
        .iter()
        .enumerate()
        .min_by_key(|(i, p)| (std::cmp::Reverse(p.max_level), *i))
        .map(|(_, p)| BacklogJson {
            port: name(p.thread),
            max_level: p.max_level,
            max_bytes: state.quantum_bytes.map(|q| q.saturating_mul(u64::from(p.max_level))),
            mean_level: p.mean_level,
        });
    WindowJson {
        from_ns: w.from_ns,
        to_ns: w.to_ns,
        end_ns: a.end_ns(),
        bin_ns: a.axis().bin_ns(),
        trace_bins: a.used_bins(),
        capacity_bytes,
        bins: query.bins.then(|| w.links.into_iter().map(|l| l.bins).collect()),
        bytes,
        top,
        highest_backlog,
    }
}

/// Runs `answer` off the runtime's workers.
async fn blocking(answer: impl FnOnce() -> Response + Send + 'static) -> Response {
    tokio::task::spawn_blocking(answer)
        .await
        .unwrap_or_else(|e| (StatusCode::INTERNAL_SERVER_ERROR, format!("the answer failed: {e}")).into_response())
}
