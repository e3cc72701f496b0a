//! One client connection's protocol state, independent of sockets: frames and parses
//! the bytes received, gathers a batch until `END`, and turns it into a [`SessionEvent`]
//! for the coordinator.
//!
//! ```text
//!  bytes ─▶ LineCodec ─▶ batch (SEND/PROTO…, STOP) ─END─▶ SessionEvent::Batch
//!                                             FINISH ─▶ SessionEvent::Finish
//! ```
//!
//! A bad line is logged (client, line number, what was expected) and dropped; nothing
//! is written back for it, since a legacy client would misread any extra line.

use std::time::Instant;

use bytes::BytesMut;
use tokio_util::codec::Decoder;
use tracing::warn;
use vesper_protocol::ClientMessage;
use vesper_protocol::codec::{ClientLines, Line, LineCodec};

use crate::log_budget::LogBudget;
use crate::sync::ClientId;
use crate::sync::coordinator::{BatchItem, SessionEvent};

/// Limits a session enforces on its own.
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    /// longest line \[bytes\]
    pub max_line: usize,
    /// most `SEND`/`PROTO` lines in one batch
    pub max_batch: usize,
}

/// The protocol state of one connection.
#[derive(Debug)]
pub struct Session {
    client: ClientId,
    name: String,
    codec: LineCodec<ClientLines>,
    max_batch: usize,
    items: Vec<BatchItem>,
    stop: Option<(u64, vesper_protocol::WireTime)>,
    finished: bool,
    overflow_warned: bool,
    log: LogBudget,
    /// the connection closed: a line being read now had no newline
    closed: bool,
    /// a well-formed line has come: the connection is a client
    heard: bool,
}

impl Session {
    /// A new session for `client` at `peer`.
    pub fn new(client: ClientId, peer: &str, limits: SessionLimits) -> Self {
        Session {
            client,
            name: format!("client {client} ({peer})"),
            codec: LineCodec::new(limits.max_line, ClientLines),
            max_batch: limits.max_batch,
            items: Vec::new(),
            stop: None,
            finished: false,
            overflow_warned: false,
            log: LogBudget::default(),
            closed: false,
            heard: false,
        }
    }

    /// Whether a well-formed line has come: from then on the connection is a client.
    pub fn heard(&self) -> bool {
        self.heard
    }

    /// Whether the client is part way through a batch: it sent a `SEND`, `PROTO` or
    /// `STOP` line and not yet the batch's `END`.
    pub fn in_batch(&self) -> bool {
        !self.items.is_empty() || self.stop.is_some()
    }

    /// The connection is dropped: the batch under way and any line part way through
    /// are forgotten, and the client is gone.
    pub fn abandon(&mut self, commands: &mut Vec<SessionEvent>) {
        self.items.clear();
        self.stop = None;
        commands.push(SessionEvent::Disconnect { client: self.client });
    }

    /// Whether the client has sent `FINISH`.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The name used in log lines.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Consumes every complete line in `buf`, appending the commands they make.
    pub fn feed(&mut self, buf: &mut BytesMut, commands: &mut Vec<SessionEvent>) {
        // The codec never fails on bytes: bad lines come back as items.
        while let Ok(Some(line)) = self.codec.decode(buf) {
            self.line(line, commands);
        }
    }

    /// The connection closed: a last line without its newline still counts.
    pub fn close(&mut self, buf: &mut BytesMut, commands: &mut Vec<SessionEvent>) {
        self.closed = true;
        while let Ok(Some(line)) = self.codec.decode_eof(buf) {
            self.line(line, commands);
        }
        commands.push(SessionEvent::Disconnect { client: self.client });
    }

    fn line(&mut self, line: Line<ClientMessage>, commands: &mut Vec<SessionEvent>) {
        let number = line.number;
        let message = match line.message {
            Ok(message) => message,
            Err(e) => {
                let cut = if self.closed {
                    " (the connection closed before its newline)"
                } else {
                    ""
                };
                self.log
                    .warn(&self.name, format_args!(" line {number}: {e}; line ignored{cut}"));
                commands.push(SessionEvent::Rejected {
                    client: self.client,
                    lines: 1,
                });
                return;
            }
        };
        self.heard = true;
        if self.finished {
            self.log.warn(
                &self.name,
                format_args!(" line {number}: `{message}` after FINISH ignored"),
            );
            return;
        }
        let item = match message {
            ClientMessage::Send(message) => BatchItem::Data {
                line: number,
                message,
                rendezvous: false,
            },
            ClientMessage::ReadyToRecv(message) => BatchItem::Data {
                line: number,
                message,
                rendezvous: true,
            },
            ClientMessage::OkToSend(request) => BatchItem::RequestToSend { line: number, request },
            ClientMessage::Stop(t) => {
                self.stop = Some((number, t));
                return;
            }
            ClientMessage::End => {
                commands.push(SessionEvent::Batch {
                    client: self.client,
                    items: std::mem::take(&mut self.items),
                    stop: self.stop.take(),
                    received: Instant::now(),
                });
                self.overflow_warned = false;
                return;
            }
            ClientMessage::Finish => {
                self.finished = true;
                if !self.items.is_empty() || self.stop.is_some() {
                    warn!(
                        "{} line {number}: FINISH before END; the open batch is dropped",
                        self.name
                    );
                }
                commands.push(SessionEvent::Finish { client: self.client });
                return;
            }
        };
        if self.items.len() >= self.max_batch {
            if !self.overflow_warned {
                self.log.warn(
                    &self.name,
                    format_args!(
                        " line {number}: more than {} messages in one batch; the rest of the batch is ignored",
                        self.max_batch
                    ),
                );
                self.overflow_warned = true;
            }
            commands.push(SessionEvent::Rejected {
                client: self.client,
                lines: 1,
            });
            return;
        }
        self.items.push(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        Session::new(
            3,
            "test",
            SessionLimits {
                max_line: 128,
                max_batch: 2,
            },
        )
    }

    fn feed(s: &mut Session, text: &str) -> Vec<SessionEvent> {
        let mut buf = BytesMut::from(text.as_bytes());
        let mut out = Vec::new();
        s.feed(&mut buf, &mut out);
        out
    }

    #[test]
    fn a_batch_ends_at_end() {
        let mut s = session();
        assert!(feed(&mut s, "SEND 6500 0 1 7 1024 0x1 0x2 0 1 0 0\nSTOP 6500\n").is_empty());
        let out = feed(&mut s, "END\n");
        let [
            SessionEvent::Batch {
                client, items, stop, ..
            },
        ] = &out[..]
        else {
            panic!("expected one batch, got {out:?}");
        };
        assert_eq!((*client, items.len()), (3, 1));
        assert_eq!(stop.map(|(line, t)| (line, t.0)), Some((2, 6500.0)));
    }

    fn rejected(commands: &[SessionEvent]) -> usize {
        commands
            .iter()
            .filter(|c| matches!(c, SessionEvent::Rejected { client: 3, lines: 1 }))
            .count()
    }

    #[test]
    fn bad_lines_are_dropped_and_reported() {
        let mut s = session();
        let out = feed(&mut s, "HELLO\nSEND 1 0 1\nSTOP 5\nEND\n");
        assert_eq!(rejected(&out), 2);
        assert!(matches!(out.last(), Some(SessionEvent::Batch { items, .. }) if items.is_empty()));
    }

    #[test]
    fn batches_are_bounded() {
        let mut s = session();
        let send = "SEND 6500 0 1 7 1024 0x1 0x2 0 1 0 0\n";
        let out = feed(&mut s, &format!("{send}{send}{send}STOP 1\nEND\n"));
        assert!(matches!(out.last(), Some(SessionEvent::Batch { items, .. }) if items.len() == 2));
        assert_eq!(rejected(&out), 1);
    }

    #[test]
    fn finish_then_close() {
        let mut s = session();
        let out = feed(&mut s, "FINISH\nSTOP 5\n");
        assert!(matches!(&out[..], [SessionEvent::Finish { client: 3 }]));
        let mut out = Vec::new();
        s.close(&mut BytesMut::new(), &mut out);
        assert!(matches!(&out[..], [SessionEvent::Disconnect { client: 3 }]));
    }
}
