//! A blocking connection that reads replies the way the legacy client does.
//!
//! The real client (Dimemas `venusclient`) writes each batch with one `send()`, then
//! reads with a single `recv()` of at most 500 bytes, splits that chunk into lines on
//! its own and never joins a line across two `recv()` calls; a line starting with `END`
//! ends the batch. [`LegacyConnection`] does the same and turns what would corrupt the
//! real client (a line cut at a chunk boundary, a completion it cannot parse) into an
//! error, so a test over it is also a test of compatibility. It is stricter than the
//! real client in one way: bytes after `END` in the same chunk are an error (the real
//! client would take them as part of the batch; a correct server never sends them,
//! since the client is blocked until it has read the reply).

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use vesper_protocol::{ClientMessage, Completion, ServerMessage, parse_server_line};

/// The client's receive buffer size.
pub const RECV_SIZE: usize = vesper_protocol::LEGACY_REPLY_LIMIT;

/// What went wrong on the connection.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// a socket error
    #[error("socket: {0}")]
    Io(#[from] io::Error),
    /// no whole reply came within the reply timeout (or the socket's read timeout)
    #[error("no whole reply (a batch ending with END) within {}", timeout_text(*.0))]
    TimedOut(Option<Duration>),
    /// the server closed the connection while a reply was awaited
    #[error("the server closed the connection")]
    Closed,
    /// a chunk ended inside a line: the real client would misparse it
    #[error(
        "reply chunk ends inside a line (a reply longer than the legacy client's 500-byte read: a server with a \
         larger --reply-limit, which `vesper run --reply-limit` reads): {chunk:?}"
    )]
    PartialLine {
        /// the chunk
        chunk: String,
    },
    /// a `COMPLETED SEND` line the real client would reject
    #[error("malformed completion {line:?}: {reason}")]
    BadCompletion {
        /// the line
        line: String,
        /// why
        reason: String,
    },
    /// bytes after the `END` of a reply, in the same chunk
    #[error("bytes after END in the same chunk: {chunk:?}")]
    AfterEnd {
        /// the chunk
        chunk: String,
    },
}

/// One reply batch, as received.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    /// every byte of the reply
    pub bytes: Vec<u8>,
    /// the size of each `recv()` chunk it took
    pub chunks: Vec<usize>,
    /// the completions, in the order received
    pub completions: Vec<Completion>,
    /// lines the client ignores (neither a completion nor `END`)
    pub ignored: Vec<String>,
}

impl Reply {
    /// The reply as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// A connection to a vesper server, behaving as the legacy client.
#[derive(Debug)]
pub struct LegacyConnection {
    stream: TcpStream,
    out: Vec<u8>,
    transcript: Vec<u8>,
    /// how long a read polls before it blocks (zero: it blocks at once, as the real
    /// client)
    spin: Duration,
    /// replies are read whole, lines joined across `recv()` chunks (see
    /// [`LegacyConnection::set_whole_replies`])
    whole_replies: bool,
    /// how long a whole reply may take (see [`LegacyConnection::set_reply_timeout`])
    reply_timeout: Option<Duration>,
}

/// How a timeout reads in an error: `the reply timeout (3600 s)`, or the socket's.
fn timeout_text(timeout: Option<Duration>) -> String {
    match timeout {
        Some(t) => format!("the reply timeout ({} s)", t.as_secs_f64()),
        None => "the socket's read timeout".to_string(),
    }
}

/// The receive buffer of a connection that reads replies whole.
const WHOLE_RECV_SIZE: usize = 64 * 1024;

impl LegacyConnection {
    /// Connects with `TCP_NODELAY`, as the real client does.
    pub fn connect(addr: SocketAddr) -> Result<Self, ClientError> {
        Self::with_stream(TcpStream::connect(addr)?)
    }

    /// Connects as [`LegacyConnection::connect`] does, giving up after `timeout` (a
    /// host that drops the connection request would otherwise hold the caller for the
    /// system's own timeout, minutes).
    pub fn connect_timeout(addr: SocketAddr, timeout: Duration) -> Result<Self, ClientError> {
        Self::with_stream(TcpStream::connect_timeout(&addr, timeout)?)
    }

    fn with_stream(stream: TcpStream) -> Result<Self, ClientError> {
        stream.set_nodelay(true)?;
        Ok(LegacyConnection {
            stream,
            out: Vec::with_capacity(1024),
            transcript: Vec::new(),
            spin: Duration::ZERO,
            whole_replies: false,
            reply_timeout: None,
        })
    }

    /// Gives each reply at most `timeout` from when its reading starts to its `END`
    /// (`None`: no limit, as the real client): a server that never answers, or sends
    /// text that never ends a batch, is then an error ([`ClientError::TimedOut`]) rather
    /// than a wait for ever. Each `recv()` then sets the socket's read timeout to what
    /// is left.
    pub fn set_reply_timeout(&mut self, timeout: Option<Duration>) {
        self.reply_timeout = timeout.filter(|t| !t.is_zero());
    }

    /// Reads each reply whole, however many `recv()` chunks it takes and wherever they
    /// cut its lines: for a server that writes replies larger than the legacy client's
    /// 500-byte read (`vesper serve --reply-limit 0`, or above 500). The real client
    /// cannot; with this set the connection no longer checks that it could.
    pub fn set_whole_replies(&mut self, whole: bool) {
        self.whole_replies = whole;
    }

    /// Makes each read poll the socket for up to `spin` before blocking in `recv()`.
    /// The bytes and chunks read are the same; a reply that comes within `spin` is
    /// taken without the thread being put to sleep and woken again, which costs more
    /// than the rest of a round trip on loopback. For a client that owns a core (the
    /// replay of `vesper run`); the real client blocks at once.
    pub fn set_spin(&mut self, spin: Duration) {
        self.spin = spin;
    }

    /// How long a read may wait (`None`: forever, as the real client).
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) -> Result<(), ClientError> {
        self.stream.set_read_timeout(timeout)?;
        Ok(())
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

    /// One `recv()` of at most 500 bytes, without interpretation (0: closed).
    pub fn read_raw(&mut self, buf: &mut [u8; RECV_SIZE]) -> io::Result<usize> {
        self.read_chunk(buf)
    }

    /// One `recv()` into `buf`, recorded in the transcript (0: closed).
    fn read_chunk(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = if self.spin.is_zero() {
            self.stream.read(buf)?
        } else {
            self.spinning_read(buf)?
        };
        self.transcript.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    /// One `recv()`, polled without blocking for up to `spin`, then blocking.
    fn spinning_read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.set_nonblocking(true)?;
        let start = Instant::now();
        let polled = loop {
            match self.stream.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && start.elapsed() < self.spin => {
                    std::thread::yield_now();
                }
                other => break other,
            }
        };
        self.stream.set_nonblocking(false)?;
        match polled {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.stream.read(buf),
            other => other,
        }
    }

    /// Reads one reply batch: `recv()` chunks of at most 500 bytes until one holds a
    /// line starting with `END` (chunks of any size, their lines joined, when replies
    /// are read whole).
    pub fn read_reply(&mut self) -> Result<Reply, ClientError> {
        if self.whole_replies {
            return self.read_whole_reply();
        }
        let mut reply = Reply::default();
        let mut buf = [0u8; RECV_SIZE];
        let deadline = self.deadline();
        loop {
            let n = self.next_chunk(&mut buf, &mut reply, deadline)?;
            let chunk = String::from_utf8_lossy(&buf[..n]).into_owned();
            if !chunk.ends_with('\n') {
                return Err(ClientError::PartialLine { chunk });
            }
            if read_lines(&chunk, &mut reply)? {
                return Ok(reply);
            }
        }
    }

    /// When the reply being read must have ended, if there is a reply timeout.
    fn deadline(&self) -> Option<Instant> {
        self.reply_timeout.and_then(|t| Instant::now().checked_add(t))
    }

    /// One `recv()` of a reply into `buf`, added to `reply`: its size (a closed
    /// connection or a timeout, the socket's or the reply's `deadline`, is an error).
    fn next_chunk(
        &mut self,
        buf: &mut [u8],
        reply: &mut Reply,
        deadline: Option<Instant>,
    ) -> Result<usize, ClientError> {
        let timed_out = ClientError::TimedOut(self.reply_timeout);
        if let Some(deadline) = deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(timed_out);
            }
            self.stream.set_read_timeout(Some(left))?;
        }
        let n = match self.read_chunk(buf) {
            Ok(0) => return Err(ClientError::Closed),
            Ok(n) => n,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                return Err(timed_out);
            }
            Err(e) => return Err(e.into()),
        };
        reply.chunks.push(n);
        reply.bytes.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    /// [`LegacyConnection::read_reply`] of a reply read whole: chunks are joined, and
    /// each line is read once its newline has come.
    fn read_whole_reply(&mut self) -> Result<Reply, ClientError> {
        let mut reply = Reply::default();
        let mut buf = vec![0u8; WHOLE_RECV_SIZE];
        // Where the lines not yet read start in `reply.bytes`.
        let mut from = 0;
        let deadline = self.deadline();
        loop {
            self.next_chunk(&mut buf, &mut reply, deadline)?;
            let Some(end) = reply.bytes[from..].iter().rposition(|&b| b == b'\n') else {
                continue;
            };
            let lines = String::from_utf8_lossy(&reply.bytes[from..from + end + 1]).into_owned();
            from += end + 1;
            if read_lines(&lines, &mut reply)? {
                if from < reply.bytes.len() {
                    let chunk = String::from_utf8_lossy(&reply.bytes[from..]).into_owned();
                    return Err(ClientError::AfterEnd { chunk });
                }
                return Ok(reply);
            }
        }
    }

    /// Sends a batch and reads its reply.
    pub fn exchange(&mut self, lines: &[ClientMessage]) -> Result<Reply, ClientError> {
        self.send(lines)?;
        self.read_reply()
    }

    /// Every reply byte received so far.
    pub fn transcript(&self) -> &[u8] {
        &self.transcript
    }

    /// Sends `FINISH` and closes the connection.
    pub fn finish(mut self) -> Result<(), ClientError> {
        self.send(&[ClientMessage::Finish])?;
        self.close();
        Ok(())
    }

    /// Closes the connection without `FINISH`.
    pub fn close(self) {
        // Already closed by the peer is as good.
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

/// Splits a chunk into lines as the client does; returns whether `END` was seen.
fn read_lines(chunk: &str, reply: &mut Reply) -> Result<bool, ClientError> {
    let mut ended = false;
    for line in chunk.split('\n').filter(|l| !l.is_empty()) {
        if ended {
            return Err(ClientError::AfterEnd { chunk: chunk.into() });
        }
        if line.starts_with("END") {
            ended = true;
        } else if line.starts_with("COMPLETED SEND") {
            let bad = |reason: String| ClientError::BadCompletion {
                line: line.to_string(),
                reason,
            };
            match parse_server_line(line) {
                Ok(ServerMessage::Completed(c)) => {
                    if c.src_repeat != c.src || c.dst_repeat != c.dst {
                        return Err(bad("the repeated node pair differs".into()));
                    }
                    reply.completions.push(c);
                }
                Ok(ServerMessage::End) => ended = true,
                Err(e) => return Err(bad(e.to_string())),
            }
        } else {
            reply.ignored.push(line.to_string());
        }
    }
    Ok(ended)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_completions_and_the_end() {
        let mut reply = Reply::default();
        let chunk = "COMPLETED SEND 10746 0 1 1024 0x1 0x2 0 1 6500\nhello\nEND\n";
        assert!(read_lines(chunk, &mut reply).expect("valid"));
        assert_eq!(reply.completions.len(), 1);
        assert_eq!(reply.ignored, vec!["hello".to_string()]);
    }

    #[test]
    fn a_spinning_read_takes_the_same_replies() {
        use std::net::TcpListener;
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
        let addr = listener.local_addr().expect("an address");
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().expect("a client");
            let mut line = [0u8; 64];
            for delay in [0, 5, 0] {
                // One reply per request: at once (polled) or after 5 ms (past the spin,
                // so the read blocks).
                let _ = socket.read(&mut line).expect("a request");
                std::thread::sleep(Duration::from_millis(delay));
                socket
                    .write_all(b"COMPLETED SEND 10746 0 1 1024 0x1 0x2 0 1 6500\nEND\n")
                    .expect("a reply");
            }
        });
        let mut client = LegacyConnection::connect(addr).expect("connects");
        client.set_spin(Duration::from_millis(1));
        for _ in 0..3 {
            let reply = client.exchange(&[ClientMessage::End]).expect("a reply");
            assert_eq!(reply.completions.len(), 1);
            assert_eq!(reply.chunks, [51]);
        }
        server.join().expect("served");
    }

    #[test]
    fn a_reply_read_whole_joins_lines_cut_between_chunks() {
        use std::net::TcpListener;
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
        let addr = listener.local_addr().expect("an address");
        let line = "COMPLETED SEND 10746 0 1 1024 0x1 0x2 0 1 6500\n";
        // Twenty lines (about 1 KB) in three writes, the first two cutting a line.
        let reply = format!("{}END\n", line.repeat(20));
        let size = reply.len();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().expect("a client");
            let mut request = [0u8; 64];
            for _ in 0..2 {
                let _ = socket.read(&mut request).expect("a request");
                for piece in [&reply[..30], &reply[30..700], &reply[700..]] {
                    socket.write_all(piece.as_bytes()).expect("a piece");
                    socket.flush().expect("sent");
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        });
        let mut client = LegacyConnection::connect(addr).expect("connects");
        // The legacy client would misparse the cut line.
        assert!(matches!(
            client.exchange(&[ClientMessage::End]),
            Err(ClientError::PartialLine { .. })
        ));
        // Drain what is left of that reply before the next request.
        let mut rest = Vec::new();
        while rest.len() < size - 30 {
            let mut buf = [0u8; RECV_SIZE];
            let n = client.read_raw(&mut buf).expect("the rest");
            rest.extend_from_slice(&buf[..n]);
        }
        client.set_whole_replies(true);
        let reply = client.exchange(&[ClientMessage::End]).expect("a reply read whole");
        assert_eq!(reply.completions.len(), 20);
        assert!(reply.chunks.len() >= 2, "{:?}", reply.chunks);
        server.join().expect("served");
    }

    #[test]
    fn refuses_what_would_break_the_real_client() {
        let mut reply = Reply::default();
        let mismatched = "COMPLETED SEND 10746 0 1 1024 0x1 0x2 0 2 6500\nEND\n";
        assert!(matches!(
            read_lines(mismatched, &mut reply),
            Err(ClientError::BadCompletion { .. })
        ));
        let tagged = "COMPLETED SEND 10746 0 1 7 1024 0x1 0x2 0 1 6500\nEND\n";
        assert!(matches!(
            read_lines(tagged, &mut reply),
            Err(ClientError::BadCompletion { .. })
        ));
        assert!(matches!(
            read_lines("END\nEND\n", &mut reply),
            Err(ClientError::AfterEnd { .. })
        ));
        assert!(!read_lines("\n\n", &mut reply).expect("blank lines are skipped"));
    }
}
