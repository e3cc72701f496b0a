//! The grammar of `ibnetdiscover` topology dumps and `ibroute` forwarding-table dumps:
//! one nom function per rule, the rule written above it; whole lines at a time.
//!
//! Blanks are spaces and tabs; trailing blanks and `\r` are tolerated. In topology
//! dumps everything after a `#` outside quotes is a comment, scanned only for the
//! quoted node description and `lid <n>` fields.

use std::fmt;

use nom::{
    bytes::complete::{tag, take_till, take_till1, take_while, take_while1},
    combinator::all_consuming,
};
use vesper_input::syntax::{self, field, is_blank, unsigned};

/// What the grammar expected where a line failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// a node header, a link line or a `key=value` line
    Line,
    /// a port count
    PortCount,
    /// a quoted node id
    Id,
    /// the quote that closes an id or a description
    ClosingQuote,
    /// a port number in brackets
    Port,
    /// `]`
    ClosingBracket,
    /// a GUID in hex
    Guid,
    /// `)`
    ClosingParen,
    /// blanks between two fields
    Blank,
    /// a number (decimal)
    Number,
    /// a LID in hex (`0x…`)
    HexLid,
    /// a forwarding-table line: a `Unicast lids` header, an entry or a trailer
    LftLine,
    /// a keyword of the format
    Keyword(&'static str),
    /// a comment (`#`) or the end of the line
    EndOfLine,
    /// the number of a switch's external port label (`[ext 3]`)
    ExtPort,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Line => {
                f.write_str("a node header (Switch, Ca or Rt), a link line ([port] \"id\"[port]) or key=value")
            }
            Expected::PortCount => f.write_str("a port count"),
            Expected::Id => f.write_str("a quoted node id"),
            Expected::ClosingQuote => f.write_str("a closing quote"),
            Expected::Port => f.write_str("a port number in brackets ([1])"),
            Expected::ClosingBracket => f.write_str("]"),
            Expected::Guid => f.write_str("a GUID in hex"),
            Expected::ClosingParen => f.write_str(")"),
            Expected::Blank => f.write_str("a blank between fields"),
            Expected::Number => f.write_str("a decimal number"),
            Expected::HexLid => f.write_str("a LID in hex (0x…)"),
            Expected::LftLine => {
                f.write_str("a forwarding-table line (Unicast lids … header, 0x<lid> <port> entry, or lids dumped)")
            }
            Expected::Keyword(word) => write!(f, "{word:?}"),
            Expected::EndOfLine => f.write_str("a comment (#) or the end of the line"),
            Expected::ExtPort => f.write_str("an external port number ([ext 3])"),
        }
    }
}

/// Kinds of node header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeaderKind {
    Switch,
    Ca,
}

/// What the comment of a line says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Comment<'a> {
    /// the first quoted text: a node description
    pub(crate) description: Option<&'a str>,
    /// `lid <n>` before the description (a CA port's own LID)
    pub(crate) lid_before: Option<u32>,
    /// `lid <n>` after the description (the node described; the last one counts)
    pub(crate) lid_after: Option<u32>,
}

/// A line of a topology dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TopoLine<'a> {
    /// `Switch <n> "<id>" # "<description>" … lid <n>` or `Ca <n> "<id>" # "<description>"`
    Header {
        kind: HeaderKind,
        ports: u32,
        id: &'a str,
        comment: Comment<'a>,
    },
    /// `[<port>](<guid>)? "<remote id>"[<remote port>](<guid>)? # …`
    Link {
        port: u32,
        remote: &'a str,
        remote_port: u32,
        comment: Comment<'a>,
    },
    /// `key=value`
    KeyValue { key: &'a str, value: &'a str },
}

/// A line of a forwarding-table dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LftLine<'a> {
    /// `Unicast lids [0x0-0x8] of switch Lid 2 guid 0x… (<description>):`
    Header { lid: u32, guid: u64, description: &'a str },
    /// `0x0001 002 : (…)`
    Entry { lid: u32, port: u32 },
    /// column titles, the `… lids dumped` trailer
    Other,
    /// `Multicast mlids …`: a section that is skipped
    Multicast,
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

/// Parses one line of a topology dump that is neither blank nor a `#` comment.
pub(crate) fn parse_topo_line(line: &str) -> Result<TopoLine<'_>, SyntaxError> {
    finish(line, all_consuming(topo_line)(line))
}

/// Parses one line of a forwarding-table dump that is not blank.
pub(crate) fn parse_lft_line(line: &str) -> Result<LftLine<'_>, SyntaxError> {
    finish(line, all_consuming(lft_line)(line))
}

fn finish<T>(line: &str, result: Res<'_, T>) -> Result<T, SyntaxError> {
    syntax::finish(line, result)
}

// topo_line = blank* (header | link | key_value)
fn topo_line(i: &str) -> Res<'_, TopoLine<'_>> {
    let (i, _) = take_while(is_blank)(i)?;
    if i.starts_with('[') {
        return link(i);
    }
    if let Ok((rest, word)) = take_while1::<_, _, RuleError<'_>>(|c: char| c.is_ascii_alphanumeric() || c == '_')(i) {
        match word {
            "Switch" | "Ca" | "Rt" if rest.starts_with(is_blank) => return header(i),
            _ if rest.starts_with('=') => return key_value(i),
            _ => {}
        }
    }
    fail(i, Expected::Line)
}

// header = ("Switch" | "Ca" | "Rt") blank count blank id line_end
// A router (Rt) forwards packets as a switch does: it is read as one.
fn header(i: &str) -> Res<'_, TopoLine<'_>> {
    let (i, word) = take_while1(|c: char| c.is_ascii_alphanumeric())(i)?;
    let kind = if word == "Ca" {
        HeaderKind::Ca
    } else {
        HeaderKind::Switch
    };
    let (i, ()) = blank(i)?;
    let (i, ports) = unsigned(i, Expected::PortCount)?;
    let (i, ()) = blank(i)?;
    let (i, id) = quoted(i, Expected::Id)?;
    let (i, comment) = line_end(i)?;
    Ok((
        i,
        TopoLine::Header {
            kind,
            ports,
            id,
            comment,
        },
    ))
}

// link = port [ext] [guid] blank* id port [ext] [guid] line_end
fn link(i: &str) -> Res<'_, TopoLine<'_>> {
    let (i, port) = bracketed_port(i)?;
    let (i, ()) = optional_ext(i)?;
    let (i, ()) = optional_guid(i)?;
    let (i, _) = take_while(is_blank)(i)?;
    let (i, remote) = quoted(i, Expected::Id)?;
    let (i, remote_port) = bracketed_port(i)?;
    let (i, ()) = optional_ext(i)?;
    let (i, ()) = optional_guid(i)?;
    let (i, comment) = line_end(i)?;
    Ok((
        i,
        TopoLine::Link {
            port,
            remote,
            remote_port,
            comment,
        },
    ))
}

// key_value = word "=" (any character)*
fn key_value(i: &str) -> Res<'_, TopoLine<'_>> {
    let (i, key) = take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_')(i)?;
    let (i, _) = tag("=")(i)?;
    let value = i.trim_end_matches(|c| is_blank(c) || c == '\r');
    Ok(("", TopoLine::KeyValue { key, value }))
}

// port = "[" digits "]"
fn bracketed_port(i: &str) -> Res<'_, u32> {
    let Ok((i, _)) = tag::<_, _, RuleError<'_>>("[")(i) else {
        return fail(i, Expected::Port);
    };
    let (i, port) = digits(i, Expected::Port)?;
    match tag::<_, _, RuleError<'_>>("]")(i) {
        Ok((i, _)) => Ok((i, port)),
        Err(_) => fail(i, Expected::ClosingBracket),
    }
}

// ext = "[ext" blank+ digits "]"     ; a switch's external port label, not kept
fn optional_ext(i: &str) -> Res<'_, ()> {
    let Ok((i, _)) = tag::<_, _, RuleError<'_>>("[ext")(i) else {
        return Ok((i, ()));
    };
    let (i, _) = take_while(is_blank)(i)?;
    let (i, _) = digits(i, Expected::ExtPort)?;
    match tag::<_, _, RuleError<'_>>("]")(i) {
        Ok((i, _)) => Ok((i, ())),
        Err(_) => fail(i, Expected::ClosingBracket),
    }
}

// guid = "(" hexdigit+ ")"     ; a port GUID, not kept
fn optional_guid(i: &str) -> Res<'_, ()> {
    let Ok((i, _)) = tag::<_, _, RuleError<'_>>("(")(i) else {
        return Ok((i, ()));
    };
    let (i, _) = match take_while1::<_, _, RuleError<'_>>(|c: char| c.is_ascii_hexdigit())(i) {
        Ok(ok) => ok,
        Err(_) => return fail(i, Expected::Guid),
    };
    match tag::<_, _, RuleError<'_>>(")")(i) {
        Ok((i, _)) => Ok((i, ())),
        Err(_) => fail(i, Expected::ClosingParen),
    }
}

// quoted = '"' (any character but '"')* '"'
fn quoted(i: &str, expected: Expected) -> Res<'_, &str> {
    let Ok((rest, _)) = tag::<_, _, RuleError<'_>>("\"")(i) else {
        return fail(i, expected);
    };
    let (rest, text) = take_till(|c| c == '"')(rest)?;
    match tag::<_, _, RuleError<'_>>("\"")(rest) {
        Ok((rest, _)) => Ok((rest, text)),
        Err(_) => fail(rest, Expected::ClosingQuote),
    }
}

// line_end = blank* ["#" comment] ["\r"]
fn line_end(i: &str) -> Res<'_, Comment<'_>> {
    let (i, _) = take_while(|c| is_blank(c) || c == '\r')(i)?;
    if i.is_empty() {
        return Ok((i, Comment::default()));
    }
    let Some(text) = i.strip_prefix('#') else {
        return fail(i, Expected::EndOfLine);
    };
    comment(text)
}

// comment = (blank | quoted | "lid" blank digits | field)*
fn comment(mut i: &str) -> Res<'_, Comment<'_>> {
    let mut c = Comment::default();
    loop {
        (i, _) = take_while(|ch| is_blank(ch) || ch == '\r')(i)?;
        if i.is_empty() {
            return Ok((i, c));
        }
        if i.starts_with('"') {
            let (rest, text) = quoted(i, Expected::ClosingQuote)?;
            c.description.get_or_insert(text);
            i = rest;
            continue;
        }
        let (rest, word) = field(i, Expected::EndOfLine)?;
        i = rest;
        if word == "lid"
            && let Ok((rest, lid)) = blank(i).and_then(|(i, ())| unsigned(i, Expected::Number))
        {
            i = rest;
            if c.description.is_none() {
                c.lid_before = Some(lid);
            } else {
                c.lid_after = Some(lid);
            }
        }
    }
}

// lft_line = blank* (lft_header | entry | multicast | other)
// other = "Lid" … | "Port" … | digits blank ["valid" blank] "lids dumped" …
fn lft_line(i: &str) -> Res<'_, LftLine<'_>> {
    let (i, _) = take_while(is_blank)(i)?;
    if i.starts_with("Unicast") {
        return lft_header(i);
    }
    if i.starts_with("Multicast") {
        return Ok(("", LftLine::Multicast));
    }
    if i.starts_with("0x") || i.starts_with("0X") {
        return entry(i);
    }
    if i.starts_with("Lid") || i.starts_with("Port") || i.contains("lids dumped") {
        return Ok(("", LftLine::Other));
    }
    fail(i, Expected::LftLine)
}

// lft_header = "Unicast" blank "lids" blank "[" hex "-" hex "]" blank "of" blank "switch"
//              blank "Lid" blank digits blank "guid" blank hex blank "(" description "):"
fn lft_header(i: &str) -> Res<'_, LftLine<'_>> {
    let (i, _) = keyword("Unicast")(i)?;
    let (i, _) = keyword("lids")(i)?;
    // the range shown: [0x0-0x…]
    let (i, _) = take_till1(is_blank)(i)?;
    let (i, ()) = blank(i)?;
    let (i, _) = keyword("of")(i)?;
    let (i, _) = keyword("switch")(i)?;
    let (i, _) = keyword("Lid")(i)?;
    let (i, lid) = unsigned(i, Expected::Number)?;
    let (i, ()) = blank(i)?;
    let (i, _) = keyword("guid")(i)?;
    let (i, guid) = hex(i, Expected::Guid)?;
    let (i, _) = take_while(is_blank)(i)?;
    let rest = i.trim_end_matches(|c| is_blank(c) || c == '\r');
    let description = match rest.strip_prefix('(').and_then(|r| r.strip_suffix("):")) {
        Some(d) => d,
        None if rest.is_empty() || rest == ":" => "",
        None => return fail(i, Expected::Keyword("(<description>):")),
    };
    Ok(("", LftLine::Header { lid, guid, description }))
}

// entry = hex blank digits [blank ":" (any character)*]
fn entry(i: &str) -> Res<'_, LftLine<'_>> {
    let start = i;
    let (i, lid) = hex(i, Expected::HexLid)?;
    let Ok(lid) = u32::try_from(lid) else {
        return fail(start, Expected::HexLid);
    };
    let (i, ()) = blank(i)?;
    let (i, port) = unsigned(i, Expected::Number)?;
    let (i, _) = take_while(|c| is_blank(c) || c == '\r')(i)?;
    if !i.is_empty() && !i.starts_with(':') {
        return fail(i, Expected::Keyword(":"));
    }
    Ok(("", LftLine::Entry { lid, port }))
}

// keyword = the word itself, then blank
fn keyword<'a>(word: &'static str) -> impl FnMut(&'a str) -> Res<'a, ()> {
    move |i: &'a str| {
        let Ok((rest, _)) = tag::<_, _, RuleError<'_>>(word)(i) else {
            return fail(i, Expected::Keyword(word));
        };
        blank(rest)
    }
}

// hex = ("0x" | "0X") hexdigit{1,16}
fn hex(i: &str, expected: Expected) -> Res<'_, u64> {
    let (rest, text) = field_until(i, expected, |c| is_blank(c) || c == '\r' || c == ')')?;
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or("");
    match u64::from_str_radix(digits, 16) {
        Ok(value) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_hexdigit()) => Ok((rest, value)),
        _ => fail(i, expected),
    }
}

// digits = ("0" … "9")+, up to the next non-digit     ; 0 ..= 4294967295
fn digits(i: &str, expected: Expected) -> Res<'_, u32> {
    let Ok((rest, text)) = take_while1::<_, _, RuleError<'_>>(|c: char| c.is_ascii_digit())(i) else {
        return fail(i, expected);
    };
    match text.parse::<u32>() {
        Ok(value) => Ok((rest, value)),
        Err(_) => fail(i, expected),
    }
}

// field_until = (any character but those `end` accepts)+
fn field_until(i: &str, expected: Expected, end: impl Fn(char) -> bool) -> Res<'_, &str> {
    match take_till1::<_, _, RuleError<'_>>(end)(i) {
        Ok(ok) => Ok(ok),
        Err(_) => fail(i, expected),
    }
}

// blank, field and unsigned (a whole field of digits) are the rules every line grammar
// shares (`vesper_input::syntax`); blank is typed here, for `?`.
fn blank(i: &str) -> Res<'_, ()> {
    syntax::blank(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_headers_links_and_keys() {
        assert_eq!(
            parse_topo_line("Switch\t8 \"S-003048ffff95fd1a\"\t\t# \"sw1\" base port 0 lid 1 lmc 0"),
            Ok(TopoLine::Header {
                kind: HeaderKind::Switch,
                ports: 8,
                id: "S-003048ffff95fd1a",
                comment: Comment {
                    description: Some("sw1"),
                    lid_before: None,
                    lid_after: Some(1),
                },
            })
        );
        assert_eq!(
            parse_topo_line("[1](3048ffff95d809) \t\"S-003048ffff95fd1a\"[5]\t\t# lid 42 lmc 0 \"sw1\" lid 1 4xSDR"),
            Ok(TopoLine::Link {
                port: 1,
                remote: "S-003048ffff95fd1a",
                remote_port: 5,
                comment: Comment {
                    description: Some("sw1"),
                    lid_before: Some(42),
                    lid_after: Some(1),
                },
            })
        );
        assert_eq!(
            parse_topo_line("[2]\t\"H-003048ffff95c8aa\"[1](3048ffff95c8ab) \t\t# \"n102-1\" lid 27 4xSDR"),
            Ok(TopoLine::Link {
                port: 2,
                remote: "H-003048ffff95c8aa",
                remote_port: 1,
                comment: Comment {
                    description: Some("n102-1"),
                    lid_before: None,
                    lid_after: Some(27),
                },
            })
        );
        assert_eq!(
            parse_topo_line("switchguid=0x3048ffff95fd1a(3048ffff95fd1a)\r"),
            Ok(TopoLine::KeyValue {
                key: "switchguid",
                value: "0x3048ffff95fd1a(3048ffff95fd1a)"
            })
        );
        assert_eq!(
            parse_topo_line("[3] \"S-1\"[4]").map(|l| matches!(l, TopoLine::Link { .. })),
            Ok(true)
        );
    }

    #[test]
    fn reads_forwarding_tables() {
        assert_eq!(
            parse_lft_line(
                "Unicast lids [0x0-0x8] of switch Lid 2 guid 0x0002c90200232118 (MT47396 Infiniscale-III (rev A)):"
            ),
            Ok(LftLine::Header {
                lid: 2,
                guid: 0x0002c90200232118,
                description: "MT47396 Infiniscale-III (rev A)"
            })
        );
        assert_eq!(
            parse_lft_line("0x0001 002 : (Channel Adapter portguid 0x0002c90200219a91: 'localhost HCA-1')"),
            Ok(LftLine::Entry { lid: 1, port: 2 })
        );
        assert_eq!(parse_lft_line("0x000a 017"), Ok(LftLine::Entry { lid: 10, port: 17 }));
        assert_eq!(parse_lft_line("  Lid  Out   Destination"), Ok(LftLine::Other));
        assert_eq!(parse_lft_line("8 valid lids dumped "), Ok(LftLine::Other));
    }

    #[test]
    fn failures_name_the_column() {
        let err = |line: &str| {
            parse_topo_line(line)
                .err()
                .map(|e| format!("{}:{}:{}", e.column, e.expected, e.found))
        };
        assert_eq!(err("[1 \"S-1\"[4]"), Some("3:]: \"S-1\"[4]".to_string()));
        assert_eq!(
            err("[1] \"S-1\"[4] x"),
            Some("14:a comment (#) or the end of the line:x".to_string())
        );
        assert_eq!(err("Switch x \"S-1\""), Some("8:a port count:x \"S-1\"".to_string()));
        assert_eq!(
            err("Router 2 \"R-1\""),
            Some(
                "1:a node header (Switch, Ca or Rt), a link line ([port] \"id\"[port]) or key=value:Router 2 \
                 \"R-1\""
                    .to_string()
            )
        );
        assert_eq!(err("[1][ext 3]\t\"S-1\"[4][ext 12] # x"), None);
        assert_eq!(
            err("[1][ext]\t\"S-1\"[4]"),
            Some("8:an external port number ([ext 3]):]\t\"S-1\"[4]".to_string())
        );
    }
}
