//! `vesper bench`: the synchronisation round trip and the network model alone.

use anyhow::Context;
use clap::Subcommand;
use vesper_netmodels::SimTime;

use crate::config::{FabricConfig, NetworkConfig};
use crate::description::{Claim, Field, GranularityName, SwitchName};

use super::network::*;
use super::*;

#[derive(Debug, Subcommand)]
// Its doc comments are `--help` text: units stay in plain brackets ([ns]).
#[allow(rustdoc::broken_intra_doc_links)]
pub enum BenchCommand {
    /// The network model alone, without sockets: uniform random traffic of
    /// single-packet messages on a crossbar (or the network --preset, --network or --map
    /// names: one rail, routes fixed per pair) at several offered loads.
    ///
    /// Speeds are packet-hops (a packet crossing one link) per wall second:
    /// `pkt-hops/s` over the whole run, `model only` over the time spent in the model,
    /// without the traffic generator's random draws (made ahead, in blocks).
    Model(Box<ModelArgs>),
    /// Synchronisation round trips per second and reply latency over loopback.
    Sync {
        /// Timed round trips.
        #[arg(long, default_value_t = 20_000)]
        round_trips: u64,
        /// Untimed round trips first.
        #[arg(long, default_value_t = 2_000)]
        warmup: u64,
        /// Print the full result as JSON.
        #[arg(long)]
        json: bool,
        /// Measure an external server at this address instead (e.g. the Python line
        /// server in `bench/python_line_server.py`), with the same client.
        #[arg(long)]
        server: Option<std::net::SocketAddr>,
        /// The in-process server's `--spin-us`.
        #[arg(long, default_value_t = 200)]
        spin_us: u64,
    },
}

/// `vesper bench model`'s arguments: the network as the other commands take it, and the
/// measurement's own.
#[derive(Debug, clap::Args)]
// `--seed` is the traffic generator's here: the network's is --network-seed.
#[command(mut_arg("seed", |a| a.long("network-seed")))]
// Its doc comments are `--help` text: units stay in plain brackets ([ns]).
#[allow(rustdoc::broken_intra_doc_links)]
pub struct ModelArgs {
    #[command(flatten)]
    pub net: NetworkArgs,
    /// Offered loads, as fractions of a host link's rate (or of the saturation
    /// throughput with --of-saturation).
    #[arg(long, value_delimiter = ',', default_value = "0.1,0.5,0.9")]
    pub loads: Vec<f64>,
    /// Read --loads as fractions of the saturation throughput, measured first (an
    /// overloaded run).
    #[arg(long)]
    pub of_saturation: bool,
    /// Run wormhole switches one event per flit (the fine path), to compare with the
    /// default coarse path.
    #[arg(long, conflicts_with = "granularity")]
    pub fine: bool,
    /// Simulated time per load [µs], at least 1.
    #[arg(long, default_value_t = 20_000)]
    pub duration_us: u64,
    /// Seed of the traffic generator.
    #[arg(long = "seed", id = "traffic_seed", value_name = "SEED", default_value_t = 1)]
    pub seed: u64,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
    /// The network's flags as given, for the saturation run (see
    /// [`ModelArgs::note_network_flags`]).
    #[arg(skip)]
    pub network_flags: Vec<std::ffi::OsString>,
}

impl ModelArgs {
    /// Notes the network's flags given on the command line (`matches`, the subcommand's),
    /// as given, so that the saturation run measures the same network.
    pub fn note_network_flags(&mut self, matches: &clap::ArgMatches) {
        use clap::Args as _;
        let network = NetworkArgs::augment_args(clap::Command::new("network"));
        let model = ModelArgs::augment_args(clap::Command::new("model"));
        for arg in model.get_arguments() {
            let id = arg.get_id();
            let given = matches.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine);
            let (true, Some(long)) = (given, arg.get_long()) else {
                continue;
            };
            if !network.get_arguments().any(|a| a.get_id() == id) {
                continue;
            }
            let flag = std::ffi::OsString::from(format!("--{long}"));
            match matches.get_raw(id.as_str()) {
                Some(values) if arg.get_action().takes_values() => {
                    for value in values {
                        self.network_flags.extend([flag.clone(), value.to_owned()]);
                    }
                }
                _ => self.network_flags.push(flag),
            }
        }
    }
}

/// What `vesper bench sync` prints: its measurement, as text or (`--json`) in full as
/// JSON.
#[derive(Debug)]
pub struct BenchSync {
    pub result: crate::bench::SyncBenchResult,
    pub json: bool,
}

impl std::fmt::Display for BenchSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let result = &self.result;
        if self.json {
            let json = serde_json::to_string_pretty(result).map_err(|_| std::fmt::Error)?;
            return writeln!(f, "{json}");
        }
        writeln!(f, "sync round trips: {}", result.round_trips)?;
        writeln!(f, "round trips per second: {:.0}", result.round_trips_per_second)?;
        if let Some(c) = result.client_round_trip_us {
            writeln!(
                f,
                "client round trip [µs]: p50 {:.1}  p99 {:.1}  mean {:.1}  max {:.1}",
                c.p50, c.p99, c.mean, c.max
            )?;
        }
        if let Some(s) = result.server.as_ref().and_then(|r| r.wall.reply_latency_us) {
            writeln!(
                f,
                "server reply latency [µs]: p50 {:.1}  p99 {:.1}  mean {:.1}  max {:.1}",
                s.p50, s.p99, s.mean, s.max
            )?;
        }
        Ok(())
    }
}

/// `vesper bench sync`: the synchronisation round trip, measured.
pub fn bench_sync(
    round_trips: u64,
    warmup: u64,
    json: bool,
    server: Option<std::net::SocketAddr>,
    spin: std::time::Duration,
) -> anyhow::Result<BenchSync> {
    Ok(BenchSync {
        result: crate::bench::sync(round_trips, warmup, server, spin)?,
        json,
    })
}

/// The accepted load of the overloaded run of `vesper ARGS` (a `bench model --json`).
pub fn saturation_in_child(args: &[std::ffi::OsString]) -> anyhow::Result<f64> {
    let exe = std::env::current_exe().context("cannot find this program to measure the saturation")?;
    let output = std::process::Command::new(&exe)
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {}", exe.display()))?;
    anyhow::ensure!(
        output.status.success(),
        "the saturation run (vesper {}) failed: {}",
        args.join(std::ffi::OsStr::new(" ")).to_string_lossy(),
        output.status
    );
    let points: Vec<serde_json::Value> =
        serde_json::from_slice(&output.stdout).context("the saturation run printed no JSON")?;
    points
        .first()
        .and_then(|p| p["accepted_load"].as_f64())
        .context("the saturation run reported no accepted load")
}

/// A network the model refused, named by the flag of `given` ((field, flag as typed)
/// pairs) that gave the field it names, or else by the flags given of the switches' own
/// fields (the networks built in are valid as they are: flits too large for the default
/// buffers show as a buffer error).
fn name_build_error(e: &vesper_netmodels::BuildError, given: &[(Field, String)]) -> anyhow::Error {
    let text = e.to_string();
    let named = match flag_of(e, given) {
        Some(flag) => flag.to_string(),
        None => given
            .iter()
            .filter(|(field, _)| matches!(field.claim(), Claim::Switches(_)))
            .map(|(_, flag)| flag.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    };
    match named.as_str() {
        "" => anyhow::anyhow!("{text}"),
        flags => anyhow::anyhow!("{flags}: {text}"),
    }
}

/// Runs the model benchmark on `network` at `loads`, as fractions of `saturation` when
/// given, and writes its table to `out` a row a load as it is measured (or, with
/// `json`, its points once all are). A network larger than `limit` is refused, and one
/// the model refuses is named by the flags `given`.
#[allow(clippy::too_many_arguments, reason = "the command's options, passed through")]
pub fn bench_model(
    network: NetworkConfig,
    loads: &[f64],
    saturation: Option<f64>,
    duration_us: u64,
    seed: u64,
    json: bool,
    given: &[(Field, String)],
    limit: Option<crate::memory::Limit>,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        matches!(network.fabric, FabricConfig::Switched(_)),
        "the model benchmark needs a network of one rail of switches"
    );
    let duration = SimTime::from_ps(ps_of("--duration-us", duration_us, 1_000_000)?);
    let scale = saturation.unwrap_or(1.0);
    for &load in loads {
        crate::bench::check_load(load * scale)?;
    }
    // A network that would not fit in what the machine leaves is refused before it is
    // built; one the model refuses (buffers too small for their flits, say) is reported
    // before the table's header, not under it.
    if let Some(limit) = limit {
        crate::memory::check(&network, 1, 1, &limit)?;
    }
    network.build().map_err(|e| name_build_error(&e, given))?;
    let mut points = Vec::new();
    if !json {
        writeln!(out, "network: {}", network.describe())?;
        writeln!(
            out,
            "{:>6} {:>8} {:>9} {:>10} {:>12} {:>8} {:>14} {:>14} {:>14} {:>12} {:>12} {:>9}",
            "hosts",
            "offered",
            "accepted",
            "packets",
            "packet-hops",
            "wall s",
            "pkt-hops/s",
            "model only",
            "flit-hops/s",
            "events/s",
            "latency ns",
            "peak MiB"
        )?;
    }
    for &load in loads {
        let p = crate::bench::model(&network, load * scale, duration, seed)?;
        if !json {
            let flit_hops = p
                .flit_hops
                .map_or("-".to_string(), |f| format!("{:.0}", f as f64 / p.wall_seconds));
            writeln!(
                out,
                "{:>6} {:>8.3} {:>9.3} {:>10} {:>12} {:>8.2} {:>14.0} {:>14.0} {:>14} {:>12.0} {:>12.0} {:>9.1}",
                p.hosts,
                p.offered_load,
                p.accepted_load,
                p.packets,
                p.packet_hops,
                p.wall_seconds,
                p.packet_hops_per_second,
                p.packet_hops_per_model_second,
                flit_hops,
                p.events_per_second,
                p.mean_latency_ns,
                p.peak_memory_mib.unwrap_or(f64::NAN)
            )?;
        }
        points.push(p);
    }
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&points)?)?;
    }
    Ok(())
}

/// Runs `vesper bench …`, writing what it prints to `out`.
pub fn bench(command: BenchCommand, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    match command {
        BenchCommand::Model(args) => model(*args, out),
        BenchCommand::Sync {
            round_trips,
            warmup,
            json,
            server,
            spin_us,
        } => {
            let spin = std::time::Duration::from_micros(spin_us);
            Ok(write!(out, "{}", bench_sync(round_trips, warmup, json, server, spin)?)?)
        }
    }
}

/// `vesper bench model`: the network the flags describe (the crossbar unless they name
/// another), measured.
fn model(mut args: ModelArgs, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    // The network's --seed is --network-seed here.
    args.net.renamed = vec![(Field::Seed, "--network-seed")];
    let (mut spec, origin) = args.net.spec(None)?;
    let (flags, given) = args.net.overrides();
    // A switch of the base's kind keeps the base's parameters (a torus's bubble flow
    // control and buffers, say); another kind starts from its defaults.
    if let Some(switch) = flags.switch {
        with_switch(&mut spec, &flags, switch);
    }
    anyhow::ensure!(
        spec.switch == Some(SwitchName::Wormhole)
            || !(args.fine || flags.flit_bytes.is_some() || flags.buffer_bytes.is_some()),
        "--fine, --buffer-bytes and --flit-bytes are for wormhole switches (--switch wormhole)"
    );
    if args.fine {
        spec.granularity = Some(GranularityName::Fine);
    }
    // Checked before the crossbar is built (its cables alone could exhaust memory) and
    // before anything is printed.
    let network = args.net.resolve(&spec, &origin, &[])?;
    if network.hosts < 2 {
        let by = given
            .iter()
            .find(|(field, _)| *field == Field::Hosts)
            .map_or(origin.as_str(), |(_, flag)| flag);
        anyhow::bail!("{by}: the model benchmark needs two hosts or more");
    }
    anyhow::ensure!(
        args.duration_us > 0,
        "--duration-us 0: the model benchmark needs at least 1 µs of simulated time per load"
    );
    let scale = if args.of_saturation {
        // In a child process: the memory the overloaded run grows is then not counted in
        // the peaks of the points (the allocator keeps what is freed).
        let mut child: Vec<std::ffi::OsString> = vec!["bench".into(), "model".into()];
        child.extend(args.network_flags.iter().cloned());
        if args.fine {
            child.push("--fine".into());
        }
        let (duration, seed) = (args.duration_us.to_string(), args.seed.to_string());
        child.extend(["--loads", "1.2", "--json", "--duration-us", &duration, "--seed", &seed].map(Into::into));
        let saturation = saturation_in_child(&child)?;
        if !args.json {
            writeln!(out, "saturation throughput: {saturation:.3} of the link rate")?;
        }
        Some(saturation)
    } else {
        None
    };
    let limit = args.net.memory_limit();
    bench_model(
        network,
        &args.loads,
        scale,
        args.duration_us,
        args.seed,
        args.json,
        &given,
        limit,
        out,
    )
}
