//! The line parser: one nom function per grammar rule, the rule written above it.
//!
//! A line is a run of fields separated by blanks (spaces or tabs); a trailing `\r` and
//! trailing blanks are tolerated. Whole lines are parsed with `all_consuming`, and every
//! failure names the column and what was expected there.
//!
//! The real client prints times with `%.100lg`: the exact binary value in full
//! (`1234.5670000000000072759576141834259033203125`), and exponent forms below 1e-4
//! (`5.0000000000000002396e-05`). Both are read as the nearest `f64`.

use std::fmt;

use nom::{
    branch::alt,
    bytes::complete::{tag, take_while},
    combinator::{all_consuming, map, opt, value},
    sequence::preceded,
};
use vesper_input::syntax::{self, SyntaxError, field, is_blank, unsigned};

use crate::message::{
    ClientMessage, Completion, DataMessage, MAX_MESSAGE_BYTES, RendezvousRequest, ServerMessage, WireTime,
};
use crate::token::Token;

/// What the parser expected where it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// one of the client's verbs
    ClientVerb,
    /// one of the server's verbs
    ServerVerb,
    /// `OK_TO_SEND` or `READY_TO_RECV` after `PROTO`
    ProtoKind,
    /// blanks between two fields
    Blank,
    /// a finite, non-negative decimal time in nanoseconds
    Time,
    /// a node id (0 to 4294967295)
    NodeId,
    /// an application id (0 to 4294967295)
    AppId,
    /// an MPI tag (a signed 32-bit integer)
    Tag,
    /// a message size (0 to 2147483647 bytes)
    Size,
    /// a pointer token
    Token,
    /// the end of the line
    EndOfLine,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Expected::ClientVerb => "a verb (SEND, PROTO, STOP, END or FINISH)",
            Expected::ServerVerb => "COMPLETED SEND or END",
            Expected::ProtoKind => "OK_TO_SEND or READY_TO_RECV after PROTO",
            Expected::Blank => "a blank between fields",
            Expected::Time => "a finite non-negative time in nanoseconds",
            Expected::NodeId => "a node id (0 to 4294967295)",
            Expected::AppId => "an application id (0 to 4294967295)",
            Expected::Tag => "a tag (a signed 32-bit integer)",
            Expected::Size => "a size in bytes (0 to 2147483647)",
            Expected::Token => "a pointer token (0x… or (nil))",
            Expected::EndOfLine => "the end of the line",
        })
    }
}

impl syntax::Expectation for Expected {
    const END_OF_LINE: Self = Expected::EndOfLine;
    const BLANK: Self = Expected::Blank;
}

/// A line that does not follow the grammar: the column, what was expected there, and
/// the field found there (up to the next blank).
pub type ParseError = SyntaxError<Expected>;

type Res<'a, T> = syntax::Res<'a, T, Expected>;
type RuleError<'a> = syntax::RuleError<'a, Expected>;

fn fail<T>(at: &str, expected: Expected) -> Res<'_, T> {
    syntax::fail(at, expected)
}

/// Parses one line from a client (without its `\n`).
pub fn parse_client_line(line: &str) -> Result<ClientMessage, ParseError> {
    finish(line, all_consuming(client_line)(line))
}

/// Parses one line from a server (without its `\n`).
pub fn parse_server_line(line: &str) -> Result<ServerMessage, ParseError> {
    finish(line, all_consuming(server_line)(line))
}

// Not the files' `syntax::finish`: this one shows the field that failed, and written
// here it keeps the hot path of valid lines as it was (the shared one cost them 0.3%
// more instructions; this one, under 0.1%).
fn finish<T>(line: &str, result: Res<'_, T>) -> Result<T, ParseError> {
    match result {
        Ok((_, message)) => Ok(message),
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => {
            // The field that failed: up to the next blank.
            let field = e.at.find([' ', '\t']).filter(|&i| i > 0).unwrap_or(e.at.len());
            Err(ParseError {
                column: line.len() - e.at.len() + 1,
                expected: e.expected,
                found: syntax::shown(&e.at[..field]),
            })
        }
        Err(nom::Err::Incomplete(_)) => Err(ParseError {
            column: line.len() + 1,
            expected: Expected::EndOfLine,
            found: syntax::shown(""),
        }),
    }
}

// client_line = (send | proto | stop | end | finish) line_end
fn client_line(i: &str) -> Res<'_, ClientMessage> {
    let (i, _) = take_while(is_blank)(i)?;
    let (i, message) = match alt((
        send,
        proto,
        stop,
        value(ClientMessage::End, keyword("END")),
        value(ClientMessage::Finish, keyword("FINISH")),
    ))(i)
    {
        Ok(ok) => ok,
        Err(nom::Err::Error(e)) if e.at == i => return fail(i, Expected::ClientVerb),
        Err(e) => return Err(e),
    };
    let (i, ()) = line_end(i)?;
    Ok((i, message))
}

// server_line = (completed | end) line_end
fn server_line(i: &str) -> Res<'_, ServerMessage> {
    let (i, _) = take_while(is_blank)(i)?;
    let (i, message) = match alt((completed, value(ServerMessage::End, keyword("END"))))(i) {
        Ok(ok) => ok,
        Err(nom::Err::Error(e)) if e.at == i => return fail(i, Expected::ServerVerb),
        Err(e) => return Err(e),
    };
    let (i, ()) = line_end(i)?;
    Ok((i, message))
}

// send = "SEND" blank data_message
fn send(i: &str) -> Res<'_, ClientMessage> {
    let (i, _) = keyword("SEND")(i)?;
    let (i, message) = cut(preceded(blank, data_message))(i)?;
    Ok((i, ClientMessage::Send(message)))
}

// proto = "PROTO" blank ("OK_TO_SEND" blank rendezvous_request
//                       | "READY_TO_RECV" blank data_message)
fn proto(i: &str) -> Res<'_, ClientMessage> {
    let (i, _) = keyword("PROTO")(i)?;
    let (i, _) = cut(blank)(i)?;
    if let Ok((i, _)) = keyword("OK_TO_SEND")(i) {
        let (i, request) = cut(preceded(blank, rendezvous_request))(i)?;
        return Ok((i, ClientMessage::OkToSend(request)));
    }
    if let Ok((i, _)) = keyword("READY_TO_RECV")(i) {
        let (i, message) = cut(preceded(blank, data_message))(i)?;
        return Ok((i, ClientMessage::ReadyToRecv(message)));
    }
    Err(nom::Err::Failure(RuleError {
        at: i,
        expected: Expected::ProtoKind,
    }))
}

// stop = "STOP" blank time
fn stop(i: &str) -> Res<'_, ClientMessage> {
    let (i, _) = keyword("STOP")(i)?;
    map(cut(preceded(blank, time)), ClientMessage::Stop)(i)
}

// completed = "COMPLETED" blank "SEND" blank time blank node blank node blank size
//             blank token blank token blank node blank node [blank time]
fn completed(i: &str) -> Res<'_, ServerMessage> {
    let (i, _) = keyword("COMPLETED")(i)?;
    let (i, _) = cut(preceded(blank, keyword("SEND")))(i)?;
    let (i, arrival) = cut(preceded(blank, time))(i)?;
    let (i, src) = cut(preceded(blank, node))(i)?;
    let (i, dst) = cut(preceded(blank, node))(i)?;
    let (i, size) = cut(preceded(blank, size))(i)?;
    let (i, ev) = cut(preceded(blank, token))(i)?;
    let (i, ev_out) = cut(preceded(blank, token))(i)?;
    let (i, src_repeat) = cut(preceded(blank, node))(i)?;
    let (i, dst_repeat) = cut(preceded(blank, node))(i)?;
    let (i, phys_send_time) = opt(preceded(blank, time))(i)?;
    let completion = Completion {
        time: arrival,
        src,
        dst,
        size,
        ev,
        ev_out,
        src_repeat,
        dst_repeat,
        phys_send_time,
    };
    Ok((i, ServerMessage::Completed(completion)))
}

// data_message = time blank node blank node blank [tag blank] size blank token blank token
//                blank node blank node blank app blank app
// The tag is absent in the older client's layout; a token in the sixth field tells.
fn data_message(i: &str) -> Res<'_, DataMessage> {
    let (i, time) = time(i)?;
    let (i, src) = preceded(blank, node)(i)?;
    let (i, dst) = preceded(blank, node)(i)?;
    let (i, tag, size) = match tagged_size(i) {
        Ok((rest, (tag, size))) => (rest, Some(tag), size),
        Err(tagged) => match untagged_size(i) {
            Ok((rest, size)) => (rest, None, size),
            // Report the layout that got further; on a tie, the current (tagged) one.
            Err(untagged) => return Err(furthest(tagged, untagged)),
        },
    };
    let (i, ev) = preceded(blank, token)(i)?;
    let (i, ev_out) = preceded(blank, token)(i)?;
    let (i, src_repeat) = preceded(blank, node)(i)?;
    let (i, dst_repeat) = preceded(blank, node)(i)?;
    let (i, src_app) = preceded(blank, app)(i)?;
    let (i, dst_app) = preceded(blank, app)(i)?;
    let message = DataMessage {
        time,
        src,
        dst,
        tag,
        size,
        ev,
        ev_out,
        src_repeat,
        dst_repeat,
        src_app,
        dst_app,
    };
    Ok((i, message))
}

// tagged_size = blank tag blank size &(blank token)
fn tagged_size(i: &str) -> Res<'_, (i32, u32)> {
    let (i, tag) = preceded(blank, mpi_tag)(i)?;
    let (i, size) = preceded(blank, size)(i)?;
    // Only the tagged layout has a token right after the size.
    preceded(blank, token)(i)?;
    Ok((i, (tag, size)))
}

// untagged_size = blank size &(blank token)
fn untagged_size(i: &str) -> Res<'_, u32> {
    let (i, size) = preceded(blank, size)(i)?;
    preceded(blank, token)(i)?;
    Ok((i, size))
}

fn furthest<'a>(first: nom::Err<RuleError<'a>>, second: nom::Err<RuleError<'a>>) -> nom::Err<RuleError<'a>> {
    match (&first, &second) {
        (nom::Err::Error(a) | nom::Err::Failure(a), nom::Err::Error(b) | nom::Err::Failure(b))
            if b.at.len() < a.at.len() =>
        {
            second
        }
        _ => first,
    }
}

// rendezvous_request = time blank node blank node blank tag blank size blank app blank app
fn rendezvous_request(i: &str) -> Res<'_, RendezvousRequest> {
    let (i, time) = time(i)?;
    let (i, src) = preceded(blank, node)(i)?;
    let (i, dst) = preceded(blank, node)(i)?;
    let (i, tag) = preceded(blank, mpi_tag)(i)?;
    let (i, size) = preceded(blank, size)(i)?;
    let (i, src_app) = preceded(blank, app)(i)?;
    let (i, dst_app) = preceded(blank, app)(i)?;
    let request = RendezvousRequest {
        time,
        src,
        dst,
        tag,
        size,
        src_app,
        dst_app,
    };
    Ok((i, request))
}

// time = ["+"] digits ["." [digits]] [("e" | "E") ["+" | "-"] digits]   ; finite, not negative
//      | "." digits [exponent]
// ("-0" is read as zero: the client never prints it, but it is not earlier than zero.)
fn time(i: &str) -> Res<'_, WireTime> {
    let (rest, text) = field(i, Expected::Time)?;
    let is_decimal = text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && text.bytes().any(|b| b.is_ascii_digit());
    match text.parse::<f64>() {
        Ok(t) if is_decimal && t.is_finite() && t >= 0.0 => Ok((rest, WireTime(t.abs()))),
        _ => fail(i, Expected::Time),
    }
}

// node = digits            ; 0 ..= 4294967295
fn node(i: &str) -> Res<'_, u32> {
    unsigned(i, Expected::NodeId)
}

// app = digits             ; 0 ..= 4294967295
fn app(i: &str) -> Res<'_, u32> {
    unsigned(i, Expected::AppId)
}

// size = digits            ; 0 ..= 2147483647 (a C int on the client)
fn size(i: &str) -> Res<'_, u32> {
    let (rest, value) = unsigned(i, Expected::Size)?;
    if value > MAX_MESSAGE_BYTES {
        return fail(i, Expected::Size);
    }
    Ok((rest, value))
}

// tag = ["-" | "+"] digits  ; a C int
fn mpi_tag(i: &str) -> Res<'_, i32> {
    let (rest, text) = field(i, Expected::Tag)?;
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return fail(i, Expected::Tag);
    }
    match text.parse::<i32>() {
        Ok(tag) => Ok((rest, tag)),
        Err(_) => fail(i, Expected::Tag),
    }
}

// token = ("0x" | "0X") hexdigit{1,16} | "(nil)"
fn token(i: &str) -> Res<'_, Token> {
    let (rest, text) = field(i, Expected::Token)?;
    match Token::new(text) {
        Ok(token) => Ok((rest, token)),
        Err(_) => fail(i, Expected::Token),
    }
}

// keyword = the word itself, followed by a blank or the end of the line
fn keyword<'a>(word: &'static str) -> impl FnMut(&'a str) -> Res<'a, &'a str> {
    move |i: &'a str| {
        let (rest, matched) = tag(word)(i)?;
        match rest.chars().next() {
            None | Some(' ' | '\t' | '\r') => Ok((rest, matched)),
            Some(_) => fail(i, Expected::ClientVerb),
        }
    }
}

// blank, line_end, field and unsigned (digits as an unsigned 32-bit number) are the
// rules every line grammar shares (`vesper_input::syntax`); the first two are typed
// here, for `?`.
fn blank(i: &str) -> Res<'_, ()> {
    syntax::blank(i)
}

fn line_end(i: &str) -> Res<'_, ()> {
    syntax::line_end(i)
}

/// Turns a recoverable error into a failure, so `alt` stops trying other verbs once a
/// verb has been recognised and reports the real fault.
fn cut<'a, T>(mut parser: impl FnMut(&'a str) -> Res<'a, T>) -> impl FnMut(&'a str) -> Res<'a, T> {
    move |i| match parser(i) {
        Err(nom::Err::Error(e)) => Err(nom::Err::Failure(e)),
        other => other,
    }
}

/// Checks the parser's invariants on arbitrary bytes; the body of the fuzz target,
/// also run by the property tests so that ordinary `cargo test` exercises it.
///
/// Whatever the input, parsing must not panic, and anything that parses must print
/// to a line that parses back to the same message.
pub fn check_parser_invariants(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for line in text.split('\n') {
        if let Ok(message) = parse_client_line(line) {
            let printed = message.to_string();
            let again = parse_client_line(&printed);
            assert_eq!(again.as_ref(), Ok(&message), "client round trip of {printed:?}");
        }
        if let Ok(message) = parse_server_line(line) {
            let printed = message.to_string();
            let again = parse_server_line(&printed);
            assert_eq!(again.as_ref(), Ok(&message), "server round trip of {printed:?}");
        }
    }
}

#[cfg(test)]
mod tests;
