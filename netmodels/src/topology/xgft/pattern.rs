//! Communication patterns on an XGFT: how many flows of one phase share a link under a
//! given routing.
//!
//! A pattern is a list of phases; a phase is a list of (source, destination) flows that
//! run at the same time. Flows of different phases never meet, so loads are counted
//! per phase:
//!
//! ```text
//!   phase 0: 0→4, 1→8        leaf 0 ──up p4──▶ spine 0   load 2 under d-mod-k
//!   phase 1: 4→0, 8→1                 ──up p5──▶ spine 1   load 0
//! ```

use crate::ids::HostId;
use crate::topology::xgft::{Xgft, XgftError};

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

#[cfg(test)]
mod tests {
    use super::*;

    fn flows(pairs: &[(u32, u32)]) -> Vec<(HostId, HostId)> {
        pairs.iter().map(|&(s, d)| (HostId(s), HostId(d))).collect()
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
