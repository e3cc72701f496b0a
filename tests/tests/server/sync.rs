//! Conservative synchronisation with one client: the STOP patterns the real client
//! produces (non-monotonic, repeated, heartbeats, "very large").

use vesper_protocol::ClientMessage;
use vesper_tests::{HUGE_STOP_NS, TestServer, assert_only_completion, config, message, send, stop};

#[test]
fn stop_after_a_completion_goes_back_to_its_time() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let m = message(0.0, 0, 1, 1024, 1);
    assert_eq!(c.exchange(&[send(m), stop(0.0), ClientMessage::End]).text(), "END\n");
    // A large STOP, answered early by the completion at 4246…
    let reply = c.stop(1e9);
    assert_only_completion(&reply, &m, 4246.0, 0.0);
    // …then the client STOPs at the completion time, lower than its previous STOP.
    assert_eq!(c.stop(4246.0).text(), "END\n");
    c.finish();
    let report = server.wait();
    assert_eq!(report.simulation.simulated_end_ns, 4246.0);
}

#[test]
fn stop_below_the_last_reply_is_answered_at_once() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let m = message(0.0, 0, 1, 1024, 1);
    assert_eq!(c.exchange(&[send(m), stop(0.0), ClientMessage::End]).text(), "END\n");
    assert_eq!(c.stop(1e9).completions.len(), 1);
    // Earlier than the last reply (4246): nothing can happen, the answer is END.
    assert_eq!(c.stop(100.0).text(), "END\n");
    assert_eq!(c.stop(0.0).text(), "END\n");
    // The clock did not go back: a message stamped 100 is moved up to 4246.
    let late = message(100.0, 0, 1, 1024, 2);
    assert_eq!(
        c.exchange(&[send(late), stop(100.0), ClientMessage::End]).text(),
        "END\n"
    );
    let reply = c.stop(1e9);
    assert_only_completion(&reply, &late, 4246.0 + 4246.0, 4246.0);
    c.finish();
    let report = server.wait();
    assert_eq!(report.simulation.clamped_times, 1);
    assert_eq!(report.simulation.clients[0].clamped_times, 1);
}

#[test]
fn repeated_identical_stops_change_nothing() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let m = message(1000.0, 0, 1, 1024, 1);
    assert_eq!(c.exchange(&[send(m), stop(1000.0), ClientMessage::End]).text(), "END\n");
    for i in 0..100 {
        assert_eq!(c.stop(1000.0).text(), "END\n", "repeat {i}");
    }
    let reply = c.stop(HUGE_STOP_NS);
    assert_only_completion(&reply, &m, 5246.0, 1000.0);
    for i in 0..100 {
        assert_eq!(c.stop(5246.0).text(), "END\n", "repeat {i} after the completion");
    }
    c.finish();
    let report = server.wait();
    assert_eq!(report.simulation.sync_round_trips, 1 + 100 + 1 + 100);
    assert_eq!(report.simulation.simulated_end_ns, 5246.0);
}

#[test]
fn heartbeats_while_a_message_is_in_flight() {
    // 500 MB sent at 0.99e9 ns take 2e9 ns to serialise: they arrive after two
    // heartbeats, at 0.99e9 + 2e9 + 150.
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let m = message(0.99e9, 2, 3, 500_000_000, 1);
    assert_eq!(c.exchange(&[send(m), stop(0.99e9), ClientMessage::End]).text(), "END\n");
    assert_eq!(c.stop(1e9).text(), "END\n");
    assert_eq!(c.stop(2e9).text(), "END\n");
    let reply = c.stop(3e9);
    assert_eq!(
        reply.text(),
        format!(
            "COMPLETED SEND 2990000150 2 3 500000000 {} {} 2 3 990000000\nEND\n",
            m.ev, m.ev_out
        )
    );
    assert_eq!(c.stop(2_990_000_150.0).text(), "END\n");
    // The next heartbeat with nothing in flight.
    assert_eq!(c.stop(3e9).text(), "END\n");
    c.finish();
    let report = server.wait();
    assert_eq!(report.simulation.simulated_end_ns, 3e9);
}

/// A huge STOP, written as `text`, means "run until the next completion".
fn huge_stop(text: &str) {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let first = message(1000.0, 0, 1, 1024, 1);
    assert_eq!(
        c.exchange(&[send(first), stop(1000.0), ClientMessage::End]).text(),
        "END\n"
    );
    c.send_raw(format!("STOP {text}\nEND\n").as_bytes());
    let reply = c.read_reply();
    assert_only_completion(&reply, &first, 5246.0, 1000.0);
    let second = message(5246.0, 1, 0, 1024, 2);
    c.send(&[send(second)]);
    c.send_raw(format!("STOP {text}\nEND\n").as_bytes());
    let reply = c.read_reply();
    assert_only_completion(&reply, &second, 5246.0 + 4246.0, 5246.0);
    c.finish();
    let report = server.wait();
    assert_eq!(report.simulation.simulated_end_ns, 9492.0);
    assert_eq!(report.simulation.clients[0].bad_lines, 0);
}

#[test]
fn huge_stop_beyond_u64_picoseconds() {
    huge_stop("252000000000000000");
}

#[test]
fn huge_stop_beyond_u64_picoseconds_exponent() {
    huge_stop("2.52e17");
}

#[test]
fn huge_stop_beyond_u64_picoseconds_full_precision() {
    huge_stop("252000000000000000.000000000000000000000000000000");
}

#[test]
fn huge_stop_within_u64_picoseconds() {
    huge_stop("25200000000000");
}

#[test]
fn huge_stop_within_u64_picoseconds_exponent() {
    huge_stop("2.52E+13");
}

#[test]
fn huge_stop_with_nothing_in_flight_does_not_hang() {
    // The real client does not do this, but the server must not run to infinity.
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let m = message(1000.0, 0, 1, 1024, 1);
    assert_eq!(c.exchange(&[send(m), stop(1000.0), ClientMessage::End]).text(), "END\n");
    assert_eq!(c.stop(HUGE_STOP_NS).completions.len(), 1);
    assert_eq!(c.stop(HUGE_STOP_NS).text(), "END\n");
    // The clock stands at the last completion: a message at 5246 is not clamped.
    let next = message(5246.0, 0, 1, 1024, 2);
    assert_eq!(
        c.exchange(&[send(next), stop(5246.0), ClientMessage::End]).text(),
        "END\n"
    );
    let reply = c.stop(HUGE_STOP_NS);
    assert_only_completion(&reply, &next, 9492.0, 5246.0);
    c.finish();
    let report = server.wait();
    assert_eq!(report.simulation.clamped_times, 0);
}

#[test]
fn a_completion_exactly_at_the_stop_is_reported() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let m = message(1000.0, 0, 1, 1024, 1);
    assert_eq!(c.exchange(&[send(m), stop(1000.0), ClientMessage::End]).text(), "END\n");
    let reply = c.stop(5246.0);
    assert_only_completion(&reply, &m, 5246.0, 1000.0);
    c.finish();
    server.wait();
}

#[test]
fn stop_times_are_rounded_to_the_picosecond() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let m = message(1000.0, 0, 1, 1024, 1);
    assert_eq!(c.exchange(&[send(m), stop(1000.0), ClientMessage::End]).text(), "END\n");
    // 5245.999 ns is one picosecond before the completion…
    c.send_raw(b"STOP 5245.999\nEND\n");
    assert_eq!(c.read_reply().text(), "END\n");
    // …and 5245.9996 ns rounds to it.
    c.send_raw(b"STOP 5245.9996\nEND\n");
    let reply = c.read_reply();
    assert_only_completion(&reply, &m, 5246.0, 1000.0);
    c.finish();
    server.wait();
}

#[test]
fn simultaneous_injections_are_ordered_by_node_not_by_line() {
    // Nodes 1 and 0 both send to node 2 at 1000, node 1's line first: node 0's message
    // is injected first and wins the output to node 2.
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let from_1 = message(1000.0, 1, 2, 1024, 1);
    let from_0 = message(1000.0, 0, 2, 1024, 2);
    let reply = c.exchange(&[send(from_1), send(from_0), stop(1000.0), ClientMessage::End]);
    assert_eq!(reply.text(), "END\n");
    let reply = c.stop(HUGE_STOP_NS);
    assert_only_completion(&reply, &from_0, 5246.0, 1000.0);
    let reply = c.stop(HUGE_STOP_NS);
    assert_only_completion(&reply, &from_1, 9342.0, 1000.0);
    c.finish();
    server.wait();
}
