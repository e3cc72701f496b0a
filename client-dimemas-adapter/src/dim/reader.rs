//! One `.dim` line at a time: the decoding that reading a trace whole ([`super::parse`])
//! and reading it as the replay goes ([`super::Stream`]) share, so that both give the
//! same operations, and the bookkeeping of collective calls that must be complete
//! before any of them can be decomposed.

use std::collections::{BTreeMap, VecDeque};

use crate::input::clip;
use crate::replay::analytic::REDUCE;
use crate::replay::collective::{self, Algorithm, Methods, Treatment};
use crate::replay::{CLOCK_LIMIT, Op, THREAD, UNWAITED, ps_of_seconds};

/// The most threads a trace may have, over all its tasks: each keeps its replay state
/// in memory (about 2 KB), and the thread numbers must stay below [`THREAD`].
pub const MAX_THREADS: u32 = 1 << 20;
const _: () = assert!(MAX_THREADS < THREAD);

use super::{DimError, LABEL_EVENT, WAIT_RECEIVE_EVENT, WAIT_SEND_EVENT};

/// Requests of decomposed collectives: above the trace's own (which count from 0), and
/// all waited for within the collective.
const COLLECTIVE_REQUESTS: u32 = 1 << 31;

/// What a line holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Decoded {
    /// nothing to replay: a blank line, a comment, an offset line, a communicator, an
    /// event, a no-op
    Nothing,
    /// nothing to replay, but part of a program's records: one of vesper's events that
    /// say which request the program's next record starts or waits for
    Note(u32),
    /// an operation of a program (a thread of a task, numbered task by task)
    Op(u32, Op),
    /// a collective call of a program
    Global(u32, Global),
}

/// Why a trace's collective calls do not fit together, and the line that shows it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum CallError {
    /// a task calls collectives of one communicator from two threads
    #[error(
        "task {task} calls collectives on communicator {comm} from threads {first} and {other}: one thread per task \
         takes part"
    )]
    Threads {
        line: usize,
        task: u32,
        comm: i64,
        /// the thread of its first call, and of this one
        first: u32,
        other: u32,
    },
    /// the k-th calls of two tasks on a communicator are different operations
    #[error(
        "collective call {call} on communicator {comm}: task {first_task} calls operation {first_id}, task {task} operation {id}"
    )]
    Operation {
        line: usize,
        /// the call, from 1
        call: usize,
        comm: i64,
        /// the first task seen making it, and its operation
        first_task: u32,
        first_id: u32,
        /// this task, and its operation
        task: u32,
        id: u32,
    },
    /// a member makes another number of calls than the others
    #[error("task {member} makes {count} collective calls on communicator {comm}, others {others}")]
    Count {
        line: usize,
        member: u32,
        count: usize,
        comm: i64,
        /// the calls of the first task seen
        others: usize,
    },
    /// a task calls a collective of a communicator it is not a member of
    #[error("task {task} calls a collective on communicator {comm}, which it is not a member of")]
    NotMember { line: usize, task: u32, comm: i64 },
}

impl CallError {
    /// The line that shows the fault.
    pub(super) fn line(&self) -> usize {
        match *self {
            CallError::Threads { line, .. }
            | CallError::Operation { line, .. }
            | CallError::Count { line, .. }
            | CallError::NotMember { line, .. } => line,
        }
    }
}

/// One task's call of a collective, before it is decomposed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Global {
    /// the calling task and thread
    pub task: u32,
    pub thread: u32,
    /// decomposed by an algorithm, or modelled
    pub treatment: Treatment,
    /// the global-operation id
    pub id: u32,
    pub comm: i64,
    pub is_root: bool,
    /// the bytes its record says it sends and receives
    pub sent: u32,
    pub received: u32,
}

/// Per program: the next request name, the immediate receives started and not yet
/// waited for, by (source, tag), and the labels of vesper's events.
#[derive(Debug, Default, Clone)]
struct Requests {
    next: u32,
    receives: BTreeMap<(u32, i32), VecDeque<u32>>,
    /// the label (event [`LABEL_EVENT`]) for the next immediate send or receive, and
    /// the line that gave it
    label: Option<(u32, usize)>,
    /// labelled operations not yet waited for: label → (request, (source, tag) of a
    /// receive)
    labelled: BTreeMap<u32, (u32, Option<(u32, i32)>)>,
    /// the label of the receive the next type-2 record waits for (event
    /// [`WAIT_RECEIVE_EVENT`])
    wait_for: Option<u32>,
}

impl Requests {
    /// Receive `request` from `channel` is waited for: no longer pending.
    fn forget_receive(&mut self, channel: (u32, i32), request: u32) {
        if let Some(queue) = self.receives.get_mut(&channel) {
            queue.retain(|&r| r != request);
            if queue.is_empty() {
                self.receives.remove(&channel);
            }
        }
    }

    /// A name for an immediate operation that starts now, and its label if one was given.
    fn start(&mut self, receive: Option<(u32, i32)>) -> (u32, Option<u32>) {
        let request = self.next;
        self.next += 1;
        let label = self.label.take().map(|(label, _)| label);
        if let Some(label) = label {
            self.labelled.insert(label, (request, receive));
        }
        (request, label)
    }
}

/// Decodes lines; errors name the file and the current line.
#[derive(Debug, Clone)]
pub(super) struct Reader {
    /// how collectives are decomposed
    methods: Methods,
    file: String,
    /// the line being decoded (1-based)
    pub line: usize,
    /// per task, its threads
    threads: Vec<u32>,
    /// per task, its first program
    first_program: Vec<u32>,
    requests: Vec<Requests>,
    /// the first communicator of a point-to-point record: its tags are kept
    first_communicator: Option<i64>,
    /// the tags given to (communicator, tag) pairs of other communicators
    renamed: BTreeMap<(i64, i32), i32>,
    /// the line of the first record of the first communicator with a negative tag
    negative_tags: Option<usize>,
    /// the lowest negative tag of the first communicator: the tag, its line and field
    lowest_tag: Option<(i32, usize, usize)>,
    /// members of each communicator (`d:` lines)
    pub groups: BTreeMap<i64, Vec<u32>>,
    /// whether tags are checked as they come (not when reading again, out of order)
    checking: bool,
}

impl Reader {
    /// A reader of `file`, before its header.
    pub fn new(methods: &Methods, file: &str) -> Reader {
        Reader {
            methods: methods.clone(),
            file: file.to_string(),
            line: 0,
            threads: Vec::new(),
            first_program: Vec::new(),
            requests: Vec::new(),
            first_communicator: None,
            renamed: BTreeMap::new(),
            negative_tags: None,
            lowest_tag: None,
            groups: BTreeMap::new(),
            checking: true,
        }
    }

    /// A reader of the same trace from the start of every task's records again, with
    /// the tags and communicators this one has seen: lines decode as they did here,
    /// whatever order tasks are read in.
    pub fn restarted(&self) -> Reader {
        Reader {
            requests: vec![Requests::default(); self.programs() as usize],
            checking: false,
            ..self.clone()
        }
    }

    /// How many tasks the header declares.
    pub fn tasks(&self) -> u32 {
        self.threads.len() as u32
    }

    /// Per task, the threads the header declares.
    pub fn threads(&self) -> &[u32] {
        &self.threads
    }

    /// How many programs (threads of all tasks).
    pub fn programs(&self) -> u32 {
        self.first_program
            .last()
            .map_or(0, |&p| p + self.threads[self.threads.len() - 1])
    }

    pub fn error(&self, message: impl Into<String>) -> DimError {
        self.error_at(self.line, message)
    }

    pub fn error_at(&self, line: usize, message: impl Into<String>) -> DimError {
        DimError {
            file: self.file.clone(),
            line,
            message: message.into(),
        }
    }

    /// `#DIMEMAS:"<name>":<offsets>:<ntasks>(<nthreads>,...),<ncomms>...`: the name.
    pub fn header(&mut self, line: &str) -> Result<String, DimError> {
        let expected = "expected a header #DIMEMAS:\"name\":1,offset:ntasks(nthreads,...),ncomms";
        let rest = line
            .strip_prefix("#DIMEMAS:\"")
            .ok_or_else(|| self.error(format!("{expected}, found '{}'", clip(line))))?;
        let (name, rest) = rest
            .split_once('"')
            .ok_or_else(|| self.error(format!("{expected}: the name's closing quote is missing")))?;
        // The offsets field is Dimemas's (`super::rules`): vesper finds the records itself.
        let (_offsets, tasks_part) = rest
            .strip_prefix(':')
            .and_then(|r| r.split_once(':'))
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
        let mut first = 0u32;
        for (task, n) in threads.iter().enumerate() {
            match n.parse::<u32>() {
                Ok(0) => return Err(self.error(format!("task {task} has 0 threads; expected 1 or more"))),
                Ok(n) if first.checked_add(n).is_some_and(|end| end <= MAX_THREADS) => {
                    self.threads.push(n);
                    self.first_program.push(first);
                    first += n;
                }
                Ok(n) => {
                    return Err(self.error(format!(
                        "task {task} has {n} threads, which makes more than {MAX_THREADS} threads in all; \
                         vesper replays at most that many (each keeps its own state in memory)"
                    )));
                }
                Err(_) => return Err(self.error(format!("task {task}'s thread count: expected a number, found '{n}'"))),
            }
        }
        self.requests = vec![Requests::default(); first as usize];
        Ok(name.to_string())
    }

    /// Decodes a line after the header.
    pub fn record(&mut self, line: &str) -> Result<Decoded, DimError> {
        if line.is_empty() || line.starts_with("s:") || line.starts_with('#') {
            return Ok(Decoded::Nothing);
        }
        if line.starts_with("d:") {
            self.group(line)?;
            return Ok(Decoded::Nothing);
        }
        let fields: Vec<&str> = line.split(':').collect();
        if fields.len() < 3 {
            return Err(self.error(format!("expected a record op:task:thread:..., found '{}'", clip(line))));
        }
        let op: u32 = self.number(&fields, 0, "op")?;
        let task: u32 = self.number(&fields, 1, "task")?;
        let thread: u32 = self.number(&fields, 2, "thread")?;
        let program = self.program(task, thread)?;
        let args = &fields[3..];
        let op = match op {
            0 | 11 => return Ok(Decoded::Nothing),
            20 => return self.event(program, &fields),
            10 => return self.global_operation(program, task, thread, &fields),
            1 => {
                self.arity(args, &[1], "a CPU burst (seconds)")?;
                let seconds: f64 = self.number(&fields, 3, "seconds")?;
                if !(seconds.is_finite() && seconds >= 0.0) {
                    return Err(self.error(format!("field 4 (seconds): expected a duration, found '{}'", fields[3])));
                }
                let ps = ps_of_seconds(seconds).ok_or_else(|| {
                    self.error(format!(
                        "field 4 (seconds): a burst of {} s is longer than {CLOCK_LIMIT}",
                        clip(fields[3].trim())
                    ))
                })?;
                Op::Compute(ps)
            }
            2 => self.send(program, task, &fields)?,
            3 => self.receive(program, task, &fields)?,
            other => return Err(self.error(format!("unknown record type {other}"))),
        };
        Ok(Decoded::Op(program, op))
    }

    /// The program of `thread` of `task`.
    fn program(&self, task: u32, thread: u32) -> Result<u32, DimError> {
        let Some(&threads) = self.threads.get(task as usize) else {
            return Err(self.error(format!(
                "task {task} does not exist (the header declares {})",
                self.tasks()
            )));
        };
        if thread >= threads {
            return Err(self.error(format!(
                "thread {thread} of task {task} does not exist (the header declares {threads})"
            )));
        }
        Ok(self.first_program[task as usize] + thread)
    }

    /// The peer of a message of `task` with `peer`'s thread `role` (field `at`): `peer`
    /// itself, a task, unless it is `task` and the thread is given (not -1): then the
    /// thread, as a [`THREAD`] peer. Dimemas matches messages between tasks on task
    /// level, whatever thread fields they carry; but a thread the peer does not have
    /// (other than -1, or -2, which Dimemas reads as -1: any thread) is refused, as
    /// Dimemas fails on it.
    fn peer_thread(&self, task: u32, peer: u32, fields: &[&str], at: usize, role: &str) -> Result<u32, DimError> {
        let thread: i64 = self.number(fields, at, role)?;
        if thread == -1 || thread == -2 {
            return Ok(peer);
        }
        let threads = self.threads[peer as usize];
        let Some(thread) = u32::try_from(thread).ok().filter(|&t| t < threads) else {
            let expected = match threads {
                1 => "0".to_string(),
                n => format!("0 to {}", n - 1),
            };
            return Err(self.error(format!(
                "field {} ({role}): thread {thread} of task {peer} does not exist (the header declares {threads}); \
                 expected {expected}, or -1 for any thread",
                at + 1
            )));
        };
        match peer == task {
            true => Ok(THREAD | (self.first_program[task as usize] + thread)),
            false => Ok(peer),
        }
    }

    /// `20:task:thread:type:value`: nothing, unless it is one of vesper's events (see
    /// the module documentation of [`super`]), which say which immediate operation the
    /// program's next record starts or waits for. Other events are not checked.
    fn event(&mut self, program: u32, fields: &[&str]) -> Result<Decoded, DimError> {
        let kind = fields.get(3).and_then(|f| f.trim().parse::<u64>().ok());
        let Some(kind) = kind.filter(|k| (LABEL_EVENT..=WAIT_RECEIVE_EVENT).contains(k)) else {
            return Ok(Decoded::Nothing);
        };
        self.arity(&fields[3..], &[2], "an event (type:value)")?;
        let label: u32 = self.number(fields, 4, "value")?;
        let line = self.line;
        let requests = &mut self.requests[program as usize];
        match kind {
            LABEL_EVENT => {
                if let Some((earlier, at)) = requests.label {
                    return Err(self.error(format!(
                        "field 5 (value): label {label} (event {LABEL_EVENT}) while label {earlier} of line {at} \
                         has not been given to an immediate send or receive yet"
                    )));
                }
                if requests.labelled.contains_key(&label) {
                    return Err(self.error(format!(
                        "field 5 (value): label {label} (event {LABEL_EVENT}) names an immediate operation \
                         not yet waited for"
                    )));
                }
                requests.label = Some((label, line));
                Ok(Decoded::Note(program))
            }
            WAIT_SEND_EVENT => {
                let Some((request, receive)) = requests.labelled.remove(&label) else {
                    return Err(self.error(format!(
                        "field 5 (value): a wait (event {WAIT_SEND_EVENT}) for label {label}, but no immediate \
                         operation labelled {label} (event {LABEL_EVENT}) is pending"
                    )));
                };
                if let Some(channel) = receive {
                    requests.forget_receive(channel, request);
                }
                Ok(Decoded::Op(program, Op::Wait { request }))
            }
            _ => {
                if let Some(earlier) = requests.wait_for {
                    return Err(self.error(format!(
                        "field 5 (value): label {label} (event {WAIT_RECEIVE_EVENT}) while label {earlier} \
                         still waits for its type-2 receive record"
                    )));
                }
                requests.wait_for = Some(label);
                Ok(Decoded::Note(program))
            }
        }
    }

    /// An error if a label (event [`LABEL_EVENT`]) waits for an immediate operation and
    /// this record (`what`) is not one.
    fn no_label(&self, program: u32, what: &str) -> Result<(), DimError> {
        match self.requests[program as usize].label {
            Some((label, at)) => Err(self.error(format!(
                "{what} after label {label} (event {LABEL_EVENT}, line {at}), which names the next immediate \
                 send or receive"
            ))),
            None => Ok(()),
        }
    }

    /// `2:task:thread:dst_task[:dst_thread]:size:tag:comm:sync`
    fn send(&mut self, program: u32, task: u32, fields: &[&str]) -> Result<Op, DimError> {
        let n = self.arity(&fields[3..], &[6, 5], "a send (dst_task:dst_thread:size:tag:comm:sync)")?;
        let at = if n == 6 { 5 } else { 4 };
        let to: u32 = self.number(fields, 3, "dst_task")?;
        let size: u32 = self.number(fields, at, "size")?;
        let tag = self.matching_tag(fields, at + 1, at + 2)?;
        let sync: u32 = self.number(fields, at + 3, "sync")?;
        if sync > 3 {
            return Err(self.error(format!(
                "field {} (sync): expected 0 to 3 (bit 0 synchronous, bit 1 immediate), found {sync}",
                at + 4
            )));
        }
        self.peer(to, "destination")?;
        let to = if n == 6 {
            self.peer_thread(task, to, fields, 4, "dst_thread")?
        } else {
            to
        };
        let synchronous = sync & 1 != 0;
        if sync & 2 == 0 {
            self.no_label(program, "a blocking send")?;
            return Ok(Op::Send {
                to,
                size,
                tag,
                synchronous,
            });
        }
        // An immediate send nobody waits for (the format has no wait for sends), unless
        // vesper labelled it to wait for it by an event.
        let requests = &mut self.requests[program as usize];
        let request = match requests.label {
            Some(_) => requests.start(None).0,
            None => UNWAITED,
        };
        Ok(Op::ISend {
            to,
            size,
            tag,
            synchronous,
            request,
        })
    }

    /// `3:task:thread:src_task:src_thread:size:tag:comm:type`
    fn receive(&mut self, program: u32, task: u32, fields: &[&str]) -> Result<Op, DimError> {
        self.arity(&fields[3..], &[6], "a receive (src_task:src_thread:size:tag:comm:type)")?;
        let from: u32 = self.number(fields, 3, "src_task")?;
        let tag = self.matching_tag(fields, 6, 7)?;
        let kind: u32 = self.number(fields, 8, "type")?;
        self.peer(from, "source")?;
        let from = self.peer_thread(task, from, fields, 4, "src_thread")?;
        if kind != 1 {
            self.no_label(program, "a receive of type 0 or 2")?;
        }
        let requests = &mut self.requests[program as usize];
        match kind {
            0 => Ok(Op::Recv { from, tag }),
            1 => {
                let (request, _) = requests.start(Some((from, tag)));
                requests.receives.entry((from, tag)).or_default().push_back(request);
                Ok(Op::IRecv { from, tag, request })
            }
            2 => {
                if let Some(label) = requests.wait_for.take() {
                    // Not the oldest receive pending from the source with the tag: the
                    // one labelled (event WAIT_RECEIVE_EVENT before this record).
                    return match requests.labelled.remove(&label) {
                        Some((request, Some(channel))) if channel == (from, tag) => {
                            requests.forget_receive(channel, request);
                            Ok(Op::Wait { request })
                        }
                        _ => Err(self.error(format!(
                            "a wait (type 2) for label {label} (event {WAIT_RECEIVE_EVENT}), but no immediate \
                             receive from task {from} with tag {tag} labelled {label} is pending"
                        ))),
                    };
                }
                match requests.receives.get_mut(&(from, tag)).and_then(VecDeque::pop_front) {
                    Some(request) => {
                        if requests.receives.get(&(from, tag)).is_some_and(VecDeque::is_empty) {
                            // Gone when empty: traces with a tag per message would keep one each.
                            requests.receives.remove(&(from, tag));
                        }
                        if !requests.labelled.is_empty() {
                            requests.labelled.retain(|_, (r, _)| *r != request);
                        }
                        Ok(Op::Wait { request })
                    }
                    None => Err(self.error(format!(
                        "a wait (type 2) for a receive from task {from} with tag {tag}, but no immediate receive (type 1) of it is pending"
                    ))),
                }
            }
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
    fn global_operation(&mut self, program: u32, task: u32, thread: u32, fields: &[&str]) -> Result<Decoded, DimError> {
        self.arity(
            &fields[3..],
            &[6, 7],
            "a global operation (glop_id:comm:is_root:root_thread:bytes_sent:bytes_recv)",
        )?;
        let id: u32 = self.number(fields, 3, "glop_id")?;
        let comm: i64 = self.number(fields, 4, "comm")?;
        // Dimemas 5.5.0 (GLOBAL_operation): MPI_Reduce's field is the root's task id;
        // the others' says the caller is the root when it is 1 (TRUE).
        let root_field: u32 = self.number(fields, 5, "is_root")?;
        let is_root = if id == REDUCE {
            root_field == task
        } else {
            root_field == 1
        };
        let sent: u32 = self.number(fields, 7, "bytes_sent")?;
        let received: u32 = self.number(fields, 8, "bytes_recv")?;
        let treatment = self
            .methods
            .treatment(id)
            .ok_or_else(|| self.error(format!("field 4 (glop_id): unknown global operation {id} (0 to 31)")))?;
        Ok(Decoded::Global(
            program,
            Global {
                task,
                thread,
                treatment,
                id,
                comm,
                is_root,
                sent,
                received,
            },
        ))
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
        let apart = "vesper gives the (communicator, tag) pairs of communicators but the first tags of their own from \
                     -1 down, which negative tags would meet; renumber the tags from 0";
        if comm == first {
            if tag < 0 {
                if self.checking && !self.renamed.is_empty() {
                    return Err(self.error(format!(
                        "field {} (tag): a negative tag ({tag}) on communicator {comm} beside messages on other \
                         communicators: {apart}",
                        tag_at + 1
                    )));
                }
                self.negative_tags.get_or_insert(self.line);
                if self.checking && self.lowest_tag.is_none_or(|(lowest, ..)| tag < lowest) {
                    self.lowest_tag = Some((tag, self.line, tag_at + 1));
                }
            }
            return Ok(tag);
        }
        if let Some(&renamed) = self.renamed.get(&(comm, tag)) {
            return Ok(renamed);
        }
        if let Some(line) = self.negative_tags {
            return Err(self.error(format!(
                "field {} (comm): messages on communicator {comm} beside negative tags on communicator {first} (line \
                 {line}): {apart}",
                comm_at + 1
            )));
        }
        let next = -1 - self.renamed.len() as i32;
        self.renamed.insert((comm, tag), next);
        Ok(next)
    }

    /// An error naming the record of the lowest negative tag if it is among the tags of
    /// the messages of the trace's `calls` collective calls, from `i32::MIN` up
    /// (`Plan::operations`).
    pub fn check_tags(&self, calls: u64) -> Result<(), DimError> {
        let Some((tag, line, field)) = self.lowest_tag else {
            return Ok(());
        };
        let highest = i64::from(i32::MIN).saturating_add(i64::try_from(calls).unwrap_or(i64::MAX)) - 1;
        if calls == 0 || i64::from(tag) > highest {
            return Ok(());
        }
        Err(self.error_at(
            line,
            format!(
                "field {field} (tag): tag {tag} is among those vesper gives the messages of the trace's {calls} \
                 collective call(s), {} to {highest}; expected a tag above {highest}",
                i32::MIN
            ),
        ))
    }

    fn peer(&self, task: u32, role: &str) -> Result<(), DimError> {
        if task < self.tasks() {
            return Ok(());
        }
        Err(self.error(format!(
            "the {role} task {task} does not exist (the header declares {})",
            self.tasks()
        )))
    }
}

/// The collective calls of a trace, as far as they must all be known before any can be
/// decomposed: per communicator, each call's operation and root.
#[derive(Debug, Default, Clone)]
pub(super) struct Collectives {
    /// per communicator: its calls, in order
    calls: BTreeMap<i64, Vec<Instance>>,
    /// per (communicator, task): how many calls the task has made
    made: BTreeMap<(i64, u32), Made>,
}

/// One collective call, over every member.
#[derive(Debug, Clone, Copy)]
struct Instance {
    /// the operation, and the first task seen making it
    id: u32,
    task: u32,
    /// the first task seen that says it is the root
    root: Option<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Made {
    /// the thread making them
    thread: u32,
    count: usize,
    first_line: usize,
    last_line: usize,
}

impl Collectives {
    /// Notes the call `global` of its task, read on `line`; returns its index among the
    /// task's calls on that communicator.
    pub fn call(&mut self, global: &Global, line: usize) -> Result<usize, CallError> {
        let task = global.task;
        let made = self.made.entry((global.comm, task)).or_insert(Made {
            thread: global.thread,
            count: 0,
            first_line: line,
            last_line: line,
        });
        if made.thread != global.thread {
            // Dimemas counts a communicator's members as tasks, not threads.
            return Err(CallError::Threads {
                line,
                task,
                comm: global.comm,
                first: made.thread,
                other: global.thread,
            });
        }
        let k = made.count;
        made.count += 1;
        made.last_line = line;
        let calls = self.calls.entry(global.comm).or_default();
        // Every task's k-th call follows the k-th call of the first task seen, so k is at
        // most the number of calls known.
        match calls.get_mut(k) {
            None => calls.push(Instance {
                id: global.id,
                task,
                root: global.is_root.then_some(task),
            }),
            Some(instance) if instance.id != global.id => {
                return Err(CallError::Operation {
                    line,
                    call: k + 1,
                    comm: global.comm,
                    first_task: instance.task,
                    first_id: instance.id,
                    task,
                    id: global.id,
                });
            }
            Some(instance) => {
                if global.is_root && instance.root.is_none() {
                    instance.root = Some(task);
                }
            }
        }
        Ok(k)
    }

    /// Checks that every member of each communicator made the same calls and nobody
    /// else did, and fixes each call's tag and root. Communicators without a `d:` line
    /// hold every task.
    pub fn plan(&self, groups: &BTreeMap<i64, Vec<u32>>, tasks: u32) -> Result<Plan, CallError> {
        let mut comms = BTreeMap::new();
        let mut base = 0u64;
        for (&comm, calls) in &self.calls {
            let members: Vec<u32> = groups.get(&comm).cloned().unwrap_or_else(|| (0..tasks).collect());
            let made = || {
                self.made
                    .range((comm, 0)..=(comm, u32::MAX))
                    .map(|(&(_, t), m)| (t, *m))
            };
            let Some((_, first)) = made().next() else { continue };
            for &member in &members {
                let mine = self.made.get(&(comm, member));
                let count = mine.map_or(0, |m| m.count);
                if count != first.count {
                    let line = mine.map_or(first.last_line, |m| m.last_line);
                    return Err(CallError::Count {
                        line,
                        member,
                        count,
                        comm,
                        others: first.count,
                    });
                }
            }
            let rank: BTreeMap<u32, usize> = members.iter().enumerate().map(|(i, &t)| (t, i)).collect();
            if let Some((task, m)) = made().find(|(t, _)| !rank.contains_key(t)) {
                return Err(CallError::NotMember {
                    line: m.first_line,
                    task,
                    comm,
                });
            }
            let roots = calls.iter().map(|c| c.root.map_or(0, |r| rank[&r])).collect();
            let ids = calls.iter().map(|c| c.id).collect();
            comms.insert(
                comm,
                Communicator {
                    members,
                    rank,
                    base,
                    roots,
                    ids,
                },
            );
            base += calls.len() as u64;
        }
        Ok(Plan { comms, calls: base })
    }
}

/// How every collective call is decomposed: its members, its root and its tag.
#[derive(Debug, Clone, Default)]
pub(super) struct Plan {
    comms: BTreeMap<i64, Communicator>,
    /// collective calls in all
    pub calls: u64,
}

#[derive(Debug, Clone)]
struct Communicator {
    members: Vec<u32>,
    /// each member's index in `members`
    rank: BTreeMap<u32, usize>,
    /// the index among all collective calls of this communicator's first
    base: u64,
    /// per call: its root (an index into `members`) and its operation
    roots: Vec<usize>,
    ids: Vec<u32>,
}

impl Plan {
    /// The operations of `task`'s `k`-th call `global` on its communicator: point-to-point
    /// ones, or one [`Op::Global`] when it is modelled. Calls are numbered from 0,
    /// communicator by communicator; a decomposed call's messages have the tag
    /// `i32::MIN` + its number, below every application tag (and every renamed one).
    pub fn operations(&self, task: u32, global: &Global, k: usize) -> Vec<Op> {
        let Some(c) = self.comms.get(&global.comm) else {
            return Vec::new();
        };
        let (Some(&me), Some(&root)) = (c.rank.get(&task), c.roots.get(k)) else {
            return Vec::new();
        };
        let call = c.base + k as u64;
        match global.treatment {
            Treatment::Decomposed(algorithm) => {
                let tag = i32::MIN.wrapping_add(call as i32);
                let size = global.sent.max(global.received);
                collective::operations(algorithm, &c.members, me, root, size, tag, COLLECTIVE_REQUESTS)
            }
            Treatment::Analytic => vec![Op::Global {
                call,
                members: c.members.len() as u32,
                id: global.id as u8,
                is_root: global.is_root,
                sent: global.sent,
                received: global.received,
            }],
        }
    }

    /// The operations of every member of every call together.
    pub fn operation_count(&self, methods: &Methods) -> u64 {
        // Trees are relative to their root, so a call's count depends only on its
        // algorithm and group size.
        let mut known: Vec<(Algorithm, usize, u64)> = Vec::new();
        let mut total = 0;
        for c in self.comms.values() {
            let n = c.members.len();
            for &id in &c.ids {
                let algorithm = match methods.treatment(id) {
                    Some(Treatment::Decomposed(algorithm)) => algorithm,
                    Some(Treatment::Analytic) => {
                        total += n as u64;
                        continue;
                    }
                    None => continue,
                };
                let count = match known.iter().find(|&&(a, m, _)| a == algorithm && m == n) {
                    Some(&(_, _, count)) => count,
                    None => {
                        let count = (0..n)
                            .map(|me| collective::operations(algorithm, &c.members, me, 0, 1, 0, 0).len() as u64)
                            .sum();
                        known.push((algorithm, n, count));
                        count
                    }
                };
                total += count;
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fault_of_collective_calls_says_what_it_is_and_where() {
        let faults = [
            (
                CallError::Threads {
                    line: 3,
                    task: 0,
                    comm: 1,
                    first: 0,
                    other: 1,
                },
                "task 0 calls collectives on communicator 1 from threads 0 and 1: one thread per task takes part",
            ),
            (
                CallError::Operation {
                    line: 4,
                    call: 1,
                    comm: 1,
                    first_task: 0,
                    first_id: 11,
                    task: 1,
                    id: 0,
                },
                "collective call 1 on communicator 1: task 0 calls operation 11, task 1 operation 0",
            ),
            (
                CallError::Count {
                    line: 5,
                    member: 1,
                    count: 0,
                    comm: 1,
                    others: 1,
                },
                "task 1 makes 0 collective calls on communicator 1, others 1",
            ),
            (
                CallError::NotMember {
                    line: 6,
                    task: 3,
                    comm: 2,
                },
                "task 3 calls a collective on communicator 2, which it is not a member of",
            ),
        ];
        for (line, (fault, text)) in (3..).zip(faults) {
            assert_eq!((fault.line(), fault.to_string()), (line, text.to_string()));
        }
    }
}
