use std::time::Instant;

use vesper_netmodels::{NetworkBuilder, Torus, Xgft};

use super::*;

/// The hand-written example of the formats spec, section 3.
const EXAMPLE: &str = r#"s - "sw0" 8
0 h - "n0" 0
1 h - "n1" 0
7 s - "sw1" 4

s - "sw1" 8
2 h - "n2" 0
4 s - "sw0" 7

h - "n0" 1
0 s - "sw0" 0
address 0060dd7f0001

h - "n1" 1
0 s - "sw0" 1

h - "n2" 1
0 s - "sw1" 2
"#;

const TWO_RAILS: &str = r#"s - "a" 4
0 h - "n0" 0
1 h - "n1" 0

s - "b" 4
0 h - "n0" 1
1 h - "n1" 1

h - "n0" 2
0 s - "a" 0
1 s - "b" 0

h - "n1" 2
0 s - "a" 1
1 s - "b" 1
"#;

fn host(h: u32) -> Endpoint {
    Endpoint {
        device: Device::Host(HostId(h)),
        port: 0,
    }
}

fn switch(s: u32, port: u32) -> Endpoint {
    Endpoint {
        device: Device::Switch(SwitchId(s)),
        port,
    }
}

fn cable(a: Endpoint, b: Endpoint) -> Cable {
    Cable {
        a,
        b,
        link: LinkParams::default(),
    }
}

fn read(text: &str) -> Vec<NamedTopology> {
    match read_map("test.map", text, LinkParams::default()) {
        Ok(rails) => rails,
        Err(e) => panic!("{e}"),
    }
}

/// The error message reading `text` as `bad.map` gives.
fn error(text: &str) -> String {
    match read_map("bad.map", text, LinkParams::default()) {
        Ok(_) => "no error".to_string(),
        Err(e) => e.to_string(),
    }
}

/// The cables with each end pair ordered (a < b), sorted: a topology's cable set.
fn canonical(topology: &Topology) -> Topology {
    let mut t = topology.clone();
    for c in &mut t.cables {
        if c.b < c.a {
            std::mem::swap(&mut c.a, &mut c.b);
        }
    }
    t.cables.sort_by_key(|c| (c.a, c.b));
    t.routing = Routing::ShortestPath;
    t
}

#[test]
fn reads_the_spec_example() {
    let rails = read(EXAMPLE);
    assert_eq!(rails.len(), 1);
    let named = &rails[0];
    assert_eq!(named.host_names, ["n0", "n1", "n2"]);
    assert_eq!(named.switch_names, ["sw0", "sw1"]);
    assert_eq!(named.switch_types, [None, None]);
    let expected = Topology {
        hosts: 3,
        switch_ports: vec![8, 8],
        // each cable at its earlier port line, that line's node first
        cables: vec![
            cable(switch(0, 0), host(0)),
            cable(switch(0, 1), host(1)),
            cable(switch(0, 7), switch(1, 4)),
            cable(switch(1, 2), host(2)),
        ],
        routing: Routing::ShortestPath,
    };
    assert_eq!(named.topology, expected);
    assert!(NetworkBuilder::new(named.topology.clone()).build().is_ok());
}

#[test]
fn keeps_attributes_and_models() {
    let map = MapFile::parse("test.map", EXAMPLE).expect("parses");
    assert_eq!(
        map.nodes[2].attributes,
        [("address".to_string(), "0060dd7f0001".to_string())]
    );
    assert_eq!(map.nodes[2].line, 10);
    assert_eq!(map.nodes[0].links[2].line, 4);
    let typed = EXAMPLE
        .replacen(
            "7 s - \"sw1\" 4\n",
            "7 s - \"sw1\" 4\ntype xbar32\nnumber 3\nfirmware v2  beta \n",
            1,
        )
        .replacen("2 h - \"n2\" 0\n", "2 h - \"n2\" 0\ntype\n", 1);
    let map = MapFile::parse("test.map", &typed).expect("parses");
    assert_eq!(map.nodes[0].attribute("firmware"), Some("v2  beta"));
    assert_eq!(map.nodes[0].attribute("number"), Some("3"));
    assert_eq!(map.nodes[1].attribute("type"), Some(""));
    let rails = map.rails(LinkParams::default()).expect("valid");
    assert_eq!(rails[0].switch_types, [Some("xbar32".to_string()), None]);
}

#[test]
fn reads_tolerantly() {
    // CRLF, comments, odd tokens, no token, tabs, a missing blank line between blocks,
    // names with spaces, blocks in any order, a port line after an attribute.
    let text = "# written by hand\r\n\
                h x \"node zero\" 1\r\n\
                0 s \"the switch\" 3\r\n\
                \r\n\
                s ? \"the switch\"\t4\r\n\
                hostType 1\r\n\
                3\th - \"node zero\" 0\r\n\
                1 h - \"node one\" 0\r\n\
                h - \"node one\" 1\r\n\
                \t0 S - \"the switch\" 1\r\n";
    let rails = read(text);
    assert_eq!(rails[0].host_names, ["node zero", "node one"]);
    assert_eq!(rails[0].switch_names, ["the switch"]);
    assert_eq!(
        rails[0].topology.cables,
        [cable(host(0), switch(0, 3)), cable(switch(0, 1), host(1))]
    );
}

#[test]
fn malformed_maps_name_file_line_and_rule() {
    let cases: Vec<(String, &str)> = vec![
        (
            EXAMPLE.replace("7 s - \"sw1\" 4", "7 s - \"sw1\" four"),
            r#"bad.map:4: column 13: expected a port number (0 to 4294967295), found "four""#,
        ),
        (
            EXAMPLE.replace("s - \"sw1\" 8", "x - \"sw1\" 8"),
            r#"bad.map:6: column 1: expected a node header (s or h, a token, a quoted name, a port count), found "x - \"sw1\" 8""#,
        ),
        (
            EXAMPLE.replace("1 h - \"n1\" 0", "1 h - \"n1 0"),
            r#"bad.map:3: column 12: expected a closing quote, found "end of line""#,
        ),
        (
            EXAMPLE.replace("1 h - \"n1\" 0", "1 q - \"n1\" 0"),
            r#"bad.map:3: column 3: expected s or h, found "q - \"n1\" 0""#,
        ),
        (
            EXAMPLE.replace("h - \"n2\" 1", "h - \"sw0\" 1"),
            r#"bad.map:17: duplicate name: "sw0" already has a block at line 1"#,
        ),
        (
            EXAMPLE.replace("s - \"sw1\" 8", "s - \"sw1\" 4"),
            r#"bad.map:8: port beyond nports: "sw1" has 4 ports (0 to 3), no port 4"#,
        ),
        (
            EXAMPLE.replace("1 h - \"n1\" 0", "1 h - \"n1\" 0\n1 h - \"n2\" 0"),
            r#"bad.map:4: port used twice: "sw0" port 1 is already connected at line 3"#,
        ),
        (
            EXAMPLE.replace("7 s - \"sw1\" 4", "7 s - \"sw9\" 4"),
            r#"bad.map:4: unknown neighbour: "sw0" port 7 leads to "sw9", which has no block"#,
        ),
        (
            EXAMPLE.replace("0 h - \"n0\" 0", "0 s - \"n0\" 0"),
            r#"bad.map:2: wrong neighbour kind: "sw0" port 0 leads to switch "n0", but "n0" is a host (line 10)"#,
        ),
        (
            EXAMPLE.replace("7 s - \"sw1\" 4", "7 s - \"sw1\" 4\n3 s - \"sw0\" 3"),
            r#"bad.map:5: self link: "sw0" port 3 leads to itself"#,
        ),
        (
            EXAMPLE.replace("4 s - \"sw0\" 7\n", ""),
            r#"bad.map:4: asymmetric link: "sw0" port 7 leads to "sw1" port 4, but "sw1" port 4 is not connected (block at line 6)"#,
        ),
        (
            EXAMPLE.replace("4 s - \"sw0\" 7", "4 s - \"sw0\" 6"),
            r#"bad.map:4: asymmetric link: "sw0" port 7 leads to "sw1" port 4, but "sw1" port 4 leads to "sw0" port 6 (line 8)"#,
        ),
        (
            EXAMPLE.replace("0 s - \"sw0\" 1", "0 s - \"sw0\" 0"),
            r#"bad.map:3: asymmetric link: "sw0" port 1 leads to "n1" port 0, but "n1" port 0 leads to "sw0" port 0 (line 15)"#,
        ),
        (
            EXAMPLE.replace("s - \"sw1\" 8", "s - \"sw1\" 4000000"),
            r#"bad.map:6: too many ports: "sw1" declares 4000000 ports, at most 1048576"#,
        ),
        ("s - \"lonely\" 8\n".to_string(), r#"bad.map: the map has no hosts"#),
        (
            format!("{EXAMPLE}\nh - \"n3\" 1\n"),
            r#"bad.map:20: disconnected network: host "n3" has no cable"#,
        ),
        (
            format!("{EXAMPLE}\ns - \"sw2\" 8\n0 h - \"n3\" 0\n\nh - \"n3\" 1\n0 s - \"sw2\" 0\n"),
            r#"bad.map:24: disconnected network: "n3" port 0 does not reach "n0" port 0 (line 11)"#,
        ),
        (
            format!("{EXAMPLE}\ns - \"sw2\" 8\n0 s - \"sw3\" 0\n\ns - \"sw3\" 8\n0 s - \"sw2\" 0\n"),
            r#"bad.map:20: disconnected network: "sw2" reaches no host"#,
        ),
        (
            TWO_RAILS.replace("1 s - \"b\" 1\n", "").replace("1 h - \"n1\" 1\n", ""),
            r#"bad.map:12: rails with different hosts: "n1" has no cable on port 1, but "n0" port 1 is connected (line 10): every host needs a cable on each of ports 0 to 1, one per rail"#,
        ),
        (
            TWO_RAILS
                .replace("1 h - \"n1\" 0\n", "1 h - \"n1\" 0\n3 s - \"b\" 3\n")
                .replace("1 h - \"n1\" 1\n", "1 h - \"n1\" 1\n3 s - \"a\" 3\n"),
            r#"bad.map:13: rails not disjoint: "n0" port 1 reaches the network of "n0" port 0 (line 12)"#,
        ),
        (
            TWO_RAILS
                .replace("1 h - \"n1\" 0", "1 h - \"n1\" 1")
                .replace("1 h - \"n1\" 1\n\nh", "1 h - \"n1\" 0\n\nh")
                .replace("0 s - \"a\" 1\n1 s - \"b\" 1", "0 s - \"b\" 1\n1 s - \"a\" 1"),
            r#"bad.map:14: rails not disjoint: "n1" port 0 reaches the network of "n0" port 1 (line 11)"#,
        ),
    ];
    let mut wrong = Vec::new();
    for (text, expected) in cases {
        let got = error(&text);
        if got != expected {
            wrong.push(format!("expected {expected}\n     got {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn reads_two_rails() {
    let rails = read(TWO_RAILS);
    assert_eq!(rails.len(), 2);
    for (r, rail) in rails.iter().enumerate() {
        assert_eq!(rail.host_names, ["n0", "n1"]);
        assert_eq!(rail.switch_names, [["a"], ["b"]][r]);
        assert_eq!(
            rail.topology.cables,
            [cable(switch(0, 0), host(0)), cable(switch(0, 1), host(1))]
        );
    }
}

/// Writes `rails` as one map, reads it back, and checks every rail is the same network.
fn round_trip(rails: &[NamedTopology]) -> String {
    let text = MapFile::from_rails(rails, WriteOptions { addresses: true })
        .expect("writable")
        .to_string();
    let back = read(&text);
    assert_eq!(back.len(), rails.len());
    for (written, read) in rails.iter().zip(&back) {
        assert_eq!(canonical(&read.topology), canonical(&written.topology));
        assert_eq!(read.host_names, written.host_names);
        assert_eq!(read.switch_names, written.switch_names);
        assert_eq!(read.switch_types, written.switch_types);
        assert_eq!(read.topology.routing, Routing::ShortestPath);
    }
    // The text is a fixed point: writing what was read gives the same bytes.
    assert_eq!(
        MapFile::from_rails(&back, WriteOptions { addresses: true }).map(|m| m.to_string()),
        Ok(text.clone())
    );
    text
}

fn named(topology: Topology) -> NamedTopology {
    NamedTopology::with_default_names(topology)
}

#[test]
fn built_in_topologies_survive_a_round_trip() {
    let link = LinkParams::default();
    let shapes = [
        Xgft::kary_ntree(4, 3).map(|x| x.topology(link)),
        Xgft::new(vec![4, 4, 4], vec![1, 2, 2]).map(|x| x.topology(link)),
        Xgft::new(vec![3, 2, 5], vec![1, 3, 1]).map(|x| x.topology(link)),
    ];
    for shape in shapes {
        let topology = shape.expect("valid xgft");
        round_trip(&[named(topology)]);
    }
    let tori = [
        Torus::new(vec![4, 3, 2], true, 2),
        Torus::new(vec![3, 3], false, 1),
        Torus::new(vec![5], true, 3),
        Torus::hypercube(4, 1),
    ];
    for torus in tori {
        round_trip(&[named(torus.expect("valid torus").topology(link))]);
    }
    round_trip(&[named(Topology::crossbar(5, link))]);
    round_trip(&[named(Topology::crossbar(1, link))]);
}

#[test]
fn routing_is_the_callers() {
    let link = LinkParams::default();
    let xgft = Xgft::kary_ntree(2, 3).expect("valid");
    let topology = xgft.topology(link);
    let text = write_map(&named(topology.clone()), WriteOptions::default()).expect("writable");
    let mut back = read(&text).remove(0);
    assert_eq!(back.topology.routing, Routing::ShortestPath);
    back.topology.routing = Routing::DModK(xgft);
    // Switch ids and ports are kept, so the tree's own routing still applies.
    assert!(NetworkBuilder::new(back.topology).build().is_ok());
}

#[test]
fn rails_of_different_shapes_share_one_map() {
    let link = LinkParams::default();
    let tree = Xgft::kary_ntree(2, 3).expect("valid").topology(link);
    let torus = Torus::new(vec![2, 2], true, 2).expect("valid").topology(link);
    let mut rail1 = NamedTopology::with_rail_names(torus, 1);
    rail1.switch_types = vec![Some("xbar32".to_string()); rail1.switch_names.len()];
    let rails = [NamedTopology::with_rail_names(tree, 0), rail1];
    let text = round_trip(&rails);
    assert!(text.contains("h - \"host0\" 2\n0 s - \"sw0\" 0\n1 s - \"rail1.sw0\" 0\naddress 0060dd000000\n"));
}

#[test]
fn writes_the_layout_of_the_spec() {
    let named = read(EXAMPLE).remove(0);
    let text = write_map(&named, WriteOptions::default()).expect("writable");
    // Switches first, ports in order, blocks separated by one blank line.
    let expected = "s - \"sw0\" 8\n0 h - \"n0\" 0\n1 h - \"n1\" 0\n7 s - \"sw1\" 4\n\n\
                    s - \"sw1\" 8\n2 h - \"n2\" 0\n4 s - \"sw0\" 7\n\n\
                    h - \"n0\" 1\n0 s - \"sw0\" 0\n\n\
                    h - \"n1\" 1\n0 s - \"sw0\" 1\n\n\
                    h - \"n2\" 1\n0 s - \"sw1\" 2\n";
    assert_eq!(text, expected);
}

#[test]
fn parse_reads_what_display_writes() {
    let map = MapFile::parse("test.map", TWO_RAILS).expect("parses");
    let again = MapFile::parse("test.map", &map.to_string()).expect("parses");
    let strip = |m: &MapFile| {
        let mut m = m.clone();
        for node in &mut m.nodes {
            node.line = 0;
            node.links.iter_mut().for_each(|l| l.line = 0);
        }
        m
    };
    assert_eq!(strip(&again), strip(&map));
}

#[test]
fn unwritable_rails_are_refused() {
    let link = LinkParams::default();
    let tree = named(Xgft::kary_ntree(2, 2).expect("valid").topology(link));
    let err = |rails: &[NamedTopology]| {
        MapFile::from_rails(rails, WriteOptions::default())
            .err()
            .map(|e| e.to_string())
    };
    assert_eq!(
        err(&[tree.clone(), tree.clone()]),
        Some("duplicate name \"sw0\": switch names must differ across rails and from host names".to_string())
    );
    let mut other = NamedTopology::with_rail_names(Topology::crossbar(4, link), 1);
    other.host_names[2] = "n2".to_string();
    assert_eq!(
        err(&[tree.clone(), other]),
        Some(
            "rail 1: host 2 is \"n2\", but \"host2\" in rail 0: rails must have the same hosts in the same order"
                .to_string()
        )
    );
    let mut quoted = tree.clone();
    quoted.switch_names[1] = "a\"b".to_string();
    assert_eq!(
        err(&[quoted]),
        Some("\"a\\\"b\": names and models cannot contain quotes or line breaks".to_string())
    );
    assert_eq!(err(&[]), Some("a map needs at least one rail".to_string()));
}

#[test]
fn a_hundred_thousand_cables_read_quickly() {
    let link = LinkParams::default();
    let xgft = Xgft::new(vec![32, 32, 32], vec![1, 32, 32]).expect("valid");
    let topology = xgft.topology(link);
    assert_eq!(topology.cables.len(), 98_304);
    let start = Instant::now();
    let text = write_map(&named(topology.clone()), WriteOptions::default()).expect("writable");
    let written = start.elapsed();
    let start = Instant::now();
    let back = read(&text).remove(0);
    let read_time = start.elapsed();
    eprintln!(
        "98,304 cables ({} bytes of map): written in {written:?}, read in {read_time:?}",
        text.len()
    );
    assert_eq!(canonical(&back.topology), canonical(&topology));
}
