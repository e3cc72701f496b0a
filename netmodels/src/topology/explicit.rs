//! Explicit routes: paths given one by one (a route file, or routes generated offline),
//! each the absolute output port at every switch from the source's to the
//! destination's, several per pair for multipath. Source routing: the path rides in the
//! packet's header.
//!
//! ```text
//!   host3 ──▶ sw0 ─p5─▶ sw4 ─p1─▶ sw2 ─p0─▶ host8        path [5, 1, 0]
//! ```
//!
//! A message takes one of its pair's paths, chosen by the [`MultipathPolicy`].

use crate::ids::HostId;

/// The most (source, destination) pairs explicit routes index (8,192 hosts): the
/// index takes 8 bytes a pair.
pub const MAX_PAIRS: u64 = 1 << 26;

/// How a message picks one of its pair's paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum MultipathPolicy {
    /// always the first path listed
    #[default]
    First,
    /// the pair's paths in turn, message after message
    RoundRobin,
    /// a seeded random path for every message
    Random {
        /// the seed of the draws
        seed: u64,
    },
    /// one path per pair, chosen by a hash of (source, destination): static, spread
    Hash,
}

/// Routes of every (source, destination) pair, stored flat.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ExplicitRoutes {
    hosts: u32,
    policy: MultipathPolicy,
    /// per pair `src * hosts + dst`: its first path and how many it has
    pairs: Vec<(u32, u32)>,
    /// where each path's ports start in `ports`; one more entry closes the last path
    starts: Vec<u32>,
    /// every path's output ports, one path after the other
    ports: Vec<u32>,
}

/// Why routes cannot be stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExplicitError {
    /// a host beyond the network
    #[error("routes: host {host} does not exist (the network has {hosts} hosts)")]
    UnknownHost {
        /// the host named
        host: u32,
        /// hosts in the network
        hosts: u32,
    },
    /// more ports than the flat store can index
    #[error("routes: more than 2^32 ports in all")]
    TooMany,
    /// too many hosts for a table of every pair
    #[error("routes: {hosts} hosts make {pairs} pairs; explicit routes are kept for at most 2^26 pairs (8,192 hosts)")]
    TooManyPairs {
        /// hosts in the network
        hosts: u32,
        /// their pairs
        pairs: u64,
    },
}

/// Paths as they are read, one after the other, stored flat: a large route file (67
/// million paths for 8,192 hosts) costs its ports and 16 bytes a path, not an
/// allocation a path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathList {
    /// (source, destination) of each path
    pairs: Vec<(HostId, HostId)>,
    /// where each path's ports end in `ports`
    ends: Vec<usize>,
    /// every path's output ports, one path after the other
    ports: Vec<u32>,
}

impl PathList {
    /// Adds the path of `ports` from `pair.0` to `pair.1`, after the others.
    pub fn push(&mut self, pair: (HostId, HostId), ports: &[u32]) {
        self.pairs.push(pair);
        self.ports.extend_from_slice(ports);
        self.ends.push(self.ports.len());
    }

    /// [`PathList::push`], or an error instead of the allocator's abort when the lists
    /// cannot grow (paths read from a file of any size): nothing is added then.
    pub fn try_push(&mut self, pair: (HostId, HostId), ports: &[u32]) -> Result<(), std::collections::TryReserveError> {
        self.pairs.try_reserve(1)?;
        self.ends.try_reserve(1)?;
        self.ports.try_reserve(ports.len())?;
        self.push(pair, ports);
        Ok(())
    }

    /// Paths held.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// No path at all.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Path `i`: its pair and its ports.
    pub fn get(&self, i: usize) -> ((HostId, HostId), &[u32]) {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        (self.pairs[i], &self.ports[start..self.ends[i]])
    }

    /// Every path, in the order added.
    pub fn iter(&self) -> impl Iterator<Item = ((HostId, HostId), &[u32])> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The paths listed pair by pair, (source, destination) in order; a pair's paths
    /// keep their order (and a list already in order its storage).
    pub fn sorted_by_pair(self) -> PathList {
        if self.pairs.is_sorted_by_key(|&p| pair_key(p)) {
            return self;
        }
        let mut order: Vec<u32> = (0..self.len() as u32).collect();
        order.sort_by_key(|&i| pair_key(self.pairs[i as usize]));
        let mut sorted = PathList {
            pairs: Vec::with_capacity(self.len()),
            ends: Vec::with_capacity(self.len()),
            ports: Vec::with_capacity(self.ports.len()),
        };
        for i in order {
            let (pair, ports) = self.get(i as usize);
            sorted.push(pair, ports);
        }
        sorted
    }
}

/// The order of pairs in a table: by source, then destination.
fn pair_key((s, d): (HostId, HostId)) -> (u32, u32) {
    (s.0, d.0)
}

impl FromIterator<((HostId, HostId), Vec<u32>)> for PathList {
    fn from_iter<I: IntoIterator<Item = ((HostId, HostId), Vec<u32>)>>(paths: I) -> PathList {
        let mut list = PathList::default();
        for (pair, ports) in paths {
            list.push(pair, &ports);
        }
        list
    }
}

impl<'a> FromIterator<((HostId, HostId), &'a [u32])> for PathList {
    fn from_iter<I: IntoIterator<Item = ((HostId, HostId), &'a [u32])>>(paths: I) -> PathList {
        let mut list = PathList::default();
        for (pair, ports) in paths {
            list.push(pair, ports);
        }
        list
    }
}

impl ExplicitRoutes {
    /// Routes of a network of `hosts` hosts from `paths`: ((source, destination),
    /// output ports), several per pair in the order given.
    pub fn new(
        hosts: u32,
        policy: MultipathPolicy,
        paths: Vec<((HostId, HostId), Vec<u32>)>,
    ) -> Result<ExplicitRoutes, ExplicitError> {
        ExplicitRoutes::from_paths(hosts, policy, paths.into_iter().collect())
    }

    /// Routes of a network of `hosts` hosts from `paths`, several per pair in the order
    /// given. Paths listed pair by pair (as route files are) keep their storage: their
    /// ports are not copied.
    pub fn from_paths(hosts: u32, policy: MultipathPolicy, paths: PathList) -> Result<ExplicitRoutes, ExplicitError> {
        let pairs = u64::from(hosts) * u64::from(hosts);
        if pairs > MAX_PAIRS {
            return Err(ExplicitError::TooManyPairs { hosts, pairs });
        }
        if let Some(host) = paths.pairs.iter().flat_map(|(s, d)| [s.0, d.0]).find(|&h| h >= hosts) {
            return Err(ExplicitError::UnknownHost { host, hosts });
        }
        u32::try_from(paths.ports.len()).map_err(|_| ExplicitError::TooMany)?;
        let paths = paths.sorted_by_pair();
        let mut routes = ExplicitRoutes {
            hosts,
            policy,
            pairs: vec![(0, 0); hosts as usize * hosts as usize],
            starts: Vec::with_capacity(paths.len() + 1),
            ports: Vec::new(),
        };
        for (index, &(s, d)) in paths.pairs.iter().enumerate() {
            let pair = &mut routes.pairs[s.index() * hosts as usize + d.index()];
            if pair.1 == 0 {
                pair.0 = index as u32;
            }
            pair.1 += 1;
        }
        routes.starts.push(0);
        routes.starts.extend(paths.ends.iter().map(|&end| end as u32));
        routes.ports = paths.ports;
        Ok(routes)
    }

    /// Hosts of the network the routes are for.
    pub fn hosts(&self) -> u32 {
        self.hosts
    }

    /// How a message picks its path.
    pub fn policy(&self) -> MultipathPolicy {
        self.policy
    }

    /// The ids of the paths from `src` to `dst` (none for a pair without routes).
    pub fn alternatives(&self, src: HostId, dst: HostId) -> std::ops::Range<u32> {
        let (first, count) = self
            .pairs
            .get(src.index() * self.hosts as usize + dst.index())
            .copied()
            .unwrap_or((0, 0));
        first..first + count
    }

    /// The output ports of path `id`.
    pub fn path(&self, id: u32) -> &[u32] {
        let (start, end) = (self.starts[id as usize], self.starts[id as usize + 1]);
        &self.ports[start as usize..end as usize]
    }

    /// Every path: ((source, destination), ports), pair by pair.
    pub fn iter(&self) -> impl Iterator<Item = ((HostId, HostId), &[u32])> + '_ {
        let hosts = self.hosts;
        (0..hosts).flat_map(move |s| {
            (0..hosts).flat_map(move |d| {
                self.alternatives(HostId(s), HostId(d))
                    .map(move |id| ((HostId(s), HostId(d)), self.path(id)))
            })
        })
    }

    /// Paths stored.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// No path at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_listed_pair_by_pair_or_not_are_stored_alike() {
        let paths = [
            ((HostId(0), HostId(1)), vec![7]),
            ((HostId(1), HostId(0)), vec![4, 2]),
            ((HostId(1), HostId(0)), vec![5, 3, 1]),
        ];
        let sorted: PathList = paths.iter().cloned().collect();
        assert_eq!(sorted.len(), 3);
        assert_eq!(sorted.get(2), ((HostId(1), HostId(0)), &[5, 3, 1][..]));
        let shuffled: PathList = [&paths[1], &paths[0], &paths[2]].into_iter().cloned().collect();
        let stored = |list| ExplicitRoutes::from_paths(2, MultipathPolicy::First, list).expect("valid");
        assert_eq!(stored(shuffled), stored(sorted.clone()));
        let routes = stored(sorted);
        assert_eq!(
            routes.iter().map(|(pair, p)| (pair, p.to_vec())).collect::<Vec<_>>(),
            paths.to_vec()
        );
    }

    #[test]
    fn paths_are_kept_per_pair_in_order() {
        let paths = vec![
            ((HostId(1), HostId(0)), vec![4, 2]),
            ((HostId(0), HostId(1)), vec![7]),
            ((HostId(1), HostId(0)), vec![5, 3, 1]),
        ];
        let routes = ExplicitRoutes::new(2, MultipathPolicy::RoundRobin, paths).expect("valid");
        assert_eq!(routes.len(), 3);
        let back: Vec<_> = routes
            .alternatives(HostId(1), HostId(0))
            .map(|id| routes.path(id))
            .collect();
        assert_eq!(back, vec![&[4, 2][..], &[5, 3, 1][..]]);
        assert!(routes.alternatives(HostId(0), HostId(0)).is_empty());
        assert_eq!(routes.iter().count(), 3);
        assert_eq!(
            ExplicitRoutes::new(2, MultipathPolicy::First, vec![((HostId(0), HostId(2)), vec![])]),
            Err(ExplicitError::UnknownHost { host: 2, hosts: 2 })
        );
        assert_eq!(
            ExplicitRoutes::new(8193, MultipathPolicy::First, Vec::new()),
            Err(ExplicitError::TooManyPairs {
                hosts: 8193,
                pairs: 8193 * 8193
            })
        );
    }
}

#[cfg(test)]
mod network_tests {
    use std::sync::Arc;

    use super::*;
    use crate::builder::NetworkBuilder;
    use crate::message::MessageSpec;
    use crate::topology::{Routing, Xgft};
    use crate::trace::RecordingSink;
    use crate::{Device, LinkParams, SimTime, SwitchId};

    /// A 2-ary 2-tree (4 hosts, 2 leaves, 2 spines) whose pairs across leaves have
    /// two paths, one per spine (up port 2 or 3 at the leaf), d-mod-k's first.
    fn two_paths(policy: MultipathPolicy) -> (crate::Topology, Arc<ExplicitRoutes>) {
        let x = Xgft::kary_ntree(2, 2).expect("valid");
        let mut paths = Vec::new();
        for s in 0..4 {
            for d in (0..4).filter(|&d| d != s) {
                let first = x.d_mod_k_path(HostId(s), HostId(d));
                if first.len() == 3 {
                    let mut other = first.clone();
                    other[0] = 5 - other[0];
                    paths.push(((HostId(s), HostId(d)), first));
                    paths.push(((HostId(s), HostId(d)), other));
                } else {
                    paths.push(((HostId(s), HostId(d)), first));
                }
            }
        }
        let routes = Arc::new(ExplicitRoutes::new(4, policy, paths).expect("valid"));
        let mut topology = x.topology(LinkParams::default());
        topology.routing = Routing::Explicit(Arc::clone(&routes));
        (topology, routes)
    }

    /// The spines crossed by `n` messages from host 0 to host 3, in order.
    fn spines(policy: MultipathPolicy, n: u64) -> Vec<u32> {
        let (topology, _) = two_paths(policy);
        let mut sim = NetworkBuilder::new(topology)
            .build_with_sink(RecordingSink::default())
            .expect("valid routes");
        for cookie in 0..n {
            let spec = MessageSpec {
                src: HostId(0),
                dst: HostId(3),
                size_bytes: 100,
                cookie,
            };
            sim.inject(SimTime::from_ns(cookie * 10_000), spec).expect("valid");
        }
        // And one to itself, which needs no route.
        let own = MessageSpec {
            src: HostId(1),
            dst: HostId(1),
            size_bytes: 100,
            cookie: 99,
        };
        sim.inject(SimTime::ZERO, own).expect("valid");
        let mut delivered = Vec::new();
        sim.run_until(SimTime::MAX, &mut delivered);
        assert_eq!(delivered.len() as u64, n + 1);
        let mut crossed: Vec<(u64, u32)> = sim
            .sink()
            .traversals
            .iter()
            .filter_map(|t| match t.sender.device {
                Device::Switch(SwitchId(s)) if s >= 2 => Some((t.cookie, s)),
                _ => None,
            })
            .collect();
        crossed.sort_unstable();
        crossed.into_iter().map(|(_, s)| s).collect()
    }

    #[test]
    fn a_message_takes_one_of_its_pairs_paths_by_the_policy() {
        assert_eq!(spines(MultipathPolicy::First, 4), vec![3, 3, 3, 3]);
        assert_eq!(spines(MultipathPolicy::RoundRobin, 4), vec![3, 2, 3, 2]);
        let hashed = spines(MultipathPolicy::Hash, 4);
        assert!(hashed.iter().all(|&s| s == hashed[0]), "{hashed:?}");
        let random = spines(MultipathPolicy::Random { seed: 3 }, 16);
        assert!(random.contains(&2) && random.contains(&3), "{random:?}");
        assert_eq!(random, spines(MultipathPolicy::Random { seed: 3 }, 16));
    }

    #[test]
    fn bad_routes_are_refused_with_the_pair() {
        let build = |paths: Vec<((HostId, HostId), Vec<u32>)>| {
            let (mut topology, routes) = two_paths(MultipathPolicy::First);
            let mut all: Vec<_> = routes.iter().map(|(pair, p)| (pair, p.to_vec())).collect();
            all.retain(|(pair, _)| !paths.iter().any(|(p, _)| p == pair));
            all.extend(paths);
            topology.routing = Routing::Explicit(Arc::new(
                ExplicitRoutes::new(4, MultipathPolicy::First, all).expect("stored"),
            ));
            NetworkBuilder::new(topology).build().err().map(|e| e.to_string())
        };
        assert_eq!(build(Vec::new()), None);
        assert_eq!(
            build(vec![((HostId(0), HostId(3)), vec![2, 0])]),
            Some("routes: route 0 from host0 to host3 ends at sw0.p2, not at host3".into())
        );
        assert_eq!(
            build(vec![((HostId(0), HostId(3)), vec![9])]),
            Some("routes: route 0 from host0 to host3: sw0 has no port 9".into())
        );
        let (mut topology, _) = two_paths(MultipathPolicy::First);
        topology.routing = Routing::Explicit(Arc::new(
            ExplicitRoutes::new(3, MultipathPolicy::First, Vec::new()).expect("stored"),
        ));
        assert_eq!(
            NetworkBuilder::new(topology).build().err().map(|e| e.to_string()),
            Some("routes: the routes are for 3 hosts, the network has 4".into())
        );
        assert_eq!(
            build(vec![((HostId(0), HostId(1)), vec![1, 0])]),
            Some("routes: route 0 from host0 to host1 reaches a host after 1 of its 2 ports".into())
        );
        let (mut topology, _) = two_paths(MultipathPolicy::First);
        topology.routing = Routing::Explicit(Arc::new(
            ExplicitRoutes::new(4, MultipathPolicy::First, Vec::new()).expect("stored"),
        ));
        assert_eq!(
            NetworkBuilder::new(topology).build().err().map(|e| e.to_string()),
            Some("routes: no route from host0 to host1".into())
        );
    }
}
