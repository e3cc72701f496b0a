//! The listener: accepts connections on tokio (with backoff on errors, a connection
//! limit and a limit per address), sets `TCP_NODELAY` on each, and hands the socket to
//! the simulation thread ([`crate::sync::driver`]), which owns the coordinator and the
//! simulation.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::time::Instant;
use tracing::{error, info, warn};

use crate::config::ServerConfig;
use crate::error::ServerError;
use crate::report::Report;
use crate::sync::coordinator::Coordinator;
use crate::sync::driver::{Control, Driver, NewRun, Occupancy, RunReports, Served};

/// The kernel's send buffer of a client socket \[bytes\].
pub const SEND_BUFFER: usize = 64 * 1024;

/// Refusals of one limit are logged at most once in this long.
const REFUSALS_LOGGED_EVERY: Duration = Duration::from_secs(10);

/// The refusals of one limit, logged so that a flood of connections cannot fill the
/// log: the first at once, with its reason; the others within
/// [`REFUSALS_LOGGED_EVERY`] of a logged line are counted, and the count is logged when
/// that time is up (or when the server stops).
#[derive(Debug)]
struct Refusals {
    /// the limit, as the log names it (`--max-connections 256`)
    limit: String,
    /// when the last line was logged
    logged: Option<Instant>,
    /// refusals since then, not logged one by one
    unlogged: u64,
}

impl Refusals {
    fn new(limit: String) -> Self {
        Refusals {
            limit,
            logged: None,
            unlogged: 0,
        }
    }

    /// The connection from `peer` is refused, `why`.
    fn refuse(&mut self, peer: SocketAddr, why: std::fmt::Arguments<'_>) {
        let now = Instant::now();
        if self.logged.is_some_and(|at| now < at + REFUSALS_LOGGED_EVERY) {
            self.unlogged += 1;
            return;
        }
        warn!("connection from {peer} refused: {why} ({})", self.limit);
        self.logged = Some(now);
    }

    /// When the count of the refusals not logged one by one is due, if there are any.
    fn due(&self) -> Option<Instant> {
        let logged = self.logged.filter(|_| self.unlogged > 0)?;
        Some(logged + REFUSALS_LOGGED_EVERY)
    }

    /// Logs the count of the refusals not logged one by one, if there are any.
    fn log_count(&mut self) {
        if self.unlogged == 0 {
            return;
        }
        let s = if self.unlogged == 1 { "" } else { "s" };
        warn!(
            "{} more connection{s} refused ({}) since the last such line",
            self.unlogged, self.limit
        );
        self.unlogged = 0;
        self.logged = Some(Instant::now());
    }
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
    let per_address = config.per_address_limit();
    let mut full = Refusals::new(format!("--max-connections {}", config.max_connections));
    let mut crowded = Refusals::new(format!(
        "--max-connections-per-address {}",
        per_address.unwrap_or_default()
    ));
    tokio::pin!(shutdown);
    tokio::pin!(done_rx);
    loop {
        let count_due = [full.due(), crowded.due()].into_iter().flatten().min();
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    // Connections that have not spoken yet make room for new ones.
                    let open = occupancy.open.load(Ordering::Acquire);
                    let silent = occupancy.silent.load(Ordering::Acquire);
                    if open.saturating_sub(silent) >= config.max_connections {
                        full.refuse(peer, format_args!("{} clients already connected", config.max_connections));
                        continue;
                    }
                    let Some(stream) = configured(stream, peer) else {
                        continue;
                    };
                    if let Err(clients) = occupancy.open(peer, per_address) {
                        let from = crate::sync::driver::origin_text(peer.ip());
                        crowded.refuse(peer, format_args!("{clients} clients from {from} already connected"));
                        continue;
                    }
                    let accepted = Control::Accepted { client: next_client, stream, peer };
                    next_client += 1;
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
            () = tokio::time::sleep_until(count_due.unwrap_or_else(Instant::now)), if count_due.is_some() => {
                let now = Instant::now();
                for refusals in [&mut full, &mut crowded] {
                    if refusals.due().is_some_and(|due| due <= now) {
                        refusals.log_count();
                    }
                }
            }
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
    full.log_count();
    crowded.log_count();
    drop(control);
    let _ = waker.wake();
    tokio::task::spawn_blocking(move || thread.join())
        .await
        .map_err(|e| ServerError::Thread(e.to_string()))?
        .map_err(|_| ServerError::Thread("the simulation thread panicked".into()))?
}

/// An accepted socket made ready for the simulation thread: `TCP_NODELAY`, a small send
/// buffer, out of tokio; `None` if it cannot be taken out of tokio (logged).
fn configured(stream: tokio::net::TcpStream, peer: SocketAddr) -> Option<std::net::TcpStream> {
    if let Err(e) = stream.set_nodelay(true) {
        warn!("connection from {peer}: cannot set TCP_NODELAY: {e}");
    }
    // Replies are a few hundred bytes a round trip: a small send buffer bounds what a
    // client that does not read them can hold in the kernel, so that the server's own
    // limit on unread replies acts.
    if let Err(e) = socket2::SockRef::from(&stream).set_send_buffer_size(SEND_BUFFER) {
        warn!("connection from {peer}: cannot set its send buffer: {e}");
    }
    match stream.into_std() {
        Ok(stream) => Some(stream),
        Err(e) => {
            warn!("connection from {peer} dropped: {e}");
            None
        }
    }
}
