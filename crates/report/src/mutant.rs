//! Mutation testing's records (`mutants.jsonl`, one line a mutant of a
//! `--mutants` run) and the mutation score computed from them: overall, per
//! operator and per test. A mutant is killed when the GPU showed an outcome
//! its original test's verdict rules out; only mutants count (candidates
//! the oracles say are not mutants are recorded with why, and left out).

use std::collections::BTreeMap;

use gridcheck_spec::{State, Verdict};
use serde::{Deserialize, Serialize};

use crate::Environment;

/// What became of a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MutantStatus {
    /// The GPU showed an outcome the original verdict rules out.
    Killed,
    /// It did not, within the budget.
    Survived,
    /// The oracles say the candidate is not a mutant (its verdict did not
    /// change, or they disagree).
    NotAMutant,
    /// A mutant that did not run on the GPU (no GPU, no cubin, ...).
    NotRun,
    /// The oracles or the GPU run failed, timed out or crashed.
    Error,
}

impl MutantStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MutantStatus::Killed => "killed",
            MutantStatus::Survived => "survived",
            MutantStatus::NotAMutant => "not-a-mutant",
            MutantStatus::NotRun => "not-run",
            MutantStatus::Error => "error",
        }
    }
}

/// One GPU run of a mutant in one testing environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MutantRun {
    /// The environment's name (`tuned`, or a search point's).
    pub environment: String,
    pub histogram: Vec<(State, u64)>,
    pub instances: u64,
    /// Instances whose outcome kills the mutant.
    pub kills: u64,
    pub launch_failures: u64,
    pub first_launch_error: Option<String>,
    /// GPU time: the launches, without module loads and allocations.
    pub gpu_s: f64,
    /// The GPU time spent until the first killing outcome was read back.
    pub time_to_kill_s: Option<f64>,
    /// The whole run, module loads and allocations included.
    pub wall_s: f64,
}

/// One line of `mutants.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MutantRecord {
    /// `<test>~<operator>[-k]`.
    pub mutant: String,
    pub test: String,
    pub operator: String,
    pub site: String,
    /// The original test's verdict, which a kill contradicts.
    pub original: Verdict,
    pub status: MutantStatus,
    pub message: String,
    /// The mutant's verdict by the oracles, who decided, and the reachable
    /// states that kill it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    #[serde(default)]
    pub decided_by: String,
    #[serde(default)]
    pub kill_states: Vec<State>,
    /// The GPU runs (one, or one per environment of a search).
    #[serde(default)]
    pub runs: Vec<MutantRun>,
    /// GPU seconds each run could spend at most.
    #[serde(default)]
    pub budget_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
    pub commit: Option<String>,
}

/// Killed out of mutants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    pub killed: usize,
    pub mutants: usize,
}

impl Count {
    fn add(&mut self, killed: bool) {
        self.mutants += 1;
        self.killed += usize::from(killed);
    }

    /// The score in percent (0 when there are no mutants).
    pub fn percent(self) -> f64 {
        if self.mutants == 0 {
            0.0
        } else {
            100.0 * self.killed as f64 / self.mutants as f64
        }
    }
}

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} ({:.1} %)",
            self.killed,
            self.mutants,
            self.percent()
        )
    }
}

/// The mutation score of a set of records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Score {
    /// Killed or survived: mutants that ran.
    pub overall: Count,
    pub per_operator: BTreeMap<String, Count>,
    pub per_test: BTreeMap<String, Count>,
    /// Mutants that did not run or failed (not in the score), by status.
    pub left_out: BTreeMap<&'static str, usize>,
    /// Candidates that are not mutants.
    pub not_mutants: usize,
    /// The slowest time to kill among the killed, in GPU seconds.
    pub slowest_kill_s: f64,
    /// GPU seconds of every run.
    pub gpu_s: f64,
}

impl Score {
    /// The score of the records (the last record of a mutant counts, so a
    /// resumed or repeated run is counted once).
    pub fn of(records: &[MutantRecord]) -> Score {
        let mut last: BTreeMap<&str, &MutantRecord> = BTreeMap::new();
        for r in records {
            last.insert(&r.mutant, r);
        }
        let mut s = Score::default();
        for r in last.values() {
            s.gpu_s += r.runs.iter().map(|x| x.gpu_s).sum::<f64>();
            let killed = match r.status {
                MutantStatus::Killed => true,
                MutantStatus::Survived => false,
                MutantStatus::NotAMutant => {
                    s.not_mutants += 1;
                    continue;
                }
                other => {
                    *s.left_out.entry(other.as_str()).or_default() += 1;
                    continue;
                }
            };
            if killed {
                let t = r
                    .runs
                    .iter()
                    .filter_map(|x| x.time_to_kill_s)
                    .fold(0.0, f64::max);
                s.slowest_kill_s = s.slowest_kill_s.max(t);
            }
            s.overall.add(killed);
            s.per_operator
                .entry(r.operator.clone())
                .or_default()
                .add(killed);
            s.per_test.entry(r.test.clone()).or_default().add(killed);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(mutant: &str, op: &str, status: MutantStatus, ttk: Option<f64>) -> MutantRecord {
        MutantRecord {
            mutant: mutant.into(),
            test: mutant.split('~').next().unwrap_or_default().into(),
            operator: op.into(),
            site: String::new(),
            original: Verdict::Forbidden,
            status,
            message: String::new(),
            verdict: Some(Verdict::Allowed),
            decided_by: "both".into(),
            kill_states: Vec::new(),
            runs: vec![MutantRun {
                environment: "tuned".into(),
                histogram: Vec::new(),
                instances: 10,
                kills: u64::from(ttk.is_some()),
                launch_failures: 0,
                first_launch_error: None,
                gpu_s: 0.5,
                time_to_kill_s: ttk,
                wall_s: 0.6,
            }],
            budget_s: 1.0,
            environment: None,
            commit: None,
        }
    }

    #[test]
    fn the_score_counts_mutants_once_by_their_last_record() {
        let records = vec![
            rec("a~x", "x", MutantStatus::Survived, None),
            rec("a~x", "x", MutantStatus::Killed, Some(0.25)),
            rec("a~y", "y", MutantStatus::Survived, None),
            rec("b~x", "x", MutantStatus::Killed, Some(0.5)),
            rec("b~z", "z", MutantStatus::NotAMutant, None),
            rec("c~x", "x", MutantStatus::NotRun, None),
        ];
        let s = Score::of(&records);
        assert_eq!(
            s.overall,
            Count {
                killed: 2,
                mutants: 3
            }
        );
        assert_eq!(
            s.per_operator["x"],
            Count {
                killed: 2,
                mutants: 2
            }
        );
        assert_eq!(
            s.per_operator["y"],
            Count {
                killed: 0,
                mutants: 1
            }
        );
        assert_eq!(
            s.per_test["a"],
            Count {
                killed: 1,
                mutants: 2
            }
        );
        assert_eq!(s.not_mutants, 1);
        assert_eq!(s.left_out["not-run"], 1);
        assert_eq!(s.slowest_kill_s, 0.5);
        assert!((s.overall.percent() - 66.666).abs() < 0.01);
    }

    #[test]
    fn records_round_trip_as_json_lines() {
        let r = rec("a~x", "x", MutantStatus::Killed, Some(0.1));
        let line = serde_json::to_string(&r).expect("serializes");
        assert!(line.contains("\"status\":\"killed\""), "{line}");
        let back: MutantRecord = serde_json::from_str(&line).expect("parses");
        assert_eq!(back, r);
    }
}
