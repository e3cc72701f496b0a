//! The client side of the co-simulation protocol, as Dimemas's network-server client
//! speaks it. The replay engine (traces, tasks, collectives) builds on this; for now
//! it is the scripted client that tests and benchmarks use to talk to a server exactly
//! the way the real client does.

pub mod connection;

pub use connection::{ClientError, LegacyConnection, Reply};
