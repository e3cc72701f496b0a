//! `vesper run`: a trace or a synthetic workload replayed against a server of its own
//! (or an external one, or the replayer's own bus).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;

use crate::config::{FabricConfig, number_text};
use crate::description::{Field, KindName, RoutingName};

use super::network::*;
use super::*;

#[derive(Debug, clap::Args)]
// Its doc comments are `--help` text: units stay in plain brackets ([ns]).
#[allow(rustdoc::broken_intra_doc_links)]
pub struct RunArgs {
    /// A Dimemas trace (.dim) to replay instead of a synthetic workload.
    #[arg(value_name = "TRACE.dim")]
    pub trace: Option<PathBuf>,
    /// How a trace's collectives are carried out, per family: FAMILY=METHOD, repeatable.
    /// Families: barrier, broadcast, reduce, allreduce, alltoall, or all; methods that
    /// decompose them into messages on the network: binomial (default for rooted ones),
    /// flat (the root exchanges with every member), recursive-doubling (the all-reduce
    /// default), reduce-broadcast, pairwise (the all-to-all default); or analytic:
    /// Dimemas's model, no messages (all members wait for the last, then fan-in and
    /// fan-out stages of latency + bytes / bandwidth: CTE, LIN or LOG in the group's
    /// size). The model's links, buses and per-operation stages come from --config (its
    /// collective model and "communications fine tuning" file); without one, LOG stages
    /// over the network's link bandwidth between nodes and the --intra-* copy within.
    #[arg(long, value_name = "FAMILY=METHOD")]
    pub collective: Vec<String>,
    /// The synthetic workload to replay.
    #[arg(long, value_enum, default_value_t = WorkloadArg::AllToAll)]
    pub workload: WorkloadArg,
    /// Tasks (one per node) of every workload but the ping-pong.
    #[arg(long, default_value_t = 32)]
    pub tasks: u32,
    /// Message size [bytes; at most 2147483647, the wire protocol's largest].
    #[arg(long, default_value_t = 32_679, value_parser = message_size)]
    pub size: u32,
    /// Rounds of the ping-pong and the ring.
    #[arg(long, default_value_t = 10)]
    pub iterations: u32,
    /// Computation before each ring round [ns].
    #[arg(long, default_value_t = 0)]
    pub compute_ns: u64,
    /// Messages of at least this many bytes use the rendezvous protocol (PROTO lines),
    /// smaller ones are eager, whatever a trace's synchronous bit says (like Dimemas's
    /// -S). Without it, sends whose synchronous bit is set are rendezvous, the others
    /// (and every send of a synthetic workload) eager.
    #[arg(long, value_name = "BYTES")]
    pub eager_limit: Option<u32>,
    /// Every message is eager, whatever its size or a trace's synchronous bit (like
    /// Dimemas's -F).
    #[arg(long, conflicts_with = "eager_limit")]
    pub all_eager: bool,
    /// A Dimemas configuration (.cfg), replayed with Dimemas's models: its task mapping,
    /// CPU speed ratio and intra-node latency and bandwidth replace --tasks-per-node,
    /// --cpu-ratio and --intra-*; collectives are analytic (unless --collective says
    /// otherwise); tasks pay its latencies before sends, receives and waits, and
    /// messages hold the node links and buses it gives. With --network ideal, the
    /// network takes its bandwidth and nodes (unless --bandwidth or --hosts is given):
    /// the prediction is then Dimemas's own.
    #[arg(long, value_name = "FILE.cfg", conflicts_with_all = ["tasks_per_node", "cpu_ratio", "intra_bandwidth", "intra_latency"])]
    pub config: Option<PathBuf>,
    /// Tasks per node, filling nodes in order: task t runs on node t / N. Messages
    /// between tasks of one node are copied locally and never reach the network.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub tasks_per_node: u32,
    /// Bandwidth of those intra-node copies [MBps, 2^20 bytes/s; default: unlimited].
    #[arg(long, value_name = "MBPS")]
    pub intra_bandwidth: Option<f64>,
    /// Latency of an intra-node copy [ns].
    #[arg(long, value_name = "NS", default_value_t = 0.0)]
    pub intra_latency: f64,
    /// Speed of the simulated CPUs relative to the traced ones: compute bursts take
    /// their time divided by this (Dimemas's CPU speed ratio).
    #[arg(long, value_name = "RATIO", default_value_t = 1.0)]
    pub cpu_ratio: f64,
    /// Messages of the random workload.
    #[arg(long, default_value_t = 1000)]
    pub messages: u32,
    /// Messages per wave of the random workload: each task waits for its part of a
    /// wave before the next.
    #[arg(long, default_value_t = 32)]
    pub wave: u32,
    /// Delay each task's start by a random time below this [ns] (a compute burst
    /// first): the start imbalance of seed 004 §5.2.
    #[arg(long, value_name = "NS", default_value_t = 0)]
    pub imbalance_ns: u64,
    /// Seed of the workload's random draws (the random pairs, the start delays).
    #[arg(long, default_value_t = 1)]
    pub workload_seed: u64,
    /// Which of the synthetic workloads' flags the command line gave.
    #[arg(skip)]
    pub workload_flags: Vec<&'static str>,
    /// Replay without a server, over the local bus model (needs --network ideal): the
    /// replayer's own prediction, to compare with the server's.
    #[arg(long)]
    pub no_server: bool,
    /// Replay against an external, already running `vesper serve` at HOST:PORT (a host
    /// name, resolved at every attempt, or a numeric address) instead of a server in
    /// this process. The network is the server's: start it with the network to replay
    /// on (network and network trace flags are refused here); it writes its own report.
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "no_server")]
    pub server: Option<String>,
    /// With --server: how long to keep trying to connect, for a server that starts
    /// after `vesper run` (containers of one compose file) [s].
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = seconds, requires = "server")]
    pub server_wait: std::time::Duration,
    /// With --server: how long one reply may take, from the batch sent to its END, before
    /// the replay gives up with an error (0: no limit) [s]. A reply waits for the model
    /// to reach the replay's next completion; the default, an hour, is far above any
    /// one step measured (a whole run of sixty 2 GiB messages into one host, 72 s).
    #[arg(long, value_name = "SECONDS", default_value = "3600", value_parser = super::seconds_or_none, requires = "server")]
    pub server_reply_timeout: std::time::Duration,
    /// With --server: the application number this replay's lines carry (SEND … src_app
    /// dst_app). A node of an application belongs to the first client that sends from
    /// it, so replays sharing one server (`vesper serve --clients N`) need one each.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "server")]
    pub application: u32,
    /// Which network flags the command line gave (refused with --server).
    #[arg(skip)]
    pub network_flags: Vec<String>,
    /// Which network trace flags the command line gave (refused with --server).
    #[arg(skip)]
    pub trace_flags: Vec<String>,
    /// How long the replay client polls for each reply before it sleeps [µs]: polling
    /// avoids a thread wake-up per round trip, at the cost of a busy core while it
    /// waits (0: block at once, as Dimemas does).
    #[arg(long, value_name = "US", default_value_t = 200)]
    pub client_spin_us: u64,
    /// How the in-process server answers: `batched` (with the completions of the
    /// earliest time, every later one the model has already fixed within its safe
    /// horizon: fewer round trips) or `earliest` (the completions of the earliest time
    /// only); the predictions are the same [default: batched].
    #[arg(long, value_enum)]
    pub replies: Option<crate::config::Replies>,
    /// Largest reply the server writes at once [bytes; 0: no limit]: the in-process
    /// server's, or with --server the one it was started with (vesper serve
    /// --reply-limit). Dimemas's client reads 500; above that the replay client reads
    /// each reply whole, and each reply can carry more completions told ahead (fewer
    /// round trips), which Dimemas's client could not read.
    #[arg(long, value_name = "BYTES", default_value_t = vesper_protocol::LEGACY_REPLY_LIMIT)]
    pub reply_limit: usize,
    #[command(flatten)]
    pub partitions: PartitionsArg,
    /// Write the result (result.json) and the application Paraver trace (app.prv,
    /// app.pcf, app.row: tasks as threads, MPI states, one record per message) here.
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// The Paraver header's date (fixed by default, so that outputs are reproducible).
    #[arg(long, value_name = "DD/MM/YYYY at HH:MM", default_value = "01/01/2026 at 00:00", value_parser = paraver_date)]
    pub trace_date: String,
    /// Also save the workload replayed as a Dimemas trace (.dim).
    #[arg(long, value_name = "FILE")]
    pub save_trace: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub net: NetworkArgs,
    #[command(flatten)]
    pub network_trace: crate::network_trace::TraceArgs,
}

impl RunArgs {
    /// Records which synthetic workload, network and network trace flags `matches` (the
    /// `run` subcommand's) were given on the command line, for the checks that refuse
    /// flags without effect.
    pub fn note_given_flags(&mut self, matches: &clap::ArgMatches) {
        let given_id = |id: &str| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
        self.workload_flags = WORKLOAD_FLAGS
            .iter()
            .filter(|(id, _)| given_id(id))
            .map(|&(_, flag)| flag)
            .collect();
        // The flags of a server of `run`'s own, as given: `--server` refuses them.
        let given = |flags: clap::Command| -> Vec<String> {
            flags
                .get_arguments()
                .filter(|arg| given_id(arg.get_id().as_str()))
                .filter_map(|arg| arg.get_long().map(|long| format!("--{long}")))
                .collect()
        };
        self.network_flags = given(<NetworkArgs as clap::Args>::augment_args(clap::Command::new("network")));
        self.trace_flags = given(<crate::network_trace::TraceArgs as clap::Args>::augment_args(
            clap::Command::new("trace"),
        ));
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkloadArg {
    PingPong,
    Ring,
    AllToAll,
    /// seed 004's weather-forecast pattern: task n sends to n + 16, then n − 16
    Wrf,
    /// seed 002's kernels: reduction to task 0 over a binary tree
    BinaryTree,
    /// broadcast from task 0 over a binary tree
    InverseBinaryTree,
    /// every task sends to task 0
    AllToOne,
    /// task 0 sends to every task
    OneToAll,
    /// recursive doubling: exchanges with task XOR 2^t
    Butterfly,
    /// a diagonal sweep over a square virtual mesh (--tasks a square)
    #[value(name = "wavefront-2d")]
    Wavefront2d,
    /// a diagonal sweep over a cubic virtual mesh (--tasks a cube)
    #[value(name = "wavefront-3d")]
    Wavefront3d,
    /// halo exchange with the neighbours of a square virtual mesh
    #[value(name = "mesh-2d")]
    Mesh2d,
    /// halo exchange with the neighbours of a cubic virtual mesh
    #[value(name = "mesh-3d")]
    Mesh3d,
    /// synchronized random pairs: --messages in waves of --wave
    Random,
}

/// Writes the result JSON and the application Paraver trace into `dir`.
pub fn write_output(
    dir: &std::path::Path,
    result: &serde_json::Value,
    outcome: &vesper_client_dimemas_adapter::replay::Outcome,
    mapping: &vesper_client_dimemas_adapter::replay::Mapping,
    date: &str,
    notes: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    use std::io::Write as _;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let create = |name: &str| -> anyhow::Result<std::io::BufWriter<std::fs::File>> {
        let path = dir.join(name);
        let file = vesper_input::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(std::io::BufWriter::new(file))
    };
    let mut json = create("result.json")?;
    serde_json::to_writer_pretty(&mut json, result)?;
    writeln!(json)?;
    json.flush()?;
    let (mut prv, mut pcf, mut row) = (create("app.prv")?, create("app.pcf")?, create("app.row")?);
    vesper_client_dimemas_adapter::paraver::write(outcome, mapping, date, &mut prv, &mut pcf, &mut row)
        .and_then(|()| prv.flush())
        .and_then(|()| pcf.flush())
        .and_then(|()| row.flush())
        .with_context(|| format!("cannot write the Paraver trace in {}", dir.display()))?;
    let network = if dir.join("network.prv").exists() {
        ", network.prv/.pcf/.row"
    } else {
        ""
    };
    note!(
        notes,
        "wrote result.json, app.prv/.pcf/.row{network} in {}",
        dir.display()
    );
    Ok(())
}

/// Makes `dir` if needed and checks that a file can be made in it.
pub fn check_writable_dir(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".vesper-write-check-{}", std::process::id()));
    std::fs::File::create(&probe)?;
    std::fs::remove_file(&probe)
}

/// Replay options from the command line.
pub fn options_from_flags(args: &RunArgs) -> anyhow::Result<vesper_client_dimemas_adapter::replay::ReplayOptions> {
    use vesper_client_dimemas_adapter::replay::analytic::{AnalyticCollectives, FanModel, Link};
    use vesper_client_dimemas_adapter::replay::{CpuRatio, Mapping, MemoryCopy, ReplayOptions, mbps_ratio};
    anyhow::ensure!(args.tasks_per_node > 0, "--tasks-per-node must be at least 1");
    // Bounded so that the replay's clock (picoseconds in 64 bits) cannot overflow.
    anyhow::ensure!(
        args.intra_latency.is_finite() && (0.0..=1e12).contains(&args.intra_latency),
        "--intra-latency must be a number of ns from 0 to 10^12 (1,000 s), not {}",
        args.intra_latency
    );
    let bandwidth = match args.intra_bandwidth {
        Some(mbps) => Some(
            mbps_ratio(mbps)
                .with_context(|| format!("--intra-bandwidth must be a positive number of MBps, not {mbps}"))?,
        ),
        None => None,
    };
    let cpu_ratio = CpuRatio::new(args.cpu_ratio)
        .with_context(|| format!("--cpu-ratio must be a positive number, not {}", args.cpu_ratio))?;
    Ok(ReplayOptions {
        eager_limit: args.eager_limit,
        all_eager: args.all_eager,
        cpu_ratio: Some(cpu_ratio),
        mapping: Mapping::TasksPerNode(args.tasks_per_node),
        memory_copy: MemoryCopy {
            latency: (args.intra_latency * 1000.0).round() as u64,
            bandwidth,
        },
        record: false,
        // Within nodes as the memory copies; between nodes set from the network by `run`.
        collectives: AnalyticCollectives {
            intra: Link {
                latency: (args.intra_latency * 1000.0).round() as u64,
                bandwidth,
            },
            ..AnalyticCollectives::uniform(FanModel::Logarithmic)
        },
        dimemas: None,
    })
}

/// Replay options from a Dimemas configuration (its values checked when it was read):
/// mapping, the nodes' CPU speed ratios, startups, intra-node copies, links and buses (a
/// bandwidth of 0 is instantaneous, as in Dimemas), and the model and fine tuning of
/// analytic collectives.
pub fn options_from_config(
    path: &std::path::Path,
    config: &vesper_client_dimemas_adapter::cfg::DimConfig,
    args: &RunArgs,
) -> anyhow::Result<vesper_client_dimemas_adapter::replay::ReplayOptions> {
    use vesper_client_dimemas_adapter::replay::analytic::{AnalyticCollectives, FanModel, Link};
    use vesper_client_dimemas_adapter::replay::{
        CLOCK_LIMIT, DimemasModel, MemoryCopy, NodeModel, ReplayOptions, mbps_ratio, ps_of_seconds,
    };
    // Checked when the configuration was read: refused here too, never clamped.
    let ps = |seconds: f64, field: &str| {
        ps_of_seconds(seconds)
            .with_context(|| format!("{}: {field} {seconds} s: more than {CLOCK_LIMIT}", path.display()))
    };
    // 0: instantaneous, as in Dimemas.
    let ratio = |mbps: Option<f64>, field: &str| match mbps.filter(|&b| b != 0.0) {
        Some(mbps) => mbps_ratio(mbps)
            .map(Some)
            .with_context(|| format!("{}: {field} {mbps} MBps: vesper cannot hold it exactly", path.display())),
        None => Ok(None),
    };
    // A task pays a startup before each send: bounded as the ideal network's latency
    // is, so that a message sent after one still has room on the clock.
    let startup = |seconds: f64, field: &str, line: usize| {
        const LONGEST_PS: u64 = 1 << 62;
        let startup = ps(seconds, field)?;
        anyhow::ensure!(
            startup <= LONGEST_PS,
            "{}:{line}: {field} {}: {} ns is more than the {:.3e} s vesper allows a startup latency (a task pays \
             it before each send, and the message must still arrive within the clock)",
            path.display(),
            number_text(seconds),
            number_text(startup as f64 / 1e3),
            LONGEST_PS as f64 / 1e12
        );
        Ok(startup)
    };
    // Each node record's nodes; none: every node has one processor, no latency and
    // unlimited links (as vesper read such a file before).
    let mut groups = Vec::new();
    for g in &config.groups {
        let node = NodeModel {
            cpus: g.cpus,
            cpu_ratio: g.cpu_ratio,
            intra_startup: startup(g.intra_latency_s, &format!("\"{}\" intra_latency_s", g.record), g.line)?,
            intra_bandwidth: ratio(Some(g.intra_bandwidth_mbps), "intra_bw_MBps")?,
            intra_buses: g.intra_buses,
            intra_links: g.intra_links,
            inter_startup: startup(g.inter_latency_s, &format!("\"{}\" inter_latency_s", g.record), g.line)?,
            inter_links: g.inter_links,
        };
        groups.push((g.count, node));
    }
    let dimemas = DimemasModel::groups(&groups, config.buses.unwrap_or(0))
        .unwrap_or_else(|| DimemasModel::uniform(NodeModel::free(), config.buses.unwrap_or(0)));
    // Collectives modelled analytically take the configuration's links, buses and
    // model (LOG when it names none), then its fine-tuning file.
    let model = config
        .collective_model
        .and_then(AnalyticCollectives::model_of_configuration)
        .unwrap_or(FanModel::Logarithmic);
    let first = dimemas.node(0);
    let mut collectives = AnalyticCollectives {
        inter: Link {
            latency: first.inter_startup,
            bandwidth: ratio(config.bandwidth_mbps, "bw_MBps")?,
        },
        intra: Link {
            latency: first.intra_startup,
            bandwidth: first.intra_bandwidth,
        },
        nodes: Some(dimemas.clone()),
        buses: config.buses.unwrap_or(0),
        machine_nodes: config.nodes.unwrap_or(u32::MAX),
        ..AnalyticCollectives::uniform(model)
    };
    config.read_tuning(path, &mut collectives)?;
    Ok(ReplayOptions {
        eager_limit: args.eager_limit,
        all_eager: args.all_eager,
        cpu_ratio: None,
        mapping: config.mapping.clone().unwrap_or_default(),
        memory_copy: MemoryCopy::default(),
        record: false,
        collectives,
        dimemas: Some(dimemas),
    })
}

/// The synthetic workload `--workload` names, with its options.
/// Synthetic workloads are built in memory, every message of every task: at most this
/// many messages (about 2 GB of operations).
pub const MAX_SYNTHETIC_MESSAGES: u64 = 1 << 25;

/// The synthetic workloads' flags (clap's argument ids and the flags), which a run of a
/// trace does not take.
pub const WORKLOAD_FLAGS: [(&str, &str); 7] = [
    ("workload", "--workload"),
    ("tasks", "--tasks"),
    ("size", "--size"),
    ("iterations", "--iterations"),
    ("compute_ns", "--compute-ns"),
    ("messages", "--messages"),
    ("wave", "--wave"),
];

/// Refuses a synthetic workload's flag given where it has no effect: with a trace, or
/// with a workload that does not take it, so that it cannot be quietly ignored.
pub fn check_workload_flags(args: &RunArgs) -> anyhow::Result<()> {
    if let (Some(trace), Some(flag)) = (&args.trace, args.workload_flags.first()) {
        anyhow::bail!(
            "{flag} is for synthetic workloads; the trace {} brings its own tasks and messages",
            trace.display()
        );
    }
    let workload = args.workload;
    // The workloads a flag is for, if this one is not among them.
    let not_for_this = |flag: &str| match flag {
        "--tasks" if workload == WorkloadArg::PingPong => Some("every workload but the ping-pong"),
        "--iterations" if !matches!(workload, WorkloadArg::PingPong | WorkloadArg::Ring) => {
            Some("the ping-pong and ring workloads")
        }
        "--compute-ns" if workload != WorkloadArg::Ring => Some("the ring workload"),
        "--messages" | "--wave" if workload != WorkloadArg::Random => Some("the random workload"),
        _ => None,
    };
    if let Some((flag, for_whom)) = args.workload_flags.iter().find_map(|f| not_for_this(f).map(|w| (f, w))) {
        let which = if args.workload_flags.contains(&"--workload") {
            ""
        } else {
            ", the default; name another with --workload"
        };
        anyhow::bail!(
            "{flag} is for {for_whom}; the workload is {}{which}",
            value_name(&workload)
        );
    }
    anyhow::ensure!(
        args.tasks > 0 || workload == WorkloadArg::PingPong,
        "--tasks 0: a workload needs at least one task"
    );
    Ok(())
}

pub fn synthetic_workload(args: &RunArgs) -> anyhow::Result<vesper_client_dimemas_adapter::replay::Workload> {
    use vesper_client_dimemas_adapter::replay::Workload;
    // Checked before anything is built: the allocator would abort first.
    let (tasks, iterations) = (u64::from(args.tasks), u64::from(args.iterations));
    let (messages, from) = match args.workload {
        WorkloadArg::PingPong => (2 * iterations, "--iterations"),
        WorkloadArg::Ring => (tasks * iterations, "--tasks × --iterations"),
        WorkloadArg::AllToAll => (tasks * tasks.saturating_sub(1), "--tasks²"),
        WorkloadArg::Random => (u64::from(args.messages), "--messages"),
        // A handful per task (two per dimension, log2 of the tasks at most).
        _ => (tasks * 32, "--tasks"),
    };
    anyhow::ensure!(
        messages <= MAX_SYNTHETIC_MESSAGES,
        "the {} workload would hold {messages} messages ({from}); synthetic workloads are built in memory, \
         at most {MAX_SYNTHETIC_MESSAGES} messages",
        value_name(&args.workload)
    );
    let workload = match args.workload {
        WorkloadArg::PingPong => Workload::ping_pong(args.size, args.iterations),
        WorkloadArg::Ring => Workload::ring(
            args.tasks,
            args.size,
            args.iterations,
            ps_of("--compute-ns", args.compute_ns, 1000)?,
        ),
        WorkloadArg::AllToAll => Workload::all_to_all(args.tasks, args.size),
        WorkloadArg::Wrf => Workload::wrf(args.tasks, 16, args.size),
        WorkloadArg::BinaryTree => Workload::binary_tree(args.tasks, args.size),
        WorkloadArg::InverseBinaryTree => Workload::inverse_binary_tree(args.tasks, args.size),
        WorkloadArg::AllToOne => Workload::all_to_one(args.tasks, args.size),
        WorkloadArg::OneToAll => Workload::one_to_all(args.tasks, args.size),
        WorkloadArg::Butterfly => Workload::butterfly(args.tasks, args.size),
        WorkloadArg::Wavefront2d => Workload::wavefront(args.tasks, 2, args.size).map_err(anyhow::Error::msg)?,
        WorkloadArg::Wavefront3d => Workload::wavefront(args.tasks, 3, args.size).map_err(anyhow::Error::msg)?,
        WorkloadArg::Mesh2d => Workload::mesh_halo(args.tasks, 2, args.size).map_err(anyhow::Error::msg)?,
        WorkloadArg::Mesh3d => Workload::mesh_halo(args.tasks, 3, args.size).map_err(anyhow::Error::msg)?,
        WorkloadArg::Random => {
            let mut rng = vesper_netmodels::rng::Rng::new(args.workload_seed);
            let pick = |n: u32| rng.below(u64::from(n)) as u32;
            Workload::synchronized_random(args.tasks, args.size, args.messages, args.wave, pick)
                .map_err(anyhow::Error::msg)?
        }
    };
    Ok(workload)
}

/// `vesper run`: the replay, and the files `--output` and `--save-trace` ask for (notes
/// on them, and the trace's warnings, go to `notes`).
pub fn run(args: RunArgs, notes: &mut dyn std::io::Write) -> anyhow::Result<Run> {
    run_on(args, None, notes)?.ok_or_else(|| anyhow::anyhow!("a run off MPI ranks always has its result"))
}

/// [`run()`] as one rank of `ranks` (an MPI run) when given: rank 0 runs the in-process
/// server, whose network's partition it simulates and whose calls it leads; every other
/// rank builds the same network, simulates its own partition of it as rank 0's calls
/// say, and returns `None`.
pub fn run_on(
    args: RunArgs,
    ranks: Option<Arc<dyn vesper_netmodels::partition::Ranks>>,
    notes: &mut dyn std::io::Write,
) -> anyhow::Result<Option<Run>> {
    use vesper_client_dimemas_adapter::dim;
    use vesper_client_dimemas_adapter::replay::collective::Methods;
    use vesper_client_dimemas_adapter::replay::{Cursor, IdealBus, Programs, StartDelays, Workload};

    check_workload_flags(&args)?;
    let ranks = ranks.filter(|r| r.size() > 1);
    if let Some(ranks) = &ranks {
        anyhow::ensure!(
            args.server.is_none() && !args.no_server,
            "--server and --no-server: under mpirun, vesper run replays on its own server, whose network the {} \
             ranks simulate; leave them out",
            ranks.size()
        );
        partitions_on_ranks(ranks.size(), args.partitions.given)?;
    }
    let mut methods = Methods::default();
    if args.config.is_some() {
        // Dimemas's own model of collectives, unless --collective says otherwise.
        methods
            .choose("all=analytic")
            .map_err(|e| anyhow::anyhow!("--collective {e}"))?;
    }
    for choice in &args.collective {
        methods
            .choose(choice)
            .map_err(|e| anyhow::anyhow!("--collective {e}"))?;
    }
    let reply_limit = crate::config::reply_limit(args.reply_limit)?;
    let external = match &args.server {
        Some(_) if args.replies.is_some() => anyhow::bail!(
            "--replies: a server started apart answers as it was started (vesper serve --replies); leave --replies \
             out with --server"
        ),
        Some(_) if args.partitions.given.is_some() => anyhow::bail!(
            "--partitions: a server started apart runs as it was started (vesper serve --partitions); leave \
             --partitions out with --server"
        ),
        Some(address) => {
            // The (last) choice that makes a family analytic, to name it.
            let analytic = args.collective.iter().rev().find(|choice| {
                let mut alone = Methods::default();
                alone.choose(choice).is_ok() && alone.any_analytic()
            });
            let refused = crate::replay_job::InProcessOnly {
                network_flags: &args.network_flags,
                trace_flags: &args.trace_flags,
                analytic_without_config: analytic
                    .filter(|_| methods.any_analytic() && args.config.is_none())
                    .map(String::as_str),
            };
            Some(
                crate::replay_job::ExternalServer::new(address, args.server_wait, refused)?
                    .reading_whole(crate::config::replies_read_whole(reply_limit))
                    .as_application(args.application)
                    .with_reply_timeout(args.server_reply_timeout),
            )
        }
        None => None,
    };
    // Start delays are drawn in picoseconds below this.
    let below = ps_of("--imbalance-ns", args.imbalance_ns, 1000)?;
    let delays = |tasks: u32| -> Vec<u64> {
        let mut rng = vesper_netmodels::rng::Rng::new(args.workload_seed);
        (0..tasks).map(|_| rng.below(below)).collect()
    };
    // A trace is read as the replay goes (its tasks' records in pieces), unless it is to
    // be saved again; synthetic workloads are made in memory.
    let (whole, mut programs): (Option<Arc<Workload>>, Box<dyn Programs + Send>) = match &args.trace {
        Some(path) if args.save_trace.is_none() => {
            // The first pass over a large trace takes a while: a bar on a terminal.
            let reading = indicatif::ProgressBar::new(0).with_style(
                indicatif::ProgressStyle::with_template("{bar:40} {bytes} of {total_bytes} checked [{elapsed}]")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            let opened = dim::open_observed(path, &methods, &mut |done, total| {
                reading.set_length(total);
                reading.set_position(done);
            })?;
            reading.finish_and_clear();
            for warning in &opened.warnings {
                note!(notes, "warning: {warning}");
            }
            if opened.collectives > 0 {
                note!(notes, "{} collective calls {}", opened.collectives, methods.describe());
            }
            let programs = opened.programs;
            if args.imbalance_ns > 0 {
                let delays = delays(programs.threads().len() as u32);
                (None, Box::new(StartDelays::new(programs, delays)))
            } else {
                (None, programs)
            }
        }
        source => {
            let mut workload = match source {
                Some(path) => {
                    let trace = dim::read_with(path, &methods)?;
                    for warning in &trace.warnings {
                        note!(notes, "warning: {warning}");
                    }
                    anyhow::ensure!(
                        trace.threads.iter().all(|&n| n == 1),
                        "{}: --save-trace writes tasks of one thread; this trace's tasks have several",
                        path.display()
                    );
                    if trace.collectives > 0 {
                        note!(notes, "{} collective calls {}", trace.collectives, methods.describe());
                    }
                    trace.workload
                }
                None => synthetic_workload(&args)?,
            };
            if args.imbalance_ns > 0 {
                let delays = delays(workload.tasks.len() as u32);
                workload = workload.with_start_delays(&delays);
            }
            workload
                .check()
                .map_err(|reason| anyhow::anyhow!("workload {}: {reason}", workload.name))?;
            if let Some(path) = &args.save_trace {
                let mut file = std::io::BufWriter::new(
                    vesper_input::create(path).with_context(|| format!("cannot create {}", path.display()))?,
                );
                dim::write(&workload, &mut file).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                std::io::Write::flush(&mut file).with_context(|| format!("cannot write {}", path.display()))?;
                note!(notes, "trace saved to {}", path.display());
            }
            let workload = Arc::new(workload);
            (Some(Arc::clone(&workload)), Box::new(Cursor::new(workload)))
        }
    };
    let name = programs.name().to_string();
    let (mut spec, origin) = args.net.spec(Some(DEFAULT_PRESET))?;
    // The network's fields the configuration gives, as it names them.
    let mut from_config = Vec::new();
    let mut options = match &args.config {
        Some(path) => {
            let config = vesper_client_dimemas_adapter::cfg::read(path)?;
            let what = match &args.trace {
                Some(trace) => format!("the trace {}", trace.display()),
                None => format!("the workload ({name})"),
            };
            for warning in &config.warnings {
                note!(notes, "warning: {warning}");
            }
            config.check_mapping(&programs.threads(), &what)?;
            // Calibration: the ideal network takes the configuration's inter-node
            // bandwidth and nodes unless given. Its latency stays 0 unless given: the
            // replay pays the configuration's latency as Dimemas does, before each
            // send (a network latency would count it twice).
            if spec.kind == Some(KindName::Ideal) {
                let name = |record: &str, field: &str, value: f64| {
                    format!("{}: \"{record}\" {field} {}", path.display(), number_text(value))
                };
                // A bandwidth of 0 is instantaneous, for the ideal network too.
                if spec.bandwidth_mbps.is_none()
                    && let Some(mbps) = config.bandwidth_mbps
                {
                    spec.bandwidth_mbps = Some(mbps);
                    from_config.push((Field::BandwidthMbps, name("environment information", "bw_MBps", mbps)));
                }
                if spec.hosts.is_none()
                    && let Some(nodes) = config.nodes
                {
                    spec.hosts = Some(nodes);
                    from_config.push((
                        Field::Hosts,
                        name("environment information", "n_nodes", f64::from(nodes)),
                    ));
                }
            }
            options_from_config(path, &config, &args)?
        }
        None => options_from_flags(&args)?,
    };
    options.record = args.output.is_some();
    // Before the replay: an output folder that cannot be written is found now.
    if let Some(dir) = &args.output {
        check_writable_dir(dir).map_err(|e| anyhow::anyhow!("--output {}: cannot write there: {e}", dir.display()))?;
    }
    // An external server writes its own network trace (its flags are refused above).
    let trace = args.network_trace.config_for_run(
        &args.trace_date,
        args.output.as_deref(),
        args.no_server || external.is_some(),
    )?;
    if external.is_none()
        && spec.pattern.is_none()
        && (whole.is_some() || spec.routing == Some(RoutingName::PatternAware))
    {
        // Pattern-aware routing for the workload replayed: its k-th sends, task by task,
        // on their nodes (a streamed trace is read once more for them).
        let phases = match (&whole, &args.trace) {
            (Some(workload), _) => workload.send_phases(),
            (None, Some(path)) => dim::Stream::send_phases(path, &methods)?,
            (None, None) => Vec::new(),
        };
        let nodes = |phase: Vec<(u32, u32)>| {
            let node = |t| options.mapping.node_of(t);
            phase.into_iter().map(|(s, d)| (node(s), node(d))).collect()
        };
        spec.pattern_phases = Some(phases.into_iter().map(nodes).collect());
    }
    drop(whole);
    // On standard error, and only when it is a terminal.
    let new_progress = |total| {
        indicatif::ProgressBar::new(total).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {percent:>3}% of {len} operations, {msg} [{elapsed}]")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        )
    };
    let show_progress = |bar: &indicatif::ProgressBar| {
        let bar = bar.clone();
        move |p: vesper_client_dimemas_adapter::replay::Progress| {
            bar.set_position(p.done);
            bar.set_message(format!("{:.3} µs simulated", p.now as f64 / 1e6));
        }
    };
    let spin = std::time::Duration::from_micros(args.client_spin_us);
    let (outcome, report, network, progress) = match &external {
        // The network, and the node count it offers, are the server's own.
        Some(server) => {
            let progress = new_progress(programs.total());
            let outcome = crate::replay_job::over_external_server(
                server,
                programs,
                options.clone(),
                spin,
                show_progress(&progress),
            )?;
            (
                outcome,
                None,
                format!("the server's, at {}", server.address()),
                progress,
            )
        }
        None => {
            let network = args.net.resolve(&spec, &origin, &from_config)?;
            if args.config.is_none() {
                // Collectives modelled analytically cross the network's links between nodes.
                let link = match &network.fabric {
                    FabricConfig::Ideal(params) => Some((params.bandwidth, params.latency.as_ps())),
                    FabricConfig::Switched(s) => Some((Some(s.link.bandwidth), 0)),
                    FabricConfig::MultiRail { rails, .. } => rails.first().map(|r| (Some(r.link.bandwidth), 0)),
                };
                if let Some((bandwidth, latency)) = link {
                    options.collectives.inter = vesper_client_dimemas_adapter::replay::analytic::Link {
                        latency,
                        bandwidth: bandwidth.map(|b| b.ratio()),
                    };
                }
            }
            let nodes = network.placement.nodes(network.hosts);
            let needed = options.mapping.nodes_for(programs.threads().len() as u32);
            anyhow::ensure!(
                needed <= nodes,
                "{name} needs {needed} nodes; the network has {nodes}: {} (--hosts, --nodes-per-host, --mapping, \
                 --tasks-per-node)",
                network.placement.describe(network.hosts),
            );
            let progress = new_progress(programs.total());
            let (outcome, report) = if args.no_server {
                anyhow::ensure!(
                    args.partitions.given.is_none_or(|p| p == 1),
                    "--partitions with --no-server: the local bus model is not partitioned; leave --partitions out"
                );
                let FabricConfig::Ideal(params) = network.fabric else {
                    anyhow::bail!(
                        "--no-server replays over the local bus model: give --network ideal --bandwidth MBPS"
                    );
                };
                let mut bus = match params.bandwidth.map(|b| b.ratio()) {
                    Some((bytes, seconds)) => IdealBus::new(bytes, seconds, params.latency.as_ps()),
                    None => IdealBus::unlimited(params.latency.as_ps()),
                };
                (
                    vesper_client_dimemas_adapter::replay::replay_programs(
                        &mut programs,
                        &mut bus,
                        &options,
                        &mut |p| {
                            progress.set_position(p.done);
                        },
                    )?,
                    None,
                )
            } else {
                let split = match &ranks {
                    None => {
                        let partitions = args.partitions.count();
                        warn_if_more_threads_than_cores(partitions, partitions as usize);
                        crate::config::Split::Threads(partitions)
                    }
                    Some(ranks) => {
                        if ranks.rank() != 0 {
                            follow_on_ranks(&network, trace.as_ref(), ranks)?;
                            return Ok(None);
                        }
                        crate::config::Split::Led(vesper_netmodels::partition::Lead::new(ranks.clone()))
                    }
                };
                // However the replay ends, the ranks that follow are told.
                let _closing = crate::config::Closing(&split);
                // Each rank builds its own partition only.
                let partitions = match &split {
                    crate::config::Split::Threads(p) => *p,
                    _ => 1,
                };
                args.net.check_memory(&network, &origin, partitions)?;
                let config = crate::config::ServerConfig {
                    network: network.clone(),
                    trace,
                    replies: args.replies.unwrap_or_default(),
                    reply_limit,
                    split: split.clone(),
                    ..crate::config::ServerConfig::default()
                };
                let (outcome, report) =
                    crate::replay_job::over_server(config, programs, options.clone(), spin, show_progress(&progress))
                        .map_err(|e| args.net.name_build_error(e, &origin))?;
                (outcome, Some(report))
            };
            (outcome, report, network.describe(), progress)
        }
    };
    progress.finish_and_clear();
    let mut run = Run {
        workload: name,
        network,
        outcome,
        report,
        server_note: external.as_ref().map(external_report_note),
        output: args.output.clone(),
        own_server: !args.no_server && external.is_none(),
        json: args.json,
    };
    if let Some(dir) = &args.output {
        write_output(
            dir,
            &run.result(),
            &run.outcome,
            &options.mapping,
            &args.trace_date,
            notes,
        )?;
    }
    // Written: what is printed needs no more of it.
    run.outcome.record = None;
    Ok(Some(run))
}

/// A rank other than 0 of `vesper run` under mpirun: builds `network` split over the
/// ranks, simulates its own partition as rank 0's server's calls say, one network after
/// another (a run's, and any the server builds beside it), until rank 0 says there is
/// no more.
/// With a network `trace`, every network it builds is traced (rank 0 writes the trace,
/// with what every rank's partition recorded).
pub(crate) fn follow_on_ranks(
    network: &crate::config::NetworkConfig,
    trace: Option<&crate::config::TraceConfig>,
    ranks: &Arc<dyn vesper_netmodels::partition::Ranks>,
) -> anyhow::Result<()> {
    use vesper_netmodels::partition::Followed;
    let split = crate::config::Split::Ranks(ranks.clone());
    loop {
        let followed = match trace {
            None => network
                .build_as(&split)
                .map_err(|e| anyhow::anyhow!("{}: {e}", split.named()))?
                .follow(),
            Some(trace) => {
                let (rails, policy) = network.rails().map_err(|e| anyhow::anyhow!("{}: {e}", split.named()))?;
                let options = &trace.options;
                let output = vesper_netmodels::NoOutput;
                vesper_netmodels::TracedNetwork::build_on_ranks(rails, policy, options, output, ranks.clone())
                    .map_err(|e| anyhow::anyhow!("{}: {e}", split.named()))?
                    .follow()
            }
        };
        if followed == Followed::Exit {
            return Ok(());
        }
    }
}

/// What `vesper run` prints: the prediction and its split per task, with the server's
/// summary, as a table or (`--json`) as [`Run::result`].
#[derive(Debug)]
pub struct Run {
    /// the workload's (or trace's) name
    pub workload: String,
    /// the network replayed on, described
    pub network: String,
    /// the replay's outcome (its record, if one was made, dropped once written)
    pub outcome: vesper_client_dimemas_adapter::replay::Outcome,
    /// the report of the server of `run`'s own, if it had one
    pub report: Option<crate::report::Report>,
    /// where the report of an external server (`--server`) is
    pub server_note: Option<String>,
    /// the folder `--output` wrote the result into
    pub output: Option<PathBuf>,
    /// whether the replay ran against a server of `run`'s own (which writes the network
    /// trace with `--output`)
    pub own_server: bool,
    pub json: bool,
}

impl Run {
    /// Whether tasks have several threads: the rows are then per thread.
    fn threaded(&self) -> bool {
        self.outcome.threads.iter().any(|&n| n > 1)
    }

    /// One row per program: per task, or per thread of each task when tasks have
    /// several; each with its task, thread and label.
    fn rows(&self) -> Vec<(usize, u32, String)> {
        let threaded = self.threaded();
        let mut labels = Vec::with_capacity(self.outcome.tasks.len());
        for (task, &threads) in self.outcome.threads.iter().enumerate() {
            for thread in 0..threads {
                labels.push((
                    task,
                    thread,
                    if threaded {
                        format!("{task}.{thread}")
                    } else {
                        task.to_string()
                    },
                ));
            }
        }
        labels
    }

    /// The result as JSON: what `--json` prints and `--output` writes as result.json.
    pub fn result(&self) -> serde_json::Value {
        let threaded = self.threaded();
        let tasks: Vec<_> = self
            .outcome
            .tasks
            .iter()
            .zip(self.rows())
            .map(|(t, (task, thread, _))| {
                let mut row = serde_json::json!({
                    "compute_ns": t.compute as f64 / 1e3,
                    "communication_ns": t.communication as f64 / 1e3,
                    "waiting_ns": t.waiting as f64 / 1e3,
                    "end_ns": t.end as f64 / 1e3,
                });
                if threaded {
                    row["task"] = serde_json::json!(task);
                    row["thread"] = serde_json::json!(thread);
                }
                row
            })
            .collect();
        let mut result = serde_json::json!({
            "workload": self.workload,
            "network": self.network,
            "predicted_ns": self.outcome.predicted as f64 / 1e3,
            "messages": self.outcome.messages,
            "intra_node_messages": self.outcome.intra_node,
            "tasks": tasks,
            "server": self.report,
        });
        if let Some(note) = &self.server_note {
            result["server_note"] = serde_json::json!(note);
        }
        result
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.json {
            let json = serde_json::to_string_pretty(&self.result()).map_err(|_| std::fmt::Error)?;
            return writeln!(f, "{json}");
        }
        let outcome = &self.outcome;
        writeln!(f, "workload: {}", self.workload)?;
        writeln!(f, "network: {}", self.network)?;
        let within = match outcome.intra_node {
            0 => String::new(),
            n => format!(", {n} within nodes"),
        };
        writeln!(
            f,
            "predicted execution time: {:.3} µs ({} messages{within})",
            outcome.predicted as f64 / 1e6,
            outcome.messages
        )?;
        // Compute + communication + waiting = end (see TaskTimes).
        writeln!(
            f,
            "{:>6} {:>14} {:>16} {:>14} {:>14}",
            if self.threaded() { "thread" } else { "task" },
            "compute µs",
            "communication µs",
            "waiting µs",
            "end µs"
        )?;
        for (times, (_, _, label)) in outcome.tasks.iter().zip(self.rows()) {
            writeln!(
                f,
                "{label:>6} {:>14.3} {:>16.3} {:>14.3} {:>14.3}",
                times.compute as f64 / 1e6,
                times.communication as f64 / 1e6,
                times.waiting as f64 / 1e6,
                times.end as f64 / 1e6
            )?;
        }
        if let Some(report) = &self.report {
            writeln!(
                f,
                "server: {} sync round trips, {} model events, message latency {}",
                report.simulation.sync_round_trips,
                report.simulation.events_processed,
                report.simulation.latency_ns.map_or("-".to_string(), |l| format!(
                    "p50 {:.0} ns, p99 {:.0} ns, max {:.0} ns",
                    l.p50, l.p99, l.max
                ))
            )?;
        }
        if let Some(note) = &self.server_note {
            writeln!(f, "server: {note}")?;
        }
        if self.output.is_none() {
            let network = if self.own_server { " and network.prv" } else { "" };
            writeln!(
                f,
                "(--output DIR writes this as result.json, with the Paraver traces app.prv{network}; --json prints it \
                 as JSON)"
            )?;
        }
        Ok(())
    }
}

/// Where the report of the external server `vesper run --server` replayed against is:
/// with the server, which writes it itself.
pub fn external_report_note(server: &crate::replay_job::ExternalServer) -> String {
    format!(
        "the report is the server's own: vesper serve at {} prints it, or writes it to its --stats",
        server.address()
    )
}
