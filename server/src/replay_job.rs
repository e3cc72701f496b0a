//! The all-in-one job: a server in this process on a loopback port, and the replay
//! client against it over real TCP, exactly as with Dimemas ([`over_server`]); or the
//! same client against an external, already running `vesper serve`
//! ([`over_external_server`], `vesper run --server HOST:PORT`, as a `replay` container
//! does against a `vesper` one).
//!
//! ```text
//!  vesper run ─────────────────────────────┐        vesper run --server vesper:10000
//!   replay client ──TCP──▶ server (thread) │         replay client ──TCP──▶ vesper serve
//!   network: its flags, report: its own    │         network and report: the server's
//! ```
//!
//! An external server's network is the one it was started with, so that the
//! prediction equals the in-process one when `vesper serve` is given the network
//! `vesper run` would have used. What `vesper run` would give only to a server of its
//! own (network flags, network trace flags, analytic collectives whose links come from
//! the network) is refused with `--server`, naming the flag ([`ExternalServer::new`]).

use std::net::ToSocketAddrs as _;
use std::time::{Duration, Instant};

use vesper_client_dimemas_adapter::LegacyConnection;
use vesper_client_dimemas_adapter::replay::{
    Outcome, Programs, Progress, ReplayOptions, ServerFabric, replay_programs,
};

use crate::config::ServerConfig;
use crate::report::Report;

/// How long the in-process client polls for a reply before it blocks, by default.
pub const CLIENT_SPIN: Duration = Duration::from_micros(200);

/// How long a failed client waits for the server to say why, if it stopped.
const SERVER_GRACE: Duration = Duration::from_secs(2);

/// Replays `programs` (checked: every send has its receive) against a server of
/// `config` (its network, the network trace it writes, how it answers, its partitions;
/// one client, the default), telling `progress` how far it has got; returns the
/// prediction and the server's report. The client polls for each reply for up to
/// `client_spin` before it blocks.
pub fn over_server(
    config: ServerConfig,
    mut programs: Box<dyn Programs + Send>,
    options: ReplayOptions,
    client_spin: Duration,
    mut progress: impl FnMut(Progress) + Send + 'static,
) -> anyhow::Result<(Outcome, Report)> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let whole_replies = crate::config::replies_read_whole(config.reply_limit);
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let addr = listener.local_addr()?;
    let server = runtime.spawn(crate::sync::listener::run(listener, config, std::future::pending()));
    let client = std::thread::spawn({
        move || -> anyhow::Result<Outcome> {
            let mut connection = LegacyConnection::connect(addr)?;
            // The server's thread polls for a while after each reply; the client polls
            // for the next one too, so that neither sleeps between quick round trips.
            connection.set_spin(client_spin);
            connection.set_whole_replies(whole_replies);
            let mut fabric = ServerFabric::new(connection, 0);
            let outcome = replay_programs(&mut programs, &mut fabric, &options, &mut progress)?;
            fabric.finish()?;
            Ok(outcome)
        }
    });
    let outcome = client
        .join()
        .map_err(|_| anyhow::anyhow!("the replay client panicked"))?;
    let outcome = match outcome {
        Ok(outcome) => outcome,
        // A server that could not start refuses the client, and one that stopped the run
        // closes its connection: its reason is the one to give. (After a failure of the
        // client's own, the server ends too: its client has gone.)
        Err(e) if !server_may_be_why(&e) => return Err(e),
        Err(e) => {
            return match runtime.block_on(async { tokio::time::timeout(SERVER_GRACE, server).await }) {
                Ok(Ok(Err(stopped))) => Err(stopped.into()),
                Ok(Err(panicked)) => Err(panicked.into()),
                // Lines the server ignored (a send too late to arrive, say) are why a
                // completion never came; its warnings name each line and the reason.
                Ok(Ok(Ok(report))) => match report.simulation.clients.first().map_or(0, |c| c.bad_lines) {
                    0 => Err(e),
                    n => Err(e.context(format!(
                        "the server ignored {n} of the replay's lines (its warnings above say why)"
                    ))),
                },
                Err(_late) => Err(e),
            };
        }
    };
    let report = runtime.block_on(server)??;
    Ok((outcome, report))
}

/// Whether the client's failure `e` may come from the server (a connection closed, a
/// reply missing or unknown), whose own reason is then the one to give; not a failure
/// of the client's own, such as a message the protocol cannot carry.
fn server_may_be_why(e: &anyhow::Error) -> bool {
    use vesper_client_dimemas_adapter::connection::ClientError;
    use vesper_client_dimemas_adapter::replay::ReplayError;
    use vesper_client_dimemas_adapter::replay::fabric::FabricError;
    let from_server = |e: &FabricError| matches!(e, FabricError::NoCompletion(_) | FabricError::UnknownToken(_));
    e.chain().any(|cause| {
        cause.is::<ClientError>()
            || cause.downcast_ref::<FabricError>().is_some_and(from_server)
            // A transparent wrapper: the fabric's error is not a cause of its own.
            || matches!(cause.downcast_ref::<ReplayError>(), Some(ReplayError::Fabric(f)) if from_server(f))
    })
}

/// How often a connection to an external server is tried while it does not answer.
const RETRY_EVERY: Duration = Duration::from_millis(100);

/// The longest one connection attempt may take, so that an address that drops the
/// request does not use up the wait on its own when the name has other addresses.
const ATTEMPT_AT_MOST: Duration = Duration::from_secs(2);

/// An external `vesper serve` to replay against (`vesper run --server HOST:PORT`): its
/// address as given, resolved afresh at every attempt, and how long to wait for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalServer {
    /// `HOST:PORT`, HOST a name or a numeric address (IPv6 in brackets)
    address: String,
    /// how long to keep trying to connect
    wait: Duration,
    /// its replies may exceed the legacy client's read: read them whole
    whole_replies: bool,
    /// the application number the replay's lines carry
    application: u32,
    /// how long one reply may take (zero: no limit)
    reply_timeout: Duration,
}

/// What `vesper run` was given that only a server of its own would use, and that
/// `--server` therefore refuses.
#[derive(Debug, Clone, Copy, Default)]
pub struct InProcessOnly<'a> {
    /// the network flags given on the command line (`--preset`, `--hosts`, …)
    pub network_flags: &'a [String],
    /// the network trace flags given (`--trace`, `--trace-stream`, …)
    pub trace_flags: &'a [String],
    /// a `--collective FAMILY=analytic` given without `--config`: its stages would take
    /// the network's link bandwidth
    pub analytic_without_config: Option<&'a str>,
}

/// Why `vesper run --server` cannot replay as asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExternalServerError {
    /// the address is not `HOST:PORT`
    #[error("--server {address}: expected HOST:PORT (a host name or a numeric address, then a port from 1 to 65535)")]
    Address {
        /// the address as given
        address: String,
    },
    /// a flag that describes the network of a server of `vesper run`'s own
    #[error(
        "{flag} cannot be given with --server: the network is the external server's (start its vesper serve with \
         the network to replay on)"
    )]
    NetworkFlag {
        /// the flag, as `--hosts`
        flag: String,
    },
    /// a flag of the network trace of a server of `vesper run`'s own
    #[error(
        "{flag} cannot be given with --server: the external server writes its own network trace (give {flag} to its vesper serve)"
    )]
    TraceFlag {
        /// the flag, as `--trace`
        flag: String,
    },
    /// analytic collectives whose links would come from the network
    #[error(
        "--collective {choice} with --server needs --config FILE.cfg: without a configuration, analytic \
         collectives take the network's link bandwidth, and the network is the external server's"
    )]
    AnalyticWithoutConfig {
        /// the `--collective` value, as `all=analytic`
        choice: String,
    },
    /// nothing accepted a connection in time
    #[error("--server {address}: no server answered within {seconds} s: {last}")]
    NoServer {
        /// the address as given
        address: String,
        /// the wait, in seconds as a user writes them
        seconds: String,
        /// why the last attempt failed
        last: String,
    },
}

impl ExternalServer {
    /// The server at `address`, waited for up to `wait`, if `vesper run` was given
    /// nothing that `refused` holds.
    pub fn new(address: &str, wait: Duration, refused: InProcessOnly<'_>) -> Result<Self, ExternalServerError> {
        let bad_address = || ExternalServerError::Address {
            address: address.to_string(),
        };
        let (host, port) = address.rsplit_once(':').ok_or_else(bad_address)?;
        let bracketed = host.starts_with('[') && host.ends_with(']');
        if host.is_empty() || (host.contains(':') && !bracketed) || !matches!(port.parse::<u16>(), Ok(1..)) {
            return Err(bad_address());
        }
        if let Some(flag) = refused.network_flags.first() {
            return Err(ExternalServerError::NetworkFlag { flag: flag.clone() });
        }
        if let Some(flag) = refused.trace_flags.first() {
            return Err(ExternalServerError::TraceFlag { flag: flag.clone() });
        }
        if let Some(choice) = refused.analytic_without_config {
            return Err(ExternalServerError::AnalyticWithoutConfig {
                choice: choice.to_string(),
            });
        }
        Ok(ExternalServer {
            address: address.to_string(),
            wait,
            whole_replies: false,
            application: 0,
            reply_timeout: Duration::ZERO,
        })
    }

    /// The same server, each reply awaited at most `timeout` (zero: no limit).
    pub fn with_reply_timeout(self, reply_timeout: Duration) -> ExternalServer {
        ExternalServer { reply_timeout, ..self }
    }

    /// The same server, replayed to as application `application`.
    pub fn as_application(self, application: u32) -> ExternalServer {
        ExternalServer { application, ..self }
    }

    /// The same server, its replies read whole (`whole`: it was started with a reply
    /// limit above the legacy client's read, or none).
    pub fn reading_whole(self, whole: bool) -> ExternalServer {
        ExternalServer {
            whole_replies: whole,
            ..self
        }
    }

    /// The address, as given.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Connects, trying every `RETRY_EVERY` until the wait has passed: in a compose
    /// network the replay's container may start before the server's, whose name then
    /// does not resolve yet, or resolves with no one listening. (The legacy client gives
    /// up after two attempts 5 s apart; this one keeps trying.)
    pub fn connect(&self) -> Result<LegacyConnection, ExternalServerError> {
        let deadline = Instant::now() + self.wait;
        loop {
            let last = match self.attempt(deadline) {
                Ok(connection) => return Ok(connection),
                Err(why) => why,
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ExternalServerError::NoServer {
                    address: self.address.clone(),
                    seconds: self.wait.as_secs_f64().to_string(),
                    last,
                });
            }
            std::thread::sleep(left.min(RETRY_EVERY));
        }
    }

    /// One attempt: resolve the address, and try each of its addresses in turn.
    fn attempt(&self, deadline: Instant) -> Result<LegacyConnection, String> {
        let addrs = self
            .address
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {}: {e}", self.address))?;
        let mut last = format!("{} resolves to no address", self.address);
        for addr in addrs {
            // At least a moment, even at the deadline: the last attempt is a real one.
            let timeout = deadline
                .saturating_duration_since(Instant::now())
                .clamp(Duration::from_millis(10), ATTEMPT_AT_MOST);
            match LegacyConnection::connect_timeout(addr, timeout) {
                Ok(connection) => return Ok(connection),
                Err(e) => last = format!("{addr}: {e}"),
            }
        }
        Err(last)
    }
}

/// Replays `programs` (checked: every send has its receive) against the external
/// `server`, once it answers, telling `progress` how far it has got; returns the
/// prediction. The server's report is its own: it prints it or writes it to its
/// `--stats`. The client polls for each reply for up to `client_spin` before it
/// blocks.
pub fn over_external_server(
    server: &ExternalServer,
    mut programs: Box<dyn Programs + Send>,
    options: ReplayOptions,
    client_spin: Duration,
    mut progress: impl FnMut(Progress),
) -> anyhow::Result<Outcome> {
    let mut connection = server.connect()?;
    connection.set_spin(client_spin);
    connection.set_whole_replies(server.whole_replies);
    connection.set_reply_timeout(Some(server.reply_timeout));
    let mut fabric = ServerFabric::new(connection, server.application);
    let replayed = replay_programs(&mut programs, &mut fabric, &options, &mut progress)
        .map_err(anyhow::Error::from)
        .and_then(|outcome| {
            fabric.finish()?;
            Ok(outcome)
        });
    // The server's reasons are in its own log, out of reach: point there.
    replayed.map_err(|e| {
        if server_may_be_why(&e) {
            e.context(format!(
                "--server {}: the server closed the connection or left the replay's messages unanswered; its \
                 log says why (a node beyond its network, a send too late to arrive, a run it stopped)",
                server.address
            ))
        } else {
            e
        }
    })
}
