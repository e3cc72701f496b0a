//! Batched and earliest replies predict the same: for every network kind and switch
//! kind, for the synthetic workloads and a Dimemas trace, eager and rendezvous, `vesper
//! run --replies batched` and `--replies earliest` print the same prediction and
//! report (round-trip counts and wall-clock figures aside) and write byte-identical
//! network traces; batched replies need no more round trips.

use vesper_server::cli::{self, Verb};

/// `vesper run ARGS --json --replies MODE` in this process, with a network trace when
/// `traced` (the wormhole fabric then takes its fine path, flit by flit): the result as
/// JSON and the trace's files.
fn run(args: &[&str], mode: &str, dir: &std::path::Path, traced: bool) -> (serde_json::Value, Vec<Vec<u8>>) {
    let trace = dir.join(format!("{mode}.prv"));
    let trace_arg = trace.to_str().expect("UTF-8 path").to_string();
    let tracing = if traced {
        vec!["--trace", trace_arg.as_str()]
    } else {
        vec![]
    };
    let line = ["vesper", "run"]
        .into_iter()
        .chain(args.iter().copied())
        .chain(["--json", "--replies", mode, "--client-spin-us", "0"])
        .chain(tracing);
    let cli = cli::parse(line).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(matches!(cli.verb, Verb::Run(_)));
    let (mut out, mut notes) = (Vec::new(), Vec::new());
    cli::execute(cli.verb, &mut out, &mut notes).unwrap_or_else(|e| panic!("{args:?} {mode}: {e:?}"));
    let files = if traced {
        ["prv", "pcf", "row"]
            .iter()
            .map(|ext| std::fs::read(trace.with_extension(ext)).expect("trace written"))
            .collect()
    } else {
        Vec::new()
    };
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

/// Runs `args` both ways, with a network trace, and compares.
#[track_caller]
fn same_both_ways(args: &[&str]) -> (u64, u64) {
    compare(args, true)
}

/// Runs `args` both ways (`traced`: with a network trace) and compares.
#[track_caller]
fn compare(args: &[&str], traced: bool) -> (u64, u64) {
    let dir = std::env::temp_dir().join(format!(
        "vesper-replies-{}-{}",
        std::process::id(),
        args.join("_").len()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (earliest, earliest_trace) = run(args, "earliest", &dir, traced);
    let (batched, batched_trace) = run(args, "batched", &dir, traced);
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

/// Untraced, the wormhole fabric takes its coarse path, which tells deliveries ahead
/// from its plans (a worm holding its path to the destination): the same predictions,
/// in fewer round trips.
#[test]
fn the_coarse_wormhole_path_predicts_the_same_both_ways_in_fewer_round_trips() {
    let wormhole_networks = [
        &["--network", "crossbar", "--hosts", "16", "--switch", "wormhole"][..],
        &["--preset", "fat-tree"],
        &["--preset", "torus-3d"],
        &["--preset", "two-rail-fat-tree", "--rail-policy", "striped"],
    ];
    let mut total = (0, 0);
    for network in wormhole_networks {
        for workload in WORKLOADS {
            let args: Vec<&str> = network.iter().chain(workload.iter()).copied().collect();
            let (earliest, batched) = compare(&args, false);
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

/// Past the legacy client's 500-byte read (`--reply-limit 0`), a reply carries every
/// completion due. The ideal all-to-all lands all its messages at one instant: with the
/// limit, earliest replies need a round trip per 7 completions whichever way; without,
/// one per task's batch of sends. The prediction does not change.
#[test]
fn replies_without_a_limit_carry_every_completion_due() {
    let dir = std::env::temp_dir().join(format!("vesper-replies-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let args = [
        "--network",
        "ideal",
        "--bandwidth",
        "250",
        "--workload",
        "all-to-all",
        "--tasks",
        "16",
        "--size",
        "4096",
    ];
    let unlimited: Vec<&str> = args.iter().copied().chain(["--reply-limit", "0"]).collect();
    let (limited, _) = run(&args, "earliest", &dir, false);
    for mode in ["earliest", "batched"] {
        let (free, _) = run(&unlimited, mode, &dir, false);
        assert_eq!(prediction(free.clone()), prediction(limited.clone()), "{mode}");
        // 240 completions, 7 to a reply; 16 tasks sending at the start.
        assert!(round_trips(&limited) >= 240 / 7, "{limited}");
        assert_eq!(round_trips(&free), 16, "{mode}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
