//! Building the fabric: its ports, buffers and thresholds from the switch and adapter
//! parameters and the wiring, each checked against the rules of the flow control.

use std::collections::BTreeMap;

use crate::adapter::{AdapterParams, Sender};
use crate::build_error::{BuildError, room_for};
use crate::ids::Device;
use crate::rng::Rng;
use crate::slab::Slab;
use crate::switch::{Arbitration, Granularity, InitialPointer, WormholeParams};
use crate::time::SimTime;
use crate::topology::{RouteTable, Torus, Wiring};

use super::entries::Entries;
use super::error::WormholeError;
use super::{Awaits, InPort, OutPort, Thresholds, WormholeFabric};

/// Bubble flow control: the packet slots of every switch input. A slot holds a packet
/// of the largest size the adapters cut; the slots lie wholly below the STOP threshold,
/// so an admitted packet never meets a STOP. A packet entering a ring needs two.
fn bubble_slots(params: &WormholeParams, adapters: &[AdapterParams], ins: &mut [InPort]) -> Result<(), BuildError> {
    let flit_bytes = u64::from(params.flit_bytes);
    let largest = adapters
        .iter()
        .map(|a| (u64::from(a.payload_bytes) + u64::from(a.header_bytes)).div_ceil(flit_bytes))
        .max()
        .unwrap_or(1);
    let mut needed = 0;
    let mut fewest = u64::MAX;
    for inp in ins.iter_mut() {
        let Some(t) = inp.thresholds else { continue };
        // Below the mark: the occupancy never reaches it.
        let slots = u64::from(t.high - 1) / largest;
        inp.slots = u32::try_from(slots).unwrap_or(u32::MAX);
        fewest = fewest.min(slots);
        needed = needed.max(2 * largest + 1 + u64::from(t.capacity - t.high));
    }
    if fewest < 2 {
        return Err(WormholeError::BubbleTooSmall {
            packet_bytes: largest * flit_bytes,
            buffer_bytes: params.buffer_bytes,
            room: fewest,
            needed_bytes: needed * flit_bytes,
        }
        .into());
    }
    Ok(())
}

impl WormholeFabric {
    pub(crate) fn new(
        params: WormholeParams,
        routing_latency: SimTime,
        adapters: Vec<AdapterParams>,
        wiring: Wiring,
        routes: RouteTable,
    ) -> Result<WormholeFabric, BuildError> {
        if params.flit_bytes == 0 {
            return Err(WormholeError::EmptyFlit.into());
        }
        // Links carry whole flits: a packet smaller than a flit is padded to it, which
        // a small message's packet may be, but not every packet.
        if let Some(a) = adapters
            .iter()
            .find(|a| u64::from(a.payload_bytes) + u64::from(a.header_bytes) < u64::from(params.flit_bytes))
        {
            return Err(WormholeError::FlitLargerThanPackets {
                flit_bytes: params.flit_bytes,
                payload_bytes: a.payload_bytes,
                header_bytes: a.header_bytes,
            }
            .into());
        }
        let capacity = params.buffer_bytes / params.flit_bytes;
        let mut rng = match params.arbitration {
            Arbitration::RoundRobin {
                initial: InitialPointer::Random { seed },
            } => Some(Rng::new(seed)),
            _ => None,
        };
        // A fixed first port must be a port of some switch (a switch with fewer ports
        // starts at it modulo its ports).
        if let Arbitration::RoundRobin {
            initial: InitialPointer::Fixed(port),
        } = params.arbitration
        {
            let switches = (wiring.port_base.len() as u32).saturating_sub(wiring.hosts);
            let ports = (0..switches)
                .map(|s| wiring.switch_ports(crate::ids::SwitchId(s)))
                .max()
                .unwrap_or(1);
            if port >= ports.max(1) {
                return Err(WormholeError::PointerBeyondPorts {
                    port,
                    ports: ports.max(1),
                }
                .into());
            }
        }
        let mut outs = room_for(wiring.owner.len(), "output ports")?;
        let mut ins = room_for(wiring.owner.len(), "input ports")?;
        for (&owner, peer) in wiring.owner.iter().zip(&wiring.peer) {
            let link = peer.map(|(_, link)| link).unwrap_or_default();
            let flit_time = link.bandwidth.serialization_time(u64::from(params.flit_bytes));
            let switch_ports = match owner.device {
                Device::Host(_) => 1,
                Device::Switch(s) => wiring.switch_ports(s),
            };
            let pointer = match (params.arbitration, rng.as_mut()) {
                (
                    Arbitration::RoundRobin {
                        initial: InitialPointer::Fixed(p),
                    },
                    _,
                ) => p % switch_ports.max(1),
                (_, Some(rng)) => rng.below(u64::from(switch_ports)) as u32,
                _ => 0,
            };
            outs.push(OutPort {
                owner,
                peer_input: peer.map(|(end, _)| wiring.port(end) as u32),
                peer_host: peer.is_some_and(|(end, _)| matches!(end.device, Device::Host(_))),
                ring: match owner.device {
                    Device::Switch(_) => routes.ring(owner.port),
                    Device::Host(_) => None,
                },
                link,
                flit_time,
                worm: None,
                stopped: false,
                signals: Vec::new(),
                ticking: false,
                waits_for_room: false,
                arbitrating: false,
                requests: Vec::new(),
                pointer,
                run: None,
                last_send: None,
                version: 0,
                tail_deferred: None,
                plan_arrives: SimTime::ZERO,
                awaits: Awaits::Nothing,
            });
            // The input side of this port is fed by the peer's output.
            let thresholds = match (owner.device, peer) {
                (Device::Switch(_), Some((_, link))) => {
                    let tau = link.bandwidth.serialization_time(u64::from(params.flit_bytes));
                    let t = Thresholds::new(capacity, tau, link.propagation).ok_or_else(|| {
                        let needed = (2 * link.propagation.as_ps()).div_ceil(tau.as_ps().max(1)) + 3;
                        BuildError::from(WormholeError::BufferTooSmall {
                            buffer_bytes: params.buffer_bytes,
                            propagation: link.propagation,
                            flit_time: tau,
                            needed_bytes: needed * u64::from(params.flit_bytes),
                        })
                    })?;
                    Some(t)
                }
                _ => None,
            };
            ins.push(InPort {
                owner,
                upstream: peer.map(|(end, _)| wiring.port(end) as u32),
                propagation: link.propagation,
                thresholds,
                entries: Entries::default(),
                occupancy: 0,
                held: 0,
                stop_sent: false,
                hol: false,
                slots: 0,
                reserved: 0,
                front_since: SimTime::ZERO,
                version: 0,
                pending: None,
                stop_deferred: None,
                signal_from: SimTime::ZERO,
                signal_arrives: SimTime::ZERO,
            });
        }
        if params.bubble {
            bubble_slots(&params, &adapters, &mut ins)?;
        } else if routes.torus().is_some_and(Torus::has_rings) {
            return Err(WormholeError::RingsNeedBubble.into());
        }
        // The coarse path needs one flit time everywhere, and routing that takes time
        // (cables may take none: it plans for a STOP or GO when it is sent anyway). Without
        // it, a head comes to the front of its buffer when the tail before it is sent,
        // after the arbitration of that instant, and is routed at once: the fine path then
        // grants the output it asks for to the first such head its events reach, in the
        // order they happen to be queued, which the coarse path's events do not follow
        // (see the test `the_coarse_path_would_differ_with_routing_of_no_delay`); such
        // networks step by flit.
        let mut flit_times = outs.iter().filter(|o| o.peer_input.is_some()).map(|o| o.flit_time);
        let tau = flit_times.next().unwrap_or(SimTime::from_ps(1));
        let uniform = flit_times.all(|t| t == tau);
        let routes_in_time = routing_latency > SimTime::ZERO;
        #[cfg(test)]
        let routes_in_time = routes_in_time || super::tests::FORCE_COARSE.with(std::cell::Cell::get);
        Ok(WormholeFabric {
            #[cfg(test)]
            signals: Vec::new(),
            scratch_inputs: Vec::new(),
            scratch_runs: Vec::new(),
            coarse: uniform && routes_in_time && params.granularity == Granularity::Coarse,
            tau,
            params,
            routing_latency,
            senders: adapters.iter().map(|_| Sender::default()).collect(),
            port_device: wiring
                .owner
                .iter()
                .map(|o| wiring.device_index(o.device) as u32)
                .collect(),
            adapters,
            wiring,
            routes,
            outs,
            ins,
            packets: Slab::new(),
            plans: Slab::new(),
            traversals: BTreeMap::new(),
            share: None,
        })
    }

    /// The bytes of the records [`crate::footprint`] counts, as built.
    #[cfg(test)]
    pub(crate) fn counted_bytes(&self) -> u64 {
        let bytes = |capacity: usize, size: usize| (capacity * size) as u64;
        bytes(self.adapters.capacity(), size_of::<AdapterParams>())
            + self.wiring.counted_bytes()
            + self.routes.counted_bytes()
            + bytes(self.outs.capacity(), size_of::<OutPort>())
            + bytes(self.ins.capacity(), size_of::<InPort>())
            + bytes(self.port_device.capacity(), size_of::<u32>())
            + bytes(self.senders.capacity(), size_of::<Sender>())
    }
}
