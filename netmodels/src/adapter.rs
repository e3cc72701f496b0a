//! Adapters (NICs): the hosts' side of the network.
//!
//! ```text
//!   messages ─▶ [m1 m2 m3] ─ segment (payload ≤ 4 KiB + header) ─▶ out p0 ─▶ link
//!               round-robin: one packet of m1, one of m2, one of m3, one of m1, …
//!   link ─▶ in p0 ─▶ reassembly: the message completes when its last packet's last
//!                    byte has arrived
//! ```
//!
//! The sending side cuts a packet only when its output is free, so concurrent
//! messages interleave packet by packet (round-robin) or go one after the other
//! (FIFO). A message's physical send time is when its first byte leaves the adapter.

use std::collections::VecDeque;

use crate::ids::MessageId;

/// How an adapter serves concurrent messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Interleave {
    /// one packet of each message in turn (Myrinet adapters)
    #[default]
    RoundRobin,
    /// every packet of a message before the next message
    Fifo,
}

/// In the command line's words: `round-robin`, `fifo`.
impl std::fmt::Display for Interleave {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Interleave::RoundRobin => "round-robin",
            Interleave::Fifo => "fifo",
        })
    }
}

/// Default packet payload: 4 KiB.
pub const DEFAULT_PAYLOAD_BYTES: u32 = 4096;

/// Default packet header: route bytes, type, length and CRC of a Myrinet-class packet.
pub const DEFAULT_HEADER_BYTES: u32 = 16;

/// Parameters of every adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct AdapterParams {
    /// largest payload of one packet \[bytes\], at least 1
    pub payload_bytes: u32,
    /// bytes added to every packet on the wire \[bytes\]
    pub header_bytes: u32,
    /// how concurrent messages share the output
    pub interleave: Interleave,
}

impl Default for AdapterParams {
    fn default() -> Self {
        AdapterParams {
            payload_bytes: DEFAULT_PAYLOAD_BYTES,
            header_bytes: DEFAULT_HEADER_BYTES,
            interleave: Interleave::RoundRobin,
        }
    }
}

impl AdapterParams {
    /// Packets a message of `size_bytes` is cut into (a message of 0 bytes still needs
    /// one packet to carry its header).
    pub fn packets(&self, size_bytes: u32) -> u32 {
        size_bytes.div_ceil(self.payload_bytes.max(1)).max(1)
    }
}

/// The sending side of one adapter: messages with bytes left to segment, in service
/// order.
///
/// Round-robin moves a served message behind the others only when the next packet is
/// chosen, so that a message arriving meanwhile (even at the same instant) gets its
/// turn before the served one goes again.
#[derive(Debug, Default)]
pub(crate) struct Sender {
    active: VecDeque<MessageId>,
    rotate: bool,
}

impl Sender {
    /// A message arrives to be sent.
    pub(crate) fn push(&mut self, message: MessageId) {
        self.active.push_back(message);
    }

    /// Messages with packets still to cut (the one being cut included).
    pub(crate) fn len(&self) -> usize {
        self.active.len()
    }

    /// The message the next packet comes from.
    pub(crate) fn current(&mut self) -> Option<MessageId> {
        if std::mem::take(&mut self.rotate) {
            self.active.rotate_left(1);
        }
        self.active.front().copied()
    }

    /// A packet of the current message was cut; `finished` if it was its last.
    pub(crate) fn cut(&mut self, finished: bool, interleave: Interleave) {
        if finished {
            self.active.pop_front();
        } else {
            self.rotate = interleave == Interleave::RoundRobin;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_per_message() {
        let p = AdapterParams::default();
        assert_eq!(
            [0, 1, 4096, 4097, 8192, 10_000].map(|s| p.packets(s)),
            [1, 1, 1, 2, 2, 3]
        );
    }

    #[test]
    fn round_robin_alternates_and_fifo_does_not() {
        for (interleave, expected) in [(Interleave::RoundRobin, [0, 1, 0, 1]), (Interleave::Fifo, [0, 0, 1, 1])] {
            let mut s = Sender::default();
            s.push(MessageId(0));
            let mut left = [2, 2];
            let mut order = Vec::new();
            while let Some(m) = s.current() {
                order.push(m.0);
                left[m.index()] -= 1;
                s.cut(left[m.index()] == 0, interleave);
                if order.len() == 1 {
                    // Arrives after the first packet was cut, before the next is chosen.
                    s.push(MessageId(1));
                }
            }
            assert_eq!(order, expected, "{interleave:?}");
        }
    }
}
