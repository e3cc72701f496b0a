//! A line codec for tokio: frames bytes into lines with a length limit and parses them.
//!
//! Framing separates "need more bytes" (the decoder returns `None`) from "bad bytes"
//! (an item carrying a [`LineError`]); a bad line never ends the stream. A line longer
//! than the limit is discarded up to its newline and reported once, so a peer cannot
//! make the codec buffer without bound.

use bytes::{Buf, BufMut, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use crate::message::{ClientMessage, ServerMessage};
use crate::parse::{ParseError, parse_client_line, parse_server_line};

/// A line that could not be turned into a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// the line broke the grammar
    #[error("{0}")]
    Parse(#[from] ParseError),
    /// the line was longer than the limit; it was discarded
    #[error("line longer than {limit} bytes, discarded")]
    TooLong {
        /// the limit in force \[bytes\]
        limit: usize,
    },
    /// the line was not UTF-8 text
    #[error("line is not ASCII text")]
    NotText,
}

/// One decoded line: its 1-based number on the connection and what it held.
#[derive(Debug, Clone, PartialEq)]
pub struct Line<T> {
    /// 1-based line number on this connection
    pub number: u64,
    /// the message, or why there is none
    pub message: Result<T, LineError>,
}

/// Decodes newline-terminated lines with a maximum length and parses each with `P`.
#[derive(Debug)]
pub struct LineCodec<P> {
    max_length: usize,
    lines: u64,
    /// where to resume searching for `\n` in the buffer
    scanned: usize,
    /// discarding the rest of an overlong line
    discarding: bool,
    parser: P,
}

/// Parses one line into a message type.
pub trait LineParser {
    /// the message type
    type Message;
    /// parses a line without its newline
    fn parse(&self, line: &str) -> Result<Self::Message, ParseError>;
}

/// Parses lines a client sends (the server's side).
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientLines;

/// Parses lines a server sends (a client's side).
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerLines;

impl LineParser for ClientLines {
    type Message = ClientMessage;
    fn parse(&self, line: &str) -> Result<ClientMessage, ParseError> {
        parse_client_line(line)
    }
}

impl LineParser for ServerLines {
    type Message = ServerMessage;
    fn parse(&self, line: &str) -> Result<ServerMessage, ParseError> {
        parse_server_line(line)
    }
}

impl<P: LineParser> LineCodec<P> {
    /// A codec that accepts lines of at most `max_length` bytes, newline excluded.
    pub fn new(max_length: usize, parser: P) -> Self {
        LineCodec {
            max_length,
            lines: 0,
            scanned: 0,
            discarding: false,
            parser,
        }
    }

    fn item(&mut self, message: Result<P::Message, LineError>) -> Line<P::Message> {
        self.lines += 1;
        Line {
            number: self.lines,
            message,
        }
    }
}

impl<P: LineParser> Decoder for LineCodec<P> {
    type Item = Line<P::Message>;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        loop {
            let newline = buf[self.scanned..].iter().position(|&b| b == b'\n');
            match (self.discarding, newline) {
                (true, Some(offset)) => {
                    buf.advance(self.scanned + offset + 1);
                    self.scanned = 0;
                    self.discarding = false;
                    let limit = self.max_length;
                    return Ok(Some(self.item(Err(LineError::TooLong { limit }))));
                }
                (true, None) => {
                    buf.clear();
                    self.scanned = 0;
                    return Ok(None);
                }
                (false, Some(offset)) => {
                    let end = self.scanned + offset;
                    self.scanned = 0;
                    if end > self.max_length {
                        buf.advance(end + 1);
                        let limit = self.max_length;
                        return Ok(Some(self.item(Err(LineError::TooLong { limit }))));
                    }
                    let line = buf.split_to(end + 1);
                    let message = match std::str::from_utf8(&line[..end]) {
                        Ok(text) => self.parser.parse(text).map_err(LineError::from),
                        Err(_) => Err(LineError::NotText),
                    };
                    return Ok(Some(self.item(message)));
                }
                (false, None) if buf.len() > self.max_length => {
                    // Too long already: drop what we have and skip to the next newline.
                    self.discarding = true;
                    self.scanned = 0;
                    buf.clear();
                    continue;
                }
                (false, None) => {
                    self.scanned = buf.len();
                    return Ok(None);
                }
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        if let Some(line) = self.decode(buf)? {
            return Ok(Some(line));
        }
        // A last line without its newline still counts; an overlong tail is reported.
        if self.discarding {
            self.discarding = false;
            let limit = self.max_length;
            return Ok(Some(self.item(Err(LineError::TooLong { limit }))));
        }
        if buf.is_empty() {
            return Ok(None);
        }
        buf.put_u8(b'\n');
        self.decode(buf)
    }
}

impl<P> Encoder<ServerMessage> for LineCodec<P> {
    type Error = std::io::Error;

    fn encode(&mut self, message: ServerMessage, buf: &mut BytesMut) -> Result<(), Self::Error> {
        encode_line(&message, buf);
        Ok(())
    }
}

impl<P> Encoder<ClientMessage> for LineCodec<P> {
    type Error = std::io::Error;

    fn encode(&mut self, message: ClientMessage, buf: &mut BytesMut) -> Result<(), Self::Error> {
        encode_line(&message, buf);
        Ok(())
    }
}

/// Appends `message` and a newline to `buf`.
pub fn encode_line(message: &impl std::fmt::Display, buf: &mut BytesMut) {
    use std::fmt::Write;
    // Writing into a BytesMut cannot fail.
    let _ = writeln!(buf, "{message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(codec: &mut LineCodec<ClientLines>, bytes: &[u8]) -> Vec<Line<ClientMessage>> {
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        // Feed one byte at a time: TCP may split lines anywhere.
        for &b in bytes {
            buf.put_u8(b);
            while let Some(line) = codec.decode(&mut buf).expect("decode") {
                out.push(line);
            }
        }
        while let Some(line) = codec.decode_eof(&mut buf).expect("decode_eof") {
            out.push(line);
        }
        out
    }

    #[test]
    fn frames_lines_split_anywhere_and_numbers_them() {
        let mut codec = LineCodec::new(64, ClientLines);
        let lines = decode_all(&mut codec, b"STOP 5\nEND\nFINISH");
        let got: Vec<_> = lines.into_iter().map(|l| (l.number, l.message)).collect();
        assert_eq!(
            got,
            vec![
                (1, Ok(ClientMessage::Stop(crate::message::WireTime(5.0)))),
                (2, Ok(ClientMessage::End)),
                (3, Ok(ClientMessage::Finish)),
            ]
        );
    }

    #[test]
    fn overlong_lines_are_discarded_and_reported_once() {
        let mut codec = LineCodec::new(8, ClientLines);
        let mut input = b"STOP 1\n".to_vec();
        input.extend(std::iter::repeat_n(b'9', 100));
        input.extend(b"\nEND\n");
        let lines = decode_all(&mut codec, &input);
        let got: Vec<_> = lines.into_iter().map(|l| (l.number, l.message)).collect();
        assert_eq!(
            got,
            vec![
                (1, Ok(ClientMessage::Stop(crate::message::WireTime(1.0)))),
                (2, Err(LineError::TooLong { limit: 8 })),
                (3, Ok(ClientMessage::End)),
            ]
        );
    }

    #[test]
    fn overlong_line_in_one_chunk_is_reported() {
        let mut codec = LineCodec::new(4, ClientLines);
        let mut buf = BytesMut::from(&b"FINISH\nEND\n"[..]);
        let first = codec.decode(&mut buf).expect("decode").expect("a line");
        assert_eq!(first.message, Err(LineError::TooLong { limit: 4 }));
        let second = codec.decode(&mut buf).expect("decode").expect("a line");
        assert_eq!(second.message, Ok(ClientMessage::End));
    }

    #[test]
    fn bad_bytes_do_not_end_the_stream() {
        let mut codec = LineCodec::new(64, ClientLines);
        let lines = decode_all(&mut codec, b"\xff\xfe\nHELLO\nEND\n");
        assert_eq!(lines[0].message, Err(LineError::NotText));
        assert!(matches!(lines[1].message, Err(LineError::Parse(_))));
        assert_eq!(lines[2].message, Ok(ClientMessage::End));
    }

    #[test]
    fn encoder_writes_one_line_per_message() {
        let mut codec = LineCodec::new(64, ClientLines);
        let mut buf = BytesMut::new();
        codec.encode(ServerMessage::End, &mut buf).expect("encode");
        codec
            .encode(ClientMessage::Stop(crate::message::WireTime(7.5)), &mut buf)
            .expect("encode");
        assert_eq!(&buf[..], b"END\nSTOP 7.5\n");
    }
}
