//! gridcheck's reference model built without loom: the very modules of
//! `gridcheck-model` (`crates/model/src`, included with `#[path]`), compiled
//! against this crate's [`sync`] instead of loom's, so that they run on std
//! threads and atomics with randomized yields and spins at every
//! synchronization point.
//!
//! [`sample`] runs a litmus test many times on real threads and counts the
//! final states. The property tests (`tests/std_threads.rs`) check that every
//! state sampled here is one the loom model reaches (and so that no state the
//! spec forbids shows up): a model that depended on loom's scheduler, or on
//! a synchronization loom models more strongly than the hardware's memory
//! does, would show states outside that set. std atomics on this machine
//! (x86-64: TSO) show fewer weak behaviours than loom explores, so sampling
//! checks soundness of the model's edges, not completeness of its states.

use std::collections::BTreeMap;
use std::sync::Arc;

use gridcheck_spec::{Litmus, State};

pub use gridcheck_model::{ErrorKind, ModelError};

#[path = "../../model/src/block.rs"]
mod block;
#[path = "../../model/src/bulk.rs"]
mod bulk;
#[path = "../../model/src/cdp1.rs"]
mod cdp1;
#[path = "../../model/src/compile.rs"]
mod compile;
#[path = "../../model/src/completion.rs"]
mod completion;
/// The model's own error types (one type for both builds), where the
/// shared sources look for them (`crate::error`).
mod error {
    pub use gridcheck_model::{ErrorKind, ModelError};
}
#[path = "../../model/src/grid.rs"]
mod grid;
#[path = "../../model/src/latch.rs"]
mod latch;
#[path = "../../model/src/memory.rs"]
mod memory;
#[path = "../../model/src/names.rs"]
mod names;
#[path = "../../model/src/pdl.rs"]
mod pdl;
#[path = "../../model/src/program.rs"]
mod program;
// `MAX_NESTING_DEPTH` is part of the loom crate's API only.
#[allow(dead_code)]
#[path = "../../model/src/resources.rs"]
mod resources;
#[path = "../../model/src/run.rs"]
mod run;
#[path = "../../model/src/slots.rs"]
mod slots;
#[path = "../../model/src/stream.rs"]
mod stream;
mod sync;
#[path = "../../model/src/thread.rs"]
mod thread;
#[path = "../../model/src/world.rs"]
mod world;

/// Runs `litmus` on std threads until `executions` executions gave a final
/// state, with the scheduling perturbations seeded by `seed`, and counts
/// each final state.
///
/// The test must be one the loom model accepts without error: a test that
/// deadlocks under loom would block forever here.
pub fn sample(
    litmus: &Litmus,
    executions: u64,
    seed: u64,
) -> Result<BTreeMap<State, u64>, ModelError> {
    let program = Arc::new(compile::compile(litmus)?);
    sync::seed(seed);
    let mut out = BTreeMap::new();
    // Each way the bulk copies' reads may take their values, in turn (see
    // the model's `memory.rs`, "The asynchronous proxy"); an execution in
    // which that way does not apply gives no state and is not counted (the
    // first way, loom's own load, always applies).
    let reads = program.async_reads();
    let (mut done, mut i) = (0, 0);
    while done < executions {
        // Real threads on coherent hardware never break coherence: an
        // execution the model's views call incoherent is a bug in the views
        // (see the model's `memory.rs`).
        match run::execute(&program, &reads[i % reads.len()]) {
            run::Outcome::State(state) => {
                *out.entry(state).or_default() += 1;
                done += 1;
            }
            run::Outcome::Vacuous => {}
            run::Outcome::Incoherent => {
                return Err(ModelError {
                    kind: ErrorKind::Failed,
                    message: "a load on std threads returned a store its thread's coherence \
                              view had passed: the model's views follow an edge that is not \
                              happens-before"
                        .into(),
                });
            }
        }
        i += 1;
    }
    Ok(out)
}
