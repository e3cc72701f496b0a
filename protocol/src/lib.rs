//! The co-simulation wire protocol spoken between a task-replay client (Dimemas built
//! with its network-server client, or vesper's own replay client) and the vesper server.
//!
//! ```text
//!  client ── SEND / PROTO / STOP / END / FINISH ──▶ server
//!  client ◀──────── COMPLETED SEND / END ────────── server
//! ```
//!
//! The contract is `shared/spec/protocol.md`. This crate owns the vocabulary only:
//! typed messages ([`ClientMessage`], [`ServerMessage`]), a parser ([`parse_client_line`],
//! [`parse_server_line`]) that accepts every form the real client produces, an encoder
//! (`Display`) that writes exactly what the parser reads, and, with the `codec` feature,
//! a line codec with a length limit. It knows nothing of the network model: times stay
//! in the client's unit, decimal nanoseconds held as an `f64` ([`WireTime`]).

mod message;
mod parse;
mod token;

#[cfg(feature = "codec")]
pub mod codec;

pub use message::{
    ClientMessage, Completion, DataMessage, MAX_MESSAGE_BYTES, RendezvousRequest, ServerMessage, WireTime,
};
pub use parse::{Expected, ParseError, check_parser_invariants, parse_client_line, parse_server_line};
pub use token::{Token, TokenError};

/// The legacy client reads each reply with one `recv()` of at most this many bytes.
pub const LEGACY_REPLY_LIMIT: usize = 500;

/// Default maximum length of one line, in bytes, newline excluded.
pub const DEFAULT_MAX_LINE: usize = 4096;
