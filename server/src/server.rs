//! The listener: accepts connections on tokio (with backoff on errors and a connection
//! limit), sets `TCP_NODELAY` on each, and hands the socket to the simulation thread
//! ([`crate::driver`]), which owns the coordinator and the simulation.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::net::TcpListener;
use tracing::{error, info, warn};

use crate::config::ServerConfig;
use crate::coordinator::Coordinator;
use crate::driver::{Control, Driver};
use crate::report::Report;
use crate::session::SessionLimits;

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// the network description is invalid
    #[error("network: {0}")]
    Network(#[from] vesper_netmodels::BuildError),
    /// the network or its trace cannot be set up
    #[error(transparent)]
    Trace(#[from] crate::network_trace::TraceSetupError),
    /// the run could not go on; the report of what it did until then
    #[error("{stopped}")]
    Stopped {
        /// why
        stopped: crate::coordinator::Stopped,
        /// the statistics up to the stop
        report: Box<Report>,
    },
    /// the simulation thread could not start or died
    #[error("simulation thread: {0}")]
    Thread(String),
}

/// Serves clients on `listener` until the run is complete (every expected client has
/// finished, when `config.exit_when_done`) or `shutdown` resolves; returns the report.
pub async fn run(
    listener: TcpListener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> Result<Report, ServerError> {
    let sim = crate::network_trace::build(&config.network, config.trace.as_ref())?;
    let stop_flag = Arc::new(AtomicBool::new(false));
    let open = Arc::new(AtomicUsize::new(0));
    let coordinator = Coordinator::with_network(config.clone(), sim, Arc::clone(&stop_flag));
    let limits = SessionLimits {
        max_line: config.max_line,
        max_batch: config.max_batch,
    };
    let (control, control_rx) = std::sync::mpsc::channel();
    let (driver, waker) = Driver::new(
        coordinator,
        control_rx,
        limits,
        config.spin,
        Arc::clone(&open),
        Arc::clone(&stop_flag),
    )
    .map_err(|e| ServerError::Thread(e.to_string()))?;
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let thread = std::thread::Builder::new()
        .name("vesper-sim".into())
        .spawn(move || {
            let report = driver.run();
            let _ = done_tx.send(());
            report
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
                    if open.load(Ordering::Acquire) >= config.max_connections {
                        warn!("connection from {peer} refused: {} connections already open (--max-connections)", config.max_connections);
                        continue;
                    }
                    if let Err(e) = stream.set_nodelay(true) {
                        warn!("connection from {peer}: cannot set TCP_NODELAY: {e}");
                    }
                    let stream = match stream.into_std() {
                        Ok(s) => s,
                        Err(e) => {
                            warn!("connection from {peer} dropped: {e}");
                            continue;
                        }
                    };
                    open.fetch_add(1, Ordering::AcqRel);
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
    let report = tokio::task::spawn_blocking(move || thread.join())
        .await
        .map_err(|e| ServerError::Thread(e.to_string()))?
        .map_err(|_| ServerError::Thread("the simulation thread panicked".into()))??;
    Ok(report)
}
