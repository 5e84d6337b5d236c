//! The worker side of the model's jobs: both oracles on a litmus test, or
//! on a mutation candidate.

use gridcheck_mutate::Judgement;
use gridcheck_report::ModelSummary;

use crate::job::{JudgeJob, ModelJob, WorkerResult};

/// Both oracles on the job's test.
pub(super) fn explore(j: &ModelJob) -> WorkerResult {
    match gridcheck_oracle::cross_check(&j.litmus) {
        Ok(c) => WorkerResult::Model(model_summary(&j.litmus, c)),
        Err(e) => WorkerResult::Error {
            message: e.to_string(),
        },
    }
}

/// Both oracles judge a candidate: a mutant, or why not.
pub(super) fn judge(j: &JudgeJob) -> WorkerResult {
    match gridcheck_mutate::judge(&j.candidate) {
        Ok(Judgement::Mutant(v)) => WorkerResult::Judged {
            verdict: Some(v),
            reason: String::new(),
        },
        Ok(Judgement::NotAMutant(reason)) => WorkerResult::Judged {
            verdict: None,
            reason,
        },
        Err(message) => WorkerResult::Error { message },
    }
}

/// The record of both oracles' answers (see `gridcheck_oracle`).
fn model_summary(l: &gridcheck_spec::Litmus, c: gridcheck_oracle::CrossCheck) -> ModelSummary {
    use gridcheck_oracle::Agreement;
    let (agreement, only_loom, only_axiomatic) = match &c.agreement {
        Agreement::Same => ("same", Vec::new(), Vec::new()),
        Agreement::LoomOrdersWrites { missing } => {
            ("loom-orders-writes", Vec::new(), missing.clone())
        }
        Agreement::LoomBounded { missing, .. } => ("loom-bounded", Vec::new(), missing.clone()),
        Agreement::Single { .. } => ("single", Vec::new(), Vec::new()),
        Agreement::Conflict {
            only_loom,
            only_axiomatic,
            ..
        } => ("conflict", only_loom.clone(), only_axiomatic.clone()),
    };
    let loom = c.loom.as_ref().and_then(|r| r.as_ref().ok());
    let axiom = c.axiomatic.as_ref().ok();
    ModelSummary {
        verdict: c.verdict,
        expected: l.expect,
        states: c.states.iter().cloned().collect(),
        executions: loom.map(|m| m.executions).unwrap_or(0),
        preemption_bound: loom.and_then(|m| m.preemption_bound),
        elapsed_s: loom.map(|m| m.elapsed.as_secs_f64()).unwrap_or(0.0)
            + axiom.map(|a| a.elapsed.as_secs_f64()).unwrap_or(0.0),
        oracles: Some(gridcheck_report::Oracles {
            decided_by: c.decided_by.as_str().into(),
            agreement: agreement.into(),
            note: c.agreement.to_string(),
            loom_verdict: loom.map(|m| m.verdict),
            loom_error: c
                .loom
                .as_ref()
                .and_then(|r| r.as_ref().err().map(|e| e.to_string())),
            axiomatic_verdict: axiom.map(|a| a.verdict),
            axiomatic_error: c.axiomatic.as_ref().err().map(|e| e.to_string()),
            candidates: axiom.map(|a| a.candidates).unwrap_or(0),
            only_loom,
            only_axiomatic,
            load_buffering_verdict: c.load_buffering_verdict,
        }),
    }
}
