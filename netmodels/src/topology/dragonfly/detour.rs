//! A dragonfly's non-minimal routings: Valiant and UGAL-L (Kim, Dally, Scott and Abts,
//! 2008), as BookSim's `ugal_dragonflynew` draws and decides them.
//!
//! ```text
//!   source group ──global──▶ intermediate group ──global──▶ destination group
//!   (to the router of the     (to the intermediate        (minimal from the
//!    cable towards it)         router, then minimal)        intermediate on)
//! ```
//!
//! **Valiant.** Every message between two groups draws an intermediate *router* at
//! random among all routers (BookSim draws a host, which is the same when every router
//! has `p` hosts) from a generator keyed by the seed and the message's number in the
//! whole network: the same seed gives the same draws whatever the order of events or
//! the partition count. The message goes minimally to that router, then minimally to
//! its destination: at most six hops between routers. A message inside one group, or
//! whose draw falls in its own group, goes minimally.
//!
//! **UGAL-L** (local information) draws the intermediate the same way, then chooses
//! once, at the source router, between the minimal path and that detour: minimal when
//! `q_min ≤ 2 · q_detour + threshold`, where `q` is what waits for the first hop's
//! output on each path (both are outputs of the source router; 2 stands for the
//! detour's extra hops, as in BookSim, whose threshold is 30 flits: 240 bytes of
//! vesper's 8-byte flits). What `q` counts depends on the switch:
//!
//! - output-queued: the bytes of the packets waiting in that output's queue (not the
//!   one being sent), plus the bytes it sent to the next switch whose packets have not
//!   yet started leaving that switch: BookSim's credits, which count the flits in the
//!   next router's buffers. Each packet's credit goes back up its cable one
//!   propagation delay after it starts leaving (`PacketEvent::CreditArrives`, or a
//!   crossing to another partition), so a split network's lookahead is the cable alone;
//! - CIOQ: the same, its queue being the output's, past the crossbar (not the packets
//!   still in input queues: with a speedup of 2 or more the backlog is there);
//! - wormhole: not modelled (a dragonfly of wormhole switches needs virtual channels).
//!
//! The choice is made when the message's first packet leaves its adapter for the
//! source router (one cable before it arrives there), and holds for all the message's
//! packets, which so arrive in order. BookSim decides packet by packet, at the router;
//! a `vesper traffic` packet is a message.

use crate::rng::Rng;

use super::Dragonfly;

/// Valiant or UGAL-L routing over a dragonfly (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Detour {
    /// the network
    pub dragonfly: Dragonfly,
    /// the seed of the intermediate routers' draws
    pub seed: u64,
    /// UGAL-L's threshold \[bytes\]: minimal when `q_min ≤ 2·q_detour + threshold`;
    /// `None`: Valiant, always the detour
    pub ugal_threshold: Option<u64>,
}

/// Keys the draws apart from the seed's other uses (initial pointers, route draws).
const DRAW: u64 = 0x0076_616c_6961_6e74; // "valiant"

impl Detour {
    /// The intermediate router of message `number` from router `src` to router `dst`,
    /// with the hops between routers to it; `None`: the message goes minimally.
    pub fn intermediate(&self, number: u64, src: u32, dst: u32) -> Option<(u32, u32)> {
        let d = &self.dragonfly;
        let group = src / d.a;
        if dst / d.a == group {
            return None;
        }
        let via = Rng::keyed(self.seed, &[DRAW, number]).below(u64::from(d.routers())) as u32;
        (via / d.a != group).then(|| (via, d.router_hops(src, via)))
    }

    /// UGAL-L's choice from the waiting bytes of the two first hops: minimal?
    /// (Always, under Valiant, is never asked.)
    pub fn takes_minimal(&self, q_minimal: u64, q_detour: u64) -> bool {
        self.ugal_threshold
            .is_some_and(|threshold| q_minimal <= q_detour.saturating_mul(2).saturating_add(threshold))
    }

    /// The name of the routing: `valiant` or `ugal`.
    pub fn name(&self) -> &'static str {
        if self.ugal_threshold.is_some() {
            "ugal"
        } else {
            "valiant"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Arrangement;

    fn detour(ugal: Option<u64>) -> Detour {
        Detour {
            dragonfly: Dragonfly::balanced(2, Arrangement::Absolute).expect("valid"),
            seed: 7,
            ugal_threshold: ugal,
        }
    }

    #[test]
    fn draws_depend_on_the_seed_and_number_only_and_leave_the_own_group() {
        let v = detour(None);
        let d = &v.dragonfly;
        let mut groups = std::collections::BTreeSet::new();
        let mut minimal = 0;
        for number in 0..2_000 {
            let (src, dst) = (0, d.routers() - 1);
            match v.intermediate(number, src, dst) {
                Some((via, hops)) => {
                    assert_eq!(Some((via, hops)), v.intermediate(number, src, dst));
                    assert_ne!(via / d.a, 0, "the source's own group");
                    assert_eq!(hops, d.router_hops(src, via));
                    groups.insert(via / d.a);
                }
                None => minimal += 1,
            }
        }
        // Every other group is drawn; about one draw in g falls in the source's group.
        assert_eq!(groups.len() as u32, d.g - 1);
        assert!(
            (100..350).contains(&minimal),
            "{minimal} of 2,000 minimal (g = {})",
            d.g
        );
        assert_eq!(v.intermediate(5, 0, 1), None, "inside one group: minimal");
        let other = Detour { seed: 8, ..v.clone() };
        assert!((0..50).any(|n| other.intermediate(n, 0, 17) != v.intermediate(n, 0, 17)));
    }

    #[test]
    fn ugal_takes_the_minimal_path_unless_its_queue_is_longer_by_the_threshold() {
        let u = detour(Some(240));
        assert!(u.takes_minimal(240, 0));
        assert!(!u.takes_minimal(241, 0));
        assert!(u.takes_minimal(1_000, 380));
        assert!(!u.takes_minimal(1_001, 380));
        assert!(!detour(None).takes_minimal(0, 1_000), "Valiant always detours");
        assert_eq!((u.name(), detour(None).name()), ("ugal", "valiant"));
    }
}
