//! The wormhole fabric's events and flow-control signals: what the network's event
//! queue and the crossings between partitions carry for it.

/// Events of the wormhole fabric; global port indices (output and input sides of a
/// port share the index).
///
/// At one instant they take effect in this order ([`WormEvent::rank`]): flow-control
/// signals, bubble credits and plans arriving, flits arriving, outputs released (freeing the
/// bubble slots their packets held: at once upstream on a cable of no delay), heads
/// routed, arbitration, sends.
/// So a flit wholly received at `t` can leave at `t`, a STOP arriving at `t` holds a
/// send at `t`, and an output freed at `t` is arbitrated among every request of `t`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum WormEvent {
    /// an output may send its next flit
    Tick { port: u32 },
    /// a flit is wholly in the input buffer `input`
    FlitArrives { input: u32, packet: u32, hop: u16 },
    /// the head at the front of `input` has been routed
    Routed { input: u32 },
    /// an idle output chooses among the inputs that want it
    Arbitrate { port: u32 },
    /// an output finished sending a packet's tail
    Released { port: u32 },
    /// a STOP reaches the sender `port` (fine path: the coarse path plans for a signal's
    /// arrival when it is sent)
    StopArrives { port: u32 },
    /// a GO reaches the sender `port` (fine path)
    GoArrives { port: u32 },
    /// bubble flow control: a packet slot of the buffer at the far end of `port` freed
    /// one cable delay ago (its packet's tail left it), and `port` now knows
    CreditArrives { port: u32 },
    /// coarse path: `port`'s planned run ended before the packet's tail
    RunEnd { port: u32, version: u32 },
    /// coarse path: `port` sends the packet's tail flit now
    TailLeaves { port: u32, version: u32 },
    /// coarse path: `port`'s tail has left (one flit time after it started): the
    /// packet is out of its input and the output free, in one event (used when the
    /// routing latency is at least a flit time, so nothing is scheduled in the past)
    TailDone { port: u32, version: u32 },
    /// coarse path: `input` reaches its high-water mark with a flit arriving now
    StopDue { input: u32, version: u32 },
    /// coarse path: `input` drains to its low-water mark with a flit leaving now
    GoDue { input: u32, version: u32 },
    /// coarse path: a packet's tail arrives at its destination adapter now
    TailArrives { packet: u32, version: u32 },
    /// coarse path: the plan of flits sent to `input` over a cable between two switches
    /// changed one cable delay ago (`slot`: the change, in the fabric's `plans`), and the
    /// switch at the far end now knows
    PlanArrives { input: u32, slot: u32 },
}

impl WormEvent {
    /// The order of events at one instant (lower first).
    pub(crate) fn rank(self) -> u8 {
        match self {
            WormEvent::StopArrives { .. }
            | WormEvent::GoArrives { .. }
            | WormEvent::CreditArrives { .. }
            | WormEvent::PlanArrives { .. } => 1,
            WormEvent::FlitArrives { .. } | WormEvent::StopDue { .. } | WormEvent::TailArrives { .. } => 2,
            WormEvent::Released { .. } | WormEvent::TailDone { .. } => 3,
            WormEvent::Routed { .. } => 4,
            WormEvent::Arbitrate { .. } => 5,
            WormEvent::Tick { .. }
            | WormEvent::RunEnd { .. }
            | WormEvent::TailLeaves { .. }
            | WormEvent::GoDue { .. } => 6,
        }
    }
}

/// What an input sends up its cable to the output feeding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// hold your flits
    Stop,
    /// send again
    Go,
    /// bubble flow control: a packet slot freed
    Credit,
}

impl Signal {
    /// Its arrival at the output `port`.
    pub(crate) fn arrives(self, port: u32) -> WormEvent {
        match self {
            Signal::Stop => WormEvent::StopArrives { port },
            Signal::Go => WormEvent::GoArrives { port },
            Signal::Credit => WormEvent::CreditArrives { port },
        }
    }
}
