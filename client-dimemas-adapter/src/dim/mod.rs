//! Dimemas `.dim` traces (`shared/spec/formats.md` §2), read into a [`Workload`].
//!
//! ```text
//! #DIMEMAS:"name":1,<offset>:<ntasks>(<nthreads>,...),<ncomms>     header
//! d:1:<comm>:<ntasks>:<task>...                                       communicators
//! <op>:<task>:<thread>:<fields>                                        records
//! s:<task>:<offset>...                                                 offsets
//! ```
//!
//! What is replayed: CPU bursts (1), sends (2: blocking or immediate, synchronous or
//! not) and receives (3: blocking, immediate, and waits for an earlier immediate
//! receive from the same source with the same tag), and global operations (10),
//! decomposed into point-to-point messages over their communicator's members
//! ([`crate::replay::collective`]; the k-th call of each member is one collective,
//! each with a tag of its own below every application tag). Events (20), no-ops (0)
//! and GPU bursts (11) take no time here. Tasks may have several threads, each a program
//! of its own ([`crate::replay::programs`]); thread fields of messages between tasks are
//! not matched on (as Dimemas), and a message naming a thread of its own task goes to
//! that thread (Dimemas takes it for an accelerator transfer: a warning says so). Point-to-point
//! messages match on (source, tag, communicator), as MPI's and Dimemas's do (their
//! communicator needs no `d:` line): the first communicator's tags are kept, and every
//! (communicator, tag) pair of another communicator gets a tag of its own, from −1 down
//! (above the collectives', from `i32::MIN` up). Negative tags match as any other, but
//! are refused on the first communicator beside messages on others, and among the
//! collectives' tags.
//!
//! Two ways to read a trace, which give the same operations (one line decoder,
//! `reader.rs`): [`parse`] and [`read`] hold it whole as a [`Workload`]; [`open`] reads
//! it as the replay goes, each task's records in small pieces ([`Stream`], `stream.rs`),
//! so that traces larger than memory replay. Both check, line by line, the layout
//! Dimemas requires and vesper does not (`rules.rs`: the offsets table where the header
//! says, each thread's records together from the offset the table gives, each thread
//! beginning with a CPU burst) and warn, with Dimemas's reason, where a trace breaks it.
//!
//! Only regular files are read. Read whole, a trace is refused unread above
//! [`MAX_WHOLE_TRACE_BYTES`]; read as the replay goes, a line longer than
//! [`MAX_LINE_BYTES`] is refused, whatever the trace's size.
//!
//! [`write()`] saves any workload (of one thread per task) as a trace that reads back into
//! the same operations (but for a burst of 0 s first where a task does not begin with a
//! burst, as Dimemas requires), and so replays alike: receives take their sizes from the
//! matching sends; a wait for an immediate receive becomes a type-2 receive. Two kinds
//! of wait have no record in the format; they are written as events of vesper's own
//! (op 20, `20:task:thread:type:label`), which both readers turn back into the waits:
//!
//! - a wait for an immediate send: event [`LABEL_EVENT`] (70000101) with a label (the
//!   request's number) on the line before the send's record, then event
//!   [`WAIT_SEND_EVENT`] (70000102) with the same label where the wait is;
//! - a wait for an immediate receive other than the oldest one pending from its source
//!   with its tag (the one a type-2 record waits for): the receive labelled as above,
//!   and event [`WAIT_RECEIVE_EVENT`] (70000103) with its label on the line before the
//!   type-2 record.
//!
//! Dimemas takes events as marks with no effect on timing (it passes them to its
//! Paraver trace). It sees such an immediate send never waited for: where the send is
//! eager that changes nothing, but where it is rendezvous (synchronous, or over `-S`)
//! nothing holds its task until the data has landed, so Dimemas predicts that task
//! earlier than vesper does; and it reads the type-2 record as a wait for the oldest
//! receive pending. A trace read by vesper carries no labels unless vesper wrote them:
//! its immediate sends are never waited for, as in Dimemas.

mod reader;
mod rules;
mod stream;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::Path;

use crate::input::{InputError, input_error};
use crate::replay::analytic::REDUCE;
use crate::replay::collective::Methods;
use crate::replay::workload::{Channel, channel, unmatched};
use crate::replay::{Op, Workload, WorkloadError};

use reader::{Collectives, Decoded, Global, Reader};
use rules::Rules;

/// Event type (op 20) of vesper's own: its value labels the next immediate send or
/// receive of the thread, for one of the two events below (see the module
/// documentation).
pub const LABEL_EVENT: u64 = 70_000_101;

/// Event type of vesper's own: a wait for the immediate send (or receive) labelled
/// with its value.
pub const WAIT_SEND_EVENT: u64 = 70_000_102;

/// Event type of vesper's own: the next type-2 receive record of the thread waits for
/// the immediate receive labelled with its value, not the oldest one pending from its
/// source with its tag.
pub const WAIT_RECEIVE_EVENT: u64 = 70_000_103;
pub use stream::{Opened, Stream, open, open_observed};

/// The largest trace read whole \[bytes\] (its tasks' records interleaved, or to be
/// saved again): held whole, a trace takes its text's size in memory, then its
/// operations'. Traces whose tasks' records are contiguous, as Dimemas writes them, are
/// read as the replay goes, whatever their size ([`open`]).
pub const MAX_WHOLE_TRACE_BYTES: u64 = 1024 * vesper_input::MIB;

/// The longest line of a trace \[bytes\]: records take tens of bytes, but a header lists
/// a thread count per task, and a communicator (`d:`) its tasks; 16 MiB holds either
/// for 2^20 tasks (`reader::MAX_THREADS` threads), up to 8 bytes each.
pub const MAX_LINE_BYTES: usize = 16 * vesper_input::MIB as usize;
const _: () = assert!(8 * reader::MAX_THREADS as usize + 1024 <= MAX_LINE_BYTES);

/// What a trace is, for messages.
pub(super) const DIM_FILE: &str = "a .dim trace";

/// A trace, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimTrace {
    /// the programs of every thread of every task, task by task (one per task when
    /// tasks have one thread)
    pub workload: Workload,
    /// per task, its threads
    pub threads: Vec<u32>,
    /// collective calls decomposed into point-to-point messages
    pub collectives: u64,
    /// what is suspect but does not stop the replay, each naming the file
    pub warnings: Vec<String>,
}

/// What is wrong with a trace, and where.
pub type DimError = InputError;

/// Reads the trace at `path`, collectives by their default algorithms.
pub fn read(path: &Path) -> Result<DimTrace, DimError> {
    read_with(path, &Methods::default())
}

/// Reads the trace at `path`, collectives decomposed by `methods`.
pub fn read_with(path: &Path, methods: &Methods) -> Result<DimTrace, DimError> {
    let file = path.display().to_string();
    let text = vesper_input::read_text(path, MAX_WHOLE_TRACE_BYTES).map_err(|e| {
        let too_large = matches!(e, vesper_input::InputError::TooLarge { .. });
        let mut e = input_error(&file, DIM_FILE, e);
        if too_large {
            e.message.push_str(
                "; read whole (its tasks' records interleaved, or to be saved again), a trace may hold no \
                 more; one whose tasks' records are contiguous, as Dimemas writes them, is read as the replay goes, \
                 whatever its size",
            );
        }
        e
    })?;
    parse_with(&text, &file, methods)
}

/// Parses a trace's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<DimTrace, DimError> {
    parse_with(text, file, &Methods::default())
}

/// Parses a trace's text, collectives decomposed by `methods`.
pub fn parse_with(text: &str, file: &str, methods: &Methods) -> Result<DimTrace, DimError> {
    let mut reader = Reader::new(methods, file);
    // Lines with their ends, so that byte offsets are known (for Dimemas's rules).
    let mut lines = text.split_inclusive('\n');
    let Some(header) = lines.next() else {
        return Err(reader.error("an empty file; expected a #DIMEMAS header"));
    };
    reader.line = 1;
    let name = reader.header(header.trim_end())?;
    let mut rules = Rules::new(file, without_end(header), header.len() as u64, reader.threads());
    let mut at = header.len() as u64;
    let mut programs: Vec<Vec<Op>> = vec![Vec::new(); reader.programs() as usize];
    let mut collectives = Collectives::default();
    // Per program: its collective calls, where in the program they go.
    let mut calls: Vec<Vec<(usize, Global, usize)>> = vec![Vec::new(); programs.len()];
    for (number, line) in lines.enumerate() {
        reader.line = number + 2;
        let decoded = reader.record(line.trim_end())?;
        rules.line(at, line.len() as u64, reader.line, without_end(line));
        at += line.len() as u64;
        match decoded {
            Decoded::Nothing | Decoded::Note(_) => {}
            Decoded::Op(program, op) => programs[program as usize].push(op),
            Decoded::Global(program, global) => {
                let k = collectives
                    .call(&global, reader.line)
                    .map_err(|e| reader.error_at(e.line(), e.to_string()))?;
                calls[program as usize].push((programs[program as usize].len(), global, k));
            }
        }
    }
    let plan = collectives
        .plan(&reader.groups, reader.tasks())
        .map_err(|e| reader.error_at(e.line(), e.to_string()))?;
    reader.check_tags(plan.calls)?;
    // Every send has its receive (collectives, decomposed below, match by construction).
    let task_of = crate::replay::task_of_programs(reader.threads());
    let mut balance: BTreeMap<Channel, i64> = BTreeMap::new();
    for (p, program) in programs.iter().enumerate() {
        for (key, one) in program.iter().filter_map(|op| channel(&task_of, p, op)) {
            *balance.entry(key).or_default() += one;
        }
    }
    if let Some((key, surplus)) = balance.into_iter().find(|&(_, n)| n != 0) {
        return Err(unmatched_at(text, file, methods, key, surplus));
    }
    for (program, calls) in programs.iter_mut().zip(calls) {
        // From the back, so that earlier positions stay valid.
        for (at, global, k) in calls.into_iter().rev() {
            program.splice(at..at, plan.operations(global.task, &global, k));
        }
    }
    let warnings = rules.finish(text.len() as u64)?;
    Ok(DimTrace {
        workload: Workload { name, tasks: programs },
        threads: reader.threads().to_vec(),
        collectives: plan.calls,
        warnings,
    })
}

/// `line` without its line end (`\n`; a `\r` before it stays, as Dimemas reads it).
fn without_end(line: &str) -> &str {
    line.strip_suffix('\n').unwrap_or(line)
}

/// The error of a trace whose `channel` has `surplus` more sends than receives (or
/// fewer), naming the line of its first send with no receive (they match in order, so
/// the last ones have none), or of its first receive with no send.
fn unmatched_at(text: &str, file: &str, methods: &Methods, key: Channel, surplus: i64) -> DimError {
    let mut reader = Reader::new(methods, file);
    let mut lines = text.lines();
    reader.line = 1;
    let header = lines.next().map(|h| reader.header(h.trim_end()));
    let task_of = crate::replay::task_of_programs(reader.threads());
    // The lines of the channel's sends, or receives, whichever are more.
    let mut seen = Vec::new();
    if let Some(Ok(_)) = header {
        for (number, line) in lines.enumerate() {
            reader.line = number + 2;
            if let Ok(Decoded::Op(p, op)) = reader.record(line.trim_end())
                && let Some((k, one)) = channel(&task_of, p as usize, &op)
                && k == key
                && one.signum() == surplus.signum()
            {
                seen.push(reader.line);
            }
        }
    }
    let first = seen.len().saturating_sub(surplus.unsigned_abs() as usize);
    let what = if surplus > 0 { "send" } else { "receive" };
    let line = seen.get(first).copied().unwrap_or(0);
    let mut message = unmatched(key, surplus);
    // The tag and communicator as written (vesper's tag is another on communicators
    // but the first): the record's last fields but one (sync, or type).
    let written: Vec<&str> = text
        .lines()
        .nth(line.wrapping_sub(1))
        .unwrap_or("")
        .split(':')
        .collect();
    if let [.., tag, comm, _] = written[..]
        && line > 0
    {
        message = message.replace(
            &format!(" with tag {} ", key.2),
            &format!(" with tag {} on communicator {} ", tag.trim(), comm.trim()),
        );
    }
    reader.error_at(line, format!("{message}; the first is this {what}"))
}

/// Writes `workload` as a `.dim` trace: one thread per task, one communicator (1),
/// offset lines, and the header padded so its offset could be rewritten in place.
/// Waits the format cannot say are written as vesper's events (see the module
/// documentation), so that the trace reads back into the same operations, but for a
/// burst of 0 s first in each task whose program does not begin with one: Dimemas
/// simulates only threads whose first record is a CPU burst. The trace keeps every
/// rule of Dimemas's (`rules.rs`), so Dimemas reads it.
pub fn write(workload: &Workload, out: &mut dyn std::io::Write) -> Result<(), WriteError> {
    workload.check()?;
    let tasks = workload.tasks.len();
    // Analytic collective calls are written on communicator 1, of every task: each
    // task's k-th call must be the same call, over every task.
    let calls = |program: &Vec<Op>| -> Vec<(u64, u32)> {
        let globals = program.iter().filter_map(|op| match *op {
            Op::Global { call, members, .. } => Some((call, members)),
            _ => None,
        });
        globals.collect()
    };
    let first = workload.tasks.first().map(calls).unwrap_or_default();
    if first.iter().any(|&(_, members)| members as usize != tasks)
        || workload.tasks.iter().any(|program| calls(program) != first)
    {
        return Err(WriteError::PartialCollectives);
    }
    // The size of every message, per (source, destination, tag), in send order.
    let mut sizes: BTreeMap<(u32, u32, i32), VecDeque<u32>> = BTreeMap::new();
    for (t, program) in workload.tasks.iter().enumerate() {
        for op in program {
            if let Op::Send { to, size, tag, .. } | Op::ISend { to, size, tag, .. } = *op {
                sizes.entry((t as u32, to, tag)).or_default().push_back(size);
            }
        }
    }
    // MPI_Reduce's records name its root's task (Dimemas's reading): the task whose
    // call says it is the root, or one that is none when no call does.
    let mut reduce_roots: BTreeMap<u64, usize> = BTreeMap::new();
    for (t, program) in workload.tasks.iter().enumerate() {
        for op in program {
            if let Op::Global {
                call,
                id,
                is_root: true,
                ..
            } = *op
                && u32::from(id) == REDUCE
            {
                reduce_roots.entry(call).or_insert(t);
            }
        }
    }
    let mut body = String::new();
    let members: Vec<String> = (0..tasks).map(|t| t.to_string()).collect();
    let _ = writeln!(body, "d:1:1:{tasks}:{}", members.join(":"));
    let mut starts = Vec::with_capacity(tasks);
    for (t, program) in workload.tasks.iter().enumerate() {
        starts.push(body.len());
        // Dimemas simulates a thread only if its first record is a CPU burst.
        if !matches!(program.first(), Some(Op::Compute(_))) {
            let _ = writeln!(body, "1:{t}:0:0.000000000");
        }
        let labels = Labels::of(program);
        // Immediate receives by request: (source, size, tag).
        let mut receives: BTreeMap<u32, (u32, u32, i32)> = BTreeMap::new();
        for (i, op) in program.iter().enumerate() {
            if let Op::ISend { request, .. } | Op::IRecv { request, .. } = *op
                && labels.starts.contains(&i)
            {
                let _ = writeln!(body, "20:{t}:0:{LABEL_EVENT}:{request}");
            }
            let mut size_of = |from: u32, tag: i32| {
                sizes
                    .get_mut(&(from, t as u32, tag))
                    .and_then(VecDeque::pop_front)
                    .unwrap_or(0)
            };
            let _ = match *op {
                Op::Compute(d) => writeln!(body, "1:{t}:0:{}.{:012}", d / 1_000_000_000_000, d % 1_000_000_000_000),
                Op::Send {
                    to,
                    size,
                    tag,
                    synchronous,
                } => writeln!(body, "2:{t}:0:{to}:-1:{size}:{tag}:1:{}", u8::from(synchronous)),
                Op::ISend {
                    to,
                    size,
                    tag,
                    synchronous,
                    ..
                } => writeln!(body, "2:{t}:0:{to}:-1:{size}:{tag}:1:{}", 2 | u8::from(synchronous)),
                Op::Recv { from, tag } => writeln!(body, "3:{t}:0:{from}:-1:{}:{tag}:1:0", size_of(from, tag)),
                Op::IRecv { from, tag, request } => {
                    let size = size_of(from, tag);
                    receives.insert(request, (from, size, tag));
                    writeln!(body, "3:{t}:0:{from}:-1:{size}:{tag}:1:1")
                }
                Op::Global {
                    call,
                    id,
                    is_root,
                    sent,
                    received,
                    ..
                } => {
                    let root = match u32::from(id) == REDUCE {
                        true => reduce_roots.get(&call).copied().unwrap_or(tasks),
                        false => usize::from(is_root),
                    };
                    writeln!(body, "10:{t}:0:{id}:1:{root}:0:{sent}:{received}")
                }
                Op::Wait { request } => match receives.remove(&request) {
                    Some((from, size, tag)) => {
                        if labels.named_waits.contains(&i) {
                            let _ = writeln!(body, "20:{t}:0:{WAIT_RECEIVE_EVENT}:{request}");
                        }
                        writeln!(body, "3:{t}:0:{from}:-1:{size}:{tag}:1:2")
                    }
                    // A wait for an immediate send (labelled where it started).
                    None => writeln!(body, "20:{t}:0:{WAIT_SEND_EVENT}:{request}"),
                },
            };
        }
    }
    let offsets_at = body.len();
    // Dimemas refuses an empty name, and reads it up to a quote.
    let name = match workload.name.as_str() {
        "" => "vesper".to_string(),
        name => name.replace('"', "'").replace(['\n', '\r'], " "),
    };
    let threads = vec!["1"; tasks].join(",");
    let header = |offset: u64| format!("#DIMEMAS:\"{name}\":1,{offset}:{tasks}({threads}),1");
    // Wide enough for any offset.
    let width = header(u64::MAX).len();
    let base = width + 1;
    // Padded in bytes (offsets count bytes; the name may hold wider characters).
    let mut text = header((base + offsets_at) as u64);
    text.push_str(&" ".repeat(width - text.len()));
    text.push('\n');
    text.push_str(&body);
    for (t, start) in starts.iter().enumerate() {
        let _ = writeln!(text, "s:{t}:{}", base + start);
    }
    out.write_all(text.as_bytes()).map_err(WriteError::Io)
}

/// Why a workload cannot be written as a trace.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// its programs do not fit together
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// its collective calls are not every task's, in one order
    #[error(
        "collective calls over part of the tasks, or in different orders, cannot be written (only communicator 1 \
         of every task is)"
    )]
    PartialCollectives,
    /// writing failed
    #[error("cannot write the trace: {0}")]
    Io(#[source] std::io::Error),
}

/// What the writer labels in one program, by index in the program: the waits a trace
/// cannot say without vesper's events.
#[derive(Debug, Default)]
struct Labels {
    /// immediate sends and receives labelled (event [`LABEL_EVENT`] before them)
    starts: BTreeSet<usize>,
    /// waits for a receive that is not the oldest pending from its source with its tag
    /// (event [`WAIT_RECEIVE_EVENT`] before them)
    named_waits: BTreeSet<usize>,
}

impl Labels {
    /// The labels `program` needs (a checked program: every wait is for a request
    /// started and not yet waited for).
    fn of(program: &[Op]) -> Labels {
        let mut labels = Labels::default();
        // Requests started: where, and the (source, tag) of a receive.
        let mut started: BTreeMap<u32, (usize, Option<(u32, i32)>)> = BTreeMap::new();
        // Receives pending per (source, tag), oldest first, as a type-2 record sees them.
        let mut pending: BTreeMap<(u32, i32), VecDeque<u32>> = BTreeMap::new();
        for (i, op) in program.iter().enumerate() {
            match *op {
                Op::ISend { request, .. } if request != crate::replay::UNWAITED => {
                    started.insert(request, (i, None));
                }
                Op::IRecv { from, tag, request } => {
                    started.insert(request, (i, Some((from, tag))));
                    pending.entry((from, tag)).or_default().push_back(request);
                }
                Op::Wait { request } => match started.remove(&request) {
                    Some((start, None)) => {
                        labels.starts.insert(start);
                    }
                    Some((start, Some(channel))) => {
                        let queue = pending.entry(channel).or_default();
                        if queue.front() == Some(&request) {
                            queue.pop_front();
                        } else {
                            queue.retain(|&r| r != request);
                            labels.starts.insert(start);
                            labels.named_waits.insert(i);
                        }
                    }
                    None => {}
                },
                _ => {}
            }
        }
        labels
    }
}

/// Traces the tests of both readers share.
#[cfg(test)]
mod examples {
    /// The formats spec's example: an eager ping-pong of 1024 bytes, then an allreduce.
    /// Its header is not padded as its offset lines assume.
    pub const PING_PONG: &str = "#DIMEMAS:\"pingpong\":1,249:2(1,1),1,0,0
d:1:1:2:0:1
1:0:0:0.000001500
2:0:0:1:-1:1024:7:1:0
3:0:0:1:-1:1024:8:1:0
10:0:0:11:1:1:0:8:8:1
1:0:0:0.000000300
1:1:0:0.000002000
3:1:0:0:-1:1024:7:1:0
2:1:0:0:-1:1024:8:1:0
10:1:0:11:1:0:0:8:8:1
s:0:63
s:1:165
";

    /// Four tasks; a broadcast from task 2 over all, then an allreduce between tasks 1
    /// and 3 only (communicator 2), then a barrier.
    pub const COLLECTIVES: &str = "#DIMEMAS:\"c\":0:4(1,1,1,1),2
d:1:1:4:0:1:2:3
d:1:2:2:1:3
10:0:0:1:1:0:0:0:1000
10:0:0:0:1:1:0:0:0
10:1:0:1:1:0:0:0:1000
10:1:0:11:2:0:0:8:8
10:1:0:0:1:0:0:0:0
10:2:0:1:1:1:0:1000:0
10:2:0:0:1:0:0:0:0
10:3:0:1:1:0:0:0:1000
10:3:0:11:2:1:0:8:8
10:3:0:0:1:0:0:0:0
";

    /// Task 0 sends 1000 bytes on communicator 1, then 100000 on communicator 2, both
    /// tag 7; task 1 receives communicator 2's first.
    pub const COMMUNICATORS: &str = "#DIMEMAS:\"c\":0:2(1,1),2
2:0:0:1:-1:1000:7:1:0
2:0:0:1:-1:100000:7:2:0
3:1:0:0:-1:100000:7:2:0
3:1:0:0:-1:1000:7:1:0
";
}

#[cfg(test)]
mod tests;
