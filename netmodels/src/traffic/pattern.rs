//! Spatial traffic patterns: where each packet goes (seed 002 §3.2.1.1, Table 12).
//!
//! Hosts are numbered `0..N`. *Random* patterns draw a destination for every packet
//! (uniform, hot spot, hot region); *permutations* give every source one fixed
//! destination. The bit permutations work on the `l = log2 N` bits of a host number,
//! bit 0 the least significant, and need `N` a power of two:
//!
//! ```text
//!   bit complement   d_i = ~s_i                      BC(11011000) = 00100111
//!   bit reversal     d_i = s_(l-i-1)                 BR(11011000) = 00011011
//!   transpose        d_i = s_((i + l/2) mod l)       BT(11011000) = 10001101
//!   butterfly        d_(l-1) = s_0, d_0 = s_(l-1)    BU(11011000) = 01011001
//!   perfect shuffle  d_i = s_((i-1) mod l)           PS(11011000) = 10110001
//!   tornado          d_x = (n_x/2 + s_x) mod n_x, d_y = s_y   (hosts as an n_x × n_y grid)
//! ```
//!
//! `group-shift:N` is a dragonfly's adversarial pattern (Kim, Dally, Scott and Abts,
//! 2008, "WC"): hosts in groups of `N` (a dragonfly's `p·a`), every packet of group `i`
//! to a random host of group `i + 1 mod G`, so that minimal routing sends a group's
//! whole traffic over the one global cable between the two groups.
//!
//! A permutation may map a host to itself (bit reversal of a palindrome, say): such a
//! packet still leaves its host and comes back through the host's switch.

use std::fmt;
use std::str::FromStr;

use crate::ids::HostId;
use crate::rng::Rng;

/// Where packets go.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum Pattern {
    /// every other host equally likely (`self_allowed`: every host, the source too)
    Uniform {
        /// the source may pick itself
        self_allowed: bool,
    },
    /// a `fraction` of packets go to host `host`, the rest uniformly to the others
    HotSpot {
        /// the hot host
        host: u32,
        /// share of packets sent to it, in `[0, 1]`
        fraction: f64,
    },
    /// a `fraction` of packets go uniformly to hosts `first..first + count`, the rest
    /// uniformly to every other host than the source
    HotRegion {
        /// the region's first host
        first: u32,
        /// hosts in the region
        count: u32,
        /// share of packets sent to the region, in `[0, 1]`
        fraction: f64,
    },
    /// `d_i = ~s_i`
    BitComplement,
    /// `d_i = s_(l-i-1)`
    BitReversal,
    /// `d_i = s_((i + l/2) mod l)`: the two halves of the bits swapped
    Transpose,
    /// `d_(l-1) = s_0`, `d_0 = s_(l-1)`, the other bits kept
    Butterfly,
    /// `d_i = s_((i-1) mod l)`: the bits rotated left by one
    PerfectShuffle,
    /// hosts as an `n_x × (N / n_x)` grid, host `s = s_x + n_x · s_y`; `d_x = (n_x/2 +
    /// s_x) mod n_x`, `d_y = s_y`. `columns = None`: a square grid (`n_x = √N`)
    Tornado {
        /// `n_x`, the hosts of a row
        columns: Option<u32>,
    },
    /// the next host, `d = (s + 1) mod N` (on a torus or mesh of one host per switch,
    /// the neighbour along the first dimension)
    NearestNeighbour,
    /// a permutation drawn once from the traffic's seed (Fisher–Yates)
    RandomPermutation,
    /// hosts in groups of `group`; every packet to a random host of the next group
    /// (`None`: the network's own groups, filled in by whoever knows them)
    GroupShift {
        /// hosts in a group
        group: Option<u32>,
    },
}

/// Why a pattern cannot be used: each carries the pattern as written and the values
/// that break the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatternError {
    /// not a pattern's name
    #[error("{pattern}: no such pattern; the patterns are {}", PATTERN_SYNTAX)]
    UnknownName {
        /// the pattern as written
        pattern: String,
        /// its name (before the first `:`)
        name: String,
    },
    /// more parameters than the pattern takes
    #[error("{pattern}: {name} takes at most {max} parameters")]
    TooManyParameters {
        /// the pattern as written
        pattern: String,
        /// its name
        name: String,
        /// the parameters it takes
        max: usize,
        /// the parameters given
        given: usize,
    },
    /// `hot-region:FIRST` without its host count
    #[error("{pattern}: give both the first host and the host count")]
    MissingCount {
        /// the pattern as written
        pattern: String,
    },
    /// a host or host count that is not a whole number
    #[error("{pattern}: {param} must be a host count or number, not {given:?}")]
    NotANumber {
        /// the pattern as written
        pattern: String,
        /// the parameter
        param: PatternParam,
        /// its text
        given: String,
    },
    /// a fraction that is not a number from 0 to 1
    #[error("{pattern}: the fraction must be a number from 0 to 1, not {given:?}")]
    FractionOutOfRange {
        /// the pattern as written
        pattern: String,
        /// its text
        given: String,
    },
    /// a network of fewer than two hosts
    #[error("{pattern}: needs two hosts or more, the network has {hosts}")]
    TooFewHosts {
        /// the pattern
        pattern: String,
        /// the network's hosts
        hosts: u32,
    },
    /// a bit permutation on a number of hosts that is not a power of two
    #[error("{pattern}: a bit permutation needs a power-of-two number of hosts, the network has {hosts}")]
    NotPowerOfTwo {
        /// the pattern
        pattern: String,
        /// the network's hosts
        hosts: u32,
    },
    /// a hot spot beyond the network's hosts
    #[error("{pattern}: host {host} does not exist (the network has {hosts})")]
    NoSuchHost {
        /// the pattern
        pattern: String,
        /// the hot host
        host: u32,
        /// the network's hosts
        hosts: u32,
    },
    /// a hot region empty or beyond the network's hosts
    #[error(
        "{pattern}: the region {first}..{} must be non-empty and within the {hosts} hosts",
        u64::from(*first) + u64::from(*count)
    )]
    RegionOutside {
        /// the pattern
        pattern: String,
        /// the region's first host
        first: u32,
        /// hosts in the region
        count: u32,
        /// the network's hosts
        hosts: u32,
    },
    /// tornado rows that do not divide the hosts
    #[error("{pattern}: the rows of {columns} hosts must divide the {hosts} hosts")]
    RowsDoNotDivide {
        /// the pattern
        pattern: String,
        /// the hosts of a row
        columns: u32,
        /// the network's hosts
        hosts: u32,
    },
    /// group shift: groups that do not divide the hosts, or fewer than two of them
    #[error("{pattern}: groups of {group} hosts must divide the {hosts} hosts into two groups or more")]
    GroupsDoNotDivide {
        /// the pattern
        pattern: String,
        /// hosts in a group
        group: u32,
        /// the network's hosts
        hosts: u32,
    },
    /// group shift without its group size, on a network that has no groups
    #[error("{pattern}: give the hosts of a group as group-shift:N (only a dragonfly has groups of its own)")]
    NoGroups {
        /// the pattern
        pattern: String,
    },
    /// tornado without its row length on a number of hosts that is not a square
    #[error(
        "{pattern}: needs a square number of hosts (a 2D grid), the network has {hosts}; give the row length as \
         tornado:NX"
    )]
    NotSquare {
        /// the pattern
        pattern: String,
        /// the network's hosts
        hosts: u32,
    },
}

/// A whole-number parameter of a pattern, as [`PATTERN_SYNTAX`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatternParam {
    /// `hot-spot`'s HOST
    Host,
    /// `hot-region`'s FIRST
    First,
    /// `hot-region`'s COUNT
    Count,
    /// `tornado`'s NX
    Columns,
    /// `group-shift`'s N
    Group,
}

impl fmt::Display for PatternParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PatternParam::Host => "the host",
            PatternParam::First => "the first host",
            PatternParam::Count => "the host count",
            PatternParam::Columns => "NX",
            PatternParam::Group => "N",
        })
    }
}

/// The names [`Pattern::from_str`] reads, with their parameters.
pub const PATTERN_SYNTAX: &str = "uniform, uniform-self, hot-spot[:HOST[:FRACTION]], \
     hot-region[:FIRST:COUNT[:FRACTION]], bit-complement, bit-reversal, transpose, butterfly, \
     perfect-shuffle, tornado[:NX], nearest-neighbour, random-permutation, group-shift[:N]";

impl FromStr for Pattern {
    type Err = PatternError;

    /// `NAME[:PARAM…]`, e.g. `hot-spot:0:0.2` (see [`PATTERN_SYNTAX`]).
    fn from_str(text: &str) -> Result<Pattern, PatternError> {
        let mut parts = text.split(':');
        let name = parts.next().unwrap_or_default();
        let params: Vec<&str> = parts.collect();
        let pattern = || text.to_string();
        let number = |i: usize, param: PatternParam| -> Result<Option<u32>, PatternError> {
            params
                .get(i)
                .map(|p| {
                    p.parse().map_err(|_| PatternError::NotANumber {
                        pattern: pattern(),
                        param,
                        given: p.to_string(),
                    })
                })
                .transpose()
        };
        let fraction = |i: usize, default: f64| -> Result<f64, PatternError> {
            match params.get(i) {
                None => Ok(default),
                Some(p) => match p.parse::<f64>() {
                    Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
                    _ => Err(PatternError::FractionOutOfRange {
                        pattern: pattern(),
                        given: p.to_string(),
                    }),
                },
            }
        };
        let max_params = match name {
            "hot-spot" => 2,
            "hot-region" => 3,
            "tornado" | "group-shift" => 1,
            _ => 0,
        };
        if params.len() > max_params {
            return Err(PatternError::TooManyParameters {
                pattern: pattern(),
                name: name.to_string(),
                max: max_params,
                given: params.len(),
            });
        }
        Ok(match name {
            "uniform" => Pattern::Uniform { self_allowed: false },
            "uniform-self" => Pattern::Uniform { self_allowed: true },
            "hot-spot" => Pattern::HotSpot {
                host: number(0, PatternParam::Host)?.unwrap_or(0),
                fraction: fraction(1, 0.1)?,
            },
            "hot-region" => {
                if params.len() == 1 {
                    return Err(PatternError::MissingCount { pattern: pattern() });
                }
                Pattern::HotRegion {
                    first: number(0, PatternParam::First)?.unwrap_or(0),
                    count: number(1, PatternParam::Count)?.unwrap_or(1),
                    fraction: fraction(2, 0.25)?,
                }
            }
            "bit-complement" => Pattern::BitComplement,
            "bit-reversal" => Pattern::BitReversal,
            "transpose" => Pattern::Transpose,
            "butterfly" => Pattern::Butterfly,
            "perfect-shuffle" => Pattern::PerfectShuffle,
            "tornado" => Pattern::Tornado {
                columns: number(0, PatternParam::Columns)?,
            },
            "nearest-neighbour" | "nearest-neighbor" => Pattern::NearestNeighbour,
            "random-permutation" => Pattern::RandomPermutation,
            "group-shift" => Pattern::GroupShift {
                group: number(0, PatternParam::Group)?,
            },
            _ => {
                return Err(PatternError::UnknownName {
                    pattern: pattern(),
                    name: name.to_string(),
                });
            }
        })
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Uniform { self_allowed: false } => write!(f, "uniform"),
            Pattern::Uniform { self_allowed: true } => write!(f, "uniform-self"),
            Pattern::HotSpot { host, fraction } => write!(f, "hot-spot:{host}:{fraction}"),
            Pattern::HotRegion { first, count, fraction } => write!(f, "hot-region:{first}:{count}:{fraction}"),
            Pattern::BitComplement => write!(f, "bit-complement"),
            Pattern::BitReversal => write!(f, "bit-reversal"),
            Pattern::Transpose => write!(f, "transpose"),
            Pattern::Butterfly => write!(f, "butterfly"),
            Pattern::PerfectShuffle => write!(f, "perfect-shuffle"),
            Pattern::Tornado { columns: None } => write!(f, "tornado"),
            Pattern::Tornado { columns: Some(n) } => write!(f, "tornado:{n}"),
            Pattern::NearestNeighbour => write!(f, "nearest-neighbour"),
            Pattern::RandomPermutation => write!(f, "random-permutation"),
            Pattern::GroupShift { group: None } => write!(f, "group-shift"),
            Pattern::GroupShift { group: Some(n) } => write!(f, "group-shift:{n}"),
        }
    }
}

/// A pattern fitted to a network: draws destinations.
#[derive(Debug, Clone)]
pub struct Destinations {
    hosts: u32,
    kind: Draw,
}

#[derive(Debug, Clone)]
enum Draw {
    Uniform {
        self_allowed: bool,
    },
    /// a `fraction` of packets to `first..first + count`, the others uniform (not self)
    Hot {
        first: u32,
        count: u32,
        fraction: f64,
    },
    /// the destination of every source
    Fixed(Vec<u32>),
    /// a random host of the next group of `group` hosts
    Shift {
        group: u32,
    },
}

impl Pattern {
    /// The pattern with the network's groups of `group` hosts filled in where it asks
    /// for them (`group-shift` without its N); `None`: the network has no groups.
    pub fn with_groups(self, group: Option<u32>) -> Pattern {
        match (self, group) {
            (Pattern::GroupShift { group: None }, Some(group)) => Pattern::GroupShift { group: Some(group) },
            (pattern, _) => pattern,
        }
    }

    /// The pattern for `hosts` hosts; `seed` draws the random permutation. Refuses host
    /// counts the definition does not cover (bit permutations need a power of two).
    pub fn destinations(&self, hosts: u32, seed: u64) -> Result<Destinations, PatternError> {
        let pattern = || self.to_string();
        if hosts < 2 {
            return Err(PatternError::TooFewHosts {
                pattern: pattern(),
                hosts,
            });
        }
        let bits = || {
            if hosts.is_power_of_two() {
                Ok(hosts.trailing_zeros())
            } else {
                Err(PatternError::NotPowerOfTwo {
                    pattern: pattern(),
                    hosts,
                })
            }
        };
        let permutation = |f: &dyn Fn(u32) -> u32| Draw::Fixed((0..hosts).map(f).collect());
        let kind = match *self {
            Pattern::Uniform { self_allowed } => Draw::Uniform { self_allowed },
            Pattern::HotSpot { host, fraction } => {
                if host >= hosts {
                    return Err(PatternError::NoSuchHost {
                        pattern: pattern(),
                        host,
                        hosts,
                    });
                }
                Draw::Hot {
                    first: host,
                    count: 1,
                    fraction,
                }
            }
            Pattern::HotRegion { first, count, fraction } => {
                if count == 0 || u64::from(first) + u64::from(count) > u64::from(hosts) {
                    return Err(PatternError::RegionOutside {
                        pattern: pattern(),
                        first,
                        count,
                        hosts,
                    });
                }
                Draw::Hot { first, count, fraction }
            }
            Pattern::BitComplement => {
                let l = bits()?;
                permutation(&|s| !s & mask(l))
            }
            Pattern::BitReversal => {
                let l = bits()?;
                permutation(&|s| (0..l).map(|i| bit(s, l - i - 1) << i).sum())
            }
            Pattern::Transpose => {
                let l = bits()?;
                permutation(&|s| (0..l).map(|i| bit(s, (i + l / 2) % l) << i).sum())
            }
            Pattern::Butterfly => {
                let l = bits()?;
                permutation(&|s| {
                    let top = l - 1;
                    let middle = s & !(1 | (1 << top));
                    middle | (bit(s, 0) << top) | bit(s, top)
                })
            }
            Pattern::PerfectShuffle => {
                let l = bits()?;
                permutation(&|s| (0..l).map(|i| bit(s, (i + l - 1) % l) << i).sum())
            }
            Pattern::Tornado { columns } => {
                let nx = match columns {
                    Some(nx) if nx > 0 && hosts.is_multiple_of(nx) => nx,
                    Some(nx) => {
                        return Err(PatternError::RowsDoNotDivide {
                            pattern: pattern(),
                            columns: nx,
                            hosts,
                        });
                    }
                    None => {
                        let root = (f64::from(hosts).sqrt().round()) as u32;
                        if root * root != hosts {
                            return Err(PatternError::NotSquare {
                                pattern: pattern(),
                                hosts,
                            });
                        }
                        root
                    }
                };
                permutation(&|s| {
                    let (x, y) = (s % nx, s / nx);
                    (nx / 2 + x) % nx + nx * y
                })
            }
            Pattern::NearestNeighbour => permutation(&|s| (s + 1) % hosts),
            Pattern::RandomPermutation => {
                let mut rng = Rng::keyed(seed, &[0x7065_726d]);
                let mut order: Vec<u32> = (0..hosts).collect();
                for i in (1..order.len()).rev() {
                    let j = rng.below(i as u64 + 1) as usize;
                    order.swap(i, j);
                }
                Draw::Fixed(order)
            }
            Pattern::GroupShift { group: None } => return Err(PatternError::NoGroups { pattern: pattern() }),
            Pattern::GroupShift { group: Some(group) } => {
                if group == 0 || !hosts.is_multiple_of(group) || hosts / group < 2 {
                    return Err(PatternError::GroupsDoNotDivide {
                        pattern: pattern(),
                        group,
                        hosts,
                    });
                }
                Draw::Shift { group }
            }
        };
        Ok(Destinations { hosts, kind })
    }
}

fn mask(bits: u32) -> u32 {
    if bits >= 32 { u32::MAX } else { (1 << bits) - 1 }
}

fn bit(value: u32, i: u32) -> u32 {
    (value >> i) & 1
}

impl Destinations {
    /// The destination of a packet from `src`, drawing from `rng` when the pattern is
    /// random.
    pub fn pick(&self, src: HostId, rng: &mut Rng) -> HostId {
        let n = self.hosts;
        let other = |rng: &mut Rng| {
            let d = rng.below(u64::from(n - 1)) as u32;
            if d >= src.0 { d + 1 } else { d }
        };
        HostId(match &self.kind {
            Draw::Uniform { self_allowed: true } => rng.below(u64::from(n)) as u32,
            Draw::Uniform { self_allowed: false } => other(rng),
            Draw::Hot { first, count, fraction } => {
                if rng.unit() < *fraction {
                    first + rng.below(u64::from(*count)) as u32
                } else {
                    other(rng)
                }
            }
            Draw::Fixed(table) => table[src.index()],
            Draw::Shift { group } => {
                let next = (src.0 / group + 1) % (n / group);
                next * group + rng.below(u64::from(*group)) as u32
            }
        })
    }

    /// The fixed destination of every source, for permutations.
    pub fn permutation(&self) -> Option<&[u32]> {
        match &self.kind {
            Draw::Fixed(table) => Some(table),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(pattern: &str, hosts: u32) -> Vec<u32> {
        let p: Pattern = pattern.parse().expect("a pattern");
        p.destinations(hosts, 1)
            .expect("fits")
            .permutation()
            .expect("a permutation")
            .to_vec()
    }

    #[test]
    fn table_12_examples() {
        let s = 0b1101_1000;
        let at = |p: &str| table(p, 256)[s];
        assert_eq!(at("bit-complement"), 0b0010_0111);
        assert_eq!(at("bit-reversal"), 0b0001_1011);
        assert_eq!(at("transpose"), 0b1000_1101);
        assert_eq!(at("butterfly"), 0b0101_1001);
        assert_eq!(at("perfect-shuffle"), 0b1011_0001);
        // TO 8x8 (<3, 2>) = <7, 2>: host 3 + 8·2 to host 7 + 8·2.
        assert_eq!(table("tornado", 64)[3 + 8 * 2], 7 + 8 * 2);
        assert_eq!(table("tornado:8", 64)[3 + 8 * 2], 7 + 8 * 2);
    }

    #[test]
    fn permutations_of_eight_hosts() {
        // l = 3: bits written s2 s1 s0.
        assert_eq!(table("bit-complement", 8), [7, 6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(table("bit-reversal", 8), [0, 4, 2, 6, 1, 5, 3, 7]);
        // d_i = s_((i + 1) mod 3): rotate right by one.
        assert_eq!(table("transpose", 8), [0, 4, 1, 5, 2, 6, 3, 7]);
        assert_eq!(table("butterfly", 8), [0, 4, 2, 6, 1, 5, 3, 7]);
        assert_eq!(table("perfect-shuffle", 8), [0, 2, 4, 6, 1, 3, 5, 7]);
        assert_eq!(table("nearest-neighbour", 8), [1, 2, 3, 4, 5, 6, 7, 0]);
        assert_eq!(table("tornado:4", 8), [2, 3, 0, 1, 6, 7, 4, 5]);
        // Sixteen hosts: transpose swaps the two 2-bit halves.
        assert_eq!(
            table("transpose", 16),
            [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15]
        );
        assert_eq!(
            table("butterfly", 16),
            [0, 8, 2, 10, 4, 12, 6, 14, 1, 9, 3, 11, 5, 13, 7, 15]
        );
    }

    #[test]
    fn random_permutation_is_a_permutation_fixed_by_the_seed() {
        let p = Pattern::RandomPermutation;
        let a = p.destinations(100, 7).expect("fits");
        let mut sorted = a.permutation().expect("fixed").to_vec();
        assert_eq!(p.destinations(100, 7).expect("fits").permutation(), a.permutation());
        assert_ne!(p.destinations(100, 8).expect("fits").permutation(), a.permutation());
        sorted.sort_unstable();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn random_patterns_draw_what_they_say() {
        let mut rng = Rng::new(3);
        let uniform = Pattern::Uniform { self_allowed: false }
            .destinations(4, 0)
            .expect("fits");
        let mut seen = [0u32; 4];
        for _ in 0..4000 {
            seen[uniform.pick(HostId(1), &mut rng).index()] += 1;
        }
        assert_eq!(seen[1], 0);
        assert!(
            seen.iter()
                .enumerate()
                .all(|(h, &n)| h == 1 || (1150..1520).contains(&n)),
            "{seen:?}"
        );
        let hot = "hot-spot:2:0.5"
            .parse::<Pattern>()
            .expect("valid")
            .destinations(8, 0)
            .expect("fits");
        let to_hot = (0..4000).filter(|_| hot.pick(HostId(0), &mut rng) == HostId(2)).count();
        // One half, plus 1/7 of the other half.
        assert!((2150..2420).contains(&to_hot), "{to_hot}");
        let shift = "group-shift:4".parse::<Pattern>().expect("valid");
        assert_eq!(shift.to_string(), "group-shift:4");
        let shift = shift.destinations(12, 0).expect("fits");
        let mut seen = [0u32; 12];
        for _ in 0..4000 {
            seen[shift.pick(HostId(9), &mut rng).index()] += 1;
            // The last group sends to the first.
            assert!(shift.pick(HostId(1), &mut rng).0 / 4 == 1);
        }
        assert!(seen[..4].iter().all(|&n| (850..1150).contains(&n)), "{seen:?}");
        assert!(seen[4..].iter().all(|&n| n == 0), "{seen:?}");
        let own = Pattern::GroupShift { group: None };
        assert_eq!(own.with_groups(Some(32)), Pattern::GroupShift { group: Some(32) });
        assert_eq!(own.with_groups(None), own);
        let given = Pattern::GroupShift { group: Some(8) };
        assert_eq!(given.with_groups(Some(32)), given, "an N given stays");
    }

    #[test]
    fn patterns_refuse_networks_they_do_not_fit() {
        let err = |p: &str, hosts| {
            p.parse::<Pattern>()
                .and_then(|p| p.destinations(hosts, 0))
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(
            err("bit-reversal", 12),
            "bit-reversal: a bit permutation needs a power-of-two number of hosts, the network has 12"
        );
        assert!(err("tornado", 32).contains("square number"), "{}", err("tornado", 32));
        assert!(err("tornado:5", 32).contains("divide"));
        assert!(err("hot-spot:9", 8).contains("does not exist"));
        assert!(err("hot-region:6:4", 8).contains("within"));
        assert!(err("zigzag", 8).starts_with("zigzag: no such pattern"));
        assert!(err("hot-spot:0:1.5", 8).contains("from 0 to 1"));
        assert!(err("uniform:3", 8).contains("at most 0"));
        assert_eq!(
            err("group-shift", 8),
            "group-shift: give the hosts of a group as group-shift:N (only a dragonfly has groups of its own)"
        );
        assert_eq!(
            err("group-shift:3", 8),
            "group-shift:3: groups of 3 hosts must divide the 8 hosts into two groups or more"
        );
        assert!(err("group-shift:8", 8).contains("two groups or more"));
        assert!(err("group-shift:0", 8).contains("divide"));
        assert_eq!(err("uniform", 1), "uniform: needs two hosts or more, the network has 1");
        let syntax = |p: &str| p.parse::<Pattern>().expect_err("refused");
        assert_eq!(
            syntax("hot-spot:x"),
            PatternError::NotANumber {
                pattern: "hot-spot:x".into(),
                param: PatternParam::Host,
                given: "x".into(),
            }
        );
        assert_eq!(
            syntax("hot-spot:x").to_string(),
            "hot-spot:x: the host must be a host count or number, not \"x\""
        );
        assert_eq!(
            syntax("tornado:-1").to_string(),
            "tornado:-1: NX must be a host count or number, not \"-1\""
        );
        assert_eq!(
            syntax("hot-region:0:y").to_string(),
            "hot-region:0:y: the host count must be a host count or number, not \"y\""
        );
        assert_eq!(
            syntax("hot-region:2"),
            PatternError::MissingCount {
                pattern: "hot-region:2".into()
            }
        );
        assert_eq!(
            syntax("hot-region:2").to_string(),
            "hot-region:2: give both the first host and the host count"
        );
        assert_eq!(
            syntax("hot-spot:0:1.5").to_string(),
            "hot-spot:0:1.5: the fraction must be a number from 0 to 1, not \"1.5\""
        );
        assert_eq!(
            syntax("tornado:2:3"),
            PatternError::TooManyParameters {
                pattern: "tornado:2:3".into(),
                name: "tornado".into(),
                max: 1,
                given: 2,
            }
        );
        assert_eq!(
            syntax("tornado:2:3").to_string(),
            "tornado:2:3: tornado takes at most 1 parameters"
        );
        assert_eq!(
            syntax("zigzag").to_string(),
            format!("zigzag: no such pattern; the patterns are {PATTERN_SYNTAX}")
        );
        assert_eq!(
            err("hot-spot:9", 8),
            "hot-spot:9:0.1: host 9 does not exist (the network has 8)"
        );
        assert_eq!(
            err("hot-region:6:4", 8),
            "hot-region:6:4:0.25: the region 6..10 must be non-empty and within the 8 hosts"
        );
        assert_eq!(
            err("tornado:5", 32),
            "tornado:5: the rows of 5 hosts must divide the 32 hosts"
        );
        assert_eq!(
            err("tornado", 32),
            "tornado: needs a square number of hosts (a 2D grid), the network has 32; give the row length as \
             tornado:NX"
        );
        assert_eq!(
            Pattern::Transpose.destinations(12, 0).err(),
            Some(PatternError::NotPowerOfTwo {
                pattern: "transpose".into(),
                hosts: 12
            })
        );
        for p in PATTERN_SYNTAX.split(", ") {
            let name = p.split('[').next().unwrap_or_default();
            let parsed: Pattern = name.parse().expect("listed names parse");
            assert_eq!(parsed.to_string().split(':').next(), Some(name));
        }
    }
}
