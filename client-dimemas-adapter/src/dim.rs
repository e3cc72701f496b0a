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
//! and GPU bursts (11) take no time here. Tasks must have one thread. Point-to-point
//! messages match on (source, tag, communicator), as MPI's do: the first communicator's
//! tags are kept, and every (communicator, tag) pair of another communicator gets a tag
//! of its own, from −1 down (below every application tag, above the collectives'). The
//! whole trace is read into memory (the offset lines are not used yet).
//!
//! [`write`] saves any workload as a trace: receives take their sizes from the
//! matching sends; a wait for an immediate receive becomes a type-2 receive; waits for
//! immediate sends have no record (a trace cannot say them), so a rendezvous `ISend`
//! waited for replays differently once written, and type-2 waits match the oldest
//! pending immediate receive from the same source and tag.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::path::Path;

use crate::input::{InputError, clip, read_text};

use crate::replay::collective::{self, Algorithm, Methods};
use crate::replay::{Op, Ps, Workload};

/// A trace, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimTrace {
    /// the task programs
    pub workload: Workload,
    /// collective calls decomposed into point-to-point messages
    pub collectives: u64,
}

/// What is wrong with a trace, and where.
pub type DimError = InputError;

/// Reads the trace at `path`, collectives by their default algorithms.
pub fn read(path: &Path) -> Result<DimTrace, DimError> {
    read_with(path, &Methods::default())
}

/// Reads the trace at `path`, collectives decomposed by `methods`.
pub fn read_with(path: &Path, methods: &Methods) -> Result<DimTrace, DimError> {
    let (text, file) = read_text(path)?;
    parse_with(&text, &file, methods)
}

/// Parses a trace's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<DimTrace, DimError> {
    parse_with(text, file, &Methods::default())
}

/// Parses a trace's text, collectives decomposed by `methods`.
pub fn parse_with(text: &str, file: &str, methods: &Methods) -> Result<DimTrace, DimError> {
    let mut reader = Reader {
        methods,
        file,
        line: 0,
        programs: Vec::new(),
        requests: Vec::new(),
        first_communicator: None,
        renamed: BTreeMap::new(),
        groups: BTreeMap::new(),
        calls: Vec::new(),
    };
    let mut lines = text.lines();
    let name = match lines.next() {
        Some(header) => {
            reader.line = 1;
            reader.header(header.trim_end())?
        }
        None => return Err(reader.error("an empty file; expected a #DIMEMAS header")),
    };
    for (number, line) in lines.enumerate() {
        reader.line = number + 2;
        reader.record(line.trim_end())?;
    }
    let collectives = reader.decompose()?;
    Ok(DimTrace {
        workload: Workload {
            name,
            tasks: reader.programs,
        },
        collectives,
    })
}

/// One task's call of a collective, before it is decomposed.
#[derive(Debug, Clone, Copy)]
struct Call {
    task: u32,
    /// where in the task's program its operations go
    at: usize,
    algorithm: Algorithm,
    id: u32,
    comm: i64,
    is_root: bool,
    size: u32,
    line: usize,
}

/// Per task: the next request name, and the immediate receives started and not yet
/// waited for, by (source, tag).
#[derive(Debug, Default)]
struct Requests {
    next: u32,
    receives: BTreeMap<(u32, i32), VecDeque<u32>>,
}

/// Requests of decomposed collectives: above the trace's own (which count from 0), and
/// all waited for within the collective.
const COLLECTIVE_REQUESTS: u32 = 1 << 31;

struct Reader<'a> {
    /// how collectives are decomposed
    methods: &'a Methods,
    file: &'a str,
    line: usize,
    programs: Vec<Vec<Op>>,
    requests: Vec<Requests>,
    /// the first communicator of a point-to-point record: its tags are kept
    first_communicator: Option<i64>,
    /// the tags given to (communicator, tag) pairs of other communicators
    renamed: BTreeMap<(i64, i32), i32>,
    /// members of each communicator (`d:` lines)
    groups: BTreeMap<i64, Vec<u32>>,
    /// collective calls, in trace order
    calls: Vec<Call>,
}

impl Reader<'_> {
    fn error(&self, message: impl Into<String>) -> DimError {
        DimError {
            file: self.file.to_string(),
            line: self.line,
            message: message.into(),
        }
    }

    /// `#DIMEMAS:"<name>":<offsets>:<ntasks>(<nthreads>,...),<ncomms>...`: the name.
    fn header(&mut self, line: &str) -> Result<String, DimError> {
        let expected = "expected a header #DIMEMAS:\"name\":1,offset:ntasks(nthreads,...),ncomms";
        let rest = line
            .strip_prefix("#DIMEMAS:\"")
            .ok_or_else(|| self.error(format!("{expected}, found '{}'", clip(line))))?;
        let (name, rest) = rest
            .split_once('"')
            .ok_or_else(|| self.error(format!("{expected}: the name's closing quote is missing")))?;
        let tasks_part = rest
            .strip_prefix(':')
            .and_then(|r| r.split_once(':'))
            .map(|(_, tasks)| tasks)
            .ok_or_else(|| self.error(format!("{expected}, found '{}'", clip(line))))?;
        let (count, threads) = tasks_part
            .split_once('(')
            .and_then(|(count, rest)| Some((count, rest.split_once(')')?.0)))
            .ok_or_else(|| self.error(format!("{expected}: no task count with thread counts in parentheses")))?;
        let tasks: u32 = count
            .trim()
            .parse()
            .map_err(|_| self.error(format!("the header's task count: expected a number, found '{count}'")))?;
        let threads: Vec<&str> = threads.split(',').map(str::trim).collect();
        if threads.len() != tasks as usize {
            return Err(self.error(format!(
                "the header lists {} thread counts for {tasks} tasks",
                threads.len()
            )));
        }
        for (task, n) in threads.iter().enumerate() {
            match n.parse::<u32>() {
                Ok(1) => {}
                Ok(n) => {
                    return Err(self.error(format!(
                        "task {task} has {n} threads; only single-threaded tasks are replayed yet"
                    )));
                }
                Err(_) => return Err(self.error(format!("task {task}'s thread count: expected a number, found '{n}'"))),
            }
        }
        self.programs = vec![Vec::new(); tasks as usize];
        self.requests = (0..tasks).map(|_| Requests::default()).collect();
        Ok(name.to_string())
    }

    fn record(&mut self, line: &str) -> Result<(), DimError> {
        if line.is_empty() || line.starts_with("s:") || line.starts_with('#') {
            return Ok(());
        }
        if line.starts_with("d:") {
            return self.group(line);
        }
        let fields: Vec<&str> = line.split(':').collect();
        if fields.len() < 3 {
            return Err(self.error(format!("expected a record op:task:thread:..., found '{}'", clip(line))));
        }
        let op: u32 = self.number(&fields, 0, "op")?;
        let task: u32 = self.number(&fields, 1, "task")?;
        let thread: u32 = self.number(&fields, 2, "thread")?;
        if task as usize >= self.programs.len() {
            return Err(self.error(format!(
                "task {task} does not exist (the header declares {})",
                self.programs.len()
            )));
        }
        if thread != 0 {
            return Err(self.error(format!("thread {thread} of task {task}: the header declares one")));
        }
        let args = &fields[3..];
        let op = match op {
            0 | 11 | 20 => return Ok(()),
            10 => return self.global_operation(task, &fields),
            1 => {
                self.arity(args, &[1], "a CPU burst (seconds)")?;
                let seconds: f64 = self.number(&fields, 3, "seconds")?;
                if !(seconds.is_finite() && seconds >= 0.0) {
                    return Err(self.error(format!("field 4 (seconds): expected a duration, found '{}'", fields[3])));
                }
                Op::Compute((seconds * 1e12).round() as Ps)
            }
            2 => self.send(task, &fields)?,
            3 => self.receive(task, &fields)?,
            other => return Err(self.error(format!("unknown record type {other}"))),
        };
        self.programs[task as usize].push(op);
        Ok(())
    }

    /// `2:task:thread:dst_task[:dst_thread]:size:tag:comm:sync`
    fn send(&mut self, task: u32, fields: &[&str]) -> Result<Op, DimError> {
        let n = self.arity(&fields[3..], &[6, 5], "a send (dst_task:dst_thread:size:tag:comm:sync)")?;
        let at = if n == 6 { 5 } else { 4 };
        let to: u32 = self.number(fields, 3, "dst_task")?;
        let size: u32 = self.number(fields, at, "size")?;
        let tag = self.matching_tag(fields, at + 1, at + 2)?;
        let sync: u32 = self.number(fields, at + 3, "sync")?;
        self.peer(to, "destination")?;
        let synchronous = sync & 1 != 0;
        if sync & 2 == 0 {
            return Ok(Op::Send {
                to,
                size,
                tag,
                synchronous,
            });
        }
        // An immediate send nobody waits for (the trace has no wait for sends).
        let requests = &mut self.requests[task as usize];
        let request = requests.next;
        requests.next += 1;
        Ok(Op::ISend {
            to,
            size,
            tag,
            synchronous,
            request,
        })
    }

    /// `3:task:thread:src_task:src_thread:size:tag:comm:type`
    fn receive(&mut self, task: u32, fields: &[&str]) -> Result<Op, DimError> {
        self.arity(&fields[3..], &[6], "a receive (src_task:src_thread:size:tag:comm:type)")?;
        let from: u32 = self.number(fields, 3, "src_task")?;
        let tag = self.matching_tag(fields, 6, 7)?;
        let kind: u32 = self.number(fields, 8, "type")?;
        self.peer(from, "source")?;
        let requests = &mut self.requests[task as usize];
        match kind {
            0 => Ok(Op::Recv { from, tag }),
            1 => {
                let request = requests.next;
                requests.next += 1;
                requests.receives.entry((from, tag)).or_default().push_back(request);
                Ok(Op::IRecv { from, tag, request })
            }
            2 => match requests.receives.get_mut(&(from, tag)).and_then(VecDeque::pop_front) {
                Some(request) => Ok(Op::Wait { request }),
                None => Err(self.error(format!(
                    "a wait (type 2) for a receive from task {from} with tag {tag}, but no immediate receive (type 1) of it is pending"
                ))),
            },
            other => Err(self.error(format!(
                "field 9 (type): expected 0 (blocking), 1 (immediate) or 2 (wait), found {other}"
            ))),
        }
    }

    /// `d:1:<comm>:<ntasks>:<task>...`
    fn group(&mut self, line: &str) -> Result<(), DimError> {
        let fields: Vec<&str> = line.split(':').collect();
        let comm: i64 = self.number(&fields, 2, "comm")?;
        let count: usize = self.number(&fields, 3, "ntasks")?;
        if fields.len() != 4 + count {
            return Err(self.error(format!(
                "communicator {comm} declares {count} tasks but lists {}",
                fields.len().saturating_sub(4)
            )));
        }
        let mut members = Vec::with_capacity(count);
        for index in 4..fields.len() {
            let task: u32 = self.number(&fields, index, "task")?;
            self.peer(task, "member")?;
            members.push(task);
        }
        self.groups.insert(comm, members);
        Ok(())
    }

    /// `10:task:thread:glop_id:comm:is_root:root_thread:bytes_sent:bytes_recv[:sync]`
    fn global_operation(&mut self, task: u32, fields: &[&str]) -> Result<(), DimError> {
        self.arity(
            &fields[3..],
            &[6, 7],
            "a global operation (glop_id:comm:is_root:root_thread:bytes_sent:bytes_recv)",
        )?;
        let id: u32 = self.number(fields, 3, "glop_id")?;
        let comm: i64 = self.number(fields, 4, "comm")?;
        let is_root: u32 = self.number(fields, 5, "is_root")?;
        let sent: u32 = self.number(fields, 7, "bytes_sent")?;
        let received: u32 = self.number(fields, 8, "bytes_recv")?;
        let algorithm = self
            .methods
            .algorithm(id)
            .ok_or_else(|| self.error(format!("field 4 (glop_id): unknown global operation {id} (0 to 31)")))?;
        self.calls.push(Call {
            task,
            at: self.programs[task as usize].len(),
            algorithm,
            id,
            comm,
            is_root: is_root != 0,
            size: sent.max(received),
            line: self.line,
        });
        Ok(())
    }

    /// Replaces every collective call by its point-to-point operations; returns how
    /// many collectives there were.
    fn decompose(&mut self) -> Result<u64, DimError> {
        let all: Vec<u32> = (0..self.programs.len() as u32).collect();
        // Per communicator, per member: its calls in order.
        let mut by_comm: BTreeMap<i64, BTreeMap<u32, Vec<Call>>> = BTreeMap::new();
        for call in &self.calls {
            by_comm
                .entry(call.comm)
                .or_default()
                .entry(call.task)
                .or_default()
                .push(*call);
        }
        // Operations to insert, per task, at positions in increasing order.
        let mut inserts: Vec<Vec<(usize, usize, Vec<Op>)>> = vec![Vec::new(); self.programs.len()];
        let mut collectives = 0u64;
        for (comm, calls) in &by_comm {
            let members = self.groups.get(comm).unwrap_or(&all);
            let first = calls.values().next().map_or(&[][..], Vec::as_slice);
            for &member in members {
                let mine = calls.get(&member).map_or(&[][..], Vec::as_slice);
                if mine.len() != first.len() {
                    let line = mine.last().or(first.last()).map_or(0, |c| c.line);
                    return Err(self.error_at(
                        line,
                        format!(
                            "task {member} makes {} collective calls on communicator {comm}, others {}",
                            mine.len(),
                            first.len()
                        ),
                    ));
                }
            }
            for (task, mine) in calls {
                if !members.contains(task) {
                    return Err(self.error_at(
                        mine[0].line,
                        format!("task {task} calls a collective on communicator {comm}, which it is not a member of"),
                    ));
                }
            }
            for k in 0..first.len() {
                let instance: Vec<Call> = members.iter().filter_map(|m| calls.get(m).map(|c| c[k])).collect();
                if let Some(other) = instance.iter().find(|c| c.id != instance[0].id) {
                    return Err(self.error_at(
                        other.line,
                        format!(
                            "collective call {} on communicator {comm}: task {} calls operation {}, task {} operation {}",
                            k + 1,
                            instance[0].task,
                            instance[0].id,
                            other.task,
                            other.id
                        ),
                    ));
                }
                let root = instance.iter().position(|c| c.is_root).unwrap_or(0);
                let tag = i32::MIN.wrapping_add(collectives as i32);
                for (me, call) in instance.iter().enumerate() {
                    let ops =
                        collective::operations(call.algorithm, members, me, root, call.size, tag, COLLECTIVE_REQUESTS);
                    inserts[call.task as usize].push((call.at, call.line, ops));
                }
                collectives += 1;
            }
        }
        for (program, mut inserts) in self.programs.iter_mut().zip(inserts) {
            // In trace order, inserted from the back so that earlier positions stay valid.
            inserts.sort_by_key(|&(at, line, _)| (at, line));
            for (at, _, ops) in inserts.into_iter().rev() {
                program.splice(at..at, ops);
            }
        }
        Ok(collectives)
    }

    fn error_at(&self, line: usize, message: String) -> DimError {
        DimError {
            file: self.file.to_string(),
            line,
            message,
        }
    }

    /// Checks the number of fields after op:task:thread; returns it.
    fn arity(&self, args: &[&str], allowed: &[usize], what: &str) -> Result<usize, DimError> {
        if allowed.contains(&args.len()) {
            return Ok(args.len());
        }
        Err(self.error(format!("{what}: expected {} fields, found {}", allowed[0], args.len())))
    }

    fn number<T: std::str::FromStr>(&self, fields: &[&str], index: usize, name: &str) -> Result<T, DimError> {
        let text = fields.get(index).copied().unwrap_or("").trim();
        text.parse().map_err(|_| {
            self.error(format!(
                "field {} ({name}): expected a number, found '{}'",
                index + 1,
                clip(text)
            ))
        })
    }

    /// The tag a point-to-point record matches on: its own on the first communicator,
    /// one of its (communicator, tag) pair's otherwise (see the module documentation).
    fn matching_tag(&mut self, fields: &[&str], tag_at: usize, comm_at: usize) -> Result<i32, DimError> {
        let tag: i32 = self.number(fields, tag_at, "tag")?;
        let comm: i64 = self.number(fields, comm_at, "comm")?;
        let first = *self.first_communicator.get_or_insert(comm);
        if comm == first {
            if tag < 0 && !self.renamed.is_empty() {
                return Err(self.error(format!(
                    "a negative tag ({tag}) beside messages on several communicators: their tags are renumbered \
                     from -1 down"
                )));
            }
            return Ok(tag);
        }
        if self.renamed.is_empty()
            && self
                .programs
                .iter()
                .flatten()
                .any(|op| op_tag(op).is_some_and(|t| t < 0))
        {
            return Err(self.error(format!(
                "messages on communicator {comm} beside negative tags on communicator {first}: their tags are \
                 renumbered from -1 down"
            )));
        }
        let next = -1 - self.renamed.len() as i32;
        Ok(*self.renamed.entry((comm, tag)).or_insert(next))
    }

    fn peer(&self, task: u32, role: &str) -> Result<(), DimError> {
        if (task as usize) < self.programs.len() {
            return Ok(());
        }
        Err(self.error(format!(
            "the {role} task {task} does not exist (the header declares {})",
            self.programs.len()
        )))
    }
}

/// The tag of a point-to-point operation.
fn op_tag(op: &Op) -> Option<i32> {
    match *op {
        Op::Send { tag, .. } | Op::ISend { tag, .. } | Op::Recv { tag, .. } | Op::IRecv { tag, .. } => Some(tag),
        _ => None,
    }
}

/// Writes `workload` as a `.dim` trace: one thread per task, one communicator (1),
/// offset lines, and the header padded so its offset could be rewritten in place.
pub fn write(workload: &Workload, out: &mut dyn std::io::Write) -> Result<(), String> {
    workload.check()?;
    let tasks = workload.tasks.len();
    // The size of every message, per (source, destination, tag), in send order.
    let mut sizes: BTreeMap<(u32, u32, i32), VecDeque<u32>> = BTreeMap::new();
    for (t, program) in workload.tasks.iter().enumerate() {
        for op in program {
            if let Op::Send { to, size, tag, .. } | Op::ISend { to, size, tag, .. } = *op {
                sizes.entry((t as u32, to, tag)).or_default().push_back(size);
            }
        }
    }
    let mut body = String::new();
    let members: Vec<String> = (0..tasks).map(|t| t.to_string()).collect();
    let _ = writeln!(body, "d:1:1:{tasks}:{}", members.join(":"));
    let mut starts = Vec::with_capacity(tasks);
    for (t, program) in workload.tasks.iter().enumerate() {
        starts.push(body.len());
        // Immediate receives by request: (source, size, tag).
        let mut receives: BTreeMap<u32, (u32, u32, i32)> = BTreeMap::new();
        for op in program {
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
                Op::Wait { request } => match receives.remove(&request) {
                    Some((from, size, tag)) => writeln!(body, "3:{t}:0:{from}:-1:{size}:{tag}:1:2"),
                    None => Ok(()),
                },
            };
        }
    }
    let offsets_at = body.len();
    let name = workload.name.replace('"', "'");
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
    out.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write the trace: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{IdealBus, ReplayOptions, replay, replay_with};

    /// The formats spec's example: an eager ping-pong of 1024 bytes, then an allreduce.
    const PING_PONG: &str = "#DIMEMAS:\"pingpong\":1,249:2(1,1),1,0,0
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

    #[test]
    fn the_spec_example_replays_with_times_by_hand() {
        let trace = parse(PING_PONG, "pingpong.dim").expect("parsed");
        assert_eq!(trace.collectives, 1);
        assert_eq!(trace.workload.name, "pingpong");
        // Then the allreduce: an exchange of 8 bytes with task 0 (4 operations).
        assert_eq!(trace.workload.tasks[1].len(), 3 + 4);
        assert_eq!(
            trace.workload.tasks[1][..3],
            [
                Op::Compute(2_000_000),
                Op::Recv { from: 0, tag: 7 },
                Op::Send {
                    to: 0,
                    size: 1024,
                    tag: 8,
                    synchronous: false
                }
            ]
        );
        // 1 byte per ns, no latency: task 0 sends at 1.5 µs, task 1 has it at 2.524 µs
        // (it computed until 2 µs), answers, task 0 has it at 3.548 µs. The allreduce
        // exchanges 8 bytes: task 1's (sent at 2.524 µs) is there; task 0's lands at
        // 3.556 µs, when task 1 ends; task 0 computes 0.3 µs more.
        let outcome = replay(&trace.workload, &mut IdealBus::new(1_000_000_000, 1, 0)).expect("replayed");
        assert_eq!(outcome.tasks[1].end, 3_556_000);
        assert_eq!(outcome.predicted, 3_848_000);
    }

    #[test]
    fn collectives_are_decomposed_by_the_methods_chosen() {
        // An all-reduce of 1000 bytes over 8 tasks, rooted at task 0.
        let mut text = String::from("#DIMEMAS:\"a\":0:8(1,1,1,1,1,1,1,1),1\nd:1:1:8:0:1:2:3:4:5:6:7\n");
        for t in 0..8 {
            text.push_str(&format!("10:{t}:0:11:1:{}:0:1000:1000\n", u8::from(t == 0)));
        }
        let predicted = |choice: Option<&str>| {
            let mut methods = Methods::default();
            if let Some(c) = choice {
                methods.choose(c).expect("valid");
            }
            let trace = parse_with(&text, "a.dim", &methods).expect("parsed");
            // 1 byte per ns, 100 ns latency: 1.1 µs a message.
            let mut bus = IdealBus::new(1_000_000_000, 1, 100_000);
            replay(&trace.workload, &mut bus).expect("replayed").predicted
        };
        let hop = 1_100_000;
        assert_eq!(predicted(None), 3 * hop);
        assert_eq!(predicted(Some("allreduce=flat")), 2 * hop);
        assert_eq!(predicted(Some("allreduce=reduce-broadcast")), 6 * hop);
    }

    #[test]
    fn messages_match_within_their_communicator() {
        // Task 0 sends 1000 bytes on communicator 1, then 100000 on communicator 2, both
        // tag 7; task 1 receives communicator 2's first. Matched by tag alone, the small
        // message would complete the first receive.
        let text = "#DIMEMAS:\"c\":0:2(1,1),2
2:0:0:1:-1:1000:7:1:0
2:0:0:1:-1:100000:7:2:0
3:1:0:0:-1:100000:7:2:0
3:1:0:0:-1:1000:7:1:0
";
        let trace = parse(text, "c.dim").expect("parsed");
        assert_eq!(
            trace.workload.tasks[1],
            vec![Op::Recv { from: 0, tag: -1 }, Op::Recv { from: 0, tag: 7 }]
        );
        // At 1 MBps (2^20 bytes/s) the large message takes about 95 ms; in order, task 1
        // is done when it arrives.
        let mut bus = IdealBus::from_mbps(1.0, 0).expect("bus");
        let outcome = replay_with(&trace.workload, &mut bus, &ReplayOptions::default()).expect("replayed");
        let large = 100_000u64 * 1_000_000_000_000 / (1 << 20);
        assert!(outcome.tasks[1].end >= large, "{:?}", outcome.tasks);
    }

    #[test]
    fn immediate_receives_are_waited_for_in_order() {
        let text = "#DIMEMAS:\"i\":0:2(1,1),1
3:0:0:1:-1:10:5:1:1
3:0:0:1:-1:10:5:1:1
3:0:0:1:-1:10:5:1:2
3:0:0:1:-1:10:5:1:2
2:1:0:0:10:5:1:2
2:1:0:0:-1:10:5:1:3
";
        let trace = parse(text, "i.dim").expect("parsed");
        assert_eq!(
            trace.workload.tasks[0],
            vec![
                Op::IRecv {
                    from: 1,
                    tag: 5,
                    request: 0
                },
                Op::IRecv {
                    from: 1,
                    tag: 5,
                    request: 1
                },
                Op::Wait { request: 0 },
                Op::Wait { request: 1 },
            ]
        );
        // The 5-field send form (immediate), then an immediate synchronous send.
        assert_eq!(
            trace.workload.tasks[1][0],
            Op::ISend {
                to: 0,
                size: 10,
                tag: 5,
                synchronous: false,
                request: 0
            }
        );
        assert_eq!(
            trace.workload.tasks[1][1],
            Op::ISend {
                to: 0,
                size: 10,
                tag: 5,
                synchronous: true,
                request: 1
            }
        );
        assert_eq!(trace.workload.check(), Ok(2));
    }

    #[test]
    fn written_workloads_read_back_and_replay_alike() {
        let workloads = [
            Workload::ping_pong(1024, 3),
            Workload::ring(5, 777, 2, 1_234_567),
            Workload::all_to_all(6, 1000),
            Workload::wrf(40, 16, 5000),
            Workload::butterfly(8, 300),
            Workload::wavefront(9, 2, 10).expect("square"),
            Workload::all_to_one(5, 1).with_start_delays(&[3, 1_000_000_000_007]),
        ];
        for workload in workloads {
            let mut bytes = Vec::new();
            write(&workload, &mut bytes).expect("written");
            let text = String::from_utf8(bytes).expect("UTF-8");
            let read = parse(&text, "w.dim").expect("read back").workload;
            assert_eq!(read.name, workload.name);
            let bus = || IdealBus::new(1_000_000_000, 1, 100_000);
            let before = replay(&workload, &mut bus()).expect("replayed");
            let after = replay(&read, &mut bus()).expect("replayed");
            assert_eq!(before, after, "{}", workload.name);
            // Every offset line points at its task's first record, and the header's
            // offset at the first offset line.
            for line in text.lines().filter(|l| l.starts_with("s:")) {
                let fields: Vec<&str> = line.split(':').collect();
                let at: usize = fields[2].parse().expect("an offset");
                let record = text[at..].split(':').nth(1);
                if !text[at..].starts_with("s:") {
                    assert_eq!(record, Some(fields[1]), "{line}");
                }
            }
            let header = text.lines().next().expect("a header");
            let after_name = header.rsplit_once('"').map(|(_, rest)| rest).expect("a name");
            let offset: usize = after_name
                .strip_prefix(":1,")
                .and_then(|rest| rest.split(':').next())
                .and_then(|o| o.parse().ok())
                .expect("an offset");
            assert!(text[offset..].starts_with("s:0:"), "{header}");
        }
    }

    #[test]
    fn receives_take_the_size_of_their_send() {
        let mut bytes = Vec::new();
        write(&Workload::ping_pong(4096, 1), &mut bytes).expect("written");
        let text = String::from_utf8(bytes).expect("UTF-8");
        assert!(text.contains("\n3:1:0:0:-1:4096:0:1:0\n"), "{text}");
        assert!(text.contains("\n2:0:0:1:-1:4096:0:1:0\n"), "{text}");
        assert!(text.lines().next().expect("header").ends_with(' '));
    }

    #[test]
    fn collectives_follow_their_communicator_and_root() {
        // Four tasks; a broadcast from task 2 over all, then an allreduce between
        // tasks 1 and 3 only (communicator 2), then a barrier.
        let text = "#DIMEMAS:\"c\":0:4(1,1,1,1),2
d:1:1:4:0:1:2:3
d:1:2:2:1:3
10:0:0:1:1:0:0:0:1000
10:1:0:1:1:0:0:0:1000
10:1:0:11:2:0:0:8:8
10:1:0:0:1:0:0:0:0
10:2:0:1:1:1:0:1000:0
10:2:0:0:1:0:0:0:0
10:3:0:1:1:0:0:0:1000
10:3:0:11:2:1:0:8:8
10:3:0:0:1:0:0:0:0
10:0:0:0:1:1:0:0:0
";
        let trace = parse(text, "c.dim").expect("parsed");
        assert_eq!(trace.collectives, 3);
        trace.workload.check().expect("balanced");
        // The broadcast from task 2: relative ranks 0..4 are tasks 2, 3, 0, 1; 2 sends
        // to 0 (relative 2) then 3, and 0 passes it to 1: 2 message times of 1.1 µs on
        // a 1 byte/ns bus with 100 ns latency. Then tasks 1 and 3 exchange 8 bytes
        // (108 ns), and the barrier takes 4 zero-byte messages of 100 ns.
        let outcome = replay(&trace.workload, &mut IdealBus::new(1_000_000_000, 1, 100_000)).expect("replayed");
        assert_eq!(outcome.predicted, 2 * 1_100_000 + 108_000 + 4 * 100_000);
    }

    #[test]
    fn errors_name_the_line_and_the_field() {
        let bad = |line: &str| {
            let text = format!("#DIMEMAS:\"b\":0:2(1,1),1\n1:0:0:0.5\n{line}\n");
            parse(&text, "b.dim").expect_err("refused").to_string()
        };
        assert_eq!(
            bad("2:0:0:1:-1:many:7:1:0"),
            "b.dim:3: field 6 (size): expected a number, found 'many'"
        );
        assert_eq!(
            bad("3:0:0:1:-1:8:7:1"),
            "b.dim:3: a receive (src_task:src_thread:size:tag:comm:type): expected 6 fields, found 5"
        );
        assert_eq!(
            bad("2:5:0:1:-1:8:7:1:0"),
            "b.dim:3: task 5 does not exist (the header declares 2)"
        );
        assert_eq!(
            bad("2:0:0:9:-1:8:7:1:0"),
            "b.dim:3: the destination task 9 does not exist (the header declares 2)"
        );
        assert_eq!(bad("1:0:1:0.5"), "b.dim:3: thread 1 of task 0: the header declares one");
        assert_eq!(
            bad("1:0:0:-3"),
            "b.dim:3: field 4 (seconds): expected a duration, found '-3'"
        );
        assert_eq!(bad("7:0:0:1"), "b.dim:3: unknown record type 7");
        assert_eq!(
            bad("10:0:0:40:1:0:0:8:8"),
            "b.dim:3: field 4 (glop_id): unknown global operation 40 (0 to 31)"
        );
        assert_eq!(
            bad("10:0:0:11:1:0:0:8:8\n10:1:0:0:1:0:0:0:0"),
            "b.dim:4: collective call 1 on communicator 1: task 0 calls operation 11, task 1 operation 0"
        );
        assert_eq!(
            bad("10:0:0:11:1:0:0:8:8"),
            "b.dim:3: task 1 makes 0 collective calls on communicator 1, others 1"
        );
        assert_eq!(
            bad("d:1:1:3:0:1"),
            "b.dim:3: communicator 1 declares 3 tasks but lists 2"
        );
        assert_eq!(
            bad("3:0:0:1:-1:8:7:1:2"),
            "b.dim:3: a wait (type 2) for a receive from task 1 with tag 7, but no immediate receive (type 1) of it is pending"
        );
        assert_eq!(
            bad("2:0:0:1:-1:8:-3:1:0\n2:0:0:1:-1:8:7:2:0"),
            "b.dim:4: messages on communicator 2 beside negative tags on communicator 1: their tags are renumbered \
             from -1 down"
        );
        let header = |text: &str| parse(text, "h.dim").expect_err("refused").to_string();
        assert_eq!(header(""), "h.dim:0: an empty file; expected a #DIMEMAS header");
        assert!(header("hello\n").starts_with("h.dim:1: expected a header #DIMEMAS:"));
        assert_eq!(
            header("#DIMEMAS:\"t\":0:2(1,2),1\n"),
            "h.dim:1: task 1 has 2 threads; only single-threaded tasks are replayed yet"
        );
        assert_eq!(
            header("#DIMEMAS:\"t\":0:3(1,1),1\n"),
            "h.dim:1: the header lists 2 thread counts for 3 tasks"
        );
        assert_eq!(
            read(Path::new("/nonexistent/x.dim")).expect_err("missing").to_string(),
            "/nonexistent/x.dim:0: cannot read it: No such file or directory (os error 2)"
        );
    }
}
