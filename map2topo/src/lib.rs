//! map2topo: Myrinet map and route files, InfiniBand `ibnetdiscover` dumps, built-in
//! topologies written as maps, and route generation. Files become the project's
//! topology description ([`NamedTopology`]: a `vesper_netmodels::Topology` whose hosts
//! and switches keep their names), and topologies become files again.
//!
//! ```text
//!   tree.map ──read──▶ NamedTopology (one per rail) ──write──▶ tree.map
//!   routes   ──read──▶ explicit routes (absolute output ports) ──write──▶ routes
//!   ibnetdiscover dump (+ ibroute tables) ──read──▶ IbFabric (NamedTopology, LIDs, tables)
//! ```
//!
//! Modules: [`map`] (map files, read and written), [`routes`] (route files, canonical
//! and Myrinet), [`generate`] (route generation, the deadlock check, link conflicts),
//! [`ibnet`] (InfiniBand dumps), [`marenostrum`] (the map of a MareNostrum-sized
//! machine, for tests and examples).

mod error;
pub mod generate;
pub mod ibnet;
pub mod map;
pub mod marenostrum;
mod named;
pub mod routes;
mod shape;

pub use error::FileError;
pub use ibnet::{
    Forward, IbError, IbErrorKind, IbFabric, MAX_DUMP_BYTES, MAX_TABLES_BYTES, read_forwarding_tables,
    read_ibnetdiscover,
};
pub use map::{
    MAX_MAP_BYTES, MapError, MapErrorKind, MapFile, MapLink, MapNode, NodeKind, WriteError, WriteOptions, read_map,
    write_map,
};
pub use named::NamedTopology;
pub use shape::MapShape;
