//! Myrinet map files: reading them (tolerantly) into [`NamedTopology`]s, one per rail,
//! and writing any topology, or a set of rails, back as a map.
//!
//! ```text
//!   s - "sw0" 8                 ◀── node header: s(witch) or h(ost), a token (any, usually
//!   0 h - "n0" 0                    "-"), the quoted name, the number of ports
//!   7 s - "sw1" 4               ◀── port lines: local port, the neighbour's kind, token,
//!   type xbar32                     name and port; read while lines start with a digit
//!                               ◀── attributes (`key value…`) up to a blank line
//!   h - "n0" 1
//!   0 s - "sw0" 0               text ──MapFile::parse──▶ MapFile ──rails(link)──▶ [NamedTopology]
//!   address 0060dd7f0001        text ◀──Display──────── MapFile ◀──from_rails──── [NamedTopology]
//! ```
//!
//! **Reading.** Blank lines separate node blocks; a header line also starts a new block
//! where the blank line is missing. Lines starting with `#` are comments. Port lines are
//! the lines of a block that start with a digit; any other line after the header is an
//! attribute, kept as a string (`type` names the switch or adapter model to
//! instantiate, as Venus's map2ned did; when given twice, the last one counts). The
//! token between the kind and the name may be anything or be left out; names are quoted
//! and may hold spaces.
//!
//! **Checks**, in this order, each reporting the first offence in file order with the
//! file and line: a node declares at most [`MAX_PORTS`] ports; names are unique; every
//! port line names a port below the node's port count, a neighbour that has a block, of
//! the kind the line says, and not itself; no port is connected twice; every link is
//! symmetric (A:p → B:q needs B:q → A:p; both lines are named). Then the network: it
//! has hosts, every host is cabled, and the rails below hold.
//!
//! **Numbering.** Hosts are numbered in file order, switches in file order (blocks of
//! both kinds may be interleaved). Switch ports keep their map numbers. A cable is
//! listed at the earlier of its two port lines, in file order, with that line's node as
//! its `a` end. Every cable gets the same [`LinkParams`] (map files carry no rates or
//! delays); the routing is [`Routing::ShortestPath`].
//!
//! **Rails.** A host with several connected ports is a multi-rail host. Rail `r` is the
//! network reached from every host's port `r`: so every host needs a cable on each port
//! `0..R` (R = one more than the highest connected host port), port `r` of every host
//! must reach the network that the first host's port `r` reaches, and these networks
//! must be disjoint. Each rail becomes a [`NamedTopology`] with all hosts, in the same
//! order, and that rail's switches; a host's map port `r` is its port 0 (a `Topology`
//! host has one port) in rail `r`. Every switch must belong to a rail.
//!
//! **Writing** ([`MapFile::from_rails`], then `Display`): the switches of rail 0, 1, …
//! in id order, then the hosts with one port per rail; each block lists its connected
//! ports in increasing order, then `type` (if the switch has one) and, optionally,
//! `address`. The output is deterministic and reads back to the same topologies.

use std::collections::{HashMap, HashSet};
use std::fmt;

use vesper_netmodels::{Cable, Device, Endpoint, HostId, LinkParams, Routing, SwitchId, Topology};

use crate::error::FileError;
use crate::named::NamedTopology;

mod parse;

pub use parse::Expected;

/// The most ports a node may declare: enough for any crossbar a simulation can hold,
/// small enough that a typo cannot make the simulator allocate gigabytes.
pub const MAX_PORTS: u32 = 1 << 20;

/// The largest map file read \[bytes\]: maps are read whole, and a 32,768-host tree or
/// torus written by map2topo takes 4–6 MB.
pub const MAX_MAP_BYTES: u64 = 256 * vesper_input::MIB;

/// Whether a node is a switch or a host (an adapter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeKind {
    /// `s`
    Switch,
    /// `h`
    Host,
}

impl NodeKind {
    /// The letter of the map format.
    pub fn letter(self) -> char {
        match self {
            NodeKind::Switch => 's',
            NodeKind::Host => 'h',
        }
    }
}

impl fmt::Display for NodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NodeKind::Switch => "switch",
            NodeKind::Host => "host",
        })
    }
}

/// One port line: a cable from a port of this node to a port of a neighbour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapLink {
    /// the local port
    pub port: u32,
    /// the neighbour's kind, as the line says
    pub peer_kind: NodeKind,
    /// the neighbour's name
    pub peer: String,
    /// the neighbour's port
    pub peer_port: u32,
    /// 1-based line in the file (0 when not read from a file)
    pub line: usize,
}

/// One node block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapNode {
    /// switch or host
    pub kind: NodeKind,
    /// the name, unique in the file
    pub name: String,
    /// number of ports (connected or not)
    pub ports: u32,
    /// the port lines, in file order
    pub links: Vec<MapLink>,
    /// the attribute lines (key, value), in file order
    pub attributes: Vec<(String, String)>,
    /// 1-based line of the header (0 when not read from a file)
    pub line: usize,
}

impl MapNode {
    /// The value of the last attribute `key`, if any.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The `type` attribute: the switch or adapter model to instantiate (none if empty).
    pub fn model(&self) -> Option<&str> {
        self.attribute("type").filter(|v| !v.is_empty())
    }
}

/// A map file as written: its nodes in file order. Nothing is checked until
/// [`MapFile::rails`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapFile {
    /// the name errors give the file
    pub file: String,
    /// the node blocks, in file order
    pub nodes: Vec<MapNode>,
}

/// Options of the map writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteOptions {
    /// give every host an `address` attribute: `0060dd` (Myricom's prefix) then the
    /// host id in six hex digits
    pub addresses: bool,
}

/// A map that breaks a rule: the file, the line, and the rule.
pub type MapError = FileError<MapErrorKind>;

/// The rule a map breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MapErrorKind {
    /// a line that does not follow the grammar
    #[error("column {column}: expected {expected}, found {found:?}")]
    Syntax {
        /// 1-based column (bytes)
        column: usize,
        /// what the grammar wanted there
        expected: Expected,
        /// the text there (at most 40 bytes) or `end of line`
        found: String,
    },
    /// a node with more than [`MAX_PORTS`] ports
    #[error("too many ports: \"{name}\" declares {ports} ports, at most {MAX_PORTS}")]
    TooManyPorts {
        /// the node
        name: String,
        /// its port count
        ports: u32,
    },
    /// two blocks with one name
    #[error("duplicate name: \"{name}\" already has a block at line {first_line}")]
    DuplicateName {
        /// the name
        name: String,
        /// the line of the first block
        first_line: usize,
    },
    /// a port line beyond the node's port count
    #[error("port beyond nports: \"{name}\" {}, no port {port}", port_range(*ports))]
    PortBeyondCount {
        /// the node
        name: String,
        /// the port named
        port: u32,
        /// the node's port count
        ports: u32,
    },
    /// a port line naming a node that has no block
    #[error("unknown neighbour: \"{name}\" port {port} leads to \"{neighbour}\", which has no block")]
    UnknownNeighbour {
        /// the node
        name: String,
        /// its port
        port: u32,
        /// the name with no block
        neighbour: String,
    },
    /// a port line that calls its neighbour a switch when it is a host, or the reverse
    #[error(
        "wrong neighbour kind: \"{name}\" port {port} leads to {said} \"{neighbour}\", \
         but \"{neighbour}\" is a {is} (line {neighbour_line})"
    )]
    NeighbourKind {
        /// the node
        name: String,
        /// its port
        port: u32,
        /// the neighbour
        neighbour: String,
        /// the kind the port line gives
        said: NodeKind,
        /// the kind of the neighbour's block
        is: NodeKind,
        /// the neighbour's header line
        neighbour_line: usize,
    },
    /// a port cabled to itself
    #[error("self link: \"{name}\" port {port} leads to itself")]
    SelfLink {
        /// the node
        name: String,
        /// the port
        port: u32,
    },
    /// two port lines for one port
    #[error("port used twice: \"{name}\" port {port} is already connected at line {first_line}")]
    PortUsedTwice {
        /// the node
        name: String,
        /// the port
        port: u32,
        /// the line of the first port line
        first_line: usize,
    },
    /// A:p → B:q, but B's port q is not connected
    #[error(
        "asymmetric link: \"{name}\" port {port} leads to \"{neighbour}\" port {neighbour_port}, \
         but \"{neighbour}\" port {neighbour_port} is not connected (block at line {neighbour_line})"
    )]
    AsymmetricMissing {
        /// the node
        name: String,
        /// its port
        port: u32,
        /// the neighbour
        neighbour: String,
        /// the neighbour's port
        neighbour_port: u32,
        /// the neighbour's header line
        neighbour_line: usize,
    },
    /// A:p → B:q, but B's port q leads elsewhere
    #[error(
        "asymmetric link: \"{name}\" port {port} leads to \"{neighbour}\" port {neighbour_port}, \
         but \"{neighbour}\" port {neighbour_port} leads to \"{back}\" port {back_port} (line {back_line})"
    )]
    AsymmetricElsewhere {
        /// the node
        name: String,
        /// its port
        port: u32,
        /// the neighbour
        neighbour: String,
        /// the neighbour's port
        neighbour_port: u32,
        /// where the neighbour's port leads
        back: String,
        /// the port it leads to
        back_port: u32,
        /// the neighbour's port line
        back_line: usize,
    },
    /// a network needs hosts
    #[error("the map has no hosts")]
    NoHosts,
    /// a host without any cable
    #[error("disconnected network: host \"{name}\" has no cable")]
    HostNotConnected {
        /// the host
        name: String,
    },
    /// a host that lacks a port another host uses: rails need every host
    #[error(
        "rails with different hosts: \"{name}\" has no cable on port {port}, but \"{other}\" \
         port {other_port} is connected (line {other_line}): every host needs a cable on each \
         of ports 0 to {other_port}, one per rail"
    )]
    RailPortMissing {
        /// the host
        name: String,
        /// its unconnected port
        port: u32,
        /// the host with the highest connected port
        other: String,
        /// that port
        other_port: u32,
        /// its port line
        other_line: usize,
    },
    /// two rails joined by a cable
    #[error(
        "rails not disjoint: \"{name}\" port {port} reaches the network of \"{other}\" port {other_port} (line {other_line})"
    )]
    RailsJoined {
        /// the host
        name: String,
        /// its port (rail)
        port: u32,
        /// the reference host (the first host)
        other: String,
        /// the port (rail) whose network it reaches
        other_port: u32,
        /// that port's line
        other_line: usize,
    },
    /// a host port that does not reach its rail
    #[error("disconnected network: \"{name}\" port {port} does not reach \"{other}\" port {port} (line {other_line})")]
    Disconnected {
        /// the host
        name: String,
        /// its port (rail)
        port: u32,
        /// the reference host (the first host)
        other: String,
        /// the reference host's port line
        other_line: usize,
    },
    /// a switch in no host's network
    #[error("disconnected network: \"{name}\" reaches no host")]
    SwitchWithoutHost {
        /// the switch
        name: String,
    },
}

/// A node's ports, for an error: "has 8 ports (0 to 7)", or "has no ports".
fn port_range(ports: u32) -> String {
    match ports {
        0 => "has no ports".to_string(),
        n => format!("has {n} ports (0 to {})", n - 1),
    }
}

/// Why topologies cannot be written as one map.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// nothing to write
    #[error("a map needs at least one rail")]
    NoRails,
    /// a topology whose name lists do not match its devices
    #[error(
        "rail {rail}: {hosts} hosts and {switches} switches, but {host_names} host names and {switch_names} switch names"
    )]
    NameCount {
        /// the rail
        rail: usize,
        /// hosts of the topology
        hosts: u32,
        /// switches of the topology
        switches: usize,
        /// host names given
        host_names: usize,
        /// switch names given
        switch_names: usize,
    },
    /// rails with different hosts
    #[error(
        "rail {rail}: host {host} is \"{name}\", but \"{first}\" in rail 0: rails must have the same hosts in the same order"
    )]
    RailHosts {
        /// the rail
        rail: usize,
        /// the host id
        host: usize,
        /// its name in this rail (`?` if missing)
        name: String,
        /// its name in rail 0 (`?` if missing)
        first: String,
    },
    /// two devices with one name
    #[error("duplicate name \"{0}\": switch names must differ across rails and from host names")]
    DuplicateName(String),
    /// a name or model a map cannot hold
    #[error("{0:?}: names and models cannot contain quotes or line breaks")]
    BadName(String),
}

/// Reads a map file into its rails (one [`NamedTopology`] for a single-rail map), every
/// cable with `link`. `file` names the file in errors.
pub fn read_map(file: &str, text: &str, link: LinkParams) -> Result<Vec<NamedTopology>, MapError> {
    MapFile::parse(file, text)?.rails(link)
}

/// Writes one topology as a map (see [`MapFile::from_rails`]).
pub fn write_map(topology: &NamedTopology, options: WriteOptions) -> Result<String, WriteError> {
    Ok(MapFile::from_rails(std::slice::from_ref(topology), options)?.to_string())
}

/// A map read line by line: the block being filled.
struct Reader<'a> {
    file: &'a str,
    nodes: Vec<MapNode>,
    in_block: bool,
}

impl Reader<'_> {
    fn error(&self, line: usize, kind: MapErrorKind) -> MapError {
        MapError::new(self.file, line, kind)
    }

    fn syntax(&self, line: usize, e: parse::SyntaxError) -> MapError {
        self.error(
            line,
            MapErrorKind::Syntax {
                column: e.column,
                expected: e.expected,
                found: e.found,
            },
        )
    }

    fn header(&mut self, number: usize, header: parse::Header<'_>) {
        self.nodes.push(MapNode {
            kind: header.kind,
            name: header.name.to_string(),
            ports: header.ports,
            links: Vec::new(),
            attributes: Vec::new(),
            line: number,
        });
        self.in_block = true;
    }

    fn line(&mut self, number: usize, line: &str) -> Result<(), MapError> {
        if parse::is_blank_line(line) {
            self.in_block = false;
            return Ok(());
        }
        if line.trim_start_matches(vesper_input::syntax::is_blank).starts_with('#') {
            return Ok(());
        }
        if !self.in_block {
            let header = parse::parse_header(line).map_err(|e| self.syntax(number, e))?;
            self.header(number, header);
            return Ok(());
        }
        if parse::starts_with_digit(line) {
            let port = parse::parse_port_line(line).map_err(|e| self.syntax(number, e))?;
            if let Some(node) = self.nodes.last_mut() {
                node.links.push(MapLink {
                    port: port.port,
                    peer_kind: port.peer_kind,
                    peer: port.peer.to_string(),
                    peer_port: port.peer_port,
                    line: number,
                });
            }
            return Ok(());
        }
        // A header where the blank line before it is missing starts a new block.
        if let Ok(header) = parse::parse_header(line) {
            self.header(number, header);
            return Ok(());
        }
        let (key, value) = parse::parse_attribute(line);
        if let Some(node) = self.nodes.last_mut() {
            node.attributes.push((key.to_string(), value.to_string()));
        }
        Ok(())
    }
}

/// The links resolved: for every node, its ports in order and every link's neighbour.
struct Resolved {
    /// per node: (port, link index) sorted by port, then by line
    ports: Vec<Vec<(u32, u32)>>,
    /// per node, per link: the neighbour's node index
    peer: Vec<Vec<usize>>,
}

impl Resolved {
    /// The link index of `node`'s port `port` (the first line, if given twice).
    fn link_at(&self, node: usize, port: u32) -> Option<usize> {
        let table = &self.ports[node];
        let at = table.partition_point(|&(p, _)| p < port);
        table.get(at).filter(|&&(p, _)| p == port).map(|&(_, l)| l as usize)
    }
}

/// Union-find over the map's network pieces, for rails and connectivity.
struct Pieces {
    parent: Vec<u32>,
}

impl Pieces {
    fn new(n: usize) -> Pieces {
        Pieces {
            parent: (0..n as u32).collect(),
        }
    }

    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let up = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = up;
            x = up;
        }
        x
    }

    fn join(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        // The smaller root wins: the result does not depend on the order of joins.
        let (low, high) = (a.min(b), a.max(b));
        self.parent[high as usize] = low;
    }
}

impl MapFile {
    /// Reads the text of a map file (grammar only; see [`MapFile::rails`] for the
    /// checks). `file` names the file in errors.
    pub fn parse(file: &str, text: &str) -> Result<MapFile, MapError> {
        let mut reader = Reader {
            file,
            nodes: Vec::new(),
            in_block: false,
        };
        for (index, line) in text.lines().enumerate() {
            reader.line(index + 1, line)?;
        }
        Ok(MapFile {
            file: file.to_string(),
            nodes: reader.nodes,
        })
    }

    fn error(&self, line: usize, kind: MapErrorKind) -> MapError {
        MapError::new(&self.file, line, kind)
    }

    /// Checks names, ports and links (see the module documentation, in that order).
    fn resolve(&self) -> Result<Resolved, MapError> {
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(self.nodes.len());
        for (n, node) in self.nodes.iter().enumerate() {
            if node.ports > MAX_PORTS {
                return Err(self.error(
                    node.line,
                    MapErrorKind::TooManyPorts {
                        name: node.name.clone(),
                        ports: node.ports,
                    },
                ));
            }
            if let Some(&first) = index.get(node.name.as_str()) {
                return Err(self.error(
                    node.line,
                    MapErrorKind::DuplicateName {
                        name: node.name.clone(),
                        first_line: self.nodes[first].line,
                    },
                ));
            }
            index.insert(&node.name, n);
        }
        let ports: Vec<Vec<(u32, u32)>> = self
            .nodes
            .iter()
            .map(|node| {
                let mut table: Vec<(u32, u32)> =
                    node.links.iter().enumerate().map(|(l, k)| (k.port, l as u32)).collect();
                // Links are in line order, so a stable sort keeps the first line first.
                table.sort_by_key(|&(port, _)| port);
                table
            })
            .collect();
        let mut peer = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let mut peers = Vec::with_capacity(node.links.len());
            for link in &node.links {
                let name = node.name.clone();
                if link.port >= node.ports {
                    return Err(self.error(
                        link.line,
                        MapErrorKind::PortBeyondCount {
                            name,
                            port: link.port,
                            ports: node.ports,
                        },
                    ));
                }
                let Some(&p) = index.get(link.peer.as_str()) else {
                    return Err(self.error(
                        link.line,
                        MapErrorKind::UnknownNeighbour {
                            name,
                            port: link.port,
                            neighbour: link.peer.clone(),
                        },
                    ));
                };
                let neighbour = &self.nodes[p];
                if neighbour.kind != link.peer_kind {
                    return Err(self.error(
                        link.line,
                        MapErrorKind::NeighbourKind {
                            name,
                            port: link.port,
                            neighbour: link.peer.clone(),
                            said: link.peer_kind,
                            is: neighbour.kind,
                            neighbour_line: neighbour.line,
                        },
                    ));
                }
                if neighbour.name == node.name && link.peer_port == link.port {
                    return Err(self.error(link.line, MapErrorKind::SelfLink { name, port: link.port }));
                }
                peers.push(p);
            }
            peer.push(peers);
        }
        let resolved = Resolved { ports, peer };
        for (n, node) in self.nodes.iter().enumerate() {
            for link in &node.links {
                let first = resolved.link_at(n, link.port).map(|l| node.links[l].line);
                if let Some(first_line) = first.filter(|&first| first != link.line) {
                    return Err(self.error(
                        link.line,
                        MapErrorKind::PortUsedTwice {
                            name: node.name.clone(),
                            port: link.port,
                            first_line,
                        },
                    ));
                }
            }
        }
        for (n, node) in self.nodes.iter().enumerate() {
            for (l, link) in node.links.iter().enumerate() {
                let p = resolved.peer[n][l];
                let neighbour = &self.nodes[p];
                let Some(back) = resolved.link_at(p, link.peer_port) else {
                    return Err(self.error(
                        link.line,
                        MapErrorKind::AsymmetricMissing {
                            name: node.name.clone(),
                            port: link.port,
                            neighbour: neighbour.name.clone(),
                            neighbour_port: link.peer_port,
                            neighbour_line: neighbour.line,
                        },
                    ));
                };
                if resolved.peer[p][back] != n || neighbour.links[back].peer_port != link.port {
                    let back = &neighbour.links[back];
                    return Err(self.error(
                        link.line,
                        MapErrorKind::AsymmetricElsewhere {
                            name: node.name.clone(),
                            port: link.port,
                            neighbour: neighbour.name.clone(),
                            neighbour_port: link.peer_port,
                            back: back.peer.clone(),
                            back_port: back.peer_port,
                            back_line: back.line,
                        },
                    ));
                }
            }
        }
        Ok(resolved)
    }

    /// Checks the map and splits it into rails (see the module documentation): one
    /// [`NamedTopology`] per rail, every cable with `link`, routed by shortest paths.
    pub fn rails(&self, params: LinkParams) -> Result<Vec<NamedTopology>, MapError> {
        let resolved = self.resolve()?;
        let hosts: Vec<usize> = (0..self.nodes.len())
            .filter(|&n| self.nodes[n].kind == NodeKind::Host)
            .collect();
        let Some(&first) = hosts.first() else {
            return Err(self.error(0, MapErrorKind::NoHosts));
        };
        // Rails: one more than the highest connected host port, and the host that has it.
        let mut rails = 0u32;
        let mut widest = first;
        for &h in &hosts {
            let node = &self.nodes[h];
            let Some(&(top, _)) = resolved.ports[h].last() else {
                return Err(self.error(
                    node.line,
                    MapErrorKind::HostNotConnected {
                        name: node.name.clone(),
                    },
                ));
            };
            if top + 1 > rails {
                rails = top + 1;
                widest = h;
            }
        }
        for &h in &hosts {
            if let Some(port) = (0..rails).find(|&r| resolved.link_at(h, r).is_none()) {
                let wide = &self.nodes[widest];
                let other_line = resolved
                    .link_at(widest, rails - 1)
                    .map_or(wide.line, |l| wide.links[l].line);
                return Err(self.error(
                    self.nodes[h].line,
                    MapErrorKind::RailPortMissing {
                        name: self.nodes[h].name.clone(),
                        port,
                        other: wide.name.clone(),
                        other_port: rails - 1,
                        other_line,
                    },
                ));
            }
        }

        // Pieces: one per switch, one per host port line; cables join them.
        let mut piece_base = Vec::with_capacity(self.nodes.len());
        let mut pieces = 0usize;
        for node in &self.nodes {
            piece_base.push(pieces as u32);
            pieces += match node.kind {
                NodeKind::Switch => 1,
                NodeKind::Host => node.links.len(),
            };
        }
        let piece = |n: usize, l: usize| match self.nodes[n].kind {
            NodeKind::Switch => piece_base[n],
            NodeKind::Host => piece_base[n] + l as u32,
        };
        let mut uf = Pieces::new(pieces);
        for (n, node) in self.nodes.iter().enumerate() {
            for (l, link) in node.links.iter().enumerate() {
                let p = resolved.peer[n][l];
                let back = resolved.link_at(p, link.peer_port).unwrap_or(0);
                uf.join(piece(n, l), piece(p, back));
            }
        }
        let host_piece = |uf: &mut Pieces, h: usize, r: u32| {
            let l = resolved.link_at(h, r).unwrap_or(0);
            (uf.find(piece(h, l)), self.nodes[h].links[l].line)
        };
        let rail_piece: Vec<(u32, usize)> = (0..rails).map(|r| host_piece(&mut uf, first, r)).collect();
        let reference = &self.nodes[first];
        for (r, &(root, line)) in rail_piece.iter().enumerate() {
            if let Some(earlier) = rail_piece[..r].iter().position(|&(other, _)| other == root) {
                return Err(self.error(
                    line,
                    MapErrorKind::RailsJoined {
                        name: reference.name.clone(),
                        port: r as u32,
                        other: reference.name.clone(),
                        other_port: earlier as u32,
                        other_line: rail_piece[earlier].1,
                    },
                ));
            }
        }
        for &h in &hosts {
            for r in 0..rails {
                let (root, line) = host_piece(&mut uf, h, r);
                if root == rail_piece[r as usize].0 {
                    continue;
                }
                let name = self.nodes[h].name.clone();
                let other = reference.name.clone();
                let kind = match rail_piece.iter().position(|&(other, _)| other == root) {
                    Some(joined) => MapErrorKind::RailsJoined {
                        name,
                        port: r,
                        other,
                        other_port: joined as u32,
                        other_line: rail_piece[joined].1,
                    },
                    None => MapErrorKind::Disconnected {
                        name,
                        port: r,
                        other,
                        other_line: rail_piece[r as usize].1,
                    },
                };
                return Err(self.error(line, kind));
            }
        }
        // The rail of every switch, and its id there.
        let mut rail_of = vec![u32::MAX; self.nodes.len()];
        let mut id_in_rail = vec![0u32; self.nodes.len()];
        let mut switch_count = vec![0u32; rails as usize];
        for (n, node) in self.nodes.iter().enumerate() {
            if node.kind == NodeKind::Host {
                continue;
            }
            let root = uf.find(piece(n, 0));
            let Some(r) = rail_piece.iter().position(|&(other, _)| other == root) else {
                return Err(self.error(
                    node.line,
                    MapErrorKind::SwitchWithoutHost {
                        name: node.name.clone(),
                    },
                ));
            };
            rail_of[n] = r as u32;
            id_in_rail[n] = switch_count[r];
            switch_count[r] += 1;
        }
        for (h, &n) in hosts.iter().enumerate() {
            id_in_rail[n] = h as u32;
        }

        let host_names: Vec<String> = hosts.iter().map(|&h| self.nodes[h].name.clone()).collect();
        let host_types: Vec<Option<String>> = hosts
            .iter()
            .map(|&h| self.nodes[h].model().map(str::to_string))
            .collect();
        let mut out: Vec<NamedTopology> = (0..rails as usize)
            .map(|r| NamedTopology {
                topology: Topology {
                    hosts: hosts.len() as u32,
                    switch_ports: Vec::with_capacity(switch_count[r] as usize),
                    cables: Vec::new(),
                    routing: Routing::ShortestPath,
                },
                host_names: host_names.clone(),
                switch_names: Vec::with_capacity(switch_count[r] as usize),
                switch_types: Vec::with_capacity(switch_count[r] as usize),
                host_types: host_types.clone(),
            })
            .collect();
        let endpoint = |n: usize, port: u32| match self.nodes[n].kind {
            NodeKind::Host => Endpoint {
                device: Device::Host(HostId(id_in_rail[n])),
                port: 0,
            },
            NodeKind::Switch => Endpoint {
                device: Device::Switch(SwitchId(id_in_rail[n])),
                port,
            },
        };
        for (n, node) in self.nodes.iter().enumerate() {
            if node.kind == NodeKind::Switch {
                let rail = &mut out[rail_of[n] as usize];
                rail.topology.switch_ports.push(node.ports);
                rail.switch_names.push(node.name.clone());
                rail.switch_types.push(node.model().map(str::to_string));
            }
            for (l, link) in node.links.iter().enumerate() {
                let p = resolved.peer[n][l];
                let back = resolved.link_at(p, link.peer_port).unwrap_or(0);
                // Listed once, at the earlier line (maps built in memory have no lines:
                // then the earlier node).
                if (self.nodes[p].links[back].line, p, back) < (link.line, n, l) {
                    continue;
                }
                let rail = match node.kind {
                    NodeKind::Switch => rail_of[n],
                    NodeKind::Host => link.port,
                };
                out[rail as usize].topology.cables.push(Cable {
                    a: endpoint(n, link.port),
                    b: endpoint(p, link.peer_port),
                    link: params,
                });
            }
        }
        Ok(out)
    }

    /// The map of one or more rails joining the same hosts: host `h`'s port 0 in rail
    /// `r` becomes its port `r`. Switch names must differ across rails (see
    /// [`NamedTopology::with_rail_names`]) and from host names.
    pub fn from_rails(rails: &[NamedTopology], options: WriteOptions) -> Result<MapFile, WriteError> {
        let Some(first) = rails.first() else {
            return Err(WriteError::NoRails);
        };
        let host_names = &first.host_names;
        for (r, rail) in rails.iter().enumerate() {
            let t = &rail.topology;
            if t.hosts as usize != rail.host_names.len()
                || t.switch_ports.len() != rail.switch_names.len()
                || t.switch_ports.len() != rail.switch_types.len()
            {
                return Err(WriteError::NameCount {
                    rail: r,
                    hosts: t.hosts,
                    switches: t.switch_ports.len(),
                    host_names: rail.host_names.len(),
                    switch_names: rail.switch_names.len(),
                });
            }
            let longest = host_names.len().max(rail.host_names.len());
            if let Some(host) = (0..longest).find(|&h| rail.host_names.get(h) != host_names.get(h)) {
                let name = |names: &[String]| names.get(host).cloned().unwrap_or_else(|| "?".to_string());
                return Err(WriteError::RailHosts {
                    rail: r,
                    host,
                    name: name(&rail.host_names),
                    first: name(host_names),
                });
            }
        }
        let mut seen: HashSet<&str> = HashSet::new();
        let names = host_names
            .iter()
            .chain(rails.iter().flat_map(|rail| rail.switch_names.iter()));
        for name in names {
            if name.contains(['"', '\n', '\r']) {
                return Err(WriteError::BadName(name.clone()));
            }
            if !seen.insert(name) {
                return Err(WriteError::DuplicateName(name.clone()));
            }
        }
        let models = rails.iter().flat_map(|rail| rail.switch_types.iter().flatten());
        if let Some(model) = models.into_iter().find(|m| m.contains(['\n', '\r'])) {
            return Err(WriteError::BadName(model.clone()));
        }

        // Nodes: the switches of every rail, then the hosts.
        let mut switch_base = Vec::with_capacity(rails.len());
        let mut nodes = Vec::new();
        for rail in rails {
            switch_base.push(nodes.len());
            for (s, name) in rail.switch_names.iter().enumerate() {
                let mut attributes = Vec::new();
                if let Some(model) = &rail.switch_types[s] {
                    attributes.push(("type".to_string(), model.clone()));
                }
                nodes.push(MapNode {
                    kind: NodeKind::Switch,
                    name: name.clone(),
                    ports: rail.topology.switch_ports[s],
                    links: Vec::new(),
                    attributes,
                    line: 0,
                });
            }
        }
        let host_base = nodes.len();
        for (h, name) in host_names.iter().enumerate() {
            let mut attributes = Vec::new();
            if let Some(model) = first.host_types.get(h).cloned().flatten() {
                attributes.push(("type".to_string(), model));
            }
            if options.addresses {
                attributes.push(("address".to_string(), format!("0060dd{:06x}", h)));
            }
            nodes.push(MapNode {
                kind: NodeKind::Host,
                name: name.clone(),
                ports: rails.len() as u32,
                links: Vec::new(),
                attributes,
                line: 0,
            });
        }
        for (r, rail) in rails.iter().enumerate() {
            // (node, port) of a cable end in the map
            let place = |end: Endpoint| match end.device {
                Device::Host(h) => (host_base + h.index(), r as u32),
                Device::Switch(s) => (switch_base[r] + s.index(), end.port),
            };
            for cable in &rail.topology.cables {
                let (a, b) = (place(cable.a), place(cable.b));
                for ((n, port), (p, peer_port)) in [(a, b), (b, a)] {
                    let peer = &nodes[p];
                    let link = MapLink {
                        port,
                        peer_kind: peer.kind,
                        peer: peer.name.clone(),
                        peer_port,
                        line: 0,
                    };
                    nodes[n].links.push(link);
                }
            }
        }
        for node in &mut nodes {
            node.links.sort_by_key(|link| link.port);
        }
        Ok(MapFile {
            file: "map".to_string(),
            nodes,
        })
    }
}

/// Writes the map: blocks separated by blank lines, as [`MapFile::parse`] reads them.
impl fmt::Display for MapFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, node) in self.nodes.iter().enumerate() {
            if n > 0 {
                writeln!(f)?;
            }
            writeln!(f, "{} - \"{}\" {}", node.kind.letter(), node.name, node.ports)?;
            for link in &node.links {
                writeln!(
                    f,
                    "{} {} - \"{}\" {}",
                    link.port,
                    link.peer_kind.letter(),
                    link.peer,
                    link.peer_port
                )?;
            }
            for (key, value) in &node.attributes {
                if value.is_empty() {
                    writeln!(f, "{key}")?;
                } else {
                    writeln!(f, "{key} {value}")?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
