//! Randomised clients: several replayers at once, each playing the real client's rhythm
//! (sends at its clock, STOP at its next event, or "until the next completion" while
//! messages are in flight, its clock moved by every completion), with the odd garbage
//! line, over every switch kind. Every message must complete exactly once, never
//! before it was sent, in replies the legacy client can read; batched replies give each
//! client the same completions at the same times as earliest ones.

use std::collections::BTreeMap;

use vesper_netmodels::rng::Rng;
use vesper_netmodels::{AdapterParams, CioqParams, Granularity, SwitchKind, WormholeParams};
use vesper_protocol::ClientMessage;
use vesper_server::config::{FabricConfig, Replies, SwitchedConfig};
use vesper_tests::{Client, HUGE_STOP_NS, TestServer, assert_one_write, config, message, send, stop};

/// One client's life, as Dimemas's client lives it: completions told ahead of their
/// time (batched replies) are kept and taken each at its own time; the client asks the
/// server only while a message's completion is unknown, and then no later than its
/// next known completion. Returns how many messages it sent and the completions it
/// took, in order.
fn play(mut c: Client, app: u32, seed: u64, hosts: u32, replies: Replies) -> (usize, Vec<(String, f64)>) {
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
    // completions told, by time (the bits of a positive double order as it does)
    let mut known: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut taken = Vec::new();
    let mut sent = 0;
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
            None if in_flight.is_empty() && known.is_empty() => break,
            None => HUGE_STOP_NS,
        };
        let next_known = known.keys().next().map(|&bits| f64::from_bits(bits));
        let stop_at = match next_known {
            // Everything in flight is known and there is nothing to say: no need to ask.
            Some(k) if in_flight.is_empty() && batch.is_empty() => {
                clock = clock.max(k.min(until));
                if k <= until {
                    let evs = known.remove(&k.to_bits()).unwrap_or_default();
                    taken.extend(evs.into_iter().map(|ev| (ev, k)));
                }
                continue;
            }
            Some(k) => k.min(until),
            None => until,
        };
        batch.extend([stop(stop_at), ClientMessage::End]);
        let reply = c.exchange(&batch);
        assert_one_write(&reply);
        if replies == Replies::Earliest
            && let Some(first) = reply.completions.first()
        {
            assert!(
                reply.completions.iter().all(|d| d.time.0 == first.time.0),
                "one reply, one completion time"
            );
        }
        for done in &reply.completions {
            let at = done.time.0;
            let (sent_at, size) = in_flight
                .remove(done.ev.as_str())
                .expect("a message in flight, completed once");
            assert!(at > sent_at, "completion at {at} before its send at {sent_at}");
            assert!(at >= clock, "time went backwards: {at} < {clock}");
            assert_eq!(done.size, size);
            known.entry(at.to_bits()).or_default().push(done.ev.to_string());
        }
        match known.keys().next().map(|&bits| f64::from_bits(bits)) {
            Some(k) if k <= stop_at => {
                let evs = known.remove(&k.to_bits()).unwrap_or_default();
                taken.extend(evs.into_iter().map(|ev| (ev, k)));
                clock = k;
            }
            _ => {
                assert!(stop_at < HUGE_STOP_NS, "END alone to 'until the next completion'");
                clock = stop_at;
            }
        }
    }
    c.finish();
    (sent, taken)
}

/// Three random clients at once; the completions each took.
fn random_clients(fabric: FabricConfig, seed: u64, replies: Replies) -> Vec<Vec<(String, f64)>> {
    let hosts = 8;
    let mut cfg = config(hosts, 3);
    cfg.network.fabric = fabric;
    cfg.replies = replies;
    let server = TestServer::start(cfg);
    let clients: Vec<_> = (0..3).map(|_| server.client()).collect();
    let players: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(app, c)| std::thread::spawn(move || play(c, app as u32, seed + app as u64, hosts, replies)))
        .collect();
    let mut total = 0;
    let mut taken = Vec::new();
    for p in players {
        let (sent, completions) = p.join().expect("a client thread");
        assert_eq!(sent, completions.len());
        total += sent;
        taken.push(completions);
    }
    let report = server.wait();
    assert_eq!(report.simulation.messages as usize, total);
    assert_eq!(report.simulation.messages_in_flight_at_exit, 0);
    assert!(report.simulation.clients.iter().all(|c| c.finished));
    taken
}

/// Both ways, the same completions at the same times, taken in the same order.
fn both_ways(fabric: FabricConfig, seed: u64) {
    let earliest = random_clients(fabric.clone(), seed, Replies::Earliest);
    let batched = random_clients(fabric, seed, Replies::Batched);
    assert_eq!(earliest, batched, "seed {seed}");
}

fn crossbar(kind: SwitchKind) -> FabricConfig {
    let mut crossbar = SwitchedConfig::crossbar(8, AdapterParams::default());
    crossbar.switch.kind = kind;
    FabricConfig::Switched(crossbar)
}

#[test]
fn random_clients_output_queued() {
    for seed in [1, 10, 20] {
        both_ways(crossbar(SwitchKind::OutputQueued), seed);
    }
}

#[test]
fn random_clients_cioq() {
    for seed in [2, 11] {
        both_ways(crossbar(SwitchKind::Cioq(CioqParams::default())), seed);
    }
}

#[test]
fn random_clients_wormhole() {
    for seed in [3, 12, 21] {
        both_ways(crossbar(SwitchKind::Wormhole(WormholeParams::default())), seed);
    }
}

#[test]
fn random_clients_wormhole_flit_by_flit() {
    let fine = WormholeParams {
        granularity: Granularity::Fine,
        ..WormholeParams::default()
    };
    for seed in [5, 14] {
        both_ways(crossbar(SwitchKind::Wormhole(fine)), seed);
    }
}

#[test]
fn random_clients_ideal() {
    for seed in [4, 13] {
        both_ways(vesper_tests::ideal_config(8, 250.0, 500.0).network.fabric, seed);
    }
}
