//! The `map2topo` command: export, check, generate, convert, count conflicts.

use std::path::Path;
use std::process::Command;

fn map2topo(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_map2topo"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("map2topo runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn export_check_generate_convert_and_count() {
    let dir = std::env::temp_dir().join(format!("map2topo-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // The example tree, its map and its d-mod-k routes.
    let (ok, _, err) = map2topo(&dir, &["xgft", "3", "16,16,8", "1,16,16", "-o", "tree.map"]);
    assert!(ok, "{err}");
    let (ok, out, err) = map2topo(&dir, &["check", "tree.map"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("hosts: 2048") && out.contains("switches: 512 (up to 32 ports)"),
        "{out}"
    );
    let (ok, _, err) = map2topo(
        &dir,
        &["xgft", "2", "4,4", "1,4", "-o", "t.map", "--routes", "t.routes"],
    );
    assert!(ok, "{err}");
    let (ok, out, err) = map2topo(&dir, &["check", "t.map", "--routes", "t.routes"]);
    assert!(ok, "{err}");
    assert!(out.contains("routes: 240 (every one reaches its destination)"), "{out}");
    assert!(out.contains("deadlock: none possible"), "{out}");
    // Myrinet turns and back.
    let (ok, myrinet, err) = map2topo(&dir, &["convert", "t.map", "t.routes", "--to", "myrinet"]);
    assert!(
        ok && myrinet.starts_with("\"host0\" 15\n\"host1\" 1 0x81\n"),
        "{err}{myrinet}"
    );
    std::fs::write(dir.join("t.myri"), &myrinet).expect("write");
    let (ok, canonical, err) = map2topo(&dir, &["convert", "t.map", "t.myri", "--to", "canonical"]);
    assert!(ok, "{err}");
    assert_eq!(canonical, std::fs::read_to_string(dir.join("t.routes")).expect("read"));
    // A ring: its shortest paths can deadlock; up*/down* routes cannot.
    assert!(map2topo(&dir, &["torus", "6", "-o", "ring.map"]).0);
    let (_, out, _) = map2topo(&dir, &["check", "ring.map"]);
    assert!(
        out.contains("deadlock: possible with wormhole switches: sw0.p1 → sw1.p1"),
        "{out}"
    );
    let (ok, _, err) = map2topo(
        &dir,
        &["routes", "ring.map", "--algorithm", "up-down", "-o", "ring.routes"],
    );
    assert!(ok && err.contains("up*/down* root: sw0"), "{err}");
    let (_, out, _) = map2topo(&dir, &["check", "ring.map", "--routes", "ring.routes"]);
    assert!(out.contains("deadlock: none possible"), "{out}");
    // A pattern whose flows share the first up link under the lowest-port routes.
    let (ok, _, err) = map2topo(
        &dir,
        &["routes", "t.map", "--algorithm", "shortest-path", "-o", "low.routes"],
    );
    assert!(ok, "{err}");
    std::fs::write(dir.join("pattern"), "host0 host4\nhost1 host5\nphase\nhost0 host1\n").expect("write");
    let (ok, out, err) = map2topo(&dir, &["conflicts", "t.map", "low.routes", "pattern"]);
    assert!(ok, "{err}");
    assert!(out.contains("     0      2          2          2  sw0.p4"), "{out}");
    assert!(out.contains("     1      1          1          0"), "{out}");
    // Mistakes are named.
    let (ok, _, err) = map2topo(&dir, &["xgft", "2", "4,4", "2,4"]);
    assert!(!ok && err.contains("w1 must be 1"), "{err}");
    std::fs::write(dir.join("bad.routes"), "host0 host1 9\n").expect("write");
    let (ok, _, err) = map2topo(&dir, &["check", "t.map", "--routes", "bad.routes"]);
    assert!(
        !ok && err.contains("bad.routes:1: hop 0: switch `sw0` has 8 ports, no port 9"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_infiniband_fabric_becomes_a_map_with_the_routes_of_its_tables() {
    let dir = std::env::temp_dir().join(format!("map2topo-ib-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dump = fixtures.join("fabric.topo");
    let tables = fixtures.join("lfts.txt");
    let (ok, _, err) = map2topo(
        &dir,
        &[
            "ibnet",
            dump.to_str().expect("utf-8"),
            "--tables",
            tables.to_str().expect("utf-8"),
            "-o",
            "ib.map",
            "--routes",
            "ib.routes",
        ],
    );
    assert!(ok, "{err}");
    let routes = std::fs::read_to_string(dir.join("ib.routes")).expect("routes");
    // Four hosts (beta's two CA ports are two), every pair routed by the tables:
    // alpha (leaf a, IB port 1) to gamma (leaf b, IB port 1) leaves leaf a on IB port 8.
    assert_eq!(routes.lines().filter(|l| !l.starts_with('#')).count(), 12);
    assert!(
        routes.contains("\nH-0002c90000000200 H-0002c90000000400 7 0\n"),
        "{routes}"
    );
    let (ok, out, err) = map2topo(&dir, &["check", "ib.map", "--routes", "ib.routes"]);
    assert!(
        ok && out.contains("routes: 12 (every one reaches its destination)"),
        "{err}{out}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn routes_the_tables_cannot_give_name_the_tables_file_and_line() {
    let dir = std::env::temp_dir().join(format!("map2topo-ib-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dump = fixtures.join("fabric.topo");
    let tables = std::fs::read_to_string(fixtures.join("lfts.txt")).expect("tables");
    // Leaf b's section (line 20) without its entry for alpha's LID, 11.
    std::fs::write(dir.join("bad.lft"), tables.replace("0x000b 007\n", "")).expect("written");
    let (ok, _, err) = map2topo(
        &dir,
        &[
            "ibnet",
            dump.to_str().expect("utf-8"),
            "--tables",
            "bad.lft",
            "--routes",
            "ib.routes",
        ],
    );
    assert!(!ok);
    assert!(
        err.contains(
            "Error: bad.lft:20: S-0002c90000000101's table (the section here) has no entry for lid 11, which the \
             route from H-0002c90000000300[2] to H-0002c90000000200 needs"
        ),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn routes_the_myrinet_format_cannot_hold_leave_no_file_behind() {
    let dir = std::env::temp_dir().join(format!("map2topo-cli-turns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // One switch of 100 ports: host0 to host32 is a turn of 32, beyond a route byte's.
    let args = ["xgft", "1", "100", "1", "-o", "x.map", "--routes", "x.routes"];
    let (ok, _, err) = map2topo(&dir, &[&args[..], &["--format", "myrinet"]].concat());
    assert!(!ok);
    assert!(
        err.contains("Error: host0 to host32: hop 0: a turn of 32 does not fit a route byte"),
        "{err}"
    );
    assert!(!dir.join("x.routes").exists(), "the unfinished file is removed");
    // The canonical format holds them, written route by route.
    let (ok, _, err) = map2topo(&dir, &args);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(dir.join("x.routes")).expect("written");
    assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 100 * 99);
    assert!(text.contains("\nhost0 host32 32\n"), "{}", &text[..200]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inputs_that_could_exhaust_the_machine_are_refused_by_name() {
    let dir = std::env::temp_dir().join(format!("map2topo-bounded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let refused = |args: &[&str], expected: &str| {
        let (ok, _, err) = map2topo(&dir, args);
        assert!(!ok && err.contains(expected), "{args:?}: {err}");
    };
    let (ok, _, err) = map2topo(
        &dir,
        &["xgft", "2", "4,4", "1,4", "-o", "t.map", "--routes", "t.routes"],
    );
    assert!(ok, "{err}");
    // Special files: refused at once, a FIFO without waiting for a writer.
    let fifo = dir.join("fifo");
    let _ = std::fs::remove_file(&fifo);
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs")
            .success()
    );
    let special = "not a regular file; inputs are read from regular files only";
    refused(
        &["check", "/dev/zero"],
        &format!("map /dev/zero: it is a character device, {special}"),
    );
    refused(
        &["check", "t.map", "--routes", "fifo"],
        &format!("--routes fifo: it is a FIFO (named pipe), {special}"),
    );
    refused(
        &["convert", "t.map", "fifo", "--to", "myrinet"],
        "routes fifo: it is a FIFO",
    );
    refused(
        &["conflicts", "t.map", "t.routes", "fifo"],
        "pattern fifo: it is a FIFO",
    );
    refused(&["ibnet", "/dev/zero"], "dump /dev/zero: it is a character device");
    refused(&["ibnet", "fifo", "--tables", "fifo"], "dump fifo: it is a FIFO");
    refused(&["check", "."], "map .: it is a directory");
    // A map over its limit is refused unread (a sparse file: no disk is used).
    let big = std::fs::File::create(dir.join("big.map")).expect("created");
    big.set_len(256 * 1024 * 1024 + 1).expect("sized");
    refused(
        &["check", "big.map"],
        "map big.map: it holds 268435457 bytes, more than the 268435456 bytes (256 MiB) such a file may hold",
    );
    // A route line over its limit is refused having held at most the limit.
    std::fs::write(
        dir.join("long.routes"),
        format!("host0 host1 {}\n", "0 ".repeat(600_000)),
    )
    .expect("write");
    refused(
        &["check", "t.map", "--routes", "long.routes"],
        "long.routes:1: line 1 is longer than 1048576 bytes (1 MiB), the longest such a file may hold",
    );
    // Shapes too large are refused before anything is made.
    refused(
        &["hypercube", "4000000000"],
        "the network has more than 2^26 = 67,108,864 ports",
    );
    refused(
        &["torus", "8192,8192"],
        "the network has more than 2^26 = 67,108,864 ports",
    );
    refused(
        &["xgft", "2", "10000,10000", "1,10000"],
        "the tree has more than 2^26 = 67,108,864 ports",
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Errors print their message alone, even with `RUST_BACKTRACE=1` set: a backtrace is
/// for bugs.
#[test]
fn an_error_prints_no_backtrace_even_with_rust_backtrace_set() {
    let out = Command::new(env!("CARGO_BIN_EXE_map2topo"))
        .args(["check", "/nonexistent/vesper-no-such.map"])
        .env("RUST_BACKTRACE", "1")
        .env("RUST_LIB_BACKTRACE", "1")
        .output()
        .expect("map2topo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.starts_with("Error: ") && stderr.contains("vesper-no-such.map"),
        "{stderr}"
    );
    assert!(!stderr.to_lowercase().contains("backtrace"), "{stderr}");
}
