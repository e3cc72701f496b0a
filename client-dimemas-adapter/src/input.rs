//! What the trace and configuration readers share: errors that name the file and
//! line, and reading a whole file.

use std::path::Path;

/// What is wrong with an input file, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct InputError {
    /// the file (or the name given to a `parse` function)
    pub file: String,
    /// 1-based line number (0: the file as a whole)
    pub line: usize,
    /// what was expected and found
    pub message: String,
}

/// The text of `path`, and its name for errors.
pub(crate) fn read_text(path: &Path) -> Result<(String, String), InputError> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => Ok((text, file)),
        Err(e) => Err(InputError {
            file,
            line: 0,
            message: format!("cannot read it: {e}"),
        }),
    }
}

/// At most 60 characters of `text`, for messages.
pub(crate) fn clip(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}
