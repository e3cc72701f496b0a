//! MPI collectives decomposed into point-to-point messages, so the network sees them:
//! by default binomial trees for rooted operations, recursive doubling for the
//! all-reduce family, pairwise exchange for all-to-all. [`Methods`] chooses another way
//! per family: flat (the root exchanges with every member directly), or, for the
//! all-reduce family, a reduce then a broadcast.
//!
//! Each function gives the operations of one member of the group (`members`, in
//! communicator order), `root` being an index into `members`. Trees use ranks relative
//! to the root. Messages carry `tag`, which the caller makes unique per collective call
//! so that they never match the application's own messages.

use super::workload::Op;

/// How a collective is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// a binomial tree towards the root (reduce, gather)
    ReduceTree,
    /// a binomial tree from the root (broadcast, scatter)
    BroadcastTree,
    /// a zero-byte reduce tree, then a zero-byte broadcast tree
    Barrier,
    /// exchanges with the member at distance 2^t, t = 0, 1, … (all-reduce, all-gather,
    /// reduce-scatter, scan)
    RecursiveDoubling,
    /// an exchange with every other member at once (all-to-all)
    Pairwise,
    /// every member sends to the root, which receives from each in turn
    FlatReduce,
    /// the root sends to every member in turn
    FlatBroadcast,
    /// a zero-byte flat reduce, then a zero-byte flat broadcast
    FlatBarrier,
    /// a binomial reduce tree, then a binomial broadcast tree, of the full size
    ReduceBroadcast,
    /// a flat reduce, then a flat broadcast, of the full size
    FlatReduceBroadcast,
}

/// Collectives that are carried out alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// barrier
    Barrier,
    /// broadcast, scatter(v)
    Broadcast,
    /// reduce, gather(v)
    Reduce,
    /// all-reduce, all-gather(v), reduce-scatter, scan
    AllReduce,
    /// all-to-all(v/w)
    AllToAll,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 5] = [
        Family::Barrier,
        Family::Broadcast,
        Family::Reduce,
        Family::AllReduce,
        Family::AllToAll,
    ];

    /// The family of a Dimemas global-operation id (16–31 as 0–15).
    pub fn of_dimemas(id: u32) -> Option<Family> {
        let id = if (16..32).contains(&id) { id - 16 } else { id };
        Some(match id {
            0 => Family::Barrier,
            1 | 4 | 5 => Family::Broadcast,
            2 | 3 | 10 => Family::Reduce,
            6 | 7 | 11..=14 => Family::AllReduce,
            8 | 9 | 15 => Family::AllToAll,
            _ => return None,
        })
    }
}

/// A way of carrying out a family of collectives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// binomial trees (for the all-reduce family: a reduce tree, then a broadcast tree)
    Binomial,
    /// the root exchanges with every member directly
    Flat,
    /// exchanges at distance 2^t (the all-reduce family)
    RecursiveDoubling,
    /// a reduce, then a broadcast, each a binomial tree (the all-reduce family)
    ReduceBroadcast,
    /// everyone exchanges with everyone (all-to-all)
    Pairwise,
    /// no messages: Dimemas's analytic model ([`super::analytic`])
    Analytic,
}

/// Why a choice of method ([`Methods::choose`]) is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MethodsError {
    /// the choice is not `FAMILY=METHOD`
    #[error("{text}: expected FAMILY=METHOD, e.g. allreduce=flat")]
    NotAChoice {
        /// the choice as given
        text: String,
    },
    /// no family has this name
    #[error("{text}: unknown family {family} (barrier, broadcast, reduce, allreduce, alltoall, all)")]
    UnknownFamily {
        /// the choice as given
        text: String,
        /// the family named
        family: String,
    },
    /// no method has this name
    #[error(
        "{text}: unknown method {method} (binomial, flat, recursive-doubling, reduce-broadcast, pairwise, analytic)"
    )]
    UnknownMethod {
        /// the choice as given
        text: String,
        /// the method named
        method: String,
    },
    /// the method does not carry out a family named
    #[error("{text}: {} does not carry out {family:?} collectives", method_name(*method))]
    Unsupported {
        /// the choice as given
        text: String,
        /// the method
        method: Method,
        /// the family it does not carry out
        family: Family,
    },
}

/// How one collective call is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Treatment {
    /// as point-to-point messages, by this algorithm
    Decomposed(Algorithm),
    /// by Dimemas's analytic model
    Analytic,
}

/// The method of each family; families not named take the default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Methods(std::collections::BTreeMap<Family, Method>);

impl Methods {
    /// Reads `FAMILY=METHOD` (`allreduce=flat`): families `barrier`, `broadcast`,
    /// `reduce`, `allreduce`, `alltoall`, or `all`; methods `binomial`, `flat`,
    /// `recursive-doubling`, `reduce-broadcast`, `pairwise`, or `analytic` (Dimemas's
    /// model: no messages, [`super::analytic`]).
    pub fn choose(&mut self, text: &str) -> Result<(), MethodsError> {
        let (family, method) = text
            .split_once('=')
            .ok_or_else(|| MethodsError::NotAChoice { text: text.to_string() })?;
        let families = match family.trim() {
            "barrier" => vec![Family::Barrier],
            "broadcast" | "bcast" | "scatter" => vec![Family::Broadcast],
            "reduce" | "gather" => vec![Family::Reduce],
            "allreduce" | "allgather" | "reduce-scatter" | "scan" => vec![Family::AllReduce],
            "alltoall" => vec![Family::AllToAll],
            "all" => Family::ALL.to_vec(),
            other => {
                return Err(MethodsError::UnknownFamily {
                    text: text.to_string(),
                    family: other.to_string(),
                });
            }
        };
        let method = match method.trim() {
            "binomial" => Method::Binomial,
            "flat" => Method::Flat,
            "recursive-doubling" => Method::RecursiveDoubling,
            "reduce-broadcast" => Method::ReduceBroadcast,
            "pairwise" => Method::Pairwise,
            "analytic" => Method::Analytic,
            other => {
                return Err(MethodsError::UnknownMethod {
                    text: text.to_string(),
                    method: other.to_string(),
                });
            }
        };
        for &family in &families {
            if method != Method::Analytic && Methods::algorithm_of(family, method).is_none() {
                return Err(MethodsError::Unsupported {
                    text: text.to_string(),
                    method,
                    family,
                });
            }
        }
        for family in families {
            self.0.insert(family, method);
        }
        Ok(())
    }

    /// Whether some family is modelled analytically (whose stages take their links from
    /// the configuration, or else from the network).
    pub fn any_analytic(&self) -> bool {
        self.0.values().any(|&m| m == Method::Analytic)
    }

    /// How the calls are carried out, for reports.
    pub fn describe(&self) -> &'static str {
        let analytic = self.0.values().filter(|&&m| m == Method::Analytic).count();
        match analytic {
            0 => "decomposed into point-to-point messages",
            n if n == Family::ALL.len() => "modelled analytically",
            _ => "decomposed into point-to-point messages or modelled analytically, per family",
        }
    }

    /// How a Dimemas global-operation id is carried out; `None` if the id is unknown.
    pub fn treatment(&self, id: u32) -> Option<Treatment> {
        let family = Family::of_dimemas(id)?;
        match self.0.get(&family) {
            Some(Method::Analytic) => Some(Treatment::Analytic),
            _ => self.algorithm(id).map(Treatment::Decomposed),
        }
    }

    /// The algorithm of a Dimemas global-operation id, when it is decomposed; `None` if
    /// the id is unknown.
    pub fn algorithm(&self, id: u32) -> Option<Algorithm> {
        let family = Family::of_dimemas(id)?;
        match self.0.get(&family) {
            Some(&method) if method != Method::Analytic => Methods::algorithm_of(family, method),
            _ => Algorithm::for_dimemas(id),
        }
    }

    fn algorithm_of(family: Family, method: Method) -> Option<Algorithm> {
        Some(match (family, method) {
            (Family::Barrier, Method::Binomial) => Algorithm::Barrier,
            (Family::Barrier, Method::Flat) => Algorithm::FlatBarrier,
            (Family::Broadcast, Method::Binomial) => Algorithm::BroadcastTree,
            (Family::Broadcast, Method::Flat) => Algorithm::FlatBroadcast,
            (Family::Reduce, Method::Binomial) => Algorithm::ReduceTree,
            (Family::Reduce, Method::Flat) => Algorithm::FlatReduce,
            (Family::AllReduce, Method::RecursiveDoubling) => Algorithm::RecursiveDoubling,
            (Family::AllReduce, Method::Binomial | Method::ReduceBroadcast) => Algorithm::ReduceBroadcast,
            (Family::AllReduce, Method::Flat) => Algorithm::FlatReduceBroadcast,
            (Family::AllToAll, Method::Pairwise | Method::Flat) => Algorithm::Pairwise,
            _ => return None,
        })
    }
}

fn method_name(method: Method) -> &'static str {
    match method {
        Method::Binomial => "binomial",
        Method::Flat => "flat",
        Method::RecursiveDoubling => "recursive-doubling",
        Method::ReduceBroadcast => "reduce-broadcast",
        Method::Pairwise => "pairwise",
        Method::Analytic => "analytic",
    }
}

impl Algorithm {
    /// The algorithm for a Dimemas global-operation id (the non-blocking variants,
    /// 16–31, as their blocking counterparts); `None` if the id is unknown.
    pub fn for_dimemas(id: u32) -> Option<Algorithm> {
        let id = if (16..32).contains(&id) { id - 16 } else { id };
        Some(match id {
            0 => Algorithm::Barrier,
            1 | 4 | 5 => Algorithm::BroadcastTree,
            2 | 3 | 10 => Algorithm::ReduceTree,
            6 | 7 | 11..=14 => Algorithm::RecursiveDoubling,
            8 | 9 | 15 => Algorithm::Pairwise,
            _ => return None,
        })
    }
}

/// The operations of member `me` in one call of `algorithm` over `members`, rooted at
/// `members[root]`, with `size` bytes per message (per peer for `Pairwise`). Immediate
/// operations use requests from `first_request` on, all waited for before the end.
pub fn operations(
    algorithm: Algorithm,
    members: &[u32],
    me: usize,
    root: usize,
    size: u32,
    tag: i32,
    first_request: u32,
) -> Vec<Op> {
    let n = members.len();
    if n < 2 || me >= n {
        return Vec::new();
    }
    let root = root % n;
    // Relative rank v ↔ member (v + root) mod n.
    let relative = (me + n - root) % n;
    let task = |v: usize| members[(v + root) % n];
    match algorithm {
        Algorithm::ReduceTree => tree(n, relative, false, size, tag, task),
        Algorithm::BroadcastTree => tree(n, relative, true, size, tag, task),
        Algorithm::Barrier => {
            let mut ops = operations(Algorithm::ReduceTree, members, me, root, 0, tag, first_request);
            ops.extend(operations(
                Algorithm::BroadcastTree,
                members,
                me,
                root,
                0,
                tag,
                first_request,
            ));
            ops
        }
        Algorithm::RecursiveDoubling => {
            let mut ops = Vec::new();
            for t in (0..usize::BITS).take_while(|&t| 1usize << t < n) {
                let partner = relative ^ (1 << t);
                if partner < n {
                    let peer = [task(partner)];
                    ops.extend(exchange(&peer, &peer, size, tag, first_request));
                }
            }
            ops
        }
        Algorithm::Pairwise => {
            // Member me + k sends to me as its k-th message: receive in that order.
            let from: Vec<u32> = (1..n).map(|k| members[(me + n - k) % n]).collect();
            let to: Vec<u32> = (1..n).map(|k| members[(me + k) % n]).collect();
            exchange(&from, &to, size, tag, first_request)
        }
        Algorithm::FlatReduce => flat(n, relative, false, size, tag, task),
        Algorithm::FlatBroadcast => flat(n, relative, true, size, tag, task),
        Algorithm::FlatBarrier | Algorithm::FlatReduceBroadcast => {
            let size = if algorithm == Algorithm::FlatBarrier { 0 } else { size };
            let mut ops = flat(n, relative, false, size, tag, task);
            ops.extend(flat(n, relative, true, size, tag, task));
            ops
        }
        Algorithm::ReduceBroadcast => {
            let mut ops = tree(n, relative, false, size, tag, task);
            ops.extend(tree(n, relative, true, size, tag, task));
            ops
        }
    }
}

/// Receives from every task of `receive_from` and sends `size` bytes to every task of
/// `send_to`, with `tag`, all at once: receives posted, sends started, then every
/// request (named from `first_request` on) waited for.
pub(super) fn exchange(receive_from: &[u32], send_to: &[u32], size: u32, tag: i32, first_request: u32) -> Vec<Op> {
    let mut ops = Vec::new();
    let mut request = first_request;
    for &from in receive_from {
        ops.push(Op::IRecv { from, tag, request });
        request += 1;
    }
    for &to in send_to {
        ops.push(Op::ISend {
            to,
            size,
            tag,
            synchronous: false,
            request,
        });
        request += 1;
    }
    ops.extend((first_request..request).map(|request| Op::Wait { request }));
    ops
}

/// The operations of relative rank `v` when the root (rank 0) exchanges with every
/// rank directly: towards the root, every rank sends and the root receives from ranks
/// 1, 2, … in turn; from it (`down`), the root sends to them in turn.
fn flat(n: usize, v: usize, down: bool, size: u32, tag: i32, task: impl Fn(usize) -> u32) -> Vec<Op> {
    let send = |to| Op::Send {
        to,
        size,
        tag,
        synchronous: false,
    };
    match (v, down) {
        (0, true) => (1..n).map(|p| send(task(p))).collect(),
        (0, false) => (1..n).map(|p| Op::Recv { from: task(p), tag }).collect(),
        (_, true) => vec![Op::Recv { from: task(0), tag }],
        (_, false) => vec![send(task(0))],
    }
}

/// The operations of relative rank `v` in a binomial tree over `n` ranks rooted at 0,
/// towards the root or (`down`) from it: blocking messages of `size` bytes with `tag`,
/// relative rank `p` being task `task(p)`.
pub(super) fn tree(n: usize, v: usize, down: bool, size: u32, tag: i32, task: impl Fn(usize) -> u32) -> Vec<Op> {
    let mut steps = Vec::new();
    for t in (0..usize::BITS).take_while(|&t| 1usize << t < n) {
        let span = 1usize << t;
        // Gathers from (or, down, sends to) v + 2^t; sends to (or receives from) v − 2^t.
        let step = if v.is_multiple_of(2 * span) {
            (v + span < n).then(|| (v + span, down))
        } else {
            v.is_multiple_of(span).then(|| (v - span, !down))
        };
        steps.extend(step);
    }
    if down {
        steps.reverse();
    }
    steps
        .into_iter()
        .map(|(peer, sending)| match sending {
            true => Op::Send {
                to: task(peer),
                size,
                tag,
                synchronous: false,
            },
            false => Op::Recv { from: task(peer), tag },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{IdealBus, Workload, replay};

    fn run(algorithm: Algorithm, members: &[u32], tasks: usize, root: usize, size: u32) -> u64 {
        let mut programs = vec![Vec::new(); tasks];
        for (me, &task) in members.iter().enumerate() {
            programs[task as usize] = operations(algorithm, members, me, root, size, i32::MIN, 1 << 31);
        }
        let workload = Workload {
            name: format!("{algorithm:?}"),
            tasks: programs,
        };
        workload.check().expect("balanced");
        // 1 byte per ns, 100 ns latency.
        replay(&workload, &mut IdealBus::new(1_000_000_000, 1, 100_000))
            .expect("replayed")
            .predicted
    }

    const HOP: u64 = 1_100_000;

    #[test]
    fn trees_take_log_n_message_times_from_any_root() {
        let all: Vec<u32> = (0..8).collect();
        for root in [0, 3, 7] {
            assert_eq!(run(Algorithm::BroadcastTree, &all, 8, root, 1000), 3 * HOP);
            assert_eq!(run(Algorithm::ReduceTree, &all, 8, root, 1000), 3 * HOP);
        }
        // A barrier: 2 × 3 zero-byte messages of 100 ns.
        assert_eq!(run(Algorithm::Barrier, &all, 8, 0, 1000), 6 * 100_000);
    }

    #[test]
    fn sub_communicators_use_their_members_only() {
        // Tasks 1, 4 and 6 of 8: two steps of recursive doubling (6 has no partner at
        // step 1), and a pairwise exchange landing at once.
        assert_eq!(run(Algorithm::RecursiveDoubling, &[1, 4, 6], 8, 0, 1000), 2 * HOP);
        assert_eq!(run(Algorithm::Pairwise, &[1, 4, 6], 8, 0, 1000), HOP);
        assert_eq!(run(Algorithm::ReduceTree, &[5], 8, 0, 1000), 0);
    }

    #[test]
    fn flat_and_reduce_broadcast_methods() {
        let all: Vec<u32> = (0..8).collect();
        // The root's eager sends leave at once over the contention-free bus: one hop.
        assert_eq!(run(Algorithm::FlatBroadcast, &all, 8, 2, 1000), HOP);
        assert_eq!(run(Algorithm::FlatReduce, &all, 8, 2, 1000), HOP);
        assert_eq!(run(Algorithm::FlatReduceBroadcast, &all, 8, 0, 1000), 2 * HOP);
        assert_eq!(run(Algorithm::FlatBarrier, &all, 8, 0, 1000), 2 * 100_000);
        assert_eq!(run(Algorithm::ReduceBroadcast, &all, 8, 0, 1000), 6 * HOP);
        let mut methods = Methods::default();
        assert_eq!(methods.algorithm(11), Some(Algorithm::RecursiveDoubling));
        methods.choose("allreduce=reduce-broadcast").expect("valid");
        methods.choose("bcast=flat").expect("valid");
        assert_eq!(methods.algorithm(11), Some(Algorithm::ReduceBroadcast));
        assert_eq!(methods.algorithm(1 + 16), Some(Algorithm::FlatBroadcast));
        assert_eq!(methods.algorithm(10), Some(Algorithm::ReduceTree));
        let refusal = |methods: &mut Methods, text| methods.choose(text).expect_err("refused").to_string();
        assert_eq!(
            refusal(&mut methods, "alltoall=binomial"),
            "alltoall=binomial: binomial does not carry out AllToAll collectives"
        );
        assert_eq!(
            refusal(&mut methods, "allreduce"),
            "allreduce: expected FAMILY=METHOD, e.g. allreduce=flat"
        );
        assert_eq!(
            refusal(&mut methods, "ring=flat"),
            "ring=flat: unknown family ring (barrier, broadcast, reduce, allreduce, alltoall, all)"
        );
        assert_eq!(
            refusal(&mut methods, "all=ring"),
            "all=ring: unknown method ring (binomial, flat, recursive-doubling, reduce-broadcast, pairwise, analytic)"
        );
        assert!(!methods.any_analytic(), "no family was made analytic");
        methods.choose("barrier=analytic").expect("valid");
        assert!(methods.any_analytic());
    }

    #[test]
    fn dimemas_ids_map_to_algorithms() {
        assert_eq!(Algorithm::for_dimemas(0), Some(Algorithm::Barrier));
        assert_eq!(Algorithm::for_dimemas(1), Some(Algorithm::BroadcastTree));
        assert_eq!(Algorithm::for_dimemas(10), Some(Algorithm::ReduceTree));
        assert_eq!(Algorithm::for_dimemas(11), Some(Algorithm::RecursiveDoubling));
        assert_eq!(Algorithm::for_dimemas(8 + 16), Some(Algorithm::Pairwise));
        assert_eq!(Algorithm::for_dimemas(32), None);
    }
}
