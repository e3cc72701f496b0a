//! The all-in-one job: a server in this process on a loopback port, and the replay
//! client against it over real TCP, exactly as with Dimemas.

use vesper_client_dimemas_adapter::LegacyConnection;
use vesper_client_dimemas_adapter::replay::{
    Outcome, Programs, Progress, ReplayOptions, ServerFabric, replay_programs,
};

use crate::config::{NetworkConfig, ServerConfig};
use crate::network_trace::TraceConfig;
use crate::report::Report;

/// How long the in-process client polls for a reply before it blocks, by default.
pub const CLIENT_SPIN: std::time::Duration = std::time::Duration::from_micros(200);

/// How long a failed client waits for the server to say why, if it stopped.
const SERVER_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Replays `programs` (checked: every send has its receive) against a server on
/// `network` (writing the network trace `trace` asks for), telling `progress` how far
/// it has got; returns the prediction and the server's report. The client polls for
/// each reply for up to `client_spin` before it blocks.
pub fn over_server(
    network: NetworkConfig,
    trace: Option<TraceConfig>,
    mut programs: Box<dyn Programs + Send>,
    options: ReplayOptions,
    client_spin: std::time::Duration,
    mut progress: impl FnMut(Progress) + Send + 'static,
) -> anyhow::Result<(Outcome, Report)> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let addr = listener.local_addr()?;
    let config = ServerConfig {
        network,
        trace,
        ..ServerConfig::default()
    };
    let server = runtime.spawn(crate::run(listener, config, std::future::pending()));
    let client = std::thread::spawn({
        move || -> anyhow::Result<Outcome> {
            let mut connection = LegacyConnection::connect(addr)?;
            // The server's thread polls for a while after each reply; the client polls
            // for the next one too, so that neither sleeps between quick round trips.
            connection.set_spin(client_spin);
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
