//! A blocking connection that reads replies the way the legacy client does.
//!
//! The real client (Dimemas `venusclient`) writes each batch with one `send()`, then
//! reads with a single `recv()` of at most 500 bytes, splits that chunk into lines on
//! its own and never joins a line across two `recv()` calls; a line starting with `END`
//! ends the batch. [`LegacyConnection`] does the same and turns what would corrupt the
//! real client (a line cut at a chunk boundary) into an error, so a test over it is
//! also a test of compatibility.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};

use vesper_protocol::{ClientMessage, Completion, ServerMessage, parse_server_line};

/// The client's receive buffer size.
pub const RECV_SIZE: usize = vesper_protocol::LEGACY_REPLY_LIMIT;

/// What went wrong on the connection.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// a socket error
    #[error("socket: {0}")]
    Io(#[from] io::Error),
    /// the server closed the connection while a reply was awaited
    #[error("the server closed the connection")]
    Closed,
    /// a chunk ended inside a line: the real client would misparse it
    #[error("reply chunk of {len} bytes ends inside a line: {tail:?}")]
    PartialLine {
        /// chunk length
        len: usize,
        /// the cut line
        tail: String,
    },
    /// a `COMPLETED SEND` line the real client would reject
    #[error("malformed completion {line:?}: {reason}")]
    BadCompletion {
        /// the line
        line: String,
        /// why
        reason: String,
    },
}

/// One reply batch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    /// the completions, in the order received
    pub completions: Vec<Completion>,
    /// the size of each `recv()` chunk it took
    pub chunks: Vec<usize>,
    /// lines the client ignores (neither a completion nor `END`)
    pub ignored: Vec<String>,
}

/// A connection to a vesper server, behaving as the legacy client.
#[derive(Debug)]
pub struct LegacyConnection {
    stream: TcpStream,
    out: Vec<u8>,
}

impl LegacyConnection {
    /// Connects with `TCP_NODELAY`, as the real client does.
    pub fn connect(addr: SocketAddr) -> Result<Self, ClientError> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        Ok(LegacyConnection {
            stream,
            out: Vec::with_capacity(1024),
        })
    }

    /// Writes the lines in one `send()`.
    pub fn send(&mut self, lines: &[ClientMessage]) -> Result<(), ClientError> {
        self.out.clear();
        for line in lines {
            // Writing into a Vec cannot fail.
            let _ = writeln!(self.out, "{line}");
        }
        self.stream.write_all(&self.out)?;
        Ok(())
    }

    /// Writes raw bytes (for tests of malformed input).
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        self.stream.write_all(bytes)?;
        Ok(())
    }

    /// Reads one reply batch: `recv()` chunks of at most 500 bytes until one holds a
    /// line starting with `END`.
    pub fn read_reply(&mut self) -> Result<Reply, ClientError> {
        let mut reply = Reply::default();
        let mut buf = [0u8; RECV_SIZE];
        loop {
            let n = self.stream.read(&mut buf)?;
            if n == 0 {
                return Err(ClientError::Closed);
            }
            reply.chunks.push(n);
            let chunk = String::from_utf8_lossy(&buf[..n]);
            if !chunk.ends_with('\n') {
                let tail = chunk.rsplit('\n').next().unwrap_or_default().to_string();
                return Err(ClientError::PartialLine { len: n, tail });
            }
            let mut ended = false;
            for line in chunk.split('\n').filter(|l| !l.is_empty()) {
                if line.starts_with("END") {
                    ended = true;
                } else if line.starts_with("COMPLETED SEND") {
                    match parse_server_line(line) {
                        Ok(ServerMessage::Completed(c)) => {
                            if c.src_repeat != c.src || c.dst_repeat != c.dst {
                                return Err(ClientError::BadCompletion {
                                    line: line.to_string(),
                                    reason: "the repeated node pair differs".into(),
                                });
                            }
                            reply.completions.push(c);
                        }
                        Ok(ServerMessage::End) => ended = true,
                        Err(e) => {
                            return Err(ClientError::BadCompletion {
                                line: line.to_string(),
                                reason: e.to_string(),
                            });
                        }
                    }
                } else {
                    reply.ignored.push(line.to_string());
                }
            }
            if ended {
                return Ok(reply);
            }
        }
    }

    /// Sends a batch and reads its reply.
    pub fn exchange(&mut self, lines: &[ClientMessage]) -> Result<Reply, ClientError> {
        self.send(lines)?;
        self.read_reply()
    }

    /// Sends `FINISH` and closes the connection.
    pub fn finish(mut self) -> Result<(), ClientError> {
        self.send(&[ClientMessage::Finish])?;
        self.stream.shutdown(std::net::Shutdown::Both)?;
        Ok(())
    }
}
