//! Where each port's cable leads, checked ([`Wiring`], built by [`wire`]): the ports of
//! every device numbered in one list, each with its peer and its link.

use super::{Endpoint, MAX_PORTS, Topology, TopologyError, filled, room};
use crate::ids::{Device, HostId, SwitchId};
use crate::link::LinkParams;

/// Where each port's cable leads, and the link behind it, after validation.
#[derive(Debug, Clone)]
pub(crate) struct Wiring {
    /// first port index of each host (`hosts` entries) then of each switch
    pub(crate) port_base: Vec<u32>,
    /// for every port: the port itself
    pub(crate) owner: Vec<Endpoint>,
    /// for every port: the peer endpoint and the link
    pub(crate) peer: Vec<Option<(Endpoint, LinkParams)>>,
    pub(crate) hosts: u32,
}

impl Wiring {
    /// The bytes of its lists, as built (see [`crate::footprint`]).
    #[cfg(test)]
    pub(crate) fn counted_bytes(&self) -> u64 {
        let bytes = |capacity: usize, size: usize| (capacity * size) as u64;
        bytes(self.port_base.capacity(), size_of::<u32>())
            + bytes(self.owner.capacity(), size_of::<Endpoint>())
            + bytes(self.peer.capacity(), size_of::<Option<(Endpoint, LinkParams)>>())
    }

    pub(crate) fn device_index(&self, device: Device) -> usize {
        match device {
            Device::Host(h) => h.index(),
            Device::Switch(s) => self.hosts as usize + s.index(),
        }
    }

    /// Number of ports of switch `s`.
    pub(crate) fn switch_ports(&self, s: SwitchId) -> u32 {
        let index = self.hosts as usize + s.index();
        let end = self
            .port_base
            .get(index + 1)
            .copied()
            .unwrap_or(self.owner.len() as u32);
        end - self.port_base[index]
    }

    /// Global port index of `endpoint`.
    pub(crate) fn port(&self, endpoint: Endpoint) -> usize {
        self.port_base[self.device_index(endpoint.device)] as usize + endpoint.port as usize
    }
}

pub(crate) fn wire(topology: &Topology) -> Result<Wiring, TopologyError> {
    if topology.hosts == 0 {
        return Err(TopologyError::NoHosts);
    }
    let devices = (0..topology.hosts)
        .map(|h| Device::Host(HostId(h)))
        .chain((0..topology.switch_ports.len() as u32).map(|s| Device::Switch(SwitchId(s))));
    // Checked before anything is allocated: a description may ask for more than memory.
    let all: u64 = u64::from(topology.hosts) + topology.switch_ports.iter().map(|&p| u64::from(p)).sum::<u64>();
    if all > MAX_PORTS {
        return Err(TopologyError::TooLarge { ports: all });
    }
    let mut port_base = room(topology.hosts as usize + topology.switch_ports.len(), "devices")?;
    let mut owner = room(all as usize, "ports")?;
    let mut total = 0u32;
    for device in devices {
        port_base.push(total);
        let ports = topology.ports_of(device);
        total += ports;
        owner.extend((0..ports).map(|port| Endpoint { device, port }));
    }
    let mut wiring = Wiring {
        port_base,
        owner,
        peer: filled(total as usize, None, "ports")?,
        hosts: topology.hosts,
    };
    let mut used_by: Vec<Option<usize>> = filled(total as usize, None, "ports")?;
    for (index, cable) in topology.cables.iter().enumerate() {
        for (end, other) in [(cable.a, cable.b), (cable.b, cable.a)] {
            if !topology.contains(end.device) {
                return Err(TopologyError::UnknownDevice {
                    cable: index,
                    device: end.device,
                });
            }
            let ports = topology.ports_of(end.device);
            if end.port >= ports {
                return Err(TopologyError::NoSuchPort {
                    cable: index,
                    device: end.device,
                    port: end.port,
                    ports,
                });
            }
            let port = wiring.port(end);
            if let Some(first) = used_by[port] {
                return Err(TopologyError::PortUsedTwice {
                    cable: index,
                    first,
                    device: end.device,
                    port: end.port,
                });
            }
            used_by[port] = Some(index);
            wiring.peer[port] = Some((other, cable.link));
        }
    }
    if let Some(h) = (0..topology.hosts).find(|&h| wiring.peer[wiring.port_base[h as usize] as usize].is_none()) {
        return Err(TopologyError::HostNotConnected(h));
    }
    Ok(wiring)
}
