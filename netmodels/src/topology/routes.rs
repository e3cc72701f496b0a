//! Routes ([`RouteTable`]): where a packet goes at each switch, by tables (closed
//! forms or shortest paths) or by the path its header carries ([`Route`]).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use super::wiring::Wiring;
use super::{
    Detour, Dragonfly, Endpoint, ExplicitRoutes, MAX_ROUTE_SWITCHES, MultipathPolicy, Routing, Topology, TopologyError,
    Torus, filled, room, xgft,
};
use crate::ids::{Device, HostId, SwitchId};
use crate::rng::Rng;

/// `route` crosses `switches` switches: refused if packets cannot count them.
pub(super) fn check_route_length(switches: u64, route: impl FnOnce() -> String) -> Result<(), TopologyError> {
    if switches > MAX_ROUTE_SWITCHES {
        return Err(TopologyError::RouteTooLong {
            route: route(),
            switches,
        });
    }
    Ok(())
}

/// Routes: for table routing, the output port of each switch towards each destination;
/// for source routing, the list of output ports of each (source, destination) path,
/// computed once per pair when first used and shared by every packet of the pair.
///
/// Table routes of arbitrary topologies come from breadth-first search from each
/// destination: a switch forwards on the lowest-numbered port that leads one hop closer.
/// Shortest paths, deterministic (see [`ShortestPaths`]).
#[derive(Debug, Clone)]
pub(crate) struct RouteTable {
    hosts: u32,
    /// table routing: computed at each hop, or looked up in shortest-path tables
    closed: Option<ClosedForm>,
    /// source routing: how paths are computed ([`Routing::xgft_path`])
    source: Option<Routing>,
    /// dimension-order routing: the torus, whose rings flow control must know
    torus: Option<Torus>,
    /// source routing: path id of each (source, destination) pair used so far
    path_of: BTreeMap<(u32, u32), u32>,
    /// source routing: the output port at each switch of each path
    paths: Vec<Vec<u32>>,
    /// explicit routing: the given paths
    explicit: Option<Arc<ExplicitRoutes>>,
    /// explicit routing: the port of each host at its switch (a message to itself)
    self_port: Vec<u32>,
    /// explicit round-robin: the next alternative of each pair
    turns: Vec<u32>,
    /// explicit random: the draws
    rng: Option<Rng>,
    /// dragonfly Valiant or UGAL-L: the draws and the choice
    detour: Option<Detour>,
}

#[cfg(test)]
thread_local! {
    /// The ports, cables and switches the last shortest-path search of this thread
    /// looked at.
    pub(super) static SHORTEST_PATH_STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Table routings: a closed form, or shortest-path tables.
#[derive(Debug, Clone)]
enum ClosedForm {
    DModK(xgft::DModKRoutes),
    DimensionOrder(Torus),
    Dragonfly(Dragonfly),
    ShortestPath(ShortestPaths),
}

/// Shortest-path tables, one column per switch that hosts hang off: the hosts of one
/// switch are the same distance from every other switch, so every other switch takes
/// the same port towards each of them; only their own switch tells them apart (by the
/// port each hangs off). A crossbar's table is then its one switch's port of each
/// host, and a tree's has a column per leaf switch instead of one per host.
///
/// ```text
///   host h ──▶ attach[h] = (its switch s, s's port to h)
///   switch t ≠ s: ports[column[s] · switches + t]
/// ```
#[derive(Debug, Clone)]
pub(crate) struct ShortestPaths {
    /// per host: its switch and that switch's port to it (`u32::MAX`: no switch)
    attach: Vec<(u32, u32)>,
    /// per switch: its column in `ports` (`u32::MAX`: no host hangs off it)
    column: Vec<u32>,
    /// `ports[column · switches + switch]`: the port of `switch` towards the hosts of
    /// the column's switch (`u32::MAX` at that switch itself)
    ports: Vec<u32>,
    switches: u32,
}

impl ShortestPaths {
    /// The output port of `switch` towards `host`.
    fn port(&self, switch: SwitchId, host: HostId) -> u32 {
        let Some(&(at, port)) = self.attach.get(host.index()) else {
            return u32::MAX;
        };
        if at == switch.0 {
            return port;
        }
        match self.column.get(at as usize) {
            Some(&column) if column != u32::MAX => {
                self.ports[column as usize * self.switches as usize + switch.index()]
            }
            _ => u32::MAX,
        }
    }
}

/// How a packet finds its way: by the switches' tables, or by the path in its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// each switch looks the destination up
    Table,
    /// the header carries this path (an id into the route table's paths)
    Source(u32),
    /// the header carries this given path (an id into the explicit routes)
    Explicit(u32),
    /// dragonfly: minimal to router `via`, `hops` switches on, then minimal to the
    /// destination (Valiant, or UGAL-L's detour)
    Detour {
        /// the intermediate router
        via: u32,
        /// its index on the path (the source's router is 0)
        hops: u8,
    },
    /// dragonfly UGAL-L, not yet chosen: the source router chooses between the
    /// minimal path and [`Route::Detour`] through `via` ([`RouteTable::choose`])
    Choose {
        /// the intermediate router
        via: u32,
        /// its index on the path
        hops: u8,
    },
}

impl RouteTable {
    /// The bytes of the routes kept from the build on, as built (see
    /// [`crate::footprint`]; the explicit routes themselves are shared, not counted).
    #[cfg(test)]
    pub(crate) fn counted_bytes(&self) -> u64 {
        let bytes = |capacity: usize, size: usize| (capacity * size) as u64;
        let closed = match &self.closed {
            Some(ClosedForm::DModK(routes)) => routes.counted_bytes(),
            Some(ClosedForm::ShortestPath(t)) => {
                bytes(t.attach.capacity(), size_of::<(u32, u32)>())
                    + bytes(t.column.capacity(), size_of::<u32>())
                    + bytes(t.ports.capacity(), size_of::<u32>())
            }
            Some(ClosedForm::DimensionOrder(_) | ClosedForm::Dragonfly(_)) | None => 0,
        };
        closed + bytes(self.self_port.capacity(), size_of::<u32>()) + bytes(self.turns.capacity(), size_of::<u32>())
    }

    /// The routes of `topology`'s routing.
    pub(crate) fn build(topology: &Topology, wiring: &Wiring) -> Result<RouteTable, TopologyError> {
        let xgft = match &topology.routing {
            Routing::DModK(x) | Routing::SModK(x) | Routing::Random { xgft: x, .. } => Some(x),
            Routing::PatternAware(routes) => Some(routes.xgft()),
            Routing::ShortestPath
            | Routing::DimensionOrder(_)
            | Routing::DragonflyMinimal(_)
            | Routing::DragonflyDetour(_)
            | Routing::Explicit(_) => None,
        };
        if let Some(x) = xgft {
            check_route_length(x.longest_route(), || "the longest route of the XGFT".into())?;
        }
        match &topology.routing {
            Routing::ShortestPath => RouteTable::shortest_paths(topology, wiring),
            // Closed forms instead of switches × hosts tables: cheap to compute at every
            // hop, and a 32,768-host network would need gigabytes of table.
            Routing::DModK(x) => Ok(RouteTable {
                closed: Some(ClosedForm::DModK(x.d_mod_k_routes())),
                ..RouteTable::table(topology.hosts)
            }),
            Routing::DimensionOrder(t) => {
                t.check()?;
                check_shape("torus", (t.switches(), t.hosts()), topology)?;
                Ok(RouteTable {
                    torus: Some(t.clone()),
                    closed: Some(ClosedForm::DimensionOrder(t.clone())),
                    ..RouteTable::table(topology.hosts)
                })
            }
            Routing::DragonflyMinimal(d) => {
                d.check()?;
                check_shape("dragonfly", (d.routers(), d.hosts()), topology)?;
                Ok(RouteTable {
                    closed: Some(ClosedForm::Dragonfly(d.clone())),
                    ..RouteTable::table(topology.hosts)
                })
            }
            Routing::DragonflyDetour(x) => {
                let d = &x.dragonfly;
                d.check()?;
                check_shape("dragonfly", (d.routers(), d.hosts()), topology)?;
                Ok(RouteTable {
                    closed: Some(ClosedForm::Dragonfly(d.clone())),
                    detour: Some(x.clone()),
                    ..RouteTable::table(topology.hosts)
                })
            }
            Routing::Explicit(routes) => RouteTable::explicit(topology, wiring, routes),
            Routing::SModK(_) | Routing::Random { .. } | Routing::PatternAware(_) => Ok(RouteTable {
                source: Some(topology.routing.clone()),
                ..RouteTable::table(topology.hosts)
            }),
        }
    }

    fn table(hosts: u32) -> RouteTable {
        RouteTable {
            hosts,
            closed: None,
            source: None,
            torus: None,
            path_of: BTreeMap::new(),
            paths: Vec::new(),
            explicit: None,
            self_port: Vec::new(),
            turns: Vec::new(),
            rng: None,
            detour: None,
        }
    }

    /// Explicit routes, checked: every pair of distinct hosts has a path, and every
    /// path leads from its source's switch to its destination.
    fn explicit(
        topology: &Topology,
        wiring: &Wiring,
        routes: &Arc<ExplicitRoutes>,
    ) -> Result<RouteTable, TopologyError> {
        let hosts = topology.hosts;
        if routes.hosts() != hosts {
            return Err(TopologyError::RoutesHosts {
                routes: routes.hosts(),
                hosts,
            });
        }
        let host_peer = |h: u32| wiring.peer[wiring.port_base[h as usize] as usize].map(|(end, _)| end);
        for src in 0..hosts {
            for dst in 0..hosts {
                let alternatives = routes.alternatives(HostId(src), HostId(dst));
                if alternatives.is_empty() && src != dst {
                    return Err(TopologyError::NoRoute { src, dst });
                }
                for (route, id) in alternatives.enumerate() {
                    let path = routes.path(id);
                    check_route_length(path.len() as u64, || {
                        format!("route {route} from host{src} to host{dst}")
                    })?;
                    let mut at = host_peer(src);
                    for (hop, &port) in path.iter().enumerate() {
                        let here = match at {
                            Some(Endpoint {
                                device: Device::Switch(s),
                                ..
                            }) => s,
                            _ => {
                                return Err(TopologyError::RouteReachesHost {
                                    route,
                                    src,
                                    dst,
                                    hop,
                                    ports: path.len(),
                                });
                            }
                        };
                        if port >= wiring.switch_ports(here) {
                            return Err(TopologyError::RouteNoSuchPort {
                                route,
                                src,
                                dst,
                                switch: here.0,
                                port,
                            });
                        }
                        let next = wiring.port(Endpoint {
                            device: Device::Switch(here),
                            port,
                        });
                        at = wiring.peer[next].map(|(end, _)| end);
                        if at.is_none() {
                            return Err(TopologyError::RouteNoCable {
                                route,
                                src,
                                dst,
                                switch: here.0,
                                port,
                            });
                        }
                    }
                    if at.map(|e| e.device) != Some(Device::Host(HostId(dst))) {
                        return Err(TopologyError::RouteEndsElsewhere {
                            route,
                            src,
                            dst,
                            end: at,
                        });
                    }
                }
            }
        }
        let self_port = (0..hosts)
            .map(|h| host_peer(h).map_or(u32::MAX, |end| end.port))
            .collect();
        let policy = routes.policy();
        Ok(RouteTable {
            explicit: Some(Arc::clone(routes)),
            self_port,
            turns: match policy {
                MultipathPolicy::RoundRobin => filled(hosts as usize * hosts as usize, 0, "route turns")?,
                _ => Vec::new(),
            },
            rng: match policy {
                MultipathPolicy::Random { seed } => Some(Rng::new(seed)),
                _ => None,
            },
            ..RouteTable::table(hosts)
        })
    }

    /// The route of message `number` (in the whole network) from `src` to `dst`.
    pub(crate) fn route(&mut self, src: HostId, dst: HostId, number: u64) -> Route {
        if let Some(x) = &self.detour {
            let p = x.dragonfly.p;
            return match x.intermediate(number, src.0 / p, dst.0 / p) {
                // At most 3 hops between routers: it fits.
                Some((via, hops)) if x.ugal_threshold.is_some() => Route::Choose { via, hops: hops as u8 },
                Some((via, hops)) => Route::Detour { via, hops: hops as u8 },
                None => Route::Table,
            };
        }
        if let Some(routes) = &self.explicit {
            let alternatives = routes.alternatives(src, dst);
            let count = alternatives.len() as u32;
            if count == 0 {
                return self.source_path(src, dst);
            }
            let pick = match routes.policy() {
                MultipathPolicy::First => 0,
                MultipathPolicy::RoundRobin => {
                    let turn = &mut self.turns[src.index() * self.hosts as usize + dst.index()];
                    let pick = *turn % count;
                    *turn = (pick + 1) % count;
                    pick
                }
                MultipathPolicy::Random { .. } => self.rng.as_mut().map_or(0, |r| r.below(u64::from(count)) as u32),
                MultipathPolicy::Hash => {
                    Rng::keyed(0, &[u64::from(src.0), u64::from(dst.0)]).below(u64::from(count)) as u32
                }
            };
            return Route::Explicit(alternatives.start + pick);
        }
        if self.source.is_none() {
            return Route::Table;
        }
        self.source_path(src, dst)
    }

    /// The path from `src` to `dst` that sources carry (source routing, or a message
    /// of explicit routes to itself, down the host's own port), numbered in the order
    /// this table met them.
    fn source_path(&mut self, src: HostId, dst: HostId) -> Route {
        let next = self.paths.len() as u32;
        let id = *self.path_of.entry((src.0, dst.0)).or_insert(next);
        if id == next {
            let path = match (&self.explicit, &self.source) {
                (Some(_), _) => vec![self.self_port[src.index()]],
                (None, Some(routing)) => routing.xgft_path(src, dst).unwrap_or_default(),
                (None, None) => Vec::new(),
            };
            self.paths.push(path);
        }
        Route::Source(id)
    }

    /// `route`, of a message from `src` to `dst` that another copy of this table chose
    /// (another partition's), in this table's terms: each copy numbers the paths
    /// sources carry as it meets them.
    pub(crate) fn localize(&mut self, route: Route, src: HostId, dst: HostId) -> Route {
        match route {
            Route::Source(_) => self.source_path(src, dst),
            other => other,
        }
    }

    /// The route another partition drew for a message from `src` to `dst` from one
    /// generator, when [`Self::draws_at_random`]: the same draw, to keep the generator
    /// in step (the draws of dragonfly detours are keyed by the message's number and
    /// need no step).
    pub(crate) fn draw_elsewhere(&mut self, src: HostId, dst: HostId) {
        if self.draws_at_random() {
            self.route(src, dst, 0);
        }
    }

    /// UGAL-L's choice at the source router `switch` of a [`Route::Choose`] towards
    /// `dst`, given the bytes waiting for each of its outputs (`queued`); other routes
    /// are returned as they are.
    pub(crate) fn choose(&self, route: Route, switch: SwitchId, dst: HostId, queued: impl Fn(u32) -> u64) -> Route {
        let (Route::Choose { via, hops }, Some(x)) = (route, &self.detour) else {
            return route;
        };
        let minimal = self.next_port(switch, dst);
        let detour = x.dragonfly.towards(switch.0, via);
        if x.takes_minimal(queued(minimal), queued(detour)) {
            Route::Table
        } else {
            Route::Detour { via, hops }
        }
    }

    /// Whether packet switches count credits for UGAL-L (see [`Detour`]).
    #[inline(always)]
    pub(crate) fn counts_credits(&self) -> bool {
        self.detour.as_ref().is_some_and(|x| x.ugal_threshold.is_some())
    }

    /// Whether routes are drawn at random, message by message, from one generator:
    /// the draws depend on the order of every host's messages.
    pub(crate) fn draws_at_random(&self) -> bool {
        self.rng.is_some()
    }

    /// Appends to `ports` the output ports (global indices) a packet from `src` to `dst`
    /// leaves by, the source's own port first, without changing any routing state.
    /// Returns `false` (with nothing appended) when the path is not fixed by the pair:
    /// explicit routes with several alternatives taken in turn or at random, dragonfly
    /// detours.
    pub(crate) fn walk(&self, wiring: &Wiring, src: HostId, dst: HostId, ports: &mut Vec<u32>) -> bool {
        if self.detour.is_some() {
            return false;
        }
        let path: Option<std::borrow::Cow<'_, [u32]>> = if let Some(routes) = &self.explicit {
            let alternatives = routes.alternatives(src, dst);
            let count = alternatives.len() as u32;
            let pick = match routes.policy() {
                _ if count <= 1 => 0,
                MultipathPolicy::First => 0,
                MultipathPolicy::Hash => {
                    Rng::keyed(0, &[u64::from(src.0), u64::from(dst.0)]).below(u64::from(count)) as u32
                }
                MultipathPolicy::RoundRobin | MultipathPolicy::Random { .. } => return false,
            };
            Some(match count {
                0 => vec![self.self_port[src.index()]].into(),
                _ => routes.path(alternatives.start + pick).into(),
            })
        } else {
            self.source
                .as_ref()
                .map(|routing| match self.path_of.get(&(src.0, dst.0)) {
                    Some(&id) => self.paths[id as usize].as_slice().into(),
                    None => routing.xgft_path(src, dst).unwrap_or_default().into(),
                })
        };
        let before = ports.len();
        let mut port = wiring.port_base[src.index()] as usize;
        for hop in 0..=wiring.owner.len() {
            ports.push(port as u32);
            let Some((at, _)) = wiring.peer[port] else { break };
            let Device::Switch(switch) = at.device else {
                return true;
            };
            let out = match &path {
                Some(path) => path.get(hop).copied().unwrap_or(u32::MAX),
                None => self.next_port(switch, dst),
            };
            if out >= wiring.switch_ports(switch) {
                break;
            }
            port = wiring.port(Endpoint {
                device: at.device,
                port: out,
            });
        }
        // Routes are checked when the network is built: only a broken table ends here.
        ports.truncate(before);
        false
    }

    /// The output port of `switch`, the `hop`-th switch of the path (from 0), towards
    /// host `dst`.
    pub(crate) fn port(&self, route: Route, switch: SwitchId, hop: usize, dst: HostId) -> u32 {
        match route {
            Route::Table | Route::Choose { .. } => self.next_port(switch, dst),
            Route::Detour { via, hops } => match &self.detour {
                Some(x) if hop < usize::from(hops) => x.dragonfly.towards(switch.0, via),
                _ => self.next_port(switch, dst),
            },
            Route::Source(id) => self.paths[id as usize].get(hop).copied().unwrap_or(u32::MAX),
            Route::Explicit(id) => self
                .explicit
                .as_ref()
                .and_then(|r| r.path(id).get(hop).copied())
                .unwrap_or(u32::MAX),
        }
    }

    /// Shortest-path tables ([`ShortestPaths`]): a breadth-first search over the cables
    /// between switches from each switch that hosts hang off, in time about the number
    /// of such switches × (switches + cables between them), and a column of that many
    /// ports each. Refuses, as it meets them host by host, a route longer than packets
    /// count and a switch with no path to a host.
    pub(crate) fn shortest_paths(topology: &Topology, wiring: &Wiring) -> Result<RouteTable, TopologyError> {
        let hosts = topology.hosts;
        let switches = topology.switch_ports.len();
        // The cables between switches: each switch's (port, neighbour), in port order.
        let mut first = room(switches + 1, "switches")?;
        let mut links: Vec<(u32, u32)> = Vec::new();
        // What the search looks at (tests check that it grows with the network alone).
        #[cfg(test)]
        let mut steps = u64::from(hosts);
        for s in 0..switches {
            first.push(links.len());
            #[cfg(test)]
            {
                steps += u64::from(topology.switch_ports[s]);
            }
            let base = wiring.port_base[hosts as usize + s] as usize;
            for port in 0..topology.switch_ports[s] {
                if let Some((
                    Endpoint {
                        device: Device::Switch(n),
                        ..
                    },
                    _,
                )) = wiring.peer[base + port as usize]
                {
                    links.push((port, n.0));
                }
            }
        }
        first.push(links.len());
        let mut attach = room(hosts as usize, "hosts")?;
        attach.extend(
            (0..hosts).map(|h| match wiring.peer[wiring.port_base[h as usize] as usize] {
                Some((
                    Endpoint {
                        device: Device::Switch(s),
                        port,
                    },
                    _,
                )) => (s.0, port),
                _ => (u32::MAX, u32::MAX),
            }),
        );
        // The switches routes start from: those with hosts, a column each.
        let mut column = vec![u32::MAX; switches];
        let mut columns = 0u32;
        for &(s, _) in &attach {
            if let Some(c) = column.get_mut(s as usize)
                && *c == u32::MAX
            {
                *c = columns;
                columns += 1;
            }
        }
        let mut ports = filled(columns as usize * switches, u32::MAX, "shortest-path routes")?;
        // Per column, once searched: the farthest switch with hosts (the last of the
        // farthest, as `max_by_key` gives) and its distance, and the first switch with
        // no path.
        type Found = (Option<(usize, u32)>, Option<u32>);
        let mut searched: Vec<Option<Found>> = vec![None; columns as usize];
        let mut distance = vec![u32::MAX; switches];
        let mut queue = VecDeque::new();
        for host in 0..hosts {
            let (at, _) = attach[host as usize];
            let Some(&c) = column.get(at as usize) else {
                // A host cabled to a host: no switch has a path to it.
                if switches > 0 {
                    return Err(TopologyError::Unreachable { switch: 0, host });
                }
                continue;
            };
            let (farthest, unreachable) = match searched[c as usize] {
                Some(found) => found,
                None => {
                    distance.fill(u32::MAX);
                    queue.clear();
                    distance[at as usize] = 0;
                    queue.push_back(at);
                    while let Some(s) = queue.pop_front() {
                        #[cfg(test)]
                        {
                            steps += (first[s as usize + 1] - first[s as usize]) as u64 + 1;
                        }
                        for &(_, n) in &links[first[s as usize]..first[s as usize + 1]] {
                            if distance[n as usize] == u32::MAX {
                                distance[n as usize] = distance[s as usize] + 1;
                                queue.push_back(n);
                            }
                        }
                    }
                    let farthest = (0..switches)
                        .filter(|&s| column[s] != u32::MAX && distance[s] != u32::MAX)
                        .max_by_key(|&s| distance[s])
                        .map(|s| (s, distance[s]));
                    let unreachable = (0..switches).find(|&s| distance[s] == u32::MAX).map(|s| s as u32);
                    // Each switch forwards on its lowest port one hop closer.
                    let out = &mut ports[c as usize * switches..(c as usize + 1) * switches];
                    for (s, port) in out.iter_mut().enumerate() {
                        #[cfg(test)]
                        {
                            steps += (first[s + 1] - first[s]) as u64 + 1;
                        }
                        let Some(closer) = distance[s].checked_sub(1).filter(|_| distance[s] != u32::MAX) else {
                            continue;
                        };
                        *port = links[first[s]..first[s + 1]]
                            .iter()
                            .find(|&&(_, n)| distance[n as usize] == closer)
                            .map_or(u32::MAX, |&(p, _)| p);
                    }
                    searched[c as usize] = Some((farthest, unreachable));
                    (farthest, unreachable)
                }
            };
            if let Some((s, longest)) = farthest {
                check_route_length(u64::from(longest) + 1, || {
                    format!("the shortest route from sw{s} to host{host}")
                })?;
            }
            if let Some(switch) = unreachable {
                return Err(TopologyError::Unreachable { switch, host });
            }
        }
        #[cfg(test)]
        SHORTEST_PATH_STEPS.set(steps);
        let tables = ShortestPaths {
            attach,
            column,
            ports,
            switches: switches as u32,
        };
        Ok(RouteTable {
            closed: Some(ClosedForm::ShortestPath(tables)),
            ..RouteTable::table(hosts)
        })
    }

    /// The torus of a dimension-order routing.
    pub(crate) fn torus(&self) -> Option<&Torus> {
        self.torus.as_ref()
    }

    /// The ring that switch port `port` belongs to: the dimension it leads along, if
    /// that dimension closes a cycle (every switch of a torus has the same ports).
    /// `None` for host ports, for mesh dimensions and for other topologies.
    pub(crate) fn ring(&self, port: u32) -> Option<u32> {
        let t = self.torus.as_ref()?;
        t.port_dimension(port).filter(|&d| t.is_ring(d as usize))
    }

    /// The output port of `switch` towards `host` (table routing).
    pub(crate) fn next_port(&self, switch: SwitchId, host: HostId) -> u32 {
        match &self.closed {
            Some(ClosedForm::DModK(routes)) => routes.port(switch, host),
            Some(ClosedForm::DimensionOrder(t)) => t.dimension_order(switch, host),
            Some(ClosedForm::Dragonfly(d)) => d.minimal(switch, host),
            Some(ClosedForm::ShortestPath(tables)) => tables.port(switch, host),
            None => u32::MAX,
        }
    }
}

/// Refuses a routing made for a `shape` of (switches, hosts) `counts` other than
/// `topology`'s.
fn check_shape(shape: &'static str, counts: (u32, u32), topology: &Topology) -> Result<(), TopologyError> {
    let (switches, hosts) = (topology.switch_ports.len() as u32, topology.hosts);
    if counts == (switches, hosts) {
        return Ok(());
    }
    Err(TopologyError::ShapeMismatch {
        shape,
        shape_switches: counts.0,
        shape_hosts: counts.1,
        switches,
        hosts,
    })
}
