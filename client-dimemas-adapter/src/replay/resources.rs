//! Dimemas's point-to-point resources: the links and buses a message must hold while
//! its data moves, and the order in which waiting messages get them.
//!
//! Read from Dimemas's own model (`Simulator/model/communic.c`, `links.c`, `node.c`,
//! `task.c`), written here in our words; the conformance suites
//! (`shared/conformance/dimemas/` and `dimemas-wild/`) check it against Dimemas 5.5.0's
//! predictions.
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
//! An owner of links is a node between nodes, a task within a node; its counts come
//! from its node's record ([`super::machine`]). A message's data may leave only once it
//! holds, in this order:
//! 1. an output link of its source;
//! 2. an input link of its destination;
//! 3. a bus, when the domain has a bus limit (the machine's buses between nodes, the
//!    node's within it).
//!
//! Invariants and rules:
//! - What a message holds it keeps while it waits for the next step: a message waiting
//!   for an input link holds its output link; one waiting for a bus holds both links.
//! - Each wait is a FIFO queue: per owner for its output links and for its input links,
//!   per bus domain for buses. A message woken from a queue that still cannot go on
//!   joins the tail of the queue it then waits in.
//! - Between nodes only, an output link held by a message that waits for an input link
//!   may be taken by a newer message of the same node that can get its own input link
//!   at once (Dimemas's "link stealing"); the robbed message goes to the head of its
//!   node's queue for output links. The busy links are examined in the order they were
//!   taken.
//! - Everything is held for exactly the data's transfer (also when it takes no time, a
//!   bandwidth of 0), and released when it lands, before the message is delivered:
//!   first the output link, then the input link, then the bus (the oldest bus waiter
//!   tries again, after the link waiters woken before it have taken their place in the
//!   bus queue). A full-duplex release wakes at most one waiter per resource.
//! - An owner whose input and output link counts are both 0 has unlimited links.
//! - Half-duplex links: when exactly one of the two counts is 0, the owner has
//!   k = max(in, out) links, each carrying one direction at a time (a port): taking an
//!   output link of the owner also takes one of its input links, taking an input link
//!   also takes an output link, and the two are released together. So a message that
//!   waits for the receiver's input link blocks a whole port of its sender, both ways.
//!   Releasing a half-duplex link wakes two waiters: first the head of the owner's
//!   queue for the other direction, then the head of the queue for the same one.
//! - Between nodes, when the receiving node is half-duplex and has no free port, a
//!   message may also steal, at the receiver, the port of a message leaving that node
//!   that still waits for its own input link elsewhere (the victim goes to the head of
//!   that node's queue for output links). Output links are always taken first between
//!   nodes, half-duplex or not.
//! - Within a node, when either task is half-duplex and the sender's task number is
//!   higher than the receiver's, the receiver's input link is taken first, then the
//!   sender's output link (Dimemas's order against deadlock); a message waiting for the
//!   second holds the first. There is no stealing within a node.
//! - A message from a task to itself holds no link, but it does take one of its node's
//!   buses when their number is limited.
//! - A collective (modelled analytically) takes every bus of the machine when its last
//!   member arrives, and no link: the buses that are free at once, then, if some are
//!   busy, it joins the tail of the bus queue, and once at its head takes each bus a
//!   message frees, one per release, until it holds them all (meanwhile the buses count
//!   as all busy, so every later message queues behind it). Its time runs once it holds
//!   them; when it ends it frees them all, and up to that many waiters at the queue's
//!   head go, in order. With unlimited buses it takes nothing. (Dimemas 5.5.0 stops with
//!   an error when an `MPI_Reduce` waits at the head of the queue for a bus a message
//!   frees; vesper treats it as any other collective.)

use std::collections::{BTreeMap, VecDeque};

use super::machine::{DimemasModel, Links};

/// The free (output, input) links of a new owner of `links`.
fn free_links(links: Links) -> (u32, u32) {
    match links.half_duplex() {
        true => {
            let ports = links.input.max(links.output);
            (ports, ports)
        }
        false => (links.output, links.input),
    }
}

/// The links of one owner, and who waits for them.
#[derive(Debug, Default)]
struct Owner {
    half_duplex: bool,
    free_out: u32,
    free_in: u32,
    /// between nodes: the messages holding one of its output links as their own
    /// sender's link, in the order the links were taken
    owned_out: Vec<u64>,
    /// messages waiting for an output link, first served first
    wait_out: VecDeque<u64>,
    /// messages waiting for an input link, first served first
    wait_in: VecDeque<u64>,
}

impl Owner {
    fn new(links: Links) -> Owner {
        let (free_out, free_in) = free_links(links);
        Owner {
            half_duplex: links.half_duplex(),
            free_out,
            free_in,
            ..Owner::default()
        }
    }

    /// Takes an output link (and, half-duplex, an input link with it).
    fn take_out(&mut self) {
        self.free_out -= 1;
        if self.half_duplex {
            self.free_in -= 1;
        }
    }

    /// Takes an input link (and, half-duplex, an output link with it).
    fn take_in(&mut self) {
        self.free_in -= 1;
        if self.half_duplex {
            self.free_out -= 1;
        }
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

/// What one message needs and holds.
#[derive(Debug, Clone, Copy)]
struct Claim {
    /// `NETWORK` or `MEMORY`
    domain: usize,
    /// owner of its output link
    from: u32,
    /// owner of its input link
    to: u32,
    /// the node of `from` and `to` within a node (its bus group), or 0
    node: u32,
    /// it needs no link (a message from a task to itself)
    selfish: bool,
    out: bool,
    inn: bool,
    bus: bool,
    /// queued for an input link of `to` while it holds its output link
    waiting_in: bool,
}

/// One domain: between nodes (with link stealing) or within nodes.
#[derive(Debug, Default)]
struct Domain {
    owners: BTreeMap<u32, Owner>,
    /// messages on the buses, per group
    on_bus: BTreeMap<u32, u32>,
    /// messages waiting for a bus, per group
    bus_queue: BTreeMap<u32, VecDeque<u64>>,
}

const NETWORK: usize = 0;
const MEMORY: usize = 1;

/// Links and buses between and within nodes, and who holds or waits for them.
#[derive(Debug)]
pub struct Resources {
    model: DimemasModel,
    domains: [Domain; 2],
    claims: BTreeMap<u64, Claim>,
    /// collectives holding or gathering the machine's buses: how many they hold
    collectives: BTreeMap<u64, u32>,
}

impl Resources {
    /// The links and buses of `model`'s machine and nodes.
    pub fn new(model: DimemasModel) -> Resources {
        Resources {
            model,
            domains: [Domain::default(), Domain::default()],
            claims: BTreeMap::new(),
            collectives: BTreeMap::new(),
        }
    }

    /// Collective `id` (its last member has arrived) asks for every bus of the machine:
    /// whether it holds them all now (otherwise a later [`Resources::release`] names
    /// it once it does). With unlimited buses it needs none.
    pub fn request_all_buses(&mut self, id: u64) -> bool {
        let buses = self.model.buses;
        if buses == 0 {
            return true;
        }
        let domain = &mut self.domains[NETWORK];
        let on = domain.on_bus.entry(0).or_insert(0);
        // It takes the free ones; the others count as busy for it from now on.
        self.collectives.insert(id, buses - (*on).min(buses));
        let all = *on == 0;
        *on = buses;
        if !all {
            domain.bus_queue.entry(0).or_default().push_back(id);
        }
        all
    }

    /// Collective `id` ended: it frees the machine's buses, and the waiters at the
    /// head of the bus queue take them, in order. Returns the messages whose data may
    /// now leave and the collectives that now hold every bus, in that order.
    pub fn release_all_buses(&mut self, id: u64) -> Vec<u64> {
        let mut started = Vec::new();
        if self.collectives.remove(&id).is_none() {
            return started;
        }
        let buses = self.model.buses;
        self.domains[NETWORK].on_bus.insert(0, 0);
        let waiting = self.domains[NETWORK].bus_queue.get(&0).map_or(0, VecDeque::len);
        for _ in 0..waiting {
            if self.domains[NETWORK].on_bus.get(&0).copied().unwrap_or(0) >= buses {
                break;
            }
            let Some(next) = self.domains[NETWORK]
                .bus_queue
                .get_mut(&0)
                .and_then(VecDeque::pop_front)
            else {
                break;
            };
            if self.collectives.contains_key(&next) {
                self.gather_buses(next, &mut started);
            } else {
                self.wake(Some(next), false, &mut started);
            }
        }
        started
    }

    /// Collective `id`, at the head of the bus queue (already taken off it), takes the
    /// buses that are free; it goes when it holds them all, and goes back to the head
    /// otherwise.
    fn gather_buses(&mut self, id: u64, started: &mut Vec<u64>) {
        let buses = self.model.buses;
        let domain = &mut self.domains[NETWORK];
        let on = domain.on_bus.entry(0).or_insert(0);
        let free = buses - (*on).min(buses);
        *on = buses;
        let held = self.collectives.entry(id).or_insert(0);
        *held += free;
        match *held >= buses {
            true => started.push(id),
            false => domain.bus_queue.entry(0).or_default().push_front(id),
        }
    }

    /// The links of `claim`'s owner `owner` (its `from` or `to`).
    fn links(&self, claim: &Claim, owner: u32) -> Links {
        match claim.domain {
            NETWORK => self.model.node(owner).inter_links,
            _ => self.model.node(claim.node).intra_links,
        }
    }

    /// The bus limit of `claim`'s domain (0: unlimited).
    fn buses(&self, claim: &Claim) -> u32 {
        match claim.domain {
            NETWORK => self.model.buses,
            _ => self.model.node(claim.node).intra_buses,
        }
    }

    /// `claim`'s owner `owner` (its `from` or `to`), whose links are `links`.
    fn owner(&mut self, claim: &Claim, owner: u32, links: Links) -> &mut Owner {
        self.domains[claim.domain]
            .owners
            .entry(owner)
            .or_insert_with(|| Owner::new(links))
    }

    /// Message `id` asks for its resources: whether its data may leave now (otherwise
    /// it is queued and a later [`Resources::release`] names it).
    pub fn request(&mut self, id: u64, route: Route) -> bool {
        let (domain, from, to, node) = match route {
            Route::Network { from, to } => (NETWORK, from, to, 0),
            Route::Memory { node, from, to } => (MEMORY, from, to, node),
        };
        // Between nodes a message to its own node never comes here; within a node one
        // to its own task still takes a bus.
        if domain == NETWORK && from == to {
            return true;
        }
        self.claims.insert(
            id,
            Claim {
                domain,
                from,
                to,
                node,
                selfish: from == to,
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
        self.claims.values().filter(|c| !self.holds_all(c)).count()
    }

    /// Whether `claim` holds everything it needs (it is moving).
    fn holds_all(&self, claim: &Claim) -> bool {
        let links_done = claim.selfish
            || ((claim.out || self.links(claim, claim.from).unlimited())
                && (claim.inn || self.links(claim, claim.to).unlimited()));
        links_done && (claim.bus || self.buses(claim) == 0)
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
            let owner = self.domains[d]
                .owners
                .get_mut(&claim.from)
                .expect("a held link's owner");
            owner.free_out += 1;
            owner.owned_out.retain(|&m| m != id);
            if owner.half_duplex {
                owner.free_in += 1;
                let other = owner.wait_in.pop_front();
                self.wake(other, true, &mut started);
            }
            let owner = self.domains[d]
                .owners
                .get_mut(&claim.from)
                .expect("a held link's owner");
            let same = owner.wait_out.pop_front();
            self.wake(same, false, &mut started);
        }
        if claim.inn {
            let owner = self.domains[d].owners.get_mut(&claim.to).expect("a held link's owner");
            owner.free_in += 1;
            if owner.half_duplex {
                owner.free_out += 1;
                let other = owner.wait_out.pop_front();
                self.wake(other, false, &mut started);
            }
            let owner = self.domains[d].owners.get_mut(&claim.to).expect("a held link's owner");
            let same = owner.wait_in.pop_front();
            self.wake(same, true, &mut started);
        }
        if claim.bus {
            let domain = &mut self.domains[d];
            if let Some(n) = domain.on_bus.get_mut(&claim.node) {
                *n = n.saturating_sub(1);
            }
            let next = domain.bus_queue.get_mut(&claim.node).and_then(VecDeque::pop_front);
            match next {
                Some(collective) if self.collectives.contains_key(&collective) => {
                    self.gather_buses(collective, &mut started);
                }
                next => self.wake(next, false, &mut started),
            }
        }
        started
    }

    /// Message `id`, taken off a queue (an input link's when `from_input`), tries again.
    fn wake(&mut self, id: Option<u64>, from_input: bool, started: &mut Vec<u64>) {
        let Some(id) = id else { return };
        if from_input && let Some(c) = self.claims.get_mut(&id) {
            c.waiting_in = false;
        }
        if self.try_start(id) {
            started.push(id);
        }
    }

    /// Dimemas's acquisition, from where message `id` stands: its links in the
    /// domain's order, then a bus. Whether it holds all it needs now.
    fn try_start(&mut self, id: u64) -> bool {
        let Some(&claim) = self.claims.get(&id) else {
            return false;
        };
        let links_held = match (claim.selfish, claim.domain) {
            (true, _) => true,
            (false, NETWORK) => self.network_links(id, claim),
            (false, _) => self.memory_links(id, claim),
        };
        if !links_held {
            return false;
        }
        let buses = self.buses(&claim);
        let domain = &mut self.domains[claim.domain];
        if buses > 0 && !claim.bus {
            let on = domain.on_bus.entry(claim.node).or_insert(0);
            if *on >= buses {
                domain.bus_queue.entry(claim.node).or_default().push_back(id);
                return false;
            }
            *on += 1;
            self.set(id, |c| c.bus = true);
        }
        true
    }

    /// Between nodes: the sender's output link, then the receiver's input link, with
    /// link stealing. Whether it holds both (or needs none).
    fn network_links(&mut self, id: u64, claim: Claim) -> bool {
        let (from_links, to_links) = (self.links(&claim, claim.from), self.links(&claim, claim.to));
        let mut robbable = None;
        if !claim.out && !from_links.unlimited() {
            let outputs = self.owner(&claim, claim.from, from_links);
            if outputs.free_out > 0 {
                outputs.take_out();
                outputs.owned_out.push(id);
                self.set(id, |c| c.out = true);
            } else {
                robbable = self.victim(claim.from);
                if robbable.is_none() {
                    self.owner(&claim, claim.from, from_links).wait_out.push_back(id);
                    return false;
                }
            }
        }
        if !claim.inn && !to_links.unlimited() {
            let inputs = self.owner(&claim, claim.to, to_links);
            let (free, half) = (inputs.free_in, inputs.half_duplex);
            let port = match free {
                0 if half => self.victim(claim.to),
                _ => None,
            };
            if free == 0 && port.is_none() {
                match robbable {
                    None => {
                        self.owner(&claim, claim.to, to_links).wait_in.push_back(id);
                        self.set(id, |c| c.waiting_in = true);
                    }
                    Some(_) => self.owner(&claim, claim.from, from_links).wait_out.push_back(id),
                }
                return false;
            }
            if let Some(victim) = robbable {
                self.steal_out(claim.from, victim, id);
            }
            match port {
                Some(victim) => self.steal_in(claim.to, victim),
                None => self.owner(&claim, claim.to, to_links).take_in(),
            }
            self.set(id, |c| c.inn = true);
        }
        true
    }

    /// Within a node: the sender task's output link and the receiver task's input link,
    /// the receiver's first when either is half-duplex and the sender's number is
    /// higher. Whether it holds both (or needs none).
    fn memory_links(&mut self, id: u64, claim: Claim) -> bool {
        let links = self.links(&claim, claim.from);
        if links.unlimited() {
            return true;
        }
        let input_first = links.half_duplex() && claim.from > claim.to;
        let steps: [bool; 2] = match input_first {
            true => [true, false],
            false => [false, true],
        };
        for input in steps {
            if input && !claim.inn {
                let inputs = self.owner(&claim, claim.to, links);
                if inputs.free_in == 0 {
                    inputs.wait_in.push_back(id);
                    self.set(id, |c| c.waiting_in = true);
                    return false;
                }
                inputs.take_in();
                self.set(id, |c| c.inn = true);
            } else if !input && !claim.out {
                let outputs = self.owner(&claim, claim.from, links);
                if outputs.free_out == 0 {
                    outputs.wait_out.push_back(id);
                    return false;
                }
                outputs.take_out();
                self.set(id, |c| c.out = true);
            }
        }
        true
    }

    /// The first message (in the order the links were taken) holding an output link of
    /// node `owner` while it waits for an input link.
    fn victim(&self, owner: u32) -> Option<u64> {
        let claims = &self.claims;
        self.domains[NETWORK]
            .owners
            .get(&owner)?
            .owned_out
            .iter()
            .copied()
            .find(|m| claims.get(m).is_some_and(|c| c.out && !c.inn && c.waiting_in))
    }

    /// The victim leaves its input queue, gives up its port at `owner` and waits first
    /// in line for an output link of `owner`.
    fn rob(&mut self, owner: u32, victim: u64) {
        let Some(&v) = self.claims.get(&victim) else {
            return;
        };
        if let Some(inputs) = self.domains[NETWORK].owners.get_mut(&v.to) {
            inputs.wait_in.retain(|&m| m != victim);
        }
        if let Some(outputs) = self.domains[NETWORK].owners.get_mut(&owner) {
            outputs.wait_out.push_front(victim);
        }
        self.set(victim, |c| {
            c.out = false;
            c.waiting_in = false;
        });
    }

    /// `thief` takes `victim`'s output link of node `owner` (in its place among the
    /// links taken).
    fn steal_out(&mut self, owner: u32, victim: u64, thief: u64) {
        if let Some(outputs) = self.domains[NETWORK].owners.get_mut(&owner)
            && let Some(slot) = outputs.owned_out.iter_mut().find(|m| **m == victim)
        {
            *slot = thief;
        }
        self.rob(owner, victim);
        self.set(thief, |c| c.out = true);
    }

    /// A message entering half-duplex node `owner` takes `victim`'s port there as its
    /// input link (the port changes hands; the counts stay as they are).
    fn steal_in(&mut self, owner: u32, victim: u64) {
        if let Some(outputs) = self.domains[NETWORK].owners.get_mut(&owner) {
            outputs.owned_out.retain(|&m| m != victim);
        }
        self.rob(owner, victim);
    }

    fn set(&mut self, id: u64, change: impl FnOnce(&mut Claim)) {
        if let Some(c) = self.claims.get_mut(&id) {
            change(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::machine::NodeModel;

    fn net(from: u32, to: u32) -> Route {
        Route::Network { from, to }
    }

    fn mem(node: u32, from: u32, to: u32) -> Route {
        Route::Memory { node, from, to }
    }

    fn links(input: u32, output: u32) -> Links {
        Links { input, output }
    }

    /// Nodes with `inter` links to the network, `buses` of the machine.
    fn network(inter: Links, buses: u32) -> Resources {
        Resources::new(DimemasModel::uniform(
            NodeModel {
                inter_links: inter,
                ..NodeModel::free()
            },
            buses,
        ))
    }

    /// Tasks with `intra` links within their node, `buses` per node.
    fn memory(intra: Links, buses: u32) -> Resources {
        Resources::new(DimemasModel::uniform(
            NodeModel {
                intra_links: intra,
                intra_buses: buses,
                ..NodeModel::free()
            },
            0,
        ))
    }

    #[test]
    fn one_output_link_serialises_a_nodes_messages_in_order() {
        let mut r = network(links(1, 1), 0);
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
        let mut r = network(links(1, 1), 0);
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
        let mut r = network(links(1, 1), 0);
        assert!(r.request(1, net(0, 1)));
        // The only output link of node 0 is moving data: wait.
        assert!(!r.request(2, net(0, 2)));
        let mut r = network(links(1, 1), 0);
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
        let mut r = network(links(0, 0), 2);
        assert!(r.request(1, net(0, 1)));
        assert!(r.request(2, net(2, 3)));
        assert!(!r.request(3, net(4, 5)));
        assert!(!r.request(4, net(6, 7)));
        assert_eq!(r.release(2), vec![3]);
        assert_eq!(r.release(1), vec![4]);
    }

    #[test]
    fn a_message_waiting_for_a_bus_holds_its_links() {
        let mut r = network(links(1, 1), 1);
        assert!(r.request(1, net(0, 1)));
        // Message 2 gets node 2's output and node 3's input links, then waits for the
        // bus; message 3 from node 2 must wait for message 2's output link.
        assert!(!r.request(2, net(2, 3)));
        assert!(!r.request(3, net(2, 4)));
        assert_eq!(r.release(1), vec![2]);
        assert_eq!(r.release(2), vec![3]);
    }

    #[test]
    fn link_waiters_woken_by_a_release_queue_for_the_bus_behind_older_bus_waiters() {
        let mut r = network(links(1, 1), 1);
        assert!(r.request(1, net(0, 1)));
        // Message 2 waits for node 0's output link; message 3 has its links and waits
        // for the bus.
        assert!(!r.request(2, net(0, 2)));
        assert!(!r.request(3, net(3, 4)));
        // Message 1 lands: message 2 gets node 0's output link, finds the bus still
        // counted and queues behind message 3, which gets the bus.
        assert_eq!(r.release(1), vec![3]);
        assert_eq!(r.release(3), vec![2]);
    }

    #[test]
    fn links_within_a_node_belong_to_tasks_and_its_buses_to_the_node() {
        let mut r = memory(links(1, 1), 1);
        assert!(r.request(1, mem(0, 0, 1)));
        // Another pair of node 0 has its links but not the node's one bus.
        assert!(!r.request(2, mem(0, 2, 3)));
        // Node 1's bus is free.
        assert!(r.request(3, mem(1, 4, 5)));
        // No stealing within nodes: task 0's next message waits for its output link.
        assert!(!r.request(4, mem(0, 0, 3)));
        assert_eq!(r.release(1), vec![2]);
        assert_eq!(r.release(2), vec![4]);
    }

    #[test]
    fn a_message_from_a_task_to_itself_takes_no_link_but_a_bus() {
        let mut r = memory(links(1, 1), 1);
        assert!(r.request(1, mem(0, 0, 1)));
        // Task 0's output link is busy, but a message to itself needs none; the node's
        // one bus is busy, though.
        assert!(!r.request(2, mem(0, 0, 0)));
        assert_eq!(r.release(1), vec![2]);
        // Without a bus limit it holds nothing.
        let mut r = memory(links(1, 1), 0);
        assert!(r.request(1, mem(0, 0, 1)));
        assert!(r.request(2, mem(0, 0, 0)));
    }

    #[test]
    fn unlimited_links_and_buses_never_wait() {
        let mut r = network(Links::default(), 0);
        assert!((0..100).all(|id| r.request(id, net(0, 1))));
        let mut r = memory(Links::default(), 0);
        assert!((0..100).all(|id| r.request(id, mem(0, 0, 1))));
        assert_eq!(r.waiting(), 0);
    }

    #[test]
    fn a_half_duplex_node_sends_or_receives_through_each_port_one_way_at_a_time() {
        for (input, output) in [(1, 0), (0, 1)] {
            let mut r = network(links(input, output), 0);
            assert!(r.request(1, net(0, 1)));
            // Node 0's one port is sending: node 0 cannot receive either.
            assert!(!r.request(2, net(2, 0)));
            // Nor can node 1, whose port is receiving, send.
            assert!(!r.request(3, net(1, 3)));
            // Node 1's release wakes node 1's sender, node 0's its receiver.
            assert_eq!(r.release(1), vec![2, 3]);
        }
        // Two ports: two messages at once, whatever their direction.
        let mut r = network(links(2, 0), 0);
        assert!(r.request(1, net(0, 1)));
        assert!(r.request(2, net(2, 0)));
        assert!(!r.request(3, net(0, 3)));
        assert_eq!(r.release(2), vec![3]);
    }

    #[test]
    fn a_half_duplex_release_wakes_the_other_direction_first() {
        let mut r = network(links(1, 0), 0);
        assert!(r.request(1, net(0, 1)));
        // Node 0's port is busy: a message into node 0 waits for its input link (it
        // holds node 2's port meanwhile), then one out of node 0 for its output link.
        assert!(!r.request(2, net(2, 0)));
        assert!(!r.request(3, net(0, 3)));
        // Message 1 frees node 0's port: the input waiter goes first and takes it; the
        // output waiter finds none and queues again.
        assert_eq!(r.release(1), vec![2]);
        assert_eq!(r.release(2), vec![3]);
    }

    #[test]
    fn a_port_of_a_half_duplex_receiver_is_stolen_from_a_message_leaving_it_that_waits() {
        let mut r = network(links(1, 0), 0);
        // Message 1 holds node 1's port; message 2 leaves node 0 for node 1 and waits,
        // holding node 0's port.
        assert!(r.request(1, net(1, 5)));
        assert!(!r.request(2, net(0, 1)));
        // A message from node 3 into node 0 takes message 2's port at node 0.
        assert!(r.request(3, net(3, 0)));
        // Message 2 now waits first for node 0's output link: message 3 frees it.
        assert_eq!(r.release(1), Vec::<u64>::new());
        assert_eq!(r.release(3), vec![2]);
    }

    #[test]
    fn within_a_half_duplex_node_the_higher_task_takes_the_receivers_link_first() {
        let mut r = memory(links(1, 0), 0);
        assert!(r.request(1, mem(0, 2, 3)));
        // Task 3 sends to task 2 (3 > 2): it first asks for task 2's input link, busy
        // with task 2's sending, and holds nothing while it waits; so task 3 can still
        // send to task 4 once message 1 has freed its port.
        assert!(!r.request(2, mem(0, 3, 2)));
        assert!(!r.request(3, mem(0, 3, 4)));
        // Message 1 frees task 2's port, waking message 2, which takes it and then
        // queues for task 3's behind message 3: task 3's port, freed next, goes to
        // message 3.
        assert_eq!(r.release(1), vec![3]);
        assert_eq!(r.release(3), vec![2]);
        // Task 1 sends to task 3 (1 < 3): its own output link first, then task 3's.
        let mut r = memory(links(1, 0), 0);
        assert!(r.request(1, mem(0, 2, 3)));
        assert!(!r.request(2, mem(0, 1, 3)));
        // It holds task 1's port while it waits: task 0 cannot send to task 1.
        assert!(!r.request(3, mem(0, 0, 1)));
        assert_eq!(r.release(1), vec![2]);
        assert_eq!(r.release(2), vec![3]);
    }

    #[test]
    fn a_collective_takes_the_free_buses_then_each_one_freed() {
        let collective = 1 << 63;
        // Two buses, one busy: the collective takes the other and waits at the head;
        // a later message queues behind it; the busy one, freed, completes it.
        let mut r = network(Links::default(), 2);
        assert!(r.request(1, net(0, 1)));
        assert!(!r.request_all_buses(collective));
        assert!(!r.request(2, net(2, 3)));
        assert_eq!(r.release(1), vec![collective]);
        // Its end frees both: the message behind it goes.
        assert_eq!(r.release_all_buses(collective), vec![2]);
        assert_eq!(r.release(2), Vec::<u64>::new());
    }

    #[test]
    fn waiters_ahead_of_a_collective_go_first_and_its_end_frees_every_bus() {
        let collective = 1 << 63;
        let mut r = network(Links::default(), 2);
        assert!(r.request(1, net(0, 1)));
        assert!(r.request(2, net(2, 3)));
        assert!(!r.request(3, net(4, 5)));
        // Both buses busy: it holds none, behind message 3.
        assert!(!r.request_all_buses(collective));
        assert_eq!(r.release(1), vec![3]);
        // Message 2's bus goes to the collective, which still lacks one.
        assert_eq!(r.release(2), Vec::<u64>::new());
        assert_eq!(r.release(3), vec![collective]);
        // Free buses at once, and a second collective behind the first.
        let mut r = network(Links::default(), 2);
        assert!(r.request_all_buses(collective));
        assert!(!r.request(1, net(0, 1)));
        assert!(!r.request_all_buses(collective + 1));
        assert!(!r.request(2, net(2, 3)));
        // The end frees two buses: message 1 takes one, the second collective the other
        // (it still lacks one, so message 2 waits).
        assert_eq!(r.release_all_buses(collective), vec![1]);
        assert_eq!(r.release(1), vec![collective + 1]);
        assert_eq!(r.release_all_buses(collective + 1), vec![2]);
    }

    #[test]
    fn with_unlimited_buses_a_collective_takes_nothing() {
        let mut r = network(Links::default(), 0);
        assert!(r.request_all_buses(1 << 63));
        assert!(r.request(1, net(0, 1)));
        assert_eq!(r.release_all_buses(1 << 63), Vec::<u64>::new());
    }
}
