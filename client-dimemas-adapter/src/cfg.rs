//! Dimemas `.cfg` configurations (`shared/spec/formats.md` §2): the records that say
//! where tasks run and how fast CPUs and intra-node copies are.
//!
//! ```text
//! #DIMEMAS_CONFIGURATION
//! "environment information" {"", 0, "", 4, 250.0, 0, 1};;
//! "multi node information" {0, 4, "", 2, 1.0, 0.000001, 1000.0, 0, 1, 1, 0.0, 1, 1, 0.0};;
//! "predefined mapping information" {"2 TASKS_PER_NODE"};;
//! "mapping information" {"app.dim", 4, [4] {0,0,1,1}};;
//! ```
//!
//! Records end with `;;` and may span lines; `//` lines and `/* ... */` blocks are
//! comments; other records are skipped. Errors name the file, the line where the record
//! (or the unterminated comment) begins, and the field.
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

/// What a configuration says, as far as the replay uses it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DimConfig {
    /// nodes of the machine (environment information)
    pub nodes: Option<u32>,
    /// inter-node bandwidth [MBps, 2^20 bytes/s] (environment information)
    pub bandwidth_mbps: Option<f64>,
    /// CPUs per node (multi node information)
    pub cpus_per_node: Option<u32>,
    /// CPU speed ratio (multi node information)
    pub cpu_ratio: Option<f64>,
    /// intra-node latency \[s\]
    pub intra_latency_s: Option<f64>,
    /// intra-node bandwidth \[MBps\]
    pub intra_bandwidth_mbps: Option<f64>,
    /// inter-node latency \[s\]
    pub inter_latency_s: Option<f64>,
    /// where tasks run: the explicit mapping if given, else the predefined one
    pub mapping: Option<Mapping>,
    /// inter-node buses, 0 for unlimited (environment information)
    pub buses: Option<u32>,
    /// buses of each node, 0 for unlimited (multi node information: intra_buses)
    pub intra_buses: Option<u32>,
    /// links of each task within its node (multi node information: intra_in_links,
    /// intra_out_links)
    pub intra_links: Option<Links>,
    /// links of each node to the network (multi node information: inter_in_links,
    /// inter_out_links)
    pub inter_links: Option<Links>,
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
    /// the line of the record that names the fine-tuning file
    pub comm_tuning_line: Option<usize>,
}

impl DimConfig {
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

    /// Reads the "communications fine tuning" file, if one is named, into
    /// `collectives`; `path` is this configuration's (relative names are relative to
    /// its folder). A file that cannot be read is an error naming the record that
    /// names it; errors in its lines name the fine-tuning file.
    pub fn read_tuning(&self, path: &Path, collectives: &mut AnalyticCollectives) -> Result<(), CfgError> {
        let Some(name) = &self.comm_tuning_file else {
            return Ok(());
        };
        let tuning = path.parent().unwrap_or(Path::new(".")).join(name);
        let tuning_name = tuning.display().to_string();
        let text = vesper_input::read_text(&tuning, MAX_TUNING_BYTES).map_err(|e| match e.line() {
            // What is wrong within it names its line.
            Some(_) => input_error(&tuning_name, TUNING_FILE, e),
            None => CfgError {
                file: self.file.clone(),
                line: self.comm_tuning_line.unwrap_or(0),
                message: format!(
                    "\"configuration files\": field 3 (communication file): cannot read {tuning_name}: {}",
                    input_error(&tuning_name, TUNING_FILE, e).message
                ),
            },
        })?;
        collectives.parse_tuning(&text, &tuning_name)
    }
}

/// What is wrong with a configuration, and where.
pub type CfgError = InputError;

/// Reads the configuration at `path`.
pub fn read(path: &Path) -> Result<DimConfig, CfgError> {
    let (text, file) = read_text(path, MAX_CFG_BYTES, "a Dimemas configuration")?;
    parse(&text, &file)
}

/// Parses a configuration's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<DimConfig, CfgError> {
    let error = |line: usize, message: String| CfgError {
        file: file.to_string(),
        line,
        message,
    };
    let text = without_comments(text).map_err(|line| {
        error(
            line,
            "a comment opened with /* here is never closed with */".to_string(),
        )
    })?;
    let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return Err(error(0, "an empty file; expected #DIMEMAS_CONFIGURATION".into()));
    };
    if !first.starts_with("#DIMEMAS_CONFIGURATION") {
        return Err(error(1, format!("expected #DIMEMAS_CONFIGURATION, found '{first}'")));
    }
    let mut config = DimConfig {
        file: file.to_string(),
        ..DimConfig::default()
    };
    let mut predefined = None;
    let mut explicit = None;
    let mut consumed = 0;
    let body_start = text.find('\n').map_or(text.len(), |i| i + 1);
    for chunk in text[body_start..].split(";;") {
        let start = body_start + consumed;
        consumed += chunk.len() + 2;
        let record = chunk.trim();
        if record.is_empty() {
            continue;
        }
        let leading = chunk.len() - chunk.trim_start().len();
        let line = text[..start + leading].matches('\n').count() + 1;
        let fail = |message: String| error(line, message);
        let (name, fields) = split_record(record).map_err(fail)?;
        let field = |i: usize, what: &str| -> Result<&str, CfgError> {
            fields
                .get(i)
                .copied()
                .ok_or_else(|| fail(format!("\"{name}\": field {} ({what}) is missing", i + 1)))
        };
        let number = |i: usize, what: &str| -> Result<f64, CfgError> {
            let text = field(i, what)?;
            text.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| {
                fail(format!(
                    "\"{name}\": field {} ({what}): expected a number, found '{text}'",
                    i + 1
                ))
            })
        };
        // A number at least 0 (`positive`: above 0).
        let at_least_zero = |i: usize, what: &str, positive: bool| -> Result<f64, CfgError> {
            let value = number(i, what)?;
            if value > 0.0 || (value == 0.0 && !positive) {
                return Ok(value);
            }
            Err(fail(format!(
                "\"{name}\": field {} ({what}): expected a {} number, found '{}'",
                i + 1,
                if positive { "positive" } else { "non-negative" },
                fields[i]
            )))
        };
        // A duration [s] the replay's clock counts; `label` says what it is.
        let seconds = |i: usize, what: &str, label: &str| -> Result<f64, CfgError> {
            let value = at_least_zero(i, what, false)?;
            match ps_of_seconds(value) {
                Some(_) => Ok(value),
                None => Err(fail(format!(
                    "\"{name}\": field {} ({what}): {label} {} s: more than {CLOCK_LIMIT}",
                    i + 1,
                    fields[i]
                ))),
            }
        };
        // A bandwidth [MBps], 0 for unlimited, that the replay holds exactly (a
        // message it makes too slow for the clock stops the replay, naming it).
        let bandwidth = |i: usize, what: &str, label: &str| -> Result<f64, CfgError> {
            let value = at_least_zero(i, what, false)?;
            if value == 0.0 || mbps_ratio(value).is_some() {
                return Ok(value);
            }
            Err(fail(format!(
                "\"{name}\": field {} ({what}): {label} {} MBps: more digits than vesper holds: it keeps a \
                 bandwidth exactly, as bytes per seconds in 64 bits each",
                i + 1,
                fields[i]
            )))
        };
        let count = |i: usize, what: &str| -> Result<u32, CfgError> {
            let text = field(i, what)?;
            text.parse::<u32>().map_err(|_| {
                fail(format!(
                    "\"{name}\": field {} ({what}): expected a whole number, found '{text}'",
                    i + 1
                ))
            })
        };
        match name {
            "environment information" => {
                let nodes = count(3, "n_nodes")?;
                if nodes == 0 {
                    return Err(fail(format!(
                        "\"{name}\": field 4 (n_nodes): a machine needs at least one node, found 0"
                    )));
                }
                config.nodes = Some(nodes);
                config.bandwidth_mbps = Some(bandwidth(4, "bw_MBps", "inter-node bandwidth")?);
                if fields.len() > 5 {
                    config.buses = Some(count(5, "n_buses")?);
                }
                if fields.len() > 6 {
                    let model = count(6, "collective_model")?;
                    if !(1..=3).contains(&model) {
                        return Err(fail(format!(
                            "\"{name}\": field 7 (collective_model): expected 1 (CONSTANT), 2 (LINEAR) or 3 \
                             (LOGARITHMIC), found {model}"
                        )));
                    }
                    config.collective_model = Some(model);
                }
            }
            "configuration files" => {
                config.comm_tuning_file = fields.get(2).map(|f| unquote(f).to_string()).filter(|f| !f.is_empty());
                config.comm_tuning_line = Some(line);
            }
            "multi node information" if config.cpus_per_node.is_none() => {
                let cpus = count(3, "cpus_per_node")?;
                if cpus == 0 {
                    return Err(fail(format!(
                        "\"{name}\": field 4 (cpus_per_node): a node needs at least one CPU, found 0"
                    )));
                }
                config.cpus_per_node = Some(cpus);
                config.cpu_ratio = Some(at_least_zero(4, "cpu_speed_ratio", true)?);
                config.intra_latency_s = Some(seconds(5, "intra_latency_s", "intra-node latency")?);
                config.intra_bandwidth_mbps = Some(bandwidth(6, "intra_bw_MBps", "intra-node bandwidth")?);
                config.inter_latency_s = Some(seconds(10, "inter_latency_s", "inter-node latency")?);
                // Older configurations stop before the resources: unlimited then.
                if fields.len() > 9 {
                    config.intra_buses = Some(count(7, "intra_buses")?);
                    config.intra_links = Some(Links {
                        input: count(8, "intra_in_links")?,
                        output: count(9, "intra_out_links")?,
                    });
                }
                if fields.len() > 12 {
                    config.inter_links = Some(Links {
                        input: count(11, "inter_in_links")?,
                        output: count(12, "inter_out_links")?,
                    });
                }
            }
            "predefined mapping information" => {
                let kind = unquote(field(0, "mapping")?);
                predefined = Some(match kind.split_whitespace().collect::<Vec<_>>()[..] {
                    ["FILL_NODES"] => None,
                    ["INTERLEAVED"] => Some(Mapping::Interleaved { nodes: 0 }),
                    [n, "TASKS_PER_NODE"] => match n.parse::<u32>() {
                        Ok(n) if n > 0 => Some(Mapping::TasksPerNode(n)),
                        _ => {
                            return Err(fail(format!(
                                "expected a positive number of tasks per node, found '{n}'"
                            )));
                        }
                    },
                    _ => {
                        return Err(fail(format!(
                            "expected FILL_NODES, INTERLEAVED or \"<n> TASKS_PER_NODE\", found '{kind}'"
                        )));
                    }
                });
            }
            "mapping information" => {
                let tasks = count(1, "n_tasks")? as usize;
                let list = field(2, "nodes")?;
                let (announced, nodes) = list
                    .split_once('{')
                    .and_then(|(before, rest)| Some((before, rest.rsplit_once('}')?.0)))
                    .ok_or_else(|| fail(format!("expected [n] {{node, ...}}, found '{list}'")))?;
                let nodes: Vec<u32> = nodes
                    .split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(|n| {
                        n.parse()
                            .map_err(|_| fail(format!("expected a node number, found '{n}'")))
                    })
                    .collect::<Result<_, _>>()?;
                if nodes.len() != tasks {
                    return Err(fail(format!("{tasks} tasks but {} nodes listed", nodes.len())));
                }
                // The list's own count, `[n]`, when given, must agree too.
                let announced = announced.trim();
                if let Some(n) = announced.strip_prefix('[').and_then(|a| a.strip_suffix(']'))
                    && n.trim().parse::<usize>().ok() != Some(nodes.len())
                {
                    return Err(fail(format!(
                        "the list says {announced} but holds {} nodes",
                        nodes.len()
                    )));
                }
                explicit = Some(Mapping::Explicit(nodes));
                config.mapping_tasks = Some((line, tasks as u32));
            }
            _ => {}
        }
    }
    // Checked once every record is read: the machine may be declared after the mapping.
    if let (Some(Mapping::Explicit(nodes)), Some(machine), Some((line, _))) =
        (&explicit, config.nodes, config.mapping_tasks)
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
    config.mapping = explicit.or(match predefined {
        // FILL_NODES: as many tasks per node as it has CPUs (one if not said; checked
        // above 0 when said).
        Some(None) => Some(Mapping::TasksPerNode(config.cpus_per_node.unwrap_or(1))),
        // INTERLEAVED: over the machine's nodes (one if not said; checked above 0).
        Some(Some(Mapping::Interleaved { .. })) => Some(Mapping::Interleaved {
            nodes: config.nodes.unwrap_or(1),
        }),
        Some(other) => other,
        None => None,
    });
    Ok(config)
}

/// The text with comments blanked (newlines kept, so line numbers hold); the line
/// where a `/*` opens that no `*/` closes, if one does.
fn without_comments(text: &str) -> Result<String, usize> {
    let mut out = String::with_capacity(text.len());
    let mut in_block = false;
    let mut opened = 0;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        let mut rest = line;
        if !in_block && rest.trim_start().starts_with("//") {
            out.push_str(if line.ends_with('\n') { "\n" } else { "" });
            continue;
        }
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
    }
    match in_block {
        true => Err(opened),
        false => Ok(out),
    }
}

/// `"name" {a, b, ...}` → (name, fields), commas inside quotes or braces kept.
fn split_record(record: &str) -> Result<(&str, Vec<&str>), String> {
    let expected = || format!("expected \"record name\" {{fields}};;, found '{}'", clip(record));
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
                cpus_per_node: Some(2),
                cpu_ratio: Some(2.5),
                intra_latency_s: Some(0.000001),
                intra_bandwidth_mbps: Some(1000.0),
                inter_latency_s: Some(0.0000005),
                mapping: Some(Mapping::TasksPerNode(2)),
                buses: Some(0),
                intra_buses: Some(0),
                intra_links: Some(Links { input: 1, output: 1 }),
                inter_links: Some(Links { input: 1, output: 1 }),
                collective_model: Some(1),
                comm_tuning_file: None,
                file: "a.cfg".into(),
                mapping_tasks: None,
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
                "{}:2: not UTF-8 text; a communications fine tuning file is text",
                dir.join("t.cfg").display()
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
            Some(Mapping::TasksPerNode(2))
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
            bad(r#""predefined mapping information" {"SOMEWHERE"};;"#),
            "b.cfg:10: expected FILL_NODES, INTERLEAVED or \"<n> TASKS_PER_NODE\", found 'SOMEWHERE'"
        );
        assert_eq!(
            bad(r#""environment information" {"", 0, "", many, 250.0, 0, 1};;"#),
            "b.cfg:10: \"environment information\": field 4 (n_nodes): expected a whole number, found 'many'"
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
        assert_eq!(
            multi("0", "0.000001"),
            Err(
                "m.cfg:7: \"multi node information\": field 5 (cpu_speed_ratio): expected a positive number, found \
                 '0'"
                .into()
            )
        );
        assert_eq!(
            multi("-2", "0.000001"),
            Err(
                "m.cfg:7: \"multi node information\": field 5 (cpu_speed_ratio): expected a positive number, found \
                 '-2'"
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
            bad(r#""environment information" {"", 0, "", 4, -250.0, 0, 1};;"#),
            "b.cfg:10: \"environment information\": field 5 (bw_MBps): expected a non-negative number, found '-250.0'"
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
