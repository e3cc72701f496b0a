//! The vesper server: a TCP listener for task-replay clients (Dimemas with its
//! network-server client, or vesper's own), a coordinator thread that owns the network
//! simulation and runs the conservative null-message synchronisation, and the
//! statistics report.
//!
//! ```text
//!  Dimemas ──TCP──┐  tokio listener (accept, TCP_NODELAY, limit)
//!  Dimemas ──TCP──┤        │ socket
//!                 │        ▼
//!                 └──▶ simulation thread: driver ─▶ session ─▶ coordinator ─▶ Simulation
//!                 ◀─── replies (≤ 500 bytes, one write each)
//! ```
//!
//! [`run`] is the library entry point, so tests start a server on `127.0.0.1:0`.

pub mod bench;
pub mod cli;
pub mod collect;
pub mod config;
pub mod description;
pub mod error;
pub mod log_budget;
pub mod memory;
pub mod network_summary;
pub mod network_trace;
pub mod replay_job;
pub mod report;
pub mod sync;
pub mod traffic_sweep;
pub mod translate;
pub mod view;

pub use config::{NetworkConfig, ServerConfig};
pub use description::preset;
pub use error::ServerError;
pub use report::Report;
pub use sync::driver::Served;
pub use sync::listener::{run, serve};
