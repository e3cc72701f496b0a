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
mod tests {
    use super::*;

    const CONFIG: &str = r#"#DIMEMAS_CONFIGURATION
// a comment
/* a block
   of comments */
"wide area network information" {"", 1, 0, 4, 0.0, 0.0, 1};;
"environment information" {"", 0, "", 4, 250.0, 0, 1};;
"multi node information" {0, 4, "", 2, 2.5, 0.000001, 1000.0, 0, 1, 1,
    0.0000005, 1, 1, 0.0};;
"predefined mapping information" {"2 TASKS_PER_NODE"};;
"#;

    #[test]
    fn the_records_that_matter_are_read() {
        let config = parse(CONFIG, "a.cfg").expect("parsed");
        assert_eq!(
            config,
            DimConfig {
                nodes: Some(4),
                bandwidth_mbps: Some(250.0),
                groups: vec![NodeGroup {
                    line: 7,
                    record: MULTI_NODE,
                    count: 4,
                    cpus: 2,
                    cpu_ratio: 2.5,
                    intra_latency_s: 0.000001,
                    intra_bandwidth_mbps: 1000.0,
                    intra_buses: 0,
                    intra_links: Links { input: 1, output: 1 },
                    inter_latency_s: 0.0000005,
                    inter_links: Links { input: 1, output: 1 },
                }],
                mapping: Some(Mapping::TasksPerNode(2)),
                buses: Some(0),
                collective_model: Some(1),
                comm_tuning_file: None,
                file: "a.cfg".into(),
                mapping_tasks: None,
                mapping_line: Some(9),
                // The multi node record spans two lines.
                warnings: vec![
                    "a.cfg:7: \"multi node information\" spans lines 7 to 8: Dimemas reads one record a line \
                     (\"Unknown configuration record type\"); write it on one line"
                        .into()
                ],
                comm_tuning_line: None,
            }
        );
        let tuned = format!("{CONFIG}\"configuration files\" {{\"\", \"\", \"comm.cfg\", \"\"}};;\n");
        let tuned = parse(&tuned, "a.cfg").expect("parsed");
        assert_eq!(
            (tuned.comm_tuning_file.as_deref(), tuned.comm_tuning_line),
            (Some("comm.cfg"), Some(10))
        );
    }

    #[test]
    fn a_missing_fine_tuning_file_names_the_record_that_names_it() {
        let dir = std::env::temp_dir().join(format!("vesper-tuning-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let path = dir.join("a.cfg");
        let text = format!("{CONFIG}\"configuration files\" {{\"\", \"\", \"nofile.cfg\", \"\"}};;\n");
        std::fs::write(&path, &text).expect("written");
        let config = read(&path).expect("read");
        let mut collectives = AnalyticCollectives::default();
        let err = config.read_tuning(&path, &mut collectives).expect_err("missing");
        assert_eq!((err.file.as_str(), err.line), (path.to_str().expect("UTF-8"), 10));
        assert!(
            err.message.starts_with(&format!(
                "\"configuration files\": field 3 (communication file): cannot read {}: ",
                dir.join("nofile.cfg").display()
            )),
            "{err}"
        );
        // Errors within it name it.
        std::fs::write(dir.join("nofile.cfg"), "11 LOG CURR LOG MAX 0.0\n").expect("written");
        let err = config.read_tuning(&path, &mut collectives).expect_err("refused");
        assert_eq!((err.file, err.line), (dir.join("nofile.cfg").display().to_string(), 1));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_refused_by_name_without_blocking() {
        let (dir, files) = crate::input::special_files("cfg");
        for (path, kind) in &files {
            let err = read(path).expect_err("not regular");
            assert_eq!(err.to_string(), crate::input::not_regular(path, kind));
        }
        // As the fine-tuning file, the record that names it is named too.
        let path = dir.join("a.cfg");
        for (tuning, kind) in &files {
            let record = format!(
                "\"configuration files\" {{\"\", \"\", \"{}\", \"\"}};;\n",
                tuning.display()
            );
            std::fs::write(&path, format!("{CONFIG}{record}")).expect("written");
            let config = read(&path).expect("read");
            let err = config
                .read_tuning(&path, &mut AnalyticCollectives::default())
                .expect_err("not regular");
            assert_eq!(
                err.to_string(),
                format!(
                    "{}:10: \"configuration files\": field 3 (communication file): cannot read {}: it is {kind}, not a \
                     regular file; inputs are read from regular files only",
                    path.display(),
                    tuning.display()
                )
            );
        }
        std::fs::remove_dir_all(&dir).expect("cleaned");
    }

    #[test]
    fn files_over_their_limit_are_refused_unread() {
        let dir = std::env::temp_dir().join(format!("vesper-cfg-large-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let big = dir.join("big.cfg");
        crate::input::sparse_file(&big, MAX_CFG_BYTES + 1);
        assert_eq!(
            read(&big).expect_err("too large").to_string(),
            format!(
                "{}:0: it holds 16777217 bytes, more than the 16777216 bytes (16 MiB) such a file may hold",
                big.display()
            )
        );
        let path = dir.join("a.cfg");
        std::fs::write(
            &path,
            format!("{CONFIG}\"configuration files\" {{\"\", \"\", \"t.cfg\", \"\"}};;\n"),
        )
        .expect("written");
        crate::input::sparse_file(&dir.join("t.cfg"), MAX_TUNING_BYTES + 1);
        let err = read(&path)
            .expect("read")
            .read_tuning(&path, &mut AnalyticCollectives::default())
            .expect_err("too large");
        assert_eq!((err.line, err.file.as_str()), (10, path.to_str().expect("UTF-8")));
        assert!(
            err.message
                .ends_with(": it holds 1048577 bytes, more than the 1048576 bytes (1 MiB) such a file may hold"),
            "{err}"
        );
        // Text that is not UTF-8 names its line, in the file it is in.
        std::fs::write(dir.join("t.cfg"), b"11 LOG MAX LOG MAX 0.0\n\xff\n").expect("written");
        let err = read(&path)
            .expect("read")
            .read_tuning(&path, &mut AnalyticCollectives::default())
            .expect_err("not text");
        assert_eq!(
            err.to_string(),
            format!(
                "{}:2: not UTF-8 text; a communications fine tuning file is text (the communications fine tuning \
                 file that {}:10 names, \"configuration files\" field 3)",
                dir.join("t.cfg").display(),
                path.display()
            )
        );
        std::fs::remove_dir_all(&dir).expect("cleaned");
    }

    #[test]
    fn values_the_replay_cannot_hold_are_refused_naming_line_and_field() {
        let multi = |ratio: &str, latency: &str, bandwidth: &str, inter: &str| {
            let record =
                format!("{{0, 4, \"\", 2, {ratio}, {latency}, {bandwidth}, 0, 1, 1,\n    {inter}, 1, 1, 0.0}};;");
            let text = CONFIG.replace(
                "{0, 4, \"\", 2, 2.5, 0.000001, 1000.0, 0, 1, 1,\n    0.0000005, 1, 1, 0.0};;",
                &record,
            );
            assert_ne!(text, CONFIG);
            parse(&text, "m.cfg").map(|_| ()).map_err(|e| e.to_string())
        };
        // The issue's reproducer: it was clamped to 2^64 ps, and predicted 18,446,744 s.
        assert_eq!(
            multi("1", "1e300", "1000.0", "0"),
            Err(
                "m.cfg:7: \"multi node information\": field 6 (intra_latency_s): intra-node latency 1e300 s: more \
                 than vesper's clock counts (2^64 ps, about 18446744 s)"
                    .into()
            )
        );
        assert_eq!(
            multi("1", "0", "1000.0", "18446745"),
            Err(
                "m.cfg:7: \"multi node information\": field 11 (inter_latency_s): inter-node latency 18446745 s: \
                 more than vesper's clock counts (2^64 ps, about 18446744 s)"
                    .into()
            )
        );
        // The longest the clock counts is taken.
        assert_eq!(multi("1", "18446744", "1000.0", "18446744"), Ok(()));
        // Too many digits, whole or fractional, to hold as bytes per seconds.
        for bandwidth in ["1e300", "1e-30"] {
            assert_eq!(
                multi("1", "0", bandwidth, "0"),
                Err(format!(
                    "m.cfg:7: \"multi node information\": field 7 (intra_bw_MBps): intra-node bandwidth {bandwidth} \
                     MBps: more digits than vesper holds: it keeps a bandwidth exactly, as bytes per seconds in 64 \
                     bits each"
                ))
            );
        }
        // Slow, but held exactly: a message too slow for the clock stops the replay.
        assert_eq!(multi("1", "0", "1e-9", "0"), Ok(()));
        // 0 is unlimited, as in Dimemas.
        assert_eq!(multi("1", "0", "0", "0"), Ok(()));
        assert_eq!(
            multi("NaN", "0", "0", "0"),
            Err(
                "m.cfg:7: \"multi node information\": field 5 (cpu_speed_ratio): expected a number, found 'NaN'".into()
            )
        );
        assert_eq!(
            multi("1", "inf", "0", "0"),
            Err(
                "m.cfg:7: \"multi node information\": field 6 (intra_latency_s): expected a number, found 'inf'".into()
            )
        );
        let environment = |nodes: &str, bandwidth: &str| {
            let text = CONFIG.replace(
                "{\"\", 0, \"\", 4, 250.0, 0, 1}",
                &format!("{{\"\", 0, \"\", {nodes}, {bandwidth}, 0, 1}}"),
            );
            parse(&text, "e.cfg").map(|_| ()).map_err(|e| e.to_string())
        };
        assert_eq!(
            environment("4", "123456789012345678901"),
            Err(
                "e.cfg:6: \"environment information\": field 5 (bw_MBps): inter-node bandwidth 123456789012345678901 \
                 MBps: more digits than vesper holds: it keeps a bandwidth exactly, as bytes per seconds in 64 bits \
                 each"
                    .into()
            )
        );
        assert_eq!(
            environment("0", "250.0"),
            Err(
                "e.cfg:6: \"environment information\": field 4 (n_nodes): a machine needs at least one node, found 0"
                    .into()
            )
        );
        assert_eq!(
            environment("4294967296", "250.0"),
            Err(
                "e.cfg:6: \"environment information\": field 4 (n_nodes): expected a whole number, found \
                 '4294967296'"
                    .into()
            )
        );
    }

    #[test]
    fn an_explicit_mapping_maps_the_traces_tasks() {
        let text = format!("{CONFIG}\"mapping information\" {{\"app.dim\", 4, [4] {{0,0,3,1}}}};;\n");
        let config = parse(&text, "m.cfg").expect("parsed");
        assert_eq!(config.check_tasks(4, "the trace app.dim"), Ok(()));
        assert_eq!(
            config
                .check_tasks(2, "the trace app.dim")
                .expect_err("refused")
                .to_string(),
            "m.cfg:10: \"mapping information\": field 2 (n_tasks): maps 4 tasks, but the trace app.dim has 2"
        );
        assert_eq!(parse(CONFIG, "p.cfg").expect("parsed").check_tasks(9, "it"), Ok(()));
    }

    #[test]
    fn every_mapping_kind() {
        let with = |record: &str| {
            let text = format!("{CONFIG}{record}\n");
            parse(&text, "m.cfg").expect("parsed").mapping
        };
        let fill = CONFIG.replace("2 TASKS_PER_NODE", "FILL_NODES");
        assert_eq!(
            parse(&fill, "f.cfg").expect("parsed").mapping,
            Some(Mapping::FillNodes { groups: vec![(4, 2)] })
        );
        // The trace's name may come first.
        let named = CONFIG.replace("{\"2 TASKS_PER_NODE\"}", "{\"app.dim\", \"INTERLEAVED\"}");
        assert_eq!(
            parse(&named, "n.cfg").expect("parsed").mapping,
            Some(Mapping::Interleaved { nodes: 4 })
        );
        let interleaved = CONFIG.replace("2 TASKS_PER_NODE", "INTERLEAVED");
        assert_eq!(
            parse(&interleaved, "i.cfg").expect("parsed").mapping,
            Some(Mapping::Interleaved { nodes: 4 })
        );
        // An explicit mapping wins over the predefined one.
        assert_eq!(
            with(r#""mapping information" {"app.dim", 4, [4] {0,0,3,1}};;"#),
            Some(Mapping::Explicit(vec![0, 0, 3, 1]))
        );
    }

    /// A configuration of one machine of `nodes` nodes, with these node records and
    /// mapping, in Dimemas's order.
    fn machine(nodes: u32, records: &[&str], mapping: &str) -> String {
        let mut text = format!(
            "#DIMEMAS_CONFIGURATION\n\"wide area network information\" {{\"\", 1, 0, 4, 0.0, 0.0, 1}};;\n\
             \"environment information\" {{\"\", 0, \"\", {nodes}, 1000.0, 0, 1}};;\n"
        );
        for record in records {
            text.push_str(record);
            text.push('\n');
        }
        text.push_str(&format!("\"predefined mapping information\" {{\"{mapping}\"}};;\n"));
        text
    }

    /// A "multi node information" record of `count` nodes of `cpus` processors.
    fn group(count: u32, cpus: u32, ratio: &str, latency: &str) -> String {
        format!(
            "\"multi node information\" {{0, {count}, \"\", {cpus}, {ratio}, 0.0, 0.0, 0, 1, 1, {latency}, 1, 1, \
             0.0}};;"
        )
    }

    #[test]
    fn node_records_describe_the_nodes_in_turn() {
        let two = group(2, 1, "2.0", "1e-06");
        let four = group(3, 4, "0.5", "3e-06");
        let one = "\"node information\" {0, \"\", 2, 0, 0.0, 0.0, 0, 1, 0, 2e-06, 0, 1, 0.0};;";
        let config = parse(&machine(6, &[&two, &four, one], "FILL_NODES"), "h.cfg").expect("parsed");
        assert_eq!(config.warnings, Vec::<String>::new());
        let described: Vec<(u32, u32, f64, f64)> = (0..7)
            .map(|n| {
                let g = config.group_of(n).expect("a group");
                (n, g.cpus, g.cpu_ratio, g.inter_latency_s)
            })
            .collect();
        assert_eq!(
            described,
            [
                (0, 1, 2.0, 1e-6),
                (1, 1, 2.0, 1e-6),
                (2, 4, 0.5, 3e-6),
                (3, 4, 0.5, 3e-6),
                (4, 4, 0.5, 3e-6),
                (5, 2, 0.0, 2e-6),
                // Past the records: the last one's.
                (6, 2, 0.0, 2e-6),
            ]
        );
        let last = &config.groups[2];
        assert_eq!((last.record, last.line, last.count), (ONE_NODE, 6, 1));
        // Half-duplex: one count 0.
        assert!(last.intra_links.half_duplex() && last.inter_links.half_duplex());
        // FILL_NODES fills each node up to its processors, in order; the rest on the last.
        let mapping = config.mapping.clone().expect("a mapping");
        let nodes: Vec<u32> = (0..20).map(|t| mapping.node_of(t)).collect();
        assert_eq!(nodes, [0, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5]);
        // 14 single-threaded tasks fit the processors; 17 do not: the last node would
        // share its 2 processors between 3 threads.
        assert_eq!(config.check_mapping(&[1; 16], "the trace t.dim"), Ok(()));
        assert_eq!(
            config
                .check_mapping(&[1; 17], "the trace t.dim")
                .expect_err("too many")
                .to_string(),
            "h.cfg:7: the mapping gives node 5 3 threads of the trace t.dim, but it has 2 processor(s) (the \
             processors of \"node information\" at line 6): Dimemas would share them between the threads, which \
             vesper does not model; give the node as many processors as threads, or map fewer tasks to it"
        );
        // Threads count: two tasks of two threads on a node of 4 processors fit.
        assert_eq!(config.check_mapping(&[1, 1, 2, 2], "it"), Ok(()));
        assert!(config.check_mapping(&[2, 1], "it").is_err());
    }

    #[test]
    fn the_node_records_must_fit_the_machine() {
        let err = parse(
            &machine(
                4,
                &[&group(3, 1, "1.0", "0.0"), &group(2, 1, "1.0", "0.0")],
                "FILL_NODES",
            ),
            "o.cfg",
        )
        .expect_err("too many nodes");
        assert_eq!(
            err.to_string(),
            "o.cfg:5: \"multi node information\": 2 more node(s) after the 3 defined above, but \"environment \
             information\" declares 4; Dimemas refuses it too (\"more nodes defined than total machine nodes\")"
        );
        // Fewer: read, with Dimemas's reason; the last record's values go on.
        let fewer = parse(&machine(4, &[&group(3, 1, "1.0", "0.0")], "FILL_NODES"), "f.cfg").expect("read");
        assert_eq!(
            fewer.warnings,
            [
                "f.cfg:4: the node records describe 3 of the 4 nodes \"environment information\" declares (line 3); \
              Dimemas refuses it (\"Machine 0 should have 4 nodes\"); vesper gives the others the last record's values"
            ]
        );
        assert_eq!(fewer.group_of(3).map(|g| g.cpus), Some(1));
        assert_eq!(fewer.mapping.map(|m| m.node_of(3)), Some(3));
        // n TASKS_PER_NODE over too few nodes: Dimemas refuses it.
        let config = parse(&machine(2, &[&group(2, 4, "1.0", "0.0")], "3 TASKS_PER_NODE"), "t.cfg").expect("read");
        assert_eq!(config.check_mapping(&[1; 6], "it"), Ok(()));
        assert_eq!(
            config
                .check_mapping(&[1; 7], "the trace t.dim")
                .expect_err("too few nodes")
                .to_string(),
            "t.cfg:5: \"predefined mapping information\": \"3 TASKS_PER_NODE\" places at most 6 tasks on the \
             machine's 2 nodes, but the trace t.dim has 7; Dimemas refuses it too (\"tasks per node mapping not \
             applicable\")"
        );
    }

    #[test]
    fn a_configuration_without_a_machine_is_refused() {
        // Nothing but the header: no machine to replay on.
        for (text, line) in [
            ("#DIMEMAS_CONFIGURATION\n", 1),
            ("// empty\n\n#DIMEMAS_CONFIGURATION\n", 3),
        ] {
            assert_eq!(
                parse(text, "e.cfg").expect_err("no machine").to_string(),
                format!(
                    "e.cfg:{line}: no \"environment information\" record: a configuration declares its machine there \
                     (its nodes, their bandwidth and buses), and without one there is nothing to replay on; Dimemas \
                     needs it too"
                )
            );
        }
        // Node records and a mapping do not make a machine.
        let nodes = format!("#DIMEMAS_CONFIGURATION\n{}\n", group(2, 1, "1.0", "0.0"));
        assert!(
            parse(&nodes, "n.cfg")
                .expect_err("no machine")
                .to_string()
                .starts_with("n.cfg:1: no \"environment information\" record")
        );
    }

    #[test]
    fn machines_larger_than_any_network_are_refused() {
        let most = machine(MAX_NODES, &[&group(MAX_NODES, 1, "1.0", "0.0")], "FILL_NODES");
        assert_eq!(parse(&most, "m.cfg").map(|c| c.nodes), Ok(Some(1 << 25)));
        assert_eq!(
            parse(&machine(1_000_000_000, &[], "FILL_NODES"), "h.cfg")
                .expect_err("too many nodes")
                .to_string(),
            "h.cfg:3: \"environment information\": field 4 (n_nodes): 1000000000 nodes: vesper models at most 2^25 = \
             33,554,432 (the most hosts its networks have)"
        );
        // A node record's count too, wherever it comes.
        let early = format!(
            "#DIMEMAS_CONFIGURATION\n{}\n\"environment information\" {{\"\", 0, \"\", 4, 1000.0, 0, 1}};;\n",
            group(u32::MAX, 1, "1.0", "0.0")
        );
        assert_eq!(
            parse(&early, "g.cfg").expect_err("too many nodes").to_string(),
            "g.cfg:2: \"multi node information\": field 2 (n_nodes): 4294967295 nodes: vesper models at most 2^25 = \
             33,554,432 (the most hosts its networks have)"
        );
    }

    #[test]
    fn cpu_ratios_of_zero_are_read_and_negative_ones_refused() {
        let config = parse(&machine(1, &[&group(1, 1, "0.0", "0.0")], "FILL_NODES"), "z.cfg").expect("read");
        assert_eq!(config.groups[0].cpu_ratio, 0.0);
        let err = parse(&machine(1, &[&group(1, 1, "-0.5", "0.0")], "FILL_NODES"), "n.cfg").expect_err("negative");
        assert_eq!(
            err.to_string(),
            "n.cfg:4: \"multi node information\": field 5 (cpu_speed_ratio): -0.5: a negative ratio (a fixed \
             duration) is for \"modules information\" only; Dimemas refuses it on nodes (\"invalid CPU ratio\")"
        );
    }

    #[test]
    fn every_record_of_dimemas_is_read_or_refused_by_name() {
        let base = machine(2, &[&group(2, 1, "1.0", "0.0")], "FILL_NODES");
        let with = |record: &str| parse(&format!("{base}{record}\n"), "r.cfg");
        let refused = |record: &str| with(record).expect_err("refused").to_string();
        // Read, no effect on a replay of one machine's MPI trace.
        let read = with("\"file system parameters\" {0.0, 0.0, 8.0, 0, 1.0};;").expect("read");
        assert_eq!(read.warnings, Vec::<String>::new());
        assert!(
            refused(
                "\"dedicated connection information\" {0, 0, 0, 100.0, [1] {1}, 0, \"<\", \"&\", 0, \">\", [1] {0}, \
                 0.0, 0.0};;"
            )
            .contains("a dedicated connection joins machines of a wide area network")
        );
        assert!(
            refused("\"modules information\" {1, 2, 0.5};;")
                .starts_with("r.cfg:6: \"modules information\": vesper does not scale")
        );
        assert!(refused("\"accelerator node information\" {0};;").contains("does not model accelerators"));
        assert_eq!(
            refused("\"configuration files\" {\"sched.cfg\", \"\", \"\", \"\"};;"),
            "r.cfg:6: \"configuration files\": field 1 (scheduler definition file): vesper replays with Dimemas's \
             default scheduler (first come, first served, no context switch cost); give \"\""
        );
        assert!(
            refused("\"configuration files\" {\"\", \"\", \"\", \"random.cfg\"};;")
                .contains("field 4 (sensitivity file): vesper does not add Dimemas's random variations")
        );
        // The file system's model serves I/O only.
        assert!(with("\"configuration files\" {\"\", \"fs.cfg\", \"\", \"\"};;").is_ok());
        // Records of other machines, or of a wide area network between them.
        let wan = base.replace("{\"\", 1, 0, 4", "{\"\", 2, 0, 4");
        assert_eq!(
            parse(&wan, "w.cfg").expect_err("two machines").to_string(),
            "w.cfg:2: \"wide area network information\": field 2 (number of machines): 2 machines: vesper replays \
             one machine; machines joined by a wide area network (its traffic model, dedicated connections and WAN \
             latencies) are not modelled"
        );
        let dedicated = base.replace("{\"\", 1, 0, 4", "{\"\", 1, 1, 4");
        assert!(
            parse(&dedicated, "d.cfg")
                .expect_err("dedicated")
                .to_string()
                .contains("field 3 (dedicated connections)")
        );
        assert!(
            refused("\"environment information\" {\"\", 1, \"\", 2, 1000.0, 0, 1};;")
                .starts_with("r.cfg:6: a second \"environment information\" record (the first is at line 3)")
        );
        let machine_one = base.replace("{0, 2, \"\", 1, 1.0", "{1, 2, \"\", 1, 1.0");
        assert!(
            parse(&machine_one, "m.cfg")
                .expect_err("machine 1")
                .to_string()
                .contains("field 1 (machine ID): machine 1: vesper replays one machine, number 0")
        );
        // The layout of "node information" before 2012 is refused with what to write.
        let old = "\"node information\" {0, 0, \"\", 1, 1, 1, 0.0, 0.0, 1.0, 0.0, 0.0};;";
        assert!(
            parse(&machine(1, &[old], "FILL_NODES"), "o.cfg")
                .expect_err("old layout")
                .to_string()
                .contains("11 fields, the layout before 2012")
        );
        // A record Dimemas does not know: skipped with Dimemas's reason.
        let unknown = with("\"stranger information\" {1};;").expect("read");
        assert!(
            unknown.warnings[0].contains("is not a record of Dimemas's"),
            "{:?}",
            unknown.warnings
        );
    }

    #[test]
    fn records_out_of_dimemas_s_order_are_read_with_a_warning() {
        let late = "#DIMEMAS_CONFIGURATION\n\"environment information\" {\"\", 0, \"\", 1, 250.0, 0, 1};;\n\
                    \"wide area network information\" {\"\", 1, 0, 4, 0.0, 0.0, 1};;\n\
                    \"mapping information\" {\"a.dim\", 1, [1] {0}};;\n\
                    \"multi node information\" {0, 1, \"\", 1, 1.0, 0.0, 0.0, 0, 1, 1, 0.0, 1, 1, 0.0};;\n";
        let config = parse(late, "l.cfg").expect("read");
        assert_eq!(
            config.warnings,
            [
                "l.cfg:5: \"multi node information\" after \"mapping information\": Dimemas maps an explicit \
                 mapping's tasks when it reads the record, onto the nodes defined before it",
                "l.cfg:2: \"environment information\" before \"wide area network information\" (line 3): Dimemas \
                 refuses it (\"Wrong environment information record values\": the machine does not exist until the \
                 wide area network record declares it); put that record first",
            ]
        );
        // Nothing to say of a file in Dimemas's order.
        let good = parse(&machine(1, &[&group(1, 1, "1.0", "0.0")], "FILL_NODES"), "g.cfg").expect("read");
        assert_eq!(good.warnings, Vec::<String>::new());
    }

    #[test]
    fn what_dimemas_reads_otherwise_is_read_with_a_warning() {
        // examples/pingpong.cfg as it was: no wide area network record, a record over
        // two lines, a comment beside a record.
        let text = "#DIMEMAS_CONFIGURATION\n\"environment information\" {\"\", 0, \"\", 1, 250.0, 0, 1};;\n\
                    \"multi node information\" {0, 1, \"\", 2, 2.0, 0.000001, 1000.0,\n  0, 1, 1, 0.0, 1, 1, 0.0};;\n\
                    \"predefined mapping information\" {\"FILL_NODES\"};; /* fill */\n";
        let config = parse(text, "p.cfg").expect("read");
        assert_eq!(
            config.warnings,
            [
                "p.cfg:3: \"multi node information\" spans lines 3 to 4: Dimemas reads one record a line (\"Unknown \
                 configuration record type\"); write it on one line",
                "p.cfg:5: a comment shares line 5 with \"predefined mapping information\": Dimemas skips every line \
                 holding //, /* or */, so it does not read this record",
                "p.cfg:2: no \"wide area network information\" record before \"environment information\": Dimemas \
                 refuses it (\"Wrong environment information record values\": the machine does not exist until the \
                 wide area network record declares it); put `\"wide area network information\" {\"\", 1, 0, 4, 0.0, \
                 0.0, 1};;` first",
            ]
        );
        assert_eq!(config.mapping, Some(Mapping::FillNodes { groups: vec![(1, 2)] }));
    }

    #[test]
    fn errors_name_the_line_of_the_record() {
        let bad = |record: &str| {
            let text = format!("{CONFIG}{record}\n");
            parse(&text, "b.cfg").expect_err("refused").to_string()
        };
        assert_eq!(
            bad(r#""mapping information" {"app.dim", 3, [3] {0,x,1}};;"#),
            "b.cfg:10: expected a node number, found 'x'"
        );
        assert_eq!(
            bad(r#""mapping information" {"app.dim", 3, [2] {0,1}};;"#),
            "b.cfg:10: 3 tasks but 2 nodes listed"
        );
        assert_eq!(
            bad(r#""mapping information" {"app.dim", 3, [2] {0,1,2}};;"#),
            "b.cfg:10: the list says [2] but holds 3 nodes"
        );
        // The machine of CONFIG has 4 nodes.
        assert_eq!(
            bad(r#""mapping information" {"app.dim", 3, [3] {0,1,4}};;"#),
            "b.cfg:10: \"mapping information\": task 2 is mapped to node 4, but \"environment information\" \
             declares 4 node(s), 0 to 3"
        );
        let no_cpus = CONFIG.replace("{0, 4, \"\", 2, 2.5", "{0, 4, \"\", 0, 2.5");
        assert_eq!(
            parse(&no_cpus, "c.cfg").expect_err("refused").to_string(),
            "c.cfg:7: \"multi node information\": field 4 (cpus_per_node): a node needs at least one CPU, found 0"
        );
        assert_eq!(
            parse(&CONFIG.replace("2 TASKS_PER_NODE", "SOMEWHERE"), "b.cfg")
                .expect_err("refused")
                .to_string(),
            "b.cfg:9: expected FILL_NODES, INTERLEAVED or \"<n> TASKS_PER_NODE\", found 'SOMEWHERE'"
        );
        assert_eq!(
            parse(
                &CONFIG.replace(r#"{"", 0, "", 4, 250.0, 0, 1}"#, r#"{"", 0, "", many, 250.0, 0, 1}"#),
                "b.cfg"
            )
            .expect_err("refused")
            .to_string(),
            "b.cfg:6: \"environment information\": field 4 (n_nodes): expected a whole number, found 'many'"
        );
        assert_eq!(
            bad("garbage;;"),
            "b.cfg:10: expected \"record name\" {fields};;, found 'garbage'"
        );
        // The multi-line record is reported at its first line.
        let text = CONFIG.replace("2.5, 0.000001", "fast, 0.000001");
        assert_eq!(
            parse(&text, "c.cfg").expect_err("refused").to_string(),
            "c.cfg:7: \"multi node information\": field 5 (cpu_speed_ratio): expected a number, found 'fast'"
        );
        assert_eq!(
            parse("hello\n", "h.cfg").expect_err("refused").to_string(),
            "h.cfg:1: expected #DIMEMAS_CONFIGURATION, found 'hello'"
        );
        // Values out of range name the record's line and the field.
        let multi = |ratio: &str, latency: &str| {
            let text = CONFIG.replace("2.5, 0.000001", &format!("{ratio}, {latency}"));
            parse(&text, "m.cfg").map(|_| ()).map_err(|e| e.to_string())
        };
        // 0: instantaneous bursts, as in Dimemas; a negative ratio only for modules.
        assert_eq!(multi("0", "0.000001"), Ok(()));
        assert_eq!(
            multi("-2", "0.000001"),
            Err(
                "m.cfg:7: \"multi node information\": field 5 (cpu_speed_ratio): -2: a negative ratio (a fixed \
                 duration) is for \"modules information\" only; Dimemas refuses it on nodes (\"invalid CPU ratio\")"
                    .into()
            )
        );
        assert_eq!(
            multi("1", "-0.5"),
            Err(
                "m.cfg:7: \"multi node information\": field 6 (intra_latency_s): expected a non-negative number, \
                 found '-0.5'"
                    .into()
            )
        );
        assert_eq!(multi("1", "0"), Ok(()));
        let inter = CONFIG.replace("0.0000005", "-1e-6");
        assert_eq!(
            parse(&inter, "i.cfg").expect_err("refused").to_string(),
            "i.cfg:7: \"multi node information\": field 11 (inter_latency_s): expected a non-negative number, found \
             '-1e-6'"
        );
        assert_eq!(
            parse(
                &CONFIG.replace(r#"{"", 0, "", 4, 250.0, 0, 1}"#, r#"{"", 0, "", 4, -250.0, 0, 1}"#),
                "b.cfg"
            )
            .expect_err("refused")
            .to_string(),
            "b.cfg:6: \"environment information\": field 5 (bw_MBps): expected a non-negative number, found '-250.0'"
        );
        // A block comment that never ends names the line where it opens.
        let open = format!("{CONFIG}/* never closed\n\"mapping information\" {{\"app.dim\", 1, [1] {{0}}}};;\n");
        assert_eq!(
            parse(&open, "o.cfg").expect_err("refused").to_string(),
            "o.cfg:10: a comment opened with /* here is never closed with */"
        );
        let inline = format!("{CONFIG}\"predefined mapping information\" {{\"FILL_NODES\"}};; /* and then\n\n");
        assert_eq!(
            parse(&inline, "o.cfg").expect_err("refused").to_string(),
            "o.cfg:10: a comment opened with /* here is never closed with */"
        );
    }
}
