//! Where the page draws each device: rows by level, the hosts at the bottom.
//!
//! ```text
//!   level 2   ▪     ▪     ▪     ▪        ordered by the mean position of their
//!   level 1    ▪  ▪   ▪  ▪   ▪  ▪         neighbours in the row below (barycentre)
//!   level 0   ••••••••••••••••••••••      hosts, in the trace's order
//! ```
//!
//! A device's level is its distance in links from the nearest host, over the links
//! the trace's communication records show (the rule of `switch_levels` in
//! `vesper_netmodels::trace::paraver`, which `--trace-devices level=` uses): a fat
//! tree's leaf switches are 1, the next 2, and so on. A device no host reaches (no
//! traffic went through it) has no level; the page draws those on a row of their own.
//! The layout depends only on the names and links, never on the order of the records
//! beyond which link came first.

use std::collections::VecDeque;

/// A device's place in the picture.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Place {
    /// links from the nearest host (`None`: no host reaches it)
    pub level: Option<u32>,
    /// where in its row, from 0 (left) to 1 (right)
    pub x: f64,
}

/// The places of `devices` devices (`host[d]`: device `d` is a host) joined by `links`
/// (pairs of devices, either direction).
pub fn place(host: &[bool], links: &[(u32, u32)]) -> Vec<Place> {
    let n = host.len();
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
    (0..n)
        .map(|d| Place {
            level: level[d],
            x: x[d],
        })
        .collect()
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
        let places = place(&host, &links);
        let levels: Vec<Option<u32>> = places.iter().map(|p| p.level).collect();
        assert_eq!(levels, [0, 0, 0, 0, 1, 1, 2].map(Some));
        assert!(places[5].x < places[4].x, "{places:?}");
        assert_eq!(places[6].x, 0.5);
        assert_eq!(places[0].x, 0.125);
    }

    /// A switch no host reaches gets no level and a row of its own above the others.
    #[test]
    fn a_device_without_traffic_has_no_level() {
        let places = place(&[true, false, false], &[(0, 1)]);
        assert_eq!(places[1].level, Some(1));
        assert_eq!(places[2].level, None);
        assert_eq!(places[2].x, 0.5);
    }
}
