//! Where the page draws each device, in a picture of `x`, `y` from 0 to 1 (`y` down).
//!
//! Levels (fat trees, maps, crossbars, and any trace without a topology): rows by
//! level, the hosts at the bottom.
//!
//! ```text
//!   level 2   ▪     ▪     ▪     ▪        ordered by the mean position of their
//!   level 1    ▪  ▪   ▪  ▪   ▪  ▪         neighbours in the row below (barycentre)
//!   level 0   ••••••••••••••••••••••      hosts, in the trace's order
//! ```
//!
//! A device's level is the topology's (`FILE.topology`, see [`super::topology`]), or
//! else its distance in links from the nearest host over the links the trace's
//! communication records show (the rule of `switch_levels` in
//! `vesper_netmodels::trace::paraver`, which `--trace-devices level=` uses): a fat
//! tree's leaf switches are 1, the next 2, and so on. A device no host reaches has no
//! level; the page draws those on a row of their own, at the top. The layout depends
//! only on the names and links, never on the order of the records beyond which link
//! came first.
//!
//! Grids (a topology of kind `torus`, `mesh` or `hypercube`): one cell a switch, its
//! hosts beside it (below, to the right).
//!
//! ```text
//!   x1 = 1   ▪───▪───▪───▪      a torus or mesh: dimension 0 across, 1 up; a 3-D or
//!            │ ·· │ ·· │         larger one is drawn a slice at a time (one slice per
//!   x1 = 0   ▪───▪───▪───▪      value of dimensions 2, 3, …, and per rail)
//!             ··  ··  ··  ··    hosts
//! ```
//!
//! A hypercube's bits are split in two: the low half numbers the column and the high
//! half the row, each in Gray-code order, so that every neighbour along one of the
//! low (high) bits' first dimension is the next column (row).
//!
//! Groups (a topology of kind `dragonfly`): the groups on a circle, each group's
//! routers on a small circle of their own, each router's hosts fanned out beyond it.
//!
//! ```text
//!        ∘▪▪∘            group 0 at the top, the others clockwise; a router's
//!   ∘▪▪∘      ∘▪▪∘       local cables stay inside its group's circle, the global
//!        ∘▪▪∘            ones cross the middle
//! ```

use std::collections::{BTreeMap, VecDeque};

use super::topology::{Topology, is_grid};

/// How the devices are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// rows by level
    Levels,
    /// a grid of coordinates, a slice at a time
    Grid,
    /// a dragonfly's groups on a circle
    Groups,
}

/// A device's place in the picture.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Spot {
    /// links from the nearest host (`None`: no host reaches it)
    pub level: Option<u32>,
    /// from 0 (left) to 1 (right)
    pub x: f64,
    /// from 0 (top) to 1 (bottom)
    pub y: f64,
    /// the slice it is drawn in (0 but on grids of 3 and more dimensions, or rails)
    pub slice: u32,
}

/// A row of the levels' picture.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Row {
    /// `hosts`, `level 2`, `no level`
    pub label: String,
    /// its `y`
    pub y: f64,
}

/// The picture: where every device goes.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Picture {
    /// levels or a grid
    pub kind: Kind,
    /// per device (task), in the trace's order
    #[serde(skip)]
    pub spots: Vec<Spot>,
    /// the levels' rows (empty for a grid)
    pub rows: Vec<Row>,
    /// the slices' names, when there is more than one
    pub slices: Vec<String>,
    /// a grid's height over its width
    pub aspect: Option<f64>,
}

/// The picture of devices (`host[d]`: device `d` is a host) joined by `links` (pairs
/// of devices, either direction), placed by `topology` when there is one.
pub fn picture(host: &[bool], links: &[(u32, u32)], topology: Option<&Topology>) -> Picture {
    match topology {
        Some(t) if is_grid(&t.kind) && !t.dims.is_empty() && t.devices.len() == host.len() => grid(host, t),
        Some(t) if t.kind == "dragonfly" && t.devices.len() == host.len() => groups(host, t),
        Some(t) if t.devices.len() == host.len() => {
            let levels = t.devices.iter().map(|d| d.level).collect();
            by_levels(levels, links)
        }
        _ => by_levels(bfs_levels(host, links), links),
    }
}

/// Whether the link between devices `a` and `b` is a torus' wraparound cable (drawn
/// as two stubs off the grid's edges, not across it).
pub fn wraps(topology: &Topology, a: u32, b: u32) -> bool {
    if !is_grid(&topology.kind) || !topology.wrap {
        return false;
    }
    let coords = |d: u32| topology.devices.get(d as usize).and_then(|d| d.coords.as_ref());
    let (Some(a), Some(b)) = (coords(a), coords(b)) else {
        return false;
    };
    a.iter()
        .zip(b)
        .zip(&topology.dims)
        .any(|((x, y), &k)| k > 2 && x.abs_diff(*y) == k - 1)
}

fn neighbours_of(n: usize, links: &[(u32, u32)]) -> Vec<Vec<usize>> {
    let mut neighbours = vec![Vec::new(); n];
    for &(a, b) in links {
        let (a, b) = (a as usize, b as usize);
        if a < n && b < n && a != b {
            neighbours[a].push(b);
            neighbours[b].push(a);
        }
    }
    for list in &mut neighbours {
        list.sort_unstable();
        list.dedup();
    }
    neighbours
}

/// Each device's distance from the nearest host over `links`.
fn bfs_levels(host: &[bool], links: &[(u32, u32)]) -> Vec<Option<u32>> {
    let n = host.len();
    let neighbours = neighbours_of(n, links);
    let mut level: Vec<Option<u32>> = host.iter().map(|&h| h.then_some(0)).collect();
    let mut queue: VecDeque<usize> = (0..n).filter(|&d| host[d]).collect();
    while let Some(d) = queue.pop_front() {
        let next = level[d].map(|l| l + 1);
        for &e in &neighbours[d] {
            if level[e].is_none() {
                level[e] = next;
                queue.push_back(e);
            }
        }
    }
    level
}

/// Rows by `level`, ordered by barycentre over `links`.
fn by_levels(level: Vec<Option<u32>>, links: &[(u32, u32)]) -> Picture {
    let n = level.len();
    let neighbours = neighbours_of(n, links);
    // Rows in level order; the devices without a level last.
    let top = level.iter().flatten().max().map_or(0, |&l| l as usize + 1);
    let row_of = |d: usize| level[d].map_or(top, |l| l as usize);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); top + 1];
    for d in 0..n {
        rows[row_of(d)].push(d);
    }
    let mut x = vec![0.0; n];
    for (r, row) in rows.iter_mut().enumerate() {
        if r > 0 && r < top {
            // The mean position of its neighbours in the row below; ties by index.
            let key = |d: usize| {
                let below: Vec<f64> = neighbours[d]
                    .iter()
                    .filter(|&&e| row_of(e) + 1 == r)
                    .map(|&e| x[e])
                    .collect();
                below.iter().sum::<f64>() / below.len().max(1) as f64
            };
            let mut keyed: Vec<(f64, usize)> = row.iter().map(|&d| (key(d), d)).collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            *row = keyed.into_iter().map(|(_, d)| d).collect();
        }
        let count = row.len() as f64;
        for (i, &d) in row.iter().enumerate() {
            x[d] = (i as f64 + 0.5) / count;
        }
    }
    // Rows drawn: the levels, and the devices without one on top.
    let unplaced = !rows[top].is_empty();
    let drawn = top + usize::from(unplaced);
    let y_of = |r: usize| match drawn {
        0 | 1 => 1.0,
        _ => 1.0 - r as f64 / (drawn - 1) as f64,
    };
    let mut labels: Vec<Row> = (0..top)
        .map(|l| Row {
            label: if l == 0 { "hosts".into() } else { format!("level {l}") },
            y: y_of(l),
        })
        .collect();
    if unplaced {
        labels.push(Row {
            label: "no level".into(),
            y: y_of(top),
        });
    }
    Picture {
        kind: Kind::Levels,
        spots: (0..n)
            .map(|d| Spot {
                level: level[d],
                x: x[d],
                y: y_of(row_of(d)),
                slice: 0,
            })
            .collect(),
        rows: labels,
        slices: Vec::new(),
        aspect: None,
    }
}

/// Gray code `g` back to its rank.
fn gray_rank(mut g: u32) -> u32 {
    let mut rank = 0;
    while g != 0 {
        rank ^= g;
        g >>= 1;
    }
    rank
}

/// A dragonfly's devices in their groups (the topology checked that every device has
/// its group and place in it, within the shape's `g` and `a`).
fn groups(host: &[bool], t: &Topology) -> Picture {
    use std::f64::consts::{PI, TAU};
    let count = |key: &str| t.shape.get(key).and_then(serde_json::Value::as_u64).unwrap_or(1).max(1) as f64;
    let (a, g) = (count("a"), count("g"));
    // The groups' circle, and each group's: as large as their neighbours leave room for.
    let (big, small) = match g > 1.0 {
        true => (0.36, (0.36 * (PI / g).sin() * 0.55).min(0.1)),
        false => (0.0, 0.3),
    };
    let place = |d: usize| {
        let c = t.devices[d].coords.as_deref().unwrap_or(&[0, 0]);
        (c.first().copied().unwrap_or(0), c.get(1).copied().unwrap_or(0))
    };
    // The hosts of each router, in the trace's order.
    let mut hosts_of: BTreeMap<(u32, u32, u32), u32> = BTreeMap::new();
    let mut index = vec![0u32; host.len()];
    for d in 0..host.len() {
        if host[d] {
            let (group, router) = place(d);
            let n = hosts_of.entry((t.devices[d].rail, group, router)).or_default();
            index[d] = *n;
            *n += 1;
        }
    }
    let spots = (0..host.len())
        .map(|d| {
            let (group, router) = place(d);
            let rail = t.devices[d].rail;
            let around = TAU * f64::from(group) / g - PI / 2.0;
            let (cx, cy) = (0.5 + big * around.cos(), 0.5 + big * around.sin());
            // Routers start facing the middle: the global cables stay short.
            let at = around + PI + TAU * (f64::from(router) + 0.5) / a;
            let (angle, radius) = match host[d] {
                false => (at, small),
                true => {
                    let n = f64::from(hosts_of[&(rail, group, router)]);
                    let spread = TAU / a * 0.8;
                    (at + spread * ((f64::from(index[d]) + 0.5) / n - 0.5), small * 1.5)
                }
            };
            Spot {
                level: t.devices[d].level,
                x: cx + radius * angle.cos(),
                y: cy + radius * angle.sin(),
                slice: rail,
            }
        })
        .collect();
    Picture {
        kind: Kind::Groups,
        spots,
        rows: Vec::new(),
        slices: match t.rails {
            1 => Vec::new(),
            rails => (0..rails).map(|r| format!("rail {r}")).collect(),
        },
        aspect: Some(1.0),
    }
}

/// A torus', mesh's or hypercube's devices on their grid (the topology checked that
/// every device has coordinates within the dimensions).
fn grid(host: &[bool], t: &Topology) -> Picture {
    let dims = &t.dims;
    let hypercube = t.kind == "hypercube";
    // Columns, rows and slices of a rail; a hypercube's low half of the bits.
    let low = dims.len().div_ceil(2);
    let (cols, rows, per_rail) = match hypercube {
        true => (1u32 << low, 1u32 << (dims.len() - low), 1u32),
        false => (
            dims[0],
            dims.get(1).copied().unwrap_or(1),
            dims.iter().skip(2).product::<u32>(),
        ),
    };
    // A device's column, row (0 at the bottom) and slice within its rail.
    let cell = |c: &[u32]| -> (u32, u32, u32) {
        if hypercube {
            let bits = |part: &[u32]| part.iter().enumerate().fold(0u32, |v, (i, &b)| v | ((b & 1) << i));
            return (gray_rank(bits(&c[..low])), gray_rank(bits(&c[low..])), 0);
        }
        let slice = c.iter().zip(dims).skip(2).rev().fold(0u32, |s, (&x, &k)| s * k + x);
        (c[0], c.get(1).copied().unwrap_or(0), slice)
    };
    let zeros = vec![0; dims.len()];
    let at: Vec<(u32, u32, u32)> = t
        .devices
        .iter()
        .map(|d| {
            let coords = d.coords.as_deref().filter(|c| c.len() == dims.len());
            let (col, row, slice) = cell(coords.unwrap_or(&zeros));
            (col, row, d.rail * per_rail + slice)
        })
        .collect();
    // The hosts of each cell, in the trace's order.
    let mut hosts_in: BTreeMap<(u32, u32, u32), u32> = BTreeMap::new();
    let mut index = vec![0u32; host.len()];
    for (d, &place) in at.iter().enumerate() {
        if host[d] {
            let count = hosts_in.entry(place).or_default();
            index[d] = *count;
            *count += 1;
        }
    }
    let spots = at
        .iter()
        .enumerate()
        .map(|(d, &(col, row, slice))| {
            let top = f64::from(rows - 1 - row.min(rows - 1));
            let (dx, dy) = match host[d] {
                false => (0.35, 0.35),
                true => {
                    let n = f64::from(hosts_in[&(col, row, slice)]);
                    (0.55 + 0.4 * (f64::from(index[d]) + 0.5) / n, 0.8)
                }
            };
            Spot {
                level: t.devices[d].level,
                x: (f64::from(col) + dx) / f64::from(cols),
                y: (top + dy) / f64::from(rows),
                slice,
            }
        })
        .collect();
    let slices = per_rail * t.rails;
    let names = match slices {
        1 => Vec::new(),
        _ => (0..slices)
            .map(|s| {
                let (rail, mut rest) = (s / per_rail, s % per_rail);
                let mut parts = Vec::new();
                if t.rails > 1 {
                    parts.push(format!("rail {rail}"));
                }
                for (d, &k) in dims.iter().enumerate().skip(2).filter(|_| !hypercube) {
                    parts.push(format!("x{d} = {}", rest % k));
                    rest /= k;
                }
                parts.join(", ")
            })
            .collect(),
    };
    Picture {
        kind: Kind::Grid,
        spots,
        rows: Vec::new(),
        slices: names,
        aspect: Some(f64::from(rows) / f64::from(cols)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four hosts, two leaf switches, one top switch: levels 0, 1, 2; the leaves
    /// ordered under their hosts, whatever their numbers.
    #[test]
    fn a_tree_is_drawn_by_levels_with_switches_over_their_hosts() {
        // Devices 0-3 hosts; 4 leads hosts 2 and 3, 5 hosts 0 and 1; 6 the top.
        let host = [true, true, true, true, false, false, false];
        let links = [(0, 5), (5, 0), (1, 5), (2, 4), (3, 4), (4, 6), (6, 5)];
        let places = picture(&host, &links, None).spots;
        let levels: Vec<Option<u32>> = places.iter().map(|p| p.level).collect();
        assert_eq!(levels, [0, 0, 0, 0, 1, 1, 2].map(Some));
        assert!(places[5].x < places[4].x, "{places:?}");
        assert_eq!(places[6].x, 0.5);
        assert_eq!(places[0].x, 0.125);
    }

    /// A switch no host reaches gets no level and a row of its own above the others.
    #[test]
    fn a_device_without_traffic_has_no_level() {
        let places = picture(&[true, false, false], &[(0, 1)], None).spots;
        assert_eq!(places[1].level, Some(1));
        assert_eq!(places[2].level, None);
        assert_eq!(places[2].x, 0.5);
    }
}
