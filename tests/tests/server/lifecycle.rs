//! Connections coming and going: clients that vanish, shutdown, the connection limit.

use std::time::Duration;

use vesper_protocol::ClientMessage;
use vesper_tests::{HUGE_STOP_NS, TestServer, assert_only_completion, config, message, send, stop};

#[test]
fn a_client_vanishes_with_messages_in_flight() {
    let server = TestServer::start(config(4, 2));
    let mut a = server.client();
    let mut b = server.client();
    let ma = message(1000.0, 0, 1, 1_048_576, 1);
    let mb = message(1000.0, 2, 3, 1024, 2);
    a.send(&[send(ma), stop(1000.0), ClientMessage::End]);
    b.send(&[send(mb), stop(1000.0), ClientMessage::End]);
    assert_eq!(a.read_reply().text(), "END\n");
    assert_eq!(b.read_reply().text(), "END\n");

    // A asks for its completion, starts another line and disappears.
    a.send_raw(b"STOP 1000000000\nEND\nSEND 20");
    a.vanish();

    let reply = b.stop(HUGE_STOP_NS);
    assert_only_completion(&reply, &mb, 5246.0, 1000.0);
    assert_eq!(b.stop(5246.0).text(), "END\n");
    b.finish();

    let report = server.wait();
    let clients = &report.simulation.clients;
    assert_eq!(clients.len(), 2);
    assert!(!clients[0].finished);
    assert!(clients[1].finished);
    assert_eq!((clients[0].messages, clients[1].messages), (1, 1));
}

#[test]
fn a_client_vanishes_before_its_first_batch() {
    let server = TestServer::start(config(4, 2));
    let mut a = server.client();
    let mut b = server.client();
    // A well-formed line makes it a client (a connection that says nothing, or only
    // bad lines, is not one); its bad line counts against it.
    a.send_raw(b"HELLO\nSTOP 1\n");
    a.vanish();
    let m = message(6500.0, 0, 1, 1024, 1);
    assert_eq!(b.exchange(&[send(m), stop(6500.0), ClientMessage::End]).text(), "END\n");
    let reply = b.stop(1e9);
    assert_only_completion(&reply, &m, 10746.0, 6500.0);
    b.finish();
    let report = server.wait();
    let clients = &report.simulation.clients;
    assert_eq!(clients.len(), 2);
    assert!(!clients[0].finished && clients[1].finished);
    assert_eq!(clients[0].bad_lines, 1);
}

#[test]
fn a_connection_that_closes_without_a_word_is_not_a_client() {
    // A port check (a health check, `nc -z`) before the real client: the run goes on.
    let server = TestServer::start(config(4, 1));
    server.client().vanish();
    std::thread::sleep(Duration::from_millis(50));
    let mut c = server.client();
    let m = message(6500.0, 0, 1, 1024, 1);
    assert_eq!(c.exchange(&[send(m), stop(6500.0), ClientMessage::End]).text(), "END\n");
    assert_only_completion(&c.stop(1e9), &m, 10746.0, 6500.0);
    c.finish();
    let report = server.wait();
    assert_eq!(report.simulation.clients.len(), 1);
    assert!(report.simulation.clients[0].finished);
}

#[test]
fn shutdown_while_a_client_waits() {
    let server = TestServer::start(config(4, 2));
    let mut a = server.client();
    let mut b = server.client();
    let m = message(1000.0, 0, 1, 1024, 1);
    a.send(&[send(m), stop(1000.0), ClientMessage::End]);
    b.send(&[stop(1000.0), ClientMessage::End]);
    assert_eq!(a.read_reply().text(), "END\n");
    assert_eq!(b.read_reply().text(), "END\n");
    // A waits for its completion; B computes forever and holds the horizon at 1000.
    a.send(&[stop(HUGE_STOP_NS), ClientMessage::End]);
    a.expect_silence(Duration::from_millis(100));

    let report = server.shutdown();
    a.expect_closed();
    b.expect_closed();
    let sim = &report.simulation;
    assert_eq!(sim.clients.len(), 2);
    assert!(sim.clients.iter().all(|c| !c.finished));
    assert_eq!(sim.messages, 1);
    assert_eq!(sim.messages_in_flight_at_exit, 1);
    assert_eq!(sim.simulated_end_ns, 1000.0);
}

#[test]
fn shutdown_with_no_client() {
    let server = TestServer::start(config(4, 1));
    let report = server.shutdown();
    assert!(report.simulation.clients.is_empty());
    assert_eq!(report.simulation.messages, 0);
}

#[test]
fn connections_beyond_the_limit_are_closed() {
    let mut cfg = config(4, 1);
    cfg.max_connections = 1;
    let server = TestServer::start(cfg);
    let mut a = server.client();
    let m = message(6500.0, 0, 1, 1024, 1);
    assert_eq!(a.exchange(&[send(m), stop(6500.0), ClientMessage::End]).text(), "END\n");

    let mut b = server.client();
    b.expect_closed();

    let reply = a.stop(1e9);
    assert_only_completion(&reply, &m, 10746.0, 6500.0);
    a.finish();
    let report = server.wait();
    assert_eq!(report.simulation.clients.len(), 1);
}

#[test]
fn finish_without_closing_ends_the_run() {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    let m = message(6500.0, 0, 1, 1024, 1);
    assert_eq!(c.exchange(&[send(m), stop(6500.0), ClientMessage::End]).text(), "END\n");
    assert_eq!(c.stop(1e9).completions.len(), 1);
    // FINISH, and the socket stays open: the run is complete all the same.
    c.send(&[ClientMessage::Finish]);
    let report = server.wait();
    assert!(report.simulation.clients[0].finished);
    c.expect_closed();
}

#[test]
fn a_server_that_stays_up_serves_runs_one_after_another_each_on_a_fresh_network() {
    let mut cfg = config(4, 1);
    cfg.exit_when_done = false;
    let server = TestServer::start(cfg);
    for n in 0..2 {
        let mut c = server.client();
        let m = message(6500.0, 0, 1, 1024, n);
        assert_eq!(c.exchange(&[send(m), stop(6500.0), ClientMessage::End]).text(), "END\n");
        // Each run starts at time zero: the second client gets what the first got.
        assert_only_completion(&c.stop(HUGE_STOP_NS), &m, 10746.0, 6500.0);
        c.finish();
    }
    // The last run reported is the second; the third has no client.
    server.wait_for_runs(2);
    let report = server.shutdown();
    assert_eq!(report.run, 2);
    let clients = &report.simulation.clients;
    assert_eq!(clients.len(), 1, "{clients:?}");
    assert!(clients[0].finished && clients[0].messages == 1, "{clients:?}");
}
