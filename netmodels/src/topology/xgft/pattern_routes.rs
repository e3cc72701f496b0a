//! Communication patterns on an XGFT: how many flows of one phase share a link under a
//! given routing, and pattern-aware ("colored") routing, which chooses the up ports of
//! a pattern's flows so that flows of the same phase share as few links as possible.
//!
//! A pattern is a list of phases; a phase is a list of (source, destination) flows that
//! run at the same time. Flows of different phases never meet, so loads are counted
//! per phase:
//!
//! ```text
//!   phase 0: 0→4, 1→8        leaf 0 ──up p4──▶ spine 0   load 2 under d-mod-k
//!   phase 1: 4→0, 8→1                 ──up p5──▶ spine 1   load 0
//! ```
//!
//! ## The colored routing, level by level
//!
//! A flow that climbs to level L chooses a parent at levels 1..L−1 (one per up link);
//! the down path follows. Choosing parent c at level l puts the flow on two links:
//! the up link from the level-l switch X it climbs from to X's parent c, and the down
//! link into the level-l switch Y it will descend through, from Y's parent c (Y: the
//! level-l switch above the destination with the parent digits chosen so far). So for
//! one phase and one level the choices are an edge colouring of a bipartite multigraph
//!
//! ```text
//!   X (climbs from) ──flow── Y (descends into)     colour = parent, w(l+1) colours
//! ```
//!
//! and a link's load is the number of edges of its colour at its switch. A switch with
//! `deg` edges needs at least ⌈deg / w⌉ flows on one of its links; we reach that bound:
//! split each switch into copies of at most w edges, in flow order, and colour the
//! copies' graph properly with w colours (König: a bipartite multigraph of degree ≤ w
//! has one), by the classic alternating-path exchange, preferring the d-mod-k colour
//! when it is free at both ends (so tree-friendly patterns keep their d-mod-k paths).
//! Levels go bottom-up: the colours at level l decide the switches of level l + 1.
//! A permutation on a full k-ary n-tree thus gets load 1 on every link; no improvement
//! pass is needed, as each level already meets its lower bound given the levels below.
//! Cost per phase and level: at most one alternating path per flow, each at most as
//! long as the phase has flows.
//!
//! Phases go in order, and a pair keeps the path of the first phase that lists it
//! (a route table holds one path per pair). In later phases such pairs are fixed edges:
//! they keep their colour, placed on copies where it is free, and the exchange never
//! flips them; when only fixed edges block it, the flow takes a colour free where it
//! climbs and another copy of the switch it descends into (one more flow on that link).
//! A pair listed twice in one phase is routed once. Pairs outside the pattern take
//! their d-mod-k paths.

use std::collections::{BTreeMap, BTreeSet};

use crate::ids::HostId;
use crate::topology::xgft::{Xgft, XgftError};

/// Paths chosen for a communication pattern by [`Xgft::pattern_aware_routes`]; pairs
/// outside the pattern take their d-mod-k paths.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PatternRoutes {
    xgft: Xgft,
    /// the pattern's pairs that climb above their leaf, sorted
    pairs: Vec<(HostId, HostId)>,
    /// where each pair's parents start in `ups`
    first: Vec<usize>,
    /// the parent chosen at levels 1..L−1 of each pair's path, pair after pair
    ups: Vec<u32>,
}

impl PatternRoutes {
    /// The tree routed.
    pub fn xgft(&self) -> &Xgft {
        &self.xgft
    }

    /// How many pairs the pattern routed (pairs that climb above their leaf switch).
    pub fn pairs(&self) -> usize {
        self.pairs.len()
    }

    /// The output ports, switch by switch, of the path from `src` to `dst`.
    pub fn path(&self, src: HostId, dst: HostId) -> Vec<u32> {
        match self.pairs.binary_search(&(src, dst)) {
            Ok(i) => self
                .xgft
                .path_with(src, dst, |level| self.ups[self.first[i] + level - 1]),
            Err(_) => self.xgft.d_mod_k_path(src, dst),
        }
    }
}

/// How much the flows of one phase share links.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct PhaseLoad {
    /// the most flows of the phase on one directed link (0 for an empty phase; 1: no
    /// two flows share a link)
    pub max_load: u32,
    /// conflicts: the flows beyond the first on each directed link, summed over the
    /// links, Σ max(load − 1, 0); 0 exactly when no two flows share a link
    pub conflicts: u32,
}

impl Xgft {
    /// Pattern-aware ("colored") routes for `phases`: each phase's flows take up ports
    /// that share as few links as possible (see the module documentation for the
    /// algorithm); deterministic.
    pub fn pattern_aware_routes(&self, phases: &[Vec<(HostId, HostId)>]) -> Result<PatternRoutes, XgftError> {
        let mut chosen: BTreeMap<(HostId, HostId), Vec<u32>> = BTreeMap::new();
        for (p, phase) in phases.iter().enumerate() {
            self.check_hosts(p, phase)?;
            let mut seen = BTreeSet::new();
            let mut flows: Vec<Flow> = phase
                .iter()
                .filter(|&&pair| seen.insert(pair) && self.top_level(pair.0, pair.1) > 1)
                .map(|&(src, dst)| self.flow(src, dst, chosen.get(&(src, dst))))
                .collect();
            for level in 1..self.height() {
                flows.retain(|f| f.top > level);
                if flows.is_empty() {
                    break;
                }
                let edges: Vec<Edge> = flows
                    .iter()
                    .map(|f| Edge {
                        climbs_from: self.index(level, &f.from),
                        descends_into: self.index(level, &f.to),
                        fixed: f.fixed.then(|| f.ups[level - 1]),
                        preferred: (f.dst.0 / self.below(level)) % self.parents[level],
                    })
                    .collect();
                let colours = colour(&edges, self.parents[level]);
                for (f, parent) in flows.iter_mut().zip(colours) {
                    if !f.fixed {
                        f.ups.push(parent);
                    }
                    f.from[level] = parent;
                    f.to[level] = parent;
                }
                for f in flows.iter().filter(|f| !f.fixed && f.top == level + 1) {
                    chosen.insert((f.src, f.dst), f.ups.clone());
                }
            }
        }
        let mut routes = PatternRoutes {
            xgft: self.clone(),
            pairs: Vec::with_capacity(chosen.len()),
            first: Vec::with_capacity(chosen.len()),
            ups: Vec::new(),
        };
        for (pair, ups) in chosen {
            routes.pairs.push(pair);
            routes.first.push(routes.ups.len());
            routes.ups.extend(ups);
        }
        Ok(routes)
    }

    /// A flow of a phase before its level-1 choice; `ups` are its parents when an
    /// earlier phase fixed them.
    fn flow(&self, src: HostId, dst: HostId, ups: Option<&Vec<u32>>) -> Flow {
        let leaf = |host: HostId| {
            let mut digits = self.digits(0, host.0);
            digits[0] = 0;
            digits
        };
        Flow {
            src,
            dst,
            top: self.top_level(src, dst),
            fixed: ups.is_some(),
            ups: ups.cloned().unwrap_or_default(),
            from: leaf(src),
            to: leaf(dst),
        }
    }

    /// The link loads of each phase of `phases` when flow (s, d) takes the output ports
    /// `path(s, d)`, switch by switch — any routing's paths, e.g.
    /// `|s, d| x.d_mod_k_path(s, d)` or `|s, d| routing.xgft_path(s, d).unwrap_or_default()`.
    ///
    /// Every directed link counts, the hosts' own links included: a phase in which one
    /// host sends two flows has a load of at least 2 under any routing. A pair listed
    /// twice in a phase is two flows.
    pub fn phase_loads(
        &self,
        phases: &[Vec<(HostId, HostId)>],
        mut path: impl FnMut(HostId, HostId) -> Vec<u32>,
    ) -> Result<Vec<PhaseLoad>, XgftError> {
        let mut loads = Vec::with_capacity(phases.len());
        for (p, phase) in phases.iter().enumerate() {
            self.check_hosts(p, phase)?;
            // The transmitting end of every link crossed, once per flow crossing it.
            let mut links = Vec::new();
            for &(src, dst) in phase {
                let ports = path(src, dst);
                match self.hops(src, dst, &ports) {
                    Some(hops) => links.extend(hops),
                    None => {
                        return Err(XgftError::BadPath {
                            src: src.0,
                            dst: dst.0,
                            path: ports,
                        });
                    }
                }
            }
            links.sort_unstable();
            let mut load = PhaseLoad::default();
            for flows in links.chunk_by(|a, b| a == b) {
                let n = flows.len() as u32;
                load.max_load = load.max_load.max(n);
                load.conflicts += n - 1;
            }
            loads.push(load);
        }
        Ok(loads)
    }

    /// Checks that every flow of phase `p` names hosts of the tree.
    fn check_hosts(&self, p: usize, phase: &[(HostId, HostId)]) -> Result<(), XgftError> {
        let hosts = self.hosts();
        for (flow, &(src, dst)) in phase.iter().enumerate() {
            if let Some(host) = [src, dst].into_iter().find(|h| h.0 >= hosts) {
                return Err(XgftError::UnknownHost {
                    phase: p,
                    flow,
                    host: host.0,
                    hosts,
                });
            }
        }
        Ok(())
    }
}

/// A flow being routed: its pair, the level it climbs to, the parents chosen so far,
/// and the labels of the switches it climbs from and descends into at the current level.
#[derive(Debug)]
struct Flow {
    src: HostId,
    dst: HostId,
    top: usize,
    /// the parents were chosen by an earlier phase
    fixed: bool,
    ups: Vec<u32>,
    from: Vec<u32>,
    to: Vec<u32>,
}

/// A flow at one level: an edge from the switch it climbs from to the switch it
/// descends into (indices within the level).
#[derive(Debug, Clone, Copy)]
struct Edge {
    climbs_from: u32,
    descends_into: u32,
    /// the colour an earlier phase fixed
    fixed: Option<u32>,
    /// the d-mod-k colour, taken when it is free
    preferred: u32,
}

/// No edge (in [`Colouring::at`]) or no colour yet (in [`Colouring::colour`]).
const NONE: u32 = u32::MAX;

/// Colours `edges` with `colours` colours so that each switch has as few edges of one
/// colour as possible: switches split into copies of at most `colours` edges, coloured
/// properly. The colour of each edge, in order.
fn colour(edges: &[Edge], colours: u32) -> Vec<u32> {
    let mut g = Colouring {
        colours,
        copies: BTreeMap::new(),
        placed: Vec::new(),
        at: Vec::new(),
        ends: vec![[NONE; 2]; edges.len()],
        colour: vec![NONE; edges.len()],
        fixed: edges.iter().map(|e| e.fixed.is_some()).collect(),
    };
    // Fixed edges first, on copies where their colour is still free; then the others.
    for (e, edge) in edges.iter().enumerate() {
        if let Some(c) = edge.fixed {
            g.ends[e] = [
                g.place((0, edge.climbs_from), Some(c)),
                g.place((1, edge.descends_into), Some(c)),
            ];
            g.set(e, c);
        }
    }
    for (e, edge) in edges.iter().enumerate().filter(|(_, edge)| edge.fixed.is_none()) {
        g.ends[e] = [
            g.place((0, edge.climbs_from), None),
            g.place((1, edge.descends_into), None),
        ];
    }
    for (e, edge) in edges.iter().enumerate().filter(|(_, edge)| edge.fixed.is_none()) {
        g.colour_edge(e, edge);
    }
    g.colour
}

/// A proper edge colouring in progress of a bipartite multigraph whose vertices are
/// copies of switches, each with at most `colours` edges.
#[derive(Debug)]
struct Colouring {
    colours: u32,
    /// the copies of each switch: (0: climbs from, 1: descends into; index) → copy ids
    copies: BTreeMap<(u8, u32), Vec<u32>>,
    /// edges placed on each copy, coloured or not
    placed: Vec<u32>,
    /// `at[copy · colours + c]`: the edge of colour c at the copy, or [`NONE`]
    at: Vec<u32>,
    /// each edge's two copies: where it climbs from, where it descends into
    ends: Vec<[u32; 2]>,
    /// each edge's colour, or [`NONE`]
    colour: Vec<u32>,
    /// each edge's colour was fixed by an earlier phase
    fixed: Vec<bool>,
}

impl Colouring {
    /// Where the edge of colour `c` at `copy` is kept in `at`.
    fn slot(&self, copy: u32, c: u32) -> usize {
        copy as usize * self.colours as usize + c as usize
    }

    fn edge_at(&self, copy: u32, c: u32) -> u32 {
        self.at[self.slot(copy, c)]
    }

    fn is_free(&self, copy: u32, c: u32) -> bool {
        self.edge_at(copy, c) == NONE
    }

    fn free_colours(&self, copy: u32) -> Vec<u32> {
        (0..self.colours).filter(|&c| self.is_free(copy, c)).collect()
    }

    /// A copy of `switch` for one more edge (of colour `c` if given): the first with
    /// room (and `c` free), else a new one.
    fn place(&mut self, switch: (u8, u32), c: Option<u32>) -> u32 {
        let copies = self.copies.get(&switch).map_or(&[][..], Vec::as_slice);
        let room = copies
            .iter()
            .copied()
            .find(|&copy| self.placed[copy as usize] < self.colours && c.is_none_or(|c| self.is_free(copy, c)));
        let copy = room.unwrap_or_else(|| self.new_copy(switch));
        self.placed[copy as usize] += 1;
        copy
    }

    fn new_copy(&mut self, switch: (u8, u32)) -> u32 {
        let copy = self.placed.len() as u32;
        self.placed.push(0);
        self.at.extend(std::iter::repeat_n(NONE, self.colours as usize));
        self.copies.entry(switch).or_default().push(copy);
        copy
    }

    fn set(&mut self, e: usize, c: u32) {
        self.colour[e] = c;
        for copy in self.ends[e] {
            let slot = self.slot(copy, c);
            self.at[slot] = e as u32;
        }
    }

    /// Colours free edge `e`: with a colour free at both its copies (the d-mod-k one if
    /// it is), else after an alternating-path exchange frees one, else (only fixed edges
    /// in the way) with a colour free where it climbs, moved to another copy of where it
    /// descends (a new one if need be: one more flow on that link).
    fn colour_edge(&mut self, e: usize, edge: &Edge) {
        let [u, v] = self.ends[e];
        let (at_u, at_v) = (self.free_colours(u), self.free_colours(v));
        let both = at_u.iter().copied().filter(|c| at_v.contains(c));
        if let Some(c) = both.min_by_key(|&c| c != edge.preferred) {
            return self.set(e, c);
        }
        for &a in &at_u {
            for &b in &at_v {
                // The a/b path from v cannot reach u (u lacks a): flipping it frees a at v.
                if self.flip(v, a, b) {
                    return self.set(e, a);
                }
                // Symmetrically, flipping the b/a path from u frees b at u.
                if self.flip(u, b, a) {
                    return self.set(e, b);
                }
            }
        }
        // `u` has at most `colours` edges, `e` among them uncoloured: a colour is free.
        let a = if self.is_free(u, edge.preferred) {
            edge.preferred
        } else {
            at_u[0]
        };
        self.placed[v as usize] -= 1;
        self.ends[e][1] = self.place((1, edge.descends_into), Some(a));
        self.set(e, a);
    }

    /// Swaps colours `a` and `b` along the path that leaves `start` on its `a` edge and
    /// alternates b, a, …; refuses (false) when the path holds a fixed edge.
    fn flip(&mut self, start: u32, a: u32, b: u32) -> bool {
        let mut path = Vec::new();
        let (mut at, mut c, mut next) = (start, a, b);
        loop {
            let e = self.edge_at(at, c);
            if e == NONE {
                break;
            }
            if self.fixed[e as usize] {
                return false;
            }
            path.push(e as usize);
            let [x, y] = self.ends[e as usize];
            at = if x == at { y } else { x };
            (c, next) = (next, c);
        }
        for &e in &path {
            for copy in self.ends[e] {
                let slot = self.slot(copy, self.colour[e]);
                self.at[slot] = NONE;
            }
        }
        for &e in &path {
            let swapped = if self.colour[e] == a { b } else { a };
            self.set(e, swapped);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SwitchId;
    use crate::link::LinkParams;
    use crate::rng::Rng;
    use crate::topology::xgft::tests::{assert_minimal, small_trees};
    use crate::topology::{Route, RouteTable, Routing, wire};

    type Phase = Vec<(HostId, HostId)>;

    fn flows(pairs: &[(u32, u32)]) -> Phase {
        pairs.iter().map(|&(s, d)| (HostId(s), HostId(d))).collect()
    }

    /// A random permutation of `hosts` hosts (Fisher–Yates), as one phase.
    fn permutation(hosts: u32, seed: u64) -> Phase {
        let mut to: Vec<u32> = (0..hosts).collect();
        let mut rng = Rng::new(seed);
        for i in (1..to.len()).rev() {
            to.swap(i, rng.below(i as u64 + 1) as usize);
        }
        (0..hosts).map(|s| (HostId(s), HostId(to[s as usize]))).collect()
    }

    /// Host (a, b) of a `rows` × (hosts / `rows`) matrix sends to (b, a).
    fn transpose(hosts: u32, rows: u32) -> Phase {
        let cols = hosts / rows;
        (0..hosts)
            .map(|s| (HostId(s), HostId((s % rows) * cols + s / rows)))
            .collect()
    }

    /// All-to-all as hosts − 1 shift phases: in phase i, s sends to s + i.
    fn shifts(hosts: u32) -> Vec<Phase> {
        (1..hosts)
            .map(|i| (0..hosts).map(|s| (HostId(s), HostId((s + i) % hosts))).collect())
            .collect()
    }

    /// The worst phase's (most flows on a link, conflicts) under `path`.
    fn worst(x: &Xgft, phases: &[Phase], path: impl FnMut(HostId, HostId) -> Vec<u32>) -> (u32, u32) {
        let loads = x.phase_loads(phases, path).expect("valid pattern");
        (
            loads.iter().map(|l| l.max_load).max().unwrap_or(0),
            loads.iter().map(|l| l.conflicts).max().unwrap_or(0),
        )
    }

    fn colored(x: &Xgft, phases: &[Phase]) -> (u32, u32) {
        let routes = x.pattern_aware_routes(phases).expect("valid pattern");
        worst(x, phases, |s, d| routes.path(s, d))
    }

    #[test]
    fn every_pattern_aware_route_is_minimal_and_reaches_its_destination() {
        for x in small_trees() {
            // Several phases: pairs repeat across them, and many pairs are left out.
            let hosts = x.hosts();
            let phases = [permutation(hosts, 1), transpose(hosts, 4), permutation(hosts, 2)];
            let routes = x.pattern_aware_routes(&phases).expect("valid pattern");
            assert!(routes.pairs() > hosts as usize, "{}", routes.pairs());
            let topology = x.topology(LinkParams::default());
            let wiring = wire(&topology).expect("valid wiring");
            for src in 0..hosts {
                for dst in 0..hosts {
                    let path = routes.path(HostId(src), HostId(dst));
                    assert_minimal(&x, &wiring, src, dst, &path);
                }
            }
        }
    }

    #[test]
    fn colored_routing_avoids_the_conflicts_of_a_transpose() {
        // 4-ary 2-tree, 4 × 4 transpose: the three flows leaving leaf a all go to hosts
        // ≡ a mod 4, so d-mod-k sends them up one link; s-mod-k brings the three flows
        // into leaf b down one link. Colored: no shared link.
        let x = Xgft::kary_ntree(4, 2).expect("valid");
        let phases = [transpose(16, 4)];
        assert_eq!(worst(&x, &phases, |s, d| x.d_mod_k_path(s, d)), (3, 8));
        assert_eq!(worst(&x, &phases, |s, d| x.s_mod_k_path(s, d)), (3, 8));
        assert_eq!(colored(&x, &phases), (1, 0));
        // 4-ary 3-tree, 8 × 8 transpose.
        let x = Xgft::kary_ntree(4, 3).expect("valid");
        let phases = [transpose(64, 8)];
        assert_eq!(worst(&x, &phases, |s, d| x.d_mod_k_path(s, d)).0, 4);
        assert_eq!(colored(&x, &phases), (1, 0));
    }

    #[test]
    fn permutations_on_full_trees_are_non_blocking() {
        // A full k-ary n-tree is rearrangeably non-blocking; the level-by-level colouring
        // finds the conflict-free routes of any permutation. The oblivious routings
        // share links on most random permutations.
        for (k, n) in [(2, 2), (3, 2), (4, 2), (8, 2), (2, 4), (4, 3), (8, 3)] {
            let x = Xgft::kary_ntree(k, n).expect("valid");
            let phases: Vec<Phase> = (0..4).map(|seed| permutation(x.hosts(), seed)).collect();
            for phase in &phases {
                assert_eq!(colored(&x, std::slice::from_ref(phase)), (1, 0), "{k}-ary {n}-tree");
            }
            if k > 2 {
                assert!(
                    worst(&x, &phases, |s, d| x.d_mod_k_path(s, d)).0 > 1,
                    "{k}-ary {n}-tree"
                );
                assert!(
                    worst(&x, &phases, |s, d| x.random_path(1, s, d)).0 > 1,
                    "{k}-ary {n}-tree"
                );
            }
        }
    }

    #[test]
    fn slimmed_trees_reach_the_bound_of_their_thin_links() {
        // XGFT(3; 4,4,4; 1,2,2): a 16-host pod leaves through 2 × 2 top links. Shifting
        // every host by 16 sends all 16 out of each pod: at least 4 flows on some link.
        let x = Xgft::new(vec![4, 4, 4], vec![1, 2, 2]).expect("valid");
        let shift: Phase = (0..64).map(|s| (HostId(s), HostId((s + 16) % 64))).collect();
        assert_eq!(colored(&x, &[shift]).0, 4);
        // On random permutations, never worse than the oblivious routings.
        for x in small_trees() {
            for seed in 0..4 {
                let phases = [permutation(x.hosts(), seed)];
                let best = [
                    worst(&x, &phases, |s, d| x.d_mod_k_path(s, d)).0,
                    worst(&x, &phases, |s, d| x.s_mod_k_path(s, d)).0,
                    worst(&x, &phases, |s, d| x.random_path(seed, s, d)).0,
                ];
                let colored = colored(&x, &phases).0;
                assert!(
                    best.iter().all(|&b| colored <= b),
                    "{x:?} {seed}: {colored} vs {best:?}"
                );
            }
        }
    }

    #[test]
    fn patterns_d_mod_k_routes_well_keep_their_d_mod_k_paths() {
        // d-mod-k routes every shift without conflict; the colouring prefers its choice.
        let x = Xgft::kary_ntree(4, 3).expect("valid");
        let phases = shifts(64);
        let routes = x.pattern_aware_routes(&phases).expect("valid pattern");
        assert_eq!(worst(&x, &phases, |s, d| routes.path(s, d)), (1, 0));
        for (s, d) in phases.iter().flatten().copied() {
            assert_eq!(routes.path(s, d), x.d_mod_k_path(s, d), "{s} → {d}");
        }
    }

    #[test]
    fn the_first_phase_listing_a_pair_chooses_its_path() {
        let x = Xgft::kary_ntree(4, 2).expect("valid");
        let first = transpose(16, 4);
        let alone = x.pattern_aware_routes(std::slice::from_ref(&first)).expect("valid");
        // A later phase repeating some pairs does not move them.
        let mut later = first[..8].to_vec();
        later.extend(flows(&[(8, 3), (9, 7), (9, 7)]));
        let both = x.pattern_aware_routes(&[first.clone(), later.clone()]).expect("valid");
        for &(s, d) in &first {
            assert_eq!(both.path(s, d), alone.path(s, d), "{s} → {d}");
        }
        assert_eq!(both.pairs(), alone.pairs() + 2);
        // Pairs outside the pattern, and pairs on one leaf, take d-mod-k paths.
        for (s, d) in [(0, 1), (0, 5), (15, 2)] {
            assert_eq!(both.path(HostId(s), HostId(d)), x.d_mod_k_path(HostId(s), HostId(d)));
        }
        // A repeated phase has the same loads; the later one, its fixed pairs
        // notwithstanding, shares no link but the four of the pair listed twice.
        let loads = x
            .phase_loads(&[first.clone(), later, first], |s, d| both.path(s, d))
            .expect("valid");
        let load = |max_load, conflicts| PhaseLoad { max_load, conflicts };
        assert_eq!(loads, [load(1, 0), load(2, 4), load(1, 0)]);
    }

    fn edge(climbs_from: u32, descends_into: u32, fixed: Option<u32>, preferred: u32) -> Edge {
        Edge {
            climbs_from,
            descends_into,
            fixed,
            preferred,
        }
    }

    #[test]
    fn colouring_exchanges_colours_along_an_alternating_path() {
        // e0 takes colour 0 and e1 colour 1, as they prefer; e2 then finds 0 taken where
        // it climbs and 1 where it descends: e1 switches to 0, e2 takes 1.
        let edges = [edge(0, 0, None, 0), edge(1, 1, None, 1), edge(0, 1, None, 0)];
        assert_eq!(colour(&edges, 2), [0, 0, 1]);
        // With e1 fixed, e0 switches instead.
        let edges = [edge(0, 0, None, 0), edge(1, 1, Some(1), 1), edge(0, 1, None, 0)];
        assert_eq!(colour(&edges, 2), [1, 1, 0]);
        // With both fixed, e2 shares colour 1 with e1 where it descends.
        let edges = [edge(0, 0, Some(0), 0), edge(1, 1, Some(1), 1), edge(0, 1, None, 0)];
        assert_eq!(colour(&edges, 2), [0, 1, 1]);
    }

    #[test]
    fn colouring_spreads_a_switch_evenly_over_its_links() {
        // Seven edges from one switch, three colours: at most ⌈7 / 3⌉ = 3 of a colour,
        // every colour used; the d-mod-k preference (all 0) gives way.
        let edges: Vec<Edge> = (0..7).map(|d| edge(0, d, None, 0)).collect();
        let colours = colour(&edges, 3);
        let count = |c| colours.iter().filter(|&&x| x == c).count();
        assert_eq!((count(0), count(1), count(2)), (3, 2, 2), "{colours:?}");
    }

    #[test]
    fn later_phases_route_around_fixed_pairs() {
        // Phase 0 fixes 0 → 4 and 1 → 8 on different spines (colouring, not d-mod-k),
        // and 4 → 0 and 8 → 1 likewise. Phase 1 lists them with 2 → 5 and 3 → 9:
        // whatever spine those take, the fixed flows leave room for both.
        let x = Xgft::kary_ntree(4, 2).expect("valid");
        let phases = [
            flows(&[(0, 4), (1, 8), (4, 0), (8, 1)]),
            flows(&[(0, 4), (1, 8), (2, 5), (3, 9), (4, 0), (8, 1)]),
        ];
        assert_eq!(colored(&x, &phases), (1, 0));
        // Every phase of all-to-all on the 4-ary 3-tree meets pairs fixed before: the
        // loads stay near 1.
        let x = Xgft::kary_ntree(4, 3).expect("valid");
        let mut phases = vec![permutation(64, 7), permutation(64, 8)];
        phases.extend(shifts(64));
        let (max_load, _) = colored(&x, &phases);
        assert!(max_load <= 2, "{max_load}");
    }

    #[test]
    fn pattern_aware_routes_are_deterministic() {
        let x = Xgft::new(vec![4, 4, 4], vec![1, 2, 2]).expect("valid");
        let phases: Vec<Phase> = (0..3).map(|seed| permutation(64, seed)).collect();
        let a = x.pattern_aware_routes(&phases).expect("valid");
        assert_eq!(a, x.pattern_aware_routes(&phases).expect("valid"));
        assert_eq!(a.xgft(), &x);
        // Pinned: the paths of host 0's first flows.
        let paths: Vec<Vec<u32>> = phases.iter().map(|p| a.path(p[0].0, p[0].1)).collect();
        assert_eq!(paths, [vec![4, 3, 2], vec![5, 2, 1], vec![5, 4, 1, 2, 3]]);
    }

    #[test]
    fn the_route_table_carries_pattern_aware_paths() {
        let x = Xgft::kary_ntree(4, 2).expect("valid");
        let routes = x.pattern_aware_routes(&[transpose(16, 4)]).expect("valid");
        let mut topology = x.topology(LinkParams::default());
        topology.routing = Routing::PatternAware(Box::new(routes.clone()));
        let wiring = wire(&topology).expect("valid wiring");
        let mut table = RouteTable::build(&topology, &wiring).expect("routable");
        for (s, d) in [(1, 4), (0, 0), (7, 13), (1, 4)] {
            let (src, dst) = (HostId(s), HostId(d));
            let route = table.route(src, dst, 0);
            assert!(matches!(route, Route::Source(_)));
            let path = routes.path(src, dst);
            let ports: Vec<u32> = (0..path.len())
                .map(|hop| table.port(route, SwitchId(0), hop, dst))
                .collect();
            assert_eq!(ports, path);
            assert_eq!(topology.routing.xgft_path(src, dst), Some(path));
        }
    }

    #[test]
    fn patterns_naming_unknown_hosts_are_refused() {
        let x = Xgft::kary_ntree(4, 2).expect("valid");
        assert_eq!(
            x.pattern_aware_routes(&[flows(&[(0, 1)]), flows(&[(2, 3), (17, 0)])]),
            Err(XgftError::UnknownHost {
                phase: 1,
                flow: 1,
                host: 17,
                hosts: 16
            })
        );
    }

    #[test]
    fn loads_count_flows_sharing_a_link() {
        // The 4-ary 2-tree: hosts 0 and 1 (leaf 0) send to 4 and 8. d-mod-k takes spine 0
        // for both (4 and 8 are 0 mod 4); s-mod-k spreads them by source.
        let x = Xgft::kary_ntree(4, 2).expect("valid");
        let phases = [flows(&[(0, 4), (1, 8)]), flows(&[]), flows(&[(0, 1), (0, 2)])];
        let d_mod_k = x.phase_loads(&phases, |s, d| x.d_mod_k_path(s, d)).expect("valid");
        let s_mod_k = x.phase_loads(&phases, |s, d| x.s_mod_k_path(s, d)).expect("valid");
        let load = |max_load, conflicts| PhaseLoad { max_load, conflicts };
        // Phase 2: host 0 sends twice, its own link carries both under any routing.
        assert_eq!(d_mod_k, [load(2, 1), load(0, 0), load(2, 1)]);
        assert_eq!(s_mod_k, [load(1, 0), load(0, 0), load(2, 1)]);
    }

    #[test]
    fn bad_patterns_and_paths_are_named() {
        let x = Xgft::kary_ntree(4, 2).expect("valid");
        let phases = [flows(&[(0, 4)]), flows(&[(1, 2), (3, 16)])];
        assert_eq!(
            x.phase_loads(&phases, |s, d| x.d_mod_k_path(s, d))
                .err()
                .map(|e| e.to_string()),
            Some("xgft pattern: phases[1][1] names host 16, the tree has 16 hosts".into())
        );
        let phases = [flows(&[(0, 4)])];
        for path in [vec![], vec![4, 0], vec![4, 2, 0], vec![4, 1, 0, 0], vec![9, 0]] {
            assert_eq!(
                x.phase_loads(&phases, |_, _| path.clone()),
                Err(XgftError::BadPath { src: 0, dst: 4, path })
            );
        }
    }
}
