//! `vesper`: the network co-simulation server and its tools. This file parses the
//! command line (`vesper_server::cli::parse`), sets up the log, and runs the command
//! (`vesper_server::cli::execute`) on standard output and standard error; each
//! subcommand lives in `vesper_server::cli`. Built with the `mpi` feature and started by
//! `mpirun`, every rank runs the command on its own partition and rank 0 writes.

use std::io::Write as _;
use std::process::ExitCode;

use vesper_server::cli;

fn main() -> ExitCode {
    #[cfg(feature = "mpi")]
    if vesper_netmodels::partition::MpiRanks::launched() {
        return on_mpi_ranks();
    }
    #[cfg(not(feature = "mpi"))]
    if let Some(size) = mpi_world_size().filter(|&n| n > 1) {
        // Each rank would run the whole simulation alone, and print it.
        let _ = writeln!(
            std::io::stderr(),
            "Error: started by mpirun with {size} ranks, but this vesper was built without MPI: build it with \
             `cargo build --release --bin vesper --features mpi` (Debian: openmpi-bin, libopenmpi-dev, libclang-dev)"
        );
        return ExitCode::FAILURE;
    }
    let cli = cli::parse(std::env::args_os()).unwrap_or_else(|e| e.exit());
    log_to_stderr(&cli);
    match cli::execute(cli.verb, &mut cli::Stdout, &mut std::io::stderr()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // As returning the error from `main` prints it.
            let _ = writeln!(std::io::stderr(), "{}", cli::error_text(&e));
            ExitCode::FAILURE
        }
    }
}

/// The number of ranks an MPI launcher started, from the environment it sets.
#[cfg(not(feature = "mpi"))]
fn mpi_world_size() -> Option<u32> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

fn log_to_stderr(cli: &cli::Cli) {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("VESPER_LOG")
                .unwrap_or_else(|_| cli.verb.default_log_level().into()),
        )
        .init();
}

/// One rank of `mpirun -np N vesper …`: rank 0 prints the result and the notes, the
/// others print only their own errors (prefixed with their rank); MPI is finalised
/// before the process ends, whatever happened.
#[cfg(feature = "mpi")]
fn on_mpi_ranks() -> ExitCode {
    let (universe, ranks) = match vesper_netmodels::partition::MpiRanks::init() {
        Ok(started) => started,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "Error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let rank = vesper_netmodels::partition::Ranks::rank(&ranks);
    let code = match cli::parse(std::env::args_os()) {
        // Usage errors and --help: every rank has the same; rank 0 prints it.
        Err(e) => {
            if rank == 0 {
                let _ = e.print();
            }
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1))
        }
        Ok(cli) => {
            log_to_stderr(&cli);
            let ranks: std::sync::Arc<dyn vesper_netmodels::partition::Ranks> = std::sync::Arc::new(ranks);
            let result = if rank == 0 {
                cli::execute_on_ranks(cli.verb, ranks, &mut cli::Stdout, &mut std::io::stderr())
            } else {
                cli::execute_on_ranks(cli.verb, ranks, &mut std::io::sink(), &mut std::io::sink())
            };
            match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    let who = if rank == 0 {
                        String::new()
                    } else {
                        format!("rank {rank}: ")
                    };
                    let _ = writeln!(std::io::stderr(), "{who}{}", cli::error_text(&e));
                    ExitCode::FAILURE
                }
            }
        }
    };
    drop(universe);
    code
}
