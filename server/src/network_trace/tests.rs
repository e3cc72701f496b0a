use std::io::Read;
use std::time::Instant;

use vesper_client_dimemas_adapter::replay::{Cursor, ReplayOptions, Workload};
use vesper_netmodels::trace::check::check;

use super::*;
use crate::config::{FabricConfig, SwitchedConfig};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vesper-network-trace-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

fn network() -> NetworkConfig {
    NetworkConfig {
        hosts: 4,
        fabric: FabricConfig::Switched(SwitchedConfig::crossbar(4, Default::default())),
        ..NetworkConfig::default()
    }
}

fn args(file: &Path) -> TraceArgs {
    TraceArgs {
        file: Some(file.to_path_buf()),
        trace_quantum: 512,
        trace_end_to_end: true,
        ..TraceArgs::default()
    }
}

/// Replays an all-to-all of 4 tasks over a crossbar, tracing as `trace` says.
fn replay(trace: Option<TraceConfig>) -> crate::report::Report {
    let workload = Workload::all_to_all(4, 5000);
    let programs = Box::new(Cursor::new(workload));
    let config = crate::config::ServerConfig {
        network: network(),
        trace,
        ..crate::config::ServerConfig::default()
    };
    let (_, report) =
        crate::replay_job::over_server(config, programs, ReplayOptions::default(), Duration::ZERO, |_| {})
            .expect("replayed");
    report
}

fn gunzip(path: &Path) -> String {
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(File::open(path).expect("written"))
        .read_to_string(&mut text)
        .expect("gzip");
    text
}

#[test]
fn a_gzip_trace_checks_and_repeats_byte_for_byte() {
    let dir = scratch("gzip");
    let file = dir.join("net.prv.gz");
    let config = args(&file).config(SERVE_DATE).expect("valid");
    let report = replay(config.clone());
    let first = std::fs::read(&file).expect("written");
    let prv = gunzip(&file);
    let pcf = std::fs::read_to_string(dir.join("net.pcf")).expect("written");
    let row = std::fs::read_to_string(dir.join("net.row")).expect("written");
    let checked = check(&prv, &pcf, &row).unwrap_or_else(|e| panic!("{e}\n{prv}"));
    // 4 hosts and the switch; 12 messages × (2 links + end to end).
    assert_eq!((checked.tasks, checked.threads), (5, 8));
    assert_eq!(checked.communications, 36);
    let summary = report.simulation.network_trace.expect("traced");
    assert_eq!(summary.communications, 36);
    assert_eq!(summary.end_ns, checked.end_ns);
    assert!(!dir.join("net.prv.gz.part").exists());
    replay(config);
    assert_eq!(std::fs::read(&file).expect("written again"), first);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_stream_carries_the_same_records_as_the_file() {
    let dir = scratch("stream");
    let file = dir.join("net.prv");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = listener.local_addr().expect("bound").to_string();
    let collector = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().expect("connected");
        let mut text = String::new();
        socket.read_to_string(&mut text).expect("read");
        text
    });
    let traced = TraceArgs {
        trace_stream: Some(addr),
        ..args(&file)
    };
    replay(traced.config(SERVE_DATE).expect("valid"));
    let streamed = collector.join().expect("collected");
    let prv = std::fs::read_to_string(&file).expect("written");
    let (header, records) = prv.split_once('\n').expect("a header");
    // The topology comes right after the first header, framed, as the file has it.
    let topology = std::fs::read_to_string(dir.join("net.topology")).expect("written");
    let (first, rest) = streamed.split_once('\n').expect("a first header");
    let streamed = format!(
        "{first}\n{}",
        rest.strip_prefix(&stream_topology(&topology))
            .expect("the topology after the first header")
    );
    assert!(topology.starts_with("{\"vesper_topology\":1,\n\"shape\":{\"kind\":\"crossbar\""));
    let lines: Vec<&str> = streamed.lines().collect();
    assert!(
        lines[0].starts_with("#Paraver (01/01/2026 at 00:00):0_ns:0:1:5("),
        "{}",
        lines[0]
    );
    // The .prv text ends at the second header; the .pcf and .row follow, framed.
    let end = 1 + lines[1..]
        .iter()
        .position(|l| l.starts_with("#Paraver"))
        .expect("a final header");
    assert_eq!(lines[end], header);
    assert_eq!(lines[1..end].join("\n") + "\n", records);
    let pcf = std::fs::read_to_string(dir.join("net.pcf")).expect("written");
    let row = std::fs::read_to_string(dir.join("net.row")).expect("written");
    let records = (end - 1) as u64;
    let (_, trailer) = streamed.split_once(&format!("{header}\n")).expect("the final header");
    assert_eq!(trailer, stream_trailer(&pcf, &row, records));
    assert!(trailer.starts_with(&format!("#vesper-pcf {}\nDEFAULT_OPTIONS\n", pcf.len())));
    assert!(trailer.ends_with(&format!("\n#vesper-end {records}\n")));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_stalled_collector_costs_one_wait_then_records_are_dropped() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = listener.local_addr().expect("bound").to_string();
    // Accepted, never read.
    let holder = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
    let stop = Arc::new(AtomicBool::new(false));
    let mut stream =
        StreamTarget::open(&addr, Duration::from_millis(50), StreamConnect::AtSetup, &stop).expect("connected");
    let line = [b'x'; 99].iter().chain(b"\n").copied().collect::<Vec<u8>>();
    let started = Instant::now();
    for _ in 0..200_000 {
        stream.send(&line, 1);
    }
    stream.close();
    // 20 MB could never fit the queue and the socket buffers.
    let report = stream.status().report();
    assert_eq!(report.records, 200_000);
    assert_eq!(report.sent_records + report.dropped_records, 200_000);
    assert!(report.dropped_records > 50_000, "{report:?}");
    let error = report.error.unwrap_or_default();
    assert!(error.starts_with("the collector stopped reading: "), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    drop(holder.join());
}

#[test]
fn flags_are_checked() {
    let cases = [
        (
            TraceArgs {
                file: Some("net.txt".into()),
                ..TraceArgs::default()
            },
            "--trace net.txt: expected a file name ending in .prv or .prv.gz",
        ),
        (
            TraceArgs {
                trace_devices: Some("sw*".into()),
                ..TraceArgs::default()
            },
            "--trace-devices shapes the network trace: give --trace FILE.prv or --trace-stream ADDR too",
        ),
        (
            TraceArgs {
                trace_quantum: 0,
                ..args(Path::new("n.prv"))
            },
            "--trace-quantum 0: expected a backlog quantum of at least 1 byte",
        ),
        (
            TraceArgs {
                trace_window: Some("9:3".into()),
                ..args(Path::new("n.prv"))
            },
            "--trace-window `9:3`: expected START_NS:END_NS with START < END (either may be left out)",
        ),
        (
            TraceArgs {
                trace_devices: Some("sw,,x".into()),
                ..args(Path::new("n.prv"))
            },
            "--trace-devices empty item in `sw,,x`: expected name patterns or level=N[-M], separated by commas",
        ),
        (
            TraceArgs {
                trace_stream_wait_ms: u64::MAX,
                ..TraceArgs::default()
            },
            "--trace-stream-wait-ms 18446744073709551615: at most 3600000 (an hour)",
        ),
        (
            TraceArgs {
                trace_stream_connect_ms: MAX_STREAM_WAIT_MS + 1,
                ..args(Path::new("n.prv"))
            },
            "--trace-stream-connect-ms 3600001: at most 3600000 (an hour)",
        ),
    ];
    for (args, message) in cases {
        assert_eq!(args.config(SERVE_DATE).expect_err(message).to_string(), message);
    }
    let nowhere = args(Path::new("/nonexistent-vesper-dir/n.prv")).config(SERVE_DATE);
    assert_eq!(
        nowhere.expect_err("refused").to_string(),
        "--trace /nonexistent-vesper-dir/n.prv: expected an existing directory, /nonexistent-vesper-dir is not one"
    );
    let no_server = args(Path::new("n.prv")).config_for_run(SERVE_DATE, None, true);
    assert_eq!(
        no_server.expect_err("refused").to_string(),
        "--trace and --trace-stream need the server's network; drop --no-server"
    );
    let stream_error = |addr: &str| {
        let stream = TraceArgs {
            trace_stream: Some(addr.into()),
            ..TraceArgs::default()
        };
        stream.config(SERVE_DATE).expect_err("refused").to_string()
    };
    assert_eq!(
        stream_addr("collector:9000").expect("a host name"),
        StreamAddr::Host("collector".into())
    );
    assert_eq!(
        stream_addr("[::1]:9000").expect("an address"),
        StreamAddr::Socket("[::1]:9000".parse().expect("an address"))
    );
    assert_eq!(
        stream_addr("/tmp/trace.fifo").expect("a path"),
        StreamAddr::Pipe("/tmp/trace.fifo".into())
    );
    for addr in ["localhost", "collector:port", ":9000"] {
        assert_eq!(
            stream_error(addr),
            format!(
                "--trace-stream {addr}: expected HOST:PORT (127.0.0.1:9000, collector:9000) or the path of a \
                 named pipe"
            )
        );
    }
    let dir = scratch("nothing");
    let nothing = TraceArgs {
        trace_devices: Some("router*".into()),
        ..args(&dir.join("n.prv"))
    };
    let config = nothing.config(SERVE_DATE).expect("valid flags");
    assert!(
        build(
            &network(),
            config.as_ref(),
            &crate::config::Split::Threads(1),
            &Arc::new(AtomicBool::new(false))
        )
        .expect_err("refused")
        .to_string()
        .starts_with("--trace-devices: the device selection matches no device of the network")
    );
    assert_eq!(
        std::fs::read_dir(&dir).map(|d| d.count()).ok(),
        Some(0),
        "no spool left"
    );
    let _ = std::fs::remove_dir_all(dir);
}
