//! `map2topo`: writes built-in topologies as Myrinet maps with their routes, checks maps
//! and route files, generates routes, converts route formats and counts the link
//! conflicts of a communication pattern.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use vesper_map2topo::generate::{
    conflicts, deadlock_cycle, forwarding_routes, read_phases, routes_of, shortest_paths, table_deadlock_cycle, up_down,
};
use vesper_map2topo::routes::{RouteList, read_any_from, write_canonical_to, write_myrinet_to};
use vesper_map2topo::{NamedTopology, WriteOptions, read_map, write_map};
use vesper_netmodels::{Device, HostId, LinkParams, Routing, Topology, Torus, Xgft};

#[derive(Debug, Parser)]
#[command(
    name = "map2topo",
    version,
    about = "Myrinet maps and routes for vesper: export built-in topologies, check maps and routes, generate \
             routes, convert route formats, count link conflicts"
)]
struct Cli {
    #[command(subcommand)]
    verb: Verb,
}

#[derive(Debug, Subcommand)]
enum Verb {
    /// Write an extended generalized fat tree XGFT(h; m1..mh; w1..wh) as a map, e.g.
    /// `map2topo xgft 3 16,16,8 1,16,16 -o tree.map`.
    Xgft {
        /// levels of switches
        height: usize,
        /// children per switch, level by level (m1,…,mh)
        #[arg(value_delimiter = ',', num_args = 1, required = true)]
        children: Vec<u32>,
        /// parents per node, level by level (w1,…,wh; w1 = 1)
        #[arg(value_delimiter = ',', num_args = 1, required = true)]
        parents: Vec<u32>,
        /// the up-port choice of the routes written
        #[arg(long, value_enum, default_value_t = TreeRouting::DModK)]
        routing: TreeRouting,
        #[command(flatten)]
        out: Output,
    },
    /// Write a torus (or mesh) of any number of dimensions as a map, e.g.
    /// `map2topo torus 8,8,8 -o torus.map`; routes in dimension order.
    Torus {
        /// switches per dimension
        #[arg(value_delimiter = ',', num_args = 1, required = true)]
        dims: Vec<u32>,
        /// no wraparound links: a mesh
        #[arg(long)]
        mesh: bool,
        /// hosts on every switch
        #[arg(long, default_value_t = 1)]
        hosts_per_switch: u32,
        #[command(flatten)]
        out: Output,
    },
    /// Write an n-dimensional hypercube as a map; routes by e-cube.
    Hypercube {
        /// dimensions
        n: u32,
        /// hosts on every switch
        #[arg(long, default_value_t = 1)]
        hosts_per_switch: u32,
        #[command(flatten)]
        out: Output,
    },
    /// Convert an InfiniBand fabric (`ibnetdiscover` output) to a map, with the routes
    /// of its forwarding tables (`ibroute` output) when given.
    Ibnet {
        /// the ibnetdiscover dump
        dump: PathBuf,
        /// the switches' unicast forwarding tables (ibroute output, all switches)
        #[arg(long, value_name = "FILE")]
        tables: Option<PathBuf>,
        #[command(flatten)]
        out: Output,
    },
    /// Check a map (and routes): counts, whether the routes reach their
    /// destinations and whether they can deadlock wormhole switches.
    Check {
        /// the map
        map: PathBuf,
        /// its routes (canonical or Myrinet); without them, the shortest-path tables
        #[arg(long)]
        routes: Option<PathBuf>,
    },
    /// Generate routes for a map.
    Routes {
        /// the map
        map: PathBuf,
        /// shortest paths (the lowest ports first) or up*/down* (deadlock-free)
        #[arg(long, value_enum, default_value_t = Algorithm::UpDown)]
        algorithm: Algorithm,
        /// shortest paths: up to this many per pair (multipath)
        #[arg(long, default_value_t = 1)]
        paths: usize,
        /// the file's format
        #[arg(long, value_enum, default_value_t = Format::Canonical)]
        format: Format,
        /// write here (default: standard output)
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Convert a route file of a map to the other format.
    Convert {
        /// the map
        map: PathBuf,
        /// the routes (either format)
        routes: PathBuf,
        /// the format to write
        #[arg(long, value_enum)]
        to: Format,
        /// write here (default: standard output)
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Count, per phase of a communication pattern, how many flows share a link.
    Conflicts {
        /// the map
        map: PathBuf,
        /// the routes (either format); the first route of each pair is counted
        routes: PathBuf,
        /// the pattern: one `SOURCE DESTINATION` flow of host names per line, a line
        /// `phase` between phases
        pattern: PathBuf,
    },
}

/// Where an export goes.
#[derive(Debug, clap::Args)]
struct Output {
    /// write the map here (default: standard output)
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// also write the routes here
    #[arg(long)]
    routes: Option<PathBuf>,
    /// the route file's format
    #[arg(long, value_enum, default_value_t = Format::Canonical)]
    format: Format,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum TreeRouting {
    DModK,
    SModK,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Algorithm {
    ShortestPath,
    UpDown,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    /// absolute output ports, one route per line
    Canonical,
    /// Myrinet turns, a section per source
    Myrinet,
}

/// Errors print as their message and its causes on one line, never with a stack
/// backtrace (`RUST_BACKTRACE=1` would add one to a returned error): a backtrace is for
/// bugs.
fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.verb {
        Verb::Xgft {
            height,
            children,
            parents,
            routing,
            out,
        } => {
            anyhow::ensure!(
                children.len() == height && parents.len() == height,
                "xgft {height}: expected {height} values of m and of w, got {} and {}",
                children.len(),
                parents.len()
            );
            let x = Xgft::new(children, parents)?;
            let mut topology = x.topology(LinkParams::default());
            if let TreeRouting::SModK = routing {
                topology.routing = Routing::SModK(x);
            }
            export(topology, &out)
        }
        Verb::Torus {
            dims,
            mesh,
            hosts_per_switch,
            out,
        } => export(
            Torus::new(dims, !mesh, hosts_per_switch)?.topology(LinkParams::default()),
            &out,
        ),
        Verb::Hypercube {
            n,
            hosts_per_switch,
            out,
        } => export(
            Torus::hypercube(n, hosts_per_switch)?.topology(LinkParams::default()),
            &out,
        ),
        Verb::Check { map, routes } => check(&map, routes.as_deref()),
        Verb::Ibnet { dump, tables, out } => {
            let file = dump.display().to_string();
            let text = read_input("dump", &dump, vesper_map2topo::MAX_DUMP_BYTES)?;
            let mut fabric = vesper_map2topo::read_ibnetdiscover(&file, &text, LinkParams::default())?;
            emit(
                out.output.as_deref(),
                &write_map(&fabric.topology, WriteOptions::default())?,
            )?;
            match (&out.routes, tables) {
                (Some(path), Some(tables)) => {
                    let file = tables.display().to_string();
                    let text = read_input("--tables", &tables, vesper_map2topo::MAX_TABLES_BYTES)?;
                    let parsed = vesper_map2topo::read_forwarding_tables(&file, &text)?;
                    fabric.attach_forwarding(&file, &parsed)?;
                    let routes = forwarding_routes(&fabric).map_err(anyhow::Error::msg)?;
                    emit_routes(Some(path), &routes, &fabric.topology, out.format)?;
                }
                (Some(path), None) => {
                    eprintln!("no --tables: routes by shortest paths");
                    let routes = shortest_paths(&fabric.topology.topology, 1).map_err(anyhow::Error::msg)?;
                    emit_routes(Some(path), &routes, &fabric.topology, out.format)?;
                }
                (None, Some(_)) => anyhow::bail!("--tables: give --routes FILE to write the routes they give"),
                (None, None) => {}
            }
            Ok(())
        }
        Verb::Routes {
            map,
            algorithm,
            paths,
            format,
            output,
        } => {
            let net = single_rail(&map)?;
            let routes = match algorithm {
                Algorithm::ShortestPath => shortest_paths(&net.topology, paths).map_err(anyhow::Error::msg)?,
                Algorithm::UpDown => {
                    let (root, routes) = up_down(&net.topology).map_err(anyhow::Error::msg)?;
                    eprintln!("up*/down* root: {}", net.name(Device::Switch(root)));
                    routes
                }
            };
            emit_routes(output.as_deref(), &routes, &net, format)
        }
        Verb::Convert {
            map,
            routes,
            to,
            output,
        } => {
            let net = single_rail(&map)?;
            let routes = read_routes("routes", &routes, &net)?;
            emit_routes(output.as_deref(), &routes, &net, to)
        }
        Verb::Conflicts { map, routes, pattern } => {
            let net = single_rail(&map)?;
            let routes = read_routes("routes", &routes, &net)?;
            let phases = read_pattern(&pattern, &net)?;
            let result = conflicts(&net.topology, &routes, &phases).map_err(anyhow::Error::msg)?;
            println!(
                "{:>6} {:>6} {:>10} {:>10}  busiest link",
                "phase", "flows", "max load", "conflicts"
            );
            for (i, (phase, c)) in phases.iter().zip(&result).enumerate() {
                let busiest = c
                    .busiest
                    .map_or_else(|| "-".to_string(), |e| format!("{}.p{}", net.name(e.device), e.port));
                println!(
                    "{i:>6} {:>6} {:>10} {:>10}  {busiest}",
                    phase.len(),
                    c.max_load,
                    c.conflicts
                );
            }
            Ok(())
        }
    }
}

/// Writes a built-in topology as a map, and its routes if asked.
fn export(topology: Topology, out: &Output) -> anyhow::Result<()> {
    let net = NamedTopology::with_default_names(topology);
    emit(out.output.as_deref(), &write_map(&net, WriteOptions::default())?)?;
    if let Some(path) = &out.routes {
        let routes = routes_of(&net.topology).map_err(anyhow::Error::msg)?;
        emit_routes(Some(path), &routes, &net, out.format)?;
    }
    Ok(())
}

fn check(map: &Path, routes: Option<&Path>) -> anyhow::Result<()> {
    let rails = read_map_file(map)?;
    for (r, net) in rails.iter().enumerate() {
        let t = &net.topology;
        let host_cables = t
            .cables
            .iter()
            .filter(|c| matches!(c.a.device, Device::Host(_)) || matches!(c.b.device, Device::Host(_)))
            .count();
        if rails.len() > 1 {
            println!("rail {r}:");
        }
        println!("hosts: {}", t.hosts);
        println!(
            "switches: {} (up to {} ports)",
            t.switch_ports.len(),
            t.switch_ports.iter().max().copied().unwrap_or(0)
        );
        println!(
            "cables: {} ({host_cables} host, {} between switches)",
            t.cables.len(),
            t.cables.len() - host_cables
        );
    }
    let [net] = rails.as_slice() else {
        anyhow::ensure!(routes.is_none(), "route files are read for single-rail maps only");
        return Ok(());
    };
    let cycle = match routes {
        Some(path) => {
            let list = read_routes("--routes", path, net)?;
            println!("routes: {} (every one reaches its destination)", list.len());
            deadlock_cycle(&net.topology, &list)
        }
        None => {
            println!("routes: shortest-path tables");
            table_deadlock_cycle(&net.topology)
        }
    };
    match cycle {
        None => println!("deadlock: none possible (no cycle of channel dependencies)"),
        Some(channels) => {
            let named: Vec<String> = channels
                .iter()
                .map(|&(s, p)| format!("{}.p{p}", net.name(Device::Switch(s))))
                .collect();
            println!(
                "deadlock: possible with wormhole switches: {} wait on each other",
                named.join(" → ")
            );
        }
    }
    Ok(())
}

/// The map of a command that needs one network.
fn single_rail(map: &Path) -> anyhow::Result<NamedTopology> {
    let mut rails = read_map_file(map)?;
    anyhow::ensure!(
        rails.len() == 1,
        "{}: the map has {} rails; routes are handled for single-rail maps",
        map.display(),
        rails.len()
    );
    Ok(rails.remove(0))
}

/// The text of input `path` (`what` names it in messages: `map`, `--tables`), refused
/// unread above `limit` bytes or if it is not a regular file.
fn read_input(what: &str, path: &Path, limit: u64) -> anyhow::Result<String> {
    vesper_input::read_text(path, limit).map_err(|e| anyhow::anyhow!("{what} {}: {e}", path.display()))
}

/// Every rail of the map `path`.
fn read_map_file(map: &Path) -> anyhow::Result<Vec<NamedTopology>> {
    let text = read_input("map", map, vesper_map2topo::MAX_MAP_BYTES)?;
    Ok(read_map(&map.display().to_string(), &text, LinkParams::default())?)
}

/// Reads routes in either format (`what` names the file in messages: `routes`,
/// `--routes`), a line at a time, and checks that each reaches its destination.
fn read_routes(what: &str, path: &Path, net: &NamedTopology) -> anyhow::Result<RouteList> {
    let file = path.display().to_string();
    let opened = vesper_input::open(path).map_err(|e| anyhow::anyhow!("{what} {file}: {e}"))?;
    let routes = read_any_from(&file, std::io::BufReader::with_capacity(1 << 20, opened), net)?;
    let mut topology = net.topology.clone();
    let explicit = vesper_netmodels::ExplicitRoutes::from_paths(
        topology.hosts,
        vesper_netmodels::MultipathPolicy::First,
        routes.clone(),
    )?;
    topology.routing = Routing::Explicit(std::sync::Arc::new(explicit));
    vesper_netmodels::NetworkBuilder::new(topology)
        .build()
        .with_context(|| format!("{file}: the routes do not fit the map"))?;
    Ok(routes)
}

/// A pattern file: `SOURCE DESTINATION` host names per line, `phase` between phases.
fn read_pattern(path: &Path, net: &NamedTopology) -> anyhow::Result<Vec<Vec<(HostId, HostId)>>> {
    let file = path.display().to_string();
    let text = read_input("pattern", path, vesper_map2topo::generate::MAX_PATTERN_BYTES)?;
    let id = |name: &str| net.host_names.iter().position(|n| n == name).map(|h| HostId(h as u32));
    read_phases(&file, &text, id, "two host names of the map").map_err(anyhow::Error::msg)
}

/// Writes `routes` of `net` in `format` to `path`, or to standard output, route by
/// route (a route file for 8,192 hosts is 2 GB); a file left unfinished by an error is
/// removed.
fn emit_routes(path: Option<&Path>, routes: &RouteList, net: &NamedTopology, format: Format) -> anyhow::Result<()> {
    let write = |out: &mut dyn std::io::Write| -> std::io::Result<()> {
        match format {
            Format::Canonical => write_canonical_to(routes, net, out)?,
            Format::Myrinet => write_myrinet_to(routes, net, out)?,
        }
        out.flush()
    };
    match path {
        Some(p) => {
            let file = vesper_input::create(p).with_context(|| format!("cannot write {}", p.display()))?;
            let Err(e) = write(&mut std::io::BufWriter::new(file)) else {
                return Ok(());
            };
            let _ = std::fs::remove_file(p);
            match e.kind() {
                // A route the format cannot write: the error names it.
                std::io::ErrorKind::Other => Err(anyhow::anyhow!("{e}")),
                _ => Err(e).with_context(|| format!("cannot write {}", p.display())),
            }
        }
        None => match write(&mut std::io::BufWriter::new(std::io::stdout().lock())) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
            _ => Ok(()),
        },
    }
}

/// Writes `text` to `path`, or to standard output.
fn emit(path: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match path {
        Some(p) => vesper_input::write(p, text).with_context(|| format!("cannot write {}", p.display())),
        None => {
            use std::io::Write as _;
            match std::io::stdout().write_all(text.as_bytes()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
                _ => Ok(()),
            }
        }
    }
}
