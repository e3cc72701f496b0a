//! Nothing a network file says makes its reading, or the building of the network it
//! describes, panic: a mistake is an error naming the field.

use proptest::prelude::*;
use vesper_server::description::parse;

/// `key = value` lines from the file's vocabulary, with values right and wrong.
fn line() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("kind"),
        Just("hosts"),
        Just("nodes_per_host"),
        Just("m"),
        Just("w"),
        Just("k"),
        Just("n"),
        Just("k_up"),
        Just("dims"),
        Just("dimensions"),
        Just("hosts_per_switch"),
        Just("routing"),
        Just("switch"),
        Just("speedup"),
        Just("flit_bytes"),
        Just("buffer_bytes"),
        Just("bubble"),
        Just("packet_payload_bytes"),
        Just("packet_header_bytes"),
        Just("link_bandwidth_mbs"),
        Just("link_latency_ns"),
        Just("bandwidth_mbps"),
        Just("rail_policy"),
        Just("rail_threshold_bytes"),
        Just("seed"),
        Just("preset"),
    ];
    let value = prop_oneof![
        Just("\"crossbar\"".to_string()),
        Just("\"xgft\"".to_string()),
        Just("\"kary-ntree\"".to_string()),
        Just("\"torus\"".to_string()),
        Just("\"mesh\"".to_string()),
        Just("\"hypercube\"".to_string()),
        Just("\"ideal\"".to_string()),
        Just("\"multi-rail\"".to_string()),
        Just("\"wormhole\"".to_string()),
        Just("\"cioq\"".to_string()),
        Just("\"d-mod-k\"".to_string()),
        Just("\"random\"".to_string()),
        Just("\"striped\"".to_string()),
        Just("\"fat-tree\"".to_string()),
        Just("true".to_string()),
        (0u32..6).prop_map(|n| n.to_string()),
        any::<u32>().prop_map(|n| n.to_string()),
        Just("-1".to_string()),
        Just("1e300".to_string()),
        prop::collection::vec(0u32..5, 0..4).prop_map(|v| format!("{v:?}")),
        Just("[4294967295, 4294967295]".to_string()),
    ];
    (key, value).prop_map(|(k, v)| format!("{k} = {v}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn network_files_never_panic(lines in prop::collection::vec(line(), 0..8)) {
        let text = format!("[network]\n{}\n", lines.join("\n"));
        if let Ok(network) = parse("p.toml", &text) {
            // Only small networks are built: a huge one is a valid (slow) description.
            if network.hosts <= 4096 {
                let _ = network.build();
            }
        }
    }
}
