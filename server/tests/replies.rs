//! Batched and earliest replies predict the same: for every network kind and switch
//! kind, for the synthetic workloads and a Dimemas trace, eager and rendezvous, `vesper
//! run --replies batched` and `--replies earliest` print the same prediction and
//! report (round-trip counts and wall-clock figures aside) and write byte-identical
//! network traces; batched replies need no more round trips.

use vesper_server::cli::{self, Verb};

/// `vesper run ARGS --json --replies MODE` in this process, with a network trace: the
/// result as JSON and the trace's files.
fn run(args: &[&str], mode: &str, dir: &std::path::Path) -> (serde_json::Value, Vec<Vec<u8>>) {
    let trace = dir.join(format!("{mode}.prv"));
    let trace_arg = trace.to_str().expect("UTF-8 path").to_string();
    let line = ["vesper", "run"].into_iter().chain(args.iter().copied()).chain([
        "--json",
        "--replies",
        mode,
        "--trace",
        &trace_arg,
        "--client-spin-us",
        "0",
    ]);
    let cli = cli::parse(line).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(matches!(cli.verb, Verb::Run(_)));
    let (mut out, mut notes) = (Vec::new(), Vec::new());
    cli::execute(cli.verb, &mut out, &mut notes).unwrap_or_else(|e| panic!("{args:?} {mode}: {e:?}"));
    let files = ["prv", "pcf", "row"]
        .iter()
        .map(|ext| std::fs::read(trace.with_extension(ext)).expect("trace written"))
        .collect();
    (serde_json::from_slice(&out).expect("JSON"), files)
}

/// The result without what depends on how often the client and server met: round
/// trips and the wall clock.
fn prediction(mut value: serde_json::Value) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                map.retain(|k, _| !matches!(k.as_str(), "round_trips" | "sync_round_trips" | "wall"));
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(list) => list.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

fn round_trips(value: &serde_json::Value) -> u64 {
    value["server"]["simulation"]["sync_round_trips"]
        .as_u64()
        .expect("a round-trip count")
}

/// Runs `args` both ways and compares.
#[track_caller]
fn same_both_ways(args: &[&str]) -> (u64, u64) {
    let dir = std::env::temp_dir().join(format!(
        "vesper-replies-{}-{}",
        std::process::id(),
        args.join("_").len()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (earliest, earliest_trace) = run(args, "earliest", &dir);
    let (batched, batched_trace) = run(args, "batched", &dir);
    assert_eq!(prediction(earliest.clone()), prediction(batched.clone()), "{args:?}");
    assert!(earliest_trace == batched_trace, "{args:?}: the network traces differ");
    let _ = std::fs::remove_dir_all(&dir);
    let trips = (round_trips(&earliest), round_trips(&batched));
    assert!(trips.1 <= trips.0, "{args:?}: {trips:?} round trips");
    trips
}

const NETWORKS: &[&[&str]] = &[
    &["--network", "ideal", "--bandwidth", "250", "--hosts", "16"],
    &["--network", "crossbar", "--hosts", "16"],
    &[
        "--network",
        "crossbar",
        "--hosts",
        "16",
        "--switch",
        "cioq",
        "--speedup",
        "2",
        "--voq",
    ],
    &["--network", "crossbar", "--hosts", "16", "--switch", "wormhole"],
    // zero-delay cables and routing, tiny packets
    &[
        "--network",
        "crossbar",
        "--hosts",
        "16",
        "--link-latency",
        "0",
        "--routing-latency",
        "0",
        "--packet-payload",
        "64",
        "--packet-header",
        "0",
    ],
    &["--preset", "kary-ntree"],
    &["--preset", "fat-tree"],
    &["--preset", "hypercube"],
    &["--preset", "torus-3d"],
    &["--preset", "two-rail-fat-tree"],
    &["--preset", "two-rail-fat-tree", "--rail-policy", "striped"],
];

const WORKLOADS: &[&[&str]] = &[
    &["--workload", "all-to-all", "--tasks", "8", "--size", "4096"],
    &["--workload", "ring", "--tasks", "8", "--iterations", "2"],
    &[
        "--workload",
        "random",
        "--tasks",
        "8",
        "--messages",
        "64",
        "--size",
        "2048",
    ],
    // rendezvous above 2 KiB
    &[
        "--workload",
        "all-to-all",
        "--tasks",
        "8",
        "--size",
        "8192",
        "--eager-limit",
        "2048",
    ],
];

#[test]
fn every_network_and_workload_predicts_the_same_both_ways() {
    let mut total = (0, 0);
    for network in NETWORKS {
        for workload in WORKLOADS {
            let args: Vec<&str> = network.iter().chain(workload.iter()).copied().collect();
            let (earliest, batched) = same_both_ways(&args);
            total = (total.0 + earliest, total.1 + batched);
        }
    }
    assert!(total.1 < total.0, "batched replies saved no round trip: {total:?}");
}

#[test]
fn a_dimemas_trace_predicts_the_same_both_ways() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");
    let dim = format!("{root}/pingpong.dim");
    let cfg = format!("{root}/pingpong.cfg");
    for network in [
        &["--network", "ideal"][..],
        &["--preset", "fat-tree"],
        &["--network", "crossbar"],
    ] {
        let args: Vec<&str> = [dim.as_str(), "--config", cfg.as_str()]
            .into_iter()
            .chain(network.iter().copied())
            .collect();
        same_both_ways(&args);
    }
}

/// On the ideal network every message in flight is known as it enters: a ring needs
/// at most half the round trips.
#[test]
fn the_ideal_network_halves_a_rings_round_trips() {
    let (earliest, batched) = same_both_ways(&[
        "--network",
        "ideal",
        "--bandwidth",
        "250",
        "--workload",
        "ring",
        "--tasks",
        "32",
    ]);
    assert!(2 * batched <= earliest, "{batched} of {earliest} round trips");
}
