//! A GPU's run-to-run spread: from several runs of the suite on one GPU
//! model (the same kernels, environment and driver), per trial, the range
//! of the condition's rate and of each state's rate over the runs, and the
//! statuses seen (`cargo xtask report spread`, committed as
//! `conformance/spread/<gpu-slug>.json`). `report diff` reads the baseline
//! of the NEW run's GPU ([`crate::run_diff::diff_runs_with`]):
//!
//! - a rate change is a regression only beyond the spread: NEW's rate
//!   outside the baseline's range and `|z| >=` [`gridcheck_record::RATE_Z`]
//!   against its nearest end; within it, it is listed and not a regression;
//! - an allowed state no longer seen is a regression only when no baseline
//!   run missed it and NEW's escalation did not provoke it;
//! - a status change to a status the baseline saw for the trial is within
//!   the spread, not a regression.
//!
//! So two runs with identical hardware results give no regression, nor do
//! two runs that differ as the baseline's runs differ among themselves.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::{RunRecords, Status, TrialRecord};

/// Where the committed baselines are, one a GPU (`<gpu-slug>.json`).
pub const SPREAD_DIR: &str = "conformance/spread";

/// The current schema.
pub const SPREAD_SCHEMA: u32 = 1;

/// A GPU's spread, from its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub schema: u32,
    /// The GPU's name, as the records give it.
    pub gpu: String,
    /// The runs it was computed from.
    pub runs: Vec<SpreadRun>,
    /// By trial (`gpu/sm_90/<rule>/<test>`).
    pub trials: BTreeMap<String, TrialSpread>,
}

/// One run of a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpreadRun {
    pub run_id: String,
    /// The file it was read from, as given.
    pub source: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commits: Vec<String>,
}

/// One trial over the runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialSpread {
    /// Each status recorded, with the number of runs.
    pub statuses: BTreeMap<Status, usize>,
    /// Runs with a histogram of at least one instance.
    pub histograms: usize,
    /// The condition's rate: the run with the lowest and the highest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateRange>,
    /// Each state's rate (`name=value; ...`), 0 in a run that missed it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub states: BTreeMap<String, Range>,
}

/// The lowest and highest rate of the condition, each as counted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateRange {
    pub min: Counted,
    pub max: Counted,
}

/// Positive instances of all instances.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Counted {
    pub positive: u64,
    pub instances: u64,
}

impl Counted {
    pub fn rate(self) -> f64 {
        self.positive as f64 / self.instances.max(1) as f64
    }
}

/// A rate's range over the runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Range {
    pub min: f64,
    pub max: f64,
}

/// How a rate change stands against the spread.
#[derive(Debug, Clone, PartialEq)]
pub struct RateCall {
    pub beyond: bool,
    /// The range, for the report (`0.3487 to 0.3508 in 5 runs`).
    pub note: String,
}

impl Spread {
    /// The spread of `runs` (each named by its source), every run of one
    /// GPU; at least two runs.
    pub fn of(runs: &[(String, RunRecords)]) -> Result<Spread, String> {
        if runs.len() < 2 {
            return Err(format!(
                "a spread needs two runs or more of one GPU, not {}",
                runs.len()
            ));
        }
        let gpus: BTreeSet<&str> = runs
            .iter()
            .flat_map(|(_, r)| &r.records)
            .filter_map(|r| r.environment.as_ref().map(|e| e.gpu.as_str()))
            .collect();
        let gpu = match gpus.iter().collect::<Vec<_>>().as_slice() {
            [g] => g.to_string(),
            [] => return Err("no record names a GPU".into()),
            many => return Err(format!("the runs are of several GPUs: {many:?}")),
        };
        let mut trials: BTreeMap<String, TrialSpread> = BTreeMap::new();
        for (_, run) in runs {
            let last: BTreeMap<String, &TrialRecord> = run
                .records
                .iter()
                .map(|r| (r.trial.to_string(), r))
                .collect();
            for (trial, r) in last {
                add_run(trials.entry(trial).or_default(), r);
            }
        }
        Ok(Spread {
            schema: SPREAD_SCHEMA,
            gpu,
            runs: runs
                .iter()
                .map(|(source, r)| SpreadRun {
                    run_id: r.id.clone(),
                    source: source.clone(),
                    commits: r
                        .records
                        .iter()
                        .filter_map(|x| x.commit.clone())
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect(),
                })
                .collect(),
            trials,
        })
    }

    /// A baseline as its file holds it; an error names what is wrong.
    pub fn parse(text: &str) -> Result<Spread, String> {
        let s: Spread = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if s.schema != SPREAD_SCHEMA {
            return Err(format!(
                "schema {}, this build reads {SPREAD_SCHEMA}",
                s.schema
            ));
        }
        Ok(s)
    }

    /// Whether a rate of `positive` in `instances` is beyond the trial's
    /// spread: outside its range and `|z| >=` [`gridcheck_record::RATE_Z`]
    /// against the nearer end. `None` when the baseline has no rate for it.
    pub fn rate_call(&self, trial: &str, positive: u64, instances: u64) -> Option<RateCall> {
        let t = self.trials.get(trial)?;
        let r = t.rate?;
        let p = positive as f64 / instances.max(1) as f64;
        let nearest = if p < r.min.rate() {
            Some(r.min)
        } else if p > r.max.rate() {
            Some(r.max)
        } else {
            None
        };
        let beyond = nearest.is_some_and(|e| {
            gridcheck_record::two_proportion_z(e.positive, e.instances, positive, instances)
                .is_some_and(|z| z.abs() >= gridcheck_record::RATE_Z)
        });
        Some(RateCall {
            beyond,
            note: format!(
                "{:.4} to {:.4} in {} runs",
                r.min.rate(),
                r.max.rate(),
                t.histograms
            ),
        })
    }

    /// Whether some baseline run missed an allowed state of a trial (or
    /// never saw it): `None` when the baseline has no histogram of it.
    pub fn ever_missing(&self, trial: &str, state: &str) -> Option<bool> {
        let t = self.trials.get(trial).filter(|t| t.histograms > 0)?;
        Some(t.states.get(state).is_none_or(|r| r.min == 0.0))
    }

    /// Whether a baseline run recorded the trial with `status`.
    pub fn saw_status(&self, trial: &str, status: Status) -> bool {
        self.trials
            .get(trial)
            .is_some_and(|t| t.statuses.contains_key(&status))
    }
}

/// An allowed state of `trial` that NEW no longer shows, judged against
/// the spread: a regression only when no baseline run missed it and NEW's
/// escalation (`escalation`, when it showed the state) did not provoke it;
/// with why. Without a baseline of the trial: no regression, no note.
pub(crate) fn judge_gone(
    spread: Option<&Spread>,
    trial: &str,
    state: &str,
    escalation: Option<&crate::Escalation>,
) -> (bool, Option<String>) {
    match (
        spread.and_then(|s| s.ever_missing(trial, state)),
        escalation,
    ) {
        (None, _) => (false, None),
        (Some(true), _) => (false, Some("a baseline run missed it too".into())),
        (Some(false), Some(e)) => (
            false,
            Some(format!(
                "no baseline run missed it; NEW's escalation showed it ({})",
                e.provoked_by.as_deref().unwrap_or("in a step's histogram")
            )),
        ),
        (Some(false), None) => (
            true,
            Some("no baseline run missed it, and no escalation of NEW provoked it".into()),
        ),
    }
}

/// A rate change of `trial` (z against BASE; `moved`: beyond the test
/// without a spread, `|z|` and the factor) judged against the spread, NEW
/// at `(positive, instances)`: whether it is listed, whether a regression,
/// and why.
pub(crate) fn judge_rate(
    spread: Option<&Spread>,
    trial: &str,
    z: f64,
    moved: bool,
    (positive, instances): (u64, u64),
) -> (bool, bool, Option<String>) {
    match spread.and_then(|s| s.rate_call(trial, positive, instances)) {
        Some(c) if z.abs() >= gridcheck_record::RATE_Z && c.beyond => {
            (true, true, Some(format!("beyond the spread ({})", c.note)))
        }
        Some(c) => (
            moved,
            false,
            Some(format!("within the spread ({})", c.note)),
        ),
        None => (moved, false, None),
    }
}

/// A state as reports and baselines write it: `name=value; ...`.
pub(crate) fn state_text(state: &gridcheck_spec::State) -> String {
    state
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One run's record of a trial into its spread.
fn add_run(t: &mut TrialSpread, r: &TrialRecord) {
    *t.statuses.entry(r.status).or_default() += 1;
    let Some(h) = r.hardware.as_ref().filter(|h| h.instances > 0) else {
        return;
    };
    let runs_before = t.histograms;
    t.histograms += 1;
    let c = Counted {
        positive: h.positive,
        instances: h.instances,
    };
    t.rate = Some(match t.rate {
        None => RateRange { min: c, max: c },
        Some(r) => RateRange {
            min: if c.rate() < r.min.rate() { c } else { r.min },
            max: if c.rate() > r.max.rate() { c } else { r.max },
        },
    });
    let mut here: BTreeMap<String, f64> = BTreeMap::new();
    for row in &h.rows {
        *here.entry(state_text(&row.state)).or_default() += row.count as f64 / h.instances as f64;
    }
    // States this run missed: rate 0 here.
    for (state, range) in t.states.iter_mut() {
        if !here.contains_key(state) {
            range.min = 0.0;
        }
    }
    for (state, p) in here {
        // A state no earlier run with a histogram saw: 0 there.
        let first = if runs_before > 0 { 0.0 } else { p };
        let range = t
            .states
            .entry(state)
            .or_insert(Range { min: first, max: p });
        range.min = range.min.min(p);
        range.max = range.max.max(p);
    }
}

#[cfg(test)]
mod tests;
