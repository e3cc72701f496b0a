//! What the trace and configuration readers share: errors that name the file and
//! line, and reading files through [`vesper_input`] (regular files only, within their
//! stated limits).

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

/// `error`, met reading `file` (`what` it is, for messages: "a .dim trace"), as an
/// error naming the file and, when it is about one, the line.
pub(crate) fn input_error(file: &str, what: &str, error: vesper_input::InputError) -> InputError {
    use vesper_input::InputError as E;
    let (line, message) = match error {
        E::LineTooLong { line, limit } => (
            line,
            format!("the line is longer than {limit} bytes, the longest line {what} may hold"),
        ),
        E::NotUtf8 { line } => (line, format!("not UTF-8 text; {what} is text")),
        E::Read { line, source } => (line, format!("cannot read it: {source}")),
        other => (0, other.to_string()),
    };
    InputError {
        file: file.to_string(),
        line: usize::try_from(line).unwrap_or(usize::MAX),
        message,
    }
}

/// The text of `path` (`what` it is, for messages), refused unread if it holds more
/// than `limit` bytes, and its name for errors.
pub(crate) fn read_text(path: &Path, limit: u64, what: &str) -> Result<(String, String), InputError> {
    let file = path.display().to_string();
    match vesper_input::read_text(path, limit) {
        Ok(text) => Ok((text, file)),
        Err(e) => Err(input_error(&file, what, e)),
    }
}

/// At most 60 characters of `text`, for messages.
pub(crate) fn clip(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// Files that are not regular, for tests: `/dev/zero`, a FIFO with no writer and a
/// directory, with what each is said to be; and the folder holding the last two, to
/// remove when done.
#[cfg(all(test, unix))]
pub(crate) fn special_files(name: &str) -> (std::path::PathBuf, Vec<(std::path::PathBuf, &'static str)>) {
    let dir = std::env::temp_dir().join(format!("vesper-special-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("folder")).expect("a folder");
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo");
    let files = vec![
        (Path::new("/dev/zero").to_path_buf(), "a character device"),
        (fifo, "a FIFO (named pipe)"),
        (dir.join("folder"), "a directory"),
    ];
    (dir, files)
}

/// A sparse file of `size` bytes (no disk taken), for tests of size limits.
#[cfg(test)]
pub(crate) fn sparse_file(path: &Path, size: u64) {
    std::fs::File::create(path)
        .and_then(|f| f.set_len(size))
        .expect("a sparse file");
}

/// What refusing a file that is not regular says.
#[cfg(test)]
pub(crate) fn not_regular(path: &Path, kind: &str) -> String {
    format!(
        "{}:0: it is {kind}, not a regular file; inputs are read from regular files only",
        path.display()
    )
}
