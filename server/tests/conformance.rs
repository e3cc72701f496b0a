//! Dimemas conformance: every case of the two suites Dimemas 5.5.0 itself predicted
//! (`../shared/conformance/dimemas/`, which varies the network, and
//! `../shared/conformance/dimemas-wild/`, which varies the configuration file as users
//! write it, beside the repository; see their READMEs) replayed by
//! `vesper run TRACE --config CFG --network ideal`, served and `--no-server`; each
//! predicted execution time must be Dimemas's to the nanosecond. Dimemas's own shipped
//! `cfgs/ideal.cfg` is replayed as it ships, too.
//!
//! Dimemas prints its time in seconds with nine decimals (rounded to the nanosecond),
//! so a case is exact when vesper's time, in picoseconds, is within half a nanosecond
//! of the printed one. A failure lists every mismatch in one table.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A suite's folder: `shared/conformance/NAME` beside the repository's root.
fn suite(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/conformance")
        .join(name)
}

/// One row of `expected.tsv`.
#[derive(Debug, Clone)]
struct Case {
    trace: String,
    config: String,
    /// Dimemas's flags: empty, `-S 4096` or `-F`
    flags: String,
    /// Dimemas's printed execution time \[ns\]
    expected_ns: u64,
}

/// `seconds` (a decimal of at most nine places, as Dimemas prints it) in nanoseconds.
fn ns_of_printed_seconds(seconds: &str) -> Option<u64> {
    let (whole, fraction) = seconds.split_once('.').unwrap_or((seconds, ""));
    if fraction.len() > 9 {
        return None;
    }
    let whole: u64 = whole.parse().ok()?;
    let fraction: u64 = format!("{fraction:0<9}").parse().ok()?;
    whole.checked_mul(1_000_000_000)?.checked_add(fraction)
}

fn cases(dir: &Path) -> Vec<Case> {
    let table = dir.join("expected.tsv");
    let text = std::fs::read_to_string(&table).unwrap_or_else(|e| {
        panic!(
            "the Dimemas conformance suite is expected at {} (shared/ beside the repository): {e}",
            table.display()
        )
    });
    text.lines()
        .enumerate()
        .skip(1)
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| {
            let fields: Vec<&str> = line.split('\t').collect();
            let [trace, config, flags, time] = fields[..] else {
                panic!("{}: line {}: expected 4 tab-separated fields", table.display(), n + 1);
            };
            Case {
                trace: trace.to_string(),
                config: config.to_string(),
                flags: flags.to_string(),
                expected_ns: ns_of_printed_seconds(time)
                    .unwrap_or_else(|| panic!("{}: line {}: time '{time}'", table.display(), n + 1)),
            }
        })
        .collect()
}

/// vesper's predicted time for `case` \[ps\], or what went wrong.
fn vesper_ps(dir: &Path, case: &Case, served: bool) -> Result<u64, String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vesper"));
    command
        .arg("run")
        .arg(dir.join(&case.trace))
        .arg("--config")
        .arg(dir.join(&case.config))
        .args(["--network", "ideal", "--json", "--client-spin-us", "0"]);
    match case.flags.as_str() {
        "" => {}
        "-F" => {
            command.arg("--all-eager");
        }
        flags => match flags.strip_prefix("-S ") {
            Some(limit) => {
                command.args(["--eager-limit", limit]);
            }
            None => return Err(format!("unknown Dimemas flags '{flags}'")),
        },
    }
    if !served {
        command.arg("--no-server");
    }
    let out = command.output().map_err(|e| format!("cannot run vesper: {e}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!("failed: {}", stderr.lines().last().unwrap_or("")));
    }
    let result: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("not a JSON result: {e}"))?;
    let ns = result["predicted_ns"]
        .as_f64()
        .ok_or_else(|| "no predicted_ns in the result".to_string())?;
    Ok((ns * 1000.0).round() as u64)
}

/// Runs every case of the suite `name` (which holds `count` cases), served and
/// without a server, two at a time, and fails with a table of every mismatch.
fn every_case_is_exact(name: &str, count: usize) {
    let dir = suite(name);
    let cases = cases(&dir);
    assert_eq!(cases.len(), count, "the suite {name} holds {count} cases");
    let runs: Vec<(Case, bool)> = cases
        .iter()
        .flat_map(|c| [(c.clone(), true), (c.clone(), false)])
        .collect();
    // Two workers: the machines CI runs on have two cores.
    let results: Vec<(Case, bool, Result<u64, String>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let (dir, runs) = (&dir, &runs);
                scope.spawn(move || {
                    runs.iter()
                        .skip(w)
                        .step_by(2)
                        .map(|(case, served)| (case.clone(), *served, vesper_ps(dir, case, *served)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a worker panicked"))
            .collect()
    });
    let mut mismatches = Vec::new();
    for (case, served, result) in &results {
        let expected_ps = case.expected_ns * 1000;
        let verdict = match result {
            Ok(ps) if ps.abs_diff(expected_ps) <= 500 => continue,
            Ok(ps) => format!(
                "{:>16.3} µs  ({:+.3} µs)",
                *ps as f64 / 1e6,
                (*ps as f64 - expected_ps as f64) / 1e6
            ),
            Err(e) => e.clone(),
        };
        mismatches.push(format!(
            "{:<28} {:<34} {:<8} {:<10} {:>12.3} µs  {verdict}",
            case.trace.trim_start_matches("traces/"),
            case.config.trim_start_matches("configs/"),
            case.flags,
            if *served { "served" } else { "no-server" },
            case.expected_ns as f64 / 1e3,
        ));
    }
    mismatches.sort();
    assert!(
        mismatches.is_empty(),
        "{} of {} runs differ from Dimemas:\n{:<28} {:<34} {:<8} {:<10} {:>15}  vesper\n{}",
        mismatches.len(),
        results.len(),
        "trace",
        "configuration",
        "flags",
        "mode",
        "Dimemas",
        mismatches.join("\n")
    );
}

#[test]
fn every_case_of_the_dimemas_suite_is_exact_served_and_without_a_server() {
    every_case_is_exact("dimemas", 65);
}

#[test]
fn every_case_of_the_wild_suite_is_exact_served_and_without_a_server() {
    every_case_is_exact("dimemas-wild", 79);
}

/// Dimemas's own `cfgs/ideal.cfg`, as it ships (its comment block documents every
/// record), replays the suite's traces to Dimemas's times for that configuration, and a
/// trace of ours to what its model gives.
#[test]
fn dimemas_s_shipped_ideal_configuration_works_as_shipped() {
    let dir = suite("dimemas-wild");
    let shipped = "shipped/ideal.cfg";
    let text = std::fs::read_to_string(dir.join(shipped)).expect("the shipped ideal.cfg");
    assert!(text.contains("RECORDS DEFINITION"), "the file as Dimemas ships it");
    let mut checked = 0;
    for case in cases(&dir)
        .into_iter()
        .filter(|c| c.config.ends_with("__shipped_ideal.cfg"))
    {
        let case = Case {
            config: shipped.into(),
            ..case
        };
        for served in [true, false] {
            let ps = vesper_ps(&dir, &case, served).unwrap_or_else(|e| panic!("{}: {e}", case.trace));
            assert!(
                ps.abs_diff(case.expected_ns * 1000) <= 500,
                "{} with {shipped}: {ps} ps, Dimemas {} ns",
                case.trace,
                case.expected_ns
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 10, "five traces, served and not");
    // examples/pingpong.dim: with instantaneous links and no latency, only its bursts
    // take time: task 0 computes 1.5 µs, waits for task 1's 2 µs and reply, then 0.3 µs.
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let ours = Case {
        trace: examples.join("pingpong.dim").display().to_string(),
        config: dir.join(shipped).display().to_string(),
        flags: String::new(),
        expected_ns: 2_300,
    };
    for served in [true, false] {
        assert_eq!(vesper_ps(Path::new("/"), &ours, served), Ok(2_300_000));
    }
}

/// Dimemas 5.5.0 crashes on an explicit "mapping information" record, so it has no
/// reference time: vesper keeps its reading (task i on the i-th node listed), tested
/// here against the predefined mappings it spells out, whose times are Dimemas's.
#[test]
fn an_explicit_mapping_replays_as_the_predefined_one_it_spells_out() {
    let dir = suite("dimemas-wild");
    let scratch = std::env::temp_dir().join(format!("vesper-explicit-mapping-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("a scratch folder");
    for (kind, node_of) in [
        ("interleaved_4", (|t: usize| t % 8) as fn(usize) -> usize),
        ("fill_nodes_4", |t: usize| t / 4),
    ] {
        let case = cases(&dir)
            .into_iter()
            .find(|c| c.config == format!("configs/pairs32_16k_x6__{kind}.cfg"))
            .expect("the case");
        let text = std::fs::read_to_string(dir.join(&case.config)).expect("its configuration");
        let nodes: Vec<String> = (0..32).map(|t| node_of(t).to_string()).collect();
        let explicit = format!(
            "\"mapping information\" {{\"pairs32_16k_x6.dim\", 32, [32] {{{}}}}};;",
            nodes.join(",")
        );
        let predefined = text
            .lines()
            .find(|l| l.starts_with("\"predefined mapping information\""))
            .expect("a predefined mapping");
        let path = scratch.join(format!("{kind}.cfg"));
        std::fs::write(&path, text.replace(predefined, &explicit)).expect("written");
        let spelled = Case {
            config: path.display().to_string(),
            ..case.clone()
        };
        for served in [true, false] {
            let ps = vesper_ps(&dir, &spelled, served).unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert!(
                ps.abs_diff(case.expected_ns * 1000) <= 500,
                "{kind} spelled out: {ps} ps, Dimemas {} ns",
                case.expected_ns
            );
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn printed_seconds_read_as_nanoseconds() {
    assert_eq!(ns_of_printed_seconds("0.000132188"), Some(132_188));
    assert_eq!(ns_of_printed_seconds("0.06"), Some(60_000_000));
    assert_eq!(ns_of_printed_seconds("2"), Some(2_000_000_000));
    assert_eq!(ns_of_printed_seconds("0.0000000001"), None);
}
