//! Each synchronization edge of the model matters: hand-built litmus tests
//! that pass with the edge and would fail without it, and the ways a test can
//! be unrunnable. One module a concept of the model: `launch` (visibility at
//! a launch, `__syncthreads()`), `streams` (NULL, tail and fire-and-forget
//! streams, events, the host stream), `pdl`, `cdp1` (`devicesync`) and
//! `errors` (unrunnable tests, what an outcome reports).

#[path = "../common/mod.rs"]
mod common;

mod bulk;
mod cdp1;
mod errors;
mod launch;
mod pdl;
mod streams;

use gridcheck_model::{ModelError, ModelOutcome, check, check_with};
use gridcheck_spec::{Litmus, render_state};

use common::{K, litmus, options};

fn run(l: &Litmus) -> ModelOutcome {
    let o = check_with(l, &options()).unwrap_or_else(|e| panic!("model error: {e}"));
    let order = l.observables();
    let states: Vec<String> = o.states.iter().map(|s| render_state(&order, s)).collect();
    eprintln!(
        "{} threads: {} executions (bound {:?}, {} abandoned) in {:?}, {} states",
        l.thread_count(),
        o.executions,
        o.preemption_bound,
        o.abandoned_executions,
        o.elapsed,
        states.len()
    );
    assert_eq!(
        o.verdict, l.expect,
        "condition {} over states {states:#?}",
        l.condition
    );
    o
}

fn expect(
    profile: &str,
    memory: &str,
    kernels: &[K<'_>],
    condition: &str,
    verdict: &str,
) -> ModelOutcome {
    run(&litmus(profile, memory, kernels, condition, verdict))
}

fn error(profile: &str, memory: &str, kernels: &[K<'_>]) -> ModelError {
    let l = litmus(profile, memory, kernels, "exists x == 0", "allowed");
    match check(&l) {
        Err(e) => e,
        Ok(o) => panic!("expected a model error, got {:?}", o.states),
    }
}
