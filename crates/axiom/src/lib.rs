//! gridcheck's second oracle: an axiomatic semantics of the guide's launch
//! rules, in the style of herd7.
//!
//! [`check`] reads the same [`Litmus`] test as the loom model
//! (`crates/model`), enumerates every candidate execution (control
//! choices, reads-from and per-location coherence order), keeps those the
//! axioms allow, and returns the full set of reachable final states with
//! the verdict of the test's condition. It shares no code with the loom
//! model beyond the spec's types: two independent constructions of the same
//! semantics, cross-checked on every test by the conformance harness.
//!
//! # Events
//!
//! Every thread has a start event, one event per operation (store, load,
//! barrier, launch, record, wait, trigger, gridsync, devicesync, error
//! query, the asynchronous proxy's) and an exit event. Each bulk copy has
//! a read, a write and a completion event (`bulk.rs`), each mbarrier one
//! for its phase's completion; a shared location is a memory cell per
//! block that uses it. A tile (`gridcheck_spec::tile`) is a cell per
//! representative word of each of its segments (`bulk.rs`): a store or
//! load of a tile's range is one event a cell, a bulk copy of one a read
//! and a write event a word (every read, then every write, then its
//! completion), and a tile register's segment observes the set of values
//! its loads took. Each kernel has a *done* event (the threads of
//! all its blocks exited and its non-tail work finished) and a *finished*
//! event (done, and its tail grids finished); each block of its grid (one,
//! or several for `bM.tN` threads) has an *all exited* event (the block's
//! part of the implicit PDL trigger) and one event per `__syncthreads()`.
//! Event 0 is the initial write of every location.
//!
//! # Relations (`relations.rs`, one per guide sentence)
//!
//! | relation | guide | edge |
//! |---|---|---|
//! | `po` | program order | a thread's events in order |
//! | `launch` | 000 §4.18.3.1 "All global memory operations in the parent thread prior to the child grid's invocation are visible to the child grid." | launch → every start of the child |
//! | `barrier` | 000 §4.18.2.4, the `__syncthreads()` example | each thread's n-th barrier → its block's barrier event → next event |
//! | `completion` | 000 §4.18.2.1 "the parent grid is not considered complete until all child grids created by its threads have completed" | exits and non-tail children → done → finished; tail children → finished |
//! | `tail` | 000 §4.18.3.1, the `cudaStreamTailLaunch` stream | parent done → tail grid's starts |
//! | `stream` | 000 §4.18.2.3 "kernels launched into the same stream execute in-order, and events may be used to create dependencies between streams" | predecessors finished → starts |
//! | `host-stream` | host stream order | predecessor (with its PDL chain) finished → starts |
//! | `gridsync` | 004 §4.5.2 "Will block until all primary kernels the secondary kernel is dependent on have completed and flushed results to global memory" | primary finished → gridsync |
//! | `devicesync` | 001 "will synchronize on all work launched by any thread in the thread-block up to the point where `cudaDeviceSynchronize()` was called" | launched grids finished → devicesync |
//! | `copy` | PTX ISA 8.9.1.1 "These asynchronous operations are ordered after prior instructions in the same thread ..., but they are not part of the program order for that thread." | issue → copy's read → its write → its completion → its grid's done; a bulk load's issue and completion → its mbarrier's phase |
//! | `mbarrier` (a wait) | PTX ISA 9.7.9.25.1.2 "When the current phase of the *mbarrier object* is complete, it implies that all asynchronous operations tracked by this phase are complete" | phase → every `mbarwait` on it |
//! | `bulk-group` (a wait) | PTX ISA 9.7.9.27.2.2 `cp.async.bulk.wait_group` | each copy of the awaited groups (its read, with `.read`) → `bulkwait` |
//! | `pdl-start` (execution order only) | 004 §4.5.2 "The CUDA driver can launch the secondary kernel when all primary thread blocks have launched and executed `cudaTriggerProgrammaticLaunchCompletion`. If the primary kernel doesn't execute the trigger, it implicitly occurs after all thread blocks in the primary kernel exit." | for every primary block, its trigger (or, without one, all its exits) → secondary's starts |
//!
//! `hb` is the transitive closure of every relation but `pdl-start`: the
//! trigger lets the secondary start and makes nothing visible ("the
//! secondary thread blocks might launch before data written by the primary
//! kernel is visible").
//!
//! # Axioms
//!
//! See `execution.rs`: acyclic execution order (a cycle through a blocking
//! wait is a deadlock), coherence (`hb ; eco?` irreflexive per location,
//! a bulk copy's read bound by a generic access only through a proxy fence:
//! `proxy.rs`), the decision on load buffering (forbidden by default, with
//! the reason), and no value out of thin air (a copy writes what it read). Resources follow the decisions the spec records: the launch pool
//! (`control.rs`), the synchronization depth and the per-thread last error.
//!
//! # Limits
//!
//! - Exhaustive enumeration: cost is the product of the control orders
//!   (interleavings of each block's stream operations, permutations of pool
//!   events), the coherence orders and the reads-from choices. No thread
//!   limit; [`Options::max_candidates`] bounds each product, and a test
//!   beyond it is an error, never a partial answer.
//! - Not modeled, as in the loom model: events on the tail and
//!   fire-and-forget streams; errors other than a full pool and the sync
//!   depth. Blocks are modeled as the loom model does (see `control.rs`
//!   and `relations.rs`: stream state, barrier and trigger per block).

mod bulk;
mod control;
mod error;
mod execution;
mod graph;
mod options;
mod program;
mod proxy;
mod relations;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use gridcheck_spec::{Litmus, State, Verdict};

pub use error::{AxiomError, ErrorKind};
pub use options::Options;

/// What the axiomatic model found for one litmus test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxiomOutcome {
    pub verdict: Verdict,
    /// Every final state of a consistent candidate, keyed as
    /// [`Litmus::observables`].
    pub states: BTreeSet<State>,
    /// Candidate executions enumerated.
    pub candidates: u64,
    /// Candidates the axioms kept.
    pub consistent: u64,
    pub elapsed: Duration,
}

/// The guide's semantics ([`Options::default`]).
pub fn check(litmus: &Litmus) -> Result<AxiomOutcome, AxiomError> {
    check_with(litmus, &Options::default())
}

pub fn check_with(litmus: &Litmus, options: &Options) -> Result<AxiomOutcome, AxiomError> {
    let start = Instant::now();
    let prog = program::compile(litmus)?;
    let found = execution::explore(&prog, options)?;
    if found.states.is_empty() {
        return Err(AxiomError::new(
            ErrorKind::NoConsistentExecution,
            "no candidate execution is consistent",
        ));
    }
    Ok(AxiomOutcome {
        verdict: verdict(litmus, &found.states)?,
        states: found.states,
        candidates: found.candidates,
        consistent: found.consistent,
        elapsed: start.elapsed(),
    })
}

/// The verdict of `litmus.condition` over a set of final states.
pub fn verdict(litmus: &Litmus, states: &BTreeSet<State>) -> Result<Verdict, AxiomError> {
    let mut some = false;
    let mut all = true;
    for s in states {
        let holds = litmus
            .condition
            .holds(s)
            .map_err(|message| AxiomError::new(ErrorKind::Invalid, message))?;
        some |= holds;
        all &= holds;
    }
    Ok(match (some, all) {
        (false, _) => Verdict::Forbidden,
        (true, true) => Verdict::Required,
        (true, false) => Verdict::Allowed,
    })
}
