use super::*;

/// Threads 0 and 1 are hosts' ports, 2 to 5 a switch's.
fn hosts_and_a_switch() -> Vec<bool> {
    vec![true, true, false, false, false, false]
}

/// Messages of awkward sizes over spans that cross many bins, some of no length, the
/// last far beyond the first bins' reach.
const RECORDS: [(Thread, Thread, u64, u64, u64); 6] = [
    (0, 2, 0, 1_000, 1_001),
    (0, 2, 500, 9_731, 65_537),
    (3, 1, 700, 700, 17),
    (3, 1, 4_000, 2_000_003, 999_999),
    (4, 5, 123_456, 123_457, 3),
    (0, 2, 3_000_000, 7_654_321, 1 << 20),
];

fn fed(end_ns: u64) -> Aggregate {
    let mut a = Aggregate::new(hosts_and_a_switch(), end_ns);
    for (from, to, send, receive, size) in RECORDS {
        a.communication(from, to, send, receive, size).expect("a link record");
    }
    a
}

#[test]
fn a_links_bins_add_up_to_its_records_bytes() {
    let a = fed(0);
    let window = a.window(0, u64::MAX, true);
    assert_eq!(a.links().len(), 3);
    for (link, w) in a.links().iter().zip(&window.links) {
        let records: u64 = RECORDS
            .iter()
            .filter(|r| (r.0, r.1) == (link.from, link.to))
            .map(|r| r.4)
            .sum();
        assert_eq!(link.bytes, records, "{link:?}");
        assert_eq!(w.bins.iter().sum::<u64>(), records, "{link:?}");
        assert_eq!(w.bytes, records);
    }
    assert_eq!(a.counts().link_communications, 6);
    assert_eq!(a.end_ns(), 7_654_321);
    // 7,654,321 ns in 256 bins: 32,768 ns wide (16,384 would end at 4,194,304).
    assert_eq!(a.axis().bin_ns(), 32_768);
    assert_eq!(a.used_bins(), 7_654_320 / 32_768 + 1);
}

/// Bins widened as a stream grows are the bins a finished trace makes at once, so a
/// live view and the file view of one run agree.
#[test]
fn bins_widened_as_records_come_equal_bins_made_at_the_final_width() {
    let (grown, direct) = (fed(0), fed(7_654_321));
    assert_eq!(grown.axis(), direct.axis());
    assert_eq!(grown.window(0, u64::MAX, true), direct.window(0, u64::MAX, true));
    assert_eq!(grown.activity(), direct.activity());
}

/// Within a record, the bytes go where the time goes: a message spread evenly over
/// four bins puts a quarter in each.
#[test]
fn a_records_bytes_are_spread_over_its_time() {
    let mut a = Aggregate::new(hosts_and_a_switch(), 1024);
    assert_eq!(a.axis().bin_ns(), 4);
    a.communication(0, 2, 8, 24, 1000).expect("a link record");
    let w = a.window(0, 1024, true);
    assert_eq!(&w.links[0].bins[..8], &[0, 0, 250, 250, 250, 250, 0, 0]);
}

#[test]
fn a_record_between_two_hosts_is_end_to_end_not_a_link() {
    let mut a = Aggregate::new(hosts_and_a_switch(), 100);
    a.communication(0, 1, 10, 20, 64).expect("an end-to-end record");
    assert!(a.links().is_empty());
    assert_eq!(a.counts().end_to_end_communications, 1);
    assert_eq!(a.counts().link_communications, 0);
}

#[test]
fn a_port_that_sends_to_two_ports_or_a_thread_beyond_the_trace_is_refused() {
    let mut a = fed(0);
    assert_eq!(
        a.communication(0, 3, 0, 1, 1),
        Err(AggregateError::TwoPeers {
            from: 0,
            to: 3,
            before: 2
        })
    );
    assert_eq!(
        a.state(6, 0, 1, 1),
        Err(AggregateError::NoSuchThread { thread: 6, threads: 6 })
    );
    assert_eq!(
        a.communication(2, 60, 0, 1, 1),
        Err(AggregateError::NoSuchThread { thread: 60, threads: 6 })
    );
    // Nothing of the refused records was counted.
    assert_eq!(a.links()[0].bytes, 1_001 + 65_537 + (1 << 20));
}

#[test]
fn a_window_is_snapped_to_whole_bins_and_cut_to_the_trace() {
    let mut a = Aggregate::new(hosts_and_a_switch(), 1000);
    assert_eq!(a.axis().bin_ns(), 4);
    a.communication(0, 2, 0, 1000, 1000).expect("a link record");
    let w = a.window(5, 9, true);
    assert_eq!((w.from_ns, w.to_ns), (4, 12));
    assert_eq!(w.links[0].bins, [4, 4]);
    assert_eq!(w.links[0].bytes, 8);
    // Beyond the end: the last bin, which ends with the trace.
    let w = a.window(5000, 6000, false);
    assert_eq!((w.from_ns, w.to_ns), (996, 1000));
    assert_eq!(w.links[0].bytes, 4);
    assert!(w.links[0].bins.is_empty());
    // An empty window is one bin.
    let w = a.window(8, 8, false);
    assert_eq!((w.from_ns, w.to_ns), (8, 12));
}

#[test]
fn a_ports_backlog_keeps_its_highest_and_mean_level() {
    let mut a = Aggregate::new(hosts_and_a_switch(), 1024);
    a.state(3, 0, 6, 2).expect("a state");
    a.state(3, 6, 8, 5).expect("a state");
    a.state(4, 0, 8, 0).expect("an empty port has no backlog");
    a.state(5, 2, 6, 1).expect("a state");
    assert_eq!(a.counts().states, 4);
    let w = a.window(0, 8, false);
    assert_eq!(w.ports.len(), 2);
    let port = w.ports[0];
    assert_eq!((port.thread, port.max_level), (3, 5));
    assert_eq!(port.mean_level, f64::from(6 * 2 + 2 * 5) / 8.0);
    assert_eq!(
        (w.ports[1].thread, w.ports[1].max_level, w.ports[1].mean_level),
        (5, 1, 0.5)
    );
    // Widened, the integral is kept and the highest level too.
    a.state(5, 4000, 4096, 1).expect("a state far on");
    assert_eq!(a.axis().bin_ns(), 16);
    let w = a.window(0, 16, false);
    assert_eq!(w.ports[0].max_level, 5);
    assert_eq!(w.ports[0].mean_level, f64::from(6 * 2 + 2 * 5) / 16.0);
}

/// The widest axis holds every time a trace can hold; nothing overflows.
#[test]
fn the_last_nanosecond_fits() {
    let mut a = Aggregate::new(hosts_and_a_switch(), 0);
    a.communication(0, 2, u64::MAX - 10, u64::MAX, u64::MAX)
        .expect("a link record");
    a.communication(0, 2, 0, u64::MAX, 1).expect("a link record");
    a.state(3, 0, u64::MAX, 999).expect("a state");
    a.event(4, u64::MAX).expect("an event");
    let w = a.window(0, u64::MAX, true);
    assert_eq!(w.links[0].bins.iter().fold(0u64, |s, b| s.saturating_add(*b)), u64::MAX);
    assert_eq!(a.used_bins(), BINS);
    assert_eq!(w.to_ns, u64::MAX);
}

/// A message of link 0 → 2 (whose tag is `tag`) whose first byte leaves at `send_ns`.
fn message(tag: u64, send_ns: u64, size_bytes: u64) -> Message {
    Message {
        tag,
        logical_send_ns: send_ns.saturating_sub(5),
        send_ns,
        logical_receive_ns: send_ns + 1,
        receive_ns: send_ns + 10,
        size_bytes,
    }
}

/// With no more messages than a link keeps, the messages listed are all of them: their
/// sizes add up to the link's bytes and their count is its count.
#[test]
fn a_links_messages_add_up_to_its_bytes_when_none_were_dropped() {
    let mut a = Aggregate::new(hosts_and_a_switch(), 0);
    for (tag, (from, to, send, receive, size)) in RECORDS.into_iter().enumerate() {
        let m = Message {
            tag: tag as u64 + 1,
            logical_send_ns: send,
            send_ns: send,
            logical_receive_ns: send,
            receive_ns: receive,
            size_bytes: size,
        };
        a.message(from, to, m).expect("a link record");
    }
    for (i, link) in a.links().iter().enumerate() {
        let m = a.link_messages(i, 0, u64::MAX, usize::MAX).expect("a link");
        assert_eq!(
            (m.messages, m.kept),
            (link.messages, link.messages as usize),
            "{link:?}"
        );
        assert_eq!(m.listed.iter().map(|m| m.size_bytes).sum::<u64>(), link.bytes);
        assert_eq!(m.bytes, link.bytes);
        let tags: Vec<u64> = RECORDS
            .iter()
            .enumerate()
            .filter(|(_, r)| (r.0, r.1) == (link.from, link.to))
            .map(|(tag, _)| tag as u64 + 1)
            .collect();
        assert_eq!(m.listed.iter().map(|m| m.tag).collect::<Vec<_>>(), tags);
    }
    assert!(a.link_messages(3, 0, u64::MAX, 10).is_none());
    // A window inside a long message holds it: 4,000 to 2,000,003 ns on 3 → 1.
    let link = a.links().iter().position(|l| (l.from, l.to) == (3, 1)).expect("a link");
    let middle = a.link_messages(link, 1_000_000, 1_000_001, 10).expect("a link");
    assert_eq!((middle.messages, middle.kept), (1, 1));
    assert_eq!(middle.listed[0].tag, 4);
    // The first bin (32,768 ns) holds it and the message of no length at 700 ns; one
    // after its last byte neither.
    let first = a.link_messages(link, 0, 1, 10).expect("a link");
    assert_eq!(
        (first.messages, first.listed.iter().map(|m| m.tag).collect()),
        (2, vec![3, 4])
    );
    let after = a.link_messages(link, 3_000_000, 3_000_001, 10).expect("a link");
    assert_eq!((after.messages, after.kept), (0, 0));
}

/// A link with more messages in a group of bins than it keeps keeps the first by the
/// time their first byte left (whatever order they came in) and counts them all.
#[test]
fn a_link_keeps_the_first_messages_of_a_group_and_counts_the_rest() {
    let mut a = Aggregate::new(hosts_and_a_switch(), 1 << 20);
    let bin = a.axis().bin_ns();
    // 50 messages in the first group's bins, in a shuffled order; 3 in the next group.
    let mut sends: Vec<u64> = (0..50)
        .map(|i| (i * 37) % 50 * (GROUP_BINS as u64 * bin / 50))
        .collect();
    sends.extend((0..3).map(|i| GROUP_BINS as u64 * bin + i));
    for (tag, &send) in sends.iter().enumerate() {
        a.message(0, 2, message(tag as u64, send, 100)).expect("a link record");
    }
    let whole = a.link_messages(0, 0, u64::MAX, usize::MAX).expect("a link");
    assert_eq!(whole.messages, 53);
    assert_eq!(whole.kept, 2 * MESSAGES_PER_GROUP);
    let mut first: Vec<(u64, u64)> = sends[..50].iter().enumerate().map(|(t, &s)| (s, t as u64)).collect();
    first.sort_unstable();
    let expected: Vec<u64> = first[..MESSAGES_PER_GROUP]
        .iter()
        .map(|&(_, t)| t)
        .chain(50..50 + MESSAGES_PER_GROUP as u64)
        .collect();
    assert_eq!(whole.listed.iter().map(|m| m.tag).collect::<Vec<_>>(), expected);
    // The first group alone: 50 counted, MESSAGES_PER_GROUP kept; a limit cuts the list.
    let group = a.link_messages(0, 0, GROUP_BINS as u64 * bin, 1).expect("a link");
    assert_eq!(
        (group.messages, group.kept, group.listed.len()),
        (50, MESSAGES_PER_GROUP, 1)
    );
    // Memory: the sample, whatever the messages (sizes as the docs' figures say).
    assert_eq!((size_of::<Message>(), size_of::<TimedEvent>()), (48, 16));
    assert_eq!(a.bin_bytes(), BINS * 16 + 2 * MESSAGES_PER_GROUP * size_of::<Message>());
}

/// Samples and event counts widened as a stream grows equal those made at the final
/// width from the start.
#[test]
fn samples_widened_as_records_come_equal_samples_made_at_the_final_width() {
    let feed = |end_ns: u64| {
        let mut a = Aggregate::new(hosts_and_a_switch(), end_ns);
        for i in 0..400u64 {
            let send = (i * 7919) % 100_000;
            a.message(0, 2, message(i, send, i + 1)).expect("a link record");
            let event = [PortEvent::StopReceived, PortEvent::GoReceived, PortEvent::HolStart][i as usize % 3];
            a.port_event(4, send, event).expect("an event");
        }
        a
    };
    let grown = feed(0);
    let direct = feed(grown.end_ns());
    assert_eq!(grown.axis(), direct.axis());
    for (from, to) in [(0, u64::MAX), (0, 3000), (50_000, 60_000)] {
        assert_eq!(
            grown.link_messages(0, from, to, usize::MAX),
            direct.link_messages(0, from, to, usize::MAX)
        );
        assert_eq!(
            grown.port_detail(4, from, to, usize::MAX),
            direct.port_detail(4, from, to, usize::MAX)
        );
    }
    let whole = direct.link_messages(0, 0, u64::MAX, usize::MAX).expect("a link");
    assert_eq!(whole.messages, 400);
    assert!(whole.kept <= MESSAGES_PER_GROUP * BINS / GROUP_BINS);
}

/// A port's events: counted per bin by kind (starts), kept in its sample (starts and
/// ends), its backlog per bin beside them.
#[test]
fn a_ports_events_are_counted_per_bin_and_listed() {
    let mut a = Aggregate::new(hosts_and_a_switch(), 1024);
    assert_eq!(a.axis().bin_ns(), 4);
    a.state(3, 0, 6, 2).expect("a state");
    for (at, event) in [
        (1, PortEvent::StopSent),
        (2, PortEvent::GoSent),
        (5, PortEvent::HolStart),
        (6, PortEvent::HolEnd),
        (9, PortEvent::WaitStart),
        (9, PortEvent::StopReceived),
        (10, PortEvent::WaitEnd),
    ] {
        a.port_event(3, at, event).expect("an event");
    }
    let d = a.port_detail(3, 0, 12, usize::MAX).expect("a port");
    assert_eq!((d.from_ns, d.to_ns), (0, 12));
    assert_eq!(d.max_level, [2, 2, 0]);
    assert_eq!(d.mean_level, [2.0, 1.0, 0.0]);
    // STOP, GO, HOL, wait per bin.
    assert_eq!(d.marks, [[1, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 1]]);
    assert_eq!(d.totals, [2, 1, 1, 1]);
    // Two kept per group of four bins: the first two by time.
    assert_eq!(d.kept_events, EVENTS_PER_GROUP);
    assert_eq!(
        d.events,
        [
            TimedEvent {
                at_ns: 1,
                event: PortEvent::StopSent
            },
            TimedEvent {
                at_ns: 2,
                event: PortEvent::GoSent
            }
        ]
    );
    // A port without events or backlog has empty bins; a thread beyond the trace none.
    let quiet = a.port_detail(5, 0, 12, 10).expect("a port");
    assert_eq!(quiet.totals, [0; MARKS]);
    assert!(quiet.events.is_empty() && quiet.max_level.iter().all(|&l| l == 0));
    assert!(a.port_detail(6, 0, 12, 10).is_none());
    assert_eq!(PortEvent::of(70_000_002, 2), Some(PortEvent::GoReceived));
    assert_eq!(PortEvent::of(70_000_004, 1), None);
}
