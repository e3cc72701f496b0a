//! The output-queued switch (ideal, speedup N) and the output ports every packet-level
//! device sends through: an adapter's port, an output-queued switch's, and the output
//! side of a CIOQ switch ([`crate::switch::packet::cioq`]).
//!
//! ```text
//!   in p0 ──▶ route (latency) ──▶ [queue] out p0 ──▶ link ──▶
//!   in p1 ──▶ route (latency) ──▶ [queue] out p1 ──▶ link ──▶
//!                                  FIFO    one packet at a time, at the link's rate
//! ```
//!
//! A packet's head is routed after the routing latency and asks for its output port
//! (`PacketFabric::enter_output`): it is sent at once if the port is idle, else it joins
//! the port's FIFO queue, which is unbounded, so the output is never blocked by other
//! inputs and the only contention is for the output link itself. Unbounded in packets,
//! not in memory: the waiting packets are kept as runs, one per message in a steady
//! stream (module `switch::waiting`), so an incast of gigabyte messages holds a few
//! records, not a record per packet. When the packet being
//! sent has left, the port sends the oldest waiting one (`PacketFabric::send_queued`).
//! Transmission is cut-through at packet level (`PacketFabric::transmit`): the output may
//! start before the tail has arrived, but never finishes before it.
//!
//! These are `impl` blocks of the packet engine (`PacketFabric`, in
//! [`crate::simulation`]), which owns the ports, the packets and the event loop.

use super::{PacketFabric, Step};
use crate::crossing::{Crossing, CrossingEvent};
use crate::event::Event;
use crate::ids::{Device, PortId};
use crate::link::LinkParams;
use crate::message::{Packet, PacketId, port_ref};
use crate::queue::EventQueue;
use crate::switch::packet::events::PacketEvent;
use crate::switch::waiting::{Queue, Side};
use crate::time::SimTime;
use crate::topology::{Endpoint, Route};
use crate::trace::{BufferSide, LinkTraversal, TraceSink};

/// The output ports' state, by global port index: every port's, or in one partition
/// of a split network only its own devices' (another partition's ports are never
/// touched there), each found through a map from global index to slot.
#[derive(Debug, Default)]
pub(crate) struct Ports {
    slots: Vec<OutPort>,
    /// the slot of every global port (`u32::MAX`: another partition's); empty: every
    /// port, in order
    slot_of: Vec<u32>,
}

impl Ports {
    /// The bytes of the ports' state, as built (see [`crate::footprint`]).
    #[cfg(test)]
    pub(crate) fn counted_bytes(&self) -> u64 {
        (self.slots.capacity() * size_of::<OutPort>() + self.slot_of.capacity() * size_of::<u32>()) as u64
    }

    /// Every port, in order.
    pub(crate) fn every(slots: Vec<OutPort>) -> Ports {
        Ports {
            slots,
            slot_of: Vec::new(),
        }
    }

    /// Some ports: `kept`, those of the global indices `own` says, in order.
    pub(crate) fn of_some(kept: Vec<OutPort>, own: impl Iterator<Item = bool>) -> Ports {
        let mut next = 0u32;
        let slot_of = own
            .map(|own| {
                if !own {
                    return u32::MAX;
                }
                next += 1;
                next - 1
            })
            .collect();
        Ports { slots: kept, slot_of }
    }

    fn slot(&self, port: usize) -> usize {
        if self.slot_of.is_empty() {
            port
        } else {
            self.slot_of[port] as usize
        }
    }
}

impl std::ops::Index<usize> for Ports {
    type Output = OutPort;

    fn index(&self, port: usize) -> &OutPort {
        &self.slots[self.slot(port)]
    }
}

impl std::ops::IndexMut<usize> for Ports {
    fn index_mut(&mut self, port: usize) -> &mut OutPort {
        let slot = self.slot(port);
        &mut self.slots[slot]
    }
}

/// An output port: the transmitting side of one direction of a cable.
#[derive(Debug)]
pub(crate) struct OutPort {
    /// the port itself
    pub(crate) owner: Endpoint,
    /// where the cable leads (`None`: nothing connected)
    pub(crate) peer: Option<(Endpoint, LinkParams)>,
    /// a packet is being transmitted
    pub(crate) busy: bool,
    /// the packet being transmitted
    pub(crate) current: Option<PacketId>,
    /// when the packet being transmitted has left
    pub(crate) free_at: SimTime,
    /// a `PortFree` event is scheduled at `free_at` (see `PacketFabric::claim`)
    pub(crate) release_scheduled: bool,
    /// the place reserved for that event among those of its instant
    pub(crate) release_sequence: u64,
    /// packets waiting for this output, oldest first (as runs: `PacketFabric::waiting`)
    pub(crate) queue: Queue,
    /// bytes of the waiting packets
    pub(crate) queued_bytes: u64,
    /// UGAL-L only: bytes sent on this port to a switch whose credit has not come back
    /// (their packets have not started leaving that switch, or the news is on its way)
    pub(crate) in_next_bytes: u64,
}

impl OutPort {
    /// The port `owner`, cabled to `peer`, idle with nothing waiting.
    pub(crate) fn idle(owner: Endpoint, peer: Option<(Endpoint, LinkParams)>) -> OutPort {
        OutPort {
            owner,
            peer,
            busy: false,
            current: None,
            free_at: SimTime::ZERO,
            release_scheduled: false,
            release_sequence: 0,
            queue: Queue::default(),
            queued_bytes: 0,
            in_next_bytes: 0,
        }
    }
}

impl PacketFabric {
    /// Whether `port` is idle now, for a packet that wants it; if not, it is released
    /// by a `PortFree` event when its packet has left (scheduled now if it was not).
    ///
    /// `transmit` keeps the `PortFree` of a packet nothing waits behind out of the
    /// queue, with its place among the events of its instant reserved: all it would
    /// do is mark the port idle. Whoever finds the port busy before that place
    /// schedules it there; after that place, the port is idle. So the events run in
    /// the same order as if every `PortFree` were scheduled, and most packets below
    /// saturation save one.
    pub(crate) fn claim<S: TraceSink>(&mut self, port: PortId, step: &mut Step<'_, S>) -> bool {
        let out = &mut self.ports[port.index()];
        if !out.busy {
            return true;
        }
        if !out.release_scheduled {
            if step.queue.passed(out.free_at, 0, out.release_sequence) {
                out.busy = false;
                out.current = None;
                return true;
            }
            out.release_scheduled = true;
            step.queue.schedule_reserved(
                out.free_at,
                0,
                out.release_sequence,
                Event::Packet(PacketEvent::PortFree { port }),
            );
        }
        false
    }

    /// A packet asks for output `port`: sent now if it is idle, else queued (FIFO).
    pub(crate) fn enter_output<S: TraceSink>(&mut self, port: PortId, packet: PacketId, step: &mut Step<'_, S>) {
        if self.claim(port, step) {
            self.transmit(port, packet, step);
        } else {
            let bytes = u64::from(self.packets[packet.index()].wire_bytes);
            let out = &mut self.ports[port.index()];
            self.waiting
                .push(&mut out.queue, Side::Output, packet, 0, &mut self.packets);
            out.queued_bytes += bytes;
            if S::ENABLED {
                step.sink
                    .backlog(step.now, port_ref(out.owner), BufferSide::Output, out.queued_bytes);
            }
        }
    }

    /// UGAL-L's credits (see [`crate::topology::Detour`]): switch port `port` starts
    /// sending `sent` to `peer`. A switch counts the bytes it sends on until their packet
    /// starts leaving the next switch, as BookSim's credits count flits in the next
    /// router's buffers: the bytes `sent` took from the output upstream come back there
    /// one cable later (a crossing, if that switch is another partition's).
    fn credit<S: TraceSink>(&mut self, port: PortId, sent: Packet, peer: Device, step: &mut Step<'_, S>) {
        let bytes = sent.wire_bytes;
        if let Device::Switch(_) = peer {
            self.ports[port.index()].in_next_bytes += u64::from(bytes);
        }
        // The first switch of its path: it came from an adapter.
        if sent.hop < 2 {
            return;
        }
        let Some((upstream, link)) = self.wiring.peer[sent.in_port as usize] else {
            return;
        };
        let up = self.port_id(upstream);
        let key = EventQueue::<Event>::key_of(step.now + link.propagation, 0, step.queue.reserve());
        let elsewhere = self.share.as_mut().and_then(|share| {
            let to = share.split.elsewhere(self.wiring.device_index(upstream.device))?;
            Some((share, to))
        });
        match elsewhere {
            Some((share, to)) => {
                share
                    .split
                    .crossings
                    .push(Crossing::bare(to, key, CrossingEvent::Credit { port: up.0, bytes }))
            }
            None => step
                .queue
                .schedule_keyed(key, Event::Packet(PacketEvent::CreditArrives { port: up, bytes })),
        }
    }

    /// The packet `port` was sending has left: the oldest packet waiting for it, if any,
    /// goes next.
    pub(crate) fn send_queued<S: TraceSink>(&mut self, port: PortId, step: &mut Step<'_, S>) {
        let out = &mut self.ports[port.index()];
        if let Some((next, _)) = self.waiting.pop(&mut out.queue, &mut self.packets) {
            out.queued_bytes -= u64::from(self.packets[next.index()].wire_bytes);
            if S::ENABLED {
                step.sink
                    .backlog(step.now, port_ref(out.owner), BufferSide::Output, out.queued_bytes);
            }
            self.transmit(port, next, step);
        }
    }

    /// Starts sending `packet` on `port`: cut-through, so the output may start before
    /// the tail has arrived, but cannot finish before it.
    ///
    /// The packet's head reaches the far end after the propagation delay. There a
    /// switch routes it (the request for its output follows after the routing latency)
    /// and an adapter receives it (complete when the tail arrives): both are scheduled
    /// from here, one event each, rather than with an event for the head's arrival.
    pub(crate) fn transmit<S: TraceSink>(&mut self, port: PortId, packet: PacketId, step: &mut Step<'_, S>) {
        let now = step.now;
        let out = &mut self.ports[port.index()];
        let Some((peer, link)) = out.peer else {
            // Unconnected ports never appear in routes (checked by `build`).
            return;
        };
        out.busy = true;
        out.current = Some(packet);
        let owner = out.owner;
        let p = &mut self.packets[packet.index()];
        let wire_time = link.bandwidth.serialization_time(u64::from(p.wire_bytes));
        let tail_sent = (now + wire_time).max(p.tail_at_next_input);
        let head_arrives = now + link.propagation;
        let tail_arrives = tail_sent + link.propagation;
        let sent = *p;
        p.tail_at_next_input = tail_arrives;
        p.head_in = head_arrives;
        if let Device::Switch(_) = peer.device {
            // Counts the switches of the route (at most `MAX_ROUTE_SWITCHES`, checked).
            p.hop += 1;
        }
        p.in_port = self.wiring.port(peer) as u32;
        if self.routes.counts_credits()
            && let Device::Switch(_) = owner.device
        {
            self.credit(port, sent, peer.device, step);
        }
        let out = &mut self.ports[port.index()];
        out.free_at = tail_sent;
        // Traces record the port's release (the end of a segment at an adapter).
        out.release_scheduled = S::ENABLED
            || match owner.device {
                Device::Host(host) => self.senders[host.index()].len() > 0,
                Device::Switch(_) => !out.queue.is_empty(),
            };
        out.release_sequence = step.queue.reserve();
        if out.release_scheduled {
            step.queue.schedule_reserved(
                tail_sent,
                0,
                out.release_sequence,
                Event::Packet(PacketEvent::PortFree { port }),
            );
        }
        let message = &step.messages[sent.message.index()];
        let (route, dst) = (message.route, message.spec.dst);
        // The packet's next event, here or in another partition of the network.
        let crossed = match peer.device {
            Device::Switch(switch) => {
                let route = match route {
                    // UGAL-L: the source router chooses, from its output queues as the
                    // message's first packet leaves the adapter, for the whole message.
                    Route::Choose { .. } => {
                        let chosen = self.routes.choose(route, switch, dst, |port| {
                            let id = self.port_id(Endpoint {
                                device: peer.device,
                                port,
                            });
                            let out = &self.ports[id.index()];
                            out.queued_bytes + out.in_next_bytes
                        });
                        step.messages[sent.message.index()].route = chosen;
                        chosen
                    }
                    route => route,
                };
                let out = self.routes.port(route, switch, usize::from(sent.hop), dst);
                let next = self.port_id(Endpoint {
                    device: peer.device,
                    port: out,
                });
                let routed = head_arrives + self.switch.routing_latency;
                let crossed = self.cross(peer.device, routed, packet, CrossingEvent::Routed { port: next }, step);
                if !crossed {
                    step.queue
                        .schedule(routed, Event::Packet(PacketEvent::Routed { packet, port: next }));
                }
                crossed
            }
            // Routes end at the destination by construction (shortest paths).
            Device::Host(_) => {
                let crossed = self.cross(peer.device, tail_arrives, packet, CrossingEvent::TailArrives, step);
                if !crossed {
                    let p = &self.packets[packet.index()];
                    let delivers = p.last.then_some(p.message);
                    step.finals.schedule(
                        step.queue,
                        tail_arrives,
                        Event::Packet(PacketEvent::TailArrives { packet }),
                        delivers,
                    );
                }
                crossed
            }
        };
        if crossed {
            // Its record went with it.
            self.ports[port.index()].current = None;
        }
        if S::ENABLED {
            let message = &step.messages[sent.message.index()];
            let key = (sent.message, sent.hop);
            let t = self.traversals.entry(key).or_insert_with(|| {
                let t = LinkTraversal {
                    cookie: message.spec.cookie,
                    message: message.number,
                    size_bytes: message.spec.size_bytes,
                    sender: port_ref(owner),
                    receiver: port_ref(peer),
                    first_in: sent.head_in,
                    first_out: now,
                    last_out: tail_sent,
                    first_arrival: head_arrives,
                    last_arrival: tail_arrives,
                };
                step.sink.link_traversal_started(&t);
                t
            });
            t.first_in = t.first_in.min(sent.head_in);
            t.last_out = t.last_out.max(tail_sent);
            t.last_arrival = t.last_arrival.max(tail_arrives);
            if sent.last {
                // The last packet of a message ends its traversal of this link (the
                // packets of a message follow one path, in order).
                step.sink.link_traversal(t);
                self.traversals.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::HostId;

    fn port(n: u32) -> OutPort {
        let owner = Endpoint {
            device: Device::Host(HostId(n)),
            port: 0,
        };
        OutPort::idle(owner, None)
    }

    #[test]
    fn a_partition_keeps_only_its_ports_under_their_global_indices() {
        let ports = Ports::every((0..6).map(port).collect());
        assert_eq!(ports[4].owner.device, Device::Host(HostId(4)));
        let mut ports = Ports::of_some([1, 3, 5].into_iter().map(port).collect(), (0..6).map(|p| p % 2 == 1));
        assert_eq!(ports.slots.len(), 3);
        for p in [1, 3, 5] {
            assert_eq!(ports[p].owner.device, Device::Host(HostId(p as u32)));
        }
        ports[3].queued_bytes = 7;
        assert_eq!((ports[1].queued_bytes, ports[3].queued_bytes), (0, 7));
        let touched = std::panic::catch_unwind(|| ports[2].queued_bytes);
        assert!(touched.is_err(), "another partition's port is not here");
    }
}
