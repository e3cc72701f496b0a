//! The synchronisation with the replay clients: the listener that accepts them, the
//! driver thread that owns their sockets and the current run, each connection's
//! protocol state, and the coordinator that runs the conservative null-message
//! synchronisation over the network model.
//!
//! ```text
//!  listener (tokio) ──socket──▶ driver (one thread: sockets, runs) ─▶ session ─▶ coordinator ─▶ model
//! ```

pub mod coordinator;
pub mod driver;
pub mod listener;
pub mod rendezvous;
pub mod session;

/// Identifies a connection, in accept order.
pub type ClientId = u32;
