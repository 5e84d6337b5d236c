//! The terminal summary of any results file: status counts per tier, how
//! many tests those trials ran, then every trial that failed, crashed, timed
//! out, is unmodeled, a known fact (xfail, known, known-hang, changed) or a
//! quality warning, with the first line of its
//! message. A test listed by several rules is one result: its line names
//! the other rules instead of repeating it.

use std::collections::{BTreeMap, BTreeSet};

use gridcheck_report::{Status, TestKey, TrialRecord};

/// Status counts per tier, in tier then status order.
pub fn counts(records: &[TrialRecord]) -> BTreeMap<(String, Status), usize> {
    let mut c = BTreeMap::new();
    for r in records {
        *c.entry((r.trial.tier.as_str().to_string(), r.status))
            .or_default() += 1;
    }
    c
}

/// Whether a status deserves a line of its own in a summary.
pub fn notable(s: Status) -> bool {
    matches!(
        s,
        Status::Fail
            | Status::OracleConflict
            | Status::Unmodeled
            | Status::Crash
            | Status::Timeout
            | Status::Changed
            | Status::Xfail
            | Status::Known
            | Status::KnownHang
            | Status::QualityWarning
    )
}

pub fn terminal(records: &[TrialRecord]) -> String {
    let mut s = format!("{} trials\n", records.len());
    for ((tier, status), n) in counts(records) {
        s += &format!("{tier:>6} tier: {n} {status}\n");
    }
    let mut tests: BTreeMap<&str, (usize, BTreeSet<TestKey>)> = BTreeMap::new();
    for r in records {
        let e = tests.entry(r.trial.tier.as_str()).or_default();
        e.0 += 1;
        e.1.insert(r.trial.test_key());
    }
    for (tier, (trials, keys)) in tests {
        s += &format!("{tier:>6} tier: {trials} trials of {} tests\n", keys.len());
    }
    let mut notable: Vec<&TrialRecord> = records.iter().filter(|r| notable(r.status)).collect();
    notable.sort_by_key(|r| (std::cmp::Reverse(crate::text::severity(r.status)), &r.trial));
    // One entry a test and status: the first trial, then the other rules.
    let mut groups: Vec<(&TrialRecord, Vec<&str>)> = Vec::new();
    for r in notable {
        let same = |g: &&mut (&TrialRecord, Vec<&str>)| {
            g.0.status == r.status && g.0.trial.test_key() == r.trial.test_key()
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(g) => g.1.push(&r.trial.rule),
            None => groups.push((r, Vec::new())),
        }
    }
    if !groups.is_empty() {
        s += "\n";
    }
    for (r, also) in groups {
        s += &format!("{:<15} {}\n", r.status.as_str(), r.trial);
        if !also.is_empty() {
            s += &format!("{:15} also rules {}\n", "", also.join(", "));
        }
        s += &format!("{:15} {}\n", "", r.message.lines().next().unwrap_or(""));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(trial: &str, status: Status) -> TrialRecord {
        TrialRecord::new(
            trial.parse().unwrap(),
            status,
            format!("first {trial}\nsecond"),
        )
    }

    #[test]
    fn counts_then_notable_trials_worst_first() {
        let rs = [
            rec("model/r/a", Status::Pass),
            rec("gpu/sm_90/r/b", Status::QualityWarning),
            rec("gpu/sm_90/r/c", Status::Fail),
            rec("gpu/sm_90/r/d", Status::Pass),
            rec("gpu/sm_90/r2/b", Status::QualityWarning),
        ];
        let t = terminal(&rs);
        assert!(t.starts_with("5 trials\n   gpu tier: 1 pass\n   gpu tier: 1 fail\n   gpu tier: 2 quality-warning\n model tier: 1 pass\n"), "{t}");
        assert!(
            t.contains("   gpu tier: 4 trials of 3 tests\n model tier: 1 trials of 1 tests\n"),
            "{t}"
        );
        let fail = t.find("fail            gpu/sm_90/r/c").unwrap();
        let warn = t
            .find("quality-warning gpu/sm_90/r/b\n                also rules r2\n")
            .unwrap();
        assert!(fail < warn, "{t}");
        assert!(!t.contains("quality-warning gpu/sm_90/r2/b"), "{t}");
        assert!(
            t.contains("first gpu/sm_90/r/c\n") && !t.contains("second"),
            "{t}"
        );
    }
}
