//! Multi-rail networks: N independent networks (rails) joining the same hosts, each
//! host with one adapter per rail and a router that picks the rail of every message.
//!
//! ```text
//!              ┌── adapter 0 ── rail 0 (any topology, any switch kind) ──┐
//!   host h ────┤                                                         ├──── host d
//!   (router)   └── adapter 1 ── rail 1 ──────────────────────────────────┘   (delivers to
//!                                                                              its processor)
//! ```
//!
//! The rails share nothing but the hosts, so each is a [`Simulation`] of its own, run
//! to the same time limits. A single network is a multi-rail network of one rail (the
//! router then passes every message straight through).
//!
//! Rail choice ([`RailPolicy`]): round-robin per source host; by destination
//! (`dst mod N`); by size (small messages on rail 0, the others round-robin over the
//! remaining rails); or striped (every message cut into N parts of near-equal size, one
//! per rail, complete when the last part arrives).

use crate::build_error::BuildError;
use crate::ids::HostId;
use crate::message::{Delivery, InjectError, MessageSpec};
use crate::network::Network;
use crate::partition::Partitioned;
use crate::partition::windows::Arrivals;
use crate::simulation::Simulation;
use crate::slab::Slab;
use crate::time::SimTime;
use crate::topology::multirail::{RailPolicy, RailsError};
use crate::trace::{NullSink, TraceSink};

/// A striped message: its parts still travelling.
#[derive(Debug, Clone, Copy)]
struct Stripe {
    spec: MessageSpec,
    injected_at: SimTime,
    first_byte_sent: SimTime,
    parts_left: u32,
}

/// Several rails joining the same hosts, and the hosts' routers.
#[derive(Debug)]
pub struct MultiRail<S: TraceSink = NullSink> {
    rails: Vec<Partitioned<S>>,
    policy: RailPolicy,
    /// the next rail of each source host (round-robin and size policies)
    next_rail: Vec<u32>,
    /// striped messages in flight, keyed by the cookie their parts carry
    stripes: Slab<Stripe>,
    in_flight: usize,
    /// deliveries of one rail's run, before merging
    scratch: Vec<(SimTime, usize, Delivery)>,
    rail_deliveries: Vec<Delivery>,
}

impl MultiRail<NullSink> {
    /// One network, with nothing to choose.
    pub fn single(simulation: Simulation) -> MultiRail {
        MultiRail::new(vec![simulation], RailPolicy::RoundRobin).unwrap_or_else(|_| unreachable!("one rail"))
    }

    /// Whether the network is one rail split into partitions: what
    /// [`Self::run_open_loop`] runs on threads.
    pub fn is_split(&self) -> bool {
        self.rails.len() == 1 && self.rails[0].partitions() > 1
    }

    /// One rail split into partitions: injects `arrivals` and runs the events up to
    /// the last one's time on threads (see [`Partitioned::run_open_loop`]). Returns
    /// every partition's copy of `arrivals` where it stopped; `None` (and does nothing)
    /// if the network is not one split rail.
    pub fn run_open_loop<A: Arrivals>(&mut self, arrivals: &A) -> Option<Vec<A>> {
        if !self.is_split() {
            return None;
        }
        let injected = self.rails[0].injected();
        let (copies, delivered) = self.rails[0].run_open_loop(arrivals);
        self.in_flight = self.in_flight + (self.rails[0].injected() - injected) as usize - delivered as usize;
        Some(copies)
    }
}

impl<S: TraceSink + Send> MultiRail<S> {
    /// Rails joining the same hosts, routed by `policy`.
    pub fn new(rails: Vec<Simulation<S>>, policy: RailPolicy) -> Result<MultiRail<S>, BuildError> {
        MultiRail::of_rails(rails.into_iter().map(Partitioned::whole).collect(), policy)
    }

    /// Rails joining the same hosts, each whole or split into partitions, routed by
    /// `policy`.
    pub fn of_rails(rails: Vec<Partitioned<S>>, policy: RailPolicy) -> Result<MultiRail<S>, BuildError> {
        let Some(first) = rails.first() else {
            return Err(RailsError::None.into());
        };
        let hosts = first.hosts();
        if let Some((index, rail)) = rails.iter().enumerate().find(|(_, r)| r.hosts() != hosts) {
            return Err(RailsError::OtherHosts {
                rail: index,
                hosts: rail.hosts(),
                first: hosts,
            }
            .into());
        }
        Ok(MultiRail {
            // Only routers with a choice keep a turn per host.
            next_rail: if rails.len() > 1 {
                vec![0; hosts as usize]
            } else {
                Vec::new()
            },
            rails,
            policy,
            stripes: Slab::new(),
            in_flight: 0,
            scratch: Vec::new(),
            rail_deliveries: Vec::new(),
        })
    }

    /// See [`Partitioned::lead`]: every rail leads, its calls naming it; a call made
    /// within a told call of any rail is not told again, and the network's end is told
    /// once.
    pub fn lead(&mut self, lead: &std::sync::Arc<crate::partition::Lead>) {
        let telling = std::sync::Arc::default();
        for (r, rail) in self.rails.iter_mut().enumerate() {
            rail.lead_rail(lead, r as u32, std::sync::Arc::clone(&telling));
        }
    }

    /// See [`Partitioned::tell_trace`] (told once, for every rail).
    pub fn tell_trace(&self, step: crate::partition::TraceStep) -> Option<crate::partition::Told> {
        self.rails[0].tell_trace(step)
    }

    /// See [`Partitioned::follow`]: each call on the rail rank 0 named.
    pub fn follow(&mut self) -> crate::partition::Followed {
        crate::partition::windows::follow_rails(&mut self.rails)
    }

    /// Number of hosts.
    pub fn hosts(&self) -> u32 {
        self.rails[0].hosts()
    }

    /// The rails.
    pub fn rails(&self) -> &[Partitioned<S>] {
        &self.rails
    }

    /// The rails' trace sinks, rail by rail.
    pub fn sinks_mut(&mut self) -> impl Iterator<Item = &mut S> {
        self.rails.iter_mut().flat_map(Partitioned::sinks_mut)
    }

    /// The latest rail clock: no injection may come before it.
    pub fn now(&self) -> SimTime {
        self.rails.iter().map(Partitioned::now).max().unwrap_or(SimTime::ZERO)
    }

    /// Time of the next pending event of any rail.
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.rails.iter().filter_map(Partitioned::next_event_time).min()
    }

    /// The safe horizon at `t` ([`Simulation::safe_horizon`]): the earliest of the
    /// rails', as a message may take any of them (or all, striped).
    pub fn safe_horizon(&self, t: SimTime) -> SimTime {
        self.rails.iter().map(|r| r.safe_horizon(t)).min().unwrap_or(t)
    }

    /// The deliveries no message injected at `since` or later can change, on any rail
    /// ([`Simulation::final_deliveries`]); a striped message once every part is.
    pub fn final_deliveries(&mut self, since: SimTime, out: &mut Vec<Delivery>) {
        // The rails' deliveries in the order `run_until` merges them.
        let mut parts: Vec<(SimTime, usize, Delivery)> = Vec::new();
        let mut rail_known = Vec::new();
        for (index, rail) in self.rails.iter_mut().enumerate() {
            rail_known.clear();
            rail.final_deliveries(since, &mut rail_known);
            parts.extend(rail_known.iter().map(|d| (d.arrived, index, *d)));
        }
        parts.sort_by_key(|&(arrived, rail, _)| (arrived, rail));
        if self.policy != RailPolicy::Striped {
            out.extend(parts.into_iter().map(|(_, _, d)| d));
            return;
        }
        // Striped: a message is known when its last part is.
        let mut left: std::collections::BTreeMap<u32, (u32, SimTime)> = std::collections::BTreeMap::new();
        for (_, _, part) in parts {
            let index = part.cookie as u32;
            let Some(stripe) = self.stripes.get(index as usize) else {
                continue;
            };
            let (parts_left, first_byte_sent) =
                left.entry(index).or_insert((stripe.parts_left, stripe.first_byte_sent));
            *parts_left -= 1;
            *first_byte_sent = (*first_byte_sent).min(part.first_byte_sent);
            if *parts_left == 0 {
                out.push(Delivery {
                    cookie: stripe.spec.cookie,
                    src: stripe.spec.src,
                    dst: stripe.spec.dst,
                    size_bytes: stripe.spec.size_bytes,
                    injected_at: stripe.injected_at,
                    first_byte_sent: *first_byte_sent,
                    arrived: part.arrived,
                });
            }
        }
    }

    /// Events processed so far, all rails.
    pub fn events_processed(&self) -> u64 {
        self.rails.iter().map(Partitioned::events_processed).sum()
    }

    /// Messages injected and not yet delivered (a striped message counts once).
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Messages at `host`'s adapters with packets still to send, all rails.
    pub fn source_backlog(&self, host: HostId) -> usize {
        self.rails.iter().map(|r| r.source_backlog(host)).sum()
    }

    /// Moves every rail's clock to `time` when none has an event before it.
    pub fn advance_clock(&mut self, time: SimTime) {
        for rail in &mut self.rails {
            rail.advance_clock(time);
        }
    }

    /// Hands a message to its source host's router at time `at` (not before
    /// [`Self::now`]).
    pub fn inject(&mut self, at: SimTime, spec: MessageSpec) -> Result<(), InjectError> {
        let hosts = self.hosts();
        for host in [spec.src, spec.dst] {
            if host.0 >= hosts {
                return Err(InjectError::UnknownHost { host, hosts });
            }
        }
        if at < self.now() {
            return Err(InjectError::InThePast { at, now: self.now() });
        }
        if at > SimTime::LAST_INJECTION {
            return Err(InjectError::TooLate { at });
        }
        let n = self.rails.len() as u32;
        let rail = match self.policy {
            _ if n == 1 => 0,
            RailPolicy::RoundRobin => self.turn(spec.src, 0),
            RailPolicy::ByDestination => spec.dst.0 % n,
            RailPolicy::SizeThreshold { bytes } if spec.size_bytes < bytes => 0,
            RailPolicy::SizeThreshold { .. } => 1 + self.turn(spec.src, 1),
            RailPolicy::Striped => return self.inject_striped(at, spec),
        };
        self.rails[rail as usize].inject(at, spec)?;
        self.in_flight += 1;
        Ok(())
    }

    /// The next of rails `skip..N` in `src`'s turn, counted from `skip`.
    fn turn(&mut self, src: HostId, skip: u32) -> u32 {
        let choices = self.rails.len() as u32 - skip;
        let next = &mut self.next_rail[src.index()];
        let rail = *next % choices;
        *next = (rail + 1) % choices;
        rail
    }

    fn inject_striped(&mut self, at: SimTime, spec: MessageSpec) -> Result<(), InjectError> {
        let n = self.rails.len() as u32;
        let (base, extra) = (spec.size_bytes / n, spec.size_bytes % n);
        let parts = (0..n).map(|i| base + u32::from(i < extra));
        let sent = parts.clone().filter(|&p| p > 0).count().max(1) as u32;
        let stripe = self.stripes.insert(Stripe {
            spec,
            injected_at: at,
            first_byte_sent: SimTime::MAX,
            parts_left: sent,
        });
        for (rail, size_bytes) in parts.enumerate() {
            if size_bytes == 0 && !(rail == 0 && spec.size_bytes == 0) {
                continue;
            }
            let part = MessageSpec {
                size_bytes,
                cookie: u64::from(stripe),
                ..spec
            };
            self.rails[rail].inject(at, part)?;
        }
        self.in_flight += 1;
        Ok(())
    }

    /// Processes every event at or before `limit` on every rail, appending completed
    /// messages to `deliveries` in completion order (ties: by rail).
    pub fn run_until(&mut self, limit: SimTime, deliveries: &mut Vec<Delivery>) {
        if self.rails.len() == 1 {
            let before = deliveries.len();
            self.rails[0].run_until(limit, deliveries);
            self.in_flight -= deliveries.len() - before;
            return;
        }
        self.scratch.clear();
        for (index, rail) in self.rails.iter_mut().enumerate() {
            self.rail_deliveries.clear();
            rail.run_until(limit, &mut self.rail_deliveries);
            self.scratch
                .extend(self.rail_deliveries.iter().map(|d| (d.arrived, index, *d)));
        }
        // Stable: within a rail, completion order is kept.
        self.scratch.sort_by_key(|&(arrived, rail, _)| (arrived, rail));
        for &(_, _, delivery) in &self.scratch {
            if self.policy != RailPolicy::Striped {
                self.in_flight -= 1;
                deliveries.push(delivery);
                continue;
            }
            let index = delivery.cookie as u32;
            let stripe = &mut self.stripes[index as usize];
            stripe.first_byte_sent = stripe.first_byte_sent.min(delivery.first_byte_sent);
            stripe.parts_left -= 1;
            if stripe.parts_left == 0 {
                let s = *stripe;
                self.stripes.release(index);
                self.in_flight -= 1;
                deliveries.push(Delivery {
                    cookie: s.spec.cookie,
                    src: s.spec.src,
                    dst: s.spec.dst,
                    size_bytes: s.spec.size_bytes,
                    injected_at: s.injected_at,
                    first_byte_sent: s.first_byte_sent,
                    arrived: delivery.arrived,
                });
            }
        }
    }
}

impl<S: TraceSink + Send + std::fmt::Debug> Network for MultiRail<S> {
    fn hosts(&self) -> u32 {
        MultiRail::hosts(self)
    }

    fn now(&self) -> SimTime {
        MultiRail::now(self)
    }

    fn next_event_time(&self) -> Option<SimTime> {
        MultiRail::next_event_time(self)
    }

    fn safe_horizon(&self, t: SimTime) -> SimTime {
        MultiRail::safe_horizon(self, t)
    }

    fn final_deliveries(&mut self, since: SimTime, out: &mut Vec<Delivery>) {
        MultiRail::final_deliveries(self, since, out);
    }

    fn events_processed(&self) -> u64 {
        MultiRail::events_processed(self)
    }

    fn in_flight(&self) -> usize {
        MultiRail::in_flight(self)
    }

    fn inject(&mut self, at: SimTime, spec: MessageSpec) -> Result<(), InjectError> {
        MultiRail::inject(self, at, spec)
    }

    fn advance_clock(&mut self, time: SimTime) {
        MultiRail::advance_clock(self, time);
    }

    fn run_until(&mut self, limit: SimTime, deliveries: &mut Vec<Delivery>) {
        MultiRail::run_until(self, limit, deliveries);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LinkParams, NetworkBuilder};

    fn crossbar(hosts: u32) -> Simulation {
        NetworkBuilder::crossbar(hosts, LinkParams::default())
            .build()
            .expect("valid")
    }

    fn rails(n: usize, policy: RailPolicy) -> MultiRail {
        MultiRail::new((0..n).map(|_| crossbar(4)).collect(), policy).expect("same hosts")
    }

    fn spec(src: u32, dst: u32, size_bytes: u32, cookie: u64) -> MessageSpec {
        MessageSpec {
            src: HostId(src),
            dst: HostId(dst),
            size_bytes,
            cookie,
        }
    }

    /// Injects `specs` at 0 and returns (cookie, arrival) in delivery order.
    fn arrivals(net: &mut MultiRail, specs: &[MessageSpec]) -> Vec<(u64, SimTime)> {
        for s in specs {
            net.inject(SimTime::ZERO, *s).expect("valid");
        }
        let mut out = Vec::new();
        net.run_until(SimTime::MAX, &mut out);
        assert_eq!(net.in_flight(), 0);
        out.iter().map(|d| (d.cookie, d.arrived)).collect()
    }

    /// The arrival of one message alone on one crossbar.
    fn alone(size_bytes: u32) -> SimTime {
        arrivals(&mut MultiRail::single(crossbar(4)), &[spec(0, 1, size_bytes, 0)])[0].1
    }

    #[test]
    fn one_rail_is_the_network_itself() {
        let mut direct = crossbar(4);
        let mut single = MultiRail::single(crossbar(4));
        let specs = [spec(0, 1, 10_000, 1), spec(2, 1, 5000, 2), spec(1, 0, 1, 3)];
        let mut expected = Vec::new();
        for s in specs {
            direct.inject(SimTime::ZERO, s).expect("valid");
        }
        direct.run_until(SimTime::MAX, &mut expected);
        let mut got = Vec::new();
        for s in specs {
            single.inject(SimTime::ZERO, s).expect("valid");
        }
        single.run_until(SimTime::MAX, &mut got);
        assert_eq!(got, expected);
        assert_eq!(single.events_processed(), direct.events_processed());
    }

    #[test]
    fn round_robin_sends_a_hosts_messages_on_alternate_rails() {
        let mut two = rails(2, RailPolicy::RoundRobin);
        // Host 0's two messages do not queue behind each other: one per rail.
        let got = arrivals(&mut two, &[spec(0, 1, 8192, 1), spec(0, 2, 8192, 2)]);
        assert_eq!(got, vec![(1, alone(8192)), (2, alone(8192))]);
        let mut one = rails(1, RailPolicy::RoundRobin);
        let queued = arrivals(&mut one, &[spec(0, 1, 8192, 1), spec(0, 2, 8192, 2)]);
        assert!(queued[1].1 > alone(8192), "{queued:?}");
    }

    #[test]
    fn by_destination_keeps_a_destinations_traffic_on_one_rail() {
        let mut two = rails(2, RailPolicy::ByDestination);
        // Both go to host 1 (rail 1) and share its link, packet by packet; host 2 is
        // on rail 0, alone.
        let got = arrivals(
            &mut two,
            &[spec(0, 1, 8192, 1), spec(2, 1, 8192, 2), spec(3, 2, 8192, 3)],
        );
        assert_eq!(got[0], (3, alone(8192)));
        assert!(got[1].1 > alone(8192) && got[2].1 > got[1].1, "{got:?}");
        assert!(two.rails()[1].events_processed() > two.rails()[0].events_processed());
    }

    #[test]
    fn size_threshold_keeps_small_messages_on_rail_zero() {
        let mut three = rails(3, RailPolicy::SizeThreshold { bytes: 1024 });
        arrivals(
            &mut three,
            &[
                spec(0, 1, 100, 1),
                spec(0, 1, 100, 2),
                spec(0, 1, 5000, 3),
                spec(0, 1, 5000, 4),
            ],
        );
        let events: Vec<u64> = three.rails().iter().map(Partitioned::events_processed).collect();
        // Two small messages on rail 0, one large message on each of rails 1 and 2.
        assert!(events[0] > 0 && events[1] > 0 && events[1] == events[2], "{events:?}");
    }

    #[test]
    fn striping_splits_a_message_over_every_rail() {
        let mut two = rails(2, RailPolicy::Striped);
        let got = arrivals(&mut two, &[spec(0, 1, 20_001, 7), spec(2, 3, 1, 8), spec(3, 2, 0, 9)]);
        // 10,001 and 10,000 bytes in parallel: done when the larger part is.
        assert!(got.contains(&(7, alone(10_001))), "{got:?}");
        assert!(got.contains(&(8, alone(1))), "{got:?}");
        assert!(got.contains(&(9, alone(0))), "{got:?}");
    }

    #[test]
    fn rails_must_join_the_same_hosts() {
        let err = MultiRail::new(vec![crossbar(4), crossbar(5)], RailPolicy::Striped).expect_err("refused");
        assert_eq!(
            err.to_string(),
            "rails: rails[1] joins 5 hosts, rails[0] 4: every rail joins the same hosts"
        );
        let unknown = rails(2, RailPolicy::RoundRobin).inject(SimTime::ZERO, spec(0, 4, 1, 0));
        assert!(matches!(unknown, Err(InjectError::UnknownHost { .. })));
    }
}
