//! The listener: accepts connections on tokio (with backoff on errors and a connection
//! limit), sets `TCP_NODELAY` on each, and hands the socket to the simulation thread
//! ([`crate::sync::driver`]), which owns the coordinator and the simulation.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::net::TcpListener;
use tracing::{error, info, warn};

use crate::config::ServerConfig;
use crate::report::Report;
use crate::sync::coordinator::Coordinator;
use crate::sync::driver::{Control, Driver, NewRun, Occupancy, RunReports, Served};

/// The kernel's send buffer of a client socket \[bytes\].
pub const SEND_BUFFER: usize = 64 * 1024;

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// the network description is invalid
    #[error("network: {0}")]
    Network(#[from] vesper_netmodels::BuildError),
    /// the network or its trace cannot be set up
    #[error(transparent)]
    Trace(#[from] crate::network_trace::TraceSetupError),
    /// the network cannot be split as asked
    #[error("{asked}: {error}")]
    Split {
        /// what asked for the split (`--partitions N`, `N MPI ranks`)
        asked: String,
        /// why not
        error: vesper_netmodels::partition::SplitError,
    },
    /// the run could not go on; the report of what it did until then
    #[error("{stopped}")]
    Stopped {
        /// why
        stopped: crate::sync::coordinator::Stopped,
        /// the statistics up to the stop
        report: Box<Report>,
    },
    /// the simulation thread could not start or died
    #[error("simulation thread: {0}")]
    Thread(String),
}

/// Serves one run on `listener`: until every expected client has finished (or, when
/// `config.exit_when_done` is false, until `shutdown` resolves, run after run) and
/// returns the report of the last run, the one under way at a shutdown.
pub async fn run(
    listener: TcpListener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> Result<Report, ServerError> {
    let last = Arc::new(std::sync::Mutex::new(None));
    let keep = Arc::clone(&last);
    let reports: RunReports = Box::new(move |report| {
        *keep.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(report);
    });
    serve(listener, config, shutdown, reports).await?;
    let report = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
    report.ok_or_else(|| ServerError::Thread("the server ended without a report".into()))
}

/// Serves run after run on `listener` until the first run is complete (when
/// `config.exit_when_done`) or `shutdown` resolves; hands each run's report to
/// `reports` as the run ends, on the simulation thread. Each run starts on a fresh
/// network at time zero, so that it gives what it would give on a fresh server.
pub async fn serve(
    listener: TcpListener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
    reports: RunReports,
) -> Result<Served, ServerError> {
    let stop_flag = Arc::new(AtomicBool::new(false));
    let occupancy = Arc::new(Occupancy::default());
    let new_run: NewRun = {
        let config = config.clone();
        let stop_flag = Arc::clone(&stop_flag);
        Box::new(move |run| {
            let trace = config.trace.as_ref().map(|t| t.for_run(run));
            let (sim, stream) =
                crate::network_trace::build(&config.network, trace.as_ref(), &config.split, &stop_flag)?;
            let mut coordinator = Coordinator::with_network(config.clone(), sim, Arc::clone(&stop_flag));
            coordinator.report_stream(stream);
            Ok(coordinator)
        })
    };
    let (control, control_rx) = std::sync::mpsc::channel();
    let (driver, waker) = Driver::new(
        config.clone(),
        new_run,
        reports,
        control_rx,
        Arc::clone(&occupancy),
        Arc::clone(&stop_flag),
    )?;
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let thread = std::thread::Builder::new()
        .name("vesper-sim".into())
        .spawn(move || {
            let served = driver.run();
            let _ = done_tx.send(());
            served
        })
        .map_err(|e| ServerError::Thread(e.to_string()))?;

    if let Ok(addr) = listener.local_addr() {
        info!("listening on {addr}; network: {}", config.network.describe());
    }
    let mut next_client = 0u32;
    tokio::pin!(shutdown);
    tokio::pin!(done_rx);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    // Connections that have not spoken yet make room for new ones.
                    let open = occupancy.open.load(Ordering::Acquire);
                    let silent = occupancy.silent.load(Ordering::Acquire);
                    if open.saturating_sub(silent) >= config.max_connections {
                        warn!("connection from {peer} refused: {} clients already connected (--max-connections)", config.max_connections);
                        continue;
                    }
                    if let Err(e) = stream.set_nodelay(true) {
                        warn!("connection from {peer}: cannot set TCP_NODELAY: {e}");
                    }
                    // Replies are a few hundred bytes a round trip: a small send buffer
                    // bounds what a client that does not read them can hold in the
                    // kernel, so that the server's own limit on unread replies acts.
                    if let Err(e) = socket2::SockRef::from(&stream).set_send_buffer_size(SEND_BUFFER) {
                        warn!("connection from {peer}: cannot set its send buffer: {e}");
                    }
                    let stream = match stream.into_std() {
                        Ok(s) => s,
                        Err(e) => {
                            warn!("connection from {peer} dropped: {e}");
                            continue;
                        }
                    };
                    occupancy.open.fetch_add(1, Ordering::AcqRel);
                    occupancy.silent.fetch_add(1, Ordering::AcqRel);
                    let client = next_client;
                    next_client += 1;
                    let accepted = Control::Accepted { client, stream, peer: peer.to_string() };
                    if control.send(accepted).is_err() {
                        break;
                    }
                    let _ = waker.wake();
                }
                Err(e) => {
                    // Out of file descriptors and the like: wait, then go on.
                    error!("accept failed: {e}; retrying");
                    tokio::time::sleep(config.accept_backoff).await;
                }
            },
            _ = &mut done_rx => break,
            () = &mut shutdown => {
                info!("shutting down");
                stop_flag.store(true, Ordering::Relaxed);
                let _ = control.send(Control::Shutdown);
                let _ = waker.wake();
                break;
            }
        }
    }
    drop(control);
    let _ = waker.wake();
    tokio::task::spawn_blocking(move || thread.join())
        .await
        .map_err(|e| ServerError::Thread(e.to_string()))?
        .map_err(|_| ServerError::Thread("the simulation thread panicked".into()))?
}
