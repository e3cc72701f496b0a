//! Extended generalized fat trees by subtrees.
//!
//! In [`crate::topology::xgft`]'s numbering a level-`l` switch's label is its parent
//! digits (1..l, least significant) then its child digits (l+1..h); the leaves below it
//! are the leaf switches whose child digits l+1..h agree with its own, which are
//! consecutive leaves: block ⌊index / (w1·…·wl)⌋ of m2·…·ml leaves.

use crate::topology::Xgft;
use crate::topology::shape::balanced_part;

/// The part of every switch of `xgft` (ids level by level) in `parts` parts; `None` when
/// the tree has fewer leaf switches than parts.
pub(super) fn partition(xgft: &Xgft, parts: u32) -> Option<Vec<u32>> {
    let height = xgft.height();
    let leaves = u64::from(xgft.nodes(1));
    if leaves < u64::from(parts) {
        return None;
    }
    let part_of_leaf = |leaf: u64| balanced_part(leaf, leaves, u64::from(parts));
    let mut of_switch = Vec::with_capacity(xgft.switches() as usize);
    let mut load = vec![0u64; parts as usize];
    // Switches whose subtree spans several parts: (switch id, first part, last part).
    let mut spanning = Vec::new();
    let mut below = 1u64; // leaves under a level-l switch: m2·…·ml
    let mut parents = 1u64; // switches sharing those leaves: w1·…·wl
    for level in 1..=height {
        if level > 1 {
            below *= u64::from(xgft.children[level - 1]);
        }
        parents *= u64::from(xgft.parents[level - 1]);
        for index in 0..u64::from(xgft.nodes(level)) {
            let first_leaf = index / parents * below;
            let (first, last) = (part_of_leaf(first_leaf), part_of_leaf(first_leaf + below - 1));
            if first == last {
                load[first as usize] += 1;
            } else {
                spanning.push((of_switch.len(), first, last));
            }
            of_switch.push(first);
        }
    }
    // Bottom up (ids are level by level), each to the least loaded part it spans.
    let mut tree = MinTree::new(&load);
    for (switch, first, last) in spanning {
        let part = tree.least(first, last);
        tree.add(part);
        of_switch[switch] = part;
    }
    Some(of_switch)
}

/// The least loaded part of a range of parts, ties to the lowest: a segment tree of
/// (load, part).
#[derive(Debug)]
struct MinTree {
    size: usize,
    nodes: Vec<(u64, u32)>,
}

impl MinTree {
    fn new(load: &[u64]) -> MinTree {
        let size = load.len().next_power_of_two();
        let mut nodes = vec![(u64::MAX, u32::MAX); 2 * size];
        for (p, &l) in load.iter().enumerate() {
            nodes[size + p] = (l, p as u32);
        }
        for i in (1..size).rev() {
            nodes[i] = nodes[2 * i].min(nodes[2 * i + 1]);
        }
        MinTree { size, nodes }
    }

    /// The least loaded part in `first..=last`.
    fn least(&self, first: u32, last: u32) -> u32 {
        let (mut lo, mut hi) = (first as usize + self.size, last as usize + self.size + 1);
        let mut best = (u64::MAX, u32::MAX);
        while lo < hi {
            if lo & 1 == 1 {
                best = best.min(self.nodes[lo]);
                lo += 1;
            }
            if hi & 1 == 1 {
                hi -= 1;
                best = best.min(self.nodes[hi]);
            }
            lo /= 2;
            hi /= 2;
        }
        best.1
    }

    /// One more switch in `part`.
    fn add(&mut self, part: u32) {
        let mut i = part as usize + self.size;
        self.nodes[i].0 += 1;
        while i > 1 {
            i /= 2;
            self.nodes[i] = self.nodes[2 * i].min(self.nodes[2 * i + 1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_min_tree_finds_the_least_loaded_lowest_part() {
        let mut tree = MinTree::new(&[3, 1, 2, 1, 5]);
        assert_eq!(tree.least(0, 4), 1);
        assert_eq!(tree.least(2, 4), 3);
        assert_eq!(tree.least(0, 0), 0);
        tree.add(1);
        assert_eq!(tree.least(0, 4), 3);
        tree.add(3);
        assert_eq!(tree.least(0, 4), 1);
        assert_eq!(tree.least(4, 4), 4);
    }
}
