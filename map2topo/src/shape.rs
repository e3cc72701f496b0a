//! [`MapShape`]: a network read from a map file as a [`Shape`], beside the crossbar,
//! the trees and the tori of netmodels: whatever its cables, it routes by shortest paths
//! or explicit routes, and its diameter is walked from its cables.

use std::sync::Arc;

use vesper_netmodels::topology::{Routing, Shape, ShapeCounts, TopologyError};
use vesper_netmodels::{Cable, LinkParams, Topology};

use crate::named::NamedTopology;

/// One rail of a map file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapShape {
    /// the file, for descriptions
    pub file: String,
    /// the devices, their names and cables
    pub net: Arc<NamedTopology>,
}

impl Shape for MapShape {
    fn name(&self) -> String {
        format!("map {}", self.file)
    }

    fn describe(&self) -> String {
        let t = &self.net.topology;
        format!(
            "map {} ({} hosts, {} switches)",
            self.file,
            t.hosts,
            self.net.switch_names.len()
        )
    }

    fn counts(&self) -> ShapeCounts {
        ShapeCounts::of(&self.net.topology)
    }

    /// The map's cables, every one `link` (a map gives no rates), routed by shortest
    /// paths.
    fn try_topology(&self, link: LinkParams) -> Result<Topology, TopologyError> {
        let t = &self.net.topology;
        let mut cables = Vec::new();
        cables
            .try_reserve_exact(t.cables.len())
            .map_err(|_| TopologyError::NoRoom {
                what: "cables",
                count: t.cables.len(),
                bytes: t.cables.len() as u128 * size_of::<Cable>() as u128,
            })?;
        cables.extend(t.cables.iter().map(|&cable| Cable { link, ..cable }));
        Ok(Topology {
            hosts: t.hosts,
            switch_ports: t.switch_ports.clone(),
            cables,
            routing: Routing::ShortestPath,
        })
    }

    fn diameter_links(&self) -> Option<u32> {
        crate::generate::diameter(&self.net.topology)
    }

    fn bisection_cables(&self) -> Option<u64> {
        None
    }
}
