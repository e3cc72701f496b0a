//! `kind = "dragonfly"` (`p`, `a`, `h`, `g`, `arrangement`): routed minimally, or by
//! shortest paths.

use vesper_netmodels::{Arrangement, Dragonfly};

use super::ShapeKind;
use crate::config::{RoutingPolicy, Shape};
use crate::description::error::SpecError;
use crate::description::error::field;
use crate::description::fields::{Field, NetworkSpec};
use crate::description::names::{ArrangementName, RoutingName};
use crate::description::resolve::step_delay;

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
    pub ugal_threshold: Option<u64>,
    pub global_link_latency_ns: Option<f64>,
}

/// UGAL-L's threshold when not given: BookSim's 30 flits, of vesper's 8-byte flits.
pub const UGAL_THRESHOLD_BYTES: u64 = 240;

impl ShapeKind for DragonflySpec {
    fn take(spec: &mut NetworkSpec) -> Self {
        DragonflySpec {
            p: spec.p.take(),
            a: spec.a.take(),
            h: spec.h.take(),
            g: spec.g.take(),
            arrangement: spec.arrangement.take(),
            ugal_threshold: spec.ugal_threshold.take(),
            global_link_latency_ns: spec.global_link_latency_ns.take(),
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
        let global = self
            .global_link_latency_ns
            .map(|ns| step_delay(ns, Field::GlobalLinkLatencyNs))
            .transpose()?;
        Dragonfly::new(p, a, h, g, arrangement)
            .map(|d| Shape::Dragonfly(d.with_global_propagation(global)))
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

    fn routing(&self, name: Option<RoutingName>, seed: u64) -> Option<Result<RoutingPolicy, SpecError>> {
        if self.ugal_threshold.is_some() && name != Some(RoutingName::Ugal) {
            return Some(Err(field(
                Field::UgalThreshold,
                "only routing = \"ugal\" has a threshold",
            )));
        }
        Some(match name {
            None | Some(RoutingName::Minimal) => Ok(RoutingPolicy::Minimal),
            Some(RoutingName::Valiant) => Ok(RoutingPolicy::Valiant { seed }),
            Some(RoutingName::Ugal) => Ok(RoutingPolicy::Ugal {
                seed,
                threshold: self.ugal_threshold.unwrap_or(UGAL_THRESHOLD_BYTES),
            }),
            Some(RoutingName::ShortestPath) => Ok(RoutingPolicy::ShortestPath),
            Some(_) => Err(field(
                Field::Routing,
                "dragonflies route minimal, valiant, ugal or shortest-path",
            )),
        })
    }
}
