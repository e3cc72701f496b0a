//! What a network trace keeps: some devices (by name pattern or by level) and a time
//! window, because full traces of big networks are huge.
//!
//! ```text
//!   --trace-devices 'sw*,host1?'      devices whose name matches a pattern
//!   --trace-devices level=1-2          devices 1 or 2 hops from the nearest host
//!   --trace-window 1000:50000          records from 1000 ns up to (not including) 50000 ns
//! ```
//!
//! Patterns use `*` (any run of characters) and `?` (one character) and match the whole
//! name: `host5`, `sw12`; on a multi-rail network also the rail-qualified name
//! (`r1.sw12`), so `sw*` selects the switches of every rail and `r1.*` rail 1's devices.
//! They are [`glob::Pattern`]s restricted to the characters of device names and those
//! two wildcards (no `[…]` classes); a run of `*` means what one does.
//! Levels count cables from the nearest host: hosts are level 0, the switches they plug
//! into level 1, and so on.

/// Why a selection cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectError {
    /// an empty item in the list
    #[error("empty item in `{0}`: expected name patterns or level=N[-M], separated by commas")]
    EmptyItem(String),
    /// a level item that is not a number or a range
    #[error("`{0}`: expected level=N or level=N-M with N ≤ M (hosts are level 0)")]
    BadLevel(String),
    /// a character a device name never has
    #[error("`{item}`: unexpected character `{found}`; patterns use letters, digits, `.`, `_`, `-`, `*` and `?`")]
    BadPattern {
        /// the pattern
        item: String,
        /// the character
        found: char,
    },
    /// a window that is not `START:END`
    #[error("`{0}`: expected START_NS:END_NS with START < END (either may be left out)")]
    BadWindow(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    /// a name pattern as given, and compiled
    Pattern(String, glob::Pattern),
    Levels(u32, u32),
}

/// Which devices a trace shows: all by default.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeviceSelection {
    /// empty: every device
    items: Vec<Item>,
}

impl DeviceSelection {
    /// Every device.
    pub fn all() -> DeviceSelection {
        DeviceSelection::default()
    }

    /// Reads a comma-separated list of name patterns and `level=N` / `level=N-M` items;
    /// a device is selected when any item matches it.
    pub fn parse(text: &str) -> Result<DeviceSelection, SelectError> {
        let mut items = Vec::new();
        for raw in text.split(',') {
            let item = raw.trim();
            if item.is_empty() {
                return Err(SelectError::EmptyItem(text.to_string()));
            }
            if let Some(levels) = item.strip_prefix("level=") {
                let bad = || SelectError::BadLevel(item.to_string());
                let (low, high) = levels.split_once('-').unwrap_or((levels, levels));
                let low: u32 = low.trim().parse().map_err(|_| bad())?;
                let high: u32 = high.trim().parse().map_err(|_| bad())?;
                if low > high {
                    return Err(bad());
                }
                items.push(Item::Levels(low, high));
                continue;
            }
            if let Some(found) = item
                .chars()
                .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '*' | '?')))
            {
                return Err(SelectError::BadPattern {
                    item: item.to_string(),
                    found,
                });
            }
            items.push(Item::Pattern(item.to_string(), compile(item)?));
        }
        Ok(DeviceSelection { items })
    }

    /// Whether every device is selected.
    pub fn is_all(&self) -> bool {
        self.items.is_empty()
    }

    /// Whether the device named `name` (and `qualified` on a multi-rail network), `level`
    /// cables from the nearest host, is selected.
    pub fn selects(&self, name: &str, qualified: Option<&str>, level: Option<u32>) -> bool {
        self.is_all()
            || self.items.iter().any(|item| match item {
                Item::Pattern(_, p) => p.matches(name) || qualified.is_some_and(|q| p.matches(q)),
                Item::Levels(low, high) => level.is_some_and(|l| (*low..=*high).contains(&l)),
            })
    }
}

/// `pattern` (checked: letters, digits, `.`, `_`, `-`, `*`, `?`) as a glob that matches
/// whole names, `*` any run of characters and `?` one. [`glob::Pattern`] takes `**`
/// for a path's recursive wildcard, refused inside a name: a run of `*` becomes one,
/// which matches the same names.
fn compile(pattern: &str) -> Result<glob::Pattern, SelectError> {
    let mut single = String::with_capacity(pattern.len());
    for c in pattern.chars() {
        if !(c == '*' && single.ends_with('*')) {
            single.push(c);
        }
    }
    glob::Pattern::new(&single).map_err(|e| SelectError::BadPattern {
        item: pattern.to_string(),
        found: single.chars().nth(e.pos).unwrap_or('*'),
    })
}

/// The part of the run a trace shows: `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeWindow {
    /// first time kept \[ns\]
    pub start_ns: u64,
    /// first time no longer kept \[ns\] (`u64::MAX`: the end of the run)
    pub end_ns: u64,
}

impl Default for TimeWindow {
    fn default() -> Self {
        TimeWindow {
            start_ns: 0,
            end_ns: u64::MAX,
        }
    }
}

impl TimeWindow {
    /// Reads `START_NS:END_NS`; either side may be empty (`:5000`, `1000:`).
    pub fn parse(text: &str) -> Result<TimeWindow, SelectError> {
        let bad = || SelectError::BadWindow(text.to_string());
        let (start, end) = text.split_once(':').ok_or_else(bad)?;
        let number = |s: &str, default: u64| -> Result<u64, SelectError> {
            match s.trim() {
                "" => Ok(default),
                s => s.parse().map_err(|_| bad()),
            }
        };
        let window = TimeWindow {
            start_ns: number(start, 0)?,
            end_ns: number(end, u64::MAX)?,
        };
        if window.start_ns >= window.end_ns {
            return Err(bad());
        }
        Ok(window)
    }

    /// Whether `ns` lies in the window.
    pub fn contains(&self, ns: u64) -> bool {
        self.start_ns <= ns && ns < self.end_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `pattern` matches all of `name`.
    fn glob(pattern: &str, name: &str) -> bool {
        compile(pattern).expect("a valid pattern").matches(name)
    }

    #[test]
    fn globs_match_whole_names() {
        assert!(glob("sw*", "sw12"));
        assert!(glob("sw*", "sw"));
        assert!(!glob("sw*", "host1"));
        assert!(glob("host1?", "host12"));
        assert!(!glob("host1?", "host1"));
        assert!(!glob("host1?", "host123"));
        assert!(glob("*.sw1*", "r0.sw17"));
        assert!(glob("h*t*5", "host5"));
        assert!(!glob("sw1", "sw12"));
        assert!(glob("", ""));
        assert!(!glob("", "a"));
        // Runs of `*`, accepted as before: the same as one.
        assert!(glob("sw**", "sw12") && glob("***", "host3") && glob("h**t*5", "host5"));
        assert!(!glob("sw***1", "sw2"));
    }

    #[test]
    fn selections_read_patterns_and_levels() {
        let s = DeviceSelection::parse("sw*, host1?").expect("valid");
        assert!(s.selects("sw3", None, Some(1)));
        assert!(s.selects("host10", None, Some(0)));
        assert!(!s.selects("host1", None, Some(0)));
        let rail = DeviceSelection::parse("r1.*").expect("valid");
        assert!(rail.selects("sw3", Some("r1.sw3"), None) && !rail.selects("sw3", Some("r0.sw3"), None));
        let levels = DeviceSelection::parse("level=1-2").expect("valid");
        assert!(levels.selects("sw0", None, Some(2)) && !levels.selects("host0", None, Some(0)));
        assert!(DeviceSelection::all().selects("anything", None, None));
        for (text, message) in [
            (
                "sw*,",
                "empty item in `sw*,`: expected name patterns or level=N[-M], separated by commas",
            ),
            (
                "level=2-1",
                "`level=2-1`: expected level=N or level=N-M with N ≤ M (hosts are level 0)",
            ),
            (
                "level=x",
                "`level=x`: expected level=N or level=N-M with N ≤ M (hosts are level 0)",
            ),
            (
                "sw[1]",
                "`sw[1]`: unexpected character `[`; patterns use letters, digits, `.`, `_`, `-`, `*` and `?`",
            ),
        ] {
            assert_eq!(DeviceSelection::parse(text).expect_err(text).to_string(), message);
        }
    }

    #[test]
    fn windows_read_either_side() {
        assert_eq!(
            TimeWindow::parse("1000:5000"),
            Ok(TimeWindow {
                start_ns: 1000,
                end_ns: 5000
            })
        );
        assert_eq!(TimeWindow::parse(":5000").map(|w| w.start_ns), Ok(0));
        assert_eq!(TimeWindow::parse("7:").map(|w| w.end_ns), Ok(u64::MAX));
        for bad in ["5000:1000", "5:5", "12", "a:b", "-1:4"] {
            assert_eq!(
                TimeWindow::parse(bad).expect_err(bad).to_string(),
                format!("`{bad}`: expected START_NS:END_NS with START < END (either may be left out)")
            );
        }
    }
}
