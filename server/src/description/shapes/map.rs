//! `kind = "map"`: a network read from a Myrinet map file (`map`), one rail per host
//! port, routed by shortest paths, up*/down* or its route files (`routes`,
//! `route_policy`); its device types may take switches and adapters of their own
//! (`[network.models.TYPE]`). A map is read with its rails, by
//! `SwitchedSpec::map_fabric` (`super::super::resolve`), not one shape at a time.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::ShapeKind;
use crate::config::{RoutingPolicy, Shape};
use crate::description::error::{SpecError, field};
use crate::description::fields::{Field, NetworkSpec};
use crate::description::names::{ModelSpec, RailPolicyName, RoutePolicyName, RoutingName};

/// `kind = "map"`.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs, reason = "the fields are the description's fields of the same names")]
pub struct MapSpec {
    pub map: Option<PathBuf>,
    pub routes: Option<Vec<PathBuf>>,
    pub route_policy: Option<RoutePolicyName>,
    pub models: Option<BTreeMap<String, ModelSpec>>,
    pub rail_policy: Option<RailPolicyName>,
    pub rail_threshold_bytes: Option<u32>,
}

impl ShapeKind for MapSpec {
    fn take(spec: &mut NetworkSpec) -> Self {
        MapSpec {
            map: spec.map.take(),
            routes: spec.routes.take(),
            route_policy: spec.route_policy.take(),
            models: spec.models.take(),
            rail_policy: spec.rail_policy.take(),
            rail_threshold_bytes: spec.rail_threshold_bytes.take(),
        }
    }

    /// Not one shape: a map is read with its rails (see the module documentation), so
    /// this is never asked.
    fn shape(&self, _hosts: Option<u32>) -> Result<Shape, SpecError> {
        Err(field(Field::Map, "a map is read with its rails, not as one shape"))
    }

    /// The map's reader checks the hosts against the map's.
    fn fixed_hosts(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// Chosen with the map's routes (`SwitchedSpec::map_routing`).
    fn routing(&self, _name: Option<RoutingName>, _seed: u64) -> Option<Result<RoutingPolicy, SpecError>> {
        None
    }
}
