//! `vesper`: the network co-simulation server and its tools. This file parses the
//! command line (as `vesper_server::cli::parse` does) and dispatches; each subcommand
//! lives in `vesper_server::cli`.

use vesper_server::cli::{self, Verb};

fn main() -> anyhow::Result<()> {
    let cli = cli::parse(std::env::args_os()).unwrap_or_else(|e| e.exit());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("VESPER_LOG")
                .unwrap_or_else(|_| cli.verb.default_log_level().into()),
        )
        .init();
    match cli.verb {
        Verb::Serve(args) => cli::serve::serve(*args),
        Verb::Run(args) => cli::run::run(*args),
        Verb::Topo(args) => cli::topo::topo(*args),
        Verb::Traffic(args) => cli::traffic::traffic(*args),
        Verb::Collect(args) => Ok(vesper_server::network_trace::collect::collect(&args)?),
        Verb::Bench(command) => cli::bench::bench(command),
    }
}
