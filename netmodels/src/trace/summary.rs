//! What a finished trace counted ([`TraceSummary`], [`LinkBytes`]) and which buffers a
//! port's backlog counts ([`BacklogCount`]): the words a trace writer and the network
//! share, kept low so that the network's interface can name them without the writer.

/// Which buffers of a port its backlog state counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BacklogCount {
    /// bytes waiting at the port's input (wormhole slack buffers, CIOQ input queues)
    Input,
    /// bytes waiting to leave by the port (output queues)
    Output,
    /// both
    #[default]
    Both,
}

/// What a finished trace holds: the records the writer produced and handed to its
/// output (an output that loses some, such as a stream to a collector that does not
/// keep up, counts its losses itself).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct TraceSummary {
    /// Paraver tasks (devices traced)
    pub tasks: u32,
    /// Paraver threads (ports traced)
    pub threads: u32,
    /// state records produced
    pub states: u64,
    /// event records produced
    pub events: u64,
    /// communication records produced
    pub communications: u64,
    /// the header's end time \[ns\]
    pub end_ns: u64,
    /// records that came after later ones had been written (0 unless the model breaks
    /// its time contract; written anyway, out of order)
    pub late_records: u64,
    /// messages still in the network at the end (their last link records are missing)
    pub unfinished_messages: u64,
    /// the link whose communication records carry the most bytes (ties: the first
    /// port in the `.row`); none without link records. End-to-end records (host port
    /// to host port) are not links.
    pub busiest_link: Option<LinkBytes>,
}

/// A link of the trace and the bytes of its communication records.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LinkBytes {
    /// the transmitting port (its `.row` name)
    pub from: String,
    /// the port at the far end
    pub to: String,
    /// the sizes of the link's records, summed
    pub bytes: u64,
}
