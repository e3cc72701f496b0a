//! Each shape's description, a file per kind: the fields it takes out of a
//! [`NetworkSpec`] (its typed spec, a variant of [`ShapeSpec`]), the routings it takes,
//! and the [`Shape`] they make. The registry `shape_kinds!` below makes `ShapeSpec` and
//! its dispatch (a `match`, static) from one line per kind; the fields themselves are
//! declared with every other field in `super::fields` (one schema, one set of flags),
//! where their claims name the kinds that take them.
//!
//! ```text
//!   NetworkSpec ──ShapeSpec::take──▶ ShapeSpec::Torus(TorusSpec) ──shape──▶ Shape::Torus(Torus)
//!                                                                ──routing──▶ RoutingPolicy
//! ```

mod crossbar;
mod dragonfly;
mod map;
mod torus;
mod tree;

use std::collections::BTreeMap;

pub use crossbar::CrossbarSpec;
pub use dragonfly::DragonflySpec;
pub use map::MapSpec;
pub use torus::{HypercubeSpec, MeshSpec, TorusSpec};
pub use tree::{KaryNtreeSpec, XgftSpec};

use super::error::{SpecError, field};
use super::fields::{Field, NetworkSpec};
use super::names::{KindName, LevelSpec, RoutingName};
use crate::config::{RoutingPolicy, Shape};

/// A shape's description (see the [module documentation](self)).
pub trait ShapeKind {
    /// Takes its fields out of `spec`: a field left behind is refused by its claim.
    fn take(spec: &mut NetworkSpec) -> Self;

    /// The shape described, its values checked; `hosts`: the description's `hosts`,
    /// which only a crossbar takes as its size (see [`ShapeKind::fixed_hosts`]).
    fn shape(&self, hosts: Option<u32>) -> Result<Shape, SpecError>;

    /// How a shape of fixed hosts says so when `hosts` gives another count: what it is
    /// and where its hosts come from (`("this tree", "the product of its m")`); `None`:
    /// `hosts` sizes it.
    fn fixed_hosts(&self) -> Option<(&'static str, &'static str)>;

    /// The routing it takes by `name` (`None`: no `routing` given), when the kind
    /// decides; `None`: the rules of every kind (shortest paths by default or by name,
    /// the other names refused with the kinds they route).
    fn routing(&self, name: Option<RoutingName>, seed: u64) -> Option<Result<RoutingPolicy, SpecError>>;

    /// The `[network.levels.N]` tables, for a kind built in levels.
    fn levels(&self) -> Option<&BTreeMap<String, LevelSpec>> {
        None
    }
}

/// Declares the shapes' descriptions: each line a kind of [`KindName`] and its spec,
/// which implements [`ShapeKind`]. Gives [`ShapeSpec`] and its dispatch.
macro_rules! shape_kinds {
    ($( $(#[$doc:meta])* $kind:ident($spec:ty), )*) => {
        /// The arrangement of the switches, by kind, with the fields each kind takes.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ShapeSpec {
            $( $(#[$doc])* $kind($spec), )*
        }

        impl ShapeSpec {
            /// The kind it is of.
            pub fn kind(&self) -> KindName {
                match self { $( ShapeSpec::$kind(_) => KindName::$kind, )* }
            }

            /// The shape of a network of `kind`, its fields taken out of `spec`
            /// (`None`: `kind` is no shape: the ideal network, multi-rail).
            pub(in crate::description) fn take(kind: KindName, spec: &mut NetworkSpec) -> Option<ShapeSpec> {
                match kind {
                    $( KindName::$kind => Some(ShapeSpec::$kind(<$spec as ShapeKind>::take(spec))), )*
                    _ => None,
                }
            }
        }

        /// Each call goes to the kind's spec ([`ShapeKind`] says what each does).
        impl ShapeSpec {
            /// The shape described ([`ShapeKind::shape`]).
            pub(in crate::description) fn shape(&self, hosts: Option<u32>) -> Result<Shape, SpecError> {
                match self { $( ShapeSpec::$kind(s) => s.shape(hosts), )* }
            }
            /// Whether its hosts are fixed ([`ShapeKind::fixed_hosts`]).
            pub(in crate::description) fn fixed_hosts(&self) -> Option<(&'static str, &'static str)> {
                match self { $( ShapeSpec::$kind(s) => s.fixed_hosts(), )* }
            }
            /// The routing it takes by name ([`ShapeKind::routing`], then the rules of
            /// every kind).
            pub(in crate::description) fn routing(
                &self,
                name: Option<RoutingName>,
                seed: u64,
            ) -> Result<RoutingPolicy, SpecError> {
                let own = match self { $( ShapeSpec::$kind(s) => s.routing(name, seed), )* };
                own.unwrap_or_else(|| any_kind_routing(name))
            }
            /// Its `[network.levels.N]` tables ([`ShapeKind::levels`]).
            pub(in crate::description) fn levels(&self) -> Option<&BTreeMap<String, LevelSpec>> {
                match self { $( ShapeSpec::$kind(s) => s.levels(), )* }
            }
        }
    };
}

shape_kinds! {
    /// `kind = "crossbar"`
    Crossbar(CrossbarSpec),
    /// `kind = "xgft"`
    Xgft(XgftSpec),
    /// `kind = "kary-ntree"`
    KaryNtree(KaryNtreeSpec),
    /// `kind = "torus"`
    Torus(TorusSpec),
    /// `kind = "mesh"`
    Mesh(MeshSpec),
    /// `kind = "hypercube"`
    Hypercube(HypercubeSpec),
    /// `kind = "dragonfly"`
    Dragonfly(DragonflySpec),
    /// `kind = "map"`
    Map(MapSpec),
}

/// The routing of a network whose kind does not decide (see [`ShapeKind::routing`]):
/// shortest paths, by default or by name; the other names route other kinds.
fn any_kind_routing(name: Option<RoutingName>) -> Result<RoutingPolicy, SpecError> {
    match name {
        None | Some(RoutingName::ShortestPath) => Ok(RoutingPolicy::ShortestPath),
        Some(RoutingName::UpDown) => Err(field(Field::Routing, "up-down routes maps (kind = \"map\")")),
        Some(RoutingName::DimensionOrder) => Err(field(
            Field::Routing,
            "dimension-order routes tori, meshes and hypercubes",
        )),
        Some(RoutingName::Minimal | RoutingName::Valiant | RoutingName::Ugal) => Err(field(
            Field::Routing,
            "minimal, valiant and ugal route dragonflies (kind = \"dragonfly\")",
        )),
        Some(RoutingName::DModK | RoutingName::SModK | RoutingName::Random | RoutingName::PatternAware) => Err(field(
            Field::Routing,
            "d-mod-k, s-mod-k, random and pattern-aware route fat trees (kind = \"xgft\" or \"kary-ntree\")",
        )),
    }
}
