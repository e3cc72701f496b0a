//! Dragonflies (Kim, Dally, Scott and Abts, 2008): groups of routers joined all to all
//! inside a group by local cables, the groups joined by global cables, and their
//! minimal routing.
//!
//! ```text
//!   group 0                      group 1                     a = 4 routers a group
//!   ┌──────────────────────┐     ┌──────────────────────┐    p hosts on every router
//!   │ r0 ── r1 ── r2 ── r3 │     │ r4 ── r5 ── r6 ── r7 │    h global cables a router
//!   │  (every pair joined) │     │                      │    g groups, at most a·h + 1
//!   └──┬───────────────────┘     └──┬───────────────────┘
//!      └──────── global ────────────┘      … group g − 1
//! ```
//!
//! Routers are numbered group by group: router `r` is router `r mod a` of group
//! `⌊r / a⌋`. Host `n` hangs off router `⌊n / p⌋` on port `n mod p`. Ports of every
//! router: `0..p` are hosts; `p..p + a − 1` are local, to the other routers of the group
//! in order (router `d` reaches router `t` on port `p + t` if `t < d`, `p + t − 1` if
//! `t > d`); `p + a − 1..p + a − 1 + h` are global.
//!
//! **Global cables.** A group has `a·h` global ports, its *slots*: slot `s` is global
//! port `s mod h` of router `⌊s / h⌋`. Slots `0..g − 1` each join the group to one other
//! group, so that every pair of groups is joined by exactly one cable; slots from `g − 1`
//! on stay unconnected (a dragonfly of fewer groups than `a·h + 1`). Which group slot `s`
//! of group `G` reaches is the *arrangement* (the 2008 paper leaves it open; the names
//! are Hastings et al.'s, 2015):
//!
//! - `absolute` (BookSim's `dragonflynew`): group `s` if `s < G`, else `s + 1`. Low
//!   routers of every group reach low groups.
//! - `relative`: group `(G + s + 1) mod g`. Every group reaches the next ones in turn.
//!
//! **Minimal routing**: at most a local hop to the router that holds the slot towards
//! the destination's group, the global cable, and a local hop to the destination's
//! router: three hops between routers at most, one path between two routers. A router
//! needs only the destination (table routing).

use crate::ids::{Device, HostId, SwitchId};
use crate::link::LinkParams;
use crate::time::SimTime;
use crate::topology::shape::{Shape, ShapeCounts, Strategy};
use crate::topology::{Cable, Endpoint, Routing, RoutingPolicy, Topology, TopologyError, room};

pub mod detour;
pub use detour::Detour;

/// How a dragonfly's global cables join its groups (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Arrangement {
    /// slot `s` of group `G` reaches group `s` if `s < G`, else `s + 1` (BookSim's)
    Absolute,
    /// slot `s` of group `G` reaches group `(G + s + 1) mod g`
    Relative,
}

impl Arrangement {
    /// Its name in network files.
    pub fn name(self) -> &'static str {
        match self {
            Arrangement::Absolute => "absolute",
            Arrangement::Relative => "relative",
        }
    }
}

/// The shape of a dragonfly.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Dragonfly {
    /// hosts on every router, at least 1
    pub p: u32,
    /// routers in every group, at least 1
    pub a: u32,
    /// global ports on every router
    pub h: u32,
    /// groups, from 1 to `a·h + 1`
    pub g: u32,
    /// how the global cables join the groups
    pub arrangement: Arrangement,
    /// the global cables' propagation delay (`None`: the link's, as every other
    /// cable's); BookSim's global channels take 10 times its local ones
    pub global_propagation: Option<SimTime>,
}

/// Why a dragonfly cannot be built: the field at fault ([`DragonflyError`]'s `Display`
/// names it) and the rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DragonflyError {
    /// `p`, `a` or `g` is 0
    Zero(&'static str),
    /// more groups than the global ports can join (`g` > `a·h + 1`)
    TooManyGroups {
        /// the groups asked for
        g: u32,
        /// the most the global ports join: `a·h + 1`
        most: u64,
    },
    /// more ports than the simulator models
    TooLarge,
}

impl DragonflyError {
    /// The field at fault: `p`, `a` or `g` (`None`: the network as a whole).
    pub fn field(&self) -> Option<&'static str> {
        match self {
            DragonflyError::Zero(field) => Some(field),
            DragonflyError::TooManyGroups { .. } => Some("g"),
            DragonflyError::TooLarge => None,
        }
    }

    /// The rule broken.
    pub fn rule(&self) -> String {
        match self {
            DragonflyError::Zero(_) => "must be at least 1".into(),
            DragonflyError::TooManyGroups { g, most } => format!(
                "{g} groups need {} global ports a group (one to each other group), but a·h = {} (at most {most} \
                 groups)",
                g - 1,
                most - 1
            ),
            DragonflyError::TooLarge => "the network has more than 2^26 = 67,108,864 ports (hosts' and routers' \
                                         together), the most vesper models"
                .into(),
        }
    }
}

impl std::fmt::Display for DragonflyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.field() {
            Some(field) => write!(f, "dragonfly.{field}: {}", self.rule()),
            None => write!(f, "dragonfly: {}", self.rule()),
        }
    }
}

impl std::error::Error for DragonflyError {}

impl Dragonfly {
    /// A dragonfly of `g` groups of `a` routers, each with `p` hosts and `h` global
    /// ports, its global cables arranged by `arrangement`; checked.
    pub fn new(p: u32, a: u32, h: u32, g: u32, arrangement: Arrangement) -> Result<Dragonfly, DragonflyError> {
        let d = Dragonfly {
            p,
            a,
            h,
            g,
            arrangement,
            global_propagation: None,
        };
        d.check()?;
        Ok(d)
    }

    /// The same dragonfly with global cables of propagation delay `global` (`None`: the
    /// link's).
    pub fn with_global_propagation(self, global: Option<SimTime>) -> Dragonfly {
        Dragonfly {
            global_propagation: global,
            ..self
        }
    }

    /// The balanced dragonfly of `p` hosts a router: `a = 2p`, `h = p`, `g = a·h + 1`
    /// (BookSim's `dragonflynew` of `k = p`: 1,056 hosts for `p = 4`).
    pub fn balanced(p: u32, arrangement: Arrangement) -> Result<Dragonfly, DragonflyError> {
        let (a, h) = (p.saturating_mul(2), p);
        let g = a.saturating_mul(h).saturating_add(1);
        Dragonfly::new(p, a, h, g, arrangement)
    }

    /// Checks the rules [`Dragonfly::new`] enforces (the fields are public).
    pub fn check(&self) -> Result<(), DragonflyError> {
        for (field, value) in [("p", self.p), ("a", self.a), ("g", self.g)] {
            if value == 0 {
                return Err(DragonflyError::Zero(field));
            }
        }
        let most = u64::from(self.a) * u64::from(self.h) + 1;
        if u64::from(self.g) > most {
            return Err(DragonflyError::TooManyGroups { g: self.g, most });
        }
        let routers = u64::from(self.a) * u64::from(self.g);
        let ports = routers * (u64::from(self.p) * 2 + u64::from(self.a) - 1 + u64::from(self.h));
        if ports > super::MAX_PORTS {
            return Err(DragonflyError::TooLarge);
        }
        Ok(())
    }

    /// Routers: `a·g`.
    pub fn routers(&self) -> u32 {
        self.a * self.g
    }

    /// Hosts: `p·a·g`.
    pub fn hosts(&self) -> u32 {
        self.p * self.routers()
    }

    /// Ports of every router: `p + a − 1 + h`.
    pub fn ports(&self) -> u32 {
        self.p + self.a - 1 + self.h
    }

    /// Local cables: `a·(a − 1)/2` a group.
    pub fn local_cables(&self) -> u64 {
        u64::from(self.g) * u64::from(self.a) * u64::from(self.a - 1) / 2
    }

    /// Global cables: one between every pair of groups.
    pub fn global_cables(&self) -> u64 {
        u64::from(self.g) * u64::from(self.g - 1) / 2
    }

    /// What port `port` of a router leads to.
    pub fn port_kind(&self, port: u32) -> PortKind {
        if port < self.p {
            PortKind::Host
        } else if port < self.p + self.a - 1 {
            PortKind::Local
        } else {
            PortKind::Global
        }
    }

    /// The port of router `d` of a group to router `t` of the same group.
    fn local_port(&self, d: u32, t: u32) -> u32 {
        self.p + if t < d { t } else { t - 1 }
    }

    /// The router (in its group) and port of slot `s`.
    fn slot_port(&self, s: u32) -> (u32, u32) {
        (s / self.h, self.p + self.a - 1 + s % self.h)
    }

    /// The group slot `s` of group `group` reaches.
    fn slot_target(&self, group: u32, s: u32) -> u32 {
        match self.arrangement {
            Arrangement::Absolute => {
                if s < group {
                    s
                } else {
                    s + 1
                }
            }
            Arrangement::Relative => ((u64::from(group) + u64::from(s) + 1) % u64::from(self.g)) as u32,
        }
    }

    /// The slot of group `group` that reaches group `to` (another).
    fn slot_towards(&self, group: u32, to: u32) -> u32 {
        match self.arrangement {
            Arrangement::Absolute => {
                if to < group {
                    to
                } else {
                    to - 1
                }
            }
            Arrangement::Relative => {
                ((u64::from(to) + u64::from(self.g) - u64::from(group) - 1) % u64::from(self.g)) as u32
            }
        }
    }

    /// Minimal routing: the output port of router `switch` towards host `dst` (see the
    /// [module documentation](self)).
    pub fn minimal(&self, switch: SwitchId, dst: HostId) -> u32 {
        let target = dst.0 / self.p;
        if switch.0 == target {
            return dst.0 % self.p;
        }
        self.towards(switch.0, target)
    }

    /// The output port of router `r` on the minimal path to router `target` (another).
    pub fn towards(&self, r: u32, target: u32) -> u32 {
        let (group, d) = (r / self.a, r % self.a);
        let (to_group, t) = (target / self.a, target % self.a);
        if group == to_group {
            return self.local_port(d, t);
        }
        let (gateway, port) = self.slot_port(self.slot_towards(group, to_group));
        if gateway == d {
            port
        } else {
            self.local_port(d, gateway)
        }
    }

    /// The hops between routers of the minimal path from router `from` to router `to`:
    /// 0 to 3.
    pub fn router_hops(&self, from: u32, to: u32) -> u32 {
        let (group, to_group) = (from / self.a, to / self.a);
        if from == to {
            return 0;
        }
        if group == to_group {
            return 1;
        }
        let gateway = group * self.a + self.slot_towards(group, to_group) / self.h;
        let arrival = to_group * self.a + self.slot_towards(to_group, group) / self.h;
        u32::from(from != gateway) + 1 + u32::from(arrival != to)
    }

    /// [`Shape::try_topology`]: the host cables in host order, then each group's local
    /// cables, then the global cables from the lower group of each pair.
    fn made(&self, link: LinkParams) -> Result<Topology, TopologyError> {
        let total = u64::from(self.hosts()) + self.local_cables() + self.global_cables();
        let mut cables = room(usize::try_from(total).unwrap_or(usize::MAX), "cables")?;
        let mut switch_ports = room(self.routers() as usize, "switches")?;
        let router = |r: u32, port: u32| Endpoint {
            device: Device::Switch(SwitchId(r)),
            port,
        };
        cables.extend((0..self.hosts()).map(|n| Cable {
            a: Endpoint {
                device: Device::Host(HostId(n)),
                port: 0,
            },
            b: router(n / self.p, n % self.p),
            link,
        }));
        for group in 0..self.g {
            let base = group * self.a;
            for d in 0..self.a {
                for t in d + 1..self.a {
                    cables.push(Cable {
                        a: router(base + d, self.local_port(d, t)),
                        b: router(base + t, self.local_port(t, d)),
                        link,
                    });
                }
            }
        }
        let global = LinkParams {
            propagation: self.global_propagation.unwrap_or(link.propagation),
            ..link
        };
        for group in 0..self.g {
            for s in 0..self.g - 1 {
                let to = self.slot_target(group, s);
                if to < group {
                    continue;
                }
                let (d, port) = self.slot_port(s);
                let (t, far_port) = self.slot_port(self.slot_towards(to, group));
                cables.push(Cable {
                    a: router(group * self.a + d, port),
                    b: router(to * self.a + t, far_port),
                    link: global,
                });
            }
        }
        switch_ports.resize(self.routers() as usize, self.ports());
        Ok(Topology {
            hosts: self.hosts(),
            switch_ports,
            cables,
            routing: Routing::DragonflyMinimal(self.clone()),
        })
    }

    /// Cables cut between groups `0..⌊g/2⌋` and the rest; when `g` is odd, the middle
    /// group's first `a/2` routers go with the first half (`None` when `g` and `a` are
    /// both odd: the hosts do not halve along routers).
    fn half_cut(&self) -> Option<u64> {
        let (g, a) = (u64::from(self.g), u64::from(self.a));
        let half = g / 2;
        if g % 2 == 0 {
            return Some(half * half);
        }
        if a % 2 == 1 {
            return None;
        }
        // Groups below `half` on side A, above it on side B, the middle one split.
        let middle = self.g / 2;
        let mut cut = half * half + (a / 2) * (a / 2);
        for s in 0..self.g - 1 {
            let to = self.slot_target(middle, s);
            let on_a = self.slot_port(s).0 < self.a / 2;
            if on_a != (to < middle) {
                cut += 1;
            }
        }
        Some(cut)
    }
}

/// What a dragonfly router's port leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortKind {
    /// a host
    Host,
    /// another router of the group
    Local,
    /// a router of another group
    Global,
}

/// `dragonfly (p 4, a 8, h 4, g 33, absolute)`; routed minimally (or by shortest
/// paths); cut by groups.
impl Shape for Dragonfly {
    fn name(&self) -> String {
        let global = self
            .global_propagation
            .map(|t| format!(", global cables + {t}"))
            .unwrap_or_default();
        format!(
            "dragonfly (p {}, a {}, h {}, g {}, {}{global})",
            self.p,
            self.a,
            self.h,
            self.g,
            self.arrangement.name()
        )
    }

    fn counts(&self) -> ShapeCounts {
        let (hosts, routers) = (u64::from(self.hosts()), u64::from(self.routers()));
        let switch_cables = self.local_cables() + self.global_cables();
        ShapeCounts {
            hosts,
            switches: routers,
            switch_ports: routers * u64::from(self.ports()),
            cables: hosts + switch_cables,
            switches_with_hosts: routers,
            switch_cables,
        }
    }

    fn try_topology(&self, link: LinkParams) -> Result<Topology, TopologyError> {
        self.made(link)
    }

    fn routing(&self, policy: &RoutingPolicy) -> Option<Routing> {
        let detour = |seed, ugal_threshold| {
            Routing::DragonflyDetour(Detour {
                dragonfly: self.clone(),
                seed,
                ugal_threshold,
            })
        };
        match *policy {
            RoutingPolicy::Minimal => Some(Routing::DragonflyMinimal(self.clone())),
            RoutingPolicy::Valiant { seed } => Some(detour(seed, None)),
            RoutingPolicy::Ugal { seed, threshold } => Some(detour(seed, Some(threshold))),
            _ => None,
        }
    }

    fn diameter_links(&self) -> Option<u32> {
        // Host to router, the hops between routers, router to host.
        let hops = match (self.g, self.a) {
            (1, 1) => return Some(if self.p > 1 { 2 } else { 0 }),
            (1, _) | (_, 1) => 1,
            _ => 3,
        };
        Some(hops + 2)
    }

    fn bisection_cables(&self) -> Option<u64> {
        self.half_cut()
    }

    fn cable_kinds(&self) -> Vec<(&'static str, u64)> {
        vec![("local", self.local_cables()), ("global", self.global_cables())]
    }

    fn cut(&self, parts: u32) -> Option<(Vec<u32>, Strategy)> {
        // Whole groups in contiguous runs: only global cables are cut.
        (parts <= self.g).then(|| {
            let of_switch = (0..self.routers())
                .map(|r| (u64::from(r / self.a) * u64::from(parts) / u64::from(self.g)) as u32)
                .collect();
            (of_switch, Strategy::Groups)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(p: u32, a: u32, h: u32, g: u32) -> [Dragonfly; 2] {
        [Arrangement::Absolute, Arrangement::Relative].map(|arr| Dragonfly::new(p, a, h, g, arr).expect("valid"))
    }

    #[test]
    fn booksims_example_has_its_sizes() {
        let d = Dragonfly::balanced(4, Arrangement::Absolute).expect("valid");
        assert_eq!((d.a, d.h, d.g), (8, 4, 33));
        assert_eq!((d.hosts(), d.routers(), d.ports()), (1056, 264, 15));
        assert_eq!((d.local_cables(), d.global_cables()), (33 * 28, 528));
    }

    #[test]
    fn every_pair_of_groups_is_joined_once_and_every_slot_used_once() {
        for d in both(2, 4, 2, 9)
            .into_iter()
            .chain(both(1, 3, 2, 5))
            .chain(both(2, 2, 2, 4))
        {
            let t = d.try_topology(LinkParams::default()).expect("fits");
            let group = |e: &Endpoint| match e.device {
                Device::Switch(s) => Some(s.0 / d.a),
                Device::Host(_) => None,
            };
            let mut pairs = std::collections::BTreeSet::new();
            let mut ends = std::collections::BTreeSet::new();
            for c in &t.cables {
                if let (Some(x), Some(y)) = (group(&c.a), group(&c.b))
                    && x != y
                {
                    assert_eq!(d.port_kind(c.a.port), PortKind::Global, "{d:?}");
                    assert_eq!(d.port_kind(c.b.port), PortKind::Global, "{d:?}");
                    assert!(pairs.insert((x.min(y), x.max(y))), "{d:?}: groups {x} and {y} twice");
                    assert!(ends.insert(c.a) && ends.insert(c.b), "{d:?}: a port used twice");
                }
            }
            assert_eq!(pairs.len() as u64, d.global_cables(), "{d:?}");
        }
    }

    #[test]
    fn the_absolute_arrangement_is_booksims() {
        // p = 2, a = 4, h = 2, g = 9: router 3 of group 3 (slots 6 and 7) reaches groups
        // 7 and 8, at router 1 of each (slot 3), global ports 1 (BookSim's wiring).
        let d = Dragonfly::balanced(2, Arrangement::Absolute).expect("valid");
        assert_eq!((d.slot_target(3, 6), d.slot_target(3, 7)), (7, 8));
        assert_eq!(d.slot_towards(7, 3), 3);
        assert_eq!(d.slot_port(3), (1, 2 + 3 + 1));
        // Router 1 of group 3 holds slots 2 and 3: groups 2 and 4.
        assert_eq!((d.slot_target(3, 2), d.slot_target(3, 3)), (2, 4));
        let relative = Dragonfly::balanced(2, Arrangement::Relative).expect("valid");
        assert_eq!((relative.slot_target(3, 0), relative.slot_target(3, 7)), (4, 2));
    }

    #[test]
    fn minimal_routes_take_at_most_three_hops_between_routers() {
        for d in both(2, 4, 2, 9).into_iter().chain(both(1, 2, 1, 3)) {
            let t = d.try_topology(LinkParams::default()).expect("fits");
            let mut peer = std::collections::BTreeMap::new();
            for c in &t.cables {
                peer.insert(c.a, c.b);
                peer.insert(c.b, c.a);
            }
            for src in 0..d.hosts() {
                for dst in 0..d.hosts() {
                    let mut at = SwitchId(src / d.p);
                    let mut hops = 0;
                    loop {
                        let port = d.minimal(at, HostId(dst));
                        match peer[&Endpoint {
                            device: Device::Switch(at),
                            port,
                        }]
                            .device
                        {
                            Device::Host(h) => {
                                assert_eq!(h.0, dst, "{d:?}");
                                break;
                            }
                            Device::Switch(next) => at = next,
                        }
                        hops += 1;
                        assert!(hops <= 3, "{d:?}: {src} to {dst}");
                    }
                }
            }
        }
    }

    #[test]
    fn router_hops_count_the_minimal_path_and_global_cables_take_their_own_delay() {
        for d in both(2, 4, 2, 9).into_iter().chain(both(1, 3, 2, 5)) {
            let local = SimTime::from_ns(10);
            let d = d.with_global_propagation(Some(SimTime::from_ns(100)));
            let link = LinkParams {
                propagation: local,
                ..LinkParams::default()
            };
            let t = d.try_topology(link).expect("fits");
            let mut peer = std::collections::BTreeMap::new();
            for c in &t.cables {
                peer.insert(c.a, c.b);
                peer.insert(c.b, c.a);
                if let (Device::Switch(x), Device::Switch(y)) = (c.a.device, c.b.device) {
                    let global = x.0 / d.a != y.0 / d.a;
                    assert_eq!(c.link.propagation, SimTime::from_ns(if global { 100 } else { 10 }));
                    assert_eq!(d.port_kind(c.a.port) == PortKind::Global, global);
                } else {
                    assert_eq!(c.link.propagation, local, "host cables keep the link's delay");
                }
            }
            for from in 0..d.routers() {
                for to in 0..d.routers() {
                    let (mut at, mut hops) = (from, 0);
                    while at != to {
                        let port = d.towards(at, to);
                        let end = peer[&Endpoint {
                            device: Device::Switch(SwitchId(at)),
                            port,
                        }];
                        let Device::Switch(next) = end.device else {
                            panic!("{d:?}: {from} to {to} reached a host")
                        };
                        at = next.0;
                        hops += 1;
                        assert!(hops <= 3);
                    }
                    assert_eq!(d.router_hops(from, to), hops, "{d:?}: {from} to {to}");
                }
            }
        }
    }

    #[test]
    fn errors_name_the_field() {
        let e = Dragonfly::new(2, 4, 2, 10, Arrangement::Absolute).expect_err("too many groups");
        assert!(e.to_string().starts_with("dragonfly.g: 10 groups"), "{e}");
        let e = Dragonfly::new(0, 4, 2, 9, Arrangement::Absolute).expect_err("no hosts");
        assert_eq!(e.to_string(), "dragonfly.p: must be at least 1");
        assert_eq!(
            Dragonfly::new(64, 4096, 64, 4096, Arrangement::Absolute),
            Err(DragonflyError::TooLarge)
        );
        // A routing for another dragonfly than the cables'.
        let [d, _] = both(1, 2, 1, 3);
        let mut topology = d.try_topology(LinkParams::default()).expect("fits");
        let [other, _] = both(2, 2, 1, 3);
        topology.routing = Routing::DragonflyMinimal(other);
        let wiring = crate::topology::wire(&topology).expect("valid wiring");
        assert_eq!(
            crate::topology::RouteTable::build(&topology, &wiring)
                .err()
                .map(|e| e.to_string())
                .as_deref(),
            Some("routing: the dragonfly has 6 switches and 12 hosts, the topology 6 switches and 6 hosts")
        );
    }

    #[test]
    fn a_half_cut_counts_the_global_cables_across() {
        // g even: (g/2)² global cables.
        let [d, _] = both(1, 2, 2, 4);
        assert_eq!(d.bisection_cables(), Some(4));
        // g odd, a even: 16 × 16 whole groups, the middle group's 4 × 4 local cables and
        // its global cables that cross.
        // Absolute: the middle group's first half of routers reaches the first half of
        // the groups; relative: every one of its 32 global cables crosses.
        let [absolute, relative] =
            [Arrangement::Absolute, Arrangement::Relative].map(|arr| Dragonfly::balanced(4, arr).expect("valid"));
        assert_eq!(absolute.bisection_cables(), Some(256 + 16));
        assert_eq!(relative.bisection_cables(), Some(256 + 16 + 32));
        let [odd, _] = both(1, 3, 2, 7);
        assert_eq!(odd.bisection_cables(), None);
    }
}
