//! The same script on a fresh server gives the same bytes and the same statistics.

use std::collections::BTreeMap;

use vesper_protocol::{ClientMessage, DataMessage};
use vesper_tests::{HUGE_STOP_NS, TestServer, assert_one_write, config, message, send, stop};

const NODES: u32 = 8;

/// All-to-all among 8 nodes at 1000 ns (1024 bytes, so seven messages contend for
/// every destination and eight complete at once, more than one reply holds), each
/// completion answered by a 512-byte message back, sent at the completion time.
/// Returns the reply transcript and the deterministic part of the report.
fn all_to_all() -> (String, String) {
    let server = TestServer::start(config(NODES, 1));
    let mut c = server.client();
    let mut n = 0u64;
    // token → (message, round)
    let mut outstanding: BTreeMap<String, (DataMessage, u32)> = BTreeMap::new();
    let mut batch = Vec::new();
    for src in 0..NODES {
        for dst in (0..NODES).filter(|&d| d != src) {
            n += 1;
            let m = message(1000.0, src, dst, 1024, n);
            outstanding.insert(m.ev.to_string(), (m, 1));
            batch.push(send(m));
        }
    }
    batch.extend([stop(1000.0), ClientMessage::End]);

    let mut delivered_bytes = 0u64;
    let mut last = 1000.0;
    for _ in 0..1000 {
        let reply = c.exchange(&batch);
        assert_one_write(&reply);
        batch.clear();
        if let Some(first) = reply.completions.first() {
            let t = first.time.0;
            assert!(t >= last, "time went back from {last} to {t}");
            last = t;
            for done in &reply.completions {
                assert_eq!(done.time.0, t, "a reply holds one time only: {}", reply.text());
                let (m, round) = outstanding
                    .remove(done.ev.as_str())
                    .unwrap_or_else(|| panic!("unknown or repeated completion {done:?}"));
                assert_eq!(
                    (done.src, done.dst, done.size, done.ev_out),
                    (m.src, m.dst, m.size, m.ev_out)
                );
                delivered_bytes += u64::from(m.size);
                if round == 1 {
                    n += 1;
                    let back = message(t, m.dst, m.src, 512, n);
                    outstanding.insert(back.ev.to_string(), (back, 2));
                    batch.push(send(back));
                }
            }
            batch.push(stop(t + 2000.0));
        } else if outstanding.is_empty() {
            break;
        } else {
            batch.push(stop(HUGE_STOP_NS));
        }
        batch.push(ClientMessage::End);
    }
    assert!(outstanding.is_empty(), "{} messages never completed", outstanding.len());
    let transcript = String::from_utf8_lossy(c.transcript()).into_owned();
    c.finish();

    let report = server.wait();
    let sim = &report.simulation;
    let pairs = u64::from(NODES * (NODES - 1));
    assert_eq!(sim.messages, 2 * pairs);
    // Conservation: every byte accepted was delivered exactly once.
    assert_eq!(sim.bytes, pairs * (1024 + 512));
    assert_eq!(delivered_bytes, sim.bytes);
    assert_eq!(sim.messages_in_flight_at_exit, 0);
    let json = serde_json::to_string(&report.simulation).expect("serialise the report");
    (transcript, json)
}

#[test]
fn all_to_all_runs_are_byte_identical() {
    let (first_transcript, first_report) = all_to_all();
    let (second_transcript, second_report) = all_to_all();
    assert_eq!(first_transcript, second_transcript);
    assert_eq!(first_report, second_report);
}

#[test]
fn all_to_all_first_completion_is_at_zero_load() {
    // Each source sends its seven messages in line order; the first of each reaches an
    // idle destination port: 1000 + 4246.
    let (transcript, _) = all_to_all();
    let first = transcript
        .lines()
        .find(|l| l.starts_with("COMPLETED"))
        .expect("a completion");
    assert_eq!(first.split(' ').nth(2), Some("5246"), "{first}");
}
