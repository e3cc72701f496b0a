//! Rendezvous (`dimemas` mode): `OK_TO_SEND` is recorded only, the data message starts
//! at the `READY_TO_RECV` time and completes exactly like a `SEND`.

use vesper_protocol::{ClientMessage, DataMessage, RendezvousRequest, Token};
use vesper_tests::{HUGE_STOP_NS, TestServer, assert_one_write, config, message, stop, zero_load_ns};

const SIZE: u32 = 1_048_576;

fn request() -> RendezvousRequest {
    RendezvousRequest {
        time: vesper_protocol::WireTime(6500.0),
        src: 0,
        dst: 1,
        tag: 7,
        size: SIZE,
        src_app: 0,
        dst_app: 0,
    }
}

fn data() -> DataMessage {
    DataMessage {
        ev: Token::new("0x5601d1d34740").expect("token"),
        ev_out: Token::new("0x5601d1d398f0").expect("token"),
        ..message(7000.0, 0, 1, SIZE, 0)
    }
}

/// `one_batch`: both PROTO lines in one batch, as in the spec; otherwise the request
/// has its own batch (STOP 6500) and must get `END` alone.
fn rendezvous_exchange(one_batch: bool) {
    let server = TestServer::start(config(4, 1));
    let mut c = server.client();
    if one_batch {
        let reply = c.exchange(&[
            ClientMessage::OkToSend(request()),
            ClientMessage::ReadyToRecv(data()),
            stop(7000.0),
            ClientMessage::End,
        ]);
        assert_eq!(reply.text(), "END\n");
    } else {
        c.send_raw(b"PROTO OK_TO_SEND 6500 0 1 7 1048576 0 0\nSTOP 6500\nEND\n");
        assert_eq!(c.read_reply().text(), "END\n", "OK_TO_SEND has no reply line");
        c.send_raw(b"PROTO READY_TO_RECV 7000 0 1 7 1048576 0x5601d1d34740 0x5601d1d398f0 0 1 0 0\nSTOP 7000\nEND\n");
        assert_eq!(c.read_reply().text(), "END\n");
    }
    let arrival = 7000 + u64::from(SIZE) * 4 + 150;
    assert_eq!(arrival, 7000 + zero_load_ns(u64::from(SIZE)));
    let reply = c.stop(HUGE_STOP_NS);
    assert_eq!(
        reply.text(),
        format!("COMPLETED SEND {arrival} 0 1 1048576 0x5601d1d34740 0x5601d1d398f0 0 1 7000\nEND\n")
    );
    assert_one_write(&reply);
    assert_eq!(c.stop(arrival as f64).text(), "END\n");
    c.finish();

    let report = server.wait();
    let client = &report.simulation.clients[0];
    assert_eq!(client.rendezvous_requests, 1);
    assert_eq!(client.rendezvous_messages, 1);
    assert_eq!((client.messages, client.bytes), (1, u64::from(SIZE)));
    assert_eq!(client.bad_lines, 0);
    assert_eq!(report.simulation.simulated_end_ns, arrival as f64);
}

#[test]
fn rendezvous_exchange_one_batch() {
    rendezvous_exchange(true);
}

#[test]
fn rendezvous_exchange_request_in_its_own_batch() {
    rendezvous_exchange(false);
}

// ---- `wire` mode: request and acknowledgment travel the network as control packets.

const CONTROL: u32 = 64;

fn wire_config() -> vesper_server::ServerConfig {
    vesper_server::ServerConfig {
        rendezvous: vesper_server::config::RendezvousMode::Wire { control_bytes: CONTROL },
        ..config(4, 1)
    }
}

/// A control packet's zero-load latency: 64 × 4 + 150 = 406 ns.
fn control_latency() -> f64 {
    zero_load_ns(u64::from(CONTROL)) as f64
}

#[test]
fn wire_rendezvous_ready_after_the_request_arrived() {
    // Request 6500 → arrives 6906; ready at 60000: ack 60000 → 60406; data from 60406.
    let server = TestServer::start(wire_config());
    let mut c = server.client();
    let reply = c.exchange(&[ClientMessage::OkToSend(request()), stop(50_000.0), ClientMessage::End]);
    assert_eq!(reply.text(), "END\n", "the request is not a completion");
    let m = DataMessage {
        time: vesper_protocol::WireTime(60_000.0),
        ..data()
    };
    let reply = c.exchange(&[ClientMessage::ReadyToRecv(m), stop(60_000.0), ClientMessage::End]);
    assert_eq!(reply.text(), "END\n");
    let ack_arrives = 60_000.0 + control_latency();
    let reply = c.stop(HUGE_STOP_NS);
    vesper_tests::assert_only_completion(
        &reply,
        &m,
        ack_arrives + zero_load_ns(u64::from(SIZE)) as f64,
        ack_arrives,
    );
    c.finish();
    let report = server.wait();
    let client = &report.simulation.clients[0];
    assert_eq!((client.rendezvous_requests, client.rendezvous_messages), (1, 1));
    assert_eq!(report.simulation.messages_in_flight_at_exit, 0);
}

#[test]
fn wire_rendezvous_ready_before_the_request_arrived() {
    // Request 6500 → arrives 6906, after the ready time 6600: the ack leaves at 6906.
    let server = TestServer::start(wire_config());
    let mut c = server.client();
    let m = DataMessage {
        time: vesper_protocol::WireTime(6600.0),
        ..data()
    };
    let reply = c.exchange(&[
        ClientMessage::OkToSend(request()),
        ClientMessage::ReadyToRecv(m),
        stop(6600.0),
        ClientMessage::End,
    ]);
    assert_eq!(reply.text(), "END\n");
    let ack_arrives = 6500.0 + 2.0 * control_latency();
    let reply = c.stop(HUGE_STOP_NS);
    vesper_tests::assert_only_completion(
        &reply,
        &m,
        ack_arrives + zero_load_ns(u64::from(SIZE)) as f64,
        ack_arrives,
    );
    c.finish();
    server.wait();
}

#[test]
fn wire_ready_without_a_request_starts_at_once() {
    let server = TestServer::start(wire_config());
    let mut c = server.client();
    let m = data();
    assert_eq!(
        c.exchange(&[ClientMessage::ReadyToRecv(m), stop(7000.0), ClientMessage::End])
            .text(),
        "END\n"
    );
    let reply = c.stop(HUGE_STOP_NS);
    vesper_tests::assert_only_completion(&reply, &m, 7000.0 + zero_load_ns(u64::from(SIZE)) as f64, 7000.0);
    c.finish();
    server.wait();
}

#[test]
fn wire_request_waits_behind_a_data_message() {
    // An eager 1 MiB message 0 → 1 at 1000 is 256 packets of 4 KiB (16384 ns each) at
    // node 0's round-robin adapter. The request (OK_TO_SEND at 2000) leaves after the
    // packet in progress, at 17384, and follows its tail through the switch output to
    // node 1 (free at 17509): it arrives at 17509 + 256 + 25 = 17790. The receiver is
    // ready (3000), so the ack leaves at once, back at 17790 + 406. The 1024-byte data
    // then waits for the eager packet in progress (until 34024), and behind its tail at
    // the switch (34149): it arrives at 34149 + 4096 + 25.
    let server = TestServer::start(wire_config());
    let mut c = server.client();
    let eager = message(1000.0, 0, 1, SIZE, 1);
    assert_eq!(
        c.exchange(&[vesper_tests::send(eager), stop(1000.0), ClientMessage::End])
            .text(),
        "END\n"
    );
    let rts = RendezvousRequest {
        time: vesper_protocol::WireTime(2000.0),
        tag: 9,
        size: 1024,
        ..request()
    };
    let reply = c.exchange(&[ClientMessage::OkToSend(rts), stop(2000.0), ClientMessage::End]);
    assert_eq!(reply.text(), "END\n");
    let m = DataMessage {
        tag: Some(9),
        ..message(3000.0, 0, 1, 1024, 2)
    };
    let reply = c.exchange(&[ClientMessage::ReadyToRecv(m), stop(3000.0), ClientMessage::End]);
    assert_eq!(reply.text(), "END\n");

    let packet = 4096.0 * 4.0;
    let request_arrives = 1000.0 + packet + 125.0 + 256.0 + 25.0;
    assert_eq!(request_arrives + control_latency(), 18_196.0);
    let data_leaves = 1000.0 + 2.0 * packet + 256.0;
    let reply = c.stop(HUGE_STOP_NS);
    vesper_tests::assert_only_completion(&reply, &m, data_leaves + 125.0 + 4096.0 + 25.0, data_leaves);
    // The eager message is late by the request's and the data's packets.
    let reply = c.stop(HUGE_STOP_NS);
    let eager_done = 1000.0 + zero_load_ns(u64::from(SIZE)) as f64 + 256.0 + 4096.0;
    vesper_tests::assert_only_completion(&reply, &eager, eager_done, 1000.0);
    c.finish();
    server.wait();
}
