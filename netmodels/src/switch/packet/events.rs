//! The packet switches' events: what the network's event queue holds for them (the
//! output-queued switches' and the CIOQ switches' alike; the last two are the CIOQ
//! crossbar's own).

use crate::ids::{PortId, SwitchId};
use crate::message::PacketId;

/// Events of the packet switches (global port indices).
#[derive(Debug, Clone, Copy)]
pub(crate) enum PacketEvent {
    /// a packet's head reached a switch and was routed: it requests the output
    Routed { packet: PacketId, port: PortId },
    /// an output finished sending its current packet
    PortFree { port: PortId },
    /// a packet's last byte reached its destination adapter
    TailArrives { packet: PacketId },
    /// a CIOQ switch matches free inputs to free outputs
    Match { switch: SwitchId },
    /// a CIOQ crossbar transfer ended (switch-local port numbers)
    CrossbarDone { switch: SwitchId, input: u32, output: u32 },
    /// UGAL-L: a packet of `bytes` that `port` sent started leaving the next switch
    /// (see [`crate::topology::Detour`]); its credit is back
    CreditArrives { port: PortId, bytes: u32 },
}
