//! What Dimemas 5.5.0 requires of a trace's layout that vesper does not: checked line by
//! line as either reader goes (the same lines, so the same warnings), each break a
//! warning that quotes Dimemas's own reason. One break is an error: an offset of the
//! table that is no byte of the file (negative, or past its end) means nothing.
//!
//! vesper finds every thread's records itself, wherever they are. Dimemas reads a
//! trace by its offsets:
//!
//! ```text
//! #DIMEMAS:"name":1,<B>:2(1,1),1     B: the byte where the offsets table starts
//! d:1:1:2:0:1                       definitions: only right after the header
//! 1:0:0:0.000000000   ◀─┐           thread (0,0)'s first record, a CPU burst,
//! …                     │           then its other records, one after the other
//! 1:1:0:0.000000000   ◀─│─┐
//! …                     │ │
//! s:0:<offset>        ──┘ │  ◀── byte B: one line per task, in order, an offset a thread
//! s:1:<offset>        ────┘
//! ```
//!
//! - It reads the offsets table at the header's byte offset: one `s:` line per task, in
//!   order, with an offset per thread. Without a table (header flag 0) it takes thread
//!   (0,0)'s records to begin right after the definitions, and looks for each next
//!   thread's first record after the previous thread's.
//! - It reads a thread's records from its offset up to the first line that is not one
//!   of them: the thread's later records are never read, and a line that is no record
//!   (a comment, a communicator) stops it.
//! - It simulates a thread only if its first record is a CPU burst; with none, it
//!   reports the time of its first periodic event, 10 s.
//! - It takes a message between two threads of one task for an accelerator (CUDA)
//!   transfer.
//!
//! The rules and the reasons are Dimemas's (`Simulator/input/file_data_access.c` and
//! `Simulator/sched/schedule.c`). Every line is looked at as Dimemas's `sscanf` formats
//! read it, whatever vesper's own reading made of it.

use std::borrow::Cow;

use super::DimError;
use crate::input::clip;

/// Threads named one by one in the warnings of one kind; the others are counted.
const SHOWN: usize = 3;

/// The header's offsets field, as Dimemas reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Table {
    /// flag 0: no table; Dimemas locates the threads' first records
    Located,
    /// flag 1: a table at this byte
    At(u64),
    /// a header Dimemas refuses (its warning is given)
    Refused,
}

/// Dimemas reading the offsets table from the header's offset.
#[derive(Debug, Clone, Copy, PartialEq)]
enum TableRead {
    /// its first byte not reached yet
    Waiting,
    /// the line of this task is next
    Reading(u32),
    /// every task's line read
    Read,
    /// Dimemas refuses it (its warning is kept in `fault`)
    Failed,
}

/// What Dimemas does with one thread.
#[derive(Debug, Clone, Copy, Default)]
struct Thread {
    /// its first record's byte, line (0: none) and op
    first_at: u64,
    first_line: usize,
    first_op: i64,
    /// the line where Dimemas stops reading its records (0: not yet)
    ended_at: usize,
    /// its records after that, which Dimemas never reads, and the first one's line
    lost: u64,
    first_lost: usize,
    /// its offset in the offsets table, and the table's line
    table: Option<(u64, usize)>,
}

/// A line as Dimemas's `sscanf` formats read it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind<'a> {
    /// `\n` alone: skipped
    Empty,
    /// `d:%d:%[^\n]`, with its type
    Definition(i64),
    /// `%d:%d:%d:%[^\n]`, or a no-op `0:%d:%d` (its fields empty)
    Record {
        op: i64,
        task: i64,
        thread: i64,
        fields: &'a str,
    },
    /// `s:%d:%[^\n]`
    Offsets,
    /// anything else
    Other,
}

impl Kind<'_> {
    fn of(line: &str) -> Kind<'_> {
        if line.is_empty() {
            return Kind::Empty;
        }
        let tail = |rest: &str| rest.strip_prefix(':').filter(|r| !r.is_empty()).is_some();
        if let Some((op, rest)) = c_int(line)
            && let Some((task, rest)) = rest.strip_prefix(':').and_then(c_int)
            && let Some((thread, rest)) = rest.strip_prefix(':').and_then(c_int)
        {
            match rest.strip_prefix(':').filter(|r| !r.is_empty()) {
                Some(fields) => {
                    return Kind::Record {
                        op,
                        task,
                        thread,
                        fields,
                    };
                }
                // "0:%d:%d": a no-op (what follows is not looked at)
                None if line.starts_with("0:") => {
                    return Kind::Record {
                        op,
                        task,
                        thread,
                        fields: "",
                    };
                }
                None => {}
            }
        }
        if let Some(rest) = line.strip_prefix("s:")
            && c_int(rest).is_some_and(|(_, rest)| tail(rest))
        {
            return Kind::Offsets;
        }
        if let Some(rest) = line.strip_prefix("d:")
            && let Some((kind, rest)) = c_int(rest)
            && tail(rest)
        {
            return Kind::Definition(kind);
        }
        Kind::Other
    }
}

/// Where Dimemas refuses the offsets table.
#[derive(Debug, Clone, PartialEq)]
enum TableFault {
    /// the line read for `task` is no `s:` line
    Definition {
        line: usize,
        task: u32,
        text: String,
        inside: bool,
    },
    /// the line read for `expected` is task `read`'s
    Sequence { line: usize, expected: u32, read: i64 },
    /// task `task`'s line holds more offsets than its `threads`
    Bigger { line: usize, task: u32, threads: u32 },
    /// task `task`'s line holds `read` offsets, fewer than its `threads`
    Smaller {
        line: usize,
        task: u32,
        threads: u32,
        read: u32,
    },
}

/// Warnings given once a trace.
#[derive(Debug, Clone, Copy, Default)]
struct Said {
    definition_type: bool,
    late_definition: bool,
    not_a_record: bool,
    no_op_fields: bool,
}

/// The checks of one trace, fed its lines in order ([`Rules::line`]).
#[derive(Debug, Clone)]
pub(super) struct Rules {
    file: String,
    /// per task, its first program (thread), and after the last, the programs in all
    first_program: Vec<u32>,
    table: Table,
    read: TableRead,
    fault: Option<TableFault>,
    /// the first `s:0:` line: its byte and line
    first_offsets: Option<(u64, usize)>,
    /// per program
    threads: Vec<Thread>,
    /// the table's greatest offset as Dimemas reads it (negative ones, wrapped, are
    /// greater than any other), its line, its text and its thread
    farthest: Option<(u64, usize, String, u32)>,
    /// the program whose records Dimemas reads on into the next line
    current: Option<u32>,
    /// still in the definitions right after the header
    definitions: bool,
    /// the first line after them (0: not yet)
    definitions_end: usize,
    /// whether a line that is not empty came after them
    body: bool,
    /// the first message within a task: its line and what it is; and how many records
    /// are such messages
    accelerator: Option<(usize, String)>,
    accelerator_records: u64,
    /// lines read
    lines: usize,
    said: Said,
    warnings: Vec<String>,
}

impl Rules {
    /// The checks of `file`, whose header line (a header vesper read: tasks of
    /// `threads` threads each) is `header`, `bytes` long with its line end.
    pub fn new(file: &str, header: &str, bytes: u64, threads: &[u32]) -> Rules {
        let mut first_program = Vec::with_capacity(threads.len() + 1);
        let mut programs = 0u32;
        for &n in threads {
            first_program.push(programs);
            programs += n;
        }
        first_program.push(programs);
        let mut rules = Rules {
            file: file.to_string(),
            first_program,
            table: Table::Refused,
            read: TableRead::Waiting,
            fault: None,
            first_offsets: None,
            threads: vec![Thread::default(); programs as usize],
            farthest: None,
            current: None,
            definitions: true,
            definitions_end: 0,
            body: false,
            accelerator: None,
            accelerator_records: 0,
            lines: 1,
            said: Said::default(),
            warnings: Vec::new(),
        };
        rules.table = rules.header(header);
        // A table's offset inside the header (Dimemas reads its tail).
        rules.table_line(0, bytes, 1, header);
        rules
    }

    fn warn(&mut self, line: usize, message: String) {
        self.warnings.push(format!("{}:{line}: {message}", self.file));
    }

    /// `#DIMEMAS:"%[^"]":%[^:]:%s`, its offsets field `%d,%zu` or `%d`, and its tasks
    /// `%d(%[^)]),%d`.
    fn header(&mut self, line: &str) -> Table {
        let fields = line
            .strip_prefix("#DIMEMAS:\"")
            .and_then(|rest| rest.split_once('"'))
            .and_then(|(name, rest)| Some((name, rest.strip_prefix(':')?.split_once(':')?)));
        let Some((name, (offsets, tasks))) = fields else {
            return Table::Refused;
        };
        if name.is_empty() || offsets.is_empty() {
            let what = if name.is_empty() {
                "the trace's name"
            } else {
                "the header's offsets field"
            };
            self.warn(
                1,
                format!("{what} is empty: Dimemas refuses the trace (\"wrong header format\")"),
            );
            return Table::Refused;
        }
        // %s: up to the first blank.
        let word = tasks.trim_start_matches(c_space).split(c_space).next().unwrap_or("");
        let application = c_int(word)
            .and_then(|(_, rest)| rest.strip_prefix('('))
            .and_then(|rest| rest.split_once(')'))
            .filter(|(threads, _)| !threads.is_empty())
            .and_then(|(_, rest)| c_int(rest.strip_prefix(',')?));
        if application.is_none() {
            self.warn(
                1,
                format!(
                    "the header's tasks, threads and communicators ('{}') are not N(threads,…),C with no blank: \
                     Dimemas refuses the trace (\"wrong application definition on trace header ({})\")",
                    clip(tasks.trim()),
                    clip(word)
                ),
            );
        }
        let Some((flag, rest)) = c_int(offsets) else {
            self.warn(
                1,
                format!(
                    "the header's offsets field ('{}') is neither 0 (no offsets table) nor 1,<the table's byte \
                     offset>: Dimemas refuses the trace (\"wrong offsets definition on trace header\")",
                    clip(offsets)
                ),
            );
            return Table::Refused;
        };
        let at = rest.strip_prefix(',').and_then(c_unsigned).unwrap_or(0);
        let refused = match flag {
            1 if at == 0 => format!(
                "the header announces an offsets table but gives no byte offset for it ('{}'): Dimemas refuses \
                 the trace (\"wrong offsets offset position on trace header\")",
                clip(offsets)
            ),
            0 if at != 0 => format!(
                "the header says the trace has no offsets table (0) but gives a byte offset ('{}'): Dimemas \
                 refuses the trace (\"offsets offset wrong set\")",
                clip(offsets)
            ),
            1 => return Table::At(at),
            0 => return Table::Located,
            other => format!(
                "the header's offsets flag is {other}, neither 0 (no offsets table) nor 1 (a table at the byte \
                 offset after it): Dimemas refuses the trace (\"unknown offsets hint value on header '{other}'\")"
            ),
        };
        self.warn(1, refused);
        Table::Refused
    }

    /// Notes line `number`, `line` without its line end, which starts at byte `at` and
    /// takes `bytes` with its line end.
    pub fn line(&mut self, at: u64, bytes: u64, number: usize, line: &str) {
        self.lines = number;
        self.table_line(at, bytes, number, line);
        let kind = Kind::of(line);
        if self.definitions {
            if let Kind::Definition(kind) = kind {
                // Dimemas stops at the first.
                if !(1..=3).contains(&kind) && !self.said.definition_type {
                    self.said.definition_type = true;
                    self.warn(
                        number,
                        format!(
                            "a definition of type {kind}, not 1 (communicator), 2 (file) or 3 (window): Dimemas \
                             refuses the trace (\"unknown object definition type ({})\")",
                            clip(line)
                        ),
                    );
                }
                return;
            }
            self.definitions = false;
            self.definitions_end = number;
        }
        if kind == Kind::Offsets && line.starts_with("s:0:") && self.first_offsets.is_none() {
            self.first_offsets = Some((at, number));
        }
        if !self.body && kind != Kind::Empty {
            self.body = true;
            self.located_start(number, line, kind);
        }
        match kind {
            Kind::Empty => {}
            Kind::Record {
                op,
                task,
                thread,
                fields,
            } => self.record(at, number, (op, task, thread), fields),
            Kind::Offsets => self.end(number),
            Kind::Definition(_) => {
                if !self.said.late_definition {
                    self.said.late_definition = true;
                    let end = self.definitions_end;
                    self.warn(
                        number,
                        format!(
                            "a communicator after line {end}, which is not one: Dimemas reads definitions (d:) only \
                             right after the header, so it does not know this communicator"
                        ),
                    );
                }
                self.not_a_record(number, line);
            }
            Kind::Other => self.not_a_record(number, line),
        }
    }

    /// A record, `op` of `thread` of `task`, that starts at byte `at` on line `number`.
    fn record(&mut self, at: u64, number: usize, (op, task, thread): (i64, i64, i64), fields: &str) {
        let Some(program) = self.program(task, thread) else {
            // vesper refuses such a record; nothing of Dimemas's to add.
            self.end(number);
            return;
        };
        if op == 0 && !fields.is_empty() && !self.said.no_op_fields {
            self.said.no_op_fields = true;
            self.warn(
                number,
                format!(
                    "a no-op (op 0) with fields: Dimemas takes only 0:task:thread for a no-op and stops here \
                     (\"unknown action ({})\")",
                    clip(fields)
                ),
            );
        }
        if self.current != Some(program) {
            self.end(number);
            let state = &mut self.threads[program as usize];
            if state.first_line == 0 {
                state.first_at = at;
                state.first_line = number;
                state.first_op = op;
                self.current = Some(program);
            } else {
                if state.lost == 0 {
                    state.first_lost = number;
                }
                state.lost += 1;
            }
        }
        // dst_task:dst_thread:… or src_task:src_thread:… (5 fields: no thread, -1)
        let mut peer = fields.split(':');
        if (op == 2 || op == 3) && peer.next().and_then(c_int).is_some_and(|(t, _)| t == task) {
            let second = peer.next();
            let peer_thread = match peer.count() {
                4 => second.and_then(c_int).map_or(-1, |(t, _)| t),
                _ => -1,
            };
            if peer_thread != thread {
                self.accelerator_records += 1;
                if self.accelerator.is_none() {
                    let peer = match peer_thread {
                        -1 | -2 => "any thread".to_string(),
                        t => format!("thread {t}"),
                    };
                    let what = match op {
                        2 => format!("a send from thread ({task}, {thread}) to its own task ({peer})"),
                        _ => format!("a receive of thread ({task}, {thread}) from its own task ({peer})"),
                    };
                    self.accelerator = Some((number, what));
                }
            }
        }
    }

    /// Dimemas stops reading the current thread's records at line `number`.
    fn end(&mut self, number: usize) {
        if let Some(program) = self.current.take() {
            self.threads[program as usize].ended_at = number;
        }
    }

    /// A line that is no record: Dimemas stops if it reads it as a thread's next record.
    fn not_a_record(&mut self, number: usize, line: &str) {
        let Some(program) = self.current else { return };
        self.end(number);
        if !self.said.not_a_record {
            self.said.not_a_record = true;
            let (task, thread) = self.task_thread(program);
            self.warn(
                number,
                format!(
                    "this line follows thread ({task}, {thread})'s records, which Dimemas reads up to the next line \
                     of another thread or of the offsets table: it reads this one as a record and stops (\"wrong \
                     operation record format ({})\")",
                    clip(line)
                ),
            );
        }
    }

    /// Without a table, thread (0,0)'s records must begin on the first line after the
    /// definitions that is not empty, `number` (called once).
    fn located_start(&mut self, number: usize, line: &str, kind: Kind) {
        if self.table != Table::Located || self.threads.is_empty() {
            return;
        }
        let why = match kind {
            Kind::Record { task, thread, .. } if self.program(task, thread) == Some(0) => return,
            Kind::Record { .. } | Kind::Offsets => "\"P00 T00 (t00) initialized without actions\"".to_string(),
            _ => format!("\"wrong operation record format ({})\"", clip(line)),
        };
        self.warn(
            number,
            format!(
                "with no offsets table (header flag 0), Dimemas takes thread (0, 0)'s records to begin on the first \
                 line after the header and its definitions, this one, which is not one of them: it stops ({why})"
            ),
        );
    }

    /// Dimemas reading the offsets table: line `number`, starting at byte `at`.
    fn table_line(&mut self, at: u64, bytes: u64, number: usize, line: &str) {
        match self.read {
            TableRead::Waiting => {
                let Table::At(start) = self.table else { return };
                if !(at..at + bytes).contains(&start) {
                    return;
                }
                // From the header's offset to the line's end, as Dimemas's getline reads it.
                let from = ((start - at) as usize).min(line.len());
                let text = String::from_utf8_lossy(&line.as_bytes()[from..]);
                self.read = TableRead::Reading(0);
                self.offsets_line(&text, number, start != at);
            }
            TableRead::Reading(_) => self.offsets_line(line, number, false),
            TableRead::Read | TableRead::Failed => {}
        }
    }

    /// `s:%d:%[^\n]`, the line of the task next, its offsets split by `strtok(":")`.
    fn offsets_line(&mut self, text: &str, number: usize, inside: bool) {
        let TableRead::Reading(task) = self.read else { return };
        let parsed = text
            .strip_prefix("s:")
            .and_then(c_int)
            .and_then(|(t, rest)| Some((t, rest.strip_prefix(':').filter(|r| !r.is_empty())?)));
        let threads = self.first_program[task as usize + 1] - self.first_program[task as usize];
        let fault = match parsed {
            None => Some(TableFault::Definition {
                line: number,
                task,
                text: clip(text),
                inside,
            }),
            Some((t, _)) if t != i64::from(task) => Some(TableFault::Sequence {
                line: number,
                expected: task,
                read: t,
            }),
            Some((_, offsets)) => {
                let mut read = 0u32;
                let mut fault = None;
                for offset in offsets.split(':').filter(|o| !o.is_empty()) {
                    if read == threads {
                        fault = Some(TableFault::Bigger {
                            line: number,
                            task,
                            threads,
                        });
                        break;
                    }
                    let program = self.first_program[task as usize] + read;
                    let at = c_strtoul(offset);
                    self.threads[program as usize].table = Some((at, number));
                    if self.farthest.as_ref().is_none_or(|&(far, ..)| at > far) {
                        self.farthest = Some((at, number, clip(offset.trim_end()), program));
                    }
                    read += 1;
                }
                fault.or((read < threads).then_some(TableFault::Smaller {
                    line: number,
                    task,
                    threads,
                    read,
                }))
            }
        };
        self.read = match fault {
            Some(fault) => {
                self.fault = Some(fault);
                TableRead::Failed
            }
            None if task + 1 == self.tasks() => TableRead::Read,
            None => TableRead::Reading(task + 1),
        };
    }

    /// Every warning, once the trace's `size` bytes are read; or the error of an
    /// offset in the table Dimemas reads that is no byte of the file.
    pub fn finish(mut self, size: u64) -> Result<Vec<String>, DimError> {
        self.outside(size)?;
        self.table_warnings(size);
        if self.table == Table::Located {
            self.located_order();
        }
        let located = self.table == Table::Located;
        self.some_threads(
            |t| t.first_line == 0,
            |(task, thread), _| {
                let why = match located {
                    true => format!("error locating offset for task {task}, thread {thread}"),
                    false => format!("P00 T{task:02} (t{thread:02}) initialized without actions"),
                };
                (
                    1,
                    format!("thread ({task}, {thread}) has no record: Dimemas refuses the trace (\"{why}\")"),
                )
            },
            "with no record",
        );
        self.some_threads(
            |t| t.lost > 0,
            |(task, thread), t| {
                (
                    t.first_lost,
                    format!(
                        "{} record(s) of thread ({task}, {thread}) from here on come after other lines: Dimemas \
                         reads a thread's records from its first (line {}) up to the first line that is not one of \
                         them (line {}), and never reads these",
                        t.lost, t.first_line, t.ended_at
                    ),
                )
            },
            "whose records come apart",
        );
        self.some_threads(
            |t| t.first_line != 0 && !work(t.first_op),
            |(task, thread), t| {
                (
                    t.first_line,
                    format!(
                        "thread ({task}, {thread}) begins with {}, not a CPU burst: Dimemas does not simulate it (\"will \
                         not be simulated: not begins execution with work\"); a burst of 0 s first will do \
                         (1:{task}:{thread}:0)",
                        op_name(t.first_op),
                    ),
                )
            },
            "that do not begin with a CPU burst",
        );
        if self.threads.iter().any(|t| t.first_line != 0) && !self.threads.iter().any(|t| work(t.first_op)) {
            self.warn(
                1,
                "no thread begins with a CPU burst: Dimemas would simulate none of them, and report the time of its \
                 first periodic event, 10 s (1 s with --venus)"
                    .to_string(),
            );
        }
        if let Some((line, what)) = self.accelerator.take() {
            let n = self.accelerator_records;
            self.warn(
                line,
                format!(
                    "{what}: Dimemas takes a message between threads of one task for an accelerator (CUDA) transfer, \
                     always rendezvous, and may fail on it in a task the header does not declare an accelerator task \
                     ({n} such record(s))"
                ),
            );
        }
        Ok(self.warnings)
    }

    /// An error if the table Dimemas reads (whole) gives a thread an offset that is no
    /// byte of the file: Dimemas cannot read the thread's records from there, and the
    /// offset means nothing.
    fn outside(&self, size: u64) -> Result<(), DimError> {
        let (Table::At(_), TableRead::Read, None) = (self.table, self.read, &self.fault) else {
            return Ok(());
        };
        let Some((at, line, text, program)) = &self.farthest else {
            return Ok(());
        };
        if *at < size {
            return Ok(());
        }
        let (task, thread) = self.task_thread(*program);
        let what = match i64::try_from(*at) {
            Err(_) => "is before the file's start as Dimemas reads it (a signed offset), so it cannot read there \
                       (\"unable to position the trace\")"
                .to_string(),
            Ok(_) => format!(
                "is past the end of the file ({size} bytes), where Dimemas reads no record (\"P00 T{task:02} \
                 (t{thread:02}) initialized without actions\")"
            ),
        };
        let first = self.threads[*program as usize];
        let expected = match first.first_line {
            0 => "the thread has no record".to_string(),
            _ => format!(
                "expected the byte where the thread's first record starts, {}",
                first.first_at
            ),
        };
        Err(DimError {
            file: self.file.clone(),
            line: *line,
            message: format!(
                "the offsets table's line for task {task}: thread {thread}'s offset '{text}' {what}; {expected}"
            ),
        })
    }

    /// The offsets table's warning, if Dimemas refuses it, or those of its offsets that
    /// are not their threads' first records.
    fn table_warnings(&mut self, size: u64) {
        let Table::At(start) = self.table else { return };
        let tasks = self.tasks();
        let refused = |reason: String| format!("Dimemas refuses the trace (\"{reason}\")");
        let (line, message) = match (self.read, self.fault.take()) {
            (TableRead::Waiting, _) => (
                1,
                format!(
                    "the header's offset of the offsets table ({start}) is past the end of the file ({size} bytes): \
                     {}",
                    refused(format!(
                        "number of tasks offsets lower than application tasks ({tasks} expected, 0 read)"
                    ))
                ),
            ),
            (TableRead::Reading(read), _) => (
                self.lines,
                format!(
                    "the offsets table ends with the file after the lines of {read} of the {tasks} tasks: {}",
                    refused(format!(
                        "number of tasks offsets lower than application tasks ({tasks} expected, {read} read)"
                    ))
                ),
            ),
            (
                _,
                Some(TableFault::Definition {
                    line,
                    task,
                    text,
                    inside,
                }),
            ) if task > 0 || (!inside && text.starts_with("s:")) => (
                line,
                format!(
                    "the offsets table's line for task {task} ('{text}') is not s:{task}:<offset>[:<offset>…]: {}",
                    refused(format!("wrong offset definition ({text})"))
                ),
            ),
            (_, Some(TableFault::Definition { line, text, inside, .. })) => {
                let table = match self.first_offsets {
                    Some((at, line)) => format!("the table's first line, s:0:, is at byte {at} (line {line})"),
                    None => "the trace has no s:0: line".to_string(),
                };
                let place = if inside { "inside" } else { "the start of" };
                (
                    1,
                    format!(
                        "the header's offset of the offsets table, byte {start}, is {place} line {line}, but {table}: \
                         {}",
                        refused(format!("wrong offset definition ({text})"))
                    ),
                )
            }
            (_, Some(TableFault::Sequence { line, expected, read })) => (
                line,
                format!(
                    "the offsets table's line for task {expected} is task {read}'s: {}",
                    refused(format!(
                        "wrong task sequence when reading offsets ({expected} expected, {read} read)"
                    ))
                ),
            ),
            (_, Some(TableFault::Bigger { line, task, threads })) => (
                line,
                format!(
                    "the offsets table's line for task {task} gives more offsets than its {threads} thread(s): {}",
                    refused(format!(
                        "number of threads offsets bigger than task threads ({threads} expected, {threads} read)"
                    ))
                ),
            ),
            (
                _,
                Some(TableFault::Smaller {
                    line,
                    task,
                    threads,
                    read,
                }),
            ) => (
                line,
                format!(
                    "the offsets table's line for task {task} gives {read} offset(s) for its {threads} threads: {}",
                    refused(format!(
                        "number of threads offsets smaller than task threads ({threads} expected, {read} read)"
                    ))
                ),
            ),
            (_, None) => {
                self.some_threads(
                    |t| t.first_line != 0 && t.table.is_some_and(|(at, _)| at != t.first_at),
                    |(task, thread), t| {
                        let (at, line) = t.table.unwrap_or_default();
                        (
                            line,
                            format!(
                                "the offsets table gives thread ({task}, {thread}) byte {at}, but its first record \
                                 starts at byte {} (line {}): Dimemas reads the thread's records from byte {at}",
                                t.first_at, t.first_line
                            ),
                        )
                    },
                    "whose offsets are not their first records'",
                );
                return;
            }
        };
        self.warn(line, message);
    }

    /// Without a table, Dimemas looks for each thread's first record after the previous
    /// thread's: they must come in (task, thread) order.
    fn located_order(&mut self) {
        let mut previous: Option<(u32, usize)> = None;
        for program in 0..self.threads.len() as u32 {
            let line = self.threads[program as usize].first_line;
            if line == 0 {
                continue;
            }
            if let Some((before, before_line)) = previous
                && line < before_line
            {
                let (task, thread) = self.task_thread(program);
                let (t, th) = self.task_thread(before);
                self.warn(
                    line,
                    format!(
                        "thread ({task}, {thread})'s first record comes before thread ({t}, {th})'s (line \
                         {before_line}): with no offsets table (header flag 0), Dimemas looks for each thread's first \
                         record after the previous thread's, in (task, thread) order, and does not find it there \
                         (\"error locating offset for task {task}, thread {thread}\", or its records skipped up to \
                         a later one)"
                    ),
                );
                return;
            }
            previous = Some((program, line));
        }
    }

    /// A warning for each of the first [`SHOWN`] threads that `breaks` a rule, `say`
    /// giving its line and message; the others counted in one more, as threads `what`.
    fn some_threads(
        &mut self,
        breaks: impl Fn(&Thread) -> bool,
        say: impl Fn((u32, u32), &Thread) -> (usize, String),
        what: &str,
    ) {
        let mut count = 0usize;
        for program in 0..self.threads.len() as u32 {
            let thread = self.threads[program as usize];
            if !breaks(&thread) {
                continue;
            }
            if count < SHOWN {
                let (line, message) = say(self.task_thread(program), &thread);
                self.warn(line, message);
            }
            count += 1;
        }
        if count > SHOWN {
            let more = count - SHOWN;
            self.warnings
                .push(format!("{}: and {more} more thread(s) {what}", self.file));
        }
    }

    fn tasks(&self) -> u32 {
        self.first_program.len() as u32 - 1
    }

    /// The program of `thread` of `task`, if the header declares it.
    fn program(&self, task: i64, thread: i64) -> Option<u32> {
        let task = usize::try_from(task).ok().filter(|&t| t < self.tasks() as usize)?;
        let thread = u32::try_from(thread).ok()?;
        let first = self.first_program[task];
        (thread < self.first_program[task + 1] - first).then_some(first + thread)
    }

    /// The task and thread of `program`.
    fn task_thread(&self, program: u32) -> (u32, u32) {
        let task = self.first_program.partition_point(|&first| first <= program) - 1;
        (task as u32, program - self.first_program[task])
    }
}

/// Whether Dimemas takes record `op` for work: a CPU burst (1) or a GPU burst (11).
fn work(op: i64) -> bool {
    op == 1 || op == 11
}

fn op_name(op: i64) -> Cow<'static, str> {
    match op {
        0 => "a no-op".into(),
        2 => "a send".into(),
        3 => "a receive".into(),
        10 => "a global operation".into(),
        20 => "an event".into(),
        other => format!("a record of type {other}").into(),
    }
}

/// C's `isspace`.
fn c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r')
}

/// Blanks, a sign and decimal digits, as `sscanf`'s `%d` reads them: the number
/// (saturated) and the rest; `None` without a digit.
fn c_int(text: &str) -> Option<(i64, &str)> {
    let bytes = text.as_bytes();
    let mut i = bytes
        .iter()
        .position(|&b| !c_space(char::from(b)))
        .unwrap_or(bytes.len());
    let negative = bytes.get(i) == Some(&b'-');
    if matches!(bytes.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let digits = i;
    let mut value = 0i64;
    while let Some(&b) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
        value = value.saturating_mul(10).saturating_add(i64::from(b - b'0'));
        i += 1;
    }
    if i == digits {
        return None;
    }
    // Every byte passed is ASCII, so `i` is a character boundary.
    Some((if negative { -value } else { value }, &text[i..]))
}

/// `%zu`: as [`c_int`], unsigned (a minus sign wraps, as `strtoull`'s does).
fn c_unsigned(text: &str) -> Option<u64> {
    let (value, _) = c_int(text)?;
    Some(match value < 0 {
        true => value.unsigned_abs().wrapping_neg(),
        false => value as u64,
    })
}

/// C's `strtoul(text, NULL, 0)`: blanks, a sign, then hexadecimal after `0x`, octal
/// after `0`, decimal otherwise; 0 without a digit, `u64::MAX` past it.
fn c_strtoul(text: &str) -> u64 {
    let text = text.trim_start_matches(c_space);
    let (negative, text) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .filter(|rest| rest.starts_with(|c: char| c.is_ascii_hexdigit()));
    let (radix, digits) = match hex {
        Some(rest) => (16, rest),
        None if text.starts_with('0') => (8, text),
        None => (10, text),
    };
    let value = digits.chars().map_while(|c| c.to_digit(radix)).fold(0u64, |v, d| {
        v.saturating_mul(u64::from(radix)).saturating_add(u64::from(d))
    });
    if negative { value.wrapping_neg() } else { value }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_c_reads_them() {
        assert_eq!(c_int(" -12:x"), Some((-12, ":x")));
        assert_eq!(c_int("+7"), Some((7, "")));
        assert_eq!(c_int("x"), None);
        assert_eq!(c_int("-"), None);
        assert_eq!(c_int("99999999999999999999"), Some((i64::MAX, "")));
        assert_eq!(c_unsigned("237"), Some(237));
        assert_eq!(c_unsigned("-1"), Some(u64::MAX));
        assert_eq!(c_unsigned(""), None);
        for (text, value) in [
            ("51", 51),
            ("063", 51),
            ("0x33", 51),
            ("0X33\r", 51),
            (" 51 ", 51),
            ("0x", 0),
            ("08", 0),
            ("x", 0),
            ("-1", u64::MAX),
            ("99999999999999999999", u64::MAX),
        ] {
            assert_eq!(c_strtoul(text), value, "{text}");
        }
    }

    #[test]
    fn lines_are_what_dimemas_s_formats_make_of_them() {
        let record = |op, task, thread, fields| Kind::Record {
            op,
            task,
            thread,
            fields,
        };
        assert_eq!(Kind::of("1:0:0:0.5"), record(1, 0, 0, "0.5"));
        assert_eq!(Kind::of(" 2: 1:0:x"), record(2, 1, 0, "x"));
        assert_eq!(Kind::of("0:3:1"), record(0, 3, 1, ""));
        assert_eq!(Kind::of("0:3:1:"), record(0, 3, 1, ""));
        assert_eq!(Kind::of("1:0:0"), Kind::Other);
        assert_eq!(Kind::of("1:0:0:"), Kind::Other);
        assert_eq!(Kind::of(""), Kind::Empty);
        assert_eq!(Kind::of(" "), Kind::Other);
        assert_eq!(Kind::of("\r"), Kind::Other);
        assert_eq!(Kind::of("# note"), Kind::Other);
        assert_eq!(Kind::of("s:0:51"), Kind::Offsets);
        assert_eq!(Kind::of("s:0:"), Kind::Other);
        assert_eq!(Kind::of("d:1:1:2:0:1"), Kind::Definition(1));
        assert_eq!(Kind::of("d:x:1"), Kind::Other);
    }

    #[test]
    fn threads_are_named_by_task_and_thread() {
        let rules = Rules::new("t.dim", "#DIMEMAS:\"t\":0:3(2,1,3),1", 26, &[2, 1, 3]);
        let named: Vec<(u32, u32)> = (0..6).map(|p| rules.task_thread(p)).collect();
        assert_eq!(named, [(0, 0), (0, 1), (1, 0), (2, 0), (2, 1), (2, 2)]);
        assert_eq!(rules.program(2, 2), Some(5));
        assert_eq!(rules.program(1, 1), None);
        assert_eq!(rules.program(3, 0), None);
        assert_eq!(rules.program(-1, 0), None);
        assert_eq!(
            rules.finish(26).expect("no table"),
            [
                "t.dim:1: thread (0, 0) has no record: Dimemas refuses the trace (\"error locating offset for task 0, \
             thread 0\")",
                "t.dim:1: thread (0, 1) has no record: Dimemas refuses the trace (\"error locating offset for task 0, \
             thread 1\")",
                "t.dim:1: thread (1, 0) has no record: Dimemas refuses the trace (\"error locating offset for task 1, \
             thread 0\")",
                "t.dim: and 3 more thread(s) with no record",
            ]
        );
    }
}
