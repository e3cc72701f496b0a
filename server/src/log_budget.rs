//! A cap on the warnings one client can cause: a client that sends bad lines in a loop
//! must not fill the disk with the log. Every bad line is still counted in the report.

use tracing::warn;

/// Warnings logged for one client (by its session and by the coordinator, each) before
/// the rest are only counted.
pub const WARNINGS_PER_CLIENT: u32 = 100;

/// How many warnings one client has caused so far.
#[derive(Debug, Default, Clone, Copy)]
pub struct LogBudget {
    logged: u32,
}

impl LogBudget {
    /// Logs `what` about the client named `who` (`{who}{what}`), unless the client has
    /// used up its budget; the first warning over budget says that the rest are not
    /// logged. Returns whether `what` was logged.
    pub fn warn(&mut self, who: &str, what: std::fmt::Arguments<'_>) -> bool {
        self.logged = self.logged.saturating_add(1);
        if self.logged <= WARNINGS_PER_CLIENT {
            warn!("{who}{what}");
            return true;
        }
        if self.logged == WARNINGS_PER_CLIENT + 1 {
            warn!("{who}: more than {WARNINGS_PER_CLIENT} warnings; the rest are counted in the report, not logged");
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_past_the_budget_are_not_logged() {
        let mut budget = LogBudget::default();
        let logged = (0..3 * WARNINGS_PER_CLIENT)
            .filter(|i| budget.warn("client 0", format_args!(" line {i}: bad")))
            .count();
        assert_eq!(logged, WARNINGS_PER_CLIENT as usize);
    }
}
