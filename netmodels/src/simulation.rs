//! The simulation: a frozen network (built by [`NetworkBuilder::build`]) and its event
//! loop.
//!
//! ```text
//!   inject ─▶ adapter out queue ─▶ link ─▶ switch: route ─▶ output queue ─▶ link ─▶ … ─▶ host
//!             (FIFO, link rate)            (latency)        (FIFO, link rate)          (delivered
//!                                                                                        at tail)
//! ```
//!
//! Every output port (an adapter's or a switch's) sends one message at a time at its
//! link's rate. A message's first byte leaving the source adapter is its physical send
//! time; its last byte reaching the destination adapter completes it.

use std::collections::VecDeque;

use crate::engine::EventQueue;
use crate::ids::{Device, HostId, MessageId, PortId};
use crate::link::LinkParams;
use crate::switch::SwitchParams;
use crate::time::{Bandwidth, SimTime};
use crate::topology::{Endpoint, RouteTable, Topology, TopologyError, Wiring, wire};

/// A message handed to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageSpec {
    /// source host
    pub src: HostId,
    /// destination host
    pub dst: HostId,
    /// payload [bytes]
    pub size_bytes: u32,
    /// the caller's own reference, returned in the [`Delivery`]
    pub cookie: u64,
}

/// A message whose last byte reached its destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    /// the caller's reference from the [`MessageSpec`]
    pub cookie: u64,
    /// source host
    pub src: HostId,
    /// destination host
    pub dst: HostId,
    /// payload [bytes]
    pub size_bytes: u32,
    /// when it was handed to the source adapter
    pub injected_at: SimTime,
    /// when its first byte left the source adapter
    pub first_byte_sent: SimTime,
    /// when its last byte reached the destination adapter
    pub arrived: SimTime,
}

/// Why a message was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum InjectError {
    /// a host id beyond the network
    #[error("host {host} does not exist (the network has {hosts} hosts)")]
    UnknownHost {
        /// the host named
        host: HostId,
        /// hosts in the network
        hosts: u32,
    },
    /// a time before the simulation clock
    #[error("injection at {at} is before the simulation clock {now}")]
    InThePast {
        /// the time asked for
        at: SimTime,
        /// the clock
        now: SimTime,
    },
}

/// Why a network cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// the topology is invalid
    #[error(transparent)]
    Topology(#[from] TopologyError),
}

/// The ideal network: every message arrives `latency + size / bandwidth` after it is
/// injected, whatever else is travelling. It adds nothing a replayer does not model
/// itself (Dimemas's point-to-point model), so a co-simulation over it must reproduce
/// the replayer's own prediction: the first step of a calibration.
///
/// Rounding: the serialisation time is rounded up to the next picosecond, once per
/// message; the latency is exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct IdealParams {
    /// rate of every transfer, with no sharing
    pub bandwidth: Bandwidth,
    /// added to every transfer [ps]
    pub latency: SimTime,
}

#[derive(Debug, Clone)]
enum Kind {
    Switched { topology: Topology, switch: SwitchParams },
    Ideal { hosts: u32, params: IdealParams },
}

/// Describes a network; [`NetworkBuilder::build`] validates it and freezes it.
#[derive(Debug, Clone)]
pub struct NetworkBuilder {
    kind: Kind,
}

impl NetworkBuilder {
    /// A network of `topology` with default switches.
    pub fn new(topology: Topology) -> Self {
        NetworkBuilder {
            kind: Kind::Switched {
                topology,
                switch: SwitchParams::default(),
            },
        }
    }

    /// Output-queued crossbar connecting `hosts` hosts with `link` cables.
    pub fn crossbar(hosts: u32, link: LinkParams) -> Self {
        NetworkBuilder::new(Topology::crossbar(hosts, link))
    }

    /// The ideal network of `hosts` hosts (see [`IdealParams`]).
    pub fn ideal(hosts: u32, params: IdealParams) -> Self {
        NetworkBuilder {
            kind: Kind::Ideal { hosts, params },
        }
    }

    /// Sets the parameters of every switch (no effect on the ideal network).
    pub fn switch_params(mut self, params: SwitchParams) -> Self {
        if let Kind::Switched { switch, .. } = &mut self.kind {
            *switch = params;
        }
        self
    }

    /// Validates the description and builds the simulation.
    pub fn build(self) -> Result<Simulation, BuildError> {
        let (hosts, fabric) = match self.kind {
            Kind::Ideal { hosts, params } => {
                if hosts == 0 {
                    return Err(TopologyError::NoHosts.into());
                }
                (hosts, Fabric::Ideal(params))
            }
            Kind::Switched { topology, switch } => {
                let wiring = wire(&topology)?;
                let routes = RouteTable::shortest_paths(&topology, &wiring)?;
                let ports = wiring
                    .peer
                    .iter()
                    .map(|peer| OutPort {
                        peer: *peer,
                        busy: false,
                        queue: VecDeque::new(),
                    })
                    .collect();
                let switched = Switched {
                    switch,
                    wiring,
                    routes,
                    ports,
                };
                (topology.hosts, Fabric::Switched(switched))
            }
        };
        Ok(Simulation {
            hosts,
            fabric,
            messages: Vec::new(),
            free_messages: Vec::new(),
            in_flight: 0,
            queue: EventQueue::new(),
        })
    }
}

/// What carries the messages.
#[derive(Debug)]
enum Fabric {
    Ideal(IdealParams),
    Switched(Switched),
}

/// Adapters, links and switches.
#[derive(Debug)]
struct Switched {
    switch: SwitchParams,
    wiring: Wiring,
    routes: RouteTable,
    ports: Vec<OutPort>,
}

/// An output port: the transmitting side of one direction of a cable.
#[derive(Debug)]
struct OutPort {
    /// where the cable leads (`None`: nothing connected)
    peer: Option<(Endpoint, LinkParams)>,
    /// a message is being transmitted
    busy: bool,
    /// messages waiting for this output, oldest first
    queue: VecDeque<MessageId>,
}

/// A message inside the model.
#[derive(Debug, Clone, Copy)]
struct Message {
    spec: MessageSpec,
    injected_at: SimTime,
    first_byte_sent: SimTime,
    /// when the tail reaches the input the head is currently heading for or waiting at
    tail_at_next_input: SimTime,
}

/// Everything that can happen. Small and `Copy`: the queue holds events by value.
#[derive(Debug, Clone, Copy)]
enum Event {
    /// the message enters its source adapter's output queue
    Inject { message: MessageId },
    /// the head reaches a device's input
    HeadArrives { message: MessageId, at: Endpoint },
    /// a switch decided the output; the message requests it
    Routed { message: MessageId, port: PortId },
    /// an output finished sending its current message
    PortFree { port: PortId },
    /// the tail reached the destination adapter
    Delivered { message: MessageId },
}

/// A frozen network and its event loop.
#[derive(Debug)]
pub struct Simulation {
    hosts: u32,
    fabric: Fabric,
    messages: Vec<Message>,
    free_messages: Vec<MessageId>,
    in_flight: usize,
    queue: EventQueue<Event>,
}

impl Simulation {
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

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.queue.processed()
    }

    /// Messages injected and not yet delivered.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Hands a message to its source adapter at time `at` (not before [`Self::now`]).
    pub fn inject(&mut self, at: SimTime, spec: MessageSpec) -> Result<MessageId, InjectError> {
        for host in [spec.src, spec.dst] {
            if host.0 >= self.hosts {
                return Err(InjectError::UnknownHost {
                    host,
                    hosts: self.hosts,
                });
            }
        }
        if at < self.now() {
            return Err(InjectError::InThePast { at, now: self.now() });
        }
        let record = Message {
            spec,
            injected_at: at,
            first_byte_sent: SimTime::MAX,
            tail_at_next_input: at,
        };
        let message = match self.free_messages.pop() {
            Some(id) => {
                self.messages[id.index()] = record;
                id
            }
            None => {
                self.messages.push(record);
                MessageId(self.messages.len() as u32 - 1)
            }
        };
        self.in_flight += 1;
        self.queue.schedule(at, Event::Inject { message });
        Ok(message)
    }

    /// Moves the clock to `time` when no event is pending before it.
    pub fn advance_clock(&mut self, time: SimTime) {
        self.queue.advance_clock(time);
    }

    /// Processes every event at or before `limit`, appending completed messages to
    /// `deliveries` in completion order.
    pub fn run_until(&mut self, limit: SimTime, deliveries: &mut Vec<Delivery>) {
        while let Some((now, event)) = self.queue.pop_until(limit) {
            self.handle(now, event, deliveries);
        }
    }

    fn handle(&mut self, now: SimTime, event: Event, deliveries: &mut Vec<Delivery>) {
        let Simulation {
            fabric,
            messages,
            queue,
            ..
        } = self;
        match (event, fabric) {
            (Event::Inject { message }, Fabric::Ideal(params)) => {
                let m = &mut messages[message.index()];
                m.first_byte_sent = now;
                let size = u64::from(m.spec.size_bytes);
                let arrival = now + params.latency + params.bandwidth.serialization_time(size);
                queue.schedule(arrival, Event::Delivered { message });
            }
            (Event::Inject { message }, Fabric::Switched(net)) => {
                let src = messages[message.index()].spec.src;
                let port = net.port_id(Endpoint {
                    device: Device::Host(src),
                    port: 0,
                });
                net.request(now, port, message, messages, queue);
            }
            (Event::HeadArrives { message, at }, Fabric::Switched(net)) => match at.device {
                Device::Switch(switch) => {
                    let dst = messages[message.index()].spec.dst;
                    let out = net.routes.next_port(switch, dst);
                    let port = net.port_id(Endpoint {
                        device: at.device,
                        port: out,
                    });
                    let routed = now + net.switch.routing_latency;
                    queue.schedule(routed, Event::Routed { message, port });
                }
                Device::Host(_) => {
                    // Routes end at the destination by construction (shortest paths).
                    let tail = messages[message.index()].tail_at_next_input;
                    queue.schedule(tail.max(now), Event::Delivered { message });
                }
            },
            (Event::Routed { message, port }, Fabric::Switched(net)) => {
                net.request(now, port, message, messages, queue)
            }
            (Event::PortFree { port }, Fabric::Switched(net)) => {
                let out = &mut net.ports[port.index()];
                out.busy = false;
                if let Some(next) = out.queue.pop_front() {
                    net.transmit(now, port, next, messages, queue);
                }
            }
            (Event::Delivered { message }, _) => {
                let m = messages[message.index()];
                deliveries.push(Delivery {
                    cookie: m.spec.cookie,
                    src: m.spec.src,
                    dst: m.spec.dst,
                    size_bytes: m.spec.size_bytes,
                    injected_at: m.injected_at,
                    first_byte_sent: m.first_byte_sent,
                    arrived: now,
                });
                self.free_messages.push(message);
                self.in_flight -= 1;
            }
            // Switch events never exist on the ideal network.
            (Event::HeadArrives { .. } | Event::Routed { .. } | Event::PortFree { .. }, Fabric::Ideal(_)) => {}
        }
    }
}

impl Switched {
    /// A message asks for an output port: sent now if it is idle, else queued (FIFO).
    fn request(
        &mut self,
        now: SimTime,
        port: PortId,
        message: MessageId,
        messages: &mut [Message],
        queue: &mut EventQueue<Event>,
    ) {
        let out = &mut self.ports[port.index()];
        if out.busy {
            out.queue.push_back(message);
        } else {
            self.transmit(now, port, message, messages, queue);
        }
    }

    /// Starts sending `message` on `port`: cut-through, so the output may start before
    /// the tail has arrived, but cannot finish before it.
    fn transmit(
        &mut self,
        now: SimTime,
        port: PortId,
        message: MessageId,
        messages: &mut [Message],
        queue: &mut EventQueue<Event>,
    ) {
        let out = &mut self.ports[port.index()];
        let Some((peer, link)) = out.peer else {
            // Unconnected ports never appear in routes (checked by `build`).
            return;
        };
        out.busy = true;
        let m = &mut messages[message.index()];
        if m.first_byte_sent == SimTime::MAX {
            m.first_byte_sent = now;
        }
        let wire_time = link.bandwidth.serialization_time(u64::from(m.spec.size_bytes));
        let tail_sent = (now + wire_time).max(m.tail_at_next_input);
        m.tail_at_next_input = tail_sent + link.propagation;
        queue.schedule(tail_sent, Event::PortFree { port });
        queue.schedule(now + link.propagation, Event::HeadArrives { message, at: peer });
    }

    fn port_id(&self, endpoint: Endpoint) -> PortId {
        PortId(self.wiring.port(endpoint) as u32)
    }
}

#[cfg(test)]
mod tests;
