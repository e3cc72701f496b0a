//! Why a network description was refused: the field at fault, where it sits, and the
//! rule it breaks. Callers name the flag or the file that set the field by matching
//! [`At::field`], never by reading the message.

use vesper_input::InputError;

use super::fields::{Claim, Field};
use super::names::KindName;

/// Why a network file was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NetworkFileError {
    /// the file could not be read
    #[error("{file}: {source}")]
    Read {
        /// the file
        file: String,
        /// why
        source: InputError,
    },
    /// the file is not valid TOML or breaks the schema
    #[error("{file}: {message}")]
    Syntax {
        /// the file
        file: String,
        /// the parser's message (it names the line and the field)
        message: String,
    },
    /// the description breaks a rule
    #[error("{file}: {error}")]
    Spec {
        /// the file
        file: String,
        /// the rule broken
        error: SpecError,
    },
}

/// Where in a description a field sits: `rails[1].levels.2.speedup`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct At {
    /// the rail of a multi-rail network (`None`: the network's own fields)
    pub rail: Option<usize>,
    /// a table of tree levels or map device types
    pub table: Option<Table>,
    /// the field (`None`: the rail or the table itself)
    pub field: Option<Field>,
    /// the element of a list field at fault (`dims[1]`)
    pub index: Option<usize>,
}

/// A table within a description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Table {
    /// `[network.levels.N]`, by its key
    Level(String),
    /// `[network.models.TYPE]`, by its key
    Model(String),
}

impl At {
    /// The network's own `field`.
    pub fn field(field: Field) -> At {
        At {
            field: Some(field),
            ..At::default()
        }
    }

    /// Within rail `index`.
    pub fn in_rail(mut self, index: usize) -> At {
        self.rail = Some(index);
        self
    }
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some(rail) = self.rail {
            parts.push(format!("rails[{rail}]"));
        }
        match &self.table {
            Some(Table::Level(key)) => parts.push(format!("levels.{key}")),
            Some(Table::Model(key)) => parts.push(format!("models.{key}")),
            None => {}
        }
        if let Some(field) = self.field {
            match self.index {
                Some(i) => parts.push(format!("{}[{i}]", field.key())),
                None => parts.push(field.key().to_string()),
            }
        }
        if parts.is_empty() {
            parts.push("rails".into());
        }
        write!(f, "{}", parts.join("."))
    }
}

/// A rule a network description breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// a field the network does not take (see [`Claim`])
    #[error("network.{at}: {}", self.rule())]
    NotApplicable {
        /// the field
        at: At,
        /// the network's kind
        kind: KindName,
    },
    /// a field's value, or its absence
    #[error("network.{at}: {rule}")]
    Field {
        /// the field
        at: At,
        /// the rule broken
        rule: String,
    },
    /// a file the description names (the message names the file and line)
    #[error("{0}")]
    Mapping(String),
}

impl SpecError {
    /// Where the field at fault sits (`None`: a file's own error).
    pub fn at(&self) -> Option<&At> {
        match self {
            SpecError::NotApplicable { at, .. } | SpecError::Field { at, .. } => Some(at),
            SpecError::Mapping(_) => None,
        }
    }

    /// The rule broken, without where.
    pub fn rule(&self) -> String {
        match self {
            SpecError::NotApplicable { at, kind } => format!("applies to {}", applies(at.field, *kind)),
            SpecError::Field { rule, .. } | SpecError::Mapping(rule) => rule.clone(),
        }
    }

    /// The error, of rail `index`.
    pub fn in_rail(self, index: usize) -> SpecError {
        match self {
            SpecError::NotApplicable { at, kind } => SpecError::NotApplicable {
                at: at.in_rail(index),
                kind,
            },
            SpecError::Field { at, rule } => SpecError::Field {
                at: at.in_rail(index),
                rule,
            },
            other => other,
        }
    }
}

/// The rule of a field's [`Claim`]: which networks take `field` (the network is of
/// `kind`).
fn applies(field: Option<Field>, kind: KindName) -> String {
    let kinds = |list: &[KindName]| {
        let names: Vec<String> = list.iter().map(|k| format!("\"{}\"", k.name())).collect();
        match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    };
    match field.map(Field::claim) {
        Some(Claim::Kinds(list)) if list == [KindName::Ideal] => format!(
            "kind = {} (switched networks take link_bandwidth_mbs and link_latency_ns), not \"{}\"",
            kinds(list),
            kind.name()
        ),
        Some(Claim::Kinds(list)) => format!("kind = {}, not \"{}\"", kinds(list), kind.name()),
        Some(Claim::Switched) => {
            let switched: Vec<KindName> = KindName::ALL
                .iter()
                .copied()
                .filter(|&k| k != KindName::Ideal)
                .collect();
            format!("kind = {}, not \"{}\"", kinds(&switched), kind.name())
        }
        Some(Claim::Switches(list)) => {
            let names: Vec<String> = list
                .iter()
                .map(|s| format!("\"{}\"", super::names::value_name(s)))
                .collect();
            format!("switch = {} only", names.join(" or "))
        }
        Some(Claim::Whole) => "the whole network: set it at the top".into(),
        Some(Claim::Any) | None => "no network".into(),
    }
}

/// The error of `field` breaking `rule`.
pub fn field(field: Field, rule: impl Into<String>) -> SpecError {
    SpecError::Field {
        at: At::field(field),
        rule: rule.into(),
    }
}
