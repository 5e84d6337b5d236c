//! The verdict diff: a hardware litmus result (its histogram rows, its
//! [`Observation`]) against the guide's verdict, giving the trial's
//! [`Status`], as the table of ARCHITECTURE.md, "The verdict diff", says;
//! and how bad a status is ([`Severity`]), by which `report diff` ranks
//! the change of a trial's status.

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

/// How bad a status is, for a diff of two runs: a higher rank is worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    Passing,
    /// A known discrepancy that reproduces.
    Known,
    /// Ran, with a quality warning.
    Warning,
    /// Did not run: the trial's evidence is lost.
    NotRun,
    /// Fails, times out, crashes, or no verdict can be trusted.
    Failing,
}

impl Status {
    /// Its rank for a diff of runs. No wildcard arm: a new status must be
    /// ranked here (the compiler says so).
    pub fn severity(self) -> Severity {
        match self {
            Status::Pass => Severity::Passing,
            Status::Xfail | Status::Known | Status::KnownHang => Severity::Known,
            // A known discrepancy that no longer reproduces: listed by
            // `report diff` as such whatever the status before.
            Status::QualityWarning | Status::Changed => Severity::Warning,
            Status::NotSupported | Status::NotRun => Severity::NotRun,
            Status::Fail
            | Status::Timeout
            | Status::Crash
            | Status::OracleConflict
            | Status::Unmodeled => Severity::Failing,
        }
    }

    /// Whether this status is worse than `before`.
    pub fn is_worse_than(self, before: Status) -> bool {
        self.severity() > before.severity()
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
    /// How many words of each tile register segment were stale (not an
    /// observable; none for a test without tiles).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale: Vec<crate::StaleWords>,
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
            stale: Vec::new(),
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
