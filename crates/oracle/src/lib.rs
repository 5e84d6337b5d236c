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
//!   beyond the axiomatic model's enumeration bound): the other decides
//!   alone, and the result says so.
//! - **Anything else is a conflict**: one of the two is wrong, the verdict
//!   cannot be trusted, and the harness reports `oracle-conflict` with both
//!   state sets.
//!
//! A test of more threads than loom explores (kernels of several blocks make
//! them quickly) is not given to loom at all: the axiomatic model decides
//! alone, and the agreement says so (`single`).
//!
//! A bounded loom exploration (a preemption bound) can miss states: when its
//! states are a subset of the restricted set, the axiomatic model decides and
//! the result names the bound.

use std::collections::BTreeSet;
use std::fmt;

use gridcheck_axiom::{AxiomOutcome, Options as AxiomOptions};
use gridcheck_model::{MAX_GPU_THREADS, ModelOutcome};
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
    pub loom: Option<Result<ModelOutcome, String>>,
    pub axiomatic: Result<AxiomOutcome, String>,
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

fn too_large(e: &str) -> bool {
    e.contains("more than") || e.contains("exceed")
}

/// Runs both oracles on `l`, loom with its default exploration. `Err` when
/// neither gives an answer (both report the same kind of failure, e.g. a
/// deadlock).
pub fn cross_check(l: &Litmus) -> Result<CrossCheck, String> {
    cross_check_with(l, &gridcheck_model::Options::default())
}

/// [`cross_check`] with loom's exploration options (a smaller budget for
/// random programs: a bounded exploration is classified as such).
pub fn cross_check_with(
    l: &Litmus,
    loom_options: &gridcheck_model::Options,
) -> Result<CrossCheck, String> {
    let axiomatic = gridcheck_axiom::check(l).map_err(|e| e.to_string());
    let loom = (l.thread_count() <= MAX_GPU_THREADS)
        .then(|| gridcheck_model::check_with(l, loom_options).map_err(|e| e.to_string()));
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
    let (verdict, states, decided_by, agreement) = match (&loom, &axiomatic) {
        (None, Ok(a)) => (
            a.verdict,
            a.states.clone(),
            DecidedBy::Axiomatic,
            Agreement::Single {
                reason: format!(
                    "the axiomatic model decides alone: {} threads, beyond loom's reach (it \
                     explores at most {MAX_GPU_THREADS})",
                    l.thread_count()
                ),
            },
        ),
        (None, Err(e)) => return Err(format!("the axiomatic model failed: {e}")),
        (Some(Ok(m)), Ok(a)) => {
            let agreement = if m.states == a.states {
                Agreement::Same
            } else {
                let restricted = gridcheck_axiom::check_with(l, &AxiomOptions::loom())
                    .map(|o| o.states)
                    .unwrap_or_default();
                match m.preemption_bound {
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
                            "loom reaches {} states, the axiomatic model {} ({} under loom's \
                             write order); loom says {}, the axiomatic model {}",
                            m.states.len(),
                            a.states.len(),
                            restricted.len(),
                            m.verdict,
                            a.verdict
                        ),
                    },
                }
            };
            let decided_by = if agreement == Agreement::Same {
                DecidedBy::Both
            } else {
                DecidedBy::Axiomatic
            };
            (a.verdict, a.states.clone(), decided_by, agreement)
        }
        (Some(Ok(m)), Err(e)) if too_large(e) => (
            m.verdict,
            m.states.clone(),
            DecidedBy::Loom,
            Agreement::Single {
                reason: format!("loom decides alone: the axiomatic model gave up ({e})"),
            },
        ),
        (Some(Ok(m)), Err(e)) => (
            m.verdict,
            m.states.clone(),
            DecidedBy::Loom,
            Agreement::Conflict {
                only_loom: m.states.iter().cloned().collect(),
                only_axiomatic: Vec::new(),
                detail: format!("loom says {}, the axiomatic model fails: {e}", m.verdict),
            },
        ),
        (Some(Err(e)), Ok(a)) => (
            a.verdict,
            a.states.clone(),
            DecidedBy::Axiomatic,
            Agreement::Conflict {
                only_loom: Vec::new(),
                only_axiomatic: a.states.iter().cloned().collect(),
                detail: format!("the axiomatic model says {}, loom fails: {e}", a.verdict),
            },
        ),
        (Some(Err(m)), Err(a)) => {
            return Err(format!("loom: {m}; the axiomatic model: {a}"));
        }
    };
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
