//! The client side of the co-simulation protocol, as Dimemas's network-server client
//! speaks it: a connection that reads replies exactly as the real client does
//! ([`connection`]), a replay engine ([`replay`]) that runs task programs against a
//! local ideal bus or a vesper server, and readers of Dimemas traces ([`dim`]) and
//! configurations ([`cfg`](mod@cfg)).
//!
//! In layers: [`input`] and [`connection`] at the ground; the replay on them; the
//! readers and writers of Dimemas's files ([`dim`], [`cfg`](mod@cfg), [`paraver`]) on top.

pub mod cfg;
pub mod connection;
pub mod dim;
pub mod input;
pub mod paraver;
pub mod replay;

pub use connection::{ClientError, LegacyConnection, Reply};
