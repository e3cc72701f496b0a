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
//! comments; other records are skipped.

use std::path::Path;

use crate::input::{InputError, clip, read_text};

use crate::replay::Mapping;

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
    /// intra-node latency [s]
    pub intra_latency_s: Option<f64>,
    /// intra-node bandwidth [MBps]
    pub intra_bandwidth_mbps: Option<f64>,
    /// inter-node latency [s]
    pub inter_latency_s: Option<f64>,
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
}

/// What is wrong with a configuration, and where.
pub type CfgError = InputError;

/// Reads the configuration at `path`.
pub fn read(path: &Path) -> Result<DimConfig, CfgError> {
    let (text, file) = read_text(path)?;
    parse(&text, &file)
}

/// Parses a configuration's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<DimConfig, CfgError> {
    let text = without_comments(text);
    let error = |line: usize, message: String| CfgError {
        file: file.to_string(),
        line,
        message,
    };
    let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return Err(error(0, "an empty file; expected #DIMEMAS_CONFIGURATION".into()));
    };
    if !first.starts_with("#DIMEMAS_CONFIGURATION") {
        return Err(error(1, format!("expected #DIMEMAS_CONFIGURATION, found '{first}'")));
    }
    let mut config = DimConfig::default();
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
                config.nodes = Some(count(3, "n_nodes")?);
                config.bandwidth_mbps = Some(number(4, "bw_MBps")?);
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
            }
            "multi node information" if config.cpus_per_node.is_none() => {
                config.cpus_per_node = Some(count(3, "cpus_per_node")?);
                config.cpu_ratio = Some(number(4, "cpu_speed_ratio")?);
                config.intra_latency_s = Some(number(5, "intra_latency_s")?);
                config.intra_bandwidth_mbps = Some(number(6, "intra_bw_MBps")?);
                config.inter_latency_s = Some(number(10, "inter_latency_s")?);
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
                let nodes = list
                    .split_once('{')
                    .and_then(|(_, rest)| rest.rsplit_once('}'))
                    .map(|(inside, _)| inside)
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
                explicit = Some(Mapping::Explicit(nodes));
            }
            _ => {}
        }
    }
    config.mapping = explicit.or(match predefined {
        // FILL_NODES: as many tasks per node as it has CPUs.
        Some(None) => Some(Mapping::TasksPerNode(config.cpus_per_node.unwrap_or(1).max(1))),
        Some(Some(Mapping::Interleaved { .. })) => Some(Mapping::Interleaved {
            nodes: config.nodes.unwrap_or(1).max(1),
        }),
        Some(other) => other,
        None => None,
    });
    Ok(config)
}

/// The text with comments blanked (newlines kept, so line numbers hold).
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_block = false;
    for line in text.split_inclusive('\n') {
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
                    }
                    None => {
                        out.push_str(rest);
                        break;
                    }
                }
            }
        }
    }
    out
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
                collective_model: Some(1),
                comm_tuning_file: None,
            }
        );
        let tuned = format!("{CONFIG}\"configuration files\" {{\"\", \"\", \"comm.cfg\", \"\"}};;\n");
        assert_eq!(
            parse(&tuned, "a.cfg").expect("parsed").comm_tuning_file.as_deref(),
            Some("comm.cfg")
        );
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
    }
}
