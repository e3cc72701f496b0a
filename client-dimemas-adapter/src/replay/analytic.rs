//! Dimemas's analytic model of collectives: nothing travels the network; every member
//! waits for the last to arrive, then all leave together after a time computed from
//! the group's size and the operation's bytes. This is what Dimemas does by default
//! (the alternative here, [`super::collective`], decomposes collectives into messages).
//!
//! The model, as Dimemas computes it for one machine:
//! - A call has a fan-in and a fan-out stage, each with a model and a size rule. A stage
//!   over `P` parties costs `factor × (latency + size / bandwidth)`, where the factor is
//!   0 (model `0`), 1 (`CTE`, even for one party), `P − 1` (`LIN`) or, for `LOG`, the
//!   number of steps of a binomial tree, ⌈log2 P⌉ when buses are unlimited. With `B`
//!   buses each step `i` takes ⌈pairs_i / B⌉ rounds, where `pairs_i` counts the tree's
//!   transfers at that step.
//! - The size rule picks the stage's bytes from the root's record: its bytes sent for a
//!   fan-in and received for a fan-out (`CURR`, the default), or `MIN`, `MAX`, `MEAN`
//!   (integer), `2MAX`, `S+R` of the two.
//! - Between nodes (when the machine has more than one), `P` is the number of nodes the
//!   members are on, with the inter-node latency (of the root's node, when a
//!   configuration's nodes differ), bandwidth and bus count. Within nodes, `P` is the
//!   number of members on a node, with that node's intra-node latency and bandwidth and
//!   no bus limit; the busiest node counts. The call takes the sum of the four stages
//!   (fan-in and fan-out, between and within nodes).
//! - The root is the last member to arrive that says it is the root, or, if none does,
//!   the last member to arrive. An `MPI_Reduce` record names its root by task number
//!   (Dimemas 5.5.0's reading); the others say 1 on the root's record.
//!
//! Dimemas's defaults: every operation's fan-in and fan-out take the configuration's
//! collective model (1 CTE, 2 LIN, 3 LOG) with the `CURR` size, except `MPI_Reduce`
//! (id 10), which is always `CTE` (Dimemas 5.5.0's `new_global_op`); a "communications
//! fine tuning" file may set them per operation ([`AnalyticCollectives::read_tuning`]),
//! but its `Machine globalop:` lines leave `MPI_Reduce` alone. Dimemas 5.5.0 defines
//! ids 0–15 only (`GLOBAL_OPS_COUNT`); 16–31 take the model of id − 16 here.
//! With Dimemas's model ([`super::resources`]), a collective first takes every bus of
//! the machine (waiting for those that messages hold), its time runs from when it holds
//! them, it frees them when it ends, and its members then go on node by node (the
//! task loop's `Collective`). Left out: the wide-area network between machines (one
//! machine here), and the start-up that non-blocking collectives (ids 16–31) pay before
//! going on: they are blocking here.

use std::path::Path;

use super::Ps;
use crate::input::{InputError, clip};

/// The largest "communications fine tuning" file read \[bytes\]: a line per global
/// operation (32) and per machine takes a few KiB; 1 MiB leaves room for comments.
pub const MAX_TUNING_BYTES: u64 = vesper_input::MIB;

/// Global operations with a model of their own (Dimemas 5.5.0's `GLOBAL_OPS_COUNT`):
/// ids 0–15; 16–31 share those of 0–15.
pub const OPERATIONS: usize = 16;

/// `MPI_Reduce`'s id: Dimemas models it `CTE` whatever the configuration says.
pub const REDUCE: u32 = 10;

/// What a fine-tuning file is, for messages.
pub(crate) const TUNING_FILE: &str = "a communications fine tuning file";

/// How a stage's time grows with its parties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FanModel {
    /// no time (`0`)
    Zero,
    /// one transfer (`CTE`)
    Constant,
    /// one transfer per other party (`LIN`)
    Linear,
    /// one per binomial-tree step (`LOG`)
    Logarithmic,
}

/// Which bytes a stage moves, of the root's bytes sent and received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeRule {
    /// sent for a fan-in, received for a fan-out (`CURR`)
    Current,
    /// the smaller (`MIN`)
    Min,
    /// the larger (`MAX`)
    Max,
    /// their mean, rounded down (`MEAN`)
    Mean,
    /// twice the larger (`2MAX`)
    TwiceMax,
    /// their sum (`S+R`)
    Sum,
}

/// One stage's model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fan {
    /// how its time grows with the parties
    pub model: FanModel,
    /// its bytes
    pub size: SizeRule,
}

/// The fan-in and fan-out of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperationModel {
    /// gathering towards the root
    pub fan_in: Fan,
    /// spreading from the root
    pub fan_out: Fan,
}

/// A stage's transfers: `latency + size / bandwidth` each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Link {
    /// \[ps\]
    pub latency: Ps,
    /// `(bytes, seconds)`; `None`: unlimited (transfers take only the latency)
    pub bandwidth: Option<(u64, u64)>,
}

impl Link {
    /// One transfer of `size` bytes (rounded up to the picosecond, as the ideal bus),
    /// if the clock counts that long.
    fn transfer(&self, size: u64) -> Option<Ps> {
        let serialisation = match self.bandwidth {
            Some((bytes, seconds)) if bytes > 0 => {
                let numerator = u128::from(size) * 1_000_000_000_000u128 * u128::from(seconds);
                u64::try_from(numerator.div_ceil(u128::from(bytes))).ok()?
            }
            _ => 0,
        };
        self.latency.checked_add(serialisation)
    }
}

/// The analytic model of every collective of a replay.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalyticCollectives {
    /// between nodes
    pub inter: Link,
    /// within a node
    pub intra: Link,
    /// with a configuration's nodes (Dimemas's model), the latencies and copies of each
    /// node instead of `inter`'s latency and `intra`: the stages between nodes pay the
    /// inter-node startup of the root's node, those within a node that node's own
    /// startup and bandwidth
    pub nodes: Option<super::machine::DimemasModel>,
    /// buses between nodes (0: unlimited); they slow `LOG` stages down
    pub buses: u32,
    /// nodes of the machine: with one, there is no stage between nodes
    pub machine_nodes: u32,
    /// per operation id (0–15; 16–31 as 0–15)
    pub operations: [OperationModel; OPERATIONS],
}

impl Default for AnalyticCollectives {
    /// `LOG` stages of `CURR` size, free transfers, unlimited buses, many nodes: set the
    /// links from the configuration or the network.
    fn default() -> AnalyticCollectives {
        AnalyticCollectives::uniform(FanModel::Logarithmic)
    }
}

impl AnalyticCollectives {
    /// Every operation's stages by `model`, of `CURR` size, but `MPI_Reduce`'s by `CTE`
    /// (Dimemas's default for its configuration's collective model), with free links
    /// and unlimited buses.
    pub fn uniform(model: FanModel) -> AnalyticCollectives {
        let both = |model| {
            let fan = Fan {
                model,
                size: SizeRule::Current,
            };
            OperationModel {
                fan_in: fan,
                fan_out: fan,
            }
        };
        let mut operations = [both(model); OPERATIONS];
        operations[REDUCE as usize] = both(FanModel::Constant);
        AnalyticCollectives {
            inter: Link::default(),
            intra: Link::default(),
            nodes: None,
            buses: 0,
            machine_nodes: u32::MAX,
            operations,
        }
    }

    /// The model of Dimemas's configuration field "collective communications model":
    /// 1 CONSTANT, 2 LINEAR, 3 LOGARITHMIC.
    pub fn model_of_configuration(code: u32) -> Option<FanModel> {
        match code {
            1 => Some(FanModel::Constant),
            2 => Some(FanModel::Linear),
            3 => Some(FanModel::Logarithmic),
            _ => None,
        }
    }

    /// How long operation `id` takes once every member has arrived: members on the
    /// nodes `nodes` (one entry per member), the root on node `root`, its record saying
    /// `sent` and `received` bytes; `None` if that is longer than the clock counts.
    pub fn time(&self, id: u32, nodes: &[u32], root: u32, sent: u32, received: u32) -> Option<Ps> {
        let op = self.operations[id as usize % OPERATIONS];
        let mut sorted = nodes.to_vec();
        sorted.sort_unstable();
        let mut per_node = Vec::new();
        for run in sorted.chunk_by(|a, b| a == b) {
            per_node.push((run[0], run.len() as u32));
        }
        let both = |link: &Link, parties: u32, buses: u32| {
            stage(op.fan_in, true, link, parties, buses, sent, received)?
                .checked_add(stage(op.fan_out, false, link, parties, buses, sent, received)?)
        };
        // Each node's own link within it, and the root node's startup between nodes.
        let intra = |node: u32| match &self.nodes {
            Some(model) => Link {
                latency: model.node(node).intra_startup,
                bandwidth: model.node(node).intra_bandwidth,
            },
            None => self.intra,
        };
        let inter = match &self.nodes {
            Some(model) => Link {
                latency: model.node(root).inter_startup,
                ..self.inter
            },
            None => self.inter,
        };
        let mut within = 0;
        for &(node, parties) in &per_node {
            within = within.max(both(&intra(node), parties, 0)?);
        }
        let between = if self.machine_nodes > 1 {
            both(&inter, per_node.len() as u32, self.buses)?
        } else {
            0
        };
        within.checked_add(between)
    }

    /// Reads a Dimemas "communications fine tuning" file into the models of the
    /// operations it names. Lines read (others are left alone, as Dimemas does):
    /// `<glop> <FIN model> <FIN size> <FOUT model> <FOUT size> <contention>` (for every
    /// machine; the contention is ignored, as by Dimemas) and `Machine globalop:
    /// <machine> <glop> <FIN model> <FIN size> <FOUT model> <FOUT size>` (machine 0,
    /// the only one here; Dimemas skips those naming `MPI_Reduce`, id 10, unread).
    /// Models are `0`, `CTE`, `LIN`, `LOG`; sizes `MIN`, `MAX`, `MEAN`, `2MAX`, `S+R`.
    /// A file none of whose lines Dimemas reads (an empty one, or any other file named
    /// by mistake) tunes nothing, and is refused.
    pub fn read_tuning(&mut self, path: &Path) -> Result<(), InputError> {
        let (text, file) = crate::input::read_text(path, MAX_TUNING_BYTES, TUNING_FILE)?;
        self.parse_tuning(&text, &file)
    }

    /// [`AnalyticCollectives::read_tuning`] of a file's text; `file` names it in errors.
    pub fn parse_tuning(&mut self, text: &str, file: &str) -> Result<(), InputError> {
        // The first line that is none of Dimemas's, and whether any is.
        let mut other: Option<(usize, &str)> = None;
        let mut dimemas = false;
        for (number, line) in text.lines().enumerate() {
            let error = |message: String| InputError {
                file: file.to_string(),
                line: number + 1,
                message,
            };
            if dimemas_reads(line) {
                dimemas = true;
            } else if other.is_none() && !line.trim().is_empty() {
                other = Some((number + 1, line));
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let fields = match words.as_slice() {
                ["Machine", "globalop:", machine, rest @ ..] if rest.len() >= 5 => {
                    // Dimemas 5.5.0 (comm_configuration.c) drops these lines for
                    // MPI_Reduce before reading anything else of them.
                    if rest[0].parse::<u32>() == Ok(REDUCE) {
                        continue;
                    }
                    if machine.parse::<u32>().map_err(|_| {
                        error(format!(
                            "Machine globalop: expected a machine number, found '{machine}'"
                        ))
                    })? != 0
                    {
                        continue;
                    }
                    &rest[..5]
                }
                [first, rest @ ..] if rest.len() >= 5 && first.parse::<i64>().is_ok() => {
                    if rest[4].parse::<f64>().is_err() {
                        return Err(error(format!(
                            "expected <glop> <FIN model> <FIN size> <FOUT model> <FOUT size> <contention>; the \
                             contention '{}' is not a number",
                            rest[4]
                        )));
                    }
                    &words[..5]
                }
                _ => continue,
            };
            let id: u32 = fields[0]
                .parse()
                .ok()
                .filter(|&id| id < 32)
                .ok_or_else(|| error(format!("unknown global operation '{}' (0 to 31)", fields[0])))?;
            let model = |text: &str, stage: &str| match text {
                "0" => Ok(FanModel::Zero),
                "CTE" => Ok(FanModel::Constant),
                "LIN" => Ok(FanModel::Linear),
                "LOG" => Ok(FanModel::Logarithmic),
                other => Err(error(format!(
                    "{stage} model: expected 0, CTE, LIN or LOG, found '{other}'"
                ))),
            };
            let size = |text: &str, stage: &str| match text {
                "MIN" => Ok(SizeRule::Min),
                "MAX" => Ok(SizeRule::Max),
                "MEAN" => Ok(SizeRule::Mean),
                "2MAX" => Ok(SizeRule::TwiceMax),
                "S+R" => Ok(SizeRule::Sum),
                other => Err(error(format!(
                    "{stage} size: expected MIN, MAX, MEAN, 2MAX or S+R, found '{other}'"
                ))),
            };
            self.operations[id as usize % OPERATIONS] = OperationModel {
                fan_in: Fan {
                    model: model(fields[1], "fan-in")?,
                    size: size(fields[2], "fan-in")?,
                },
                fan_out: Fan {
                    model: model(fields[3], "fan-out")?,
                    size: size(fields[4], "fan-out")?,
                },
            };
        }
        if dimemas {
            return Ok(());
        }
        let none = "name the file that holds the tuning, or \"\" for none";
        Err(match other {
            Some((line, text)) => InputError {
                file: file.to_string(),
                line,
                message: format!(
                    "'{}' is none of Dimemas's fine-tuning lines (`<glop> <FIN model> <FIN size> <FOUT model> <FOUT \
                     size> <contention>`, `Machine globalop: <machine> <glop> …`, `Policy: …`, `Flight time: …`), nor \
                     is any line after it: the file tunes nothing (Dimemas skips such lines, and would read it with \
                     no effect); {none}",
                    clip(text)
                ),
            },
            None => InputError {
                file: file.to_string(),
                line: 0,
                message: format!("an empty file: it tunes nothing; {none}"),
            },
        })
    }
}

/// Whether Dimemas 5.5.0 (`comm_configuration.c`) reads `line` of a fine-tuning file,
/// whether vesper models what it says or not: its `sscanf` formats `Machine policy: %d
/// %s`, `Policy: %s`, `Quantum size (bytes): %d`, `Flight time: %d …`, `Machine
/// globalop: %d %d %s %s %s %s`, `External globalop: %d %s %s %s %s` and `%d %s %s %s %s
/// %le`, each reading its first fields (what follows them is not looked at).
fn dimemas_reads(line: &str) -> bool {
    const PREFIXES: [(&str, usize); 6] = [
        ("Machine policy:", 2),
        ("Policy:", 1),
        ("Quantum size (bytes):", 1),
        ("Flight time:", 2),
        ("Machine globalop:", 6),
        ("External globalop:", 5),
    ];
    if let Some(&(prefix, fields)) = PREFIXES.iter().find(|(p, _)| line.starts_with(p)) {
        return line[prefix.len()..].split_whitespace().count() >= fields;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    words.len() >= 6 && words[0].parse::<i64>().is_ok() && words[5].parse::<f64>().is_ok()
}

/// One stage: `fan_in` says which (for the `CURR` size); `None` if longer than the
/// clock counts.
fn stage(fan: Fan, fan_in: bool, link: &Link, parties: u32, buses: u32, sent: u32, received: u32) -> Option<Ps> {
    let (s, r) = (u64::from(sent), u64::from(received));
    let size = match fan.size {
        SizeRule::Current if fan_in => s,
        SizeRule::Current => r,
        SizeRule::Min => s.min(r),
        SizeRule::Max => s.max(r),
        SizeRule::Mean => (s + r) / 2,
        SizeRule::TwiceMax => 2 * s.max(r),
        SizeRule::Sum => s + r,
    };
    let factor = match fan.model {
        FanModel::Zero => 0,
        FanModel::Constant => 1,
        FanModel::Linear => u64::from(parties.saturating_sub(1)),
        FanModel::Logarithmic => tree_steps(parties, buses),
    };
    match factor {
        0 => Some(0),
        _ => link.transfer(size)?.checked_mul(factor),
    }
}

/// Steps of a binomial tree over `parties`: ⌈log2 parties⌉ with unlimited buses (0);
/// with `buses`, step `i` (whose transfers start at 2^i − 1, one every 2^(i+1), below
/// parties − 1) takes one round per `buses` transfers.
fn tree_steps(parties: u32, buses: u32) -> u64 {
    let steps = u64::from(parties).next_power_of_two().trailing_zeros();
    if buses == 0 {
        return u64::from(steps);
    }
    (0..steps)
        .map(|i| {
            let (first, stride) = ((1u64 << i) - 1, 1u64 << (i + 1));
            let pairs = (u64::from(parties) - 1).saturating_sub(first).div_ceil(stride);
            pairs.div_ceil(u64::from(buses))
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_steps_count_rounds_of_the_buses() {
        assert_eq!(
            (1..=9).map(|p| tree_steps(p, 0)).collect::<Vec<_>>(),
            [0, 1, 2, 2, 3, 3, 3, 3, 4]
        );
        // 8 parties: 4, 2 and 1 transfers at the three steps.
        assert_eq!(tree_steps(8, 1), 7);
        assert_eq!(tree_steps(8, 2), 4);
        assert_eq!(tree_steps(8, 4), 3);
        // 6 parties: 3, 1 and 1 transfers (j = 0, 2, 4; 1; 3).
        assert_eq!(tree_steps(6, 1), 5);
        assert_eq!(tree_steps(1, 1), 0);
    }

    /// 1 byte per ns (2^20 bytes per 2^20 ns) and 100 ns latency between nodes; 10 ns
    /// and unlimited bandwidth within.
    fn model(fan: FanModel) -> AnalyticCollectives {
        AnalyticCollectives {
            inter: Link {
                latency: 100_000,
                bandwidth: Some((1_000_000_000, 1)),
            },
            intra: Link {
                latency: 10_000,
                bandwidth: None,
            },
            ..AnalyticCollectives::uniform(fan)
        }
    }

    #[test]
    fn stages_follow_their_model_size_and_parties() {
        // Eight members on eight nodes, the root sending 1000 bytes and receiving 200.
        let nodes: Vec<u32> = (0..8).collect();
        let one = |size: u64| 100_000 + size * 1000;
        // One member per node: within nodes, CTE still costs two transfers.
        assert_eq!(
            model(FanModel::Constant).time(11, &nodes, 0, 1000, 200),
            Some(one(1000) + one(200) + 2 * 10_000)
        );
        assert_eq!(
            model(FanModel::Linear).time(11, &nodes, 0, 1000, 200),
            Some(7 * (one(1000) + one(200)))
        );
        assert_eq!(
            model(FanModel::Logarithmic).time(11, &nodes, 0, 1000, 200),
            Some(3 * (one(1000) + one(200)))
        );
        assert_eq!(model(FanModel::Zero).time(11, &nodes, 0, 1000, 200), Some(0));
        // Four members on each of two nodes: one step between nodes, two within.
        let paired = [0, 0, 0, 0, 1, 1, 1, 1];
        assert_eq!(
            model(FanModel::Logarithmic).time(0, &paired, 0, 0, 0),
            Some(2 * 100_000 + 2 * 2 * 10_000)
        );
        // A machine of one node has no stage between nodes.
        let single = AnalyticCollectives {
            machine_nodes: 1,
            ..model(FanModel::Linear)
        };
        assert_eq!(single.time(1, &[0, 0, 0], 0, 50, 50), Some(2 * 2 * 10_000));
        // Size rules, on the fan-in and fan-out alike.
        let mut sized = model(FanModel::Constant);
        let rules = [
            (SizeRule::Min, 200),
            (SizeRule::Max, 1000),
            (SizeRule::Mean, 600),
            (SizeRule::TwiceMax, 2000),
            (SizeRule::Sum, 1200),
        ];
        for (size, bytes) in rules {
            let fan = Fan {
                model: FanModel::Constant,
                size,
            };
            sized.operations[11] = OperationModel {
                fan_in: fan,
                fan_out: fan,
            };
            assert_eq!(
                sized.time(27, &nodes, 0, 1000, 200),
                Some(2 * one(bytes) + 2 * 10_000),
                "{size:?}"
            );
        }
    }

    #[test]
    fn reduce_is_constant_whatever_the_model() {
        // Eight members on eight nodes, 1000 bytes each way.
        let nodes: Vec<u32> = (0..8).collect();
        let one = 100_000 + 1000 * 1000;
        for fan in [FanModel::Constant, FanModel::Linear, FanModel::Logarithmic] {
            // MPI_Reduce: one transfer each way between nodes, one within each (CTE).
            assert_eq!(
                model(fan).time(REDUCE, &nodes, 0, 1000, 1000),
                Some(2 * one + 2 * 10_000),
                "{fan:?}"
            );
        }
        // Id 26 (16 + 10) as id 10; the others follow the model.
        assert_eq!(
            model(FanModel::Linear).time(26, &nodes, 0, 1000, 1000),
            Some(2 * one + 2 * 10_000)
        );
        assert_eq!(model(FanModel::Linear).time(27, &nodes, 0, 1000, 1000), Some(14 * one));
        assert_eq!(model(FanModel::Linear).time(11, &nodes, 0, 1000, 1000), Some(14 * one));
        // A general tuning line sets it; a machine's line does not.
        let mut m = model(FanModel::Linear);
        m.parse_tuning("Machine globalop: 0 10 LOG MAX LOG MAX\n", "t.cfg")
            .expect("read");
        assert_eq!(m.time(REDUCE, &nodes, 0, 1000, 1000), Some(2 * one + 2 * 10_000));
        m.parse_tuning("10 LOG MAX LOG MAX 0.0\n", "t.cfg").expect("read");
        assert_eq!(m.time(REDUCE, &nodes, 0, 1000, 1000), Some(6 * one));
    }

    #[test]
    fn a_file_that_tunes_nothing_is_refused() {
        let m = AnalyticCollectives::uniform(FanModel::Constant);
        let refused = |text: &str| m.clone().parse_tuning(text, "j.txt").expect_err("refused").to_string();
        // Junk, or /proc/self/status: no line of Dimemas's formats.
        assert_eq!(
            refused("\nName:\tvesper\nUmask:\t0022\n"),
            "j.txt:2: 'Name:\tvesper' is none of Dimemas's fine-tuning lines (`<glop> <FIN model> <FIN size> <FOUT \
             model> <FOUT size> <contention>`, `Machine globalop: <machine> <glop> …`, `Policy: …`, `Flight time: …`), \
             nor is any line after it: the file tunes nothing (Dimemas skips such lines, and would read it with no \
             effect); name the file that holds the tuning, or \"\" for none"
        );
        assert_eq!(
            refused(""),
            "j.txt:0: an empty file: it tunes nothing; name the file that holds the tuning, or \"\" for none"
        );
        assert!(refused("11 LOG MAX\n").starts_with("j.txt:1: '11 LOG MAX' is none of Dimemas's fine-tuning lines"));
        // Lines of Dimemas's formats that vesper leaves alone make a file of Dimemas's;
        // beside them, lines of none are skipped, as Dimemas skips them.
        for text in [
            "Policy: FIFO\n",
            "Machine policy: 0 FIFO\n",
            "Flight time: 0 0.0\n",
            "External globalop: 11 LOG MAX LOG MAX\n",
            "Quantum size (bytes): 8\n",
            "# tuned for the cluster\n11 LOG MAX LIN S+R 0.0\n",
        ] {
            assert_eq!(m.clone().parse_tuning(text, "t.txt"), Ok(()), "{text}");
        }
    }

    #[test]
    fn a_tuning_file_sets_the_operations_it_names() {
        let mut m = AnalyticCollectives::uniform(FanModel::Constant);
        let text = "Policy: FIFO\n\
                    11 LOG MAX LIN S+R 0.0\n\
                    Machine globalop: 0 1 0 MIN CTE 2MAX\n\
                    Machine globalop: 3 0 LIN MIN LIN MIN\n\
                    Flight time: 0 0.0\n";
        m.parse_tuning(text, "t.cfg").expect("read");
        let fan = |model, size| Fan { model, size };
        assert_eq!(
            m.operations[11],
            OperationModel {
                fan_in: fan(FanModel::Logarithmic, SizeRule::Max),
                fan_out: fan(FanModel::Linear, SizeRule::Sum)
            }
        );
        assert_eq!(m.operations[1].fan_in, fan(FanModel::Zero, SizeRule::Min));
        assert_eq!(m.operations[1].fan_out, fan(FanModel::Constant, SizeRule::TwiceMax));
        // Machine 3 is not this one.
        assert_eq!(
            m.operations[0],
            AnalyticCollectives::uniform(FanModel::Constant).operations[0]
        );
        let bad = |text: &str| m.clone().parse_tuning(text, "t.cfg").expect_err("refused").to_string();
        assert_eq!(
            bad("\n11 LOG CURR LIN MAX 0"),
            "t.cfg:2: fan-in size: expected MIN, MAX, MEAN, 2MAX or S+R, found 'CURR'"
        );
        assert_eq!(
            bad("11 SQRT MAX LIN MAX 0"),
            "t.cfg:1: fan-in model: expected 0, CTE, LIN or LOG, found 'SQRT'"
        );
        assert_eq!(
            bad("40 LOG MAX LIN MAX 0"),
            "t.cfg:1: unknown global operation '40' (0 to 31)"
        );
    }
}
