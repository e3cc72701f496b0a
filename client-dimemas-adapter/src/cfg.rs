//! Dimemas `.cfg` configurations (`shared/spec/formats.md` §2): every record of Dimemas
//! 5.5.0's format, each either read into the replay's model or refused with the record,
//! the field and the reason (`docs/run.md` lists them all).
//!
//! ```text
//! #DIMEMAS_CONFIGURATION
//! "wide area network information" {"", 1, 0, 4, 0.0, 0.0, 1};;
//! "environment information" {"", 0, "", 4, 250.0, 0, 1};;
//! "multi node information" {0, 4, "", 2, 1.0, 0.000001, 1000.0, 0, 1, 1, 0.0, 1, 1, 0.0};;
//! "predefined mapping information" {"2 TASKS_PER_NODE"};;
//! ```
//!
//! Records end with `;;` and may span lines; `//` lines and `/* ... */` blocks are
//! comments. Errors name the file, the line where the record (or the unterminated
//! comment) begins, and the field. vesper reads more leniently than Dimemas does (a
//! record over several lines, records out of Dimemas's order, fields missing at the
//! end): such a file is read, with a warning that says what Dimemas would do with it
//! ([`DimConfig::warnings`]).
//!
//! A configuration is read whole, and refused unread above [`MAX_CFG_BYTES`]; its
//! fine-tuning file above [`MAX_TUNING_BYTES`]. Only regular files are read.

use std::path::Path;

use crate::input::{InputError, clip, input_error, read_text};

pub use crate::replay::analytic::MAX_TUNING_BYTES;
use crate::replay::analytic::{AnalyticCollectives, TUNING_FILE};
use crate::replay::{CLOCK_LIMIT, Links, Mapping, mbps_ratio, ps_of_seconds};

/// The largest configuration read \[bytes\]: real ones hold a few hundred bytes, but an
/// explicit mapping lists a node per task, and 16 MiB holds one of 2^20 tasks (the
/// most a trace may have) on nodes numbered up to 15 digits.
pub const MAX_CFG_BYTES: u64 = 16 * vesper_input::MIB;

/// The most nodes a machine may have: 2^25, the most hosts vesper's networks have
/// (`vesper_server`'s `description::host_count`), so that the machine's nodes can be
/// the ideal network's hosts.
pub const MAX_NODES: u32 = 1 << 25;

/// The node records' name for a group of nodes alike.
pub const MULTI_NODE: &str = "multi node information";

/// The node records' name for one node.
pub const ONE_NODE: &str = "node information";

/// Nodes alike, as one node record describes them ("multi node information", or
/// "node information" for one node).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeGroup {
    /// the record's line
    pub line: usize,
    /// the record's name
    pub record: &'static str,
    /// how many nodes (the next ones, in file order)
    pub count: u32,
    /// processors of each node
    pub cpus: u32,
    /// CPU speed ratio (bursts are divided by it; 0: instantaneous)
    pub cpu_ratio: f64,
    /// intra-node latency \[s\]
    pub intra_latency_s: f64,
    /// intra-node bandwidth \[MBps, 2^20 bytes/s; 0: instantaneous\]
    pub intra_bandwidth_mbps: f64,
    /// intra-node buses (0: unlimited)
    pub intra_buses: u32,
    /// links of each task within its node
    pub intra_links: Links,
    /// inter-node latency \[s\]
    pub inter_latency_s: f64,
    /// links of each node to the network
    pub inter_links: Links,
}

/// What a configuration says, as far as the replay uses it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DimConfig {
    /// nodes of the machine (environment information)
    pub nodes: Option<u32>,
    /// inter-node bandwidth [MBps, 2^20 bytes/s; 0: instantaneous] (environment
    /// information)
    pub bandwidth_mbps: Option<f64>,
    /// the node records, in file order: they describe nodes 0, 1, ... in turn
    pub groups: Vec<NodeGroup>,
    /// where tasks run: the explicit mapping if given, else the predefined one
    pub mapping: Option<Mapping>,
    /// inter-node buses, 0 for unlimited (environment information)
    pub buses: Option<u32>,
    /// the collective model: 1 CONSTANT, 2 LINEAR, 3 LOGARITHMIC (environment
    /// information)
    pub collective_model: Option<u32>,
    /// the "communications fine tuning" file, as written (configuration files);
    /// relative paths are relative to the configuration's folder
    pub comm_tuning_file: Option<String>,
    /// the file read (or the name given to [`parse`]), for errors found later
    pub file: String,
    /// the line of the explicit mapping record, and the task count it declares
    pub mapping_tasks: Option<(usize, u32)>,
    /// the line of the mapping record (explicit or predefined)
    pub mapping_line: Option<usize>,
    /// the line of the record that names the fine-tuning file
    pub comm_tuning_line: Option<usize>,
    /// where the file breaks a rule of Dimemas's that vesper does not need ("file:line:
    /// what Dimemas does"): Dimemas would refuse or read it otherwise
    pub warnings: Vec<String>,
}

impl DimConfig {
    /// The node group that describes node `node` (nodes past the records take the last
    /// one's values), if any record describes nodes.
    pub fn group_of(&self, node: u32) -> Option<&NodeGroup> {
        let mut first = 0u32;
        for group in &self.groups {
            first = first.saturating_add(group.count);
            if node < first {
                return Some(group);
            }
        }
        self.groups.last()
    }

    /// An error naming the explicit mapping record if it maps another number of tasks
    /// than `tasks`, those of `workload` (Dimemas maps exactly the trace's tasks).
    pub fn check_tasks(&self, tasks: u32, workload: &str) -> Result<(), CfgError> {
        match self.mapping_tasks {
            Some((line, mapped)) if mapped != tasks => Err(CfgError {
                file: self.file.clone(),
                line,
                message: format!(
                    "\"mapping information\": field 2 (n_tasks): maps {mapped} tasks, but {workload} has {tasks}"
                ),
            }),
            _ => Ok(()),
        }
    }

    /// An error naming the mapping record if it cannot place the tasks of `workload`,
    /// whose task `t` has `threads[t]` threads, as Dimemas would replay them: `n
    /// TASKS_PER_NODE` over fewer than the tasks' nodes (Dimemas refuses it), or a node
    /// given more threads than it has processors (Dimemas shares them, which vesper does
    /// not model).
    pub fn check_mapping(&self, threads: &[u32], workload: &str) -> Result<(), CfgError> {
        let tasks = u32::try_from(threads.len()).unwrap_or(u32::MAX);
        self.check_tasks(tasks, workload)?;
        let Some(mapping) = &self.mapping else {
            return Ok(());
        };
        let line = self.mapping_line.unwrap_or(0);
        let error = |message: String| CfgError {
            file: self.file.clone(),
            line,
            message,
        };
        let nodes = self.nodes.unwrap_or(u32::MAX);
        if let Mapping::TasksPerNode(n) = mapping
            && u64::from(*n) * u64::from(nodes) < u64::from(tasks)
        {
            return Err(error(format!(
                "\"predefined mapping information\": \"{n} TASKS_PER_NODE\" places at most {} tasks on the \
                 machine's {nodes} nodes, but {workload} has {tasks}; Dimemas refuses it too (\"tasks per node \
                 mapping not applicable\")",
                u64::from(*n) * u64::from(nodes)
            )));
        }
        if self.groups.is_empty() {
            return Ok(());
        }
        let mut per_node = std::collections::BTreeMap::<u32, u64>::new();
        for (task, &count) in threads.iter().enumerate() {
            *per_node.entry(mapping.node_of(task as u32)).or_default() += u64::from(count);
        }
        for (node, held) in per_node {
            let Some(group) = self.group_of(node) else { continue };
            if held > u64::from(group.cpus) {
                return Err(error(format!(
                    "the mapping gives node {node} {held} threads of {workload}, but it has {} processor(s) \
                     (the processors of \"{}\" at line {}): Dimemas would share them between the threads, which \
                     vesper does not model; give the node as many processors as threads, or map fewer tasks to it",
                    group.cpus, group.record, group.line,
                )));
            }
        }
        Ok(())
    }

    /// Reads the "communications fine tuning" file, if one is named, into
    /// `collectives`; `path` is this configuration's (relative names are relative to
    /// its folder). A file that cannot be read is an error naming the record that
    /// names it; errors in its lines name the fine-tuning file's line, then the record.
    pub fn read_tuning(&self, path: &Path, collectives: &mut AnalyticCollectives) -> Result<(), CfgError> {
        let Some(name) = &self.comm_tuning_file else {
            return Ok(());
        };
        let tuning = path.parent().unwrap_or(Path::new(".")).join(name);
        let tuning_name = tuning.display().to_string();
        let named = |mut e: CfgError| {
            let line = self.comm_tuning_line.unwrap_or(0);
            e.message.push_str(&format!(
                " (the communications fine tuning file that {}:{line} names, \"configuration files\" field 3)",
                self.file
            ));
            e
        };
        let text = vesper_input::read_text(&tuning, MAX_TUNING_BYTES).map_err(|e| match e.line() {
            // What is wrong within it names its line.
            Some(_) => named(input_error(&tuning_name, TUNING_FILE, e)),
            None => CfgError {
                file: self.file.clone(),
                line: self.comm_tuning_line.unwrap_or(0),
                message: format!(
                    "\"configuration files\": field 3 (communication file): cannot read {tuning_name}: {}",
                    input_error(&tuning_name, TUNING_FILE, e).message
                ),
            },
        })?;
        collectives.parse_tuning(&text, &tuning_name).map_err(named)
    }
}

/// What is wrong with a configuration, and where.
pub type CfgError = InputError;

/// Reads the configuration at `path`.
pub fn read(path: &Path) -> Result<DimConfig, CfgError> {
    let (text, file) = read_text(path, MAX_CFG_BYTES, "a Dimemas configuration")?;
    parse(&text, &file)
}

/// One record: its name and fields, where it begins, and the lines it covers.
struct Record<'t> {
    file: &'t str,
    line: usize,
    name: &'t str,
    fields: Vec<&'t str>,
}

impl Record<'_> {
    fn fail(&self, message: String) -> CfgError {
        CfgError {
            file: self.file.to_string(),
            line: self.line,
            message,
        }
    }

    /// An error naming field `i` (`what`).
    fn bad(&self, i: usize, what: &str, message: impl std::fmt::Display) -> CfgError {
        self.fail(format!("\"{}\": field {} ({what}): {message}", self.name, i + 1))
    }

    fn field(&self, i: usize, what: &str) -> Result<&str, CfgError> {
        self.fields
            .get(i)
            .copied()
            .ok_or_else(|| self.fail(format!("\"{}\": field {} ({what}) is missing", self.name, i + 1)))
    }

    fn number(&self, i: usize, what: &str) -> Result<f64, CfgError> {
        let text = self.field(i, what)?;
        text.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| self.bad(i, what, format!("expected a number, found '{text}'")))
    }

    /// A number at least 0; `dimemas_word` names what Dimemas's own refusal calls it.
    fn at_least_zero(&self, i: usize, what: &str) -> Result<f64, CfgError> {
        let value = self.number(i, what)?;
        if value >= 0.0 {
            return Ok(value);
        }
        Err(self.bad(
            i,
            what,
            format!("expected a non-negative number, found '{}'", self.fields[i]),
        ))
    }

    /// A duration \[s\] the replay's clock counts; `label` says what it is.
    fn seconds(&self, i: usize, what: &str, label: &str) -> Result<f64, CfgError> {
        let value = self.at_least_zero(i, what)?;
        match ps_of_seconds(value) {
            Some(_) => Ok(value),
            None => Err(self.bad(
                i,
                what,
                format!("{label} {} s: more than {CLOCK_LIMIT}", self.fields[i]),
            )),
        }
    }

    /// A bandwidth \[MBps\], 0 for instantaneous, that the replay holds exactly (a
    /// message it makes too slow for the clock stops the replay, naming it).
    fn bandwidth(&self, i: usize, what: &str, label: &str) -> Result<f64, CfgError> {
        let value = self.at_least_zero(i, what)?;
        if value == 0.0 || mbps_ratio(value).is_some() {
            return Ok(value);
        }
        Err(self.bad(
            i,
            what,
            format!(
                "{label} {} MBps: more digits than vesper holds: it keeps a bandwidth exactly, as bytes per \
                 seconds in 64 bits each",
                self.fields[i]
            ),
        ))
    }

    fn count(&self, i: usize, what: &str) -> Result<u32, CfgError> {
        let text = self.field(i, what)?;
        text.parse::<u32>()
            .map_err(|_| self.bad(i, what, format!("expected a whole number, found '{text}'")))
    }

    /// A whole number above 0; `rule` says why 0 is refused.
    fn positive(&self, i: usize, what: &str, rule: &str) -> Result<u32, CfgError> {
        match self.count(i, what)? {
            0 => Err(self.bad(i, what, format!("{rule}, found 0"))),
            n => Ok(n),
        }
    }

    /// A count of nodes, from 1 to [`MAX_NODES`]; `rule` says why 0 is refused.
    fn nodes(&self, i: usize, rule: &str) -> Result<u32, CfgError> {
        match self.positive(i, "n_nodes", rule)? {
            n if n > MAX_NODES => Err(self.bad(
                i,
                "n_nodes",
                format!("{n} nodes: vesper models at most 2^25 = 33,554,432 (the most hosts its networks have)"),
            )),
            n => Ok(n),
        }
    }

    /// The machine ID of field `i`: vesper replays one machine, number 0.
    fn machine(&self, i: usize) -> Result<(), CfgError> {
        match self.count(i, "machine ID")? {
            0 => Ok(()),
            id => Err(self.bad(
                i,
                "machine ID",
                format!(
                    "machine {id}: vesper replays one machine, number 0 (machines joined by a wide area network \
                     are not modelled)"
                ),
            )),
        }
    }

    /// A string field, unquoted.
    fn text(&self, i: usize) -> &str {
        self.fields.get(i).map_or("", |f| unquote(f))
    }
}

/// How many fields Dimemas requires in each record it knows.
fn dimemas_fields(name: &str) -> Option<&'static [usize]> {
    Some(match name {
        "wide area network information" | "environment information" => &[7],
        ONE_NODE => &[13, 14],
        MULTI_NODE => &[14],
        "mapping information" => &[3],
        "predefined mapping information" => &[1, 2],
        "configuration files" => &[4],
        "modules information" => &[3],
        "file system parameters" => &[5],
        "dedicated connection information" => &[13],
        _ => return None,
    })
}

/// Reads a configuration, record after record.
struct Reader<'t> {
    file: &'t str,
    /// the line of the `#DIMEMAS_CONFIGURATION` header
    header: usize,
    config: DimConfig,
    /// the wide area network record's line, once read
    wan: Option<usize>,
    /// the environment record's line, once read
    environment: Option<usize>,
    /// whether it came before the wide area network record
    environment_first: bool,
    /// the predefined mapping (`None` inside: FILL_NODES)
    predefined: Option<Option<Mapping>>,
    /// the explicit mapping
    explicit: Option<Vec<u32>>,
}

impl Reader<'_> {
    fn warn(&mut self, line: usize, message: String) {
        self.config.warnings.push(format!("{}:{line}: {message}", self.file));
    }

    fn record(&mut self, r: &Record) -> Result<(), CfgError> {
        if let Some(counts) = dimemas_fields(r.name)
            && !counts.contains(&r.fields.len())
        {
            let expected: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
            self.warn(
                r.line,
                format!(
                    "\"{}\" has {} fields; Dimemas reads {} and refuses the record otherwise",
                    r.name,
                    r.fields.len(),
                    expected.join(" or ")
                ),
            );
        }
        match r.name {
            "wide area network information" => self.wide_area_network(r),
            "environment information" => self.environment(r),
            MULTI_NODE | ONE_NODE => self.nodes(r),
            "predefined mapping information" | "mapping information" => self.mapping(r),
            "configuration files" => self.files(r),
            "modules information" => Err(r.fail(
                "\"modules information\": vesper does not scale the bursts of a trace's modules (user-event \
                 blocks); leave the record out, or scale the trace's bursts"
                    .into(),
            )),
            "file system parameters" => {
                // The disk model serves I/O operations, which MPI traces replayed here
                // do not hold: read, no effect.
                for (i, what) in [
                    "disk latency",
                    "disk bandwidth",
                    "block size",
                    "concurrent requests",
                    "hit ratio",
                ]
                .iter()
                .enumerate()
                .take(r.fields.len())
                {
                    r.at_least_zero(i, what)?;
                }
                Ok(())
            }
            "dedicated connection information" => Err(r.fail(
                "\"dedicated connection information\": a dedicated connection joins machines of a wide area \
                 network, which vesper does not model (it replays one machine); leave the record out"
                    .into(),
            )),
            "accelerator node information" => Err(r.fail(
                "\"accelerator node information\": vesper does not model accelerators (GPU bursts); leave the \
                 record out"
                    .into(),
            )),
            other => {
                self.warn(
                    r.line,
                    format!(
                        "\"{other}\" is not a record of Dimemas's (Dimemas refuses the file: \"Unknown \
                         configuration record type\"); vesper skips it"
                    ),
                );
                Ok(())
            }
        }
    }

    /// `{name, machines, dedicated connections, traffic function, max traffic, WAN
    /// bandwidth, WAN collective model}`: one machine, no dedicated connection; the rest
    /// models traffic between machines and has no effect on one.
    fn wide_area_network(&mut self, r: &Record) -> Result<(), CfgError> {
        if let Some(first) = self.wan {
            return Err(r.fail(format!(
                "a second \"wide area network information\" record (the first is at line {first}): Dimemas reads \
                 one"
            )));
        }
        self.wan = Some(r.line);
        let machines = r.positive(1, "number of machines", "a wide area network has at least one machine")?;
        if machines > 1 {
            return Err(r.bad(
                1,
                "number of machines",
                format!(
                    "{machines} machines: vesper replays one machine; machines joined by a wide area network (its \
                     traffic model, dedicated connections and WAN latencies) are not modelled"
                ),
            ));
        }
        if r.fields.len() > 2 && r.count(2, "dedicated connections")? > 0 {
            return Err(r.bad(
                2,
                "dedicated connections",
                "dedicated connections join machines of a wide area network, which vesper does not model; give 0",
            ));
        }
        if r.fields.len() > 3 {
            let traffic = r.count(3, "traffic function")?;
            if !(1..=4).contains(&traffic) {
                return Err(r.bad(
                    3,
                    "traffic function",
                    format!("expected 1 (EXPONENTIAL), 2 (LOGARITHMIC), 3 (LINEAR) or 4 (CONSTANT), found {traffic}"),
                ));
            }
        }
        if r.fields.len() > 4 {
            r.number(4, "maximal traffic")?;
        }
        if r.fields.len() > 5 {
            r.at_least_zero(5, "external net bandwidth")?;
        }
        if r.fields.len() > 6 {
            let model = r.count(6, "external collective model")?;
            if !(1..=4).contains(&model) {
                return Err(r.bad(
                    6,
                    "external collective model",
                    format!("expected 1 to 4, found {model}"),
                ));
            }
        }
        Ok(())
    }

    /// `{name, machine ID, architecture, nodes, bandwidth, buses, collective model}`.
    fn environment(&mut self, r: &Record) -> Result<(), CfgError> {
        if let Some(first) = self.environment {
            return Err(r.fail(format!(
                "a second \"environment information\" record (the first is at line {first}): a second machine; \
                 vesper replays one"
            )));
        }
        self.environment = Some(r.line);
        self.environment_first = self.wan.is_none();
        if !r.fields.is_empty() {
            r.machine(1)?;
        }
        let nodes = r.nodes(3, "a machine needs at least one node")?;
        self.config.nodes = Some(nodes);
        self.config.bandwidth_mbps = Some(r.bandwidth(4, "bw_MBps", "inter-node bandwidth")?);
        if r.fields.len() > 5 {
            self.config.buses = Some(r.count(5, "n_buses")?);
        }
        if r.fields.len() > 6 {
            let model = r.count(6, "collective_model")?;
            if !(1..=3).contains(&model) {
                return Err(r.bad(
                    6,
                    "collective_model",
                    format!("expected 1 (CONSTANT), 2 (LINEAR) or 3 (LOGARITHMIC), found {model}"),
                ));
            }
            self.config.collective_model = Some(model);
        }
        Ok(())
    }

    /// "multi node information" `{machine ID, nodes, architecture, processors, CPU
    /// ratio, intra latency, intra bandwidth, intra buses, intra in links, intra out
    /// links, inter latency, inter in links, inter out links, WAN latency}`, or "node
    /// information", the same for one node without the count (13 fields; 14 with a node
    /// ID after the machine's, which Dimemas ignores).
    fn nodes(&mut self, r: &Record) -> Result<(), CfgError> {
        let multi = r.name == MULTI_NODE;
        if !multi && r.fields.len() == 11 {
            return Err(r.fail(
                "\"node information\" of 11 fields, the layout before 2012: vesper does not read it (Dimemas reads \
                 its latencies as nanoseconds, not seconds); write the 13-field layout that Dimemas's ideal.cfg \
                 documents"
                    .into(),
            ));
        }
        // Field positions: the count, then the rest after it.
        let (count, at) = match (multi, r.fields.len()) {
            (true, _) => (r.nodes(1, "a group holds at least one node")?, 3),
            (false, 14) => (1, 3),
            (false, _) => (1, 2),
        };
        if self.environment.is_none() {
            self.warn(
                r.line,
                format!(
                    "\"{}\" before \"environment information\": Dimemas needs the machine's record first (it makes \
                     the nodes this record fills)",
                    r.name
                ),
            );
        }
        if self.config.mapping_line.is_some() && self.explicit.is_some() {
            self.warn(
                r.line,
                format!(
                    "\"{}\" after \"mapping information\": Dimemas maps an explicit mapping's tasks when it reads the \
                     record, onto the nodes defined before it",
                    r.name
                ),
            );
        }
        if !r.fields.is_empty() {
            r.machine(0)?;
        }
        // Field `n` of the layout of "multi node information" (1-based), in this record.
        let f = |n: usize| n - 1 - 3 + at;
        let cpus = r.positive(f(4), "cpus_per_node", "a node needs at least one CPU")?;
        let ratio = r.number(f(5), "cpu_speed_ratio")?;
        if ratio < 0.0 {
            return Err(r.bad(
                f(5),
                "cpu_speed_ratio",
                format!(
                    "{}: a negative ratio (a fixed duration) is for \"modules information\" only; Dimemas refuses it \
                     on nodes (\"invalid CPU ratio\")",
                    r.fields[f(5)]
                ),
            ));
        }
        let intra_latency_s = r.seconds(f(6), "intra_latency_s", "intra-node latency")?;
        let intra_bandwidth_mbps = r.bandwidth(f(7), "intra_bw_MBps", "intra-node bandwidth")?;
        let inter_latency_s = r.seconds(f(11), "inter_latency_s", "inter-node latency")?;
        // Older configurations stop before the resources: unlimited then.
        let (mut intra_buses, mut intra_links, mut inter_links) = (0, Links::default(), Links::default());
        if r.fields.len() > f(10) {
            intra_buses = r.count(f(8), "intra_buses")?;
            intra_links = Links {
                input: r.count(f(9), "intra_in_links")?,
                output: r.count(f(10), "intra_out_links")?,
            };
        }
        if r.fields.len() > f(13) {
            inter_links = Links {
                input: r.count(f(12), "inter_in_links")?,
                output: r.count(f(13), "inter_out_links")?,
            };
        }
        if r.fields.len() > f(14) {
            r.at_least_zero(f(14), "wan_latency_s")?;
        }
        let defined: u64 = self.config.groups.iter().map(|g| u64::from(g.count)).sum();
        if let Some(nodes) = self.config.nodes
            && defined + u64::from(count) > u64::from(nodes)
        {
            return Err(r.fail(format!(
                "\"{}\": {count} more node(s) after the {defined} defined above, but \"environment information\" \
                 declares {nodes}; Dimemas refuses it too (\"more nodes defined than total machine nodes\")",
                r.name
            )));
        }
        self.config.groups.push(NodeGroup {
            line: r.line,
            record: if multi { MULTI_NODE } else { ONE_NODE },
            count,
            cpus,
            cpu_ratio: ratio,
            intra_latency_s,
            intra_bandwidth_mbps,
            intra_buses,
            intra_links,
            inter_latency_s,
            inter_links,
        });
        Ok(())
    }

    /// "predefined mapping information" `{[trace,] FILL_NODES | n TASKS_PER_NODE |
    /// INTERLEAVED}` or "mapping information" `{trace, tasks, [n] {node, ...}}`.
    fn mapping(&mut self, r: &Record) -> Result<(), CfgError> {
        let explicit = r.name == "mapping information";
        let same = match explicit {
            true => self.explicit.is_some(),
            false => self.predefined.is_some(),
        };
        match self.config.mapping_line {
            Some(first) if same => {
                return Err(r.fail(format!(
                    "a second \"{}\" record (the first is at line {first}): Dimemas replays an application per \
                     mapping record, vesper one; keep one",
                    r.name
                )));
            }
            Some(first) => self.warn(
                r.line,
                format!(
                    "a second mapping record (the first is at line {first}): Dimemas replays an application per \
                     mapping record; vesper replays one, placed by the explicit \"mapping information\""
                ),
            ),
            None => {}
        }
        if explicit || self.explicit.is_none() {
            self.config.mapping_line = Some(r.line);
        }
        if !explicit {
            // The trace's name is optional, before the mapping.
            let kind = r.text(r.fields.len().saturating_sub(1));
            self.predefined = Some(match kind.split_whitespace().collect::<Vec<_>>()[..] {
                ["FILL_NODES"] => None,
                ["INTERLEAVED"] => Some(Mapping::Interleaved { nodes: 0 }),
                [n, "TASKS_PER_NODE"] => match n.parse::<u32>() {
                    Ok(n) if n > 0 => Some(Mapping::TasksPerNode(n)),
                    _ => return Err(r.fail(format!("expected a positive number of tasks per node, found '{n}'"))),
                },
                _ => {
                    return Err(r.fail(format!(
                        "expected FILL_NODES, INTERLEAVED or \"<n> TASKS_PER_NODE\", found '{kind}'"
                    )));
                }
            });
            return Ok(());
        }
        let tasks = r.count(1, "n_tasks")? as usize;
        let list = r.field(2, "nodes")?;
        let (announced, nodes) = list
            .split_once('{')
            .and_then(|(before, rest)| Some((before, rest.rsplit_once('}')?.0)))
            .ok_or_else(|| r.fail(format!("expected [n] {{node, ...}}, found '{}'", clip(list))))?;
        let nodes: Vec<u32> = nodes
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| {
                n.parse()
                    .map_err(|_| r.fail(format!("expected a node number, found '{}'", clip(n))))
            })
            .collect::<Result<_, _>>()?;
        if nodes.len() != tasks {
            return Err(r.fail(format!("{tasks} tasks but {} nodes listed", nodes.len())));
        }
        // The list's own count, `[n]`, when given, must agree too.
        let announced = announced.trim();
        if let Some(n) = announced.strip_prefix('[').and_then(|a| a.strip_suffix(']'))
            && n.trim().parse::<usize>().ok() != Some(nodes.len())
        {
            return Err(r.fail(format!("the list says {announced} but holds {} nodes", nodes.len())));
        }
        self.explicit = Some(nodes);
        self.config.mapping_tasks = Some((r.line, tasks as u32));
        Ok(())
    }

    /// `{scheduler, file system, communications fine tuning, sensitivity}` files.
    fn files(&mut self, r: &Record) -> Result<(), CfgError> {
        if !r.text(0).is_empty() {
            return Err(r.bad(
                0,
                "scheduler definition file",
                "vesper replays with Dimemas's default scheduler (first come, first served, no context switch \
                 cost); give \"\"",
            ));
        }
        // field 2, the file system's model, serves I/O operations only: no effect here.
        if !r.text(3).is_empty() {
            return Err(r.bad(
                3,
                "sensitivity file",
                "vesper does not add Dimemas's random variations to CPU bursts, latencies and bandwidths; give \"\"",
            ));
        }
        self.config.comm_tuning_file = Some(r.text(2).to_string()).filter(|f| !f.is_empty());
        self.config.comm_tuning_line = Some(r.line);
        Ok(())
    }

    /// What is checked once every record is read.
    fn finish(mut self) -> Result<DimConfig, CfgError> {
        let error = |line: usize, message: String| CfgError {
            file: self.file.to_string(),
            line,
            message,
        };
        let Some(line) = self.environment else {
            return Err(error(
                self.header,
                "no \"environment information\" record: a configuration declares its machine there (its nodes, \
                 their bandwidth and buses), and without one there is nothing to replay on; Dimemas needs it too"
                    .into(),
            ));
        };
        // Dimemas's machines exist once the wide area network record declares them.
        let refused = "Dimemas refuses it (\"Wrong environment information record values\": the machine does not \
                       exist until the wide area network record declares it)";
        match (self.wan, self.environment_first) {
            (None, true) => self.warn(
                line,
                format!(
                    "no \"wide area network information\" record before \"environment information\": {refused}; \
                     put `\"wide area network information\" {{\"\", 1, 0, 4, 0.0, 0.0, 1}};;` first"
                ),
            ),
            (Some(wan), true) => self.warn(
                line,
                format!(
                    "\"environment information\" before \"wide area network information\" (line {wan}): {refused}; \
                     put that record first"
                ),
            ),
            // The wide area network record came first.
            (_, false) => {}
        }
        let defined: u64 = self.config.groups.iter().map(|g| u64::from(g.count)).sum();
        match (self.config.nodes, self.config.groups.last()) {
            (Some(nodes), Some(last)) if defined < u64::from(nodes) => {
                let last_line = last.line;
                self.warn(
                    last_line,
                    format!(
                        "the node records describe {defined} of the {nodes} nodes \"environment information\" \
                         declares (line {line}); Dimemas refuses it (\"Machine 0 should have {nodes} nodes\"); vesper \
                         gives the others the last record's values"
                    ),
                );
            }
            (Some(_), None) => self.warn(
                line,
                "no \"multi node information\" or \"node information\" record: Dimemas refuses it (\"Machine 0 \
                 should have ... nodes\"); vesper gives every node one processor, no latency and unlimited links"
                    .into(),
            ),
            _ => {}
        }
        if self.config.mapping_line.is_none() {
            self.warn(
                0,
                "no mapping record: Dimemas replays nothing without one; vesper runs task t on node t".into(),
            );
        }
        // Checked once every record is read: the machine may be declared after the mapping.
        if let (Some(nodes), Some(machine), Some((line, _))) =
            (&self.explicit, self.config.nodes, self.config.mapping_tasks)
            && let Some((task, node)) = nodes.iter().enumerate().find(|&(_, &node)| node >= machine)
        {
            return Err(error(
                line,
                format!(
                    "\"mapping information\": task {task} is mapped to node {node}, but \"environment information\" \
                     declares {machine} node(s), 0 to {}",
                    machine - 1
                ),
            ));
        }
        let nodes = self.config.nodes.unwrap_or(1);
        let predefined = self.predefined.take();
        self.config.mapping = match (self.explicit.take(), predefined) {
            (Some(nodes), _) => Some(Mapping::Explicit(nodes)),
            // FILL_NODES: each node up to its processors, in order; the tasks left over
            // on the last node.
            (None, Some(None)) => Some(Mapping::fill_nodes(self.fill_groups(nodes))),
            // INTERLEAVED: over the machine's nodes (one if not said).
            (None, Some(Some(Mapping::Interleaved { .. }))) => Some(Mapping::Interleaved { nodes }),
            (None, Some(other)) => other,
            (None, None) => None,
        };
        Ok(self.config)
    }

    /// The machine's `nodes` nodes as (nodes, processors each) groups: the records'
    /// counts, the last stretched (or cut) to the machine's nodes.
    fn fill_groups(&self, nodes: u32) -> Vec<(u32, u32)> {
        let mut groups = Vec::new();
        let mut left = nodes;
        for group in &self.config.groups {
            let count = group.count.min(left);
            if count > 0 {
                groups.push((count, group.cpus));
            }
            left -= count;
        }
        match groups.last_mut() {
            Some(last) => last.0 += left,
            None => groups.push((nodes, 1)),
        }
        groups
    }
}

/// Parses a configuration's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<DimConfig, CfgError> {
    let error = |line: usize, message: String| CfgError {
        file: file.to_string(),
        line,
        message,
    };
    let (text, dimemas_skips) = without_comments(text).map_err(|line| {
        error(
            line,
            "a comment opened with /* here is never closed with */".to_string(),
        )
    })?;
    let Some((index, first)) = text.lines().map(str::trim).enumerate().find(|(_, l)| !l.is_empty()) else {
        return Err(error(0, "an empty file; expected #DIMEMAS_CONFIGURATION".into()));
    };
    let header = index + 1;
    if !first.starts_with("#DIMEMAS_CONFIGURATION") {
        return Err(error(
            header,
            format!("expected #DIMEMAS_CONFIGURATION, found '{first}'"),
        ));
    }
    let mut reader = Reader {
        file,
        header,
        config: DimConfig {
            file: file.to_string(),
            ..DimConfig::default()
        },
        wan: None,
        environment: None,
        environment_first: false,
        predefined: None,
        explicit: None,
    };
    let mut consumed = 0;
    // The records begin on the line after the header's.
    let body_start = text.match_indices('\n').nth(index).map_or(text.len(), |(i, _)| i + 1);
    for chunk in text[body_start..].split(";;") {
        let start = body_start + consumed;
        consumed += chunk.len() + 2;
        let record = chunk.trim();
        if record.is_empty() {
            continue;
        }
        let leading = chunk.len() - chunk.trim_start().len();
        let line = text[..start + leading].matches('\n').count() + 1;
        let last_line = line + record.matches('\n').count();
        let (name, fields) = split_record(record).map_err(|e| error(line, e.to_string()))?;
        let record = Record {
            file,
            line,
            name,
            fields,
        };
        if last_line > line {
            reader.warn(
                line,
                format!(
                    "\"{name}\" spans lines {line} to {last_line}: Dimemas reads one record a line (\"Unknown \
                     configuration record type\"); write it on one line"
                ),
            );
        }
        if let Some(skipped) = (line..=last_line).find(|l| dimemas_skips.contains(l)) {
            reader.warn(
                skipped,
                format!(
                    "a comment shares line {skipped} with \"{name}\": Dimemas skips every line holding //, /* or */, \
                     so it does not read this record"
                ),
            );
        }
        reader.record(&record)?;
    }
    reader.finish()
}

/// The text with comments blanked (newlines kept, so line numbers hold), and the lines
/// that Dimemas skips whole although text is left on them (a line holding `//`, `/*` or
/// `*/` anywhere); or the line where a `/*` opens that no `*/` closes, if one does.
fn without_comments(text: &str) -> Result<(String, Vec<usize>), usize> {
    let mut out = String::with_capacity(text.len());
    let mut skipped = Vec::new();
    let mut in_block = false;
    let mut opened = 0;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        let mut rest = line;
        if !in_block && rest.trim_start().starts_with("//") {
            out.push_str(if line.ends_with('\n') { "\n" } else { "" });
            continue;
        }
        let before = out.len();
        loop {
            if in_block {
                match rest.find("*/") {
                    Some(end) => {
                        rest = &rest[end + 2..];
                        in_block = false;
                    }
                    None => {
                        out.push_str(if rest.ends_with('\n') { "\n" } else { "" });
                        break;
                    }
                }
            } else {
                match rest.find("/*") {
                    Some(start) => {
                        out.push_str(&rest[..start]);
                        rest = &rest[start + 2..];
                        in_block = true;
                        opened = number + 1;
                    }
                    None => {
                        out.push_str(rest);
                        break;
                    }
                }
            }
        }
        let kept = out[before..].trim();
        let marked = line.contains("//") || line.contains("/*") || line.contains("*/");
        if marked && !kept.is_empty() {
            skipped.push(number + 1);
        }
    }
    match in_block {
        true => Err(opened),
        false => Ok((out, skipped)),
    }
}
/// A record that is not `"name" {fields}`.
#[derive(Debug, thiserror::Error)]
#[error("expected \"record name\" {{fields}};;, found '{found}'")]
struct NotARecord {
    /// the record, clipped for messages
    found: String,
}

/// `"name" {a, b, ...}` → (name, fields), commas inside quotes or braces kept.
fn split_record(record: &str) -> Result<(&str, Vec<&str>), NotARecord> {
    let expected = || NotARecord { found: clip(record) };
    let rest = record.strip_prefix('"').ok_or_else(expected)?;
    let (name, rest) = rest.split_once('"').ok_or_else(expected)?;
    let body = rest
        .trim()
        .strip_prefix('{')
        .and_then(|b| b.strip_suffix('}'))
        .ok_or_else(expected)?;
    let mut fields = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, c) in body.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '{' | '[' if !quoted => depth += 1,
            '}' | ']' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                fields.push(body[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !body.trim().is_empty() {
        fields.push(body[start..].trim());
    }
    Ok((name, fields))
}

fn unquote(field: &str) -> &str {
    field.trim().trim_matches('"')
}

#[cfg(test)]
mod tests;
