//! gridcheck's reference semantics: every execution of a litmus test under
//! [`loom`], and the verdict the guide's rules give its condition.
//!
//! [`check`] compiles a [`Litmus`] test, explores its executions with
//! `loom::model::Builder`, collects every reachable final state (outside the
//! model, in a `std::sync::Mutex<BTreeSet<State>>`, as loom's own
//! `tests/litmus.rs` does) and evaluates the test's `exists` condition over
//! them: **Forbidden** when no state satisfies it, **Required** when all do,
//! **Allowed** otherwise. It never panics on a test the spec loader accepts:
//! loom's panics (a deadlock, a spin that never ends) are caught and become
//! a [`ModelError`].
//!
//! # The model
//!
//! Each modeled GPU thread is a loom thread; global memory is one loom atomic
//! per location, accessed `Relaxed` (`memory.rs`). Nothing one thread writes is
//! visible to another without an explicit happens-before edge, and every
//! guarantee of the guide is one such edge, built from loom `Mutex` +
//! `Condvar` latches (`latch.rs`), never from a thread spawn or join:
//!
//! | guide | edge | module |
//! |---|---|---|
//! | launch: the parent thread's earlier writes reach the child (4.18.3.1) | start gate opened by the launch, awaited by every child thread | `grid.rs` |
//! | `__syncthreads()` | barrier of the kernel's threads (one block) | `block.rs` |
//! | grid completion includes all child grids (4.18.2.1) | count-down latch of threads and non-tail children, cascading to the parent | `grid.rs` |
//! | NULL and named streams in order, events (4.18.2.3, 4.18.2.4) | dependencies handed to the grid at launch, awaited as completions | `stream.rs` |
//! | tail launch after the grid and all its work | the tail waits for the parent's completion count | `stream.rs` |
//! | fire-and-forget | independent start; still counted in the parent's completion | `stream.rs` |
//! | host stream without PDL | the next host kernel waits for the previous one's completion | `stream.rs` |
//! | PDL trigger (4.5.2) | **no edge**: a relaxed flag and a spin with `yield_now` | `pdl.rs` |
//! | `cudaGridDependencySynchronize()` | wait for the primary's completion | `pdl.rs` |
//! | CDP1 `cudaDeviceSynchronize()` | wait for the completion of the block's launched grids | `cdp1.rs` |
//!
//! The final state: after joining every thread (which orders every store
//! before it), loom's main thread reads every location, and the registers
//! come back through the joins. States are keyed as
//! [`Litmus::observables`].
//!
//! Two choices differ from the obvious construction, both for exploration
//! cost, neither for semantics:
//!
//! - **GPU thread 0 runs on loom's main thread**, after main has spawned the
//!   other GPU threads (and before it joins them). Thread 0 is the first
//!   thread of the first host kernel, which never waits to start. Spawning
//!   gives happens-before only from main's initialisation to the new threads,
//!   so this adds no edge between GPU threads; it removes a loom thread from
//!   the interleavings: 4 empty GPU threads take 26 executions instead of
//!   493, and the real spec's 3-thread tests 10 to 20 times fewer.
//! - **Completion counts are kept only where something awaits them** (a
//!   tail grid, a host successor, a stream successor, an event, a
//!   `devicesync`, or the completion of an awaited parent), since each count
//!   adds scheduling points and no edge anything observes.
//!
//! # loom's limits, and what they mean for verdicts
//!
//! Measured with loom 0.7.2 (the tests in `tests/limits.rs` pin them down):
//!
//! - **No load buffering.** A load returns only a store that already
//!   happened in loom's interleaving, so `r0 = x; y = 1 || r1 = y; x = 1`
//!   never gives `r0 = r1 = 1`, which C++ relaxed atomics (and possibly
//!   GPUs) allow. A test whose condition needs load buffering gets
//!   Forbidden where the guide says nothing; the PDL tests that a
//!   secondary does not start before the trigger rely on it being absent.
//! - **7 stores per location.** loom remembers the last 7 stores of an
//!   atomic (the initial value counts as one); an older store can no longer
//!   be read. After 7 stores to `x`, a stale read of the initial `x` is lost.
//!   Keep each location's stores in a test below 7.
//! - **SeqCst behaves as AcqRel** in loom (use fences for SeqCst
//!   reasoning). The test DSL has no SeqCst operation, so no verdict
//!   depends on it today.
//! - **Incomplete partial-order reduction.** loom decides which orders to try
//!   from the *last* access to an object, and loads do not depend on loads,
//!   so a thread's own load can hide another thread's load from its later
//!   store (loom issues #166 and #392): `T0: load x || T1: load x; store x 3`
//!   explored one execution and missed `T0` reading 3. The model stores to a
//!   per-location shadow atomic before every access, which makes all
//!   accesses to a location depend on each other (see `memory.rs`); the
//!   property tests check, among others, that a barrier never adds a state.
//!   Synchronization objects are mutexes (all accesses dependent) or
//!   read-modify-writes, which loom tracks completely.
//! - **Cost grows steeply with threads and preemptions.** In release mode,
//!   exhaustive exploration of the real spec's tests takes 3 to 62 000
//!   executions (up to about 2 s) with 2 or 3 GPU threads, and
//!   33 000 to over 476 000 (25 s and more) with 4; a third thread of one
//!   store added to two threads multiplies executions by 10 to 300. So
//!   [`check`] explores exhaustively within a budget of 100 000 executions
//!   and otherwise falls back to a **preemption bound** of 3 (2 if that too
//!   exceeds the budget), and says so in [`ModelOutcome::preemption_bound`].
//!   A bounded exploration is sound for Allowed (the witness is real) but
//!   may miss a state that needs more preemptions, so a bounded Forbidden or
//!   Required verdict is weaker than an exhaustive one. The spec's tests
//!   that fall back (all have 4 threads) were explored exhaustively once with
//!   [`Options::exhaustive`] (the ignored test
//!   `bounded_verdicts_agree_with_exhaustive_exploration`): the same verdict
//!   in 476 491 to 6 537 882 executions (4 to 22 minutes each, sharing two
//!   cores), except `c1-block-exit-syncs-event-dependent-work`, which did not
//!   finish in 50 minutes.
//! - **At most 4 GPU threads** ([`MAX_GPU_THREADS`]): loom's `MAX_THREADS` is
//!   5, main included. (Since thread 0 runs on main, 5 would fit; the spec
//!   loader's limit is 4.)
//!
//! # What is not modeled
//!
//! Events recorded into, or awaited by, the tail and fire-and-forget streams
//! (a [`ModelError`]); anything beyond one block per kernel; the launch pool
//! and nesting-depth limits; per-thread errors.

mod block;
mod cdp1;
mod grid;
mod latch;
mod memory;
mod pdl;
mod program;
mod resources;
mod run;
mod stream;
mod sync;
mod thread;
mod world;

use std::collections::BTreeSet;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gridcheck_spec::{Litmus, State, Verdict};

pub use program::MAX_GPU_THREADS;
pub use resources::MAX_NESTING_DEPTH;

use program::Program;

/// What the model found for one litmus test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelOutcome {
    /// Forbidden: no reachable final state satisfies `litmus.condition`;
    /// Required: all do; Allowed: otherwise.
    pub verdict: Verdict,
    /// Every reachable final state, keyed as [`Litmus::observables`].
    pub states: BTreeSet<State>,
    /// Executions loom explored in the exploration that produced `states`.
    pub executions: u64,
    /// `Some(n)` when that exploration bounded preemptions at `n`, because an
    /// exhaustive one (or a less bounded one) would have exceeded
    /// [`Options::budget`]; `None` when it was exhaustive.
    pub preemption_bound: Option<usize>,
    /// Executions of the explorations abandoned for exceeding the budget
    /// before this one.
    pub abandoned_executions: u64,
    /// Wall time of everything, abandoned explorations included.
    pub elapsed: Duration,
}

/// Why the model could not decide a test: a deadlock (synchronization that
/// can never be satisfied), a test beyond loom's limits, or a loom failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    pub message: String,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ModelError {}

/// How to explore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The first exploration's preemption bound; `None` explores every
    /// interleaving.
    pub preemption_bound: Option<usize>,
    /// Executions an exploration may take before the model abandons it for
    /// the next one; `None`: no limit. The last exploration has no limit.
    pub budget: Option<u64>,
    /// Preemption bounds to fall back to, in order, when an exploration
    /// exceeds the budget (only those below the bound that was exceeded).
    pub fallback_bounds: Vec<usize>,
    /// loom's bound on scheduling decisions in one execution; an execution
    /// that needs more is reported as an error.
    pub max_branches: usize,
}

impl Default for Options {
    /// Exhaustive when it takes at most 100 000 executions (a few seconds in
    /// release mode); otherwise bounded at 3 preemptions, or at 2 when that
    /// too exceeds the budget. See the crate docs for the measured costs.
    fn default() -> Options {
        Options {
            preemption_bound: None,
            budget: Some(100_000),
            fallback_bounds: vec![3, 2],
            max_branches: 10_000,
        }
    }
}

impl Options {
    /// Every interleaving, however long it takes.
    pub fn exhaustive() -> Options {
        Options {
            budget: None,
            fallback_bounds: Vec::new(),
            ..Options::default()
        }
    }

    /// Only executions with at most `n` preemptions.
    pub fn bounded(n: usize) -> Options {
        Options {
            preemption_bound: Some(n),
            budget: None,
            fallback_bounds: Vec::new(),
            ..Options::default()
        }
    }
}

/// Explores the executions of `litmus` with [`Options::default`]. Never
/// panics: a deadlock or a loom failure is a [`ModelError`].
pub fn check(litmus: &Litmus) -> Result<ModelOutcome, ModelError> {
    check_with(litmus, &Options::default())
}

/// Explores the executions of `litmus` that `options` allows.
pub fn check_with(litmus: &Litmus, options: &Options) -> Result<ModelOutcome, ModelError> {
    let start = Instant::now();
    let program = Arc::new(program::compile(litmus)?);
    let mut bounds = vec![options.preemption_bound];
    for &b in &options.fallback_bounds {
        let last = *bounds.last().unwrap_or(&None);
        if last.is_none_or(|l| b < l) {
            bounds.push(Some(b));
        }
    }
    let mut abandoned = 0;
    for (i, &bound) in bounds.iter().enumerate() {
        let budget = if i + 1 < bounds.len() {
            options.budget
        } else {
            None
        };
        let (states, executions) = explore(&program, bound, budget, options.max_branches)?;
        // loom stops at the first multiple of `checkpoint_interval` at or past the
        // budget, one execution short of it.
        if budget.is_some_and(|b| executions + 1 >= b) {
            abandoned += executions;
            continue;
        }
        return Ok(ModelOutcome {
            verdict: verdict(litmus, &states)?,
            states,
            executions,
            preemption_bound: bound,
            abandoned_executions: abandoned,
            elapsed: start.elapsed(),
        });
    }
    unreachable!("the last exploration has no budget")
}

/// One loom exploration; stops early (after at least `budget` executions)
/// when there is a budget.
fn explore(
    program: &Arc<Program>,
    bound: Option<usize>,
    budget: Option<u64>,
    max_branches: usize,
) -> Result<(BTreeSet<State>, u64), ModelError> {
    let states = Arc::new(Mutex::new(BTreeSet::new()));
    let executions = Arc::new(AtomicU64::new(0));

    let mut builder = loom::model::Builder::new();
    // Pin everything loom would otherwise read from `LOOM_*` variables, so
    // that a verdict does not depend on the environment.
    builder.max_threads = loom::MAX_THREADS;
    builder.max_branches = max_branches;
    builder.preemption_bound = bound;
    builder.max_duration = None;
    builder.checkpoint_file = None;
    builder.location = false;
    builder.log = false;
    // loom checks `max_permutations` every `checkpoint_interval` executions.
    builder.max_permutations = budget.map(|b| b as usize);
    builder.checkpoint_interval = 1_000;

    let (p, s, e) = (program.clone(), states.clone(), executions.clone());
    let run = catch_unwind(AssertUnwindSafe(move || {
        builder.check(move || {
            e.fetch_add(1, Ordering::Relaxed);
            let state = run::execute(&p);
            s.lock().unwrap_or_else(|e| e.into_inner()).insert(state);
        })
    }));
    if let Err(payload) = run {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "loom panicked".to_string());
        let message = if what.contains("deadlock") {
            format!(
                "deadlock: some execution blocks forever (synchronization that can never be \
                 satisfied) [loom: {what}]"
            )
        } else if what.contains("maximum number of branches") {
            format!(
                "an execution exceeded {max_branches} scheduling decisions (a wait that is \
                 never satisfied?) [loom: {what}]"
            )
        } else {
            format!("the model failed: {what}")
        };
        return Err(ModelError { message });
    }
    let states = std::mem::take(&mut *states.lock().unwrap_or_else(|e| e.into_inner()));
    Ok((states, executions.load(Ordering::Relaxed)))
}

/// The verdict of `litmus.condition` over a set of reachable final states.
pub fn verdict(litmus: &Litmus, states: &BTreeSet<State>) -> Result<Verdict, ModelError> {
    if states.is_empty() {
        return Err(ModelError {
            message: "no execution reached a final state".into(),
        });
    }
    let mut some = false;
    let mut all = true;
    for s in states {
        let holds = litmus
            .condition
            .holds(s)
            .map_err(|message| ModelError { message })?;
        some |= holds;
        all &= holds;
    }
    Ok(if !some {
        Verdict::Forbidden
    } else if all {
        Verdict::Required
    } else {
        Verdict::Allowed
    })
}
