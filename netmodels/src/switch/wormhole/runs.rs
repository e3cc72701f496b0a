//! Flit runs and the buffer arithmetic of the coarse path.
//!
//! A run is a stretch of consecutive flits sent (or received) one flit time apart:
//! `start, start + τ, …`. An input buffer's future is a list of arrival runs (from the
//! upstream output's plan) and one departure run (the plan of the output its front
//! packet holds). From them the coarse path computes, without an event per flit, when
//! the occupancy first reaches the high-water mark (a STOP is due) or drains to the
//! low-water mark (a GO is due), with the fine path's rules at one instant: a flit
//! arriving at `t` counts before a flit leaving at `t`.
//!
//! Every function here has a brute-force twin in the tests that steps flit by flit.

use crate::time::SimTime;

/// Flits `first..end` at `start + (k − first)·τ`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) first: u32,
    pub(crate) end: u32,
    pub(crate) start: SimTime,
}

impl Run {
    pub(crate) fn len(&self) -> u32 {
        self.end - self.first
    }

    /// Time of flit `k` (in `first..end`).
    pub(crate) fn at(&self, k: u32, tau: SimTime) -> SimTime {
        self.start + tau * u64::from(k - self.first)
    }

    /// Time of the last flit.
    pub(crate) fn last(&self, tau: SimTime) -> SimTime {
        self.at(self.end - 1, tau)
    }

    /// Flits of the run at times `≤ t` (`strict`: `< t`).
    pub(crate) fn count_by(&self, t: SimTime, tau: SimTime, strict: bool) -> u32 {
        if t < self.start || (strict && t == self.start) {
            return 0;
        }
        let elapsed = (t - self.start).as_ps();
        let tau = tau.as_ps().max(1);
        let n = if strict {
            elapsed.div_ceil(tau)
        } else {
            elapsed / tau + 1
        };
        u32::try_from(n).unwrap_or(u32::MAX).min(self.len())
    }
}

/// The arrival runs of a packet in an input buffer, in flit order: one for nearly every
/// packet (more only when the flits upstream were stopped), so the first two are held
/// in place and only longer lists go to the heap. A buffer's runs are then read from
/// its entry, not from another allocation (a cache miss on large networks).
#[derive(Debug, Clone)]
pub(crate) enum Runs {
    Inline(u8, [Run; 2]),
    Spilled(Vec<Run>),
}

const NO_RUN: Run = Run {
    first: 0,
    end: 0,
    start: SimTime::ZERO,
};

impl Default for Runs {
    fn default() -> Self {
        Runs::Inline(0, [NO_RUN; 2])
    }
}

impl std::ops::Deref for Runs {
    type Target = [Run];
    fn deref(&self) -> &[Run] {
        match self {
            Runs::Inline(len, runs) => &runs[..usize::from(*len)],
            Runs::Spilled(runs) => runs,
        }
    }
}

impl std::ops::DerefMut for Runs {
    fn deref_mut(&mut self) -> &mut [Run] {
        match self {
            Runs::Inline(len, runs) => &mut runs[..usize::from(*len)],
            Runs::Spilled(runs) => runs,
        }
    }
}

impl Runs {
    pub(crate) fn push(&mut self, run: Run) {
        match self {
            Runs::Inline(len, runs) if usize::from(*len) < runs.len() => {
                runs[usize::from(*len)] = run;
                *len += 1;
            }
            Runs::Inline(_, runs) => *self = Runs::Spilled(vec![runs[0], runs[1], run]),
            Runs::Spilled(runs) => runs.push(run),
        }
    }

    /// Adds `run` after the others, as part of the last one if it goes on from it (its
    /// next flit, one flit time on): a plan redone before its flits would change keeps
    /// them in one run.
    #[inline]
    pub(crate) fn append(&mut self, run: Run, tau: SimTime) {
        if let Some(last) = self.last_mut()
            && last.end == run.first
            && last.at(run.first - 1, tau) + tau == run.start
        {
            last.end = run.end;
            return;
        }
        self.push(run);
    }

    /// Keeps the runs of flits before `end`, cutting the one that spans it.
    pub(crate) fn truncate_at(&mut self, end: u32) {
        let keep = self.iter().take_while(|r| r.first < end).count();
        match self {
            Runs::Inline(len, _) => *len = keep as u8,
            Runs::Spilled(runs) => runs.truncate(keep),
        }
        if let Some(last) = self.last_mut() {
            last.end = last.end.min(end);
        }
    }
}

/// The first arrival instant `a ≥ from` at which the occupancy (arrivals up to and
/// including `a`, less departures strictly before `a`) is at least `high`.
///
/// `arrivals` are in time order; `base` is the occupancy contributed by what happened
/// before the runs (arrivals minus departures not described by them).
///
/// In closed form, one step per arrival run: both runs move one flit per `τ`, so at
/// the `j`-th arrival of a run from its first one at or after `from` (at `a₀`), the
/// departures before it number `clamp(c + j, 0, L)`, with `c = ⌈(a₀ − d.start)/τ⌉` and
/// `L` the departure run's length. The occupancy is then `A + j − clamp(c + j, 0, L)`:
/// it grows by one per arrival before the departures start, stays level while they
/// keep pace, and grows again once they have ended; never decreasing, its first
/// crossing of `high` is found segment by segment.
pub(crate) fn first_stop(
    arrivals: &[Run],
    base: i64,
    departure: Option<Run>,
    from: SimTime,
    high: u32,
    tau: SimTime,
) -> Option<SimTime> {
    let departures = departure.filter(|d| d.len() > 0);
    let length = departures.map_or(0, |d| i64::from(d.len()));
    // Occupancy from `base` and the runs before the current one.
    let mut prefix = base;
    for run in arrivals {
        let k0 = run.first + run.count_by(from, tau, true);
        if k0 < run.end {
            let a0 = run.at(k0, tau);
            // Departures before a₀ + j·τ: clamp(c + j, 0, L).
            let c = departures.map_or(0, |d| steps(a0, d.start, tau, true));
            // The occupancy is A + g(j), g(j) = j − clamp(c + j, 0, L): the first j with
            // g(j) ≥ t, g never decreasing.
            let t = i64::from(high) - (prefix + i64::from(k0 - run.first + 1));
            let j = if t <= -c.clamp(0, length) {
                0
            } else if c <= 0 && t <= -c {
                // Before the departures start: one more per arrival.
                t
            } else {
                // Level while they keep pace; after the last departure, one per arrival.
                t + length
            };
            if j < i64::from(run.end - k0) {
                return Some(run.at(k0 + j as u32, tau));
            }
        }
        prefix += i64::from(run.len());
    }
    None
}

/// `(a − b)/τ` in flit times, rounded up or down, for either sign, in 64-bit
/// arithmetic (`⌈−y/τ⌉ = −⌊y/τ⌋`, `⌊−y/τ⌋ = −⌈y/τ⌉`). Runs are far shorter than 2^40
/// flits; larger counts are clamped there.
fn steps(a: SimTime, b: SimTime, tau: SimTime, round_up: bool) -> i64 {
    let tau = tau.as_ps().max(1);
    let (y, negative) = if a >= b {
        ((a - b).as_ps(), false)
    } else {
        ((b - a).as_ps(), true)
    };
    let n = if round_up != negative { y.div_ceil(tau) } else { y / tau };
    let n = n.min(1 << 40) as i64;
    if negative { -n } else { n }
}

/// The first departure instant `d ≥ from` after which the occupancy (arrivals up to
/// and including `d`, less departures up to and including `d`) is at most `low`.
///
/// In closed form, one step per arrival run: at the `j`-th departure from the first
/// one at or after `from` (at `d₀`), a run `r` has delivered `clamp(e_r + j, 0, len_r)`
/// flits, with `e_r = ⌊(d₀ − r.start)/τ⌋ + 1`. Arrivals come at most one per `τ` (one
/// upstream output sends them), so the runs' stretches of `j` do not overlap: the
/// occupancy stays level while a run keeps pace with the departures and falls by one
/// per departure between runs. Walking those stretches in order finds where it first
/// reaches `low`.
pub(crate) fn first_go(
    arrivals: &[Run],
    base: i64,
    departure: Option<Run>,
    from: SimTime,
    low: u32,
    tau: SimTime,
) -> Option<SimTime> {
    let d = departure.filter(|d| d.len() > 0)?;
    let k0 = d.first + d.count_by(from, tau, true);
    if k0 >= d.end {
        return None;
    }
    let d0 = d.at(k0, tau);
    let departures = i64::from(d.end - k0);
    // e_r for each run: flits of r arrived by d₀ is clamp(e_r, 0, len_r).
    let lead = |r: &Run| -> i64 { steps(d0, r.start, tau, false) + 1 };
    let arrived: i64 = arrivals.iter().map(|r| lead(r).clamp(0, i64::from(r.len()))).sum();
    let mut occupancy = base + arrived - i64::from(k0 - d.first + 1);
    let low = i64::from(low);
    // Departures j → j + 1 in [start, end) of a run's stretch bring an arrival each.
    let mut j = 0i64;
    let mut previous_end = i64::MIN;
    for r in arrivals.iter().filter(|r| r.len() > 0) {
        let e = lead(r);
        let (start, end) = (-e, i64::from(r.len()) - e);
        debug_assert!(start >= previous_end, "arrival runs overlap: {arrivals:?}");
        previous_end = end;
        if occupancy <= low {
            break;
        }
        if end <= j {
            continue;
        }
        // Between runs: one fewer per departure.
        let gap = (start - j).max(0);
        if occupancy - gap <= low {
            break;
        }
        occupancy -= gap;
        // Alongside the run: level.
        j = end;
        if j >= departures {
            return None;
        }
    }
    let j = j + (occupancy - low).max(0);
    (j < departures).then(|| d.at(k0 + j as u32, tau))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Arrivals at or before `t`, over runs.
    fn arrived(arrivals: &[Run], t: SimTime, tau: SimTime) -> u32 {
        arrivals.iter().map(|r| r.count_by(t, tau, false)).sum()
    }

    /// Departures before `t` (`strict`) or at or before it.
    fn departed(base: u32, departure: Option<Run>, t: SimTime, tau: SimTime, strict: bool) -> u32 {
        base + departure.map_or(0, |r| r.count_by(t, tau, strict))
    }

    const TAU: SimTime = SimTime::from_ns(32);

    /// Every instant of the runs, flit by flit, as the fine path sees them.
    fn brute(
        arrivals: &[Run],
        base: i64,
        departure: Option<Run>,
        from: SimTime,
        high: u32,
        low: u32,
    ) -> (Option<SimTime>, Option<SimTime>) {
        let mut stop = None;
        for r in arrivals {
            for k in r.first..r.end {
                let a = r.at(k, TAU);
                if a < from || stop.is_some() {
                    continue;
                }
                let occ = base + i64::from(arrived(arrivals, a, TAU)) - i64::from(departed(0, departure, a, TAU, true));
                if occ >= i64::from(high) {
                    stop = Some(a);
                }
            }
        }
        let mut go = None;
        if let Some(d) = departure {
            for k in d.first..d.end {
                let t = d.at(k, TAU);
                if t < from || go.is_some() {
                    continue;
                }
                let occ = base + i64::from(arrived(arrivals, t, TAU)) - i64::from(departed(0, Some(d), t, TAU, false));
                if occ <= i64::from(low) {
                    go = Some(t);
                }
            }
        }
        (stop, go)
    }

    #[test]
    fn run_lists_spill_to_the_heap_and_truncate_like_a_vector() {
        let run = |first: u32, end: u32| Run {
            first,
            end,
            start: SimTime::from_ns(u64::from(first)),
        };
        let mut runs = Runs::default();
        let mut reference: Vec<Run> = Vec::new();
        for k in 0..5 {
            runs.push(run(10 * k, 10 * k + 5));
            reference.push(run(10 * k, 10 * k + 5));
            assert_eq!(&runs[..], &reference[..]);
        }
        assert!(matches!(runs, Runs::Spilled(_)));
        // Cut inside the third run, then between runs, then before the first.
        for end in [23, 12, 5, 0] {
            runs.truncate_at(end);
            reference.retain(|r| r.first < end);
            if let Some(last) = reference.last_mut() {
                last.end = last.end.min(end);
            }
            assert_eq!(&runs[..], &reference[..], "cut at {end}");
        }
        // A run going on from the last one joins it; one after a gap does not.
        let mut joined = Runs::default();
        joined.append(run(0, 4), TAU);
        joined.append(
            Run {
                first: 4,
                end: 9,
                start: TAU * 4,
            },
            TAU,
        );
        assert_eq!(
            &joined[..],
            &[Run {
                first: 0,
                end: 9,
                start: SimTime::ZERO
            }]
        );
        joined.append(run(9, 12), TAU);
        assert_eq!(joined.len(), 2);
        let mut inline = Runs::default();
        inline.push(run(0, 8));
        inline.push(run(8, 16));
        inline.truncate_at(4);
        assert_eq!(&inline[..], &[run(0, 4)]);
        assert!(matches!(inline, Runs::Inline(1, _)));
    }

    #[test]
    fn counts_by_time() {
        let r = Run {
            first: 3,
            end: 8,
            start: SimTime::from_ns(100),
        };
        assert_eq!(r.count_by(SimTime::from_ns(99), TAU, false), 0);
        assert_eq!(r.count_by(SimTime::from_ns(100), TAU, false), 1);
        assert_eq!(r.count_by(SimTime::from_ns(100), TAU, true), 0);
        assert_eq!(r.count_by(SimTime::from_ns(132), TAU, true), 1);
        assert_eq!(r.count_by(SimTime::from_ns(133), TAU, true), 2);
        assert_eq!(r.count_by(SimTime::from_ns(10_000), TAU, false), 5);
        assert_eq!(r.last(TAU), SimTime::from_ns(100 + 4 * 32));
    }

    #[test]
    fn crossings_match_stepping_flit_by_flit() {
        let mut rng = Rng::new(17);
        for case in 0..20_000 {
            let ns = |rng: &mut Rng, max: u64| SimTime::from_ns(rng.below(max));
            let mut arrivals = Vec::new();
            let mut t = ns(&mut rng, 200);
            let mut flit = 0;
            for _ in 0..rng.below(4) {
                let len = rng.below(40) as u32;
                arrivals.push(Run {
                    first: flit,
                    end: flit + len,
                    start: t,
                });
                flit += len;
                t = t + TAU * u64::from(len) + ns(&mut rng, 300);
            }
            let departure = (rng.below(4) > 0).then(|| {
                let first = rng.below(5) as u32;
                Run {
                    first,
                    end: first + rng.below(120) as u32,
                    start: ns(&mut rng, 1500),
                }
            });
            let base = rng.below(6) as i64;
            let from = ns(&mut rng, 800);
            let (high, low) = (1 + rng.below(30) as u32, rng.below(10) as u32);
            let (stop, go) = brute(&arrivals, base, departure, from, high, low);
            assert_eq!(
                first_stop(&arrivals, base, departure, from, high, TAU),
                stop,
                "case {case}: stop {arrivals:?} {departure:?} base {base} from {from} high {high}"
            );
            assert_eq!(
                first_go(&arrivals, base, departure, from, low, TAU),
                go,
                "case {case}: go {arrivals:?} {departure:?} base {base} from {from} low {low}"
            );
        }
    }
}
