//! Tori (k-ary n-cubes), meshes and hypercubes, and their dimension-order routing.
//!
//! ```text
//!   dimension 1 ▲        ┆      ┆      ┆      ┆
//!               │  ┄┄┄ s8 ─── s9 ─── s10 ─── s11 ┄┄┄     a 4×3 torus: every row and
//!               │      │      │      │       │            column is a ring, closed by
//!                  ┄┄┄ s4 ─── s5 ─── s6 ──── s7 ┄┄┄      the dashed wraparound cables
//!                      │      │      │       │            (a mesh has none)
//!                  ┄┄┄ s0 ─── s1 ─── s2 ──── s3 ┄┄┄  ──▶ dimension 0
//!                      ┆      ┆      ┆       ┆
//!
//!   one switch, c = hosts_per_switch:            c+2 (dim 1, +)
//!                                                │
//!                      c+1 (dim 0, −) ────────── sw ────────── c (dim 0, +)
//!                                              ╱ │
//!                      hosts: ports 0..c ─────╯  c+3 (dim 1, −)
//! ```
//!
//! Switches are numbered mixed-radix, dimension 0 least significant: switch `s` sits
//! at coordinate `x_d = ⌊s / (k_0·…·k_{d−1})⌋ mod k_d` in dimension `d`. Host `h` hangs
//! off switch `⌊h / c⌋` on port `h mod c`.
//!
//! Ports of every switch: `0..c` are hosts; then, for dimension `d`, port `c + 2d` leads
//! in the + direction (to `x_d + 1`) and port `c + 2d + 1` in the − direction (to
//! `x_d − 1`). A cable joins the + port of one switch to the − port of its neighbour.
//! On a torus the switch at `x_d = k_d − 1` reaches `x_d = 0` through its + port (the
//! wraparound cable); on a mesh the + port of the last switch and the − port of the
//! first stay unconnected. A torus dimension of 2 switches has one distinct neighbour:
//! it gets one cable, as in a mesh, never two.
//!
//! The hypercube (n-cube) is the 2-ary n-mesh, with this same layout: per dimension the
//! switch at coordinate 0 uses its + port and the one at coordinate 1 its − port; the
//! other port of the pair stays unconnected.
//!
//! Dimension-order routing: a packet corrects dimension 0 first, then 1, and so on; in
//! each dimension it goes the shorter way round. On a torus ring of even size a
//! destination exactly `k/2` away is as near both ways: the tie goes to +. A switch
//! needs only the destination (table routing). On the hypercube this is e-cube routing.
//! It is also what breadth-first shortest paths choose on this port layout (lowest port
//! among the nearest), which the tests check.

use crate::ids::{Device, HostId, SwitchId};
use crate::link::LinkParams;
use crate::topology::shape::{Shape, ShapeCounts, Strategy};
use crate::topology::{Cable, Endpoint, Routing, RoutingPolicy, Topology, TopologyError, room};

mod slabs;

/// The shape of a torus or mesh.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Torus {
    /// switches along each dimension (k_0, …, k_{n−1}), each at least 2
    pub dims: Vec<u32>,
    /// wraparound cables close every dimension into a ring (a torus); without them, a mesh
    pub wrap: bool,
    /// hosts on every switch, at least 1
    pub hosts_per_switch: u32,
}

/// Why a torus cannot be built: the field at fault ([`TorusError`]'s `Display` names it,
/// `torus.dims[1]`) and the rule it breaks ([`TorusError::rule`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TorusError {
    /// no dimension (`dims`)
    NoDimensions,
    /// a dimension of 0 or 1 switches (`dims[i]`)
    TooSmall(usize),
    /// switches without hosts (`hosts_per_switch`)
    NoHosts,
    /// more ports than the simulator models (`dims`)
    TooLarge,
    /// a route through more switches than a packet counts (`dims`)
    RouteTooLong {
        /// the switches the longest dimension-order route crosses
        switches: u64,
    },
}

impl TorusError {
    /// The rule broken.
    pub fn rule(&self) -> String {
        match self {
            TorusError::NoDimensions => "a torus needs at least one dimension".into(),
            TorusError::TooSmall(_) => "every dimension needs at least 2 switches".into(),
            TorusError::NoHosts => "every switch needs at least one host".into(),
            TorusError::TooLarge => "the network has more than 2^26 = 67,108,864 ports (hosts' and switches' \
                                     together), the most vesper models"
                .into(),
            TorusError::RouteTooLong { switches } => format!(
                "its longest dimension-order route crosses {switches} switches; vesper counts at most 65,535 on a \
                 route"
            ),
        }
    }
}

impl std::fmt::Display for TorusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TorusError::TooSmall(i) => write!(f, "torus.dims[{i}]: {}", self.rule()),
            TorusError::NoHosts => write!(f, "torus.hosts_per_switch: {}", self.rule()),
            TorusError::NoDimensions | TorusError::TooLarge | TorusError::RouteTooLong { .. } => {
                write!(f, "torus.dims: {}", self.rule())
            }
        }
    }
}

impl std::error::Error for TorusError {}

impl Torus {
    /// A torus (`wrap`) or mesh of `dims` switches with `hosts_per_switch` hosts each, checked.
    pub fn new(dims: Vec<u32>, wrap: bool, hosts_per_switch: u32) -> Result<Torus, TorusError> {
        let torus = Torus {
            dims,
            wrap,
            hosts_per_switch,
        };
        torus.check()?;
        Ok(torus)
    }

    /// The n-cube: the 2-ary n-mesh (see the module documentation for its ports).
    pub fn hypercube(n: u32, hosts_per_switch: u32) -> Result<Torus, TorusError> {
        // 2^n switches: refused before a list of n dimensions is made.
        if 1u64.checked_shl(n).is_none_or(|switches| switches > super::MAX_PORTS) {
            return Err(TorusError::TooLarge);
        }
        Torus::new(vec![2; n as usize], false, hosts_per_switch)
    }

    /// Checks the rules [`Torus::new`] enforces (the fields are public).
    pub fn check(&self) -> Result<(), TorusError> {
        if self.dims.is_empty() {
            return Err(TorusError::NoDimensions);
        }
        if let Some(d) = self.dims.iter().position(|&k| k < 2) {
            return Err(TorusError::TooSmall(d));
        }
        if self.hosts_per_switch == 0 {
            return Err(TorusError::NoHosts);
        }
        // Every port of the network, hosts' and switches', counted before any is made.
        let switches = self.dims.iter().try_fold(1u64, |n, &k| n.checked_mul(u64::from(k)));
        let ports = u64::try_from(self.dims.len())
            .ok()
            .and_then(|n| n.checked_mul(2)?.checked_add(u64::from(self.hosts_per_switch)));
        let total = switches.zip(ports).and_then(|(s, p)| {
            s.checked_mul(p)?
                .checked_add(s.checked_mul(u64::from(self.hosts_per_switch))?)
        });
        if total.is_none_or(|t| t > super::MAX_PORTS) {
            return Err(TorusError::TooLarge);
        }
        // Packets count the switches they cross: checked before anything is built.
        let longest = self.diameter_switches();
        if longest > super::MAX_ROUTE_SWITCHES {
            return Err(TorusError::RouteTooLong { switches: longest });
        }
        Ok(())
    }

    /// The switches the longest dimension-order route crosses: the diameter's hops and
    /// the first switch.
    fn diameter_switches(&self) -> u64 {
        (0..self.dims.len())
            .map(|d| {
                u64::from(if self.is_ring(d) {
                    self.dims[d] / 2
                } else {
                    self.dims[d] - 1
                })
            })
            .sum::<u64>()
            + 1
    }

    /// Switches N = k_0·…·k_{n−1}.
    pub fn switches(&self) -> u32 {
        self.dims
            .iter()
            .try_fold(1u32, |n, &k| n.checked_mul(k))
            .unwrap_or(u32::MAX)
    }

    /// Hosts: N · hosts_per_switch.
    pub fn hosts(&self) -> u32 {
        self.switches().saturating_mul(self.hosts_per_switch)
    }

    /// Ports of every switch: its hosts, then two per dimension.
    pub fn ports(&self) -> u32 {
        self.hosts_per_switch + 2 * self.dims.len() as u32
    }

    /// Whether dimension `d` is a ring: wrapped, with more than two switches.
    pub fn is_ring(&self, d: usize) -> bool {
        self.wrap && self.dims.get(d).is_some_and(|&k| k > 2)
    }

    /// Whether some dimension closes a cycle of cables (a wrapped dimension of more than
    /// two switches): dimension-order routing then has cyclic channel dependencies.
    pub fn has_rings(&self) -> bool {
        (0..self.dims.len()).any(|d| self.is_ring(d))
    }

    /// Cables, host cables included: per dimension, N/k·k cables on a ring, N/k·(k − 1)
    /// otherwise.
    pub fn links(&self) -> u64 {
        let n = u64::from(self.switches());
        let switch_cables: u64 = (0..self.dims.len())
            .map(|d| {
                let k = u64::from(self.dims[d]);
                n / k * if self.is_ring(d) { k } else { k - 1 }
            })
            .sum();
        u64::from(self.hosts()) + switch_cables
    }

    /// The largest number of switch-to-switch hops of a route: per dimension ⌊k/2⌋ on a
    /// ring, k − 1 otherwise.
    pub fn diameter(&self) -> u32 {
        (0..self.dims.len())
            .map(|d| {
                if self.is_ring(d) {
                    self.dims[d] / 2
                } else {
                    self.dims[d] - 1
                }
            })
            .sum()
    }

    /// Cables cut by halving the largest dimension k_max: its N/k_max lines each lose
    /// two cables on a ring (k_max > 2, wrapped), one otherwise. So 2·N/k_max on a
    /// torus, N/k_max on a mesh, 2^(n−1) on the n-cube.
    pub fn bisection_links(&self) -> u64 {
        let Some((d, &k)) = self.dims.iter().enumerate().max_by_key(|&(d, &k)| (k, usize::MAX - d)) else {
            return 0;
        };
        let lines = u64::from(self.switches() / k);
        if self.is_ring(d) { 2 * lines } else { lines }
    }

    /// The dimension switch port `port` leads along (`None` for host ports).
    pub fn port_dimension(&self, port: u32) -> Option<u32> {
        let d = port.checked_sub(self.hosts_per_switch)? / 2;
        (d < self.dims.len() as u32).then_some(d)
    }

    /// The network, every cable alike, routed in dimension order. Cables: the host
    /// cables in host order, then for each switch in order and each dimension the
    /// cable from its + port.
    pub fn topology(&self, link: LinkParams) -> Topology {
        self.made(
            link,
            Vec::with_capacity(usize::try_from(self.links()).unwrap_or(0)),
            Vec::new(),
        )
    }

    /// [`Torus::topology`], or [`TopologyError::NoRoom`] instead of the allocator's
    /// abort.
    pub fn try_topology(&self, link: LinkParams) -> Result<Topology, TopologyError> {
        let cables = room(usize::try_from(self.links()).unwrap_or(usize::MAX), "cables")?;
        let switch_ports = room(self.switches() as usize, "switches")?;
        Ok(self.made(link, cables, switch_ports))
    }

    /// The topology, its cables and switches' ports pushed onto `cables` and
    /// `switch_ports` (empty, with room for them).
    fn made(&self, link: LinkParams, mut cables: Vec<Cable>, mut switch_ports: Vec<u32>) -> Topology {
        let c = self.hosts_per_switch;
        let switch = |s: u32, port: u32| Endpoint {
            device: Device::Switch(SwitchId(s)),
            port,
        };
        cables.extend((0..self.hosts()).map(|h| Cable {
            a: Endpoint {
                device: Device::Host(HostId(h)),
                port: 0,
            },
            b: switch(h / c, h % c),
            link,
        }));
        for s in 0..self.switches() {
            let mut stride = 1;
            for (d, &k) in self.dims.iter().enumerate() {
                let x = (s / stride) % k;
                let next = if x + 1 < k {
                    Some(s + stride)
                } else if self.is_ring(d) {
                    Some(s - x * stride)
                } else {
                    None
                };
                if let Some(t) = next {
                    let plus = c + 2 * d as u32;
                    cables.push(Cable {
                        a: switch(s, plus),
                        b: switch(t, plus + 1),
                        link,
                    });
                }
                stride *= k;
            }
        }
        switch_ports.resize(self.switches() as usize, self.ports());
        Topology {
            hosts: self.hosts(),
            switch_ports,
            cables,
            routing: Routing::DimensionOrder(self.clone()),
        }
    }

    /// Dimension order: the output port of `switch` towards host `dst`. The first
    /// dimension in which the switch and the destination's switch differ, the shorter
    /// way round (ties to +); the host's port once there.
    pub fn dimension_order(&self, switch: SwitchId, dst: HostId) -> u32 {
        let c = self.hosts_per_switch;
        let target = dst.0 / c;
        let mut stride = 1;
        for (d, &k) in self.dims.iter().enumerate() {
            let (here, there) = ((switch.0 / stride) % k, (target / stride) % k);
            stride *= k;
            if here != there {
                let forward = (there + k - here) % k;
                let plus = if self.is_ring(d) {
                    forward <= k - forward
                } else {
                    there > here
                };
                return c + 2 * d as u32 + u32::from(!plus);
            }
        }
        dst.0 % c
    }
}

/// `8×8×8 torus`, `4×4 mesh`, `6-cube`, with the hosts per switch when not one; routed
/// in dimension order whatever the policy (descriptions allow no other); cut into slabs.
impl Shape for Torus {
    fn name(&self) -> String {
        let dims: Vec<String> = self.dims.iter().map(u32::to_string).collect();
        let name = if !self.wrap && self.dims.iter().all(|&k| k == 2) {
            format!("{}-cube", self.dims.len())
        } else {
            format!("{} {}", dims.join("×"), if self.wrap { "torus" } else { "mesh" })
        };
        match self.hosts_per_switch {
            1 => name,
            n => format!("{name}, {n} hosts per switch"),
        }
    }

    fn counts(&self) -> ShapeCounts {
        let switches = u64::from(self.switches());
        let (hosts, links) = (u64::from(self.hosts()), self.links());
        ShapeCounts {
            hosts,
            switches,
            switch_ports: switches * u64::from(self.ports()),
            cables: links,
            switches_with_hosts: switches,
            switch_cables: links - hosts,
        }
    }

    fn try_topology(&self, link: LinkParams) -> Result<Topology, TopologyError> {
        Torus::try_topology(self, link)
    }

    fn routing(&self, _policy: &RoutingPolicy) -> Option<Routing> {
        Some(Routing::DimensionOrder(self.clone()))
    }

    fn diameter_links(&self) -> Option<u32> {
        // Host to switch, the switch hops, switch to host.
        Some(self.diameter() + 2)
    }

    fn bisection_cables(&self) -> Option<u64> {
        Some(self.bisection_links())
    }

    fn cut(&self, parts: u32) -> Option<(Vec<u32>, Strategy)> {
        let (of_switch, dimension) = slabs::partition(self, parts)?;
        Some((of_switch, Strategy::Slabs { dimension }))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::topology::{RouteTable, Wiring, wire};

    fn torus(dims: &[u32], wrap: bool, hosts_per_switch: u32) -> Torus {
        Torus::new(dims.to_vec(), wrap, hosts_per_switch).expect("valid")
    }

    #[test]
    fn counts() {
        // (shape, switches, switch cables, diameter, bisection)
        let cases = [
            (torus(&[4, 4, 4], true, 1), 64, 192, 6, 32),
            (torus(&[8, 8], false, 1), 64, 112, 14, 8),
            (Torus::hypercube(4, 1).expect("valid"), 16, 32, 4, 8),
            (torus(&[3, 4], true, 2), 12, 24, 3, 6),
            // A torus dimension of 2 gets one cable per pair, not two.
            (torus(&[2, 4], true, 1), 8, 4 + 8, 3, 4),
            (torus(&[2, 2], true, 1), 4, 4, 2, 2),
            (torus(&[5], false, 3), 5, 4, 4, 1),
        ];
        for (t, switches, cables, diameter, bisection) in cases {
            assert_eq!(t.switches(), switches, "{t:?}");
            assert_eq!(t.links() - u64::from(t.hosts()), cables, "{t:?}");
            assert_eq!(t.diameter(), diameter, "{t:?}");
            assert_eq!(t.bisection_links(), bisection, "{t:?}");
            let topology = t.topology(LinkParams::default());
            assert_eq!(topology.cables.len() as u64, t.links(), "{t:?}");
            assert_eq!(topology.hosts, switches * t.hosts_per_switch);
            wire(&topology).expect("valid wiring");
        }
        assert!(torus(&[2, 3], true, 1).has_rings());
        assert!(!torus(&[2, 2], true, 1).has_rings());
        assert!(!torus(&[4, 4], false, 1).has_rings());
        let t = torus(&[3, 4], true, 2);
        assert_eq!(
            (0..7).map(|p| t.port_dimension(p)).collect::<Vec<_>>(),
            [None, None, Some(0), Some(0), Some(1), Some(1), None]
        );
    }

    #[test]
    fn bad_shapes_are_refused_with_the_rule() {
        let message = |dims: &[u32], hosts| Torus::new(dims.to_vec(), true, hosts).err().map(|e| e.to_string());
        assert_eq!(
            message(&[4, 1], 1).as_deref(),
            Some("torus.dims[1]: every dimension needs at least 2 switches")
        );
        assert_eq!(
            message(&[0], 1).as_deref(),
            Some("torus.dims[0]: every dimension needs at least 2 switches")
        );
        assert_eq!(
            message(&[], 1).as_deref(),
            Some("torus.dims: a torus needs at least one dimension")
        );
        assert_eq!(
            message(&[4, 4], 0).as_deref(),
            Some("torus.hosts_per_switch: every switch needs at least one host")
        );
        assert_eq!(
            message(&[65_536, 65_536], 1).as_deref(),
            Some(
                "torus.dims: the network has more than 2^26 = 67,108,864 ports (hosts' and switches' together), the \
                 most vesper models"
            )
        );
        assert_eq!(message(&[1024, 1024, 1024], 1).map(|_| ()), Some(()));
        assert_eq!(Torus::hypercube(0, 1), Err(TorusError::NoDimensions));
        // 2^32 dimensions would be a list of 16 GiB: refused by their count.
        assert_eq!(Torus::hypercube(u32::MAX, 1), Err(TorusError::TooLarge));
        // 2^n switches of 2n + 1 ports and 2^n hosts: 44,040,192 ports at n = 20.
        assert!(Torus::hypercube(20, 1).is_ok());
        assert_eq!(Torus::hypercube(21, 1), Err(TorusError::TooLarge));
        // A routing for another shape than the cables'.
        let mut topology = torus(&[3, 3], true, 1).topology(LinkParams::default());
        topology.routing = Routing::DimensionOrder(torus(&[3, 4], true, 1));
        let wiring = wire(&topology).expect("valid wiring");
        assert_eq!(
            RouteTable::build(&topology, &wiring)
                .err()
                .map(|e| e.to_string())
                .as_deref(),
            Some("routing: the torus has 12 switches and 12 hosts, the topology 9 switches and 9 hosts")
        );
        topology.routing = Routing::DimensionOrder(Torus {
            dims: vec![9, 1],
            wrap: true,
            hosts_per_switch: 1,
        });
        assert_eq!(
            RouteTable::build(&topology, &wiring)
                .err()
                .map(|e| e.to_string())
                .as_deref(),
            Some("routing: torus.dims[1]: every dimension needs at least 2 switches")
        );
    }

    /// Switch-to-switch hop distances from `from`, by breadth-first search over the cables.
    fn distances(topology: &Topology, wiring: &Wiring, from: u32) -> Vec<u32> {
        let mut distance = vec![u32::MAX; topology.switch_ports.len()];
        distance[from as usize] = 0;
        let mut queue = VecDeque::from([from]);
        while let Some(s) = queue.pop_front() {
            for port in 0..topology.switch_ports[s as usize] {
                let end = Endpoint {
                    device: Device::Switch(SwitchId(s)),
                    port,
                };
                if let Some((
                    Endpoint {
                        device: Device::Switch(n),
                        ..
                    },
                    _,
                )) = wiring.peer[wiring.port(end)]
                    && distance[n.index()] == u32::MAX
                {
                    distance[n.index()] = distance[s as usize] + 1;
                    queue.push_back(n.0);
                }
            }
        }
        distance
    }

    #[test]
    fn every_route_is_minimal_and_in_dimension_order() {
        for t in [
            torus(&[3, 4], true, 1),
            torus(&[3, 3], false, 1),
            torus(&[2, 5], true, 2),
            Torus::hypercube(3, 1).expect("valid"),
            torus(&[4, 3, 2], true, 1),
        ] {
            let topology = t.topology(LinkParams::default());
            let wiring = wire(&topology).expect("valid wiring");
            let routes = RouteTable::build(&topology, &wiring).expect("routable");
            let c = t.hosts_per_switch;
            for src in 0..t.hosts() {
                let distance = distances(&topology, &wiring, src / c);
                for dst in 0..t.hosts() {
                    // Follow the tables from the source's switch.
                    let mut at = wiring.peer[wiring.port_base[src as usize] as usize]
                        .expect("connected")
                        .0;
                    let mut taken = Vec::new();
                    while let Device::Switch(s) = at.device {
                        assert!(taken.len() <= t.diameter() as usize, "{t:?} {src} → {dst}: loop");
                        let port = routes.next_port(s, HostId(dst));
                        at = wiring.peer[wiring.port(Endpoint {
                            device: at.device,
                            port,
                        })]
                        .expect("routes use connected ports")
                        .0;
                        taken.push(port);
                    }
                    assert_eq!(at.device, Device::Host(HostId(dst)), "{t:?} {src} → {dst}");
                    let hops = taken.len() as u32 - 1;
                    assert_eq!(hops, distance[(dst / c) as usize], "{t:?} {src} → {dst}: {taken:?}");
                    // Dimension order: the ports never go back to an earlier dimension,
                    // and keep one direction within a dimension.
                    let ring_ports = &taken[..taken.len() - 1];
                    assert!(
                        ring_ports.windows(2).all(|w| w[0] <= w[1]),
                        "{t:?} {src} → {dst}: {taken:?}"
                    );
                    let mut dims: Vec<_> = ring_ports.iter().map(|&p| t.port_dimension(p)).collect();
                    dims.dedup();
                    let mut ports = ring_ports.to_vec();
                    ports.dedup();
                    assert_eq!(ports.len(), dims.len(), "{t:?} {src} → {dst}: {taken:?}");
                }
            }
            // Breadth-first shortest paths (lowest port among the nearest) choose the same.
            let bfs = RouteTable::shortest_paths(&topology, &wiring).expect("connected");
            for s in 0..t.switches() {
                for h in 0..t.hosts() {
                    let (s, h) = (SwitchId(s), HostId(h));
                    assert_eq!(bfs.next_port(s, h), routes.next_port(s, h), "{t:?}");
                }
            }
        }
    }

    #[test]
    fn ties_half_way_round_go_plus() {
        let t = torus(&[4, 6], true, 1);
        // From switch 0 to switch 2 (two hops either way in dimension 0): the + port.
        assert_eq!(t.dimension_order(SwitchId(0), HostId(2)), 1);
        // From switch 3 to switch 1: the + port again, over the wraparound cable.
        assert_eq!(t.dimension_order(SwitchId(3), HostId(1)), 1);
        // Dimension 1 (size 6): three rows up from row 0, + (port 3); from row 1 to row 5,
        // two rows down over the wraparound, − (port 4).
        assert_eq!(t.dimension_order(SwitchId(0), HostId(12)), 3);
        assert_eq!(t.dimension_order(SwitchId(4), HostId(20)), 4);
        // Once there, the host's port.
        assert_eq!(t.dimension_order(SwitchId(5), HostId(5)), 0);
    }

    #[test]
    fn the_same_shape_builds_the_same_network() {
        let build = || torus(&[3, 4, 2], true, 2).topology(LinkParams::default());
        assert_eq!(build(), build());
    }
}
