//! Extended generalized fat trees, XGFT(h; m1..mh; w1..wh), and their oblivious
//! routings: d-mod-k (tables), s-mod-k and random (source routes); pattern-aware
//! routing and the link loads of a communication pattern live in [`pattern_routes`].
//!
//! ```text
//!   level 2:      [s00]     [s01]  …        each level-i switch: m_i children (down
//!                 /  |  \   /  |  \                 ports 0..m_i), w_{i+1} parents (up
//!   level 1:   [s0]    [s1]    [s2]  …              ports m_i..m_i+w_{i+1})
//!              / | \   / | \
//!   level 0:  h0 h1 h2 h3 h4 h5  …              hosts: port 0
//! ```
//!
//! Levels 0..h; level 0 holds the N = m1·…·mh hosts. A level-i node is labelled by
//! digits (d1..dh): digits 1..i are parent indices in [0, w_j), digits i+1..h child
//! indices in [0, m_j). A level-i node and a level-(i+1) node are linked iff their
//! labels agree in every digit but digit i+1; the child's digit i+1 is its down-port
//! number at the parent, the parent's digit i+1 is its up-port number (after the down
//! ports) at the child. Labels are numbered mixed-radix with digit 1 least significant,
//! so hosts 0..m1 share the first leaf switch. Switches are numbered level by level.
//!
//! k-ary n-tree = XGFT(n; k,…,k; 1,k,…,k). Slimmed k:k' tree = XGFT(n; k,…,k; 1,k',…,k').
//!
//! Every routing here is minimal: up to the lowest level where source and destination
//! share a subtree, then down the unique way. Routings differ only in the parent chosen
//! at each level on the way up.

use crate::ids::{Device, HostId, SwitchId};
use crate::link::LinkParams;
use crate::rng::Rng;
use crate::topology::shape::{Shape, ShapeCounts, Strategy};
use crate::topology::{Cable, Endpoint, Routing, RoutingPolicy, Topology, TopologyError, room};

pub mod pattern_routes;
mod subtrees;

pub use pattern_routes::{PatternRoutes, PhaseLoad};

/// The most levels of switches a tree may have: a level whose switches have two
/// children or more at least doubles the hosts, so 25 of them already reach the 2^25
/// hosts vesper models; the others add nothing but switches.
pub const MAX_LEVELS: usize = 32;

/// The shape of an extended generalized fat tree.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Xgft {
    /// children per node at levels 1..h (m1..mh)
    pub children: Vec<u32>,
    /// parents per node at levels 0..h-1 (w1..wh); w1 must be 1 (one port per host)
    pub parents: Vec<u32>,
}

/// Why an XGFT cannot be built: the rule broken ([`XgftError::rule`]), its values with it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum XgftError {
    /// the two lists differ in length, or are empty
    Height {
        /// values of m
        children: usize,
        /// values of w
        parents: usize,
    },
    /// a zero in m or w
    Zero,
    /// hosts with several parents are multi-rail hosts, not supported here
    HostParents,
    /// more ports than the simulator models
    TooLarge,
    /// more levels than a tree may have
    TooManyLevels(usize),
    /// routes through more switches than packets count
    TooTall {
        /// the switches crossed
        switches: u64,
        /// the highest level whose nodes have several children
        top: usize,
    },
    /// a communication pattern names a host the tree does not have
    UnknownHost {
        /// index of the phase
        phase: usize,
        /// index of the flow in the phase
        flow: usize,
        /// the host named
        host: u32,
        /// hosts in the tree
        hosts: u32,
    },
    /// a path that is not a route of the tree between the two hosts
    BadPath {
        /// the source host
        src: u32,
        /// the destination host
        dst: u32,
        /// the output ports, switch by switch
        path: Vec<u32>,
    },
}

impl XgftError {
    /// The rule broken, with its values.
    pub fn rule(&self) -> String {
        match self {
            XgftError::Height { children, parents } => {
                format!("m and w must both list h ≥ 1 values (got {children} and {parents})")
            }
            XgftError::Zero => "every m_i and w_i must be at least 1".into(),
            XgftError::HostParents => "w1 must be 1 (hosts have one port)".into(),
            XgftError::TooLarge => {
                "the tree has more than 2^26 = 67,108,864 ports (hosts' and switches' together), the most vesper models"
                    .into()
            }
            XgftError::TooManyLevels(levels) => {
                format!("the tree has {levels} levels of switches; vesper builds trees of at most {MAX_LEVELS}")
            }
            XgftError::TooTall { switches, top } => format!(
                "its longest route crosses {switches} switches (up to level {top} and down); vesper counts at most \
                 65,535 on a route"
            ),
            XgftError::UnknownHost {
                phase,
                flow,
                host,
                hosts,
            } => format!("phases[{phase}][{flow}] names host {host}, the tree has {hosts} hosts"),
            XgftError::BadPath { src, dst, path } => {
                format!("the output ports {path:?} do not lead from host {src} to host {dst}")
            }
        }
    }
}

impl std::fmt::Display for XgftError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            XgftError::UnknownHost { .. } => write!(f, "xgft pattern: {}", self.rule()),
            _ => write!(f, "xgft: {}", self.rule()),
        }
    }
}

impl std::error::Error for XgftError {}

impl Xgft {
    /// XGFT(h; m; w), checked.
    pub fn new(children: Vec<u32>, parents: Vec<u32>) -> Result<Xgft, XgftError> {
        if children.is_empty() || children.len() != parents.len() {
            return Err(XgftError::Height {
                children: children.len(),
                parents: parents.len(),
            });
        }
        if children.iter().chain(&parents).any(|&v| v == 0) {
            return Err(XgftError::Zero);
        }
        if parents[0] != 1 {
            return Err(XgftError::HostParents);
        }
        let x = Xgft { children, parents };
        // Before counting nodes, which takes time growing with the height squared.
        let switches = x.longest_route();
        if switches > super::MAX_ROUTE_SWITCHES {
            return Err(XgftError::TooTall {
                switches,
                top: switches.div_ceil(2) as usize,
            });
        }
        // Counting nodes and wiring take time growing with the height squared.
        if x.height() > MAX_LEVELS {
            return Err(XgftError::TooManyLevels(x.height()));
        }
        if x.all_ports().is_none_or(|p| p > super::MAX_PORTS) {
            return Err(XgftError::TooLarge);
        }
        Ok(x)
    }

    /// Ports of the network, hosts' and switches', if they fit in 64 bits and every
    /// level's nodes in 32.
    fn all_ports(&self) -> Option<u64> {
        (1..=self.height()).try_fold(u64::from(self.nodes_checked(0)?), |sum, level| {
            let switches = u64::from(self.nodes_checked(level)?);
            let ports = u64::from(self.children[level - 1]) + u64::from(self.parents.get(level).copied().unwrap_or(0));
            sum.checked_add(switches.checked_mul(ports)?)
        })
    }

    /// The k-ary n-tree: XGFT(n; k,…,k; 1,k,…,k).
    pub fn kary_ntree(k: u32, n: u32) -> Result<Xgft, XgftError> {
        Xgft::thin_tree(k, n, k)
    }

    /// The k:k' thin tree of n levels, XGFT(n; k,…,k; 1,k',…,k'); `n` is checked before
    /// the lists are made.
    pub fn thin_tree(k: u32, n: u32, k_up: u32) -> Result<Xgft, XgftError> {
        let levels = usize::try_from(n).unwrap_or(usize::MAX);
        if levels > MAX_LEVELS {
            return Err(XgftError::TooManyLevels(levels));
        }
        let mut parents = vec![k_up; levels];
        if let Some(first) = parents.first_mut() {
            *first = 1;
        }
        Xgft::new(vec![k; levels], parents)
    }

    /// Height h (levels of switches).
    pub fn height(&self) -> usize {
        self.children.len()
    }

    /// The most switches a route crosses: up to the highest level whose nodes have
    /// several children (two hosts' nearest common ancestor is at most there) and down,
    /// 2L − 1; none with a single host.
    pub fn longest_route(&self) -> u64 {
        let top = self.children.iter().rposition(|&m| m > 1).map_or(0, |i| i as u64 + 1);
        (2 * top).saturating_sub(1)
    }

    /// Radix of digit `j` (1-based) in a level-`level` label.
    fn radix(&self, level: usize, j: usize) -> u32 {
        if j <= level {
            self.parents[j - 1]
        } else {
            self.children[j - 1]
        }
    }

    fn nodes_checked(&self, level: usize) -> Option<u32> {
        (1..=self.height()).try_fold(1u32, |n, j| n.checked_mul(self.radix(level, j)))
    }

    /// Nodes at `level` (0 = hosts).
    pub fn nodes(&self, level: usize) -> u32 {
        self.nodes_checked(level).unwrap_or(u32::MAX)
    }

    /// Hosts N = m1·…·mh.
    pub fn hosts(&self) -> u32 {
        self.nodes(0)
    }

    /// Switches at levels 1..h.
    pub fn switches(&self) -> u32 {
        (1..=self.height()).map(|l| self.nodes(l)).sum()
    }

    /// Cables (host links included).
    pub fn links(&self) -> u64 {
        (0..self.height())
            .map(|l| u64::from(self.nodes(l)) * u64::from(self.parents[l]))
            .sum()
    }

    /// The digits of node `index` at `level`, digit 1 first.
    fn digits(&self, level: usize, mut index: u32) -> Vec<u32> {
        (1..=self.height())
            .map(|j| {
                let r = self.radix(level, j);
                let d = index % r;
                index /= r;
                d
            })
            .collect()
    }

    fn index(&self, level: usize, digits: &[u32]) -> u32 {
        digits
            .iter()
            .enumerate()
            .rev()
            .fold(0, |acc, (j, &d)| acc * self.radix(level, j + 1) + d)
    }

    /// The global switch id of node `index` at `level` (≥ 1).
    fn switch_id(&self, level: usize, index: u32) -> SwitchId {
        SwitchId((1..level).map(|l| self.nodes(l)).sum::<u32>() + index)
    }

    /// Ports of a level-`level` switch: its children, then its parents.
    fn ports(&self, level: usize) -> u32 {
        self.children[level - 1] + self.parents.get(level).copied().unwrap_or(0)
    }

    /// The network, every cable alike, routed d-mod-k.
    pub fn topology(&self, link: LinkParams) -> Topology {
        let cables = Vec::with_capacity(usize::try_from(self.links()).unwrap_or(0));
        self.made(link, cables, Vec::with_capacity(self.switches() as usize))
    }

    /// [`Xgft::topology`], or [`TopologyError::NoRoom`] instead of the allocator's
    /// abort.
    pub fn try_topology(&self, link: LinkParams) -> Result<Topology, TopologyError> {
        let cables = room(usize::try_from(self.links()).unwrap_or(usize::MAX), "cables")?;
        let switch_ports = room(self.switches() as usize, "switches")?;
        Ok(self.made(link, cables, switch_ports))
    }

    /// The topology, its cables and switches' ports pushed onto `cables` and
    /// `switch_ports` (empty, with room for them).
    fn made(&self, link: LinkParams, mut cables: Vec<Cable>, mut switch_ports: Vec<u32>) -> Topology {
        for level in 1..=self.height() {
            switch_ports.extend(std::iter::repeat_n(self.ports(level), self.nodes(level) as usize));
        }
        for level in 0..self.height() {
            for index in 0..self.nodes(level) {
                let digits = self.digits(level, index);
                for parent in 0..self.parents[level] {
                    let mut up = digits.clone();
                    up[level] = parent;
                    let above = self.index(level + 1, &up);
                    let a = match level {
                        0 => Endpoint {
                            device: Device::Host(HostId(index)),
                            port: 0,
                        },
                        _ => Endpoint {
                            device: Device::Switch(self.switch_id(level, index)),
                            port: self.children[level - 1] + parent,
                        },
                    };
                    let b = Endpoint {
                        device: Device::Switch(self.switch_id(level + 1, above)),
                        port: digits[level],
                    };
                    cables.push(Cable { a, b, link });
                }
            }
        }
        Topology {
            hosts: self.hosts(),
            switch_ports,
            cables,
            routing: Routing::DModK(self.clone()),
        }
    }

    /// d-mod-k: the output port of `switch` towards host `dst`. Down when `dst` is in
    /// the switch's subtree (its digits above the switch's level agree), on the child
    /// port of `dst`'s digit at this level; else up, on parent ⌊d / (w1·…·wl)⌋ mod w(l+1).
    pub fn d_mod_k(&self, switch: SwitchId, dst: HostId) -> u32 {
        let (level, index) = self.locate(switch);
        let here = self.digits(level, index);
        let there = self.digits(0, dst.0);
        if here[level..] == there[level..] {
            return there[level - 1];
        }
        self.children[level - 1] + (dst.0 / self.below(level)) % self.parents[level]
    }

    /// d-mod-k for every switch in closed form (see [`DModKRoutes`]).
    pub(crate) fn d_mod_k_routes(&self) -> DModKRoutes {
        let h = self.height();
        let product = |v: &[u32], l: usize| v[..l].iter().product::<u32>();
        let mut switches = Vec::with_capacity(self.switches() as usize);
        switches.extend(
            (1..=h)
                .flat_map(|level| (0..self.nodes(level)).map(move |index| (level as u32, index / self.below(level)))),
        );
        DModKRoutes {
            switches,
            parents_below: (0..=h).map(|l| product(&self.parents, l)).collect(),
            children_below: (0..=h).map(|l| product(&self.children, l)).collect(),
            children: self.children.clone(),
            parents: self.parents.clone(),
        }
    }

    /// d-mod-k as a path: the output ports from host `src` to host `dst`, switch by
    /// switch, the same ports the [`Xgft::d_mod_k`] tables give.
    pub fn d_mod_k_path(&self, src: HostId, dst: HostId) -> Vec<u32> {
        self.path_with(src, dst, |level| (dst.0 / self.below(level)) % self.parents[level])
    }

    /// s-mod-k: the output ports of the path from host `src` to host `dst`, switch by
    /// switch. Up at level l on parent ⌊s / (w1·…·wl)⌋ mod w(l+1) until the destination
    /// is in the subtree, then down by the destination's digits.
    pub fn s_mod_k_path(&self, src: HostId, dst: HostId) -> Vec<u32> {
        self.path_with(src, dst, |level| (src.0 / self.below(level)) % self.parents[level])
    }

    /// Random: the output ports of the path from host `src` to host `dst`, the parent
    /// at each level l drawn uniformly from w(l+1) by a generator keyed by (`seed`, src,
    /// dst, l). A static choice per pair: the same seed gives the same path whenever and
    /// in whatever order it is asked for.
    pub fn random_path(&self, seed: u64, src: HostId, dst: HostId) -> Vec<u32> {
        self.path_with(src, dst, |level| {
            let key = [u64::from(src.0), u64::from(dst.0), level as u64];
            Rng::keyed(seed, &key).below(u64::from(self.parents[level])) as u32
        })
    }

    /// The level of the highest switch on a minimal path from `src` to `dst`: L = the
    /// highest digit where their labels differ (1 when they share a leaf switch).
    pub fn top_level(&self, src: HostId, dst: HostId) -> usize {
        let (s, d) = (self.digits(0, src.0), self.digits(0, dst.0));
        (0..self.height()).rev().find(|&j| s[j] != d[j]).map_or(1, |j| j + 1)
    }

    /// w1·…·w`level`: how many level-`level` nodes have the same child digits.
    fn below(&self, level: usize) -> u32 {
        self.parents[..level].iter().product()
    }

    /// The output ports of the minimal path from host `src` to host `dst`, switch by
    /// switch: up at each level-l switch on parent `up(l)` (in 0..w(l+1)) until the
    /// destination is in the subtree, at level [`Xgft::top_level`], then down by the
    /// destination's digits (the down path is unique).
    pub(crate) fn path_with(&self, src: HostId, dst: HostId, mut up: impl FnMut(usize) -> u32) -> Vec<u32> {
        let there = self.digits(0, dst.0);
        // The source's leaf: level-1 label (0, s2, …, sh).
        let mut digits = self.digits(0, src.0);
        digits[0] = 0;
        let mut level = 1;
        let mut path = Vec::new();
        loop {
            if digits[level..] == there[level..] {
                // Down: towards the child whose digit `level` is the destination's.
                let port = there[level - 1];
                path.push(port);
                digits[level - 1] = port;
                level -= 1;
                if level == 0 {
                    return path;
                }
            } else {
                let parent = up(level);
                path.push(self.children[level - 1] + parent);
                digits[level] = parent;
                level += 1;
            }
        }
    }

    /// The transmitting end of every link that `path` (output ports, switch by switch)
    /// crosses from host `src`, the source's own port first; `None` unless the ports
    /// exist and lead to host `dst`.
    pub(crate) fn hops(&self, src: HostId, dst: HostId, path: &[u32]) -> Option<Vec<Endpoint>> {
        let mut digits = self.digits(0, src.0);
        digits[0] = 0;
        let mut level = 1;
        let mut hops = vec![Endpoint {
            device: Device::Host(src),
            port: 0,
        }];
        for &port in path {
            if level == 0 {
                return None;
            }
            let device = Device::Switch(self.switch_id(level, self.index(level, &digits)));
            hops.push(Endpoint { device, port });
            let children = self.children[level - 1];
            if port < children {
                digits[level - 1] = port;
                level -= 1;
            } else if level < self.height() && port - children < self.parents[level] {
                digits[level] = port - children;
                level += 1;
            } else {
                return None;
            }
        }
        (level == 0 && self.index(0, &digits) == dst.0).then_some(hops)
    }

    /// Level and index within the level of `switch`.
    fn locate(&self, switch: SwitchId) -> (usize, u32) {
        let mut id = switch.0;
        for level in 1..=self.height() {
            let n = self.nodes(level);
            if id < n {
                return (level, id);
            }
            id -= n;
        }
        (self.height(), 0)
    }
}

/// A tree's name, `XGFT(h; m1,…,mh; w1,…,wh)`; routed d-mod-k, s-mod-k, at random or
/// for a pattern; cut into subtrees.
impl Shape for Xgft {
    fn name(&self) -> String {
        let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        format!(
            "XGFT({}; {}; {})",
            self.height(),
            list(&self.children),
            list(&self.parents)
        )
    }

    fn counts(&self) -> ShapeCounts {
        let (hosts, links) = (u64::from(self.hosts()), self.links());
        // Every port of a tree has a cable: two ends each, one of them a host's for the
        // hosts' cables.
        ShapeCounts {
            hosts,
            switches: u64::from(self.switches()),
            switch_ports: 2 * links - hosts,
            cables: links,
            switches_with_hosts: u64::from(self.nodes(1)),
            switch_cables: links - hosts,
        }
    }

    fn try_topology(&self, link: LinkParams) -> Result<Topology, TopologyError> {
        Xgft::try_topology(self, link)
    }

    fn routing(&self, policy: &RoutingPolicy) -> Option<Routing> {
        Some(match policy {
            RoutingPolicy::DModK | RoutingPolicy::PatternAware(None) => Routing::DModK(self.clone()),
            RoutingPolicy::SModK => Routing::SModK(self.clone()),
            RoutingPolicy::Random { seed } => Routing::Random {
                xgft: self.clone(),
                seed: *seed,
            },
            RoutingPolicy::PatternAware(Some(routes)) => Routing::PatternAware(Box::new(PatternRoutes::clone(routes))),
            RoutingPolicy::ShortestPath
            | RoutingPolicy::DimensionOrder
            | RoutingPolicy::Minimal
            | RoutingPolicy::Valiant { .. }
            | RoutingPolicy::Ugal { .. }
            | RoutingPolicy::Explicit { .. } => {
                return None;
            }
        })
    }

    fn diameter_links(&self) -> Option<u32> {
        // Hosts differ at most in the highest digit j with m_j > 1: up j levels and down
        // again.
        let top = (1..=self.height())
            .rev()
            .find(|&j| self.children[j - 1] > 1)
            .unwrap_or(0);
        Some(2 * top as u32)
    }

    fn bisection_cables(&self) -> Option<u64> {
        // Halving the top level's children: each half's level-(h−1) nodes reach every top
        // switch; put half the top switches on each side.
        let h = self.height();
        self.children[h - 1]
            .is_multiple_of(2)
            .then(|| u64::from(self.nodes(h - 1)) * u64::from(self.parents[h - 1]) / 2)
    }

    fn level(&self, level: u32) -> Option<(std::ops::Range<u32>, u32)> {
        // Switches are numbered level by level, the leaves first.
        let l = level as usize;
        (1..=self.height()).contains(&l).then(|| {
            let first: u32 = (1..l).map(|j| self.nodes(j)).sum();
            (first..first + self.nodes(l), self.ports(l))
        })
    }

    fn cut(&self, parts: u32) -> Option<(Vec<u32>, Strategy)> {
        Some((subtrees::partition(self, parts)?, Strategy::Subtrees))
    }
}

/// d-mod-k without a table: the port of any switch towards any host from a few
/// divisions, where a table would hold switches × hosts entries (384 MiB for a 32-ary
/// 3-tree). A switch at level l routes down when the host's digits above l are the
/// switch's own (the host is in its subtree), on the child of the host's digit l; else
/// up, on parent ⌊d / (w1·…·wl)⌋ mod w(l+1).
#[derive(Debug, Clone)]
pub(crate) struct DModKRoutes {
    /// per switch: its level, and the digits of its label above that level as a number
    switches: Vec<(u32, u32)>,
    /// per level l (0..=h): w1·…·wl
    parents_below: Vec<u32>,
    /// per level l: m1·…·ml
    children_below: Vec<u32>,
    children: Vec<u32>,
    parents: Vec<u32>,
}

impl DModKRoutes {
    /// The bytes of its per-switch records (see [`crate::footprint`]).
    #[cfg(test)]
    pub(crate) fn counted_bytes(&self) -> u64 {
        (self.switches.capacity() * size_of::<(u32, u32)>()) as u64
    }

    /// The output port of `switch` towards host `dst`; the same as [`Xgft::d_mod_k`].
    pub(crate) fn port(&self, switch: SwitchId, dst: HostId) -> u32 {
        let Some(&(level, upper)) = self.switches.get(switch.index()) else {
            return u32::MAX;
        };
        let l = level as usize;
        if dst.0 / self.children_below[l] == upper {
            (dst.0 / self.children_below[l - 1]) % self.children[l - 1]
        } else {
            self.children[l - 1] + (dst.0 / self.parents_below[l]) % self.parents.get(l).copied().unwrap_or(1)
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::topology::{Route, RouteTable, Wiring, wire};

    /// The small trees every routing is checked on exhaustively: a 4-ary 3-tree, a
    /// slimmed 4:2 3-tree and a tree with unequal arities.
    pub(crate) fn small_trees() -> [Xgft; 3] {
        [
            Xgft::kary_ntree(4, 3).expect("valid"),
            Xgft::new(vec![4, 4, 4], vec![1, 2, 2]).expect("valid"),
            Xgft::new(vec![3, 2, 2], vec![1, 3, 1]).expect("valid"),
        ]
    }

    /// Follows the output ports of `path` through the cables from host `src`'s switch:
    /// the transmitting end of every link crossed (the host's own first) and the device
    /// reached after the last port (every earlier one must be a switch).
    pub(crate) fn follow(wiring: &Wiring, src: u32, path: &[u32]) -> (Vec<Endpoint>, Device) {
        let mut hops = vec![wiring.owner[wiring.port_base[src as usize] as usize]];
        let mut at = wiring.peer[wiring.port_base[src as usize] as usize]
            .expect("connected")
            .0;
        for &port in path {
            assert!(
                matches!(at.device, Device::Switch(_)),
                "{src}: {path:?} leaves the switches early"
            );
            let out = Endpoint {
                device: at.device,
                port,
            };
            hops.push(out);
            at = wiring.peer[wiring.port(out)].expect("connected").0;
        }
        (hops, at.device)
    }

    /// Checks that `path` leads from `src` to `dst` through 2L − 1 switches: up to the
    /// lowest common level L and down again (one switch when they share a leaf); and
    /// that [`Xgft::hops`] finds the links the cables give.
    pub(crate) fn assert_minimal(x: &Xgft, wiring: &Wiring, src: u32, dst: u32, path: &[u32]) {
        let (hops, end) = follow(wiring, src, path);
        assert_eq!(end, Device::Host(HostId(dst)), "{src} → {dst}: {path:?}");
        let level = x.top_level(HostId(src), HostId(dst));
        assert_eq!(path.len(), 2 * level - 1, "{x:?} {src} → {dst}: {path:?}");
        assert_eq!(x.hops(HostId(src), HostId(dst), path), Some(hops));
    }

    #[test]
    fn trees_too_large_are_refused_before_they_are_made() {
        // 2^31 levels would be two lists of 8 GiB: refused by their count.
        assert_eq!(Xgft::kary_ntree(2, 1 << 31), Err(XgftError::TooManyLevels(1 << 31)));
        assert_eq!(
            Xgft::new(vec![1; MAX_LEVELS + 1], vec![1; MAX_LEVELS + 1]).map_err(|e| e.to_string()),
            Err("xgft: the tree has 33 levels of switches; vesper builds trees of at most 32".into())
        );
        assert!(Xgft::new(vec![1; MAX_LEVELS], vec![1; MAX_LEVELS]).is_ok());
        // 64^4 = 16,777,216 hosts and 4 × 64^3 switches of 128 ports: about 2^27 ports.
        assert_eq!(Xgft::kary_ntree(64, 4), Err(XgftError::TooLarge));
        assert_eq!(Xgft::thin_tree(64, 4, 1).map(|x| x.hosts()), Ok(1 << 24));
        assert_eq!(Xgft::kary_ntree(u32::MAX, 2), Err(XgftError::TooLarge));
    }

    #[test]
    fn counts_match_the_formats_spec() {
        let t = Xgft::kary_ntree(4, 3).expect("valid");
        assert_eq!(
            (t.hosts(), t.switches(), t.links() - u64::from(t.hosts())),
            (64, 48, 128)
        );
        let slim = Xgft::new(vec![4, 4, 4], vec![1, 2, 2]).expect("valid");
        assert_eq!((slim.switches(), slim.links()), (28, 112));
        assert_eq!(Xgft::kary_ntree(8, 4).expect("valid").switches(), 2048);
        // The 8:1 thin 4-tree (a plain 8-ary tree): 512 + 64 + 8 + 1 switches.
        let thin = Xgft::new(vec![8; 4], vec![1; 4]).expect("valid");
        assert_eq!(thin.switches(), 585);
        assert_eq!(Xgft::new(vec![2, 3], vec![2, 1]), Err(XgftError::HostParents));
        assert_eq!(
            Xgft::new(vec![2], vec![1, 1]).err(),
            Some(XgftError::Height {
                children: 1,
                parents: 2
            })
        );
    }

    #[test]
    fn every_route_is_minimal_and_reaches_its_destination() {
        for x in small_trees() {
            let topology = x.topology(LinkParams::default());
            let wiring = wire(&topology).expect("valid wiring");
            let routes = RouteTable::build(&topology, &wiring).expect("routable");
            for src in 0..x.hosts() {
                for dst in 0..x.hosts() {
                    let table = walk(&wiring, &routes, src, dst);
                    assert_minimal(&x, &wiring, src, dst, &table);
                    // The d-mod-k path is what the tables give.
                    assert_eq!(x.d_mod_k_path(HostId(src), HostId(dst)), table);
                    for path in [
                        x.s_mod_k_path(HostId(src), HostId(dst)),
                        x.random_path(1, HostId(src), HostId(dst)),
                        x.random_path(2, HostId(src), HostId(dst)),
                    ] {
                        assert_minimal(&x, &wiring, src, dst, &path);
                    }
                }
            }
        }
    }

    #[test]
    fn closed_form_d_mod_k_is_the_table() {
        let mut trees = small_trees().to_vec();
        trees.push(Xgft::new(vec![3, 2, 4], vec![1, 2, 3]).expect("valid"));
        for x in trees {
            let routes = x.d_mod_k_routes();
            for s in 0..x.switches() {
                for h in 0..x.hosts() {
                    let (s, h) = (SwitchId(s), HostId(h));
                    assert_eq!(routes.port(s, h), x.d_mod_k(s, h), "{x:?} {s:?} {h:?}");
                }
            }
        }
    }

    #[test]
    fn s_mod_k_spreads_by_source() {
        let x = Xgft::kary_ntree(4, 3).expect("valid");
        // The first up port depends on the source, not the destination.
        let up = |s: u32| x.s_mod_k_path(HostId(s), HostId(63))[0];
        assert_eq!((up(0), up(1), up(2), up(3)), (4, 5, 6, 7));
    }

    /// The path ids' ports of every pair of `x`'s network routed `routing`, the pairs
    /// asked for in the order `pairs` gives them.
    fn source_routes(x: &Xgft, routing: Routing, pairs: &[(u32, u32)]) -> Vec<((u32, u32), Vec<u32>)> {
        let mut topology = x.topology(LinkParams::default());
        topology.routing = routing;
        let wiring = wire(&topology).expect("valid wiring");
        let mut routes = RouteTable::build(&topology, &wiring).expect("routable");
        let mut out: Vec<_> = pairs
            .iter()
            .map(|&(src, dst)| {
                let route = routes.route(HostId(src), HostId(dst), 0);
                assert!(matches!(route, Route::Source(_)), "{route:?}");
                let hops = 2 * x.top_level(HostId(src), HostId(dst)) - 1;
                let ports = (0..hops)
                    .map(|hop| routes.port(route, SwitchId(0), hop, HostId(dst)))
                    .collect();
                ((src, dst), ports)
            })
            .collect();
        out.sort();
        out
    }

    fn all_pairs(x: &Xgft) -> Vec<(u32, u32)> {
        (0..x.hosts())
            .flat_map(|s| (0..x.hosts()).map(move |d| (s, d)))
            .collect()
    }

    #[test]
    fn random_paths_depend_on_the_seed_not_on_the_order_of_use() {
        let x = Xgft::kary_ntree(4, 3).expect("valid");
        let random = |seed| Routing::Random { xgft: x.clone(), seed };
        let pairs = all_pairs(&x);
        let reversed: Vec<_> = pairs.iter().rev().copied().collect();
        // Every other pair first, then the rest: yet another order.
        let interleaved: Vec<_> = pairs
            .iter()
            .step_by(2)
            .chain(pairs.iter().skip(1).step_by(2))
            .copied()
            .collect();
        let forward = source_routes(&x, random(7), &pairs);
        assert_eq!(forward, source_routes(&x, random(7), &reversed));
        assert_eq!(forward, source_routes(&x, random(7), &interleaved));
        // The route table hands out exactly the paths `random_path` defines.
        assert!(
            forward
                .iter()
                .all(|((s, d), path)| *path == x.random_path(7, HostId(*s), HostId(*d)))
        );
        let other = source_routes(&x, random(8), &pairs);
        let differ = forward.iter().zip(&other).filter(|(a, b)| a.1 != b.1).count();
        // Pairs that climb above the leaves have 4 or 16 possible paths: most differ.
        assert!(differ > pairs.len() / 2, "{differ} of {} pairs differ", pairs.len());
    }

    #[test]
    fn random_paths_use_every_up_port() {
        let x = Xgft::kary_ntree(4, 3).expect("valid");
        for seed in [0, 1, 2] {
            // used[leaf][up port − 4]; used2[level-2 switch][up port − 4]
            let mut used = [[0u32; 4]; 16];
            let mut used2 = [[0u32; 4]; 16];
            for (src, dst) in all_pairs(&x) {
                let path = x.random_path(seed, HostId(src), HostId(dst));
                let level = x.top_level(HostId(src), HostId(dst));
                if level >= 2 {
                    used[(src / 4) as usize][(path[0] - 4) as usize] += 1;
                }
                if level == 3 {
                    // The level-2 switch reached: parent path[0] − 4 in the source's pod.
                    let switch = (src / 16) * 4 + (path[0] - 4);
                    used2[switch as usize][(path[1] - 4) as usize] += 1;
                }
            }
            // Each leaf sends 4 × 60 pairs up: all four ports get some, none gets most.
            for counts in used.iter().chain(&used2) {
                assert!(counts.iter().all(|&n| n > 0), "seed {seed}: {counts:?}");
                let total: u32 = counts.iter().sum();
                assert!(counts.iter().all(|&n| n < total / 2), "seed {seed}: {counts:?}");
            }
        }
    }

    #[test]
    fn random_paths_are_the_same_in_every_run() {
        // Pinned: a change here changes every random-routed simulation.
        let x = Xgft::kary_ntree(4, 3).expect("valid");
        let paths: Vec<Vec<u32>> = (60..64).map(|d| x.random_path(42, HostId(0), HostId(d))).collect();
        let expected = [[5, 4, 3, 3, 0], [6, 5, 3, 3, 1], [5, 5, 3, 3, 2], [4, 6, 3, 3, 3]];
        assert_eq!(paths, expected);
    }

    /// Follows the route table from host `src` to host `dst`; the output ports taken.
    fn walk(wiring: &Wiring, routes: &RouteTable, src: u32, dst: u32) -> Vec<u32> {
        let mut at = wiring.peer[wiring.port_base[src as usize] as usize]
            .expect("connected")
            .0;
        let mut ports = Vec::new();
        while let Device::Switch(s) = at.device {
            assert!(ports.len() < 64, "routing loop");
            let port = routes.next_port(s, HostId(dst));
            ports.push(port);
            at = wiring.peer[wiring.port(Endpoint {
                device: at.device,
                port,
            })]
            .expect("connected")
            .0;
        }
        ports
    }
}
