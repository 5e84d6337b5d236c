//! Both oracles on one litmus test, and what their difference means.
//!
//! The suite has two independent constructions of the guide's semantics:
//! the loom model (`crates/model`, operational: every interleaving of the
//! modeled threads) and the axiomatic model (`crates/axiom`, herd-style:
//! every candidate execution the axioms keep). [`cross_check`] runs both and
//! decides who gives the verdict:
//!
//! - **Same states**: both agree; the verdict is theirs.
//! - **The guide allows more than loom reaches, exactly as predicted**: loom
//!   orders each location's writes by when they ran, so where a step that
//!   synchronizes nothing (a PDL trigger, the block's stream order, a pool
//!   slot) orders two writes in time, loom never lets the earlier one win.
//!   The axiomatic model computes that restriction too
//!   (`Options::loom()`): when loom's states are exactly the restricted set,
//!   the difference is this pinned limit, and the axiomatic model (the
//!   guide's set) decides.
//! - **One oracle cannot run the test** (more threads than loom explores, or
//!   beyond the axiomatic model's enumeration bound,
//!   `gridcheck_axiom::ErrorKind::BoundExceeded`): the other decides
//!   alone, and the result says so. Any other failure of one oracle (a
//!   deadlock, a construct it does not define, loom's branch limit) is a
//!   conflict; both failing is an [`OracleError`]. The errors' kinds decide,
//!   never their text.
//! - **Anything else is a conflict**: one of the two is wrong, the verdict
//!   cannot be trusted, and the harness reports `oracle-conflict` with both
//!   state sets.
//!
//! A test of more threads than loom explores (kernels of several blocks make
//! them quickly; each bulk copy of the asynchronous proxy counts as a thread,
//! `gridcheck_model::loom_agents`) is not given to loom at all: the
//! axiomatic model decides alone, and the agreement says so (`single`).
//!
//! A bounded loom exploration (a preemption bound) can miss states: when its
//! states are a subset of the restricted set, the axiomatic model decides and
//! the result names the bound.

use std::collections::BTreeSet;
use std::fmt;

use gridcheck_axiom::{
    AxiomError, AxiomOutcome, ErrorKind as AxiomErrorKind, Options as AxiomOptions,
};
use gridcheck_model::{MAX_GPU_THREADS, ModelError, ModelOutcome};
use gridcheck_spec::{Litmus, State, Verdict};

/// Which oracle gave the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecidedBy {
    Both,
    Axiomatic,
    Loom,
}

impl DecidedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            DecidedBy::Both => "both",
            DecidedBy::Axiomatic => "axiomatic",
            DecidedBy::Loom => "loom",
        }
    }
}

/// How the two oracles' answers relate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agreement {
    Same,
    /// The pinned limit: loom orders writes by when they ran. `missing`: the
    /// guide's states loom cannot reach.
    LoomOrdersWrites {
        missing: Vec<State>,
    },
    /// loom explored with a preemption bound and reached a subset.
    LoomBounded {
        bound: usize,
        missing: Vec<State>,
    },
    /// Only one oracle ran.
    Single {
        reason: String,
    },
    /// Unexplained: one of the oracles is wrong.
    Conflict {
        only_loom: Vec<State>,
        only_axiomatic: Vec<State>,
        detail: String,
    },
}

/// The outcome of both oracles on one test.
#[derive(Debug, Clone)]
pub struct CrossCheck {
    pub verdict: Verdict,
    pub states: BTreeSet<State>,
    pub decided_by: DecidedBy,
    pub agreement: Agreement,
    /// loom's answer; `None` when it did not run (more threads than it
    /// explores).
    pub loom: Option<Result<ModelOutcome, ModelError>>,
    pub axiomatic: Result<AxiomOutcome, AxiomError>,
    /// The verdict with load buffering allowed (the PTX memory model's
    /// answer), when it differs from `verdict`.
    pub load_buffering_verdict: Option<Verdict>,
}

impl CrossCheck {
    pub fn is_conflict(&self) -> bool {
        matches!(self.agreement, Agreement::Conflict { .. })
    }
}

impl fmt::Display for Agreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Agreement::Same => f.write_str("both oracles reach the same states"),
            Agreement::LoomOrdersWrites { missing } => write!(
                f,
                "the axiomatic model decides: {} state(s) the guide allows are beyond loom, which \
                 orders each location's writes by when they ran (a pinned limit; loom reaches \
                 exactly the axiomatic model's states under that restriction)",
                missing.len()
            ),
            Agreement::LoomBounded { bound, missing } => write!(
                f,
                "the axiomatic model decides: loom explored with preemption bound {bound} and \
                 missed {} state(s)",
                missing.len()
            ),
            Agreement::Single { reason } => f.write_str(reason),
            Agreement::Conflict { detail, .. } => write!(f, "oracle conflict: {detail}"),
        }
    }
}

fn diff(a: &BTreeSet<State>, b: &BTreeSet<State>) -> Vec<State> {
    a.difference(b).cloned().collect()
}

/// Why neither oracle gave an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OracleError {
    /// loom's failure; `None` when loom did not run (more threads than it
    /// explores).
    pub loom: Option<ModelError>,
    pub axiomatic: AxiomError,
}

impl fmt::Display for OracleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.loom {
            None => write!(f, "the axiomatic model failed: {}", self.axiomatic),
            Some(m) => write!(f, "loom: {m}; the axiomatic model: {}", self.axiomatic),
        }
    }
}

impl std::error::Error for OracleError {}

/// Runs both oracles on `l`, loom with its default exploration. `Err` when
/// neither gives an answer (both report the same kind of failure, e.g. a
/// deadlock).
pub fn cross_check(l: &Litmus) -> Result<CrossCheck, OracleError> {
    cross_check_with(l, &gridcheck_model::Options::default())
}

/// [`cross_check`] with loom's exploration options (a smaller budget for
/// random programs: a bounded exploration is classified as such).
pub fn cross_check_with(
    l: &Litmus,
    loom_options: &gridcheck_model::Options,
) -> Result<CrossCheck, OracleError> {
    let axiomatic = gridcheck_axiom::check(l);
    let agents = gridcheck_model::loom_agents(l);
    let loom = (agents <= MAX_GPU_THREADS).then(|| gridcheck_model::check_with(l, loom_options));
    let load_buffering_verdict = match &axiomatic {
        Ok(a) => {
            let lb = AxiomOptions {
                load_buffering: true,
                ..AxiomOptions::default()
            };
            gridcheck_axiom::check_with(l, &lb)
                .ok()
                .map(|o| o.verdict)
                .filter(|v| *v != a.verdict)
        }
        Err(_) => None,
    };
    let restricted = || {
        gridcheck_axiom::check_with(l, &AxiomOptions::loom())
            .map(|o| o.states)
            .unwrap_or_default()
    };
    let Decision {
        verdict,
        states,
        decided_by,
        agreement,
    } = decide(
        (l.thread_count(), l.bulk_copies()),
        loom.as_ref(),
        &axiomatic,
        restricted,
    )?;
    Ok(CrossCheck {
        verdict,
        states,
        decided_by,
        agreement,
        loom,
        axiomatic,
        load_buffering_verdict,
    })
}

/// Who gives the verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Decision {
    verdict: Verdict,
    states: BTreeSet<State>,
    decided_by: DecidedBy,
    agreement: Agreement,
}

impl Decision {
    fn new(verdict: Verdict, states: &BTreeSet<State>, by: DecidedBy, a: Agreement) -> Decision {
        Decision {
            verdict,
            states: states.clone(),
            decided_by: by,
            agreement: a,
        }
    }
}

/// The decision over both oracles' answers (see the crate docs): `agents`,
/// the test's threads and bulk copies (see `gridcheck_model::loom_agents`);
/// `loom`, `None` when loom did not run; `restricted`, the
/// axiomatic model's states under loom's write order, computed only when
/// the two state sets differ. Decided by the errors' kinds, never by their
/// text: only an axiomatic enumeration past its bound lets loom decide
/// alone.
fn decide(
    (threads, copies): (usize, usize),
    loom: Option<&Result<ModelOutcome, ModelError>>,
    axiomatic: &Result<AxiomOutcome, AxiomError>,
    restricted: impl FnOnce() -> BTreeSet<State>,
) -> Result<Decision, OracleError> {
    use DecidedBy::{Axiomatic, Loom};
    Ok(match (loom, axiomatic) {
        (None, Ok(a)) => Decision::new(
            a.verdict,
            &a.states,
            Axiomatic,
            Agreement::Single {
                reason: format!(
                    "the axiomatic model decides alone: {threads} threads{}, beyond loom's \
                     reach (it explores at most {MAX_GPU_THREADS})",
                    if copies > 0 {
                        format!(" and {copies} bulk copies")
                    } else {
                        String::new()
                    }
                ),
            },
        ),
        (None, Err(e)) => {
            return Err(OracleError {
                loom: None,
                axiomatic: e.clone(),
            });
        }
        (Some(Ok(m)), Ok(a)) => both_answered(m, a, restricted),
        (Some(Ok(m)), Err(e)) if e.kind == AxiomErrorKind::BoundExceeded => Decision::new(
            m.verdict,
            &m.states,
            Loom,
            Agreement::Single {
                reason: format!("loom decides alone: the axiomatic model gave up ({e})"),
            },
        ),
        (Some(Ok(m)), Err(e)) => Decision::new(
            m.verdict,
            &m.states,
            Loom,
            Agreement::Conflict {
                only_loom: m.states.iter().cloned().collect(),
                only_axiomatic: Vec::new(),
                detail: format!("loom says {}, the axiomatic model fails: {e}", m.verdict),
            },
        ),
        (Some(Err(e)), Ok(a)) => Decision::new(
            a.verdict,
            &a.states,
            Axiomatic,
            Agreement::Conflict {
                only_loom: Vec::new(),
                only_axiomatic: a.states.iter().cloned().collect(),
                detail: format!("the axiomatic model says {}, loom fails: {e}", a.verdict),
            },
        ),
        (Some(Err(m)), Err(a)) => {
            return Err(OracleError {
                loom: Some(m.clone()),
                axiomatic: a.clone(),
            });
        }
    })
}

/// Both oracles answered: the same states, a pinned limit, or a conflict.
fn both_answered(
    m: &ModelOutcome,
    a: &AxiomOutcome,
    restricted: impl FnOnce() -> BTreeSet<State>,
) -> Decision {
    if m.states == a.states {
        return Decision::new(a.verdict, &a.states, DecidedBy::Both, Agreement::Same);
    }
    let restricted = restricted();
    let agreement = match m.preemption_bound {
        None if m.states == restricted && m.states.is_subset(&a.states) => {
            Agreement::LoomOrdersWrites {
                missing: diff(&a.states, &m.states),
            }
        }
        Some(bound) if m.states.is_subset(&restricted) => Agreement::LoomBounded {
            bound,
            missing: diff(&a.states, &m.states),
        },
        _ => Agreement::Conflict {
            only_loom: diff(&m.states, &a.states),
            only_axiomatic: diff(&a.states, &m.states),
            detail: format!(
                "loom reaches {} states, the axiomatic model {} ({} under loom's write order); \
                 loom says {}, the axiomatic model {}",
                m.states.len(),
                a.states.len(),
                restricted.len(),
                m.verdict,
                a.verdict
            ),
        },
    };
    Decision::new(a.verdict, &a.states, DecidedBy::Axiomatic, agreement)
}

#[cfg(test)]
mod tests;
