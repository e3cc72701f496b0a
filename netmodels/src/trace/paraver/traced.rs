//! A (multi-rail, maybe split) network writing its Paraver trace as it runs
//! ([`TracedNetwork`]): the sinks in the network, the writer after them, and the
//! collective writing steps on ranks.

use std::io;
use std::sync::Arc;

use super::error::TraceError;
use super::layout::Layout;
use super::options::ParaverOptions;
use super::output::TraceOutput;
use super::record::{put_record, record};
use super::sink::ParaverSink;
use super::topology;
use super::writer::ParaverWriter;
use crate::builder::NetworkBuilder;
use crate::message::{Delivery, InjectError, MessageSpec};
use crate::network::Network;
use crate::partition::ranks::{Ranks, Reduce, Words};
use crate::partition::{Followed, Lead, Partitioned, SplitError, TraceStep};
use crate::rails::MultiRail;
use crate::time::SimTime;
use crate::topology::multirail::RailPolicy;
use crate::trace::TraceSink;
use crate::trace::summary::TraceSummary;

/// A (multi-rail) network writing its Paraver trace as it runs.
#[derive(Debug)]
pub struct TracedNetwork<O: TraceOutput> {
    net: MultiRail<ParaverSink>,
    writer: ParaverWriter<O>,
    /// longest stretch of simulated time run before writing out
    chunk: SimTime,
    finished: bool,
}

impl<O: TraceOutput> TracedNetwork<O> {
    /// Builds the rails (one builder each, joined by `policy`) tracing into `output`.
    pub fn build(
        rails: Vec<NetworkBuilder>,
        policy: RailPolicy,
        options: &ParaverOptions,
        output: O,
    ) -> Result<TracedNetwork<O>, TraceError> {
        TracedNetwork::build_split(rails, policy, options, output, 1)
    }

    /// [`Self::build`], every rail split into `parts` partitions on threads (see
    /// [`crate::partition`]): each partition has its own sink, and the trace is the
    /// one the network whole writes.
    pub fn build_split(
        rails: Vec<NetworkBuilder>,
        policy: RailPolicy,
        options: &ParaverOptions,
        output: O,
        parts: u32,
    ) -> Result<TracedNetwork<O>, TraceError> {
        TracedNetwork::build_as(rails, policy, options, output, |b, sink| {
            Partitioned::build_traced(b, parts, |_| sink())
        })
    }

    /// [`Self::build`], every rail split over `ranks`, this rank's partition tracing
    /// into its own sink (see [`crate::partition::ranks`]). Every rank calls it and
    /// makes the same calls after (or rank 0 [leads](Self::lead) and the others
    /// [follow](Self::follow)); rank 0 writes the whole trace into its `output`, the
    /// others' outputs get nothing but the header and the `.pcf` and `.row`.
    pub fn build_on_ranks(
        rails: Vec<NetworkBuilder>,
        policy: RailPolicy,
        options: &ParaverOptions,
        output: O,
        ranks: Arc<dyn Ranks>,
    ) -> Result<TracedNetwork<O>, TraceError> {
        TracedNetwork::build_as(rails, policy, options, output, |b, sink| {
            Partitioned::build_traced_on_ranks(b, ranks.clone(), sink())
        })
    }

    fn build_as(
        rails: Vec<NetworkBuilder>,
        policy: RailPolicy,
        options: &ParaverOptions,
        output: O,
        split: impl Fn(NetworkBuilder, &dyn Fn() -> ParaverSink) -> Result<Partitioned<ParaverSink>, SplitError>,
    ) -> Result<TracedNetwork<O>, TraceError> {
        if options.quantum_bytes == 0 {
            return Err(TraceError::ZeroQuantum);
        }
        let layout = Arc::new(Layout::new(&rails, &options.devices)?);
        let topology = topology::topology_json(&layout, &rails, &options.shapes);
        let n = rails.len();
        let split = rails
            .into_iter()
            .enumerate()
            .map(|(r, b)| split(b, &|| ParaverSink::new(Arc::clone(&layout), r, n, options)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| match e {
                SplitError::Build(e) => TraceError::Build(e),
                e => TraceError::Split(e),
            })?;
        let net = MultiRail::of_rails(split, policy)?;
        Ok(TracedNetwork {
            net,
            writer: ParaverWriter::new(layout, options, &topology, output),
            chunk: options.state_split.max(SimTime::from_ns(1)),
            finished: false,
        })
    }

    /// On rank 0 of ranks: see [`Partitioned::lead`] (the trace's steps are told too).
    pub fn lead(&mut self, lead: &Arc<Lead>) {
        self.net.lead(lead);
    }

    /// On the other ranks: follows rank 0's network and its trace's steps (see
    /// [`Partitioned::follow`]) until that network is gone ([`Followed::End`]) or rank
    /// 0 leads no more ([`Followed::Exit`]).
    pub fn follow(&mut self) -> Followed {
        loop {
            match self.net.follow() {
                Followed::Trace(TraceStep::Write) => self.write(false),
                Followed::Trace(TraceStep::Finish) => {
                    // Rank 0's output holds the trace, and its error if any.
                    let _ = self.finish();
                }
                other => return other,
            }
        }
    }

    /// The ranks the network is split over (`None`: it is in this process).
    fn ranks(&self) -> Option<Arc<dyn Ranks>> {
        self.net.rails().first()?.ranks().filter(|r| r.size() > 1).cloned()
    }

    /// The network.
    pub fn network(&self) -> &MultiRail<ParaverSink> {
        &self.net
    }

    /// Tells every rail the common clock, then writes what can be written.
    fn drain(&mut self) {
        let _told = self.net.tell_trace(TraceStep::Write);
        self.write(false);
    }

    /// Writes what every sink can release (`everything`: all they hold), on ranks every
    /// rank's sinks, written by rank 0 (a collective call).
    fn write(&mut self, everything: bool) {
        let ranks = self.ranks();
        let now = self.net.now();
        let mut limit = u64::MAX;
        for sink in self.net.sinks_mut() {
            // Later injections come at or after the latest rail clock.
            sink.clock(now);
            if !everything {
                limit = limit.min(sink.watermark().as_ps() / 1000);
            }
        }
        if let Some(ranks) = &ranks {
            let mut least = [limit];
            ranks.all_reduce(&mut least, Reduce::Min);
            limit = least[0];
        }
        let mut records = std::mem::take(&mut self.writer.scratch);
        records.clear();
        let mut sources = 0;
        for sink in self.net.sinks_mut() {
            sink.release(limit, &mut records);
            sources += 1;
        }
        if let Some(ranks) = &ranks {
            // Every rank's records go to rank 0, which writes them.
            let mut out = vec![Vec::new(); ranks.size() as usize];
            if ranks.rank() != 0 {
                for r in records.drain(..) {
                    put_record(&mut out[0], &r);
                }
            }
            for bytes in ranks.exchange(out) {
                let mut words = Words::new(&bytes);
                while !words.is_empty() {
                    records.push(record(&mut words));
                }
            }
            sources = ranks.size();
        }
        self.writer.write_records(&mut records, sources <= 1);
        self.writer.scratch = records;
    }

    /// Writes everything left (open states end at the clock), then the header, `.pcf`
    /// and `.row`. Later calls return `Ok(None)`. On ranks a collective call: rank 0's
    /// output gets the trace, the others' the header, `.pcf` and `.row` only.
    pub fn finish(&mut self) -> io::Result<Option<TraceSummary>> {
        if self.finished {
            return Ok(None);
        }
        self.finished = true;
        let _told = self.net.tell_trace(TraceStep::Finish);
        let now = self.net.now();
        let mut counts = [0, 0];
        for sink in self.net.sinks_mut() {
            counts[0] += sink.close(now);
            counts[1] += sink.late;
        }
        if let Some(ranks) = self.ranks() {
            ranks.all_reduce(&mut counts, Reduce::Sum);
        }
        self.write(true);
        self.writer.summary.unfinished_messages = counts[0];
        self.writer.summary.late_records = counts[1];
        self.writer.complete().map(Some)
    }

    /// Records held in the reorder windows now (they grow with what is open, not with
    /// the length of the run).
    pub fn buffered(&self) -> usize {
        self.net
            .rails()
            .iter()
            .flat_map(Partitioned::sinks)
            .map(|s| s.heap.len())
            .sum()
    }

    /// The output (after [`TracedNetwork::finish`], complete).
    pub fn output(&self) -> &O {
        &self.writer.output
    }
}

impl<O: TraceOutput + std::fmt::Debug> Network for TracedNetwork<O> {
    fn hosts(&self) -> u32 {
        self.net.hosts()
    }

    fn now(&self) -> SimTime {
        self.net.now()
    }

    fn next_event_time(&self) -> Option<SimTime> {
        self.net.next_event_time()
    }

    fn safe_horizon(&self, t: SimTime) -> SimTime {
        self.net.safe_horizon(t)
    }

    fn final_deliveries(&mut self, since: SimTime, out: &mut Vec<Delivery>) {
        self.net.final_deliveries(since, out);
    }

    fn events_processed(&self) -> u64 {
        self.net.events_processed()
    }

    fn in_flight(&self) -> usize {
        self.net.in_flight()
    }

    fn inject(&mut self, at: SimTime, spec: MessageSpec) -> Result<(), InjectError> {
        self.net.inject(at, spec)
    }

    fn advance_clock(&mut self, time: SimTime) {
        self.net.advance_clock(time);
        self.drain();
    }

    fn run_until(&mut self, limit: SimTime, deliveries: &mut Vec<Delivery>) {
        // In stretches, so that a long run writes as it goes (the results do not
        // depend on how a run is cut: events at or before a limit are all processed).
        while let Some(next) = self.net.next_event_time()
            && next <= limit
        {
            self.net
                .run_until(limit.min(next.saturating_add(self.chunk)), deliveries);
            self.drain();
        }
    }

    fn finish_trace(&mut self) -> io::Result<Option<TraceSummary>> {
        self.finish()
    }
}
