//! [`FabricPart`]: the one interface the network drives, whatever carries its messages.
//! The ideal network ([`crate::ideal`]), the packet switches ([`crate::switch::packet`])
//! and the wormhole switches ([`crate::switch::wormhole`]) each implement it in their own
//! module, with events of their own (a variant of [`Event`] holds them); the simulation
//! holds one of them in its `Fabric`, an enum made by the registry `fabrics!` in
//! `crate::fabric`, which dispatches each call by a `match` (static, inlined).
//!
//! ```text
//!   simulation ──Event::Inject──▶ part.inject ─┐
//!              ──Event::<own>───▶ part.handle ─┴─▶ events it schedules, a delivery
//!   partitions ──Crossing───────▶ part.receive     crossings it sends (its Split)
//! ```

use std::collections::BTreeMap;

use crate::crossing::{Crossing, Split};
use crate::event::{Event, Finals};
use crate::ids::{HostId, MessageId};
use crate::message::{Message, MessageSpec};
use crate::queue::EventQueue;
use crate::slab::Slab;
use crate::time::SimTime;
use crate::topology::{Route, RouteTable, Wiring};
use crate::trace::TraceSink;

/// What a part works with besides itself while it handles an event: the clock, the
/// messages, the queue, the trace and the final deliveries kept.
pub(crate) struct Core<'a, S> {
    /// the time of the event
    pub(crate) now: SimTime,
    /// every message's record
    pub(crate) messages: &'a mut Slab<Message>,
    /// the network's events
    pub(crate) queue: &'a mut EventQueue<Event>,
    /// the trace
    pub(crate) sink: &'a mut S,
    /// the final deliveries kept (see [`FabricPart::delivers`])
    pub(crate) finals: &'a mut Finals,
}

/// A fabric: what carries a network's messages (see the [module documentation](self)).
pub(crate) trait FabricPart {
    /// Its own events.
    type Event: Copy;

    /// Whether it has adapters, cables and switches (the ideal network has none): their
    /// injections are traced, and a message's host orders its injection's events.
    const SWITCHED: bool = true;

    /// Whether its final deliveries are kept as their events are scheduled and handled
    /// (see [`Finals`] and [`FabricPart::delivers`]); otherwise they are found in the
    /// queue each time ([`FabricPart::final_deliveries`]).
    const KEEPS_FINALS: bool = true;

    /// The route of message `number` (in the whole network) from `src` to `dst` (drawn
    /// now, for routes chosen message by message).
    fn route(&mut self, src: HostId, dst: HostId, number: u64) -> Route;

    /// The packets `src`'s adapter cuts a message of `size_bytes` into.
    fn packets(&self, src: HostId, size_bytes: u32) -> u32;

    /// Its wiring and routes, for walking paths (`None`: no cables).
    fn wiring_and_routes(&self) -> Option<(&Wiring, &RouteTable)>;

    /// Messages at `host`'s adapter with packets still to send.
    fn source_backlog(&self, host: HostId) -> usize;

    /// A message enters its source adapter.
    fn inject<S: TraceSink>(&mut self, message: MessageId, core: Core<'_, S>);

    /// Handles one of its events; returns a message that just completed.
    fn handle<S: TraceSink>(&mut self, event: Self::Event, core: Core<'_, S>) -> Option<MessageId>;

    /// Whether handling `event` may make a delivery kept as final (see
    /// [`FabricPart::KEEPS_FINALS`]; a fabric that keeps none says no): its place then
    /// leaves the kept ones.
    fn may_deliver(_event: &Self::Event) -> bool {
        false
    }

    /// The message `event`, pending in the queue, delivers for good when handled (see
    /// [`FabricPart::KEEPS_FINALS`]).
    fn delivers(&self, _event: &Self::Event) -> Option<MessageId> {
        None
    }

    /// Appends to `out` the packet arrivals among its pending `events` that may make
    /// deliveries no later injection can change, each with how far it is known to be
    /// fixed at `now` (fabrics that keep no finals, see [`FabricPart::KEEPS_FINALS`]).
    /// A delivery is final once every packet of its message not yet delivered has a
    /// fixed arrival ([`final_of`]).
    fn final_deliveries<'a, S: TraceSink>(
        &self,
        _events: impl Iterator<Item = (SimTime, u128, &'a Self::Event)>,
        _now: SimTime,
        _out: &mut Vec<Arrival>,
    ) where
        Self::Event: 'a,
    {
    }

    /// Goes on with a walk that another partition began ([`Fixed::Elsewhere`]): whether
    /// the arrival of packet `index` of message `number` is fixed, from `port` up its
    /// path.
    fn walk_on(&self, _number: u64, _index: u32, _port: u32, _now: SimTime) -> Fixed {
        Fixed::Yes
    }

    /// What this partition keeps of the split (`None`: whole, or never split).
    fn split(&mut self) -> Option<&mut Split> {
        None
    }

    /// A message, number `number`, entered this partition's adapters: its record is
    /// found by number from now on (no effect unless partitioned).
    fn entered_here(&mut self, message: MessageId, number: u64) {
        if let Some(split) = self.split() {
            split.by_number.insert(number, message);
        }
    }

    /// A message, number `number`, was delivered here: its record goes (no effect
    /// unless partitioned).
    fn delivered_here(&mut self, _message: MessageId, number: u64) {
        if let Some(split) = self.split() {
            split.by_number.remove(&number);
        }
    }

    /// The `number`th message, `spec`, entered another partition.
    fn entered_elsewhere(&mut self, _spec: &MessageSpec) {}

    /// Whether it can be one partition of a split network (`Err` says what stands in
    /// the way).
    fn can_be_split<S: TraceSink>(&self) -> Result<(), &'static str>;

    /// Makes it partition `part` of a network split as `of_device` says.
    fn share(&mut self, _part: u32, _of_device: Vec<u32>) {}

    /// Takes in what another partition sent, in the place among its instant's events
    /// the sender gave it.
    fn receive<S: TraceSink>(&mut self, _crossing: &Crossing, _core: Core<'_, S>) {}
}

/// A pending packet arrival at a destination that may make a final delivery (see
/// [`FabricPart::final_deliveries`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arrival {
    /// the place of the event that makes it
    pub(crate) place: u128,
    pub(crate) at: SimTime,
    pub(crate) message: MessageId,
    pub(crate) fixed: Fixed,
}

/// Whether a packet's arrival is fixed, whatever is injected from now on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fixed {
    Yes,
    No,
    /// as far as this partition knows: the rest of the walk up the packet's path
    /// (packet `index` of message `number`) starts at `port`, in partition `part`
    Elsewhere {
        part: u32,
        port: u32,
        number: u64,
        index: u32,
    },
}

/// The deliveries that `arrivals` (every one fixed or not) make final, as (place in the
/// queue, time, message), in any order: a message's, once each of its packets not yet
/// delivered has a fixed arrival, the last of them making the delivery.
pub(crate) fn final_of(arrivals: &[Arrival], messages: &Slab<Message>, out: &mut Vec<(u128, SimTime, MessageId)>) {
    let fixed = count_latest(
        arrivals
            .iter()
            .filter(|a| a.fixed == Fixed::Yes)
            .map(|a| (a.message.0, a.place, a.at)),
    );
    for (message, (packets, place, at)) in fixed {
        let m = &messages[message as usize];
        if m.packets_delivered + packets == m.packets_total {
            out.push((place, at, MessageId(message)));
        }
    }
}

/// `(key, place in the queue, time)` items counted by key, each key with its latest
/// item's place and time: what makes a delivery final is how many of its parts come
/// and which comes last.
pub(crate) fn count_latest(items: impl Iterator<Item = (u32, u128, SimTime)>) -> BTreeMap<u32, (u32, u128, SimTime)> {
    let mut counted: BTreeMap<u32, (u32, u128, SimTime)> = BTreeMap::new();
    for (key, place, at) in items {
        let e = counted.entry(key).or_insert((0, place, at));
        e.0 += 1;
        if place >= e.1 {
            (e.1, e.2) = (place, at);
        }
    }
    counted
}
