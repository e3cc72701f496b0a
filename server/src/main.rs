//! `vesper`: the network co-simulation server and its tools. This file parses the
//! command line and dispatches; each subcommand lives in `vesper_server::cli`.

use clap::{Parser, Subcommand};
use vesper_server::cli::bench::{BenchCommand, bench};
use vesper_server::cli::network::NetworkArgs;
use vesper_server::cli::run::{RunArgs, WORKLOAD_FLAGS, run};
use vesper_server::cli::serve::{ServeArgs, serve};
use vesper_server::cli::topo::{TopoArgs, topo};
use vesper_server::cli::traffic::{TrafficArgs, traffic};

#[derive(Debug, Parser)]
#[command(
    name = "vesper",
    version,
    about = "Interconnect simulator that co-simulates with MPI trace replayers (Dimemas --venus)",
    long_about = "vesper hosts a deterministic model of an HPC interconnect and synchronises with \
                  task-replay clients (Dimemas built with its network-server client, run with \
                  `--venus --venuscon 127.0.0.1:10000`) over a text protocol of SEND / STOP / END \
                  lines and COMPLETED SEND replies."
)]
struct Cli {
    #[command(subcommand)]
    verb: Verb,
}

/// What `vesper` is asked to do (a subcommand).
#[derive(Debug, Subcommand)]
enum Verb {
    /// Run the co-simulation server.
    Serve(Box<ServeArgs>),
    /// Replay a Dimemas trace or a synthetic workload against an in-process server over loopback (or
    /// locally with --no-server) and print the predicted execution time; on the fat-tree
    /// preset (256 hosts) unless --network, --preset or --map names another.
    Run(Box<RunArgs>),
    /// Describe a network: hosts, switches, cables, diameter, bisection; optionally
    /// draw it (Graphviz) or list the presets.
    Topo(Box<TopoArgs>),
    /// Open-loop synthetic traffic: one operating point (--load) or a latency–load curve
    /// (--sweep), as a table, JSON or an SVG plot; on the kary-ntree preset (64 hosts)
    /// unless --network, --preset or --map names another.
    Traffic(Box<TrafficArgs>),
    /// Measure the server's performance.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Receive the network trace a server streams (`--trace-stream HOST:PORT`) and
    /// write it as `--trace FILE.prv` would: .prv, .pcf and .row, byte for byte.
    Collect(vesper_server::network_trace::collect::CollectArgs),
}

fn main() -> anyhow::Result<()> {
    use clap::{CommandFactory as _, FromArgMatches as _};
    let matches = Cli::command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let (Verb::Run(args), Some(run)) = (&mut cli.verb, matches.subcommand_matches("run")) {
        args.workload_flags = WORKLOAD_FLAGS
            .iter()
            .filter(|(id, _)| run.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
            .map(|&(_, flag)| flag)
            .collect();
        // The flags of a server of `run`'s own, as given: `--server` refuses them.
        let given = |flags: clap::Command| -> Vec<String> {
            flags
                .get_arguments()
                .filter(|arg| run.value_source(arg.get_id().as_str()) == Some(clap::parser::ValueSource::CommandLine))
                .filter_map(|arg| arg.get_long().map(|long| format!("--{long}")))
                .collect()
        };
        args.network_flags = given(<NetworkArgs as clap::Args>::augment_args(clap::Command::new("network")));
        args.trace_flags = given(<vesper_server::network_trace::TraceArgs as clap::Args>::augment_args(
            clap::Command::new("trace"),
        ));
    }
    // A server reports as it goes; `run` prints its result, and logs only problems.
    let default_level = match cli.verb {
        Verb::Run(_) | Verb::Traffic(_) => "warn",
        _ => "info",
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("VESPER_LOG").unwrap_or_else(|_| default_level.into()),
        )
        .init();
    match cli.verb {
        Verb::Serve(args) => serve(*args),
        Verb::Run(args) => run(*args),
        Verb::Topo(args) => topo(*args),
        Verb::Traffic(args) => traffic(*args),
        Verb::Collect(args) => Ok(vesper_server::network_trace::collect::collect(&args)?),
        Verb::Bench(command) => bench(command),
    }
}
