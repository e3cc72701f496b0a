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

pub use message::{ClientMessage, Completion, DataMessage, RendezvousRequest, ServerMessage, WireTime};
pub use parse::{Expected, ParseError, parse_client_line, parse_server_line};
pub use token::{Token, TokenError};

/// The legacy client reads each reply with one `recv()` of at most this many bytes.
pub const LEGACY_REPLY_LIMIT: usize = 500;

/// The largest message size a line may carry \[bytes\]: a C `int` on the client.
pub const MAX_MESSAGE_BYTES: u32 = i32::MAX as u32;

/// Default maximum length of one line, in bytes, newline excluded.
pub const DEFAULT_MAX_LINE: usize = 4096;

/// Checks the parser's invariants on arbitrary bytes; the body of the fuzz target,
/// also run by the property tests so that ordinary `cargo test` exercises it.
///
/// Whatever the input, parsing must not panic, and anything that parses must print
/// to a line that parses back to the same message.
pub fn check_parser_invariants(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for line in text.split('\n') {
        if let Ok(message) = parse_client_line(line) {
            let printed = message.to_string();
            let again = parse_client_line(&printed);
            assert_eq!(again.as_ref(), Ok(&message), "client round trip of {printed:?}");
        }
        if let Ok(message) = parse_server_line(line) {
            let printed = message.to_string();
            let again = parse_server_line(&printed);
            assert_eq!(again.as_ref(), Ok(&message), "server round trip of {printed:?}");
        }
    }
}
