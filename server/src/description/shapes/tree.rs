//! `kind = "xgft"` (`m`, `w`) and `kind = "kary-ntree"` (`k`, `n`, `k_up`): fat trees,
//! routed d-mod-k (the default), s-mod-k, at random or for a pattern; their levels may
//! take switches of their own (`[network.levels.N]`).

use std::collections::BTreeMap;

use vesper_netmodels::{Xgft, XgftError};

use super::ShapeKind;
use crate::config::{RoutingPolicy, Shape};
use crate::description::error::{SpecError, field};
use crate::description::fields::{Field, NetworkSpec};
use crate::description::names::{LevelSpec, RoutingName};

/// A fat tree's description: its size, as its kind gives it, and its levels' tables.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeSpec<S> {
    /// the fields that size it
    pub size: S,
    /// `[network.levels.N]`
    pub levels: Option<BTreeMap<String, LevelSpec>>,
}

/// `kind = "xgft"`.
pub type XgftSpec = TreeSpec<XgftSize>;

/// `kind = "kary-ntree"`.
pub type KaryNtreeSpec = TreeSpec<KaryNtreeSize>;

/// What sizes a tree of one kind.
pub trait TreeSize {
    /// Takes its fields out of `spec`.
    fn take(spec: &mut NetworkSpec) -> Self;
    /// The tree, its values checked.
    fn tree(&self) -> Result<Shape, SpecError>;
}

/// An XGFT's `m` and `w`.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs, reason = "the fields are the description's fields of the same names")]
pub struct XgftSize {
    pub m: Option<Vec<u32>>,
    pub w: Option<Vec<u32>>,
}

/// A k-ary n-tree's `k`, `n` and `k_up`.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs, reason = "the fields are the description's fields of the same names")]
pub struct KaryNtreeSize {
    pub k: Option<u32>,
    pub n: Option<u32>,
    pub k_up: Option<u32>,
}

/// The tree `built` makes, or its error said of `at_fault`.
fn tree(built: Result<Xgft, XgftError>, at_fault: Field) -> Result<Shape, SpecError> {
    built.map(Shape::Xgft).map_err(|e| field(at_fault, e.rule()))
}

impl TreeSize for XgftSize {
    fn take(spec: &mut NetworkSpec) -> Self {
        XgftSize {
            m: spec.m.take(),
            w: spec.w.take(),
        }
    }

    fn tree(&self) -> Result<Shape, SpecError> {
        let m = self
            .m
            .clone()
            .ok_or_else(|| field(Field::M, "an XGFT needs m, e.g. m = [16, 16]"))?;
        let w = self
            .w
            .clone()
            .ok_or_else(|| field(Field::W, "an XGFT needs w, e.g. w = [1, 16]"))?;
        tree(Xgft::new(m, w), Field::M)
    }
}

impl TreeSize for KaryNtreeSize {
    fn take(spec: &mut NetworkSpec) -> Self {
        KaryNtreeSize {
            k: spec.k.take(),
            n: spec.n.take(),
            k_up: spec.k_up.take(),
        }
    }

    fn tree(&self) -> Result<Shape, SpecError> {
        let k = self
            .k
            .ok_or_else(|| field(Field::K, "a k-ary n-tree needs k, e.g. k = 16"))?;
        let n = self
            .n
            .ok_or_else(|| field(Field::N, "a k-ary n-tree needs n, e.g. n = 2"))?;
        if k < 2 || n == 0 {
            let at = if k < 2 { Field::K } else { Field::N };
            return Err(field(at, "a k-ary n-tree needs k ≥ 2 and n ≥ 1"));
        }
        let up = self.k_up.unwrap_or(k);
        if up == 0 || up > k {
            return Err(field(Field::KUp, format!("between 1 and k = {k}")));
        }
        // Too large with k = 2 as well: the levels are at fault.
        let at = if Xgft::kary_ntree(2, n).is_err() {
            Field::N
        } else {
            Field::K
        };
        tree(Xgft::thin_tree(k, n, up), at)
    }
}

impl<S: TreeSize> ShapeKind for TreeSpec<S> {
    fn take(spec: &mut NetworkSpec) -> Self {
        TreeSpec {
            size: S::take(spec),
            levels: spec.levels.take(),
        }
    }

    fn shape(&self, _hosts: Option<u32>) -> Result<Shape, SpecError> {
        self.size.tree()
    }

    fn fixed_hosts(&self) -> Option<(&'static str, &'static str)> {
        Some(("this tree", "the product of its m"))
    }

    fn routing(&self, name: Option<RoutingName>, seed: u64) -> Option<Result<RoutingPolicy, SpecError>> {
        Some(Ok(match name {
            None | Some(RoutingName::DModK) => RoutingPolicy::DModK,
            Some(RoutingName::SModK) => RoutingPolicy::SModK,
            Some(RoutingName::Random) => RoutingPolicy::Random { seed },
            Some(RoutingName::PatternAware) => RoutingPolicy::PatternAware(None),
            Some(
                RoutingName::ShortestPath
                | RoutingName::DimensionOrder
                | RoutingName::Minimal
                | RoutingName::Valiant
                | RoutingName::Ugal
                | RoutingName::UpDown,
            ) => {
                return None;
            }
        }))
    }

    fn levels(&self) -> Option<&BTreeMap<String, LevelSpec>> {
        self.levels.as_ref()
    }
}
