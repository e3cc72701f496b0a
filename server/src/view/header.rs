//! What a network trace says of itself: its `.prv` header (each task's threads, the end
//! time) and the names its `.row` gives its tasks (devices) and threads (ports). The
//! reader of files, the live stream's and `vesper collect` read them alike.

use super::aggregate::Thread;

/// Most threads (ports) a trace may have: ten times a 4,096-host fat tree's.
pub const MAX_THREADS: u32 = 1 << 22;
/// What the `.prv` header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// the end time \[ns\]
    pub end_ns: u64,
    /// each task's threads
    pub threads_of: Vec<u32>,
}

/// Reads `#Paraver (DD/MM/YYYY at HH:MM):<end>_ns:<resources>:1:<ntasks>(<nthreads>:<node>,…)`,
/// the header of a network trace (one application).
pub fn parse_header(line: &str) -> Result<Header, String> {
    let bad = |what: &str| format!("the header: {what}: `{}`", shown(line));
    let rest = line
        .strip_prefix("#Paraver (")
        .ok_or_else(|| bad("expected `#Paraver (`"))?;
    let (_date, rest) = rest.split_once("):").ok_or_else(|| bad("expected `(date):`"))?;
    let (end, rest) = rest
        .split_once("_ns:")
        .ok_or_else(|| bad("expected `<end>_ns:` (times in nanoseconds)"))?;
    let end_ns = end.parse().map_err(|_| bad("expected the end time in ns"))?;
    // Resources: `0`, or `<nodes>(<cpus>,…)`.
    let apps = match rest.split_once("):") {
        Some((_, apps)) if rest.find('(') < rest.find(':') => apps,
        _ => rest.split_once(':').ok_or_else(|| bad("expected `<resources>:`"))?.1,
    };
    let tasks = apps
        .strip_prefix("1:")
        .ok_or_else(|| bad("expected one application (the network)"))?;
    let (ntasks, list) = tasks.split_once('(').ok_or_else(|| bad("expected `<ntasks>(`"))?;
    let ntasks: usize = ntasks.parse().map_err(|_| bad("expected the task count"))?;
    let list = list
        .split_once(')')
        .ok_or_else(|| bad("expected `)` after the tasks"))?
        .0;
    let threads_of = list
        .split(',')
        .map(|task| {
            let (n, node) = task.split_once(':')?;
            node.parse::<u32>().ok()?;
            n.parse::<u32>().ok().filter(|&n| n > 0)
        })
        .collect::<Option<Vec<u32>>>()
        .ok_or_else(|| bad("expected `<nthreads>:<node>` per task"))?;
    if threads_of.len() != ntasks {
        return Err(bad(&format!("{ntasks} tasks announced, {} listed", threads_of.len())));
    }
    let threads = threads_of.iter().map(|&n| u64::from(n)).sum::<u64>();
    if threads > u64::from(MAX_THREADS) {
        return Err(bad(&format!("{threads} threads; at most {MAX_THREADS} are read")));
    }
    Ok(Header { end_ns, threads_of })
}

/// The names of a trace's tasks (devices) and threads (ports), from its `.row`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    /// per task: the device's name (`host5`, `sw12`, `r0.host5`)
    pub tasks: Vec<String>,
    /// per thread: the port's name (`host5.p0`, `sw12.p3`)
    pub threads: Vec<String>,
    /// per thread: its task (0-based)
    pub task_of: Vec<u32>,
    /// per task: its first thread
    pub first_thread: Vec<Thread>,
    /// per task: whether it is a host's adapter (from its name, see [`Names::is_host`];
    /// a live stream's guess until its `.row` comes, see [`Names::numbered`])
    pub host: Vec<bool>,
}

impl Names {
    /// The `.row`'s names, as many as `header` counts.
    pub fn of_row(row: &str, header: &Header) -> Result<Names, String> {
        let tasks = level(row, "TASK", header.threads_of.len())?;
        let threads_total = header.threads_of.iter().sum::<u32>() as usize;
        let threads = level(row, "THREAD", threads_total)?;
        let mut task_of = Vec::with_capacity(threads_total);
        let mut first_thread = Vec::with_capacity(tasks.len());
        for (task, &n) in header.threads_of.iter().enumerate() {
            first_thread.push(task_of.len() as Thread);
            task_of.extend(std::iter::repeat_n(task as u32, n as usize));
        }
        let host = tasks.iter().map(|name| host_name(name)).collect();
        Ok(Names {
            tasks,
            threads,
            task_of,
            first_thread,
            host,
        })
    }

    /// Names by number for a stream whose `.row` has not come yet (it comes at the
    /// stream's end): task `i` (1-based, as in the records) is `task<i>`, its thread
    /// `j` `task<i>.t<j>`. The hosts are guessed: a task of one thread (vesper's
    /// adapters have one port a rail, its switches several); the `.row` says.
    pub fn numbered(header: &Header) -> Names {
        let mut names = Names::default();
        for (task, &n) in header.threads_of.iter().enumerate() {
            names.first_thread.push(names.threads.len() as Thread);
            names.tasks.push(format!("task{}", task + 1));
            names.host.push(n == 1);
            for thread in 1..=n {
                names.threads.push(format!("task{}.t{thread}", task + 1));
                names.task_of.push(task as u32);
            }
        }
        names
    }

    /// Whether task `task` is a host's adapter (`host5`, `r1.host5`).
    pub fn is_host(&self, task: usize) -> bool {
        self.host.get(task).copied().unwrap_or(false)
    }

    /// Per thread: whether it is a host's port.
    pub fn host_ports(&self) -> Vec<bool> {
        self.task_of.iter().map(|&t| self.is_host(t as usize)).collect()
    }
}

/// Whether a device's name is a host adapter's (`host5`, `r1.host5`).
fn host_name(name: &str) -> bool {
    let plain = match name.split_once('.') {
        Some((rail, rest))
            if rail.len() > 1 && rail.starts_with('r') && rail[1..].bytes().all(|b| b.is_ascii_digit()) =>
        {
            rest
        }
        _ => name,
    };
    plain
        .strip_prefix("host")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The `count` names of `LEVEL <level> SIZE <count>` in a `.row`.
fn level(row: &str, level: &str, count: usize) -> Result<Vec<String>, String> {
    let head = format!("LEVEL {level} SIZE ");
    let mut lines = row.lines().enumerate().skip_while(|(_, l)| !l.starts_with(&head));
    let (n, line) = lines
        .next()
        .ok_or_else(|| format!("no `{head}<n>` line; expected the trace's {count} names"))?;
    let size: usize = line[head.len()..]
        .trim()
        .parse()
        .map_err(|_| format!("line {}: expected `{head}<n>`: `{}`", n + 1, shown(line)))?;
    let names: Vec<String> = lines
        .map(|(_, l)| l.trim())
        .take_while(|l| !l.is_empty() && !l.starts_with("LEVEL "))
        .map(String::from)
        .collect();
    if size != count || names.len() != count {
        return Err(format!(
            "line {}: LEVEL {level} says {size} and names {}; the .prv header counts {count}",
            n + 1,
            names.len()
        ));
    }
    Ok(names)
}

/// At most 80 characters of `line`, for a message.
pub(super) fn shown(line: &str) -> String {
    let line = line.trim_end();
    match line.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}
