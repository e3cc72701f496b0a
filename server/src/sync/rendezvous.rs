//! The `wire` rendezvous mode: protocol messages travel the network like data.
//!
//! ```text
//!  sender                               receiver
//!   OK_TO_SEND t ── request (control) ──▶ arrives at a
//!                                        READY_TO_RECV t2 (the client's line)
//!   ◀──────── ack at max(a, t2) ──────── (control)
//!   ack arrives at b ── data ──────────▶ completes: COMPLETED SEND
//! ```
//!
//! A `PROTO OK_TO_SEND` and the `PROTO READY_TO_RECV` that follows it for the same
//! (client, applications, nodes, tag, size) are matched in order. This table only keeps
//! the matching; the coordinator injects the messages.

use std::collections::{BTreeMap, VecDeque};

use vesper_netmodels::SimTime;
use vesper_netmodels::slab::Slab;

use crate::sync::ClientId;

/// What matches a request with its ready line: (client, source application,
/// destination application, source node, destination node, tag, size).
pub type RendezvousKey = (ClientId, u32, u32, u32, u32, Option<i32>, u32);

/// One rendezvous in progress.
pub type RendezvousId = usize;

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// when the request reached the receiver
    request_arrived: Option<SimTime>,
    /// the ready time and the caller's data record
    ready: Option<(SimTime, usize)>,
}

/// What to do after a `READY_TO_RECV`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ready {
    /// no request was seen for it: send the data at the ready time
    Unmatched,
    /// the request is still travelling: the ack leaves when it arrives
    AwaitRequest,
    /// the request has arrived: send the ack at this time
    AckAt(RendezvousId, SimTime),
}

/// Requests waiting for their `READY_TO_RECV`, and rendezvous waiting for the network.
#[derive(Debug, Default)]
pub struct RendezvousTable {
    unmatched: BTreeMap<RendezvousKey, VecDeque<RendezvousId>>,
    entries: Slab<Option<Entry>>,
}

impl RendezvousTable {
    /// A `PROTO OK_TO_SEND`: a new rendezvous whose request is about to be injected.
    pub fn request(&mut self, key: RendezvousKey) -> RendezvousId {
        let entry = Entry {
            request_arrived: None,
            ready: None,
        };
        let id = self.entries.insert(Some(entry)) as RendezvousId;
        self.unmatched.entry(key).or_default().push_back(id);
        id
    }

    /// A `PROTO READY_TO_RECV` at `at` whose data the caller keeps as `data`.
    pub fn ready(&mut self, key: RendezvousKey, at: SimTime, data: usize) -> Ready {
        let Some(queue) = self.unmatched.get_mut(&key) else {
            return Ready::Unmatched;
        };
        let Some(id) = queue.pop_front() else {
            return Ready::Unmatched;
        };
        if queue.is_empty() {
            self.unmatched.remove(&key);
        }
        let Some(entry) = self.entries[id].as_mut() else {
            return Ready::Unmatched;
        };
        entry.ready = Some((at, data));
        match entry.request_arrived {
            Some(arrived) => Ready::AckAt(id, arrived.max(at)),
            None => Ready::AwaitRequest,
        }
    }

    /// The request of `id` reached the receiver at `at`: the ack time, if the receiver
    /// is ready.
    pub fn request_arrived(&mut self, id: RendezvousId, at: SimTime) -> Option<SimTime> {
        let entry = self.entries.get_mut(id)?.as_mut()?;
        entry.request_arrived = Some(at);
        entry.ready.map(|(ready, _)| ready.max(at))
    }

    /// The data record of `id`, once its ready line has come.
    pub fn data_of(&self, id: RendezvousId) -> Option<usize> {
        self.entries.get(id)?.as_ref()?.ready.map(|(_, data)| data)
    }

    /// The ack of `id` reached the sender: the rendezvous is over; returns the data.
    pub fn acked(&mut self, id: RendezvousId) -> Option<usize> {
        let entry = self.entries.get_mut(id)?.take()?;
        self.entries.release(id as u32);
        entry.ready.map(|(_, data)| data)
    }

    /// Rendezvous whose request has not been matched by a ready line.
    pub fn unmatched_requests(&self) -> usize {
        self.unmatched.values().map(VecDeque::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: RendezvousKey = (0, 0, 0, 1, 2, Some(7), 4096);

    fn t(ns: u64) -> SimTime {
        SimTime::from_ns(ns)
    }

    #[test]
    fn ready_after_the_request_arrived_acks_at_the_later_time() {
        let mut table = RendezvousTable::default();
        let id = table.request(KEY);
        assert_eq!(table.request_arrived(id, t(500)), None);
        assert_eq!(table.ready(KEY, t(400), 9), Ready::AckAt(id, t(500)));
        assert_eq!(table.acked(id), Some(9));
        assert_eq!(table.unmatched_requests(), 0);
    }

    #[test]
    fn ready_before_the_request_arrived_waits_for_it() {
        let mut table = RendezvousTable::default();
        let id = table.request(KEY);
        assert_eq!(table.ready(KEY, t(800), 3), Ready::AwaitRequest);
        assert_eq!(table.request_arrived(id, t(500)), Some(t(800)));
    }

    #[test]
    fn requests_match_in_order_and_by_key() {
        let mut table = RendezvousTable::default();
        let first = table.request(KEY);
        let second = table.request(KEY);
        let other_key = (0, 0, 0, 1, 2, Some(8), 4096);
        assert_eq!(table.ready(other_key, t(1), 0), Ready::Unmatched);
        table.request_arrived(second, t(10));
        table.request_arrived(first, t(20));
        assert_eq!(table.ready(KEY, t(5), 1), Ready::AckAt(first, t(20)));
        assert_eq!(table.ready(KEY, t(5), 2), Ready::AckAt(second, t(10)));
        assert_eq!(table.ready(KEY, t(5), 3), Ready::Unmatched);
    }
}
