//! Routes for maps that come without them, and checks of a route set.
//!
//! - [`shortest_paths`]: minimal paths (in switch hops), the lowest output port first
//!   among equals; up to `k` of them per pair for multipath.
//! - [`up_down`]: up*/down* routing (Schroeder et al., Autonet), deadlock-free for
//!   wormhole switches on any topology. The root is the switch whose farthest switch is
//!   nearest (the graph's centre; ties: the lowest switch id). Switches are ranked by
//!   (distance from the root, id); a cable's "up" end is the lower-ranked one. A legal
//!   route makes all its up moves before any down move, so the channel dependencies
//!   can never close a cycle. Each pair takes the shortest legal route, the lowest
//!   port first among equals.
//! - [`deadlock_cycle`]: the channel dependency graph of a route set (a channel is one
//!   direction of a cable between switches; a route that leaves a switch on channel
//!   `a` and the next switch on `b` makes `a` wait on `b`), and a cycle in it if there
//!   is one. No cycle: the routes cannot deadlock wormhole switches.
//! - [`conflicts`]: for a communication pattern (phases of flows), how many flows of a
//!   phase share each link: the most on one link, the sum of the excess, and the
//!   busiest link. So that offline route optimisation can be evaluated.

use std::collections::VecDeque;

use vesper_netmodels::{Device, Endpoint, HostId, Routing, SwitchId, Topology};

use crate::error::FileError;
use crate::ibnet::IbFabric;
use crate::routes::RouteList;

/// Why routes could not be generated, listed or followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GenerateError {
    /// a host without a cable to a switch
    #[error("host{} has no cable to a switch", host.0)]
    HostWithoutCable {
        /// the host
        host: HostId,
    },
    /// two hosts in different parts of the network
    #[error("no path from host{src} to host{dst}: the network is not connected")]
    NotConnected {
        /// the source host
        src: u32,
        /// the destination host
        dst: u32,
    },
    /// up*/down* routing of a network without switches
    #[error("the network has no switch")]
    NoSwitch,
    /// a switch that cannot reach every other
    #[error("sw{switch} does not reach every switch: the network is not connected")]
    SwitchNotConnected {
        /// the switch
        switch: u32,
    },
    /// a pair without a legal up*/down* route
    #[error("no up*/down* route from host{src} to host{dst}")]
    NoUpDownRoute {
        /// the source host
        src: u32,
        /// the destination host
        dst: u32,
    },
    /// dimension-order tables that send a pair round in a loop
    #[error("dimension-order routes loop from host{} to host{}", src.0, dst.0)]
    DimensionOrderLoop {
        /// the source host
        src: HostId,
        /// the destination host
        dst: HostId,
    },
    /// a routing without paths (nor tables) to list
    #[error("this routing has no paths to list")]
    NoPathsToList,
    /// a flow of a pattern between hosts the routes do not join
    #[error("no route from host{} to host{}", src.0, dst.0)]
    NoRoute {
        /// the source host
        src: HostId,
        /// the destination host
        dst: HostId,
    },
    /// a destination the dump gives no LID (at the dump's line of its CA)
    #[error(
        "{dump}:{line}: {host} has no LID (no `lid <n>` on its Ca's link line nor on the switch's line that leads \
         to it): the tables cannot route to it"
    )]
    NoLid {
        /// the dump's name
        dump: String,
        /// the line of the host's CA header
        line: usize,
        /// the host
        host: String,
    },
    /// a switch a route crosses without a section in the tables
    #[error("{tables}: no section for {switch} ({}), which {route} crosses", switch_ids(*guid, *lid))]
    NoSection {
        /// the tables' name
        tables: String,
        /// the switch
        switch: String,
        /// the switch's GUID, if the dump gives it
        guid: Option<u64>,
        /// the switch's LID, if the dump gives it
        lid: Option<u32>,
        /// the route
        route: Pair,
    },
    /// a switch's section without an entry for a LID a route needs
    #[error("{tables}:{line}: {switch}'s table (the section here) has no entry for lid {lid}, which {route} needs")]
    NoEntry {
        /// the tables' name
        tables: String,
        /// the line of the switch's section
        line: usize,
        /// the switch
        switch: String,
        /// the destination's LID
        lid: u32,
        /// the route
        route: Pair,
    },
    /// an entry a route needs that leaves the switch by no port
    #[error(
        "{tables}:{line}: {switch} sends lid {lid} to port {ib_port} ({}), but {route} crosses it",
        match ib_port { 0 => "the switch itself", _ => "no route" }
    )]
    NotForwarded {
        /// the tables' name
        tables: String,
        /// the entry's line
        line: usize,
        /// the switch
        switch: String,
        /// the destination's LID
        lid: u32,
        /// the port written, IB numbering (0: the switch itself, 255: no route)
        ib_port: u32,
        /// the route
        route: Pair,
    },
    /// tables that send a route off the network, or round in a loop
    #[error(
        "{tables}:{line}: the tables route {} to {} off the network or round in a loop at {switch}.p{port}",
        route.src, route.dst
    )]
    OffNetwork {
        /// the tables' name
        tables: String,
        /// the entry's line
        line: usize,
        /// the switch where the route leaves
        switch: String,
        /// its output port (topology numbering)
        port: u32,
        /// the route
        route: Pair,
    },
}

/// The names of a route's two hosts, written `the route from SRC to DST`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// the source host
    pub src: String,
    /// the destination host
    pub dst: String,
}

impl std::fmt::Display for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the route from {} to {}", self.src, self.dst)
    }
}

/// The switches, their cables and their hosts, indexed for searching.
#[derive(Debug)]
struct Graph {
    /// per switch: (port, neighbour switch) for every cable to a switch, by port
    links: Vec<Vec<(u32, u32)>>,
    /// per host: its switch and the switch's port towards it
    attach: Vec<Option<(u32, u32)>>,
}

impl Graph {
    fn of(topology: &Topology) -> Graph {
        let switches = topology.switch_ports.len();
        let mut links = vec![Vec::new(); switches];
        let mut attach = vec![None; topology.hosts as usize];
        for c in &topology.cables {
            for (a, b) in [(c.a, c.b), (c.b, c.a)] {
                match (a.device, b.device) {
                    (Device::Switch(s), Device::Switch(n)) => links[s.index()].push((a.port, n.0)),
                    (Device::Switch(s), Device::Host(h)) => attach[h.index()] = Some((s.0, a.port)),
                    _ => {}
                }
            }
        }
        for l in &mut links {
            l.sort_unstable();
        }
        Graph { links, attach }
    }

    /// Switch hops from every switch to `target` (`u32::MAX`: unreachable).
    fn distances_to(&self, target: u32) -> Vec<u32> {
        let mut distance = vec![u32::MAX; self.links.len()];
        let mut queue = VecDeque::from([target]);
        distance[target as usize] = 0;
        while let Some(s) = queue.pop_front() {
            for &(_, n) in &self.links[s as usize] {
                if distance[n as usize] == u32::MAX {
                    distance[n as usize] = distance[s as usize] + 1;
                    queue.push_back(n);
                }
            }
        }
        distance
    }

    /// The switch at the far end of switch `s`'s `port`, if it leads to one.
    fn neighbour(&self, s: u32, port: u32) -> Option<u32> {
        let links = &self.links[s as usize];
        links.binary_search_by_key(&port, |&(p, _)| p).ok().map(|i| links[i].1)
    }

    fn attach(&self, h: HostId) -> Result<(u32, u32), GenerateError> {
        self.attach[h.index()].ok_or(GenerateError::HostWithoutCable { host: h })
    }
}

/// Minimal routes between every pair of distinct hosts, up to `k` (≥ 1) per pair, the
/// lowest ports first.
pub fn shortest_paths(topology: &Topology, k: usize) -> Result<RouteList, GenerateError> {
    let graph = Graph::of(topology);
    let hosts = topology.hosts;
    let mut by_switch: Vec<Option<Vec<u32>>> = vec![None; graph.links.len()];
    let mut routes = RouteList::default();
    for src in 0..hosts {
        let (first, _) = graph.attach(HostId(src))?;
        for dst in (0..hosts).filter(|&d| d != src) {
            let (last, down) = graph.attach(HostId(dst))?;
            let distance = by_switch[last as usize].get_or_insert_with(|| graph.distances_to(last));
            if distance[first as usize] == u32::MAX {
                return Err(GenerateError::NotConnected { src, dst });
            }
            // Depth-first in port order: the first path takes the lowest ports.
            let mut stack = vec![(first, Vec::new())];
            let mut found = 0;
            while let Some((at, mut path)) = stack.pop() {
                if at == last {
                    path.push(down);
                    routes.push((HostId(src), HostId(dst)), &path);
                    found += 1;
                    if found == k.max(1) {
                        break;
                    }
                    continue;
                }
                let closer = graph.links[at as usize]
                    .iter()
                    .filter(|&&(_, n)| distance[n as usize] + 1 == distance[at as usize]);
                let next: Vec<_> = closer.collect();
                for &&(port, n) in next.iter().rev() {
                    let mut p = path.clone();
                    p.push(port);
                    stack.push((n, p));
                }
            }
        }
    }
    Ok(routes)
}

/// Up*/down* routes between every pair of distinct hosts, and the root chosen.
pub fn up_down(topology: &Topology) -> Result<(SwitchId, RouteList), GenerateError> {
    let graph = Graph::of(topology);
    let switches = graph.links.len() as u32;
    if switches == 0 {
        return Err(GenerateError::NoSwitch);
    }
    // The centre: the smallest eccentricity, ties to the lowest id.
    let mut root = (u32::MAX, 0);
    for s in 0..switches {
        let distance = graph.distances_to(s);
        let eccentricity = distance.iter().copied().max().unwrap_or(0);
        if eccentricity == u32::MAX {
            return Err(GenerateError::SwitchNotConnected { switch: s });
        }
        root = root.min((eccentricity, s));
    }
    let root = root.1;
    let level = graph.distances_to(root);
    let rank = |s: u32| (level[s as usize], s);
    // States: switch × (0: may still go up, 1: going down).
    let index = |s: u32, down: u32| (s * 2 + down) as usize;
    let hosts = topology.hosts;
    let mut host_of_switch: Vec<Vec<(u32, u32)>> = vec![Vec::new(); switches as usize];
    for h in 0..hosts {
        let (s, port) = graph.attach(HostId(h))?;
        host_of_switch[s as usize].push((h, port));
    }
    let mut routes = RouteList::default();
    let mut parent: Vec<Option<(u32, u32)>> = vec![None; 2 * switches as usize];
    let mut seen = vec![false; 2 * switches as usize];
    for start in 0..switches {
        if host_of_switch[start as usize].is_empty() {
            continue;
        }
        parent.fill(None);
        seen.fill(false);
        seen[index(start, 0)] = true;
        let mut queue = VecDeque::from([(start, 0u32)]);
        while let Some((s, down)) = queue.pop_front() {
            for &(port, n) in &graph.links[s as usize] {
                let going_up = rank(n) < rank(s);
                if going_up && down == 1 {
                    continue;
                }
                let state = (n, u32::from(!going_up));
                if !seen[index(state.0, state.1)] {
                    seen[index(state.0, state.1)] = true;
                    parent[index(state.0, state.1)] = Some((index(s, down) as u32, port));
                    queue.push_back(state);
                }
            }
        }
        for &(src, _) in &host_of_switch[start as usize] {
            for dst in (0..hosts).filter(|&d| d != src) {
                let (last, down_port) = graph.attach(HostId(dst))?;
                // Whichever phase reached the destination's switch first (BFS order
                // is by length; the up phase first among equals).
                let end = [index(last, 0), index(last, 1)]
                    .into_iter()
                    .filter(|&i| seen[i])
                    .min_by_key(|&i| path_length(&parent, i))
                    .ok_or(GenerateError::NoUpDownRoute { src, dst })?;
                let mut path = vec![down_port];
                let mut at = end;
                while let Some((from, port)) = parent[at] {
                    path.push(port);
                    at = from as usize;
                }
                path.reverse();
                routes.push((HostId(src), HostId(dst)), &path);
            }
        }
    }
    Ok((SwitchId(root), routes.sorted_by_pair()))
}

fn path_length(parent: &[Option<(u32, u32)>], mut at: usize) -> usize {
    let mut length = 0;
    while let Some((from, _)) = parent[at] {
        length += 1;
        at = from as usize;
    }
    length
}

/// Links on the longest minimal host-to-host path, by breadth-first search from every
/// switch that has hosts; `None` when some host cannot reach another.
pub fn diameter(topology: &Topology) -> Option<u32> {
    let graph = Graph::of(topology);
    let mut leaves: Vec<u32> = graph.attach.iter().flatten().map(|&(s, _)| s).collect();
    leaves.sort_unstable();
    leaves.dedup();
    let mut longest = 0;
    for &leaf in &leaves {
        let distance = graph.distances_to(leaf);
        longest = leaves.iter().map(|&l| distance[l as usize]).fold(longest, u32::max);
    }
    // Host to switch, the switch hops, switch to host.
    (longest != u32::MAX).then_some(longest + 2)
}

/// The routes of `topology` under its own routing, pair by pair, to write as a route
/// file: the paths of tree routings and explicit routes as they are, the tables of
/// dimension-order and shortest-path routing walked from every source.
pub fn routes_of(topology: &Topology) -> Result<RouteList, GenerateError> {
    let hosts = topology.hosts;
    let pairs =
        || (0..hosts).flat_map(move |s| (0..hosts).filter(move |&d| d != s).map(move |d| (HostId(s), HostId(d))));
    match &topology.routing {
        Routing::ShortestPath => shortest_paths(topology, 1),
        Routing::Explicit(routes) => Ok(routes.iter().collect()),
        Routing::DimensionOrder(t) => {
            let graph = Graph::of(topology);
            let mut routes = RouteList::default();
            for (s, d) in pairs() {
                let (mut at, _) = graph.attach(s)?;
                let mut path = Vec::new();
                loop {
                    let port = t.dimension_order(SwitchId(at), d);
                    path.push(port);
                    match graph.neighbour(at, port) {
                        Some(next) if path.len() <= graph.links.len() => at = next,
                        Some(_) => return Err(GenerateError::DimensionOrderLoop { src: s, dst: d }),
                        None => break,
                    }
                }
                routes.push((s, d), &path);
            }
            Ok(routes)
        }
        tree => pairs()
            .map(|(s, d)| {
                tree.xgft_path(s, d)
                    .map(|path| ((s, d), path))
                    .ok_or(GenerateError::NoPathsToList)
            })
            .collect(),
    }
}

/// The routes an InfiniBand fabric's forwarding tables give: from each source's switch,
/// the output each switch's table names for the destination's LID, until the
/// destination's cable. Errors name the tables' line (or the dump's, for a host without
/// a LID).
pub fn forwarding_routes(fabric: &IbFabric) -> Result<RouteList, GenerateError> {
    let topology = &fabric.topology.topology;
    let graph = Graph::of(topology);
    let name = |d| fabric.topology.name(d).to_string();
    let tables = &fabric.tables_file;
    let hosts = topology.hosts;
    let mut routes = RouteList::default();
    for s in 0..hosts {
        for d in (0..hosts).filter(|&d| d != s) {
            let (src, dst) = (HostId(s), HostId(d));
            let lid = fabric.host_lids[dst.index()].ok_or_else(|| GenerateError::NoLid {
                dump: fabric.dump_file.clone(),
                line: fabric.host_lines[dst.index()],
                host: name(Device::Host(dst)),
            })?;
            let route = || Pair {
                src: name(Device::Host(src)),
                dst: name(Device::Host(dst)),
            };
            let (mut at, _) = graph.attach(src)?;
            let (last, down) = graph.attach(dst)?;
            let mut path = Vec::new();
            loop {
                let switch = name(Device::Switch(SwitchId(at)));
                let Some(entry) = fabric.forwarding[at as usize].get(&lid) else {
                    return Err(match fabric.section_lines[at as usize] {
                        0 => GenerateError::NoSection {
                            tables: tables.clone(),
                            switch,
                            guid: fabric.switch_guids[at as usize],
                            lid: fabric.switch_lids[at as usize],
                            route: route(),
                        },
                        line => GenerateError::NoEntry {
                            tables: tables.clone(),
                            line,
                            switch,
                            lid,
                            route: route(),
                        },
                    });
                };
                let Some(port) = entry.output() else {
                    return Err(GenerateError::NotForwarded {
                        tables: tables.clone(),
                        line: entry.line,
                        switch,
                        lid,
                        ib_port: entry.ib_port,
                        route: route(),
                    });
                };
                path.push(port);
                if at == last && port == down {
                    break;
                }
                match graph.neighbour(at, port) {
                    Some(next) if path.len() <= graph.links.len() => at = next,
                    _ => {
                        return Err(GenerateError::OffNetwork {
                            tables: tables.clone(),
                            line: entry.line,
                            switch,
                            port,
                            route: route(),
                        });
                    }
                }
            }
            routes.push((src, dst), &path);
        }
    }
    Ok(routes)
}

/// What identifies a switch in forwarding tables: its GUID and LID, as the dump gives
/// them.
fn switch_ids(guid: Option<u64>, lid: Option<u32>) -> String {
    let guid = guid.map(|g| format!("guid {g:#018x}"));
    let lid = lid.map(|l| format!("lid {l}"));
    let ids: Vec<String> = guid.into_iter().chain(lid).collect();
    match ids.is_empty() {
        true => "no GUID or LID in the dump".to_string(),
        false => ids.join(", "),
    }
}

/// Dense ids of channels: switch `s`'s port `p` is `base\[s\] + p`.
struct Channels {
    base: Vec<u32>,
    total: u32,
}

impl Channels {
    fn of(topology: &Topology) -> Channels {
        let mut base = Vec::with_capacity(topology.switch_ports.len());
        let mut total = 0u32;
        for &p in &topology.switch_ports {
            base.push(total);
            total += p;
        }
        Channels { base, total }
    }

    fn id(&self, s: u32, port: u32) -> u32 {
        self.base[s as usize] + port
    }

    fn named(&self, ch: u32) -> (SwitchId, u32) {
        let s = self.base.partition_point(|&b| b <= ch) - 1;
        (SwitchId(s as u32), ch - self.base[s])
    }
}

/// A cycle of channels (switch, output port) in the routes' dependency graph, or
/// `None` when the routes cannot deadlock wormhole switches.
pub fn deadlock_cycle(topology: &Topology, routes: &RouteList) -> Option<Vec<(SwitchId, u32)>> {
    deadlock_cycle_of(topology, routes.iter().map(|((src, _), path)| (src, path)))
}

/// The same for paths given as (source, output ports), without collecting them first.
pub fn deadlock_cycle_of<'a>(
    topology: &Topology,
    paths: impl IntoIterator<Item = (HostId, &'a [u32])>,
) -> Option<Vec<(SwitchId, u32)>> {
    let graph = Graph::of(topology);
    let channels = Channels::of(topology);
    let mut depends: Vec<Vec<u32>> = vec![Vec::new(); channels.total as usize];
    for (src, path) in paths {
        let Ok((mut at, _)) = graph.attach(src) else { continue };
        let mut previous: Option<u32> = None;
        for &port in path {
            let Some(next) = graph.neighbour(at, port) else { break };
            let here = channels.id(at, port);
            if let Some(prev) = previous {
                depends[prev as usize].push(here);
            }
            previous = Some(here);
            at = next;
        }
    }
    cycle(&channels, depends)
}

/// The same for the switches' shortest-path tables (the lowest port one hop closer to
/// the destination's switch, as the simulator builds them), without listing every
/// pair's path: per destination switch, each switch's next channel waits on the next
/// switch's.
pub fn table_deadlock_cycle(topology: &Topology) -> Option<Vec<(SwitchId, u32)>> {
    let graph = Graph::of(topology);
    let channels = Channels::of(topology);
    let mut depends: Vec<Vec<u32>> = vec![Vec::new(); channels.total as usize];
    let mut targets: Vec<u32> = graph.attach.iter().flatten().map(|&(s, _)| s).collect();
    targets.sort_unstable();
    targets.dedup();
    for target in targets {
        let distance = graph.distances_to(target);
        let next = |s: u32| {
            graph.links[s as usize]
                .iter()
                .find(|&&(_, n)| distance[n as usize].wrapping_add(1) == distance[s as usize])
                .copied()
        };
        for s in 0..graph.links.len() as u32 {
            if s == target || distance[s as usize] == u32::MAX {
                continue;
            }
            let Some((port, n)) = next(s) else { continue };
            if n != target
                && let Some((port2, _)) = next(n)
            {
                depends[channels.id(s, port) as usize].push(channels.id(n, port2));
            }
        }
    }
    cycle(&channels, depends)
}

/// A cycle in the channel dependency graph, by iterative depth-first search.
fn cycle(channels: &Channels, mut depends: Vec<Vec<u32>>) -> Option<Vec<(SwitchId, u32)>> {
    for d in &mut depends {
        d.sort_unstable();
        d.dedup();
    }
    // Three colours: 0 unseen, 1 on the current path, 2 done.
    let mut colour = vec![0u8; depends.len()];
    let mut on_path: Vec<u32> = Vec::new();
    for start in 0..depends.len() as u32 {
        if colour[start as usize] != 0 || depends[start as usize].is_empty() {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        colour[start as usize] = 1;
        on_path.push(start);
        while let Some((c, next)) = stack.last_mut() {
            let c = *c;
            if let Some(&d) = depends[c as usize].get(*next) {
                *next += 1;
                match colour[d as usize] {
                    0 => {
                        colour[d as usize] = 1;
                        on_path.push(d);
                        stack.push((d, 0));
                    }
                    1 => {
                        let from = on_path.iter().position(|&x| x == d).unwrap_or(0);
                        return Some(on_path[from..].iter().map(|&ch| channels.named(ch)).collect());
                    }
                    _ => {}
                }
            } else {
                colour[c as usize] = 2;
                on_path.pop();
                stack.pop();
            }
        }
    }
    None
}

/// The largest communication pattern file read \[bytes\]: patterns are read whole; 64 MiB
/// holds millions of flows, a few hundred per host of a 32,768-host network.
pub const MAX_PATTERN_BYTES: u64 = 64 * vesper_input::MIB;

/// A pattern file that breaks a rule: the file, the line, and the rule.
pub type PatternError = FileError<PatternRule>;

/// The rule a line of a pattern file breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatternRule {
    /// a flow whose words are not two endpoints
    #[error("expected {expected}, got `{line}`")]
    Endpoints {
        /// what two endpoints are
        expected: String,
        /// the line, trimmed
        line: String,
    },
    /// a line that is neither a flow nor `phase`
    #[error("expected `SRC DST` or `phase`, got `{line}`")]
    Line {
        /// the line, trimmed
        line: String,
    },
}

/// Reads a communication pattern: one flow per line, `SOURCE DESTINATION`, each turned
/// into an id by `endpoint` (`expected` says what two endpoints are, for messages); a
/// line `phase` starts the next phase; text after `#` and blank lines are ignored, and
/// so are empty phases. Errors name `file` and the line.
pub fn read_phases<T>(
    file: &str,
    text: &str,
    endpoint: impl Fn(&str) -> Option<T>,
    expected: &str,
) -> Result<Vec<Vec<(T, T)>>, PatternError> {
    let mut phases = vec![Vec::new()];
    for (number, line) in text.lines().enumerate() {
        let words: Vec<&str> = line.split('#').next().unwrap_or("").split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["phase"] => phases.push(Vec::new()),
            [src, dst] => match (endpoint(src), endpoint(dst)) {
                (Some(s), Some(d)) => phases.last_mut().map_or((), |p| p.push((s, d))),
                _ => {
                    let rule = PatternRule::Endpoints {
                        expected: expected.to_string(),
                        line: line.trim().to_string(),
                    };
                    return Err(PatternError::new(file, number + 1, rule));
                }
            },
            _ => {
                let rule = PatternRule::Line {
                    line: line.trim().to_string(),
                };
                return Err(PatternError::new(file, number + 1, rule));
            }
        }
    }
    phases.retain(|p| !p.is_empty());
    Ok(phases)
}

/// How the flows of one phase share links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseConflicts {
    /// the most flows on one directed link (0 for an empty phase)
    pub max_load: u32,
    /// the sum over links of the flows beyond the first
    pub conflicts: u32,
    /// the first link (in port order) that carries `max_load` flows
    pub busiest: Option<Endpoint>,
}

/// The link sharing of every phase of a pattern under `routes` (each pair's first
/// route). The links counted are every output a flow takes: its host's, and each
/// switch's.
pub fn conflicts(
    topology: &Topology,
    routes: &RouteList,
    phases: &[Vec<(HostId, HostId)>],
) -> Result<Vec<PhaseConflicts>, GenerateError> {
    let graph = Graph::of(topology);
    let hosts = topology.hosts as usize;
    let mut first: Vec<Option<usize>> = vec![None; hosts * hosts];
    for (i, ((s, d), _)) in routes.iter().enumerate() {
        first[s.index() * hosts + d.index()].get_or_insert(i);
    }
    let mut result = Vec::with_capacity(phases.len());
    for phase in phases {
        let mut load: std::collections::BTreeMap<Endpoint, u32> = std::collections::BTreeMap::new();
        for &(s, d) in phase {
            if s == d {
                continue;
            }
            let i = first
                .get(s.index() * hosts + d.index())
                .copied()
                .flatten()
                .ok_or(GenerateError::NoRoute { src: s, dst: d })?;
            *load
                .entry(Endpoint {
                    device: Device::Host(s),
                    port: 0,
                })
                .or_default() += 1;
            let (mut at, _) = graph.attach(s)?;
            for &port in routes.get(i).1 {
                *load
                    .entry(Endpoint {
                        device: Device::Switch(SwitchId(at)),
                        port,
                    })
                    .or_default() += 1;
                match graph.neighbour(at, port) {
                    Some(n) => at = n,
                    None => break,
                }
            }
        }
        let max_load = load.values().copied().max().unwrap_or(0);
        result.push(PhaseConflicts {
            max_load,
            conflicts: load.values().map(|&l| l.saturating_sub(1)).sum(),
            busiest: load.iter().find(|&(_, &l)| l == max_load).map(|(e, _)| *e),
        });
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use vesper_netmodels::{
        ExplicitRoutes, LinkParams, MessageSpec, MultipathPolicy, NetworkBuilder, Routing, SimTime, Torus, Xgft,
    };

    use super::*;
    use crate::ibnet::read_forwarding_tables;
    use crate::ibnet::tests::{FABRIC, TABLES, read};

    /// Every route of `routes` is accepted by the simulator's check (it lands on its
    /// destination), and a message per pair arrives.
    fn runs(mut topology: Topology, routes: RouteList) {
        let hosts = topology.hosts;
        let explicit = ExplicitRoutes::from_paths(hosts, MultipathPolicy::RoundRobin, routes).expect("stored");
        topology.routing = Routing::Explicit(Arc::new(explicit));
        let mut sim = NetworkBuilder::new(topology).build().expect("valid routes");
        let mut n = 0;
        for s in 0..hosts {
            for d in 0..hosts {
                let spec = MessageSpec {
                    src: HostId(s),
                    dst: HostId(d),
                    size_bytes: 64,
                    cookie: n,
                };
                sim.inject(SimTime::ZERO, spec).expect("valid");
                n += 1;
            }
        }
        let mut delivered = Vec::new();
        sim.run_until(SimTime::MAX, &mut delivered);
        assert_eq!(delivered.len() as u64, n);
    }

    #[test]
    fn shortest_paths_are_minimal_and_spread_when_asked() {
        let x = Xgft::kary_ntree(2, 3).expect("valid");
        let topology = x.topology(LinkParams::default());
        let one = shortest_paths(&topology, 1).expect("connected");
        assert_eq!(one.len(), 8 * 7);
        for ((s, d), path) in one.iter() {
            assert_eq!(path.len(), x.d_mod_k_path(s, d).len(), "{s:?} → {d:?}");
        }
        // Host 0 to host 7 climbs to the top: 2 × 2 minimal paths.
        let four = shortest_paths(&topology, 4).expect("connected");
        let alternatives: Vec<_> = four.iter().filter(|(p, _)| *p == (HostId(0), HostId(7))).collect();
        assert_eq!(alternatives.len(), 4);
        runs(topology.clone(), four);
        runs(topology, one);
    }

    #[test]
    fn up_down_routes_never_deadlock_where_shortest_paths_do() {
        // A ring of 6 switches: shortest paths go both ways round and close a cycle.
        let ring = Torus::new(vec![6], true, 1)
            .expect("valid")
            .topology(LinkParams::default());
        let shortest = shortest_paths(&ring, 1).expect("connected");
        let cycle = deadlock_cycle(&ring, &shortest).expect("shortest paths on a ring deadlock");
        assert!(cycle.len() >= 3, "{cycle:?}");
        // The tables the simulator builds close the same kind of cycle.
        assert!(table_deadlock_cycle(&ring).is_some());
        let (root, routes) = up_down(&ring).expect("connected");
        assert_eq!(root, SwitchId(0));
        assert_eq!(deadlock_cycle(&ring, &routes), None);
        runs(ring, routes);
        // A 3×3 torus and a tree too.
        let torus = Torus::new(vec![3, 3], true, 2)
            .expect("valid")
            .topology(LinkParams::default());
        let (_, routes) = up_down(&torus).expect("connected");
        assert_eq!(deadlock_cycle(&torus, &routes), None);
        runs(torus, routes);
        let tree = Xgft::kary_ntree(2, 3).expect("valid").topology(LinkParams::default());
        assert_eq!(
            deadlock_cycle(&tree, &shortest_paths(&tree, 1).expect("connected")),
            None
        );
        assert_eq!(table_deadlock_cycle(&tree), None);
    }

    #[test]
    fn built_in_routings_list_their_paths() {
        let x = Xgft::kary_ntree(4, 2).expect("valid");
        let tree = x.topology(LinkParams::default());
        let listed = routes_of(&tree).expect("paths");
        assert_eq!(listed.len(), 16 * 15);
        assert!(listed.iter().all(|((s, d), p)| p == x.d_mod_k_path(s, d)));
        runs(tree, listed);
        let torus = Torus::new(vec![3, 4], true, 1)
            .expect("valid")
            .topology(LinkParams::default());
        let listed = routes_of(&torus).expect("paths");
        // Dimension order on a 3×4 torus: at most 1 + 2 hops, then down to the host.
        assert!(listed.iter().all(|(_, p)| p.len() <= 4), "{listed:?}");
        runs(torus, listed);
        assert_eq!(
            diameter(&Xgft::kary_ntree(4, 2).expect("valid").topology(LinkParams::default())),
            Some(4)
        );
    }

    #[test]
    fn every_error_reads_as_its_message() {
        let route = || Pair {
            src: "a".into(),
            dst: "b".into(),
        };
        let errors = [
            (
                GenerateError::HostWithoutCable { host: HostId(4) },
                "host4 has no cable to a switch",
            ),
            (
                GenerateError::NotConnected { src: 1, dst: 2 },
                "no path from host1 to host2: the network is not connected",
            ),
            (GenerateError::NoSwitch, "the network has no switch"),
            (
                GenerateError::SwitchNotConnected { switch: 3 },
                "sw3 does not reach every switch: the network is not connected",
            ),
            (
                GenerateError::NoUpDownRoute { src: 1, dst: 2 },
                "no up*/down* route from host1 to host2",
            ),
            (
                GenerateError::DimensionOrderLoop {
                    src: HostId(1),
                    dst: HostId(2),
                },
                "dimension-order routes loop from host1 to host2",
            ),
            (GenerateError::NoPathsToList, "this routing has no paths to list"),
            (
                GenerateError::NoRoute {
                    src: HostId(1),
                    dst: HostId(2),
                },
                "no route from host1 to host2",
            ),
            (
                GenerateError::NoLid {
                    dump: "f.topo".into(),
                    line: 20,
                    host: "H-1".into(),
                },
                "f.topo:20: H-1 has no LID (no `lid <n>` on its Ca's link line nor on the switch's line that leads \
                 to it): the tables cannot route to it",
            ),
            (
                GenerateError::NoSection {
                    tables: "t".into(),
                    switch: "S-1".into(),
                    guid: None,
                    lid: None,
                    route: route(),
                },
                "t: no section for S-1 (no GUID or LID in the dump), which the route from a to b crosses",
            ),
            (
                GenerateError::NoSection {
                    tables: "t".into(),
                    switch: "S-1".into(),
                    guid: Some(0x101),
                    lid: Some(2),
                    route: route(),
                },
                "t: no section for S-1 (guid 0x0000000000000101, lid 2), which the route from a to b crosses",
            ),
            (
                GenerateError::NoEntry {
                    tables: "t".into(),
                    line: 20,
                    switch: "S-1".into(),
                    lid: 11,
                    route: route(),
                },
                "t:20: S-1's table (the section here) has no entry for lid 11, which the route from a to b needs",
            ),
            (
                GenerateError::NotForwarded {
                    tables: "t".into(),
                    line: 22,
                    switch: "S-1".into(),
                    lid: 11,
                    ib_port: 255,
                    route: route(),
                },
                "t:22: S-1 sends lid 11 to port 255 (no route), but the route from a to b crosses it",
            ),
            (
                GenerateError::NotForwarded {
                    tables: "t".into(),
                    line: 22,
                    switch: "S-1".into(),
                    lid: 11,
                    ib_port: 0,
                    route: route(),
                },
                "t:22: S-1 sends lid 11 to port 0 (the switch itself), but the route from a to b crosses it",
            ),
            (
                GenerateError::OffNetwork {
                    tables: "t".into(),
                    line: 22,
                    switch: "S-1".into(),
                    port: 0,
                    route: route(),
                },
                "t:22: the tables route a to b off the network or round in a loop at S-1.p0",
            ),
        ];
        for (error, text) in errors {
            assert_eq!(error.to_string(), text);
        }
    }

    #[test]
    fn pattern_lines_that_are_not_flows_name_the_line() {
        let read = |text: &str| read_phases("p.txt", text, |w| w.parse::<u32>().ok(), "two numbers");
        assert_eq!(read("0 1\nphase\n1 0\n"), Ok(vec![vec![(0, 1)], vec![(1, 0)]]));
        assert_eq!(
            read("0 1\n 0 x \n").map_err(|e| e.to_string()),
            Err("p.txt:2: expected two numbers, got `0 x`".to_string())
        );
        assert_eq!(
            read("0 1 2\n").map_err(|e| e.to_string()),
            Err("p.txt:1: expected `SRC DST` or `phase`, got `0 1 2`".to_string())
        );
    }

    #[test]
    fn routes_the_tables_cannot_give_name_the_file_and_line() {
        let routes = |fabric: &str, tables: &str| {
            let mut fabric = read(fabric);
            let tables = read_forwarding_tables("lfts.txt", tables).unwrap_or_else(|e| panic!("{e}"));
            fabric
                .attach_forwarding("lfts.txt", &tables)
                .unwrap_or_else(|e| panic!("{e}"));
            forwarding_routes(&fabric).map(|r| r.len()).map_err(|e| e.to_string())
        };
        assert_eq!(routes(FABRIC, TABLES), Ok(12));
        // Leaf b (its section at line 20) without an entry for alpha's LID: the first route
        // that needs it is beta's second port's.
        let beta = "the route from H-0002c90000000300[2] to H-0002c90000000200";
        assert_eq!(
            routes(FABRIC, &TABLES.replace("0x000b 007\n", "")),
            Err(format!(
                "lfts.txt:20: S-0002c90000000101's table (the section here) has no entry for lid 11, which {beta} needs"
            ))
        );
        // An entry that says there is no route, or that sends the message to the switch
        // itself.
        assert_eq!(
            routes(FABRIC, &TABLES.replace("0x000b 007\n", "0x000b 255\n")),
            Err(format!(
                "lfts.txt:22: S-0002c90000000101 sends lid 11 to port 255 (no route), but {beta} crosses it"
            ))
        );
        assert_eq!(
            routes(FABRIC, &TABLES.replace("0x000b 007\n", "0x000b 000\n")),
            Err(format!(
                "lfts.txt:22: S-0002c90000000101 sends lid 11 to port 0 (the switch itself), but {beta} crosses it"
            ))
        );
        // No section for the switch at all: the first route to cross it is alpha's.
        let leaf_a = &TABLES[..TABLES.find("# matched by LID").expect("leaf b")];
        assert_eq!(
            routes(FABRIC, leaf_a),
            Err(
                "lfts.txt: no section for S-0002c90000000101 (guid 0x0002c90000000101, lid 2), which the route from \
                 H-0002c90000000200 to H-0002c90000000300[2] crosses"
                    .to_string()
            )
        );
        // An entry that sends the message off the network (to a host's port).
        assert_eq!(
            routes(FABRIC, &TABLES.replace("0x000b 007\n", "0x000b 001\n")),
            Err(
                "lfts.txt:22: the tables route H-0002c90000000300[2] to H-0002c90000000200 off the network or round in a \
                 loop at S-0002c90000000101.p0"
                    .to_string()
            )
        );
        // A host the dump gives no LID: the dump's line of its CA.
        let no_lid = FABRIC
            .replace("\"alpha HCA-1\" lid 11 4xQDR", "\"alpha HCA-1\" 4xQDR")
            .replace("# lid 11 lmc 0 \"leaf a\"", "# lmc 0 \"leaf a\"");
        assert_eq!(
            routes(&no_lid, TABLES),
            Err(
                "fabric.topo:20: H-0002c90000000200 has no LID (no `lid <n>` on its Ca's link line nor on the switch's \
                 line that leads to it): the tables cannot route to it"
                    .to_string()
            )
        );
    }

    #[test]
    fn conflicts_count_flows_sharing_a_link() {
        let x = Xgft::kary_ntree(2, 2).expect("valid");
        let topology = x.topology(LinkParams::default());
        let routes = shortest_paths(&topology, 1).expect("connected");
        // Hosts 0 and 1 (one leaf) both send across: lowest-port routes share the up link.
        let phases = vec![
            vec![(HostId(0), HostId(2)), (HostId(1), HostId(3))],
            vec![(HostId(0), HostId(1))],
        ];
        let c = conflicts(&topology, &routes, &phases).expect("routed");
        assert_eq!(c[0].max_load, 2);
        assert_eq!(c[0].conflicts, 2);
        assert_eq!(
            c[0].busiest,
            Some(Endpoint {
                device: Device::Switch(SwitchId(0)),
                port: 2
            })
        );
        assert_eq!((c[1].max_load, c[1].conflicts), (1, 0));
    }
}
