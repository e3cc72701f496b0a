//! The same replays on every preset over TCP: every message arrives, a contended network
//! never predicts earlier than the contention-free bound, and a second run on a fresh
//! server gives the same prediction to the picosecond (determinism per topology), for
//! the seed-004 workloads at full size and for every synthetic workload, small.

use vesper_client_dimemas_adapter::replay::Workload;
use vesper_server::description::{KindName, RoutingName};
use vesper_server::preset::{self, PRESETS};
use vesper_tests::{every_synthetic_workload, replay_on};

#[test]
fn every_preset_replays_the_same_workloads_deterministically() {
    let workloads = [Workload::all_to_all(16, 32_679), Workload::wrf(48, 16, 5000)];
    for preset in PRESETS {
        let mut specs = vec![preset::spec(preset.name).expect("a preset")];
        if matches!(
            specs[0].kind,
            Some(KindName::Xgft | KindName::KaryNtree | KindName::MultiRail)
        ) {
            // Trees also under source routing.
            let mut s_mod_k = specs[0].clone();
            s_mod_k.routing = Some(RoutingName::SModK);
            specs.push(s_mod_k);
        }
        for spec in &specs {
            for workload in &workloads {
                let network = spec.resolve().expect("a valid network");
                let first = replay_on(network.clone(), workload);
                let again = replay_on(network, workload);
                assert_eq!(first, again, "{} {:?}: {}", preset.name, spec.routing, workload.name);
                // Every task receives at least 15 messages of 32,679 bytes (or 1–2
                // of 5000) through a 250 MB/s link per rail: a lower bound at 4 ns per
                // byte.
                let rails = spec.rails.as_ref().map_or(1, Vec::len) as u64;
                let bytes = if workload.name.starts_with("all") {
                    15 * 32_679
                } else {
                    5000
                };
                assert!(
                    first.predicted >= bytes * 4_000 / rails,
                    "{}: {}",
                    preset.name,
                    first.predicted
                );
            }
        }
    }
}

/// Every synthetic workload on every preset, small (10,000-byte messages of three
/// packets, at most 27 tasks) so that the 98 pairs run twice in seconds in a debug
/// build: the two runs give the same prediction to the picosecond, every message
/// arrives, and every task's time is computing, communicating or waiting.
#[test]
fn every_synthetic_workload_replays_on_every_preset_deterministically() {
    let workloads = every_synthetic_workload(10_000);
    assert_eq!(workloads.len(), 14, "one of each kind vesper run names");
    let mut pairs = 0;
    for preset in PRESETS {
        let network = preset::spec(preset.name)
            .expect("a preset")
            .resolve()
            .expect("a valid network");
        for workload in &workloads {
            let first = replay_on(network.clone(), workload);
            let again = replay_on(network.clone(), workload);
            assert_eq!(first, again, "{}: {}", preset.name, workload.name);
            let sends = workload.check().expect("balanced") as u64;
            assert_eq!(first.messages, sends, "{}: {}", preset.name, workload.name);
            assert!(first.predicted > 0, "{}: {}", preset.name, workload.name);
            for t in &first.tasks {
                assert_eq!(
                    t.compute + t.communication + t.waiting,
                    t.end,
                    "{}: {}: {t:?}",
                    preset.name,
                    workload.name
                );
            }
            pairs += 1;
        }
    }
    assert_eq!(pairs, PRESETS.len() * workloads.len());
}
