//! The shape every file error of map2topo takes: the file, the line, and the rule broken
//! there (a map's, a dump's, a pattern's).

use std::fmt;

/// A file that breaks a rule: the file, the line, and the rule; written
/// `file:line: rule`, or `file: rule` for the file as a whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct FileError<K> {
    /// the file's name
    pub file: String,
    /// 1-based line (0: the file as a whole)
    pub line: usize,
    /// the rule broken (boxed: errors stay small in `Result`s)
    pub kind: Box<K>,
}

impl<K> FileError<K> {
    /// `file` breaks `kind` at `line` (0: as a whole).
    pub fn new(file: &str, line: usize, kind: K) -> FileError<K> {
        FileError {
            file: file.to_string(),
            line,
            kind: Box::new(kind),
        }
    }
}

impl<K: fmt::Display> fmt::Display for FileError<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.kind)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.kind)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_line_unless_the_whole_file_is_at_fault() {
        assert_eq!(FileError::new("a.map", 3, "a rule").to_string(), "a.map:3: a rule");
        assert_eq!(FileError::new("a.map", 0, "a rule").to_string(), "a.map: a rule");
    }
}
