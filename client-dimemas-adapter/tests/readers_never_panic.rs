//! Nothing a trace or configuration file contains makes the readers (or the replay of
//! what they read) panic: they return an error naming the line instead.

use proptest::prelude::*;
use vesper_client_dimemas_adapter::replay::collective::Methods;
use vesper_client_dimemas_adapter::replay::{IdealBus, drain, replay};
use vesper_client_dimemas_adapter::{cfg, dim};

/// A file of its own holding `text`.
fn scratch(text: &str) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("vesper-prop-{}-{n}.dim", std::process::id()));
    std::fs::write(&path, text).expect("written");
    path
}

/// Lines that look like trace records, with fields that are sometimes wrong.
fn record() -> impl Strategy<Value = String> {
    let field = prop_oneof![
        (0u32..6).prop_map(|n| n.to_string()),
        Just("-1".to_string()),
        Just("1e300".to_string()),
        Just("0.000001".to_string()),
        Just("x".to_string()),
        Just(String::new()),
        // vesper's own events
        (70_000_101u32..70_000_104).prop_map(|n| n.to_string()),
        any::<u32>().prop_map(|n| n.to_string()),
    ];
    let op = prop_oneof![
        Just("1"),
        Just("2"),
        Just("3"),
        Just("10"),
        Just("20"),
        Just("d"),
        Just("s"),
        Just("9")
    ];
    (op, prop::collection::vec(field, 0..10)).prop_map(|(op, fields)| {
        let mut line = op.to_string();
        for f in fields {
            line.push(':');
            line.push_str(&f);
        }
        line
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn traces_of_record_like_lines(header in prop_oneof![
        Just("#DIMEMAS:\"t\":0:3(1,1,1),2"),
        Just("#DIMEMAS:\"t\":1,0:2(1,1),1"),
        Just("#DIMEMAS:\"t\":0:0(),0"),
        Just("#DIMEMAS:\"t\":0:2(2,3),1"),
        Just("#DIMEMAS:\"t"),
    ], lines in prop::collection::vec(record(), 0..30)) {
        let text = format!("{header}\n{}\n", lines.join("\n"));
        let mut analytic = Methods::default();
        analytic.choose("all=analytic").expect("valid");
        for methods in [Methods::default(), analytic] {
            let whole = dim::parse_with(&text, "p.dim", &methods);
            if let Ok(trace) = &whole {
                // Whatever was read replays, or is refused with an error.
                let _ = replay(&trace.workload, &mut IdealBus::new(1, 1, 0));
            }
            // Opened for streaming, the same trace reads the same (or is refused:
            // unmatched sends are found when it is opened, not by the replay).
            let path = scratch(&text);
            let opened = dim::open(&path, &methods);
            let _ = std::fs::remove_file(&path);
            match (opened, whole) {
                (Ok(mut opened), Ok(trace)) => {
                    prop_assert_eq!(drain(&mut opened.programs).map(|w| w.tasks), Ok(trace.workload.tasks));
                    prop_assert_eq!(opened.collectives, trace.collectives);
                }
                (Ok(_), Err(e)) => prop_assert!(false, "streamed but not read whole: {}", e),
                (Err(e), Ok(trace)) => {
                    prop_assert!(trace.workload.check_threads(&trace.threads).is_err(), "refused: {}", e)
                }
                (Err(_), Err(_)) => {}
            }
        }
    }

    #[test]
    fn traces_of_any_text(text in ".{0,400}") {
        let _ = dim::parse(&format!("#DIMEMAS:\"t\":0:2(1,1),1\n{text}"), "a.dim");
        let _ = dim::parse(&text, "b.dim");
    }

    #[test]
    fn configurations_of_any_text(text in "[\"{}\\[\\],;/* a-zA-Z0-9_.\\n-]{0,300}") {
        let _ = cfg::parse(&format!("#DIMEMAS_CONFIGURATION\n{text}"), "a.cfg");
        let _ = cfg::parse(&text, "b.cfg");
    }
}
