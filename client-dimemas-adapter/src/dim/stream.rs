//! A `.dim` trace read as the replay goes, each task's records from where they begin,
//! so that a trace larger than memory can be replayed.
//!
//! Opening the trace reads it once from start to end, line by line, keeping none of
//! it: every record is checked (errors name the line, before any replay starts), every
//! send is matched with a receive, the collective calls' roots are noted (a member's
//! record does not say who the root is, and decomposing a call needs it), and the
//! byte range of each task's records is noted. The replay then reads each task's
//! range in small pieces as it needs them.
//!
//! The offset lines (`s:`) are not needed: that first pass finds where each task's
//! records begin itself, and offset lines that disagree (hand-edited traces, or the
//! formats spec's own example, whose header is not padded as its offsets assume) are
//! not trusted; the pass checks them as Dimemas reads them (`rules.rs`), as the whole
//! reader does, and warns where Dimemas would not read the trace. A trace whose tasks'
//! records are not contiguous cannot be read in ranges; [`open`] reads such a trace
//! whole.

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use vesper_input::Lines;

use crate::input::input_error;
use crate::replay::collective::Methods;
use crate::replay::{Cursor, Op, Programs, THREAD};

use super::reader::{Collectives, Decoded, Plan, Reader};
use super::rules::Rules;
use super::{DIM_FILE, DimError, DimTrace, MAX_LINE_BYTES, MAX_WHOLE_TRACE_BYTES, without_end};

/// Bytes read at a time for one task (more when one line is longer).
const PIECE: usize = 4096;

/// A trace opened for replay.
pub struct Opened {
    /// its programs
    pub programs: Box<dyn Programs + Send>,
    /// collective calls decomposed into point-to-point messages
    pub collectives: u64,
    /// whether it is read as the replay goes ([`Stream`]) rather than held whole
    pub streamed: bool,
    /// what is suspect but does not stop the replay, each naming the file
    pub warnings: Vec<String>,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("name", &self.programs.name())
            .field("collectives", &self.collectives)
            .field("streamed", &self.streamed)
            .finish()
    }
}

/// Opens the trace at `path` for replay, collectives decomposed by `methods`: as a
/// [`Stream`] when each task's records are contiguous (as Dimemas writes them), read
/// whole otherwise.
pub fn open(path: &Path, methods: &Methods) -> Result<Opened, DimError> {
    open_observed(path, methods, &mut |_, _| {})
}

/// [`open`], telling `progress` how many bytes of how many the first pass has read.
pub fn open_observed(path: &Path, methods: &Methods, progress: &mut dyn FnMut(u64, u64)) -> Result<Opened, DimError> {
    match Stream::open_observed(path, methods, progress)? {
        Some(stream) => Ok(Opened {
            collectives: stream.collectives(),
            warnings: stream.warnings.clone(),
            programs: Box::new(stream),
            streamed: true,
        }),
        None => {
            let DimTrace {
                workload,
                threads,
                collectives,
                warnings,
            } = super::read_with(path, methods)?;
            Ok(Opened {
                programs: Box::new(Cursor::threaded(workload, threads)),
                collectives,
                streamed: false,
                warnings,
            })
        }
    }
}

/// A hash of a (source, destination, tag) triple (splitmix64's mixing, twice).
fn pair_hash(from: u32, to: u32, tag: i32) -> u64 {
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    mix(mix(u64::from(from) << 32 | u64::from(to)) ^ u64::from(tag as u32))
}

/// A trace whose tasks are read as the replay asks for their operations.
#[derive(Debug)]
pub struct Stream {
    name: String,
    /// per task, its threads
    threads: Vec<u32>,
    file: File,
    /// decodes lines as the first pass did (its tags and communicators)
    reader: Reader,
    plan: Plan,
    /// per program (thread)
    cursors: Vec<TaskCursor>,
    total: u64,
    /// the bytes of the piece being decoded
    piece: Vec<u8>,
    /// what is suspect but does not stop the replay, each naming the file
    warnings: Vec<String>,
}

/// Where a task is in its records.
#[derive(Debug, Default)]
struct TaskCursor {
    /// the byte offset of its next line, and the end of its records
    next: u64,
    end: u64,
    /// the line number of its next line
    line: usize,
    /// per communicator: collective calls read so far
    calls: BTreeMap<i64, usize>,
    /// operations decoded and not yet taken
    ops: VecDeque<Op>,
}

impl Stream {
    /// Reads the trace at `path` once to check it and to find each task's records;
    /// `None` if a task's records are not contiguous.
    pub fn open(path: &Path, methods: &Methods) -> Result<Option<Stream>, DimError> {
        Stream::open_observed(path, methods, &mut |_, _| {})
    }

    /// [`Stream::open`], telling `progress` how many bytes of how many it has read
    /// (every MiB, and at the end).
    pub fn open_observed(
        path: &Path,
        methods: &Methods,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<Option<Stream>, DimError> {
        let name_of_file = path.display().to_string();
        let failed = |e: vesper_input::InputError| input_error(&name_of_file, DIM_FILE, e);
        let cannot = |e: std::io::Error| failed(vesper_input::InputError::Open(e));
        let file = vesper_input::open(path).map_err(failed)?;
        let size = file.metadata().map_err(cannot)?.len();
        let mut lines = Lines::new(BufReader::new(file.try_clone().map_err(cannot)?), MAX_LINE_BYTES);
        let mut told = 0u64;
        let mut reader = Reader::new(methods, &name_of_file);
        let mut text = String::new();
        let mut offset = 0u64;
        let mut next_line = |text: &mut String| lines.read_line(text).map(|n| n as u64).map_err(failed);
        reader.line = 1;
        let read = next_line(&mut text)?;
        if read == 0 {
            return Err(reader.error_at(0, "an empty file; expected a #DIMEMAS header"));
        }
        let name = reader.header(text.trim_end())?;
        let mut rules = Rules::new(&name_of_file, without_end(&text), read, reader.threads());
        offset += read;
        let programs = reader.programs() as usize;
        let task_of = crate::replay::task_of_programs(reader.threads());
        let mut cursors: Vec<TaskCursor> = (0..programs).map(|_| TaskCursor::default()).collect();
        let mut started = vec![false; programs];
        let mut last: Option<u32> = None;
        let mut contiguous = true;
        let mut collectives = Collectives::default();
        let mut operations = 0u64;
        // Sends and receives per (source, destination, tag), as a sum of hashes: sends
        // add their pair's, receives take it away. A sum of 0 says (but for a chance of
        // 2^-64) that every send has its receive, in constant memory; a map of every
        // pair would grow with the trace when tags differ per message.
        let mut balance = 0u64;
        loop {
            reader.line += 1;
            let read = next_line(&mut text)?;
            if read == 0 {
                break;
            }
            let decoded = reader.record(text.trim_end())?;
            rules.line(offset, read, reader.line, without_end(&text));
            let program = match decoded {
                Decoded::Nothing => None,
                // Part of the program's records: its next record needs it.
                Decoded::Note(program) => Some(program),
                Decoded::Op(program, op) => {
                    operations += 1;
                    // Keyed as the replay matches: by tasks, or by threads of one task.
                    let me = |peer: u32| match peer & THREAD {
                        0 => task_of[program as usize],
                        _ => THREAD | program,
                    };
                    match op {
                        Op::Send { to, tag, .. } | Op::ISend { to, tag, .. } => {
                            balance = balance.wrapping_add(pair_hash(me(to), to, tag));
                        }
                        Op::Recv { from, tag } | Op::IRecv { from, tag, .. } => {
                            balance = balance.wrapping_sub(pair_hash(from, me(from), tag));
                        }
                        Op::Compute(_) | Op::Wait { .. } | Op::Global { .. } => {}
                    }
                    Some(program)
                }
                Decoded::Global(program, global) => {
                    collectives
                        .call(&global, reader.line)
                        .map_err(|e| reader.error_at(e.line(), e.to_string()))?;
                    Some(program)
                }
            };
            if let Some(program) = program {
                let cursor = &mut cursors[program as usize];
                if last != Some(program) {
                    if started[program as usize] {
                        contiguous = false;
                    }
                    started[program as usize] = true;
                    cursor.next = offset;
                    cursor.line = reader.line;
                    last = Some(program);
                }
                cursor.end = offset + read;
            }
            offset += read;
            if offset - told >= 1 << 20 {
                progress(offset, size);
                told = offset;
            }
        }
        progress(offset, size);
        let plan = collectives
            .plan(&reader.groups, reader.tasks())
            .map_err(|e| reader.error_at(e.line(), e.to_string()))?;
        reader.check_tags(plan.calls)?;
        if balance != 0 {
            if size > MAX_WHOLE_TRACE_BYTES {
                return Err(reader.error_at(
                    0,
                    format!(
                        "some sends have no matching receive, or receives no matching send; the trace is too \
                         large ({size} bytes) to be read whole to say which"
                    ),
                ));
            }
            // Read whole, the trace says which messages have no match, and where.
            let trace = super::read_with(path, methods)?;
            if let Err(reason) = trace.workload.check_threads(&trace.threads) {
                return Err(reader.error_at(0, reason.to_string()));
            }
        }
        let warnings = rules.finish(offset)?;
        if !contiguous {
            return Ok(None);
        }
        let total = operations + plan.operation_count(methods);
        Ok(Some(Stream {
            name,
            file,
            threads: reader.threads().to_vec(),
            reader: reader.restarted(),
            plan,
            cursors,
            total,
            piece: Vec::new(),
            warnings,
        }))
    }

    /// Collective calls decomposed into point-to-point messages.
    pub fn collectives(&self) -> u64 {
        self.plan.calls
    }

    /// The send phases of [`crate::replay::Workload::send_phases`] (for pattern-aware routing), read
    /// from a second pass over every task's records.
    pub fn send_phases(path: &Path, methods: &Methods) -> Result<Vec<Vec<(u32, u32)>>, DimError> {
        let Some(mut stream) = Stream::open(path, methods)? else {
            return Ok(super::read_with(path, methods)?.workload.send_phases());
        };
        let mut phases: Vec<Vec<(u32, u32)>> = Vec::new();
        let task_of = crate::replay::task_of_programs(&stream.threads);
        for program in 0..stream.cursors.len() as u32 {
            let mut k = 0;
            while let Some(op) = stream.take(program)? {
                if let Op::Send { to, .. } | Op::ISend { to, .. } = op {
                    if phases.len() <= k {
                        phases.push(Vec::new());
                    }
                    let to = if to & THREAD == 0 {
                        to
                    } else {
                        task_of[(to & !THREAD) as usize]
                    };
                    phases[k].push((task_of[program as usize], to));
                    k += 1;
                }
            }
        }
        Ok(phases)
    }

    /// Program `program`'s next operation, reading its next piece of records if none is
    /// left.
    fn take(&mut self, program: u32) -> Result<Option<Op>, DimError> {
        let t = program as usize;
        while self.cursors[t].ops.is_empty() && self.cursors[t].next < self.cursors[t].end {
            self.read_piece(program)?;
        }
        Ok(self.cursors[t].ops.pop_front())
    }

    /// Decodes the next whole lines of `program`'s records.
    fn read_piece(&mut self, program: u32) -> Result<(), DimError> {
        let cursor = &mut self.cursors[program as usize];
        let left = cursor.end - cursor.next;
        let mut want = PIECE.min(left as usize);
        let whole = loop {
            self.piece.resize(want, 0);
            let read = self
                .file
                .seek(SeekFrom::Start(cursor.next))
                .and_then(|_| self.file.read_exact(&mut self.piece));
            read.map_err(|e| self.reader.error_at(cursor.line, format!("cannot read it: {e}")))?;
            if want as u64 == left {
                break want;
            }
            match self.piece.iter().rposition(|&b| b == b'\n') {
                Some(at) => break at + 1,
                // The first pass read no line longer than this.
                None if want > MAX_LINE_BYTES => {
                    return Err(self.reader.error_at(
                        cursor.line,
                        "a line longer than when the trace was opened: the file changed since",
                    ));
                }
                // A line longer than the piece: read more.
                None => want = (want * 2).min(left as usize).min(MAX_LINE_BYTES + 1),
            }
        };
        cursor.next += whole as u64;
        for bytes in self.piece[..whole].split_inclusive(|&b| b == b'\n') {
            self.reader.line = cursor.line;
            cursor.line += 1;
            let text = std::str::from_utf8(bytes).map_err(|_| self.reader.error("not UTF-8 text"))?;
            match self.reader.record(text.trim_end())? {
                Decoded::Nothing => {}
                Decoded::Note(p) if p == program => {}
                Decoded::Op(p, op) if p == program => cursor.ops.push_back(op),
                Decoded::Global(p, global) if p == program => {
                    let k = cursor.calls.entry(global.comm).or_default();
                    cursor.ops.extend(self.plan.operations(global.task, &global, *k));
                    *k += 1;
                }
                Decoded::Note(..) | Decoded::Op(..) | Decoded::Global(..) => {
                    return Err(self
                        .reader
                        .error("a record of another thread among this one's: the file changed since it was opened"));
                }
            }
        }
        Ok(())
    }
}

impl Programs for Stream {
    fn name(&self) -> &str {
        &self.name
    }

    fn programs(&self) -> u32 {
        self.cursors.len() as u32
    }

    fn threads(&self) -> Vec<u32> {
        self.threads.clone()
    }

    fn total(&self) -> u64 {
        self.total
    }

    fn next(&mut self, program: u32) -> Result<Option<Op>, DimError> {
        self.take(program)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{IdealBus, ReplayOptions, Workload, drain, replay, replay_programs};
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A file holding `text`, removed when dropped.
    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn new(text: &str) -> Scratch {
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = std::env::temp_dir().join(format!("vesper-stream-{}-{n}.dim", std::process::id()));
            std::fs::write(&path, text).expect("written");
            Scratch(path)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn written(workload: &Workload) -> String {
        let mut bytes = Vec::new();
        super::super::write(workload, &mut bytes).expect("written");
        String::from_utf8(bytes).expect("UTF-8")
    }

    /// Streamed and read whole, `text` gives the same programs, count, collectives and
    /// warnings.
    fn same_as_whole(text: &str) -> Stream {
        let file = Scratch::new(text);
        let whole = super::super::parse(text, "w.dim").expect("parsed");
        let mut stream = Stream::open(&file.0, &Methods::default())
            .expect("opened")
            .expect("contiguous");
        let name = file.0.display().to_string();
        let warnings: Vec<String> = stream.warnings.iter().map(|w| w.replace(&name, "w.dim")).collect();
        assert_eq!(warnings, whole.warnings);
        assert_eq!(stream.total(), Cursor::new(&whole.workload).total());
        assert_eq!(stream.collectives(), whole.collectives);
        assert_eq!(drain(&mut stream).expect("read"), whole.workload);
        Stream::open(&file.0, &Methods::default())
            .expect("opened")
            .expect("contiguous")
    }

    #[test]
    fn a_streamed_trace_reads_as_the_whole_one() {
        same_as_whole(super::super::examples::COLLECTIVES);
        same_as_whole(super::super::examples::COMMUNICATORS);
        for workload in [
            Workload::ring(5, 777, 2, 1_234_567),
            Workload::wrf(40, 16, 5000),
            Workload::butterfly(8, 300),
            Workload::all_to_one(5, 1).with_start_delays(&[3, 1_000_000_000_007]),
        ] {
            same_as_whole(&written(&workload));
        }
    }

    #[test]
    fn a_streamed_trace_replays_as_the_whole_one() {
        let workload = Workload::all_to_all(16, 4000).with_start_delays(&[5_000, 0, 70_000]);
        let stream = same_as_whole(&written(&workload));
        let bus = || IdealBus::new(1_000_000_000, 1, 100_000);
        let whole = replay(&workload, &mut bus()).expect("replayed");
        let mut programs: Box<dyn Programs + Send> = Box::new(stream);
        let streamed =
            replay_programs(&mut programs, &mut bus(), &ReplayOptions::default(), &mut |_| {}).expect("replayed");
        assert_eq!(streamed, whole);
    }

    #[test]
    fn the_first_pass_tells_how_far_it_has_read() {
        let text = written(&Workload::all_to_all(64, 1000));
        let file = Scratch::new(&text);
        let mut seen = Vec::new();
        open_observed(&file.0, &Methods::default(), &mut |done, total| {
            seen.push((done, total))
        })
        .expect("opened");
        let size = text.len() as u64;
        assert_eq!(seen.last(), Some(&(size, size)));
        assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{seen:?}");
    }

    #[test]
    fn lines_longer_than_a_piece_are_read_whole() {
        let long = format!("# {}", "x".repeat(3 * PIECE));
        let text = format!(
            "#DIMEMAS:\"l\":0:2(1,1),1\n1:0:0:0.5\n{long}\n2:0:0:1:-1:10:0:1:0\n3:1:0:0:-1:10:0:1:0\n{long}\n1:1:0:1\n"
        );
        same_as_whole(&text);
    }

    #[test]
    fn a_line_over_the_limit_is_refused_by_number() {
        let header = "#DIMEMAS:\"l\":0:1(1),1\n1:0:0:0.5\n";
        let longest = format!("{header}# {}\n1:0:0:1\n", "x".repeat(MAX_LINE_BYTES - 2));
        same_as_whole(&longest);
        let file = Scratch::new(&format!("{header}# {}\n1:0:0:1\n", "x".repeat(MAX_LINE_BYTES - 1)));
        let err = open(&file.0, &Methods::default()).expect_err("too long");
        assert_eq!(
            (err.line, err.message.as_str()),
            (
                3,
                "the line is longer than 16777216 bytes, the longest line a .dim trace may hold"
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_refused_by_name_without_blocking() {
        let (dir, files) = crate::input::special_files("dim");
        for (path, kind) in &files {
            let want = crate::input::not_regular(path, kind);
            let streamed = Stream::open(path, &Methods::default()).expect_err("not regular");
            assert_eq!(streamed.to_string(), want);
            assert_eq!(
                open(path, &Methods::default()).expect_err("not regular").to_string(),
                want
            );
            let whole = super::super::read(path).expect_err("not regular");
            assert_eq!(whole.to_string(), want);
        }
        std::fs::remove_dir_all(&dir).expect("cleaned");
    }

    #[test]
    fn a_trace_too_large_to_read_whole_says_what_is_read_as_the_replay_goes() {
        let file = Scratch::new("");
        crate::input::sparse_file(&file.0, MAX_WHOLE_TRACE_BYTES + 1);
        let err = super::super::read(&file.0).expect_err("too large");
        assert_eq!(err.line, 0);
        assert_eq!(
            err.message,
            "it holds 1073741825 bytes, more than the 1073741824 bytes (1 GiB) such a file may hold; read whole \
             (its tasks' records interleaved, or to be saved again), a trace may hold no more; one whose tasks' \
             records are contiguous, as Dimemas writes them, is read as the replay goes, whatever its size"
        );
    }

    #[test]
    fn offset_lines_are_not_trusted() {
        // Dimemas refuses the spec's example (its offsets 12 bytes off): a warning says
        // so, and both readers read it all the same.
        let stream = same_as_whole(super::super::examples::PING_PONG);
        assert_eq!(stream.warnings.len(), 1);
        assert!(
            stream.warnings[0].contains("wrong offset definition (65)"),
            "{:?}",
            stream.warnings
        );
    }

    #[test]
    fn interleaved_tasks_are_read_whole() {
        let text = "#DIMEMAS:\"i\":0:2(1,1),1
2:0:0:1:-1:10:0:1:0
3:1:0:0:-1:10:0:1:0
1:0:0:0.5
";
        let file = Scratch::new(text);
        assert!(Stream::open(&file.0, &Methods::default()).expect("read").is_none());
        let mut opened = open(&file.0, &Methods::default()).expect("opened");
        assert!(!opened.streamed);
        let whole = super::super::parse(text, "i.dim").expect("parsed").workload;
        assert_eq!(drain(&mut opened.programs).expect("read").tasks, whole.tasks);
    }

    #[test]
    fn errors_name_the_line_before_the_replay_starts() {
        let refused = |text: &str| {
            let file = Scratch::new(text);
            let name = file.0.display().to_string();
            open(&file.0, &Methods::default())
                .expect_err("refused")
                .to_string()
                .replace(&name, "t.dim")
        };
        assert_eq!(
            refused("#DIMEMAS:\"b\":0:2(1,1),1\n1:0:0:0.5\n2:0:0:1:-1:many:7:1:0\n"),
            "t.dim:3: field 6 (size): expected a number, found 'many'"
        );
        assert_eq!(
            refused("#DIMEMAS:\"b\":0:2(1,1),1\n2:0:0:1:-1:8:7:1:0\n2:0:0:1:-1:8:7:1:0\n3:1:0:0:-1:8:7:1:0\n"),
            "t.dim:3: 1 message(s) from task 0 to task 1 with tag 7 on communicator 1 have no matching receive; the \
             first is this send"
        );
        assert_eq!(
            refused("#DIMEMAS:\"b\":0:2(1,1),1\n10:0:0:11:1:0:0:8:8\n"),
            "t.dim:2: task 1 makes 0 collective calls on communicator 1, others 1"
        );
        assert_eq!(refused(""), "t.dim:0: an empty file; expected a #DIMEMAS header");
        let binary = Scratch::new("");
        std::fs::write(&binary.0, b"#DIMEMAS:\"b\":0:1(1),1\n1:0:0:\xff\n").expect("written");
        let message = open(&binary.0, &Methods::default()).expect_err("refused").message;
        assert_eq!(message, "not UTF-8 text; a .dim trace is text");
        assert_eq!(
            refused("#DIMEMAS:\"b\":0:1(1),1\n1:0:0:\u{0}\u{ff}\n")
                .split(": ")
                .nth(1),
            Some("field 4 (seconds)")
        );
    }
}
