//! Id newtypes: components live in arenas (`Vec`s) and refer to each other by index.

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
