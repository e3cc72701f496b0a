//! Id newtypes: components live in arenas (`Vec`s) and refer to each other by index.

use std::hash::Hasher;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
        pub struct $name(pub u32);

        impl $name {
            /// The arena index.
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id_type!(
    /// A host (an adapter and its processors), 0-based.
    HostId
);
id_type!(
    /// A switch, 0-based.
    SwitchId
);
id_type!(
    /// An output port anywhere in the network (hosts' and switches' alike).
    PortId
);
id_type!(
    /// A message in flight inside the model (a slab slot, reused after delivery).
    MessageId
);

/// A device that has ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Device {
    /// a host's adapter
    Host(HostId),
    /// a switch
    Switch(SwitchId),
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Host(h) => write!(f, "host{h}"),
            Device::Switch(s) => write!(f, "sw{s}"),
        }
    }
}

/// Hashes message numbers (trusted, consecutive integers) with one multiplication
/// (Fibonacci hashing), which spreads them over every bit: the default hasher, built
/// against keys chosen to collide, cost 2 % of a split run.
#[derive(Debug, Default)]
pub(crate) struct NumberHasher(u64);

impl Hasher for NumberHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
