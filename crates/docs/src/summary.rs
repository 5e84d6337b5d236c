//! The terminal summary of any results file: status counts per tier, how
//! many tests those trials ran, then every trial that failed, crashed, timed
//! out, is unmodeled, a known fact (xfail, known, known-hang, changed) or a
//! quality warning, with the first line of its
//! message. A test listed by several rules is one result: its line names
//! the other rules instead of repeating it. A summary is of one run
//! ([`run_header`] says which, and lists a file's others).

use std::collections::{BTreeMap, BTreeSet};

use gridcheck_report::{RunRecords, Status, TestKey, TrialRecord};

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

/// The line above a run's summary: which run of `file` it is, and the
/// file's other runs (`all`, in file order) with how to choose them.
pub fn run_header(run: &RunRecords, all: &[RunRecords], file: &str) -> String {
    let when = |r: &RunRecords| {
        r.started
            .as_deref()
            .map(|s| format!("started {s}"))
            .unwrap_or_else(|| "no start time recorded".into())
    };
    let which = if all.len() <= 1 {
        format!("the only run in {file}")
    } else if all.last().is_some_and(|l| l.id == run.id) {
        format!("the latest of {} runs in {file}", all.len())
    } else {
        format!("one of {} runs in {file}", all.len())
    };
    let mut s = format!("run {} ({}): {which}\n", run.id, when(run));
    let others: Vec<&RunRecords> = all.iter().filter(|r| r.id != run.id).collect();
    if !others.is_empty() {
        s += "other runs in it (choose one with --run ID, or all with --all-runs):\n";
        for r in others {
            s += &format!("  {} ({}): {} trials\n", r.id, when(r), r.records.len());
        }
    }
    s
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

    #[test]
    fn the_header_names_the_run_and_lists_the_others() {
        let run = |secs: u64, n: usize| {
            let s = gridcheck_report::RunStamp::at(secs, secs);
            let mut r = rec("model/r/a", Status::Pass);
            s.stamp(&mut r);
            let records = vec![r; n];
            gridcheck_report::split_runs(records).remove(0)
        };
        let (a, b) = (run(1, 2), run(2, 3));
        let all = [a.clone(), b.clone()];
        let h = run_header(&b, &all, "r.jsonl");
        assert!(h.starts_with("run 19700101T000002Z-00000002 (started 1970-01-01T00:00:02Z): the latest of 2 runs in r.jsonl\n"), "{h}");
        assert!(
            h.contains("--run ID")
                && h.contains(
                    "  19700101T000001Z-00000001 (started 1970-01-01T00:00:01Z): 2 trials\n"
                ),
            "{h}"
        );
        assert!(run_header(&a, &all, "r.jsonl").contains("one of 2 runs"));
        let only = run_header(&a, &all[..1], "r.jsonl");
        assert!(
            only.contains("the only run") && !only.contains("other runs"),
            "{only}"
        );
    }

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
