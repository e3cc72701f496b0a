//! The legacy client's 500-byte `recv()`: completions due at one time that do not fit
//! in one reply are handed out over the client's repeated STOPs at that time.

use std::collections::BTreeMap;

use vesper_protocol::{ClientMessage, Completion, DataMessage, ServerMessage};
use vesper_tests::{Client, HUGE_STOP_NS, TestServer, assert_completion, config, message, send, stop};

/// 16 messages of 1024 bytes, node i → node 16 + i, all at 1000 ns: no two share a
/// link, so all complete at 5246. Returns the completions of each reply.
fn sixteen_simultaneous_completions(r: &mut Client) -> Vec<Vec<Completion>> {
    let messages: Vec<DataMessage> = (0..16)
        .map(|i| message(1000.0, i, 16 + i, 1024, u64::from(i)))
        .collect();
    let mut batch: Vec<ClientMessage> = messages.iter().copied().map(send).collect();
    batch.extend([stop(1000.0), ClientMessage::End]);
    assert!(r.batch(&batch).is_empty());

    let mut pending: BTreeMap<String, DataMessage> = messages.iter().map(|m| (m.ev.to_string(), *m)).collect();
    let mut per_reply = Vec::new();
    let mut next_stop = HUGE_STOP_NS;
    while !pending.is_empty() {
        assert!(per_reply.len() < 16, "no progress after {} replies", per_reply.len());
        let got = r.batch(&[stop(next_stop), ClientMessage::End]);
        assert!(!got.is_empty(), "a STOP at the completion time must hand out more");
        for c in &got {
            let m = pending
                .remove(c.ev.as_str())
                .unwrap_or_else(|| panic!("unknown or repeated completion {c:?}"));
            assert_completion(c, &m, 5246.0, 1000.0);
        }
        per_reply.push(got);
        // The client STOPs again at the completion time.
        next_stop = 5246.0;
    }
    assert!(r.batch(&[stop(5246.0), ClientMessage::End]).is_empty());
    per_reply
}

#[test]
fn sixteen_simultaneous_completions_fill_replies_of_500_bytes() {
    let server = TestServer::start(config(32, 1));
    let mut c = server.client();
    let per_reply = sixteen_simultaneous_completions(&mut c);
    let counts: Vec<usize> = per_reply.iter().map(Vec::len).collect();
    // Each completion line here is 70 or 72 bytes: at most seven fit with END in 500.
    assert!(counts.len() >= 3, "{counts:?}");
    assert_eq!(counts.iter().sum::<usize>(), 16);
    // As many whole lines as fit: the next reply's first line would not have.
    let line_len = |c: &Completion| ServerMessage::Completed(*c).to_string().len() + 1;
    for pair in per_reply.windows(2) {
        let used: usize = pair[0].iter().map(line_len).sum::<usize>() + "END\n".len();
        assert!(
            used + line_len(&pair[1][0]) > 500,
            "a reply of {used} bytes left room: {counts:?}"
        );
    }
    c.finish();
    let report = server.wait();
    assert_eq!(report.simulation.messages, 16);
    assert_eq!(report.simulation.messages_in_flight_at_exit, 0);
}
