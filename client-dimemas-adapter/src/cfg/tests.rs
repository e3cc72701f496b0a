//! Tests of the configuration reader.

use super::*;

const CONFIG: &str = r#"#DIMEMAS_CONFIGURATION
// a comment
/* a block
   of comments */
"wide area network information" {"", 1, 0, 4, 0.0, 0.0, 1};;
"environment information" {"", 0, "", 4, 250.0, 0, 1};;
"multi node information" {0, 4, "", 2, 2.5, 0.000001, 1000.0, 0, 1, 1,
    0.0000005, 1, 1, 0.0};;
"predefined mapping information" {"2 TASKS_PER_NODE"};;
"#;

#[test]
fn the_records_that_matter_are_read() {
    let config = parse(CONFIG, "a.cfg").expect("parsed");
    assert_eq!(
        config,
        DimConfig {
            nodes: Some(4),
            bandwidth_mbps: Some(250.0),
            groups: vec![NodeGroup {
                line: 7,
                record: MULTI_NODE,
                count: 4,
                cpus: 2,
                cpu_ratio: 2.5,
                intra_latency_s: 0.000001,
                intra_bandwidth_mbps: 1000.0,
                intra_buses: 0,
                intra_links: Links { input: 1, output: 1 },
                inter_latency_s: 0.0000005,
                inter_links: Links { input: 1, output: 1 },
            }],
            mapping: Some(Mapping::TasksPerNode(2)),
            buses: Some(0),
            collective_model: Some(1),
            comm_tuning_file: None,
            file: "a.cfg".into(),
            mapping_tasks: None,
            mapping_line: Some(9),
            // The multi node record spans two lines.
            warnings: vec![
                "a.cfg:7: \"multi node information\" spans lines 7 to 8: Dimemas reads one record a line \
                     (\"Unknown configuration record type\"); write it on one line"
                    .into()
            ],
            comm_tuning_line: None,
        }
    );
    let tuned = format!("{CONFIG}\"configuration files\" {{\"\", \"\", \"comm.cfg\", \"\"}};;\n");
    let tuned = parse(&tuned, "a.cfg").expect("parsed");
    assert_eq!(
        (tuned.comm_tuning_file.as_deref(), tuned.comm_tuning_line),
        (Some("comm.cfg"), Some(10))
    );
}

#[test]
fn a_missing_fine_tuning_file_names_the_record_that_names_it() {
    let dir = std::env::temp_dir().join(format!("vesper-tuning-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let path = dir.join("a.cfg");
    let text = format!("{CONFIG}\"configuration files\" {{\"\", \"\", \"nofile.cfg\", \"\"}};;\n");
    std::fs::write(&path, &text).expect("written");
    let config = read(&path).expect("read");
    let mut collectives = AnalyticCollectives::default();
    let err = config.read_tuning(&path, &mut collectives).expect_err("missing");
    assert_eq!((err.file.as_str(), err.line), (path.to_str().expect("UTF-8"), 10));
    assert!(
        err.message.starts_with(&format!(
            "\"configuration files\": field 3 (communication file): cannot read {}: ",
            dir.join("nofile.cfg").display()
        )),
        "{err}"
    );
    // Errors within it name it.
    std::fs::write(dir.join("nofile.cfg"), "11 LOG CURR LOG MAX 0.0\n").expect("written");
    let err = config.read_tuning(&path, &mut collectives).expect_err("refused");
    assert_eq!((err.file, err.line), (dir.join("nofile.cfg").display().to_string(), 1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn special_files_are_refused_by_name_without_blocking() {
    let (dir, files) = crate::input::special_files("cfg");
    for (path, kind) in &files {
        let err = read(path).expect_err("not regular");
        assert_eq!(err.to_string(), crate::input::not_regular(path, kind));
    }
    // As the fine-tuning file, the record that names it is named too.
    let path = dir.join("a.cfg");
    for (tuning, kind) in &files {
        let record = format!(
            "\"configuration files\" {{\"\", \"\", \"{}\", \"\"}};;\n",
            tuning.display()
        );
        std::fs::write(&path, format!("{CONFIG}{record}")).expect("written");
        let config = read(&path).expect("read");
        let err = config
            .read_tuning(&path, &mut AnalyticCollectives::default())
            .expect_err("not regular");
        assert_eq!(
            err.to_string(),
            format!(
                "{}:10: \"configuration files\": field 3 (communication file): cannot read {}: it is {kind}, not a \
                     regular file; inputs are read from regular files only",
                path.display(),
                tuning.display()
            )
        );
    }
    std::fs::remove_dir_all(&dir).expect("cleaned");
}

#[test]
fn files_over_their_limit_are_refused_unread() {
    let dir = std::env::temp_dir().join(format!("vesper-cfg-large-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let big = dir.join("big.cfg");
    crate::input::sparse_file(&big, MAX_CFG_BYTES + 1);
    assert_eq!(
        read(&big).expect_err("too large").to_string(),
        format!(
            "{}:0: it holds 16777217 bytes, more than the 16777216 bytes (16 MiB) such a file may hold",
            big.display()
        )
    );
    let path = dir.join("a.cfg");
    std::fs::write(
        &path,
        format!("{CONFIG}\"configuration files\" {{\"\", \"\", \"t.cfg\", \"\"}};;\n"),
    )
    .expect("written");
    crate::input::sparse_file(&dir.join("t.cfg"), MAX_TUNING_BYTES + 1);
    let err = read(&path)
        .expect("read")
        .read_tuning(&path, &mut AnalyticCollectives::default())
        .expect_err("too large");
    assert_eq!((err.line, err.file.as_str()), (10, path.to_str().expect("UTF-8")));
    assert!(
        err.message
            .ends_with(": it holds 1048577 bytes, more than the 1048576 bytes (1 MiB) such a file may hold"),
        "{err}"
    );
    // Text that is not UTF-8 names its line, in the file it is in.
    std::fs::write(dir.join("t.cfg"), b"11 LOG MAX LOG MAX 0.0\n\xff\n").expect("written");
    let err = read(&path)
        .expect("read")
        .read_tuning(&path, &mut AnalyticCollectives::default())
        .expect_err("not text");
    assert_eq!(
        err.to_string(),
        format!(
            "{}:2: not UTF-8 text; a communications fine tuning file is text (the communications fine tuning \
                 file that {}:10 names, \"configuration files\" field 3)",
            dir.join("t.cfg").display(),
            path.display()
        )
    );
    std::fs::remove_dir_all(&dir).expect("cleaned");
}

#[test]
fn values_the_replay_cannot_hold_are_refused_naming_line_and_field() {
    let multi = |ratio: &str, latency: &str, bandwidth: &str, inter: &str| {
        let record = format!("{{0, 4, \"\", 2, {ratio}, {latency}, {bandwidth}, 0, 1, 1,\n    {inter}, 1, 1, 0.0}};;");
        let text = CONFIG.replace(
            "{0, 4, \"\", 2, 2.5, 0.000001, 1000.0, 0, 1, 1,\n    0.0000005, 1, 1, 0.0};;",
            &record,
        );
        assert_ne!(text, CONFIG);
        parse(&text, "m.cfg").map(|_| ()).map_err(|e| e.to_string())
    };
    // The issue's reproducer: it was clamped to 2^64 ps, and predicted 18,446,744 s.
    assert_eq!(
        multi("1", "1e300", "1000.0", "0"),
        Err(
            "m.cfg:7: \"multi node information\": field 6 (intra_latency_s): intra-node latency 1e300 s: more \
                 than vesper's clock counts (2^64 ps, about 18446744 s)"
                .into()
        )
    );
    assert_eq!(
        multi("1", "0", "1000.0", "18446745"),
        Err(
            "m.cfg:7: \"multi node information\": field 11 (inter_latency_s): inter-node latency 18446745 s: \
                 more than vesper's clock counts (2^64 ps, about 18446744 s)"
                .into()
        )
    );
    // The longest the clock counts is taken.
    assert_eq!(multi("1", "18446744", "1000.0", "18446744"), Ok(()));
    // Too many digits, whole or fractional, to hold as bytes per seconds.
    for bandwidth in ["1e300", "1e-30"] {
        assert_eq!(
            multi("1", "0", bandwidth, "0"),
            Err(format!(
                "m.cfg:7: \"multi node information\": field 7 (intra_bw_MBps): intra-node bandwidth {bandwidth} \
                     MBps: more digits than vesper holds: it keeps a bandwidth exactly, as bytes per seconds in 64 \
                     bits each"
            ))
        );
    }
    // Slow, but held exactly: a message too slow for the clock stops the replay.
    assert_eq!(multi("1", "0", "1e-9", "0"), Ok(()));
    // 0 is unlimited, as in Dimemas.
    assert_eq!(multi("1", "0", "0", "0"), Ok(()));
    assert_eq!(
        multi("NaN", "0", "0", "0"),
        Err("m.cfg:7: \"multi node information\": field 5 (cpu_speed_ratio): expected a number, found 'NaN'".into())
    );
    assert_eq!(
        multi("1", "inf", "0", "0"),
        Err("m.cfg:7: \"multi node information\": field 6 (intra_latency_s): expected a number, found 'inf'".into())
    );
    let environment = |nodes: &str, bandwidth: &str| {
        let text = CONFIG.replace(
            "{\"\", 0, \"\", 4, 250.0, 0, 1}",
            &format!("{{\"\", 0, \"\", {nodes}, {bandwidth}, 0, 1}}"),
        );
        parse(&text, "e.cfg").map(|_| ()).map_err(|e| e.to_string())
    };
    assert_eq!(
        environment("4", "123456789012345678901"),
        Err(
            "e.cfg:6: \"environment information\": field 5 (bw_MBps): inter-node bandwidth 123456789012345678901 \
                 MBps: more digits than vesper holds: it keeps a bandwidth exactly, as bytes per seconds in 64 bits \
                 each"
                .into()
        )
    );
    assert_eq!(
        environment("0", "250.0"),
        Err(
            "e.cfg:6: \"environment information\": field 4 (n_nodes): a machine needs at least one node, found 0"
                .into()
        )
    );
    assert_eq!(
        environment("4294967296", "250.0"),
        Err(
            "e.cfg:6: \"environment information\": field 4 (n_nodes): expected a whole number, found \
                 '4294967296'"
                .into()
        )
    );
}

#[test]
fn an_explicit_mapping_maps_the_traces_tasks() {
    let text = format!("{CONFIG}\"mapping information\" {{\"app.dim\", 4, [4] {{0,0,3,1}}}};;\n");
    let config = parse(&text, "m.cfg").expect("parsed");
    assert_eq!(config.check_tasks(4, "the trace app.dim"), Ok(()));
    assert_eq!(
        config
            .check_tasks(2, "the trace app.dim")
            .expect_err("refused")
            .to_string(),
        "m.cfg:10: \"mapping information\": field 2 (n_tasks): maps 4 tasks, but the trace app.dim has 2"
    );
    assert_eq!(parse(CONFIG, "p.cfg").expect("parsed").check_tasks(9, "it"), Ok(()));
}

#[test]
fn every_mapping_kind() {
    let with = |record: &str| {
        let text = format!("{CONFIG}{record}\n");
        parse(&text, "m.cfg").expect("parsed").mapping
    };
    let fill = CONFIG.replace("2 TASKS_PER_NODE", "FILL_NODES");
    assert_eq!(
        parse(&fill, "f.cfg").expect("parsed").mapping,
        Some(Mapping::FillNodes { groups: vec![(4, 2)] })
    );
    // The trace's name may come first.
    let named = CONFIG.replace("{\"2 TASKS_PER_NODE\"}", "{\"app.dim\", \"INTERLEAVED\"}");
    assert_eq!(
        parse(&named, "n.cfg").expect("parsed").mapping,
        Some(Mapping::Interleaved { nodes: 4 })
    );
    let interleaved = CONFIG.replace("2 TASKS_PER_NODE", "INTERLEAVED");
    assert_eq!(
        parse(&interleaved, "i.cfg").expect("parsed").mapping,
        Some(Mapping::Interleaved { nodes: 4 })
    );
    // An explicit mapping wins over the predefined one.
    assert_eq!(
        with(r#""mapping information" {"app.dim", 4, [4] {0,0,3,1}};;"#),
        Some(Mapping::Explicit(vec![0, 0, 3, 1]))
    );
}

/// A configuration of one machine of `nodes` nodes, with these node records and
/// mapping, in Dimemas's order.
fn machine(nodes: u32, records: &[&str], mapping: &str) -> String {
    let mut text = format!(
        "#DIMEMAS_CONFIGURATION\n\"wide area network information\" {{\"\", 1, 0, 4, 0.0, 0.0, 1}};;\n\
             \"environment information\" {{\"\", 0, \"\", {nodes}, 1000.0, 0, 1}};;\n"
    );
    for record in records {
        text.push_str(record);
        text.push('\n');
    }
    text.push_str(&format!("\"predefined mapping information\" {{\"{mapping}\"}};;\n"));
    text
}

/// A "multi node information" record of `count` nodes of `cpus` processors.
fn group(count: u32, cpus: u32, ratio: &str, latency: &str) -> String {
    format!(
        "\"multi node information\" {{0, {count}, \"\", {cpus}, {ratio}, 0.0, 0.0, 0, 1, 1, {latency}, 1, 1, \
             0.0}};;"
    )
}

#[test]
fn node_records_describe_the_nodes_in_turn() {
    let two = group(2, 1, "2.0", "1e-06");
    let four = group(3, 4, "0.5", "3e-06");
    let one = "\"node information\" {0, \"\", 2, 0, 0.0, 0.0, 0, 1, 0, 2e-06, 0, 1, 0.0};;";
    let config = parse(&machine(6, &[&two, &four, one], "FILL_NODES"), "h.cfg").expect("parsed");
    assert_eq!(config.warnings, Vec::<String>::new());
    let described: Vec<(u32, u32, f64, f64)> = (0..7)
        .map(|n| {
            let g = config.group_of(n).expect("a group");
            (n, g.cpus, g.cpu_ratio, g.inter_latency_s)
        })
        .collect();
    assert_eq!(
        described,
        [
            (0, 1, 2.0, 1e-6),
            (1, 1, 2.0, 1e-6),
            (2, 4, 0.5, 3e-6),
            (3, 4, 0.5, 3e-6),
            (4, 4, 0.5, 3e-6),
            (5, 2, 0.0, 2e-6),
            // Past the records: the last one's.
            (6, 2, 0.0, 2e-6),
        ]
    );
    let last = &config.groups[2];
    assert_eq!((last.record, last.line, last.count), (ONE_NODE, 6, 1));
    // Half-duplex: one count 0.
    assert!(last.intra_links.half_duplex() && last.inter_links.half_duplex());
    // FILL_NODES fills each node up to its processors, in order; the rest on the last.
    let mapping = config.mapping.clone().expect("a mapping");
    let nodes: Vec<u32> = (0..20).map(|t| mapping.node_of(t)).collect();
    assert_eq!(nodes, [0, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5]);
    // 14 single-threaded tasks fit the processors; 17 do not: the last node would
    // share its 2 processors between 3 threads.
    assert_eq!(config.check_mapping(&[1; 16], "the trace t.dim"), Ok(()));
    assert_eq!(
        config
            .check_mapping(&[1; 17], "the trace t.dim")
            .expect_err("too many")
            .to_string(),
        "h.cfg:7: the mapping gives node 5 3 threads of the trace t.dim, but it has 2 processor(s) (the \
             processors of \"node information\" at line 6): Dimemas would share them between the threads, which \
             vesper does not model; give the node as many processors as threads, or map fewer tasks to it"
    );
    // Threads count: two tasks of two threads on a node of 4 processors fit.
    assert_eq!(config.check_mapping(&[1, 1, 2, 2], "it"), Ok(()));
    assert!(config.check_mapping(&[2, 1], "it").is_err());
}

#[test]
fn the_node_records_must_fit_the_machine() {
    let err = parse(
        &machine(
            4,
            &[&group(3, 1, "1.0", "0.0"), &group(2, 1, "1.0", "0.0")],
            "FILL_NODES",
        ),
        "o.cfg",
    )
    .expect_err("too many nodes");
    assert_eq!(
        err.to_string(),
        "o.cfg:5: \"multi node information\": 2 more node(s) after the 3 defined above, but \"environment \
             information\" declares 4; Dimemas refuses it too (\"more nodes defined than total machine nodes\")"
    );
    // Fewer: read, with Dimemas's reason; the last record's values go on.
    let fewer = parse(&machine(4, &[&group(3, 1, "1.0", "0.0")], "FILL_NODES"), "f.cfg").expect("read");
    assert_eq!(
        fewer.warnings,
        [
            "f.cfg:4: the node records describe 3 of the 4 nodes \"environment information\" declares (line 3); \
              Dimemas refuses it (\"Machine 0 should have 4 nodes\"); vesper gives the others the last record's values"
        ]
    );
    assert_eq!(fewer.group_of(3).map(|g| g.cpus), Some(1));
    assert_eq!(fewer.mapping.map(|m| m.node_of(3)), Some(3));
    // n TASKS_PER_NODE over too few nodes: Dimemas refuses it.
    let config = parse(&machine(2, &[&group(2, 4, "1.0", "0.0")], "3 TASKS_PER_NODE"), "t.cfg").expect("read");
    assert_eq!(config.check_mapping(&[1; 6], "it"), Ok(()));
    assert_eq!(
        config
            .check_mapping(&[1; 7], "the trace t.dim")
            .expect_err("too few nodes")
            .to_string(),
        "t.cfg:5: \"predefined mapping information\": \"3 TASKS_PER_NODE\" places at most 6 tasks on the \
             machine's 2 nodes, but the trace t.dim has 7; Dimemas refuses it too (\"tasks per node mapping not \
             applicable\")"
    );
}

#[test]
fn a_configuration_without_a_machine_is_refused() {
    // Nothing but the header: no machine to replay on.
    for (text, line) in [
        ("#DIMEMAS_CONFIGURATION\n", 1),
        ("// empty\n\n#DIMEMAS_CONFIGURATION\n", 3),
    ] {
        assert_eq!(
            parse(text, "e.cfg").expect_err("no machine").to_string(),
            format!(
                "e.cfg:{line}: no \"environment information\" record: a configuration declares its machine there \
                     (its nodes, their bandwidth and buses), and without one there is nothing to replay on; Dimemas \
                     needs it too"
            )
        );
    }
    // Node records and a mapping do not make a machine.
    let nodes = format!("#DIMEMAS_CONFIGURATION\n{}\n", group(2, 1, "1.0", "0.0"));
    assert!(
        parse(&nodes, "n.cfg")
            .expect_err("no machine")
            .to_string()
            .starts_with("n.cfg:1: no \"environment information\" record")
    );
}

#[test]
fn machines_larger_than_any_network_are_refused() {
    let most = machine(MAX_NODES, &[&group(MAX_NODES, 1, "1.0", "0.0")], "FILL_NODES");
    assert_eq!(parse(&most, "m.cfg").map(|c| c.nodes), Ok(Some(1 << 25)));
    assert_eq!(
        parse(&machine(1_000_000_000, &[], "FILL_NODES"), "h.cfg")
            .expect_err("too many nodes")
            .to_string(),
        "h.cfg:3: \"environment information\": field 4 (n_nodes): 1000000000 nodes: vesper models at most 2^25 = \
             33,554,432 (the most hosts its networks have)"
    );
    // A node record's count too, wherever it comes.
    let early = format!(
        "#DIMEMAS_CONFIGURATION\n{}\n\"environment information\" {{\"\", 0, \"\", 4, 1000.0, 0, 1}};;\n",
        group(u32::MAX, 1, "1.0", "0.0")
    );
    assert_eq!(
        parse(&early, "g.cfg").expect_err("too many nodes").to_string(),
        "g.cfg:2: \"multi node information\": field 2 (n_nodes): 4294967295 nodes: vesper models at most 2^25 = \
             33,554,432 (the most hosts its networks have)"
    );
}

#[test]
fn cpu_ratios_of_zero_are_read_and_negative_ones_refused() {
    let config = parse(&machine(1, &[&group(1, 1, "0.0", "0.0")], "FILL_NODES"), "z.cfg").expect("read");
    assert_eq!(config.groups[0].cpu_ratio, 0.0);
    let err = parse(&machine(1, &[&group(1, 1, "-0.5", "0.0")], "FILL_NODES"), "n.cfg").expect_err("negative");
    assert_eq!(
        err.to_string(),
        "n.cfg:4: \"multi node information\": field 5 (cpu_speed_ratio): -0.5: a negative ratio (a fixed \
             duration) is for \"modules information\" only; Dimemas refuses it on nodes (\"invalid CPU ratio\")"
    );
}

#[test]
fn every_record_of_dimemas_is_read_or_refused_by_name() {
    let base = machine(2, &[&group(2, 1, "1.0", "0.0")], "FILL_NODES");
    let with = |record: &str| parse(&format!("{base}{record}\n"), "r.cfg");
    let refused = |record: &str| with(record).expect_err("refused").to_string();
    // Read, no effect on a replay of one machine's MPI trace.
    let read = with("\"file system parameters\" {0.0, 0.0, 8.0, 0, 1.0};;").expect("read");
    assert_eq!(read.warnings, Vec::<String>::new());
    assert!(
        refused(
            "\"dedicated connection information\" {0, 0, 0, 100.0, [1] {1}, 0, \"<\", \"&\", 0, \">\", [1] {0}, \
                 0.0, 0.0};;"
        )
        .contains("a dedicated connection joins machines of a wide area network")
    );
    assert!(
        refused("\"modules information\" {1, 2, 0.5};;")
            .starts_with("r.cfg:6: \"modules information\": vesper does not scale")
    );
    assert!(refused("\"accelerator node information\" {0};;").contains("does not model accelerators"));
    assert_eq!(
        refused("\"configuration files\" {\"sched.cfg\", \"\", \"\", \"\"};;"),
        "r.cfg:6: \"configuration files\": field 1 (scheduler definition file): vesper replays with Dimemas's \
             default scheduler (first come, first served, no context switch cost); give \"\""
    );
    assert!(
        refused("\"configuration files\" {\"\", \"\", \"\", \"random.cfg\"};;")
            .contains("field 4 (sensitivity file): vesper does not add Dimemas's random variations")
    );
    // The file system's model serves I/O only.
    assert!(with("\"configuration files\" {\"\", \"fs.cfg\", \"\", \"\"};;").is_ok());
    // Records of other machines, or of a wide area network between them.
    let wan = base.replace("{\"\", 1, 0, 4", "{\"\", 2, 0, 4");
    assert_eq!(
        parse(&wan, "w.cfg").expect_err("two machines").to_string(),
        "w.cfg:2: \"wide area network information\": field 2 (number of machines): 2 machines: vesper replays \
             one machine; machines joined by a wide area network (its traffic model, dedicated connections and WAN \
             latencies) are not modelled"
    );
    let dedicated = base.replace("{\"\", 1, 0, 4", "{\"\", 1, 1, 4");
    assert!(
        parse(&dedicated, "d.cfg")
            .expect_err("dedicated")
            .to_string()
            .contains("field 3 (dedicated connections)")
    );
    assert!(
        refused("\"environment information\" {\"\", 1, \"\", 2, 1000.0, 0, 1};;")
            .starts_with("r.cfg:6: a second \"environment information\" record (the first is at line 3)")
    );
    let machine_one = base.replace("{0, 2, \"\", 1, 1.0", "{1, 2, \"\", 1, 1.0");
    assert!(
        parse(&machine_one, "m.cfg")
            .expect_err("machine 1")
            .to_string()
            .contains("field 1 (machine ID): machine 1: vesper replays one machine, number 0")
    );
    // The layout of "node information" before 2012 is refused with what to write.
    let old = "\"node information\" {0, 0, \"\", 1, 1, 1, 0.0, 0.0, 1.0, 0.0, 0.0};;";
    assert!(
        parse(&machine(1, &[old], "FILL_NODES"), "o.cfg")
            .expect_err("old layout")
            .to_string()
            .contains("11 fields, the layout before 2012")
    );
    // A record Dimemas does not know: skipped with Dimemas's reason.
    let unknown = with("\"stranger information\" {1};;").expect("read");
    assert!(
        unknown.warnings[0].contains("is not a record of Dimemas's"),
        "{:?}",
        unknown.warnings
    );
}

#[test]
fn records_out_of_dimemas_s_order_are_read_with_a_warning() {
    let late = "#DIMEMAS_CONFIGURATION\n\"environment information\" {\"\", 0, \"\", 1, 250.0, 0, 1};;\n\
                    \"wide area network information\" {\"\", 1, 0, 4, 0.0, 0.0, 1};;\n\
                    \"mapping information\" {\"a.dim\", 1, [1] {0}};;\n\
                    \"multi node information\" {0, 1, \"\", 1, 1.0, 0.0, 0.0, 0, 1, 1, 0.0, 1, 1, 0.0};;\n";
    let config = parse(late, "l.cfg").expect("read");
    assert_eq!(
        config.warnings,
        [
            "l.cfg:5: \"multi node information\" after \"mapping information\": Dimemas maps an explicit \
                 mapping's tasks when it reads the record, onto the nodes defined before it",
            "l.cfg:2: \"environment information\" before \"wide area network information\" (line 3): Dimemas \
                 refuses it (\"Wrong environment information record values\": the machine does not exist until the \
                 wide area network record declares it); put that record first",
        ]
    );
    // Nothing to say of a file in Dimemas's order.
    let good = parse(&machine(1, &[&group(1, 1, "1.0", "0.0")], "FILL_NODES"), "g.cfg").expect("read");
    assert_eq!(good.warnings, Vec::<String>::new());
}

#[test]
fn what_dimemas_reads_otherwise_is_read_with_a_warning() {
    // examples/pingpong.cfg as it was: no wide area network record, a record over
    // two lines, a comment beside a record.
    let text = "#DIMEMAS_CONFIGURATION\n\"environment information\" {\"\", 0, \"\", 1, 250.0, 0, 1};;\n\
                    \"multi node information\" {0, 1, \"\", 2, 2.0, 0.000001, 1000.0,\n  0, 1, 1, 0.0, 1, 1, 0.0};;\n\
                    \"predefined mapping information\" {\"FILL_NODES\"};; /* fill */\n";
    let config = parse(text, "p.cfg").expect("read");
    assert_eq!(
        config.warnings,
        [
            "p.cfg:3: \"multi node information\" spans lines 3 to 4: Dimemas reads one record a line (\"Unknown \
                 configuration record type\"); write it on one line",
            "p.cfg:5: a comment shares line 5 with \"predefined mapping information\": Dimemas skips every line \
                 holding //, /* or */, so it does not read this record",
            "p.cfg:2: no \"wide area network information\" record before \"environment information\": Dimemas \
                 refuses it (\"Wrong environment information record values\": the machine does not exist until the \
                 wide area network record declares it); put `\"wide area network information\" {\"\", 1, 0, 4, 0.0, \
                 0.0, 1};;` first",
        ]
    );
    assert_eq!(config.mapping, Some(Mapping::FillNodes { groups: vec![(1, 2)] }));
}

#[test]
fn errors_name_the_line_of_the_record() {
    let bad = |record: &str| {
        let text = format!("{CONFIG}{record}\n");
        parse(&text, "b.cfg").expect_err("refused").to_string()
    };
    assert_eq!(
        bad(r#""mapping information" {"app.dim", 3, [3] {0,x,1}};;"#),
        "b.cfg:10: expected a node number, found 'x'"
    );
    assert_eq!(
        bad(r#""mapping information" {"app.dim", 3, [2] {0,1}};;"#),
        "b.cfg:10: 3 tasks but 2 nodes listed"
    );
    assert_eq!(
        bad(r#""mapping information" {"app.dim", 3, [2] {0,1,2}};;"#),
        "b.cfg:10: the list says [2] but holds 3 nodes"
    );
    // The machine of CONFIG has 4 nodes.
    assert_eq!(
        bad(r#""mapping information" {"app.dim", 3, [3] {0,1,4}};;"#),
        "b.cfg:10: \"mapping information\": task 2 is mapped to node 4, but \"environment information\" \
             declares 4 node(s), 0 to 3"
    );
    let no_cpus = CONFIG.replace("{0, 4, \"\", 2, 2.5", "{0, 4, \"\", 0, 2.5");
    assert_eq!(
        parse(&no_cpus, "c.cfg").expect_err("refused").to_string(),
        "c.cfg:7: \"multi node information\": field 4 (cpus_per_node): a node needs at least one CPU, found 0"
    );
    assert_eq!(
        parse(&CONFIG.replace("2 TASKS_PER_NODE", "SOMEWHERE"), "b.cfg")
            .expect_err("refused")
            .to_string(),
        "b.cfg:9: expected FILL_NODES, INTERLEAVED or \"<n> TASKS_PER_NODE\", found 'SOMEWHERE'"
    );
    assert_eq!(
        parse(
            &CONFIG.replace(r#"{"", 0, "", 4, 250.0, 0, 1}"#, r#"{"", 0, "", many, 250.0, 0, 1}"#),
            "b.cfg"
        )
        .expect_err("refused")
        .to_string(),
        "b.cfg:6: \"environment information\": field 4 (n_nodes): expected a whole number, found 'many'"
    );
    assert_eq!(
        bad("garbage;;"),
        "b.cfg:10: expected \"record name\" {fields};;, found 'garbage'"
    );
    // The multi-line record is reported at its first line.
    let text = CONFIG.replace("2.5, 0.000001", "fast, 0.000001");
    assert_eq!(
        parse(&text, "c.cfg").expect_err("refused").to_string(),
        "c.cfg:7: \"multi node information\": field 5 (cpu_speed_ratio): expected a number, found 'fast'"
    );
    assert_eq!(
        parse("hello\n", "h.cfg").expect_err("refused").to_string(),
        "h.cfg:1: expected #DIMEMAS_CONFIGURATION, found 'hello'"
    );
    // Values out of range name the record's line and the field.
    let multi = |ratio: &str, latency: &str| {
        let text = CONFIG.replace("2.5, 0.000001", &format!("{ratio}, {latency}"));
        parse(&text, "m.cfg").map(|_| ()).map_err(|e| e.to_string())
    };
    // 0: instantaneous bursts, as in Dimemas; a negative ratio only for modules.
    assert_eq!(multi("0", "0.000001"), Ok(()));
    assert_eq!(
        multi("-2", "0.000001"),
        Err(
            "m.cfg:7: \"multi node information\": field 5 (cpu_speed_ratio): -2: a negative ratio (a fixed \
                 duration) is for \"modules information\" only; Dimemas refuses it on nodes (\"invalid CPU ratio\")"
                .into()
        )
    );
    assert_eq!(
        multi("1", "-0.5"),
        Err(
            "m.cfg:7: \"multi node information\": field 6 (intra_latency_s): expected a non-negative number, \
                 found '-0.5'"
                .into()
        )
    );
    assert_eq!(multi("1", "0"), Ok(()));
    let inter = CONFIG.replace("0.0000005", "-1e-6");
    assert_eq!(
        parse(&inter, "i.cfg").expect_err("refused").to_string(),
        "i.cfg:7: \"multi node information\": field 11 (inter_latency_s): expected a non-negative number, found \
             '-1e-6'"
    );
    assert_eq!(
        parse(
            &CONFIG.replace(r#"{"", 0, "", 4, 250.0, 0, 1}"#, r#"{"", 0, "", 4, -250.0, 0, 1}"#),
            "b.cfg"
        )
        .expect_err("refused")
        .to_string(),
        "b.cfg:6: \"environment information\": field 5 (bw_MBps): expected a non-negative number, found '-250.0'"
    );
    // A block comment that never ends names the line where it opens.
    let open = format!("{CONFIG}/* never closed\n\"mapping information\" {{\"app.dim\", 1, [1] {{0}}}};;\n");
    assert_eq!(
        parse(&open, "o.cfg").expect_err("refused").to_string(),
        "o.cfg:10: a comment opened with /* here is never closed with */"
    );
    let inline = format!("{CONFIG}\"predefined mapping information\" {{\"FILL_NODES\"}};; /* and then\n\n");
    assert_eq!(
        parse(&inline, "o.cfg").expect_err("refused").to_string(),
        "o.cfg:10: a comment opened with /* here is never closed with */"
    );
}
