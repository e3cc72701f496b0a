use super::*;

/// A hand-written fabric: two 8-port switches, CAs alpha and gamma with one connected
/// port, beta with two (one on each switch); gamma's link is listed by the switch only.
pub(crate) const FABRIC: &str = "\
# Topology file: hand-written test fabric
#
vendid=0x2c9
devid=0xb924
sysimgguid=0x2c90000000100
switchguid=0x2c90000000100(2c90000000100)
Switch\t8 \"S-0002c90000000100\"\t\t# \"leaf a\" base port 0 lid 1 lmc 0
[1]\t\"H-0002c90000000200\"[1](2c90000000201) \t\t# \"alpha HCA-1\" lid 11 4xQDR
[2]\t\"H-0002c90000000300\"[1](2c90000000301) \t\t# \"beta HCA-1\" lid 12 4xQDR
[8]\t\"S-0002c90000000101\"[7]\t\t# \"leaf b\" lid 2 4xQDR

vendid=0x2c9
switchguid=0x2c90000000101(2c90000000101)
Switch\t8 \"S-0002c90000000101\"\t\t# \"leaf b\" base port 0 lid 2 lmc 0
[1]\t\"H-0002c90000000400\"[1](2c90000000401) \t\t# \"gamma HCA-1\" lid 13 4xQDR
[3]\t\"H-0002c90000000300\"[2](2c90000000302) \t\t# \"beta HCA-1\" lid 99 4xQDR
[7]\t\"S-0002c90000000100\"[8]\t\t# \"leaf a\" lid 1 4xQDR

caguid=0x2c90000000200
Ca\t1 \"H-0002c90000000200\"\t\t# \"alpha HCA-1\"
[1](2c90000000201) \t\"S-0002c90000000100\"[1]\t\t# lid 11 lmc 0 \"leaf a\" lid 1 4xQDR

caguid=0x2c90000000300
Ca\t2 \"H-0002c90000000300\"\t\t# \"beta HCA-1\"
[1](2c90000000301) \t\"S-0002c90000000100\"[2]\t\t# lid 12 lmc 0 \"leaf a\" lid 1 4xQDR
[2](2c90000000302) \t\"S-0002c90000000101\"[3]\t\t# lid 14 lmc 0 \"leaf b\" lid 2 4xQDR

caguid=0x2c90000000400
Ca\t1 \"H-0002c90000000400\"\t\t# \"gamma HCA-1\"
";

pub(crate) const TABLES: &str = "\
Unicast lids [0x0-0xe] of switch Lid 1 guid 0x0002c90000000100 (leaf a):
  Lid  Out   Destination
       Port     Info
0x0001 000 : (Switch portguid 0x0002c90000000100: 'leaf a')
0x0002 008 : (Switch portguid 0x0002c90000000101: 'leaf b')
0x000b 001 : (Channel Adapter portguid 0x0002c90000000201: 'alpha HCA-1')
0x000c 002 : (Channel Adapter portguid 0x0002c90000000301: 'beta HCA-1')
0x000d 008 : (Channel Adapter portguid 0x0002c90000000401: 'gamma HCA-1')
0x000e 008 : (Channel Adapter portguid 0x0002c90000000302: 'beta HCA-1')
0x000f 255 : (no route)
7 valid lids dumped

Multicast mlids [0xc000-0xc3ff] of switch Lid 1 guid 0x0002c90000000100 (leaf a):
            0                   1
            0 1 2 3 4 5 6 7 8 9 0
0xc000      x   x
1 valid mlids dumped

# matched by LID: the GUID is not the one of the topology dump
Unicast lids [0x0-0xe] of switch Lid 2 guid 0x0002c9000000ffff (leaf b):
0x0001 007
0x000b 007
0x000c 007
0x000d 001
0x000e 003
";

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

pub(crate) fn read(text: &str) -> IbFabric {
    read_ibnetdiscover("fabric.topo", text, LinkParams::default()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn reads_a_fabric() {
    let fabric = read(FABRIC);
    let named = &fabric.topology;
    assert_eq!(
        named.host_names,
        [
            "H-0002c90000000200",
            "H-0002c90000000300[1]",
            "H-0002c90000000300[2]",
            "H-0002c90000000400"
        ]
    );
    assert_eq!(named.switch_names, ["S-0002c90000000100", "S-0002c90000000101"]);
    let link = LinkParams::default();
    let cable = |a, b| Cable { a, b, link };
    assert_eq!(
        named.topology,
        Topology {
            hosts: 4,
            switch_ports: vec![8, 8],
            cables: vec![
                cable(switch(0, 0), host(0)),
                cable(switch(0, 1), host(1)),
                cable(switch(0, 7), switch(1, 6)),
                cable(switch(1, 0), host(3)),
                cable(switch(1, 2), host(2)),
            ],
            routing: Routing::ShortestPath,
        }
    );
    // beta port 2 says its own LID (14); the switch's line (99) does not override it
    assert_eq!(fabric.host_lids, [Some(11), Some(12), Some(14), Some(13)]);
    assert_eq!(
        fabric.host_descriptions,
        ["alpha HCA-1", "beta HCA-1", "beta HCA-1", "gamma HCA-1"]
    );
    assert_eq!(fabric.switch_lids, [Some(1), Some(2)]);
    assert_eq!(fabric.switch_guids, [Some(0x2c90000000100), Some(0x2c90000000101)]);
    assert_eq!(fabric.switch_descriptions, ["leaf a", "leaf b"]);
    assert_eq!(fabric.hosts_by_lid().get(&13), Some(&HostId(3)));
    assert!(
        vesper_netmodels::NetworkBuilder::new(named.topology.clone())
            .build()
            .is_ok()
    );
}

#[test]
fn routers_and_external_port_labels_are_read() {
    // A router forwards as a switch does; `[ext N]` labels a switch port and is not kept.
    let routed = FABRIC
        .replace("Switch\t8 \"S-0002c90000000101\"", "Rt\t8 \"S-0002c90000000101\"")
        .replace(
            "[1]\t\"H-0002c90000000200\"[1]",
            "[1][ext 17]\t\"H-0002c90000000200\"[1]",
        )
        .replace("\"S-0002c90000000100\"[8]\t", "\"S-0002c90000000100\"[8][ext 4]\t");
    assert_ne!(routed, FABRIC);
    assert_eq!(
        dump(&read(&routed).topology.topology),
        dump(&read(FABRIC).topology.topology)
    );
}

#[test]
fn reads_and_attaches_forwarding_tables() {
    let tables = read_forwarding_tables("lfts.txt", TABLES).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tables.len(), 2);
    assert_eq!(
        (tables[0].line, tables[0].switch_lid, tables[0].guid),
        (1, 1, 0x2c90000000100)
    );
    assert_eq!(tables[0].description, "leaf a");
    assert_eq!(tables[0].entries.len(), 7);
    assert_eq!(
        tables[1].entries[3],
        ForwardingEntry {
            lid: 13,
            port: 1,
            line: 24
        }
    );
    let mut fabric = read(FABRIC);
    fabric
        .attach_forwarding("lfts.txt", &tables)
        .unwrap_or_else(|e| panic!("{e}"));
    let expect = |pairs: &[(u32, u32)]| pairs.iter().copied().collect::<BTreeMap<u32, u32>>();
    let outputs = |s: usize| -> BTreeMap<u32, u32> {
        let table = fabric.forwarding[s].iter();
        table.filter_map(|(&lid, f)| f.output().map(|p| (lid, p))).collect()
    };
    // IB port p is topology port p - 1; port 0 (the switch) and 255 (no route) lead out
    // nowhere
    assert_eq!(outputs(0), expect(&[(2, 7), (11, 0), (12, 1), (13, 7), (14, 7)]));
    assert_eq!(outputs(1), expect(&[(1, 6), (11, 6), (12, 6), (13, 0), (14, 2)]));
    assert_eq!(fabric.forwarding[0][&15], Forward { ib_port: 255, line: 10 });
    assert_eq!(
        (fabric.tables_file.as_str(), &fabric.section_lines[..]),
        ("lfts.txt", &[1, 20][..])
    );
}

/// The error message reading `text` as `bad.topo` gives.
fn error(text: &str) -> String {
    match read_ibnetdiscover("bad.topo", text, LinkParams::default()) {
        Ok(_) => "no error".to_string(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn malformed_dumps_name_file_line_and_rule() {
    let a = "\"S-0002c90000000100\"";
    let cases: Vec<(String, String)> =
        vec![
        (
            FABRIC.replace("[2]\t\"H-0002c90000000300\"[1]", "[2\t\"H-0002c90000000300\"[1]"),
            "bad.topo:9: column 3: expected ], found \"\\t\\\"H-0002c90000000300\\\"[1](2c90000000301) \"".to_string(),
        ),
        (
            FABRIC.replace("Switch\t8 \"S-0002c90000000101\"", "Router\t8 \"S-0002c90000000101\""),
            "bad.topo:14: column 1: expected a node header (Switch, Ca or Rt), a link line ([port] \"id\"[port]) or \
             key=value, found \"Router\\t8 \\\"S-0002c90000000101\\\"\\t\\t# \\\"leaf b\""
                .to_string(),
        ),
        (
            format!("[1] {a}[1]\n{FABRIC}"),
            "bad.topo:1: a link line before any node header".to_string(),
        ),
        (
            FABRIC.replace("Ca\t1 \"H-0002c90000000400\"", &format!("Ca\t1 {a}")),
            "bad.topo:29: duplicate id: \"S-0002c90000000100\" already has a header at line 7".to_string(),
        ),
        (
            FABRIC.replace("[8]\t\"S-0002c90000000101\"[7]", "[9]\t\"S-0002c90000000101\"[7]"),
            "bad.topo:10: port beyond the node's ports: \"S-0002c90000000100\" has ports 1 to 8, no port 9".to_string(),
        ),
        (
            FABRIC.replace("[1](2c90000000201) \t\"S-0002c90000000100\"[1]", &format!("[1] {a}[0]")),
            "bad.topo:21: port beyond the node's ports: \"S-0002c90000000100\" has ports 1 to 8, no port 0".to_string(),
        ),
        (
            FABRIC.replace("[8]\t\"S-0002c90000000101\"[7]", "[8]\t\"S-0002c90000000109\"[7]"),
            "bad.topo:10: unknown neighbour: \"S-0002c90000000100\" port 8 leads to \"S-0002c90000000109\", which has \
             no header"
                .to_string(),
        ),
        (
            FABRIC.replace("[8]\t\"S-0002c90000000101\"[7]", &format!("[8]\t{a}[8]")),
            "bad.topo:10: self link: \"S-0002c90000000100\" port 8 leads to itself".to_string(),
        ),
        (
            FABRIC.replace("[2]\t\"H-0002c90000000300\"[1]", "[1]\t\"H-0002c90000000300\"[1]"),
            "bad.topo:9: port used twice: \"S-0002c90000000100\" port 1 is already connected at line 8".to_string(),
        ),
        (
            FABRIC.replace("[7]\t\"S-0002c90000000100\"[8]", "[7]\t\"S-0002c90000000100\"[6]"),
            "bad.topo:10: asymmetric link: \"S-0002c90000000100\" port 8 leads to \"S-0002c90000000101\" port 7, but \
             \"S-0002c90000000101\" port 7 leads to \"S-0002c90000000100\" port 6 (line 17)"
                .to_string(),
        ),
        (
            FABRIC.replace(
                "[3]\t\"H-0002c90000000300\"[2]",
                "[4]\t\"H-0002c90000000400\"[1]\n[3]\t\"H-0002c90000000300\"[2]",
            ),
            "bad.topo:16: port used twice: \"H-0002c90000000400\" port 1 is already connected at line 15".to_string(),
        ),
        (
            FABRIC.replace("[1]\t\"H-0002c90000000400\"[1](2c90000000401) \t\t# \"gamma HCA-1\" lid 13 4xQDR\n", ""),
            "bad.topo:28: disconnected network: Ca \"H-0002c90000000400\" has no connected port".to_string(),
        ),
        (
            "Switch\t8 \"S-1\"\n".to_string(),
            "bad.topo: the dump has no Ca".to_string(),
        ),
        (
            format!("{FABRIC}\nSwitch\t4 \"S-9\"\n[1]\t\"H-9\"[1]\n\nCa\t1 \"H-9\"\n[1]\t\"S-9\"[1]\n"),
            "bad.topo:31: disconnected network: \"S-9\" is not connected to \"H-0002c90000000200\" port 1".to_string(),
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
fn malformed_forwarding_tables_name_file_line_and_rule() {
    let attach = |text: &str| {
        let tables = read_forwarding_tables("lfts.txt", text)?;
        read(FABRIC).attach_forwarding("lfts.txt", &tables)
    };
    let header = "Unicast lids [0x0-0xe] of switch Lid 1 guid 0x0002c90000000100 (leaf a):\n";
    let cases = [
        (
            "0x0001 001\n".to_string(),
            "lfts.txt:1: a forwarding entry before any Unicast lids header",
        ),
        (
            "Unicast lids [0x0-0x1] of switch Lid x guid 0x1 (a):\n".to_string(),
            "lfts.txt:1: column 38: expected a decimal number, found \"x guid 0x1 (a):\"",
        ),
        (
            format!("{header}0x000b one\n"),
            "lfts.txt:2: column 8: expected a decimal number, found \"one\"",
        ),
        (
            format!("{header}\nrubbish\n"),
            "lfts.txt:3: column 1: expected a forwarding-table line (Unicast lids … header, 0x<lid> <port> entry, or \
             lids dumped), found \"rubbish\"",
        ),
        (
            "Unicast lids [0x0-0x1] of switch Lid 9 guid 0x1234 (elsewhere):\n".to_string(),
            "lfts.txt:1: unknown switch: no switch of the fabric has guid 0x0000000000001234 or lid 9",
        ),
        (
            format!("{header}0x000b 009 : (Channel Adapter portguid 0x0002c90000000201: 'alpha HCA-1')\n"),
            "lfts.txt:2: forwarding to a missing port: \"S-0002c90000000100\" sends lid 11 to port 9, but has ports 1 \
             to 8",
        ),
    ];
    let mut wrong = Vec::new();
    for (text, expected) in cases {
        let got = attach(&text).err().map_or("no error".to_string(), |e| e.to_string());
        if got != expected {
            wrong.push(format!("expected {expected}\n     got {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_fabric_becomes_a_map_and_back() {
    let fabric = read(FABRIC);
    let text = crate::map::write_map(&fabric.topology, crate::map::WriteOptions::default()).expect("writable");
    assert!(text.contains("h - \"H-0002c90000000300[2]\" 1\n0 s - \"S-0002c90000000101\" 2\n"));
    let back = crate::map::read_map("fabric.map", &text, LinkParams::default()).unwrap_or_else(|e| panic!("{e}"));
    let sorted = |t: &Topology| {
        let mut cables: Vec<(Endpoint, Endpoint)> = t.cables.iter().map(|c| (c.a.min(c.b), c.a.max(c.b))).collect();
        cables.sort();
        cables
    };
    assert_eq!(back[0].host_names, fabric.topology.host_names);
    assert_eq!(back[0].switch_names, fabric.topology.switch_names);
    assert_eq!(sorted(&back[0].topology), sorted(&fabric.topology.topology));
}

/// The `ibnetdiscover` dump of a topology: switches `S-<id>`, one CA per host `H-<id>`,
/// every link on both sides, LIDs 1.. for switches and 100000.. for hosts.
fn dump(t: &Topology) -> String {
    let id = |d: Device| match d {
        Device::Host(h) => format!("H-{:016x}", h.0),
        Device::Switch(s) => format!("S-{:016x}", s.0),
    };
    let mut ends: Vec<Vec<(u32, Endpoint)>> = vec![Vec::new(); t.hosts as usize + t.switch_ports.len()];
    let slot = |d: Device| match d {
        Device::Host(h) => h.index(),
        Device::Switch(s) => t.hosts as usize + s.index(),
    };
    for c in &t.cables {
        ends[slot(c.a.device)].push((c.a.port, c.b));
        ends[slot(c.b.device)].push((c.b.port, c.a));
    }
    let mut text = String::new();
    for (s, &ports) in t.switch_ports.iter().enumerate() {
        let me = Device::Switch(SwitchId(s as u32));
        text += &format!(
            "switchguid=0x{s:x}\nSwitch\t{ports} \"{}\"\t# \"sw{s}\" lid {}\n",
            id(me),
            s + 1
        );
        for &(port, peer) in &ends[slot(me)] {
            text += &format!("[{}]\t\"{}\"[{}]\n", port + 1, id(peer.device), peer.port + 1);
        }
        text += "\n";
    }
    for h in 0..t.hosts {
        let me = Device::Host(HostId(h));
        text += &format!("Ca\t1 \"{}\"\t# \"host{h}\"\n", id(me));
        for &(_, peer) in &ends[slot(me)] {
            text += &format!(
                "[1]\t\"{}\"[{}]\t# lid {} lmc 0\n",
                id(peer.device),
                peer.port + 1,
                100_000 + h
            );
        }
        text += "\n";
    }
    text
}

#[test]
fn large_fabrics_read_quickly() {
    let t = vesper_netmodels::Xgft::kary_ntree(16, 3)
        .expect("valid")
        .topology(LinkParams::default());
    let text = dump(&t);
    let start = std::time::Instant::now();
    let fabric = read(&text);
    eprintln!(
        "ibnetdiscover dump of {} hosts, {} switches, {} cables ({} bytes) read in {:?}",
        t.hosts,
        t.switch_ports.len(),
        t.cables.len(),
        text.len(),
        start.elapsed()
    );
    let canonical = |t: &Topology| {
        let mut cables: Vec<(Endpoint, Endpoint)> = t.cables.iter().map(|c| (c.a.min(c.b), c.a.max(c.b))).collect();
        cables.sort();
        cables
    };
    assert_eq!(canonical(&fabric.topology.topology), canonical(&t));
    assert_eq!(fabric.host_lids[4095], Some(104_095));
    assert_eq!(fabric.switch_guids[767], Some(767));
}
