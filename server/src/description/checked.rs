//! A network description checked against what its kind and switches take: the typed
//! [`Description`], whose variants hold only their own fields. A field a network does not
//! take cannot reach the resolution: taking each variant's fields out of the
//! [`NetworkSpec`] leaves it behind, and a field left behind is refused by its
//! [`Claim`].

use std::path::PathBuf;

use super::error::{At, SpecError, field};
use super::fields::{Claim, Field, NetworkSpec};
use super::names::{InterleaveName, KindName, RailPolicyName, RoutePolicyName, RoutingName, SwitchName};
use super::shapes::{CrossbarSpec, MapSpec, ShapeSpec};
use super::switches::SwitchSpec;

/// A network description whose every field applies.
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    /// client nodes per host (the whole network's)
    pub nodes_per_host: Option<u32>,
    /// the task mapping file (the whole network's)
    pub mapping: Option<PathBuf>,
    /// the communication pattern of pattern-aware routes, as a file
    pub pattern: Option<PathBuf>,
    /// … or in memory
    pub pattern_phases: Option<Vec<Vec<(u32, u32)>>>,
    /// what joins the hosts
    pub fabric: FabricSpec,
}

/// What joins the hosts, by kind.
#[derive(Debug, Clone, PartialEq)]
#[allow(
    clippy::large_enum_variant,
    reason = "a description, checked once per network: its size does not matter"
)]
pub enum FabricSpec {
    /// `kind = "ideal"`
    Ideal {
        /// hosts
        hosts: Option<u32>,
        /// every transfer's rate [MBps, 2^20 bytes/s]
        bandwidth_mbps: Option<f64>,
        /// every transfer's latency \[ns\]
        latency_ns: Option<f64>,
    },
    /// a network of switches, any kind but ideal and multi-rail
    Switched(SwitchedSpec),
    /// `kind = "multi-rail"`
    MultiRail {
        /// hosts
        hosts: Option<u32>,
        /// the rails
        rails: Vec<SwitchedSpec>,
        /// how a host picks a message's rail
        rail_policy: Option<RailPolicyName>,
        /// size-threshold's smallest message off rail 0 \[bytes\]
        rail_threshold_bytes: Option<u32>,
    },
}

/// A network of adapters, cables and switches.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs, reason = "the fields are the description's fields of the same names")]
pub struct SwitchedSpec {
    pub hosts: Option<u32>,
    pub shape: ShapeSpec,
    pub routing: Option<RoutingName>,
    pub link_bandwidth_mbs: Option<f64>,
    pub link_latency_ns: Option<f64>,
    pub host_link_latency_ns: Option<f64>,
    pub routing_latency_ns: Option<f64>,
    pub packet_payload_bytes: Option<u32>,
    pub packet_header_bytes: Option<u32>,
    pub interleave: Option<InterleaveName>,
    pub seed: Option<u64>,
    pub switch: SwitchSpec,
}

impl NetworkSpec {
    /// The description with its `preset` (if any) beneath its own fields.
    pub fn expanded(&self) -> Result<NetworkSpec, SpecError> {
        let Some(name) = &self.preset else {
            return Ok(self.clone());
        };
        let mut base = super::preset::spec(name).map_err(|e| field(Field::Preset, e))?;
        if base.preset.is_some() {
            return Err(field(Field::Preset, format!("preset {name} names another preset")));
        }
        base.overlay(NetworkSpec {
            preset: None,
            ..self.clone()
        });
        base.preset = None;
        Ok(base)
    }

    /// The description checked: each field where its kind and switches take it.
    pub fn check(&self) -> Result<Description, SpecError> {
        let mut spec = self.expanded()?;
        let kind = spec.kind.take().unwrap_or_default();
        let (nodes_per_host, mapping) = (spec.nodes_per_host.take(), spec.mapping.take());
        let pattern_phases = spec.pattern_phases.take();
        let fabric = match kind {
            KindName::Ideal => {
                let fabric = FabricSpec::Ideal {
                    hosts: spec.hosts.take(),
                    bandwidth_mbps: spec.bandwidth_mbps.take(),
                    latency_ns: spec.latency_ns.take(),
                };
                refuse_the_rest(&spec, kind)?;
                fabric
            }
            KindName::MultiRail => {
                let (hosts, rails) = (spec.hosts.take(), spec.rails.take().unwrap_or_default());
                let (rail_policy, rail_threshold_bytes) = (spec.rail_policy.take(), spec.rail_threshold_bytes.take());
                // The pattern is the whole network's; the other switched fields apply to
                // every rail, over the rail's own.
                let pattern = spec.pattern.take();
                let mut over = NetworkSpec::default();
                for f in spec.given() {
                    if matches!(f.claim(), Claim::Switched | Claim::Switches(_)) {
                        over.take_from(&mut spec, f);
                    }
                }
                refuse_the_rest(&spec, kind)?;
                if rails.is_empty() {
                    return Err(field(
                        Field::Rails,
                        "a multi-rail network needs its rails: one [[network.rails]] table each",
                    ));
                }
                let rails = rails
                    .iter()
                    .enumerate()
                    .map(|(index, rail)| rail_of(rail, hosts, &over).map_err(|e| e.in_rail(index)))
                    .collect::<Result<Vec<_>, _>>()?;
                return Ok(Description {
                    nodes_per_host,
                    mapping,
                    pattern,
                    pattern_phases,
                    fabric: FabricSpec::MultiRail {
                        hosts,
                        rails,
                        rail_policy,
                        rail_threshold_bytes,
                    },
                });
            }
            _ => {
                let pattern = spec.pattern.take();
                let switched = switched(&mut spec, kind)?;
                return Ok(Description {
                    nodes_per_host,
                    mapping,
                    pattern,
                    pattern_phases,
                    fabric: FabricSpec::Switched(switched),
                });
            }
        };
        Ok(Description {
            nodes_per_host,
            mapping,
            pattern: None,
            pattern_phases,
            fabric,
        })
    }

    /// Moves `field` of `from` into this description.
    fn take_from(&mut self, from: &mut NetworkSpec, field: Field) {
        let mut one = from.clone();
        for other in Field::ALL.iter().copied().filter(|&f| f != field) {
            one.clear(other);
        }
        self.overlay(one);
        from.clear(field);
    }
}

/// Refuses every field `spec` still gives: none of them applies to a network of `kind`
/// (each takes its own fields out first).
fn refuse_the_rest(spec: &NetworkSpec, kind: KindName) -> Result<(), SpecError> {
    match spec.given().first() {
        Some(&f) => Err(SpecError::NotApplicable { at: At::field(f), kind }),
        None => Ok(()),
    }
}

/// Rail `rail` of a multi-rail network of `hosts`, with the network's fields `over` its own.
fn rail_of(rail: &NetworkSpec, hosts: Option<u32>, over: &NetworkSpec) -> Result<SwitchedSpec, SpecError> {
    let mut spec = rail.expanded()?;
    // Whole-network fields, and the pattern of the whole network's routes.
    if let Some(&f) = spec
        .given()
        .iter()
        .find(|f| f.claim() == Claim::Whole || matches!(f, Field::Pattern | Field::PatternPhases))
    {
        return Err(field(f, "applies to the whole network: set it at the top"));
    }
    let kind = spec.kind.take().unwrap_or_default();
    if matches!(kind, KindName::Ideal | KindName::MultiRail) {
        return Err(field(
            Field::Kind,
            "a rail is a switched network: any kind but \"ideal\" and \"multi-rail\"",
        ));
    }
    if spec.hosts.is_none() && kind == KindName::Crossbar {
        spec.hosts = hosts;
    }
    spec.overlay(over.clone());
    switched(&mut spec, kind)
}

/// The switched network of `kind` that `spec` describes; its fields are taken out.
fn switched(spec: &mut NetworkSpec, kind: KindName) -> Result<SwitchedSpec, SpecError> {
    // The ideal network and multi-rail take their own fields before (see `check`).
    let shape = ShapeSpec::take(kind, spec).unwrap_or(ShapeSpec::Crossbar(CrossbarSpec));
    let name = spec.switch.take().unwrap_or(SwitchName::OutputQueued);
    let switch = SwitchSpec::take(name, spec);
    let routing = spec.routing.take();
    // The seed draws the wormhole switches' pointers, random routes, a dragonfly's
    // intermediate routers, and random choices among a pair's routes.
    let random = routing.is_some_and(RoutingName::draws)
        || matches!(
            &shape,
            ShapeSpec::Map(MapSpec {
                route_policy: Some(RoutePolicyName::Random),
                ..
            })
        );
    let seed = spec.seed.take();
    if seed.is_some() && !random && name != SwitchName::Wormhole {
        return Err(field(
            Field::Seed,
            "applies to switch = \"wormhole\", routing = \"random\", \"valiant\" or \"ugal\", or route_policy = \
             \"random\" only",
        ));
    }
    let switched = SwitchedSpec {
        hosts: spec.hosts.take(),
        shape,
        routing,
        link_bandwidth_mbs: spec.link_bandwidth_mbs.take(),
        link_latency_ns: spec.link_latency_ns.take(),
        host_link_latency_ns: spec.host_link_latency_ns.take(),
        routing_latency_ns: spec.routing_latency_ns.take(),
        packet_payload_bytes: spec.packet_payload_bytes.take(),
        packet_header_bytes: spec.packet_header_bytes.take(),
        interleave: spec.interleave.take(),
        seed,
        switch,
    };
    refuse_the_rest(spec, kind)?;
    Ok(switched)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::description::names::{ArbitrationName, ArrangementName, GranularityName, PointerSpec};

    /// Each field's claim says exactly which networks take it: a network of every kind
    /// and switch given that one field is refused, by the claim's rule, exactly where
    /// the claim says it does not apply.
    #[test]
    fn claims_match_what_each_network_takes() {
        for &f in Field::ALL {
            if matches!(f, Field::Preset | Field::Kind | Field::Seed | Field::Switch) {
                continue;
            }
            for &kind in KindName::ALL {
                for switch in [SwitchName::OutputQueued, SwitchName::Cioq, SwitchName::Wormhole] {
                    let mut spec = NetworkSpec {
                        kind: Some(kind),
                        switch: (kind != KindName::Ideal).then_some(switch),
                        ..NetworkSpec::default()
                    };
                    if kind == KindName::MultiRail {
                        spec.rails = Some(vec![NetworkSpec::default()]);
                    }
                    let mut one = one_field(f);
                    if f == Field::Rails {
                        one.rails = Some(vec![NetworkSpec::default()]);
                    }
                    spec.overlay(one);
                    let takes = match f.claim() {
                        Claim::Any | Claim::Whole => true,
                        Claim::Kinds(kinds) => kinds.contains(&kind),
                        Claim::Switched => kind != KindName::Ideal,
                        Claim::Switches(switches) => kind != KindName::Ideal && switches.contains(&switch),
                    };
                    let refused = matches!(
                        spec.check(),
                        Err(SpecError::NotApplicable { ref at, .. }) if at.field == Some(f)
                    );
                    assert_eq!(!refused, takes, "{} on {} with {switch:?}", f.key(), kind.name());
                }
            }
        }
    }

    /// A description giving `f` alone (any value: only its presence is checked).
    fn one_field(f: Field) -> NetworkSpec {
        let mut spec = NetworkSpec {
            hosts: Some(1),
            nodes_per_host: Some(1),
            mapping: Some("m".into()),
            m: Some(vec![]),
            w: Some(vec![]),
            k: Some(1),
            n: Some(1),
            k_up: Some(1),
            levels: Some(BTreeMap::new()),
            dims: Some(vec![]),
            dimensions: Some(1),
            hosts_per_switch: Some(1),
            p: Some(1),
            a: Some(1),
            h: Some(1),
            g: Some(1),
            arrangement: Some(ArrangementName::Absolute),
            ugal_threshold: Some(1),
            global_link_latency_ns: Some(1.0),
            rails: Some(Vec::new()),
            models: Some(BTreeMap::new()),
            map: Some("m".into()),
            routes: Some(vec![]),
            route_policy: Some(RoutePolicyName::First),
            rail_policy: Some(RailPolicyName::RoundRobin),
            rail_threshold_bytes: Some(1),
            bandwidth_mbps: Some(1.0),
            latency_ns: Some(1.0),
            routing: Some(RoutingName::ShortestPath),
            pattern: Some("p".into()),
            pattern_phases: Some(vec![]),
            link_bandwidth_mbs: Some(1.0),
            link_latency_ns: Some(1.0),
            host_link_latency_ns: Some(1.0),
            routing_latency_ns: Some(1.0),
            packet_payload_bytes: Some(1),
            packet_header_bytes: Some(1),
            interleave: Some(InterleaveName::Fifo),
            speedup: Some(1),
            virtual_output_queues: Some(true),
            flit_bytes: Some(1),
            buffer_bytes: Some(1),
            bubble: Some(true),
            arbitration: Some(ArbitrationName::OldestFirst),
            granularity: Some(GranularityName::Fine),
            initial_pointer: Some(PointerSpec::Port(0)),
            ..NetworkSpec::default()
        };
        for other in Field::ALL.iter().copied().filter(|&o| o != f) {
            spec.clear(other);
        }
        spec
    }
}
