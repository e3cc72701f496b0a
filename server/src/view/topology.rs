//! A trace's topology (`FILE.topology`, written beside the `.pcf` and `.row` by
//! `--trace` and `vesper collect`, and sent by a stream after its first header line):
//! the network's shape, every traced device with its level or coordinates, and every
//! cable's two directions with their rate, idle or not. Its format is
//! [`vesper_netmodels::trace::paraver::topology`]'s.
//!
//! Read strictly but never fatally: a file that is not such a topology, or that does
//! not describe the trace beside it (another device count, names or threads), is
//! refused with a message naming what is wrong, and the view falls back to the layout
//! it derives from the records ([`super::layout`]). Sizes are bounded: the text by
//! [`MAX_TOPOLOGY`], the devices and links by the trace's threads (which the reader
//! bounds), coordinates by [`MAX_DIMS`].

use serde::Deserialize;

use super::aggregate::Thread;
use super::header::{Header, Names};

/// Largest topology read \[bytes\] (a 4,096-host fat tree's is about 3 MB).
pub const MAX_TOPOLOGY: u64 = 256 << 20;
/// Most dimensions a torus or mesh may have.
pub const MAX_DIMS: usize = 16;
/// Most switches of a grid (the most ports vesper models).
pub const MAX_GRID: u64 = 1 << 26;
/// Most slices of a grid drawn a slice at a time.
pub const MAX_SLICES: u64 = 1 << 16;
/// Largest shape object kept \[bytes of JSON\] (it goes to the page as it is).
const MAX_SHAPE: usize = 64 << 10;

/// The format version read.
pub const VERSION: u32 = 1;

/// A trace's topology, checked against the trace's names.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    /// the shape's `kind` (`xgft`, `torus`, `mesh`, `hypercube`, `crossbar`, `map`,
    /// `graph`, `ideal`, `rails`, or a kind of a later writer)
    pub kind: String,
    /// a torus', mesh's or hypercube's switches per dimension (else empty)
    pub dims: Vec<u32>,
    /// a torus' wraparound cables
    pub wrap: bool,
    /// the shape object, as written
    pub shape: serde_json::Value,
    /// rails
    pub rails: u32,
    /// per task of the trace
    pub devices: Vec<Device>,
    /// every direction of every traced cable
    pub links: Vec<Link>,
}

/// A device (a task of the trace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// cables from the nearest host (`None`: none reaches it)
    pub level: Option<u32>,
    /// its coordinates on a grid (a host: its switch's)
    pub coords: Option<Vec<u32>>,
    /// its rail
    pub rail: u32,
}

/// One direction of a cable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// the sending port (0-based, as [`Thread`]s are)
    pub from: Thread,
    /// the port at the far end
    pub to: Thread,
    /// its rate \[MB/s, 10^6 bytes/s\]
    pub mbs: f64,
    /// its propagation delay \[ns\]
    pub latency_ns: u64,
}

#[derive(Deserialize)]
struct RawTopology {
    vesper_topology: u32,
    shape: serde_json::Value,
    rails: u32,
    devices: Vec<RawDevice>,
    links: Vec<RawLink>,
}

#[derive(Deserialize)]
struct RawDevice {
    name: String,
    host: bool,
    threads: [u32; 2],
    level: Option<u32>,
    coords: Option<Vec<u32>>,
    rail: u32,
}

#[derive(Deserialize)]
struct RawLink {
    from: u32,
    to: u32,
    mbs: f64,
    latency_ns: u64,
}

/// Whether a shape's kind is drawn on a grid of coordinates.
pub fn is_grid(kind: &str) -> bool {
    matches!(kind, "torus" | "mesh" | "hypercube")
}

impl Topology {
    /// Reads `text` as the topology of the trace whose names are `names` (from its
    /// `.row`, or from the topology itself: [`Topology::names`]); the error says what
    /// is wrong (the caller names the file).
    pub fn parse(text: &str, names: &Names) -> Result<Topology, String> {
        if text.len() as u64 > MAX_TOPOLOGY {
            return Err(format!("more than {MAX_TOPOLOGY} bytes; expected a trace's topology"));
        }
        // The version first, so that a later format is named as such.
        #[derive(Deserialize)]
        struct Version {
            vesper_topology: Option<u32>,
        }
        match serde_json::from_str::<Version>(text) {
            Ok(Version {
                vesper_topology: Some(VERSION),
            }) => {}
            Ok(Version {
                vesper_topology: Some(v),
            }) => return Err(format!("format version {v}; this vesper reads version {VERSION}")),
            Ok(Version { vesper_topology: None }) => {
                return Err("expected `\"vesper_topology\": 1` (a trace's topology, as --trace writes it)".into());
            }
            Err(e) => return Err(format!("expected a trace's topology (JSON): {e}")),
        }
        let raw: RawTopology =
            serde_json::from_str(text).map_err(|e| format!("expected a trace's topology (JSON): {e}"))?;
        debug_assert_eq!(raw.vesper_topology, VERSION);
        let shape_text = raw.shape.to_string();
        if shape_text.len() > MAX_SHAPE {
            return Err(format!("shape: more than {MAX_SHAPE} bytes"));
        }
        let kind = raw
            .shape
            .get("kind")
            .and_then(|k| k.as_str())
            .ok_or("shape: expected a \"kind\"")?
            .to_string();
        let dims: Vec<u32> = match raw.shape.get("dims") {
            None => Vec::new(),
            Some(dims) => serde_json::from_value(dims.clone()).map_err(|e| format!("shape.dims: {e}"))?,
        };
        let wrap = raw.shape.get("wrap").and_then(|w| w.as_bool()).unwrap_or(false);
        if is_grid(&kind) && (dims.is_empty() || dims.len() > MAX_DIMS || dims.contains(&0)) {
            return Err(format!(
                "shape: a {kind} needs 1 to {MAX_DIMS} dimensions of at least 1 switch, got {dims:?}"
            ));
        }
        if raw.rails == 0 || raw.rails as usize > raw.devices.len().max(1) {
            return Err(format!("rails: {}; expected 1 to the number of devices", raw.rails));
        }
        if is_grid(&kind) {
            let switches = dims.iter().try_fold(1u64, |p, &k| p.checked_mul(u64::from(k)));
            let slices = match kind.as_str() {
                "hypercube" => Some(1),
                _ => dims.iter().skip(2).try_fold(1u64, |p, &k| p.checked_mul(u64::from(k))),
            }
            .and_then(|s| s.checked_mul(u64::from(raw.rails)));
            if switches.is_none_or(|s| s > MAX_GRID) || slices.is_none_or(|s| s > MAX_SLICES) {
                return Err(format!(
                    "shape: a {kind} of dims {dims:?} on {} rails: more than {MAX_GRID} switches or {MAX_SLICES} \
                     slices",
                    raw.rails
                ));
            }
        }
        // A dragonfly's groups (`g`) and routers a group (`a`).
        let size = |key: &str| raw.shape.get(key).and_then(serde_json::Value::as_u64).unwrap_or(0);
        let (groups, routers) = (size("g"), size("a"));
        if kind == "dragonfly" && (groups == 0 || routers == 0 || groups.saturating_mul(routers) > MAX_GRID) {
            return Err(format!(
                "shape: a dragonfly needs \"g\" groups of \"a\" routers, from 1 to {MAX_GRID} routers in all; got g = \
                 {groups}, a = {routers}"
            ));
        }
        if raw.devices.len() != names.tasks.len() {
            return Err(format!(
                "{} devices; the trace has {} (its .row's tasks)",
                raw.devices.len(),
                names.tasks.len()
            ));
        }
        let threads = names.threads.len() as u32;
        let mut devices = Vec::with_capacity(raw.devices.len());
        for (i, d) in raw.devices.into_iter().enumerate() {
            let first = names.first_thread[i];
            let last = names.first_thread.get(i + 1).copied().unwrap_or(threads);
            let at = format!("devices[{i}] ({})", names.tasks[i]);
            if d.name != names.tasks[i] {
                return Err(format!("{at}: named {:?}; the .row's task {} is that", d.name, i + 1));
            }
            if d.threads != [first + 1, last] {
                return Err(format!(
                    "{at}: threads {:?}; in the trace its ports are threads {} to {last}",
                    d.threads,
                    first + 1
                ));
            }
            if d.host != names.is_host(i) {
                return Err(format!("{at}: \"host\": {}, but its name says otherwise", d.host));
            }
            if d.rail >= raw.rails {
                return Err(format!("{at}: rail {} of {}", d.rail, raw.rails));
            }
            if is_grid(&kind) {
                let fits = d
                    .coords
                    .as_ref()
                    .is_some_and(|c| c.len() == dims.len() && c.iter().zip(&dims).all(|(x, k)| x < k));
                if !fits {
                    return Err(format!(
                        "{at}: coords {:?}; a {kind} of dims {dims:?} places every device",
                        d.coords
                    ));
                }
            } else if kind == "dragonfly" {
                let fits = d
                    .coords
                    .as_ref()
                    .is_some_and(|c| c.len() == 2 && u64::from(c[0]) < groups && u64::from(c[1]) < routers);
                if !fits {
                    return Err(format!(
                        "{at}: coords {:?}; a dragonfly of {groups} groups of {routers} routers places every device \
                         by its group and place in it",
                        d.coords
                    ));
                }
            } else if d.coords.as_ref().is_some_and(|c| c.len() > MAX_DIMS) {
                return Err(format!("{at}: more than {MAX_DIMS} coordinates"));
            }
            devices.push(Device {
                level: d.level,
                coords: d.coords,
                rail: d.rail,
            });
        }
        let mut sends = vec![false; threads as usize];
        let mut links = Vec::with_capacity(raw.links.len().min(threads as usize));
        for (i, l) in raw.links.into_iter().enumerate() {
            let port = |t: u32| (1..=threads).contains(&t).then(|| t - 1);
            let (Some(from), Some(to)) = (port(l.from), port(l.to)) else {
                return Err(format!(
                    "links[{i}]: from {} to {}; the trace's threads are 1 to {threads}",
                    l.from, l.to
                ));
            };
            if from == to || names.task_of[from as usize] == names.task_of[to as usize] {
                return Err(format!(
                    "links[{i}]: from {} to {}: a cable joins two devices",
                    l.from, l.to
                ));
            }
            if std::mem::replace(&mut sends[from as usize], true) {
                return Err(format!(
                    "links[{i}]: port {} sends on a second link: a port has one cable",
                    names.threads[from as usize]
                ));
            }
            if !(l.mbs.is_finite() && l.mbs > 0.0) {
                return Err(format!("links[{i}]: mbs {}: expected a positive rate [MB/s]", l.mbs));
            }
            links.push(Link {
                from,
                to,
                mbs: l.mbs,
                latency_ns: l.latency_ns,
            });
        }
        Ok(Topology {
            kind,
            dims,
            wrap,
            shape: raw.shape,
            rails: raw.rails,
            devices,
            links,
        })
    }

    /// The trace's names as its topology gives them, for a stream whose `.row` comes
    /// only at its end: the devices' names, and their ports' `NAME.pK` (the `.row`'s
    /// rule), checked against the header's tasks and threads. Parse the text with
    /// [`Topology::parse`] and these names after.
    pub fn names(text: &str, header: &Header) -> Result<Names, String> {
        if text.len() as u64 > MAX_TOPOLOGY {
            return Err(format!("more than {MAX_TOPOLOGY} bytes; expected a trace's topology"));
        }
        #[derive(Deserialize)]
        struct Named {
            name: String,
            threads: [u32; 2],
            host: bool,
        }
        #[derive(Deserialize)]
        struct Devices {
            devices: Vec<Named>,
        }
        let devices = serde_json::from_str::<Devices>(text)
            .map_err(|e| format!("expected a trace's topology (JSON): {e}"))?
            .devices;
        if devices.len() != header.threads_of.len() {
            return Err(format!(
                "{} devices; the header has {} tasks",
                devices.len(),
                header.threads_of.len()
            ));
        }
        let mut names = Names::default();
        for (i, (d, &n)) in devices.into_iter().zip(&header.threads_of).enumerate() {
            let first = names.threads.len() as u32;
            if d.threads != [first + 1, first + n] {
                return Err(format!(
                    "devices[{i}] ({}): threads {:?}; in the header its ports are threads {} to {}",
                    d.name,
                    d.threads,
                    first + 1,
                    first + n
                ));
            }
            names.first_thread.push(first);
            for p in 0..n {
                names.threads.push(format!("{}.p{p}", d.name));
                names.task_of.push(i as u32);
            }
            names.tasks.push(d.name);
            names.host.push(d.host);
        }
        Ok(names)
    }

    /// A one-line description: `torus 8×8×8`, `xgft(2; 16,16; 1,16)`, `2 rails, …`.
    pub fn describe(&self) -> String {
        let list = |v: Option<&serde_json::Value>| {
            let numbers: Vec<String> = v
                .and_then(|v| v.as_array())
                .map(|v| v.iter().map(|n| n.to_string()).collect())
                .unwrap_or_default();
            numbers.join(",")
        };
        let dims: Vec<String> = self.dims.iter().map(u32::to_string).collect();
        let shape = match (self.kind.as_str(), self.dims.is_empty()) {
            ("xgft", _) => format!(
                "xgft({}; {}; {})",
                self.shape.get("levels").map_or(String::new(), |l| l.to_string()),
                list(self.shape.get("down")),
                list(self.shape.get("up"))
            ),
            (_, true) => self.kind.clone(),
            (kind, false) => format!("{kind} {}", dims.join("×")),
        };
        match self.rails {
            1 => shape,
            r => format!("{r} rails, {shape}"),
        }
    }
}

#[cfg(test)]
mod tests;
