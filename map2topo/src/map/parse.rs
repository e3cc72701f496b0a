//! The map file grammar: one nom function per rule, the rule written above it. Lines are
//! parsed whole (`all_consuming`); a failure names the column and what was expected.
//!
//! Blanks are spaces and tabs; a trailing `\r` and trailing blanks are tolerated, and so
//! are leading blanks. Names are quoted and may hold any character but `"` (spaces
//! included). The token between the kind and the name (`-` in mapper output) may be any
//! field that does not start with a quote, or be left out.

use std::fmt;

use nom::{
    bytes::complete::{tag, take_till, take_while},
    combinator::all_consuming,
};
use vesper_input::syntax::{self, field, is_blank, unsigned};

use super::NodeKind;

/// What the grammar expected where a line failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// `s` or `h` at the start of a node block
    NodeHeader,
    /// `s` or `h` before a neighbour's name
    NodeKind,
    /// blanks between two fields
    Blank,
    /// a quoted name
    Name,
    /// the quote that closes a name
    ClosingQuote,
    /// the number of ports of a node
    PortCount,
    /// a port number
    Port,
    /// the end of the line
    EndOfLine,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Expected::NodeHeader => "a node header (s or h, a token, a quoted name, a port count)",
            Expected::NodeKind => "s or h",
            Expected::Blank => "a blank between fields",
            Expected::Name => "a quoted name",
            Expected::ClosingQuote => "a closing quote",
            Expected::PortCount => "a port count (0 to 4294967295)",
            Expected::Port => "a port number (0 to 4294967295)",
            Expected::EndOfLine => "the end of the line",
        })
    }
}

/// A node header: `<s|h> - "<name>" <nports>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header<'a> {
    pub(crate) kind: NodeKind,
    pub(crate) name: &'a str,
    pub(crate) ports: u32,
}

/// A port line: `<port> <s|h> - "<neighbour>" <neighbour port>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PortLine<'a> {
    pub(crate) port: u32,
    pub(crate) peer_kind: NodeKind,
    pub(crate) peer: &'a str,
    pub(crate) peer_port: u32,
}

type Res<'a, T> = syntax::Res<'a, T, Expected>;
type RuleError<'a> = syntax::RuleError<'a, Expected>;

impl syntax::Expectation for Expected {
    const END_OF_LINE: Self = Expected::EndOfLine;
    const BLANK: Self = Expected::Blank;
}

fn fail<T>(at: &str, expected: Expected) -> Res<'_, T> {
    syntax::fail(at, expected)
}

/// Where a line broke the grammar (the line number is added by the caller).
pub(crate) type SyntaxError = syntax::SyntaxError<Expected>;

/// Parses a node header line.
pub(crate) fn parse_header(line: &str) -> Result<Header<'_>, SyntaxError> {
    finish(line, all_consuming(header)(line))
}

/// Parses a port line.
pub(crate) fn parse_port_line(line: &str) -> Result<PortLine<'_>, SyntaxError> {
    finish(line, all_consuming(port_line)(line))
}

/// Splits an attribute line into its key (the first field) and its value (the rest,
/// without surrounding blanks; possibly empty). The line must not be blank.
pub(crate) fn parse_attribute(line: &str) -> (&str, &str) {
    let line = line.trim_matches(|c| is_blank(c) || c == '\r');
    match line.find(is_blank) {
        Some(end) => (&line[..end], line[end..].trim_matches(is_blank)),
        None => (line, ""),
    }
}

/// Whether a line starts (after blanks) with a digit: a port line.
pub(crate) fn starts_with_digit(line: &str) -> bool {
    line.trim_start_matches(is_blank)
        .starts_with(|c: char| c.is_ascii_digit())
}

/// Whether a line holds only blanks.
pub(crate) fn is_blank_line(line: &str) -> bool {
    line.chars().all(|c| is_blank(c) || c == '\r')
}

fn finish<T>(line: &str, result: Res<'_, T>) -> Result<T, SyntaxError> {
    syntax::finish(line, result)
}

// header = blank* kind blank [token blank] name blank count line_end
fn header(i: &str) -> Res<'_, Header<'_>> {
    let (i, _) = take_while(is_blank)(i)?;
    let (i, kind) = match kind(i) {
        Ok(ok) => ok,
        Err(_) => return fail(i, Expected::NodeHeader),
    };
    let (i, ()) = blank(i)?;
    let (i, name) = token_and_name(i)?;
    let (i, ()) = blank(i)?;
    let (i, ports) = unsigned(i, Expected::PortCount)?;
    let (i, ()) = line_end(i)?;
    Ok((i, Header { kind, name, ports }))
}

// port_line = blank* port blank kind blank [token blank] name blank port line_end
fn port_line(i: &str) -> Res<'_, PortLine<'_>> {
    let (i, _) = take_while(is_blank)(i)?;
    let (i, port) = unsigned(i, Expected::Port)?;
    let (i, ()) = blank(i)?;
    let (i, peer_kind) = kind(i)?;
    let (i, ()) = blank(i)?;
    let (i, peer) = token_and_name(i)?;
    let (i, ()) = blank(i)?;
    let (i, peer_port) = unsigned(i, Expected::Port)?;
    let (i, ()) = line_end(i)?;
    Ok((
        i,
        PortLine {
            port,
            peer_kind,
            peer,
            peer_port,
        },
    ))
}

// kind = ("s" | "S" | "h" | "H") &(blank)
fn kind(i: &str) -> Res<'_, NodeKind> {
    let (rest, text) = field(i, Expected::NodeKind)?;
    match text {
        "s" | "S" => Ok((rest, NodeKind::Switch)),
        "h" | "H" => Ok((rest, NodeKind::Host)),
        _ => fail(i, Expected::NodeKind),
    }
}

// token_and_name = [token blank] name
// token = field, not starting with a quote (any token stands in place of "-")
fn token_and_name(i: &str) -> Res<'_, &str> {
    if i.starts_with('"') {
        return name(i);
    }
    let (i, _) = field(i, Expected::Name)?;
    let (i, ()) = blank(i)?;
    name(i)
}

// name = '"' (any character but '"')* '"'
fn name(i: &str) -> Res<'_, &str> {
    let (rest, _) = match tag::<_, _, RuleError<'_>>("\"")(i) {
        Ok(ok) => ok,
        Err(_) => return fail(i, Expected::Name),
    };
    let (rest, text) = take_till(|c| c == '"')(rest)?;
    match tag::<_, _, RuleError<'_>>("\"")(rest) {
        Ok((rest, _)) => Ok((rest, text)),
        Err(_) => fail(rest, Expected::ClosingQuote),
    }
}

// blank, line_end, field and unsigned (a port, a count) are the rules every line grammar
// shares (`vesper_input::syntax`); the first two are typed here, for `?`.
fn blank(i: &str) -> Res<'_, ()> {
    syntax::blank(i)
}

fn line_end(i: &str) -> Res<'_, ()> {
    syntax::line_end(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_tolerate_tokens_blanks_and_spaces_in_names() {
        let expect = Header {
            kind: NodeKind::Switch,
            name: "line card 3",
            ports: 16,
        };
        for line in [
            "s - \"line card 3\" 16",
            "  S\tx  \"line card 3\"\t16  \r",
            "s \"line card 3\" 16",
            "s 0x12 \"line card 3\" 16",
        ] {
            assert_eq!(parse_header(line), Ok(expect.clone()), "{line:?}");
        }
        assert_eq!(
            parse_header("h - \"\" 0").map(|h| (h.kind, h.name)),
            Ok((NodeKind::Host, ""))
        );
    }

    #[test]
    fn port_lines_parse() {
        assert_eq!(
            parse_port_line("7 s - \"sw1\" 4"),
            Ok(PortLine {
                port: 7,
                peer_kind: NodeKind::Switch,
                peer: "sw1",
                peer_port: 4
            })
        );
        assert_eq!(parse_port_line("\t0 h \"node 0\" 0\r").map(|p| p.peer), Ok("node 0"));
    }

    #[test]
    fn failures_name_the_column_and_the_rule() {
        let err = |line: &str| {
            parse_port_line(line)
                .err()
                .map(|e| format!("{}:{}:{}", e.column, e.expected, e.found))
        };
        assert_eq!(err("7 x - \"sw1\" 4"), Some("3:s or h:x - \"sw1\" 4".to_string()));
        assert_eq!(err("7 s - \"sw1 4"), Some("13:a closing quote:end of line".to_string()));
        assert_eq!(
            err("7 s - \"sw1\""),
            Some("12:a blank between fields:end of line".to_string())
        );
        assert_eq!(err("7 s - \"sw1\" 4 5"), Some("15:the end of the line:5".to_string()));
        assert_eq!(
            err("99999999999 s - \"sw1\" 4"),
            Some("1:a port number (0 to 4294967295):99999999999 s - \"sw1\" 4".to_string())
        );
        assert_eq!(
            parse_header("x - \"a\" 1").err().map(|e| e.expected),
            Some(Expected::NodeHeader)
        );
    }

    #[test]
    fn attributes_split_key_and_value() {
        assert_eq!(parse_attribute("address 0060dd7f0001"), ("address", "0060dd7f0001"));
        assert_eq!(parse_attribute("  type  xbar 32 \r"), ("type", "xbar 32"));
        assert_eq!(parse_attribute("flag"), ("flag", ""));
    }
}
