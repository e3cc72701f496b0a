//! A checker for the network traces we write: parses a `.prv` (with its `.pcf` and
//! `.row`) and verifies what Paraver and the streaming tools rely on.
//!
//! - the header: `#Paraver (DD/MM/YYYY at HH:MM):<end>_ns:0:1:<ntasks>(<nthreads>:0,…)`;
//! - the `.row`: as many task and thread names as the header counts;
//! - every record: its field count, `cpu` 0, application 1, task and thread ids within
//!   the header's ranges, times within `[0, end]`;
//! - order: non-decreasing first time field; at equal times events, then states, then
//!   communications;
//! - states: `begin < end` and a value the `.pcf` labels; events: type/value pairs with
//!   types the `.pcf` declares; communications: logical send ≤ physical send ≤ logical
//!   receive ≤ physical receive.

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

/// Checks a trace; the error names the line and what was wrong.
pub fn check(prv: &str, pcf: &str, row: &str) -> Result<CheckedTrace, String> {
    let mut lines = prv.lines().enumerate();
    let (_, header) = lines.next().ok_or("empty .prv")?;
    let (end_ns, threads_of) = parse_header(header)?;
    let tasks = threads_of.len() as u32;
    let threads: u32 = threads_of.iter().sum();
    check_row(row, tasks, threads)?;
    let (max_state, event_types) = parse_pcf(pcf)?;
    let mut out = CheckedTrace {
        tasks,
        threads,
        end_ns,
        ..CheckedTrace::default()
    };
    let mut last = (0u64, 0u8);
    for (index, line) in lines {
        let n = index + 1;
        let bad = |what: &str| format!(".prv line {n}: {what}: `{line}`");
        let fields: Vec<u64> = line
            .split(':')
            .map(|f| f.parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad("expected `:`-separated unsigned integers"))?;
        let entity = |at: usize| -> Result<(), String> {
            let (cpu, app, task, thread) = (fields[at], fields[at + 1], fields[at + 2], fields[at + 3]);
            if cpu != 0 || app != 1 {
                return Err(bad("expected cpu 0 and application 1"));
            }
            let known = task >= 1
                && task <= u64::from(tasks)
                && thread >= 1
                && thread <= u64::from(threads_of[task as usize - 1]);
            if !known {
                return Err(bad("task or thread beyond the header"));
            }
            Ok(())
        };
        let kind = match fields.first() {
            Some(1) if fields.len() == 8 => {
                entity(1)?;
                let (begin, end, state) = (fields[5], fields[6], fields[7]);
                if begin >= end || end > end_ns {
                    return Err(bad("expected begin < end ≤ the header's end"));
                }
                if state > max_state {
                    return Err(bad("a state the .pcf does not label"));
                }
                out.states += 1;
                1
            }
            Some(2) if fields.len() >= 8 && fields.len().is_multiple_of(2) => {
                entity(1)?;
                if fields[5] > end_ns {
                    return Err(bad("an event after the header's end"));
                }
                if let Some(t) = fields[6..].iter().step_by(2).find(|t| !event_types.contains(t)) {
                    return Err(bad(&format!("event type {t} is not in the .pcf")));
                }
                out.events += 1;
                0
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
                out.communications += 1;
                2
            }
            _ => return Err(bad("expected a state (8 fields), event (2k + 6) or communication (15)")),
        };
        let key = (fields[5], kind);
        if key < last {
            return Err(bad("out of order (time, then events, states, communications)"));
        }
        last = key;
    }
    Ok(out)
}

/// The end time and each task's thread count.
fn parse_header(header: &str) -> Result<(u64, Vec<u32>), String> {
    let bad = |what: &str| format!(".prv header: {what}: `{header}`");
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
                    .ok_or_else(|| format!(".pcf: expected `<state> <label>`: `{line}`"))?;
                max_state = Some(max_state.map_or(state, |m: u64| m.max(state)));
            }
            "EVENT_TYPE" => {
                let t = words
                    .nth(1)
                    .and_then(|w| w.parse().ok())
                    .ok_or_else(|| format!(".pcf: expected `0 <type> <label>`: `{line}`"))?;
                types.push(t);
            }
            _ => {}
        }
    }
    Ok((max_state.ok_or(".pcf: no STATES")?, types))
}
