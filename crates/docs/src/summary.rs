//! The terminal summary of any results file: status counts per tier, then
//! every trial that failed, crashed, timed out, is a known failure or a
//! quality warning, with the first line of its message.

use std::collections::BTreeMap;

use gridcheck_report::{Status, TrialRecord};

/// Status counts per tier, in tier then status order.
pub fn counts(records: &[TrialRecord]) -> BTreeMap<(String, Status), usize> {
    let mut c = BTreeMap::new();
    for r in records {
        *c.entry((r.tier.clone(), r.status)).or_default() += 1;
    }
    c
}

/// Whether a status deserves a line of its own in a summary.
pub fn notable(s: Status) -> bool {
    matches!(
        s,
        Status::Fail
            | Status::OracleConflict
            | Status::Crash
            | Status::Timeout
            | Status::Xfail
            | Status::QualityWarning
    )
}

pub fn terminal(records: &[TrialRecord]) -> String {
    let mut s = format!("{} trials\n", records.len());
    for ((tier, status), n) in counts(records) {
        s += &format!("{tier:>6} tier: {n} {status}\n");
    }
    let mut notable: Vec<&TrialRecord> = records.iter().filter(|r| notable(r.status)).collect();
    notable.sort_by_key(|r| (std::cmp::Reverse(crate::text::severity(r.status)), &r.trial));
    if !notable.is_empty() {
        s += "\n";
    }
    for r in notable {
        s += &format!(
            "{:<15} {}\n{:15} {}\n",
            r.status.as_str(),
            r.trial,
            "",
            r.message.lines().next().unwrap_or("")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(trial: &str, tier: &str, status: Status) -> TrialRecord {
        TrialRecord {
            trial: trial.into(),
            tier: tier.into(),
            rule: "r".into(),
            test: "t".into(),
            status,
            message: format!("first {trial}\nsecond"),
            model: None,
            hardware: None,
            compile: None,
            environment: None,
        }
    }

    #[test]
    fn counts_then_notable_trials_worst_first() {
        let rs = [
            rec("m/a", "model", Status::Pass),
            rec("g/b", "gpu", Status::QualityWarning),
            rec("g/c", "gpu", Status::Fail),
            rec("g/d", "gpu", Status::Pass),
        ];
        let t = terminal(&rs);
        assert!(t.starts_with("4 trials\n   gpu tier: 1 pass\n   gpu tier: 1 fail\n   gpu tier: 1 quality-warning\n model tier: 1 pass\n"), "{t}");
        let fail = t.find("fail            g/c").unwrap();
        let warn = t.find("quality-warning g/b").unwrap();
        assert!(fail < warn, "{t}");
        assert!(t.contains("first g/c\n") && !t.contains("second"), "{t}");
    }
}
