use std::collections::BTreeMap;
use std::io::Cursor;

use vesper_netmodels::{
    LinkParams, MemoryOutput, MessageSpec, Network as _, NetworkBuilder, ParaverOptions, RailPolicy, RecordingSink,
    SimTime, TraceSummary, TracedNetwork, Xgft,
};

use super::*;
use crate::view::http::{WindowQuery, window_json};

/// A 4-ary 2-tree: 16 hosts, 4 leaf and 4 top switches.
fn fat_tree() -> NetworkBuilder {
    let tree = Xgft::kary_ntree(4, 2).expect("a valid tree");
    NetworkBuilder::new(tree.topology(LinkParams::default()))
}

/// Every host sends to five others, messages of uneven sizes at uneven times: (time
/// \[ns\], message), in time order.
fn messages() -> Vec<(u64, MessageSpec)> {
    let mut messages = Vec::new();
    for src in 0..16u32 {
        for k in 1..=5u32 {
            let spec = MessageSpec {
                src: vesper_netmodels::HostId(src),
                dst: vesper_netmodels::HostId((src + 3 * k) % 16),
                size_bytes: 1000 + (7919 * src * k) % 50_000,
                cookie: u64::from(src * 8 + k),
            };
            messages.push((u64::from(src * k) * 1000, spec));
        }
    }
    messages.sort_by_key(|(at, spec)| (*at, spec.src, spec.dst));
    messages
}

/// The fat tree's trace of [`messages`] (with end-to-end records), and its summary.
fn traced() -> (MemoryOutput, TraceSummary) {
    let options = ParaverOptions {
        end_to_end: true,
        ..ParaverOptions::default()
    };
    let mut net = TracedNetwork::build(
        vec![fat_tree()],
        RailPolicy::RoundRobin,
        &options,
        MemoryOutput::default(),
    )
    .expect("a valid network");
    let mut deliveries = Vec::new();
    for (at, spec) in messages() {
        let at = SimTime::from_ns(at);
        net.run_until(at, &mut deliveries);
        net.inject(at, spec).expect("a valid message");
    }
    net.run_until(SimTime::MAX, &mut deliveries);
    let summary = net.finish_trace().expect("written").expect("traced");
    (net.output().clone(), summary)
}

/// The model's own count of what crossed each link: the bytes of every link traversal
/// it reports for [`messages`] on the fat tree, by (sending port, receiving port).
fn model_link_bytes() -> BTreeMap<(String, String), u64> {
    let mut sim = fat_tree().build_with_sink(RecordingSink::default()).expect("valid");
    let mut deliveries = Vec::new();
    for (at, spec) in messages() {
        let at = SimTime::from_ns(at);
        sim.run_until(at, &mut deliveries);
        sim.inject(at, spec).expect("a valid message");
    }
    sim.run_until(SimTime::MAX, &mut deliveries);
    assert_eq!(deliveries.len(), messages().len());
    let name = |p: vesper_netmodels::PortRef| format!("{}.p{}", p.device, p.port);
    let mut bytes = BTreeMap::new();
    for t in &sim.sink().traversals {
        *bytes.entry((name(t.sender), name(t.receiver))).or_insert(0) += u64::from(t.size_bytes);
    }
    bytes
}

/// What the reader makes of a trace's text.
fn read_text(prv: &[u8], row: &str, pcf: Option<&str>) -> Shared {
    let files = TraceFiles {
        prv_path: "net.prv".into(),
        prv: Box::new(Cursor::new(prv.to_vec())),
        row: ("net.row".into(), row.to_string()),
        pcf: pcf.map(|text| ("net.pcf".into(), text.to_string())),
        topology: None,
    };
    let shared = Arc::new(RwLock::new(Shared::new("net.prv".into(), 250.0)));
    load(files, &shared);
    let shared = Arc::try_unwrap(shared).expect("the reader is done");
    shared.into_inner().expect("not poisoned")
}

fn read_output(out: &MemoryOutput) -> Shared {
    read_text(out.prv().as_bytes(), &out.row, Some(&out.pcf))
}

/// Each link's bins add up to the bytes the model says crossed it, every link the
/// model used is there (and no other), and the busiest link is the model's.
#[test]
fn the_bins_hold_what_the_model_says_crossed_each_link() {
    let (out, summary) = traced();
    let state = read_output(&out);
    assert_eq!(state.problem, None);
    assert!(!state.loading);
    let a = &state.aggregate;
    let name = |t: Thread| state.names.threads[t as usize].clone();
    let window = a.window(0, u64::MAX, true);
    let mut seen = BTreeMap::new();
    for (link, w) in a.links().iter().zip(&window.links) {
        assert_eq!(
            w.bins.iter().sum::<u64>(),
            link.bytes,
            "{} → {}",
            name(link.from),
            name(link.to)
        );
        assert_eq!(w.bytes, link.bytes);
        seen.insert((name(link.from), name(link.to)), link.bytes);
    }
    let model = model_link_bytes();
    assert_eq!(seen, model);
    // A 4-ary 2-tree has 16 + 16 cables, 64 links; the messages use them all.
    assert_eq!(seen.len(), 64);

    // The ten busiest, busiest first: the model's ten largest.
    let top = window_json(&state, WindowQuery::default()).top;
    let mut most: Vec<u64> = model.values().copied().collect();
    most.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(top.iter().map(|l| l.bytes).collect::<Vec<_>>(), most[..10]);
    for l in &top {
        assert_eq!(model[&(l.from.clone(), l.to.clone())], l.bytes, "{l:?}");
    }

    // The records are the trace's: its summary counts them.
    let c = a.counts();
    assert_eq!(c.end_to_end_communications, messages().len() as u64);
    assert_eq!(
        c.link_communications + c.end_to_end_communications,
        summary.communications
    );
    assert_eq!((c.states, c.events), (summary.states, summary.events));
    assert_eq!(a.end_ns(), summary.end_ns);
    assert_eq!(state.quantum_bytes, Some(1024));
}

/// Physics: no link carries more than its rate allows over the run, and the busiest
/// link's utilisation over the run is at most 1.
#[test]
fn no_link_carries_more_than_its_rate() {
    let (out, _) = traced();
    let state = read_output(&out);
    let rate = LinkParams::default().bandwidth.bytes_per_second_f64();
    assert_eq!(rate, 250e6, "the view's default link rate is the models'");
    let end_s = state.aggregate.end_ns() as f64 * 1e-9;
    for link in state.aggregate.links() {
        assert!(link.bytes as f64 <= rate * end_s, "{link:?}");
    }
    let top = window_json(&state, WindowQuery::default()).top;
    let busiest = top.first().expect("traffic");
    assert!(busiest.utilisation > 0.0 && busiest.utilisation <= 1.0, "{busiest:?}");
}

#[test]
fn a_malformed_line_stops_the_reading_at_its_line_and_keeps_what_came_before() {
    let (out, _) = traced();
    let prv = out.prv();
    let mut lines: Vec<&str> = prv.lines().collect();
    lines[9] = "3:0:1:x";
    let state = read_text(lines.join("\n").as_bytes(), &out.row, None);
    let problem = state.problem.expect("a problem");
    assert!(problem.starts_with("net.prv line 10: expected a record"), "{problem}");
    let c = state.aggregate.counts();
    assert_eq!(
        c.link_communications + c.end_to_end_communications + c.states + c.events,
        8
    );
    assert_eq!(state.quantum_bytes, None);
}

/// A trace cut anywhere never stops the program: what came before the cut is read,
/// and a cut inside a line is said.
#[test]
fn a_trace_cut_anywhere_is_read_up_to_the_cut() {
    let (out, _) = traced();
    let prv = out.prv();
    let whole = prv.lines().count() as u64 - 1;
    for cut in (0..prv.len()).step_by(prv.len() / 97) {
        let state = read_text(&prv.as_bytes()[..cut], &out.row, Some(&out.pcf));
        let c = state.aggregate.counts();
        let read = c.link_communications + c.end_to_end_communications + c.states + c.events;
        let lines_before = prv[..cut].matches('\n').count() as u64;
        match state.problem {
            None => assert_eq!(read + 1, lines_before, "cut at {cut}"),
            Some(problem) if cut == 0 => assert_eq!(problem, "net.prv: empty; expected a Paraver trace"),
            Some(problem) if lines_before == 0 => assert!(problem.starts_with("net.prv line 1: "), "{problem}"),
            Some(problem) => {
                assert!(problem.contains("cut short"), "cut at {cut}: {problem}");
                assert_eq!(read + 1, lines_before, "cut at {cut}");
            }
        }
        assert!(read <= whole);
    }
}

#[test]
fn bytes_that_are_no_trace_are_a_problem_not_a_crash() {
    let row = "LEVEL TASK SIZE 1\nhost0\n\nLEVEL THREAD SIZE 1\nhost0.p0\n";
    let header = "#Paraver (01/01/2026 at 00:00):100_ns:0:1:1(1:0)\n";
    for (prv, expected) in [
        (
            &b"\xff\xfe\x00garbage\n"[..],
            "net.prv line 1: expected a Paraver header",
        ),
        (b"#Paraver (01/01/2026 at 00:00):100:0:1:1(1:0)\n", "`<end>_ns:`"),
        (
            b"#Paraver (01/01/2026 at 00:00):100_ns:0:1:2(1:0)\n",
            "2 tasks announced, 1 listed",
        ),
        (
            b"#Paraver (01/01/2026 at 00:00):100_ns:0:1:1(4194305:0)\n",
            "at most 4194304 are read",
        ),
        (
            b"#Paraver (01/01/2026 at 00:00):100_ns:0:1:1(2:0)\n",
            "net.row: line 4: LEVEL THREAD says 1",
        ),
    ] {
        let problem = read_text(prv, row, None).problem.expect("a problem");
        assert!(problem.contains(expected), "{problem}");
    }
    for (record, expected) in [
        (
            "1:0:1:1:2:0:10:1",
            "net.prv line 2: application 1 and a task and thread of the header expected",
        ),
        ("1:0:1:2:1:0:10:1", "task and thread"),
        ("1:0:2:1:1:0:10:1", "task and thread"),
        ("4:0:1:1:1:0:10:1", "expected a state (1, 8 fields)"),
        ("2:0:1:1:1:5:70000001", "expected a state"),
        (
            "3:0:1:1:1:0:0:0:1:1:1:0:0:5:99999999999999999999",
            "`:`-separated unsigned integers",
        ),
        ("\u{1}", "`:`-separated unsigned integers"),
    ] {
        let prv = format!("{header}{record}\n");
        let state = read_text(prv.as_bytes(), row, None);
        let problem = state.problem.expect("a problem");
        assert!(problem.contains(expected), "{record}: {problem}");
    }
    // A line longer than the limit is refused, not held.
    let mut long = header.as_bytes().to_vec();
    long.extend(std::iter::repeat_n(b'1', MAX_LINE + 10));
    let problem = read_text(&long, row, None).problem.expect("a problem");
    assert!(problem.contains("a line longer than"), "{problem}");
}

#[test]
fn the_header_is_read_with_or_without_resources() {
    let header = parse_header("#Paraver (01/01/2026 at 00:00):5000_ns:0:1:2(2:0,3:0)").expect("a header");
    assert_eq!(header.end_ns, 5000);
    assert_eq!(header.threads_of, [2, 3]);
    let header = parse_header("#Paraver (01/01/2026 at 00:00):5000_ns:2(4,4):1:2(2:1,3:2),1").expect("a header");
    assert_eq!(header.threads_of, [2, 3]);
    assert!(parse_header("#Paraver (01/01/2026 at 00:00):5000_ns:0:2:1(1:0):1(1:0)").is_err());
}

#[test]
fn hosts_are_named_host_with_their_rail_or_without() {
    let row = "LEVEL TASK SIZE 6\nhost5\nr1.host0\nsw3\nr0.sw1\nhostile\nrx.host1\n\n\
               LEVEL THREAD SIZE 6\nhost5.p0\nr1.host0.p0\nsw3.p0\nr0.sw1.p0\nhostile.p0\nrx.host1.p0\n";
    let header = parse_header("#Paraver (01/01/2026 at 00:00):5_ns:0:1:6(1:0,1:0,1:0,1:0,1:0,1:0)").expect("ok");
    let names = Names::of_row(row, &header).expect("names");
    let hosts: Vec<bool> = (0..6).map(|t| names.is_host(t)).collect();
    assert_eq!(hosts, [true, true, false, false, false, false]);
}

/// A port has one cable: a trace in which one sends to two ports is refused at the
/// second, by name.
#[test]
fn a_port_sending_to_two_ports_is_a_problem_naming_them() {
    let row = "LEVEL TASK SIZE 2\nhost0\nsw0\n\nLEVEL THREAD SIZE 3\nhost0.p0\nsw0.p0\nsw0.p1\n";
    let prv = "#Paraver (01/01/2026 at 00:00):100_ns:0:1:2(1:0,2:0)\n\
               3:0:1:1:1:0:0:0:1:2:1:5:9:10:1\n\
               3:0:1:1:1:9:9:0:1:2:2:15:19:10:2\n";
    let state = read_text(prv.as_bytes(), row, None);
    assert_eq!(
        state.problem.as_deref(),
        Some("net.prv line 3: port host0.p0 sends to sw0.p1 here but to sw0.p0 before: a link has one far end")
    );
    assert_eq!(state.aggregate.links().len(), 1);
    assert_eq!(state.aggregate.links()[0].bytes, 10);
}

/// Each link's messages are its records in the trace's text: counted all, the kept
/// ones with the tags and sizes the records give, and, where none were dropped, their
/// sizes add up to the link's bytes.
#[test]
fn a_links_messages_are_its_records() {
    let (out, _) = traced();
    let state = read_output(&out);
    let a = &state.aggregate;
    let prv = out.prv();
    let header = parse_header(prv.lines().next().expect("a header")).expect("a header");
    // The text's own count: per (from, to) thread, the records' (tag, size).
    let mut records: BTreeMap<(Thread, Thread), Vec<(u64, u64)>> = BTreeMap::new();
    for line in prv.lines().filter(|l| l.starts_with("3:")) {
        let f: Vec<u64> = line.split(':').map(|x| x.parse().expect("a number")).collect();
        let thread =
            |task: u64, thread: u64| header.threads_of[..task as usize - 1].iter().sum::<u32>() + thread as u32 - 1;
        records
            .entry((thread(f[3], f[4]), thread(f[9], f[10])))
            .or_default()
            .push((f[14], f[13]));
    }
    let mut whole = 0;
    for (i, link) in a.links().iter().enumerate() {
        let m = a.link_messages(i, 0, u64::MAX, usize::MAX).expect("a link");
        let text = &records[&(link.from, link.to)];
        assert_eq!(m.messages, text.len() as u64, "{link:?}");
        assert_eq!(m.kept, m.listed.len());
        for kept in &m.listed {
            assert!(text.contains(&(kept.tag, kept.size_bytes)), "{kept:?} of {link:?}");
        }
        if m.kept as u64 == m.messages {
            whole += 1;
            assert_eq!(m.listed.iter().map(|m| m.size_bytes).sum::<u64>(), link.bytes);
        }
    }
    assert!(whole > 0, "no link kept all its messages");
}
