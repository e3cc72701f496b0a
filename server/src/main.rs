//! `vesper`: the network co-simulation server and its tools.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// `println!` that ends the program quietly when standard output is closed early
/// (`vesper run | head`) instead of panicking.
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            exit_on_write_error(e);
        }
    }};
}

/// `print!`, as [`println!`].
macro_rules! print {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout(), $($arg)*) {
            exit_on_write_error(e);
        }
    }};
}

/// Standard output failed: a closed pipe ends the program quietly, anything else with
/// a message.
fn exit_on_write_error(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("vesper: cannot write to standard output: {e}");
    std::process::exit(1);
}

use anyhow::Context;
use clap::{Parser, Subcommand};
use tracing::info;
use vesper_netmodels::{CioqParams, Granularity, SimTime, SwitchKind, WormholeParams};
use vesper_server::config::{FabricConfig, NetworkConfig, RendezvousMode, ServerConfig, number_text};
use vesper_server::network_file::{
    self, ArbitrationName, InterleaveName, KindName, NetworkSpec, PointerSpec, RailPolicyName, RoutePolicyName,
    RoutingName, SpecError, SwitchName,
};
use vesper_server::preset;

/// The network `vesper run` replays on when none is named.
const DEFAULT_PRESET: &str = "fat-tree";

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
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
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
    Collect(vesper_server::collect::CollectArgs),
}

#[derive(Debug, clap::Args)]
// The network's --pattern (pattern-aware routing) gives way to the traffic pattern.
#[command(mut_arg("pattern", |a| a.long("routing-pattern")))]
struct TrafficArgs {
    #[command(flatten)]
    net: NetworkArgs,
    /// Where packets go: uniform, uniform-self, hot-spot[:HOST[:FRACTION]],
    /// hot-region[:FIRST:COUNT[:FRACTION]], bit-complement, bit-reversal, transpose,
    /// butterfly, perfect-shuffle, tornado[:NX], nearest-neighbour, random-permutation
    /// (seed 002, Table 12; bit permutations need a power-of-two number of hosts).
    #[arg(long = "pattern", value_name = "PATTERN", default_value = "uniform")]
    traffic_pattern: String,
    /// Offered load per host: a fraction of its link's rate on the wire, the same as
    /// flits per host per flit time.
    #[arg(long, conflicts_with = "sweep", required_unless_present = "sweep")]
    load: Option<f64>,
    /// A latency–load curve: loads FROM:TO:STEP, stopping one point past saturation.
    #[arg(long, value_name = "FROM:TO:STEP")]
    sweep: Option<String>,
    /// When packets are created: every flit time with a fixed probability (bernoulli)
    /// or with exponential gaps (poisson).
    #[arg(long, value_enum, default_value_t = ProcessArg::Bernoulli)]
    process: ProcessArg,
    /// Packet size as flits on the wire, header included (payload = FLITS × flit bytes
    /// − header) [default: 16].
    #[arg(long, value_name = "FLITS", conflicts_with_all = ["size", "size_range", "size_bimodal"])]
    size_flits: Option<u32>,
    /// Packet payload [bytes].
    #[arg(long, value_name = "BYTES", conflicts_with_all = ["size_range", "size_bimodal"])]
    size: Option<u32>,
    /// Payloads drawn uniformly from MIN to MAX bytes.
    #[arg(long, value_name = "MIN:MAX", conflicts_with = "size_bimodal")]
    size_range: Option<String>,
    /// SMALL bytes, or LARGE bytes PERCENT % of the time.
    #[arg(long, value_name = "SMALL:LARGE:PERCENT")]
    size_bimodal: Option<String>,
    /// Messages a host's source queue holds; packets created at a full queue are dropped
    /// [default: unlimited].
    #[arg(long, value_name = "MESSAGES")]
    source_queue: Option<u32>,
    /// Warm-up before measuring [µs, or cycles with --cycles; default: 50 µs or 5,000
    /// cycles].
    #[arg(long, value_name = "TIME")]
    warmup: Option<f64>,
    /// Measurement window: statistics cover the packets created in it [µs, or cycles;
    /// default: 200 µs or 20,000 cycles].
    #[arg(long, value_name = "TIME")]
    measure: Option<f64>,
    /// Longest wait for the measured packets after the window [µs, or cycles; default:
    /// the window's length].
    #[arg(long, value_name = "TIME")]
    drain: Option<f64>,
    /// Cycle-compatible units: one time unit is one flit on one link; --warmup,
    /// --measure, --drain, --router-delay, --link-delay and every latency reported are
    /// in those units.
    #[arg(long)]
    cycles: bool,
    /// --cycles: the switches' routing (pipeline) delay [cycles].
    #[arg(long, value_name = "CYCLES", requires = "cycles")]
    router_delay: Option<u32>,
    /// --cycles: the cables' propagation delay [cycles].
    #[arg(long, value_name = "CYCLES", requires = "cycles")]
    link_delay: Option<u32>,
    /// Seed of the generators (each point's own seed comes from it and its load).
    #[arg(long, default_value_t = 1)]
    traffic_seed: u64,
    /// One curve per routing on the same network, e.g. d-mod-k,random.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "ROUTING,…")]
    compare_routing: Vec<RoutingName>,
    /// One curve per switch architecture, e.g. output-queued,wormhole.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "SWITCH,…")]
    compare_switch: Vec<SwitchName>,
    /// One curve per preset (with the other flags applied to each).
    #[arg(long, value_delimiter = ',', value_name = "NAME,…", conflicts_with_all = ["compare_routing", "compare_switch", "compare_network"])]
    compare_preset: Vec<String>,
    /// One curve per network file (with the other flags applied to each).
    #[arg(long, value_delimiter = ',', value_name = "FILE,…", conflicts_with_all = ["compare_routing", "compare_switch"])]
    compare_network: Vec<String>,
    /// Points simulated at once [default: the machine's cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Points of a --sweep kept after the first saturated one [default: 1].
    #[arg(long)]
    past_saturation: Option<usize>,
    /// Print the curves as JSON.
    #[arg(long)]
    json: bool,
    /// Write a latency–load and throughput–load plot here.
    #[arg(long, value_name = "FILE.svg")]
    svg: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ProcessArg {
    Bernoulli,
    Poisson,
}

#[derive(Debug, clap::Args)]
struct TopoArgs {
    /// A network file (the same as --network FILE).
    #[arg(value_name = "FILE", conflicts_with_all = ["network", "preset"])]
    file: Option<PathBuf>,
    #[command(flatten)]
    net: NetworkArgs,
    /// Write a Graphviz picture here (`dot -Tsvg FILE -o net.svg`; `neato` suits big
    /// networks better).
    #[arg(long, value_name = "FILE.dot")]
    dot: Option<PathBuf>,
    /// Write the network as a Myrinet map here (a multi-rail network as hosts with a
    /// port per rail), to edit or optimise offline and load back with --map.
    #[arg(long, value_name = "FILE.map")]
    write_map: Option<PathBuf>,
    /// Write its routes here, in vesper's canonical route format; rail N of a multi-rail
    /// network goes to FILE with `.rN` before its extension.
    #[arg(long, value_name = "FILE")]
    write_routes: Option<PathBuf>,
    /// List the presets and stop.
    #[arg(long)]
    presets: bool,
    /// Print the preset's network file (a starting point for your own) and stop.
    #[arg(long, requires = "preset")]
    print: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Address to listen on (the Dimemas client accepts numeric IPv4 only).
    #[arg(long, default_value = "127.0.0.1:10000")]
    listen: String,
    #[command(flatten)]
    net: NetworkArgs,
    /// Clients to wait for before simulated time starts (several applications may share
    /// the network).
    #[arg(long, default_value_t = 1)]
    clients: usize,
    /// Connections accepted at once; more are refused with a warning.
    #[arg(long, default_value_t = 256)]
    max_connections: usize,
    /// Longest line accepted from a client [bytes].
    #[arg(long, default_value_t = vesper_protocol::DEFAULT_MAX_LINE)]
    max_line: usize,
    /// Largest reply written at once [bytes]; the legacy client reads 500. 0 = no limit.
    #[arg(long, default_value_t = vesper_protocol::LEGACY_REPLY_LIMIT)]
    reply_limit: usize,
    /// Messages one client may have queued or in flight at once.
    #[arg(long, default_value_t = 1 << 20)]
    max_in_flight: usize,
    /// SEND/PROTO lines one batch may hold; the rest of a longer batch is dropped.
    #[arg(long, default_value_t = 1 << 16)]
    max_batch: usize,
    /// After each exchange, keep polling the sockets without sleeping for this long
    /// [µs]: the client usually answers within microseconds, and a sleeping thread
    /// takes tens of µs to wake. 0 never spins (uses no idle CPU).
    #[arg(long, default_value_t = 200)]
    spin_us: u64,
    /// How rendezvous lines are modelled: `dimemas` starts the data at the
    /// READY_TO_RECV time; `wire` sends the request and the acknowledgment through the
    /// network as control packets, and the data when the acknowledgment arrives.
    #[arg(long, value_enum, default_value_t = Rendezvous::Dimemas)]
    rendezvous: Rendezvous,
    /// Size of a rendezvous request or acknowledgment in `wire` mode [bytes].
    #[arg(long, default_value_t = 64)]
    control_size: u32,
    /// Serve run after run: when every client of a run has finished, the next run
    /// starts on a fresh network at time zero with the clients that connected
    /// meanwhile; each run's report is written as it ends (JSON Lines).
    #[arg(long)]
    keep_serving: bool,
    /// A client that starts a line or a batch and sends nothing more for this long, or
    /// leaves its replies unread this long, is dropped [s].
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = seconds)]
    client_timeout: std::time::Duration,
    /// A connection that sends no well-formed line for this long after connecting is
    /// closed [s]; raise it for a replayer that takes longer to start.
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = seconds)]
    silent_timeout: std::time::Duration,
    /// Write the JSON statistics report here (default: standard output); `{run}` in
    /// the name writes a file a run (stats-{run}.json).
    #[arg(long)]
    stats: Option<PathBuf>,
    #[command(flatten)]
    trace: vesper_server::network_trace::TraceArgs,
    /// The network trace's header date (fixed by default, so that outputs are
    /// reproducible).
    #[arg(long, value_name = "DD/MM/YYYY at HH:MM", default_value = vesper_server::network_trace::SERVE_DATE, value_parser = paraver_date)]
    trace_date: String,
}

/// The network, as `vesper serve`, `vesper run` and `vesper topo` take it: a base (a
/// built-in name, a preset or a file) and flags that override its fields.
#[derive(Debug, clap::Args)]
struct NetworkArgs {
    /// The network: `crossbar` (one output-queued switch, 2 Gb/s links), `ideal` (no
    /// contention: latency + size / bandwidth, to calibrate against the replayer), or a
    /// TOML network file (see README: topology, switches, routing, mapping). The flags
    /// below override its fields.
    #[arg(long, value_name = "crossbar|ideal|FILE")]
    network: Option<String>,
    /// A built-in network instead: fat-tree, fat-tree-512, two-rail-fat-tree,
    /// kary-ntree, torus-3d, hypercube, crossbar (`vesper topo --presets` lists them).
    #[arg(long, value_name = "NAME", conflicts_with = "network")]
    preset: Option<String>,
    /// A Myrinet map file instead (hosts with several ports make a multi-rail network);
    /// routes by shortest paths unless --routes or --routing up-down.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["network", "preset"])]
    map: Option<PathBuf>,
    /// The map's routes: a route file, canonical (absolute output ports) or Myrinet
    /// (turns); several lines for one pair are alternatives. A map of several rails
    /// takes one per rail, in rail order (--routes r0.routes --routes r1.routes).
    #[arg(long, value_name = "FILE", requires = "map")]
    routes: Vec<PathBuf>,
    /// How a message picks one of its pair's routes: first, round-robin, random
    /// (--seed), hash [default: first].
    #[arg(long, value_enum)]
    route_policy: Option<RoutePolicyName>,
    /// Hosts of a crossbar or of the ideal network [default: 256].
    #[arg(long)]
    hosts: Option<u32>,
    /// Client nodes (processors) per host: node n runs on host n / N, so nodes of one
    /// host share its adapter [default: 1].
    #[arg(long, value_name = "N")]
    nodes_per_host: Option<u32>,
    /// A task mapping file: one host name per line (host0, host1, …), client node n runs
    /// on the host of line n; several nodes may share a host.
    #[arg(long, value_name = "FILE", conflicts_with = "nodes_per_host")]
    mapping: Option<PathBuf>,
    /// Routing: on fat trees `d-mod-k`, `s-mod-k`, `random` (a static seeded choice per
    /// pair, --seed) or `pattern-aware` (routes chosen so that flows of one phase of a
    /// communication pattern share few links: --pattern, or `vesper run`'s workload);
    /// on tori, meshes and hypercubes `dimension-order`; `shortest-path` on crossbars
    /// and trees.
    #[arg(long, value_enum)]
    routing: Option<RoutingName>,
    /// pattern-aware routing: the communication pattern, one `SRC DST` flow of client
    /// nodes per line, a line `phase` between phases.
    #[arg(long, value_name = "FILE")]
    pattern: Option<PathBuf>,
    /// Link rate per direction [MB/s, 10^6 bytes/s; default: 250, i.e. 2 Gb/s].
    #[arg(long, value_name = "MB/s")]
    link_bandwidth: Option<f64>,
    /// Cable propagation delay [ns; default: 25, i.e. 5 m at 5 ns/m].
    #[arg(long, value_name = "NS")]
    link_latency: Option<f64>,
    /// Switch routing decision time [ns; default: 100].
    #[arg(long, value_name = "NS")]
    routing_latency: Option<f64>,
    /// Largest payload of a packet; adapters cut messages into packets [bytes; default:
    /// 4096].
    #[arg(long, value_name = "BYTES")]
    packet_payload: Option<u32>,
    /// Header added to every packet on the wire [bytes; default: 16].
    #[arg(long, value_name = "BYTES")]
    packet_header: Option<u32>,
    /// How an adapter serves concurrent messages: one packet of each in turn
    /// (`round-robin`, as Myrinet adapters) or one message after the other (`fifo`)
    /// [default: round-robin].
    #[arg(long, value_enum)]
    interleave: Option<InterleaveName>,
    /// The switch architecture: `output-queued` (ideal), `cioq` (input and output
    /// queues, a crossbar with a speedup) or `wormhole` (Myrinet-like, flits with
    /// stop/go flow control) [default: output-queued, or the preset's].
    #[arg(long, value_enum)]
    switch: Option<SwitchName>,
    /// cioq: the crossbar runs this many times faster than a link [default: 1].
    #[arg(long)]
    speedup: Option<u32>,
    /// cioq: one virtual output queue per output at every input, instead of one FIFO.
    #[arg(long)]
    voq: bool,
    /// wormhole: flow-control unit [bytes; default: 8].
    #[arg(long, value_name = "BYTES")]
    flit_bytes: Option<u32>,
    /// wormhole: input (slack) buffer per switch port [bytes; default: 512].
    #[arg(long, value_name = "BYTES")]
    buffer_bytes: Option<u32>,
    /// wormhole: output arbitration [default: round-robin].
    #[arg(long, value_enum)]
    arbitration: Option<ArbitrationName>,
    /// wormhole round-robin: where every output's pointer starts: `random` (seeded by
    /// --seed) or a port number [default: random].
    #[arg(long, value_name = "random|PORT")]
    initial_pointer: Option<String>,
    /// Seed of the wormhole switches' random initial pointers and of random routing
    /// [default: 1].
    #[arg(long)]
    seed: Option<u64>,
    /// multi-rail: how a host picks the rail of a message: in turn (`round-robin`),
    /// `by-destination` (rail dst mod N), `size-threshold` (below --rail-threshold on
    /// rail 0, the others over the other rails), or `striped` over every rail
    /// [default: round-robin].
    #[arg(long, value_enum)]
    rail_policy: Option<RailPolicyName>,
    /// multi-rail size-threshold: the smallest message that leaves rail 0 [bytes].
    #[arg(long, value_name = "BYTES")]
    rail_threshold: Option<u32>,
    /// ideal: bandwidth of every transfer [MBps as in Dimemas configurations, 2^20
    /// bytes/s]; use the configuration's inter-node bandwidth.
    #[arg(long, value_name = "MBPS")]
    bandwidth: Option<f64>,
    /// ideal: latency added to every transfer [ns; default: 0]; use the
    /// configuration's inter-node latency (and set it to 0 in the replayer).
    #[arg(long, value_name = "NS")]
    latency: Option<f64>,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// A Dimemas trace (.dim) to replay instead of a synthetic workload.
    #[arg(value_name = "TRACE.dim")]
    trace: Option<PathBuf>,
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
    collective: Vec<String>,
    /// The synthetic workload to replay.
    #[arg(long, value_enum, default_value_t = WorkloadArg::AllToAll)]
    workload: WorkloadArg,
    /// Tasks (one per node) of every workload but the ping-pong.
    #[arg(long, default_value_t = 32)]
    tasks: u32,
    /// Message size [bytes; at most 2147483647, the wire protocol's largest].
    #[arg(long, default_value_t = 32_679, value_parser = message_size)]
    size: u32,
    /// Rounds of the ping-pong and the ring.
    #[arg(long, default_value_t = 10)]
    iterations: u32,
    /// Computation before each ring round [ns].
    #[arg(long, default_value_t = 0)]
    compute_ns: u64,
    /// Messages of at least this many bytes use the rendezvous protocol (PROTO lines),
    /// smaller ones are eager, whatever a trace's synchronous bit says (like Dimemas's
    /// -S). Without it, sends whose synchronous bit is set are rendezvous, the others
    /// (and every send of a synthetic workload) eager.
    #[arg(long, value_name = "BYTES")]
    eager_limit: Option<u32>,
    /// Every message is eager, whatever its size or a trace's synchronous bit (like
    /// Dimemas's -F).
    #[arg(long, conflicts_with = "eager_limit")]
    all_eager: bool,
    /// A Dimemas configuration (.cfg), replayed with Dimemas's models: its task mapping,
    /// CPU speed ratio and intra-node latency and bandwidth replace --tasks-per-node,
    /// --cpu-ratio and --intra-*; collectives are analytic (unless --collective says
    /// otherwise); tasks pay its latencies before sends, receives and waits, and
    /// messages hold the node links and buses it gives. With --network ideal, the
    /// network takes its bandwidth and nodes (unless --bandwidth or --hosts is given):
    /// the prediction is then Dimemas's own.
    #[arg(long, value_name = "FILE.cfg", conflicts_with_all = ["tasks_per_node", "cpu_ratio", "intra_bandwidth", "intra_latency"])]
    config: Option<PathBuf>,
    /// Tasks per node, filling nodes in order: task t runs on node t / N. Messages
    /// between tasks of one node are copied locally and never reach the network.
    #[arg(long, value_name = "N", default_value_t = 1)]
    tasks_per_node: u32,
    /// Bandwidth of those intra-node copies [MBps, 2^20 bytes/s; default: unlimited].
    #[arg(long, value_name = "MBPS")]
    intra_bandwidth: Option<f64>,
    /// Latency of an intra-node copy [ns].
    #[arg(long, value_name = "NS", default_value_t = 0.0)]
    intra_latency: f64,
    /// Speed of the simulated CPUs relative to the traced ones: compute bursts take
    /// their time divided by this (Dimemas's CPU speed ratio).
    #[arg(long, value_name = "RATIO", default_value_t = 1.0)]
    cpu_ratio: f64,
    /// Messages of the random workload.
    #[arg(long, default_value_t = 1000)]
    messages: u32,
    /// Messages per wave of the random workload: each task waits for its part of a
    /// wave before the next.
    #[arg(long, default_value_t = 32)]
    wave: u32,
    /// Delay each task's start by a random time below this [ns] (a compute burst
    /// first): the start imbalance of seed 004 §5.2.
    #[arg(long, value_name = "NS", default_value_t = 0)]
    imbalance_ns: u64,
    /// Seed of the workload's random draws (the random pairs, the start delays).
    #[arg(long, default_value_t = 1)]
    workload_seed: u64,
    /// Which of the synthetic workloads' flags the command line gave.
    #[arg(skip)]
    workload_flags: Vec<&'static str>,
    /// Replay without a server, over the local bus model (needs --network ideal): the
    /// replayer's own prediction, to compare with the server's.
    #[arg(long)]
    no_server: bool,
    /// Replay against an external, already running `vesper serve` at HOST:PORT (a host
    /// name, resolved at every attempt, or a numeric address) instead of a server in
    /// this process. The network is the server's: start it with the network to replay
    /// on (network and network trace flags are refused here); it writes its own report.
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "no_server")]
    server: Option<String>,
    /// With --server: how long to keep trying to connect, for a server that starts
    /// after `vesper run` (containers of one compose file) [s].
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = seconds, requires = "server")]
    server_wait: std::time::Duration,
    /// Which network flags the command line gave (refused with --server).
    #[arg(skip)]
    network_flags: Vec<String>,
    /// Which network trace flags the command line gave (refused with --server).
    #[arg(skip)]
    trace_flags: Vec<String>,
    /// How long the replay client polls for each reply before it sleeps [µs]: polling
    /// avoids a thread wake-up per round trip, at the cost of a busy core while it
    /// waits (0: block at once, as Dimemas does).
    #[arg(long, value_name = "US", default_value_t = 200)]
    client_spin_us: u64,
    /// Write the result (result.json) and the application Paraver trace (app.prv,
    /// app.pcf, app.row: tasks as threads, MPI states, one record per message) here.
    #[arg(long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// The Paraver header's date (fixed by default, so that outputs are reproducible).
    #[arg(long, value_name = "DD/MM/YYYY at HH:MM", default_value = "01/01/2026 at 00:00", value_parser = paraver_date)]
    trace_date: String,
    /// Also save the workload replayed as a Dimemas trace (.dim).
    #[arg(long, value_name = "FILE")]
    save_trace: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    net: NetworkArgs,
    #[command(flatten)]
    network_trace: vesper_server::network_trace::TraceArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum WorkloadArg {
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

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Rendezvous {
    Dimemas,
    Wire,
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
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

fn main() -> anyhow::Result<()> {
    use clap::{CommandFactory as _, FromArgMatches as _};
    let matches = Cli::command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let (Command::Run(args), Some(run)) = (&mut cli.command, matches.subcommand_matches("run")) {
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
    let default_level = match cli.command {
        Command::Run(_) | Command::Traffic(_) => "warn",
        _ => "info",
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("VESPER_LOG").unwrap_or_else(|_| default_level.into()),
        )
        .init();
    match cli.command {
        Command::Serve(args) => serve(*args),
        Command::Run(args) => run(*args),
        Command::Topo(args) => topo(*args),
        Command::Traffic(args) => traffic(*args),
        Command::Collect(args) => Ok(vesper_server::collect::collect(&args)?),
        Command::Bench(BenchCommand::Model {
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
        }) => {
            let wormhole = WormholeBench {
                fine,
                buffer_bytes,
                flit_bytes,
            };
            // Checked before the crossbar is built (its cables alone could exhaust memory)
            // and before anything is printed.
            network_file::host_count(hosts).map_err(|rule| anyhow::anyhow!("--hosts {hosts}: {rule}"))?;
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
                    println!("saturation throughput: {saturation:.3} of the link rate");
                }
                Some(saturation)
            } else {
                None
            };
            bench_model(network, &loads, scale, wormhole, duration_us, seed, switch, json)
        }
        Command::Bench(BenchCommand::Sync {
            round_trips,
            warmup,
            json,
            server,
            spin_us,
        }) => bench_sync(
            round_trips,
            warmup,
            json,
            server,
            std::time::Duration::from_micros(spin_us),
        ),
    }
}

/// A message size the wire protocol carries.
fn message_size(text: &str) -> Result<u32, String> {
    let size: u32 = text.parse().map_err(|e| format!("expected a number of bytes: {e}"))?;
    if size > vesper_protocol::MAX_MESSAGE_BYTES {
        return Err(format!(
            "expected at most {} bytes, the largest message the wire protocol carries (a C int on the client)",
            vesper_protocol::MAX_MESSAGE_BYTES
        ));
    }
    Ok(size)
}

/// The flag that sets each field of a network description.
const FIELD_FLAGS: &[(&str, &str)] = &[
    ("hosts", "--hosts"),
    ("nodes_per_host", "--nodes-per-host"),
    ("mapping", "--mapping"),
    ("routing", "--routing"),
    ("routes", "--routes"),
    ("route_policy", "--route-policy"),
    ("map", "--map"),
    ("pattern", "--pattern"),
    ("link_bandwidth_mbs", "--link-bandwidth"),
    ("link_latency_ns", "--link-latency"),
    ("routing_latency_ns", "--routing-latency"),
    ("packet_payload_bytes", "--packet-payload"),
    ("packet_header_bytes", "--packet-header"),
    ("interleave", "--interleave"),
    ("switch", "--switch"),
    ("speedup", "--speedup"),
    ("virtual_output_queues", "--voq"),
    ("flit_bytes", "--flit-bytes"),
    ("buffer_bytes", "--buffer-bytes"),
    ("arbitration", "--arbitration"),
    ("initial_pointer", "--initial-pointer"),
    ("seed", "--seed"),
    ("rail_policy", "--rail-policy"),
    ("rail_threshold_bytes", "--rail-threshold"),
    ("bandwidth_mbps", "--bandwidth"),
    ("latency_ns", "--latency"),
];

impl NetworkArgs {
    /// The fields the flags give, and each one's flag as typed (for messages).
    fn overrides(&self) -> (NetworkSpec, Vec<(&'static str, String)>) {
        let mut flags = Vec::new();
        let mut note = |field: &'static str, value: Option<String>| {
            if let (Some(value), Some((_, flag))) = (value, FIELD_FLAGS.iter().find(|(f, _)| *f == field)) {
                flags.push((field, format!("{flag} {value}").trim_end().to_string()));
            }
        };
        let text = |v: &Option<f64>| v.map(number_text);
        note("hosts", self.hosts.map(|v| v.to_string()));
        note("nodes_per_host", self.nodes_per_host.map(|v| v.to_string()));
        note("mapping", self.mapping.as_ref().map(|p| p.display().to_string()));
        note("routing", self.routing.as_ref().map(value_name));
        let routes: Vec<String> = self.routes.iter().map(|p| p.display().to_string()).collect();
        note("routes", (!routes.is_empty()).then(|| routes.join(", ")));
        note("route_policy", self.route_policy.as_ref().map(value_name));
        note("pattern", self.pattern.as_ref().map(|p| p.display().to_string()));
        note("link_bandwidth_mbs", text(&self.link_bandwidth));
        note("link_latency_ns", text(&self.link_latency));
        note("routing_latency_ns", text(&self.routing_latency));
        note("packet_payload_bytes", self.packet_payload.map(|v| v.to_string()));
        note("packet_header_bytes", self.packet_header.map(|v| v.to_string()));
        note("interleave", self.interleave.as_ref().map(value_name));
        note("switch", self.switch.as_ref().map(value_name));
        note("speedup", self.speedup.map(|v| v.to_string()));
        note("virtual_output_queues", self.voq.then(String::new));
        note("flit_bytes", self.flit_bytes.map(|v| v.to_string()));
        note("buffer_bytes", self.buffer_bytes.map(|v| v.to_string()));
        note("arbitration", self.arbitration.as_ref().map(value_name));
        note("initial_pointer", self.initial_pointer.clone());
        note("seed", self.seed.map(|v| v.to_string()));
        note("rail_policy", self.rail_policy.as_ref().map(value_name));
        note("rail_threshold_bytes", self.rail_threshold.map(|v| v.to_string()));
        note("bandwidth_mbps", text(&self.bandwidth));
        note("latency_ns", text(&self.latency));
        let spec = NetworkSpec {
            hosts: self.hosts,
            nodes_per_host: self.nodes_per_host,
            mapping: self.mapping.clone(),
            routing: self.routing,
            routes: (!self.routes.is_empty()).then(|| self.routes.clone()),
            route_policy: self.route_policy,
            pattern: self.pattern.clone(),
            link_bandwidth_mbs: self.link_bandwidth,
            link_latency_ns: self.link_latency,
            routing_latency_ns: self.routing_latency,
            packet_payload_bytes: self.packet_payload,
            packet_header_bytes: self.packet_header,
            interleave: self.interleave,
            switch: self.switch,
            speedup: self.speedup,
            virtual_output_queues: self.voq.then_some(true),
            flit_bytes: self.flit_bytes,
            buffer_bytes: self.buffer_bytes,
            arbitration: self.arbitration,
            initial_pointer: self.initial_pointer.as_ref().map(|p| match p.parse() {
                Ok(port) => PointerSpec::Port(port),
                Err(_) => PointerSpec::Name(p.clone()),
            }),
            seed: self.seed,
            bandwidth_mbps: self.bandwidth,
            latency_ns: self.latency,
            rail_policy: self.rail_policy,
            rail_threshold_bytes: self.rail_threshold,
            ..NetworkSpec::default()
        };
        (spec, flags)
    }

    /// The description: the base (the preset, the file, `crossbar`, `ideal`, or
    /// `default_preset` when none is named) with the flags' fields over it; and where
    /// the base came from, for messages.
    fn spec(&self, default_preset: Option<&str>) -> anyhow::Result<(NetworkSpec, String)> {
        let (mut spec, origin) = match (self.preset.as_deref(), self.network.as_deref(), default_preset) {
            _ if self.map.is_some() => {
                let map = self.map.clone().unwrap_or_default();
                let origin = format!("--map {}", map.display());
                (
                    NetworkSpec {
                        map: Some(map),
                        ..NetworkSpec::of_kind(KindName::Map)
                    },
                    origin,
                )
            }
            (Some(name), _, _) | (None, None, Some(name)) => (
                preset::spec(name).map_err(anyhow::Error::msg)?,
                format!("preset {name}"),
            ),
            (None, None | Some("crossbar"), None) => {
                (NetworkSpec::of_kind(KindName::Crossbar), "--network crossbar".into())
            }
            (None, Some("crossbar"), Some(_)) => {
                (NetworkSpec::of_kind(KindName::Crossbar), "--network crossbar".into())
            }
            (None, Some("ideal"), _) => (NetworkSpec::of_kind(KindName::Ideal), "--network ideal".into()),
            (None, Some(file), _) => (network_file::read_spec(std::path::Path::new(file))?, file.to_string()),
        };
        spec.overlay(self.overrides().0);
        Ok((spec, origin))
    }

    /// A network the model refused to build (an error of the server's), said in the
    /// words of the flag that gave the field it names, or else of where the network came
    /// from; any other error as it is.
    fn name_build_error(&self, e: anyhow::Error, origin: &str) -> anyhow::Error {
        let Some(vesper_server::ServerError::Network(build)) = e.downcast_ref() else {
            return e;
        };
        let text = build.to_string();
        match flag_of_field_named(&text, &self.overrides().1) {
            Some(flag) => anyhow::anyhow!("{flag}: {text}"),
            None => anyhow::anyhow!("{origin}: {text}"),
        }
    }

    /// Whether the flags name no network (`spec` then takes its default).
    fn names_no_base(&self) -> bool {
        self.preset.is_none() && self.network.is_none() && self.map.is_none()
    }

    /// Resolves `spec`, naming the flag of a field the flags gave, or the source of a
    /// field `elsewhere` gave (a Dimemas configuration's field, say).
    fn resolve(
        &self,
        spec: &NetworkSpec,
        origin: &str,
        elsewhere: &[(&'static str, String)],
    ) -> anyhow::Result<NetworkConfig> {
        spec.resolve().map_err(|e| {
            let mut flags = self.overrides().1;
            flags.extend_from_slice(elsewhere);
            match &e {
                SpecError::Field { field, rule } => match flags
                    .iter()
                    .find(|(f, _)| f == field || field.ends_with(&format!(".{f}")))
                {
                    // A default base the user did not name: say which it is.
                    Some((_, flag)) if self.names_no_base() && origin.starts_with("preset ") => anyhow::anyhow!(
                        "{flag}: {rule} (the network is {origin}, the default here; name another with --network \
                         or --preset)"
                    ),
                    Some((_, flag)) => anyhow::anyhow!("{flag}: {}", said_once(flag, rule)),
                    // A built-in base has no file to name: name the flag to give.
                    None if self.preset.is_none() && matches!(self.network.as_deref(), Some("ideal" | "crossbar")) => {
                        let flag = FIELD_FLAGS
                            .iter()
                            .find(|(f, _)| f == field)
                            .map_or(field.as_str(), |(_, flag)| flag);
                        anyhow::anyhow!("{origin}: {flag}: {rule}")
                    }
                    // `--map FILE` names the file already.
                    None if field.ends_with("map") && origin.starts_with("--map ") => {
                        anyhow::anyhow!("{origin}: {}", said_once(origin, rule))
                    }
                    None => anyhow::anyhow!("{origin}: {e}"),
                },
                SpecError::Mapping(_) => anyhow::anyhow!("{e}"),
            }
        })
    }
}

/// Of `flags` ((field, flag as given) pairs), the flag whose field the model's error
/// `text` names (`buffer_bytes: ...`).
/// `rule` without the value that `flag` (`--routes FILE`) already says at its start.
fn said_once<'a>(flag: &str, rule: &'a str) -> &'a str {
    flag.split_once(' ')
        .and_then(|(_, value)| rule.strip_prefix(value)?.strip_prefix(": "))
        .unwrap_or(rule)
}

fn flag_of_field_named<'a>(text: &str, flags: &'a [(&str, String)]) -> Option<&'a str> {
    flags
        .iter()
        .find(|(field, _)| text.contains(&format!("{field}: ")))
        .map(|(_, flag)| flag.as_str())
}

/// How a value is written on the command line.
fn value_name<T: clap::ValueEnum>(value: &T) -> String {
    value
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}

/// The network the flags describe (`default_preset` when they name no base).
fn network(args: &NetworkArgs, default_preset: Option<&str>) -> anyhow::Result<NetworkConfig> {
    let (spec, origin) = args.spec(default_preset)?;
    args.resolve(&spec, &origin, &[])
}

fn topo(mut args: TopoArgs) -> anyhow::Result<()> {
    if args.presets {
        for p in preset::PRESETS {
            println!("{:<14} {}", p.name, p.summary);
        }
        return Ok(());
    }
    if args.print {
        let name = args.net.preset.as_deref().unwrap_or_default();
        print!("{}", preset::find(name).map_err(anyhow::Error::msg)?.file);
        return Ok(());
    }
    if let Some(file) = args.file.take() {
        args.net.network = Some(file.display().to_string());
    }
    let network = network(&args.net, None)?;
    let summaries = vesper_server::topo::summarize(&network);
    anyhow::ensure!(
        !summaries.is_empty(),
        "the ideal network has no topology: it joins every pair of hosts without contention"
    );
    if args.json {
        let json = match summaries.as_slice() {
            [one] => serde_json::to_string_pretty(one)?,
            rails => serde_json::to_string_pretty(rails)?,
        };
        println!("{json}");
    } else if let [one] = summaries.as_slice() {
        println!("{one}");
    } else {
        for (i, rail) in summaries.iter().enumerate() {
            println!("rail {i}:\n  {}", rail.to_string().replace('\n', "\n  "));
        }
    }
    // What `serve`, `run` and `traffic` would refuse (buffers too small for the cables,
    // routes that miss a pair), refused here too: the description alone does not build
    // the switches and routes.
    network
        .build()
        .map_err(|e| anyhow::anyhow!("this network cannot be simulated: {e}"))?;
    if args.write_map.is_some() || args.write_routes.is_some() {
        write_map_files(&network, args.write_map.as_deref(), args.write_routes.as_deref())?;
    }
    if let Some(path) = &args.dot {
        let devices: u32 = summaries.iter().map(|s| s.switches).sum::<u32>() + network.hosts;
        if devices > 5000 {
            eprintln!("note: {devices} devices; Graphviz takes long to lay out pictures of this size");
        }
        let picture = match &network.fabric {
            FabricConfig::Switched(s) => vesper_server::topo::dot(s, network.hosts),
            FabricConfig::MultiRail { rails, .. } => vesper_server::topo::dot_rails(rails, network.hosts),
            FabricConfig::Ideal(_) => String::new(),
        };
        std::fs::write(path, picture).with_context(|| format!("--dot {}: cannot write", path.display()))?;
        eprintln!("picture written to {}", path.display());
    }
    Ok(())
}

/// `x.routes` as rail `r`'s file: `x.r<r>.routes`.
fn rail_file(path: &std::path::Path, r: usize) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or_else(|| "routes".into(), |s| s.to_string_lossy().into_owned());
    match path.extension() {
        Some(ext) => path.with_file_name(format!("{stem}.r{r}.{}", ext.to_string_lossy())),
        None => path.with_file_name(format!("{stem}.r{r}")),
    }
}

/// Writes `network` as a map and its routes (`vesper topo --write-map/--write-routes`).
fn write_map_files(
    network: &NetworkConfig,
    map: Option<&std::path::Path>,
    routes: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    // The topology as configured (routing, links), named as the map named it.
    let named = |s: &vesper_server::config::SwitchedConfig| {
        let topology = s.topology(network.hosts);
        match &s.shape {
            vesper_server::config::Shape::Map { net, .. } => vesper_map2topo::NamedTopology {
                topology,
                host_names: net.host_names.clone(),
                switch_names: net.switch_names.clone(),
                switch_types: net.switch_types.clone(),
                host_types: net.host_types.clone(),
            },
            _ => vesper_map2topo::NamedTopology::with_default_names(topology),
        }
    };
    let rails: Vec<_> = match &network.fabric {
        FabricConfig::Switched(s) => vec![named(s)],
        // Switch names must differ across rails: rail r's are r<r>.sw<n>, as in traces.
        FabricConfig::MultiRail { rails, .. } => rails
            .iter()
            .enumerate()
            .map(|(r, s)| {
                let mut net = named(s);
                if !matches!(s.shape, vesper_server::config::Shape::Map { .. }) {
                    for name in &mut net.switch_names {
                        *name = format!("r{r}.{name}");
                    }
                }
                net
            })
            .collect(),
        FabricConfig::Ideal(_) => anyhow::bail!("the ideal network has no topology to write"),
    };
    if let Some(path) = map {
        let text = vesper_map2topo::MapFile::from_rails(&rails, vesper_map2topo::WriteOptions::default())?.to_string();
        std::fs::write(path, text).with_context(|| format!("--write-map {}: cannot write", path.display()))?;
        eprintln!("map written to {}", path.display());
    }
    if let Some(path) = routes {
        // One file per rail: FILE itself for a single network, FILE with `.r<N>` before
        // its extension for rail N of several (read back with --routes once per rail).
        for (r, net) in rails.iter().enumerate() {
            let path = match rails.len() {
                1 => path.to_path_buf(),
                _ => rail_file(path, r),
            };
            let list = vesper_map2topo::generate::routes_of(&net.topology).map_err(anyhow::Error::msg)?;
            std::fs::write(&path, vesper_map2topo::routes::write_canonical(&list, net))
                .with_context(|| format!("--write-routes {}: cannot write", path.display()))?;
            eprintln!("{} routes written to {}", list.len(), path.display());
        }
    }
    Ok(())
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.clients > 0, "--clients 0: a run needs at least one client");
    for (flag, value) in [
        ("--max-connections", args.max_connections),
        ("--max-in-flight", args.max_in_flight),
        ("--max-batch", args.max_batch),
    ] {
        anyhow::ensure!(value > 0, "{flag} 0: at least 1");
    }
    anyhow::ensure!(
        args.max_line >= MIN_MAX_LINE,
        "--max-line {}: at least {MIN_MAX_LINE} bytes, or no SEND line fits",
        args.max_line
    );
    let trace = args.trace.config(&args.trace_date)?;
    if args.keep_serving
        && let Some(file) = trace.as_ref().and_then(|t| t.file.as_deref())
        && !file.to_string_lossy().contains(vesper_server::config::RUN_PLACEHOLDER)
    {
        anyhow::bail!(
            "--trace {} with --keep-serving: every run writes its own trace; put {{run}} in the name (net-{{run}}.prv)",
            file.display()
        );
    }
    // Before the network is built or anyone connects: a report that cannot be written
    // is found now, not after the run.
    let writer = vesper_server::report::ReportWriter::open(args.stats.as_deref(), args.keep_serving)
        .map_err(anyhow::Error::msg)?;
    let (spec, origin) = args.net.spec(None)?;
    let config = ServerConfig {
        network: args.net.resolve(&spec, &origin, &[])?,
        clients: args.clients,
        max_connections: args.max_connections,
        max_line: args.max_line,
        reply_limit: (args.reply_limit > 0).then_some(args.reply_limit),
        max_in_flight: args.max_in_flight,
        max_batch: args.max_batch,
        exit_when_done: !args.keep_serving,
        client_timeout: args.client_timeout,
        silent_timeout: args.silent_timeout,
        spin: std::time::Duration::from_micros(args.spin_us),
        rendezvous: match args.rendezvous {
            Rendezvous::Dimemas => RendezvousMode::Dimemas,
            Rendezvous::Wire => RendezvousMode::Wire {
                control_bytes: args.control_size,
            },
        },
        trace,
        ..ServerConfig::default()
    };
    if let Some(limit) = config.reply_limit {
        anyhow::ensure!(
            limit >= 256,
            "--reply-limit {limit}: a reply must hold at least one line (256 bytes or more, or 0)"
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let writer = Arc::new(Mutex::new(writer));
    let write_failed = Arc::new(AtomicBool::new(false));
    let reports: vesper_server::driver::RunReports = {
        let writer = Arc::clone(&writer);
        let failed = Arc::clone(&write_failed);
        Box::new(
            move |report| match writer.lock().unwrap_or_else(PoisonError::into_inner).write(&report) {
                Ok(to) => info!("run {}: report written to {to}", report.run),
                Err(e) => {
                    tracing::error!("run {}: {e}", report.run);
                    failed.store(true, Ordering::Relaxed);
                }
            },
        )
    };
    let (signal, served) = runtime.block_on(async {
        // Before anyone can connect: a signal that came earlier would kill the process
        // without its report.
        let (signal, shutdown) = shutdown_signal()?;
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .with_context(|| format!("--listen {}: cannot listen there", args.listen))?;
        anyhow::Ok((signal, vesper_server::serve(listener, config, shutdown, reports).await))
    })?;
    let served = match served {
        Ok(served) => served,
        // A run the model stopped still reports what it did until then, then fails.
        Err(vesper_server::ServerError::Stopped { stopped, report }) => {
            let written = writer.lock().unwrap_or_else(PoisonError::into_inner).write(&report);
            written.map_err(anyhow::Error::msg)?;
            return Err(stopped.into());
        }
        Err(e) => return Err(args.net.name_build_error(e.into(), &origin)),
    };
    anyhow::ensure!(
        !write_failed.load(Ordering::Relaxed),
        "a run's report could not be written (see the log)"
    );
    if served.interrupted {
        // Scripts and containers tell an interrupted run from a finished one: 128 + the
        // signal, as a shell reports a process the signal killed.
        let signal = signal.load(Ordering::Relaxed);
        tracing::warn!("stopped by signal {signal} before every client had finished");
        std::process::exit(128 + signal);
    }
    Ok(())
}

/// `value` of `flag`, in a unit of `ps_per_unit` picoseconds, as picoseconds; refused
/// when the model's clock (64-bit picoseconds, about 213 days) cannot hold it.
fn ps_of(flag: &str, value: u64, ps_per_unit: u64) -> anyhow::Result<u64> {
    use vesper_client_dimemas_adapter::replay::CLOCK_LIMIT;
    value
        .checked_mul(ps_per_unit)
        .ok_or_else(|| anyhow::anyhow!("{flag} {value}: more than {CLOCK_LIMIT}"))
}

/// The shortest `--max-line` that holds a `SEND` line of the legacy client [bytes].
const MIN_MAX_LINE: usize = 64;

/// A duration of `text` seconds (decimals allowed), positive.
fn seconds(text: &str) -> Result<std::time::Duration, String> {
    let value: f64 = text.parse().map_err(|_| format!("expected seconds, got {text:?}"))?;
    if value.is_nan() || value <= 0.0 {
        return Err(format!("{text}: expected a positive number of seconds"));
    }
    std::time::Duration::try_from_secs_f64(value).map_err(|_| format!("{text}: too many seconds"))
}

/// A future that resolves on Ctrl-C or SIGTERM, and the number of the signal that came
/// (0 until then); the handlers are installed at once (a future that installed them
/// when first polled would leave the process to die of a signal that came before).
#[cfg(unix)]
fn shutdown_signal() -> anyhow::Result<(Arc<AtomicI32>, impl Future<Output = ()>)> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot watch for Ctrl-C")?;
    let mut terminate = signal(SignalKind::terminate()).context("cannot watch for SIGTERM")?;
    let which = Arc::new(AtomicI32::new(0));
    let came = Arc::clone(&which);
    Ok((which, async move {
        let number = tokio::select! {
            _ = interrupt.recv() => 2,
            _ = terminate.recv() => 15,
        };
        came.store(number, Ordering::Relaxed);
    }))
}

/// A future that resolves on Ctrl-C.
#[cfg(not(unix))]
fn shutdown_signal() -> anyhow::Result<(Arc<AtomicI32>, impl Future<Output = ()>)> {
    let which = Arc::new(AtomicI32::new(0));
    let came = Arc::clone(&which);
    Ok((which, async move {
        let _ = tokio::signal::ctrl_c().await;
        came.store(2, Ordering::Relaxed);
    }))
}

fn bench_sync(
    round_trips: u64,
    warmup: u64,
    json: bool,
    server: Option<std::net::SocketAddr>,
    spin: std::time::Duration,
) -> anyhow::Result<()> {
    let result = vesper_server::bench::sync(round_trips, warmup, server, spin)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(());
    }
    println!("sync round trips: {}", result.round_trips);
    println!("round trips per second: {:.0}", result.round_trips_per_second);
    if let Some(c) = result.client_round_trip_us {
        println!(
            "client round trip [µs]: p50 {:.1}  p99 {:.1}  mean {:.1}  max {:.1}",
            c.p50, c.p99, c.mean, c.max
        );
    }
    if let Some(s) = result.server.and_then(|r| r.wall.reply_latency_us) {
        println!(
            "server reply latency [µs]: p50 {:.1}  p99 {:.1}  mean {:.1}  max {:.1}",
            s.p50, s.p99, s.mean, s.max
        );
    }
    Ok(())
}

/// The accepted load of the overloaded run of `vesper ARGS` (a `bench model --json`).
fn saturation_in_child(args: &[String]) -> anyhow::Result<f64> {
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
struct WormholeBench {
    fine: bool,
    buffer_bytes: Option<u32>,
    flit_bytes: Option<u32>,
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
    fn name_build_error(&self, e: impl std::fmt::Display) -> anyhow::Error {
        let text = e.to_string();
        let given: Vec<_> = [
            ("buffer_bytes", "--buffer-bytes", self.buffer_bytes),
            ("flit_bytes", "--flit-bytes", self.flit_bytes),
        ]
        .into_iter()
        .filter_map(|(field, flag, value)| value.map(|v| (field, format!("{flag} {v}"))))
        .collect();
        let named = match flag_of_field_named(&text, &given) {
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

/// Runs the model benchmark at `loads`, as fractions of `saturation` when given.
#[allow(clippy::too_many_arguments, reason = "the command's options, passed through")]
fn bench_model(
    mut network: NetworkConfig,
    loads: &[f64],
    saturation: Option<f64>,
    wormhole: WormholeBench,
    duration_us: u64,
    seed: u64,
    switch: Option<SwitchName>,
    json: bool,
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
        vesper_server::bench::check_load(load * scale)?;
    }
    // A network the model refuses (buffers too small for their flits, say) is reported
    // before the table's header, not under it.
    network.build().map_err(|e| wormhole.name_build_error(e))?;
    let mut points = Vec::new();
    if !json {
        println!("network: {}", network.describe());
        println!(
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
        );
    }
    for &load in loads {
        let p = vesper_server::bench::model(&network, load * scale, duration, seed)?;
        if !json {
            let flit_hops = p
                .flit_hops
                .map_or("-".to_string(), |f| format!("{:.0}", f as f64 / p.wall_seconds));
            println!(
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
            );
        }
        points.push(p);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&points)?);
    }
    Ok(())
}

/// Writes the result JSON and the application Paraver trace into `dir`.
fn write_output(
    dir: &std::path::Path,
    result: &serde_json::Value,
    outcome: &vesper_client_dimemas_adapter::replay::Outcome,
    mapping: &vesper_client_dimemas_adapter::replay::Mapping,
    date: &str,
) -> anyhow::Result<()> {
    use std::io::Write as _;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let create = |name: &str| -> anyhow::Result<std::io::BufWriter<std::fs::File>> {
        let path = dir.join(name);
        let file = std::fs::File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
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
    eprintln!("wrote result.json, app.prv/.pcf/.row{network} in {}", dir.display());
    Ok(())
}

/// Makes `dir` if needed and checks that a file can be made in it.
fn check_writable_dir(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".vesper-write-check-{}", std::process::id()));
    std::fs::File::create(&probe)?;
    std::fs::remove_file(&probe)
}

/// Replay options from the command line.
fn options_from_flags(args: &RunArgs) -> anyhow::Result<vesper_client_dimemas_adapter::replay::ReplayOptions> {
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
/// mapping, CPU speed ratio, intra-node model (a bandwidth of 0 is unlimited, as in
/// Dimemas), and the links, buses and fine tuning of analytic collectives.
fn options_from_config(
    path: &std::path::Path,
    config: &vesper_client_dimemas_adapter::cfg::DimConfig,
    args: &RunArgs,
) -> anyhow::Result<vesper_client_dimemas_adapter::replay::ReplayOptions> {
    use vesper_client_dimemas_adapter::replay::analytic::{AnalyticCollectives, FanModel, Link};
    use vesper_client_dimemas_adapter::replay::{
        CLOCK_LIMIT, CpuRatio, DimemasModel, Limits, MemoryCopy, ReplayOptions, mbps_ratio, ps_of_seconds,
    };
    // Checked when the configuration was read: refused here too, never clamped.
    let ps = |seconds: f64, field: &str| {
        ps_of_seconds(seconds)
            .with_context(|| format!("{}: {field} {seconds} s: more than {CLOCK_LIMIT}", path.display()))
    };
    // 0: unlimited, as in Dimemas.
    let ratio = |mbps: Option<f64>, field: &str| match mbps.filter(|&b| b != 0.0) {
        Some(mbps) => mbps_ratio(mbps)
            .map(Some)
            .with_context(|| format!("{}: {field} {mbps} MBps: vesper cannot hold it exactly", path.display())),
        None => Ok(None),
    };
    let cpu_ratio = match config.cpu_ratio {
        Some(ratio) => Some(
            CpuRatio::new(ratio)
                .with_context(|| format!("{}: the CPU speed ratio must be positive, not {ratio}", path.display()))?,
        ),
        None => None,
    };
    // Not given: free, as in Dimemas.
    let memory_copy = MemoryCopy {
        latency: ps(config.intra_latency_s.unwrap_or(0.0), "intra_latency_s")?,
        bandwidth: ratio(config.intra_bandwidth_mbps, "intra_bw_MBps")?,
    };
    // Collectives modelled analytically take the configuration's links, buses and
    // model (LOG when it names none), then its fine-tuning file.
    let model = config
        .collective_model
        .and_then(AnalyticCollectives::model_of_configuration)
        .unwrap_or(FanModel::Logarithmic);
    let mut collectives = AnalyticCollectives {
        inter: Link {
            latency: ps(config.inter_latency_s.unwrap_or(0.0), "inter_latency_s")?,
            bandwidth: ratio(config.bandwidth_mbps, "bw_MBps")?,
        },
        intra: Link {
            latency: memory_copy.latency,
            bandwidth: memory_copy.bandwidth,
        },
        buses: config.buses.unwrap_or(0),
        machine_nodes: config.nodes.unwrap_or(u32::MAX),
        ..AnalyticCollectives::uniform(model)
    };
    config.read_tuning(path, &mut collectives)?;
    // Dimemas's point-to-point model: tasks pay the latencies before sends, receives
    // and waits (so a copy within a node takes its bandwidth only), and messages hold
    // the links and buses the configuration gives (none given: unlimited).
    let limits = |what, links: Option<_>, buses: Option<u32>| {
        Limits::new(what, links.unwrap_or_default(), buses.unwrap_or(0))
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    };
    // A task pays a startup before each send: bounded as the ideal network's latency
    // is, so that a message sent after one still has room on the clock.
    let startup = |ps: u64, field: &str, seconds: Option<f64>| {
        const LONGEST_PS: u64 = 1 << 62;
        anyhow::ensure!(
            ps <= LONGEST_PS,
            "{}: \"multi node information\" {field} {}: {} ns is more than the {:.3e} s vesper allows a startup \
             latency (a task pays it before each send, and the message must still arrive within the clock)",
            path.display(),
            number_text(seconds.unwrap_or(0.0)),
            number_text(ps as f64 / 1e3),
            LONGEST_PS as f64 / 1e12
        );
        Ok(ps)
    };
    let dimemas = DimemasModel {
        inter_startup: startup(collectives.inter.latency, "inter_latency_s", config.inter_latency_s)?,
        intra_startup: startup(memory_copy.latency, "intra_latency_s", config.intra_latency_s)?,
        network: limits(
            "\"multi node information\" inter_in_links and inter_out_links",
            config.inter_links,
            config.buses,
        )?,
        memory: limits(
            "\"multi node information\" intra_in_links and intra_out_links",
            config.intra_links,
            config.intra_buses,
        )?,
    };
    Ok(ReplayOptions {
        eager_limit: args.eager_limit,
        all_eager: args.all_eager,
        cpu_ratio,
        mapping: config.mapping.clone().unwrap_or_default(),
        memory_copy: MemoryCopy {
            latency: 0,
            ..memory_copy
        },
        record: false,
        collectives,
        dimemas: Some(dimemas),
    })
}

/// A Paraver header date, `DD/MM/YYYY at HH:MM`, as given.
fn paraver_date(text: &str) -> Result<String, String> {
    let digits = |part: &str, n: usize| part.len() == n && part.bytes().all(|b| b.is_ascii_digit());
    let shaped = text.split_once(" at ").is_some_and(|(day, time)| {
        let day: Vec<&str> = day.split('/').collect();
        let time: Vec<&str> = time.split(':').collect();
        matches!(day[..], [d, m, y] if digits(d, 2) && digits(m, 2) && digits(y, 4))
            && matches!(time[..], [h, min] if digits(h, 2) && digits(min, 2))
    });
    if shaped {
        Ok(text.to_string())
    } else {
        Err(format!(
            "expected DD/MM/YYYY at HH:MM, e.g. \"22/11/2026 at 09:30\", found \"{text}\""
        ))
    }
}

/// The synthetic workload `--workload` names, with its options.
/// Synthetic workloads are built in memory, every message of every task: at most this
/// many messages (about 2 GB of operations).
const MAX_SYNTHETIC_MESSAGES: u64 = 1 << 25;

/// The synthetic workloads' flags (clap's argument ids and the flags), which a run of a
/// trace does not take.
const WORKLOAD_FLAGS: [(&str, &str); 7] = [
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
fn check_workload_flags(args: &RunArgs) -> anyhow::Result<()> {
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

fn synthetic_workload(args: &RunArgs) -> anyhow::Result<vesper_client_dimemas_adapter::replay::Workload> {
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

fn run(args: RunArgs) -> anyhow::Result<()> {
    use vesper_client_dimemas_adapter::dim;
    use vesper_client_dimemas_adapter::replay::collective::Methods;
    use vesper_client_dimemas_adapter::replay::{Cursor, IdealBus, Programs, StartDelays, Workload};

    check_workload_flags(&args)?;
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
    let external = match &args.server {
        Some(address) => {
            // The (last) choice that makes a family analytic, to name it.
            let analytic = args.collective.iter().rev().find(|choice| {
                let mut alone = Methods::default();
                alone.choose(choice).is_ok() && alone.any_analytic()
            });
            let refused = vesper_server::replay::InProcessOnly {
                network_flags: &args.network_flags,
                trace_flags: &args.trace_flags,
                analytic_without_config: analytic
                    .filter(|_| methods.any_analytic() && args.config.is_none())
                    .map(String::as_str),
            };
            Some(vesper_server::replay::ExternalServer::new(
                address,
                args.server_wait,
                refused,
            )?)
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
                eprintln!("warning: {warning}");
            }
            if opened.collectives > 0 {
                eprintln!("{} collective calls {}", opened.collectives, methods.describe());
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
                        eprintln!("warning: {warning}");
                    }
                    anyhow::ensure!(
                        trace.threads.iter().all(|&n| n == 1),
                        "{}: --save-trace writes tasks of one thread; this trace's tasks have several",
                        path.display()
                    );
                    if trace.collectives > 0 {
                        eprintln!("{} collective calls {}", trace.collectives, methods.describe());
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
                    std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
                );
                dim::write(&workload, &mut file).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                std::io::Write::flush(&mut file).with_context(|| format!("cannot write {}", path.display()))?;
                eprintln!("trace saved to {}", path.display());
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
            config.check_tasks(programs.threads().len() as u32, &what)?;
            // Calibration: the ideal network takes the configuration's inter-node
            // bandwidth and nodes unless given. Its latency stays 0 unless given: the
            // replay pays the configuration's latency as Dimemas does, before each
            // send (a network latency would count it twice).
            if spec.kind == Some(KindName::Ideal) {
                let name = |record: &str, field: &str, value: f64| {
                    format!("{}: \"{record}\" {field} {}", path.display(), number_text(value))
                };
                if spec.bandwidth_mbps.is_none()
                    && let Some(mbps) = config.bandwidth_mbps.filter(|&b| b > 0.0)
                {
                    spec.bandwidth_mbps = Some(mbps);
                    from_config.push(("bandwidth_mbps", name("environment information", "bw_MBps", mbps)));
                }
                if spec.hosts.is_none()
                    && let Some(nodes) = config.nodes
                {
                    spec.hosts = Some(nodes);
                    from_config.push(("hosts", name("environment information", "n_nodes", f64::from(nodes))));
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
            let outcome = vesper_server::replay::over_external_server(
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
                    FabricConfig::Switched(s) => Some((s.link.bandwidth, 0)),
                    FabricConfig::MultiRail { rails, .. } => rails.first().map(|r| (r.link.bandwidth, 0)),
                };
                if let Some((bandwidth, latency)) = link {
                    options.collectives.inter = vesper_client_dimemas_adapter::replay::analytic::Link {
                        latency,
                        bandwidth: Some(bandwidth.ratio()),
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
                let FabricConfig::Ideal(params) = network.fabric else {
                    anyhow::bail!(
                        "--no-server replays over the local bus model: give --network ideal --bandwidth MBPS"
                    );
                };
                let (bytes, seconds) = params.bandwidth.ratio();
                let mut bus = IdealBus::new(bytes, seconds, params.latency.as_ps());
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
                let (outcome, report) = vesper_server::replay::over_server(
                    network.clone(),
                    trace,
                    programs,
                    options.clone(),
                    spin,
                    show_progress(&progress),
                )
                .map_err(|e| args.net.name_build_error(e, &origin))?;
                (outcome, Some(report))
            };
            (outcome, report, network.describe(), progress)
        }
    };
    progress.finish_and_clear();
    // One row per program: per task, or per thread of each task when tasks have several.
    let threaded = outcome.threads.iter().any(|&n| n > 1);
    let mut labels = Vec::with_capacity(outcome.tasks.len());
    for (task, &threads) in outcome.threads.iter().enumerate() {
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
    let tasks: Vec<_> = outcome
        .tasks
        .iter()
        .zip(&labels)
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
        "workload": name,
        "network": network,
        "predicted_ns": outcome.predicted as f64 / 1e3,
        "messages": outcome.messages,
        "intra_node_messages": outcome.intra_node,
        "tasks": tasks,
        "server": report,
    });
    if let Some(server) = &external {
        result["server_note"] = serde_json::json!(external_report_note(server));
    }
    if let Some(dir) = &args.output {
        write_output(dir, &result, &outcome, &options.mapping, &args.trace_date)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(());
    }
    println!("workload: {name}");
    println!("network: {network}");
    let within = match outcome.intra_node {
        0 => String::new(),
        n => format!(", {n} within nodes"),
    };
    println!(
        "predicted execution time: {:.3} µs ({} messages{within})",
        outcome.predicted as f64 / 1e6,
        outcome.messages
    );
    // Compute + communication + waiting = end (see TaskTimes).
    println!(
        "{:>6} {:>14} {:>16} {:>14} {:>14}",
        if threaded { "thread" } else { "task" },
        "compute µs",
        "communication µs",
        "waiting µs",
        "end µs"
    );
    for (times, (_, _, label)) in outcome.tasks.iter().zip(&labels) {
        println!(
            "{label:>6} {:>14.3} {:>16.3} {:>14.3} {:>14.3}",
            times.compute as f64 / 1e6,
            times.communication as f64 / 1e6,
            times.waiting as f64 / 1e6,
            times.end as f64 / 1e6
        );
    }
    if let Some(report) = report {
        println!(
            "server: {} sync round trips, {} model events, message latency {}",
            report.simulation.sync_round_trips,
            report.simulation.events_processed,
            report.simulation.latency_ns.map_or("-".to_string(), |l| format!(
                "p50 {:.0} ns, p99 {:.0} ns, max {:.0} ns",
                l.p50, l.p99, l.max
            ))
        );
    }
    if let Some(server) = &external {
        println!("server: {}", external_report_note(server));
    }
    if args.output.is_none() {
        let network = if args.no_server || external.is_some() {
            ""
        } else {
            " and network.prv"
        };
        println!(
            "(--output DIR writes this as result.json, with the Paraver traces app.prv{network}; --json prints it \
             as JSON)"
        );
    }
    Ok(())
}

/// Where the report of the external server `vesper run --server` replayed against is:
/// with the server, which writes it itself.
fn external_report_note(server: &vesper_server::replay::ExternalServer) -> String {
    format!(
        "the report is the server's own: vesper serve at {} prints it, or writes it to its --stats",
        server.address()
    )
}

/// `vesper traffic`: the configurations the flags name, their curves, and the outputs.
fn traffic(args: TrafficArgs) -> anyhow::Result<()> {
    use vesper_server::traffic::{self, Configuration};

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
            let mut spec = network_file::read_spec(std::path::Path::new(file))
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
                    spec.switch = Some(*s);
                    label.push(value_name(s));
                    // The base's fields of other switch kinds do not apply to this one (the
                    // flags' still do, and are refused as usual).
                    if *s != SwitchName::Wormhole {
                        spec.flit_bytes = overrides.flit_bytes;
                        spec.buffer_bytes = overrides.buffer_bytes;
                        spec.bubble = overrides.bubble;
                        spec.arbitration = overrides.arbitration;
                        spec.initial_pointer = overrides.initial_pointer.clone();
                        if spec.routing != Some(RoutingName::Random) {
                            spec.seed = overrides.seed;
                        }
                    }
                    if *s != SwitchName::Cioq {
                        spec.speedup = overrides.speedup;
                        spec.virtual_output_queues = overrides.virtual_output_queues;
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
        (Some(sweep), _) => traffic::parse_sweep(sweep).map_err(anyhow::Error::msg)?,
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
    // The network's --pattern is --routing-pattern here.
    let resolve = |spec: &NetworkSpec, origin: &str| {
        args.net
            .resolve(spec, origin, &[])
            .map_err(|e| anyhow::anyhow!("{}", e.to_string().replace("--pattern ", "--routing-pattern ")))
    };
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
        let mut link = traffic::host_link(&network).map_err(|e| anyhow::anyhow!("{label}: {e}"))?;
        let flit_ns = link.bandwidth.serialization_time(u64::from(link.flit_bytes)).as_ps() as f64 / 1e3;
        if args.router_delay.is_some() || args.link_delay.is_some() {
            spec.routing_latency_ns = args
                .router_delay
                .map(|c| f64::from(c) * flit_ns)
                .or(spec.routing_latency_ns);
            spec.link_latency_ns = args.link_delay.map(|c| f64::from(c) * flit_ns).or(spec.link_latency_ns);
            network = resolve(&spec, &origin)
                .with_context(|| format!("--router-delay and --link-delay: cycles of {flit_ns} ns ({label})"))?;
            link = traffic::host_link(&network).map_err(|e| anyhow::anyhow!("{label}: {e}"))?;
        }
        let spec = traffic_spec(&args, &link, pattern, flit_ns)?;
        // Checked here, so that a bad pattern is reported before any simulation.
        spec.pattern
            .destinations(network.hosts, 0)
            .map_err(|e| anyhow::anyhow!("--pattern {e} ({label})"))?;
        configurations.push(Configuration { label, network, spec });
    }
    anyhow::ensure!(args.threads != Some(0), "--threads 0: at least 1");
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let curves = traffic::sweep(
        &configurations,
        &loads,
        threads,
        args.past_saturation.unwrap_or(1),
        args.cycles,
    )?;
    if let Some(path) = &args.svg {
        std::fs::write(path, traffic::svg(&curves))
            .with_context(|| format!("--svg {}: cannot write", path.display()))?;
        eprintln!("plot written to {}", path.display());
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&curves)?);
    } else {
        print!("{}", traffic::table(&curves));
        if let Some(mib) = vesper_server::bench::peak_memory_mib() {
            println!("peak memory of the process: {mib:.1} MiB");
        }
    }
    Ok(())
}

/// The traffic the flags describe for a network with host link `link` (`flit_ns`: its
/// flit time, the unit of `--cycles`).
fn traffic_spec(
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
