//! [`Fabric`]: the fabric a simulation holds, one of the kinds the registry `fabrics!`
//! below names. Each kind is a module of its own behind [`FabricPart`] (the ideal
//! network, the packet switches, the wormhole switches), with its events in a variant of
//! [`Event`]; the registry makes the enum and its dispatch, each call a `match` over
//! the kinds (static: the compiler inlines each kind's code into it).
//!
//! Adding a kind: its module (the model, `impl FabricPart`, its events in a file of
//! their own), a variant of [`Event`] holding its events (`event.rs`), its line here,
//! and its construction in `crate::builder`.

use std::collections::BTreeMap;

use crate::crossing::{Crossing, Split};
use crate::event::Event;
use crate::ideal::IdealParams;
use crate::ids::{HostId, MessageId};
use crate::message::MessageSpec;
use crate::part::{Arrival, Core, FabricPart, Fixed};
use crate::switch::packet::PacketFabric;
use crate::switch::wormhole::WormholeFabric;
use crate::time::SimTime;
use crate::topology::{Route, RouteTable, Wiring};
use crate::trace::TraceSink;

/// Declares the fabrics: each line a kind, the part that models it, and the variant of
/// [`Event`] that holds its events. Gives [`Fabric`] and its dispatch.
macro_rules! fabrics {
    ($( $(#[$doc:meta])* $kind:ident($part:ty) => $event:ident, )*) => {
        /// What carries the messages (see the [module documentation](self)).
        #[derive(Debug)]
        pub(crate) enum Fabric {
            $( $(#[$doc])* $kind(Box<$part>), )*
        }

        /// Each call goes to the kind's part ([`FabricPart`] says what each does).
        impl Fabric {
            /// Whether it has adapters, cables and switches.
            pub(crate) fn switched(&self) -> bool {
                match self { $( Fabric::$kind(_) => <$part as FabricPart>::SWITCHED, )* }
            }

            /// The route of message `number` (in the whole network) from `src` to `dst`.
            pub(crate) fn route(&mut self, src: HostId, dst: HostId, number: u64) -> Route {
                match self { $( Fabric::$kind(p) => p.route(src, dst, number), )* }
            }

            /// The packets `src`'s adapter cuts a message of `size_bytes` into.
            pub(crate) fn packets(&self, src: HostId, size_bytes: u32) -> u32 {
                match self { $( Fabric::$kind(p) => p.packets(src, size_bytes), )* }
            }

            /// Its wiring and routes (`None`: no cables).
            pub(crate) fn wiring_and_routes(&self) -> Option<(&Wiring, &RouteTable)> {
                match self { $( Fabric::$kind(p) => p.wiring_and_routes(), )* }
            }

            /// Messages at `host`'s adapter with packets still to send.
            pub(crate) fn source_backlog(&self, host: HostId) -> usize {
                match self { $( Fabric::$kind(p) => p.source_backlog(host), )* }
            }

            /// Handles `event`: an injection, or one of the fabric's own events (each
            /// fabric only ever sees its own); returns a message that just completed.
            #[inline(always)]
            pub(crate) fn handle<S: TraceSink>(&mut self, event: Event, core: Core<'_, S>) -> Option<MessageId> {
                match (self, event) {
                    $( (Fabric::$kind(p), Event::Inject { message }) => {
                        p.inject(message, core);
                        None
                    } )*
                    $( (Fabric::$kind(p), Event::$event(e)) => p.handle(e, core), )*
                    #[allow(unreachable_patterns, reason = "one kind's events reach another's part")]
                    _ => None,
                }
            }

            /// Whether handling `event` may make a final delivery kept in `Finals`.
            #[inline(always)]
            pub(crate) fn may_deliver(&self, event: &Event) -> bool {
                match (self, event) {
                    $( (Fabric::$kind(_), Event::$event(e)) => <$part as FabricPart>::may_deliver(e), )*
                    #[allow(unreachable_patterns, reason = "injections, and one kind's events at another's part")]
                    _ => false,
                }
            }

            /// Whether its final deliveries are kept as their events come and go.
            pub(crate) fn keeps_finals(&self) -> bool {
                match self { $( Fabric::$kind(_) => <$part as FabricPart>::KEEPS_FINALS, )* }
            }

            /// The final deliveries among `pending` events, by their place in the queue
            /// (the start of what `Finals` keeps).
            pub(crate) fn kept_finals<'a>(
                &self,
                pending: impl Iterator<Item = (SimTime, u128, &'a Event)>,
            ) -> BTreeMap<u128, MessageId> {
                let mut found = BTreeMap::new();
                match self { $( Fabric::$kind(p) => {
                    for (_, place, event) in pending {
                        if let Event::$event(e) = event
                            && let Some(message) = p.delivers(e)
                        {
                            found.insert(place, message);
                        }
                    }
                } )* }
                found
            }

            /// The final deliveries found among `pending` events, for fabrics that keep
            /// none: (place, time, message), in any order.
            pub(crate) fn final_deliveries<'a, S: TraceSink>(
                &self,
                pending: impl Iterator<Item = (SimTime, u128, &'a Event)>,
                now: SimTime,
                out: &mut Vec<Arrival>,
            ) {
                match self { $( Fabric::$kind(p) => {
                    let own = pending.filter_map(|(at, place, event)| match event {
                        Event::$event(e) => Some((at, place, e)),
                        #[allow(unreachable_patterns, reason = "another kind's events")]
                        _ => None,
                    });
                    p.final_deliveries::<S>(own, now, out);
                } )* }
            }

            /// See [`FabricPart::walk_on`].
            pub(crate) fn walk_on(&self, number: u64, index: u32, port: u32, now: SimTime) -> Fixed {
                match self { $( Fabric::$kind(p) => p.walk_on(number, index, port, now), )* }
            }

            /// What this partition keeps of the split (`None`: whole).
            pub(crate) fn split(&mut self) -> Option<&mut Split> {
                match self { $( Fabric::$kind(p) => p.split(), )* }
            }

            /// A message entered this partition's adapters.
            pub(crate) fn entered_here(&mut self, message: MessageId, number: u64) {
                match self { $( Fabric::$kind(p) => p.entered_here(message, number), )* }
            }

            /// A message was delivered here.
            pub(crate) fn delivered_here(&mut self, message: MessageId, number: u64) {
                match self { $( Fabric::$kind(p) => p.delivered_here(message, number), )* }
            }

            /// A message entered another partition.
            pub(crate) fn entered_elsewhere(&mut self, spec: &MessageSpec) {
                match self { $( Fabric::$kind(p) => p.entered_elsewhere(spec), )* }
            }

            /// Whether it can be one partition of a split network.
            pub(crate) fn can_be_split<S: TraceSink>(&self) -> Result<(), &'static str> {
                match self { $( Fabric::$kind(p) => p.can_be_split::<S>(), )* }
            }

            /// Makes it partition `part` of a network split as `of_device` says.
            pub(crate) fn share(&mut self, part: u32, of_device: Vec<u32>) {
                match self { $( Fabric::$kind(p) => p.share(part, of_device), )* }
            }

            /// Takes in what another partition sent.
            pub(crate) fn receive<S: TraceSink>(&mut self, crossing: &Crossing, core: Core<'_, S>) {
                match self { $( Fabric::$kind(p) => p.receive(crossing, core), )* }
            }
        }
    };
}

fabrics! {
    /// no contention: every message on its own
    Ideal(IdealParams) => Ideal,
    /// output-queued and CIOQ switches, packets moving whole
    Packet(PacketFabric) => Packet,
    /// Myrinet-like switches, flits under stop/go flow control
    Wormhole(WormholeFabric) => Worm,
}

/// A new fabric kind, as one would be added: a type behind [`FabricPart`] and a line in
/// `fabrics!`. The toy, `Courier`, carries every message whole, a fixed delay after it
/// enters, through a network of no cables. A real kind defines its events in a file of
/// their own and a variant of [`Event`] for them; the toy borrows the ideal network's
/// (`=> Ideal` on its line), as a test cannot add a variant to `Event`.
#[cfg(test)]
mod tests {
    #![allow(dead_code, reason = "the test's registry holds a kind vesper has, left unused")]

    use super::*;
    use crate::event::Finals;
    use crate::ideal::events::IdealEvent;
    use crate::message::{Message, MessageSpec};
    use crate::queue::EventQueue;
    use crate::slab::Slab;
    use crate::trace::NullSink;

    /// Every message arrives `delay` after it enters.
    #[derive(Debug)]
    pub(super) struct Courier {
        delay: SimTime,
        carried: u32,
    }

    impl FabricPart for Courier {
        type Event = IdealEvent;
        const SWITCHED: bool = false;

        fn route(&mut self, _src: HostId, _dst: HostId, _number: u64) -> Route {
            Route::Table
        }

        fn packets(&self, _src: HostId, _size_bytes: u32) -> u32 {
            1
        }

        fn wiring_and_routes(&self) -> Option<(&Wiring, &RouteTable)> {
            None
        }

        fn source_backlog(&self, _host: HostId) -> usize {
            0
        }

        fn inject<S: TraceSink>(&mut self, message: MessageId, core: Core<'_, S>) {
            let at = core.now + self.delay;
            let event = Event::Ideal(IdealEvent::Delivered { message });
            core.finals.schedule(core.queue, at, event, Some(message));
        }

        fn handle<S: TraceSink>(&mut self, event: IdealEvent, _core: Core<'_, S>) -> Option<MessageId> {
            let IdealEvent::Delivered { message } = event;
            self.carried += 1;
            Some(message)
        }

        fn may_deliver(_event: &IdealEvent) -> bool {
            true
        }

        fn delivers(&self, event: &IdealEvent) -> Option<MessageId> {
            let IdealEvent::Delivered { message } = *event;
            Some(message)
        }

        fn can_be_split<S: TraceSink>(&self) -> Result<(), &'static str> {
            Err("a courier has no switch to split by")
        }
    }

    // The registry with the toy on a line of its own, beside a kind vesper has.
    fabrics! {
        /// the toy
        Courier(Courier) => Ideal,
        /// the packet switches
        Packet(PacketFabric) => Packet,
    }

    /// The message record of a message from host 0 to host 1.
    fn message(cookie: u64) -> Message {
        let spec = MessageSpec {
            src: HostId(0),
            dst: HostId(1),
            size_bytes: 100,
            cookie,
        };
        Message {
            spec,
            number: cookie,
            injected_at: SimTime::ZERO,
            first_byte_sent: SimTime::ZERO,
            bytes_unsent: 0,
            packets_cut: 0,
            packets_total: 1,
            packets_delivered: 0,
            route: Route::Table,
        }
    }

    #[test]
    fn a_new_kind_is_a_part_and_a_registry_line() {
        let delay = SimTime::from_ns(250);
        let mut fabric = Fabric::Courier(Box::new(Courier { delay, carried: 0 }));
        assert!(!fabric.switched());
        assert_eq!(fabric.packets(HostId(0), 1 << 20), 1);
        assert_eq!(
            fabric.can_be_split::<NullSink>(),
            Err("a courier has no switch to split by")
        );
        let (mut messages, mut queue, mut sink) = (Slab::new(), EventQueue::<Event>::new(), NullSink);
        let mut finals = Finals::default();
        let first = MessageId(messages.insert(message(1)));
        let second = MessageId(messages.insert(message(2)));
        // Both enter at once; the dispatch hands the injections to the toy.
        for m in [first, second] {
            let core = Core {
                now: SimTime::ZERO,
                messages: &mut messages,
                queue: &mut queue,
                sink: &mut sink,
                finals: &mut finals,
            };
            assert_eq!(fabric.handle(Event::Inject { message: m }, core), None);
        }
        // Their deliveries are pending and known to be final.
        let kept = fabric.kept_finals(queue.pending());
        assert_eq!(kept.values().copied().collect::<Vec<_>>(), vec![first, second]);
        // The toy's events come back to it, and deliver.
        let mut delivered = Vec::new();
        while let Some((now, event)) = queue.pop_until(SimTime::MAX) {
            assert!(fabric.may_deliver(&event));
            let core = Core {
                now,
                messages: &mut messages,
                queue: &mut queue,
                sink: &mut sink,
                finals: &mut finals,
            };
            delivered.extend(fabric.handle(event, core).map(|m| (now, m)));
        }
        assert_eq!(delivered, vec![(delay, first), (delay, second)]);
        let Fabric::Courier(courier) = &fabric else {
            unreachable!("the fabric made above");
        };
        assert_eq!(courier.carried, 2);
    }
}
