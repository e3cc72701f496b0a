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

/// Checks a trace; the error names the line and what was wrong.
pub fn check(prv: &str, pcf: &str, row: &str) -> Result<CheckedTrace, String> {
    // Lines end in `\n` alone: `str::lines` would take `\r\n` too.
    let mut lines = prv.split_terminator('\n');
    let header = lines.next().ok_or("empty .prv")?;
    let mut records = RecordCheck::new(header).map_err(|e| format!(".prv {e}"))?;
    for line in lines {
        records.record(line).map_err(|e| format!(".prv {e}"))?;
    }
    records.finish(header, pcf, row).map_err(|e| match e.starts_with('.') {
        true => e,
        false => format!(".prv {e}"),
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
    pub fn new(header: &str) -> Result<RecordCheck, String> {
        RecordCheck::start(header, true)
    }

    /// Records under a stream's provisional `header`: its end time is not yet known,
    /// and the records are held to the final header's by [`RecordCheck::finish`].
    pub fn provisional(header: &str) -> Result<RecordCheck, String> {
        RecordCheck::start(header, false)
    }

    fn start(header: &str, end_known: bool) -> Result<RecordCheck, String> {
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
    pub fn record(&mut self, line: &str) -> Result<(), String> {
        self.line += 1;
        let n = self.line;
        let bad = |what: &str| format!("line {n}: {what}: `{}`", escaped(line));
        if line.ends_with('\r') {
            return Err(bad(CARRIAGE_RETURN));
        }
        let fields: Vec<u64> = line
            .split(':')
            .map(|f| match !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) {
                true => f.parse::<u64>().ok(),
                false => None,
            })
            .collect::<Option<_>>()
            .ok_or_else(|| bad("expected `:`-separated unsigned integers"))?;
        let end_ns = self.end_ns.unwrap_or(u64::MAX);
        let entity = |at: usize| -> Result<(), String> {
            let (cpu, app, task, thread) = (fields[at], fields[at + 1], fields[at + 2], fields[at + 3]);
            if cpu != 0 || app != 1 {
                return Err(bad("expected cpu 0 and application 1"));
            }
            let known = task >= 1
                && task <= self.threads_of.len() as u64
                && thread >= 1
                && thread <= u64::from(self.threads_of[task as usize - 1]);
            if !known {
                return Err(bad("task or thread beyond the header"));
            }
            Ok(())
        };
        let (kind, latest) = match fields.first() {
            Some(1) if fields.len() == 8 => {
                entity(1)?;
                let (begin, end, state) = (fields[5], fields[6], fields[7]);
                if begin >= end || end > end_ns {
                    return Err(bad("expected begin < end ≤ the header's end"));
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
                    return Err(bad("an event after the header's end"));
                }
                for &event_type in fields[6..].iter().step_by(2) {
                    if !self.event_types.contains_key(&event_type) && self.event_types.len() == MAX_EVENT_TYPES {
                        return Err(bad(&format!("more than {MAX_EVENT_TYPES} event types")));
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
                    return Err(bad(
                        "expected logical send ≤ physical send ≤ logical receive ≤ physical receive ≤ the end",
                    ));
                }
                self.counts.communications += 1;
                (2, times[3])
            }
            _ => return Err(bad("expected a state (8 fields), event (2k + 6) or communication (15)")),
        };
        let key = (fields[5], kind);
        if key < self.last {
            return Err(bad(&format!(
                "out of order: time {} ns after {} ns (records go by time, then events, states, communications)",
                key.0, self.last.0
            )));
        }
        self.last = key;
        if latest > self.latest.0 {
            self.latest = (latest, n);
        }
        Ok(())
    }

    /// Checks the final `header` (the first one's but for its end time), which must
    /// not end before the records; its end time.
    pub fn final_header(&self, header: &str) -> Result<u64, String> {
        let (end_ns, threads_of) = parse_header(header)?;
        if threads_of != self.threads_of {
            return Err(format!(
                "header: expected the first header's tasks and threads, got `{}`",
                escaped(header)
            ));
        }
        let (latest, line) = self.latest;
        if latest > end_ns {
            return Err(format!(
                "line {line}: time {latest} ns is after the header's end ({end_ns} ns)"
            ));
        }
        Ok(end_ns)
    }

    /// Checks what needs the whole trace: the final `header`, the `.row`'s names and
    /// that the `.pcf` labels every state and declares every event type the records
    /// hold.
    pub fn finish(self, header: &str, pcf: &str, row: &str) -> Result<CheckedTrace, String> {
        let end_ns = self.final_header(header)?;
        check_row(row, self.counts.tasks, self.counts.threads)?;
        let (max_state, event_types) = parse_pcf(pcf)?;
        if let Some((state, line)) = self.max_state.filter(|&(state, _)| state > max_state) {
            return Err(format!("line {line}: state {state} is not labelled in the .pcf"));
        }
        if let Some((event_type, line)) = self.event_types.iter().find(|(t, _)| !event_types.contains(t)) {
            return Err(format!("line {line}: event type {event_type} is not in the .pcf"));
        }
        Ok(CheckedTrace { end_ns, ..self.counts })
    }
}

/// Why a line ending in `\r\n` is refused.
pub const CARRIAGE_RETURN: &str =
    "a carriage return (\\r) ends the line: trace lines end in a newline (\\n) alone (was it converted to CRLF?)";

/// The end time and each task's thread count.
fn parse_header(header: &str) -> Result<(u64, Vec<u32>), String> {
    let bad = |what: &str| format!("header: {what}: `{}`", escaped(header));
    if header.ends_with('\r') {
        return Err(bad(CARRIAGE_RETURN));
    }
    let rest = header
        .strip_prefix("#Paraver (")
        .ok_or_else(|| bad("expected `#Paraver (`"))?;
    let (date, rest) = rest.split_once("):").ok_or_else(|| bad("expected `(date):`"))?;
    let date_ok = date.len() == 19 && date.as_bytes()[10..14] == *b" at " && date.as_bytes()[2] == b'/';
    if !date_ok {
        return Err(bad("expected the date as DD/MM/YYYY at HH:MM"));
    }
    let (end, rest) = rest.split_once("_ns:").ok_or_else(|| bad("expected `<end>_ns:`"))?;
    let end: u64 = end.parse().map_err(|_| bad("expected the end time in ns"))?;
    let apps = rest
        .strip_prefix("0:1:")
        .ok_or_else(|| bad("expected no resources and one application"))?;
    let (ntasks, list) = apps.split_once('(').ok_or_else(|| bad("expected `<ntasks>(`"))?;
    let ntasks: usize = ntasks.parse().map_err(|_| bad("expected the task count"))?;
    let list = list.strip_suffix(')').ok_or_else(|| bad("expected `)` at the end"))?;
    let threads = list
        .split(',')
        .map(|t| {
            let (n, node) = t.split_once(':')?;
            let n: u32 = n.parse().ok()?;
            (node == "0" && n > 0).then_some(n)
        })
        .collect::<Option<Vec<u32>>>()
        .ok_or_else(|| bad("expected `<nthreads>:0` per task"))?;
    if threads.len() != ntasks {
        return Err(bad("the task list does not match the task count"));
    }
    Ok((end, threads))
}

fn check_row(row: &str, tasks: u32, threads: u32) -> Result<(), String> {
    for (level, expected) in [("TASK", tasks), ("THREAD", threads)] {
        let head = format!("LEVEL {level} SIZE ");
        let mut lines = row.lines().skip_while(|l| !l.starts_with(&head));
        let size: u32 = lines
            .next()
            .and_then(|l| l[head.len()..].parse().ok())
            .ok_or_else(|| format!(".row: expected `{head}<n>`"))?;
        let names = lines.take_while(|l| !l.is_empty()).count() as u32;
        if size != expected || names != expected {
            return Err(format!(
                ".row: LEVEL {level} says {size} and names {names}; the header counts {expected}"
            ));
        }
    }
    Ok(())
}

/// The highest state labelled and the event types declared.
fn parse_pcf(pcf: &str) -> Result<(u64, Vec<u64>), String> {
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
                    .ok_or_else(|| format!(".pcf: expected `<state> <label>`: `{}`", escaped(line)))?;
                max_state = Some(max_state.map_or(state, |m: u64| m.max(state)));
            }
            "EVENT_TYPE" => {
                let t = words
                    .nth(1)
                    .and_then(|w| w.parse().ok())
                    .ok_or_else(|| format!(".pcf: expected `0 <type> <label>`: `{}`", escaped(line)))?;
                types.push(t);
            }
            _ => {}
        }
    }
    Ok((max_state.ok_or(".pcf: no STATES")?, types))
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
            let error = check(&format!("{HEADER}\n{record}\n"), PCF, ROW).expect_err(record);
            assert!(
                error.starts_with(".prv line 2: ") && error.contains(expected),
                "{error}"
            );
            assert!(!error.chars().any(char::is_control), "{error:?}");
        }
        let backwards = format!("{HEADER}\n1:0:1:1:1:200:300:1\n1:0:1:1:1:100:300:1\n");
        assert_eq!(
            check(&backwards, PCF, ROW).expect_err("out of order"),
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
            records.final_header(HEADER),
            Err("line 3: time 7000 ns is after the header's end (5000 ns)".into())
        );
        let later = HEADER.replace(":5000_ns:", ":9000_ns:");
        assert_eq!(
            records.clone().finish(&later, PCF, ROW),
            Err("line 3: state 2 is not labelled in the .pcf".into())
        );
        let pcf = PCF.replace("1 Backlog", "1 Backlog\n2 More");
        assert_eq!(
            records.clone().finish(&later, &pcf, ROW),
            Err("line 2: event type 70000009 is not in the .pcf".into())
        );
        let other = HEADER.replace("2(2:0,1:0)", "2(1:0,2:0)");
        assert!(
            records
                .final_header(&other)
                .expect_err("another layout")
                .contains("tasks and threads")
        );
    }
}
