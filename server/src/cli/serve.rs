//! `vesper serve`: the co-simulation server on the command line.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context;
use tracing::info;

use crate::config::{RendezvousMode, ServerConfig};

use super::network::*;
use super::*;

#[derive(Debug, clap::Args)]
// Its doc comments are `--help` text: units stay in plain brackets ([ns]).
#[allow(rustdoc::broken_intra_doc_links)]
pub struct ServeArgs {
    /// Address to listen on (the Dimemas client accepts numeric IPv4 only).
    #[arg(long, default_value = "127.0.0.1:10000")]
    pub listen: String,
    #[command(flatten)]
    pub net: NetworkArgs,
    /// Clients to wait for before simulated time starts (several applications may share
    /// the network).
    #[arg(long, default_value_t = 1)]
    pub clients: usize,
    /// Connections accepted at once; more are refused with a warning.
    #[arg(long, default_value_t = 256)]
    pub max_connections: usize,
    /// Clients one IP address (an IPv6 /64) may have connected at once; more are
    /// refused with a warning. Its connections that have not sent a well-formed line do
    /// not count: the oldest makes room. Default: twice --clients, at least 8. 0 = no
    /// limit.
    #[arg(long, value_name = "N")]
    pub max_connections_per_address: Option<usize>,
    /// Longest line accepted from a client [bytes].
    #[arg(long, default_value_t = vesper_protocol::DEFAULT_MAX_LINE)]
    pub max_line: usize,
    /// Largest reply written at once [bytes]; the legacy client reads 500. 0 = no limit.
    #[arg(long, default_value_t = vesper_protocol::LEGACY_REPLY_LIMIT)]
    pub reply_limit: usize,
    /// Messages one client may have queued or in flight at once.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_in_flight: usize,
    /// SEND/PROTO lines one batch may hold; the rest of a longer batch is dropped.
    #[arg(long, default_value_t = 1 << 16)]
    pub max_batch: usize,
    /// After each exchange, keep polling the sockets without sleeping for this long
    /// [µs]: the client usually answers within microseconds, and a sleeping thread
    /// takes tens of µs to wake. 0 never spins (uses no idle CPU).
    #[arg(long, default_value_t = 200)]
    pub spin_us: u64,
    /// How rendezvous lines are modelled: `dimemas` starts the data at the
    /// READY_TO_RECV time; `wire` sends the request and the acknowledgment through the
    /// network as control packets, and the data when the acknowledgment arrives.
    #[arg(long, value_enum, default_value_t = Rendezvous::Dimemas)]
    pub rendezvous: Rendezvous,
    /// Size of a rendezvous request or acknowledgment in `wire` mode [bytes].
    #[arg(long, default_value_t = 64)]
    pub control_size: u32,
    /// How a waiting client is answered: `batched` sends, with the completions of its
    /// earliest completion time, every later one the model has already fixed within
    /// its safe horizon (no message any client may still send can change them), so the
    /// client needs fewer round trips; `earliest` sends the completions of the earliest
    /// time only. The predictions are the same.
    #[arg(long, value_enum, default_value_t = crate::config::Replies::Batched)]
    pub replies: crate::config::Replies,
    #[command(flatten)]
    pub partitions: PartitionsArg,
    /// Serve run after run: when every client of a run has finished, the next run
    /// starts on a fresh network at time zero with the clients that connected
    /// meanwhile; each run's report is written as it ends (JSON Lines).
    #[arg(long)]
    pub keep_serving: bool,
    /// A client that starts a line or a batch and sends nothing more for this long, or
    /// leaves its replies unread this long, is dropped [s].
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = seconds)]
    pub client_timeout: std::time::Duration,
    /// A connection that sends no well-formed line for this long after connecting is
    /// closed [s]; raise it for a replayer that takes longer to start.
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = seconds)]
    pub silent_timeout: std::time::Duration,
    /// Write the JSON statistics report here (default: standard output); `{run}` in
    /// the name writes a file a run (stats-{run}.json).
    #[arg(long)]
    pub stats: Option<PathBuf>,
    #[command(flatten)]
    pub trace: crate::network_trace::TraceArgs,
    /// The network trace's header date (fixed by default, so that outputs are
    /// reproducible).
    #[arg(long, value_name = "DD/MM/YYYY at HH:MM", default_value = crate::network_trace::SERVE_DATE, value_parser = paraver_date)]
    pub trace_date: String,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Rendezvous {
    Dimemas,
    Wire,
}

/// The server `vesper serve` is to run, checked before anything listens.
#[derive(Debug)]
pub struct Prepared {
    pub config: ServerConfig,
    /// where the reports go, opened
    pub writer: crate::report::ReportWriter,
    /// where the network came from, to name it in a refusal of the model's
    pub origin: String,
}

/// What `vesper serve` checks and opens before it listens: the limits, the network
/// trace, the report's destination and the network, as a server's configuration.
/// (The address to listen on, and the network the model builds, are checked by
/// [`serve()`] as it starts.)
pub fn prepare(args: &ServeArgs) -> anyhow::Result<Prepared> {
    anyhow::ensure!(args.clients > 0, "--clients 0: a run needs at least one client");
    for (flag, value) in [
        ("--max-connections", args.max_connections),
        ("--max-in-flight", args.max_in_flight),
        ("--max-batch", args.max_batch),
    ] {
        anyhow::ensure!(value > 0, "{flag} 0: at least 1");
    }
    anyhow::ensure!(
        args.max_line >= MIN_MAX_LINE,
        "--max-line {}: at least {MIN_MAX_LINE} bytes, or no SEND line fits",
        args.max_line
    );
    if let Some(limit) = args.max_connections_per_address
        && limit > 0
        && limit < args.clients
    {
        tracing::warn!(
            "--max-connections-per-address {limit} is below --clients {}: a run whose clients all run on one machine cannot start",
            args.clients
        );
    }
    let trace = args.trace.config_serving(&args.trace_date, args.keep_serving)?;
    if args.keep_serving
        && let Some(file) = trace.as_ref().and_then(|t| t.file.as_deref())
        && !crate::config::is_per_run(file)
    {
        anyhow::bail!(
            "--trace {} with --keep-serving: every run writes its own trace; put {{run}} in the name (net-{{run}}.prv)",
            file.display()
        );
    }
    // Before the network is built or anyone connects: a report that cannot be written
    // is found now, not after the run.
    let writer =
        crate::report::ReportWriter::open(args.stats.as_deref(), args.keep_serving).map_err(anyhow::Error::msg)?;
    let partitions = args.partitions.count();
    warn_if_more_threads_than_cores(partitions, partitions as usize);
    let (spec, origin) = args.net.spec(None)?;
    let network = args.net.resolve(&spec, &origin, &[])?;
    args.net.check_memory(&network, &origin, partitions)?;
    let config = ServerConfig {
        network,
        clients: args.clients,
        max_connections: args.max_connections,
        max_connections_per_address: args.max_connections_per_address,
        max_line: args.max_line,
        reply_limit: crate::config::reply_limit(args.reply_limit)?,
        max_in_flight: args.max_in_flight,
        max_batch: args.max_batch,
        exit_when_done: !args.keep_serving,
        client_timeout: args.client_timeout,
        silent_timeout: args.silent_timeout,
        spin: std::time::Duration::from_micros(args.spin_us),
        rendezvous: match args.rendezvous {
            Rendezvous::Dimemas => RendezvousMode::Dimemas,
            Rendezvous::Wire => RendezvousMode::Wire {
                control_bytes: args.control_size,
            },
        },
        trace,
        replies: args.replies,
        split: crate::config::Split::Threads(partitions),
        ..ServerConfig::default()
    };
    Ok(Prepared { config, writer, origin })
}

/// `vesper serve`: the server, until its run ends (or, with `--keep-serving`, until a
/// signal); reports are written as runs end.
pub fn serve(args: ServeArgs) -> anyhow::Result<()> {
    serve_as(args, crate::config::Split::Threads(1))
}

/// [`serve()`] as one rank of `ranks` (an MPI run) when given: rank 0 is the server, whose
/// networks' partitions it simulates and whose calls it leads; every other rank builds
/// the same networks and follows them, until rank 0 ends.
pub fn serve_on(args: ServeArgs, ranks: Option<Arc<dyn vesper_netmodels::partition::Ranks>>) -> anyhow::Result<()> {
    use crate::config::Split;
    let Some(ranks) = ranks.filter(|r| r.size() > 1) else {
        return serve(args);
    };
    // Its default, 1, says nothing.
    partitions_on_ranks(ranks.size(), args.partitions.beyond_one())?;
    let trace = args.trace.config(&args.trace_date)?;
    let (spec, origin) = args.net.spec(None)?;
    let network = args.net.resolve(&spec, &origin, &[])?;
    if ranks.rank() != 0 {
        return run::follow_on_ranks(&network, trace.as_ref(), &ranks);
    }
    serve_as(args, Split::Led(vesper_netmodels::partition::Lead::new(ranks)))
}

/// [`serve()`], its network split as `split` says when that is a lead of MPI ranks (else
/// as `--partitions` says).
fn serve_as(args: ServeArgs, split: crate::config::Split) -> anyhow::Result<()> {
    // However the server ends, the ranks that follow are told.
    let _closing = crate::config::Closing(&split);
    let Prepared {
        mut config,
        writer,
        origin,
    } = prepare(&args)?;
    if let crate::config::Split::Led(_) = &split {
        config.split = split.clone();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let writer = Arc::new(Mutex::new(writer));
    let write_failed = Arc::new(AtomicBool::new(false));
    let reports: crate::sync::driver::RunReports = {
        let writer = Arc::clone(&writer);
        let failed = Arc::clone(&write_failed);
        Box::new(
            move |report| match writer.lock().unwrap_or_else(PoisonError::into_inner).write(&report) {
                Ok(to) => info!("run {}: report written to {to}", report.run),
                Err(e) => {
                    tracing::error!("run {}: {e}", report.run);
                    failed.store(true, Ordering::Relaxed);
                }
            },
        )
    };
    let (signal, served) = runtime.block_on(async {
        // Before anyone can connect: a signal that came earlier would kill the process
        // without its report.
        let (signal, shutdown) = shutdown_signal()?;
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .with_context(|| format!("--listen {}: cannot listen there", args.listen))?;
        anyhow::Ok((
            signal,
            crate::sync::listener::serve(listener, config, shutdown, reports).await,
        ))
    })?;
    let served = match served {
        Ok(served) => served,
        // A run the model stopped still reports what it did until then, then fails.
        Err(crate::error::ServerError::Stopped { stopped, report }) => {
            let written = writer.lock().unwrap_or_else(PoisonError::into_inner).write(&report);
            written.map_err(anyhow::Error::msg)?;
            return Err(stopped.into());
        }
        Err(e) => return Err(args.net.name_build_error(e.into(), &origin)),
    };
    anyhow::ensure!(
        !write_failed.load(Ordering::Relaxed),
        "a run's report could not be written (see the log)"
    );
    if served.interrupted {
        // Scripts and containers tell an interrupted run from a finished one: 128 + the
        // signal, as a shell reports a process the signal killed.
        let signal = signal.load(Ordering::Relaxed);
        tracing::warn!("stopped by signal {signal} before every client had finished");
        if let crate::config::Split::Led(lead) = &split {
            lead.close();
        }
        std::process::exit(128 + signal);
    }
    Ok(())
}

/// The shortest `--max-line` that holds a `SEND` line of the legacy client [bytes].
pub const MIN_MAX_LINE: usize = 64;

/// A future that resolves on Ctrl-C or SIGTERM, and the number of the signal that came
/// (0 until then); the handlers are installed at once (a future that installed them
/// when first polled would leave the process to die of a signal that came before).
#[cfg(unix)]
pub fn shutdown_signal() -> anyhow::Result<(Arc<AtomicI32>, impl Future<Output = ()>)> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot watch for Ctrl-C")?;
    let mut terminate = signal(SignalKind::terminate()).context("cannot watch for SIGTERM")?;
    let which = Arc::new(AtomicI32::new(0));
    let came = Arc::clone(&which);
    Ok((which, async move {
        let number = tokio::select! {
            _ = interrupt.recv() => 2,
            _ = terminate.recv() => 15,
        };
        came.store(number, Ordering::Relaxed);
    }))
}

/// A future that resolves on Ctrl-C.
#[cfg(not(unix))]
pub fn shutdown_signal() -> anyhow::Result<(Arc<AtomicI32>, impl Future<Output = ()>)> {
    let which = Arc::new(AtomicI32::new(0));
    let came = Arc::clone(&which);
    Ok((which, async move {
        let _ = tokio::signal::ctrl_c().await;
        came.store(2, Ordering::Relaxed);
    }))
}
