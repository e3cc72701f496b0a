//! A checked [`Description`] resolved into the [`NetworkConfig`] the model is built from:
//! defaults filled in, sizes, times and rates checked, files (maps, routes, mappings,
//! patterns) read.

use std::sync::Arc;

use vesper_map2topo::MapShape;
use vesper_netmodels::time::seconds_text;
use vesper_netmodels::topology::Shape as _;
use vesper_netmodels::{
    AdapterParams, Bandwidth, IdealParams, Interleave, LinkParams, RailPolicy, SimTime, SwitchKind, SwitchParams,
};

use super::checked::{Description, FabricSpec, SwitchedSpec};
use super::error::{At, SpecError, Table, field};
use super::fields::{Field, NetworkSpec};
use super::names::{InterleaveName, LevelSpec, RailPolicyName, RoutePolicyName, RoutingName, SwitchName};
use super::shapes::{MapSpec, ShapeSpec};
use super::switches::cioq;
use super::{host_count, map_host_names, read_mapping, read_pattern};
use crate::config::{
    DIMEMAS_MB, FabricConfig, MB, NetworkConfig, Placement, RoutingPolicy, Shape, SwitchedConfig, bandwidth,
    number_text, time_from_ns,
};

impl NetworkSpec {
    /// Checks the description and gives the network it describes.
    pub fn resolve(&self) -> Result<NetworkConfig, SpecError> {
        self.check()?.resolve()
    }
}

impl Description {
    /// The network described.
    pub fn resolve(&self) -> Result<NetworkConfig, SpecError> {
        let (hosts, fabric) = self.fabric()?;
        let placement = match (&self.mapping, self.nodes_per_host) {
            (Some(_), Some(_)) => {
                return Err(field(
                    Field::NodesPerHost,
                    "give either nodes_per_host or a mapping file, not both",
                ));
            }
            (Some(path), None) => Placement::Listed(read_mapping(path, hosts, map_host_names(&fabric))?),
            (None, Some(0)) => return Err(field(Field::NodesPerHost, "a host runs at least one node")),
            (None, n) => Placement::Fill {
                nodes_per_host: n.unwrap_or(1),
            },
        };
        let mut config = NetworkConfig {
            hosts,
            placement,
            fabric,
        };
        self.route_pattern(&mut config)?;
        Ok(config)
    }

    /// Chooses the routes of pattern-aware trees for the pattern (`pattern_phases`, or
    /// the `pattern` file), its client nodes placed on their hosts.
    fn route_pattern(&self, config: &mut NetworkConfig) -> Result<(), SpecError> {
        let switched: Vec<&mut SwitchedConfig> = match &mut config.fabric {
            FabricConfig::Switched(s) => vec![s],
            FabricConfig::MultiRail { rails, .. } => rails.iter_mut().collect(),
            FabricConfig::Ideal(_) => Vec::new(),
        };
        let waiting: Vec<&mut SwitchedConfig> = switched
            .into_iter()
            .filter(|s| s.routing == RoutingPolicy::PatternAware(None))
            .collect();
        if waiting.is_empty() {
            if self.pattern.is_some() {
                return Err(field(Field::Pattern, "applies to routing = \"pattern-aware\" only"));
            }
            return Ok(());
        }
        let phases = match (&self.pattern_phases, &self.pattern) {
            (Some(phases), _) => phases.clone(),
            (None, Some(path)) => read_pattern(path)?,
            (None, None) => {
                return Err(field(
                    Field::Pattern,
                    "routing = \"pattern-aware\" needs a communication pattern: pattern = FILE (vesper run \
                     takes its workload's)",
                ));
            }
        };
        let nodes = config.placement.nodes(config.hosts);
        let mut hosts = Vec::with_capacity(phases.len());
        for phase in &phases {
            let mut flows = Vec::with_capacity(phase.len());
            for &(src, dst) in phase {
                if let Some(node) = [src, dst].into_iter().find(|&n| u64::from(n) >= nodes) {
                    return Err(field(
                        Field::Pattern,
                        format!(
                            "node {node} is not in the network ({})",
                            config.placement.describe(config.hosts)
                        ),
                    ));
                }
                let (s, d) = (config.placement.host_of(src), config.placement.host_of(dst));
                if s != d {
                    flows.push((s, d));
                }
            }
            hosts.push(flows);
        }
        for s in waiting {
            if let Shape::Xgft(x) = &s.shape {
                let routes = x
                    .pattern_aware_routes(&hosts)
                    .map_err(|e| field(Field::Pattern, e.to_string()))?;
                s.routing = RoutingPolicy::PatternAware(Some(Arc::new(routes)));
            }
        }
        Ok(())
    }

    /// The hosts and what joins them.
    fn fabric(&self) -> Result<(u32, FabricConfig), SpecError> {
        let hosts = |given: Option<u32>| {
            host_count(given.unwrap_or(NetworkConfig::default().hosts)).map_err(|rule| field(Field::Hosts, rule))
        };
        match &self.fabric {
            FabricSpec::Ideal {
                hosts: given,
                bandwidth_mbps,
                latency_ns,
            } => {
                let mbps = bandwidth_mbps.ok_or_else(|| {
                    field(
                        Field::BandwidthMbps,
                        "the ideal network needs a bandwidth (the replayer configuration's inter-node one)",
                    )
                })?;
                // 0: instantaneous transfers, as Dimemas reads a bandwidth of 0.
                let bandwidth = match mbps {
                    0.0 => None,
                    mbps if mbps.is_nan() || mbps < 0.0 => {
                        return Err(field(
                            Field::BandwidthMbps,
                            "expected a rate of 0 or more in MBps (2^20 bytes/s); 0: instantaneous transfers",
                        ));
                    }
                    mbps => Some(rate(
                        mbps,
                        (Field::BandwidthMbps, DIMEMAS_MB, "MBps (2^20 bytes/s)"),
                        (u64::from(u32::MAX), "the largest message"),
                        &IDEAL,
                    )?),
                };
                let params = IdealParams {
                    bandwidth,
                    latency: delay(*latency_ns, SimTime::ZERO, Field::LatencyNs, &IDEAL)?,
                };
                Ok((hosts(*given)?, FabricConfig::Ideal(params)))
            }
            FabricSpec::MultiRail {
                hosts: given,
                rails,
                rail_policy: policy,
                rail_threshold_bytes,
            } => multi_rail(*given, rails, rail_policy(*policy, *rail_threshold_bytes)?),
            FabricSpec::Switched(s) if matches!(s.shape, ShapeSpec::Map(_)) => s.map_fabric(),
            FabricSpec::Switched(s) => s.fabric(),
        }
    }
}

/// A multi-rail network of `rails`, each a switched network joining the same hosts.
fn multi_rail(
    given: Option<u32>,
    rails: &[SwitchedSpec],
    policy: RailPolicy,
) -> Result<(u32, FabricConfig), SpecError> {
    let mut configs = Vec::new();
    let mut hosts = None;
    for (index, rail) in rails.iter().enumerate() {
        let (rail_hosts, fabric) = match rail.shape {
            ShapeSpec::Map(_) => rail.map_fabric(),
            _ => rail.fabric(),
        }
        .map_err(|e| e.in_rail(index))?;
        let FabricConfig::Switched(config) = fabric else {
            return Err(field(Field::Map, "a map of several rails cannot be one rail of a network").in_rail(index));
        };
        match hosts {
            Some(first) if first != rail_hosts => {
                return Err(SpecError::Field {
                    at: At {
                        rail: Some(index),
                        ..At::default()
                    },
                    rule: format!("joins {rail_hosts} hosts, rails[0] {first}: every rail joins the same hosts"),
                });
            }
            _ => hosts = Some(rail_hosts),
        }
        configs.push(config);
    }
    let hosts = hosts.unwrap_or_default();
    if let Some(given) = given.filter(|&h| h != hosts) {
        return Err(field(
            Field::Hosts,
            format!("the rails join {hosts} hosts, not {given}"),
        ));
    }
    // Each rail is within the limit: all of them together must be too.
    let ports: u64 = configs.iter().map(SwitchedConfig::ports).sum();
    if ports > vesper_netmodels::topology::MAX_PORTS {
        return Err(field(
            Field::Rails,
            format!(
                "the {} rails have {ports} ports (hosts' and switches' together); vesper models at most 2^26 = \
                 67,108,864",
                configs.len()
            ),
        ));
    }
    Ok((hosts, FabricConfig::MultiRail { rails: configs, policy }))
}

/// How a host picks the rail of a message.
fn rail_policy(policy: Option<RailPolicyName>, threshold: Option<u32>) -> Result<RailPolicy, SpecError> {
    let policy = match policy.unwrap_or(RailPolicyName::RoundRobin) {
        RailPolicyName::RoundRobin => RailPolicy::RoundRobin,
        RailPolicyName::ByDestination => RailPolicy::ByDestination,
        RailPolicyName::Striped => RailPolicy::Striped,
        RailPolicyName::SizeThreshold => RailPolicy::SizeThreshold {
            bytes: threshold.ok_or_else(|| {
                field(
                    Field::RailThresholdBytes,
                    "rail_policy = \"size-threshold\" needs the size that leaves rail 0",
                )
            })?,
        },
    };
    if threshold.is_some() && !matches!(policy, RailPolicy::SizeThreshold { .. }) {
        return Err(field(
            Field::RailThresholdBytes,
            "applies to rail_policy = \"size-threshold\" only",
        ));
    }
    Ok(policy)
}

impl SwitchedSpec {
    /// The hosts and the network of a shape vesper makes (not a map).
    fn fabric(&self) -> Result<(u32, FabricConfig), SpecError> {
        let switched = self.on(self.shape.shape(self.hosts)?)?;
        let hosts = match (&switched.shape, self.shape.fixed_hosts()) {
            (Shape::Map(map), _) => map.net.topology.hosts,
            (shape, Some((what, from))) => {
                let hosts = shape.counts().hosts as u32;
                if let Some(given) = self.hosts.filter(|&h| h != hosts) {
                    return Err(field(
                        Field::Hosts,
                        format!("{what} has {hosts} hosts ({from}), not {given}; leave hosts out"),
                    ));
                }
                hosts
            }
            (shape, None) => host_count(shape.counts().hosts as u32).map_err(|rule| field(Field::Hosts, rule))?,
        };
        Ok((hosts, FabricConfig::Switched(switched)))
    }

    /// A network read from a map file: a single network, or one rail per host port.
    fn map_fabric(&self) -> Result<(u32, FabricConfig), SpecError> {
        let ShapeSpec::Map(MapSpec {
            map,
            routes,
            rail_policy: policy,
            rail_threshold_bytes,
            ..
        }) = &self.shape
        else {
            return self.fabric();
        };
        let path = map
            .as_ref()
            .ok_or_else(|| field(Field::Map, "kind = \"map\" needs its map file: map = FILE"))?;
        let file = path.display().to_string();
        let text = vesper_input::read_text(path, vesper_map2topo::MAX_MAP_BYTES)
            .map_err(|e| field(Field::Map, format!("{file}: {e}")))?;
        let rails = vesper_map2topo::read_map(&file, &text, LinkParams::default())
            .map_err(|e| SpecError::Mapping(e.to_string()))?;
        let hosts = rails.first().map_or(0, |r| r.topology.hosts);
        if let Some(given) = self.hosts.filter(|&h| h != hosts) {
            return Err(field(
                Field::Hosts,
                format!("the map has {hosts} hosts, not {given}; leave hosts out"),
            ));
        }
        if let Some(routes) = routes.as_ref().filter(|r| r.len() != rails.len()) {
            return Err(field(
                Field::Routes,
                format!(
                    "the map has {} rail(s) and {} route file(s) are given: one per rail, in rail order \
                     (routes = [\"rail0.routes\", \"rail1.routes\"], or --routes once per rail)",
                    rails.len(),
                    routes.len()
                ),
            ));
        }
        let mut configs = rails
            .into_iter()
            .enumerate()
            .map(|(rail, net)| {
                // Each rail with its own route file.
                let route = routes.as_ref().map(|r| r[rail].clone());
                self.on_map(
                    Shape::Map(MapShape {
                        file: file.clone(),
                        net: Arc::new(net),
                    }),
                    route,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        if configs.len() == 1 {
            if policy.is_some() || rail_threshold_bytes.is_some() {
                return Err(field(
                    Field::RailPolicy,
                    "the map has one rail: its hosts have one port each",
                ));
            }
            return Ok((hosts, FabricConfig::Switched(configs.remove(0))));
        }
        Ok((
            hosts,
            FabricConfig::MultiRail {
                rails: configs,
                policy: rail_policy(*policy, *rail_threshold_bytes)?,
            },
        ))
    }

    /// The routes of a map: shortest paths (tables), up*/down*, or the route file.
    fn map_routing(
        &self,
        net: &vesper_map2topo::NamedTopology,
        route: Option<&std::path::Path>,
    ) -> Result<RoutingPolicy, SpecError> {
        use vesper_netmodels::{ExplicitRoutes, MultipathPolicy};
        let ShapeSpec::Map(MapSpec { route_policy, .. }) = &self.shape else {
            return Ok(RoutingPolicy::ShortestPath);
        };
        let policy = match route_policy {
            None | Some(RoutePolicyName::First) => MultipathPolicy::First,
            Some(RoutePolicyName::RoundRobin) => MultipathPolicy::RoundRobin,
            Some(RoutePolicyName::Hash) => MultipathPolicy::Hash,
            Some(RoutePolicyName::Random) => MultipathPolicy::Random {
                seed: self.seed.unwrap_or(1),
            },
        };
        let hosts = net.topology.hosts;
        let pairs = u64::from(hosts) * u64::from(hosts);
        if (route.is_some() || self.routing == Some(RoutingName::UpDown))
            && pairs > vesper_netmodels::topology::explicit::MAX_PAIRS
        {
            return Err(field(
                Field::Routing,
                format!(
                    "route files and up*/down* routes are listed pair by pair: {hosts} hosts make {pairs} pairs, \
                     beyond the 2^26 (8,192 hosts) vesper keeps; use shortest-path tables"
                ),
            ));
        }
        let explicit = |name, list| {
            ExplicitRoutes::from_paths(hosts, policy, list)
                .map(|routes| RoutingPolicy::Explicit {
                    name,
                    routes: Arc::new(routes),
                })
                .map_err(|e| field(Field::Routes, e.to_string()))
        };
        match (route, self.routing) {
            (Some(path), None) => {
                let file = path.display().to_string();
                // Read a line at a time: a route file may hold gigabytes, no line more
                // than MAX_ROUTE_LINE_BYTES.
                let opened = vesper_input::open(path).map_err(|e| field(Field::Routes, format!("{file}: {e}")))?;
                let reader = std::io::BufReader::with_capacity(1 << 20, opened);
                let list = vesper_map2topo::routes::read_any_from(&file, reader, net)
                    .map_err(|e| field(Field::Routes, e.to_string()))?;
                explicit("routes", list)
            }
            (Some(_), Some(_)) => Err(field(
                Field::Routing,
                "a route file gives the routes: leave routing out",
            )),
            (None, None | Some(RoutingName::ShortestPath)) => {
                if route_policy.is_some() {
                    return Err(field(Field::RoutePolicy, "applies to route files (routes = FILE) only"));
                }
                Ok(RoutingPolicy::ShortestPath)
            }
            (None, Some(RoutingName::UpDown)) => {
                let (_, routes) = vesper_map2topo::generate::up_down(&net.topology)
                    .map_err(|e| field(Field::Routing, e.to_string()))?;
                explicit("up-down", routes)
            }
            (None, Some(_)) => Err(field(
                Field::Routing,
                "a map routes by \"shortest-path\" (the default), \"up-down\", or a route file (routes = FILE)",
            )),
        }
    }

    /// One rail of a map, routed by `route` (a file) or as `routing` says.
    fn on_map(&self, shape: Shape, route: Option<std::path::PathBuf>) -> Result<SwitchedConfig, SpecError> {
        let Shape::Map(MapShape { net, .. }) = &shape else {
            return self.on(shape);
        };
        let routing = self.map_routing(net, route.as_deref())?;
        self.with_routing(shape, routing)
    }

    /// The network of `shape` (not a map's), its routing checked against the shape.
    fn on(&self, shape: Shape) -> Result<SwitchedConfig, SpecError> {
        if let Shape::Map(_) = shape {
            return self.on_map(shape, None);
        }
        let routing = self.shape.routing(self.routing, self.seed.unwrap_or(1))?;
        self.with_routing(shape, routing)
    }

    /// The network of `shape` routed by `routing`: its links, switches and adapters.
    fn with_routing(&self, shape: Shape, routing: RoutingPolicy) -> Result<SwitchedConfig, SpecError> {
        // Sizes were checked as the shape was made (Xgft::new, Torus::new, host_count,
        // the map's reader): nothing too large to build gets here.
        let link_default = LinkParams::default();
        let propagation = delay(
            self.link_latency_ns,
            link_default.propagation,
            Field::LinkLatencyNs,
            &STEP,
        )?;
        let switch = SwitchParams {
            routing_latency: delay(
                self.routing_latency_ns,
                SwitchParams::default().routing_latency,
                Field::RoutingLatencyNs,
                &STEP,
            )?,
            kind: self.switch_kind(matches!(&shape, Shape::Torus(t) if t.has_rings()))?,
        };
        let adapter_default = AdapterParams::default();
        let adapter = AdapterParams {
            payload_bytes: self.packet_payload_bytes.unwrap_or(adapter_default.payload_bytes),
            header_bytes: self.packet_header_bytes.unwrap_or(adapter_default.header_bytes),
            interleave: self.interleave.map_or(adapter_default.interleave, interleave),
        };
        check_packets(None, adapter)?;
        if let (Shape::Map(MapShape { net, .. }), SwitchKind::Wormhole(_)) = (&shape, switch.kind) {
            deadlock_free(net, &routing)?;
        }
        if let (Shape::Dragonfly(_), SwitchKind::Wormhole(_)) = (&shape, switch.kind) {
            return Err(field(
                Field::Switch,
                "wormhole switches without virtual channels can deadlock on a dragonfly (its routes go local, \
                 global, local: channels wait on each other in cycles across groups), and vesper does not model \
                 virtual channels yet; use switch = \"output-queued\" or \"cioq\"",
            ));
        }
        let level_kinds = self.level_kinds(&shape, switch.kind)?;
        let (switch_kinds, host_adapters) = self.models(&shape, switch.kind, adapter)?;
        // The largest packet any adapter cuts must cross a link within one step.
        let packet = host_adapters
            .iter()
            .map(|(_, a)| a)
            .chain([&adapter])
            .map(|a| u64::from(a.payload_bytes) + u64::from(a.header_bytes))
            .max()
            .unwrap_or(0);
        let link = LinkParams {
            bandwidth: match self.link_bandwidth_mbs {
                None => link_default.bandwidth,
                Some(v) => rate(
                    v,
                    (Field::LinkBandwidthMbs, MB, "MB/s (10^6 bytes/s)"),
                    (packet, "a packet"),
                    &STEP,
                )?,
            },
            propagation,
        };
        let host_propagation = self
            .host_link_latency_ns
            .map(|ns| step_delay(ns, Field::HostLinkLatencyNs))
            .transpose()?;
        Ok(SwitchedConfig {
            level_kinds,
            switch_kinds,
            host_adapters,
            shape,
            routing,
            link,
            host_propagation,
            switch,
            adapter,
        })
    }

    /// The switch kinds of `[network.levels.N]` tables, checked against the tree.
    fn level_kinds(&self, shape: &Shape, kind: SwitchKind) -> Result<Vec<(u32, SwitchKind)>, SpecError> {
        let Some(levels) = self.shape.levels() else {
            return Ok(Vec::new());
        };
        // The shape's levels: 1 (the switches hosts hang off) to `height`.
        let height = (1..).take_while(|&l| shape.level(l).is_some()).count();
        let mut kinds = Vec::new();
        for (name, level) in levels {
            let table = Table::Level(name.clone());
            let number = name
                .parse::<u32>()
                .ok()
                .filter(|&l| (1..=height as u32).contains(&l))
                .ok_or_else(|| SpecError::Field {
                    at: At {
                        table: Some(table.clone()),
                        ..At::default()
                    },
                    rule: format!("expected a level from 1 to {height}"),
                })?;
            kinds.push((number, other_kind(&table, level, kind)?));
        }
        Ok(kinds)
    }

    /// The switch kind of every switch, and the adapters of every host, of a map whose
    /// `type` has a `[network.models.TYPE]` table.
    #[allow(clippy::type_complexity, reason = "two lists of (device, parameters)")]
    fn models(
        &self,
        shape: &Shape,
        kind: SwitchKind,
        adapter: AdapterParams,
    ) -> Result<(Vec<(u32, SwitchKind)>, Vec<(u32, AdapterParams)>), SpecError> {
        let (
            ShapeSpec::Map(MapSpec {
                models: Some(models), ..
            }),
            Shape::Map(MapShape { net, .. }),
        ) = (&self.shape, shape)
        else {
            return Ok((Vec::new(), Vec::new()));
        };
        let (mut kinds, mut adapters) = (Vec::new(), Vec::new());
        for (name, model) in models {
            let table = Table::Model(name.clone());
            let at = |field: Option<Field>| At {
                table: Some(table.clone()),
                field,
                ..At::default()
            };
            let of_type = |types: &[Option<String>]| -> Vec<u32> {
                (0..types.len() as u32)
                    .filter(|&i| types[i as usize].as_deref() == Some(name.as_str()))
                    .collect()
            };
            let (switches, hosts) = (of_type(&net.switch_types), of_type(&net.host_types));
            let switch_fields = [
                (Field::Switch, model.switch.is_some()),
                (Field::Speedup, model.speedup.is_some()),
                (Field::VirtualOutputQueues, model.virtual_output_queues.is_some()),
            ];
            let adapter_fields = [
                (Field::PacketPayloadBytes, model.packet_payload_bytes.is_some()),
                (Field::PacketHeaderBytes, model.packet_header_bytes.is_some()),
                (Field::Interleave, model.interleave.is_some()),
            ];
            let given = |fields: &[(Field, bool)]| fields.iter().find(|(_, set)| *set).map(|(f, _)| *f);
            let rule = |field: Option<Field>, rule: String| SpecError::Field { at: at(field), rule };
            match (switches.is_empty(), hosts.is_empty()) {
                (true, true) => return Err(rule(None, format!("no switch or host of the map has type {name}"))),
                (false, false) => {
                    return Err(rule(
                        None,
                        format!("both switches and hosts of the map have type {name}"),
                    ));
                }
                (false, true) => {
                    if let Some(f) = given(&adapter_fields) {
                        return Err(rule(Some(f), format!("type {name} is a switch's: no adapter")));
                    }
                    let spec = LevelSpec {
                        switch: model.switch,
                        speedup: model.speedup,
                        virtual_output_queues: model.virtual_output_queues,
                    };
                    let model_kind = other_kind(&table, &spec, kind)?;
                    kinds.extend(switches.into_iter().map(|s| (s, model_kind)));
                }
                (true, false) => {
                    if let Some(f) = given(&switch_fields) {
                        return Err(rule(Some(f), format!("type {name} is a host's: no switch")));
                    }
                    let params = AdapterParams {
                        payload_bytes: model.packet_payload_bytes.unwrap_or(adapter.payload_bytes),
                        header_bytes: model.packet_header_bytes.unwrap_or(adapter.header_bytes),
                        interleave: model.interleave.map_or(adapter.interleave, interleave),
                    };
                    check_packets(Some(&table), params)?;
                    adapters.extend(hosts.into_iter().map(|h| (h, params)));
                }
            }
        }
        kinds.sort_unstable_by_key(|&(s, _)| s);
        adapters.sort_unstable_by_key(|&(h, _)| h);
        Ok((kinds, adapters))
    }

    /// The switch kind; wormhole switches on a network with rings (`rings`) take bubble
    /// flow control unless told otherwise.
    fn switch_kind(&self, rings: bool) -> Result<SwitchKind, SpecError> {
        self.switch.kind(self.seed.unwrap_or(1), rings)
    }
}

/// The model's interleaving of `name`.
fn interleave(name: InterleaveName) -> Interleave {
    match name {
        InterleaveName::RoundRobin => Interleave::RoundRobin,
        InterleaveName::Fifo => Interleave::Fifo,
    }
}

/// The switch kind a `[network.levels.N]` or `[network.models.TYPE]` table gives, beside
/// the network's `kind`: output-queued or CIOQ (wormhole switches make a whole network).
fn other_kind(table: &Table, spec: &LevelSpec, kind: SwitchKind) -> Result<SwitchKind, SpecError> {
    let at = |field: Field| At {
        table: Some(table.clone()),
        ..At::field(field)
    };
    let switch = spec.switch.ok_or_else(|| SpecError::Field {
        at: at(Field::Switch),
        rule: "the table names a switch kind".into(),
    })?;
    if switch == SwitchName::Wormhole || matches!(kind, SwitchKind::Wormhole(_)) {
        return Err(SpecError::Field {
            at: at(Field::Switch),
            rule: "wormhole switches cannot share a network with other kinds: set switch = \"wormhole\" for the \
                   whole network instead"
                .into(),
        });
    }
    match switch {
        SwitchName::Cioq => cioq(Some(table), spec.speedup, spec.virtual_output_queues),
        _ => {
            let cioq_field = [
                (Field::Speedup, spec.speedup.is_some()),
                (Field::VirtualOutputQueues, spec.virtual_output_queues.is_some()),
            ]
            .into_iter()
            .find_map(|(f, set)| set.then_some(f));
            match cioq_field {
                Some(f) => Err(SpecError::NotApplicable {
                    at: at(f),
                    kind: super::names::KindName::Crossbar,
                }),
                None => Ok(SwitchKind::OutputQueued),
            }
        }
    }
}

/// The packets an adapter cuts, in the file's words (the model checks them too, in its
/// own): a payload of at least one byte, and a payload and header whose sum fits in 32
/// bits. `table`: the table holding the fields (`None`: the network's own).
fn check_packets(table: Option<&Table>, adapter: AdapterParams) -> Result<(), SpecError> {
    let error = |rule: String| SpecError::Field {
        at: At {
            table: table.cloned(),
            ..At::field(Field::PacketPayloadBytes)
        },
        rule,
    };
    if adapter.payload_bytes == 0 {
        return Err(error("a packet must carry at least one byte".into()));
    }
    if adapter.payload_bytes.checked_add(adapter.header_bytes).is_none() {
        return Err(error(format!(
            "{} bytes of payload and a header of {} bytes add up to more than {} bytes, the most a packet can hold",
            adapter.payload_bytes,
            adapter.header_bytes,
            u32::MAX
        )));
    }
    Ok(())
}

/// Refuses routes of a map that could deadlock wormhole switches (a cycle of channels
/// waiting on each other), naming the cycle.
fn deadlock_free(net: &vesper_map2topo::NamedTopology, routing: &RoutingPolicy) -> Result<(), SpecError> {
    use vesper_map2topo::generate::{deadlock_cycle_of, table_deadlock_cycle};
    let cycle = match routing {
        RoutingPolicy::Explicit { routes, .. } => {
            deadlock_cycle_of(&net.topology, routes.iter().map(|((src, _), path)| (src, path)))
        }
        _ => table_deadlock_cycle(&net.topology),
    };
    match cycle {
        None => Ok(()),
        Some(channels) => {
            let named: Vec<String> = channels
                .iter()
                .map(|&(s, p)| format!("{}.p{p}", net.name(vesper_netmodels::Device::Switch(s))))
                .collect();
            Err(field(
                Field::Routing,
                format!(
                    "routing \"{}\" can deadlock wormhole switches: channels {} wait on each other in a cycle; use \
                     routing = \"up-down\"",
                    routing.name(),
                    named.join(" → ")
                ),
            ))
        }
    }
}

/// A bound the model's clock puts on a time of the network (the model checks it too, in
/// its own words).
struct TimeLimit {
    /// the most the time may be
    longest: SimTime,
    /// what it bounds, and why
    allows: &'static str,
}

/// Every step of a switched network (see `SimTime::LONGEST_STEP`).
const STEP: TimeLimit = TimeLimit {
    longest: SimTime::LONGEST_STEP,
    allows: "one link, cable or routing decision (so that a packet crossing 65,536 of them stays within its clock: \
             64-bit picoseconds, about 213 days)",
};

/// The ideal network's latency and transfers (see `IdealParams::LONGEST_DELAY`).
const IDEAL: TimeLimit = TimeLimit {
    longest: IdealParams::LONGEST_DELAY,
    allows: "the ideal network's latency, and its transfer of a message, each (so that a message sent at the \
             last instant a client may send at still arrives within its clock: 64-bit picoseconds, about 213 days)",
};

impl TimeLimit {
    /// "more than the 17.592 s the model allows …"
    fn exceeded(&self) -> String {
        format!(
            "more than the {} the model allows {}",
            seconds_text(self.longest.as_secs_f64()),
            self.allows
        )
    }
}

/// A delay of one step of a switched network (a cable's, say) in ns, checked.
pub(crate) fn step_delay(ns: f64, name: Field) -> Result<SimTime, SpecError> {
    delay(Some(ns), SimTime::ZERO, name, &STEP)
}

/// A delay in ns within `limit`, or `default`.
fn delay(value: Option<f64>, default: SimTime, name: Field, limit: &TimeLimit) -> Result<SimTime, SpecError> {
    let Some(v) = value else {
        return Ok(default);
    };
    if v.is_nan() || v < 0.0 {
        return Err(field(name, "expected a non-negative time in ns"));
    }
    match time_from_ns(v) {
        Some(t) if t <= limit.longest => Ok(t),
        _ => Err(field(
            name,
            format!(
                "{} ns is {}; expected at most {}",
                number_text(v),
                limit.exceeded(),
                limit.longest
            ),
        )),
    }
}

/// Field `name`'s rate of `value` in `unit` (`unit_bytes` bytes per second), fast enough
/// to send `bytes` (`what`, for messages) within `limit`.
fn rate(
    value: f64,
    (name, unit_bytes, unit): (Field, u64, &str),
    (bytes, what): (u64, &str),
    limit: &TimeLimit,
) -> Result<Bandwidth, SpecError> {
    if value.is_nan() || value <= 0.0 {
        return Err(field(name, format!("expected a positive rate in {unit}")));
    }
    let short = unit.split(' ').next().unwrap_or(unit);
    let exact = bandwidth(value, unit_bytes);
    if let Some(b) = exact
        && b.serialization_time(bytes) <= limit.longest
    {
        return Ok(b);
    }
    if exact.is_none() && value >= 1.0 {
        return Err(field(
            name,
            format!(
                "{} {short} is beyond the rates vesper represents; expected at most {} {short}",
                number_text(value),
                u64::MAX / unit_bytes
            ),
        ));
    }
    let least = bytes as f64 / limit.longest.as_secs_f64() / unit_bytes as f64;
    Err(field(
        name,
        format!(
            "{} {short} makes {what} ({bytes} bytes) take {}, {}; expected at least {} {short}",
            number_text(value),
            seconds_text(bytes as f64 / (value * unit_bytes as f64)),
            limit.exceeded(),
            rounded_up(least)
        ),
    ))
}

/// `x` rounded up to three significant digits, written out (`0.000234`).
fn rounded_up(x: f64) -> String {
    let decimals = (2 - x.log10().floor() as i32).max(0);
    let scale = 10f64.powi(decimals);
    format!("{:.*}", decimals as usize, (x * scale).ceil() / scale)
}
