//! The page's detail panels: a link's messages, a port's backlog and events, and the
//! application's task states (`--app`), as JSON routes merged into [`super::http`]'s
//! router.
//!
//! | route | answer |
//! |---|---|
//! | `/detail.js` | the panels' script (embedded) |
//! | `/api/link?link=I[&from_ns=A&to_ns=B]` | the messages on link `I` in the window (from the first byte leaving to the last arriving): their count, and the first [`LIST_LIMIT`] of those its sample kept |
//! | `/api/port?port=NAME[&from_ns=A&to_ns=B]` | port `NAME`'s backlog per bin in the window, its STOP/GO, head-of-line and bubble-wait counts per bin, and the first [`LIST_LIMIT`] events its sample kept |
//! | `/api/app[?from_ns=A&to_ns=B]` | the application trace's threads' states per bin of its own axis ([`super::app`]) |
//!
//! Windows are snapped to whole bins as `/api/window`'s are; every answer is bounded
//! by the bins and [`LIST_LIMIT`], never by the trace's length.

use std::sync::{Arc, PoisonError};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::get;
use serde::{Deserialize, Serialize};

use super::aggregate::{EVENTS_PER_GROUP, GROUP_BINS, MESSAGES_PER_GROUP, Mark, Message, TimedEvent};
use super::app::AppQuery;
use super::{Run, RunQuery, Runs, Shared, app, read_lock, run_of};

const DETAIL_JS: &str = include_str!("page/detail.js");

/// Most messages or events listed in one answer.
pub const LIST_LIMIT: usize = 500;

/// The routes of the panels, to merge into the page's router.
pub fn routes() -> Router<Arc<Runs>> {
    Router::new()
        .route(
            "/detail.js",
            get(|| async { ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], DETAIL_JS) }),
        )
        .route("/api/link", get(link))
        .route("/api/port", get(port))
        .route("/api/app", get(app_states))
}

/// `/api/link`'s query.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct LinkQuery {
    /// the link's index (`/api/trace`'s order)
    pub link: usize,
    /// from \[ns\] (0 when left out)
    pub from_ns: Option<u64>,
    /// to \[ns\] (the trace's end when left out)
    pub to_ns: Option<u64>,
    /// the run (`/api/runs`; the newest when left out)
    pub run: Option<u64>,
}

/// `/api/link`: the messages that crossed a link in a window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinkMessagesJson {
    /// the link's index
    pub link: usize,
    /// the sending port
    pub from: String,
    /// the port at the far end
    pub to: String,
    /// the window's start, snapped to a bin \[ns\]
    pub from_ns: u64,
    /// its end \[ns\]
    pub to_ns: u64,
    /// bytes on the link in the window
    pub bytes: u64,
    /// messages with bytes on the link in the window, all of them
    pub messages: u64,
    /// of those, how many the link's sample kept (the first [`MESSAGES_PER_GROUP`] to
    /// start in each [`GROUP_BINS`] bins)
    pub kept: usize,
    /// messages the link keeps per group of bins
    pub kept_per_group: usize,
    /// bins per group
    pub group_bins: usize,
    /// the first [`LIST_LIMIT`] of those kept, by the time their first byte left
    pub listed: Vec<Message>,
}

/// What `/api/link` answers for `state`, or why not.
pub fn link_json(state: &Shared, query: LinkQuery) -> Result<LinkMessagesJson, String> {
    let a = &state.aggregate;
    let from_ns = query.from_ns.unwrap_or(0);
    let to_ns = query.to_ns.unwrap_or(u64::MAX);
    let m = a
        .link_messages(query.link, from_ns, to_ns, LIST_LIMIT)
        .ok_or_else(|| format!("no link {}: the trace has {} links so far", query.link, a.links().len()))?;
    let link = &a.links()[query.link];
    let name = |thread: u32| state.names.threads.get(thread as usize).cloned().unwrap_or_default();
    Ok(LinkMessagesJson {
        link: query.link,
        from: name(link.from),
        to: name(link.to),
        from_ns: m.from_ns,
        to_ns: m.to_ns,
        bytes: m.bytes,
        messages: m.messages,
        kept: m.kept,
        kept_per_group: MESSAGES_PER_GROUP,
        group_bins: GROUP_BINS,
        listed: m.listed,
    })
}

async fn link(State(runs): State<Arc<Runs>>, Query(query): Query<LinkQuery>) -> Response {
    match the_run(&runs, query.run) {
        Ok(run) => blocking(move || answer(link_json(&read_lock(&run.shared), query))).await,
        Err(why) => (StatusCode::NOT_FOUND, why).into_response(),
    }
}

/// Run `run` (the newest when `None`), or the text of the 404 that says which runs
/// there are.
fn the_run(runs: &Runs, run: Option<u64>) -> Result<Arc<Run>, String> {
    run_of(runs, RunQuery { run })
}

/// `/api/port`'s query.
#[derive(Debug, Clone, Deserialize)]
pub struct PortQuery {
    /// the port's name (`sw12.p3`)
    pub port: String,
    /// from \[ns\] (0 when left out)
    pub from_ns: Option<u64>,
    /// to \[ns\] (the trace's end when left out)
    pub to_ns: Option<u64>,
    /// the run (`/api/runs`; the newest when left out)
    pub run: Option<u64>,
}

/// Counts by kind of mark: STOP (sent or received), GO (sent or received),
/// head-of-line blocking starts, bubble-wait starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MarksJson<T> {
    /// STOP sent or received
    pub stop: T,
    /// GO sent or received
    pub go: T,
    /// head-of-line blocking started
    pub hol: T,
    /// a wait for a slot beyond the cable (bubble flow control) started
    pub wait: T,
}

/// `/api/port`: a port's backlog and events in a window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortJson {
    /// the port's name
    pub port: String,
    /// the window's start, snapped to a bin \[ns\]
    pub from_ns: u64,
    /// its end \[ns\]
    pub to_ns: u64,
    /// a bin's width \[ns\]
    pub bin_ns: u64,
    /// the backlog quantum \[bytes\] (a level `k` holds at most `k` quanta), when the
    /// `.pcf` says it
    pub quantum_bytes: Option<u64>,
    /// per bin of the window: the highest backlog level
    pub max_level: Vec<u16>,
    /// per bin: the mean backlog level
    pub mean_level: Vec<f64>,
    /// per bin: the events by kind
    pub marks: MarksJson<Vec<u32>>,
    /// over the window: the events by kind
    pub totals: MarksJson<u64>,
    /// events of the window its sample kept (the first [`EVENTS_PER_GROUP`] of each
    /// [`GROUP_BINS`] bins, starts and ends)
    pub kept_events: usize,
    /// events a port keeps per group of bins
    pub kept_per_group: usize,
    /// the first [`LIST_LIMIT`] of those kept, by time
    pub events: Vec<TimedEvent>,
}

/// What `/api/port` answers for `state`, or why not.
pub fn port_json(state: &Shared, query: &PortQuery) -> Result<PortJson, String> {
    let thread = state
        .names
        .threads
        .iter()
        .position(|name| *name == query.port)
        .ok_or_else(|| format!("no port named {:?} in the trace", query.port))?;
    let a = &state.aggregate;
    let d = a
        .port_detail(
            thread as u32,
            query.from_ns.unwrap_or(0),
            query.to_ns.unwrap_or(u64::MAX),
            LIST_LIMIT,
        )
        .ok_or_else(|| format!("port {:?} is not in the records read so far", query.port))?;
    let column = |k: Mark| d.marks.iter().map(|m| m[k as usize]).collect::<Vec<u32>>();
    let total = |k: Mark| d.totals[k as usize];
    Ok(PortJson {
        port: query.port.clone(),
        from_ns: d.from_ns,
        to_ns: d.to_ns,
        bin_ns: a.axis().bin_ns(),
        quantum_bytes: state.quantum_bytes,
        max_level: d.max_level,
        mean_level: d.mean_level,
        marks: MarksJson {
            stop: column(Mark::Stop),
            go: column(Mark::Go),
            hol: column(Mark::Hol),
            wait: column(Mark::Wait),
        },
        totals: MarksJson {
            stop: total(Mark::Stop),
            go: total(Mark::Go),
            hol: total(Mark::Hol),
            wait: total(Mark::Wait),
        },
        kept_events: d.kept_events,
        kept_per_group: EVENTS_PER_GROUP,
        events: d.events,
    })
}

async fn port(State(runs): State<Arc<Runs>>, Query(query): Query<PortQuery>) -> Response {
    match the_run(&runs, query.run) {
        Ok(run) => blocking(move || answer(port_json(&read_lock(&run.shared), &query))).await,
        Err(why) => (StatusCode::NOT_FOUND, why).into_response(),
    }
}

async fn app_states(State(runs): State<Arc<Runs>>, Query(query): Query<AppQuery>) -> Response {
    let run = match the_run(&runs, query.run) {
        Ok(run) => run,
        Err(why) => return (StatusCode::NOT_FOUND, why).into_response(),
    };
    blocking(move || {
        let state = read_lock(&run.shared);
        match &state.app {
            Some(app) => Json(app::app_json(
                &app.read().unwrap_or_else(PoisonError::into_inner),
                query,
            ))
            .into_response(),
            None => (
                StatusCode::NOT_FOUND,
                "no application trace: start vesper view with --app app.prv",
            )
                .into_response(),
        }
    })
    .await
}

/// An answer, or 404 with the reason.
fn answer<T: Serialize>(json: Result<T, String>) -> Response {
    match json {
        Ok(json) => Json(json).into_response(),
        Err(why) => (StatusCode::NOT_FOUND, why).into_response(),
    }
}

/// Runs `answer` off the runtime's workers.
async fn blocking(answer: impl FnOnce() -> Response + Send + 'static) -> Response {
    tokio::task::spawn_blocking(answer)
        .await
        .unwrap_or_else(|e| (StatusCode::INTERNAL_SERVER_ERROR, format!("the answer failed: {e}")).into_response())
}
