//! One simulation over MPI ranks (`mpirun -np N vesper traffic …`, `vesper run …`,
//! feature `mpi`): the curves of 2 and 4 ranks are those of one process, byte for byte
//! but the wall clock, on every topology kind and switch kind a split network supports
//! (a map whose routes are drawn at random among two a pair too), at random seeds and
//! loads; a replay over ranks led by rank 0's server (`vesper run`,
//! `vesper serve`) predicts what one process does; rank 0 alone writes; what cannot run
//! on ranks says so.
//!
//! Needs Open MPI's `mpirun` on the PATH (CI installs Debian's `openmpi-bin`); runs as
//! root with Open MPI's consent variables, and with `--oversubscribe` so that 4 ranks run
//! on 2 cores.
#![cfg(feature = "mpi")]

use std::process::{Command, Output};

mod common;

/// The command `mpirun -np RANKS vesper` (arguments to add), as root if need be.
fn mpirun_vesper(ranks: u32) -> Command {
    let mut command = Command::new("mpirun");
    command
        .args(["--oversubscribe", "-np", &ranks.to_string()])
        .arg(env!("CARGO_BIN_EXE_vesper"))
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    command
}

/// `mpirun -np RANKS vesper ARGS`.
fn mpirun(ranks: u32, args: &[&str]) -> Output {
    mpirun_vesper(ranks)
        .args(args)
        .output()
        .expect("mpirun starts (install openmpi-bin)")
}

/// Asserts that `vesper ARGS` gives, seen through `seen`, what it gives in one process
/// on each number of `ranks`.
fn same_on_ranks(args: &[&str], ranks: &[u32], seen: fn(&Output, &str) -> serde_json::Value, what: &str) {
    let one = seen(&vesper(args), what);
    for &n in ranks {
        assert_eq!(
            seen(&mpirun(n, args), what),
            one,
            "{what}: {n} ranks differ from one process"
        );
    }
}

/// `vesper ARGS` in one process.
fn vesper(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vesper"))
        .args(args)
        .output()
        .expect("vesper starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The curves of a `--json` output, the wall clock taken out.
fn untimed(out: &Output, what: &str) -> serde_json::Value {
    assert!(out.status.success(), "{what}: {}", text(&out.stderr));
    let mut curves: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{what}: not one JSON document ({e}): {}", text(&out.stdout)));
    for curve in curves.as_array_mut().expect("curves") {
        for p in curve["points"].as_array_mut().expect("points") {
            p["wall_seconds"] = 0.into();
            p["build_seconds"] = 0.into();
        }
    }
    curves
}

#[test]
fn ranks_give_the_curves_of_one_process() {
    // Every topology kind and switch kind that splits, with seeds and loads drawn once
    // (printed, to run again by hand).
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let mut rng = vesper_netmodels::rng::Rng::new(seed);
    let torus = std::env::temp_dir().join(format!("vesper-mpi-torus-{}.toml", std::process::id()));
    std::fs::write(
        &torus,
        "[network]\nkind = \"torus\"\ndims = [6, 4, 4]\nhosts_per_switch = 2\npacket_payload_bytes = 112\n",
    )
    .expect("writable temp dir");
    let torus = torus.to_str().expect("UTF-8 path");
    let worms = std::env::temp_dir().join(format!("vesper-mpi-worm-torus-{}.toml", std::process::id()));
    std::fs::write(
        &worms,
        "[network]\nkind = \"torus\"\ndims = [4, 3, 2]\nhosts_per_switch = 2\nswitch = \"wormhole\"\n\
         granularity = \"fine\"\npacket_payload_bytes = 256\nbuffer_bytes = 1024\n",
    )
    .expect("writable temp dir");
    let worms = worms.to_str().expect("UTF-8 path");
    let coarse_worms = std::env::temp_dir().join(format!("vesper-mpi-coarse-torus-{}.toml", std::process::id()));
    std::fs::write(
        &coarse_worms,
        "[network]\nkind = \"torus\"\ndims = [4, 3, 2]\nhosts_per_switch = 2\nswitch = \"wormhole\"\n\
         packet_payload_bytes = 256\nbuffer_bytes = 1024\n",
    )
    .expect("writable temp dir");
    let coarse_worms = coarse_worms.to_str().expect("UTF-8 path");
    let dragonfly = std::env::temp_dir().join(format!("vesper-mpi-dragonfly-{}.toml", std::process::id()));
    std::fs::write(
        &dragonfly,
        "[network]\nkind = \"dragonfly\"\np = 2\nrouting = \"ugal\"\nswitch = \"cioq\"\nspeedup = 2\n\
         packet_payload_bytes = 112\n",
    )
    .expect("writable temp dir");
    let dragonfly = dragonfly.to_str().expect("UTF-8 path");
    let dir = std::env::temp_dir().join(format!("vesper-mpi-routes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (map, routes) = common::map_with_two_paths_a_pair(&dir);
    let networks: [&[&str]; 11] = [
        &["--preset", "kary-ntree"],
        &["--preset", "hypercube"],
        &["--preset", "fat-tree", "--switch", "cioq"],
        &["--network", torus],
        &["--preset", "two-rail-fat-tree", "--switch", "output-queued"],
        &["--map", &map, "--routes", &routes, "--route-policy", "random"],
        &["--preset", "fat-tree", "--granularity", "fine"],
        // A torus of wormhole switches takes bubble flow control.
        &["--network", worms],
        // Wormhole switches in runs of flits (the default).
        &["--preset", "fat-tree"],
        &["--network", coarse_worms],
        // UGAL-L's credits cross the cut global cables.
        &["--network", dragonfly, "--pattern", "group-shift"],
    ];
    for network in networks {
        let load = format!("{:.2}", 0.1 + rng.below(90) as f64 / 100.0);
        let traffic_seed = rng.below(1_000_000).to_string();
        let args = [
            &[
                "traffic",
                "--load",
                &load,
                "--traffic-seed",
                &traffic_seed,
                "--measure",
                "200",
                "--json",
            ],
            network,
        ]
        .concat();
        let what = format!("{} (test seed {seed})", args.join(" "));
        same_on_ranks(&args, &[2, 4], untimed, &what);
    }
    let _ = std::fs::remove_file(torus);
    let _ = std::fs::remove_file(worms);
    let _ = std::fs::remove_file(coarse_worms);
    let _ = std::fs::remove_file(dragonfly);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_sweep_past_saturation_on_ranks_is_that_of_one_process() {
    let args = [
        "traffic",
        "--sweep",
        "0.4:1.6:0.6",
        "--measure",
        "200",
        "--preset",
        "kary-ntree",
        "--process",
        "poisson",
        "--size-bimodal",
        "64:2000:20",
        "--json",
    ];
    same_on_ranks(&args, &[3], untimed, "sweep");
}

#[test]
fn rank_zero_alone_writes_and_notes_say_how_the_ranks_ran() {
    let out = mpirun(
        2,
        &["traffic", "--load", "0.3", "--measure", "200", "--preset", "kary-ntree"],
    );
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.matches("peak memory of the process").count(), 1, "{stdout}");
    assert_eq!(
        stderr.matches("2 MPI ranks, windows of 125.000 ns").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("bytes exchanged a window"), "{stderr}");
}

/// `mpirun -np 2 vesper ARGS` fails, says `expected`, and prints no result.
fn refused(args: &[&str], expected: &str) {
    let out = mpirun(2, args);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
}

#[test]
fn what_cannot_run_on_ranks_says_so() {
    refused(
        &["topo", "--preset", "kary-ntree"],
        "vesper topo does not run across MPI ranks: start it without mpirun",
    );
    refused(
        &["traffic", "--load", "0.3", "--partitions", "3"],
        "--partitions 3: under mpirun each of the 2 ranks simulates one partition",
    );
    refused(
        &["traffic", "--load", "0.3", "--threads", "2"],
        "--threads 2: under mpirun every rank takes part in every point",
    );
    refused(
        &[
            "traffic",
            "--load",
            "0.3",
            "--preset",
            "fat-tree",
            "--link-latency",
            "0",
        ],
        "2 MPI ranks: a cable between two of the 2 partitions and the routing decision after it take no time",
    );
    // A usage error is printed once, by rank 0.
    let out = mpirun(2, &["traffic", "--no-such-flag"]);
    assert!(!out.status.success());
    assert_eq!(
        text(&out.stderr)
            .matches("unexpected argument '--no-such-flag'")
            .count(),
        1,
        "{}",
        text(&out.stderr)
    );
}

/// A `vesper run --json` report, its wall-clock parts (every `wall` object) taken out.
fn unwalled(out: &Output, what: &str) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                map.remove("wall");
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    assert!(out.status.success(), "{what}: {}", text(&out.stderr));
    let mut report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{what}: not one JSON document ({e}): {}", text(&out.stdout)));
    strip(&mut report);
    report
}

#[test]
fn a_replay_over_ranks_led_by_rank_zero_predicts_what_one_process_does() {
    // Rank 0 runs the in-process server and leads; the others follow its network's calls.
    let cases: [&[&str]; 8] = [
        &["--workload", "all-to-all", "--tasks", "16", "--preset", "kary-ntree"],
        // Wormhole switches in runs of flits: their final deliveries are found by
        // walks up the packets' paths that go from rank to rank.
        &["--workload", "all-to-all", "--tasks", "32", "--preset", "fat-tree"],
        &["--workload", "ring", "--tasks", "32", "--preset", "torus-3d"],
        // Two rails, messages striped over both: each told call names its rail.
        &[
            "--workload",
            "all-to-all",
            "--tasks",
            "16",
            "--size",
            "20000",
            "--preset",
            "two-rail-fat-tree",
            "--switch",
            "output-queued",
            "--rail-policy",
            "striped",
        ],
        &[
            "--workload",
            "random",
            "--tasks",
            "32",
            "--messages",
            "400",
            "--preset",
            "hypercube",
        ],
        &[
            "--workload",
            "ring",
            "--tasks",
            "24",
            "--preset",
            "fat-tree",
            "--switch",
            "cioq",
            "--replies",
            "earliest",
        ],
        &[
            "--workload",
            "all-to-all",
            "--tasks",
            "16",
            "--size",
            "100000",
            "--preset",
            "kary-ntree",
            "--switch",
            "cioq",
            "--voq",
        ],
        // Two groups of a dragonfly, UGAL-L choosing at the source routers.
        &[
            "--workload",
            "all-to-all",
            "--tasks",
            "64",
            "--size",
            "8192",
            "--preset",
            "dragonfly",
            "--routing",
            "ugal",
        ],
    ];
    for case in cases {
        let args = [&["run", "--json"], case].concat();
        same_on_ranks(&args, &[2, 3], unwalled, &args.join(" "));
    }
}

/// The network trace rank 0 writes, with what every rank's partition recorded, is the
/// one process's, file for file (`--trace-end-to-end`: records of messages that end on
/// another rank than they started; a short state split: states cut on every rank).
#[test]
fn a_replay_on_ranks_writes_the_network_trace_of_one_process() {
    let dir = std::env::temp_dir().join(format!("vesper-mpi-traces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    // A traced wormhole network steps flit by flit, so it splits (two rails of it here).
    let cases: [(&str, &[&str]); 4] = [
        (
            "tree",
            &[
                "--tasks",
                "64",
                "--size",
                "20000",
                "--preset",
                "kary-ntree",
                "--switch",
                "cioq",
            ],
        ),
        ("cube", &["--tasks", "32", "--size", "8000", "--preset", "hypercube"]),
        (
            "rails",
            &[
                "--tasks",
                "64",
                "--size",
                "20000",
                "--preset",
                "two-rail-fat-tree",
                "--switch",
                "output-queued",
            ],
        ),
        (
            "worms",
            &["--tasks", "32", "--size", "8000", "--preset", "two-rail-fat-tree"],
        ),
    ];
    for (name, case) in cases {
        let files = |ranks: u32| {
            let prv = dir.join(format!("{name}-{ranks}.prv"));
            let prv = prv.to_str().expect("UTF-8 path");
            let args = [
                &["run", "--workload", "all-to-all", "--trace", prv, "--trace-end-to-end"][..],
                case,
            ]
            .concat();
            let out = if ranks == 1 {
                vesper(&args)
            } else {
                mpirun(ranks, &args)
            };
            assert!(out.status.success(), "{name} on {ranks} ranks: {}", text(&out.stderr));
            ["prv", "pcf", "row"].map(|ext| {
                let file = dir.join(format!("{name}-{ranks}.{ext}"));
                std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
            })
        };
        let one = files(1);
        assert!(
            one[0].lines().filter(|l| l.starts_with("1:")).count() > 100,
            "{name}: backlogs traced"
        );
        for ranks in [2, 4] {
            let split = files(ranks);
            for (ext, (a, b)) in ["prv", "pcf", "row"].iter().zip(split.iter().zip(&one)) {
                assert!(
                    a == b,
                    "{name}: the .{ext} rank 0 of {ranks} wrote differs from one process's"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_replay_on_ranks_refuses_what_it_cannot_do() {
    let run = ["run", "--workload", "ring", "--tasks", "8", "--preset", "kary-ntree"];
    refused(
        &[&run[..], &["--no-server"]].concat(),
        "--server and --no-server: under mpirun",
    );
    refused(
        &[&run[..], &["--partitions", "3"]].concat(),
        "--partitions 3: under mpirun each of the 2 ranks",
    );
    refused(
        &[
            "run",
            "--workload",
            "ring",
            "--tasks",
            "8",
            "--preset",
            "torus-3d",
            "--link-latency",
            "0",
        ],
        "a cable between two of the 2 partitions and the routing decision after it take no time",
    );
    refused(
        &["run", "--workload", "ring", "--tasks", "8", "--preset", "crossbar"],
        "Error: 2 MPI ranks: 2 partitions asked for, but the network has 1 switches",
    );
}

/// `vesper serve NETWORK --clients N` (under `mpirun -np 2` if `on_ranks`) serving the
/// `vesper run` replays of `workloads`, each connected once the one before is (their
/// order decides their hosts): their predictions, in that order.
fn served(on_ranks: bool, network: &[&str], workloads: &[&[&str]]) -> Vec<serde_json::Value> {
    let server = match on_ranks {
        true => mpirun_vesper(2),
        false => Command::new(env!("CARGO_BIN_EXE_vesper")),
    };
    common::served(server, network, workloads)
}

#[test]
fn a_server_on_ranks_serves_what_one_process_serves() {
    // `mpirun -np 2 vesper serve`: rank 0 listens and leads, rank 1 follows.
    let workload = ["--workload", "random", "--tasks", "32", "--messages", "300"];
    let on_ranks = served(true, &["--preset", "hypercube"], &[&workload]);
    let alone = vesper(&[&["run", "--json", "--preset", "hypercube"], &workload[..]].concat());
    let alone = unwalled(&alone, "vesper run")["predicted_ns"].clone();
    assert!(alone.is_number());
    assert_eq!(on_ranks, vec![alone]);
}

#[test]
fn a_server_on_ranks_serves_several_clients_as_one_process_does() {
    let workloads: [&[&str]; 2] = [
        &["--workload", "all-to-all", "--tasks", "8", "--size", "20000"],
        &["--workload", "random", "--tasks", "8", "--messages", "200"],
    ];
    // Packet switches, and wormhole switches in runs of flits.
    for network in ["kary-ntree", "fat-tree"] {
        let alone = served(false, &["--preset", network], &workloads);
        assert!(alone.iter().all(serde_json::Value::is_number), "{network}: {alone:?}");
        assert_eq!(served(true, &["--preset", network], &workloads), alone, "{network}");
    }
}

/// `mpirun -np 2 vesper serve --trace` on two rails with two clients: the predictions
/// and the network trace (rank 0's) are one process's, file for file.
#[test]
fn a_server_on_ranks_writes_the_network_trace_of_one_process() {
    let dir = std::env::temp_dir().join(format!("vesper-mpi-serve-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let workloads: [&[&str]; 2] = [
        &["--workload", "all-to-all", "--tasks", "8", "--size", "20000"],
        &["--workload", "random", "--tasks", "8", "--messages", "200"],
    ];
    let served_traced = |on_ranks: bool| {
        let prv = dir.join(format!("serve-{on_ranks}.prv"));
        let prv = prv.to_str().expect("UTF-8 path");
        let network = [
            "--preset",
            "two-rail-fat-tree",
            "--switch",
            "output-queued",
            "--trace",
            prv,
            "--trace-end-to-end",
        ];
        let predictions = served(on_ranks, &network, &workloads);
        let files = ["prv", "pcf", "row"].map(|ext| {
            let file = dir.join(format!("serve-{on_ranks}.{ext}"));
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        });
        (predictions, files)
    };
    let (alone, one) = served_traced(false);
    assert!(alone.iter().all(serde_json::Value::is_number), "{alone:?}");
    assert!(one[0].lines().count() > 100, "a trace with records");
    let (on_ranks, split) = served_traced(true);
    assert_eq!(on_ranks, alone);
    for (ext, (a, b)) in ["prv", "pcf", "row"].iter().zip(split.iter().zip(&one)) {
        assert!(a == b, "the .{ext} rank 0 of 2 wrote differs from one process's");
    }
    std::fs::remove_dir_all(&dir).ok();
}
