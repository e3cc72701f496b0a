//! The simulation: a frozen network (built by [`NetworkBuilder::build`](crate::builder::NetworkBuilder::build)) and its event
//! loop.
//!
//! ```text
//!   inject ─▶ adapter: segment ─▶ out p0 ─▶ link ─▶ switch: route ─▶ output ─▶ link ─▶ … ─▶ adapter:
//!             (round-robin or     (link      (prop)  (latency)       (queue,           reassemble;
//!              FIFO packets)       rate)                              link rate)       complete at
//!                                                                                      last byte
//! ```
//!
//! Every output port (an adapter's or a switch's) sends one packet at a time at its
//! link's rate, cut-through: a packet may leave a switch before its tail has arrived,
//! but never finishes leaving before it. A message's first byte leaving the source
//! adapter is its physical send time; the last byte of its last packet reaching the
//! destination adapter completes it.
//!
//! This module holds the event loop over the fabric, whichever it is (the ideal
//! network, the packet switches' engine [`crate::switch::packet`], the wormhole fabric
//! [`crate::switch::wormhole`]): it hands each event to it through `crate::fabric`'s
//! `Fabric`, and keeps what is the same for all (messages, the queue, injections,
//! deliveries, final deliveries). The builder is [`crate::builder`]; messages and
//! packets are [`crate::message`]; events `crate::event`; what partitions send each
//! other `crate::crossing`.

#[cfg(test)]
use crate::adapter::AdapterParams;
#[cfg(test)]
use crate::adapter::Sender;
use crate::crossing::Crossing;
use crate::event::{Event, Finals};
use crate::fabric::Fabric;
use crate::ids::{HostId, MessageId};
use crate::link::LinkParams;
use crate::message::{Delivery, InjectError, Message, MessageSpec, check_injection};
use crate::part::{Arrival, Core, Fixed, final_of};
use crate::queue::EventQueue;
use crate::slab::Slab;
#[cfg(test)]
use crate::switch::packet::cioq::Crossbar;
use crate::time::SimTime;
use crate::topology::{Endpoint, Wiring};
use crate::trace::{NullSink, TraceSink};

/// A frozen network and its event loop, tracing into `S`.
#[derive(Debug)]
pub struct Simulation<S: TraceSink = NullSink> {
    hosts: u32,
    fabric: Fabric,
    /// the least time from a message's injection to any change it can make to another
    /// message's delivery (see [`Simulation::safe_horizon`]); `SimTime::MAX`: none
    reach: SimTime,
    messages: Slab<Message>,
    /// messages injected so far (the last message's number)
    injected: u64,
    /// messages that entered this simulation's adapters, and that it delivered (the
    /// same messages unless it is one partition of a network)
    entered: u64,
    delivered: u64,
    /// injections scheduled and not yet handled (see [`Self::events_processed`])
    injections_waiting: u64,
    /// the pending events that make final deliveries, once asked for (see [`Finals`])
    finals: Finals,
    queue: EventQueue<Event>,
    sink: S,
}

impl<S: TraceSink> Simulation<S> {
    /// A network just built (see [`crate::builder`]): `origins` devices order the events
    /// of an instant (see [`crate::queue`]).
    pub(crate) fn built(hosts: u32, fabric: Fabric, reach: SimTime, origins: usize, sink: S) -> Self {
        Simulation {
            hosts,
            fabric,
            reach,
            messages: Slab::new(),
            injected: 0,
            entered: 0,
            delivered: 0,
            injections_waiting: 0,
            finals: Finals::default(),
            queue: EventQueue::with_origins(origins),
            sink,
        }
    }

    /// The bytes of the records [`crate::footprint`] counts, as built: what the
    /// footprint's resident part estimates.
    #[cfg(test)]
    pub(crate) fn counted_bytes(&self) -> u64 {
        let bytes = |capacity: usize, size: usize| (capacity * size) as u64;
        let fabric = match &self.fabric {
            Fabric::Ideal(_) => 0,
            Fabric::Wormhole(net) => net.counted_bytes(),
            Fabric::Packet(net) => {
                bytes(net.adapters.capacity(), size_of::<AdapterParams>())
                    + net.wiring.counted_bytes()
                    + net.routes.counted_bytes()
                    + bytes(net.port_device.capacity(), size_of::<u32>())
                    + net.ports.counted_bytes()
                    + bytes(net.senders.capacity(), size_of::<Sender>())
                    + bytes(net.crossbars.capacity(), size_of::<Option<Box<Crossbar>>>())
                    + net.crossbars.iter().flatten().map(|x| x.counted_bytes()).sum::<u64>()
            }
        };
        fabric + self.queue.origins_bytes()
    }

    /// Number of hosts.
    pub fn hosts(&self) -> u32 {
        self.hosts
    }

    /// The simulation clock: the time of the last event processed.
    pub fn now(&self) -> SimTime {
        self.queue.now()
    }

    /// Time of the next pending event, if any.
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.queue.peek_time()
    }

    /// Appends to `out` the deliveries that no message injected at `since` or later can
    /// change, in the order the model will make them: those it has already fixed, the
    /// ideal network's (each is scheduled as its message enters, and messages never
    /// meet), the packet switches' whose last packet is on its last cable (its
    /// arrival is fixed when it starts, and the packets of a message arrive in order),
    /// and the wormhole switches' whose last worm nothing can hold any more (see
    /// `WormholeFabric::final_deliveries`: on the fine path its last flit is on the last
    /// cable; on the coarse path its plan stands, the worm holding its way to the
    /// destination with no flow-control signal under way). Deliveries within
    /// [`Simulation::safe_horizon`]`(since)` are final too, but the model only knows
    /// them by reaching them. The model still delivers each when it reaches its time.
    ///
    /// From the first call on, the ideal network and the packet switches keep the events
    /// that make such deliveries as they are scheduled and handled (`Finals`), so a
    /// call costs what it returns, not a walk of the queue; the wormhole fabric's are
    /// found in the queue each time.
    pub fn final_deliveries(&mut self, since: SimTime, out: &mut Vec<Delivery>) {
        // Fixed whatever comes later: `since` does not narrow them.
        let _ = since;
        let mut found = Vec::new();
        self.final_deliveries_keyed(&mut found);
        out.extend(found.into_iter().map(|(_, d)| d));
    }

    /// [`Self::final_deliveries`] with the keys of the events that make them, in key
    /// order (a partition's, to be merged with the others').
    pub(crate) fn final_deliveries_keyed(&mut self, out: &mut Vec<(u128, Delivery)>) {
        let delivery = |messages: &Slab<Message>, message: MessageId, arrived: SimTime| {
            messages[message.index()].delivery(arrived)
        };
        if let Some(arrivals) = self.final_arrivals(self.queue.now()) {
            self.finals_of(&arrivals, out);
            return;
        }
        // The first time: the events already in the queue.
        let (fabric, queue) = (&self.fabric, &self.queue);
        let by_place = self
            .finals
            .by_place
            .get_or_insert_with(|| fabric.kept_finals(queue.pending()));
        // In the order the model will deliver them.
        out.extend(by_place.iter().map(|(&place, &message)| {
            let arrived = EventQueue::<Event>::time_of(place);
            (place, delivery(&self.messages, message, arrived))
        }));
    }

    /// Whether its fabric keeps the events that make final deliveries (see
    /// `FabricPart::KEEPS_FINALS`), rather than finding them in the queue each time.
    pub(crate) fn keeps_finals(&self) -> bool {
        self.fabric.keeps_finals()
    }

    /// The arrivals among the pending events that may make final deliveries, at `now`
    /// (the clock of the whole network), for fabrics that find them in the queue each
    /// time (`None`: the fabric keeps them, see `FabricPart::final_deliveries`). Those
    /// whose fate another partition knows say which ([`Fixed::Elsewhere`]).
    pub(crate) fn final_arrivals(&self, now: SimTime) -> Option<Vec<Arrival>> {
        if self.fabric.keeps_finals() {
            return None;
        }
        let mut arrivals = Vec::new();
        self.fabric
            .final_deliveries::<S>(self.queue.pending(), now, &mut arrivals);
        for a in &mut arrivals {
            if let Fixed::Elsewhere { number, .. } = &mut a.fixed {
                *number = self.messages[a.message.index()].number;
            }
        }
        Some(arrivals)
    }

    /// Goes on with another partition's walk up a packet's path (see
    /// `FabricPart::walk_on`).
    pub(crate) fn walk_on(&self, number: u64, index: u32, port: u32, now: SimTime) -> Fixed {
        self.fabric.walk_on(number, index, port, now)
    }

    /// Appends to `out` the deliveries that `arrivals` (each known fixed or not) make
    /// final, with the keys of the events that make them, in key order.
    pub(crate) fn finals_of(&self, arrivals: &[Arrival], out: &mut Vec<(u128, Delivery)>) {
        let mut fixed = Vec::new();
        final_of(arrivals, &self.messages, &mut fixed);
        fixed.sort_unstable_by_key(|&(place, _, _)| place);
        out.extend(
            fixed
                .into_iter()
                .map(|(place, at, message)| (place, self.messages[message.index()].delivery(at))),
        );
    }

    /// The safe horizon at `t`: a time `h ≥ t` such that no message injected at `t` or
    /// later can change any delivery at or before `h` (deliveries at or before `h` that
    /// the model has reached are final).
    ///
    /// The argument, for a message M injected at host H at `t` or later:
    /// - on the ideal network messages never meet, so `h` is the end of time;
    /// - otherwise M can change another message's course only where it meets it: at
    ///   H's adapter (its packets are interleaved with the others of H, from `t`) or
    ///   at a switch (its head reaches the first one a cable later: a flit's
    ///   serialization for wormhole switches, whose links carry whole flits, nothing for
    ///   packet switches, whose heads run ahead of their tails; plus the cable's
    ///   propagation, plus the routing decision before it asks for an output; stop/go
    ///   signals and arbitration start from there too). A message it meets there then
    ///   needs at least one more cable to reach its host. A packet held at H's adapter
    ///   from `t` needs a cable, a routing decision and a cable too. So no delivery
    ///   changes before `t + reach`, `reach` = two of the quickest cables (each with
    ///   that serialization) and a routing decision, or one cable when a cable joins two
    ///   hosts;
    /// - a delivery at `t` itself that the model has reached is final: an injection at
    ///   `t` enters after the events of `t` already processed.
    ///
    /// So `h = t + reach − 1 ps` (`t` when `reach` is zero: zero-delay cables and
    /// routing, and packets of no serialization).
    pub fn safe_horizon(&self, t: SimTime) -> SimTime {
        if self.reach == SimTime::MAX {
            return SimTime::MAX;
        }
        t.saturating_add(self.reach.max(SimTime::from_ps(1))) - SimTime::from_ps(1)
    }

    /// Events processed so far.
    ///
    /// An injection counts from the moment it is handed over, whether its message enters
    /// the adapter at once or waits in the queue for the clock: so the count does not
    /// depend on where the clock stood when it came (on when clients synchronise, or on
    /// the partition its host is in).
    pub fn events_processed(&self) -> u64 {
        self.queue.processed() + self.injections_waiting
    }

    /// Messages injected and not yet delivered.
    pub fn in_flight(&self) -> usize {
        self.entered.saturating_sub(self.delivered) as usize
    }

    /// Messages that entered this simulation's adapters, and messages it delivered: in
    /// a partition of a network, those of its own hosts.
    pub(crate) fn entered_and_delivered(&self) -> (u64, u64) {
        (self.entered, self.delivered)
    }

    /// Appends to `ports` the output ports a message from `src` to `dst` leaves by (global
    /// port indices, see [`Self::port`]), its source adapter's first; its hop count is
    /// their number. Returns `false` (nothing appended) for the ideal network and for
    /// routes chosen message by message. Changes no routing state.
    pub fn path(&self, src: HostId, dst: HostId, ports: &mut Vec<u32>) -> bool {
        if src.0 >= self.hosts || dst.0 >= self.hosts {
            return false;
        }
        match self.fabric.wiring_and_routes() {
            Some((wiring, routes)) => routes.walk(wiring, src, dst, ports),
            None => false,
        }
    }

    /// Number of ports (every port of every host and switch): the range of the indices
    /// [`Self::path`] gives; 0 for the ideal network.
    pub fn port_count(&self) -> usize {
        self.wiring().map_or(0, |w| w.owner.len())
    }

    /// Port number `port` (a global index): the device port itself, and the link it
    /// transmits on if it has a cable.
    pub fn port(&self, port: u32) -> Option<(Endpoint, Option<LinkParams>)> {
        let wiring = self.wiring()?;
        let owner = *wiring.owner.get(port as usize)?;
        Some((owner, wiring.peer[port as usize].map(|(_, link)| link)))
    }

    fn wiring(&self) -> Option<&Wiring> {
        self.fabric.wiring_and_routes().map(|(wiring, _)| wiring)
    }

    /// Messages at `host`'s adapter with packets still to send (its source queue, the
    /// message being sent included); 0 for the ideal network, which has no adapters.
    pub fn source_backlog(&self, host: HostId) -> usize {
        self.fabric.source_backlog(host)
    }

    /// Flow-control signals the wormhole fabric sent: (time, input, STOP?).
    #[cfg(test)]
    pub(crate) fn wormhole_signals(&self) -> Vec<(SimTime, u32, bool)> {
        match &self.fabric {
            Fabric::Wormhole(w) => w.signals.clone(),
            _ => Vec::new(),
        }
    }

    /// The trace sink.
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// The trace sink, for flushing.
    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    /// Hands a message to its source adapter at time `at` (not before [`Self::now`]).
    /// At the clock's own time (after [`Self::advance_clock`] to `at`), it enters the
    /// adapter at once if no other event comes first.
    pub fn inject(&mut self, at: SimTime, spec: MessageSpec) -> Result<MessageId, InjectError> {
        check_injection(self.hosts, self.now(), at, spec)?;
        let number = self.injected + 1;
        Ok(self.enter(at, spec, number))
    }

    /// Hands a checked message, the `number`th injected into the whole network, to its
    /// source adapter.
    pub(crate) fn enter(&mut self, at: SimTime, spec: MessageSpec, number: u64) -> MessageId {
        let route = self.fabric.route(spec.src, spec.dst, number);
        let packets_total = self.fabric.packets(spec.src, spec.size_bytes);
        self.injected = number;
        let record = Message {
            spec,
            number,
            injected_at: at,
            first_byte_sent: SimTime::MAX,
            bytes_unsent: spec.size_bytes,
            packets_cut: 0,
            packets_total,
            packets_delivered: 0,
            route,
        };
        let message = MessageId(self.messages.insert(record));
        let switched = self.fabric.switched();
        if S::ENABLED && switched {
            self.sink.injected(at, self.injected);
        }
        self.entered += 1;
        self.fabric.entered_here(message, number);
        if switched {
            // Its adapter schedules it: the host is the origin of its events.
            self.queue.set_origin(spec.src.index());
        }
        let event = Event::Inject { message };
        self.injections_waiting += 1;
        if !S::ENABLED && at == self.queue.now() && self.queue.take_turn(0) {
            // The clock is already there and the injection would be the next event: it
            // enters its adapter now, with no trip through the queue (an injection never
            // completes a message at once). Traces keep the event, for their clock. It
            // still counts as one, so that the count does not depend on where the clock
            // stood when the message came (which depends on when clients synchronise).
            self.queue.count_taken_turn();
            let mut none = Vec::new();
            self.handle(at, event, &mut none);
            debug_assert!(none.is_empty(), "an injection delivered a message at once");
        } else {
            self.queue.schedule(at, event);
        }
        message
    }

    /// Moves the clock to `time` when no event is pending before it.
    pub fn advance_clock(&mut self, time: SimTime) {
        self.queue.advance_clock(time);
    }

    /// Processes every event at or before `limit`, appending completed messages to
    /// `deliveries` in completion order.
    pub fn run_until(&mut self, limit: SimTime, deliveries: &mut Vec<Delivery>) {
        while let Some((now, event)) = self.queue.pop_until(limit) {
            if S::ENABLED {
                self.sink.clock(now);
            }
            self.handle(now, event, deliveries);
        }
    }

    fn handle(&mut self, now: SimTime, event: Event, deliveries: &mut Vec<Delivery>) {
        if let Event::Inject { .. } = event {
            self.injections_waiting -= 1;
        }
        let may_deliver = self.fabric.may_deliver(&event);
        let Simulation {
            fabric,
            messages,
            queue,
            sink,
            finals,
            ..
        } = self;
        let core = Core {
            now,
            messages,
            queue,
            sink,
            finals,
        };
        let delivered = fabric.handle(event, core);
        if may_deliver {
            self.finals.handled(self.queue.last_key());
        }
        if let Some(message) = delivered {
            deliveries.push(self.messages[message.index()].delivery(now));
            let number = self.messages[message.index()].number;
            self.fabric.delivered_here(message, number);
            self.messages.release(message.0);
            self.delivered += 1;
        }
    }

    /// Releases the records of the messages whose last packet left this partition.
    fn release_gone(&mut self) {
        if let Some(split) = self.fabric.split() {
            for message in split.released.drain(..) {
                self.messages.release(message.0);
            }
        }
    }

    /// Makes this simulation partition `part` of a network split as `of_device` says
    /// (the part of every device: hosts, then switches): it then only handles the
    /// events of its own devices, and what it sends to another partition's goes to
    /// [`Self::take_crossings`]. Only switches can be split, the wormhole fabric when it
    /// steps flit by flit ([`Self::can_be_split`]); the ideal network is left whole.
    pub(crate) fn share(&mut self, part: u32, of_device: Vec<u32>) {
        self.fabric.share(part, of_device);
    }

    /// Whether the network can be split into partitions ([`Self::share`]): packet
    /// switches; wormhole switches stepping flit by flit (`Err` says what stands in
    /// the way).
    pub(crate) fn can_be_split(&self) -> Result<(), &'static str> {
        self.fabric.can_be_split::<S>()
    }

    /// The `number`th message entered another partition: this one draws the route
    /// that partition drew for it, when routes are drawn at random from one generator
    /// (explicit routes, [`crate::MultipathPolicy::Random`]). Every partition then
    /// draws for every message, in the order of their numbers, as the whole network
    /// does: their generators agree, and each message takes the route it takes whole.
    pub(crate) fn entered_elsewhere(&mut self, spec: &MessageSpec) {
        self.fabric.entered_elsewhere(spec);
    }

    /// Moves what this partition sent to others since the last call into `out`.
    pub(crate) fn take_crossings(&mut self, out: &mut Vec<Crossing>) {
        if let Some(split) = self.fabric.split() {
            out.append(&mut split.crossings);
        }
    }

    /// Takes in a packet another partition sent, in the place among its instant's
    /// events the sender gave it.
    pub(crate) fn receive(&mut self, crossing: &Crossing) {
        let core = Core {
            now: self.queue.now(),
            messages: &mut self.messages,
            queue: &mut self.queue,
            sink: &mut self.sink,
            finals: &mut self.finals,
        };
        self.fabric.receive(crossing, core);
    }

    /// Processes every event at or before `limit`, appending completed messages to
    /// `deliveries` with their place in the order of the whole network's deliveries:
    /// the greatest key popped so far, `max_key` (see [`crate::partition::windows`]).
    pub(crate) fn run_window(&mut self, limit: SimTime, deliveries: &mut Vec<(u128, Delivery)>, max_key: &mut u128) {
        let mut one = Vec::new();
        while let Some((now, event)) = self.queue.pop_until(limit) {
            *max_key = (*max_key).max(self.queue.last_key());
            if S::ENABLED {
                self.sink.clock(now);
            }
            self.handle(now, event, &mut one);
            deliveries.extend(one.drain(..).map(|d| (*max_key, d)));
            self.release_gone();
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
