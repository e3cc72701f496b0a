//! Clients that do not play by the round trip: one that sends its next batch before
//! the reply to the last, one that floods the server, one that never reads its replies.
//! None may starve another client or make the server buffer without bound
//! (`shared/spec/protocol.md`, "Errors and bad input").

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use vesper_protocol::ClientMessage;
use vesper_tests::{
    HUGE_STOP_NS, READ_TIMEOUT, TestServer, assert_only_completion, config, lines_text, message, send, stop,
};

/// Reads from `stream` until `count` replies (`END` lines) are in; returns the text.
fn read_replies(stream: &mut TcpStream, count: usize) -> String {
    stream.set_read_timeout(Some(READ_TIMEOUT)).expect("read timeout");
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    while text.lines().filter(|l| *l == "END").count() < count {
        let n = stream.read(&mut buf).expect("a reply before the timeout");
        assert!(n > 0, "the server closed the connection; got {text:?}");
        text.push_str(std::str::from_utf8(&buf[..n]).expect("text"));
    }
    text
}

#[test]
fn a_batch_sent_ahead_is_answered_after_the_one_before() {
    let server = TestServer::start(config(4, 2));
    let mut a = TcpStream::connect(server.addr()).expect("connect");
    let m1 = message(100.0, 0, 1, 1024, 1);
    let m2 = message(100.0, 0, 2, 1024, 2);
    // Two batches in one write, before the other client is there to let time move:
    // the second must wait for the reply to the first, not replace it.
    let ahead = lines_text(&[
        send(m1),
        stop(100.0),
        ClientMessage::End,
        send(m2),
        stop(HUGE_STOP_NS),
        ClientMessage::End,
    ]);
    a.write_all(ahead.as_bytes()).expect("write");
    std::thread::sleep(Duration::from_millis(100));
    let mut b = server.client();
    b.send(&[stop(1e9), ClientMessage::End]);
    let text = read_replies(&mut a, 2);
    let replies: Vec<&str> = text.split_inclusive("END\n").collect();
    assert_eq!(replies[0], "END\n", "nothing completes by 100 ns: {text:?}");
    // Both messages leave one adapter at 100 ns: the first completes first.
    assert!(
        replies[1].starts_with("COMPLETED SEND") && replies[1].contains(" 0 1 1024 "),
        "the first message's completion: {text:?}"
    );
    a.write_all(lines_text(&[stop(HUGE_STOP_NS), ClientMessage::End]).as_bytes())
        .expect("write");
    let text = read_replies(&mut a, 1);
    assert!(text.contains(" 0 2 1024 "), "the second message's completion: {text:?}");
    a.write_all(b"FINISH\n").expect("write");
    assert_eq!(b.read_reply().text(), "END\n");
    b.finish();
    let report = server.wait();
    assert_eq!(report.simulation.clients[0].messages, 2);
}

#[test]
fn a_finish_sent_ahead_waits_for_the_reply_to_the_batch_before() {
    let server = TestServer::start(config(4, 2));
    let mut a = server.client();
    let mut b = TcpStream::connect(server.addr()).expect("connect");
    // B's second batch waits for A to let time reach 2000 ns; its FINISH, sent with it,
    // must not drop the message still in flight.
    let m = message(2000.0, 0, 1, 1000, 1);
    let ahead = lines_text(&[stop(1000.0), ClientMessage::End, send(m), stop(1e6), ClientMessage::End]);
    b.write_all(format!("{ahead}FINISH\n").as_bytes()).expect("write");
    assert_eq!(a.stop(2000.0).text(), "END\n");
    assert_eq!(a.stop(1e6).text(), "END\n");
    let text = read_replies(&mut b, 2);
    assert!(text.starts_with("END\nCOMPLETED SEND 6150 0 1 1000 "), "{text:?}");
    a.finish();
    let report = server.wait();
    let b = &report.simulation.clients[1];
    assert!(b.finished && b.messages == 1 && b.bad_lines == 0, "{b:?}");
}

#[test]
fn batches_sent_ahead_of_a_close_are_applied_in_turn() {
    let server = TestServer::start(config(4, 2));
    let mut a = server.client();
    let mut b = TcpStream::connect(server.addr()).expect("connect");
    // A's long message moves the clock far past 200 ns before B's first reply (at 1 ms).
    let long = message(1000.0, 2, 3, 100_000, 1);
    a.send(&[send(long), stop(400_000.0), ClientMessage::End]);
    // B closes with its second batch, stamped 200 ns, sent ahead: it is applied after
    // the reply to the first, at B's clock then (not at 200 ns, long past), and B's
    // message is carried, not dropped.
    let early = message(200.0, 0, 1, 1, 2);
    let ahead = lines_text(&[
        stop(1e6),
        ClientMessage::End,
        send(early),
        stop(2e6),
        ClientMessage::End,
    ]);
    b.write_all(ahead.as_bytes()).expect("write");
    drop(b);
    assert_eq!(a.read_reply().text(), "END\n");
    assert!(a.stop(HUGE_STOP_NS).text().starts_with("COMPLETED SEND"));
    a.finish();
    let report = server.wait();
    let b = &report.simulation.clients[1];
    assert_eq!((b.messages, b.bad_lines, b.finished), (1, 0, false), "{b:?}");
    // B's message left after B's first reply, at 1 ms: 1 byte and the cables later.
    assert_eq!(report.simulation.simulated_end_ns, 1e6 + 154.0);
}

#[test]
fn a_client_that_closes_its_sending_side_still_gets_its_replies() {
    // As `nc -N` does: everything written, the sending side shut, then the replies read.
    let server = TestServer::start(config(4, 1));
    let mut c = TcpStream::connect(server.addr()).expect("connect");
    let m = message(100.0, 2, 3, 1000, 1);
    let all = lines_text(&[send(m), stop(HUGE_STOP_NS), ClientMessage::End]);
    c.write_all(format!("{all}FINISH\n").as_bytes()).expect("write");
    c.shutdown(std::net::Shutdown::Write).expect("half-close");
    let text = read_replies(&mut c, 1);
    assert!(text.starts_with("COMPLETED SEND 4250 2 3 1000 "), "{text:?}");
    let report = server.wait();
    assert!(report.simulation.clients[0].finished);
}

#[test]
fn a_client_that_floods_does_not_starve_another() {
    let server = TestServer::start(config(4, 2));
    let mut b = server.client();
    let mut flood = TcpStream::connect(server.addr()).expect("connect");
    flood.write_all(b"FINISH\n").expect("write");
    // After FINISH every line is ignored (and counted), but it must still be read.
    let done = Arc::new(AtomicBool::new(false));
    let flooding = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            flood
                .set_write_timeout(Some(Duration::from_millis(50)))
                .expect("timeout");
            let chunk = b"STOP 1\nEND\n".repeat(4096);
            while !done.load(Ordering::Relaxed) {
                match flood.write(&chunk) {
                    Ok(_) => {}
                    Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
                    Err(_) => break,
                }
            }
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    let m = message(6500.0, 2, 3, 1024, 1);
    assert_eq!(b.exchange(&[send(m), stop(6500.0), ClientMessage::End]).text(), "END\n");
    assert_only_completion(&b.stop(HUGE_STOP_NS), &m, 10746.0, 6500.0);
    done.store(true, Ordering::Relaxed);
    flooding.join().expect("flooding thread");
    b.finish();
    server.wait();
}

#[test]
fn a_client_that_does_not_read_its_replies_is_held_back() {
    let server = TestServer::start(config(4, 1));
    let mut raw = TcpStream::connect(server.addr()).expect("connect");
    raw.set_write_timeout(Some(Duration::from_millis(500)))
        .expect("timeout");
    // Each batch gets a reply the client never reads: once the replies pile up, the
    // server stops reading, and the client's writes block. Without that, it would
    // read (and answer into memory) all 256 MiB.
    let chunk = b"STOP 1\nEND\n".repeat(8192);
    let mut written = 0usize;
    let blocked = loop {
        match raw.write(&chunk) {
            Ok(n) => written += n,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => break true,
            Err(e) => panic!("write failed: {e}"),
        }
        if written > 256 << 20 {
            break false;
        }
    };
    assert!(
        blocked,
        "the server kept reading {written} bytes of batches whose replies were not read"
    );
    drop(raw);
    server.wait();
}
