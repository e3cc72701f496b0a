//! `vesper`: the network co-simulation server and its tools. This file parses the
//! command line (`vesper_server::cli::parse`), sets up the log, and runs the command
//! (`vesper_server::cli::execute`) on standard output and standard error; each
//! subcommand lives in `vesper_server::cli`.

use std::io::Write as _;
use std::process::ExitCode;

use vesper_server::cli;

fn main() -> ExitCode {
    let cli = cli::parse(std::env::args_os()).unwrap_or_else(|e| e.exit());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("VESPER_LOG")
                .unwrap_or_else(|_| cli.verb.default_log_level().into()),
        )
        .init();
    match cli::execute(cli.verb, &mut cli::Stdout, &mut std::io::stderr()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // As returning the error from `main` prints it.
            let _ = writeln!(std::io::stderr(), "{}", cli::error_text(&e));
            ExitCode::FAILURE
        }
    }
}
