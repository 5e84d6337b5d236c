//! Which candidates are mutants: both oracles (`gridcheck_oracle`) must
//! reach a state the original test's verdict rules out. A candidate whose
//! verdict does not change is not a mutant (the guarantee the operator
//! removed is not what the test rests on), and one the oracles disagree on
//! is not judged.

use gridcheck_oracle::{Agreement, CrossCheck};
use gridcheck_spec::{State, Verdict};
use serde::{Deserialize, Serialize};

use crate::candidates::{Candidate, kills};

/// The oracles' answer on a mutant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MutantVerdict {
    /// The mutant's verdict on the original condition.
    pub verdict: Verdict,
    /// Which oracle decided and how they agreed (`gridcheck_oracle`'s words).
    pub decided_by: String,
    pub agreement: String,
    /// The reachable final states of the mutant that kill it.
    pub kill_states: Vec<State>,
    /// Reachable final states of the mutant, in all.
    pub states: usize,
}

/// What the oracles make of a candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    Mutant(MutantVerdict),
    /// Not a mutant, with why.
    NotAMutant(String),
}

/// Judges a candidate by both oracles (see the module docs).
pub fn judge(c: &Candidate) -> Result<Judgement, String> {
    let check = gridcheck_oracle::cross_check(&c.litmus).map_err(|e| e.to_string())?;
    judge_check(c, &check)
}

fn judge_check(c: &Candidate, check: &CrossCheck) -> Result<Judgement, String> {
    if let Agreement::Conflict { .. } = check.agreement {
        return Ok(Judgement::NotAMutant(format!(
            "the oracles disagree on it: {}",
            check.agreement
        )));
    }
    let mut kill_states = Vec::new();
    for s in &check.states {
        if kills(c.original, &c.litmus.condition, s)? {
            kill_states.push(s.clone());
        }
    }
    if kill_states.is_empty() {
        return Ok(Judgement::NotAMutant(format!(
            "the oracles still say {} ({} reachable states, none contradicts the original verdict): \
             the test does not rest on what the operator removed there",
            check.verdict,
            check.states.len()
        )));
    }
    Ok(Judgement::Mutant(MutantVerdict {
        verdict: check.verdict,
        decided_by: check.decided_by.as_str().to_string(),
        agreement: check.agreement.to_string(),
        kill_states,
        states: check.states.len(),
    }))
}
