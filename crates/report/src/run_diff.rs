//! What changed between two runs (`cargo xtask report diff BASE NEW`): a
//! pure function over two record sets, [`diff_runs`], with no I/O.
//!
//! - **Status changes**, ranked by [`Status::severity`]: a status worse
//!   than before is a *regression* (a pass, an xfail or a warning that now
//!   fails, times out, crashes or did not run), a better one a *fix*; a
//!   known discrepancy (`xfail`) that no longer reproduces, now a pass, a
//!   warning, or the harness's failure "listed as a known failure … but it
//!   passed", is *known-changed*, shown on its own; two statuses of one
//!   rank (`fail` to `crash`) are *changed*.
//! - **Histogram changes** of litmus trials run in both: a state the NEW
//!   run's model cannot reach, observed now and not before, is a
//!   regression whatever the status; an allowed state seen before and not
//!   now; the rate of the condition (positive / instances) moving beyond
//!   the run-to-run spread: a two-proportion z-test (pooled) with
//!   `|z| >= 4` (two-sided p below 6.3e-5, so about one false alarm in
//!   16 000 comparisons were the runs binomial) *and* a factor of at least
//!   2 between the rates. GPU runs vary more than binomial sampling does
//!   (two H100 runs of 2026-11-25 moved a 40% rate to 38% at z = 5.8), so
//!   significance alone would flag noise; the factor keeps what matters.
//! - **Trials added or removed**, and the two environments side by side.
//! - **The spread**: with the baseline of NEW's GPU ([`diff_runs_with`],
//!   `crate::spread`), a rate change is a regression beyond it, an allowed
//!   state gone is one when no baseline run missed it and NEW's escalation
//!   did not provoke it, and a status the baseline saw for the trial is
//!   within it (listed, not a regression).
//!
//! A trial recorded twice in one run (a resumed trial) is its last record.
//! With the facts (`RunDiff::within_facts`, `within_facts.rs`), a trial of a
//! fact that reproduces only sometimes moving between showing it and not
//! is *within the fact*, not a regression.

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

use serde::Serialize;

use crate::spread::Spread;
use crate::{HardwareResult, Status, TrialId, TrialRecord};

pub use gridcheck_record::{RATE_Z, two_proportion_z};
/// The factor between two rates a rate change must reach.
pub const RATE_FACTOR: f64 = 2.0;

pub use gridcheck_record::Severity;

/// What kind of status change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    Regression,
    /// A known discrepancy that no longer reproduces.
    KnownChanged,
    Fix,
    /// Another status of the same rank.
    Changed,
    /// Between showing and not showing the behaviour of a fact that
    /// reproduces only sometimes (`RunDiff::within_facts`).
    WithinFact,
}

/// One trial whose status changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusChange {
    pub trial: TrialId,
    pub kind: ChangeKind,
    pub base: Status,
    pub new: Status,
    /// The first line of NEW's message.
    pub message: String,
    /// The test's hash differs between the runs: the test itself changed.
    pub test_changed: bool,
    /// The baseline's runs saw NEW's status for the trial: a regression
    /// within the run-to-run spread, not counted as one.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub within_spread: bool,
}

/// What kind of histogram change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HistogramKind {
    /// A state the model cannot reach, observed now and not before.
    ForbiddenObserved,
    /// A state the model allows, seen before and not now.
    AllowedGone,
    /// The condition's rate moved beyond the spread.
    RateMoved,
}

/// One histogram change of a trial.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistogramChange {
    pub trial: TrialId,
    pub kind: HistogramKind,
    /// The state (`name=value; ...`), for a state change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// How often the state was seen (for a rate: positive) in BASE and NEW.
    pub base_count: u64,
    pub new_count: u64,
    pub base_instances: u64,
    pub new_instances: u64,
    /// The two-proportion z of a rate change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub z: Option<f64>,
    pub regression: bool,
    /// How the spread decided it, where a baseline has the trial.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<String>,
}

/// A trial only one run has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OneSided {
    pub trial: TrialId,
    pub status: Status,
}

/// One side's environment, as its records say.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Side {
    pub run_id: String,
    pub started: Option<String>,
    pub trials: usize,
    pub gpu: Option<String>,
    pub sm: Option<String>,
    pub driver_version: Option<String>,
    /// The CUDA driver API version.
    pub driver_api: Option<String>,
    /// The nvcc found on the machine where the harness ran
    /// (`environment.nvcc`): not necessarily the one that built the
    /// kernels (see `kernels`).
    pub nvcc: Option<String>,
    /// The toolchains that built what ran (each distinct one, from
    /// `environment.toolchain` of GPU records and `compile.toolchain` of
    /// compile and machine-code records); empty where no record names one
    /// (records made before toolchains were recorded).
    pub kernels: Vec<KernelsToolchain>,
    pub devices: Vec<String>,
    pub commits: Vec<String>,
    pub tuning: Option<String>,
}

/// A toolchain that built what a run ran: its release, nvcc's version and
/// the device runtime (`gridcheck_report::ToolchainRecord::device_runtime`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct KernelsToolchain {
    pub release: String,
    pub nvcc: String,
    pub device_runtime: String,
}

impl std::fmt::Display for KernelsToolchain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: nvcc {}, device runtime {}",
            self.release, self.nvcc, self.device_runtime
        )
    }
}

/// Everything that changed from BASE to NEW.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunDiff {
    pub base: Side,
    pub new: Side,
    pub status_changes: Vec<StatusChange>,
    pub histogram_changes: Vec<HistogramChange>,
    pub added: Vec<OneSided>,
    pub removed: Vec<OneSided>,
    /// Trials in both runs with no change at all.
    pub unchanged: usize,
    /// The baseline used (its GPU and number of runs), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<String>,
}

/// When `report diff` exits 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailOn {
    #[default]
    Regression,
    Change,
    Never,
}

impl FromStr for FailOn {
    type Err = String;
    fn from_str(s: &str) -> Result<FailOn, String> {
        match s {
            "regression" => Ok(FailOn::Regression),
            "change" => Ok(FailOn::Change),
            "never" => Ok(FailOn::Never),
            o => Err(format!("--fail-on `{o}`: regression, change or never")),
        }
    }
}

impl RunDiff {
    /// Status regressions and forbidden states newly observed.
    pub fn regressions(&self) -> usize {
        let s = self
            .status_changes
            .iter()
            .filter(|c| c.kind == ChangeKind::Regression && !c.within_spread)
            .count();
        s + self
            .histogram_changes
            .iter()
            .filter(|c| c.regression)
            .count()
    }

    /// Whether nothing changed (the environments aside).
    pub fn is_empty(&self) -> bool {
        self.status_changes.is_empty()
            && self.histogram_changes.is_empty()
            && self.added.is_empty()
            && self.removed.is_empty()
    }

    /// Whether the diff fails under `fail_on`.
    pub fn fails(&self, fail_on: FailOn) -> bool {
        match fail_on {
            FailOn::Regression => self.regressions() > 0,
            FailOn::Change => !self.is_empty(),
            FailOn::Never => false,
        }
    }
}

/// The last record of each trial, keyed without the toolchain when
/// `across` (see [`diff_runs`]).
fn keyed(records: &[TrialRecord], across: bool) -> BTreeMap<TrialId, &TrialRecord> {
    by_trial(records)
        .into_iter()
        .map(|(t, r)| {
            (
                if across {
                    t.without_toolchain()
                } else {
                    t.clone()
                },
                r,
            )
        })
        .collect()
}

/// The last record of each trial.
fn by_trial(records: &[TrialRecord]) -> BTreeMap<&TrialId, &TrialRecord> {
    records.iter().map(|r| (&r.trial, r)).collect()
}

fn side(records: &[TrialRecord]) -> Side {
    let env = records.iter().find_map(|r| r.environment.as_ref());
    let mut commits = BTreeSet::new();
    let mut devices = BTreeSet::new();
    let mut kernels = BTreeSet::new();
    for r in by_trial(records).into_values() {
        if let Some(t) = r.kernels_toolchain() {
            kernels.insert(KernelsToolchain {
                release: t.release.clone(),
                nvcc: t.nvcc.clone(),
                device_runtime: t.device_runtime(),
            });
        }
    }
    for r in records {
        commits.extend(r.commit.clone());
        if let Some(d) = r.environment.as_ref().and_then(|e| e.device.as_ref()) {
            devices.insert(match &d.uuid {
                Some(u) if Some(u) != d.pci_bus_id.as_ref() => format!("{} ({u})", d.label()),
                _ => d.label(),
            });
        }
    }
    Side {
        run_id: records
            .iter()
            .find_map(|r| r.run_id.clone())
            .unwrap_or_default(),
        started: records.iter().find_map(|r| r.run_started.clone()),
        trials: by_trial(records).len(),
        gpu: env.map(|e| e.gpu.clone()),
        sm: env.map(|e| e.sm.clone()),
        driver_version: env.and_then(|e| e.driver_version.clone()),
        driver_api: env.map(|e| e.driver.clone()),
        nvcc: env.and_then(|e| e.nvcc.clone()),
        kernels: kernels.into_iter().collect(),
        devices: devices.into_iter().collect(),
        commits: commits.into_iter().collect(),
        tuning: env.and_then(|e| e.tuning.as_ref()).map(|t| {
            let stress = match (t.stress_words, t.stress_lines) {
                (_, true) => format!("stress on the test's lines x {}", t.stress_iters),
                (0, false) => "no stress".to_string(),
                (w, false) => format!("stress {w} words x {}", t.stress_iters),
            };
            format!(
                "{} instances x {} launches, delay up to {} cycles, {stress}{}, line burst {}, {} extra environment(s)",
                t.instances,
                t.launches,
                t.max_delay_cycles,
                if t.permute { ", permuted" } else { "" },
                t.line_burst,
                t.extra.len()
            )
        }),
    }
}

/// Whether a record is the harness's "an xfail passed" failure.
fn passed_while_listed(r: &TrialRecord) -> bool {
    // Records written before the facts: a listed trial that passed was a
    // fail with this message.
    r.status == Status::Fail && r.message.starts_with("listed as a known failure in")
}

fn status_change(
    base: &TrialRecord,
    new: &TrialRecord,
    spread: Option<&Spread>,
) -> Option<StatusChange> {
    let kind = if base.status == new.status {
        return None;
    } else if new.status == Status::Changed
        || (base.status.severity() == Severity::Known
            && ((new.status.severity() < Severity::NotRun
                && new.status.severity() != Severity::Known)
                || passed_while_listed(new)))
    {
        ChangeKind::KnownChanged
    } else if new.status.is_worse_than(base.status) {
        ChangeKind::Regression
    } else if base.status.is_worse_than(new.status) {
        ChangeKind::Fix
    } else {
        ChangeKind::Changed
    };
    Some(StatusChange {
        trial: new.trial.clone(),
        kind,
        base: base.status,
        new: new.status,
        message: new.message.lines().next().unwrap_or("").to_string(),
        test_changed: base.test_hash.is_some()
            && new.test_hash.is_some()
            && base.recorded_test_name() == new.recorded_test_name()
            && base.test_hash != new.test_hash,
        within_spread: kind == ChangeKind::Regression
            && spread.is_some_and(|s| s.saw_status(&new.trial.to_string(), new.status)),
    })
}

/// The histogram changes of a trial from `b` to NEW's record `nr` (its
/// histogram `n`, its escalation), judged against the spread if given.
fn histogram_changes(
    nr: &TrialRecord,
    b: &HardwareResult,
    n: &HardwareResult,
    spread: Option<&Spread>,
) -> Vec<HistogramChange> {
    let (trial, key) = (&nr.trial, nr.trial.to_string());
    let mut out = Vec::new();
    let change = |kind, state: Option<String>, (bc, nc), z, regression, spread| HistogramChange {
        trial: trial.clone(),
        kind,
        state,
        base_count: bc,
        new_count: nc,
        base_instances: b.instances,
        new_instances: n.instances,
        z,
        regression,
        spread,
    };
    let count = |h: &HardwareResult, s: &gridcheck_spec::State, forbidden: bool| {
        h.rows
            .iter()
            .filter(|r| r.state == *s && (!forbidden || !r.modeled))
            .map(|r| r.count)
            .sum::<u64>()
    };
    for row in n.rows.iter().filter(|r| !r.modeled && r.count > 0) {
        if count(b, &row.state, true) == 0 {
            let counts = (count(b, &row.state, false), row.count);
            let state = Some(crate::spread::state_text(&row.state));
            out.push(change(
                HistogramKind::ForbiddenObserved,
                state,
                counts,
                None,
                true,
                None,
            ));
        }
    }
    if n.instances > 0 {
        for row in b.rows.iter().filter(|r| r.modeled && r.count > 0) {
            if count(n, &row.state, false) == 0 {
                let shown = crate::spread::state_text(&row.state);
                let escalation = nr
                    .escalation
                    .as_ref()
                    .filter(|e| e.showed(&row.state, row.satisfies));
                let (regression, note) =
                    crate::spread::judge_gone(spread, &key, &shown, escalation);
                let counts = (row.count, 0);
                out.push(change(
                    HistogramKind::AllowedGone,
                    Some(shown),
                    counts,
                    None,
                    regression,
                    note,
                ));
            }
        }
    }
    if let Some(z) = two_proportion_z(b.positive, b.instances, n.positive, n.instances) {
        let (p1, p2) = (
            b.positive as f64 / b.instances as f64,
            n.positive as f64 / n.instances as f64,
        );
        let (lo, hi) = (p1.min(p2), p1.max(p2));
        let moved = z.abs() >= RATE_Z && (lo == 0.0 || hi / lo >= RATE_FACTOR);
        let (listed, regression, note) =
            crate::spread::judge_rate(spread, &key, z, moved, (n.positive, n.instances));
        if listed {
            let counts = (b.positive, n.positive);
            out.push(change(
                HistogramKind::RateMoved,
                None,
                counts,
                Some(z),
                regression,
                note,
            ));
        }
    }
    out
}

/// A histogram of nothing, for a trial BASE ran without one.
fn nothing_observed() -> HardwareResult {
    HardwareResult {
        rows: Vec::new(),
        positive: 0,
        negative: 0,
        observation: crate::Observation::Never,
        instances: 0,
        launch_failures: 0,
        first_launch_error: None,
        elapsed_s: 0.0,
        seed: 0,
        stale: Vec::new(),
    }
}

/// What changed from `base` to `new` (each one run's records).
pub fn diff_runs(base: &[TrialRecord], new: &[TrialRecord]) -> RunDiff {
    diff_runs_with(base, new, None)
}

/// [`diff_runs`] judged against the run-to-run spread of NEW's GPU, when
/// a baseline is given (`crate::spread`).
pub fn diff_runs_with(
    base: &[TrialRecord],
    new: &[TrialRecord],
    spread: Option<&Spread>,
) -> RunDiff {
    // Two runs of the machine-code tier under one toolchain each, not the
    // same one (a run and its toolchain variant): its trials are compared
    // by what they check, without the toolchain their ids carry.
    let toolchains = |rs: &[TrialRecord]| -> BTreeSet<String> {
        rs.iter()
            .filter_map(|r| r.trial.toolchain.clone())
            .collect()
    };
    let (tb, tn) = (toolchains(base), toolchains(new));
    let across = tb.len() == 1 && tn.len() == 1 && tb != tn;
    let (b, n) = (keyed(base, across), keyed(new, across));
    let mut d = RunDiff {
        base: side(base),
        new: side(new),
        status_changes: Vec::new(),
        histogram_changes: Vec::new(),
        added: Vec::new(),
        removed: Vec::new(),
        unchanged: 0,
        spread: spread.map(|s| format!("{}, {} runs", s.gpu, s.runs.len())),
    };
    for (key, nr) in &n {
        let trial = &nr.trial;
        let Some(br) = b.get(key) else {
            d.added.push(OneSided {
                trial: trial.clone(),
                status: nr.status,
            });
            continue;
        };
        let s = status_change(br, nr, spread);
        let h = match (&br.hardware, &nr.hardware) {
            (Some(bh), Some(nh)) => histogram_changes(nr, bh, nh, spread),
            (None, Some(nh)) => histogram_changes(nr, &nothing_observed(), nh, spread),
            _ => Vec::new(),
        };
        if s.is_none() && h.is_empty() {
            d.unchanged += 1;
        }
        d.status_changes.extend(s);
        d.histogram_changes.extend(h);
    }
    d.removed = b
        .iter()
        .filter(|(t, _)| !n.contains_key(*t))
        .map(|(_, r)| OneSided {
            trial: r.trial.clone(),
            status: r.status,
        })
        .collect();
    d.status_changes
        .sort_by(|x, y| (x.kind, &x.trial).cmp(&(y.kind, &y.trial)));
    d.histogram_changes
        .sort_by(|x, y| (!x.regression, x.kind, &x.trial).cmp(&(!y.regression, y.kind, &y.trial)));
    d
}

#[cfg(test)]
mod tests;
