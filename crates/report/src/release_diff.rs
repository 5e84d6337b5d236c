//! The diff of two CCCL releases within one run ([`release_diff`]:
//! `lib/13.0/...` against `lib/13.3/...`, by target, algorithm and case):
//! what the newer release fixed, broke, or fails as the older did.

use crate::{Status, Tier, TrialId, TrialRecord};

/// A library trial across releases: the same target, algorithm and case.
type Row = (String, String, String);

fn row(t: &TrialId) -> Row {
    (
        t.sm.clone().unwrap_or_default(),
        t.rule.clone(),
        t.test.clone(),
    )
}

/// What a newer CCCL release changed against an older one in one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReleaseDiff {
    pub old: String,
    pub new: String,
    /// Failing in the old release, passing in the new: fixed.
    pub fixed: Vec<(TrialId, TrialId)>,
    /// Passing in the old, failing in the new: broken.
    pub broke: Vec<(TrialId, TrialId)>,
    /// Failing in both.
    pub still_failing: Vec<(TrialId, TrialId)>,
    /// Any other change of status (a case that ran in one release only).
    pub other: Vec<(TrialId, Status, TrialId, Status)>,
    /// Cases of one release only (an algorithm that gained or lost PDL).
    pub only_old: Vec<TrialId>,
    pub only_new: Vec<TrialId>,
    /// Cases of both releases with the same status.
    pub same: usize,
}

/// Whether a status is a failure of the case (whatever a fact made of it).
fn failing(s: Status) -> bool {
    matches!(
        s,
        Status::Fail | Status::Crash | Status::Timeout | Status::Xfail | Status::Known
    )
}

fn passing(s: Status) -> bool {
    matches!(s, Status::Pass | Status::Changed)
}

/// The library trials of release `old` against those of `new` among
/// `records` (the last record of each trial counts), by target,
/// algorithm and case.
pub fn release_diff(records: &[TrialRecord], old: &str, new: &str) -> ReleaseDiff {
    use std::collections::BTreeMap;
    let of = |release: &str| -> BTreeMap<Row, (TrialId, Status)> {
        records
            .iter()
            .filter(|r| {
                r.trial.tier == Tier::Library && r.trial.toolchain.as_deref() == Some(release)
            })
            .map(|r| (row(&r.trial), (r.trial.clone(), r.status)))
            .collect()
    };
    let (a, b) = (of(old), of(new));
    let mut d = ReleaseDiff {
        old: old.to_string(),
        new: new.to_string(),
        ..ReleaseDiff::default()
    };
    for (k, (ta, sa)) in &a {
        let Some((tb, sb)) = b.get(k) else {
            d.only_old.push(ta.clone());
            continue;
        };
        let pair = (ta.clone(), tb.clone());
        match (failing(*sa), failing(*sb)) {
            (true, true) => d.still_failing.push(pair),
            (true, false) if passing(*sb) => d.fixed.push(pair),
            (false, true) if passing(*sa) => d.broke.push(pair),
            _ if sa == sb => d.same += 1,
            _ => d.other.push((ta.clone(), *sa, tb.clone(), *sb)),
        }
    }
    d.only_new = b
        .iter()
        .filter(|(k, _)| !a.contains_key(k))
        .map(|(_, (t, _))| t.clone())
        .collect();
    d
}

impl ReleaseDiff {
    /// Whether the newer release broke a case that passed.
    pub fn regressed(&self) -> bool {
        !self.broke.is_empty()
    }

    /// The diff as text, a line a case that changed.
    pub fn text(&self) -> String {
        let mut out = format!(
            "CCCL {} against {}: {} fixed, {} broken, {} failing in both, {} other changes, {} the same\n",
            self.new,
            self.old,
            self.fixed.len(),
            self.broke.len(),
            self.still_failing.len(),
            self.other.len(),
            self.same
        );
        for (title, list) in [
            ("broken in the newer release", &self.broke),
            ("fixed in the newer release", &self.fixed),
            ("failing in both", &self.still_failing),
        ] {
            for (a, b) in list {
                out.push_str(&format!("{title}: {b} (was {a})\n"));
            }
        }
        for (a, sa, b, sb) in &self.other {
            out.push_str(&format!("changed: {b} {sb} (was {a} {sa})\n"));
        }
        for t in &self.only_old {
            out.push_str(&format!("only in {}: {t}\n", self.old));
        }
        for t in &self.only_new {
            out.push_str(&format!("only in {}: {t}\n", self.new));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LibraryControl, LibraryResult, LibraryRun, Reproducer};

    fn rec(release: &str, alg: &str, case: &str, status: Status) -> TrialRecord {
        TrialRecord::new(TrialId::library(release, "sm_90", alg, case), status, "m")
    }

    #[test]
    fn a_newer_release_shows_what_it_fixed_and_broke() {
        let records = vec![
            rec("13.0", "merge_sort_keys", "n1000-stress", Status::Fail),
            rec("13.3", "merge_sort_keys", "n1000-stress", Status::Pass),
            rec("13.0", "merge_sort_keys", "n1000-quiet", Status::Pass),
            rec("13.3", "merge_sort_keys", "n1000-quiet", Status::Pass),
            rec("13.0", "merge_sort_pairs", "n1000-quiet", Status::Pass),
            rec("13.3", "merge_sort_pairs", "n1000-quiet", Status::Timeout),
            rec("13.0", "merge_sort_pairs", "n1000-stress", Status::Xfail),
            rec("13.3", "merge_sort_pairs", "n1000-stress", Status::Known),
            rec("13.3", "inclusive_scan", "n1000-quiet", Status::Pass),
            rec(
                "13.0",
                "merge_sort_pairs",
                "n1000-burst",
                Status::NotSupported,
            ),
            rec("13.3", "merge_sort_pairs", "n1000-burst", Status::Pass),
            // Another tier's trial of the same parts is no library case.
            TrialRecord::new(
                TrialId::sass("13.0", "sm_90", "merge_sort_keys", "n1000-stress"),
                Status::Fail,
                "m",
            ),
        ];
        let d = release_diff(&records, "13.0", "13.3");
        assert_eq!(d.fixed.len(), 1);
        assert_eq!(
            d.fixed[0].1.to_string(),
            "lib/13.3/sm_90/merge_sort_keys/n1000-stress"
        );
        assert_eq!(d.broke.len(), 1);
        assert_eq!(d.broke[0].0.rule, "merge_sort_pairs");
        assert_eq!(d.still_failing.len(), 1);
        assert_eq!(d.other.len(), 1, "not run, then passing");
        assert_eq!(d.same, 1);
        assert_eq!(d.only_new.len(), 1);
        assert!(d.only_old.is_empty());
        assert!(d.regressed());
        let text = d.text();
        assert!(
            text.starts_with("CCCL 13.3 against 13.0: 1 fixed, 1 broken, 1 failing in both"),
            "{text}"
        );
        assert!(
            text.contains(
                "broken in the newer release: lib/13.3/sm_90/merge_sort_pairs/n1000-quiet (was lib/13.0/sm_90/merge_sort_pairs/n1000-quiet)"
            ),
            "{text}"
        );
        assert!(
            text.contains("only in 13.3: lib/13.3/sm_90/inclusive_scan/n1000-quiet"),
            "{text}"
        );
        // The other way round, the fix is a break.
        let back = release_diff(&records, "13.3", "13.0");
        assert_eq!((back.fixed.len(), back.broke.len()), (1, 1));
        assert_eq!(back.only_old.len(), 1);
    }

    #[test]
    fn a_library_record_round_trips_and_old_records_read_without_it() {
        let mut r = rec("13.3", "merge_sort_keys", "n1000-stress", Status::Fail);
        let plain = r.to_json_line();
        assert!(!plain.contains("\"library\":"), "{plain}");
        assert!(plain.contains("\"tier\":\"library\""), "{plain}");
        r.library = Some(LibraryResult {
            release: "13.3".into(),
            cccl: Some("3.3.0".into()),
            target: "sm_90".into(),
            algorithm: "merge_sort_keys".into(),
            size: 1000,
            env: "stress".into(),
            reps: 20,
            run: LibraryRun {
                calls: 20,
                wrong: 2,
                first_wrong: Some("index 3: got 1 want 2".into()),
                pdl: Some(true),
                ..LibraryRun::default()
            },
            controls: vec![LibraryControl {
                variant: "-nopdl".into(),
                outcome: "pass".into(),
                message: "right in 20 of 20 calls".into(),
                run: None,
                rounds: vec![LibraryRun {
                    calls: 20,
                    ..LibraryRun::default()
                }],
            }],
            beside: vec![LibraryRun {
                calls: 20,
                wrong: 1,
                ..LibraryRun::default()
            }],
            reproducer: Some(Reproducer {
                command: "target/library/13.3/sm_90/merge_sort --algorithm merge_sort_keys".into(),
                source: "kernels/cccl/merge_sort.cu".into(),
                build: "nvcc -std=c++17".into(),
            }),
        });
        let line = r.to_json_line();
        let back: TrialRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back, r);
        assert!(back.library.unwrap().controls[0].removes_failure());
    }
}
