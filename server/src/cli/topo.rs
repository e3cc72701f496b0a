//! `vesper topo`: what a network is (a summary, a DOT graph), and a network written as
//! a Myrinet map with its routes.

use std::path::PathBuf;

use anyhow::Context;

use crate::config::{FabricConfig, NetworkConfig};
use crate::description::preset;
use crate::network_summary::Summary;

use super::network::*;

#[derive(Debug, clap::Args)]
pub struct TopoArgs {
    /// A network file (the same as --network FILE).
    #[arg(value_name = "FILE", conflicts_with_all = ["network", "preset"])]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub net: NetworkArgs,
    /// Write a Graphviz picture here (`dot -Tsvg FILE -o net.svg`; `neato` suits big
    /// networks better).
    #[arg(long, value_name = "FILE.dot")]
    pub dot: Option<PathBuf>,
    /// Write the network as a Myrinet map here (a multi-rail network as hosts with a
    /// port per rail), to edit or optimise offline and load back with --map.
    #[arg(long, value_name = "FILE.map")]
    pub write_map: Option<PathBuf>,
    /// Write its routes here, in vesper's canonical route format; rail N of a multi-rail
    /// network goes to FILE with `.rN` before its extension.
    #[arg(long, value_name = "FILE")]
    pub write_routes: Option<PathBuf>,
    /// List the presets and stop.
    #[arg(long)]
    pub presets: bool,
    /// Print the preset's network file (a starting point for your own) and stop.
    #[arg(long, requires = "preset")]
    pub print: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What `vesper topo` prints.
#[derive(Debug)]
pub enum Topo {
    /// `--presets`: the presets, a line each.
    Presets(&'static [preset::Preset]),
    /// `--print`: a preset's network file.
    PresetFile(&'static str),
    /// The network's summary, a rail each (as JSON with `--json`).
    Summary {
        rails: Vec<Summary>,
        json: bool,
        /// Why `serve`, `run` and `traffic` would refuse the network described: an
        /// error after the summary (no files are written then).
        cannot_simulate: Option<String>,
    },
}

impl Topo {
    /// The error `vesper topo` ends with once it has printed this: a network it
    /// described but that cannot be simulated.
    pub fn refusal(&self) -> anyhow::Result<()> {
        match self {
            Topo::Summary {
                cannot_simulate: Some(reason),
                ..
            } => Err(anyhow::Error::msg(reason.clone())),
            _ => Ok(()),
        }
    }
}

impl std::fmt::Display for Topo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Topo::Presets(presets) => {
                for p in *presets {
                    writeln!(f, "{:<14} {}", p.name, p.summary)?;
                }
                Ok(())
            }
            Topo::PresetFile(file) => write!(f, "{file}"),
            Topo::Summary { rails, json: true, .. } => {
                let json = match rails.as_slice() {
                    [one] => serde_json::to_string_pretty(one),
                    rails => serde_json::to_string_pretty(rails),
                };
                writeln!(f, "{}", json.map_err(|_| std::fmt::Error)?)
            }
            Topo::Summary { rails, .. } => match rails.as_slice() {
                [one] => writeln!(f, "{one}"),
                rails => {
                    for (i, rail) in rails.iter().enumerate() {
                        writeln!(f, "rail {i}:\n  {}", rail.to_string().replace('\n', "\n  "))?;
                    }
                    Ok(())
                }
            },
        }
    }
}

/// `vesper topo`: the network's summary, after writing the files asked for (notes on
/// them go to `notes`).
pub fn topo(mut args: TopoArgs, notes: &mut dyn std::io::Write) -> anyhow::Result<Topo> {
    if args.presets {
        return Ok(Topo::Presets(preset::PRESETS));
    }
    if args.print {
        let name = args.net.preset.as_deref().unwrap_or_default();
        return Ok(Topo::PresetFile(preset::find(name).map_err(anyhow::Error::msg)?.file));
    }
    if let Some(file) = args.file.take() {
        args.net.network = Some(file.display().to_string());
    }
    let network = network(&args.net, None)?;
    let rails = crate::network_summary::summarize(&network);
    anyhow::ensure!(
        !rails.is_empty(),
        "the ideal network has no topology: it joins every pair of hosts without contention"
    );
    // What `serve`, `run` and `traffic` would refuse (buffers too small for the cables,
    // routes that miss a pair), refused here too, after the summary: the description
    // alone does not build the switches and routes.
    if let Err(e) = network.build() {
        return Ok(Topo::Summary {
            rails,
            json: args.json,
            cannot_simulate: Some(format!("this network cannot be simulated: {e}")),
        });
    }
    if args.write_map.is_some() || args.write_routes.is_some() {
        write_map_files(&network, args.write_map.as_deref(), args.write_routes.as_deref(), notes)?;
    }
    if let Some(path) = &args.dot {
        let devices: u32 = rails.iter().map(|s| s.switches).sum::<u32>() + network.hosts;
        if devices > 5000 {
            note!(
                notes,
                "note: {devices} devices; Graphviz takes long to lay out pictures of this size"
            );
        }
        let picture = match &network.fabric {
            FabricConfig::Switched(s) => crate::network_summary::dot(s, network.hosts),
            FabricConfig::MultiRail { rails, .. } => crate::network_summary::dot_rails(rails, network.hosts),
            FabricConfig::Ideal(_) => String::new(),
        };
        vesper_input::write(path, picture).with_context(|| format!("--dot {}: cannot write", path.display()))?;
        note!(notes, "picture written to {}", path.display());
    }
    Ok(Topo::Summary {
        rails,
        json: args.json,
        cannot_simulate: None,
    })
}

/// `x.routes` as rail `r`'s file: `x.r<r>.routes`.
pub fn rail_file(path: &std::path::Path, r: usize) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or_else(|| "routes".into(), |s| s.to_string_lossy().into_owned());
    match path.extension() {
        Some(ext) => path.with_file_name(format!("{stem}.r{r}.{}", ext.to_string_lossy())),
        None => path.with_file_name(format!("{stem}.r{r}")),
    }
}

/// Writes `network` as a map and its routes (`vesper topo --write-map/--write-routes`).
pub fn write_map_files(
    network: &NetworkConfig,
    map: Option<&std::path::Path>,
    routes: Option<&std::path::Path>,
    notes: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    // The topology as configured (routing, links), named as the map named it.
    let named = |s: &crate::config::SwitchedConfig| {
        let topology = s.topology();
        match &s.shape {
            crate::config::Shape::Map(vesper_map2topo::MapShape { net, .. }) => vesper_map2topo::NamedTopology {
                topology,
                host_names: net.host_names.clone(),
                switch_names: net.switch_names.clone(),
                switch_types: net.switch_types.clone(),
                host_types: net.host_types.clone(),
            },
            _ => vesper_map2topo::NamedTopology::with_default_names(topology),
        }
    };
    let rails: Vec<_> = match &network.fabric {
        FabricConfig::Switched(s) => vec![named(s)],
        // Switch names must differ across rails: rail r's are r<r>.sw<n>, as in traces.
        FabricConfig::MultiRail { rails, .. } => rails
            .iter()
            .enumerate()
            .map(|(r, s)| {
                let mut net = named(s);
                if !matches!(s.shape, crate::config::Shape::Map(_)) {
                    for name in &mut net.switch_names {
                        *name = format!("r{r}.{name}");
                    }
                }
                net
            })
            .collect(),
        FabricConfig::Ideal(_) => anyhow::bail!("the ideal network has no topology to write"),
    };
    if let Some(path) = map {
        let text = vesper_map2topo::MapFile::from_rails(&rails, vesper_map2topo::WriteOptions::default())?.to_string();
        vesper_input::write(path, text).with_context(|| format!("--write-map {}: cannot write", path.display()))?;
        note!(notes, "map written to {}", path.display());
    }
    if let Some(path) = routes {
        // One file per rail: FILE itself for a single network, FILE with `.r<N>` before
        // its extension for rail N of several (read back with --routes once per rail).
        for (r, net) in rails.iter().enumerate() {
            let path = match rails.len() {
                1 => path.to_path_buf(),
                _ => rail_file(path, r),
            };
            let list = vesper_map2topo::generate::routes_of(&net.topology).map_err(anyhow::Error::msg)?;
            vesper_input::write(&path, vesper_map2topo::routes::write_canonical(&list, net))
                .with_context(|| format!("--write-routes {}: cannot write", path.display()))?;
            note!(notes, "{} routes written to {}", list.len(), path.display());
        }
    }
    Ok(())
}
