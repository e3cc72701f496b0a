//! `vesper traffic`: open-loop synthetic traffic for latency–load curves.

use std::path::PathBuf;

use anyhow::Context;
use vesper_netmodels::SimTime;

use crate::config::{FabricConfig, NetworkConfig, Shape, SwitchedConfig};
use crate::description::preset;
use crate::description::{self, Field, NetworkSpec, RoutingName, SwitchName};

use super::network::*;
use super::*;

#[derive(Debug, clap::Args)]
// The network's --pattern (pattern-aware routing) gives way to the traffic pattern.
#[command(mut_arg("pattern", |a| a.long("routing-pattern")))]
// Its doc comments are `--help` text: units stay in plain brackets ([ns]).
#[allow(rustdoc::broken_intra_doc_links)]
pub struct TrafficArgs {
    #[command(flatten)]
    pub net: NetworkArgs,
    /// Where packets go: uniform, uniform-self, hot-spot[:HOST[:FRACTION]],
    /// hot-region[:FIRST:COUNT[:FRACTION]], bit-complement, bit-reversal, transpose,
    /// butterfly, perfect-shuffle, tornado[:NX], nearest-neighbour, random-permutation
    /// (seed 002, Table 12; bit permutations need a power-of-two number of hosts), or
    /// group-shift[:N]: every host of group i to a random host of group i + 1, in groups
    /// of N hosts (a dragonfly's adversarial traffic; N is its p·a unless given).
    #[arg(long = "pattern", value_name = "PATTERN", default_value = "uniform")]
    pub traffic_pattern: String,
    /// Offered load per host: a fraction of its link's rate on the wire, the same as
    /// flits per host per flit time.
    #[arg(long, conflicts_with = "sweep", required_unless_present = "sweep")]
    pub load: Option<f64>,
    /// A latency–load curve: loads FROM:TO:STEP, stopping one point past saturation.
    #[arg(long, value_name = "FROM:TO:STEP")]
    pub sweep: Option<String>,
    /// When packets are created: every flit time with a fixed probability (bernoulli)
    /// or with exponential gaps (poisson).
    #[arg(long, value_enum, default_value_t = ProcessArg::Bernoulli)]
    pub process: ProcessArg,
    /// Packet size as flits on the wire, header included (payload = FLITS × flit bytes
    /// − header) [default: 16].
    #[arg(long, value_name = "FLITS", conflicts_with_all = ["size", "size_range", "size_bimodal"])]
    pub size_flits: Option<u32>,
    /// Packet payload [bytes].
    #[arg(long, value_name = "BYTES", conflicts_with_all = ["size_range", "size_bimodal"])]
    pub size: Option<u32>,
    /// Payloads drawn uniformly from MIN to MAX bytes.
    #[arg(long, value_name = "MIN:MAX", conflicts_with = "size_bimodal")]
    pub size_range: Option<String>,
    /// SMALL bytes, or LARGE bytes PERCENT % of the time.
    #[arg(long, value_name = "SMALL:LARGE:PERCENT")]
    pub size_bimodal: Option<String>,
    /// Messages a host's source queue holds; packets created at a full queue are dropped
    /// [default: unlimited].
    #[arg(long, value_name = "MESSAGES")]
    pub source_queue: Option<u32>,
    /// Warm-up before measuring [µs, or cycles with --cycles; default: 50 µs or 5,000
    /// cycles].
    #[arg(long, value_name = "TIME")]
    pub warmup: Option<f64>,
    /// Measurement window: statistics cover the packets created in it [µs, or cycles;
    /// default: 200 µs or 20,000 cycles].
    #[arg(long, value_name = "TIME")]
    pub measure: Option<f64>,
    /// Longest wait for the measured packets after the window [µs, or cycles; default:
    /// the window's length].
    #[arg(long, value_name = "TIME")]
    pub drain: Option<f64>,
    /// Cycle-compatible units: one time unit is one flit on one link; --warmup,
    /// --measure, --drain, --router-delay, --link-delay, --global-link-delay,
    /// --host-link-delay and every latency reported are in those units.
    #[arg(long)]
    pub cycles: bool,
    /// --cycles: the switches' routing (pipeline) delay [cycles].
    #[arg(long, value_name = "CYCLES", requires = "cycles")]
    pub router_delay: Option<u32>,
    /// --cycles: the cables' propagation delay [cycles].
    #[arg(long, value_name = "CYCLES", requires = "cycles")]
    pub link_delay: Option<u32>,
    /// --cycles, dragonflies: the global cables' propagation delay [cycles; default:
    /// --link-delay] (BookSim's are 100 cycles, its local ones 10).
    #[arg(long, value_name = "CYCLES", requires = "cycles")]
    pub global_link_delay: Option<u32>,
    /// --cycles: the host cables' propagation delay [cycles; default: --link-delay]
    /// (BookSim's injection and ejection channels take 1 cycle).
    #[arg(long, value_name = "CYCLES", requires = "cycles")]
    pub host_link_delay: Option<u32>,
    /// Seed of the generators (each point's own seed comes from it and its load).
    #[arg(long, default_value_t = 1)]
    pub traffic_seed: u64,
    /// One curve per routing on the same network, e.g. d-mod-k,random.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "ROUTING,…")]
    pub compare_routing: Vec<RoutingName>,
    /// One curve per switch architecture, e.g. output-queued,wormhole.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "SWITCH,…")]
    pub compare_switch: Vec<SwitchName>,
    /// One curve per preset (with the other flags applied to each).
    #[arg(long, value_delimiter = ',', value_name = "NAME,…", conflicts_with_all = ["compare_routing", "compare_switch", "compare_network"])]
    pub compare_preset: Vec<String>,
    /// One curve per network file (with the other flags applied to each).
    #[arg(long, value_delimiter = ',', value_name = "FILE,…", conflicts_with_all = ["compare_routing", "compare_switch"])]
    pub compare_network: Vec<String>,
    /// Points simulated at once [default: the machine's cores, divided by
    /// --partitions].
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub partitions: PartitionsArg,
    /// Points of a --sweep kept after the first saturated one [default: 1].
    #[arg(long)]
    pub past_saturation: Option<usize>,
    /// Print the curves as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write a latency–load and throughput–load plot here.
    #[arg(long, value_name = "FILE.svg")]
    pub svg: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ProcessArg {
    Bernoulli,
    Poisson,
}

/// `vesper traffic`: the configurations the flags name, their curves, and the plot
/// (notes on it go to `notes`).
pub fn traffic(args: TrafficArgs, notes: &mut dyn std::io::Write) -> anyhow::Result<Traffic> {
    traffic_on(args, None, notes)
}

/// [`traffic()`], as one rank of `ranks` (an MPI run) when given: every rank runs the same
/// points, one partition each, and only rank 0 writes the plot.
pub fn traffic_on(
    mut args: TrafficArgs,
    ranks: Option<std::sync::Arc<dyn vesper_netmodels::partition::Ranks>>,
    notes: &mut dyn std::io::Write,
) -> anyhow::Result<Traffic> {
    use crate::config::Split;
    use crate::traffic_sweep::{self, Configuration};

    let split = match ranks {
        Some(ranks) if ranks.size() > 1 => {
            // Its default, 1, says nothing.
            partitions_on_ranks(ranks.size(), args.partitions.beyond_one())?;
            anyhow::ensure!(
                args.threads.is_none_or(|t| t == 1),
                "--threads {}: under mpirun every rank takes part in every point, so the points run one at a time; \
                 leave --threads out",
                args.threads.unwrap_or(0)
            );
            args.threads = Some(1);
            Split::Ranks(ranks)
        }
        _ => Split::Threads(args.partitions.count()),
    };

    // The network's --pattern is --routing-pattern here.
    args.net.renamed = vec![(Field::Pattern, "--routing-pattern")];
    // (clap's `requires` would let --load, which conflicts with --sweep, stand in.)
    anyhow::ensure!(
        args.past_saturation.is_none() || args.sweep.is_some(),
        "--past-saturation is for a --sweep (a single --load has no points past saturation)"
    );
    let (base, origin) = args.net.spec(Some("kary-ntree"))?;
    let overrides = args.net.overrides().0;
    // (label, description, where it came from)
    let mut specs: Vec<(String, NetworkSpec, String)> = Vec::new();
    if !args.compare_preset.is_empty() {
        for name in &args.compare_preset {
            let mut spec = preset::spec(name).map_err(|e| anyhow::anyhow!("--compare-preset: {e}"))?;
            spec.overlay(overrides.clone());
            specs.push((name.clone(), spec, format!("preset {name}")));
        }
    } else if !args.compare_network.is_empty() {
        for file in &args.compare_network {
            let mut spec = description::read_spec(std::path::Path::new(file))
                .with_context(|| format!("--compare-network {file}"))?;
            spec.overlay(overrides.clone());
            specs.push((file.clone(), spec, file.clone()));
        }
    } else {
        let routings: Vec<Option<RoutingName>> = match args.compare_routing.as_slice() {
            [] => vec![None],
            list => list.iter().copied().map(Some).collect(),
        };
        let switches: Vec<Option<SwitchName>> = match args.compare_switch.as_slice() {
            [] => vec![None],
            list => list.iter().copied().map(Some).collect(),
        };
        for routing in &routings {
            for switch in &switches {
                let mut spec = base.clone();
                let mut label = Vec::new();
                if let Some(r) = routing {
                    spec.routing = Some(*r);
                    label.push(value_name(r));
                }
                if let Some(s) = switch {
                    label.push(value_name(s));
                    with_switch(&mut spec, &overrides, *s);
                    // The seed draws random routes too.
                    if *s != SwitchName::Wormhole && !spec.routing.is_some_and(RoutingName::draws) {
                        spec.seed = overrides.seed;
                    }
                }
                let label = if label.is_empty() {
                    origin.clone()
                } else {
                    label.join(", ")
                };
                specs.push((label, spec, origin.clone()));
            }
        }
    }
    let loads = match (&args.sweep, args.load) {
        (Some(sweep), _) => traffic_sweep::parse_sweep(sweep).map_err(anyhow::Error::msg)?,
        (None, Some(load)) if load.is_finite() && load > 0.0 => vec![load],
        (None, load) => anyhow::bail!(
            "--load {}: the offered load must be a positive fraction of the link rate",
            load.map_or("-".into(), |l| l.to_string())
        ),
    };
    let pattern: vesper_netmodels::traffic::Pattern = args
        .traffic_pattern
        .parse()
        .map_err(|e| anyhow::anyhow!("--pattern {e}"))?;
    let mut configurations = Vec::new();
    let resolve = |spec: &NetworkSpec, origin: &str| args.net.resolve(spec, origin, &[]);
    for (label, mut spec, origin) in specs {
        // Pattern-aware routing without a pattern file: routes chosen for the traffic's
        // permutation (one phase, host to host); the hosts come from the tree itself.
        if spec.routing == Some(RoutingName::PatternAware) && spec.pattern.is_none() {
            let probe = NetworkSpec {
                routing: Some(RoutingName::DModK),
                ..spec.clone()
            };
            let hosts = resolve(&probe, &origin)?.hosts;
            let destinations = pattern
                .destinations(hosts, args.traffic_seed)
                .map_err(|e| anyhow::anyhow!("--pattern {e} ({label})"))?;
            let table = destinations.permutation().with_context(|| {
                format!("{label}: pattern-aware routing needs a permutation pattern or --routing-pattern FILE")
            })?;
            spec.pattern_phases = Some(vec![(0..).zip(table.iter().copied()).collect()]);
        }
        let mut network = resolve(&spec, &origin)?;
        let mut link = traffic_sweep::host_link(&network).map_err(|e| anyhow::anyhow!("{label}: {e}"))?;
        let flit_ns = link.bandwidth.serialization_time(u64::from(link.flit_bytes)).as_ps() as f64 / 1e3;
        let cycles = [
            args.router_delay,
            args.link_delay,
            args.global_link_delay,
            args.host_link_delay,
        ];
        if cycles.iter().any(Option::is_some) {
            spec.routing_latency_ns = args
                .router_delay
                .map(|c| f64::from(c) * flit_ns)
                .or(spec.routing_latency_ns);
            spec.link_latency_ns = args.link_delay.map(|c| f64::from(c) * flit_ns).or(spec.link_latency_ns);
            spec.global_link_latency_ns = args
                .global_link_delay
                .map(|c| f64::from(c) * flit_ns)
                .or(spec.global_link_latency_ns);
            spec.host_link_latency_ns = args
                .host_link_delay
                .map(|c| f64::from(c) * flit_ns)
                .or(spec.host_link_latency_ns);
            network = resolve(&spec, &origin).with_context(|| {
                format!(
                    "--router-delay, --link-delay, --global-link-delay and --host-link-delay: cycles of {flit_ns} ns \
                     ({label})"
                )
            })?;
            link = traffic_sweep::host_link(&network).map_err(|e| anyhow::anyhow!("{label}: {e}"))?;
        }
        // group-shift without its N: the network's own groups.
        let pattern = pattern.with_groups(group_hosts(&network));
        let spec = traffic_spec(&args, &link, pattern, flit_ns)?;
        // Checked here, so that a bad pattern is reported before any simulation.
        spec.pattern
            .destinations(network.hosts, 0)
            .map_err(|e| anyhow::anyhow!("--pattern {e} ({label})"))?;
        configurations.push(Configuration { label, network, spec });
    }
    anyhow::ensure!(args.threads != Some(0), "--threads 0: at least 1");
    let partitions = match &split {
        Split::Threads(partitions) => *partitions,
        _ => 1,
    };
    let threads = args
        .threads
        .unwrap_or_else(|| (cores() / partitions.max(1) as usize).max(1));
    // Each network must fit in memory, and the points run at once together: fewer at
    // once if they would not (the results are the same).
    let threads = match args.net.memory_limit() {
        None => threads,
        Some(limit) => {
            let mut fitting = threads;
            for c in &configurations {
                crate::memory::check(&c.network, partitions, 1, &limit)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", c.label))?;
                let peak = crate::memory::footprint(&c.network, partitions).peak.max(1);
                fitting = fitting.min(usize::try_from(limit.bytes / peak).unwrap_or(usize::MAX));
            }
            fitting.max(1)
        }
    };
    // Only as many points at once as there are loads.
    warn_if_more_threads_than_cores(partitions, threads.min(loads.len()) * partitions as usize);
    let curves = traffic_sweep::sweep(
        &configurations,
        &loads,
        threads,
        &split,
        args.past_saturation.unwrap_or(1),
        args.cycles,
    )?;
    for (curve, configuration) in curves.iter().zip(&configurations) {
        let crossing = crossings_of(&configuration.network);
        for point in &curve.points {
            let Some(p) = &point.partitions else { continue };
            let per_window = |n: u64| n as f64 / p.windows.max(1) as f64;
            let events: Vec<String> = p.events.iter().map(u64::to_string).collect();
            let (on, bytes) = match split.ranks() {
                Some(_) => ("MPI ranks", format!(", {:.0} bytes exchanged", per_window(p.bytes))),
                None => ("partitions", String::new()),
            };
            note!(
                notes,
                "{}, load {}: {} {on}, windows of {}: {} windows ({:.0} a wall second), {:.0} events and {:.0} \
                 {crossing}{bytes} a window; events by partition {}",
                curve.label,
                point.offered_load,
                p.partitions,
                p.lookahead,
                p.windows,
                p.windows as f64 / point.wall_seconds.max(1e-9),
                per_window(point.events),
                per_window(p.crossings),
                events.join(", ")
            );
        }
    }
    if let Some(path) = args.svg.as_ref().filter(|_| split.writes()) {
        vesper_input::write(path, traffic_sweep::svg(&curves))
            .with_context(|| format!("--svg {}: cannot write", path.display()))?;
        note!(notes, "plot written to {}", path.display());
    }
    Ok(Traffic {
        curves,
        json: args.json,
        peak_memory_mib: crate::bench::peak_memory_mib(),
    })
}

/// What crosses between the partitions of `network`: packets, or a wormhole
/// network's flits and flow-control signals.
fn crossings_of(network: &NetworkConfig) -> &'static str {
    use crate::config::{FabricConfig, SwitchedConfig};
    let wormhole = |s: &SwitchedConfig| matches!(s.switch.kind, vesper_netmodels::SwitchKind::Wormhole(_));
    let wormhole = match &network.fabric {
        FabricConfig::Switched(s) => wormhole(s),
        FabricConfig::MultiRail { rails, .. } => rails.iter().any(wormhole),
        FabricConfig::Ideal(_) => false,
    };
    if wormhole {
        "crossing flits and signals"
    } else {
        "crossing packets"
    }
}

/// What `vesper traffic` prints: its curves, as a table (with the process's peak
/// memory) or as JSON.
#[derive(Debug)]
pub struct Traffic {
    pub curves: Vec<crate::traffic_sweep::Curve>,
    pub json: bool,
    /// the process's peak memory when the curves were done \[MiB\], where known
    pub peak_memory_mib: Option<f64>,
}

impl std::fmt::Display for Traffic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.json {
            let json = serde_json::to_string_pretty(&self.curves).map_err(|_| std::fmt::Error)?;
            return writeln!(f, "{json}");
        }
        write!(f, "{}", crate::traffic_sweep::table(&self.curves))?;
        if let Some(mib) = self.peak_memory_mib {
            writeln!(f, "peak memory of the process: {mib:.1} MiB")?;
        }
        Ok(())
    }
}

/// The traffic the flags describe for a network with host link `link` (`flit_ns`: its
/// flit time, the unit of `--cycles`).
pub fn traffic_spec(
    args: &TrafficArgs,
    link: &vesper_netmodels::traffic::HostLink,
    pattern: vesper_netmodels::traffic::Pattern,
    flit_ns: f64,
) -> anyhow::Result<vesper_netmodels::traffic::TrafficSpec> {
    use vesper_netmodels::traffic::{Process, Sizes, TrafficSpec};

    let pair = |flag: &str, text: &str, n: usize| -> anyhow::Result<Vec<u32>> {
        let values: Vec<u32> = text
            .split(':')
            .map(|v| v.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|_| anyhow::anyhow!("{flag} {text}: give {n} whole numbers separated by ':'"))?;
        anyhow::ensure!(
            values.len() == n,
            "{flag} {text}: give {n} whole numbers separated by ':'"
        );
        Ok(values)
    };
    let sizes = if let Some(bytes) = args.size {
        Sizes::Fixed(bytes)
    } else if let Some(text) = &args.size_range {
        let v = pair("--size-range", text, 2)?;
        anyhow::ensure!(v[0] <= v[1], "--size-range {text}: MIN above MAX");
        Sizes::Uniform { min: v[0], max: v[1] }
    } else if let Some(text) = &args.size_bimodal {
        let v = pair("--size-bimodal", text, 3)?;
        anyhow::ensure!(v[2] <= 100, "--size-bimodal {text}: PERCENT is at most 100");
        Sizes::Bimodal {
            small: v[0],
            large: v[1],
            large_percent: v[2],
        }
    } else {
        let flits = args.size_flits.unwrap_or(16);
        let wire = u64::from(flits) * u64::from(link.flit_bytes);
        let header = u64::from(link.adapter.header_bytes);
        anyhow::ensure!(
            wire > header,
            "--size-flits {flits}: {flits} flits of {} bytes must hold the {header}-byte header and some payload",
            link.flit_bytes
        );
        anyhow::ensure!(
            wire - header <= u64::from(u32::MAX),
            "--size-flits {flits}: {flits} flits of {} bytes make a payload over 4 GiB, the largest message",
            link.flit_bytes
        );
        Sizes::Fixed((wire - header) as u32)
    };
    // µs, or flit times with --cycles.
    let time = |flag: &str, value: Option<f64>, default_us: f64, default_cycles: f64| -> anyhow::Result<SimTime> {
        let (value, ns_per_unit) = if args.cycles {
            (value.unwrap_or(default_cycles), flit_ns)
        } else {
            (value.unwrap_or(default_us), 1e3)
        };
        anyhow::ensure!(
            value.is_finite() && value >= 0.0,
            "{flag} {value}: give a time of zero or more"
        );
        SimTime::from_wire_ns(value * ns_per_unit).map_err(|e| anyhow::anyhow!("{flag} {value}: {e}"))
    };
    let measure = time("--measure", args.measure, 200.0, 20_000.0)?;
    anyhow::ensure!(
        measure > SimTime::ZERO,
        "--measure: the window must be longer than zero"
    );
    let drain_default = args.measure.unwrap_or(if args.cycles { 20_000.0 } else { 200.0 });
    if let Some(0) = args.source_queue {
        anyhow::bail!("--source-queue 0: a source queue holds at least one message");
    }
    Ok(TrafficSpec {
        pattern,
        process: match args.process {
            ProcessArg::Bernoulli => Process::Bernoulli,
            ProcessArg::Poisson => Process::Poisson,
        },
        load: 1.0,
        sizes,
        source_queue: args.source_queue,
        warmup: time("--warmup", args.warmup, 50.0, 5_000.0)?,
        measure,
        drain: time("--drain", args.drain, drain_default, drain_default)?,
        seed: args.traffic_seed,
    })
}

/// Hosts in one of the network's groups, for `group-shift` without its N: a
/// dragonfly's `p·a`; `None` for networks without groups.
fn group_hosts(network: &NetworkConfig) -> Option<u32> {
    match &network.fabric {
        FabricConfig::Switched(SwitchedConfig {
            shape: Shape::Dragonfly(d),
            ..
        }) => Some(d.p * d.a),
        _ => None,
    }
}
