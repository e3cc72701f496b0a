//! Route files: the project's canonical format (absolute output ports) and Myrinet's
//! relative turns, read, written and converted through the map.
//!
//! Canonical format (what vesper writes, and prefers to read): one route per line,
//! the source and destination host names then the absolute output port taken at each
//! switch of the path; several lines for one pair are alternatives (multipath), kept
//! in order. Names with spaces or quotes are written quoted (`"n 0"`, `\"` inside).
//!
//! ```text
//! # vesper routes: SOURCE DESTINATION PORT... (absolute output ports, switch by switch)
//! host0 host3 2 1 0
//! host0 host3 3 1 0
//! ```
//!
//! Myrinet format (read tolerantly, written as below): a section per source host, a
//! header line with its quoted name (a count after it is ignored), then one line per
//! route: the destination's name, the route's length L, and L turns. Myrinet switches
//! route by turns: at each switch `out_port = in_port + δ`. A turn is written as a
//! route byte in hex (`0x81`, or bare `81`: high bit set, low 6 bits a signed δ) or
//! as a signed decimal δ between −32 and 31. A line is a route when it has exactly
//! L + 2 tokens with L ≥ 1; otherwise a line that starts with a name is a header.
//!
//! ```text
//! "n0" 2
//! "n1" 1 0x81
//! "n2" 2 0x87 0x82
//! ```

use std::collections::HashMap;

use vesper_input::{InputError, Lines};
use vesper_netmodels::{Device, Endpoint, HostId, PathList, Topology};

use crate::named::NamedTopology;

/// Routes of a network: ((source, destination), output ports), pair by pair, the
/// alternatives of a pair in order; stored flat (a route file for 8,192 hosts holds 67
/// million routes: one allocation each would double its size).
pub type RouteList = PathList;

/// The longest line a route file may hold \[bytes\]: a route across the 65,535 switches a
/// packet counts, of ports of six digits (or of Myrinet turns), with its two names.
/// Route files are read a line at a time, so that their text (2 GB for 8,192 hosts) is
/// never held whole, and no line longer than this is held either.
pub const MAX_ROUTE_LINE_BYTES: usize = 1 << 20;

/// Where a route file's lines come from: fills `line` with the next one (without its
/// line end) and says whether there was one.
type LineSource<'a> = dyn FnMut(&mut String) -> Result<bool, InputError> + 'a;

/// The lines of `text`.
fn text_lines(text: &str) -> impl FnMut(&mut String) -> Result<bool, InputError> + '_ {
    let mut lines = text.lines();
    move |line| {
        line.clear();
        Ok(lines.next().map(|l| line.push_str(l)).is_some())
    }
}

/// The lines of `reader`, line ends (`\n` or `\r\n`) left out as `str::lines` does,
/// none longer than [`MAX_ROUTE_LINE_BYTES`].
fn reader_lines(reader: impl std::io::BufRead) -> impl FnMut(&mut String) -> Result<bool, InputError> {
    let mut lines = Lines::new(reader, MAX_ROUTE_LINE_BYTES);
    move |line| Ok(lines.next_trimmed(line)?.is_some())
}

/// Runs `each` on every line of `source` with its number (from 1); the lines read.
fn for_each_line(
    file: &str,
    source: &mut LineSource<'_>,
    mut each: impl FnMut(usize, &str) -> Result<(), RouteFileError>,
) -> Result<usize, RouteFileError> {
    let mut line = String::new();
    let mut number = 0;
    while source(&mut line).map_err(|e| read_error(file, number + 1, &e))? {
        number += 1;
        each(number, &line)?;
    }
    Ok(number)
}

/// Line `line` of `file` could not be read (the error may name another).
fn read_error(file: &str, line: usize, e: &InputError) -> RouteFileError {
    let line = e.line().and_then(|l| usize::try_from(l).ok()).unwrap_or(line);
    at_line(file, line)(RouteRule::Unreadable(e.to_string()))
}

/// The error a rule broken at `line` of `file` makes.
fn at_line(file: &str, line: usize) -> impl Fn(RouteRule) -> RouteFileError + '_ {
    move |rule| RouteFileError {
        file: file.to_string(),
        line,
        rule,
    }
}

/// Why a route file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {rule}")]
pub struct RouteFileError {
    /// the file
    pub file: String,
    /// the line, from 1
    pub line: usize,
    /// the rule broken
    pub rule: RouteRule,
}

/// The rule a line of a route file breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RouteRule {
    /// the line cannot be read (the reader's message: its error keeps an `io::Error`,
    /// which can be neither compared nor copied)
    #[error("{0}")]
    Unreadable(String),
    /// a quote opened and never closed
    #[error("a quoted name is not closed")]
    UnclosedQuote,
    /// a name that is no host of the map
    #[error("unknown host `{0}`")]
    UnknownHost(String),
    /// a canonical line with fewer than two words
    #[error("expected SOURCE DESTINATION PORT...")]
    CanonicalLine,
    /// a port that is not a number
    #[error("expected a port number, got `{0}`")]
    Port(String),
    /// a route that does not lead where it says
    #[error("{0}")]
    Walk(WalkError),
    /// more routes than the memory holds
    #[error("the routes do not fit in memory: {read} routes read before this one")]
    NoRoom {
        /// the routes read before this one
        read: usize,
    },
    /// a Myrinet route before any header
    #[error("a route before its source's header")]
    RouteBeforeHeader,
    /// a Myrinet turn that is neither a route byte nor a turn
    #[error("expected a route byte or a turn, got `{0}`")]
    Turn(String),
    /// a Myrinet line that is neither a header nor a route
    #[error("expected a header `\"SOURCE\"` or a route `\"DESTINATION\" LENGTH TURN...`, got {words} words")]
    MyrinetLine {
        /// the words of the line
        words: usize,
    },
    /// a file that leaves out a pair of hosts (at its last line)
    #[error("the file ends without a route from `{src}` to `{dst}`; every pair of hosts needs one")]
    MissingPair {
        /// the first pair's source left out
        src: String,
        /// and its destination
        dst: String,
    },
}

/// A step of a route, as its errors name it: a Myrinet turn, or a hop of absolute ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// the turn of this index, from 0
    Turn(usize),
    /// the hop of this index, from 0
    Hop(usize),
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Turn(n) => write!(f, "turn {n}"),
            Step::Hop(n) => write!(f, "hop {n}"),
        }
    }
}

/// Where a route, walked on the map, goes wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WalkError {
    /// a route from a host without a cable
    #[error("the source host has no cable")]
    SourceWithoutCable,
    /// a turn taken at a host
    #[error("turn {turn} arrives at a host, not a switch")]
    TurnAtHost {
        /// the turn, from 0
        turn: usize,
    },
    /// a turn beyond a switch's ports
    #[error("turn {turn} ({delta:+}) from {}.p{} leaves its {ports} ports", from.device, from.port)]
    TurnBeyondPorts {
        /// the turn, from 0
        turn: usize,
        /// its δ
        delta: i32,
        /// the port the route entered by
        from: Endpoint,
        /// the switch's ports
        ports: u32,
    },
    /// a step out of a port without a cable
    #[error("{step}: {}.p{} has no cable", at.device, at.port)]
    NoCable {
        /// the step
        step: Step,
        /// the port left by
        at: Endpoint,
    },
    /// a route that reaches a host with hops to go
    #[error("hop {hop} arrives at host `{host}` before the route ends")]
    HostBeforeEnd {
        /// the hop, from 0
        hop: usize,
        /// the host reached
        host: String,
    },
    /// a port beyond a switch's ports
    #[error("hop {hop}: switch `{switch}` has {ports} ports, no port {port}")]
    NoSuchPort {
        /// the hop, from 0
        hop: usize,
        /// the switch
        switch: String,
        /// its ports
        ports: u32,
        /// the port named
        port: u32,
    },
    /// a route that ends elsewhere than its destination
    #[error("the route ends at `{end}`, not at `{dst}`")]
    EndsElsewhere {
        /// where it ends
        end: String,
        /// where it should
        dst: String,
    },
    /// a hop whose turn a Myrinet route byte cannot hold
    #[error("hop {hop}: a turn of {delta} does not fit a route byte")]
    TurnTooWide {
        /// the hop, from 0
        hop: usize,
        /// the turn
        delta: i64,
    },
}

/// A route the Myrinet format cannot hold: its hosts, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{src} to {dst}: {walk}")]
pub struct UnwritableRoute {
    /// the source host
    pub src: String,
    /// the destination host
    pub dst: String,
    /// what went wrong on the way
    pub walk: WalkError,
}

/// The words of a line: bare tokens or quoted names (`"n 0"`, with `\"` and `\\`);
/// `#` outside quotes starts a comment.
fn words(line: &str) -> Result<Vec<std::borrow::Cow<'_, str>>, RouteRule> {
    // Most lines (every line map2topo writes for numbered hosts) quote nothing: their
    // words are slices of the line, with no allocation each.
    if !line.contains('"') {
        return Ok(line
            .split_whitespace()
            .take_while(|w| !w.starts_with('#'))
            .map(std::borrow::Cow::Borrowed)
            .collect());
    }
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '#' {
            break;
        } else if c == '"' {
            chars.next();
            let mut word = String::new();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => word.extend(chars.next()),
                    Some(other) => word.push(other),
                    None => return Err(RouteRule::UnclosedQuote),
                }
            }
            out.push(word.into());
        } else {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                word.push(c);
                chars.next();
            }
            out.push(word.into());
        }
    }
    Ok(out)
}

/// `name` as a word: bare when it can be, quoted otherwise.
fn quote(name: &str) -> String {
    if !name.is_empty()
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c == '"' || c == '#' || c == '\\')
    {
        return name.to_string();
    }
    let escaped: String = name
        .chars()
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            _ => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}

/// Host ids by name (hashed: two lookups a route, 67 million routes for 8,192 hosts;
/// only looked up, never iterated, so the order of the table cannot show).
fn host_ids(net: &NamedTopology) -> HashMap<&str, HostId> {
    net.host_names
        .iter()
        .enumerate()
        .map(|(h, name)| (name.as_str(), HostId(h as u32)))
        .collect()
}

/// The host called `name`, or the rule it breaks.
fn host_named(hosts: &HashMap<&str, HostId>, name: &str) -> Result<HostId, RouteRule> {
    hosts
        .get(name)
        .copied()
        .ok_or_else(|| RouteRule::UnknownHost(name.to_string()))
}

/// Reads canonical routes of `net` from `text` (`file` names it in errors).
pub fn read_canonical(file: &str, text: &str, net: &NamedTopology) -> Result<RouteList, RouteFileError> {
    let mut routes = RouteList::default();
    parse_canonical(file, &mut text_lines(text), net, &mut routes)?;
    Ok(routes)
}

/// Reads canonical routes of `net` from `lines` into `routes`, in file order; the lines
/// read.
fn parse_canonical(
    file: &str,
    lines: &mut LineSource<'_>,
    net: &NamedTopology,
    routes: &mut RouteList,
) -> Result<usize, RouteFileError> {
    let hosts = host_ids(net);
    let peers = Peers::of(&net.topology);
    let mut ports = Vec::new();
    for_each_line(file, lines, |number, line| {
        let error = at_line(file, number);
        let words = words(line).map_err(&error)?;
        if words.is_empty() {
            return Ok(());
        }
        let [src, dst, words_ports @ ..] = words.as_slice() else {
            return Err(error(RouteRule::CanonicalLine));
        };
        let host = |name: &str| host_named(&hosts, name).map_err(&error);
        let pair = (host(src)?, host(dst)?);
        ports.clear();
        for p in words_ports {
            ports.push(p.parse::<u32>().map_err(|_| error(RouteRule::Port(p.to_string())))?);
        }
        peers
            .check_route(net, pair.0, pair.1, &ports)
            .map_err(|e| error(RouteRule::Walk(e)))?;
        routes
            .try_push(pair, &ports)
            .map_err(|_| error(RouteRule::NoRoom { read: routes.len() }))?;
        Ok(())
    })
}

/// Reads routes in either format, telling them apart by the first line that holds
/// something: a Myrinet file starts with a header, a quoted name alone (or with a
/// count); a canonical file with a route of two names and ports.
pub fn read_any(file: &str, text: &str, net: &NamedTopology) -> Result<RouteList, RouteFileError> {
    parse_any(file, &mut text_lines(text), net)
}

/// [`read_any`] from `reader`, a line at a time: a large file's text (2 GB for 8,192
/// hosts) is never held whole, nor a line longer than [`MAX_ROUTE_LINE_BYTES`].
pub fn read_any_from(
    file: &str,
    reader: impl std::io::BufRead,
    net: &NamedTopology,
) -> Result<RouteList, RouteFileError> {
    parse_any(file, &mut reader_lines(reader), net)
}

/// Reads every route of `lines`, in either format; refuses a file that leaves out a
/// pair of hosts.
fn parse_any(file: &str, lines: &mut LineSource<'_>, net: &NamedTopology) -> Result<RouteList, RouteFileError> {
    // The format: read up to the first line that holds something, then put those lines
    // back in front of the rest.
    let mut head = Vec::new();
    let first = loop {
        let mut line = String::new();
        if !lines(&mut line).map_err(|e| read_error(file, head.len() + 1, &e))? {
            break None;
        }
        let found = words(&line)
            .ok()
            .filter(|w| !w.is_empty())
            .map(|w| (line.trim_start().starts_with('"'), w.len()));
        head.push(line);
        if found.is_some() {
            break found;
        }
    };
    let mut head = head.into_iter();
    let mut lines = |line: &mut String| match head.next() {
        Some(read) => {
            *line = read;
            Ok(true)
        }
        None => lines(line),
    };
    let mut routes = RouteList::default();
    let count = match first {
        Some((true, words)) if words <= 2 => parse_myrinet(file, &mut lines, net, &mut routes)?,
        _ => parse_canonical(file, &mut lines, net, &mut routes)?,
    };
    // Every pair of hosts needs a route: a truncated file is refused here, by name. One
    // bit per pair (8 MiB for the 8,192 hosts explicit routes allow).
    let hosts = net.topology.hosts as usize;
    if (hosts * hosts) as u64 > vesper_netmodels::topology::explicit::MAX_PAIRS {
        // More pairs than explicit routes are kept for: the network's build says so.
        return Ok(routes);
    }
    let mut listed = vec![0u64; (hosts * hosts).div_ceil(64)];
    for ((s, d), _) in routes.iter() {
        let bit = s.index() * hosts + d.index();
        listed[bit / 64] |= 1 << (bit % 64);
    }
    // The first unlisted bit off the diagonal, in pair order.
    let missing = (0..hosts * hosts)
        .find(|&bit| bit / hosts != bit % hosts && listed[bit / 64] & (1 << (bit % 64)) == 0)
        .map(|bit| (HostId((bit / hosts) as u32), HostId((bit % hosts) as u32)));
    if let Some((s, d)) = missing {
        return Err(at_line(file, count)(RouteRule::MissingPair {
            src: net.name(Device::Host(s)).to_string(),
            dst: net.name(Device::Host(d)).to_string(),
        }));
    }
    Ok(routes)
}

/// Writes `routes` of `net` in the canonical format.
pub fn write_canonical(routes: &RouteList, net: &NamedTopology) -> String {
    let mut out = Vec::new();
    // Writing to memory cannot fail, and every piece written is text.
    let _ = write_canonical_to(routes, net, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// Writes `routes` of `net` in the canonical format to `out`, route by route (a file
/// for 8,192 hosts is 2 GB: it is never held whole).
pub fn write_canonical_to(
    routes: &RouteList,
    net: &NamedTopology,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "# vesper routes: SOURCE DESTINATION PORT... (absolute output ports, switch by switch)"
    )?;
    for ((src, dst), ports) in routes.iter() {
        write!(
            out,
            "{} {}",
            quote(net.name(Device::Host(src))),
            quote(net.name(Device::Host(dst)))
        )?;
        for p in ports {
            write!(out, " {p}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// A turn from its written form: a route byte in hex (high bit set, 6-bit signed δ)
/// or a signed decimal δ.
fn turn(token: &str) -> Option<i32> {
    let hex = |digits: &str| u8::from_str_radix(digits, 16).ok().filter(|b| b & 0x80 != 0);
    let byte = match token.strip_prefix("0x").or_else(|| token.strip_prefix("0X")) {
        Some(digits) => hex(digits)?,
        None => match token.parse::<i32>() {
            Ok(d) if (-32..=31).contains(&d) => return Some(d),
            _ => hex(token)?,
        },
    };
    // Sign-extend the low 6 bits.
    Some(i32::from((byte << 2) as i8) >> 2)
}

/// The far end of every port's cable, for walking routes: one slot per port, hosts'
/// first, then each switch's (a walk looks up every hop of every route).
#[derive(Debug)]
pub struct Peers {
    hosts: u32,
    /// each switch's first slot
    switch_base: Vec<usize>,
    peer: Vec<Option<Endpoint>>,
}

impl Peers {
    /// The cables of `topology`, both ways.
    pub fn of(topology: &Topology) -> Peers {
        let mut switch_base = Vec::with_capacity(topology.switch_ports.len());
        let mut slots = topology.hosts as usize;
        for &ports in &topology.switch_ports {
            switch_base.push(slots);
            slots += ports as usize;
        }
        let mut peers = Peers {
            hosts: topology.hosts,
            switch_base,
            peer: vec![None; slots],
        };
        for c in &topology.cables {
            for (from, to) in [(c.a, c.b), (c.b, c.a)] {
                if let Some(slot) = peers.slot(from) {
                    peers.peer[slot] = Some(to);
                }
            }
        }
        peers
    }

    /// The slot of a port that exists.
    fn slot(&self, end: Endpoint) -> Option<usize> {
        match end.device {
            Device::Host(h) => (h.0 < self.hosts && end.port == 0).then_some(h.index()),
            Device::Switch(s) => {
                let base = *self.switch_base.get(s.index())?;
                let next = self.switch_base.get(s.index() + 1).copied().unwrap_or(self.peer.len());
                let slot = base + end.port as usize;
                (slot < next).then_some(slot)
            }
        }
    }

    /// Where the cable from `end` leads.
    pub fn get(&self, end: Endpoint) -> Option<Endpoint> {
        self.peer[self.slot(end)?]
    }

    /// The switch port host `h` is cabled to.
    fn first(&self, h: HostId) -> Result<Endpoint, WalkError> {
        self.get(Endpoint {
            device: Device::Host(h),
            port: 0,
        })
        .ok_or(WalkError::SourceWithoutCable)
    }

    /// Absolute output ports of a Myrinet route (turns) from host `src`, or why a turn
    /// leaves the switch's ports or the route runs off the network.
    pub fn turns_to_ports(&self, topology: &Topology, src: HostId, turns: &[i32]) -> Result<Vec<u32>, WalkError> {
        let mut at = self.first(src)?;
        let mut ports = Vec::with_capacity(turns.len());
        for (hop, &delta) in turns.iter().enumerate() {
            let Device::Switch(_) = at.device else {
                return Err(WalkError::TurnAtHost { turn: hop });
            };
            let out = i64::from(at.port) + i64::from(delta);
            let limit = topology.ports_of(at.device);
            if !(0..i64::from(limit)).contains(&out) {
                return Err(WalkError::TurnBeyondPorts {
                    turn: hop,
                    delta,
                    from: at,
                    ports: limit,
                });
            }
            let out = out as u32;
            ports.push(out);
            at = self.cross(at, out, Step::Turn(hop))?;
        }
        Ok(ports)
    }

    /// Where leaving `at`'s device by port `out` leads; the error names the hop.
    fn cross(&self, at: Endpoint, out: u32, step: Step) -> Result<Endpoint, WalkError> {
        let leaving = Endpoint {
            device: at.device,
            port: out,
        };
        self.get(leaving).ok_or(WalkError::NoCable { step, at: leaving })
    }

    /// Whether `ports` lead from host `src` to host `dst`, hop by hop; or where they go
    /// wrong, naming the devices as the map does.
    pub fn check_route(&self, net: &NamedTopology, src: HostId, dst: HostId, ports: &[u32]) -> Result<(), WalkError> {
        let mut at = self.first(src)?;
        for (hop, &out) in ports.iter().enumerate() {
            let here = at.device;
            if let Device::Host(_) = here {
                return Err(WalkError::HostBeforeEnd {
                    hop,
                    host: net.name(here).to_string(),
                });
            }
            let limit = net.topology.ports_of(here);
            if out >= limit {
                return Err(WalkError::NoSuchPort {
                    hop,
                    switch: net.name(here).to_string(),
                    ports: limit,
                    port: out,
                });
            }
            at = self.cross(at, out, Step::Hop(hop))?;
        }
        if at.device != Device::Host(dst) {
            return Err(WalkError::EndsElsewhere {
                end: net.name(at.device).to_string(),
                dst: net.name(Device::Host(dst)).to_string(),
            });
        }
        Ok(())
    }

    /// Myrinet turns of a route given as absolute output ports from host `src`.
    pub fn ports_to_turns(&self, src: HostId, ports: &[u32]) -> Result<Vec<i32>, WalkError> {
        let mut at = self.first(src)?;
        let mut turns = Vec::with_capacity(ports.len());
        for (hop, &out) in ports.iter().enumerate() {
            let delta = i64::from(out) - i64::from(at.port);
            if !(-32..=31).contains(&delta) {
                return Err(WalkError::TurnTooWide { hop, delta });
            }
            turns.push(delta as i32);
            at = self.cross(at, out, Step::Hop(hop))?;
        }
        Ok(turns)
    }
}

/// Reads a Myrinet route file of `net`, turning its turns into absolute ports.
pub fn read_myrinet(file: &str, text: &str, net: &NamedTopology) -> Result<RouteList, RouteFileError> {
    let mut routes = RouteList::default();
    parse_myrinet(file, &mut text_lines(text), net, &mut routes)?;
    Ok(routes)
}

/// Reads a Myrinet route file of `net` from `lines` into `routes`, in file order; the
/// lines read.
fn parse_myrinet(
    file: &str,
    lines: &mut LineSource<'_>,
    net: &NamedTopology,
    routes: &mut RouteList,
) -> Result<usize, RouteFileError> {
    let hosts = host_ids(net);
    let peers = Peers::of(&net.topology);
    let mut source = None;
    for_each_line(file, lines, |number, line| {
        let error = at_line(file, number);
        let words = words(line).map_err(&error)?;
        let Some(name) = words.first() else { return Ok(()) };
        let host = |name: &str| host_named(&hosts, name).map_err(&error);
        let length = words.get(1).and_then(|w| w.parse::<usize>().ok());
        match length {
            Some(l) if l >= 1 && words.len() == l + 2 => {
                let src = source.ok_or_else(|| error(RouteRule::RouteBeforeHeader))?;
                let dst = host(name)?;
                let turns = words[2..]
                    .iter()
                    .map(|t| turn(t).ok_or_else(|| error(RouteRule::Turn(t.to_string()))))
                    .collect::<Result<Vec<_>, _>>()?;
                let walk = |e| error(RouteRule::Walk(e));
                let ports = peers.turns_to_ports(&net.topology, src, &turns).map_err(walk)?;
                peers.check_route(net, src, dst, &ports).map_err(walk)?;
                routes
                    .try_push((src, dst), &ports)
                    .map_err(|_| error(RouteRule::NoRoom { read: routes.len() }))?;
            }
            _ if words.len() <= 2 => source = Some(host(name)?),
            _ => {
                return Err(error(RouteRule::MyrinetLine { words: words.len() }));
            }
        }
        Ok(())
    })
}

/// Writes `routes` of `net` as a Myrinet route file (turns as route bytes), a section
/// per run of routes from one source; or the first route whose turns a route byte
/// cannot hold.
pub fn write_myrinet(routes: &RouteList, net: &NamedTopology) -> Result<String, UnwritableRoute> {
    let peers = Peers::of(&net.topology);
    for ((src, dst), ports) in routes.iter() {
        peers
            .ports_to_turns(src, ports)
            .map_err(|walk| unwritable(net, src, dst, walk))?;
    }
    let mut out = Vec::new();
    // Writing to memory cannot fail, every route's turns fit (checked above), and every
    // piece written is text.
    let _ = write_myrinet_to(routes, net, &mut out);
    Ok(String::from_utf8(out).unwrap_or_default())
}

/// The route from `src` to `dst` that `walk` keeps out of a Myrinet file.
fn unwritable(net: &NamedTopology, src: HostId, dst: HostId, walk: WalkError) -> UnwritableRoute {
    UnwritableRoute {
        src: net.name(Device::Host(src)).to_string(),
        dst: net.name(Device::Host(dst)).to_string(),
        walk,
    }
}

/// [`write_myrinet`] to `out`, route by route; a route whose turns a route byte cannot
/// hold is an error of kind `Other` holding an [`UnwritableRoute`].
pub fn write_myrinet_to(routes: &RouteList, net: &NamedTopology, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let peers = Peers::of(&net.topology);
    // Sections: runs of routes from one source.
    let mut start = 0;
    while start < routes.len() {
        let src = routes.get(start).0.0;
        let end = (start..routes.len())
            .find(|&i| routes.get(i).0.0 != src)
            .unwrap_or(routes.len());
        if start > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{} {}", quote_always(net.name(Device::Host(src))), end - start)?;
        for ((_, dst), ports) in (start..end).map(|i| routes.get(i)) {
            let turns = peers
                .ports_to_turns(src, ports)
                .map_err(|walk| std::io::Error::other(unwritable(net, src, dst, walk)))?;
            write!(out, "{} {}", quote_always(net.name(Device::Host(dst))), turns.len())?;
            for t in turns {
                write!(out, " 0x{:02x}", 0x80 | (t as u8 & 0x3f))?;
            }
            writeln!(out)?;
        }
        start = end;
    }
    Ok(())
}

/// `name` quoted, as Myrinet files write names.
fn quote_always(name: &str) -> String {
    let q = quote(name);
    if q.starts_with('"') { q } else { format!("\"{q}\"") }
}

#[cfg(test)]
mod tests {
    use vesper_netmodels::{LinkParams, Xgft};

    use super::*;

    fn tree() -> NamedTopology {
        let x = Xgft::kary_ntree(2, 2).expect("valid");
        NamedTopology::with_default_names(x.topology(LinkParams::default()))
    }

    fn d_mod_k_routes() -> RouteList {
        let x = Xgft::kary_ntree(2, 2).expect("valid");
        (0..4)
            .flat_map(|s| (0..4).filter(move |&d| d != s).map(move |d| (s, d)))
            .map(|(s, d)| ((HostId(s), HostId(d)), x.d_mod_k_path(HostId(s), HostId(d))))
            .collect()
    }

    #[test]
    fn turns_decode_from_bytes_and_decimals() {
        assert_eq!(turn("0x81"), Some(1));
        assert_eq!(turn("81"), Some(1));
        assert_eq!(turn("0xbf"), Some(-1));
        assert_eq!(turn("bf"), Some(-1));
        assert_eq!(turn("0xa0"), Some(-32));
        assert_eq!(turn("-3"), Some(-3));
        assert_eq!(turn("10"), Some(10));
        assert_eq!(turn("0x10"), None);
        assert_eq!(turn("xyz"), None);
    }

    #[test]
    fn canonical_and_myrinet_files_round_trip() {
        let net = tree();
        let routes = d_mod_k_routes();
        let canonical = write_canonical(&routes, &net);
        assert!(canonical.contains("\nhost0 host3 3 1 1\n"), "{canonical}");
        assert_eq!(read_canonical("r", &canonical, &net), Ok(routes.clone()));
        let myrinet = write_myrinet(&routes, &net).expect("turns fit");
        assert!(myrinet.starts_with("\"host0\" 3\n\"host1\" 1 0x81\n"), "{myrinet}");
        assert_eq!(read_myrinet("m", &myrinet, &net), Ok(routes));
    }

    #[test]
    fn quoted_names_survive() {
        let mut net = tree();
        net.host_names[0] = "n \"0\"".into();
        let routes: RouteList = [((HostId(0), HostId(1)), vec![1])].into_iter().collect();
        let text = write_canonical(&routes, &net);
        assert!(text.contains("\"n \\\"0\\\"\" host1 1"), "{text}");
        assert_eq!(read_canonical("r", &text, &net), Ok(routes));
    }

    #[test]
    fn mistakes_name_the_line() {
        let net = tree();
        let err = |f: fn(&str, &str, &NamedTopology) -> Result<RouteList, RouteFileError>, text: &str| {
            f("r.txt", text, &net).expect_err("refused").to_string()
        };
        assert_eq!(err(read_canonical, "host0 host9 1\n"), "r.txt:1: unknown host `host9`");
        assert_eq!(
            err(read_canonical, "\nhost0\n"),
            "r.txt:2: expected SOURCE DESTINATION PORT..."
        );
        assert_eq!(
            err(read_canonical, "host0 host1 x\n"),
            "r.txt:1: expected a port number, got `x`"
        );
        assert_eq!(
            err(read_canonical, "\"host0 host1 1\n"),
            "r.txt:1: a quoted name is not closed"
        );
        assert_eq!(
            err(read_myrinet, "\"host1\" 1 0x81\n"),
            "r.txt:1: a route before its source's header"
        );
        assert_eq!(
            err(read_myrinet, "\"host0\"\n\"host1\" 1 0x9f\n"),
            "r.txt:2: turn 0 (+31) from sw0.p0 leaves its 4 ports"
        );
        assert_eq!(
            err(read_myrinet, "\"host0\"\n\"host1\" 1 0x10\n"),
            "r.txt:2: expected a route byte or a turn, got `0x10`"
        );
        // Routes are walked on the map as they are read: a missing port, a route that
        // ends elsewhere, one that runs into a host (2-ary 2-tree: host0 on sw0.p0).
        assert_eq!(
            err(read_canonical, "host0 host1 9\n"),
            "r.txt:1: hop 0: switch `sw0` has 4 ports, no port 9"
        );
        assert_eq!(
            err(read_canonical, "host0 host1 0\n"),
            "r.txt:1: the route ends at `host0`, not at `host1`"
        );
        assert_eq!(
            err(read_canonical, "host0 host1 1 3\n"),
            "r.txt:1: hop 1 arrives at host `host1` before the route ends"
        );
        assert_eq!(
            err(read_myrinet, "\"host0\"\n\"host3\" 1 0x81\n"),
            "r.txt:2: the route ends at `host1`, not at `host3`"
        );
    }

    #[test]
    fn a_file_read_a_line_at_a_time_gives_the_same_routes() {
        let net = tree();
        let routes = d_mod_k_routes();
        let flat = |text: String| read_any_from("r", std::io::Cursor::new(text.into_bytes()), &net);
        let expected = routes.clone();
        for text in [
            write_canonical(&routes, &net),
            write_myrinet(&routes, &net).expect("turns fit"),
        ] {
            // Blank lines first (the format is told by the first that holds something),
            // and Windows line ends.
            assert_eq!(flat(format!("\n# routes\n{text}")), Ok(expected.clone()));
            assert_eq!(flat(text.replace('\n', "\r\n")), Ok(expected.clone()));
        }
        // A truncated file names its last line; a file that cannot be read, the line.
        let text = write_canonical(&routes, &net);
        let cut = text.find("host0 host2").expect("a route");
        let lines = text[..cut].lines().count();
        let refused = flat(text[..cut].to_string()).expect_err("truncated");
        assert_eq!(refused.line, lines, "{refused}");
        let mut bytes = text.into_bytes();
        bytes[cut] = 0xff;
        let refused = read_any_from("r", std::io::Cursor::new(bytes), &net).expect_err("not UTF-8");
        assert_eq!(refused.line, lines + 1);
        assert_eq!(
            refused.rule.to_string(),
            format!("line {} is not UTF-8 text", lines + 1)
        );
    }

    #[test]
    fn an_endless_line_is_refused_at_the_limit() {
        // Endless bytes without a line end (/dev/zero's, say): refused having held at
        // most the limit, naming the line.
        let endless = std::io::BufReader::new(std::io::Read::chain(&b"\n\n"[..], std::io::repeat(b'0')));
        let refused = read_any_from("r", endless, &tree()).expect_err("too long");
        assert_eq!(
            refused.to_string(),
            "r:3: line 3 is longer than 1048576 bytes (1 MiB), the longest such a file may hold"
        );
    }

    #[test]
    fn every_rule_and_walk_error_reads_as_its_message() {
        let sw = |port| Endpoint {
            device: Device::Switch(vesper_netmodels::SwitchId(3)),
            port,
        };
        let walks = [
            (WalkError::SourceWithoutCable, "the source host has no cable"),
            (
                WalkError::TurnAtHost { turn: 2 },
                "turn 2 arrives at a host, not a switch",
            ),
            (
                WalkError::TurnBeyondPorts {
                    turn: 1,
                    delta: -4,
                    from: sw(2),
                    ports: 8,
                },
                "turn 1 (-4) from sw3.p2 leaves its 8 ports",
            ),
            (
                WalkError::NoCable {
                    step: Step::Turn(4),
                    at: sw(5),
                },
                "turn 4: sw3.p5 has no cable",
            ),
            (
                WalkError::NoCable {
                    step: Step::Hop(0),
                    at: sw(1),
                },
                "hop 0: sw3.p1 has no cable",
            ),
            (
                WalkError::HostBeforeEnd {
                    hop: 1,
                    host: "n1".into(),
                },
                "hop 1 arrives at host `n1` before the route ends",
            ),
            (
                WalkError::NoSuchPort {
                    hop: 0,
                    switch: "s0".into(),
                    ports: 4,
                    port: 9,
                },
                "hop 0: switch `s0` has 4 ports, no port 9",
            ),
            (
                WalkError::EndsElsewhere {
                    end: "n0".into(),
                    dst: "n1".into(),
                },
                "the route ends at `n0`, not at `n1`",
            ),
            (
                WalkError::TurnTooWide { hop: 0, delta: 32 },
                "hop 0: a turn of 32 does not fit a route byte",
            ),
        ];
        for (walk, text) in walks {
            assert_eq!(walk.to_string(), text);
        }
        let rules = [
            (
                RouteRule::Unreadable("line 3 is not UTF-8 text".into()),
                "line 3 is not UTF-8 text",
            ),
            (RouteRule::UnclosedQuote, "a quoted name is not closed"),
            (RouteRule::UnknownHost("h9".into()), "unknown host `h9`"),
            (RouteRule::CanonicalLine, "expected SOURCE DESTINATION PORT..."),
            (RouteRule::Port("x".into()), "expected a port number, got `x`"),
            (
                RouteRule::Walk(WalkError::SourceWithoutCable),
                "the source host has no cable",
            ),
            (
                RouteRule::NoRoom { read: 7 },
                "the routes do not fit in memory: 7 routes read before this one",
            ),
            (RouteRule::RouteBeforeHeader, "a route before its source's header"),
            (
                RouteRule::Turn("0x10".into()),
                "expected a route byte or a turn, got `0x10`",
            ),
            (
                RouteRule::MyrinetLine { words: 3 },
                "expected a header `\"SOURCE\"` or a route `\"DESTINATION\" LENGTH TURN...`, got 3 words",
            ),
            (
                RouteRule::MissingPair {
                    src: "a".into(),
                    dst: "b".into(),
                },
                "the file ends without a route from `a` to `b`; every pair of hosts needs one",
            ),
        ];
        for (rule, text) in rules {
            assert_eq!(rule.to_string(), text);
        }
        let unwritable = UnwritableRoute {
            src: "host0".into(),
            dst: "host32".into(),
            walk: WalkError::TurnTooWide { hop: 0, delta: 32 },
        };
        assert_eq!(
            unwritable.to_string(),
            "host0 to host32: hop 0: a turn of 32 does not fit a route byte"
        );
    }

    #[test]
    fn a_myrinet_line_of_three_words_is_neither_header_nor_route() {
        let refused = read_myrinet("r", "\"host0\"\n\"host1\" 2 0x81\n", &tree()).expect_err("refused");
        assert_eq!(
            refused.to_string(),
            "r:2: expected a header `\"SOURCE\"` or a route `\"DESTINATION\" LENGTH TURN...`, got 3 words"
        );
    }

    #[test]
    fn a_file_without_a_route_for_every_pair_is_refused() {
        let net = tree();
        let mut text = write_canonical(&d_mod_k_routes(), &net);
        assert_eq!(read_any("r", &text, &net).map(|r| r.len()), Ok(12));
        // Truncated after its first line of routes.
        text.truncate(text.find("host0 host2").expect("a route"));
        let refused = read_any("r", &text, &net).expect_err("truncated");
        assert!(
            refused
                .to_string()
                .ends_with("the file ends without a route from `host0` to `host2`; every pair of hosts needs one"),
            "{refused}"
        );
    }
}
