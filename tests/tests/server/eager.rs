//! Eager messages: the spec's typical exchange, byte for byte, and the wire forms the
//! client may use (tokens, the tag-less layout, exponents, fractions, split lines).

use vesper_protocol::{ClientMessage, DataMessage, Token};
use vesper_tests::{
    TestServer, assert_completion, assert_one_write, assert_only_completion, completed_line, config, message, send,
    stop, zero_load_ns,
};

/// The spec's eager exchange: 1024 bytes 0 → 1 at 6500 ns complete at 6500 + 4246.
fn spec_message() -> DataMessage {
    DataMessage {
        ev: Token::new("0x55a873d62cc0").expect("token"),
        ev_out: Token::new("0x55a873d62c60").expect("token"),
        ..message(6500.0, 0, 1, 1024, 0)
    }
}

#[test]
fn zero_load_latency_of_1024_bytes_is_4246_ns() {
    assert_eq!(zero_load_ns(1024), 4246);
}

#[test]
fn spec_eager_exchange_byte_for_byte() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let m = spec_message();

    c.send_raw(b"SEND 6500 0 1 7 1024 0x55a873d62cc0 0x55a873d62c60 0 1 0 0\nSTOP 6500\nEND\n");
    let reply = c.read_reply();
    assert_eq!(reply.text(), "END\n", "nothing completes by 6500");
    assert_one_write(&reply);

    let reply = c.stop(1e9);
    assert_eq!(
        reply.text(),
        "COMPLETED SEND 10746 0 1 1024 0x55a873d62cc0 0x55a873d62c60 0 1 6500\nEND\n"
    );
    assert_eq!(reply.text(), format!("{}END\n", completed_line("10746", &m, "6500")));
    assert_one_write(&reply);

    let reply = c.stop(10746.0);
    assert_eq!(reply.text(), "END\n");
    c.finish();

    let report = server.wait();
    let sim = &report.simulation;
    assert_eq!((sim.messages, sim.bytes), (1, 1024));
    assert_eq!(sim.sync_round_trips, 3);
    assert_eq!(sim.simulated_end_ns, 10746.0);
    assert_eq!(sim.clamped_times, 0);
    assert_eq!(sim.messages_in_flight_at_exit, 0);
    let latency = sim.latency_ns.expect("one latency sample");
    assert_eq!((latency.count, latency.min, latency.max), (1, 4246.0, 4246.0));
    assert_eq!(sim.clients.len(), 1);
    let client = &sim.clients[0];
    assert!(client.finished);
    assert_eq!((client.messages, client.bytes, client.round_trips), (1, 1024, 3));
    assert_eq!(
        (client.bad_lines, client.rendezvous_messages, client.rendezvous_requests),
        (0, 0, 0)
    );
}

#[test]
fn spec_eager_exchange() {
    let server = TestServer::start(config(4, 1));
    let mut r = server.client();
    let m = spec_message();
    assert!(r.batch(&[send(m), stop(6500.0), ClientMessage::End]).is_empty());
    let got = r.batch(&[stop(1e9), ClientMessage::End]);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_completion(&got[0], &m, 10746.0, 6500.0);
    assert!(r.batch(&[stop(10746.0), ClientMessage::End]).is_empty());
    assert_eq!(
        String::from_utf8_lossy(r.transcript()),
        "END\nCOMPLETED SEND 10746 0 1 1024 0x55a873d62cc0 0x55a873d62c60 0 1 6500\nEND\nEND\n"
    );
    r.finish();
    server.wait();
}

#[test]
fn tokens_are_echoed_byte_for_byte() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    c.send_raw(b"SEND 0 2 3 -1 100 (nil) 0XDeadBeef00000001 2 3 0 0\nSTOP 0\nEND\n");
    assert_eq!(c.read_reply().text(), "END\n");
    let reply = c.stop(1e9);
    assert_eq!(
        reply.text(),
        format!(
            "COMPLETED SEND {} 2 3 100 (nil) 0XDeadBeef00000001 2 3 0\nEND\n",
            zero_load_ns(100)
        )
    );
    c.finish();
    server.wait();
}

#[test]
fn tagless_layout_of_older_clients_is_accepted() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    c.send_raw(b"SEND 6500 0 1 1024 0x1 0x2 0 1 0 0\nSTOP 6500\nEND\n");
    assert_eq!(c.read_reply().text(), "END\n");
    assert_eq!(
        c.stop(1e9).text(),
        "COMPLETED SEND 10746 0 1 1024 0x1 0x2 0 1 6500\nEND\n"
    );
    c.finish();
    server.wait();
}

#[test]
fn exponent_and_full_precision_times_are_accepted() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    c.send_raw(b"SEND 6.5e3 0 1 7 1024 0x1 0x2 0 1 0 0\nSTOP 6.5E+3\nEND\n");
    assert_eq!(c.read_reply().text(), "END\n");
    // What the client prints: every digit of the double.
    c.send_raw(b"STOP 1000000000.00000000000000000000000000000000000000000000\nEND\n");
    assert_eq!(
        c.read_reply().text(),
        "COMPLETED SEND 10746 0 1 1024 0x1 0x2 0 1 6500\nEND\n"
    );
    c.finish();
    server.wait();
}

/// `x`, printed exactly, is not below the decimal `exact` (both with the same integer
/// part): the client's `%lg` must never read a time earlier than the event.
fn not_earlier(x: f64, exact: &str) -> bool {
    let printed = format!("{x:.60}");
    let (int, frac) = exact.split_once('.').unwrap_or((exact, ""));
    let padded = format!("{int}.{frac:0<60}");
    assert_eq!(printed.len(), padded.len(), "{printed} vs {padded}");
    printed >= padded
}

#[test]
fn fractional_times_are_never_reported_early() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    // 6500.3 ns is not a double: the server rounds it to 6 500 300 ps.
    let m = message(6500.3, 0, 1, 1024, 1);
    assert_eq!(c.exchange(&[send(m), stop(6500.3), ClientMessage::End]).text(), "END\n");
    let reply = c.stop(1e9);
    assert_eq!(reply.completions.len(), 1, "{}", reply.text());
    let done = reply.completions[0];
    let (arrival, phys) = (done.time.0, done.phys_send_time.expect("phys_send_time").0);
    assert!(not_earlier(arrival, "10746.3"), "arrival printed as {arrival}");
    assert!(not_earlier(phys, "6500.3"), "phys_send_time printed as {phys}");
    // …and no later than the next picosecond.
    assert!(arrival < 10746.301 && phys < 6500.301, "{}", reply.text());
    // The client STOPs at the time it read: the server must take it as that very time.
    assert_eq!(c.stop(arrival).text(), "END\n");
    c.finish();
    server.wait();
}

#[test]
fn lines_split_byte_by_byte_and_crlf_are_framed() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    for &b in b"SEND 6500 0 1 7 1024 0x1 0x2 0 1 0 0\r\nSTOP 6500\r\nEND\r\n" {
        c.send_raw(&[b]);
    }
    assert_eq!(c.read_reply().text(), "END\n");
    for &b in b"STOP 1000000000\nEND\n" {
        c.send_raw(&[b]);
    }
    assert_eq!(
        c.read_reply().text(),
        "COMPLETED SEND 10746 0 1 1024 0x1 0x2 0 1 6500\nEND\n"
    );
    c.finish();
    let report = server.wait();
    assert_eq!(report.simulation.clients[0].bad_lines, 0);
}

#[test]
fn source_adapter_serialises_messages_in_line_order() {
    // Two messages leave node 0 at 1000: the second waits for the first's last byte
    // (1000 + 4096) at the source adapter, then crosses the idle network.
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let first = message(1000.0, 0, 1, 1024, 1);
    let second = message(1000.0, 0, 2, 1024, 2);
    let reply = c.exchange(&[send(first), send(second), stop(1000.0), ClientMessage::End]);
    assert_eq!(reply.text(), "END\n");
    let reply = c.stop(vesper_tests::HUGE_STOP_NS);
    assert_only_completion(&reply, &first, 5246.0, 1000.0);
    let reply = c.stop(vesper_tests::HUGE_STOP_NS);
    assert_only_completion(&reply, &second, 5096.0 + 4246.0, 5096.0);
    c.finish();
    server.wait();
}

#[test]
fn tokens_may_be_reused_after_their_completion() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let first = message(1000.0, 0, 1, 1024, 1);
    assert_eq!(
        c.exchange(&[send(first), stop(1000.0), ClientMessage::End]).text(),
        "END\n"
    );
    let reply = c.stop(1e9);
    assert_eq!(reply.text(), format!("{}END\n", completed_line("5246", &first, "1000")));
    // Same tokens, new message at the completion time.
    let again = message(5246.0, 1, 0, 1024, 1);
    assert_eq!(again.ev, first.ev);
    assert_eq!(
        c.exchange(&[send(again), stop(5246.0), ClientMessage::End]).text(),
        "END\n"
    );
    let reply = c.stop(1e9);
    assert_eq!(reply.text(), format!("{}END\n", completed_line("9492", &again, "5246")));
    c.finish();
    server.wait();
}

#[test]
fn zero_byte_message_takes_the_fixed_latency() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let m = message(6500.0, 0, 1, 0, 1);
    assert_eq!(c.exchange(&[send(m), stop(6500.0), ClientMessage::End]).text(), "END\n");
    let reply = c.stop(1e9);
    assert_eq!(zero_load_ns(0), 150);
    assert_eq!(reply.text(), format!("{}END\n", completed_line("6650", &m, "6500")));
    c.finish();
    server.wait();
}

#[test]
fn message_stamped_after_the_stop_starts_at_its_own_time() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let m = message(9000.0, 0, 1, 1024, 1);
    assert_eq!(c.exchange(&[send(m), stop(6500.0), ClientMessage::End]).text(), "END\n");
    assert_eq!(c.stop(9000.0).text(), "END\n");
    let reply = c.stop(1e9);
    assert_eq!(reply.text(), format!("{}END\n", completed_line("13246", &m, "9000")));
    c.finish();
    let report = server.wait();
    assert_eq!(report.simulation.clamped_times, 0);
}
