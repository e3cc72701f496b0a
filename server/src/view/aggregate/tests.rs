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
