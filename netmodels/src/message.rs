//! A message and its packets: what a caller hands the model ([`MessageSpec`]), what the
//! model hands back ([`Delivery`]), and the records every fabric keeps of them while they
//! travel (`Message`, `Packet`).

use crate::adapter::AdapterParams;
use crate::ids::{Device, HostId, MessageId};
use crate::time::SimTime;
use crate::topology::{Endpoint, Route};
use crate::trace::{PortRef, Source};

/// A message handed to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageSpec {
    /// source host
    pub src: HostId,
    /// destination host
    pub dst: HostId,
    /// payload \[bytes\]
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
    /// payload \[bytes\]
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
#[non_exhaustive]
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
    /// a time after [`SimTime::LAST_INJECTION`]
    #[error(
        "injection at {at} leaves the message no room to arrive: messages must enter the network by {}",
        SimTime::LAST_INJECTION
    )]
    TooLate {
        /// the time asked for
        at: SimTime,
    },
}

/// A packet slot in the slab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PacketId(pub(crate) u32);

impl PacketId {
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// A packet inside the network.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Packet {
    pub(crate) message: MessageId,
    /// 0-based position within its message
    pub(crate) index: u32,
    /// header and payload \[bytes\]
    pub(crate) wire_bytes: u32,
    /// the last packet of its message
    pub(crate) last: bool,
    /// links crossed so far
    pub(crate) hop: u16,
    /// when the head reached the device it is at (or was cut, at the source)
    pub(crate) head_in: SimTime,
    /// when the tail reaches the input the head is heading for or waiting at
    pub(crate) tail_at_next_input: SimTime,
    /// global index of the input port it arrives at or waits in
    pub(crate) in_port: u32,
}

/// A message inside the model.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Message {
    pub(crate) spec: MessageSpec,
    /// its number in the simulation, 1 for the first injected (traces name it so)
    pub(crate) number: u64,
    pub(crate) injected_at: SimTime,
    pub(crate) first_byte_sent: SimTime,
    /// payload not yet cut into packets \[bytes\]
    pub(crate) bytes_unsent: u32,
    /// packets cut so far
    pub(crate) packets_cut: u32,
    /// packets it is cut into
    pub(crate) packets_total: u32,
    /// packets whose last byte reached the destination
    pub(crate) packets_delivered: u32,
    /// how its packets find their way
    pub(crate) route: Route,
}

/// The next packet an adapter cuts from a message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cut {
    /// 0-based position within the message
    pub(crate) index: u32,
    /// header and payload \[bytes\]
    pub(crate) wire_bytes: u32,
    /// the message's last packet
    pub(crate) last: bool,
}

impl Message {
    /// Where it comes from, for the trace of a partition it crosses into.
    pub(crate) fn source(&self) -> Source {
        Source {
            injected: self.injected_at,
            port: port_ref(host_port(self.spec.src)),
            first_out: self.first_byte_sent,
        }
    }

    /// The message's delivery, its last byte arriving at `arrived`.
    pub(crate) fn delivery(&self, arrived: SimTime) -> Delivery {
        Delivery {
            cookie: self.spec.cookie,
            src: self.spec.src,
            dst: self.spec.dst,
            size_bytes: self.spec.size_bytes,
            injected_at: self.injected_at,
            first_byte_sent: self.first_byte_sent,
            arrived,
        }
    }

    /// Cuts the next packet (payload up to the adapter's, plus its header) at `now`;
    /// the first one marks the message's physical send time.
    pub(crate) fn cut(&mut self, adapter: &AdapterParams, now: SimTime) -> Cut {
        let payload = self.bytes_unsent.min(adapter.payload_bytes);
        self.bytes_unsent -= payload;
        self.packets_cut += 1;
        if self.packets_cut == 1 {
            self.first_byte_sent = now;
        }
        Cut {
            index: self.packets_cut - 1,
            wire_bytes: payload + adapter.header_bytes,
            last: self.packets_cut == self.packets_total,
        }
    }
}

/// Whether a message may be injected at `at` into a network of `hosts` hosts whose clock
/// is at `now`.
pub(crate) fn check_injection(hosts: u32, now: SimTime, at: SimTime, spec: MessageSpec) -> Result<(), InjectError> {
    for host in [spec.src, spec.dst] {
        if host.0 >= hosts {
            return Err(InjectError::UnknownHost { host, hosts });
        }
    }
    if at < now {
        return Err(InjectError::InThePast { at, now });
    }
    if at > SimTime::LAST_INJECTION {
        return Err(InjectError::TooLate { at });
    }
    Ok(())
}

pub(crate) fn host_port(host: HostId) -> Endpoint {
    Endpoint {
        device: Device::Host(host),
        port: 0,
    }
}

pub(crate) fn port_ref(endpoint: Endpoint) -> PortRef {
    PortRef {
        device: endpoint.device,
        port: endpoint.port,
    }
}
