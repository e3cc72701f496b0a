//! `vesper bench`: the synchronisation round trip and the network model alone.

use anyhow::Context;
use clap::Subcommand;
use vesper_netmodels::{CioqParams, Granularity, SimTime, SwitchKind, WormholeParams};

use crate::config::{FabricConfig, NetworkConfig};
use crate::description::preset;
use crate::description::{self, Field, SwitchName};

use super::network::*;
use super::*;

#[derive(Debug, Subcommand)]
// Its doc comments are `--help` text: units stay in plain brackets ([ns]).
#[allow(rustdoc::broken_intra_doc_links)]
pub enum BenchCommand {
    /// The network model alone, without sockets: uniform random traffic of
    /// single-packet messages on a crossbar (or a preset) at several offered loads.
    ///
    /// Speeds are packet-hops (a packet crossing one link) per wall second:
    /// `pkt-hops/s` over the whole run, `model only` over the time spent in the model,
    /// without the traffic generator's random draws (made ahead, in blocks).
    Model {
        /// Hosts in the network (a crossbar).
        #[arg(long, default_value_t = 256)]
        hosts: u32,
        /// A built-in network instead of the crossbar (`vesper topo --presets` lists
        /// them); one rail, routes fixed per pair.
        #[arg(long, value_name = "NAME", conflicts_with = "hosts")]
        preset: Option<String>,
        /// Offered loads, as fractions of a host link's rate (or of the saturation
        /// throughput with --of-saturation).
        #[arg(long, value_delimiter = ',', default_value = "0.1,0.5,0.9")]
        loads: Vec<f64>,
        /// Read --loads as fractions of the saturation throughput, measured first (an
        /// overloaded run).
        #[arg(long)]
        of_saturation: bool,
        /// Run wormhole switches one event per flit (the fine path), to compare with the
        /// default coarse path.
        #[arg(long)]
        fine: bool,
        /// Wormhole switches: the input (slack) buffer of every port [bytes] [default: 512,
        /// or the preset's].
        #[arg(long, value_name = "BYTES")]
        buffer_bytes: Option<u32>,
        /// Wormhole switches: the flow-control unit [bytes] [default: 8, or the preset's].
        #[arg(long, value_name = "BYTES")]
        flit_bytes: Option<u32>,
        /// Simulated time per load [µs], at least 1.
        #[arg(long, default_value_t = 20_000)]
        duration_us: u64,
        /// Seed of the traffic generator.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The switch architecture [default: output-queued, or the preset's].
        #[arg(long, value_enum)]
        switch: Option<SwitchName>,
        /// Print the results as JSON.
        #[arg(long)]
        json: bool,
    },
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
pub fn saturation_in_child(args: &[String]) -> anyhow::Result<f64> {
    let exe = std::env::current_exe().context("cannot find this program to measure the saturation")?;
    let output = std::process::Command::new(&exe)
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {}", exe.display()))?;
    anyhow::ensure!(
        output.status.success(),
        "the saturation run (vesper {}) failed: {}",
        args.join(" "),
        output.status
    );
    let points: Vec<serde_json::Value> =
        serde_json::from_slice(&output.stdout).context("the saturation run printed no JSON")?;
    points
        .first()
        .and_then(|p| p["accepted_load"].as_f64())
        .context("the saturation run reported no accepted load")
}

/// The model benchmark's options for wormhole switches.
#[derive(Debug, Clone, Copy)]
pub struct WormholeBench {
    pub fine: bool,
    pub buffer_bytes: Option<u32>,
    pub flit_bytes: Option<u32>,
}

impl WormholeBench {
    /// The command-line flags that give these options.
    fn flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        if self.fine {
            flags.push("--fine".to_string());
        }
        for (flag, value) in [("--buffer-bytes", self.buffer_bytes), ("--flit-bytes", self.flit_bytes)] {
            if let Some(value) = value {
                flags.extend([flag.to_string(), value.to_string()]);
            }
        }
        flags
    }

    /// A network the model refused, named by the flag that gave the field it names, or
    /// else by the flags given (the networks built in are valid as they are: flits too
    /// large for the default buffers show as a buffer error).
    fn name_build_error(&self, e: &vesper_netmodels::BuildError) -> anyhow::Error {
        let text = e.to_string();
        let given: Vec<_> = [
            (Field::BufferBytes, "--buffer-bytes", self.buffer_bytes),
            (Field::FlitBytes, "--flit-bytes", self.flit_bytes),
        ]
        .into_iter()
        .filter_map(|(field, flag, value)| value.map(|v| (field, format!("{flag} {v}"))))
        .collect();
        let named = match flag_of(e, &given) {
            Some(flag) => flag.to_string(),
            None => given
                .iter()
                .map(|(_, flag)| flag.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        };
        match named.as_str() {
            "" => anyhow::anyhow!("{text}"),
            flags => anyhow::anyhow!("{flags}: {text}"),
        }
    }
}

/// Runs the model benchmark at `loads`, as fractions of `saturation` when given, and
/// writes its table to `out` a row a load as it is measured (or, with `json`, its
/// points once all are).
#[allow(clippy::too_many_arguments, reason = "the command's options, passed through")]
pub fn bench_model(
    mut network: NetworkConfig,
    loads: &[f64],
    saturation: Option<f64>,
    wormhole: WormholeBench,
    duration_us: u64,
    seed: u64,
    switch: Option<SwitchName>,
    json: bool,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    let FabricConfig::Switched(s) = &mut network.fabric else {
        anyhow::bail!("the model benchmark needs a network of one rail of switches");
    };
    // A switch of the preset's kind keeps the preset's parameters (a torus's bubble flow
    // control and buffers, say); another kind starts from its defaults.
    s.switch.kind = match (switch, s.switch.kind) {
        (None, kind)
        | (Some(SwitchName::Cioq), kind @ SwitchKind::Cioq(_))
        | (Some(SwitchName::Wormhole), kind @ SwitchKind::Wormhole(_)) => kind,
        (Some(SwitchName::OutputQueued), _) => SwitchKind::OutputQueued,
        (Some(SwitchName::Cioq), _) => SwitchKind::Cioq(CioqParams::default()),
        (Some(SwitchName::Wormhole), _) => SwitchKind::Wormhole(WormholeParams::default()),
    };
    match &mut s.switch.kind {
        SwitchKind::Wormhole(w) => {
            w.granularity = if wormhole.fine {
                Granularity::Fine
            } else {
                Granularity::Coarse
            };
            w.buffer_bytes = wormhole.buffer_bytes.unwrap_or(w.buffer_bytes);
            w.flit_bytes = wormhole.flit_bytes.unwrap_or(w.flit_bytes);
        }
        _ => anyhow::ensure!(
            wormhole.flags().is_empty(),
            "--fine, --buffer-bytes and --flit-bytes are for wormhole switches (--switch wormhole)"
        ),
    }
    let duration = SimTime::from_ps(ps_of("--duration-us", duration_us, 1_000_000)?);
    let scale = saturation.unwrap_or(1.0);
    for &load in loads {
        crate::bench::check_load(load * scale)?;
    }
    // A network that would not fit in what the machine leaves is refused before it is
    // built; one the model refuses (buffers too small for their flits, say) is reported
    // before the table's header, not under it.
    if let Some(room) = crate::memory::machine_room() {
        let limit = crate::memory::Limit {
            bytes: room.bytes,
            from: format!("this process may use ({})", room.from),
        };
        crate::memory::check(&network, 1, 1, &limit)?;
    }
    network.build().map_err(|e| wormhole.name_build_error(&e))?;
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
        BenchCommand::Model {
            hosts,
            preset,
            loads,
            of_saturation,
            fine,
            buffer_bytes,
            flit_bytes,
            duration_us,
            seed,
            switch,
            json,
        } => {
            let wormhole = WormholeBench {
                fine,
                buffer_bytes,
                flit_bytes,
            };
            // Checked before the crossbar is built (its cables alone could exhaust memory)
            // and before anything is printed.
            description::host_count(hosts).map_err(|rule| anyhow::anyhow!("--hosts {hosts}: {rule}"))?;
            anyhow::ensure!(
                preset.is_some() || hosts >= 2,
                "--hosts {hosts}: the model benchmark needs two hosts or more"
            );
            anyhow::ensure!(
                duration_us > 0,
                "--duration-us 0: the model benchmark needs at least 1 µs of simulated time per load"
            );
            let network = match &preset {
                Some(name) => preset::spec(name).map_err(anyhow::Error::msg)?.resolve()?,
                None => NetworkConfig {
                    hosts,
                    ..NetworkConfig::default()
                },
            };
            let scale = if of_saturation {
                // In a child process: the memory the overloaded run grows is then not
                // counted in the peaks of the points (the allocator keeps what is freed).
                let mut child = vec!["bench".to_string(), "model".to_string()];
                match &preset {
                    Some(name) => child.extend(["--preset".to_string(), name.clone()]),
                    None => child.extend(["--hosts".to_string(), hosts.to_string()]),
                }
                if let Some(switch) = &switch {
                    child.extend(["--switch".to_string(), value_name(switch)]);
                }
                child.extend(wormhole.flags());
                child.extend(
                    [
                        "--loads",
                        "1.2",
                        "--json",
                        "--duration-us",
                        &duration_us.to_string(),
                        "--seed",
                        &seed.to_string(),
                    ]
                    .map(String::from),
                );
                let saturation = saturation_in_child(&child)?;
                if !json {
                    writeln!(out, "saturation throughput: {saturation:.3} of the link rate")?;
                }
                Some(saturation)
            } else {
                None
            };
            bench_model(network, &loads, scale, wormhole, duration_us, seed, switch, json, out)
        }
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
