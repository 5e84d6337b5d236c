//! The library tier's side of a record ([`LibraryResult`]: what a CCCL
//! algorithm's program reported for one case, the controls run after a
//! failure and the reproducer) and the diff of two CCCL releases within
//! one run ([`release_diff`]: `lib/13.0/...` against `lib/13.3/...`, by
//! target, algorithm and case).

use serde::{Deserialize, Serialize};

use crate::{Status, Tier, TrialId, TrialRecord};

/// One case of a CCCL algorithm on the GPU, as its program reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryResult {
    /// The CCCL release whose headers built the program (`13.3`, named as
    /// the toolchain that ships them).
    pub release: String,
    /// The CCCL version the program reports (`3.3.0`), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cccl: Option<String>,
    /// `sm_90` (SASS) or `compute_80` (PTX, JIT-compiled by the driver).
    pub target: String,
    pub algorithm: String,
    pub size: u64,
    /// `quiet`, `back-to-back`, `stress`, `burst` or `delay`.
    pub env: String,
    /// The calls asked for.
    pub reps: u64,
    /// How the binary's run went.
    pub run: LibraryRun,
    /// After a failure: the same case with the program's other builds
    /// (PDL off, compute_90 PTX, the wait moved), each one's outcome.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub controls: Vec<LibraryControl>,
    /// How to run the case again without the harness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<Reproducer>,
}

/// One run of a program: its counts, or why there are none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LibraryRun {
    /// The calls made and checked.
    #[serde(default)]
    pub calls: u64,
    /// The calls whose result was wrong.
    #[serde(default)]
    pub wrong: u64,
    /// The first wrong element (`index 17: got 5 want 3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_wrong: Option<String>,
    /// The CUDA error that ended the run (`cudaErrorIllegalAddress`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The calls made before that error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_calls: Option<u64>,
    /// The run did not answer within this many seconds and was killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_out_s: Option<u64>,
    /// The run ended otherwise without its line (a crash, bad output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Whether the binary was built with PDL on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdl: Option<bool>,
    /// What `cub::PtxVersion` reported (900: compute_90 code ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ptx_version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_ms: Option<f64>,
}

impl LibraryRun {
    /// Whether every call was made and right.
    pub fn passed(&self, reps: u64) -> bool {
        self.wrong == 0
            && self.error.is_none()
            && self.timed_out_s.is_none()
            && self.problem.is_none()
            && self.calls >= reps
    }

    /// What went wrong, in the words a message uses, or `None` when the
    /// run passed.
    pub fn failure(&self, reps: u64) -> Option<String> {
        if let Some(t) = self.timed_out_s {
            return Some(format!("no answer within {t} s"));
        }
        if let Some(p) = &self.problem {
            return Some(p.clone());
        }
        if let Some(e) = &self.error {
            let k = self.after_calls.unwrap_or(self.calls);
            return Some(format!("{e} after {k} calls"));
        }
        if self.wrong > 0 {
            let first = self
                .first_wrong
                .as_deref()
                .map(|f| format!(" (first: {f})"))
                .unwrap_or_default();
            return Some(format!(
                "wrong in {} of {} calls{first}",
                self.wrong, self.calls
            ));
        }
        (self.calls < reps).then(|| format!("made {} of {reps} calls", self.calls))
    }
}

/// A control: the failing case run with another build of its program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryControl {
    /// The binary's suffix: `-nopdl`, `-ptx90`, `-<patch>`.
    pub variant: String,
    /// `pass`, `fail` or `not-run`.
    pub outcome: String,
    /// What it showed, in words.
    pub message: String,
    /// The run's counts, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<LibraryRun>,
}

impl LibraryControl {
    /// Whether the control removed the failure (it ran and passed).
    pub fn removes_failure(&self) -> bool {
        self.outcome == "pass"
    }
}

/// How to run one case without the harness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reproducer {
    /// The program's command line, as the harness ran it.
    pub command: String,
    /// The standalone source, `kernels/cccl/<program>.cu`.
    pub source: String,
    /// The nvcc command that builds it (from the build's `build.json`),
    /// or why it is not known.
    pub build: String,
}

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
    fn a_run_says_what_went_wrong_in_the_messages_words() {
        let mut r = LibraryRun {
            calls: 20,
            ..LibraryRun::default()
        };
        assert!(r.passed(20));
        assert_eq!(r.failure(20), None);
        assert_eq!(r.failure(30).as_deref(), Some("made 20 of 30 calls"));
        r.wrong = 3;
        r.first_wrong = Some("index 17: got 5 want 3".into());
        assert!(!r.passed(20));
        assert_eq!(
            r.failure(20).as_deref(),
            Some("wrong in 3 of 20 calls (first: index 17: got 5 want 3)")
        );
        r.error = Some("cudaErrorIllegalAddress".into());
        r.after_calls = Some(7);
        assert_eq!(
            r.failure(20).as_deref(),
            Some("cudaErrorIllegalAddress after 7 calls")
        );
        let hung = LibraryRun {
            timed_out_s: Some(60),
            ..LibraryRun::default()
        };
        assert_eq!(hung.failure(1).as_deref(), Some("no answer within 60 s"));
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
