//! What a partition of a split network keeps of the others ([`Split`]), and what it
//! sends them across a cut cable ([`Crossing`]).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::ids::{Device, HostId, MessageId, NumberHasher, PortId, SwitchId};
use crate::message::{Message, MessageSpec, Packet};
use crate::slab::Slab;
use crate::switch::wormhole::events::Signal;
use crate::switch::wormhole::runs::Run;
use crate::time::SimTime;
use crate::topology::{Endpoint, Route, RouteTable, Wiring};

/// What a partition of a split network keeps, whatever its fabric (see
/// [`crate::partition::windows`]): where every device is, what it sent to the other
/// partitions, and the records of the messages it holds. Each fabric adds what it
/// needs to know when a message's record may go (`Share` in [`crate::switch::packet`], and the wormhole's
/// `WormShare`).
#[derive(Debug)]
pub(crate) struct Split {
    /// this partition's number
    pub(crate) part: u32,
    /// the partition of every device: hosts, then switches
    pub(crate) of_device: Vec<u32>,
    /// what was sent to other partitions (packets, flits, signals), not yet handed over
    pub(crate) crossings: Vec<Crossing>,
    /// the messages this partition holds a record of, by number
    pub(crate) by_number: HashMap<u64, MessageId, BuildHasherDefault<NumberHasher>>,
    /// messages whose records this partition no longer needs, to release
    pub(crate) released: Vec<MessageId>,
}

impl Split {
    pub(crate) fn new(part: u32, of_device: Vec<u32>) -> Split {
        Split {
            part,
            of_device,
            crossings: Vec::new(),
            by_number: HashMap::default(),
            released: Vec::new(),
        }
    }

    /// The partition of the device of index `device` (hosts, then switches), if it is
    /// another than this one.
    #[inline(always)]
    pub(crate) fn elsewhere(&self, device: usize) -> Option<u32> {
        let to = self.of_device[device];
        (to != self.part).then_some(to)
    }

    /// The record here of the message `crossing` carries: found by its number, or made
    /// from the crossing's copy, its route made one of this partition's tables.
    pub(crate) fn record_of(
        &mut self,
        crossing: &Crossing,
        messages: &mut Slab<Message>,
        routes: &mut RouteTable,
    ) -> MessageId {
        *self.by_number.entry(crossing.message.number).or_insert_with(|| {
            let mut record = crossing.message;
            record.route = routes.localize(record.route, record.spec.src, record.spec.dst);
            MessageId(messages.insert(record))
        })
    }

    /// Message `message`, number `number`, has left this partition for good: its
    /// record goes at the end of the partition's step.
    pub(crate) fn let_go(&mut self, message: MessageId, number: u64) {
        self.by_number.remove(&number);
        self.released.push(message);
    }
}

/// A packet sent across a cut cable, to the partition that handles its next event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Crossing {
    /// the partition it goes to
    pub(crate) to: u32,
    /// its next event's order key, the same in any partition
    pub(crate) key: u128,
    pub(crate) event: CrossingEvent,
    /// the packet (its message slot is the sender's)
    pub(crate) packet: Packet,
    /// its message's record as the sender has it
    pub(crate) message: Message,
}

/// The event a [`Crossing`] packet has next.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CrossingEvent {
    /// its head is routed at a switch, asking for `port`
    Routed { port: PortId },
    /// its tail reaches its destination adapter
    TailArrives,
    /// wormhole: one of its flits is wholly in input buffer `input`, at the switch of
    /// position `hop` on its path; the packet has `flits` flits
    Flit { input: u32, hop: u16, flits: u32 },
    /// wormhole: a STOP, a GO or a credit reaches the output `port` (no packet goes
    /// with it: the crossing's packet and message are empty)
    Signal { port: u32, signal: Signal },
    /// wormhole, coarse path: a new plan of the packet's flits reaches input buffer
    /// `input`, at the switch of position `hop` on its path; the packet has `flits`
    /// flits, the first `committed` of which keep their arrivals, and `run` says when
    /// the flits after them arrive (`None`: not planned yet)
    Plan {
        input: u32,
        hop: u16,
        flits: u32,
        committed: u32,
        run: Option<Run>,
    },
    /// packet switches under UGAL-L: a packet of `bytes` started leaving the switch at
    /// the far end of output `port`'s cable; its credit reaches the output (no packet
    /// goes with it)
    Credit { port: u32, bytes: u32 },
}

impl Crossing {
    /// A crossing to partition `to` of `event`, with an empty packet and message (a
    /// signal's, or for the sender to fill in).
    pub(crate) fn bare(to: u32, key: u128, event: CrossingEvent) -> Crossing {
        let spec = MessageSpec {
            src: HostId(0),
            dst: HostId(0),
            size_bytes: 0,
            cookie: 0,
        };
        Crossing {
            to,
            key,
            event,
            packet: Packet {
                message: MessageId(0),
                index: 0,
                wire_bytes: 0,
                last: false,
                hop: 0,
                head_in: SimTime::ZERO,
                tail_at_next_input: SimTime::ZERO,
                in_port: 0,
            },
            message: Message {
                spec,
                number: 0,
                injected_at: SimTime::ZERO,
                first_byte_sent: SimTime::ZERO,
                bytes_unsent: 0,
                packets_cut: 0,
                packets_total: 0,
                packets_delivered: 0,
                route: Route::Table,
            },
        }
    }
}

/// The rest of a packet's path: from `switch`, the switch at position `hop` on the
/// route of a message to `dst`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PathRest {
    pub(crate) route: Route,
    pub(crate) switch: SwitchId,
    pub(crate) hop: usize,
    pub(crate) dst: HostId,
}

/// Whether the rest of a path comes to partition `part` (`of_device`: the partition of
/// every device), its destination's switch included.
pub(crate) fn path_returns(wiring: &Wiring, routes: &RouteTable, of_device: &[u32], path: PathRest, part: u32) -> bool {
    let PathRest {
        route,
        mut switch,
        mut hop,
        dst,
    } = path;
    // Routes are at most `MAX_ROUTE_SWITCHES` long (checked when built).
    for _ in 0..=crate::topology::MAX_ROUTE_SWITCHES {
        let out = routes.port(route, switch, hop, dst);
        let port = wiring.port(Endpoint {
            device: Device::Switch(switch),
            port: out,
        });
        let Some((next, _)) = wiring.peer.get(port).copied().flatten() else {
            return false;
        };
        if of_device[wiring.device_index(next.device)] == part {
            return true;
        }
        match next.device {
            Device::Switch(s) => (switch, hop) = (s, hop + 1),
            Device::Host(_) => return false,
        }
    }
    false
}
