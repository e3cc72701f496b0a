//! Everything that can happen in a network: the events the queue holds, by value, and
//! the pending ones that make final deliveries.

use std::collections::BTreeMap;

use crate::ideal::events::IdealEvent;
use crate::ids::MessageId;
use crate::queue::EventQueue;
use crate::switch::packet::events::PacketEvent;
use crate::switch::wormhole::events::WormEvent;
use crate::time::SimTime;

/// Everything that can happen: a message entering its adapter, whatever the fabric,
/// and each fabric's own events (one variant a fabric, holding the events its module
/// defines). Small and `Copy`: the queue holds events by value (16 bytes).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    /// the message enters its source adapter
    Inject { message: MessageId },
    /// an event of the ideal network
    Ideal(IdealEvent),
    /// an event of the packet switches (output-queued, CIOQ)
    Packet(PacketEvent),
    /// an event of the wormhole fabric
    Worm(WormEvent),
}

/// The pending events of the ideal network and the packet switches that make a final
/// delivery (the ideal network's, and a message's last packet arriving over its last
/// cable), by their place in the queue: the message each delivers. Kept from the first
/// [`Simulation::final_deliveries`](crate::simulation::Simulation::final_deliveries) on (found then in the queue), as such events are
/// scheduled and handled: batched replies ask after every run, and a walk of the whole
/// queue each time cost a large network more than the round trips saved.
#[derive(Debug, Default)]
pub(crate) struct Finals {
    pub(crate) by_place: Option<BTreeMap<u128, MessageId>>,
}

impl Finals {
    /// Schedules `event` at `time` in `queue`; kept if it delivers `delivers`.
    pub(crate) fn schedule(
        &mut self,
        queue: &mut EventQueue<Event>,
        time: SimTime,
        event: Event,
        delivers: Option<MessageId>,
    ) {
        match (&mut self.by_place, delivers) {
            (Some(by_place), Some(message)) => {
                by_place.insert(queue.schedule_placed(time, event), message);
            }
            _ => queue.schedule(time, event),
        }
    }

    /// An event that delivers `message` came into the queue at `place`.
    pub(crate) fn scheduled(&mut self, place: u128, message: MessageId) {
        if let Some(by_place) = &mut self.by_place {
            by_place.insert(place, message);
        }
    }

    /// The event at `place` was handled.
    pub(crate) fn handled(&mut self, place: u128) {
        if let Some(by_place) = &mut self.by_place {
            by_place.remove(&place);
        }
    }
}
