//! The packet switches: the engine the output-queued and CIOQ switches share (adapters
//! cutting packets, packets moving whole from device to device, head first), and each
//! kind's own parts beside it: output ports and their queues in [`output_queued`], input
//! queues and the crossbar in [`cioq`].

use std::collections::BTreeMap;

use crate::adapter::{AdapterParams, Sender};
use crate::crossing::{Crossing, CrossingEvent, PathRest, Split, path_returns};
use crate::event::{Event, Finals};
use crate::ids::{Device, HostId, MessageId, PortId, SwitchId};
use crate::message::{Cut, Message, MessageSpec, Packet, PacketId, host_port, port_ref};
use crate::part::{Core, FabricPart};
use crate::queue::EventQueue;
use crate::slab::Slab;
use crate::switch::SwitchParams;
use crate::switch::waiting::Waiting;
use crate::time::SimTime;
use crate::topology::{Endpoint, Route, RouteTable, Wiring};
use crate::trace::{LinkTraversal, TraceSink};

pub mod cioq;
pub(crate) mod events;
pub mod output_queued;

use cioq::Crossbar;
use events::PacketEvent;
use output_queued::Ports;

/// Adapters, links and switches: the packet engine of the output-queued and CIOQ
/// switches. Their own parts are `impl PacketFabric` blocks beside them: output ports and
/// their queues in [`crate::switch::packet::output_queued`], input queues and the crossbar in
/// [`crate::switch::packet::cioq`].
#[derive(Debug)]
pub(crate) struct PacketFabric {
    pub(crate) switch: SwitchParams,
    /// every host's adapter
    pub(crate) adapters: Vec<AdapterParams>,
    pub(crate) wiring: Wiring,
    /// the device (its index: hosts, then switches) of every port
    pub(crate) port_device: Vec<u32>,
    pub(crate) routes: RouteTable,
    pub(crate) ports: Ports,
    pub(crate) senders: Vec<Sender>,
    pub(crate) packets: Slab<Packet>,
    /// the packets waiting in queues, as runs (their slots in `packets` are free)
    pub(crate) waiting: Waiting,
    /// link traversals in progress, by (message, hop); only kept when tracing
    pub(crate) traversals: BTreeMap<(MessageId, u16), LinkTraversal>,
    /// per host, the message number and packet index of the segment its adapter is
    /// sending; only kept when tracing (in a split network the packet itself may have
    /// gone on to another partition before its tail left the adapter)
    pub(crate) sending: Vec<(u64, u32)>,
    /// the crossbar of each switch, for CIOQ switches
    pub(crate) crossbars: Vec<Option<Box<Crossbar>>>,
    /// the transfers a matching starts, kept between matchings (no allocation per match)
    pub(crate) scratch_matches: Vec<(u32, u32, PacketId)>,
    /// this network's part, when it is one partition of a larger one
    pub(crate) share: Option<Box<Share>>,
}

/// What a partition of a network of packet switches keeps about the others.
#[derive(Debug)]
pub(crate) struct Share {
    pub(crate) split: Split,
    /// per message slot: its packets in this partition (cut and not yet gone, or
    /// arrived and not yet gone), and whether its last packet has left
    pub(crate) presence: Vec<(u32, bool)>,
}

impl Share {
    pub(crate) fn present(&mut self, message: MessageId, packets: u32) {
        let i = message.index();
        if self.presence.len() <= i {
            self.presence.resize(i + 1, (0, false));
        }
        self.presence[i].0 += packets;
    }

    pub(crate) fn forget(&mut self, message: MessageId, number: u64) {
        self.split.by_number.remove(&number);
        if let Some(p) = self.presence.get_mut(message.index()) {
            *p = (0, false);
        }
    }
}

/// What a packet-level handler works with besides the network itself.
pub(crate) struct Step<'a, S> {
    pub(crate) now: SimTime,
    pub(crate) messages: &'a mut [Message],
    pub(crate) queue: &'a mut EventQueue<Event>,
    pub(crate) sink: &'a mut S,
    pub(crate) finals: &'a mut Finals,
}

/// Whole packets from device to device: see the [module documentation](self).
impl FabricPart for PacketFabric {
    type Event = PacketEvent;

    fn route(&mut self, src: HostId, dst: HostId, number: u64) -> Route {
        self.routes.route(src, dst, number)
    }

    fn packets(&self, src: HostId, size_bytes: u32) -> u32 {
        self.adapters[src.index()].packets(size_bytes)
    }

    fn wiring_and_routes(&self) -> Option<(&Wiring, &RouteTable)> {
        Some((&self.wiring, &self.routes))
    }

    fn source_backlog(&self, host: HostId) -> usize {
        self.senders.get(host.index()).map_or(0, Sender::len)
    }

    #[inline]
    fn inject<S: TraceSink>(&mut self, message: MessageId, core: Core<'_, S>) {
        self.on_inject(message, &mut Step::from(core));
    }

    #[inline]
    fn handle<S: TraceSink>(&mut self, event: PacketEvent, core: Core<'_, S>) -> Option<MessageId> {
        self.on_event(event, &mut Step::from(core))
    }

    fn may_deliver(event: &PacketEvent) -> bool {
        matches!(event, PacketEvent::TailArrives { .. })
    }

    /// A message's last packet arriving over its last cable: its arrival is fixed when
    /// it starts, and the packets of a message arrive in order.
    fn delivers(&self, event: &PacketEvent) -> Option<MessageId> {
        match *event {
            PacketEvent::TailArrives { packet } => {
                let p = &self.packets[packet.index()];
                p.last.then_some(p.message)
            }
            _ => None,
        }
    }

    fn split(&mut self) -> Option<&mut Split> {
        self.share.as_mut().map(|s| &mut s.split)
    }

    fn entered_here(&mut self, message: MessageId, number: u64) {
        self.arrived_here(message, number);
    }

    fn delivered_here(&mut self, message: MessageId, number: u64) {
        if let Some(share) = &mut self.share {
            share.forget(message, number);
        }
    }

    /// Draws the route the other partition drew for it, when routes are drawn at random
    /// from one generator (explicit routes, [`crate::MultipathPolicy::Random`]): every
    /// partition then draws for every message, in the order of their numbers, as the
    /// whole network does, so their generators agree.
    fn entered_elsewhere(&mut self, spec: &MessageSpec) {
        self.routes.draw_elsewhere(spec.src, spec.dst);
    }

    fn can_be_split<S: TraceSink>(&self) -> Result<(), &'static str> {
        Ok(())
    }

    fn share(&mut self, part: u32, of_device: Vec<u32>) {
        self.share = Some(Box::new(Share {
            split: Split::new(part, of_device),
            presence: Vec::new(),
        }));
    }

    /// Takes in a packet another partition sent, with the event it comes with.
    fn receive<S: TraceSink>(&mut self, crossing: &Crossing, core: Core<'_, S>) {
        let Some(share) = &mut self.share else {
            return;
        };
        if let CrossingEvent::Credit { port, bytes } = crossing.event {
            let event = PacketEvent::CreditArrives {
                port: PortId(port),
                bytes,
            };
            core.queue.schedule_keyed(crossing.key, Event::Packet(event));
            return;
        }
        let number = crossing.message.number;
        let message = share.split.record_of(crossing, core.messages, &mut self.routes);
        share.present(message, 1);
        if S::ENABLED {
            core.sink
                .arrived(number, crossing.packet.head_in, crossing.message.source());
        }
        let packet = PacketId(self.packets.insert(Packet {
            message,
            ..crossing.packet
        }));
        let event = match crossing.event {
            CrossingEvent::Routed { port } => PacketEvent::Routed { packet, port },
            CrossingEvent::TailArrives => {
                if crossing.packet.last {
                    core.finals.scheduled(crossing.key, message);
                }
                PacketEvent::TailArrives { packet }
            }
            // The wormhole fabric's own.
            CrossingEvent::Flit { .. } | CrossingEvent::Signal { .. } | CrossingEvent::Plan { .. } => return,
            CrossingEvent::Credit { .. } => return,
        };
        core.queue.schedule_keyed(crossing.key, Event::Packet(event));
    }
}

impl<'a, S> From<Core<'a, S>> for Step<'a, S> {
    #[inline(always)]
    fn from(core: Core<'a, S>) -> Self {
        Step {
            now: core.now,
            messages: core.messages,
            queue: core.queue,
            sink: core.sink,
            finals: core.finals,
        }
    }
}

impl PacketFabric {
    /// A message enters its source adapter: its packets are cut and sent in turn.
    fn on_inject<S: TraceSink>(&mut self, message: MessageId, step: &mut Step<'_, S>) {
        let src = step.messages[message.index()].spec.src;
        step.queue.set_origin(src.index());
        self.senders[src.index()].push(message);
        let port = self.port_id(host_port(src));
        if self.claim(port, step) {
            self.send_next_packet(port, src, step);
        }
    }

    /// Handles one packet-level event; returns a message that just completed.
    fn on_event<S: TraceSink>(&mut self, event: PacketEvent, step: &mut Step<'_, S>) -> Option<MessageId> {
        let now = step.now;
        step.queue.set_origin(self.device_of(event));
        match event {
            PacketEvent::Routed { packet, port } => {
                let owner = self.ports[port.index()].owner;
                if let Device::Switch(switch) = owner.device
                    && self.crossbars[switch.index()].is_some()
                {
                    self.cioq_arrive(switch, packet, port, step);
                    return None;
                }
                self.enter_output(port, packet, step);
            }
            PacketEvent::PortFree { port } => {
                let out = &mut self.ports[port.index()];
                out.busy = false;
                out.release_scheduled = false;
                let finished = out.current.take();
                match out.owner.device {
                    Device::Host(host) => {
                        if S::ENABLED && finished.is_some() {
                            let (number, index) = self.sending[host.index()];
                            step.sink.segment(now, port_ref(out.owner), number, index, false);
                        }
                        self.send_next_packet(port, host, step);
                    }
                    Device::Switch(_) => self.send_queued(port, step),
                }
            }
            PacketEvent::TailArrives { packet } => {
                let message = self.packets[packet.index()].message;
                self.packets.release(packet.0);
                let m = &mut step.messages[message.index()];
                m.packets_delivered += 1;
                if m.packets_delivered == m.packets_total {
                    return Some(message);
                }
            }
            PacketEvent::Match { switch } => self.cioq_match(switch, step),
            PacketEvent::CrossbarDone { switch, input, output } => {
                if let Some(x) = self.crossbars[switch.index()].as_mut() {
                    x.done(&self.waiting, input, output);
                }
                self.schedule_match(switch, step);
            }
            PacketEvent::CreditArrives { port, bytes } => {
                let out = &mut self.ports[port.index()];
                out.in_next_bytes -= u64::from(bytes);
            }
        }
        None
    }

    /// Cuts the next packet at `host`'s adapter, if it has any, and sends it.
    fn send_next_packet<S: TraceSink>(&mut self, port: PortId, host: HostId, step: &mut Step<'_, S>) {
        let Some(message) = self.senders[host.index()].current() else {
            return;
        };
        let m = &mut step.messages[message.index()];
        let Cut {
            index,
            wire_bytes,
            last,
        } = m.cut(&self.adapters[host.index()], step.now);
        let record = Packet {
            message,
            index,
            wire_bytes,
            last,
            hop: 0,
            // The whole message sits in the adapter's memory.
            head_in: m.injected_at,
            tail_at_next_input: step.now,
            in_port: 0,
        };
        let number = m.number;
        self.senders[host.index()].cut(last, self.adapters[host.index()].interleave);
        let packet = PacketId(self.packets.insert(record));
        if let Some(share) = &mut self.share {
            share.present(message, 1);
        }
        if S::ENABLED {
            self.sending[host.index()] = (number, record.index);
            let owner = self.ports[port.index()].owner;
            step.sink.segment(step.now, port_ref(owner), number, record.index, true);
        }
        self.transmit(port, packet, step);
    }

    /// A message entered this partition's adapters (no effect unless partitioned).
    fn arrived_here(&mut self, message: MessageId, number: u64) {
        if let Some(share) = &mut self.share {
            share.split.by_number.insert(number, message);
            share.present(message, 0);
        }
    }

    /// If `peer` is in another partition, sends it `packet` with its next `event` at
    /// `at` and returns true: the packet and, once its last packet has gone (see
    /// [`Self::cross_to_share`]), its message leave this partition.
    #[inline(always)]
    pub(crate) fn cross<S: TraceSink>(
        &mut self,
        peer: Device,
        at: SimTime,
        packet: PacketId,
        event: CrossingEvent,
        step: &mut Step<'_, S>,
    ) -> bool {
        // A whole network (the common case) sends nothing across.
        self.share.is_some() && self.cross_to_share(peer, packet, (at, event), step)
    }

    /// [`Self::cross`] for a partition: `next` is the packet's next event and its time.
    ///
    /// A message's record here goes once its last packet has left and its destination
    /// is elsewhere. A path may leave a partition and come back to it (graph
    /// partitions, slabs of a hypercube): untraced, a message that comes back gets a
    /// record anew from its packet, but a trace's records of it here (link traversals
    /// in progress, the sink's hold) must live until its last packet has left for good,
    /// so a traced network walks the rest of the last packet's path to know (a walk the
    /// untraced engine is spared: it cost 7 % of a split fat tree's run).
    #[cold]
    fn cross_to_share<S: TraceSink>(
        &mut self,
        peer: Device,
        packet: PacketId,
        next: (SimTime, CrossingEvent),
        step: &mut Step<'_, S>,
    ) -> bool {
        let (at, event) = next;
        let Some(share) = &self.share else {
            return false;
        };
        let part = share.split.part;
        let Some(to) = share.split.elsewhere(self.wiring.device_index(peer)) else {
            return false;
        };
        let key = EventQueue::<Event>::key_of(at, 0, step.queue.reserve());
        let p = self.packets[packet.index()];
        self.packets.release(packet.0);
        let message = step.messages[p.message.index()];
        let dst_elsewhere = share.split.elsewhere(message.spec.dst.index()).is_some();
        let gone = p.last
            && match (S::ENABLED, peer, event) {
                (true, Device::Switch(switch), CrossingEvent::Routed { .. }) => {
                    // Routed there with the hop index it had here.
                    let hop = usize::from(p.hop) - 1;
                    dst_elsewhere && !self.path_returns(message.route, switch, hop, message.spec.dst, part)
                }
                _ => dst_elsewhere,
            };
        let Some(share) = &mut self.share else {
            return false;
        };
        share.split.crossings.push(Crossing {
            to,
            key,
            event,
            packet: p,
            message,
        });
        let presence = &mut share.presence[p.message.index()];
        presence.0 -= 1;
        presence.1 |= gone;
        if *presence == (0, true) {
            if S::ENABLED {
                step.sink.left(message.number);
            }
            share.forget(p.message, message.number);
            share.split.released.push(p.message);
        }
        true
    }

    /// Whether the path of a packet routed at `switch` with hop index `hop` comes back
    /// to partition `part` (its destination's switch included).
    fn path_returns(&self, route: Route, switch: SwitchId, hop: usize, dst: HostId, part: u32) -> bool {
        let Some(share) = &self.share else {
            return false;
        };
        let path = PathRest {
            route,
            switch,
            hop,
            dst,
        };
        path_returns(&self.wiring, &self.routes, &share.split.of_device, path, part)
    }

    /// The index (hosts first, then switches) of the device that handles `event`: the
    /// origin of the events it schedules.
    #[inline(always)]
    fn device_of(&self, event: PacketEvent) -> usize {
        match event {
            PacketEvent::Routed { port, .. }
            | PacketEvent::PortFree { port }
            | PacketEvent::CreditArrives { port, .. } => self.port_device[port.index()] as usize,
            // The port it arrives at is its destination's.
            PacketEvent::TailArrives { packet } => {
                self.port_device[self.packets[packet.index()].in_port as usize] as usize
            }
            PacketEvent::Match { switch } | PacketEvent::CrossbarDone { switch, .. } => {
                self.adapters.len() + switch.index()
            }
        }
    }

    pub(crate) fn port_id(&self, endpoint: Endpoint) -> PortId {
        PortId(self.wiring.port(endpoint) as u32)
    }
}
