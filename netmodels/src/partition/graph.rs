//! The graph partitioner: recursive bisection of the switch graph, each bisection
//! multilevel (as METIS and Scotch do, in small).
//!
//! The graph: one vertex per switch, one edge per cable between two switches (several
//! cables between a pair are several edges, so the cut counts cables); host cables are
//! left out, as hosts go with their switches and never cut. Switches weigh one each.
//!
//! One bisection:
//!
//! 1. *coarsen*: match each vertex, in id order, with the unmatched neighbour it shares
//!    the heaviest edge with (heavy-edge matching), merge matched pairs into one vertex
//!    (weights add up, parallel edges merge into one heavier edge), and repeat until a
//!    hundred-odd vertices remain or merging stalls;
//! 2. *split the coarsest graph*: from a few seeds (a pseudo-peripheral vertex, then
//!    vertices spread over the ids) grow one side greedily, each time taking the
//!    neighbouring vertex whose move cuts the least, until it weighs its share; refine
//!    each, keep the best;
//! 3. *uncoarsen*: project the sides back level by level and refine at each: passes of
//!    Fiduccia–Mattheyses moves (vertices in buckets by gain, the best move within a
//!    balance window, each vertex once a pass, then back to the best prefix), after a
//!    rebalancing that moves the best vertices of the heavier side while it is too heavy.
//!
//! Coarse levels allow half a percent of imbalance; the graph itself (unit weights) none:
//! a bisection of `n` switches for `a` and `b` of the `a + b` parts puts exactly
//! ⌊n·a/(a+b)⌋ on the first side, so the parts of the whole differ by at most about
//! log₂ P switches. Every step is linear in the edges, and everything runs in the order
//! of ids and edges: deterministic.

use crate::ids::Device;
use crate::topology::Topology;

/// Passes of refinement per level, at most (a pass that gains nothing ends them).
const PASSES: usize = 8;

/// Coarsening stops at this many vertices.
const COARSEST: usize = 128;

/// Seeds tried on the coarsest graph.
const TRIALS: usize = 6;

/// The part of every switch of `topology` in `parts` parts (`parts` ≤ switches).
pub(super) fn partition(topology: &Topology, parts: u32) -> Vec<u32> {
    let graph = Graph::of_switches(topology);
    let mut of_switch = vec![0u32; graph.len()];
    let ids = (0..graph.len() as u32).collect();
    split(graph, ids, 0, parts, &mut of_switch);
    of_switch
}

/// An undirected graph in compressed rows: vertex `v`'s neighbours are
/// `adj[start[v]..start[v + 1]]`, with the weights of those edges in `weight`; `size`
/// is each vertex's weight.
#[derive(Debug)]
struct Graph {
    start: Vec<usize>,
    adj: Vec<u32>,
    weight: Vec<u32>,
    size: Vec<u32>,
}

impl Graph {
    /// The switches and the cables between two of them, neighbours in cable order.
    fn of_switches(topology: &Topology) -> Graph {
        let n = topology.switch_ports.len();
        let pairs = || {
            topology.cables.iter().filter_map(|c| match (c.a.device, c.b.device) {
                (Device::Switch(a), Device::Switch(b)) if a != b => Some((a.0, b.0)),
                _ => None,
            })
        };
        let mut degree = vec![0usize; n];
        for (a, b) in pairs() {
            degree[a as usize] += 1;
            degree[b as usize] += 1;
        }
        Graph::unit(degree, pairs().flat_map(|(a, b)| [(a, b), (b, a)]))
    }

    /// Unit weights, from each vertex's degree and the (vertex, neighbour) entries.
    fn unit(degree: Vec<usize>, entries: impl Iterator<Item = (u32, u32)>) -> Graph {
        let mut start = Vec::with_capacity(degree.len() + 1);
        let mut sum = 0;
        start.push(0);
        for &d in &degree {
            sum += d;
            start.push(sum);
        }
        let mut fill = start[..start.len() - 1].to_vec();
        let mut adj = vec![0u32; sum];
        for (v, u) in entries {
            adj[fill[v as usize]] = u;
            fill[v as usize] += 1;
        }
        Graph {
            start,
            adj,
            weight: vec![1; sum],
            size: vec![1; degree.len()],
        }
    }

    fn len(&self) -> usize {
        self.size.len()
    }

    fn edges(&self, v: u32) -> std::ops::Range<usize> {
        self.start[v as usize]..self.start[v as usize + 1]
    }

    fn neighbours(&self, v: u32) -> &[u32] {
        &self.adj[self.edges(v)]
    }

    fn total_size(&self) -> u64 {
        self.size.iter().map(|&s| u64::from(s)).sum()
    }

    /// The most any vertex's edges weigh together.
    fn max_degree(&self) -> u64 {
        (0..self.len() as u32)
            .map(|v| self.weight[self.edges(v)].iter().map(|&w| u64::from(w)).sum())
            .max()
            .unwrap_or(0)
    }

    /// The subgraph of the vertices with `keep(v)`, renumbered in order, and their
    /// numbers here; unit weights (it is cut from the switch graph).
    fn subgraph(&self, keep: impl Fn(u32) -> bool) -> (Graph, Vec<u32>) {
        let mut index = vec![u32::MAX; self.len()];
        let mut kept = Vec::new();
        for v in 0..self.len() as u32 {
            if keep(v) {
                index[v as usize] = kept.len() as u32;
                kept.push(v);
            }
        }
        let index = &index;
        let degree = kept
            .iter()
            .map(|&v| {
                self.neighbours(v)
                    .iter()
                    .filter(|&&u| index[u as usize] != u32::MAX)
                    .count()
            })
            .collect();
        let entries = kept.iter().flat_map(|&v| {
            self.neighbours(v)
                .iter()
                .filter(|&&u| index[u as usize] != u32::MAX)
                .map(move |&u| (index[v as usize], index[u as usize]))
        });
        (Graph::unit(degree, entries), kept)
    }

    /// Heavy-edge matching: the coarser graph, and each vertex's vertex there; merged
    /// vertices weigh at most `max_size`.
    fn coarsen(&self, max_size: u64) -> (Graph, Vec<u32>) {
        let n = self.len();
        let mut mate = vec![NONE; n];
        for v in 0..n as u32 {
            if mate[v as usize] != NONE {
                continue;
            }
            let mut best = (v, 0);
            for e in self.edges(v) {
                let (u, w) = (self.adj[e], self.weight[e]);
                if u != v
                    && mate[u as usize] == NONE
                    && w > best.1
                    && u64::from(self.size[u as usize]) + u64::from(self.size[v as usize]) <= max_size
                {
                    best = (u, w);
                }
            }
            mate[v as usize] = best.0;
            mate[best.0 as usize] = v;
        }
        let mut map = vec![0u32; n];
        let mut members = Vec::new();
        for v in 0..n as u32 {
            let m = mate[v as usize];
            if m >= v {
                map[v as usize] = members.len() as u32;
                map[m as usize] = members.len() as u32;
                members.push((v, m));
            }
        }
        let mut slot = vec![NONE; members.len()];
        let mut start = Vec::with_capacity(members.len() + 1);
        start.push(0);
        let (mut adj, mut weight, mut size) = (Vec::new(), Vec::new(), Vec::with_capacity(members.len()));
        for (c, &(v, m)) in members.iter().enumerate() {
            let row = adj.len();
            for &x in &[v, m][..if v == m { 1 } else { 2 }] {
                for e in self.edges(x) {
                    let cu = map[self.adj[e] as usize];
                    if cu as usize == c {
                        continue;
                    }
                    if slot[cu as usize] == NONE {
                        slot[cu as usize] = adj.len() as u32;
                        adj.push(cu);
                        weight.push(self.weight[e]);
                    } else {
                        weight[slot[cu as usize] as usize] += self.weight[e];
                    }
                }
            }
            for &cu in &adj[row..] {
                slot[cu as usize] = NONE;
            }
            start.push(adj.len());
            let both = if v == m { 0 } else { self.size[m as usize] };
            size.push(self.size[v as usize] + both);
        }
        (
            Graph {
                start,
                adj,
                weight,
                size,
            },
            map,
        )
    }
}

/// Splits `graph`, whose vertices are switches `ids`, into parts `first..first + parts`.
fn split(graph: Graph, ids: Vec<u32>, first: u32, parts: u32, of_switch: &mut [u32]) {
    if parts == 1 {
        for s in ids {
            of_switch[s as usize] = first;
        }
        return;
    }
    let left = parts / 2;
    let target = graph.len() as u64 * u64::from(left) / u64::from(parts);
    let right_side = bisect(&graph, target);
    let (a, a_of) = graph.subgraph(|v| !right_side[v as usize]);
    let (b, b_of) = graph.subgraph(|v| right_side[v as usize]);
    drop(graph);
    let a_ids = a_of.iter().map(|&v| ids[v as usize]).collect();
    let b_ids = b_of.iter().map(|&v| ids[v as usize]).collect();
    drop(ids);
    split(a, a_ids, first, left, of_switch);
    split(b, b_ids, first + left, parts - left, of_switch);
}

/// Which vertices of `graph` (unit sizes) go right (`true`) so that exactly `target`
/// stay left and few edges cross: multilevel (see the module documentation).
fn bisect(graph: &Graph, target: u64) -> Vec<bool> {
    let total = graph.total_size();
    let max_size = (total * 3 / (2 * COARSEST as u64)).max(2);
    let mut levels: Vec<Graph> = Vec::new();
    let mut maps: Vec<Vec<u32>> = Vec::new();
    loop {
        let g = levels.last().unwrap_or(graph);
        if g.len() <= COARSEST {
            break;
        }
        let (coarse, map) = g.coarsen(max_size);
        if coarse.len() * 10 > g.len() * 9 {
            break;
        }
        levels.push(coarse);
        maps.push(map);
    }
    let coarsest = levels.last().unwrap_or(graph);
    let mut right = initial(coarsest, target, slack(coarsest, levels.is_empty()));
    while let Some(map) = maps.pop() {
        levels.pop();
        let finer = levels.last().unwrap_or(graph);
        right = map.iter().map(|&c| right[c as usize]).collect();
        refine(finer, &mut right, target, slack(finer, levels.is_empty()));
    }
    right
}

/// The imbalance allowed at a level: none on the graph itself, half a percent (or the
/// heaviest vertex) on coarser ones.
fn slack(graph: &Graph, finest: bool) -> u64 {
    if finest {
        return 0;
    }
    let heaviest = graph.size.iter().copied().max().unwrap_or(0);
    (graph.total_size() / 200).max(u64::from(heaviest))
}

/// The best of a few greedy growths, each refined.
fn initial(graph: &Graph, target: u64, slack: u64) -> Vec<bool> {
    let n = graph.len() as u32;
    let trials = if n as usize <= 4 * COARSEST { TRIALS } else { 2 };
    let seeds = std::iter::once(peripheral(graph))
        .chain((1..trials as u32).map(|i| (u64::from(i) * u64::from(n) / trials as u64) as u32));
    let mut best: Option<((u64, i64), Vec<bool>)> = None;
    for seed in seeds {
        let mut fm = Fm::new(graph, vec![true; n as usize], target, slack);
        fm.grow(seed);
        fm.refine();
        let score = fm.score();
        if best.as_ref().is_none_or(|(b, _)| score < *b) {
            best = Some((score, fm.right));
        }
    }
    best.map(|(_, right)| right).unwrap_or_default()
}

fn refine(graph: &Graph, right: &mut Vec<bool>, target: u64, slack: u64) {
    let mut fm = Fm::new(graph, std::mem::take(right), target, slack);
    fm.refine();
    *right = fm.right;
}

/// A pseudo-peripheral vertex: one end of a long shortest path, found by repeated
/// breadth-first searches from vertex 0's component while the distance grows.
fn peripheral(graph: &Graph) -> u32 {
    let (mut far, mut eccentricity) = farthest(graph, 0);
    for _ in 0..4 {
        let (next, e) = farthest(graph, far);
        if e <= eccentricity {
            break;
        }
        (far, eccentricity) = (next, e);
    }
    far
}

/// The last vertex a breadth-first search from `root` reaches, and its distance.
fn farthest(graph: &Graph, root: u32) -> (u32, u32) {
    let mut distance = vec![u32::MAX; graph.len()];
    let mut queue = std::collections::VecDeque::from([root]);
    distance[root as usize] = 0;
    let mut last = root;
    while let Some(v) = queue.pop_front() {
        last = v;
        for &u in graph.neighbours(v) {
            if distance[u as usize] == u32::MAX {
                distance[u as usize] = distance[v as usize] + 1;
                queue.push_back(u);
            }
        }
    }
    (last, distance[last as usize])
}

const NONE: u32 = u32::MAX;

/// Fiduccia–Mattheyses refinement of a bisection: vertices in buckets by gain (the
/// weight of the cut edges their move uncuts, less the weight of those it cuts), one
/// set of buckets per side.
#[derive(Debug)]
struct Fm<'g> {
    graph: &'g Graph,
    /// the side of each vertex
    right: Vec<bool>,
    /// what the left side should weigh
    target: u64,
    /// how far from `target` the left side may be at the end
    slack: u64,
    /// how far from `target` the left side may stray during a pass
    window: u64,
    /// moves without a better cut after which a pass ends
    patience: usize,
    /// what the left side weighs
    left: u64,
    /// the weight of the edges cut
    cut: i64,
    /// gain + `offset` is a bucket index
    offset: i64,
    gain: Vec<i64>,
    locked: Vec<bool>,
    /// whether each vertex is in a bucket
    queued: Vec<bool>,
    /// first vertex of each bucket, per side (left, right)
    head: [Vec<u32>; 2],
    /// the highest bucket that may be non-empty, per side
    top: [usize; 2],
    next: Vec<u32>,
    prev: Vec<u32>,
}

impl<'g> Fm<'g> {
    fn new(graph: &'g Graph, right: Vec<bool>, target: u64, slack: u64) -> Fm<'g> {
        let n = graph.len();
        let max_degree = graph.max_degree();
        let buckets = 2 * max_degree as usize + 1;
        let total = graph.total_size();
        let heaviest = u64::from(graph.size.iter().copied().max().unwrap_or(0));
        let left = (0..n).filter(|&v| !right[v]).map(|v| u64::from(graph.size[v])).sum();
        Fm {
            graph,
            right,
            target,
            slack,
            window: slack + (total / 64).clamp(heaviest.max(1), 4096.max(heaviest)),
            patience: (n / 32).clamp(64, 8192),
            left,
            cut: 0,
            offset: max_degree as i64,
            gain: vec![0; n],
            locked: vec![false; n],
            queued: vec![false; n],
            head: [vec![NONE; buckets], vec![NONE; buckets]],
            top: [0, 0],
            next: vec![NONE; n],
            prev: vec![NONE; n],
        }
    }

    /// Rebalances, then refines by passes until one gains nothing.
    fn refine(&mut self) {
        self.rebalance();
        for _ in 0..PASSES {
            if !self.pass() {
                break;
            }
        }
    }

    /// How far the left side is beyond the slack, and the cut: lower is better.
    fn score(&self) -> (u64, i64) {
        (self.left.abs_diff(self.target).saturating_sub(self.slack), self.cut)
    }

    fn bucket(&self, v: u32) -> usize {
        (self.gain[v as usize] + self.offset) as usize
    }

    fn insert(&mut self, v: u32) {
        let (s, b) = (usize::from(self.right[v as usize]), self.bucket(v));
        let first = self.head[s][b];
        self.next[v as usize] = first;
        self.prev[v as usize] = NONE;
        if first != NONE {
            self.prev[first as usize] = v;
        }
        self.head[s][b] = v;
        self.top[s] = self.top[s].max(b);
        self.queued[v as usize] = true;
    }

    fn remove(&mut self, v: u32) {
        let (s, b) = (usize::from(self.right[v as usize]), self.bucket(v));
        let (prev, next) = (self.prev[v as usize], self.next[v as usize]);
        if prev == NONE {
            self.head[s][b] = next;
        } else {
            self.next[prev as usize] = next;
        }
        if next != NONE {
            self.prev[next as usize] = prev;
        }
        self.queued[v as usize] = false;
    }

    /// The vertex of side `s` in the buckets with the highest gain.
    fn best(&mut self, s: usize) -> Option<u32> {
        while self.head[s][self.top[s]] == NONE {
            if self.top[s] == 0 {
                return None;
            }
            self.top[s] -= 1;
        }
        Some(self.head[s][self.top[s]])
    }

    /// Computes every gain and the cut, and empties the buckets.
    fn reset(&mut self) {
        let mut cut = 0;
        for v in 0..self.graph.len() as u32 {
            let side = self.right[v as usize];
            let mut gain = 0;
            for e in self.graph.edges(v) {
                let w = i64::from(self.graph.weight[e]);
                if self.right[self.graph.adj[e] as usize] != side {
                    gain += w;
                    cut += w;
                } else {
                    gain -= w;
                }
            }
            self.gain[v as usize] = gain;
        }
        self.cut = cut / 2;
        self.head.iter_mut().for_each(|h| h.fill(NONE));
        self.top = [0, 0];
        self.locked.fill(false);
        self.queued.fill(false);
    }

    /// Moves `v` (out of the buckets) to the other side, locks it and updates its
    /// unlocked neighbours' gains.
    fn shift(&mut self, v: u32) {
        self.locked[v as usize] = true;
        self.cut -= self.gain[v as usize];
        let to_right = !self.right[v as usize];
        self.right[v as usize] = to_right;
        let size = u64::from(self.graph.size[v as usize]);
        if to_right {
            self.left -= size;
        } else {
            self.left += size;
        }
        for e in self.graph.edges(v) {
            let u = self.graph.adj[e];
            if self.locked[u as usize] {
                continue;
            }
            let w = 2 * i64::from(self.graph.weight[e]);
            let queued = self.queued[u as usize];
            if queued {
                self.remove(u);
            }
            // On v's new side the edge is no longer cut; on the side v left it now is.
            self.gain[u as usize] += if self.right[u as usize] == to_right { -w } else { w };
            if queued {
                self.insert(u);
            }
        }
    }

    /// Grows the left side from `seed`, everything right, until it weighs `target`:
    /// each time the vertex next to it whose move cuts the least (greedy graph growing),
    /// the lowest right vertex when none is next to it.
    fn grow(&mut self, seed: u32) {
        self.reset();
        let mut seen = vec![false; self.graph.len()];
        let mut lowest = 0;
        seen[seed as usize] = true;
        self.insert(seed);
        while self.left < self.target {
            let v = match self.best(1) {
                Some(v) => {
                    self.remove(v);
                    v
                }
                None => {
                    while seen[lowest] {
                        lowest += 1;
                    }
                    seen[lowest] = true;
                    lowest as u32
                }
            };
            for &u in self.graph.neighbours(v) {
                if !seen[u as usize] {
                    seen[u as usize] = true;
                    self.insert(u);
                }
            }
            self.shift(v);
        }
    }

    /// While the left side is further from `target` than the slack, moves the best
    /// vertex of the heavier side that brings it nearer.
    fn rebalance(&mut self) {
        self.reset();
        let heavy = usize::from(self.left < self.target);
        for v in (0..self.graph.len() as u32).rev() {
            if usize::from(self.right[v as usize]) == heavy {
                self.insert(v);
            }
        }
        while self.left.abs_diff(self.target) > self.slack {
            let Some(v) = self.best(heavy) else { break };
            self.remove(v);
            let size = u64::from(self.graph.size[v as usize]);
            let after = if heavy == 0 { self.left - size } else { self.left + size };
            if after.abs_diff(self.target) < self.left.abs_diff(self.target) {
                self.shift(v);
            } else {
                self.locked[v as usize] = true;
            }
        }
    }

    /// One pass: moves every vertex at most once, each time the best move within the
    /// balance window, and goes back to the best state met (by [`Self::score`]).
    /// Whether it is better than the start.
    fn pass(&mut self) -> bool {
        self.reset();
        // Lowest ids first out of each bucket.
        for v in (0..self.graph.len() as u32).rev() {
            self.insert(v);
        }
        let (lowest, highest) = (self.target.saturating_sub(self.window), self.target + self.window);
        let start = self.score();
        let mut best = start;
        let mut moves: Vec<u32> = Vec::new();
        let mut best_moves = 0;
        while moves.len() - best_moves <= self.patience {
            let graph = self.graph;
            let size = |v: u32| u64::from(graph.size[v as usize]);
            let from_left = self.best(0).filter(|&v| self.left >= lowest + size(v));
            let from_right = self.best(1).filter(|&v| self.left + size(v) <= highest);
            let v = match (from_left, from_right) {
                (None, None) => break,
                (Some(v), None) | (None, Some(v)) => v,
                (Some(l), Some(r)) => {
                    let (gl, gr) = (self.gain[l as usize], self.gain[r as usize]);
                    // Equal gains: from the heavier side.
                    if gl > gr || (gl == gr && self.left >= self.target) {
                        l
                    } else {
                        r
                    }
                }
            };
            self.remove(v);
            self.shift(v);
            moves.push(v);
            let score = self.score();
            if score < best {
                best = score;
                best_moves = moves.len();
            }
        }
        for &v in moves[best_moves..].iter().rev() {
            let size = u64::from(self.graph.size[v as usize]);
            let back_right = !self.right[v as usize];
            self.right[v as usize] = back_right;
            if back_right {
                self.left -= size;
            } else {
                self.left += size;
            }
        }
        self.cut = best.1;
        best < start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `w`×`h` grid, vertices row by row.
    fn grid(w: u32, h: u32) -> Graph {
        let mut edges = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let v = y * w + x;
                if x + 1 < w {
                    edges.push((v, v + 1));
                }
                if y + 1 < h {
                    edges.push((v, v + w));
                }
            }
        }
        let mut degree = vec![0; (w * h) as usize];
        for &(a, b) in &edges {
            degree[a as usize] += 1;
            degree[b as usize] += 1;
        }
        Graph::unit(degree, edges.iter().flat_map(|&(a, b)| [(a, b), (b, a)]))
    }

    fn cut(graph: &Graph, right: &[bool]) -> usize {
        (0..graph.len() as u32)
            .map(|v| {
                graph
                    .neighbours(v)
                    .iter()
                    .filter(|&&u| right[u as usize] != right[v as usize])
                    .count()
            })
            .sum::<usize>()
            / 2
    }

    #[test]
    fn bisects_grids_across_their_length() {
        for (w, h, target, expected) in [(40, 10, 200, 10), (100, 30, 1500, 30), (64, 64, 2048, 64)] {
            let graph = grid(w, h);
            let right = bisect(&graph, target);
            assert_eq!(right.iter().filter(|&&r| !r).count() as u64, target);
            assert_eq!(cut(&graph, &right), expected, "{w}×{h}");
        }
    }

    #[test]
    fn coarsening_merges_pairs_and_their_edges() {
        let graph = grid(2, 2);
        let (coarse, map) = graph.coarsen(2);
        assert_eq!(map, [0, 0, 1, 1]);
        assert_eq!(coarse.size, [2, 2]);
        assert_eq!(coarse.adj, [1, 0]);
        assert_eq!(coarse.weight, [2, 2]);
    }

    #[test]
    fn subgraphs_keep_the_edges_inside() {
        let graph = grid(3, 3);
        let (sub, of) = graph.subgraph(|v| v % 3 != 2);
        assert_eq!(of, [0, 1, 3, 4, 6, 7]);
        assert_eq!(sub.neighbours(2), [0, 3, 4]);
        assert_eq!(sub.adj.len(), 2 * 7);
    }

    #[test]
    fn growing_covers_every_component() {
        let mut degree = vec![0; 5];
        degree[0] = 1;
        degree[1] = 1;
        let graph = Graph::unit(degree, [(0, 1), (1, 0)].into_iter());
        let mut fm = Fm::new(&graph, vec![true; 5], 4, 0);
        fm.grow(1);
        assert_eq!(fm.right, [false, false, false, false, true]);
    }
}
