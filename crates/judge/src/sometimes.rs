//! The facts that reproduce only sometimes (`reproduces = "sometimes"`): a
//! trial of such a fact that showed its behaviour in one run (`xfail`,
//! `known`, `known-hang`) and not in the other (a pass or a quality
//! warning, with the facts' note) moved within the fact, not between a
//! pass and a failure. [`Facts::sometimes_between`] finds the fact; `report
//! diff` marks such a change `within-fact` (`RunDiff::within_facts`),
//! neither a regression nor a known discrepancy that stopped reproducing.
//! A fact that always reproduces keeps the diff's judgement.

use gridcheck_record::{Severity, Status, TrialId};
use gridcheck_spec::Spec;

use crate::{Fact, Facts, program_of};

/// Whether a status is what a trial of a fact that did not show its
/// behaviour keeps: a pass, or a quality warning.
fn not_shown(s: Status) -> bool {
    matches!(s, Status::Pass | Status::QualityWarning)
}

impl Facts {
    /// The fact that reproduces only sometimes and covers `trial` (by its
    /// key, or by its shape over the trial's program in `spec`), when the
    /// trial moved from `base` to `new` between showing a fact's behaviour
    /// and not showing it.
    pub fn sometimes_between(
        &self,
        trial: &TrialId,
        base: Status,
        new: Status,
        spec: Option<&Spec>,
    ) -> Option<&Fact> {
        let shown = |s: Status| s.severity() == Severity::Known;
        let moved = (shown(base) && not_shown(new)) || (not_shown(base) && shown(new));
        if !moved {
            return None;
        }
        let program = spec.and_then(|s| program_of(s, trial));
        self.entries.iter().find(|f| {
            f.sometimes && (f.covers(trial) || program.is_some_and(|p| f.shape_covers(trial, p)))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use gridcheck_record::{Status, TrialId};

    use crate::Facts;

    /// A hang fact about `t` that reproduces as `reproduces` says.
    fn facts(reproduces: &str) -> Facts {
        let text = format!(
            "[\"gpu/sm_90/t\"]\nkind = \"hang\"\nsummary = \"never starts\"\ndepends_on = [\"driver\"]\n\
             reproduces = \"{reproduces}\"\n\
             measured = [{{ gpu = \"H100\", sm = \"sm_90\", driver = \"580\", date = \"2026-11-26\" }}]\n\
             evidence = \"e\"\n"
        );
        Facts {
            entries: Facts::parse(&text, Path::new("f.toml"), Path::new(".")).unwrap(),
        }
    }

    fn trial(test: &str) -> TrialId {
        TrialId::gpu("sm_90", "r", test)
    }

    #[test]
    fn a_move_between_shown_and_not_shown_finds_the_sometimes_fact_either_way() {
        let f = facts("sometimes");
        let t = trial("t");
        for (base, new) in [
            (Status::Pass, Status::KnownHang),
            (Status::KnownHang, Status::Pass),
            (Status::QualityWarning, Status::Xfail),
            (Status::Known, Status::QualityWarning),
        ] {
            let found = f.sometimes_between(&t, base, new, None);
            assert_eq!(
                found.map(|f| f.summary.as_str()),
                Some("never starts"),
                "{base:?} -> {new:?}"
            );
        }
    }

    #[test]
    fn no_sometimes_fact_for_another_trial_another_move_or_an_always_fact() {
        let f = facts("sometimes");
        let t = trial("t");
        // Another trial.
        assert!(
            f.sometimes_between(&trial("u"), Status::Pass, Status::KnownHang, None)
                .is_none()
        );
        // A pass that now fails or times out, a fact's behaviour shown in
        // both runs: not between shown and not shown.
        for (base, new) in [
            (Status::Pass, Status::Timeout),
            (Status::Pass, Status::Fail),
            (Status::KnownHang, Status::Xfail),
        ] {
            assert!(
                f.sometimes_between(&t, base, new, None).is_none(),
                "{base:?} -> {new:?}"
            );
        }
        // A fact that always reproduces.
        assert!(
            facts("always")
                .sometimes_between(&t, Status::Pass, Status::KnownHang, None)
                .is_none()
        );
    }
}
