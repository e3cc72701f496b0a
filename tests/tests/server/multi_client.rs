//! Several clients on one network: the horizon is the minimum of every client's
//! promise, and results do not depend on which socket's bytes arrive first.

use std::time::Duration;

use vesper_protocol::{ClientMessage, DataMessage};
use vesper_tests::{Client, HUGE_STOP_NS, TestServer, assert_only_completion, config, message, send, stop};

/// Long enough for a wrong reply to show up on a loaded machine; a correct server is
/// never failed by it.
const SILENCE: Duration = Duration::from_millis(250);

fn with_apps(m: DataMessage, src_app: u32, dst_app: u32) -> DataMessage {
    DataMessage { src_app, dst_app, ..m }
}

#[test]
fn a_client_waits_for_an_expected_client_not_yet_connected() {
    let server = TestServer::start(config(8, 2));
    let mut a = server.client();
    let ma = message(1000.0, 0, 2, 1024, 1);
    a.send(&[send(ma), stop(HUGE_STOP_NS), ClientMessage::End]);
    a.expect_silence(SILENCE);

    let mut b = server.client();
    let mb = with_apps(message(1000.0, 1, 3, 1024, 2), 1, 1);
    b.send(&[send(mb), stop(HUGE_STOP_NS), ClientMessage::End]);
    let reply = a.read_reply();
    assert_only_completion(&reply, &ma, 5246.0, 1000.0);
    a.finish();
    let reply = b.read_reply();
    assert_only_completion(&reply, &mb, 5246.0, 1000.0);
    b.finish();
    let report = server.wait();
    assert_eq!(report.simulation.clients.len(), 2);
    assert!(report.simulation.clients.iter().all(|c| c.finished && c.messages == 1));
}

#[test]
fn a_client_waits_for_a_peer_that_has_not_synchronised() {
    let server = TestServer::start(config(8, 2));
    let mut a = server.client();
    let mut b = server.client();
    let ma = message(1000.0, 0, 2, 1024, 1);
    let mb = with_apps(message(2000.0, 1, 3, 1024, 2), 1, 1);

    // A runs far ahead; B is connected but has sent nothing: it may still send at 0.
    a.send(&[send(ma), stop(HUGE_STOP_NS), ClientMessage::End]);
    a.expect_silence(SILENCE);

    // B promises 2000: not enough for A's completion at 5246.
    assert_eq!(
        b.exchange(&[send(mb), stop(2000.0), ClientMessage::End]).text(),
        "END\n"
    );
    a.expect_silence(SILENCE);

    // Both waiting: A's completion comes first.
    b.send(&[stop(1e9), ClientMessage::End]);
    let reply = a.read_reply();
    assert_only_completion(&reply, &ma, 5246.0, 1000.0);

    // A is now computing (it promised only 5246): B's completion at 6246 must wait.
    b.expect_silence(SILENCE);
    a.finish();
    let reply = b.read_reply();
    assert_only_completion(&reply, &mb, 6246.0, 2000.0);
    assert_eq!(b.stop(6246.0).text(), "END\n");
    b.finish();

    let report = server.wait();
    let clients = &report.simulation.clients;
    assert_eq!(clients.len(), 2);
    assert_eq!((clients[0].messages, clients[0].round_trips), (1, 1));
    assert_eq!((clients[1].messages, clients[1].round_trips), (1, 3));
    assert_eq!(report.simulation.simulated_end_ns, 6246.0);
}

#[test]
fn messages_between_applications_complete_at_their_senders() {
    let server = TestServer::start(config(4, 2));
    let mut a = server.client();
    let mut b = server.client();
    let ma = with_apps(message(1000.0, 0, 1, 1024, 1), 0, 1);
    let mb = with_apps(message(1000.0, 1, 0, 2048, 2), 1, 0);
    a.send(&[send(ma), stop(1000.0), ClientMessage::End]);
    b.send(&[send(mb), stop(1000.0), ClientMessage::End]);
    assert_eq!(a.read_reply().text(), "END\n");
    assert_eq!(b.read_reply().text(), "END\n");
    a.send(&[stop(HUGE_STOP_NS), ClientMessage::End]);
    b.send(&[stop(HUGE_STOP_NS), ClientMessage::End]);
    let reply = a.read_reply();
    assert_only_completion(&reply, &ma, 5246.0, 1000.0);
    a.finish();
    let reply = b.read_reply();
    assert_only_completion(&reply, &mb, 1000.0 + 2048.0 * 4.0 + 150.0, 1000.0);
    b.finish();
    server.wait();
}

/// One contender: sends `m` at 1000 after `delay`, then waits for its completion.
fn contender(mut c: Client, m: DataMessage, delay: Duration) -> String {
    std::thread::sleep(delay);
    assert_eq!(c.exchange(&[send(m), stop(1000.0), ClientMessage::End]).text(), "END\n");
    let reply = c.stop(HUGE_STOP_NS);
    assert_eq!(reply.completions.len(), 1, "{}", reply.text());
    let transcript = String::from_utf8_lossy(c.transcript()).into_owned();
    c.finish();
    transcript
}

/// X (connected first) and Y both send 1024 bytes at 1000 to node 2; the order of
/// injection is (time, application, node, sequence), never arrival order, and at the
/// switch the packets that arrive at one instant go in the order of the devices they
/// come from (the lower host first; see netmodels' `engine`), whichever client spoke
/// first. Returns both transcripts.
fn contention(x: DataMessage, y: DataMessage, x_first: bool) -> (String, String) {
    let server = TestServer::start(config(4, 2));
    let cx = server.client();
    let cy = server.client();
    let lag = Duration::from_millis(100);
    let (dx, dy) = if x_first {
        (Duration::ZERO, lag)
    } else {
        (lag, Duration::ZERO)
    };
    let (tx, ty) = std::thread::scope(|s| {
        let hx = s.spawn(move || contender(cx, x, dx));
        let hy = s.spawn(move || contender(cy, y, dy));
        (
            hx.join().expect("client X panicked"),
            hy.join().expect("client Y panicked"),
        )
    });
    let report = server.wait();
    assert!(report.simulation.clients.iter().all(|c| c.finished));
    (tx, ty)
}

/// The winner crosses the idle switch; the loser's first byte leaves its own adapter
/// at 1000 too, but it waits at the switch output until the winner's tail has gone
/// (1125 + 4096 = 5221), then takes 4096 + 25 more.
fn expected(m: &DataMessage, arrival: u64) -> String {
    format!(
        "END\nCOMPLETED SEND {arrival} {} {} 1024 {} {} {} {} 1000\nEND\n",
        m.src, m.dst, m.ev, m.ev_out, m.src, m.dst
    )
}

fn contention_by_application(x_first: bool) {
    // X runs node 0 but is application 1; Y's application 0 is injected first, but
    // its packet reaches the switch at the instant X's does, from host 1: X's goes
    // first.
    let x = with_apps(message(1000.0, 0, 2, 1024, 1), 1, 0);
    let y = message(1000.0, 1, 2, 1024, 2);
    let (tx, ty) = contention(x, y, x_first);
    assert_eq!(tx, expected(&x, 5246));
    assert_eq!(ty, expected(&y, 9342));
}

fn contention_by_node(x_first: bool) {
    // Same application: node 0 (Y's) goes first.
    let x = message(1000.0, 1, 2, 1024, 1);
    let y = message(1000.0, 0, 2, 1024, 2);
    let (tx, ty) = contention(x, y, x_first);
    assert_eq!(ty, expected(&y, 5246));
    assert_eq!(tx, expected(&x, 9342));
}

#[test]
fn contention_by_application_x_arrives_first() {
    contention_by_application(true);
}

#[test]
fn contention_by_application_y_arrives_first() {
    contention_by_application(false);
}

#[test]
fn contention_by_node_x_arrives_first() {
    contention_by_node(true);
}

#[test]
fn contention_by_node_y_arrives_first() {
    contention_by_node(false);
}

/// Like [`contender`], but first exchanges a warm-up message (completing at 5246), so
/// the contended message is stamped with the time of the client's last reply: the
/// server must wait for the other client, which may still send at that very time.
fn late_contender(mut c: Client, warmup: DataMessage, m: DataMessage, delay: Duration) -> DataMessage {
    assert_eq!(
        c.exchange(&[send(warmup), stop(1000.0), ClientMessage::End]).text(),
        "END\n"
    );
    let reply = c.stop(HUGE_STOP_NS);
    assert_only_completion(&reply, &warmup, 5246.0, 1000.0);
    std::thread::sleep(delay);
    assert_eq!(c.exchange(&[send(m), stop(5246.0), ClientMessage::End]).text(), "END\n");
    let reply = c.stop(HUGE_STOP_NS);
    assert_eq!(reply.completions.len(), 1, "{}", reply.text());
    let done = reply.completions[0];
    c.finish();
    assert_eq!((done.ev, done.ev_out), (m.ev, m.ev_out));
    DataMessage { time: done.time, ..m }
}

fn contention_at_a_reply_time(x_first: bool) {
    // X: application 1, node 0; Y: application 0, node 1. Both send to node 2 at 5246.
    let server = TestServer::start(config(4, 2));
    let cx = server.client();
    let cy = server.client();
    let x_warmup = with_apps(message(1000.0, 0, 3, 1024, 1), 1, 0);
    let y_warmup = message(1000.0, 1, 2, 1024, 2);
    let x = with_apps(message(5246.0, 0, 2, 1024, 3), 1, 0);
    let y = message(5246.0, 1, 2, 1024, 4);
    let lag = Duration::from_millis(100);
    let (dx, dy) = if x_first {
        (Duration::ZERO, lag)
    } else {
        (lag, Duration::ZERO)
    };
    let (done_x, done_y) = std::thread::scope(|s| {
        let hx = s.spawn(move || late_contender(cx, x_warmup, x, dx));
        let hy = s.spawn(move || late_contender(cy, y_warmup, y, dy));
        (
            hx.join().expect("client X panicked"),
            hy.join().expect("client Y panicked"),
        )
    });
    server.wait();
    // X (from host 0) wins at the switch: 5246 + 4246. Y waits at the switch output
    // for X's tail (5246 + 125 + 4096 = 9467), then 4096 + 25 more.
    assert_eq!(done_x.time.0, 9492.0, "X");
    assert_eq!(done_y.time.0, 13588.0, "Y");
}

#[test]
fn contention_at_a_reply_time_x_arrives_first() {
    contention_at_a_reply_time(true);
}

#[test]
fn contention_at_a_reply_time_y_arrives_first() {
    contention_at_a_reply_time(false);
}
