//! Mutation testing's records (`mutants.jsonl`, one line a mutant of a
//! `--mutants` run): a mutant's status, its runs under each environment,
//! and the count of killed out of mutants. The score made of them is
//! `crates/judge`'s `score.rs`.

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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Count {
    pub killed: usize,
    pub mutants: usize,
}

impl Count {
    /// Counts one more mutant, killed or not.
    pub fn add(&mut self, killed: bool) {
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
