//! `report diff` with the facts that reproduce only sometimes: a status
//! change of a trial that moved between showing such a fact's behaviour
//! and not showing it (`gridcheck_judge::Facts::sometimes_between`) is
//! `within-fact` ([`RunDiff::within_facts`]), neither a regression nor a
//! known discrepancy that stopped reproducing. A fact that always
//! reproduces keeps the diff's judgement.

use gridcheck_judge::Facts;
use gridcheck_spec::Spec;

use crate::run_diff::{ChangeKind, RunDiff};

impl RunDiff {
    /// The diff with each status change of a trial that moved within a
    /// fact that reproduces only sometimes marked [`ChangeKind::WithinFact`]
    /// (the fact named in its message), out of the regressions.
    pub fn within_facts(mut self, facts: &Facts, spec: Option<&Spec>) -> RunDiff {
        for c in &mut self.status_changes {
            if let Some(f) = facts.sometimes_between(&c.trial, c.base, c.new, spec) {
                c.kind = ChangeKind::WithinFact;
                c.within_spread = false;
                c.message = format!(
                    "within the fact (sometimes): the known {} \"{}\" ({}) shows only in some runs; {}",
                    f.kind.as_str(),
                    f.summary,
                    f.at(),
                    c.message
                );
            }
        }
        self.status_changes
            .sort_by(|x, y| (x.kind, &x.trial).cmp(&(y.kind, &y.trial)));
        self
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::run_diff::{ChangeKind, diff_runs};
    use crate::{Facts, Status, TrialId, TrialRecord};

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

    fn rec(test: &str, status: Status) -> TrialRecord {
        TrialRecord::new(TrialId::gpu("sm_90", "r", test), status, "m")
    }

    #[test]
    fn a_sometimes_fact_showing_in_one_run_and_not_the_other_is_within_the_fact() {
        let f = facts("sometimes");
        let (hang, pass) = (rec("t", Status::KnownHang), rec("t", Status::Pass));
        // Not shown, then shown: a regression by status alone, within the
        // fact here.
        let plain = diff_runs(std::slice::from_ref(&pass), std::slice::from_ref(&hang));
        assert_eq!(plain.status_changes[0].kind, ChangeKind::Regression);
        assert_eq!(plain.regressions(), 1);
        let d = plain.within_facts(&f, None);
        assert_eq!(d.status_changes[0].kind, ChangeKind::WithinFact);
        assert_eq!(d.regressions(), 0);
        assert!(
            d.status_changes[0].message.starts_with(
                "within the fact (sometimes): the known hang \"never starts\" (f.toml:1)"
            ),
            "{:?}",
            d.status_changes
        );
        // Shown, then not: not a known discrepancy that stopped reproducing.
        let d = diff_runs(&[hang], &[pass]).within_facts(&f, None);
        assert_eq!(d.status_changes[0].kind, ChangeKind::WithinFact);
        // Another trial, or a change that is not between shown and not
        // shown (a pass that now fails), keeps its judgement.
        let d = diff_runs(&[rec("u", Status::Pass)], &[rec("u", Status::KnownHang)])
            .within_facts(&f, None);
        assert_eq!(d.status_changes[0].kind, ChangeKind::Regression);
        let d = diff_runs(&[rec("t", Status::Pass)], &[rec("t", Status::Timeout)])
            .within_facts(&f, None);
        assert_eq!(d.status_changes[0].kind, ChangeKind::Regression);
    }

    #[test]
    fn an_always_fact_keeps_the_diffs_judgement_both_ways() {
        let f = facts("always");
        let (hang, pass) = (rec("t", Status::KnownHang), rec("t", Status::Pass));
        let d = diff_runs(std::slice::from_ref(&pass), std::slice::from_ref(&hang))
            .within_facts(&f, None);
        assert_eq!(d.status_changes[0].kind, ChangeKind::Regression);
        assert_eq!(d.regressions(), 1);
        let d = diff_runs(&[hang], &[pass]).within_facts(&f, None);
        assert_eq!(d.status_changes[0].kind, ChangeKind::KnownChanged);
    }
}
