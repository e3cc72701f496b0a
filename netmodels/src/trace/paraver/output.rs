//! Where a trace goes: the [`TraceOutput`] interface, a trace kept in memory
//! ([`MemoryOutput`]) and one kept nowhere ([`NoOutput`]).

use std::io::{self, Write};

/// Where the trace goes. The `.prv` body (its records) is written through
/// [`Write`]; the header, which holds the trace's end time, comes last, with the
/// `.pcf` and `.row`. The topology text (`FILE.topology`, see [`topology`](super::topology)) is known
/// from the start.
pub trait TraceOutput: Write {
    /// Called once before any record, with the header as far as it is known (end time
    /// 0) and the topology text: streams send them, files wait for
    /// [`TraceOutput::complete`].
    fn begin(&mut self, _provisional_header: &str, _topology: &str) -> io::Result<()> {
        Ok(())
    }

    /// Called once after the last record: the final header line (no newline) and the
    /// contents of the `.pcf` and `.row` files.
    fn complete(&mut self, header: &str, pcf: &str, row: &str) -> io::Result<()>;
}

/// A trace kept in memory (tests, small runs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryOutput {
    /// the records
    pub body: Vec<u8>,
    /// the final header (empty until complete)
    pub header: String,
    /// the `.pcf`
    pub pcf: String,
    /// the `.row`
    pub row: String,
    /// the topology text (`FILE.topology`)
    pub topology: String,
}

impl MemoryOutput {
    /// The whole `.prv`: header and records.
    pub fn prv(&self) -> String {
        format!("{}\n{}", self.header, String::from_utf8_lossy(&self.body))
    }
}

impl Write for MemoryOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.body.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl TraceOutput for MemoryOutput {
    fn begin(&mut self, _provisional_header: &str, topology: &str) -> io::Result<()> {
        self.topology = topology.to_string();
        Ok(())
    }

    fn complete(&mut self, header: &str, pcf: &str, row: &str) -> io::Result<()> {
        self.header = header.to_string();
        self.pcf = pcf.to_string();
        self.row = row.to_string();
        Ok(())
    }
}

/// A trace kept nowhere: what the ranks other than 0 write into, rank 0 writing the
/// whole trace (see [`TracedNetwork::build_on_ranks`](super::TracedNetwork::build_on_ranks)).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoOutput;

impl Write for NoOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl TraceOutput for NoOutput {
    fn complete(&mut self, _header: &str, _pcf: &str, _row: &str) -> io::Result<()> {
        Ok(())
    }
}
