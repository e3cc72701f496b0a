//! InfiniBand fabrics: `ibnetdiscover` topology dumps into a [`NamedTopology`], and
//! `ibroute`-style forwarding-table dumps into per-switch tables (destination LID →
//! output port), for the routes to follow a real subnet manager's choices.
//!
//! ```text
//!   vendid=0x2c9                                        ◀── key=value lines before a header
//!   switchguid=0x3048ffff95fd1a(3048ffff95fd1a)             (switchguid / caguid: the GUID)
//!   Switch 8 "S-003048ffff95fd1a"  # "sw1" base port 0 lid 1 lmc 0
//!   [1]  "H-003048ffff957274"[1](3048ffff957275)  # "n101-1" lid 21 4xSDR
//!    │         │                 │                           └ the neighbour's LID
//!    │         └ the neighbour   └ its port (and port GUID, optional)
//!    └ the local port (optionally followed by its port GUID)
//!
//!   Ca 2 "H-003048ffff957274"  # "n101-1"
//!   [1](3048ffff957275)  "S-003048ffff95fd1a"[1]  # lid 21 lmc 0 "sw1" lid 1 4xSDR
//!                                                     └ this port's own LID
//! ```
//!
//! **Reading** ([`read_ibnetdiscover`]): lines starting with `#` and blank lines are
//! skipped; link lines belong to the last header. `Switch`, `Ca` and `Rt` nodes are
//! read; a router forwards as a switch does and becomes one. A port may carry a
//! switch's external label (`[1][ext 17]`), which is not kept. Names are the quoted ids
//! (`S-<guid>`, `H-<guid>`): they are unique, where descriptions often repeat; the
//! descriptions are kept beside them. A link listed on both sides must agree; a link
//! listed on one side only is accepted. The checks report the first offence in file
//! order: duplicate ids, ports outside `1..=nports` (IB ports are 1-based; port 0 is a
//! switch's management port and carries no cable), unknown neighbours, self links,
//! ports connected twice, asymmetric links; then the network: it has hosts and is
//! connected.
//!
//! **Numbering.** IB port `p` becomes port `p − 1`: a switch with `n` ports has ports
//! `0..n`. Every connected port of a CA is a host (a `Topology` host has one port),
//! numbered by CA in file order, then by port; it is named by the CA's id, or
//! `<id>[<port>]` when the CA has several connected ports. Switches are numbered in
//! file order. A cable is listed at the earlier of its lines, that line's node as its
//! `a` end; every cable gets the same [`LinkParams`]; the routing is
//! [`Routing::ShortestPath`] until forwarding tables are used by the routes.
//!
//! **LIDs.** A host's LID is the `lid <n>` that starts the comment of its CA's link line
//! (its own LID), or else the `lid <n>` after the description on the switch's line that
//! leads to it. A switch's LID is the `lid <n>` of its header.
//!
//! **Forwarding tables** ([`read_forwarding_tables`], then
//! [`IbFabric::attach_forwarding`]) in `ibroute` / `dump_lfts` output:
//!
//! ```text
//!   Unicast lids [0x0-0x8] of switch Lid 2 guid 0x0002c90200232118 (MT47396 Infiniscale-III):
//!     Lid  Out   Destination
//!          Port     Info
//!   0x0001 002 : (Channel Adapter portguid 0x0002c90200219a91: 'node1 HCA-1')
//!   0x0002 000 : (Switch portguid 0x0002c90200232118: 'MT47396 Infiniscale-III')
//!   2 valid lids dumped
//! ```
//!
//! Accepted: any number of such sections; the column titles (lines starting `Lid` or
//! `Port`) and trailers (`… lids dumped`) are skipped, as are blank lines, `#` lines and
//! `Multicast mlids …` sections up to the next `Unicast` header. An entry is a LID in hex
//! and an output port in decimal, optionally followed by `:` and anything. A section is
//! matched to its switch by GUID (from `switchguid=`, or the id `S-<guid>`), else by
//! LID. Entries to port 0 (the switch itself) and to port 255 (no route) lead out
//! nowhere (a route that needs one is refused, naming the entry's line); other ports
//! become `port − 1`, as in the topology.

use std::collections::{BTreeMap, HashMap};

use vesper_netmodels::{Cable, Device, Endpoint, HostId, LinkParams, Routing, SwitchId, Topology};

use crate::error::FileError;
use crate::named::NamedTopology;

mod parse;

pub use parse::Expected;
use parse::{Comment, HeaderKind, LftLine, TopoLine};

/// The port a forwarding entry names when the destination is unreachable.
const NO_ROUTE: u32 = 255;

/// An InfiniBand fabric read from an `ibnetdiscover` dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IbFabric {
    /// hosts (CA ports), switches and cables, named by their ids
    pub topology: NamedTopology,
    /// the LID of each host, by host id, if the dump gives it
    pub host_lids: Vec<Option<u32>>,
    /// the description of each host's CA, by host id (empty if none)
    pub host_descriptions: Vec<String>,
    /// the LID of each switch, by switch id, if the dump gives it
    pub switch_lids: Vec<Option<u32>>,
    /// the GUID of each switch, by switch id, if the dump gives it
    pub switch_guids: Vec<Option<u64>>,
    /// the description of each switch, by switch id (empty if none)
    pub switch_descriptions: Vec<String>,
    /// the forwarding table of each switch, by switch id: destination LID → its entry;
    /// empty until [`IbFabric::attach_forwarding`]
    pub forwarding: Vec<BTreeMap<u32, Forward>>,
    /// the dump's name, and the line of each host's CA header, by host id (for errors)
    pub dump_file: String,
    pub host_lines: Vec<usize>,
    /// the forwarding tables' name (empty until attached), and the line of each
    /// switch's last section in them, by switch id (0: none)
    pub tables_file: String,
    pub section_lines: Vec<usize>,
}

/// A switch's forwarding entry for a destination LID, as attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forward {
    /// the port written, IB numbering (0: the switch itself, 255: no route)
    pub ib_port: u32,
    /// the entry's line in the tables
    pub line: usize,
}

impl Forward {
    /// The output port (topology numbering, IB port − 1), if the entry leaves the
    /// switch: `None` for port 0 (the switch itself) and 255 (no route).
    pub fn output(&self) -> Option<u32> {
        (self.ib_port != 0 && self.ib_port != NO_ROUTE).then(|| self.ib_port - 1)
    }
}

/// One switch's section of a forwarding-table dump, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardingTable {
    /// the header's line
    pub line: usize,
    /// the switch's LID
    pub switch_lid: u32,
    /// the switch's GUID
    pub guid: u64,
    /// the switch's description
    pub description: String,
    /// the entries, in file order
    pub entries: Vec<ForwardingEntry>,
}

/// One forwarding entry, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForwardingEntry {
    /// the destination LID
    pub lid: u32,
    /// the output port, IB numbering (0: the switch itself, 255: no route)
    pub port: u32,
    /// the entry's line
    pub line: usize,
}

/// A dump that breaks a rule: the file, the line, and the rule.
pub type IbError = FileError<IbErrorKind>;

/// The rule a dump breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IbErrorKind {
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
    /// a link line with no node header before it
    #[error("a link line before any node header")]
    LinkBeforeHeader,
    /// two headers with one id
    #[error("duplicate id: \"{id}\" already has a header at line {first_line}")]
    DuplicateId {
        /// the id
        id: String,
        /// the first header's line
        first_line: usize,
    },
    /// a port outside 1..=nports
    #[error("port beyond the node's ports: \"{id}\" has ports 1 to {ports}, no port {port}")]
    PortBeyond {
        /// the node
        id: String,
        /// the port named
        port: u32,
        /// the node's port count
        ports: u32,
    },
    /// a link to a node with no header
    #[error("unknown neighbour: \"{id}\" port {port} leads to \"{remote}\", which has no header")]
    UnknownNeighbour {
        /// the node
        id: String,
        /// its port
        port: u32,
        /// the id with no header
        remote: String,
    },
    /// a port cabled to itself
    #[error("self link: \"{id}\" port {port} leads to itself")]
    SelfLink {
        /// the node
        id: String,
        /// the port
        port: u32,
    },
    /// two links on one port
    #[error("port used twice: \"{id}\" port {port} is already connected at line {first_line}")]
    PortUsedTwice {
        /// the node
        id: String,
        /// the port
        port: u32,
        /// the line of the first link
        first_line: usize,
    },
    /// the two sides of a link disagree
    #[error(
        "asymmetric link: \"{id}\" port {port} leads to \"{remote}\" port {remote_port}, \
         but \"{remote}\" port {remote_port} leads to \"{back}\" port {back_port} (line {back_line})"
    )]
    Asymmetric {
        /// the node
        id: String,
        /// its port
        port: u32,
        /// the neighbour
        remote: String,
        /// the neighbour's port
        remote_port: u32,
        /// where the neighbour's port leads
        back: String,
        /// the port it leads to
        back_port: u32,
        /// the neighbour's link line
        back_line: usize,
    },
    /// a CA with no link
    #[error("disconnected network: Ca \"{id}\" has no connected port")]
    CaNotConnected {
        /// the CA
        id: String,
    },
    /// no hosts at all
    #[error("the dump has no Ca")]
    NoHosts,
    /// a node not connected to the first host
    #[error("disconnected network: {device} is not connected to {first}")]
    Disconnected {
        /// the node (`"id"` or `"id" port p`)
        device: String,
        /// the first host (`"id" port p`)
        first: String,
    },
    /// a forwarding entry with no section header before it
    #[error("a forwarding entry before any Unicast lids header")]
    EntryBeforeHeader,
    /// a forwarding section whose switch is not in the fabric
    #[error("unknown switch: no switch of the fabric has guid {guid:#018x} or lid {lid}")]
    UnknownSwitch {
        /// the section's switch GUID
        guid: u64,
        /// the section's switch LID
        lid: u32,
    },
    /// a forwarding entry to a port the switch does not have
    #[error("forwarding to a missing port: \"{id}\" sends lid {lid} to port {port}, but has ports 1 to {ports}")]
    ForwardingPort {
        /// the switch
        id: String,
        /// the destination LID
        lid: u32,
        /// the port named
        port: u32,
        /// the switch's port count
        ports: u32,
    },
}

/// A node as read.
#[derive(Debug)]
struct Node<'a> {
    kind: HeaderKind,
    ports: u32,
    id: &'a str,
    description: &'a str,
    lid: Option<u32>,
    guid: Option<u64>,
    line: usize,
    links: Vec<Link<'a>>,
}

/// A link line as read.
#[derive(Debug)]
struct Link<'a> {
    port: u32,
    remote: &'a str,
    remote_port: u32,
    comment: Comment<'a>,
    line: usize,
}

struct Errors<'a> {
    file: &'a str,
}

impl Errors<'_> {
    fn at(&self, line: usize, kind: IbErrorKind) -> IbError {
        IbError::new(self.file, line, kind)
    }

    fn syntax(&self, line: usize, e: parse::SyntaxError) -> IbError {
        self.at(
            line,
            IbErrorKind::Syntax {
                column: e.column,
                expected: e.expected,
                found: e.found,
            },
        )
    }
}

/// A GUID written `0x<hex>` (optionally followed by `(…)`), or in an id `S-<hex>`.
fn guid(text: &str) -> Option<u64> {
    let text = text.split('(').next().unwrap_or("").trim();
    let hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("S-"))
        .or_else(|| text.strip_prefix("H-"))?;
    u64::from_str_radix(hex, 16).ok()
}

/// Union-find over devices, for connectivity.
fn root(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let up = parent[parent[x as usize] as usize];
        parent[x as usize] = up;
        x = up;
    }
    x
}

/// Reads an `ibnetdiscover` dump (see the module documentation), every cable with
/// `link`. `file` names the file in errors.
pub fn read_ibnetdiscover(file: &str, text: &str, link: LinkParams) -> Result<IbFabric, IbError> {
    let errors = Errors { file };
    let nodes = read_nodes(&errors, text)?;

    let mut index: HashMap<&str, usize> = HashMap::with_capacity(nodes.len());
    for (n, node) in nodes.iter().enumerate() {
        if let Some(&first) = index.get(node.id) {
            let kind = IbErrorKind::DuplicateId {
                id: node.id.to_string(),
                first_line: nodes[first].line,
            };
            return Err(errors.at(node.line, kind));
        }
        index.insert(node.id, n);
    }
    // Every link's own end, checked; (node, port) → (remote node, remote port, line).
    let mut declared: HashMap<(usize, u32), (usize, u32, usize)> = HashMap::new();
    let mut remote_of = Vec::with_capacity(nodes.len());
    for (n, node) in nodes.iter().enumerate() {
        let mut remotes = Vec::with_capacity(node.links.len());
        for l in &node.links {
            let beyond = |id: &str, port: u32, ports: u32| IbErrorKind::PortBeyond {
                id: id.to_string(),
                port,
                ports,
            };
            if l.port == 0 || l.port > node.ports {
                return Err(errors.at(l.line, beyond(node.id, l.port, node.ports)));
            }
            let Some(&m) = index.get(l.remote) else {
                let kind = IbErrorKind::UnknownNeighbour {
                    id: node.id.to_string(),
                    port: l.port,
                    remote: l.remote.to_string(),
                };
                return Err(errors.at(l.line, kind));
            };
            let remote = &nodes[m];
            if l.remote_port == 0 || l.remote_port > remote.ports {
                return Err(errors.at(l.line, beyond(remote.id, l.remote_port, remote.ports)));
            }
            if m == n && l.remote_port == l.port {
                let kind = IbErrorKind::SelfLink {
                    id: node.id.to_string(),
                    port: l.port,
                };
                return Err(errors.at(l.line, kind));
            }
            if let Some(&(_, _, first_line)) = declared.get(&(n, l.port)) {
                let kind = IbErrorKind::PortUsedTwice {
                    id: node.id.to_string(),
                    port: l.port,
                    first_line,
                };
                return Err(errors.at(l.line, kind));
            }
            declared.insert((n, l.port), (m, l.remote_port, l.line));
            remotes.push(m);
        }
        remote_of.push(remotes);
    }
    // The cables, each once; links given on one side only imply the other side.
    let mut implied: HashMap<(usize, u32), usize> = HashMap::new();
    let mut ends: Vec<((usize, u32), (usize, u32))> = Vec::new();
    let mut connected: Vec<(usize, u32)> = Vec::new();
    for (n, node) in nodes.iter().enumerate() {
        for (k, l) in node.links.iter().enumerate() {
            let m = remote_of[n][k];
            connected.push((n, l.port));
            match declared.get(&(m, l.remote_port)) {
                Some(&(back, back_port, back_line)) if (back, back_port) == (n, l.port) => {
                    if l.line < back_line {
                        ends.push(((n, l.port), (m, l.remote_port)));
                    }
                }
                Some(&(back, back_port, back_line)) => {
                    let kind = IbErrorKind::Asymmetric {
                        id: node.id.to_string(),
                        port: l.port,
                        remote: nodes[m].id.to_string(),
                        remote_port: l.remote_port,
                        back: nodes[back].id.to_string(),
                        back_port,
                        back_line,
                    };
                    return Err(errors.at(l.line, kind));
                }
                None => {
                    if let Some(first_line) = implied.insert((m, l.remote_port), l.line) {
                        let kind = IbErrorKind::PortUsedTwice {
                            id: nodes[m].id.to_string(),
                            port: l.remote_port,
                            first_line,
                        };
                        return Err(errors.at(l.line, kind));
                    }
                    connected.push((m, l.remote_port));
                    ends.push(((n, l.port), (m, l.remote_port)));
                }
            }
        }
    }
    connected.sort_unstable();

    // Devices: CA ports in file order then port order, switches in file order.
    let mut host_of: HashMap<(usize, u32), u32> = HashMap::new();
    let mut host_names = Vec::new();
    let mut host_nodes = Vec::new();
    for (n, node) in nodes.iter().enumerate() {
        if node.kind != HeaderKind::Ca {
            continue;
        }
        let from = connected.partition_point(|&(c, _)| c < n);
        let to = connected.partition_point(|&(c, _)| c <= n);
        let mut ports: Vec<u32> = connected[from..to].iter().map(|&(_, p)| p).collect();
        ports.dedup();
        if ports.is_empty() {
            let kind = IbErrorKind::CaNotConnected {
                id: node.id.to_string(),
            };
            return Err(errors.at(node.line, kind));
        }
        for &p in &ports {
            host_of.insert((n, p), host_names.len() as u32);
            host_names.push(if ports.len() == 1 {
                node.id.to_string()
            } else {
                format!("{}[{p}]", node.id)
            });
            host_nodes.push((n, p));
        }
    }
    if host_names.is_empty() {
        return Err(errors.at(0, IbErrorKind::NoHosts));
    }
    let mut switch_of = vec![u32::MAX; nodes.len()];
    let switches: Vec<usize> = (0..nodes.len())
        .filter(|&n| nodes[n].kind == HeaderKind::Switch)
        .collect();
    for (s, &n) in switches.iter().enumerate() {
        switch_of[n] = s as u32;
    }
    let endpoint = |(n, p): (usize, u32)| match nodes[n].kind {
        HeaderKind::Ca => Endpoint {
            device: Device::Host(HostId(host_of.get(&(n, p)).copied().unwrap_or(0))),
            port: 0,
        },
        HeaderKind::Switch => Endpoint {
            device: Device::Switch(SwitchId(switch_of[n])),
            port: p - 1,
        },
    };
    let cables: Vec<Cable> = ends
        .iter()
        .map(|&(a, b)| Cable {
            a: endpoint(a),
            b: endpoint(b),
            link,
        })
        .collect();

    // Connected: every device with host 0.
    let hosts = host_names.len() as u32;
    let device = |d: Device| match d {
        Device::Host(h) => h.0,
        Device::Switch(s) => hosts + s.0,
    };
    let mut parent: Vec<u32> = (0..hosts + switches.len() as u32).collect();
    for c in &cables {
        let (a, b) = (
            root(&mut parent, device(c.a.device)),
            root(&mut parent, device(c.b.device)),
        );
        parent[a.max(b) as usize] = a.min(b);
    }
    let host_label = |h: usize| {
        let (n, p) = host_nodes[h];
        format!("\"{}\" port {p}", nodes[n].id)
    };
    let home = root(&mut parent, 0);
    for (n, node) in nodes.iter().enumerate() {
        let lost = match node.kind {
            HeaderKind::Switch => (root(&mut parent, hosts + switch_of[n]) != home).then(|| format!("\"{}\"", node.id)),
            HeaderKind::Ca => {
                // a CA's hosts are consecutive
                let first = host_nodes.partition_point(|&(c, _)| c < n);
                let last = host_nodes.partition_point(|&(c, _)| c <= n);
                (first..last)
                    .find(|&h| root(&mut parent, h as u32) != home)
                    .map(host_label)
            }
        };
        if let Some(device) = lost {
            let kind = IbErrorKind::Disconnected {
                device,
                first: host_label(0),
            };
            return Err(errors.at(node.line, kind));
        }
    }

    // LIDs: a CA port's own, else what the switch's line says of it.
    let mut host_lids = vec![None; hosts as usize];
    for (n, node) in nodes.iter().enumerate() {
        for (k, l) in node.links.iter().enumerate() {
            let m = remote_of[n][k];
            if node.kind == HeaderKind::Ca
                && let Some(lid) = l.comment.lid_before
                && let Some(&h) = host_of.get(&(n, l.port))
            {
                host_lids[h as usize] = Some(lid);
            }
            if nodes[m].kind == HeaderKind::Ca
                && let Some(lid) = l.comment.lid_after
            {
                let own = nodes[m]
                    .links
                    .iter()
                    .any(|back| back.port == l.remote_port && back.comment.lid_before.is_some());
                if !own && let Some(&h) = host_of.get(&(m, l.remote_port)) {
                    host_lids[h as usize] = Some(lid);
                }
            }
        }
    }

    let topology = Topology {
        hosts,
        switch_ports: switches.iter().map(|&n| nodes[n].ports).collect(),
        cables,
        routing: Routing::ShortestPath,
    };
    let host_types = vec![None; topology.hosts as usize];
    Ok(IbFabric {
        topology: NamedTopology {
            topology,
            host_names,
            switch_names: switches.iter().map(|&n| nodes[n].id.to_string()).collect(),
            switch_types: vec![None; switches.len()],
            host_types,
        },
        host_lids,
        host_descriptions: host_nodes
            .iter()
            .map(|&(n, _)| nodes[n].description.to_string())
            .collect(),
        switch_lids: switches.iter().map(|&n| nodes[n].lid).collect(),
        switch_guids: switches.iter().map(|&n| nodes[n].guid).collect(),
        switch_descriptions: switches.iter().map(|&n| nodes[n].description.to_string()).collect(),
        forwarding: vec![BTreeMap::new(); switches.len()],
        dump_file: file.to_string(),
        host_lines: host_nodes.iter().map(|&(n, _)| nodes[n].line).collect(),
        tables_file: String::new(),
        section_lines: vec![0; switches.len()],
    })
}

/// The nodes and links of a dump, as written.
fn read_nodes<'a>(errors: &Errors<'_>, text: &'a str) -> Result<Vec<Node<'a>>, IbError> {
    let mut nodes: Vec<Node<'a>> = Vec::new();
    let mut pending_guid = None;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim_start_matches([' ', '\t']);
        if trimmed.trim_end_matches([' ', '\t', '\r']).is_empty() || trimmed.starts_with('#') {
            continue;
        }
        match parse::parse_topo_line(line).map_err(|e| errors.syntax(number, e))? {
            TopoLine::KeyValue { key, value } => {
                if key == "switchguid" || key == "caguid" {
                    pending_guid = guid(value);
                }
            }
            TopoLine::Header {
                kind,
                ports,
                id,
                comment,
            } => nodes.push(Node {
                kind,
                ports,
                id,
                description: comment.description.unwrap_or(""),
                lid: comment.lid_after.or(comment.lid_before),
                guid: pending_guid.take().or_else(|| guid(id)),
                line: number,
                links: Vec::new(),
            }),
            TopoLine::Link {
                port,
                remote,
                remote_port,
                comment,
            } => {
                let Some(node) = nodes.last_mut() else {
                    return Err(errors.at(number, IbErrorKind::LinkBeforeHeader));
                };
                node.links.push(Link {
                    port,
                    remote,
                    remote_port,
                    comment,
                    line: number,
                });
            }
        }
    }
    Ok(nodes)
}

/// The largest `ibnetdiscover` dump read \[bytes\]: dumps are read whole, and list a few
/// lines per port (a few MB for thousands of hosts).
pub const MAX_DUMP_BYTES: u64 = 256 * vesper_input::MIB;

/// The largest forwarding-table dump read \[bytes\]: tables are read whole, about 70 bytes
/// per LID per switch; 1 GiB holds 15 million entries, the tables of a fabric of about
/// 8,000 hosts (those of 32,768 hosts would take several GB).
pub const MAX_TABLES_BYTES: u64 = 1 << 30;

/// Reads a forwarding-table dump (see the module documentation) as written; match it to
/// a fabric with [`IbFabric::attach_forwarding`]. `file` names the file in errors.
pub fn read_forwarding_tables(file: &str, text: &str) -> Result<Vec<ForwardingTable>, IbError> {
    let errors = Errors { file };
    let mut tables: Vec<ForwardingTable> = Vec::new();
    let mut multicast = false;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim_matches([' ', '\t', '\r']);
        if trimmed.is_empty() || trimmed.starts_with('#') || (multicast && !trimmed.starts_with("Unicast")) {
            continue;
        }
        match parse::parse_lft_line(line).map_err(|e| errors.syntax(number, e))? {
            LftLine::Header { lid, guid, description } => {
                multicast = false;
                tables.push(ForwardingTable {
                    line: number,
                    switch_lid: lid,
                    guid,
                    description: description.to_string(),
                    entries: Vec::new(),
                });
            }
            LftLine::Entry { lid, port } => {
                let Some(table) = tables.last_mut() else {
                    return Err(errors.at(number, IbErrorKind::EntryBeforeHeader));
                };
                table.entries.push(ForwardingEntry {
                    lid,
                    port,
                    line: number,
                });
            }
            LftLine::Multicast => multicast = true,
            LftLine::Other => {}
        }
    }
    Ok(tables)
}

impl IbFabric {
    /// Fills [`IbFabric::forwarding`] from forwarding tables read from `file` (see the
    /// module documentation for how sections find their switch; entries to port 0 and
    /// 255 are kept as what they say, no output). A later section for the same switch
    /// overrides earlier entries.
    pub fn attach_forwarding(&mut self, file: &str, tables: &[ForwardingTable]) -> Result<(), IbError> {
        let errors = Errors { file };
        self.tables_file = file.to_string();
        let by_guid: BTreeMap<u64, usize> = self
            .switch_guids
            .iter()
            .enumerate()
            .filter_map(|(s, g)| g.map(|g| (g, s)))
            .collect();
        let by_lid: BTreeMap<u32, usize> = self
            .switch_lids
            .iter()
            .enumerate()
            .filter_map(|(s, l)| l.map(|l| (l, s)))
            .collect();
        for table in tables {
            let Some(&s) = by_guid.get(&table.guid).or_else(|| by_lid.get(&table.switch_lid)) else {
                let kind = IbErrorKind::UnknownSwitch {
                    guid: table.guid,
                    lid: table.switch_lid,
                };
                return Err(errors.at(table.line, kind));
            };
            let ports = self.topology.topology.switch_ports[s];
            self.section_lines[s] = table.line;
            for entry in &table.entries {
                if entry.port > ports && entry.port != NO_ROUTE {
                    let kind = IbErrorKind::ForwardingPort {
                        id: self.topology.switch_names[s].clone(),
                        lid: entry.lid,
                        port: entry.port,
                        ports,
                    };
                    return Err(errors.at(entry.line, kind));
                }
                let forward = Forward {
                    ib_port: entry.port,
                    line: entry.line,
                };
                self.forwarding[s].insert(entry.lid, forward);
            }
        }
        Ok(())
    }

    /// The host of each known LID.
    pub fn hosts_by_lid(&self) -> BTreeMap<u32, HostId> {
        self.host_lids
            .iter()
            .enumerate()
            .filter_map(|(h, lid)| lid.map(|lid| (lid, HostId(h as u32))))
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests;
