//! `switch = "wormhole"` (`flit_bytes`, `buffer_bytes`, `bubble`, `arbitration`,
//! `granularity`, `initial_pointer`): Myrinet-like switches, flits under stop/go flow
//! control; bubble flow control by default on a topology with rings.

use vesper_netmodels::{Arbitration, Granularity, InitialPointer, SwitchKind, WormholeParams};

use super::SwitchKindSpec;
use crate::description::error::{SpecError, field};
use crate::description::fields::{Field, NetworkSpec};
use crate::description::names::{ArbitrationName, GranularityName, PointerSpec};

/// `switch = "wormhole"`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs, reason = "the fields are the description's fields of the same names")]
pub struct WormholeSpec {
    pub flit_bytes: Option<u32>,
    pub buffer_bytes: Option<u32>,
    pub bubble: Option<bool>,
    pub arbitration: Option<ArbitrationName>,
    pub granularity: Option<GranularityName>,
    pub initial_pointer: Option<PointerSpec>,
}

impl SwitchKindSpec for WormholeSpec {
    fn take(spec: &mut NetworkSpec) -> Self {
        WormholeSpec {
            flit_bytes: spec.flit_bytes.take(),
            buffer_bytes: spec.buffer_bytes.take(),
            bubble: spec.bubble.take(),
            arbitration: spec.arbitration.take(),
            granularity: spec.granularity.take(),
            initial_pointer: spec.initial_pointer.take(),
        }
    }

    /// The round-robin pointers start as `initial_pointer` says (random: drawn from
    /// `seed`); bubble flow control is on where the topology has `rings` unless said.
    fn kind(&self, seed: u64, rings: bool) -> Result<SwitchKind, SpecError> {
        let default = WormholeParams::default();
        let initial = match &self.initial_pointer {
            None => InitialPointer::Random { seed },
            Some(PointerSpec::Name(s)) if s == "random" => InitialPointer::Random { seed },
            Some(PointerSpec::Port(p)) => InitialPointer::Fixed(*p),
            Some(PointerSpec::Name(_)) => {
                return Err(field(Field::InitialPointer, "expected \"random\" or a port number"));
            }
        };
        let flit_bytes = self.flit_bytes.unwrap_or(default.flit_bytes);
        if flit_bytes == 0 {
            return Err(field(Field::FlitBytes, "a flit must hold at least one byte"));
        }
        Ok(SwitchKind::Wormhole(WormholeParams {
            flit_bytes,
            buffer_bytes: self.buffer_bytes.unwrap_or(default.buffer_bytes),
            bubble: self.bubble.unwrap_or(rings),
            arbitration: match self.arbitration.unwrap_or(ArbitrationName::RoundRobin) {
                ArbitrationName::RoundRobin => Arbitration::RoundRobin { initial },
                ArbitrationName::OldestFirst => Arbitration::OldestFirst,
            },
            granularity: match self.granularity.unwrap_or(GranularityName::Coarse) {
                GranularityName::Coarse => Granularity::Coarse,
                GranularityName::Fine => Granularity::Fine,
            },
        }))
    }
}
