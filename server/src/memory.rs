//! Memory: whether a network fits before it is built. The model's footprint is counted
//! from the description ([`vesper_netmodels::footprint`]: hosts, switches, ports, cables
//! and routes, no allocation) and compared with the memory the process may use:
//! `--max-memory`, or by default what the machine has left ([`machine_room`]).
//!
//! ```text
//!   NetworkConfig ──rail_counts──▶ RailCounts ──▶ Footprint ──┐
//!   --max-memory, or MemAvailable / cgroup / RLIMIT_AS ──────┴─▶ build, or refuse
//! ```

use std::path::{Path, PathBuf};

use vesper_netmodels::SwitchKind;
use vesper_netmodels::footprint::{Footprint, RailCounts, RouteCounts};
use vesper_netmodels::topology::{Shape as _, ShapeCounts};

use crate::config::{FabricConfig, NetworkConfig, Shape, SwitchedConfig};

/// What one rail is made of, counted from its description.
pub fn rail_counts(s: &SwitchedConfig) -> RailCounts {
    let counts = s.shape.counts();
    let (cioq_switches, cioq_ports, cioq_voq) = cioq_counts(s, counts.switches, counts.switch_ports);
    let routes = RouteCounts::of(&s.routing.on(&s.shape), &counts);
    let ShapeCounts {
        hosts,
        switches,
        switch_ports,
        cables,
        ..
    } = counts;
    RailCounts {
        hosts,
        switches,
        switch_ports,
        cables,
        cioq_switches,
        cioq_ports,
        cioq_voq,
        wormhole: matches!(s.switch.kind, SwitchKind::Wormhole(_)),
        routes,
    }
}

/// The CIOQ switches of `s` (`switches` of `switch_ports` ports in all), their ports,
/// and whether they all have virtual output queues.
fn cioq_counts(s: &SwitchedConfig, switches: u64, switch_ports: u64) -> (u64, u64, bool) {
    let is_cioq = |k: &SwitchKind| matches!(k, SwitchKind::Cioq(_));
    let mut voq = true;
    let mut note = |k: &SwitchKind| {
        if let SwitchKind::Cioq(c) = k {
            voq &= c.virtual_output_queues;
        }
    };
    note(&s.switch.kind);
    let (mut count, mut ports) = if is_cioq(&s.switch.kind) {
        (switches, switch_ports)
    } else {
        (0, 0)
    };
    // Switches of another kind than the network's: (switches, ports of each) and kind.
    let mut others: Vec<(u64, u64, SwitchKind)> = Vec::new();
    for &(level, kind) in &s.level_kinds {
        if let Some((switches, each)) = s.shape.level(level) {
            others.push((u64::from(switches.end - switches.start), u64::from(each), kind));
        }
    }
    if let Shape::Map(map) = &s.shape {
        let kinds: std::collections::BTreeMap<u32, SwitchKind> = s.switch_kinds.iter().copied().collect();
        for (sw, kind) in kinds {
            let each = map.net.topology.switch_ports.get(sw as usize).copied().unwrap_or(0);
            others.push((1, u64::from(each), kind));
        }
    }
    for (n, each, kind) in others {
        note(&kind);
        match (is_cioq(&s.switch.kind), is_cioq(&kind)) {
            (false, true) => (count, ports) = (count + n, ports + n * each),
            (true, false) => (count, ports) = (count - n, ports - n * each),
            _ => {}
        }
    }
    (count, ports, count > 0 && voq)
}

/// What each rail of `network` is made of (none for the ideal network).
pub fn network_counts(network: &NetworkConfig) -> Vec<RailCounts> {
    match &network.fabric {
        FabricConfig::Switched(s) => vec![rail_counts(s)],
        FabricConfig::MultiRail { rails, .. } => rails.iter().map(rail_counts).collect(),
        FabricConfig::Ideal(_) => Vec::new(),
    }
}

/// The footprint of `network` split into `partitions` partitions.
pub fn footprint(network: &NetworkConfig, partitions: u32) -> Footprint {
    Footprint::of_rails(&network_counts(network), partitions)
}

/// The most memory the process may use, and where that figure comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// \[bytes\]
    pub bytes: u64,
    /// `--max-memory 8G`, or what the machine has left and how that was found
    pub from: String,
}

/// A size in bytes: a number with an optional binary unit, `K`, `M`, `G`, `T` (also
/// `KB`, `KiB`, …; 1K = 1024 bytes): `8G`, `512M`, `1.5G`, `1000000`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim().to_ascii_uppercase();
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("{text}: expected a size such as 8G, 512M or 1048576 (bytes)")),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text}: expected a size such as 8G, 512M or 1048576 (bytes)"))?;
    let bytes = value * (1u64 << shift) as f64;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!("{text}: expected a size of at least one byte"));
    }
    Ok(bytes as u64)
}

/// `bytes` for people: `512.0 MiB`, `2.56 GiB`.
pub fn size_text(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        1 => "1 byte".into(),
        0..1024 => format!("{bytes} bytes"),
        1024..0x10_0000 => format!("{:.1} KiB", b / 1024.0),
        0x10_0000..0x4000_0000 => format!("{:.1} MiB", b / f64::from(1u32 << 20)),
        _ => format!("{:.2} GiB", b / f64::from(1u32 << 30)),
    }
}

/// The memory this process may still take from the machine: the least of what
/// `/proc/meminfo` calls available, the room left in its memory cgroup (v2, or v1's
/// memory controller) and the address space its RLIMIT_AS leaves; `None` where none of
/// them can be read (not Linux).
pub fn machine_room() -> Option<Limit> {
    let read = |path: &Path| std::fs::read_to_string(path).ok();
    let mut found: Vec<(u64, String)> = Vec::new();
    if let Some(bytes) = read(Path::new("/proc/meminfo")).and_then(|t| meminfo_available(&t)) {
        found.push((bytes, "MemAvailable in /proc/meminfo".into()));
    }
    if let Some(cgroups) = read(Path::new("/proc/self/cgroup")) {
        for dir in cgroup_dirs(&cgroups, Path::new("/sys/fs/cgroup")) {
            if let Some(room) = cgroup_room(&dir, &read) {
                found.push((room, format!("the room left in memory cgroup {}", dir.display())));
            }
        }
    }
    let limits = read(Path::new("/proc/self/limits")).and_then(|t| address_space_limit(&t));
    let size = read(Path::new("/proc/self/status")).and_then(|t| status_kib(&t, "VmSize:"));
    if let (Some(limit), Some(size)) = (limits, size) {
        found.push((
            limit.saturating_sub(size * 1024).saturating_sub(ADDRESS_SPACE_RESERVE),
            "the address space RLIMIT_AS leaves this process, less 256 MiB for its threads".into(),
        ));
    }
    found
        .into_iter()
        .min_by_key(|(bytes, _)| *bytes)
        .map(|(bytes, from)| Limit { bytes, from })
}

/// Address space kept for the threads a command starts after its network is checked:
/// each takes a stack, and the C allocator reserves 64 MiB of address space for each of
/// its arenas (one a thread, up to eight a core), long before it touches any of it (an
/// idle `vesper serve`, four threads, is 212 MiB of address space and 6 MiB of memory).
const ADDRESS_SPACE_RESERVE: u64 = 256 << 20;

/// `MemAvailable` of `/proc/meminfo` \[bytes\].
fn meminfo_available(text: &str) -> Option<u64> {
    status_kib(text, "MemAvailable:").map(|kib| kib * 1024)
}

/// A `NAME: N kB` line's N.
fn status_kib(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// The soft RLIMIT_AS of `/proc/self/limits` \[bytes\] (`None`: unlimited).
fn address_space_limit(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The folders of the memory cgroups the process is in, from `/proc/self/cgroup`
/// under the cgroup mount `root`: its own and each one above (a parent's limit holds
/// too), for cgroup v2 (`0::/path`) and for v1's memory controller (`N:memory:/path`,
/// mounted at `root/memory`).
fn cgroup_dirs(cgroups: &str, root: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let mount = match controllers {
            "" => root.to_path_buf(),
            c if c.split(',').any(|c| c == "memory") => root.join("memory"),
            _ => continue,
        };
        // Inside a container the path may not exist under the mount (a cgroup
        // namespace shows the container's own cgroup as the mount itself).
        let mut dir = mount.join(path.trim_start_matches('/'));
        loop {
            dirs.push(dir.clone());
            if dir == mount || !dir.pop() || !dir.starts_with(&mount) {
                break;
            }
        }
        if !dirs.contains(&mount) {
            dirs.push(mount);
        }
    }
    dirs
}

/// The room a memory cgroup's folder `dir` leaves (its limit less its usage), if it has
/// a limit (v2: `memory.max`, `memory.current`; v1: `memory.limit_in_bytes`,
/// `memory.usage_in_bytes`, whose "no limit" is a number near 2^63).
fn cgroup_room(dir: &Path, read: &dyn Fn(&Path) -> Option<String>) -> Option<u64> {
    let number = |file: &str| read(&dir.join(file)).and_then(|t| t.trim().parse::<u64>().ok());
    let (limit, usage) = match number("memory.max") {
        Some(limit) => (limit, number("memory.current")?),
        None => (number("memory.limit_in_bytes")?, number("memory.usage_in_bytes")?),
    };
    (limit < 1 << 62).then(|| limit.saturating_sub(usage))
}

/// Refuses `network` split into `partitions` partitions, `builds` copies of it built
/// at once, when its footprint is more than `limit`, with both figures and what the
/// network is made of.
pub fn check(network: &NetworkConfig, partitions: u32, builds: u32, limit: &Limit) -> anyhow::Result<()> {
    let counts = network_counts(network);
    let one = Footprint::of_rails(&counts, partitions).peak;
    let bytes = one.saturating_mul(u64::from(builds.max(1)));
    if bytes <= limit.bytes {
        return Ok(());
    }
    let sum = |f: fn(&RailCounts) -> u64| counts.iter().map(f).sum::<u64>();
    let (switches, ports, cables) = (
        sum(|c| c.switches),
        sum(|c| c.hosts + c.switch_ports),
        sum(|c| c.cables),
    );
    let counted = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut made = [
        counted(u64::from(network.hosts), "host", "hosts"),
        counted(switches, "switch", "switches"),
        counted(ports, "port", "ports"),
        counted(cables, "cable", "cables"),
    ]
    .join(", ");
    if counts.len() > 1 {
        made.push_str(&format!(" in {} rails", counts.len()));
    }
    if partitions > 1 {
        made.push_str(&format!(", in {partitions} partitions"));
    }
    let at_once = if builds > 1 {
        format!(" ({} each, {builds} built at once)", size_text(one))
    } else {
        String::new()
    };
    anyhow::bail!(
        "the network does not fit in memory: it needs about {}{at_once} to build and simulate (estimated from its \
         description: {made}), more than the {} {}",
        size_text(bytes),
        size_text(limit.bytes),
        limit.from
    )
}

#[cfg(test)]
mod tests;
