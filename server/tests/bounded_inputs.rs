//! Inputs that could exhaust the machine (issue 26) are refused at once, in little
//! memory, by an error that names the file and the field: networks too large to hold,
//! special files (`/dev/zero`, a FIFO with no writer), files and lines too long.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use vesper_map2topo::{NamedTopology, WriteOptions, write_map};
use vesper_netmodels::{LinkParams, Xgft};
use vesper_server::description;

/// The address space `vesper` gets [KiB]: an error costs a few MB; the kary-ntree
/// reproducers asked for 0.8 and 16 GB before they were refused.
const ADDRESS_SPACE_KIB: u32 = 256 * 1024;

/// A folder of its own for each test.
fn folder(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vesper-bounded-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `vesper ARGS` run in `dir` within [`ADDRESS_SPACE_KIB`] fails within seconds,
/// saying `expected`.
#[track_caller]
fn refused(dir: &Path, args: &[&str], expected: &str) {
    let started = Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_vesper"))
        .args(args)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("vesper runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{args:?} took {:?}",
        started.elapsed()
    );
}

/// A FIFO named `name` in `dir`, which nothing writes to.
fn fifo(dir: &Path, name: &str) {
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    assert!(
        Command::new("mkfifo")
            .arg(&path)
            .status()
            .expect("mkfifo runs")
            .success()
    );
}

/// A two-level tree of 4 hosts as `tree.map` in `dir`.
fn tree_map(dir: &Path) {
    let x = Xgft::new(vec![2, 2], vec![1, 2]).expect("valid");
    let named = NamedTopology::with_default_names(x.topology(LinkParams::default()));
    let text = write_map(&named, WriteOptions::default()).expect("written");
    std::fs::write(dir.join("tree.map"), text).expect("written");
}

const SPECIAL: &str = "not a regular file; inputs are read from regular files only";

#[test]
fn kary_ntrees_of_too_many_levels_name_n_at_once() {
    let dir = folder("kary");
    for n in ["2147483648", "100000000"] {
        let text = format!("[network]\nkind = \"kary-ntree\"\nk = 2\nn = {n}\n");
        std::fs::write(dir.join("net.toml"), &text).expect("written");
        let expected =
            format!("net.toml: network.n: the tree has {n} levels of switches; vesper builds trees of at most 32");
        refused(&dir, &["serve", "--network", "net.toml"], &expected);
        assert_eq!(
            description::parse("net.toml", &text).map_err(|e| e.to_string()),
            Err(expected)
        );
    }
    // Levels that fit but make too many ports with any k: n again; with this k only: k.
    let err = |text: &str| description::parse("t.toml", text).expect_err("refused").to_string();
    assert!(
        err("[network]\nkind = \"kary-ntree\"\nk = 2\nn = 26\n").starts_with("t.toml: network.n: the tree has more")
    );
    assert!(
        err("[network]\nkind = \"kary-ntree\"\nk = 100000\nn = 2\n")
            .starts_with("t.toml: network.k: the tree has more")
    );
    assert_eq!(
        err("[network]\nkind = \"kary-ntree\"\nk = 4\nn = 0\n"),
        "t.toml: network.n: a k-ary n-tree needs k ≥ 2 and n ≥ 1"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn hypercubes_and_tori_too_large_name_their_field() {
    let dir = folder("cube");
    std::fs::write(
        dir.join("cube.toml"),
        "[network]\nkind = \"hypercube\"\ndimensions = 4294967295\n",
    )
    .expect("written");
    refused(
        &dir,
        &["topo", "cube.toml"],
        "cube.toml: network.dimensions: the network has more than 2^26 = 67,108,864 ports",
    );
    let err = description::parse("t.toml", "[network]\nkind = \"torus\"\ndims = [8192, 8192]\n").expect_err("refused");
    assert!(
        err.to_string()
            .starts_with("t.toml: network.dims: the network has more than 2^26"),
        "{err}"
    );
    // Too large only with its hosts: hosts_per_switch is named.
    let text = "[network]\nkind = \"mesh\"\ndims = [4, 4]\nhosts_per_switch = 4294967295\n";
    let err = description::parse("t.toml", text).expect_err("refused").to_string();
    assert!(
        err.starts_with("t.toml: network.hosts_per_switch: the network has more than 2^26"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn rails_that_together_are_too_large_are_refused() {
    // Each rail fits (2^20 hosts: 2^21 ports); 40 of them do not.
    let rail = "[[network.rails]]\nkind = \"crossbar\"\n";
    let text = format!("[network]\nkind = \"multi-rail\"\nhosts = 1048576\n{}", rail.repeat(40));
    let err = description::parse("r.toml", &text).expect_err("refused").to_string();
    assert_eq!(
        err,
        "r.toml: network.rails: the 40 rails have 83886080 ports (hosts' and switches' together); vesper models at \
         most 2^26 = 67,108,864"
    );
}

#[test]
fn special_files_are_refused_by_field_without_waiting() {
    let dir = folder("special");
    tree_map(&dir);
    fifo(&dir, "fifo");
    let (device, pipe) = ("a character device", "a FIFO (named pipe)");
    // (the field, the rest of the network, the file given, what it is)
    let cases = [
        ("map", "kind = \"map\"", "/dev/zero", device),
        ("mapping", "hosts = 4", "/dev/zero", device),
        ("map", "kind = \"map\"", "fifo", pipe),
        ("map", "kind = \"map\"", ".", "a directory"),
        ("routes", "kind = \"map\"\nmap = \"tree.map\"", "fifo", pipe),
        (
            "pattern",
            "kind = \"kary-ntree\"\nk = 2\nn = 2\nrouting = \"pattern-aware\"",
            "fifo",
            pipe,
        ),
    ];
    for (field, rest, path, kind) in cases {
        let text = format!("[network]\n{rest}\n{field} = \"{path}\"\n");
        std::fs::write(dir.join("net.toml"), text).expect("written");
        let expected = format!("net.toml: network.{field}: {path}: it is {kind}, {SPECIAL}");
        refused(&dir, &["topo", "net.toml"], &expected);
    }
    // The same files given by flags name their flag.
    refused(
        &dir,
        &["topo", "--map", "/dev/zero"],
        &format!("--map /dev/zero: it is {device}, {SPECIAL}"),
    );
    refused(
        &dir,
        &["topo", "--map", "tree.map", "--routes", "fifo"],
        &format!("--routes fifo: it is {pipe}, {SPECIAL}"),
    );
    // The network file itself.
    refused(
        &dir,
        &["serve", "--network", "fifo"],
        &format!("fifo: it is {pipe}, {SPECIAL}"),
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn files_and_lines_over_their_limits_are_refused_unread() {
    let dir = folder("limits");
    tree_map(&dir);
    // A network file one byte over 1 MiB (sparse: no disk is used).
    let big = std::fs::File::create(dir.join("big.toml")).expect("created");
    big.set_len(description::MAX_NETWORK_FILE_BYTES + 1).expect("sized");
    refused(
        &dir,
        &["serve", "--network", "big.toml"],
        "big.toml: it holds 1048577 bytes, more than the 1048576 bytes (1 MiB) such a file may hold",
    );
    // A route file whose first line never ends within 1 MiB.
    std::fs::write(
        dir.join("long.routes"),
        format!("host0 host1 {}\n", "0 ".repeat(600_000)),
    )
    .expect("written");
    std::fs::write(
        dir.join("net.toml"),
        "[network]\nkind = \"map\"\nmap = \"tree.map\"\nroutes = \"long.routes\"\n",
    )
    .expect("written");
    let long = "long.routes:1: line 1 is longer than 1048576 bytes (1 MiB), the longest such a file may hold";
    refused(
        &dir,
        &["topo", "net.toml"],
        &format!("net.toml: network.routes: {long}"),
    );
    refused(
        &dir,
        &["topo", "--map", "tree.map", "--routes", "long.routes"],
        &format!("--routes long.routes: {long}"),
    );
    std::fs::remove_dir_all(&dir).ok();
}
