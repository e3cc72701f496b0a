//! The writer that formats the records the sinks release, in order, into the `.prv`
//! body, then writes the header, `.pcf` and `.row` ([`ParaverWriter`]).

use std::fmt::Write as _;
use std::io;
use std::sync::Arc;

use super::layout::{Layout, NONE};
use super::options::ParaverOptions;
use super::output::TraceOutput;
use super::record::{
    Body, FLOW_CONTROL_RECEIVED, FLOW_CONTROL_SENT, HOL_BLOCKING, MAX_LEVEL, ROOM_WAIT, Record, SEGMENT,
    SEGMENT_MESSAGE, SEGMENT_NUMBER,
};
use crate::trace::summary::{LinkBytes, TraceSummary};

/// Formats and writes the records the sinks release, in order, then the header,
/// `.pcf` and `.row`.
#[derive(Debug)]
pub struct ParaverWriter<O: TraceOutput> {
    layout: Arc<Layout>,
    date: String,
    quantum: u64,
    pub(super) output: O,
    pub(super) scratch: Vec<Record>,
    line: String,
    max_level: u32,
    pub(super) summary: TraceSummary,
    /// per thread: whether it is a host's port (records between two are end to end)
    host_port: Vec<bool>,
    /// per thread: the bytes of the link records it sent, and their receiver
    link_bytes: Vec<(u64, u32)>,
    /// the first output error; nothing more is written after it
    error: Option<io::Error>,
}

impl<O: TraceOutput> ParaverWriter<O> {
    pub(super) fn new(
        layout: Arc<Layout>,
        options: &ParaverOptions,
        topology: &str,
        mut output: O,
    ) -> ParaverWriter<O> {
        let error = output.begin(&layout.header(&options.date, 0), topology).err();
        let threads = layout.threads.len();
        let mut host_port = vec![false; threads];
        for &t in layout.host_thread.iter().flatten().filter(|&&t| t != NONE) {
            host_port[t as usize] = true;
        }
        ParaverWriter {
            host_port,
            link_bytes: vec![(0, NONE); threads],
            summary: TraceSummary {
                tasks: layout.tasks(),
                threads: layout.threads(),
                ..TraceSummary::default()
            },
            layout,
            date: options.date.clone(),
            quantum: options.quantum_bytes.max(1),
            output,
            scratch: Vec::new(),
            line: String::new(),
            max_level: 0,
            error,
        }
    }

    /// Writes `records`, sorting them first unless `sorted`.
    pub(super) fn write_records(&mut self, records: &mut [Record], sorted: bool) {
        if !sorted {
            // Each source's part is sorted; keys differ across sources (see `Record`).
            records.sort_unstable();
        }
        for r in records.iter() {
            self.write(r);
        }
    }

    fn write(&mut self, r: &Record) {
        let ids = |thread: u32| {
            let (task, thread, _) = &self.layout.threads[thread as usize];
            (*task, *thread)
        };
        let (task, thread) = ids(r.thread);
        let line = &mut self.line;
        line.clear();
        let end = match r.body {
            Body::State { end_ns, level } => {
                self.summary.states += 1;
                self.max_level = self.max_level.max(level);
                let _ = writeln!(line, "1:0:1:{task}:{thread}:{}:{end_ns}:{level}", r.ns);
                end_ns
            }
            Body::Event { event_type, value } => {
                self.summary.events += 1;
                let _ = writeln!(line, "2:0:1:{task}:{thread}:{}:{event_type}:{value}", r.ns);
                r.ns
            }
            Body::Segment { started, tag, number } => {
                self.summary.events += 1;
                let _ = writeln!(
                    line,
                    "2:0:1:{task}:{thread}:{}:{SEGMENT}:{}:{SEGMENT_MESSAGE}:{tag}:{SEGMENT_NUMBER}:{number}",
                    r.ns,
                    u32::from(started)
                );
                r.ns
            }
            Body::Communication {
                physical_send_ns,
                receiver,
                logical_recv_ns,
                physical_recv_ns,
                size,
                tag,
            } => {
                self.summary.communications += 1;
                let (from, to) = (r.thread as usize, receiver as usize);
                if !(self.host_port[from] && self.host_port[to]) {
                    let link = &mut self.link_bytes[from];
                    link.0 += u64::from(size);
                    link.1 = receiver;
                }
                let (to_task, to_thread) = ids(receiver);
                let _ = writeln!(
                    line,
                    "3:0:1:{task}:{thread}:{}:{physical_send_ns}:0:1:{to_task}:{to_thread}:{logical_recv_ns}:{physical_recv_ns}:{size}:{tag}",
                    r.ns
                );
                physical_recv_ns.max(logical_recv_ns).max(physical_send_ns)
            }
        };
        self.summary.end_ns = self.summary.end_ns.max(end).max(r.ns);
        if self.error.is_none()
            && let Err(e) = self.output.write_all(self.line.as_bytes())
        {
            self.error = Some(e);
        }
    }

    /// The `.pcf`: every state a trace can hold (levels 1 to [`MAX_LEVEL`], whatever
    /// this one holds, so that no view of it shows an unknown state), coloured from
    /// yellow to dark red up to the highest level written; the event types.
    fn pcf(&self) -> String {
        let mut pcf = String::from(
            "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\nLOOK_BACK           100\n\
             SPEED               1\nFLAG_ICONS          ENABLED\nNUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\
             DEFAULT_SEMANTIC\n\nTHREAD_FUNC          State As Is\n\nSTATES\n0    Empty\n",
        );
        let q = self.quantum;
        let top = self.max_level.max(1);
        for k in 1..=MAX_LEVEL {
            let low = u64::from(k - 1).saturating_mul(q).saturating_add(1);
            if k == MAX_LEVEL {
                let _ = writeln!(pcf, "{k}    Backlog {low} bytes or more");
            } else {
                let high = u64::from(k).saturating_mul(q);
                let _ = writeln!(pcf, "{k}    Backlog {low}-{high} bytes");
            }
        }
        pcf.push_str("\nSTATES_COLOR\n0    {230,230,230}\n");
        for k in 1..=MAX_LEVEL {
            // From yellow (one quantum) to dark red (the highest level written, and
            // every level above it).
            let f = if top > 1 {
                f64::from(k.min(top) - 1) / f64::from(top - 1)
            } else {
                0.0
            };
            let (r, g) = (255.0 - 115.0 * f, 220.0 * (1.0 - f));
            let _ = writeln!(pcf, "{k}    {{{},{},0}}", r.round() as u32, g.round() as u32);
        }
        for (event_type, label, values) in [
            (
                FLOW_CONTROL_SENT,
                "Flow control signal sent",
                &[(1, "STOP"), (2, "GO")][..],
            ),
            (
                FLOW_CONTROL_RECEIVED,
                "Flow control signal received",
                &[(1, "STOP"), (2, "GO")][..],
            ),
            (HOL_BLOCKING, "Head-of-line blocking", &[(0, "End"), (1, "Start")][..]),
            (SEGMENT, "Segment transmission", &[(0, "End"), (1, "Start")][..]),
            (SEGMENT_MESSAGE, "Segment's message (communication tag)", &[][..]),
            (SEGMENT_NUMBER, "Segment number within its message", &[][..]),
            (
                ROOM_WAIT,
                "Waiting for a slot beyond the cable (bubble flow control)",
                &[(0, "End"), (1, "Start")][..],
            ),
        ] {
            let _ = writeln!(pcf, "\nEVENT_TYPE\n0    {event_type}    {label}");
            if !values.is_empty() {
                pcf.push_str("VALUES\n");
                for (value, name) in values {
                    let _ = writeln!(pcf, "{value}    {name}");
                }
            }
        }
        pcf
    }

    /// Writes the header, `.pcf` and `.row`; returns what the trace holds.
    pub(super) fn complete(&mut self) -> io::Result<TraceSummary> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.output.flush()?;
        let header = self.layout.header(&self.date, self.summary.end_ns);
        let pcf = self.pcf();
        let row = self.layout.row();
        self.output.complete(&header, &pcf, &row)?;
        let mut busiest: Option<(u64, usize)> = None;
        for (thread, &(bytes, _)) in self.link_bytes.iter().enumerate() {
            if bytes > 0 && busiest.is_none_or(|(most, _)| bytes > most) {
                busiest = Some((bytes, thread));
            }
        }
        self.summary.busiest_link = busiest.map(|(bytes, thread)| LinkBytes {
            from: self.layout.threads[thread].2.clone(),
            to: self.layout.threads[self.link_bytes[thread].1 as usize].2.clone(),
            bytes,
        });
        Ok(self.summary.clone())
    }
}
