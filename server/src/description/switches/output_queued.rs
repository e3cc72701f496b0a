//! `switch = "output-queued"`: ideal output queues; no fields of its own.

use vesper_netmodels::SwitchKind;

use super::SwitchKindSpec;
use crate::description::error::SpecError;
use crate::description::fields::NetworkSpec;

/// Output-queued switches take no fields of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputQueuedSpec;

impl SwitchKindSpec for OutputQueuedSpec {
    fn take(_spec: &mut NetworkSpec) -> Self {
        OutputQueuedSpec
    }

    fn kind(&self, _seed: u64, _rings: bool) -> Result<SwitchKind, SpecError> {
        Ok(SwitchKind::OutputQueued)
    }
}
