//! The application trace of the same run (`vesper view --app app.prv`): the tasks'
//! states (`1:cpu:appl:task:thread:begin:end:state`, as `vesper run --output` writes
//! them beside `network.prv`) folded into time bins, for a strip per thread under the
//! network on the same time axis.
//!
//! ```text
//!   app.prv[.gz] ─lines─▶ state records ─▶ per thread, per state present: ns in each of BINS bins
//!   app.pcf ─▶ the states' names and colours (optional)
//! ```
//!
//! The file is finished (Dimemas and `vesper run` write it at the end of a run), so
//! its bins are those that hold its header's end time, fixed; a record beyond that
//! end stops the reading with a problem, as does anything that is no record. Memory:
//! [`BINS`] × 8 bytes per thread per state it holds, at most [`MAX_STATES`] states a
//! thread (a thread with more is a problem, shown), threads bounded by the reader's
//! [`MAX_THREADS`](super::header::MAX_THREADS). Events and communications are read and
//! not kept. Nothing in the file stops vesper: a problem (naming the file and line)
//! is shown on the page, with what came before it.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use flate2::read::MultiGzDecoder;
use serde::Serialize;

use super::aggregate::{BINS, TimeAxis};
use super::header::{self, Header};
use super::reader::{self, Record};

fn read_lock(app: &RwLock<App>) -> RwLockReadGuard<'_, App> {
    app.read().unwrap_or_else(PoisonError::into_inner)
}

fn write_lock(app: &RwLock<App>) -> RwLockWriteGuard<'_, App> {
    app.write().unwrap_or_else(PoisonError::into_inner)
}

/// Most distinct states a thread may hold.
pub const MAX_STATES: usize = 64;

/// A state's label, from the `.pcf`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StateLabel {
    /// the state's value in the records
    pub value: u64,
    /// its name (`Running`), or `state N` when the `.pcf` does not name it
    pub name: String,
    /// its colour (`#0000ff`), when the `.pcf` gives one
    pub colour: Option<String>,
}

/// One thread's states: per state present, ns per bin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ThreadStates {
    states: Vec<(u64, Box<[u64; BINS]>)>,
}

/// The application trace as read so far.
#[derive(Debug, Clone)]
pub struct App {
    /// the file, as given
    pub file: String,
    /// whether it is still being read
    pub loading: bool,
    /// what stopped the reading (names the file and line)
    pub problem: Option<String>,
    /// its header's end \[ns\]
    pub end_ns: u64,
    /// per thread: `task T`, or `task T.H` for the threads of a task of several
    pub threads: Vec<String>,
    /// the `.pcf`'s states (all it names)
    pub labels: Vec<StateLabel>,
    axis: TimeAxis,
    per_thread: Vec<ThreadStates>,
    /// state records read
    pub states_read: u64,
}

impl App {
    /// Nothing read yet of `file`.
    pub fn new(file: String) -> App {
        App {
            file,
            loading: true,
            problem: None,
            end_ns: 0,
            threads: Vec::new(),
            labels: Vec::new(),
            axis: TimeAxis::default(),
            per_thread: Vec::new(),
            states_read: 0,
        }
    }

    /// An empty aggregate of the trace `header` says.
    fn start(&mut self, header: &Header) {
        self.end_ns = header.end_ns;
        self.axis = TimeAxis::holding(header.end_ns.saturating_sub(1));
        self.threads = header
            .threads_of
            .iter()
            .enumerate()
            .flat_map(|(task, &n)| {
                (1..=n).map(move |h| match n {
                    1 => format!("task {}", task + 1),
                    _ => format!("task {}.{h}", task + 1),
                })
            })
            .collect();
        self.per_thread = vec![ThreadStates::default(); self.threads.len()];
    }

    /// Thread `thread` in state `state` over `[begin_ns, end_ns)`.
    pub fn state(&mut self, thread: usize, begin_ns: u64, end_ns: u64, state: u64) -> Result<(), String> {
        self.states_read += 1;
        if end_ns <= begin_ns {
            return Ok(());
        }
        if end_ns > self.end_ns {
            return Err(format!(
                "a state ending at {end_ns} ns, after the header's end ({} ns)",
                self.end_ns
            ));
        }
        let axis = self.axis;
        let Some(states) = self.per_thread.get_mut(thread) else {
            return Err(format!("thread {thread} is not in the header"));
        };
        let index = match states.states.iter().position(|(s, _)| *s == state) {
            Some(i) => i,
            None if states.states.len() < MAX_STATES => {
                states.states.push((state, Box::new([0; BINS])));
                states.states.len() - 1
            }
            None => return Err(format!("a thread in more than {MAX_STATES} different states")),
        };
        let bins = &mut states.states[index].1;
        for (b, bin) in bins
            .iter_mut()
            .enumerate()
            .take(axis.bin(end_ns - 1) + 1)
            .skip(axis.bin(begin_ns))
        {
            let lo = axis.start(b).max(u128::from(begin_ns));
            let hi = axis.start(b + 1).min(u128::from(end_ns));
            *bin = bin.saturating_add((hi - lo) as u64);
        }
        Ok(())
    }

    /// Per thread, per state value: ns over the whole trace.
    pub fn totals(&self) -> Vec<Vec<(u64, u64)>> {
        self.per_thread
            .iter()
            .map(|t| t.states.iter().map(|(s, bins)| (*s, total(&bins[..]))).collect())
            .collect()
    }
}

/// The sum of `bins` (at most `u64::MAX`: overlapping states of a broken file may
/// hold more than time).
fn total(bins: &[u64]) -> u64 {
    bins.iter().fold(0u64, |s, b| s.saturating_add(*b))
}

/// The `.pcf`'s states: `STATES` lines `<value> <name>`, `STATES_COLOR` lines `<value>
/// {r,g,b}`.
pub fn labels_of_pcf(pcf: &str) -> Vec<StateLabel> {
    let section = |name: &str| -> Vec<(u64, String)> {
        let mut lines = pcf.lines().skip_while(|l| l.trim() != name);
        lines.next();
        lines
            .take_while(|l| !l.trim().is_empty())
            .filter_map(|l| {
                let (value, rest) = l.trim().split_once(char::is_whitespace)?;
                Some((value.parse().ok()?, rest.trim().to_string()))
            })
            .collect()
    };
    let colours = section("STATES_COLOR");
    section("STATES")
        .into_iter()
        .map(|(value, name)| {
            let colour = colours.iter().find(|(v, _)| *v == value).and_then(|(_, rgb)| {
                let rgb: Vec<u8> = rgb
                    .trim_start_matches('{')
                    .trim_end_matches('}')
                    .split(',')
                    .map(|c| c.trim().parse().ok())
                    .collect::<Option<_>>()?;
                match rgb[..] {
                    [r, g, b] => Some(format!("#{r:02x}{g:02x}{b:02x}")),
                    _ => None,
                }
            });
            StateLabel { value, name, colour }
        })
        .collect()
}

/// Reads the application trace `path` (`.prv` or `.prv.gz`, its `.pcf` beside it if
/// there is one) into `app`; a problem is kept there. Runs on a thread of its own.
pub fn load(path: &Path, app: &Arc<RwLock<App>>) {
    let problem = read(path, app).err();
    let mut state = write_lock(app);
    state.loading = false;
    state.problem = problem;
}

fn read(path: &Path, app: &Arc<RwLock<App>>) -> Result<(), String> {
    let shown = path.display();
    let name = path.to_string_lossy();
    let stem = name
        .strip_suffix(".prv.gz")
        .or_else(|| name.strip_suffix(".prv"))
        .ok_or_else(|| format!("{shown}: expected an application trace FILE.prv or FILE.prv.gz"))?;
    let file = File::open(path).map_err(|e| format!("{shown}: {e}"))?;
    let mut text: Box<dyn BufRead> = if name.ends_with(".gz") {
        Box::new(BufReader::with_capacity(1 << 16, MultiGzDecoder::new(file)))
    } else {
        Box::new(BufReader::with_capacity(1 << 16, file))
    };
    if let Ok(pcf) = reader::read_sidecar(Path::new(&format!("{stem}.pcf"))) {
        write_lock(app).labels = labels_of_pcf(&pcf);
    }
    let mut line = Vec::new();
    let read = reader::next_line(&mut *text, &mut line).map_err(|e| format!("{shown} line 1: {e}"))?;
    let first = std::str::from_utf8(&line[..read])
        .map_err(|_| format!("{shown} line 1: expected a Paraver header (#Paraver …) in UTF-8"))?;
    if !first.ends_with('\n') {
        return Err(format!("{shown} line 1: expected a Paraver header line (#Paraver …)"));
    }
    let header = header::parse_header(first.trim_end()).map_err(|e| format!("{shown} line 1: {e}"))?;
    let mut first_thread = Vec::with_capacity(header.threads_of.len());
    let mut threads = 0;
    for &n in &header.threads_of {
        first_thread.push(threads);
        threads += n;
    }
    write_lock(app).start(&header);
    let mut n = 1u64;
    // States folded a batch at a time (one write lock).
    let mut batch: Vec<(u64, usize, u64, u64, u64)> = Vec::with_capacity(4096);
    let flush = |batch: &mut Vec<(u64, usize, u64, u64, u64)>| -> Result<(), String> {
        let mut state = write_lock(app);
        for (n, thread, begin, end, value) in batch.drain(..) {
            state
                .state(thread, begin, end, value)
                .map_err(|e| format!("{shown} line {n}: {e}"))?;
        }
        Ok(())
    };
    loop {
        n += 1;
        let read = reader::next_line(&mut *text, &mut line).map_err(|e| format!("{shown} line {n}: {e}"))?;
        if read == 0 {
            break;
        }
        if line[read - 1] != b'\n' {
            flush(&mut batch)?;
            return Err(format!(
                "{shown} line {n}: the file ends in the middle of a line: cut short?"
            ));
        }
        let text = std::str::from_utf8(&line[..read]).map_err(|_| format!("{shown} line {n}: expected UTF-8"))?;
        let text = text.trim_end();
        if text.starts_with('#') || text.starts_with('c') {
            // A Paraver comment or communicator line.
            continue;
        }
        // The application trace's states are any u64; the network reader's state
        // level is cut to u16, so read the value here.
        match reader::parse_record(text, &header, &first_thread) {
            Ok(Record::State {
                thread,
                begin_ns,
                end_ns,
                ..
            }) => {
                let value = text.rsplit(':').next().and_then(|v| v.parse().ok()).unwrap_or(0);
                batch.push((n, thread as usize, begin_ns, end_ns, value));
            }
            Ok(_) => {}
            Err(e) => {
                flush(&mut batch)?;
                return Err(format!("{shown} line {n}: {e}"));
            }
        }
        if batch.len() == batch.capacity() {
            flush(&mut batch)?;
        }
    }
    flush(&mut batch)
}

/// `/api/app`: the application's threads' states in a window, per bin of its own
/// axis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AppJson {
    /// the file, as given
    pub file: String,
    /// whether it is still being read
    pub loading: bool,
    /// what stopped the reading, if anything
    pub problem: Option<String>,
    /// its end \[ns\]
    pub end_ns: u64,
    /// a bin's width \[ns\] (its own axis: the bins that hold its end)
    pub bin_ns: u64,
    /// the window, snapped to its bins \[ns\]
    pub from_ns: u64,
    /// \[ns\]
    pub to_ns: u64,
    /// the states the threads hold, with the `.pcf`'s names and colours
    pub states: Vec<StateLabel>,
    /// per thread
    pub threads: Vec<AppThreadJson>,
}

/// A thread's states in a window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppThreadJson {
    /// `task 3` or `task 3.2`
    pub name: String,
    /// ns in each of `states` over the window
    pub time_ns: Vec<u64>,
    /// per bin of the window: the index in `states` of the state it spent most time in
    /// (the first such), none when it has no state record there
    pub dominant: Vec<Option<u16>>,
}

/// `/api/app`'s query.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
pub struct AppQuery {
    /// from \[ns\] (0 when left out)
    pub from_ns: Option<u64>,
    /// to \[ns\] (the application trace's end when left out)
    pub to_ns: Option<u64>,
    /// the run (`/api/runs`; the newest when left out)
    pub run: Option<u64>,
}

/// What `/api/app` answers for `app`.
pub fn app_json(app: &App, query: AppQuery) -> AppJson {
    let axis = app.axis;
    let end = app.end_ns.max(1);
    let from = query.from_ns.unwrap_or(0).min(end - 1);
    let to = query.to_ns.unwrap_or(u64::MAX).clamp(from + 1, end);
    let range = axis.bin(from)..axis.bin(to - 1) + 1;
    // The states present, in value order, labelled.
    let mut values: Vec<u64> = app
        .per_thread
        .iter()
        .flat_map(|t| t.states.iter().map(|(s, _)| *s))
        .collect();
    values.sort_unstable();
    values.dedup();
    let states: Vec<StateLabel> = values
        .iter()
        .map(|&value| {
            app.labels
                .iter()
                .find(|l| l.value == value)
                .cloned()
                .unwrap_or_else(|| StateLabel {
                    value,
                    name: format!("state {value}"),
                    colour: None,
                })
        })
        .collect();
    let threads = app
        .threads
        .iter()
        .zip(&app.per_thread)
        .map(|(name, t)| {
            let index = |s: u64| values.binary_search(&s).unwrap_or(0);
            let mut time_ns = vec![0u64; values.len()];
            for (s, bins) in &t.states {
                time_ns[index(*s)] = total(&bins[range.clone()]);
            }
            let dominant = range
                .clone()
                .map(|b| {
                    let (s, ns) = t
                        .states
                        .iter()
                        .map(|(s, bins)| (index(*s), bins[b]))
                        .max_by_key(|&(i, ns)| (ns, std::cmp::Reverse(i)))?;
                    (ns > 0).then_some(s as u16)
                })
                .collect();
            AppThreadJson {
                name: name.clone(),
                time_ns,
                dominant,
            }
        })
        .collect();
    AppJson {
        file: app.file.clone(),
        loading: app.loading,
        problem: app.problem.clone(),
        end_ns: app.end_ns,
        bin_ns: axis.bin_ns(),
        from_ns: axis.start(range.start) as u64,
        to_ns: (axis.start(range.end).min(u128::from(end))) as u64,
        states,
        threads,
    }
}

/// The application trace shared with the web server, read on a thread of its own.
pub fn spawn(path: &Path) -> std::io::Result<Arc<RwLock<App>>> {
    let app = Arc::new(RwLock::new(App::new(path.display().to_string())));
    let (reader, path) = (Arc::clone(&app), path.to_path_buf());
    std::thread::Builder::new()
        .name("vesper-view-app".into())
        .spawn(move || {
            load(&path, &reader);
            let app = read_lock(&reader);
            match &app.problem {
                Some(problem) => tracing::warn!("{}: {problem}", app.file),
                None => tracing::info!(
                    "{}: {} threads, {} state records",
                    app.file,
                    app.threads.len(),
                    app.states_read
                ),
            }
        })?;
    Ok(app)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `prv` (and `pcf`) written in `dir` as `vesper view --app` does.
    fn read_app(name: &str, prv: &str, pcf: Option<&str>) -> App {
        let dir = std::env::temp_dir().join(format!("vesper-view-app-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        std::fs::write(dir.join("app.prv"), prv).expect("a trace");
        if let Some(pcf) = pcf {
            std::fs::write(dir.join("app.pcf"), pcf).expect("a .pcf");
        }
        let app = Arc::new(RwLock::new(App::new("app.prv".into())));
        load(&dir.join("app.prv"), &app);
        let app = read_lock(&app).clone();
        let _ = std::fs::remove_dir_all(&dir);
        app
    }

    const PCF: &str = "DEFAULT_OPTIONS\n\nSTATES\n0    Idle\n1    Running\n3    Waiting a message\n\n\
                       STATES_COLOR\n0    {117,195,255}\n1    {0,0,255}\n3    {255,0,0}\n\n\
                       EVENT_TYPE\n0    50000001    MPI Point-to-point\n";

    /// Task 1 has two threads, task 2 one; states of uneven lengths across bins, the
    /// events and communications read and not kept.
    #[test]
    fn each_threads_state_time_is_its_records_time() {
        let prv = "#Paraver (01/01/2026 at 00:00):1000_ns:2(2,1):1:2(2:1,1:2)\n\
                   2:1:1:1:1:0:50000001:1\n\
                   1:1:1:1:1:0:700:1\n\
                   1:2:1:1:2:0:300:3\n\
                   1:2:1:1:2:300:1000:1\n\
                   1:3:1:2:1:10:990:3\n\
                   3:1:1:1:1:5:5:3:1:2:1:9:9:100:1\n\
                   1:1:1:1:1:700:1000:7\n";
        let app = read_app("threads", prv, Some(PCF));
        assert_eq!(app.problem, None);
        assert_eq!(app.threads, ["task 1.1", "task 1.2", "task 2"]);
        assert_eq!(
            app.totals(),
            [vec![(1, 700), (7, 300)], vec![(3, 300), (1, 700)], vec![(3, 980)]]
        );
        let json = app_json(&app, AppQuery::default());
        assert_eq!((json.from_ns, json.to_ns, json.bin_ns), (0, 1000, 4));
        let names: Vec<&str> = json.states.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Running", "Waiting a message", "state 7"]);
        assert_eq!(json.states[0].colour.as_deref(), Some("#0000ff"));
        assert_eq!(json.states[2].colour, None);
        // In the window [0, 400): task 1.2 waited 300 ns and ran 100.
        let json = app_json(
            &app,
            AppQuery {
                from_ns: Some(0),
                to_ns: Some(400),
                run: None,
            },
        );
        assert_eq!(json.threads[1].time_ns, [100, 300, 0]);
        assert_eq!(json.threads[1].dominant.len(), 100);
        assert_eq!(json.threads[1].dominant[0], Some(1));
        assert_eq!(json.threads[2].dominant[0], None, "task 2 starts at 10 ns");
        assert_eq!(json.threads[2].dominant[3], Some(1));
    }

    #[test]
    fn an_application_trace_that_is_no_trace_is_a_problem_naming_its_line() {
        for (prv, expected) in [
            ("", "app.prv line 1: expected a Paraver header"),
            (
                "#Paraver (01/01/2026 at 00:00):100_ns:0:1:1(1:0)\n1:0:1:2:1:0:5:1\n",
                "app.prv line 2: application 1 and a task and thread",
            ),
            (
                "#Paraver (01/01/2026 at 00:00):100_ns:0:1:1(1:0)\n1:0:1:1:1:0:5:1\n1:0:1:1:1:5:9",
                "app.prv line 3: the file ends in the middle of a line",
            ),
        ] {
            let app = read_app("broken", prv, None);
            let problem = app.problem.expect("a problem");
            assert!(problem.contains(expected), "{problem}");
        }
        let many: String = (0..=MAX_STATES)
            .map(|s| format!("1:0:1:1:1:{s}:{}:{s}\n", s + 1))
            .collect();
        let app = read_app(
            "many",
            &format!("#Paraver (01/01/2026 at 00:00):100_ns:0:1:1(1:0)\n{many}"),
            None,
        );
        assert!(
            app.problem
                .as_deref()
                .expect("a problem")
                .contains("more than 64 different states")
        );
        assert_eq!(app.totals()[0].len(), MAX_STATES);
    }
}
