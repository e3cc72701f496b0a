//! Randomised clients: several replayers at once, each playing the real client's rhythm
//! (sends at its clock, STOP at its next event, or "until the next completion" while
//! messages are in flight, its clock moved by every completion), with the odd garbage
//! line, over every switch kind. Every message must complete exactly once, never
//! before it was sent, in replies the legacy client can read.

use std::collections::BTreeMap;

use vesper_netmodels::rng::Rng;
use vesper_netmodels::{AdapterParams, CioqParams, SwitchKind, WormholeParams};
use vesper_protocol::ClientMessage;
use vesper_server::config::{FabricConfig, SwitchedConfig};
use vesper_tests::{Client, HUGE_STOP_NS, TestServer, assert_one_write, config, message, send, stop};

/// One client's life: returns how many messages it sent and saw complete.
fn play(mut c: Client, app: u32, seed: u64, hosts: u32) -> (usize, usize) {
    let mut rng = Rng::new(seed);
    // Its own events: (time ns, destination, size).
    let mut events: Vec<(f64, u32, u32)> = (0..40)
        .map(|i| {
            (
                f64::from(i) * 2000.0 + rng.below(50_000) as f64,
                rng.below(u64::from(hosts)) as u32,
                rng.below(20_000) as u32,
            )
        })
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let src = app; // one node per application
    let mut clock = 0.0f64;
    let mut in_flight: BTreeMap<String, (f64, u32)> = BTreeMap::new();
    let (mut sent, mut completed) = (0, 0);
    let mut next = 0;
    loop {
        let mut batch = Vec::new();
        while next < events.len() && events[next].0 <= clock {
            let (_, dst, size) = events[next];
            let mut m = message(clock, src, dst, size, seed * 1000 + next as u64);
            m.src_app = app;
            m.dst_app = app;
            in_flight.insert(m.ev.to_string(), (clock, size));
            batch.push(send(m));
            sent += 1;
            next += 1;
        }
        if rng.below(10) == 0 {
            c.send_raw(b"GARBAGE 1 2 3\n");
        }
        let until = match events.get(next) {
            Some(e) => e.0,
            None if in_flight.is_empty() => break,
            None => HUGE_STOP_NS,
        };
        batch.extend([stop(until), ClientMessage::End]);
        let reply = c.exchange(&batch);
        assert_one_write(&reply);
        if reply.completions.is_empty() {
            assert!(until < HUGE_STOP_NS, "END alone to 'until the next completion'");
            clock = until;
            continue;
        }
        let at = reply.completions[0].time.0;
        for done in &reply.completions {
            assert_eq!(done.time.0, at, "one reply, one completion time");
            let (sent_at, size) = in_flight
                .remove(done.ev.as_str())
                .expect("a message in flight, completed once");
            assert!(at > sent_at, "completion at {at} before its send at {sent_at}");
            assert_eq!(done.size, size);
            completed += 1;
        }
        assert!(at >= clock, "time went backwards: {at} < {clock}");
        clock = at;
    }
    c.finish();
    (sent, completed)
}

fn random_clients(fabric: FabricConfig, seed: u64) {
    let hosts = 8;
    let mut cfg = config(hosts, 3);
    cfg.network.fabric = fabric;
    let server = TestServer::start(cfg);
    let clients: Vec<_> = (0..3).map(|_| server.client()).collect();
    let players: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(app, c)| std::thread::spawn(move || play(c, app as u32, seed + app as u64, hosts)))
        .collect();
    let mut total = 0;
    for p in players {
        let (sent, completed) = p.join().expect("a client thread");
        assert_eq!(sent, completed);
        total += sent;
    }
    let report = server.wait();
    assert_eq!(report.simulation.messages as usize, total);
    assert_eq!(report.simulation.messages_in_flight_at_exit, 0);
    assert!(report.simulation.clients.iter().all(|c| c.finished));
}

fn crossbar(kind: SwitchKind) -> FabricConfig {
    let mut crossbar = SwitchedConfig::crossbar(AdapterParams::default());
    crossbar.switch.kind = kind;
    FabricConfig::Switched(crossbar)
}

#[test]
fn random_clients_output_queued() {
    for seed in [1, 10, 20] {
        random_clients(crossbar(SwitchKind::OutputQueued), seed);
    }
}

#[test]
fn random_clients_cioq() {
    for seed in [2, 11] {
        random_clients(crossbar(SwitchKind::Cioq(CioqParams::default())), seed);
    }
}

#[test]
fn random_clients_wormhole() {
    for seed in [3, 12, 21] {
        random_clients(crossbar(SwitchKind::Wormhole(WormholeParams::default())), seed);
    }
}
