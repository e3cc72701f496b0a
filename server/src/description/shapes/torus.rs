//! `kind = "torus"` and `kind = "mesh"` (`dims`), `kind = "hypercube"` (`dimensions`),
//! each with `hosts_per_switch`: routed in dimension order, and only so.

use vesper_netmodels::{Torus, TorusError};

use super::ShapeKind;
use crate::config::{RoutingPolicy, Shape};
use crate::description::error::{At, SpecError, field};
use crate::description::fields::{Field, NetworkSpec};
use crate::description::names::RoutingName;

/// `kind = "torus"` (`WRAP`) or `kind = "mesh"`: switches in a grid of `dims`.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs, reason = "the fields are the description's fields of the same names")]
pub struct GridSpec<const WRAP: bool> {
    pub dims: Option<Vec<u32>>,
    pub hosts_per_switch: Option<u32>,
}

/// `kind = "torus"`.
pub type TorusSpec = GridSpec<true>;

/// `kind = "mesh"`: a torus without its wrap-around cables.
pub type MeshSpec = GridSpec<false>;

/// `kind = "hypercube"`.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs, reason = "the fields are the description's fields of the same names")]
pub struct HypercubeSpec {
    pub dimensions: Option<u32>,
    pub hosts_per_switch: Option<u32>,
}

/// A torus, mesh or hypercube made by `make` with `per_switch` hosts a switch; an error
/// is said of `dims_field` (`dims`, or `dimensions` for a hypercube), or of
/// `hosts_per_switch` when only the hosts make it too large.
fn made(
    make: impl Fn(u32) -> Result<Torus, TorusError>,
    per_switch: u32,
    dims_field: Field,
) -> Result<Shape, SpecError> {
    let hosts_at_fault = per_switch > 1 && make(1).is_ok();
    make(per_switch).map(Shape::Torus).map_err(|e| {
        let (at, index) = match e {
            TorusError::TooLarge if hosts_at_fault => (Field::HostsPerSwitch, None),
            TorusError::NoHosts => (Field::HostsPerSwitch, None),
            TorusError::TooSmall(i) if dims_field == Field::Dims => (Field::Dims, Some(i)),
            _ => (dims_field, None),
        };
        SpecError::Field {
            at: At { index, ..At::field(at) },
            rule: e.rule().to_string(),
        }
    })
}

/// Dimension order, the one routing of tori, meshes and hypercubes.
fn dimension_order(name: Option<RoutingName>) -> Option<Result<RoutingPolicy, SpecError>> {
    Some(match name {
        None | Some(RoutingName::DimensionOrder) => Ok(RoutingPolicy::DimensionOrder),
        Some(_) => Err(field(
            Field::Routing,
            "tori, meshes and hypercubes route in dimension order (routing = \"dimension-order\")",
        )),
    })
}

/// Where the hosts of a torus, mesh or hypercube come from.
const FIXED_HOSTS: (&str, &str) = ("this network", "its switches × hosts_per_switch");

impl<const WRAP: bool> ShapeKind for GridSpec<WRAP> {
    fn take(spec: &mut NetworkSpec) -> Self {
        GridSpec {
            dims: spec.dims.take(),
            hosts_per_switch: spec.hosts_per_switch.take(),
        }
    }

    fn shape(&self, _hosts: Option<u32>) -> Result<Shape, SpecError> {
        let name = if WRAP { "torus" } else { "mesh" };
        let dims = self
            .dims
            .clone()
            .ok_or_else(|| field(Field::Dims, format!("a {name} needs its dims, e.g. dims = [8, 8, 8]")))?;
        made(
            |p| Torus::new(dims.clone(), WRAP, p),
            self.hosts_per_switch.unwrap_or(1),
            Field::Dims,
        )
    }

    fn fixed_hosts(&self) -> Option<(&'static str, &'static str)> {
        Some(FIXED_HOSTS)
    }

    fn routing(&self, name: Option<RoutingName>, _seed: u64) -> Option<Result<RoutingPolicy, SpecError>> {
        dimension_order(name)
    }
}

impl ShapeKind for HypercubeSpec {
    fn take(spec: &mut NetworkSpec) -> Self {
        HypercubeSpec {
            dimensions: spec.dimensions.take(),
            hosts_per_switch: spec.hosts_per_switch.take(),
        }
    }

    fn shape(&self, _hosts: Option<u32>) -> Result<Shape, SpecError> {
        let n = self.dimensions.ok_or_else(|| {
            field(
                Field::Dimensions,
                "a hypercube needs its dimensions, e.g. dimensions = 8",
            )
        })?;
        if n == 0 {
            return Err(field(Field::Dimensions, "a hypercube needs at least one dimension"));
        }
        made(
            |p| Torus::hypercube(n, p),
            self.hosts_per_switch.unwrap_or(1),
            Field::Dimensions,
        )
    }

    fn fixed_hosts(&self) -> Option<(&'static str, &'static str)> {
        Some(FIXED_HOSTS)
    }

    fn routing(&self, name: Option<RoutingName>, _seed: u64) -> Option<Result<RoutingPolicy, SpecError>> {
        dimension_order(name)
    }
}
