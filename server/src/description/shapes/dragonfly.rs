//! `kind = "dragonfly"` (`p`, `a`, `h`, `g`, `arrangement`): routed minimally, or by
//! shortest paths.

use vesper_netmodels::{Arrangement, Dragonfly};

use super::ShapeKind;
use crate::config::{RoutingPolicy, Shape};
use crate::description::error::SpecError;
use crate::description::error::field;
use crate::description::fields::{Field, NetworkSpec};
use crate::description::names::{ArrangementName, RoutingName};

/// `kind = "dragonfly"`: `g` groups of `a` routers, each with `p` hosts and `h` global
/// cables; by default the balanced one of its `p` (`a = 2p`, `h = p`, `g = a·h + 1`).
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs, reason = "the fields are the description's fields of the same names")]
pub struct DragonflySpec {
    pub p: Option<u32>,
    pub a: Option<u32>,
    pub h: Option<u32>,
    pub g: Option<u32>,
    pub arrangement: Option<ArrangementName>,
}

impl ShapeKind for DragonflySpec {
    fn take(spec: &mut NetworkSpec) -> Self {
        DragonflySpec {
            p: spec.p.take(),
            a: spec.a.take(),
            h: spec.h.take(),
            g: spec.g.take(),
            arrangement: spec.arrangement.take(),
        }
    }

    fn shape(&self, _hosts: Option<u32>) -> Result<Shape, SpecError> {
        let p = self.p.ok_or_else(|| {
            field(
                Field::P,
                "a dragonfly needs its hosts a router, e.g. p = 4 (1,056 hosts)",
            )
        })?;
        let a = self.a.unwrap_or(p.saturating_mul(2));
        let h = self.h.unwrap_or(p);
        let g = self.g.unwrap_or(a.saturating_mul(h).saturating_add(1));
        let arrangement = match self.arrangement {
            None | Some(ArrangementName::Absolute) => Arrangement::Absolute,
            Some(ArrangementName::Relative) => Arrangement::Relative,
        };
        Dragonfly::new(p, a, h, g, arrangement)
            .map(Shape::Dragonfly)
            .map_err(|e| {
                let at = match e.field() {
                    Some("a") => Field::A,
                    Some("g") => Field::G,
                    _ => Field::P,
                };
                field(at, e.rule())
            })
    }

    fn fixed_hosts(&self) -> Option<(&'static str, &'static str)> {
        Some(("this dragonfly", "p·a·g"))
    }

    fn routing(&self, name: Option<RoutingName>, _seed: u64) -> Option<Result<RoutingPolicy, SpecError>> {
        Some(match name {
            None | Some(RoutingName::Minimal) => Ok(RoutingPolicy::Minimal),
            Some(RoutingName::ShortestPath) => Ok(RoutingPolicy::ShortestPath),
            Some(_) => Err(field(
                Field::Routing,
                "dragonflies route minimally (routing = \"minimal\") or by shortest paths",
            )),
        })
    }
}
