//! The ideal network: a fabric with no switches, its parameters, and its one event
//! (`events.rs`).

pub(crate) mod events;

use crate::event::Event;
use crate::ids::{HostId, MessageId};
use crate::part::{Core, FabricPart};
use crate::time::{Bandwidth, SimTime};
use crate::topology::{Route, RouteTable, Wiring};
use crate::trace::TraceSink;
use events::IdealEvent;

/// The ideal network: every message arrives `latency + size / bandwidth` after it is
/// injected, whatever else is travelling. It adds nothing a replayer does not model
/// itself (Dimemas's point-to-point model), so a co-simulation over it must reproduce
/// the replayer's own prediction: the first step of a calibration.
///
/// Rounding: the serialisation time is rounded up to the next picosecond, once per
/// message; the latency is exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct IdealParams {
    /// rate of every transfer, with no sharing; `None`: instantaneous (Dimemas's
    /// bandwidth 0)
    pub bandwidth: Option<Bandwidth>,
    /// added to every transfer \[ps\]
    pub latency: SimTime,
}

impl IdealParams {
    /// How long `bytes` take to cross: no time when instantaneous.
    pub fn transfer(&self, bytes: u64) -> SimTime {
        self.bandwidth.map_or(SimTime::ZERO, |b| b.serialization_time(bytes))
    }

    /// The longest the latency may be, and the transfer of the largest message
    /// (`u32::MAX` bytes) take: 2^62 ps (about 53 days) each, so that a message that
    /// enters by [`SimTime::LAST_INJECTION`] arrives before the clock ends.
    pub const LONGEST_DELAY: SimTime = SimTime::from_ps(1 << 62);
}

/// Every message on its own: its delivery is scheduled as it enters, and final then.
impl FabricPart for IdealParams {
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
        let m = &mut core.messages[message.index()];
        m.first_byte_sent = core.now;
        let arrival = core.now + self.latency + self.transfer(u64::from(m.spec.size_bytes));
        let delivered = Event::Ideal(IdealEvent::Delivered { message });
        core.finals.schedule(core.queue, arrival, delivered, Some(message));
    }

    fn handle<S: TraceSink>(&mut self, event: IdealEvent, _core: Core<'_, S>) -> Option<MessageId> {
        let IdealEvent::Delivered { message } = event;
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
        Err("the ideal network has no switch to split by")
    }
}
