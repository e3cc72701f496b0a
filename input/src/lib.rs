//! Reading input files so that no file can exhaust the machine or hang a reader.
//!
//! Every input of vesper (network files, maps, route files, task mappings, patterns,
//! Dimemas traces and configurations) is read through this crate:
//! - only regular files are read: `/dev/zero`, a FIFO with no writer, a directory or a
//!   socket are refused by name, and opening never blocks (a FIFO is opened without
//!   waiting for a writer, then refused);
//! - a file read whole is refused when it is larger than its stated limit, before any
//!   of it is read;
//! - a file read a line at a time refuses a line longer than its stated limit, having
//!   held at most that much of it.
//!
//! Errors carry no path: each reader names its file in its own error type.
//!
//! A number read from an input is taken exactly as written by [`decimal`]. [`syntax`]
//! holds what the line grammars of the files and of the wire share.

mod number;
pub mod syntax;

pub use number::decimal;

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::Path;

/// One mebibyte.
pub const MIB: u64 = 1 << 20;

/// Why an input file cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// it cannot be opened or examined
    #[error("cannot read it: {0}")]
    Open(#[source] io::Error),
    /// it is not a regular file
    #[error("it is {0}, not a regular file; inputs are read from regular files only")]
    NotRegular(&'static str),
    /// it is larger than a file of its kind may be
    #[error("it holds {} bytes, more than the {} bytes ({}) such a file may hold", size, limit, human(*limit))]
    TooLarge {
        /// its size \[bytes\]
        size: u64,
        /// the limit \[bytes\]
        limit: u64,
    },
    /// a line is longer than a line of its kind may be
    #[error("line {line} is longer than {limit} bytes ({}), the longest such a file may hold", human(*limit as u64))]
    LineTooLong {
        /// its number, from 1
        line: u64,
        /// the limit \[bytes\]
        limit: usize,
    },
    /// a line is not UTF-8 text
    #[error("line {line} is not UTF-8 text")]
    NotUtf8 {
        /// its number, from 1
        line: u64,
    },
    /// reading failed part way
    #[error("line {line}: cannot read it: {source}")]
    Read {
        /// the line being read, from 1
        line: u64,
        /// why
        #[source]
        source: io::Error,
    },
}

impl InputError {
    /// The line the error is about (from 1), if it is about one.
    pub fn line(&self) -> Option<u64> {
        match self {
            InputError::LineTooLong { line, .. } | InputError::NotUtf8 { line } | InputError::Read { line, .. } => {
                Some(*line)
            }
            _ => None,
        }
    }
}

/// `1 MiB`, `4 GiB`, or bytes.
fn human(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    format!("{bytes} bytes")
}

/// What a file that is not regular is, for messages.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

/// Opens `path` for reading if it is a regular file; never waits for a FIFO's writer.
pub fn open(path: &Path) -> Result<File, InputError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        // Opening a FIFO for reading waits for a writer unless non-blocking; a regular
        // file's reads ignore the flag.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(InputError::Open)?;
    let meta = file.metadata().map_err(InputError::Open)?;
    if !meta.is_file() {
        return Err(InputError::NotRegular(kind_of(&meta)));
    }
    Ok(file)
}

/// Creates (or truncates) `path` for writing, as `File::create` does, but never waits
/// for a FIFO's reader: a named pipe that no one reads is refused ("a FIFO (named pipe)
/// with no reader"), one with its reader there (`/dev/stdout` piped into another
/// program, say) is written to.
pub fn create(path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
        if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
            // Opening a FIFO for writing waits for a reader unless non-blocking, which
            // fails at once (ENXIO) when there is none. With the reader there, the
            // blocking open that follows returns at once too.
            let probe = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(path)
                .map_err(|e| match e.raw_os_error() {
                    Some(libc::ENXIO) => io::Error::other("a FIFO (named pipe) with no reader"),
                    _ => e,
                })?;
            let file = std::fs::OpenOptions::new().write(true).open(path)?;
            drop(probe);
            return Ok(file);
        }
    }
    File::create(path)
}

/// Writes `bytes` to `path` as `std::fs::write` does, through [`create`]: never waits
/// for a FIFO's reader.
pub fn write(path: &Path, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    use std::io::Write as _;
    create(path)?.write_all(bytes.as_ref())
}

/// The bytes of the regular file `path`, refused unread if it holds more than `limit`.
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let file = open(path)?;
    let size = file.metadata().map_err(InputError::Open)?.len();
    if size > limit {
        return Err(InputError::TooLarge { size, limit });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // The file may grow while it is read: never past the limit.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Read { line: 1, source })?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// The text of the regular file `path`, refused unread if it holds more than `limit`
/// bytes; text that is not UTF-8 is refused naming its first such line.
pub fn read_text(path: &Path, limit: u64) -> Result<String, InputError> {
    String::from_utf8(read_bytes(path, limit)?).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        InputError::NotUtf8 {
            line: good.iter().filter(|&&b| b == b'\n').count() as u64 + 1,
        }
    })
}

/// A file's lines, one at a time, none longer than a limit.
#[derive(Debug)]
pub struct Lines<R> {
    reader: R,
    max_line: usize,
    number: u64,
    bytes: Vec<u8>,
}

impl Lines<io::BufReader<File>> {
    /// The lines of the regular file `path`, none longer than `max_line` bytes.
    pub fn open(path: &Path, max_line: usize) -> Result<Self, InputError> {
        Ok(Lines::new(io::BufReader::new(open(path)?), max_line))
    }
}

impl<R: BufRead> Lines<R> {
    /// The lines of `reader`, none longer than `max_line` bytes (line end excluded).
    pub fn new(reader: R, max_line: usize) -> Self {
        Lines {
            reader,
            max_line,
            number: 0,
            bytes: Vec::new(),
        }
    }

    /// The number of the last line read (from 1; 0 before the first).
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The reader, to read on by other means.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// Reads the next line into `line` (cleared first), its line end (`\n`, if any)
    /// included as [`BufRead::read_line`] does; returns the bytes consumed, 0 at the
    /// end. A line longer than the limit is refused having held at most the limit.
    pub fn read_line(&mut self, line: &mut String) -> Result<usize, InputError> {
        line.clear();
        self.bytes.clear();
        let number = self.number + 1;
        let mut consumed = 0;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => return Err(InputError::Read { line: number, source }),
            };
            if available.is_empty() {
                break;
            }
            let (take, done) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            let content = self.bytes.len() + take - usize::from(done);
            if content > self.max_line {
                return Err(InputError::LineTooLong {
                    line: number,
                    limit: self.max_line,
                });
            }
            self.bytes.extend_from_slice(&available[..take]);
            self.reader.consume(take);
            consumed += take;
            if done {
                break;
            }
        }
        if consumed == 0 {
            return Ok(0);
        }
        self.number = number;
        match std::str::from_utf8(&self.bytes) {
            Ok(text) => line.push_str(text),
            Err(_) => return Err(InputError::NotUtf8 { line: number }),
        }
        Ok(consumed)
    }

    /// The next line without its line end (`\n` or `\r\n`), or `None` at the end.
    pub fn next_trimmed(&mut self, line: &mut String) -> Result<Option<()>, InputError> {
        if self.read_line(line)? == 0 {
            return Ok(None);
        }
        if line.ends_with('\n') {
            line.pop();
            if line.ends_with('\r') {
                line.pop();
            }
        }
        Ok(Some(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines read, and what stopped the reading early (its text), if anything.
    fn lines(text: &[u8], max: usize) -> (Vec<String>, Option<String>) {
        let mut reader = Lines::new(text, max);
        let mut out = Vec::new();
        let mut line = String::new();
        loop {
            match reader.next_trimmed(&mut line) {
                Ok(Some(())) => out.push(line.clone()),
                Ok(None) => return (out, None),
                Err(e) => return (out, Some(e.to_string())),
            }
        }
    }

    #[test]
    fn lines_are_read_as_str_lines_does() {
        let text = "a\r\nbb\n\nccc";
        let want: Vec<String> = text.lines().map(str::to_string).collect();
        assert_eq!(lines(text.as_bytes(), 3), (want, None));
    }

    #[test]
    fn a_long_line_is_refused_by_number() {
        let (read, error) = lines(b"abc\nabcd\n", 3);
        assert_eq!(read, ["abc"]);
        assert_eq!(
            error.as_deref(),
            Some("line 2 is longer than 3 bytes (3 bytes), the longest such a file may hold")
        );
        // A line of exactly the limit, its newline not counted, is read.
        assert_eq!(lines(b"abc", 3), (vec!["abc".to_string()], None));
    }

    #[test]
    fn endless_bytes_stop_at_the_limit() {
        let zeros = io::BufReader::with_capacity(16, io::repeat(0));
        let mut reader = Lines::new(zeros, 1000);
        let mut line = String::new();
        assert!(matches!(
            reader.read_line(&mut line),
            Err(InputError::LineTooLong { line: 1, limit: 1000 })
        ));
        assert!(reader.bytes.capacity() <= 2048);
    }

    #[test]
    fn bytes_that_are_not_utf8_name_their_line() {
        assert_eq!(lines(b"ok\n\xff\n", 10).1.as_deref(), Some("line 2 is not UTF-8 text"));
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_refused_without_blocking() {
        let e = read_text(Path::new("/dev/zero"), MIB).expect_err("a device");
        assert_eq!(
            e.to_string(),
            "it is a character device, not a regular file; inputs are read from regular files only"
        );
        let dir = std::env::temp_dir().join(format!("vesper-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        // No writer: opening must not wait for one.
        let e = open(&fifo).expect_err("a FIFO");
        assert!(e.to_string().starts_with("it is a FIFO (named pipe)"), "{e}");
        let e = open(&dir).expect_err("a directory");
        assert!(e.to_string().starts_with("it is a directory"), "{e}");
        std::fs::remove_dir_all(&dir).expect("cleaned");
    }

    #[test]
    fn a_file_over_its_limit_is_refused_unread() {
        let path = std::env::temp_dir().join(format!("vesper-input-big-{}", std::process::id()));
        std::fs::write(&path, vec![b'x'; 2048]).expect("written");
        let e = read_text(&path, 1024).expect_err("too large");
        assert_eq!(
            e.to_string(),
            "it holds 2048 bytes, more than the 1024 bytes (1 KiB) such a file may hold"
        );
        assert_eq!(read_text(&path, 2048).expect("fits").len(), 2048);
        std::fs::remove_file(&path).expect("cleaned");
    }
}
