//! Nothing a map, route file, InfiniBand dump or forwarding table contains makes the
//! readers panic: they return an error naming the line instead. And whatever a map
//! reader accepts builds (or is refused by) the simulator without a panic.

use proptest::prelude::*;
use vesper_map2topo::routes::{read_any, read_any_from, read_canonical, read_myrinet};
use vesper_map2topo::{NamedTopology, read_forwarding_tables, read_ibnetdiscover, read_map};
use vesper_netmodels::{LinkParams, NetworkBuilder, Xgft};

/// Words that map and dump lines are made of, right and wrong.
fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("s".to_string()),
        Just("h".to_string()),
        Just("-".to_string()),
        Just("\"sw0\"".to_string()),
        Just("\"sw1\"".to_string()),
        Just("\"n0\"".to_string()),
        Just("\"n1\"".to_string()),
        Just("host0".to_string()),
        Just("\"host3\"".to_string()),
        Just("\"unclosed".to_string()),
        Just("type".to_string()),
        Just("Switch".to_string()),
        Just("Ca".to_string()),
        Just("[1]".to_string()),
        Just("\"S-1\"[2]".to_string()),
        Just("\"H-1\"[1](abc)".to_string()),
        Just("#".to_string()),
        Just("lid".to_string()),
        Just("0x81".to_string()),
        Just("Unicast lids [0x0-0x3] of switch Lid 1 guid 0x1 (x):".to_string()),
        (0u32..9).prop_map(|n| n.to_string()),
        any::<u32>().prop_map(|n| n.to_string()),
        Just("-3".to_string()),
    ]
}

fn text() -> impl Strategy<Value = String> {
    let line = prop::collection::vec(word(), 0..7).prop_map(|w| w.join(" "));
    prop::collection::vec(line, 0..24).prop_map(|lines| lines.join("\n"))
}

fn tree() -> NamedTopology {
    NamedTopology::with_default_names(Xgft::kary_ntree(2, 2).expect("valid").topology(LinkParams::default()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(800))]

    #[test]
    fn map_reader_never_panics(text in text()) {
        if let Ok(rails) = read_map("p.map", &text, LinkParams::default()) {
            for rail in rails {
                let _ = NetworkBuilder::new(rail.topology).build();
            }
        }
    }

    #[test]
    fn infiniband_readers_never_panic(text in text()) {
        if let Ok(mut fabric) = read_ibnetdiscover("p.topo", &text, LinkParams::default())
            && let Ok(tables) = read_forwarding_tables("p.lft", &text)
        {
            let _ = fabric.attach_forwarding("p.lft", &tables);
            let _ = vesper_map2topo::generate::forwarding_routes(&fabric);
        }
        let _ = read_forwarding_tables("p.lft", &text);
    }

    #[test]
    fn route_readers_never_panic(text in text()) {
        let net = tree();
        let _ = read_canonical("p.routes", &text, &net);
        let _ = read_myrinet("p.routes", &text, &net);
        // A line at a time, as the simulator reads a file, gives what the text gives.
        let from_reader = read_any_from("p.routes", text.as_bytes(), &net);
        prop_assert_eq!(from_reader, read_any("p.routes", &text, &net));
    }

    #[test]
    fn route_files_of_any_bytes_are_refused_by_a_line_of_theirs(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let net = tree();
        // (Not UTF-8, say: the line that is not is named.)
        if let Err(e) = read_any_from("p.routes", bytes.as_slice(), &net) {
            let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
            prop_assert!(e.line <= lines, "{} of {} lines", e.line, lines);
        }
    }
}
