//! A MareNostrum-sized machine: the Myrinet network of the 2,560 JS21 blades that seed
//! 004 (section 1) describes, built from 32-port switch elements, as a map.
//!
//! The seed: "ten 512-port and two 1280-port Myrinet switches arranged in a two-level
//! fat-tree topology … constructed internally using 32-port switch elements (again
//! arranged in a fat-tree topology), the network really has five levels". A folded Clos
//! of 32-port elements reaches at most 32·16 = 512 ports with two levels, so the
//! 512-port switches have two levels and the 1280-port ones need three: five levels of
//! switch elements, every one with 32 ports (16 down, 16 up below the top).
//!
//! ```text
//!   level 5  core      2 × 256   ┐
//!   level 4  middle    2 × 80    ├ two 1280-port switches: 3-level fat trees, 5 pods of 256 ports
//!   level 3  edge      2 × 80    ┘   (edge: 16 ports outside, 16 up)
//!                 ▲ 2,560 cables: every 512-port switch sends 128 to each 1280-port switch
//!   level 2  spine    10 × 16    ┐ ten 512-port switches: 256 host ports + 256 uplinks
//!   level 1  leaf     10 × 16    ┘   (leaf: 16 hosts, 16 up; spine: 16 down, 16 up)
//!   level 0  hosts    2,560
//! ```
//!
//! Wiring (every element is an Xbar32; ports 0..16 face down, 16..32 up):
//! - host `h` is on 512-port switch `c = ⌊h/256⌋`, leaf `i = ⌊h/16⌋ mod 16`, port `h mod 16`;
//! - leaf `(c, i)` port `16 + j` ↔ spine `(c, j)` port `i` (a two-level full fat tree);
//! - spine `(c, j)` port `16 + 8k + e` ↔ edge `E = 8c + e` of 1280-port switch `k`, port
//!   `j`: each spine element reaches both 1280-port switches, 8 edge elements each, and
//!   each edge element reaches all 16 spine elements of one 512-port switch;
//! - in 1280-port switch `k`, edge `E` port `16 + m` ↔ middle `(⌊E/16⌋, m)` port
//!   `E mod 16` (pods of 16 edges and 16 middles, as in a 512-port switch);
//! - middle `(pod, m)` port `16 + t` ↔ core `(m, t)` port `pod`.
//!
//! The 1280-port switches are the standard three-level radix-32 fat tree (up to 8,192
//! ports) with 5 of its 32 pods populated, so each of their 256 core elements uses 5 of
//! its 32 ports. Every level but the cores has full bisection: 2,560 cables between each
//! pair of adjacent levels. Totals: 2,560 hosts, 1,152 elements (10 × 32 + 2 × 416),
//! 12,800 cables; the longest shortest path crosses 9 elements.
//!
//! Names: hosts `node0000`…`node2559`; elements `clos512-<c>.leaf<i>`,
//! `clos512-<c>.spine<j>`, `clos1280-<k>.edge<E>`, `clos1280-<k>.middle<16·pod + m>`,
//! `clos1280-<k>.core<16·m + t>`; every element has `type xbar32`.

use vesper_netmodels::{Cable, Device, Endpoint, HostId, LinkParams, Routing, SwitchId, Topology};

use crate::map::{WriteOptions, write_map};
use crate::named::NamedTopology;

/// Hosts of the machine.
pub const HOSTS: u32 = 2560;
/// 512-port switches (each 16 leaf + 16 spine elements).
pub const CLOS512: u32 = 10;
/// 1280-port switches (each 80 edge + 80 middle + 256 core elements).
pub const CLOS1280: u32 = 2;
/// Ports of every switch element.
pub const ELEMENT_PORTS: u32 = 32;
/// The model of every switch element.
pub const ELEMENT_TYPE: &str = "xbar32";

const HALF: u32 = ELEMENT_PORTS / 2; // 16 down, 16 up
const EDGES: u32 = 80; // per 1280-port switch: 1280 / 16
const PODS: u32 = EDGES / HALF; // 5
const CORES: u32 = HALF * HALF; // 256

/// Element ids, level by level: leaves, spines, then per 1280-port switch edges,
/// middles, cores.
struct Ids;

impl Ids {
    fn leaf(c: u32, i: u32) -> u32 {
        c * HALF + i
    }
    fn spine(c: u32, j: u32) -> u32 {
        CLOS512 * HALF + c * HALF + j
    }
    fn big_base(k: u32) -> u32 {
        2 * CLOS512 * HALF + k * (2 * EDGES + CORES)
    }
    fn edge(k: u32, e: u32) -> u32 {
        Ids::big_base(k) + e
    }
    fn middle(k: u32, m: u32) -> u32 {
        Ids::big_base(k) + EDGES + m
    }
    fn core(k: u32, t: u32) -> u32 {
        Ids::big_base(k) + 2 * EDGES + t
    }
    fn total() -> u32 {
        Ids::big_base(CLOS1280)
    }
}

fn at(switch: u32, port: u32) -> Endpoint {
    Endpoint {
        device: Device::Switch(SwitchId(switch)),
        port,
    }
}

/// The MareNostrum-sized network (see the module documentation), every cable with
/// `link`, routed by shortest paths.
pub fn marenostrum(link: LinkParams) -> NamedTopology {
    let mut cables = Vec::new();
    let mut join = |a: Endpoint, b: Endpoint| cables.push(Cable { a, b, link });
    for h in 0..HOSTS {
        let host = Endpoint {
            device: Device::Host(HostId(h)),
            port: 0,
        };
        join(host, at(Ids::leaf(h / (HALF * HALF), (h / HALF) % HALF), h % HALF));
    }
    for c in 0..CLOS512 {
        for i in 0..HALF {
            for j in 0..HALF {
                join(at(Ids::leaf(c, i), HALF + j), at(Ids::spine(c, j), i));
            }
        }
    }
    for c in 0..CLOS512 {
        for j in 0..HALF {
            for k in 0..CLOS1280 {
                for e in 0..8 {
                    join(at(Ids::spine(c, j), HALF + 8 * k + e), at(Ids::edge(k, 8 * c + e), j));
                }
            }
        }
    }
    for k in 0..CLOS1280 {
        for e in 0..EDGES {
            for m in 0..HALF {
                join(
                    at(Ids::edge(k, e), HALF + m),
                    at(Ids::middle(k, (e / HALF) * HALF + m), e % HALF),
                );
            }
        }
        for pod in 0..PODS {
            for m in 0..HALF {
                for t in 0..HALF {
                    join(
                        at(Ids::middle(k, pod * HALF + m), HALF + t),
                        at(Ids::core(k, m * HALF + t), pod),
                    );
                }
            }
        }
    }
    let mut switch_names = Vec::with_capacity(Ids::total() as usize);
    for level in ["leaf", "spine"] {
        for c in 0..CLOS512 {
            switch_names.extend((0..HALF).map(|i| format!("clos512-{c}.{level}{i}")));
        }
    }
    for k in 0..CLOS1280 {
        switch_names.extend((0..EDGES).map(|e| format!("clos1280-{k}.edge{e}")));
        switch_names.extend((0..EDGES).map(|m| format!("clos1280-{k}.middle{m}")));
        switch_names.extend((0..CORES).map(|t| format!("clos1280-{k}.core{t}")));
    }
    let switches = switch_names.len();
    NamedTopology {
        topology: Topology {
            hosts: HOSTS,
            switch_ports: vec![ELEMENT_PORTS; switches],
            cables,
            routing: Routing::ShortestPath,
        },
        host_names: (0..HOSTS).map(|h| format!("node{h:04}")).collect(),
        switch_names,
        switch_types: vec![Some(ELEMENT_TYPE.to_string()); switches],
        host_types: vec![None; HOSTS as usize],
    }
}

/// The map text of the MareNostrum-sized network, with host addresses.
pub fn marenostrum_map() -> String {
    // The names hold no quotes and are unique, so writing cannot fail.
    write_map(&marenostrum(LinkParams::default()), WriteOptions { addresses: true }).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::time::Instant;

    use super::*;
    use crate::map::read_map;

    /// Switch elements crossed on the shortest path from host 0 to every host.
    fn elements_crossed(t: &Topology) -> Vec<u32> {
        let devices = t.hosts as usize + t.switch_ports.len();
        let index = |d: Device| match d {
            Device::Host(h) => h.index(),
            Device::Switch(s) => t.hosts as usize + s.index(),
        };
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); devices];
        for c in &t.cables {
            next[index(c.a.device)].push(index(c.b.device));
            next[index(c.b.device)].push(index(c.a.device));
        }
        let mut hops = vec![u32::MAX; devices];
        hops[0] = 0;
        let mut queue = VecDeque::from([0]);
        while let Some(d) = queue.pop_front() {
            for &n in &next[d] {
                if hops[n] == u32::MAX {
                    hops[n] = hops[d] + 1;
                    // hosts are leaves: no path goes through one
                    if n >= t.hosts as usize {
                        queue.push_back(n);
                    }
                }
            }
        }
        hops[..t.hosts as usize].iter().map(|&h| h.saturating_sub(1)).collect()
    }

    #[test]
    fn marenostrum_map_is_generated_and_read_back() {
        let start = Instant::now();
        let text = marenostrum_map();
        let generated = start.elapsed();
        let start = Instant::now();
        let rails = read_map("marenostrum.map", &text, LinkParams::default()).unwrap_or_else(|e| panic!("{e}"));
        let read = start.elapsed();
        eprintln!(
            "MareNostrum map: {} bytes, {} lines; generated in {generated:?}, read in {read:?}",
            text.len(),
            text.lines().count()
        );
        assert_eq!(rails.len(), 1);
        let named = &rails[0];
        let t = &named.topology;
        assert_eq!(t.hosts, 2560);
        assert_eq!(t.switch_ports.len(), 1152);
        assert_eq!(10 * 32 + 2 * 416, 1152);
        assert!(t.switch_ports.iter().all(|&p| p == 32));
        assert_eq!(t.cables.len(), 12_800);
        assert_eq!(
            named.switch_types.iter().flatten().filter(|m| *m == "xbar32").count(),
            1152
        );
        assert_eq!(named.host_names[2559], "node2559");
        assert_eq!(named.switch_names[0], "clos512-0.leaf0");
        // Ports used per level: full elements everywhere but the cores (5 of 32).
        let mut used = vec![0u32; t.switch_ports.len()];
        for c in &t.cables {
            for end in [c.a, c.b] {
                if let Device::Switch(s) = end.device {
                    used[s.index()] += 1;
                }
            }
        }
        let cores = used.iter().filter(|&&u| u == 5).count();
        assert_eq!((cores, used.iter().filter(|&&u| u == 32).count()), (512, 640));
        // Five levels: same leaf 1 element, same 512-port switch 3, same pod of a
        // 1280-port switch 7 (leaf, spine, edge, middle, edge, spine, leaf), else 9.
        let crossed = elements_crossed(t);
        assert_eq!((crossed[1], crossed[16], crossed[256], crossed[512]), (1, 3, 7, 9));
        assert_eq!(crossed.iter().max(), Some(&9));
        assert_eq!(marenostrum_map(), text, "deterministic");
    }
}
