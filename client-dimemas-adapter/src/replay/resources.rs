//! Dimemas's point-to-point resources: the links and buses a message must hold while
//! its data moves, and the order in which waiting messages get them.
//!
//! Read from Dimemas's own model (`Simulator/model/communic.c`, `links.c`, `node.c`),
//! written here in our words; the conformance suite (`shared/conformance/dimemas/`)
//! checks it against Dimemas 5.5.0's predictions.
//!
//! ```text
//!   sender's node                                        receiver's node
//!   ┌──────────┐  output link ──▶  bus (one of B)  ──▶  input link  ┌──────────┐
//!   │ tasks    │  (out_links)      (n_buses; 0 = ∞)     (in_links)  │ tasks    │
//!   └──────────┘                                                    └──────────┘
//!   within a node: the sending task's output link, the receiving task's input link
//!   (intra_out_links, intra_in_links, per task) and one of the node's buses
//!   (intra_buses; 0 = ∞)
//! ```
//!
//! A message's data may leave only once it holds, in this order:
//! 1. an output link of its source (a node between nodes, a task within one);
//! 2. an input link of its destination;
//! 3. a bus, when the domain has a bus limit (the machine's buses between nodes, the
//!    node's within it).
//!
//! Invariants and rules:
//! - What a message holds it keeps while it waits for the next step: a message waiting
//!   for an input link holds its output link; one waiting for a bus holds both links.
//! - Each wait is a FIFO queue: per source for output links, per destination for input
//!   links, per bus domain for buses.
//! - Between nodes only, an output link held by a message that waits for an input link
//!   may be taken by a newer message of the same node that can get its own input link
//!   at once (Dimemas's "link stealing"); the robbed message goes to the head of its
//!   node's queue for output links. The busy links are examined in the order they were
//!   taken.
//! - Everything is held for exactly the data's transfer, and released when it lands,
//!   before the message is delivered: first the output link (its queue's head tries
//!   again), then the input link (likewise), then the bus (the oldest bus waiter tries
//!   again). A release wakes at most one waiter per resource.
//! - A domain whose input and output link counts are both 0 has unlimited links; a
//!   count of 0 on one side only is Dimemas's half-duplex links, not modelled here
//!   (refused when the model is built).
//! - Messages from a task to itself hold nothing.

use std::collections::{BTreeMap, VecDeque};

/// Links per owner (a node between nodes, a task within a node); both 0: unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Links {
    /// input links
    pub input: u32,
    /// output links
    pub output: u32,
}

impl Links {
    fn unlimited(self) -> bool {
        self.input == 0 && self.output == 0
    }
}

/// Why a resource model cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what}: {input} input and {output} output links: half-duplex links (one count 0, the other not) are not \
     modelled; give both counts, or 0 for both (unlimited)"
)]
pub struct HalfDuplex {
    /// which links
    pub what: &'static str,
    /// input links
    pub input: u32,
    /// output links
    pub output: u32,
}

/// Dimemas's point-to-point model, as a configuration sets it: the software latency
/// a task pays before each send, blocking receive and wait (Dimemas's "startup"), and
/// the resources a message holds while its data moves (this module).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DimemasModel {
    /// startup between nodes (`inter_latency_s`) \[ps\]
    pub inter_startup: super::Ps,
    /// startup within a node (`intra_latency_s`) \[ps\]
    pub intra_startup: super::Ps,
    /// links per node (`inter_in_links`, `inter_out_links`) and the machine's buses
    /// (`n_buses`)
    pub network: Limits,
    /// links per task (`intra_in_links`, `intra_out_links`) and buses per node
    /// (`intra_buses`)
    pub memory: Limits,
}

/// The resources of one domain: links per owner, and buses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// links per owner
    pub links: Links,
    /// buses per bus group (0: unlimited)
    pub buses: u32,
}

impl Limits {
    /// `links` and `buses`, refusing half-duplex links (named `what` in the error).
    pub fn new(what: &'static str, links: Links, buses: u32) -> Result<Limits, HalfDuplex> {
        if (links.input == 0) != (links.output == 0) {
            return Err(HalfDuplex {
                what,
                input: links.input,
                output: links.output,
            });
        }
        Ok(Limits { links, buses })
    }
}

/// The links of one owner, one direction.
#[derive(Debug, Default)]
struct Ports {
    /// links free
    free: u32,
    /// the messages holding a link, in the order the links were taken
    busy: Vec<u64>,
    /// messages waiting for a link, first served first
    waiting: VecDeque<u64>,
}

/// What one message needs and holds.
#[derive(Debug, Clone, Copy)]
struct Claim {
    /// `Domain::Network` or `Domain::Memory`
    domain: usize,
    /// owner of its output link
    from: u32,
    /// owner of its input link
    to: u32,
    /// its bus group
    group: u32,
    out: bool,
    inn: bool,
    bus: bool,
    /// queued for an input link of `to`
    waiting_in: bool,
}

/// One domain: between nodes (with link stealing) or within nodes.
#[derive(Debug)]
struct Domain {
    limits: Limits,
    steal: bool,
    output: BTreeMap<u32, Ports>,
    input: BTreeMap<u32, Ports>,
    /// messages on the buses, per group
    on_bus: BTreeMap<u32, u32>,
    /// messages waiting for a bus, per group
    bus_queue: BTreeMap<u32, VecDeque<u64>>,
}

impl Domain {
    fn new(limits: Limits, steal: bool) -> Domain {
        Domain {
            limits,
            steal,
            output: BTreeMap::new(),
            input: BTreeMap::new(),
            on_bus: BTreeMap::new(),
            bus_queue: BTreeMap::new(),
        }
    }

    fn outputs(&mut self, owner: u32) -> &mut Ports {
        let free = self.limits.links.output;
        self.output.entry(owner).or_insert_with(|| Ports {
            free,
            ..Ports::default()
        })
    }

    fn inputs(&mut self, owner: u32) -> &mut Ports {
        let free = self.limits.links.input;
        self.input.entry(owner).or_insert_with(|| Ports {
            free,
            ..Ports::default()
        })
    }
}

/// Which domain a message travels in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// between nodes `from` and `to`
    Network {
        /// source node
        from: u32,
        /// destination node
        to: u32,
    },
    /// within node `node`, from task `from` to task `to`
    Memory {
        /// the node
        node: u32,
        /// source task
        from: u32,
        /// destination task
        to: u32,
    },
}

const NETWORK: usize = 0;
const MEMORY: usize = 1;

/// Links and buses between and within nodes, and who holds or waits for them.
#[derive(Debug)]
pub struct Resources {
    domains: [Domain; 2],
    claims: BTreeMap<u64, Claim>,
}

impl Resources {
    /// Between nodes: `network` (links per node, buses of the machine); within nodes:
    /// `memory` (links per task, buses per node).
    pub fn new(network: Limits, memory: Limits) -> Resources {
        Resources {
            domains: [Domain::new(network, true), Domain::new(memory, false)],
            claims: BTreeMap::new(),
        }
    }

    /// Message `id` asks for its resources: whether its data may leave now (otherwise
    /// it is queued and a later [`Resources::release`] names it).
    pub fn request(&mut self, id: u64, route: Route) -> bool {
        let (domain, from, to, group, selfish) = match route {
            Route::Network { from, to } => (NETWORK, from, to, 0, from == to),
            Route::Memory { node, from, to } => (MEMORY, from, to, node, from == to),
        };
        if selfish {
            return true;
        }
        self.claims.insert(
            id,
            Claim {
                domain,
                from,
                to,
                group,
                out: false,
                inn: false,
                bus: false,
                waiting_in: false,
            },
        );
        self.try_start(id)
    }

    /// Messages waiting for resources.
    pub fn waiting(&self) -> usize {
        self.claims.values().filter(|c| !c.bus_or_free(&self.domains)).count()
    }

    /// Message `id`'s data landed: it frees what it holds. Returns the waiting
    /// messages whose data may now leave, in the order they got their resources.
    pub fn release(&mut self, id: u64) -> Vec<u64> {
        let Some(claim) = self.claims.remove(&id) else {
            return Vec::new();
        };
        let mut started = Vec::new();
        let d = claim.domain;
        if claim.out {
            let ports = self.domains[d].outputs(claim.from);
            ports.free += 1;
            ports.busy.retain(|&m| m != id);
            if let Some(next) = ports.waiting.pop_front() {
                self.wake(next, &mut started);
            }
        }
        if claim.inn {
            let ports = self.domains[d].inputs(claim.to);
            ports.free += 1;
            ports.busy.retain(|&m| m != id);
            if let Some(next) = ports.waiting.pop_front() {
                if let Some(c) = self.claims.get_mut(&next) {
                    c.waiting_in = false;
                }
                self.wake(next, &mut started);
            }
        }
        if claim.bus {
            let domain = &mut self.domains[d];
            if let Some(n) = domain.on_bus.get_mut(&claim.group) {
                *n = n.saturating_sub(1);
            }
            if let Some(next) = domain.bus_queue.get_mut(&claim.group).and_then(VecDeque::pop_front) {
                self.wake(next, &mut started);
            }
        }
        started
    }

    fn wake(&mut self, id: u64, started: &mut Vec<u64>) {
        if self.try_start(id) {
            started.push(id);
        }
    }

    /// Dimemas's acquisition, from where message `id` stands: output link, input
    /// link, bus. Whether it holds all it needs now.
    fn try_start(&mut self, id: u64) -> bool {
        let Some(&claim) = self.claims.get(&id) else {
            return false;
        };
        let d = claim.domain;
        let links = self.domains[d].limits.links;
        let mut robbable = None;
        if !links.unlimited() && !claim.out {
            let outputs = self.domains[d].outputs(claim.from);
            if outputs.free > 0 {
                outputs.free -= 1;
                outputs.busy.push(id);
                self.set(id, |c| c.out = true);
            } else {
                robbable = self.robbable(d, claim.from);
                if robbable.is_none() {
                    self.domains[d].outputs(claim.from).waiting.push_back(id);
                    return false;
                }
            }
        }
        if !links.unlimited() && !claim.inn {
            let inputs = self.domains[d].inputs(claim.to);
            if inputs.free == 0 {
                if robbable.is_none() {
                    inputs.waiting.push_back(id);
                    self.set(id, |c| c.waiting_in = true);
                } else {
                    self.domains[d].outputs(claim.from).waiting.push_back(id);
                }
                return false;
            }
            inputs.free -= 1;
            inputs.busy.push(id);
            self.set(id, |c| c.inn = true);
            if let Some(victim) = robbable {
                self.rob(d, claim.from, victim, id);
            }
        }
        let domain = &mut self.domains[d];
        if domain.limits.buses > 0 && !claim.bus {
            let on = domain.on_bus.entry(claim.group).or_insert(0);
            if *on >= domain.limits.buses {
                domain.bus_queue.entry(claim.group).or_default().push_back(id);
                return false;
            }
            *on += 1;
            self.set(id, |c| c.bus = true);
        }
        true
    }

    /// The first message (in the order the links were taken) holding an output link of
    /// `owner` while it waits for an input link, if stealing applies.
    fn robbable(&mut self, d: usize, owner: u32) -> Option<u64> {
        if !self.domains[d].steal {
            return None;
        }
        let claims = &self.claims;
        self.domains[d]
            .outputs(owner)
            .busy
            .iter()
            .copied()
            .find(|m| claims.get(m).is_some_and(|c| c.out && !c.inn && c.waiting_in))
    }

    /// `thief` takes `victim`'s output link of `owner`; the victim leaves its input
    /// queue and waits first in line for an output link.
    fn rob(&mut self, d: usize, owner: u32, victim: u64, thief: u64) {
        let Some(&v) = self.claims.get(&victim) else {
            return;
        };
        self.domains[d].inputs(v.to).waiting.retain(|&m| m != victim);
        let outputs = self.domains[d].outputs(owner);
        if let Some(slot) = outputs.busy.iter_mut().find(|m| **m == victim) {
            *slot = thief;
        }
        outputs.waiting.push_front(victim);
        self.set(victim, |c| {
            c.out = false;
            c.waiting_in = false;
        });
        self.set(thief, |c| c.out = true);
    }

    fn set(&mut self, id: u64, change: impl FnOnce(&mut Claim)) {
        if let Some(c) = self.claims.get_mut(&id) {
            change(c);
        }
    }
}

impl Claim {
    /// Whether it holds everything its domain asks for (it is moving).
    fn bus_or_free(&self, domains: &[Domain; 2]) -> bool {
        let limits = domains[self.domain].limits;
        (limits.links.unlimited() || (self.out && self.inn)) && (limits.buses == 0 || self.bus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(from: u32, to: u32) -> Route {
        Route::Network { from, to }
    }

    fn limits(input: u32, output: u32, buses: u32) -> Limits {
        Limits::new("test links", Links { input, output }, buses).expect("full duplex")
    }

    fn resources(network: Limits) -> Resources {
        Resources::new(network, Limits::default())
    }

    #[test]
    fn one_output_link_serialises_a_nodes_messages_in_order() {
        let mut r = resources(limits(1, 1, 0));
        assert!(r.request(1, net(0, 1)));
        assert!(!r.request(2, net(0, 2)));
        assert!(!r.request(3, net(0, 3)));
        assert_eq!(r.waiting(), 2);
        assert_eq!(r.release(1), vec![2]);
        assert_eq!(r.release(2), vec![3]);
        assert_eq!(r.release(3), Vec::<u64>::new());
    }

    #[test]
    fn one_input_link_serialises_an_incast_while_senders_keep_their_output_links() {
        let mut r = resources(limits(1, 1, 0));
        assert!(r.request(1, net(1, 0)));
        assert!(!r.request(2, net(2, 0)));
        // Node 2's output link is held by message 2 while it waits for node 0's input:
        // a message from node 2 to node 3, which could get its input link, steals it.
        assert!(r.request(3, net(2, 3)));
        // Message 2 now waits first in line for node 2's output link, not for node 0.
        assert_eq!(r.release(1), Vec::<u64>::new());
        assert_eq!(r.release(3), vec![2]);
    }

    #[test]
    fn nothing_is_stolen_from_a_message_that_has_both_links_or_for_one_that_cannot_start() {
        let mut r = resources(limits(1, 1, 0));
        assert!(r.request(1, net(0, 1)));
        // The only output link of node 0 is moving data: wait.
        assert!(!r.request(2, net(0, 2)));
        let mut r = resources(limits(1, 1, 0));
        assert!(r.request(1, net(1, 0)));
        assert!(!r.request(2, net(2, 0)));
        // Message 3 could steal node 2's output link but node 0's input is busy too:
        // it waits for an output link of node 2, behind nobody.
        assert!(!r.request(3, net(2, 0)));
        assert_eq!(r.release(1), vec![2]);
        assert_eq!(r.release(2), vec![3]);
    }

    #[test]
    fn buses_are_taken_last_and_handed_to_the_oldest_waiter() {
        let mut r = resources(limits(0, 0, 2));
        assert!(r.request(1, net(0, 1)));
        assert!(r.request(2, net(2, 3)));
        assert!(!r.request(3, net(4, 5)));
        assert!(!r.request(4, net(6, 7)));
        assert_eq!(r.release(2), vec![3]);
        assert_eq!(r.release(1), vec![4]);
    }

    #[test]
    fn a_message_waiting_for_a_bus_holds_its_links() {
        let mut r = resources(limits(1, 1, 1));
        assert!(r.request(1, net(0, 1)));
        // Message 2 gets node 2's output and node 3's input links, then waits for the
        // bus; message 3 from node 2 must wait for message 2's output link.
        assert!(!r.request(2, net(2, 3)));
        assert!(!r.request(3, net(2, 4)));
        assert_eq!(r.release(1), vec![2]);
        assert_eq!(r.release(2), vec![3]);
    }

    #[test]
    fn links_within_a_node_belong_to_tasks_and_its_buses_to_the_node() {
        let mut r = Resources::new(Limits::default(), limits(1, 1, 1));
        let mem = |node, from, to| Route::Memory { node, from, to };
        assert!(r.request(1, mem(0, 0, 1)));
        // Another pair of node 0 has its links but not the node's one bus.
        assert!(!r.request(2, mem(0, 2, 3)));
        // Node 1's bus is free.
        assert!(r.request(3, mem(1, 4, 5)));
        // No stealing within nodes: task 0's next message waits for its output link.
        assert!(!r.request(4, mem(0, 0, 3)));
        assert_eq!(r.release(1), vec![2]);
        assert_eq!(r.release(2), vec![4]);
        // A task's message to itself holds nothing.
        assert!(r.request(5, mem(0, 0, 0)));
    }

    #[test]
    fn unlimited_links_and_buses_never_wait_and_half_duplex_is_refused() {
        let mut r = resources(Limits::default());
        assert!((0..100).all(|id| r.request(id, net(0, 1))));
        let err = Limits::new("inter-node links", Links { input: 0, output: 2 }, 0).expect_err("half duplex");
        assert_eq!(
            err.to_string(),
            "inter-node links: 0 input and 2 output links: half-duplex links (one count 0, the other not) are not \
             modelled; give both counts, or 0 for both (unlimited)"
        );
    }
}
