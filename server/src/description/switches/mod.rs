//! Each switch kind's description, a file per kind: the fields it takes out of a
//! [`NetworkSpec`] (its typed spec, a variant of [`SwitchSpec`]) and the model's
//! [`SwitchKind`] they make. The registry `switch_kinds!` below makes `SwitchSpec` and
//! its dispatch from one line per kind, each named as in [`SwitchName`]; the fields are
//! declared with every other field in `super::fields`, where their claims name the
//! switches that take them.
//!
//! ```text
//!   NetworkSpec ──SwitchSpec::take──▶ SwitchSpec::Cioq(CioqSpec) ──kind──▶ SwitchKind::Cioq(CioqParams)
//! ```

mod cioq;
mod output_queued;
mod wormhole;

pub use cioq::CioqSpec;
pub(super) use cioq::cioq;
pub use output_queued::OutputQueuedSpec;
pub use wormhole::WormholeSpec;

use vesper_netmodels::SwitchKind;

use super::error::SpecError;
use super::fields::NetworkSpec;
use super::names::SwitchName;

/// A switch kind's description (see the [module documentation](self)).
pub trait SwitchKindSpec {
    /// Takes its fields out of `spec`: a field left behind is refused by its claim.
    fn take(spec: &mut NetworkSpec) -> Self;

    /// The switches described, their values checked; `seed`: the network's seed,
    /// `rings`: whether the topology has rings (a torus's), which some kinds must know.
    fn kind(&self, seed: u64, rings: bool) -> Result<SwitchKind, SpecError>;
}

/// Declares the switch kinds' descriptions: each line a kind of [`SwitchName`] and its
/// spec, which implements [`SwitchKindSpec`]. Gives [`SwitchSpec`] and its dispatch.
macro_rules! switch_kinds {
    ($( $(#[$doc:meta])* $kind:ident($spec:ty), )*) => {
        /// The switches, by kind, with the fields each kind takes.
        #[derive(Debug, Clone, PartialEq)]
        pub enum SwitchSpec {
            $( $(#[$doc])* $kind($spec), )*
        }

        impl SwitchSpec {
            /// The switches of `name`, their fields taken out of `spec`.
            pub(in crate::description) fn take(name: SwitchName, spec: &mut NetworkSpec) -> SwitchSpec {
                match name { $( SwitchName::$kind => SwitchSpec::$kind(<$spec as SwitchKindSpec>::take(spec)), )* }
            }

            /// Its name.
            pub fn name(&self) -> SwitchName {
                match self { $( SwitchSpec::$kind(_) => SwitchName::$kind, )* }
            }

            /// The switches described ([`SwitchKindSpec::kind`]).
            pub(in crate::description) fn kind(&self, seed: u64, rings: bool) -> Result<SwitchKind, SpecError> {
                match self { $( SwitchSpec::$kind(s) => s.kind(seed, rings), )* }
            }
        }
    };
}

switch_kinds! {
    /// `switch = "output-queued"`
    OutputQueued(OutputQueuedSpec),
    /// `switch = "cioq"`
    Cioq(CioqSpec),
    /// `switch = "wormhole"`
    Wormhole(WormholeSpec),
}
