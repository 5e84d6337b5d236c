//! Results: the diff of the model's verdict against the hardware's
//! observation, the per-trial record written as JSON lines, and the
//! litmus7-style text block.
//!
//! The diff follows the table of ARCHITECTURE.md, "The verdict diff" (the
//! one place it is written; the site's *How to read a verdict* shows it).
//!
//! Then the known facts (`conformance/facts/`, `facts.rs`) turn a status
//! into `xfail`, `known`, `known-hang` or `changed` where they apply
//! (`applicability.rs` has that table).

mod applicability;
pub mod baseline;
mod block;
pub mod facts;
mod golden;
mod junit;
mod mutant;
mod record;
mod results_file;
pub mod run_diff;
pub mod runs;
mod toolchain;
mod trial;
mod tuning;

pub use applicability::{Applies, Here};
pub use block::litmus_block;
pub use facts::{ArchRange, Dependency, FACTS_DIR, Fact, FactKind, Facts, Place, slug, sm_number};
pub use golden::{GOLDEN_HEADER, golden};
pub use junit::junit;
pub use mutant::{Count, MutantRecord, MutantRun, MutantStatus, Score};
pub use record::{
    Binary, CompileSummary, Device, Environment, ModelSummary, Oracles, TrialRecord,
    under_current_names,
};
pub use results_file::{
    LinesRead, ResultsRead, Skipped, append_json_line, append_record, read_json_lines,
    read_results, read_results_file, repair_tail,
};
pub use runs::{RunChoice, RunRecords, RunStamp, split_runs};
pub use toolchain::{TOOLCHAIN_FILE, ToolchainRecord};
pub use trial::{Subject, TestKey, Tier, TrialId, USER_PROGRAMS};
pub use tuning::{MAX_LINE_BURST, SearchPoint, TUNING_DIR, Tuning, parse_search};

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use gridcheck_spec::{Litmus, State, Verdict};
use serde::{Deserialize, Serialize};

/// What the hardware showed for a condition over many runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Observation {
    Never,
    Sometimes,
    Always,
}

impl Observation {
    pub fn from_counts(positive: u64, negative: u64) -> Observation {
        match (positive, negative) {
            (0, _) => Observation::Never,
            (_, 0) => Observation::Always,
            _ => Observation::Sometimes,
        }
    }
}

impl fmt::Display for Observation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Observation::Never => "Never",
            Observation::Sometimes => "Sometimes",
            Observation::Always => "Always",
        })
    }
}

/// A trial's status, in the vocabulary of the GPU conformance suites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Pass,
    Fail,
    /// Allowed but never observed. (Records made before `unmodeled` existed
    /// also used it for a state the model cannot reach.)
    QualityWarning,
    /// The machine cannot run it (no driver, compute capability, no nvcc).
    NotSupported,
    /// Not run for another reason (not built, filtered by the tier).
    NotRun,
    Timeout,
    Crash,
    /// A known fact, measured on this GPU model with this driver, that
    /// reproduced.
    Xfail,
    /// The two oracles (the loom model and the axiomatic model) reach
    /// different states that no pinned limit explains: one of them is wrong,
    /// and no verdict can be trusted.
    OracleConflict,
    /// A known fact that applies here (its `depends_on` matches this
    /// machine) but was measured elsewhere, and reproduced: not a failure
    /// of the run; the message names where it was first measured.
    Known,
    /// A known fact applies to this machine, but the trial no longer fails
    /// as the fact says: not a failure of the run, shown loudly (the fact
    /// file is out of date here, or the driver changed).
    Changed,
    /// A timeout that a known fact of kind `hang` covers.
    KnownHang,
    /// The hardware reached a state neither oracle reaches: a finding
    /// against the guide or the model, a failure of the run.
    Unmodeled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::QualityWarning => "quality-warning",
            Status::NotSupported => "not-supported",
            Status::NotRun => "not-run",
            Status::Timeout => "timeout",
            Status::Crash => "crash",
            Status::Xfail => "xfail",
            Status::OracleConflict => "oracle-conflict",
            Status::Known => "known",
            Status::Changed => "changed",
            Status::KnownHang => "known-hang",
            Status::Unmodeled => "unmodeled",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One histogram row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    pub state: State,
    pub count: u64,
    /// The state satisfies the test's condition (litmus7's `*`).
    pub satisfies: bool,
    /// The model can reach this state.
    pub modeled: bool,
}

/// A hardware litmus result, classified against the condition and the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HardwareResult {
    pub rows: Vec<Row>,
    pub positive: u64,
    pub negative: u64,
    pub observation: Observation,
    pub instances: u64,
    pub launch_failures: u64,
    pub first_launch_error: Option<String>,
    pub elapsed_s: f64,
    pub seed: u64,
}

impl HardwareResult {
    /// Classifies a histogram: each state against the condition and against
    /// the model's reachable states.
    pub fn classify(
        litmus: &Litmus,
        histogram: &BTreeMap<State, u64>,
        modeled: &BTreeSet<State>,
    ) -> Result<HardwareResult, String> {
        let mut rows = Vec::new();
        let (mut positive, mut negative) = (0, 0);
        for (state, &count) in histogram {
            let satisfies = litmus.condition.holds(state)?;
            if satisfies {
                positive += count;
            } else {
                negative += count;
            }
            rows.push(Row {
                state: state.clone(),
                count,
                satisfies,
                modeled: modeled.contains(state),
            });
        }
        Ok(HardwareResult {
            rows,
            positive,
            negative,
            observation: Observation::from_counts(positive, negative),
            instances: positive + negative,
            launch_failures: 0,
            first_launch_error: None,
            elapsed_s: 0.0,
            seed: 0,
        })
    }

    /// Instances per second over the measured time.
    pub fn rate(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.instances as f64 / self.elapsed_s
        } else {
            0.0
        }
    }

    /// States satisfying the condition per second (litmus7's weak outcomes rate).
    pub fn positive_rate(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.positive as f64 / self.elapsed_s
        } else {
            0.0
        }
    }

    pub fn unmodeled(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| !r.modeled)
    }
}

/// The outcome of comparing the model with the hardware.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff {
    pub status: Status,
    /// One sentence per finding, for the terminal and the report.
    pub findings: Vec<String>,
}

/// The verdict diff: ARCHITECTURE.md, "The verdict diff".
pub fn diff(verdict: Verdict, hw: &HardwareResult) -> Diff {
    let mut findings = Vec::new();
    let mut status = match (verdict, hw.observation) {
        _ if hw.instances == 0 => {
            findings.push(format!(
                "no instance completed ({} launch failures{})",
                hw.launch_failures,
                hw.first_launch_error
                    .as_deref()
                    .map(|e| format!(", first: {e}"))
                    .unwrap_or_default()
            ));
            Status::Fail
        }
        (Verdict::Forbidden, Observation::Never) => Status::Pass,
        (Verdict::Forbidden, o) => {
            findings.push(format!(
                "VIOLATION: the guide forbids the condition, the hardware showed it {o} ({} of {} instances)",
                hw.positive, hw.instances
            ));
            Status::Fail
        }
        (Verdict::Required, Observation::Always) => Status::Pass,
        (Verdict::Required, o) => {
            findings.push(format!(
                "VIOLATION: the guide requires the condition, the hardware showed it {o} ({} of {} instances)",
                hw.positive, hw.instances
            ));
            Status::Fail
        }
        (Verdict::Allowed, Observation::Never) => {
            findings.push(format!(
                "unobserved: allowed by the guide, never provoked in {} instances",
                hw.instances
            ));
            Status::QualityWarning
        }
        (Verdict::Allowed, _) => Status::Pass,
    };
    let unmodeled: Vec<&Row> = hw.unmodeled().collect();
    if !unmodeled.is_empty() {
        findings.push(format!(
            "unmodeled: {} observed state(s) the model cannot reach",
            unmodeled.len()
        ));
        if matches!(status, Status::Pass | Status::QualityWarning) {
            status = Status::Unmodeled;
        }
    }
    if hw.launch_failures > 0 && hw.instances > 0 {
        findings.push(format!(
            "{} instances lost to device launch failures{}",
            hw.launch_failures,
            hw.first_launch_error
                .as_deref()
                .map(|e| format!(" (first: {e})"))
                .unwrap_or_default()
        ));
    }
    Diff { status, findings }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_spec::load_sources;

    fn litmus() -> Litmus {
        let yaml = "rules:
  - id: cdp2.a.b
    source: { seed: s, section: s }
    quote: q
    profile: cdp2
    tests: [t]
tests:
  - name: t
    kind: litmus
    memory: { x: 0 }
    kernels:
      - kernel: k
        launch: host
        threads:
          t0: [load r0 x]
    condition: exists k.t0.r0 == 1
    expect: forbidden
";
        let spec = load_sources(&[("a.yaml".into(), yaml.into())], None).unwrap();
        match &spec.tests[0].body {
            gridcheck_spec::TestBody::Litmus(l) => l.clone(),
            _ => unreachable!(),
        }
    }

    fn st(r0: u32) -> State {
        [("k.t0.r0".to_string(), r0), ("x".to_string(), 0)].into()
    }

    fn hw(counts: &[(u32, u64)], modeled: &[u32]) -> HardwareResult {
        let h: BTreeMap<State, u64> = counts.iter().map(|&(v, c)| (st(v), c)).collect();
        let m: BTreeSet<State> = modeled.iter().map(|&v| st(v)).collect();
        HardwareResult::classify(&litmus(), &h, &m).unwrap()
    }

    #[test]
    fn the_diff_table() {
        use Verdict::*;
        let never = hw(&[(0, 10)], &[0]);
        let sometimes = hw(&[(0, 5), (1, 5)], &[0, 1]);
        let always = hw(&[(1, 10)], &[1]);
        assert_eq!(never.observation, Observation::Never);
        assert_eq!(sometimes.observation, Observation::Sometimes);
        assert_eq!((sometimes.positive, sometimes.negative), (5, 5));
        assert_eq!(always.observation, Observation::Always);
        assert_eq!(diff(Forbidden, &never).status, Status::Pass);
        assert_eq!(diff(Forbidden, &sometimes).status, Status::Fail);
        assert_eq!(diff(Forbidden, &always).status, Status::Fail);
        assert_eq!(diff(Required, &always).status, Status::Pass);
        assert_eq!(diff(Required, &sometimes).status, Status::Fail);
        assert_eq!(diff(Allowed, &sometimes).status, Status::Pass);
        assert_eq!(diff(Allowed, &never).status, Status::QualityWarning);
        assert!(diff(Allowed, &never).findings[0].starts_with("unobserved"));
    }

    #[test]
    fn unmodeled_states_fail_but_never_hide_a_failure() {
        let h = hw(&[(0, 5), (1, 5)], &[0]);
        let d = diff(Verdict::Allowed, &h);
        assert_eq!(d.status, Status::Unmodeled);
        assert!(d.findings.iter().any(|f| f.starts_with("unmodeled")));
        assert_eq!(diff(Verdict::Forbidden, &h).status, Status::Fail);
        // Unobserved and unmodeled at once: the unmodeled state wins.
        let h = hw(&[(0, 5)], &[1]);
        assert_eq!(h.observation, Observation::Never);
        assert_eq!(diff(Verdict::Allowed, &h).status, Status::Unmodeled);
        // All states modeled: no unmodeled finding.
        let h = hw(&[(0, 5)], &[0]);
        assert_eq!(diff(Verdict::Allowed, &h).status, Status::QualityWarning);
    }

    #[test]
    fn nothing_measured_is_a_failure() {
        let mut h = hw(&[], &[]);
        h.launch_failures = 4;
        h.first_launch_error = Some("cudaErrorLaunchPendingCountExceeded".into());
        let d = diff(Verdict::Forbidden, &h);
        assert_eq!(d.status, Status::Fail);
        assert!(d.findings[0].contains("cudaErrorLaunchPendingCountExceeded"));
    }

    #[test]
    fn block_marks_satisfying_states() {
        let b = litmus_block("t", &litmus(), &hw(&[(0, 7), (1, 3)], &[0]));
        assert!(
            b.starts_with("Test t forbidden\n  Histogram (2 states"),
            "{b}"
        );
        assert!(b.contains("3 *! k.t0.r0=1; x=0"), "{b}");
        assert!(b.contains("7 :> k.t0.r0=0; x=0"), "{b}");
        assert!(b.contains("Positive: 3, Negative: 7"), "{b}");
    }

    #[test]
    fn statuses_are_kebab_case_in_json() {
        for (s, text) in [
            (Status::Known, "known"),
            (Status::Changed, "changed"),
            (Status::KnownHang, "known-hang"),
            (Status::Unmodeled, "unmodeled"),
            (Status::QualityWarning, "quality-warning"),
        ] {
            assert_eq!(s.as_str(), text);
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{text}\""));
            assert_eq!(
                serde_json::from_str::<Status>(&format!("\"{text}\"")).unwrap(),
                s
            );
        }
        assert!(serde_json::from_str::<Status>("\"knownhang\"").is_err());
    }

    #[test]
    fn records_round_trip_as_json() {
        let mut r = TrialRecord::new(TrialId::gpu("sm_90", "a", "b"), Status::QualityWarning, "m");
        r.hardware = Some(hw(&[(0, 1)], &[0]));
        let line = r.to_json_line();
        assert!(line.contains("\"status\":\"quality-warning\""), "{line}");
        assert!(
            line.starts_with(
                "{\"trial\":\"gpu/sm_90/a/b\",\"tier\":\"gpu\",\"rule\":\"a\",\"test\":\"b\","
            ),
            "{line}"
        );
        let back: TrialRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back, r);
        let bad = line.replace("\"rule\":\"a\"", "\"rule\":\"z\"");
        let e = serde_json::from_str::<TrialRecord>(&bad).unwrap_err();
        assert!(e.to_string().contains("says tier `gpu`, rule `z`"), "{e}");
    }
}
