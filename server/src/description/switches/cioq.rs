//! `switch = "cioq"` (`speedup`, `virtual_output_queues`): input and output queues, a
//! crossbar with a speedup. Also the kind of `[network.levels.N]` and
//! `[network.models.TYPE]` tables that name it ([`cioq`]).

use vesper_netmodels::{CioqParams, SwitchKind};

use super::SwitchKindSpec;
use crate::description::error::{At, SpecError, Table};
use crate::description::fields::{Field, NetworkSpec};

/// `switch = "cioq"`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs, reason = "the fields are the description's fields of the same names")]
pub struct CioqSpec {
    pub speedup: Option<u32>,
    pub virtual_output_queues: Option<bool>,
}

impl SwitchKindSpec for CioqSpec {
    fn take(spec: &mut NetworkSpec) -> Self {
        CioqSpec {
            speedup: spec.speedup.take(),
            virtual_output_queues: spec.virtual_output_queues.take(),
        }
    }

    fn kind(&self, _seed: u64, _rings: bool) -> Result<SwitchKind, SpecError> {
        cioq(None, self.speedup, self.virtual_output_queues)
    }
}

/// CIOQ switches of `speedup` and `voq`, for the network or for the switches of a
/// `table` (a level's, a model's).
pub(in crate::description) fn cioq(
    table: Option<&Table>,
    speedup: Option<u32>,
    voq: Option<bool>,
) -> Result<SwitchKind, SpecError> {
    let speedup = speedup.unwrap_or(1);
    if speedup == 0 {
        return Err(SpecError::Field {
            at: At {
                table: table.cloned(),
                ..At::field(Field::Speedup)
            },
            rule: "at least 1".into(),
        });
    }
    Ok(SwitchKind::Cioq(CioqParams {
        speedup,
        virtual_output_queues: voq.unwrap_or(false),
    }))
}
