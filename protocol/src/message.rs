//! Typed protocol messages and their encoder.
//!
//! `Display` writes exactly the line (without its newline) that the parser in
//! [`crate::parse`] reads back; a property test checks `parse(print(m)) == m`.

use std::fmt;

use crate::token::Token;

/// The largest message size a line may carry \[bytes\]: a C `int` on the client.
pub const MAX_MESSAGE_BYTES: u32 = i32::MAX as u32;

/// A simulated time on the wire: nanoseconds as the client's C `double`.
///
/// The parser accepts full-precision decimals and exponent forms and keeps the nearest
/// `f64` (as the client's `%lg` scan would); `Display` prints the shortest decimal that
/// reads back to the same `f64`, never with an exponent. Always finite.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct WireTime(pub f64);

impl fmt::Display for WireTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Rust's float Display is the shortest round-trip form and never uses an exponent.
        write!(f, "{}", self.0)
    }
}

/// A data message: the payload of `SEND` and of `PROTO READY_TO_RECV`.
///
/// Wire fields, in order: `t src dst tag size ev ev_out src dst src_app dst_app`.
/// Older clients (before the tag was added) write the same line without `tag`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataMessage {
    /// when the message starts (its physical send time) \[ns\]
    pub time: WireTime,
    /// sending client node (0-based)
    pub src: u32,
    /// receiving client node (0-based)
    pub dst: u32,
    /// MPI tag; `None` for the older client layout that had no tag field
    pub tag: Option<i32>,
    /// payload \[bytes\], at most `i32::MAX`
    pub size: u32,
    /// opaque token echoed in the completion
    pub ev: Token,
    /// second opaque token echoed in the completion
    pub ev_out: Token,
    /// the sending node repeated (the client writes it twice)
    pub src_repeat: u32,
    /// the receiving node repeated (the client writes it twice)
    pub dst_repeat: u32,
    /// sending application (0-based)
    pub src_app: u32,
    /// receiving application (0-based)
    pub dst_app: u32,
}

/// A rendezvous request-to-send: the payload of `PROTO OK_TO_SEND`.
///
/// Wire fields, in order: `t src dst tag size src_app dst_app`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RendezvousRequest {
    /// when the sender reached its send \[ns\]
    pub time: WireTime,
    /// sending client node
    pub src: u32,
    /// receiving client node
    pub dst: u32,
    /// MPI tag
    pub tag: i32,
    /// payload of the data message that will follow \[bytes\]
    pub size: u32,
    /// sending application
    pub src_app: u32,
    /// receiving application
    pub dst_app: u32,
}

/// One line from client to server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClientMessage {
    /// `SEND …`: an eager message starts.
    Send(DataMessage),
    /// `PROTO OK_TO_SEND …`: a rendezvous sender is ready.
    OkToSend(RendezvousRequest),
    /// `PROTO READY_TO_RECV …`: both rendezvous sides are ready; the data starts.
    ReadyToRecv(DataMessage),
    /// `STOP t`: the client's next own event is at `t` (a null message).
    Stop(WireTime),
    /// `END`: the batch is complete; the client waits for the reply.
    End,
    /// `FINISH`: the client is done and will close the socket.
    Finish,
}

/// A completed data message, as reported in `COMPLETED SEND`.
///
/// Wire fields, in order: `t src dst size ev ev_out src dst [phys_send_t]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Completion {
    /// arrival of the last byte at `dst` \[ns\]
    pub time: WireTime,
    /// sending node, as in the request
    pub src: u32,
    /// receiving node, as in the request
    pub dst: u32,
    /// payload \[bytes\], as in the request
    pub size: u32,
    /// first token of the request, echoed
    pub ev: Token,
    /// second token of the request, echoed
    pub ev_out: Token,
    /// the sending node repeated; the client checks it equals `src`
    pub src_repeat: u32,
    /// the receiving node repeated; the client checks it equals `dst`
    pub dst_repeat: u32,
    /// when the first byte left the source adapter \[ns\]; optional for the client,
    /// always written by vesper
    pub phys_send_time: Option<WireTime>,
}

/// One line from server to client.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ServerMessage {
    /// `COMPLETED SEND …`
    Completed(Completion),
    /// `END`: the reply batch is complete.
    End,
}

impl fmt::Display for DataMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.time, self.src, self.dst)?;
        if let Some(tag) = self.tag {
            write!(f, " {tag}")?;
        }
        write!(
            f,
            " {} {} {} {} {} {} {}",
            self.size, self.ev, self.ev_out, self.src_repeat, self.dst_repeat, self.src_app, self.dst_app
        )
    }
}

impl fmt::Display for RendezvousRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {} {} {} {}",
            self.time, self.src, self.dst, self.tag, self.size, self.src_app, self.dst_app
        )
    }
}

impl fmt::Display for ClientMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientMessage::Send(m) => write!(f, "SEND {m}"),
            ClientMessage::OkToSend(r) => write!(f, "PROTO OK_TO_SEND {r}"),
            ClientMessage::ReadyToRecv(m) => write!(f, "PROTO READY_TO_RECV {m}"),
            ClientMessage::Stop(t) => write!(f, "STOP {t}"),
            ClientMessage::End => f.write_str("END"),
            ClientMessage::Finish => f.write_str("FINISH"),
        }
    }
}

impl fmt::Display for Completion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {} {} {} {} {}",
            self.time, self.src, self.dst, self.size, self.ev, self.ev_out, self.src_repeat, self.dst_repeat
        )?;
        if let Some(phys) = self.phys_send_time {
            write!(f, " {phys}")?;
        }
        Ok(())
    }
}

impl fmt::Display for ServerMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerMessage::Completed(c) => write!(f, "COMPLETED SEND {c}"),
            ServerMessage::End => f.write_str("END"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_print_without_exponent() {
        assert_eq!(WireTime(6500.0).to_string(), "6500");
        assert_eq!(WireTime(2.52e17).to_string(), "252000000000000000");
        assert_eq!(WireTime(8524.001).to_string(), "8524.001");
        assert_eq!(WireTime(1e-3).to_string(), "0.001");
    }
}
