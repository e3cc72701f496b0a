use std::sync::Arc;

use super::record::Body;
use super::*;
use crate::adapter::AdapterParams;
use crate::builder::NetworkBuilder;
use crate::ids::{Device, HostId, SwitchId};
use crate::link::LinkParams;
use crate::message::{Delivery, MessageSpec};
use crate::network::Network;
use crate::switch::{SwitchKind, SwitchParams, WormholeParams};
use crate::time::{Bandwidth, SimTime};
use crate::topology::multirail::RailPolicy;
use crate::topology::{Cable, Endpoint, Routing, Topology};
use crate::trace::check::{CheckedTrace, check};
use crate::trace::select::{DeviceSelection, TimeWindow};
use crate::trace::{BufferSide, PortRef, TraceSink};

/// Two hosts on one switch; host 0's cable twice as fast as host 1's, so that what
/// host 0 sends queues at the switch.
fn tiny(kind: SwitchKind) -> NetworkBuilder {
    let slow = LinkParams::default();
    let fast = LinkParams {
        bandwidth: Bandwidth::from_bytes_per_second(2 * slow.bandwidth.bytes_per_second()).expect("positive"),
        ..slow
    };
    let cable = |h: u32, link| Cable {
        a: Endpoint {
            device: Device::Host(HostId(h)),
            port: 0,
        },
        b: Endpoint {
            device: Device::Switch(SwitchId(0)),
            port: h,
        },
        link,
    };
    let topology = Topology {
        hosts: 2,
        switch_ports: vec![2],
        cables: vec![cable(0, fast), cable(1, slow)],
        routing: Routing::ShortestPath,
    };
    NetworkBuilder::new(topology)
        .switch_params(SwitchParams {
            kind,
            ..SwitchParams::default()
        })
        .adapter_params(AdapterParams {
            payload_bytes: 512,
            ..AdapterParams::default()
        })
}

fn options() -> ParaverOptions {
    ParaverOptions {
        quantum_bytes: 256,
        end_to_end: true,
        ..ParaverOptions::default()
    }
}

fn spec(src: u32, dst: u32, size_bytes: u32, cookie: u64) -> MessageSpec {
    MessageSpec {
        src: HostId(src),
        dst: HostId(dst),
        size_bytes,
        cookie,
    }
}

/// Runs `messages` (time in ns, spec) on `rails` and returns the finished trace.
fn trace(
    rails: Vec<NetworkBuilder>,
    policy: RailPolicy,
    options: &ParaverOptions,
    messages: &[(u64, MessageSpec)],
) -> (MemoryOutput, TraceSummary, Vec<Delivery>) {
    let mut net = TracedNetwork::build(rails, policy, options, MemoryOutput::default()).expect("valid");
    let mut deliveries = Vec::new();
    for &(at, spec) in messages {
        let at = SimTime::from_ns(at);
        net.run_until(at, &mut deliveries);
        net.inject(at, spec).expect("valid");
    }
    net.run_until(SimTime::MAX, &mut deliveries);
    let summary = net.finish_trace().expect("written").expect("traced");
    assert_eq!(net.finish_trace().expect("nothing more"), None);
    assert_eq!(summary.late_records, 0);
    (net.output().clone(), summary, deliveries)
}

/// Two messages from host 0 to host 1 that share host 0's adapter and the switch's
/// output to host 1.
fn contending(kind: SwitchKind) -> (MemoryOutput, TraceSummary, Vec<Delivery>) {
    let messages = [(0, spec(0, 1, 1024, 10)), (100, spec(0, 1, 512, 11))];
    trace(vec![tiny(kind)], RailPolicy::RoundRobin, &options(), &messages)
}

fn checked(out: &MemoryOutput) -> CheckedTrace {
    match check(&out.prv(), &out.pcf, &out.row) {
        Ok(c) => c,
        Err(e) => panic!("{e}\n{}", out.prv()),
    }
}

/// The `.pcf` names every backlog state a trace can hold, not only those this one
/// holds, so that Paraver never shows an "Unknown state" (whatever the window, the
/// records a stream dropped, or the view's semantics).
#[test]
fn the_pcf_labels_every_backlog_state() {
    let (out, _, _) = contending(SwitchKind::OutputQueued);
    let states = out
        .pcf
        .split("\nSTATES\n")
        .nth(1)
        .expect("STATES")
        .split("\n\n")
        .next()
        .expect("a section");
    let labels: Vec<&str> = states.lines().collect();
    assert_eq!(labels.len(), MAX_LEVEL as usize + 1, "{states}");
    assert_eq!(labels[0], "0    Empty");
    assert_eq!(labels[2], "2    Backlog 257-512 bytes");
    assert_eq!(
        labels[MAX_LEVEL as usize],
        format!("{MAX_LEVEL}    Backlog 255489 bytes or more")
    );
    let colours = out.pcf.split("\nSTATES_COLOR\n").nth(1).expect("STATES_COLOR");
    assert_eq!(
        colours.split("\n\n").next().expect("a section").lines().count(),
        MAX_LEVEL as usize + 1
    );
}

#[test]
fn tiny_contention_trace_snapshot() {
    let (out, summary, deliveries) = contending(SwitchKind::OutputQueued);
    insta::assert_snapshot!("tiny_contention.prv", out.prv());
    insta::assert_snapshot!("tiny_contention.pcf", out.pcf);
    insta::assert_snapshot!("tiny_contention.row", out.row);
    let c = checked(&out);
    assert_eq!((c.tasks, c.threads), (3, 4));
    // Two messages × two links, and one end-to-end record each.
    assert_eq!(c.communications, 6);
    assert_eq!(summary.communications, 6);
    assert_eq!(summary.unfinished_messages, 0);
    // The trace ends with the last byte in.
    let last = deliveries.iter().map(|d| d.arrived).max().expect("delivered");
    assert_eq!(c.end_ns, last.as_ps() / 1000);
    // Something queued at the switch's output to host 1 (sw0.p1: task 3, thread 2).
    assert!(out.prv().lines().any(|l| l.starts_with("1:0:1:3:2:")), "{}", out.prv());
}

#[test]
fn the_wormhole_trace_shows_flow_control_and_checks() {
    let wormhole = SwitchKind::Wormhole(WormholeParams::default());
    let (out, summary, _) = contending(wormhole);
    let c = checked(&out);
    assert_eq!(c.communications, 6);
    assert!(c.states > 0 && summary.states == c.states);
    let prv = out.prv();
    // The switch's input from host 0 (sw0.p0: task 3, thread 1) sends STOP and GO; host
    // 0's port receives them.
    assert!(prv.contains(&format!(":{FLOW_CONTROL_SENT}:1\n")), "{prv}");
    assert!(prv.contains(&format!(":{FLOW_CONTROL_SENT}:2\n")), "{prv}");
    assert!(
        prv.lines()
            .any(|l| l.starts_with("2:0:1:1:1:") && l.ends_with(&format!(":{FLOW_CONTROL_RECEIVED}:1"))),
        "{prv}"
    );
}

#[test]
fn the_same_run_gives_the_same_bytes() {
    for kind in [
        SwitchKind::OutputQueued,
        SwitchKind::Wormhole(WormholeParams::default()),
    ] {
        let (a, _, _) = contending(kind);
        let (b, _, _) = contending(kind);
        assert_eq!(a, b);
    }
}

#[test]
fn selection_keeps_devices_and_a_window() {
    let messages = [(0, spec(0, 1, 1024, 10)), (100, spec(0, 1, 512, 11))];
    let switches = ParaverOptions {
        devices: DeviceSelection::parse("sw*").expect("valid"),
        ..options()
    };
    let (out, _, _) = trace(
        vec![tiny(SwitchKind::OutputQueued)],
        RailPolicy::RoundRobin,
        &switches,
        &messages,
    );
    let c = checked(&out);
    assert_eq!((c.tasks, c.threads, c.communications), (1, 2, 0));
    assert_eq!(
        out.row,
        "LEVEL TASK SIZE 1\nsw0\n\nLEVEL THREAD SIZE 2\nsw0.p0\nsw0.p1\n"
    );
    let hosts = ParaverOptions {
        devices: DeviceSelection::parse("level=0").expect("valid"),
        ..options()
    };
    let (out, _, _) = trace(
        vec![tiny(SwitchKind::OutputQueued)],
        RailPolicy::RoundRobin,
        &hosts,
        &messages,
    );
    // Only the end-to-end records join two traced ports.
    assert_eq!(checked(&out).communications, 2);
    let window = ParaverOptions {
        window: TimeWindow::parse("2000:5000").expect("valid"),
        ..options()
    };
    let (out, _, _) = trace(
        vec![tiny(SwitchKind::OutputQueued)],
        RailPolicy::RoundRobin,
        &window,
        &messages,
    );
    let c = checked(&out);
    assert!(c.states + c.events > 0);
    for line in out.prv().lines().skip(1) {
        let time: u64 = line.split(':').nth(5).and_then(|t| t.parse().ok()).expect("a time");
        assert!((2000..5000).contains(&time), "{line}");
    }
    let none = ParaverOptions {
        devices: DeviceSelection::parse("router*").expect("valid"),
        ..options()
    };
    let err = TracedNetwork::build(
        vec![tiny(SwitchKind::OutputQueued)],
        RailPolicy::RoundRobin,
        &none,
        MemoryOutput::default(),
    )
    .expect_err("nothing selected");
    assert_eq!(
        err.to_string(),
        "the device selection matches no device of the network (hosts are named host0…, switches sw0…; 1 switches)"
    );
}

#[test]
fn rails_share_one_trace() {
    let messages = [(0, spec(0, 1, 1024, 10)), (100, spec(0, 1, 512, 11))];
    let rails = vec![tiny(SwitchKind::OutputQueued), tiny(SwitchKind::OutputQueued)];
    let (out, _, deliveries) = trace(rails, RailPolicy::Striped, &options(), &messages);
    assert_eq!(deliveries.len(), 2);
    let c = checked(&out);
    assert_eq!((c.tasks, c.threads), (6, 8));
    assert!(
        out.row
            .starts_with("LEVEL TASK SIZE 6\nr0.host0\nr0.host1\nr0.sw0\nr1.host0\n"),
        "{}",
        out.row
    );
    // Each message in two parts, one per rail: 4 parts × (2 links + end to end).
    assert_eq!(c.communications, 12);
    // Rail 0's messages 1 and 2 are tags 1 and 3; rail 1's are 2 and 4.
    let tags = |task: &str| {
        let mut tags: Vec<String> = out
            .prv()
            .lines()
            .filter(|l| l.starts_with(&format!("3:0:1:{task}:1:")))
            .filter_map(|l| l.rsplit(':').next().map(str::to_owned))
            .collect();
        tags.sort_unstable();
        tags
    };
    assert_eq!(tags("1"), ["1", "1", "3", "3"]);
    assert_eq!(tags("4"), ["2", "2", "4", "4"]);
}

#[test]
fn the_reorder_window_stays_small_on_a_long_run() {
    let mut net = TracedNetwork::build(
        vec![tiny(SwitchKind::Wormhole(WormholeParams::default()))],
        RailPolicy::RoundRobin,
        &options(),
        MemoryOutput::default(),
    )
    .expect("valid");
    let mut deliveries = Vec::new();
    let mut peak = 0;
    for i in 0..300u64 {
        let at = SimTime::from_ns(i * 10_000);
        net.run_until(at, &mut deliveries);
        peak = peak.max(net.buffered());
        net.inject(at, spec(0, 1, 1500, i)).expect("valid");
        net.inject(at, spec(1, 0, 700, i)).expect("valid");
    }
    net.run_until(SimTime::MAX, &mut deliveries);
    assert_eq!(deliveries.len(), 600);
    let written_before_finish = net.output().body.len();
    let summary = net.finish_trace().expect("written").expect("traced");
    let records = summary.states + summary.events + summary.communications;
    // Written as the run went, holding back no more than a few messages' worth.
    assert!(written_before_finish > 0);
    assert!(records > 5_000, "{summary:?}");
    assert!(peak < 2_000, "peak {peak} of {records} records");
    assert_eq!(summary.late_records, 0);
    checked(net.output());
}

#[test]
fn a_long_state_is_cut_where_the_split_says_whenever_the_clock_passes() {
    let options = ParaverOptions {
        state_split: SimTime::from_ns(5_000),
        ..options()
    };
    let layout = Arc::new(Layout::new(&[tiny(SwitchKind::OutputQueued)], &options.devices).expect("valid"));
    let port = PortRef {
        device: Device::Switch(SwitchId(0)),
        port: 1,
    };
    // One sink sees the clock pass now and then (as a partition sees its own events),
    // the other never: the same pieces.
    let pieces = |clocks: &[u64]| {
        let mut sink = ParaverSink::new(layout.clone(), 0, 1, &options);
        sink.backlog(SimTime::from_ns(1_200), port, BufferSide::Output, 5_000);
        for &ns in clocks {
            sink.clock(SimTime::from_ns(ns));
        }
        sink.backlog(SimTime::from_ns(31_000), port, BufferSide::Output, 0);
        let mut records = Vec::new();
        sink.release(u64::MAX, &mut records);
        records
            .iter()
            .map(|r| match r.body {
                Body::State { end_ns, level } => (r.ns, end_ns, level),
                _ => panic!("only states: {r:?}"),
            })
            .collect::<Vec<_>>()
    };
    let level = 5_000u64.div_ceil(options.quantum_bytes) as u32;
    let expected = vec![
        (1_200, 5_000, level),
        (5_000, 10_000, level),
        (10_000, 15_000, level),
        (15_000, 20_000, level),
        (20_000, 25_000, level),
        (25_000, 30_000, level),
        (30_000, 31_000, level),
    ];
    assert_eq!(pieces(&[]), expected);
    assert_eq!(pieces(&[4_000, 12_345, 12_346, 27_000, 30_999]), expected);
    assert_eq!(pieces(&[30_000]), expected);
}

#[test]
fn long_states_are_split_and_messages_waiting_in_the_adapter_hold_the_window() {
    // Many messages at once from host 0: the last waits long in the adapter, and its
    // first link's record starts at its injection.
    let messages: Vec<(u64, MessageSpec)> = (0..20).map(|i| (0, spec(0, 1, 4000, i))).collect();
    let short = ParaverOptions {
        state_split: SimTime::from_ns(5_000),
        ..options()
    };
    let (out, summary, _) = trace(
        vec![tiny(SwitchKind::OutputQueued)],
        RailPolicy::RoundRobin,
        &short,
        &messages,
    );
    let c = checked(&out);
    assert_eq!(summary.late_records, 0);
    assert_eq!(c.communications, 60);
    // The switch's output to host 1 stays backlogged for long: its state comes in pieces,
    // which end at multiples of the split (or where the state changes).
    let pieces: Vec<(u64, u64)> = out
        .prv()
        .lines()
        .filter(|l| l.starts_with("1:0:1:3:2:"))
        .map(|l| {
            let f: Vec<u64> = l.split(':').map(|x| x.parse().expect("a number")).collect();
            (f[5], f[6])
        })
        .collect();
    assert!(pieces.len() > 10, "{}", out.prv());
    let on_the_grid = pieces.iter().filter(|(_, end)| end % 5_000 == 0).count();
    assert!(on_the_grid >= 10, "{pieces:?}");
    assert!(
        pieces.iter().all(|(begin, end)| begin / 5_000 == (end - 1) / 5_000),
        "{pieces:?}"
    );
}

#[test]
fn head_of_line_blocking_shows_as_events_at_the_input() {
    // The wormhole model's own scenario: host 1's second packet (to the free host 3)
    // waits behind its first (to host 2, busy with host 0's long packet).
    let params = WormholeParams {
        arbitration: crate::switch::Arbitration::RoundRobin {
            initial: crate::switch::InitialPointer::Fixed(0),
        },
        ..WormholeParams::default()
    };
    let builder = NetworkBuilder::crossbar(4, LinkParams::default()).switch_params(SwitchParams {
        kind: SwitchKind::Wormhole(params),
        ..SwitchParams::default()
    });
    let messages = [
        (0, spec(0, 2, 4096, 0)),
        (100, spec(1, 2, 64, 1)),
        (100, spec(1, 3, 64, 2)),
    ];
    let (out, _, _) = trace(vec![builder], RailPolicy::RoundRobin, &options(), &messages);
    checked(&out);
    // sw0 is task 5; its port 1 (the input from host 1) is thread 2.
    let hol: Vec<String> = out
        .prv()
        .lines()
        .filter(|l| l.starts_with("2:0:1:5:2:") && l.contains(&format!(":{HOL_BLOCKING}:")))
        .map(str::to_owned)
        .collect();
    assert_eq!(hol.len(), 2, "{hol:?}");
    assert!(hol[0].ends_with(":1") && hol[1].ends_with(":0"), "{hol:?}");
}

#[test]
fn a_wait_for_a_bubble_slot_shows_as_events_at_the_output() {
    // The wormhole model's own scenario: host 0's second packet to host 1, one switch
    // round a ring of four, finds switch 0's output free but no room for two beyond
    // its cable until the first packet's credit is back.
    let ring = crate::topology::torus::Torus::new(vec![4], true, 1).expect("valid");
    let params = WormholeParams {
        bubble: true,
        buffer_bytes: 72 * 8,
        ..WormholeParams::default()
    };
    let builder = NetworkBuilder::new(ring.topology(LinkParams::default()))
        .switch_params(SwitchParams {
            kind: SwitchKind::Wormhole(params),
            ..SwitchParams::default()
        })
        .adapter_params(AdapterParams {
            payload_bytes: 256,
            ..AdapterParams::default()
        });
    let (out, _, deliveries) = trace(
        vec![builder],
        RailPolicy::RoundRobin,
        &options(),
        &[(0, spec(0, 1, 512, 0))],
    );
    checked(&out);
    assert_eq!(deliveries.len(), 1);
    // sw0 is task 5.
    let waits: Vec<String> = out
        .prv()
        .lines()
        .filter(|l| l.contains(&format!(":{ROOM_WAIT}:")))
        .map(str::to_owned)
        .collect();
    assert_eq!(waits.len(), 2, "{waits:?}");
    assert!(waits.iter().all(|w| w.starts_with("2:0:1:5:")), "{waits:?}");
    assert!(waits[0].ends_with(":1") && waits[1].ends_with(":0"), "{waits:?}");
    assert!(
        out.pcf.contains(&format!(
            "{ROOM_WAIT}    Waiting for a slot beyond the cable (bubble flow control)\nVALUES\n0    End\n1    Start"
        )),
        "{}",
        out.pcf
    );
}

/// The summary's busiest link is the link whose records carry the most bytes, counted
/// here from the trace's text; end-to-end records (host to host) are no link.
#[test]
fn the_summary_names_the_busiest_link_of_the_records() {
    let messages = [
        (0, spec(0, 1, 1024, 10)),
        (100, spec(0, 1, 512, 11)),
        (200, spec(1, 0, 4000, 12)),
    ];
    let (out, summary, _) = trace(
        vec![tiny(SwitchKind::OutputQueued)],
        RailPolicy::RoundRobin,
        &options(),
        &messages,
    );
    // Names by (task, thread), from the .row's thread section, in order.
    let names: Vec<&str> = out
        .row
        .split("LEVEL THREAD SIZE")
        .nth(1)
        .expect("threads")
        .lines()
        .skip(1)
        .collect();
    let task_threads = [(1, 1), (2, 1), (3, 1), (3, 2)];
    let name = |task: &str, thread: &str| {
        let key = (
            task.parse::<u32>().expect("a task"),
            thread.parse::<u32>().expect("a thread"),
        );
        names[task_threads.iter().position(|&t| t == key).expect("a thread")].to_string()
    };
    let mut bytes: Vec<((String, String), u64)> = Vec::new();
    for line in out.prv().lines().filter(|l| l.starts_with("3:")) {
        let f: Vec<&str> = line.split(':').collect();
        let (from, to) = (name(f[3], f[4]), name(f[9], f[10]));
        if from.starts_with("host") && to.starts_with("host") {
            continue;
        }
        let size: u64 = f[13].parse().expect("a size");
        match bytes.iter_mut().find(|(link, _)| *link == (from.clone(), to.clone())) {
            Some((_, b)) => *b += size,
            None => bytes.push(((from, to), size)),
        }
    }
    let most = bytes.iter().map(|(_, b)| *b).max().expect("links");
    // Ties go to the first port in the .row.
    let ((from, to), _) = bytes
        .iter()
        .filter(|(_, b)| *b == most)
        .min_by_key(|((from, _), _)| names.iter().position(|n| n == from))
        .expect("the busiest")
        .clone();
    assert_eq!(most, 4000);
    assert_eq!(
        summary.busiest_link,
        Some(LinkBytes { from, to, bytes: most }),
        "{bytes:?}"
    );
    assert_eq!(summary.busiest_link.expect("a link").from, "host1.p0");
}
