//! A checker for the network traces we write: parses a `.prv` (with its `.pcf` and
//! `.row`) and verifies what Paraver and the streaming tools rely on.
//!
//! - the header: `#Paraver (DD/MM/YYYY at HH:MM):<end>_ns:0:1:<ntasks>(<nthreads>:0,…)`;
//! - the `.row`: as many task and thread names as the header counts;
//! - every record: its field count, unsigned decimal fields, `cpu` 0, application 1,
//!   task and thread ids within the header's ranges, times within `[0, end]`; lines end
//!   in a newline alone (no carriage return);
//! - order: non-decreasing first time field; at equal times events, then states, then
//!   communications (the order the writer, [`super::paraver`], emits them in);
//! - states: `begin < end` and a value the `.pcf` labels; events: type/value pairs with
//!   types the `.pcf` declares; communications: logical send ≤ physical send ≤ logical
//!   receive ≤ physical receive.
//!
//! [`check`] checks a whole trace; [`RecordCheck`] checks the records one at a time as
//! they come (a collector receiving a stream), leaving what depends on the final
//! header and the `.pcf` (end time, state labels, event types) to
//! [`RecordCheck::finish`]. Both apply the same rules, and quote what they refuse with
//! its control characters escaped ([`escaped`]): a trace's bytes never reach a terminal
//! raw.

use std::collections::BTreeMap;

/// What a valid trace holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CheckedTrace {
    /// tasks in the header
    pub tasks: u32,
    /// threads in the header
    pub threads: u32,
    /// the header's end time \[ns\]
    pub end_ns: u64,
    /// state records
    pub states: u64,
    /// event records
    pub events: u64,
    /// communication records
    pub communications: u64,
}

/// Distinct event types a trace may hold (the writer uses 7): bounds what
/// [`RecordCheck`] keeps until the `.pcf` comes.
pub const MAX_EVENT_TYPES: usize = 1024;

/// Characters of a line quoted in an error, at most.
const QUOTED: usize = 100;

/// Why a trace, or one of its lines, is refused: the line, the rule, and what broke it
/// (quoted with [`escaped`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// the `.prv` has no header
    #[error("empty .prv")]
    EmptyPrv,
    /// something the `.prv` holds, as [`check`] names it
    #[error(".prv {0}")]
    InPrv(Box<CheckError>),
    /// a record line breaks a rule
    #[error("line {line}: {rule}: `{quoted}`")]
    Record {
        /// its line
        line: usize,
        /// the rule
        rule: RecordRule,
        /// the line, escaped
        quoted: String,
    },
    /// the header breaks a rule
    #[error("header: {rule}: `{quoted}`")]
    Header {
        /// the rule
        rule: HeaderRule,
        /// the header, escaped
        quoted: String,
    },
    /// the final header's tasks and threads differ from the first's
    #[error("header: expected the first header's tasks and threads, got `{quoted}`")]
    OtherTasks {
        /// the final header, escaped
        quoted: String,
    },
    /// a record ends after the final header's end time
    #[error("line {line}: time {latest} ns is after the header's end ({end_ns} ns)")]
    AfterEnd {
        /// the record's line
        line: usize,
        /// its latest time \[ns\]
        latest: u64,
        /// the header's end \[ns\]
        end_ns: u64,
    },
    /// a state the `.pcf` does not label
    #[error("line {line}: state {state} is not labelled in the .pcf")]
    UnlabelledState {
        /// the first line with the highest state
        line: usize,
        /// that state
        state: u64,
    },
    /// an event type the `.pcf` does not declare
    #[error("line {line}: event type {event_type} is not in the .pcf")]
    UndeclaredEventType {
        /// the first line with that type
        line: usize,
        /// the type
        event_type: u64,
    },
    /// the `.row` has no size line for a level
    #[error(".row: expected `LEVEL {level} SIZE <n>`")]
    RowSize {
        /// `TASK` or `THREAD`
        level: &'static str,
    },
    /// the `.row` names another number of tasks or threads than the header counts
    #[error(".row: LEVEL {level} says {size} and names {names}; the header counts {expected}")]
    RowCount {
        /// `TASK` or `THREAD`
        level: &'static str,
        /// its size line's number
        size: u32,
        /// the names under it
        names: u32,
        /// the header's count
        expected: u32,
    },
    /// a `.pcf` state line without its number
    #[error(".pcf: expected `<state> <label>`: `{quoted}`")]
    PcfState {
        /// the line, escaped
        quoted: String,
    },
    /// a `.pcf` event type line without its type
    #[error(".pcf: expected `0 <type> <label>`: `{quoted}`")]
    PcfEventType {
        /// the line, escaped
        quoted: String,
    },
    /// a `.pcf` with no states
    #[error(".pcf: no STATES")]
    PcfNoStates,
}

/// A rule a record line breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordRule {
    /// the line ends in `\r\n`
    #[error("{CARRIAGE_RETURN}")]
    CarriageReturn,
    /// a field that is no unsigned integer
    #[error("expected `:`-separated unsigned integers")]
    NotIntegers,
    /// a cpu other than 0 or an application other than 1
    #[error("expected cpu 0 and application 1")]
    CpuOrApplication,
    /// a task or thread the header does not have
    #[error("task or thread beyond the header")]
    UnknownThread,
    /// a state that ends before it begins, or after the header's end
    #[error("expected begin < end ≤ the header's end")]
    StateTimes,
    /// an event after the header's end
    #[error("an event after the header's end")]
    EventAfterEnd,
    /// more event types than the checker keeps
    #[error("more than {MAX_EVENT_TYPES} event types")]
    TooManyEventTypes,
    /// a communication's times out of order
    #[error("expected logical send ≤ physical send ≤ logical receive ≤ physical receive ≤ the end")]
    CommunicationTimes,
    /// no record kind has this many fields
    #[error("expected a state (8 fields), event (2k + 6) or communication (15)")]
    UnknownKind,
    /// a record before the one above it
    #[error("out of order: time {time} ns after {after} ns (records go by time, then events, states, communications)")]
    OutOfOrder {
        /// its time \[ns\]
        time: u64,
        /// the time of the record before \[ns\]
        after: u64,
    },
}

/// A rule the header breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderRule {
    /// the line ends in `\r\n`
    #[error("{CARRIAGE_RETURN}")]
    CarriageReturn,
    /// no `#Paraver (` first
    #[error("expected `#Paraver (`")]
    Paraver,
    /// no `(date):`
    #[error("expected `(date):`")]
    DateParentheses,
    /// a date of another form
    #[error("expected the date as DD/MM/YYYY at HH:MM")]
    Date,
    /// no `<end>_ns:`
    #[error("expected `<end>_ns:`")]
    EndField,
    /// an end time that is no number
    #[error("expected the end time in ns")]
    EndTime,
    /// resources, or other than one application
    #[error("expected no resources and one application")]
    Application,
    /// no `<ntasks>(`
    #[error("expected `<ntasks>(`")]
    TaskField,
    /// a task count that is no number
    #[error("expected the task count")]
    TaskCount,
    /// no `)` at the end
    #[error("expected `)` at the end")]
    CloseParenthesis,
    /// a task's entry not `<nthreads>:0`
    #[error("expected `<nthreads>:0` per task")]
    Threads,
    /// more or fewer tasks listed than counted
    #[error("the task list does not match the task count")]
    TaskList,
}

/// Checks a trace; the error names the line and what was wrong.
pub fn check(prv: &str, pcf: &str, row: &str) -> Result<CheckedTrace, CheckError> {
    // Lines end in `\n` alone: `str::lines` would take `\r\n` too.
    let mut lines = prv.split_terminator('\n');
    let header = lines.next().ok_or(CheckError::EmptyPrv)?;
    let in_prv = |e| CheckError::InPrv(Box::new(e));
    let mut records = RecordCheck::new(header).map_err(in_prv)?;
    for line in lines {
        records.record(line).map_err(in_prv)?;
    }
    records.finish(header, pcf, row).map_err(|e| match e {
        // The .row's and .pcf's own.
        CheckError::RowSize { .. }
        | CheckError::RowCount { .. }
        | CheckError::PcfState { .. }
        | CheckError::PcfEventType { .. }
        | CheckError::PcfNoStates => e,
        _ => in_prv(e),
    })
}

/// `text` safe to print: its control characters escaped (`\r`, `\0`, `\u{1b}`), cut
/// to 100 characters (then `…`).
pub fn escaped(text: &str) -> String {
    let mut shown = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == QUOTED {
            shown.push('…');
            break;
        }
        match c.is_control() {
            true => shown.extend(c.escape_debug()),
            false => shown.push(c),
        }
    }
    shown
}

/// Checks a trace's records one at a time, in order (header line 1, records from
/// line 2, as in the `.prv`).
#[derive(Debug, Clone)]
pub struct RecordCheck {
    /// each task's thread count, from the first header
    threads_of: Vec<u32>,
    /// the end time records are held to as they come; `None`: known at the end
    end_ns: Option<u64>,
    /// the line last checked
    line: usize,
    /// the last record's (time, kind)
    last: (u64, u8),
    /// the latest time a record mentions, and its line
    latest: (u64, usize),
    /// the highest state, and its line
    max_state: Option<(u64, usize)>,
    /// the event types seen, each with the first line that holds it
    event_types: BTreeMap<u64, usize>,
    counts: CheckedTrace,
}

impl RecordCheck {
    /// Records under `header` (the `.prv`'s first line), held to its end time as they
    /// come.
    pub fn new(header: &str) -> Result<RecordCheck, CheckError> {
        RecordCheck::start(header, true)
    }

    /// Records under a stream's provisional `header`: its end time is not yet known,
    /// and the records are held to the final header's by [`RecordCheck::finish`].
    pub fn provisional(header: &str) -> Result<RecordCheck, CheckError> {
        RecordCheck::start(header, false)
    }

    fn start(header: &str, end_known: bool) -> Result<RecordCheck, CheckError> {
        let (end_ns, threads_of) = parse_header(header)?;
        Ok(RecordCheck {
            counts: CheckedTrace {
                tasks: threads_of.len() as u32,
                threads: threads_of.iter().sum(),
                ..CheckedTrace::default()
            },
            threads_of,
            end_ns: end_known.then_some(end_ns),
            line: 1,
            last: (0, 0),
            latest: (0, 1),
            max_state: None,
            event_types: BTreeMap::new(),
        })
    }

    /// Records checked so far.
    pub fn records(&self) -> u64 {
        self.counts.states + self.counts.events + self.counts.communications
    }

    /// The latest time the records mention \[ns\]: a state's end, an event's time, a
    /// communication's physical receive (0 before any).
    pub fn latest_ns(&self) -> u64 {
        self.latest.0
    }

    /// Checks the next line, a record (without its newline); the error names the line
    /// and what was wrong, and quotes it.
    pub fn record(&mut self, line: &str) -> Result<(), CheckError> {
        self.line += 1;
        let n = self.line;
        let bad = |rule: RecordRule| CheckError::Record {
            line: n,
            rule,
            quoted: escaped(line),
        };
        if line.ends_with('\r') {
            return Err(bad(RecordRule::CarriageReturn));
        }
        let fields: Vec<u64> = line
            .split(':')
            .map(|f| match !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) {
                true => f.parse::<u64>().ok(),
                false => None,
            })
            .collect::<Option<_>>()
            .ok_or_else(|| bad(RecordRule::NotIntegers))?;
        let end_ns = self.end_ns.unwrap_or(u64::MAX);
        let entity = |at: usize| -> Result<(), CheckError> {
            let (cpu, app, task, thread) = (fields[at], fields[at + 1], fields[at + 2], fields[at + 3]);
            if cpu != 0 || app != 1 {
                return Err(bad(RecordRule::CpuOrApplication));
            }
            let known = task >= 1
                && task <= self.threads_of.len() as u64
                && thread >= 1
                && thread <= u64::from(self.threads_of[task as usize - 1]);
            if !known {
                return Err(bad(RecordRule::UnknownThread));
            }
            Ok(())
        };
        let (kind, latest) = match fields.first() {
            Some(1) if fields.len() == 8 => {
                entity(1)?;
                let (begin, end, state) = (fields[5], fields[6], fields[7]);
                if begin >= end || end > end_ns {
                    return Err(bad(RecordRule::StateTimes));
                }
                if self.max_state.is_none_or(|(max, _)| state > max) {
                    self.max_state = Some((state, n));
                }
                self.counts.states += 1;
                (1, end)
            }
            Some(2) if fields.len() >= 8 && fields.len().is_multiple_of(2) => {
                entity(1)?;
                if fields[5] > end_ns {
                    return Err(bad(RecordRule::EventAfterEnd));
                }
                for &event_type in fields[6..].iter().step_by(2) {
                    if !self.event_types.contains_key(&event_type) && self.event_types.len() == MAX_EVENT_TYPES {
                        return Err(bad(RecordRule::TooManyEventTypes));
                    }
                    self.event_types.entry(event_type).or_insert(n);
                }
                self.counts.events += 1;
                (0, fields[5])
            }
            Some(3) if fields.len() == 15 => {
                entity(1)?;
                entity(7)?;
                let times = [fields[5], fields[6], fields[11], fields[12]];
                if !times.windows(2).all(|w| w[0] <= w[1]) || times[3] > end_ns {
                    return Err(bad(RecordRule::CommunicationTimes));
                }
                self.counts.communications += 1;
                (2, times[3])
            }
            _ => return Err(bad(RecordRule::UnknownKind)),
        };
        let key = (fields[5], kind);
        if key < self.last {
            return Err(bad(RecordRule::OutOfOrder {
                time: key.0,
                after: self.last.0,
            }));
        }
        self.last = key;
        if latest > self.latest.0 {
            self.latest = (latest, n);
        }
        Ok(())
    }

    /// Checks the final `header` (the first one's but for its end time), which must
    /// not end before the records; its end time.
    pub fn final_header(&self, header: &str) -> Result<u64, CheckError> {
        let (end_ns, threads_of) = parse_header(header)?;
        if threads_of != self.threads_of {
            return Err(CheckError::OtherTasks {
                quoted: escaped(header),
            });
        }
        let (latest, line) = self.latest;
        if latest > end_ns {
            return Err(CheckError::AfterEnd { line, latest, end_ns });
        }
        Ok(end_ns)
    }

    /// Checks what needs the whole trace: the final `header`, the `.row`'s names and
    /// that the `.pcf` labels every state and declares every event type the records
    /// hold.
    pub fn finish(self, header: &str, pcf: &str, row: &str) -> Result<CheckedTrace, CheckError> {
        let end_ns = self.final_header(header)?;
        check_row(row, self.counts.tasks, self.counts.threads)?;
        let (max_state, event_types) = parse_pcf(pcf)?;
        if let Some((state, line)) = self.max_state.filter(|&(state, _)| state > max_state) {
            return Err(CheckError::UnlabelledState { line, state });
        }
        if let Some((event_type, line)) = self.event_types.iter().find(|(t, _)| !event_types.contains(t)) {
            return Err(CheckError::UndeclaredEventType {
                line: *line,
                event_type: *event_type,
            });
        }
        Ok(CheckedTrace { end_ns, ..self.counts })
    }
}

/// Why a line ending in `\r\n` is refused.
pub const CARRIAGE_RETURN: &str =
    "a carriage return (\\r) ends the line: trace lines end in a newline (\\n) alone (was it converted to CRLF?)";

/// The end time and each task's thread count.
fn parse_header(header: &str) -> Result<(u64, Vec<u32>), CheckError> {
    let bad = |rule: HeaderRule| CheckError::Header {
        rule,
        quoted: escaped(header),
    };
    if header.ends_with('\r') {
        return Err(bad(HeaderRule::CarriageReturn));
    }
    let rest = header
        .strip_prefix("#Paraver (")
        .ok_or_else(|| bad(HeaderRule::Paraver))?;
    let (date, rest) = rest.split_once("):").ok_or_else(|| bad(HeaderRule::DateParentheses))?;
    let date_ok = date.len() == 19 && date.as_bytes()[10..14] == *b" at " && date.as_bytes()[2] == b'/';
    if !date_ok {
        return Err(bad(HeaderRule::Date));
    }
    let (end, rest) = rest.split_once("_ns:").ok_or_else(|| bad(HeaderRule::EndField))?;
    let end: u64 = end.parse().map_err(|_| bad(HeaderRule::EndTime))?;
    let apps = rest.strip_prefix("0:1:").ok_or_else(|| bad(HeaderRule::Application))?;
    let (ntasks, list) = apps.split_once('(').ok_or_else(|| bad(HeaderRule::TaskField))?;
    let ntasks: usize = ntasks.parse().map_err(|_| bad(HeaderRule::TaskCount))?;
    let list = list
        .strip_suffix(')')
        .ok_or_else(|| bad(HeaderRule::CloseParenthesis))?;
    let threads = list
        .split(',')
        .map(|t| {
            let (n, node) = t.split_once(':')?;
            let n: u32 = n.parse().ok()?;
            (node == "0" && n > 0).then_some(n)
        })
        .collect::<Option<Vec<u32>>>()
        .ok_or_else(|| bad(HeaderRule::Threads))?;
    if threads.len() != ntasks {
        return Err(bad(HeaderRule::TaskList));
    }
    Ok((end, threads))
}

fn check_row(row: &str, tasks: u32, threads: u32) -> Result<(), CheckError> {
    for (level, expected) in [("TASK", tasks), ("THREAD", threads)] {
        let head = format!("LEVEL {level} SIZE ");
        let mut lines = row.lines().skip_while(|l| !l.starts_with(&head));
        let size: u32 = lines
            .next()
            .and_then(|l| l[head.len()..].parse().ok())
            .ok_or(CheckError::RowSize { level })?;
        let names = lines.take_while(|l| !l.is_empty()).count() as u32;
        if size != expected || names != expected {
            return Err(CheckError::RowCount {
                level,
                size,
                names,
                expected,
            });
        }
    }
    Ok(())
}

/// The highest state labelled and the event types declared.
fn parse_pcf(pcf: &str) -> Result<(u64, Vec<u64>), CheckError> {
    let mut section = "";
    let mut max_state = None;
    let mut types = Vec::new();
    for line in pcf.lines() {
        let line = line.trim();
        match line {
            "" => continue,
            "DEFAULT_OPTIONS" | "DEFAULT_SEMANTIC" | "STATES" | "STATES_COLOR" | "EVENT_TYPE" | "VALUES" => {
                section = if line == "VALUES" { "VALUES" } else { line };
                continue;
            }
            _ => {}
        }
        let mut words = line.split_whitespace();
        match section {
            "STATES" => {
                let state: u64 = words
                    .next()
                    .and_then(|w| w.parse().ok())
                    .ok_or_else(|| CheckError::PcfState { quoted: escaped(line) })?;
                max_state = Some(max_state.map_or(state, |m: u64| m.max(state)));
            }
            "EVENT_TYPE" => {
                let t = words
                    .nth(1)
                    .and_then(|w| w.parse().ok())
                    .ok_or_else(|| CheckError::PcfEventType { quoted: escaped(line) })?;
                types.push(t);
            }
            _ => {}
        }
    }
    Ok((max_state.ok_or(CheckError::PcfNoStates)?, types))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "#Paraver (01/01/2026 at 00:00):5000_ns:0:1:2(2:0,1:0)";
    const PCF: &str = "STATES\n0 Empty\n1 Backlog\n\nEVENT_TYPE\n0 70000004 Segment\n";
    const ROW: &str = "LEVEL TASK SIZE 2\nsw0\nhost0\n\nLEVEL THREAD SIZE 3\nsw0.p0\nsw0.p1\nhost0.p0\n";

    #[test]
    fn a_trace_of_each_kind_of_record_checks() {
        let prv = format!(
            "{HEADER}\n2:0:1:1:2:100:70000004:1\n1:0:1:2:1:100:900:1\n3:0:1:2:1:100:120:0:1:1:1:140:5000:64:1\n"
        );
        let checked = check(&prv, PCF, ROW).expect("valid");
        assert_eq!(
            checked,
            CheckedTrace {
                tasks: 2,
                threads: 3,
                end_ns: 5000,
                states: 1,
                events: 1,
                communications: 1,
            }
        );
    }

    #[test]
    fn what_is_refused_is_named_with_its_line_and_quoted_escaped() {
        let cases = [
            ("1:0:1:1:1:0:10:1\r", "line 2: a carriage return (\\r) ends the line"),
            (
                "1:0:1:1:1:0:10:\u{1b}[31m",
                "line 2: expected `:`-separated unsigned integers: `1:0:1:1:1:0:10:\\u{1b}[31m`",
            ),
            ("1:0:1:1:1:0:+10:1", "line 2: expected `:`-separated unsigned integers"),
            ("1:0:1:\0\0\0", "`1:0:1:\\0\\0\\0`"),
            ("1:0:1:3:1:0:10:1", "line 2: task or thread beyond the header"),
            ("1:0:1:1:1:10:10:1", "line 2: expected begin < end ≤ the header's end"),
            ("1:0:1:1:1:10:6000:1", "line 2: expected begin < end ≤ the header's end"),
            ("junk", "line 2: expected `:`-separated unsigned integers: `junk`"),
        ];
        for (record, expected) in cases {
            let error = check(&format!("{HEADER}\n{record}\n"), PCF, ROW)
                .expect_err(record)
                .to_string();
            assert!(
                error.starts_with(".prv line 2: ") && error.contains(expected),
                "{error}"
            );
            assert!(!error.chars().any(char::is_control), "{error:?}");
        }
        let backwards = format!("{HEADER}\n1:0:1:1:1:200:300:1\n1:0:1:1:1:100:300:1\n");
        assert_eq!(
            check(&backwards, PCF, ROW).expect_err("out of order").to_string(),
            ".prv line 3: out of order: time 100 ns after 200 ns (records go by time, then events, states, \
             communications): `1:0:1:1:1:100:300:1`"
        );
        // At equal times, events before states.
        let state_then_event = format!("{HEADER}\n1:0:1:1:1:200:300:1\n2:0:1:1:1:200:70000004:1\n");
        assert!(check(&state_then_event, PCF, ROW).is_err());
        assert_eq!(escaped(&"x".repeat(150)), format!("{}…", "x".repeat(100)));
    }

    #[test]
    fn a_stream_s_records_are_held_to_the_final_header_and_the_pcf() {
        let provisional = HEADER.replace(":5000_ns:", ":0_ns:");
        let mut records = RecordCheck::provisional(&provisional).expect("a header");
        records.record("2:0:1:1:2:100:70000009:1").expect("checked at the end");
        records.record("1:0:1:2:1:100:7000:2").expect("checked at the end");
        assert_eq!((records.records(), records.latest_ns()), (2, 7000));
        assert_eq!(
            records.final_header(HEADER).map_err(|e| e.to_string()),
            Err("line 3: time 7000 ns is after the header's end (5000 ns)".into())
        );
        let later = HEADER.replace(":5000_ns:", ":9000_ns:");
        assert_eq!(
            records.clone().finish(&later, PCF, ROW).map_err(|e| e.to_string()),
            Err("line 3: state 2 is not labelled in the .pcf".into())
        );
        let pcf = PCF.replace("1 Backlog", "1 Backlog\n2 More");
        assert_eq!(
            records.clone().finish(&later, &pcf, ROW).map_err(|e| e.to_string()),
            Err("line 2: event type 70000009 is not in the .pcf".into())
        );
        let other = HEADER.replace("2(2:0,1:0)", "2(1:0,2:0)");
        assert!(
            records
                .final_header(&other)
                .expect_err("another layout")
                .to_string()
                .contains("tasks and threads")
        );
    }

    /// Every refusal's text, as the checker gave it when its errors were strings.
    #[test]
    fn every_refusal_says_what_it_said() {
        let refused = |prv: &str, pcf: &str, row: &str| check(prv, pcf, row).expect_err(prv).to_string();
        let header = |h: &str| refused(&format!("{h}\n"), PCF, ROW);
        let record = |r: &str| refused(&format!("{HEADER}\n{r}\n"), PCF, ROW);
        let cases = [
            (refused("", PCF, ROW), "empty .prv"),
            (
                header(&format!("{HEADER}\r")),
                &format!(".prv header: {CARRIAGE_RETURN}: `{HEADER}\\r`"),
            ),
            (header("#Paraver 1"), ".prv header: expected `#Paraver (`: `#Paraver 1`"),
            (header("#Paraver (x"), ".prv header: expected `(date):`: `#Paraver (x`"),
            (
                header("#Paraver (x):1"),
                ".prv header: expected the date as DD/MM/YYYY at HH:MM: `#Paraver (x):1`",
            ),
            (
                header("#Paraver (01/01/2026 at 00:00):1"),
                ".prv header: expected `<end>_ns:`: `#Paraver (01/01/2026 at 00:00):1`",
            ),
            (
                header("#Paraver (01/01/2026 at 00:00):x_ns:"),
                ".prv header: expected the end time in ns: `#Paraver (01/01/2026 at 00:00):x_ns:`",
            ),
            (
                header("#Paraver (01/01/2026 at 00:00):1_ns:1:1:1(1:0)"),
                ".prv header: expected no resources and one application: `#Paraver (01/01/2026 at 00:00):1_ns:1:1:1(1:0)`",
            ),
            (
                header("#Paraver (01/01/2026 at 00:00):1_ns:0:1:1"),
                ".prv header: expected `<ntasks>(`: `#Paraver (01/01/2026 at 00:00):1_ns:0:1:1`",
            ),
            (
                header("#Paraver (01/01/2026 at 00:00):1_ns:0:1:x(1:0)"),
                ".prv header: expected the task count: `#Paraver (01/01/2026 at 00:00):1_ns:0:1:x(1:0)`",
            ),
            (
                header("#Paraver (01/01/2026 at 00:00):1_ns:0:1:1(1:0"),
                ".prv header: expected `)` at the end: `#Paraver (01/01/2026 at 00:00):1_ns:0:1:1(1:0`",
            ),
            (
                header("#Paraver (01/01/2026 at 00:00):1_ns:0:1:1(1:1)"),
                ".prv header: expected `<nthreads>:0` per task: `#Paraver (01/01/2026 at 00:00):1_ns:0:1:1(1:1)`",
            ),
            (
                header("#Paraver (01/01/2026 at 00:00):1_ns:0:1:2(1:0)"),
                ".prv header: the task list does not match the task count: `#Paraver (01/01/2026 at 00:00):1_ns:0:1:2(1:0)`",
            ),
            (
                record("1:0:1:1:1:0:10:1\r"),
                &format!(".prv line 2: {CARRIAGE_RETURN}: `1:0:1:1:1:0:10:1\\r`"),
            ),
            (
                record("x"),
                ".prv line 2: expected `:`-separated unsigned integers: `x`",
            ),
            (
                record("1:1:1:1:1:0:10:1"),
                ".prv line 2: expected cpu 0 and application 1: `1:1:1:1:1:0:10:1`",
            ),
            (
                record("1:0:1:3:1:0:10:1"),
                ".prv line 2: task or thread beyond the header: `1:0:1:3:1:0:10:1`",
            ),
            (
                record("1:0:1:1:1:10:10:1"),
                ".prv line 2: expected begin < end ≤ the header's end: `1:0:1:1:1:10:10:1`",
            ),
            (
                record("2:0:1:1:1:6000:70000004:1"),
                ".prv line 2: an event after the header's end: `2:0:1:1:1:6000:70000004:1`",
            ),
            (
                record("3:0:1:1:1:100:90:0:1:1:1:140:5000:64:1"),
                ".prv line 2: expected logical send ≤ physical send ≤ logical receive ≤ physical receive ≤ the end: \
                 `3:0:1:1:1:100:90:0:1:1:1:140:5000:64:1`",
            ),
            (
                record("1:0:1:1:1:0"),
                ".prv line 2: expected a state (8 fields), event (2k + 6) or communication (15): `1:0:1:1:1:0`",
            ),
            (
                record("1:0:1:1:1:200:300:1\n1:0:1:1:1:100:300:1"),
                ".prv line 3: out of order: time 100 ns after 200 ns (records go by time, then events, states, \
                 communications): `1:0:1:1:1:100:300:1`",
            ),
            (
                record("1:0:1:1:1:0:10:7"),
                ".prv line 2: state 7 is not labelled in the .pcf",
            ),
            (
                record("2:0:1:1:1:0:70000009:1"),
                ".prv line 2: event type 70000009 is not in the .pcf",
            ),
            (
                refused(&format!("{HEADER}\n"), PCF, ""),
                ".row: expected `LEVEL TASK SIZE <n>`",
            ),
            (
                refused(&format!("{HEADER}\n"), PCF, &ROW.replace("SIZE 3", "SIZE 4")),
                ".row: LEVEL THREAD says 4 and names 3; the header counts 3",
            ),
            (
                refused(&format!("{HEADER}\n"), "STATES\nx", ROW),
                ".pcf: expected `<state> <label>`: `x`",
            ),
            (
                refused(&format!("{HEADER}\n"), "STATES\n0 a\nEVENT_TYPE\n0 x", ROW),
                ".pcf: expected `0 <type> <label>`: `0 x`",
            ),
            (refused(&format!("{HEADER}\n"), "", ROW), ".pcf: no STATES"),
        ];
        for (got, expected) in cases {
            assert_eq!(got, expected);
        }
        let mut records = RecordCheck::provisional(HEADER).expect("a header");
        for n in 0..MAX_EVENT_TYPES as u64 {
            records.record(&format!("2:0:1:1:1:0:{n}:1")).expect("room");
        }
        assert_eq!(
            records.record("2:0:1:1:1:0:99999:1").expect_err("too many").to_string(),
            format!(
                "line {}: more than 1024 event types: `2:0:1:1:1:0:99999:1`",
                MAX_EVENT_TYPES + 2
            )
        );
        assert_eq!(
            records
                .final_header("#Paraver (01/01/2026 at 00:00):5000_ns:0:1:1(1:0)")
                .expect_err("other")
                .to_string(),
            "header: expected the first header's tasks and threads, got `#Paraver (01/01/2026 at 00:00):5000_ns:0:1:1(1:0)`"
        );
    }
}
