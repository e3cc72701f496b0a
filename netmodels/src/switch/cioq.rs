//! The CIOQ switch's input side and crossbar scheduling.
//!
//! ```text
//!   in p0 ─▶ [input queue | VOQ per output] ─┐  crossbar at speedup × link rate   ┌▶ [output queue] ─▶ out p0
//!   in p1 ─▶ [input queue | VOQ per output] ─┼─ one packet per input, per output ─┼▶ [output queue] ─▶ out p1
//! ```
//!
//! A routed packet joins its input's queue. Whenever a crossbar port frees up or a
//! packet arrives, the switch matches free inputs to free outputs: outputs in turn from
//! a rotating start, each taking the first eligible input after its own round-robin
//! pointer. An eligible input has a packet for that output at the head of its FIFO
//! (or in that output's virtual queue). The transfer lasts the packet's serialisation
//! divided by the speedup, and cannot end before the packet's tail has arrived (the
//! crossbar is cut-through too). The packet joins the output queue when its transfer
//! starts; the output link cannot finish sending it before the transfer ends.

use std::collections::VecDeque;

use crate::switch::CioqParams;

/// One input port's queues.
#[derive(Debug, Default)]
pub(crate) struct InputQueues {
    /// one FIFO, or one queue per output port (indexed by the switch's port number)
    queues: Vec<VecDeque<(u32, u32)>>,
    /// the outputs whose queue here is not empty (virtual output queues), in order
    waiting: Vec<u32>,
    /// a transfer from this input is under way
    pub(crate) busy: bool,
    /// bytes of the packets waiting here (kept by the caller, for traces)
    pub(crate) bytes: u64,
}

/// The crossbar state of one switch.
#[derive(Debug)]
pub(crate) struct Crossbar {
    params: CioqParams,
    pub(crate) inputs: Vec<InputQueues>,
    /// a transfer into this output is under way
    pub(crate) output_busy: Vec<bool>,
    /// per output: the first input port to consider
    pointers: Vec<u32>,
    /// the first output to consider at the next matching
    start: u32,
    /// a matching is scheduled
    pub(crate) matching: bool,
}

impl Crossbar {
    pub(crate) fn new(params: CioqParams, ports: u32) -> Crossbar {
        let queues = if params.virtual_output_queues {
            ports as usize
        } else {
            1
        };
        Crossbar {
            params,
            inputs: (0..ports)
                .map(|_| InputQueues {
                    queues: (0..queues).map(|_| VecDeque::new()).collect(),
                    waiting: Vec::new(),
                    busy: false,
                    bytes: 0,
                })
                .collect(),
            output_busy: vec![false; ports as usize],
            pointers: vec![0; ports as usize],
            start: 0,
            matching: false,
        }
    }

    /// The speedup (≥ 1).
    pub(crate) fn speedup(&self) -> u32 {
        self.params.speedup.max(1)
    }

    /// A packet (slab id `packet`) arrived at input `input`, bound for output `output`.
    pub(crate) fn enqueue(&mut self, input: u32, output: u32, packet: u32) {
        let voq = self.params.virtual_output_queues;
        let inp = &mut self.inputs[input as usize];
        let queue = if voq { output as usize } else { 0 };
        if voq && inp.queues[queue].is_empty() {
            let at = inp.waiting.partition_point(|&o| o < output);
            inp.waiting.insert(at, output);
        }
        inp.queues[queue].push_back((output, packet));
    }

    /// Packets waiting at `input`.
    #[cfg(test)]
    pub(crate) fn queued(&self, input: u32) -> usize {
        self.inputs[input as usize].queues.iter().map(VecDeque::len).sum()
    }

    /// Matches free inputs to free outputs; returns the transfers to start as
    /// `(input, output, packet)`, and marks their ports busy.
    ///
    /// Only the (output, input) pairs that could go are looked at: the heads of free
    /// FIFO inputs, or the non-empty virtual queues of free inputs.
    pub(crate) fn matches(&mut self) -> Vec<(u32, u32, u32)> {
        let ports = self.output_busy.len() as u32;
        let mut wants = Vec::new();
        for (input, inp) in self.inputs.iter().enumerate() {
            if inp.busy {
                continue;
            }
            if self.params.virtual_output_queues {
                wants.extend(inp.waiting.iter().map(|&o| (o, input as u32)));
            } else if let Some(&(o, _)) = inp.queues[0].front() {
                wants.push((o, input as u32));
            }
        }
        // Outputs in turn from the rotating start; within one, inputs from its pointer.
        let start = self.start;
        let pointers = &self.pointers;
        wants.sort_unstable_by_key(|&(o, i)| ((o + ports - start) % ports, (i + ports - pointers[o as usize]) % ports));
        let mut started = Vec::new();
        for (output, input) in wants {
            if self.output_busy[output as usize] || self.inputs[input as usize].busy {
                continue;
            }
            let Some(packet) = self.take(input, output) else {
                continue;
            };
            self.inputs[input as usize].busy = true;
            self.output_busy[output as usize] = true;
            self.pointers[output as usize] = (input + 1) % ports;
            started.push((input, output, packet));
        }
        self.start = (self.start + 1) % ports.max(1);
        started
    }

    fn take(&mut self, input: u32, output: u32) -> Option<u32> {
        let voq = self.params.virtual_output_queues;
        let inp = &mut self.inputs[input as usize];
        let queue = if voq { output as usize } else { 0 };
        let (_, packet) = inp.queues[queue].pop_front()?;
        if voq && inp.queues[queue].is_empty() {
            inp.waiting.retain(|&o| o != output);
        }
        Some(packet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_inputs_block_behind_their_head() {
        let mut x = Crossbar::new(CioqParams::default(), 3);
        x.enqueue(0, 2, 10);
        x.enqueue(0, 1, 11);
        x.enqueue(1, 2, 12);
        let first = x.matches();
        // Output 2 takes one of inputs 0 and 1; input 0's packet for output 1 is stuck.
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].1, 2);
    }

    #[test]
    fn virtual_output_queues_let_the_next_packet_go() {
        let params = CioqParams {
            virtual_output_queues: true,
            ..CioqParams::default()
        };
        let mut x = Crossbar::new(params, 3);
        x.enqueue(0, 2, 10);
        x.enqueue(0, 1, 11);
        x.enqueue(1, 2, 12);
        let mut started = x.matches();
        started.sort_unstable();
        // Input 0 serves output 1 while input 1 serves output 2 (or input 0 serves 2).
        assert_eq!(started.len(), 2, "{started:?}");
        assert_eq!(x.queued(0) + x.queued(1), 1);
    }
}
