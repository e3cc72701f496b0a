//! Malformed lines: nothing is written for them, the offending client keeps its valid
//! state and keeps being served, other clients are unaffected, the report counts them.

use std::time::Duration;

use vesper_protocol::{ClientMessage, DataMessage};
use vesper_server::Report;
use vesper_tests::{Client, HUGE_STOP_NS, TestServer, assert_only_completion, config, message, send, stop};

/// Lines the parser must reject (the bad tokens `0x1`/`0x2` would show up in a reply
/// if one were wrongly accepted as a message).
const PARSE_ERRORS: &[&[u8]] = &[
    b"HELLO world\n",
    b"SEND abc 0 1 7 1024 0x1 0x2 0 1 0 0\n",
    b"SEND -5 0 1 7 1024 0x1 0x2 0 1 0 0\n",
    b"SEND 1e400 0 1 7 1024 0x1 0x2 0 1 0 0\n",
    b"SEND 6500 0 1 7 2147483648 0x1 0x2 0 1 0 0\n",
    b"SEND 6500 0 1 7 1024 0xZZ 0x2 0 1 0 0\n",
    b"SEND 6500 0 1 7 1024 0x1 0x2 0 1 0\n",
    b"SEND 6500 0 1 7 1024 0x1 0x2 0 1 0 0 extra\n",
    b"SEND 6500 0 4294967296 7 1024 0x1 0x2 0 4294967296 0 0\n",
    b"PROTO MAYBE 6500 0 1\n",
    b"STOP\n",
    b"STOP nan\n",
    b"STOP -1\n",
    b"STOP inf\n",
    b"\xff\xfeSTOP 1\n",
    b"SEND 6500 0 1 7 1024 0x1 0x2 0 1 0 0\xc3\xa9\n",
];

/// Lines that parse but name a node the network (4 hosts) does not have.
const UNKNOWN_NODES: &[&[u8]] = &[
    b"SEND 6500 0 9 7 1024 0x1 0x2 0 9 0 0\n",
    b"PROTO READY_TO_RECV 6500 7 1 7 1024 0x1 0x2 7 1 0 0\n",
];

/// Writes each line on its own; returns how many.
fn garbage(c: &mut Client, lines: &[&[u8]]) -> u64 {
    for line in lines {
        c.send_raw(line);
    }
    lines.len() as u64
}

/// Runs the spec's eager exchange on client A with bad lines everywhere (before,
/// inside and after batches) and a clean exchange on client B; every reply must be
/// exactly the clean one. Returns the report and how many bad lines A sent.
fn exchange_with_bad_lines() -> (Report, u64) {
    let mut cfg = config(4, 2);
    cfg.max_line = 128;
    let server = TestServer::start(cfg);
    let mut a = server.client();
    let mut b = server.client();
    let mut bad = 0u64;

    let ma = message(6500.0, 0, 1, 1024, 1);
    let mb = message(6500.0, 2, 3, 1024, 2);
    bad += garbage(&mut a, PARSE_ERRORS);
    bad += garbage(&mut a, UNKNOWN_NODES);
    a.send(&[send(ma)]);
    bad += garbage(&mut a, PARSE_ERRORS);
    a.send(&[stop(6500.0)]);
    // If the length limit were not enforced this would be a STOP at 1e200 and the
    // reply would carry the completion.
    let overlong = format!("STOP 1{}\n", "0".repeat(200));
    a.send_raw(overlong.as_bytes());
    bad += 1;
    // A line far beyond the limit, in pieces, without a newline until the end.
    for _ in 0..64 {
        a.send_raw(&[b'x'; 1024]);
    }
    a.send_raw(b"\n");
    bad += 1;
    bad += garbage(&mut a, UNKNOWN_NODES);
    a.send(&[ClientMessage::End]);
    b.send(&[send(mb), stop(6500.0), ClientMessage::End]);
    assert_eq!(a.read_reply().text(), "END\n");
    assert_eq!(b.read_reply().text(), "END\n");

    // Garbage between batches: no reply at all.
    bad += garbage(&mut a, PARSE_ERRORS);
    a.expect_silence(Duration::from_millis(100));

    a.send(&[stop(1e9), ClientMessage::End]);
    b.send(&[stop(1e9), ClientMessage::End]);
    let reply = a.read_reply();
    assert_eq!(
        reply.text(),
        format!("COMPLETED SEND 10746 0 1 1024 {} {} 0 1 6500\nEND\n", ma.ev, ma.ev_out)
    );
    let reply = b.read_reply();
    assert_eq!(
        reply.text(),
        format!("COMPLETED SEND 10746 2 3 1024 {} {} 2 3 6500\nEND\n", mb.ev, mb.ev_out)
    );

    bad += garbage(&mut a, UNKNOWN_NODES);
    a.send(&[stop(10746.0), ClientMessage::End]);
    b.send(&[stop(10746.0), ClientMessage::End]);
    assert_eq!(a.read_reply().text(), "END\n");
    assert_eq!(b.read_reply().text(), "END\n");
    a.finish();
    b.finish();
    (server.wait(), bad)
}

#[test]
fn malformed_lines_change_no_reply() {
    let (report, _) = exchange_with_bad_lines();
    let clients = &report.simulation.clients;
    assert_eq!(clients.len(), 2);
    assert!(clients.iter().all(|c| c.finished));
    // Only the valid message of each client was accepted.
    assert_eq!((clients[0].messages, clients[0].bytes), (1, 1024));
    assert_eq!((clients[1].messages, clients[1].bytes), (1, 1024));
    assert_eq!(clients[1].bad_lines, 0);
    assert_eq!(report.simulation.messages_in_flight_at_exit, 0);
}

#[test]
fn unknown_node_ids_are_counted_as_bad_lines() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    for line in UNKNOWN_NODES {
        c.send_raw(line);
    }
    assert_eq!(c.stop(6500.0).text(), "END\n");
    c.finish();
    let report = server.wait();
    let client = &report.simulation.clients[0];
    assert_eq!(client.bad_lines, UNKNOWN_NODES.len() as u64);
    assert_eq!((client.messages, client.rendezvous_messages), (0, 0));
}

#[test]
fn a_message_too_late_to_arrive_is_refused_and_time_goes_on() {
    // Within the clock's range, but with no room left to arrive: refused, and the
    // model's clock is not pushed to its end by it.
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    c.send_raw(b"SEND 1.8446744073709e16 0 1 7 100 0x1 0x2 0 1 0 0\n");
    assert_eq!(c.stop(1e9).text(), "END\n");
    let m = message(2e9, 2, 3, 1024, 1);
    assert_eq!(c.exchange(&[send(m), stop(2e9), ClientMessage::End]).text(), "END\n");
    assert_only_completion(&c.stop(HUGE_STOP_NS), &m, 2e9 + 4246.0, 2e9);
    c.finish();
    let report = server.wait();
    let client = &report.simulation.clients[0];
    assert_eq!((client.bad_lines, client.messages), (1, 1));
}

#[test]
fn a_stop_beyond_the_last_instant_leaves_the_clock_where_it_was() {
    // A STOP beyond the last instant for messages means "until the next completion"
    // (as Dimemas's 2.52e17 does): with nothing in flight it is answered at once and
    // the clock stays, so a message stamped 1000 is served, not moved up past the last
    // instant and refused (which left the client waiting for it forever before that).
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    assert_eq!(c.stop(9.3e15).text(), "END\n");
    let m = message(1000.0, 0, 1, 100, 1);
    assert_eq!(c.exchange(&[send(m), stop(1000.0), ClientMessage::End]).text(), "END\n");
    let reply = c.stop(HUGE_STOP_NS);
    assert_eq!(reply.completions.len(), 1, "{}", reply.text());
    c.finish();
    let report = server.wait();
    let client = &report.simulation.clients[0];
    assert_eq!((client.bad_lines, client.messages, client.clamped_times), (0, 1, 0));
}

#[test]
fn malformed_lines_are_counted_in_the_report() {
    let (report, bad) = exchange_with_bad_lines();
    let clients = &report.simulation.clients;
    assert_eq!(clients[0].bad_lines, bad, "client A's bad lines");
    assert_eq!(clients[1].bad_lines, 0);
}

/// Sends `batches` (each a list of messages at 1000 ns, then STOP 1000) to a server
/// with `limits` (max_in_flight, max_batch), then collects every completion. Returns
/// the report and the tokens that came back.
fn limited(limits: (usize, usize), batches: &[&[DataMessage]]) -> (Report, Vec<String>) {
    let mut cfg = config(4, 1);
    (cfg.max_in_flight, cfg.max_batch) = limits;
    let server = TestServer::start(cfg);
    let mut c = server.client();
    for batch in batches {
        let mut lines: Vec<ClientMessage> = batch.iter().copied().map(send).collect();
        lines.extend([stop(1000.0), ClientMessage::End]);
        assert_eq!(c.exchange(&lines).text(), "END\n");
    }
    let mut tokens = Vec::new();
    while tokens.len() < 4 {
        let reply = c.stop(HUGE_STOP_NS);
        assert!(!reply.completions.is_empty(), "{}", reply.text());
        tokens.extend(reply.completions.iter().map(|d| d.ev.to_string()));
    }
    // Nothing else is in flight: a huge STOP is answered at once.
    assert_eq!(c.stop(HUGE_STOP_NS).text(), "END\n");
    c.finish();
    (server.wait(), tokens)
}

fn five_messages() -> Vec<DataMessage> {
    [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3)]
        .iter()
        .zip(1..)
        .map(|(&(src, dst), n)| message(1000.0, src, dst, 1024, n))
        .collect()
}

#[test]
fn messages_beyond_the_in_flight_limit_are_ignored_and_counted() {
    let m = five_messages();
    let (report, tokens) = limited((4, 1 << 16), &[&m[..3], &m[3..]]);
    assert_eq!(tokens.len(), 4);
    assert!(!tokens.contains(&m[4].ev.to_string()), "{tokens:?}");
    let client = &report.simulation.clients[0];
    assert_eq!(client.messages, 4);
    assert_eq!(client.bad_lines, 1);
}

#[test]
fn lines_beyond_the_batch_limit_are_dropped() {
    let m = five_messages();
    let (report, tokens) = limited((1 << 20, 4), &[&m[..]]);
    assert_eq!(tokens.len(), 4);
    assert!(!tokens.contains(&m[4].ev.to_string()), "{tokens:?}");
    assert_eq!(report.simulation.clients[0].messages, 4);
}

#[test]
fn lines_beyond_the_batch_limit_are_counted_in_the_report() {
    let m = five_messages();
    let (report, _) = limited((1 << 20, 4), &[&m[..]]);
    assert_eq!(report.simulation.clients[0].bad_lines, 1);
}
