//! The summary of one run's records, as data ([`Summary`], which scripts
//! read as JSON: `conformance report summary FILE`, `cargo xtask report
//! summary --format json`) and as the terminal text made from it
//! ([`terminal`]): status counts per tier, how many tests those trials ran,
//! then every trial that failed, crashed, timed out, is unmodeled, a known
//! fact (xfail, known, known-hang, changed) or a quality warning, with the
//! first line of its message. A test listed by several rules is one
//! result: its entry names the other rules instead of repeating it.

use std::collections::{BTreeMap, BTreeSet};

use gridcheck_judge::{CoverCounts, FactCover};
use serde::Serialize;

use crate::run_diff::Severity;
use crate::{Status, TrialRecord};

/// One run's records, summarised.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub run_id: Option<String>,
    pub started: Option<String>,
    /// Records (a resumed trial recorded twice counts twice).
    pub trials: usize,
    pub statuses: BTreeMap<Status, usize>,
    pub tiers: BTreeMap<String, TierCounts>,
    /// Trials whose status fails the run (fail, timeout, crash,
    /// oracle-conflict, unmodeled: [`Severity::Failing`]).
    pub failing: usize,
    /// The trials that did not simply pass or not run, worst first, one
    /// entry a test and status.
    pub notable: Vec<Notable>,
    /// Every trial's last record, when asked for ([`Summary::with_every_trial`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub every_trial: Vec<TrialLine>,
    /// What each known fact covers, when asked for ([`Summary::with_facts`]):
    /// the counts the site's discrepancies page shows too.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<CoverCounts>,
}

/// A tier's counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TierCounts {
    pub trials: usize,
    /// Distinct tests (on their tier and architecture) those trials ran.
    pub tests: usize,
    pub statuses: BTreeMap<Status, usize>,
}

/// A notable result: its status, its first trial, the other rules listing
/// the test, the first line of the message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Notable {
    pub status: Status,
    pub trial: String,
    pub test: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also_rules: Vec<String>,
    pub message: String,
}

/// One trial's last record, with its whole message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrialLine {
    pub trial: String,
    pub test: String,
    pub status: Status,
    pub message: String,
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

/// How bad a status is, for "the worst status" of a rule or a summary: a
/// failure first, a trial that did not run last.
pub fn rank(s: Status) -> u8 {
    match s {
        Status::OracleConflict => 12,
        Status::Fail => 11,
        Status::Unmodeled => 10,
        Status::Crash => 9,
        Status::Timeout => 8,
        Status::Changed => 7,
        Status::Known => 6,
        Status::KnownHang => 5,
        Status::Xfail => 4,
        Status::QualityWarning => 3,
        Status::Pass => 2,
        Status::NotSupported => 1,
        Status::NotRun => 0,
    }
}

/// Status counts per tier, in tier then status order.
pub fn counts(records: &[TrialRecord]) -> BTreeMap<(String, Status), usize> {
    let mut c = BTreeMap::new();
    for r in records {
        *c.entry((r.trial.tier.as_str().to_string(), r.status))
            .or_default() += 1;
    }
    c
}

impl Summary {
    /// The summary of one run's records.
    pub fn of(records: &[TrialRecord]) -> Summary {
        let mut statuses = BTreeMap::new();
        let mut tiers: BTreeMap<String, TierCounts> = BTreeMap::new();
        let mut tests: BTreeMap<String, BTreeSet<crate::TestKey>> = BTreeMap::new();
        for r in records {
            *statuses.entry(r.status).or_default() += 1;
            let tier = r.trial.tier.as_str().to_string();
            let t = tiers.entry(tier.clone()).or_default();
            t.trials += 1;
            *t.statuses.entry(r.status).or_default() += 1;
            tests.entry(tier).or_default().insert(r.trial.test_key());
        }
        for (tier, keys) in tests {
            if let Some(t) = tiers.get_mut(&tier) {
                t.tests = keys.len();
            }
        }
        Summary {
            run_id: records.iter().find_map(|r| r.run_id.clone()),
            started: records.iter().find_map(|r| r.run_started.clone()),
            trials: records.len(),
            failing: records
                .iter()
                .filter(|r| r.status.severity() == Severity::Failing)
                .count(),
            statuses,
            tiers,
            notable: notable_entries(records),
            every_trial: Vec::new(),
            facts: Vec::new(),
        }
    }

    /// With every trial's last record, in trial order.
    pub fn with_every_trial(mut self, records: &[TrialRecord]) -> Summary {
        let last: BTreeMap<String, &TrialRecord> =
            records.iter().map(|r| (r.trial.to_string(), r)).collect();
        self.every_trial = last
            .into_iter()
            .map(|(trial, r)| TrialLine {
                trial,
                test: r.trial.test.clone(),
                status: r.status,
                message: r.message.clone(),
            })
            .collect();
        self
    }

    /// With what each fact covers ([`crate::Facts::cover`]), a line each.
    pub fn with_facts(mut self, covers: &[FactCover]) -> Summary {
        self.facts = covers.iter().map(FactCover::counts).collect();
        self
    }

    /// The terminal text: the counts per tier, the tests per tier, then
    /// each notable result, then what each fact covers (when given).
    pub fn text(&self) -> String {
        let mut s = format!("{} trials\n", self.trials);
        for (tier, t) in &self.tiers {
            for (status, n) in &t.statuses {
                s += &format!("{tier:>6} tier: {n} {status}\n");
            }
        }
        for (tier, t) in &self.tiers {
            s += &format!("{tier:>6} tier: {} trials of {} tests\n", t.trials, t.tests);
        }
        if !self.notable.is_empty() {
            s += "\n";
        }
        for n in &self.notable {
            s += &format!("{:<15} {}\n", n.status.as_str(), n.trial);
            if !n.also_rules.is_empty() {
                s += &format!("{:15} also rules {}\n", "", n.also_rules.join(", "));
            }
            s += &format!("{:15} {}\n", "", n.message);
        }
        if !self.facts.is_empty() {
            s += "\n";
            s += &cover_text(&self.facts);
        }
        s
    }
}

/// The notable records, worst first, one entry a test and status: the
/// first trial, then the other rules.
fn notable_entries(records: &[TrialRecord]) -> Vec<Notable> {
    let mut sorted: Vec<&TrialRecord> = records.iter().filter(|r| notable(r.status)).collect();
    sorted.sort_by_key(|r| (std::cmp::Reverse(rank(r.status)), &r.trial));
    let mut groups: Vec<(&TrialRecord, Vec<String>)> = Vec::new();
    for r in sorted {
        let same = |g: &&mut (&TrialRecord, Vec<String>)| {
            g.0.status == r.status && g.0.trial.test_key() == r.trial.test_key()
        };
        match groups.iter_mut().find(same) {
            Some(g) => g.1.push(r.trial.rule.clone()),
            None => groups.push((r, Vec::new())),
        }
    }
    groups
        .into_iter()
        .map(|(r, also_rules)| Notable {
            status: r.status,
            trial: r.trial.to_string(),
            test: r.trial.test.clone(),
            also_rules,
            message: r.message.lines().next().unwrap_or("").to_string(),
        })
        .collect()
}

/// [`Summary::text`] of the records.
pub fn terminal(records: &[TrialRecord]) -> String {
    Summary::of(records).text()
}

/// The summary's block: a line a fact, its key then its counts.
pub fn cover_text(covers: &[CoverCounts]) -> String {
    if covers.is_empty() {
        return String::new();
    }
    let mut s = String::from("what each known fact covers (its shape, beside its key):\n");
    for c in covers {
        s += &format!("  {} ({}): {c}\n", c.fact, c.kind);
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

    fn records() -> [TrialRecord; 5] {
        [
            rec("model/r/a", Status::Pass),
            rec("gpu/sm_90/r/b", Status::QualityWarning),
            rec("gpu/sm_90/r/c", Status::Fail),
            rec("gpu/sm_90/r/d", Status::Pass),
            rec("gpu/sm_90/r2/b", Status::QualityWarning),
        ]
    }

    #[test]
    fn counts_then_notable_trials_worst_first() {
        let t = terminal(&records());
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

    #[test]
    fn the_summary_as_json() {
        let rs = records();
        let s = Summary::of(&rs);
        assert_eq!((s.trials, s.failing), (5, 1));
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["statuses"]["quality-warning"], 2);
        assert_eq!(v["tiers"]["gpu"]["tests"], 3);
        assert_eq!(v["tiers"]["gpu"]["statuses"]["fail"], 1);
        assert_eq!(v["notable"][0]["status"], "fail");
        assert_eq!(v["notable"][1]["also_rules"][0], "r2");
        assert!(v.get("every_trial").is_none());
        let every = serde_json::to_value(s.with_every_trial(&rs)).unwrap();
        let lines = every["every_trial"].as_array().unwrap();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0]["trial"], "gpu/sm_90/r/b");
        assert_eq!(lines[0]["message"], "first gpu/sm_90/r/b\nsecond");
    }

    #[test]
    fn what_each_fact_covers_is_a_line_a_fact_after_the_trials() {
        let covers = [
            CoverCounts {
                fact: "gpu/sm_90/a".into(),
                kind: "unobserved",
                shape: true,
                by_name: 1,
                by_shape: 1,
                mutants: 3,
                within: Some(1),
                outside: Some(2),
                findings: 0,
                findings_unmatched: 0,
            },
            CoverCounts {
                fact: "gpu/sm_90/c".into(),
                kind: "hang",
                shape: false,
                by_name: 1,
                by_shape: 0,
                mutants: 0,
                within: None,
                outside: None,
                findings: 0,
                findings_unmatched: 0,
            },
        ];
        let text = cover_text(&covers);
        assert_eq!(
            text,
            "what each known fact covers (its shape, beside its key):\n  \
             gpu/sm_90/a (unobserved): tests 1 by name, 1 by shape only; mutants 3 \
             (1 within the envelope, 2 outside); no recorded finding\n  \
             gpu/sm_90/c (hang): tests 1 by name (no shape: its key only); no mutant or finding matched\n"
        );
        assert_eq!(cover_text(&[]), "");
        let mut s = Summary::of(&records());
        s.facts = covers.to_vec();
        let t = s.text();
        assert!(t.ends_with(&format!("\n\n{text}")), "{t}");
    }
}
