//! `kind = "crossbar"`: one switch with a port per host; `hosts` sizes it.

use super::ShapeKind;
use crate::config::{NetworkConfig, RoutingPolicy, Shape};
use crate::description::error::SpecError;
use crate::description::fields::NetworkSpec;
use crate::description::names::RoutingName;
use vesper_netmodels::topology::Crossbar;

/// A crossbar takes no fields of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrossbarSpec;

impl ShapeKind for CrossbarSpec {
    fn take(_spec: &mut NetworkSpec) -> Self {
        CrossbarSpec
    }

    /// The crossbar of `hosts` (256 by default); the count is checked with the routing
    /// (`SwitchedSpec::fabric`), as a fixed shape's hosts are.
    fn shape(&self, hosts: Option<u32>) -> Result<Shape, SpecError> {
        Ok(Shape::Crossbar(Crossbar {
            hosts: hosts.unwrap_or(NetworkConfig::default().hosts),
        }))
    }

    fn fixed_hosts(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    fn routing(&self, _name: Option<RoutingName>, _seed: u64) -> Option<Result<RoutingPolicy, SpecError>> {
        None
    }
}
