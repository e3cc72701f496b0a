//! map2topo: Myrinet map and route files, XGFT and built-in topologies to map files,
//! and route generation (issue "map2topo"). It turns files into the project's topology
//! description (`vesper_netmodels::Topology`).
//!
//! Nothing is implemented yet: the readers, writers and route generation arrive with
//! their own issue. The crate exists now so that the workspace has its final shape and
//! the dependency direction (`map2topo → netmodels`) is fixed.
