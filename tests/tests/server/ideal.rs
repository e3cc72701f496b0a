//! The ideal network (`--network ideal`): every message takes latency + size /
//! bandwidth, bandwidth in Dimemas's MBps (2^20 bytes/s), with no contention, so that a
//! co-simulation reproduces the replayer's own prediction.

use vesper_protocol::{ClientMessage, DataMessage, RendezvousRequest, WireTime};
use vesper_tests::{HUGE_STOP_NS, TestServer, assert_completion, ideal_config, message, send, stop};

#[test]
fn eager_message_takes_latency_plus_size_over_bandwidth() {
    // 1024 bytes at 250 MBps: 1024 / (250 × 2^20) s = 3906.25 ns, plus 1500 ns.
    let server = TestServer::start(ideal_config(4, 250.0, 1500.0));
    let mut c = server.client();
    let m = message(6500.0, 0, 1, 1024, 1);
    assert!(c.batch(&[send(m), stop(6500.0), ClientMessage::End]).is_empty());
    let got = c.batch(&[stop(1e9), ClientMessage::End]);
    assert_eq!(got.len(), 1);
    assert_completion(&got[0], &m, 6500.0 + 1500.0 + 3906.25, 6500.0);
    c.finish();
    let report = server.wait();
    assert!(
        report
            .simulation
            .network
            .starts_with("ideal network, 4 hosts, 250 MBps")
    );
}

#[test]
fn rendezvous_data_starts_at_ready() {
    let server = TestServer::start(ideal_config(4, 100.0, 0.0));
    let mut c = server.client();
    let request = RendezvousRequest {
        time: WireTime(6500.0),
        src: 0,
        dst: 1,
        tag: 7,
        size: 1 << 20,
        src_app: 0,
        dst_app: 0,
    };
    let data = DataMessage {
        time: WireTime(7000.0),
        size: 1 << 20,
        ..message(0.0, 0, 1, 0, 1)
    };
    let lines = [
        ClientMessage::OkToSend(request),
        ClientMessage::ReadyToRecv(data),
        stop(7000.0),
        ClientMessage::End,
    ];
    assert!(c.batch(&lines).is_empty());
    // 1 MiB at 100 MBps: 10 ms.
    let got = c.batch(&[stop(HUGE_STOP_NS), ClientMessage::End]);
    assert_completion(&got[0], &data, 7000.0 + 10_000_000.0, 7000.0);
    c.finish();
    server.wait();
}

#[test]
fn many_simultaneous_messages_do_not_contend() {
    let server = TestServer::start(ideal_config(64, 250.0, 0.0));
    let mut c = server.client();
    let messages: Vec<DataMessage> = (1..64)
        .map(|src| message(100.0, src, 0, 4096, u64::from(src)))
        .collect();
    let mut batch: Vec<ClientMessage> = messages.iter().copied().map(send).collect();
    batch.extend([stop(100.0), ClientMessage::End]);
    assert!(c.batch(&batch).is_empty());
    // 4096 bytes at 250 MBps: 15625 ns, for every one of them.
    let mut got = Vec::new();
    let mut next_stop = HUGE_STOP_NS;
    while got.len() < messages.len() {
        let reply = c.batch(&[stop(next_stop), ClientMessage::End]);
        assert!(!reply.is_empty());
        got.extend(reply);
        next_stop = 100.0 + 15625.0;
    }
    for completion in &got {
        let m = messages.iter().find(|m| m.ev == completion.ev).expect("a known token");
        assert_completion(completion, m, 100.0 + 15625.0, 100.0);
    }
    c.finish();
    server.wait();
}

/// `ns` (a double) × 1000 compared with `num / den` picoseconds, exactly.
fn not_earlier(ns: f64, num: u128, den: u128) -> bool {
    let bits = ns.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let mantissa = u128::from((bits & ((1 << 52) - 1)) | (1 << 52));
    let lhs = mantissa * 1000 * den;
    if exponent >= 0 {
        (lhs << exponent) >= num
    } else {
        lhs >= num << (-exponent)
    }
}

#[test]
fn completions_are_never_earlier_than_the_exact_time() {
    // 3 MBps: a byte takes 10^12 / (3 × 2^20) ps, never a whole number of picoseconds.
    let server = TestServer::start(ideal_config(4, 3.0, 0.3));
    let mut c = server.client();
    let mut now = 0.0;
    for size in [1u32, 2, 3, 7, 1000, 4097, 65_537, 999_999] {
        let m = message(now, 0, 1, size, u64::from(size));
        assert!(c.batch(&[send(m), stop(now), ClientMessage::End]).is_empty());
        let got = c.batch(&[stop(HUGE_STOP_NS), ClientMessage::End]);
        assert_eq!(got.len(), 1);
        // The time as the client's %lg reads it.
        let text = got[0].time.0.to_string();
        let read: f64 = text.parse().expect("a decimal");
        // Exact: send time + 300 ps + size × 10^12 / (3 × 2^20) ps.
        let den: u128 = 3 << 20;
        let start_ps = vesper_netmodels::SimTime::from_wire_ns(now).expect("a time").as_ps();
        let num = (u128::from(start_ps) + 300) * den + u128::from(size) * 1_000_000_000_000;
        assert!(
            not_earlier(read, num, den),
            "size {size}: {text} ns is earlier than exact"
        );
        // And late by less than a picosecond (the serialisation is rounded up once).
        assert!(
            !not_earlier(read - 0.001, num, den),
            "size {size}: {text} ns is more than 1 ps late"
        );
        now = read;
    }
    c.finish();
    server.wait();
}
