//! The ideal network's event: what the network's event queue holds for it.

use crate::ids::MessageId;

/// The ideal network's event.
#[derive(Debug, Clone, Copy)]
pub(crate) enum IdealEvent {
    /// a whole message arrives
    Delivered { message: MessageId },
}
