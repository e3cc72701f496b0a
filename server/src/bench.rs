//! `vesper bench sync`: measures synchronisation round trips over loopback.
//!
//! A server runs in this process on `127.0.0.1:0` with its coordinator thread; a scripted
//! legacy client on another thread plays the real client's rhythm for one message at a
//! time: `SEND t … / STOP t / END` (answered `END`: nothing completes at `t`), then
//! `STOP <huge> / END` (answered with the completion), then the next message at the
//! completion time. Each exchange is one round trip, timed at the client.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde::Serialize;
use vesper_client_dimemas_adapter::LegacyConnection;
use vesper_netmodels::stats::Histogram;
use vesper_protocol::{ClientMessage, DataMessage, Token, WireTime};

use crate::config::ServerConfig;
use crate::report::{LatencySummary, Report};

/// Results of one benchmark run.
#[derive(Debug, Clone, Serialize)]
pub struct SyncBenchResult {
    /// round trips timed
    pub round_trips: u64,
    /// round trips per wall second
    pub round_trips_per_second: f64,
    /// round-trip time seen by the client \[µs\]
    pub client_round_trip_us: Option<LatencySummary>,
    /// the server's own report (its reply latency, from `END` read to reply handed
    /// out); `None` when the benchmark ran against an external server
    pub server: Option<Report>,
}

/// Runs `round_trips` timed round trips (after `warmup` untimed ones) against a vesper
/// server started in this process, or against `external` (any line server that ends
/// each reply with `END`, to compare servers with the same client).
pub fn sync(
    round_trips: u64,
    warmup: u64,
    external: Option<SocketAddr>,
    spin: Duration,
) -> anyhow::Result<SyncBenchResult> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let (addr, server) = match external {
        Some(addr) => (addr, None),
        None => {
            let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
            let addr = listener.local_addr()?;
            let config = ServerConfig {
                spin,
                ..ServerConfig::default()
            };
            let server = runtime.spawn(crate::sync::listener::run(listener, config, std::future::pending()));
            (addr, Some(server))
        }
    };

    let client = std::thread::spawn(move || -> anyhow::Result<(Histogram, Duration)> {
        let mut connection = LegacyConnection::connect(addr)?;
        let mut times = Histogram::new();
        let mut now = WireTime(0.0);
        let ev = Token::new("0x55a873d62cc0")?;
        let ev_out = Token::new("0x55a873d62c60")?;
        let total = warmup + round_trips;
        let mut timed_start = Instant::now();
        let mut done = 0u64;
        while done < total {
            let send = DataMessage {
                time: now,
                src: (done % 2) as u32,
                dst: 1 - (done % 2) as u32,
                tag: Some(7),
                size: 1024,
                ev,
                ev_out,
                src_repeat: (done % 2) as u32,
                dst_repeat: 1 - (done % 2) as u32,
                src_app: 0,
                dst_app: 0,
            };
            let batches = [
                vec![ClientMessage::Send(send), ClientMessage::Stop(now), ClientMessage::End],
                vec![ClientMessage::Stop(WireTime(2.52e13)), ClientMessage::End],
            ];
            for batch in &batches {
                if done == warmup {
                    timed_start = Instant::now();
                }
                let started = Instant::now();
                let reply = connection.exchange(batch)?;
                if done >= warmup {
                    times.record(started.elapsed().as_nanos() as u64);
                }
                done += 1;
                if let Some(c) = reply.completions.first() {
                    now = c.time;
                }
            }
        }
        let elapsed = timed_start.elapsed();
        connection.finish()?;
        Ok((times, elapsed))
    });
    let (times, elapsed) = client
        .join()
        .map_err(|_| anyhow::anyhow!("benchmark client panicked"))??;
    let report = match server {
        Some(server) => Some(runtime.block_on(server)??),
        None => None,
    };
    Ok(SyncBenchResult {
        round_trips: times.count(),
        round_trips_per_second: times.count() as f64 / elapsed.as_secs_f64(),
        client_round_trip_us: times.summary().map(LatencySummary::from_ns_to_us),
        server: report,
    })
}

/// Results of one model benchmark point.
#[derive(Debug, Clone, Serialize)]
pub struct ModelBenchPoint {
    /// hosts in the network
    pub hosts: u32,
    /// offered load, as a fraction of a host link's rate
    pub offered_load: f64,
    /// accepted load (delivered bytes over the measured time), same unit
    pub accepted_load: f64,
    /// packets delivered
    pub packets: u64,
    /// packet-hops (a packet crossing one link)
    pub packet_hops: u64,
    /// flit-hops, for wormhole switches (a flit crossing one link)
    pub flit_hops: Option<u64>,
    /// model events processed
    pub events: u64,
    /// wall time of the run \[s\], the traffic generator's included
    pub wall_seconds: f64,
    /// packet-hops per wall second
    pub packet_hops_per_second: f64,
    /// wall time in the model alone \[s\]: the run without the traffic generator (its
    /// random draws are made ahead, in blocks, outside this time)
    pub model_seconds: f64,
    /// packet-hops per second of `model_seconds`
    pub packet_hops_per_model_second: f64,
    /// events per wall second
    pub events_per_second: f64,
    /// mean message latency \[ns\]
    pub mean_latency_ns: f64,
    /// peak resident memory of this process during the point \[MiB\] (Linux only)
    pub peak_memory_mib: Option<f64>,
}

/// Whether the model benchmark can run at `offered_load`, a fraction of a host link's
/// rate: above 0 and at most 4 (beyond, the source queues only grow, and memory with
/// them).
pub fn check_load(offered_load: f64) -> anyhow::Result<()> {
    anyhow::ensure!(
        offered_load.is_finite() && offered_load > 0.0 && offered_load <= 4.0,
        "offered load {offered_load}: give a fraction of a host link's rate above 0 and at most 4 \
         (beyond, the source queues only grow, and with them the memory)"
    );
    Ok(())
}

/// Drives the model without sockets: every host sends single-packet messages
/// (`payload` bytes) to uniformly random other hosts, with Poisson arrivals at
/// `offered_load` of its link rate, for `duration` of simulated time. A packet-hop is
/// a delivered packet crossing one link (host links included).
pub fn model(
    network: &crate::config::NetworkConfig,
    offered_load: f64,
    duration: vesper_netmodels::SimTime,
    seed: u64,
) -> anyhow::Result<ModelBenchPoint> {
    use vesper_netmodels::rng::Rng;
    use vesper_netmodels::{HostId, MessageSpec, SimTime};

    use crate::config::{FabricConfig, Shape, SwitchedConfig};

    let FabricConfig::Switched(SwitchedConfig {
        link,
        adapter,
        switch,
        shape,
        ..
    }) = &network.fabric
    else {
        anyhow::bail!("the model benchmark needs a switched network");
    };
    anyhow::ensure!(network.hosts >= 2, "the model benchmark needs two hosts or more");
    // The accepted load is the bytes delivered over the time: none would be 0/0.
    anyhow::ensure!(
        duration > SimTime::ZERO,
        "duration 0: the model benchmark needs some simulated time"
    );
    check_load(offered_load)?;
    // Peak memory per point: reset the kernel's high-water mark (Linux; ignored elsewhere).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let mut sim = network.build()?;
    // Links each packet crosses: two on a crossbar (into the switch, out of it);
    // elsewhere from the routes of every pair, walked before the clock starts.
    let hops = match shape {
        Shape::Crossbar(_) => None,
        _ => Some(hop_table(sim.rails()[0].first())?),
    };
    let payload = adapter.payload_bytes;
    let packet_time = link
        .bandwidth
        .serialization_time(u64::from(payload) + u64::from(adapter.header_bytes));
    let mean_gap_ps = packet_time.as_ps() as f64 / offered_load;
    // Every host's arrivals are a Poisson process with this mean gap. Together they are
    // one Poisson process at `hosts` times the rate whose arrivals fall on hosts drawn
    // uniformly: the same traffic, without a queue of per-host arrival times.
    let all_hosts_gap_ps = mean_gap_ps / f64::from(network.hosts);
    let mut rng = Rng::new(seed);
    let mut deliveries = Vec::new();
    let hosts = network.hosts as usize;
    let (mut packets, mut packet_hops, mut latency_sum, mut delivered_bytes) = (0u64, 0u64, 0u128, 0u64);
    // Counts the packets delivered so far.
    let mut tally = |deliveries: &mut Vec<vesper_netmodels::Delivery>| {
        for d in deliveries.drain(..) {
            packets += 1;
            packet_hops += hops
                .as_ref()
                .map_or(2, |t| u64::from(t[d.src.index() * hosts + d.dst.index()]));
            latency_sum += u128::from((d.arrived - d.injected_at).as_ps());
            delivered_bytes += u64::from(d.size_bytes);
        }
    };
    let mut cookie = 0u64;
    let mut clock_ps = 0.0;
    // The traffic is drawn in blocks ahead of the model, so that the model's own time
    // can be told apart from the generator's (in co-simulation the client makes the
    // traffic). The draws are the same as one by one: they never depend on the model.
    const BLOCK: usize = 4096;
    let mut block: Vec<(SimTime, u32, u32)> = Vec::with_capacity(BLOCK);
    let mut model = Duration::ZERO;
    let started = Instant::now();
    let mut drawn_all = false;
    while !drawn_all {
        block.clear();
        while block.len() < BLOCK {
            clock_ps += rng.exponential(all_hosts_gap_ps);
            let at = SimTime::from_ps(clock_ps as u64);
            if at > duration {
                drawn_all = true;
                break;
            }
            let host = rng.below(u64::from(network.hosts)) as u32;
            let mut dst = rng.below(u64::from(network.hosts - 1)) as u32;
            if dst >= host {
                dst += 1;
            }
            block.push((at, host, dst));
        }
        let model_started = Instant::now();
        for &(at, host, dst) in &block {
            sim.run_until(at, &mut deliveries);
            // Nothing is left before `at`: the message enters its adapter at once.
            sim.advance_clock(at);
            tally(&mut deliveries);
            let spec = MessageSpec {
                src: HostId(host),
                dst: HostId(dst),
                size_bytes: payload,
                cookie,
            };
            cookie += 1;
            sim.inject(at, spec)?;
        }
        model += model_started.elapsed();
    }
    // Deliveries inside the measured time count towards the accepted load.
    let model_started = Instant::now();
    sim.run_until(duration, &mut deliveries);
    tally(&mut deliveries);
    model += model_started.elapsed();
    let wall = started.elapsed().as_secs_f64();
    let model = model.as_secs_f64();
    let link_bytes = link.bandwidth.bytes_per_second_f64() * duration.as_ps() as f64 * 1e-12;
    let flit_hops = match switch.kind {
        vesper_netmodels::SwitchKind::Wormhole(w) => {
            Some(packet_hops * (u64::from(payload) + u64::from(adapter.header_bytes)).div_ceil(u64::from(w.flit_bytes)))
        }
        _ => None,
    };
    Ok(ModelBenchPoint {
        hosts: network.hosts,
        offered_load,
        accepted_load: delivered_bytes as f64 / (link_bytes * f64::from(network.hosts)),
        packets,
        packet_hops,
        flit_hops,
        events: sim.events_processed(),
        wall_seconds: wall,
        packet_hops_per_second: packet_hops as f64 / wall,
        model_seconds: model,
        packet_hops_per_model_second: packet_hops as f64 / model,
        events_per_second: sim.events_processed() as f64 / wall,
        mean_latency_ns: latency_sum as f64 / packets.max(1) as f64 / 1e3,
        peak_memory_mib: peak_memory_mib(),
    })
}

/// The links a packet from each host to each other crosses, by `src × hosts + dst`, from
/// the routes (networks of at most 4,096 hosts; a crossbar needs no table).
fn hop_table(sim: &vesper_netmodels::Simulation) -> anyhow::Result<Vec<u8>> {
    use vesper_netmodels::HostId;
    let hosts = sim.hosts();
    anyhow::ensure!(
        hosts <= 4096,
        "the model benchmark counts each pair's hops; beyond a crossbar it takes at most 4,096 hosts, not {hosts}"
    );
    let mut table = vec![0u8; hosts as usize * hosts as usize];
    let mut ports = Vec::new();
    for src in 0..hosts {
        for dst in (0..hosts).filter(|&d| d != src) {
            ports.clear();
            anyhow::ensure!(
                sim.path(HostId(src), HostId(dst), &mut ports),
                "the model benchmark needs one route per pair (routes chosen message by message have no hop count)"
            );
            table[(src * hosts + dst) as usize] = u8::try_from(ports.len())
                .map_err(|_| anyhow::anyhow!("host {src} to host {dst}: a path of {} links", ports.len()))?;
        }
    }
    Ok(table)
}

/// Peak resident memory of this process \[MiB\], from `/proc/self/status` (Linux).
pub fn peak_memory_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}
