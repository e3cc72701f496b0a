//! What carries the replayed messages: a local ideal bus, or a vesper server.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use vesper_protocol::{ClientMessage, DataMessage, RendezvousRequest, Token, WireTime};

use super::Ps;
use crate::connection::{ClientError, LegacyConnection};

/// The client's "run until the next completion" STOP \[ns\]: the value the Dimemas client
/// sends, beyond the model's last instant (`shared/spec/protocol.md`).
pub const UNTIL_NEXT_COMPLETION_NS: f64 = 2.52e17;

/// Why the fabric failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FabricError {
    /// the connection to the server failed
    #[error("server: {0}")]
    Server(#[from] ClientError),
    /// the server reported a message this client did not send
    #[error("server reported an unknown message token {0}")]
    UnknownToken(String),
    /// a message larger than the wire protocol carries
    #[error(
        "a message of {size} bytes from node {src} to node {dst}: the wire protocol carries at most {} bytes \
         (a C int on the Dimemas client); --network ideal --no-server replays it locally",
        vesper_protocol::MAX_MESSAGE_BYTES
    )]
    TooLarge {
        /// its source node
        src: u32,
        /// its destination node
        dst: u32,
        /// its size \[bytes\]
        size: u32,
    },
    /// the server answered "until the next completion" with nothing
    #[error("the server reported no completion although {0} messages are in flight")]
    NoCompletion(usize),
    /// a message would arrive past what the clock counts
    #[error(
        "a message of {size} bytes from node {src} to node {dst}, sent at {at} ps, would arrive past what {}",
        super::CLOCK_LIMIT
    )]
    Clock {
        /// its source node
        src: u32,
        /// its destination node
        dst: u32,
        /// its size \[bytes\]
        size: u32,
        /// when it was sent \[ps\]
        at: Ps,
    },
}

/// Carries messages between nodes.
pub trait Fabric {
    /// Message `id` of `size` bytes leaves node `src` for node `dst` at `at`: eager
    /// (`SEND`), or the data of a rendezvous whose receiver is ready
    /// (`PROTO READY_TO_RECV`).
    fn send(&mut self, id: u64, at: Ps, message: Transfer) -> Result<(), FabricError>;

    /// A rendezvous sender reached its send at `at` (`PROTO OK_TO_SEND`); no reply.
    fn request_to_send(&mut self, at: Ps, message: Transfer) -> Result<(), FabricError>;

    /// Messages sent and not yet reported complete.
    fn in_flight(&self) -> usize;

    /// Runs until `until` (`None`: until the next completion) or the earliest
    /// completion, whichever comes first: the completions at that time, or `None` if
    /// `until` came first.
    fn advance(&mut self, until: Option<Ps>) -> Result<Option<(Ps, Vec<u64>)>, FabricError>;
}

/// One message as the protocol describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    /// sending node
    pub src: u32,
    /// receiving node
    pub dst: u32,
    /// payload \[bytes\]
    pub size: u32,
    /// MPI tag
    pub tag: i32,
    /// the data of a rendezvous (`PROTO READY_TO_RECV`) rather than an eager `SEND`
    pub rendezvous: bool,
}

/// `mbps` MBps (2^20 bytes per second, a positive decimal taken as written,
/// [`vesper_input::decimal`]) as an exact `(bytes, seconds)` ratio.
pub fn mbps_ratio(mbps: f64) -> Option<(u64, u64)> {
    let (digits, scale) = vesper_input::decimal(mbps)?;
    Some((digits.checked_mul(1 << 20)?, 10u64.checked_pow(scale)?))
}

/// Dimemas's point-to-point model without a server: every message takes
/// latency + size / bandwidth, with no contention. Computed exactly as vesper's ideal
/// network does (the transfer rounded up to the picosecond), so the two agree exactly.
#[derive(Debug)]
pub struct IdealBus {
    latency: Ps,
    /// bandwidth as `bytes` per `seconds` (0 bytes: unlimited)
    bytes: u64,
    seconds: u64,
    pending: BinaryHeap<Reverse<(Ps, u64)>>,
}

impl IdealBus {
    /// A bus of `bytes` per `seconds` (both non-zero) and `latency`.
    pub fn new(bytes: u64, seconds: u64, latency: Ps) -> IdealBus {
        IdealBus {
            latency,
            bytes: bytes.max(1),
            seconds: seconds.max(1),
            pending: BinaryHeap::new(),
        }
    }

    /// A bus of unlimited bandwidth: every message takes `latency`.
    pub fn unlimited(latency: Ps) -> IdealBus {
        IdealBus {
            latency,
            bytes: 0,
            seconds: 1,
            pending: BinaryHeap::new(),
        }
    }

    /// When the next message lands, if any is on its way.
    pub fn next_completion(&self) -> Option<Ps> {
        self.pending.peek().map(|&Reverse((at, _))| at)
    }

    /// Dimemas's bandwidth unit: `mbps` MBps of 2^20 bytes per second (a decimal
    /// value, taken as written).
    pub fn from_mbps(mbps: f64, latency: Ps) -> Option<IdealBus> {
        let (bytes, seconds) = mbps_ratio(mbps)?;
        Some(IdealBus::new(bytes, seconds, latency))
    }

    /// Message `id` leaves at `at` and lands after `latency` and its transfer at
    /// `bandwidth` (`(bytes, seconds)`; `None`: instantaneous), whatever this bus's own.
    pub fn send_over(
        &mut self,
        id: u64,
        at: Ps,
        message: Transfer,
        latency: Ps,
        bandwidth: Option<(u64, u64)>,
    ) -> Result<(), FabricError> {
        let arrival = transfer_time(message.size, bandwidth)
            .and_then(|transfer| at.checked_add(latency)?.checked_add(transfer))
            .ok_or(FabricError::Clock {
                src: message.src,
                dst: message.dst,
                size: message.size,
                at,
            })?;
        self.pending.push(Reverse((arrival, id)));
        Ok(())
    }
}

/// How long `size` bytes take at `bandwidth` (`(bytes, seconds)`, rounded up to the
/// picosecond; `None`: no time), if the clock counts that long.
fn transfer_time(size: u32, bandwidth: Option<(u64, u64)>) -> Option<Ps> {
    let Some((bytes, seconds)) = bandwidth else {
        return Some(0);
    };
    let numerator = u128::from(size) * 1_000_000_000_000u128 * u128::from(seconds.max(1));
    u64::try_from(numerator.div_ceil(u128::from(bytes.max(1)))).ok()
}

impl Fabric for IdealBus {
    fn send(&mut self, id: u64, at: Ps, message: Transfer) -> Result<(), FabricError> {
        let bandwidth = (self.bytes > 0).then_some((self.bytes, self.seconds));
        self.send_over(id, at, message, self.latency, bandwidth)
    }

    fn request_to_send(&mut self, _at: Ps, _message: Transfer) -> Result<(), FabricError> {
        // Dimemas's own model: the data starts when both sides are ready.
        Ok(())
    }

    fn in_flight(&self) -> usize {
        self.pending.len()
    }

    fn advance(&mut self, until: Option<Ps>) -> Result<Option<(Ps, Vec<u64>)>, FabricError> {
        let Some(&Reverse((first, _))) = self.pending.peek() else {
            return Ok(None);
        };
        if until.is_some_and(|u| first > u) {
            return Ok(None);
        }
        let mut done = Vec::new();
        while let Some(&Reverse((t, id))) = self.pending.peek() {
            if t != first {
                break;
            }
            self.pending.pop();
            done.push(id);
        }
        Ok(Some((first, done)))
    }
}

/// A vesper (or Venus) server, spoken to exactly as Dimemas's client does: the `SEND`
/// lines of an instant, then `STOP` at the client's next own event (or "until the next
/// completion"), then `END`, and the reply.
#[derive(Debug)]
pub struct ServerFabric {
    connection: LegacyConnection,
    /// application id written in the lines
    app: u32,
    batch: Vec<ClientMessage>,
    /// message id by the token sent with it, for messages whose completion is not known
    in_flight: BTreeMap<String, u64>,
    /// completions the server told ahead of their time (stamped later than the earliest
    /// of their reply), by time: each is taken at its own time, as Dimemas does
    known: BTreeMap<Ps, Vec<u64>>,
    /// round trips made
    pub round_trips: u64,
}

impl ServerFabric {
    /// Speaks for application `app` over `connection`.
    pub fn new(connection: LegacyConnection, app: u32) -> ServerFabric {
        ServerFabric {
            connection,
            app,
            batch: Vec::new(),
            in_flight: BTreeMap::new(),
            known: BTreeMap::new(),
            round_trips: 0,
        }
    }

    /// Sends `FINISH` and closes the connection.
    pub fn finish(self) -> Result<(), FabricError> {
        Ok(self.connection.finish()?)
    }
}

/// `message`, if the wire protocol can carry its size.
fn carried(message: Transfer) -> Result<Transfer, FabricError> {
    let Transfer { src, dst, size, .. } = message;
    if size > vesper_protocol::MAX_MESSAGE_BYTES {
        return Err(FabricError::TooLarge { src, dst, size });
    }
    Ok(message)
}

/// Picoseconds as the client's nanoseconds (a double).
fn ns(ps: Ps) -> WireTime {
    WireTime(ps as f64 / 1000.0)
}

impl Fabric for ServerFabric {
    fn send(&mut self, id: u64, at: Ps, message: Transfer) -> Result<(), FabricError> {
        let Transfer {
            src,
            dst,
            size,
            tag,
            rendezvous,
        } = carried(message)?;
        // Pointer-like tokens, distinct per message, as the real client's `%p`s are.
        let ev = Token::new(&format!("{:#x}", 0x5500_0000_0000u64 + id * 16))
            .map_err(|_| FabricError::UnknownToken(id.to_string()))?;
        let ev_out = Token::new(&format!("{:#x}", 0x5500_0000_0008u64 + id * 16))
            .map_err(|_| FabricError::UnknownToken(id.to_string()))?;
        self.in_flight.insert(ev.to_string(), id);
        let line = DataMessage {
            time: ns(at),
            src,
            dst,
            tag: Some(tag),
            size,
            ev,
            ev_out,
            src_repeat: src,
            dst_repeat: dst,
            src_app: self.app,
            dst_app: self.app,
        };
        self.batch.push(if rendezvous {
            ClientMessage::ReadyToRecv(line)
        } else {
            ClientMessage::Send(line)
        });
        Ok(())
    }

    fn request_to_send(&mut self, at: Ps, message: Transfer) -> Result<(), FabricError> {
        let message = carried(message)?;
        self.batch.push(ClientMessage::OkToSend(RendezvousRequest {
            time: ns(at),
            src: message.src,
            dst: message.dst,
            tag: message.tag,
            size: message.size,
            src_app: self.app,
            dst_app: self.app,
        }));
        Ok(())
    }

    fn in_flight(&self) -> usize {
        self.in_flight.len() + self.known.values().map(Vec::len).sum::<usize>()
    }

    /// As Dimemas's client: a completion told ahead waits for its time. With every
    /// message in flight known and nothing to tell the server, the client goes on
    /// without asking; otherwise it asks up to `until` but no later than its next known
    /// completion, as nothing it does not know of may come before that.
    fn advance(&mut self, until: Option<Ps>) -> Result<Option<(Ps, Vec<u64>)>, FabricError> {
        let next_known = self.known.keys().next().copied();
        let take_known = |known: &mut BTreeMap<Ps, Vec<u64>>, at: Ps| known.remove(&at).map(|ids| (at, ids));
        if self.in_flight.is_empty()
            && self.batch.is_empty()
            && let Some(at) = next_known
        {
            return Ok(match until {
                Some(until) if until < at => None,
                _ => take_known(&mut self.known, at),
            });
        }
        let until = match (until, next_known) {
            (Some(u), Some(k)) => Some(u.min(k)),
            (u, k) => u.or(k),
        };
        let stop = until.map_or(WireTime(UNTIL_NEXT_COMPLETION_NS), ns);
        self.batch.push(ClientMessage::Stop(stop));
        self.batch.push(ClientMessage::End);
        let reply = self.connection.exchange(&self.batch)?;
        self.batch.clear();
        self.round_trips += 1;
        if reply.completions.is_empty() && until.is_none() {
            return Err(FabricError::NoCompletion(self.in_flight.len()));
        }
        for c in &reply.completions {
            // The server prints the smallest double not earlier than the exact time:
            // the nearest picosecond is the exact one.
            let at = (c.time.0 * 1000.0).round() as Ps;
            let id = self
                .in_flight
                .remove(c.ev.as_str())
                .ok_or_else(|| FabricError::UnknownToken(c.ev.to_string()))?;
            self.known.entry(at).or_default().push(id);
        }
        // The earliest completion now known, if it comes by `until`.
        Ok(match (self.known.keys().next().copied(), until) {
            (Some(at), Some(until)) if at > until => None,
            (Some(at), _) => take_known(&mut self.known, at),
            (None, _) => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ideal_bus_takes_latency_plus_size_over_bandwidth() {
        // 250 MBps of 2^20 bytes: 1024 bytes in 3906.25 ns, plus 1.5 µs.
        let mut bus = IdealBus::from_mbps(250.0, 1_500_000).expect("positive");
        let t = |src, dst, size| Transfer {
            src,
            dst,
            size,
            tag: 0,
            rendezvous: false,
        };
        bus.send(7, 6_500_000, t(0, 1, 1024)).expect("sent");
        bus.send(8, 6_500_000, t(1, 0, 1024)).expect("sent");
        assert_eq!(bus.advance(Some(11_906_249)).expect("ok"), None);
        assert_eq!(bus.advance(None).expect("ok"), Some((11_906_250, vec![7, 8])));
        assert_eq!(bus.in_flight(), 0);
        // 3 MBps: a byte takes 10^12 / (3 · 2^20) ps, rounded up.
        let mut odd = IdealBus::from_mbps(3.0, 0).expect("positive");
        odd.send(1, 0, t(0, 1, 1)).expect("sent");
        assert_eq!(odd.advance(None).expect("ok"), Some((317_892, vec![1])));
        assert!(IdealBus::from_mbps(0.0, 0).is_none());
    }

    #[test]
    fn an_mbps_rate_is_an_exact_ratio() {
        assert_eq!(mbps_ratio(250.0), Some((250 << 20, 1)));
        assert_eq!(mbps_ratio(0.1), Some((1 << 20, 10)));
        assert_eq!(mbps_ratio(312.5), Some((3125 << 20, 10)));
        // Not positive, more bytes than 64 bits count, or a scale past 10^19.
        for mbps in [0.0, -1.0, f64::NAN, 1e15, 1e-20] {
            assert_eq!(mbps_ratio(mbps), None, "{mbps}");
        }
    }
}
