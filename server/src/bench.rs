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
    /// round-trip time seen by the client [µs]
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
            let server = runtime.spawn(crate::run(listener, config, std::future::pending()));
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
