//! `vesper traffic`: open-loop synthetic traffic on a network (one operating point, or a
//! latency–load curve), as a table, JSON, or an SVG plot.
//!
//! ```text
//!   configurations (presets, files, routings, switch kinds)
//!        │ one curve each
//!        ▼
//!   loads in waves of `threads` points ─▶ netmodels::traffic::run (own network, own seed)
//!        │ stop one point past the first saturated one
//!        ▼
//!   curves ─▶ table | JSON | SVG (latency–load, throughput–load)
//! ```
//!
//! Each point is an independent simulation seeded from the traffic seed and its load,
//! so a curve is the same whatever the number of threads or their timing, and a point
//! run alone equals the same point of a sweep.

use std::fmt::Write as _;
use std::time::Instant;

use serde::Serialize;
use vesper_netmodels::rng::Rng;
use vesper_netmodels::stats::Summary;
use vesper_netmodels::traffic::{self, HostLink, LinkLoad, Little, TrafficSpec};
use vesper_netmodels::{SimTime, SwitchKind};

use crate::config::{FabricConfig, NetworkConfig, Split, SwitchedConfig};

/// One network to measure, the traffic it gets, and its name on plots and tables.
#[derive(Debug, Clone)]
pub struct Configuration {
    /// the curve's name
    pub label: String,
    /// the network
    pub network: NetworkConfig,
    /// the traffic (its load is replaced by each point's)
    pub spec: TrafficSpec,
}

/// The time unit of reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// its length
    pub length: SimTime,
    /// its name: `ns`, or `cycles` (one flit on one link)
    pub name: &'static str,
}

impl Unit {
    /// Nanoseconds.
    pub const NS: Unit = Unit {
        length: SimTime::from_ns(1),
        name: "ns",
    };

    /// One flit time of `link`: the unit of cycle-based simulators.
    pub fn cycles(link: &HostLink) -> Unit {
        Unit {
            length: link.bandwidth.serialization_time(u64::from(link.flit_bytes)),
            name: "cycles",
        }
    }

    fn of(self, ps: f64) -> f64 {
        ps / self.length.as_ps().max(1) as f64
    }
}

/// What the generators see of `network`: its host link, packets and flit.
pub fn host_link(network: &NetworkConfig) -> Result<HostLink, String> {
    let switched = |s: &SwitchedConfig| HostLink {
        bandwidth: s.link.bandwidth,
        adapter: s.adapter,
        flit_bytes: match s.switch.kind {
            SwitchKind::Wormhole(w) => w.flit_bytes,
            _ => vesper_netmodels::switch::DEFAULT_FLIT_BYTES,
        },
    };
    match &network.fabric {
        FabricConfig::Switched(s) => Ok(switched(s)),
        FabricConfig::MultiRail { rails, .. } => rails.first().map(switched).ok_or_else(|| "no rails".to_string()),
        FabricConfig::Ideal(_) => {
            Err("the ideal network has no links to load: synthetic traffic needs a switched network".into())
        }
    }
}

/// Latency statistics in the report's unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Latency {
    /// mean
    pub mean: f64,
    /// median
    pub p50: f64,
    /// 99th percentile
    pub p99: f64,
    /// largest
    pub max: f64,
}

impl Latency {
    fn of(s: Summary, unit: Unit) -> Latency {
        Latency {
            mean: unit.of(s.mean),
            p50: unit.of(s.p50 as f64),
            p99: unit.of(s.p99 as f64),
            max: unit.of(s.max as f64),
        }
    }
}

/// One operating point, in the report's unit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// offered load: fraction of the link rate (flits per host per flit time)
    pub offered_load: f64,
    /// what the generators created in the window, same unit
    pub created_load: f64,
    /// what arrived in the window, same unit
    pub accepted_load: f64,
    /// packets created in the window
    pub packets: u64,
    /// of those, dropped at full source queues
    pub dropped: u64,
    /// of those, not arrived when the drain ended
    pub undelivered: u64,
    /// latency from creation (source queue included)
    pub latency: Option<Latency>,
    /// latency from injection (first byte out of the adapter)
    pub network_latency: Option<Latency>,
    /// mean links crossed (host links included); absent when routes are chosen per
    /// message or the network has several rails
    pub mean_hops: Option<f64>,
    /// most links crossed
    pub max_hops: Option<u64>,
    /// link utilisation during the window (absent as the hops)
    pub links: Option<LinkLoad>,
    /// Little's law: packets in the system against throughput × latency
    pub little: Little,
    /// the network did not keep up
    pub saturated: bool,
    /// why it counts as saturated
    pub saturation: Vec<String>,
    /// flits that crossed a link, whole run
    pub flit_hops: Option<u64>,
    /// model events, whole run
    pub events: u64,
    /// wall time to build the network \[s\] (not deterministic)
    pub build_seconds: f64,
    /// wall time to simulate the point \[s\] (not deterministic)
    pub wall_seconds: f64,
    /// how the partitions ran, when the network was split (not in the JSON: the
    /// results do not depend on the partitions)
    #[serde(skip)]
    pub partitions: Option<PartitionStats>,
}

/// How a split network's partitions ran, every rail together.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionStats {
    /// partitions of each rail
    pub partitions: u32,
    /// the window's length
    pub lookahead: SimTime,
    /// windows run
    pub windows: u64,
    /// packets that crossed from one partition to another
    pub crossings: u64,
    /// bytes the ranks sent each other (0 for partitions on threads, which share
    /// memory)
    pub bytes: u64,
    /// events each partition handled
    pub events: Vec<u64>,
}

impl PartitionStats {
    /// Those of `net`, if its rails are split.
    fn of(net: &vesper_netmodels::MultiRail) -> Option<PartitionStats> {
        let first = net.rails().first().filter(|r| r.partitions() > 1)?;
        let mut events = vec![0; first.partitions() as usize];
        for rail in net.rails() {
            for (sum, e) in events.iter_mut().zip(rail.events_by_partition()) {
                *sum += e;
            }
        }
        Some(PartitionStats {
            partitions: first.partitions(),
            lookahead: net.rails().iter().map(|r| r.lookahead()).min().unwrap_or(SimTime::MAX),
            windows: net.rails().iter().map(|r| r.windows()).sum(),
            crossings: net.rails().iter().map(|r| r.crossings()).sum(),
            bytes: net.rails().iter().map(|r| r.bytes_exchanged()).sum(),
            events,
        })
    }
}

/// The points of one configuration, by increasing load.
#[derive(Debug, Clone, Serialize)]
pub struct Curve {
    /// the configuration's name
    pub label: String,
    /// the network, described
    pub network: String,
    /// the traffic pattern
    pub pattern: String,
    /// the unit of latencies: `ns` or `cycles`
    pub unit: &'static str,
    /// the points, stopped one past the first saturated one
    pub points: Vec<Point>,
}

/// The seed of the point at `load`: a point depends on its load, not on its neighbours.
fn point_seed(seed: u64, load: f64) -> u64 {
    Rng::keyed(seed, &[load.to_bits()]).next_u64()
}

/// Runs one point of `network` at `load` (`spec.load` is replaced), the network split
/// as `split` says.
pub fn point(
    network: &NetworkConfig,
    spec: &TrafficSpec,
    load: f64,
    cycles: bool,
    split: &Split,
) -> anyhow::Result<Point> {
    let link = host_link(network).map_err(anyhow::Error::msg)?;
    let unit = if cycles { Unit::cycles(&link) } else { Unit::NS };
    let spec = TrafficSpec {
        load,
        seed: point_seed(spec.seed, load),
        ..spec.clone()
    };
    let started = Instant::now();
    let mut net = network
        .build_as(split)
        .map_err(|e| anyhow::anyhow!("{}: {e}", split.named()))?;
    let build_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let r = traffic::run(&mut net, link, &spec)?;
    Ok(Point {
        offered_load: r.offered_load,
        created_load: r.created_load,
        accepted_load: r.accepted_load,
        packets: r.created,
        dropped: r.dropped,
        undelivered: r.undelivered,
        latency: r.latency.map(|s| Latency::of(s, unit)),
        network_latency: r.network_latency.map(|s| Latency::of(s, unit)),
        mean_hops: r.hops.map(|h| h.mean),
        max_hops: r.hops.map(|h| h.max),
        links: r.links.clone(),
        little: r.little,
        saturated: r.saturated(),
        saturation: r.saturation.clone(),
        flit_hops: r.flit_hops,
        events: r.events,
        build_seconds,
        wall_seconds: started.elapsed().as_secs_f64(),
        partitions: PartitionStats::of(&net),
    })
}

/// Runs `loads` (increasing) on every configuration, `threads` points at a time (each
/// network split as `split` says; on MPI ranks, `threads` must be 1), each curve stopping
/// `past` points after its first saturated one.
pub fn sweep(
    configurations: &[Configuration],
    loads: &[f64],
    threads: usize,
    split: &Split,
    past: usize,
    cycles: bool,
) -> anyhow::Result<Vec<Curve>> {
    let threads = threads.max(1);
    let mut curves = Vec::new();
    for c in configurations {
        let mut points: Vec<Point> = Vec::new();
        for wave in loads.chunks(threads) {
            let results: Vec<anyhow::Result<Point>> = std::thread::scope(|scope| {
                let handles: Vec<_> = wave
                    .iter()
                    .map(|&load| scope.spawn(move || point(&c.network, &c.spec, load, cycles, split)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err(anyhow::anyhow!("a simulation thread panicked")))
                    })
                    .collect()
            });
            for r in results {
                points.push(r.map_err(|e| anyhow::anyhow!("{}: {e}", c.label))?);
            }
            // The cut depends on the results only, never on which thread finished first.
            if let Some(first) = points.iter().position(|p| p.saturated)
                && points.len() > first + past
            {
                points.truncate(first + past + 1);
                break;
            }
        }
        curves.push(Curve {
            label: c.label.clone(),
            network: c.network.describe(),
            pattern: c.spec.pattern.to_string(),
            unit: if cycles { "cycles" } else { "ns" },
            points,
        });
    }
    Ok(curves)
}

/// `FROM:TO:STEP` (e.g. `0.05:0.95:0.05`) as the loads it names, `TO` included when a
/// step lands on it.
pub fn parse_sweep(text: &str) -> Result<Vec<f64>, String> {
    let bad = || format!("--sweep {text}: give FROM:TO:STEP with 0 < FROM ≤ TO and STEP > 0, e.g. 0.05:0.95:0.05");
    let parts: Vec<f64> = text
        .split(':')
        .map(|p| p.trim().parse::<f64>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let [from, to, step] = parts[..] else {
        return Err(bad());
    };
    if !(from.is_finite() && to.is_finite() && step.is_finite() && from > 0.0 && to >= from && step > 0.0) {
        return Err(bad());
    }
    // Counted as a float first: a tiny step would overflow any integer.
    let steps = ((to - from) / step + 1e-9).floor();
    if steps >= 1000.0 {
        return Err(format!("--sweep {text}: more than 1000 points; at most 1000"));
    }
    // Rounded to 12 significant digits so that 0.1 + 0.2 prints (and seeds) as 0.3.
    let round = |x: f64| format!("{x:.11e}").parse::<f64>().unwrap_or(x);
    Ok((0..=steps as u64).map(|i| round(from + step * i as f64)).collect())
}

/// The curves as a text table.
pub fn table(curves: &[Curve]) -> String {
    let mut out = String::new();
    for c in curves {
        let u = c.unit;
        let _ = writeln!(
            out,
            "{}: {} ({} traffic, latency in {u})",
            c.label, c.network, c.pattern
        );
        let _ = writeln!(
            out,
            "{:>8} {:>8} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>6} {:>6} {:>7} {:>5}",
            "offered", "created", "accepted", "mean", "p50", "p99", "max", "net mean", "hops", "link", "little", "sat"
        );
        for p in &c.points {
            let l = |f: fn(&Latency) -> f64, v: Option<Latency>| v.map_or("-".into(), |v| format!("{:.1}", f(&v)));
            let _ = writeln!(
                out,
                "{:>8.3} {:>8.3} {:>8.3} {:>10} {:>10} {:>10} {:>10} {:>10} {:>6} {:>6} {:>6.1}% {:>5}",
                p.offered_load,
                p.created_load,
                p.accepted_load,
                l(|v| v.mean, p.latency),
                l(|v| v.p50, p.latency),
                l(|v| v.p99, p.latency),
                l(|v| v.max, p.latency),
                l(|v| v.mean, p.network_latency),
                p.mean_hops.map_or("-".into(), |h| format!("{h:.2}")),
                p.links.as_ref().map_or("-".into(), |l| format!("{:.3}", l.max)),
                p.little.relative_error * 100.0,
                if p.saturated { "yes" } else { "" }
            );
        }
        let (build, wall) = c
            .points
            .iter()
            .fold((0.0, 0.0), |(b, w), p| (b + p.build_seconds, w + p.wall_seconds));
        let flit_hops: u64 = c.points.iter().filter_map(|p| p.flit_hops).sum();
        let _ = writeln!(
            out,
            "wall: build {build:.3} s, simulate {wall:.3} s; {:.3} M flit-hops per simulating second ({} events)",
            flit_hops as f64 / wall.max(1e-9) / 1e6,
            c.points.iter().map(|p| p.events).sum::<u64>()
        );
        if let Some(p) = c.points.iter().find(|p| p.saturated) {
            let _ = writeln!(
                out,
                "saturated at offered {:.3}: {}",
                p.offered_load,
                p.saturation.join("; ")
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "loads: fraction of a host link's rate (flits/host/flit time); link: busiest link's utilisation; \
         little: |L - λW| / L"
    );
    out
}

/// One plot: its left edge, title, top of the y axis, and the value it shows.
type Panel = (f64, &'static str, f64, fn(&Point) -> Option<f64>);

const COLOURS: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
];

/// A latency–load and a throughput–load plot of `curves`, side by side, as SVG.
///
/// Latency is the mean from creation; its axis ends at four times the largest latency
/// below saturation, so that the knee stays visible (higher points sit on the edge).
pub fn svg(curves: &[Curve]) -> String {
    let (w, h, margin) = (440.0, 340.0, 60.0);
    let unit = curves.first().map_or("ns", |c| c.unit);
    let points = || curves.iter().flat_map(|c| &c.points);
    let max_load = points().map(|p| p.offered_load).fold(0.0, f64::max).max(0.1);
    let below: f64 = points()
        .filter(|p| !p.saturated)
        .filter_map(|p| p.latency.map(|l| l.mean))
        .fold(0.0, f64::max);
    let any = points().filter_map(|p| p.latency.map(|l| l.mean)).fold(0.0, f64::max);
    let max_latency = if below > 0.0 { (below * 4.0).min(any) } else { any }.max(1.0);
    let max_accepted = points()
        .map(|p| p.accepted_load.max(p.offered_load))
        .fold(0.0, f64::max)
        .max(0.1);
    let mut out = String::new();
    let total_w = 2.0 * w + 20.0;
    let legend_h = 20.0 * curves.len() as f64 + 10.0;
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{}" font-family="sans-serif" font-size="12">"#,
        h + legend_h
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let panels: [Panel; 2] = [
        (0.0, "latency", max_latency, |p| p.latency.map(|l| l.mean)),
        (w + 20.0, "accepted load", max_accepted, |p| Some(p.accepted_load)),
    ];
    for (i, (x0, title, y_max, value)) in panels.into_iter().enumerate() {
        let (left, right, top, bottom) = (x0 + margin, x0 + w - 15.0, 25.0, h - 45.0);
        let sx = |x: f64| left + (right - left) * x / max_load;
        let sy = |y: f64| bottom - (bottom - top) * (y / y_max).min(1.0);
        let y_label = if i == 0 {
            format!("mean latency [{unit}]")
        } else {
            title.to_string()
        };
        let _ = writeln!(
            out,
            r#"<text x="{}" y="16" text-anchor="middle" font-weight="bold">{} vs offered load</text>"#,
            (left + right) / 2.0,
            title
        );
        let _ = writeln!(
            out,
            r#"<path d="M{left},{top} V{bottom} H{right}" fill="none" stroke="black"/>"#
        );
        for t in 0..=5 {
            let (xv, yv) = (max_load * t as f64 / 5.0, y_max * t as f64 / 5.0);
            let _ = writeln!(
                out,
                r##"<line x1="{x}" y1="{bottom}" x2="{x}" y2="{}" stroke="black"/><text x="{x}" y="{}" text-anchor="middle">{xv:.2}</text>"##,
                bottom + 4.0,
                bottom + 16.0,
                x = sx(xv)
            );
            let _ = writeln!(
                out,
                r##"<line x1="{}" y1="{y}" x2="{left}" y2="{y}" stroke="black"/><line x1="{left}" y1="{y}" x2="{right}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
                left - 4.0,
                left - 6.0,
                sy(yv) + 4.0,
                short(yv),
                y = sy(yv)
            );
        }
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">offered load (fraction of link rate)</text>"#,
            (left + right) / 2.0,
            bottom + 34.0
        );
        let _ = writeln!(
            out,
            r#"<text transform="translate({},{}) rotate(-90)" text-anchor="middle">{y_label}</text>"#,
            x0 + 14.0,
            (top + bottom) / 2.0
        );
        if i == 1 {
            // Accepted = offered: the line below saturation.
            let top_load = max_load.min(y_max);
            let _ = writeln!(
                out,
                r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#999" stroke-dasharray="4 4"/>"##,
                sx(0.0),
                sy(0.0),
                sx(top_load),
                sy(top_load)
            );
        }
        for (k, c) in curves.iter().enumerate() {
            let colour = COLOURS[k % COLOURS.len()];
            let xy: Vec<(f64, f64, bool)> = c
                .points
                .iter()
                .filter_map(|p| value(p).map(|v| (sx(p.offered_load), sy(v), p.saturated)))
                .collect();
            let line: Vec<String> = xy.iter().map(|(x, y, _)| format!("{x:.1},{y:.1}")).collect();
            let _ = writeln!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
                line.join(" ")
            );
            for (x, y, saturated) in xy {
                let fill = if saturated { "white" } else { colour };
                let _ = writeln!(
                    out,
                    r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{fill}" stroke="{colour}"/>"#
                );
            }
        }
    }
    for (k, c) in curves.iter().enumerate() {
        let y = h + 12.0 + 20.0 * k as f64;
        let colour = COLOURS[k % COLOURS.len()];
        let _ = writeln!(
            out,
            r#"<line x1="{margin}" y1="{y}" x2="{}" y2="{y}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}">{} ({}; open circles: saturated)</text>"#,
            margin + 24.0,
            margin + 30.0,
            y + 4.0,
            escape(&c.label),
            escape(&c.pattern)
        );
    }
    out.push_str("</svg>\n");
    out
}

/// A tick label: few digits.
fn short(v: f64) -> String {
    if v >= 100.0 || v == 0.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use vesper_netmodels::traffic::{Pattern, Process, Sizes};

    fn spec() -> TrafficSpec {
        TrafficSpec {
            pattern: Pattern::Uniform { self_allowed: false },
            process: Process::Bernoulli,
            load: 0.0,
            sizes: Sizes::Fixed(112),
            source_queue: None,
            warmup: SimTime::from_ns(10_000),
            measure: SimTime::from_ns(40_000),
            drain: SimTime::from_ns(40_000),
            seed: 3,
        }
    }

    fn kary_ntree() -> Configuration {
        let network = crate::description::preset::spec("kary-ntree")
            .and_then(|s| s.resolve().map_err(|e| e.to_string()))
            .expect("valid");
        Configuration {
            label: "kary-ntree".into(),
            network,
            spec: spec(),
        }
    }

    /// `curves` as JSON, without their timings.
    fn untimed(curves: &[Curve]) -> serde_json::Value {
        let mut json = serde_json::to_value(curves).expect("serialises");
        for p in json[0]["points"].as_array_mut().expect("points") {
            p["wall_seconds"] = 0.into();
            p["build_seconds"] = 0.into();
        }
        json
    }

    #[test]
    fn sweeps_do_not_depend_on_threads() {
        let loads = parse_sweep("0.3:1.5:0.3").expect("valid");
        let run =
            |threads| untimed(&sweep(&[kary_ntree()], &loads, threads, &Split::Threads(1), 1, false).expect("runs"));
        let one = run(1);
        assert_eq!(one, run(2));
        // Stops one point past the first saturated one.
        let points = one[0]["points"].as_array().expect("points");
        let first = points
            .iter()
            .position(|p| p["saturated"] == true)
            .expect("saturates by 1.5");
        assert_eq!(points.len(), first + 2);
        // A point alone equals the same point of the sweep.
        let alone = point(&kary_ntree().network, &spec(), loads[0], false, &Split::Threads(1)).expect("runs");
        assert_eq!(
            alone.accepted_load,
            points[0]["accepted_load"].as_f64().expect("a number")
        );
    }

    #[test]
    fn sweeps_do_not_depend_on_partitions() {
        // Below and past saturation, every field but the timings is the same.
        let curve = |partitions| {
            let split = Split::Threads(partitions);
            untimed(&sweep(&[kary_ntree()], &[0.3, 1.2], 1, &split, 1, false).expect("runs"))
        };
        let one = curve(1);
        for partitions in [2, 3, 4] {
            assert_eq!(curve(partitions), one, "{partitions} partitions");
        }
    }

    #[test]
    fn sweep_ranges() {
        assert_eq!(parse_sweep("0.1:0.3:0.1"), Ok(vec![0.1, 0.2, 0.3]));
        assert_eq!(parse_sweep("0.05:0.95:0.05").map(|v| v.len()), Ok(19));
        assert!(parse_sweep("0.5:0.1:0.1").is_err());
        assert!(parse_sweep("0.1:0.5").is_err());
        assert!(parse_sweep("0:0.5:0.1").is_err());
        assert!(parse_sweep("0.1:0.5:x").is_err());
        assert!(
            parse_sweep("0.001:1000:0.001")
                .expect_err("too many")
                .contains("at most 1000")
        );
        // A step so small that the count overflows an integer (it used to wrap to an
        // empty sweep), and loads too small for 12 decimal places (they became 0).
        assert!(parse_sweep("0.1:0.5:1e-300").is_err());
        assert_eq!(parse_sweep("1e-17:3e-17:1e-17"), Ok(vec![1e-17, 2e-17, 3e-17]));
    }

    #[test]
    fn plots_and_tables_name_every_curve() {
        let curves = sweep(&[kary_ntree()], &[0.2, 0.4], 2, &Split::Threads(1), 1, true).expect("runs");
        let picture = svg(&curves);
        assert!(picture.starts_with("<svg") && picture.ends_with("</svg>\n"));
        assert_eq!(picture.matches("<polyline").count(), 2);
        assert!(picture.contains("kary-ntree") && picture.contains("[cycles]"));
        let text = table(&curves);
        assert!(
            text.contains("latency in cycles") && text.lines().count() >= 5,
            "{text}"
        );
    }
}
