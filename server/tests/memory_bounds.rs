//! Networks too large for the memory the process may use are refused before anything
//! is built, with the estimate and the limit (issue item 2): `--max-memory`, or by
//! default what the machine leaves (here an address space limit set with `prlimit`,
//! which the networks of the issue made abort the process part way through its build).
//! And a crossbar's build is linear in its hosts (item 3): the largest crossbar
//! described fits in the memory its estimate names.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The address space `vesper` gets under `prlimit` [bytes]: far below what these
/// networks need (2.5 to 13 GB), far above what a refusal costs.
const ADDRESS_SPACE: u64 = 1 << 30;

/// A folder of its own for each test.
fn folder(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vesper-memory-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `vesper ARGS` run in `dir` under `prlimit --as=BYTES` (util-linux).
fn vesper_within(dir: &Path, bytes: u64, args: &[&str]) -> Output {
    Command::new("prlimit")
        .arg(format!("--as={bytes}"))
        .arg(env!("CARGO_BIN_EXE_vesper"))
        .args(args)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("prlimit (util-linux) runs vesper")
}

/// `vesper ARGS` within [`ADDRESS_SPACE`] ends with an error (not a signal: an abort
/// on a failed allocation is SIGABRT) that says `expected`, and the rest of `also`.
#[track_caller]
fn refused(dir: &Path, args: &[&str], expected: &str, also: &[&str]) -> String {
    let out = vesper_within(dir, ADDRESS_SPACE, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {:?}: {stderr}", out.status);
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
    for text in also {
        assert!(stderr.contains(text), "{args:?}: {text}: {stderr}");
    }
    stderr
}

/// What every refusal by the default limit under `prlimit` says.
const BY_RLIMIT: &str = "this process may use (the address space RLIMIT_AS leaves this process, less 256 MiB for \
                         its threads; set another with --max-memory)";

#[test]
fn the_networks_of_the_issue_are_refused_with_their_estimate() {
    let dir = folder("issue");
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).expect("written");
    write(
        "torus200.toml",
        "[network]\nkind = \"torus\"\ndims = [200, 200, 200]\nswitch = \"output-queued\"\n",
    );
    write("torus150.toml", "[network]\nkind = \"torus\"\ndims = [150, 150, 150]\n");
    // A 200³ torus: 8 million switches of 7 ports, 8 million hosts.
    refused(
        &dir,
        &["topo", "torus200.toml"],
        "torus200.toml: the network does not fit in memory: it needs about ",
        &[
            "to build and simulate (estimated from its description: 8000000 hosts, 8000000 switches, 64000000 \
             ports, 32000000 cables), more than the ",
            BY_RLIMIT,
        ],
    );
    refused(
        &dir,
        &["topo", "torus150.toml"],
        "torus150.toml: the network does not fit in memory",
        &["3375000 switches", BY_RLIMIT],
    );
    // The server refuses before it listens; the other commands as they start.
    refused(
        &dir,
        &["serve", "--hosts", "30000000", "--listen", "127.0.0.1:0"],
        "--network crossbar: the network does not fit in memory",
        &["30000000 hosts, 1 switch, 60000000 ports", BY_RLIMIT],
    );
    refused(
        &dir,
        &["topo", "--hosts", "20000000"],
        "--network crossbar: the network does not fit in memory",
        &["20000000 hosts", BY_RLIMIT],
    );
    refused(
        &dir,
        &[
            "run",
            "--network",
            "torus200.toml",
            "--workload",
            "ring",
            "--tasks",
            "2",
        ],
        "torus200.toml: the network does not fit in memory",
        &[BY_RLIMIT],
    );
    refused(
        &dir,
        &["traffic", "--network", "torus200.toml", "--load", "0.1"],
        "the network does not fit in memory",
        &[BY_RLIMIT],
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_mesh_whose_routes_are_too_long_is_refused_before_it_is_built() {
    let dir = folder("mesh");
    std::fs::write(dir.join("line.toml"), "[network]\nkind = \"mesh\"\ndims = [8000000]\n").expect("written");
    // Refused by the description's check, needing no memory (it took 3.1 GB first).
    let out = vesper_within(&dir, 64 << 20, &["topo", "line.toml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "line.toml: network.dims: its longest dimension-order route crosses 8000000 switches; vesper counts at \
             most 65,535 on a route"
        ),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn max_memory_sets_the_limit_and_names_itself() {
    let dir = folder("flag");
    // The fat tree needs about half a MiB: refused under 10K, built under 64M.
    for args in [
        &["topo", "--preset", "fat-tree", "--max-memory", "10K"][..],
        &[
            "run",
            "--preset",
            "fat-tree",
            "--max-memory",
            "10K",
            "--workload",
            "ring",
            "--tasks",
            "4",
        ],
        &["traffic", "--max-memory", "10K", "--load", "0.1"],
        &[
            "serve",
            "--preset",
            "fat-tree",
            "--max-memory",
            "10K",
            "--listen",
            "127.0.0.1:0",
        ],
    ] {
        refused(
            &dir,
            args,
            "the network does not fit in memory: it needs about ",
            &["more than the 10.0 KiB --max-memory allows"],
        );
    }
    let out = vesper_within(
        &dir,
        ADDRESS_SPACE,
        &["topo", "--preset", "fat-tree", "--max-memory", "64M"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("memory: about "), "{stdout}");
    let out = vesper_within(&dir, ADDRESS_SPACE, &["topo", "--max-memory", "8X"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("8X: expected a size such as 8G, 512M or 1048576 (bytes)"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_large_crossbar_builds_within_its_estimate() {
    // 256,000 hosts: 71 s of route search before (a search from every host over every
    // port), within the address space its estimate and the process's threads need now.
    let dir = folder("crossbar");
    let json = |args: &[&str], bytes| {
        let out = vesper_within(&dir, bytes, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("JSON")
    };
    let summary = json(&["topo", "--hosts", "256000", "--json"], 4 << 30);
    let estimate = summary["memory_bytes"].as_u64().expect("an estimate");
    assert!((100 << 20..200 << 20).contains(&estimate), "{estimate}");
    // With room for the estimate, the process itself and its threads: built.
    json(&["topo", "--hosts", "256000", "--json"], estimate + (300 << 20));
    std::fs::remove_dir_all(&dir).ok();
}
