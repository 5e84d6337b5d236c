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
//! guarantee of the guide is one such edge: a loom `Mutex` + `Condvar` latch
//! (`latch.rs`), or, for the launch, the spawn of the child grid's threads.
//! All synchronization primitives come from `sync.rs` (loom's), the one seam
//! that `gridcheck-model-std` replaces to run these same modules on std
//! threads (see "The model on std threads" below).
//!
//! | guide | edge | module |
//! |---|---|---|
//! | launch: the parent thread's earlier writes reach the child (4.18.3.1) | the launching thread spawns the child grid's threads at the launch | `grid.rs`, `thread.rs` |
//! | `__syncthreads()` | barrier of the threads of one block of the kernel's grid | `block.rs` |
//! | grid completion includes all child grids (4.18.2.1) | count-down latch of threads and non-tail children, cascading to the parent | `grid.rs` |
//! | NULL and named streams in order, events (4.18.2.3, 4.18.2.4) | dependencies handed to the grid at launch, awaited as completions | `stream.rs` |
//! | tail launch after the grid and all its work | the tail waits for the parent's completion count | `stream.rs` |
//! | fire-and-forget | independent start; still counted in the parent's completion | `stream.rs` |
//! | host stream without PDL | the thread that completes a host kernel spawns the next one's threads | `grid.rs`, `thread.rs` |
//! | PDL trigger (4.5.2) | **no edge**: relaxed per-block words, a relaxed count of the blocks that count, and a spin with `yield_now` | `pdl.rs` |
//! | `cudaGridDependencySynchronize()` | wait for the primary's completion | `pdl.rs` |
//! | CDP1 `cudaDeviceSynchronize()` | wait for the completion of the grids its own block launched; beyond the sync depth, an error and no wait | `cdp1.rs`, `resources.rs` |
//! | pending launch pool (4.18.5.2.1.2) | **no edge**: a relaxed device-wide counter; a slot frees when its grid completes | `resources.rs` |
//! | per-thread last error | thread-local, never shared | `resources.rs`, `thread.rs` |
//! | bulk copy (`cp.async.bulk`, PTX ISA 8.9.1.1, 9.7.9.25) | an agent of its own, spawned at its issue; its read bound only by what passed a proxy fence (`fence.proxy.async`, a thread's start, a wait for a grid's completion) | `bulk.rs`, `memory.rs` |
//! | its completion: mbarrier, bulk async-groups | count-down latches: the issue's `expect_tx` and the copy's complete-tx; the copy's read and write | `bulk.rs` |
//! | a grid's completion includes its copies | the copy's agent arrives on the grid's completion count | `bulk.rs`, `grid.rs` |
//!
//! The final state: after joining every thread (which orders every store
//! before it), loom's main thread reads every location, and the registers
//! come back through the joins (every thread joins the threads it spawned,
//! after its own exit). A thread whose grid never ran (its launch failed)
//! reports registers of 0, as the GPU runner's zeroed register array does.
//! States are keyed as [`Litmus::observables`].
//!
//! # Modeling decisions
//!
//! Decisions of semantics (each also in the spec's `decision:` of the rule):
//!
//! - **Launch pool** (`resources.rs`): a successful device launch takes a
//!   slot; the slot frees when the launched grid *completes* (its threads
//!   and all its work, tail grids included), before the completion can be
//!   observed ("tracked until the kernel completes", seeds 000 and 001);
//!   a launch into a full pool fails with
//!   `cudaErrorLaunchPendingCountExceeded` (69), takes no slot, and its grid
//!   and that grid's descendants never run. Host launches take no slot.
//!   The pool is modeled only when the test makes more device launches than
//!   its size.
//! - **Nesting depth**: the host-launched grid is at depth 0. CDP1's limit of
//!   24 levels is beyond any test of 4 threads (a compile-time assertion
//!   stops the build if loom's thread limit ever allows reaching it).
//! - **Synchronization depth** (CDP1): `devicesync` in a grid of depth
//!   `d > limit` (default 2) returns `cudaErrorLaunchMaxDepthExceeded` (65,
//!   the guide's name), sets the last error, and waits for nothing.
//! - **Last error**: per thread; a failed launch or `devicesync` sets it, a
//!   successful call leaves it, `geterror` reads and resets it, `peekerror`
//!   reads it.
//! - **Blocks**: a kernel's grid has one block, or several when its
//!   threads are named `bM.tN`. The barrier, the stream state (NULL stream,
//!   named streams, events, the order of tail launches), CDP1's launch set
//!   for `devicesync` and the PDL trigger are each block's own (one object
//!   per block in `world.rs`); completion counts the threads of every block,
//!   and a launch spawns every block's threads of the child.
//! - **The asynchronous proxy** (`bulk.rs`, `memory.rs`; the rules of
//!   `spec/pdl/async-proxy.yaml`): a bulk copy runs after its issue,
//!   unordered with the issuing thread's later operations; a generic write
//!   binds its read only through a proxy fence, and a grid boundary (a
//!   thread's start, `gridsync`, `devicesync`) is one; its write follows
//!   every write before its issue; a grid completes once its copies did.
//!   Shared locations are one memory cell per block that uses them, not
//!   part of the final state.
//! - **Tiles** (`names.rs`; `gridcheck_spec::tile` and `spec/README.md`,
//!   "Tiles"): a tile is split into segments at every boundary the test
//!   names; a segment of one word is one cell, as a word location; a
//!   segment of several words is its representative words, a cell each
//!   (as many as the values its tile can hold), and an operation on it is
//!   one on each, in order; a bulk copy's agent reads every word, then
//!   writes every word. A read of several words observes the set of its
//!   values (`run.rs` folds the loads).
//! - Earlier decisions: the PDL trigger unit is the block (`pdl.rs`);
//!   waiting on an event no thread recorded is a no-op (`stream.rs`); stream
//!   operations of one block are ordered by one relaxed read-modify-write
//!   word and synchronize nothing (`stream.rs`).
//!
//! Choices that differ from the obvious construction, for exploration cost
//! only, not for semantics (the state sets of every spec test were compared
//! before and after each):
//!
//! - **GPU thread 0 runs on loom's main thread**, after main has spawned the
//!   other threads that exist from the start (and before it joins them).
//!   Thread 0 is the first thread of the first host kernel, which never
//!   waits to start. Spawning gives happens-before only from main's
//!   initialisation to the new threads, so this adds no edge between GPU
//!   threads; it removes a loom thread from the interleavings.
//! - **A thread exists only once it may start.** A device grid's threads are
//!   spawned by the launch (the spawn is the launch's edge: everything
//!   before the launch in the launching thread, and what happens before it,
//!   and nothing after); a host kernel that waits for its predecessor alone
//!   is spawned by the thread whose arrival completes the predecessor (the
//!   spawn carries the completion's happens-before, as the wait did). A
//!   PDL secondary's first thread alone waits for the primary's blocks to
//!   count and then spawns the secondary's other threads (the spawn orders
//!   only its start, before which it did nothing; several spinning threads
//!   made loom switch between them without bound). A
//!   grid whose launch failed spawns nothing, unless it is a tail grid,
//!   whose threads still count as finished after their parent is done. A
//!   thread that does not exist adds no interleavings: the spec's 4-thread
//!   tests that needed 476 000 to 6.5 million executions to explore
//!   exhaustively (one did not finish in 50 minutes) now need at most
//!   18 300.
//! - **Completion counts are kept only where something awaits them** (a
//!   tail grid, a host successor, a stream successor, an event, a
//!   `devicesync`, the launch pool, or the completion of an awaited
//!   parent), since each count adds scheduling points and no edge anything
//!   observes.
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
//!   Keep each location's stores in a test below 7. (The model's own
//!   counters, the stream state and the launch pool, are only accessed by
//!   read-modify-writes, which always read the latest value: the limit does
//!   not bear on them.)
//! - **SeqCst behaves as AcqRel** in loom (use fences for SeqCst
//!   reasoning). The test DSL has no SeqCst operation and the model uses
//!   none, so no verdict depends on it today.
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
//! - **Cost grows steeply with threads and preemptions.** With threads
//!   spawned only when they may start, every litmus test of the spec within
//!   loom's thread limit is explored exhaustively: 1 to about 18 300
//!   executions, at most about 0.5 s each in release mode. `cargo xtask
//!   bench model` (91 litmus tests, 85 of them through loom, 105 707
//!   executions) took 2.85 to 3.57 s in three runs on a 2-core machine on
//!   2026-11-25, almost all of it user time (3.29 s wall, 3.26 s user, 0.02 s
//!   system). It took 10.7 to 12.6 s before the workspace patched loom's
//!   coroutine library with a per-thread stack pool (`crates/vendor`): loom
//!   runs every thread of every execution on a new coroutine, and upstream
//!   maps, protects and unmaps a stack for each (`strace -c`: 66 345 each of
//!   `mmap`, `mprotect` and `munmap` for the 16 585 executions of one test,
//!   two thirds of the wall time in the kernel).
//!   [`check`] still explores exhaustively only within a budget of 100 000
//!   executions and otherwise falls back to a **preemption bound** of 3 (2
//!   if that too exceeds the budget), and says so in
//!   [`ModelOutcome::preemption_bound`]; the harness prints the bound with
//!   the verdict. A bounded exploration is sound for Allowed (the witness is
//!   real) but may miss a state that needs more preemptions, so a bounded
//!   Forbidden or Required verdict is weaker than an exhaustive one. The
//!   spec test (`tests/spec.rs`) fails when a test needs a bound and is not
//!   listed, with its reason, in its `BOUNDED` list (empty today).
//! - **loom does not always respect a location's modification order**
//!   (loom issue #282; reproduced with bare loom): in `t1: y = 3; barrier
//!   || t0: y = 1; launch c; barrier; r1 = y || c: y = 5` a relaxed load
//!   after the joins returned `y = 1`, although `c`'s store follows t0's.
//!   Final values are therefore taken from the order the stores ran, a
//!   modification order consistent with happens-before (`memory.rs`); with
//!   that, the property "adding `devicesync` after a launch never adds a
//!   state" (`tests/properties.rs`), which the bad final values broke,
//!   holds. Loads during an execution still come from loom: the same
//!   program still reports `r1 = 1, y = 3`, which no modification order
//!   allows (pinned in `tests/limits.rs`). An extra state can only turn
//!   Forbidden or Required into Allowed, never the reverse; no spec test has
//!   this shape (their state sets did not change with the fix).
//! - **At most 4 GPU threads** ([`MAX_GPU_THREADS`]): loom's `MAX_THREADS` is
//!   5, main included. (Since thread 0 runs on main, 5 would fit.) Each bulk
//!   copy's agent is a loom thread too and counts ([`loom_agents`]). So a test
//!   uses representative threads, and resource limits are observed with
//!   small values (a pool of 1 slot, a sync depth of 1); the nesting depth
//!   limit cannot be reached. The spec allows tests of more threads (kernels
//!   of several blocks make them quickly): [`check`] refuses them at once,
//!   and the axiomatic model (`crates/axiom`) decides them alone.
//!
//! # The model on std threads
//!
//! `gridcheck-model-std` (`crates/model-std`) compiles these modules with
//! `#[path]` against its own `sync.rs`: std threads and atomics, with a
//! random yield or spin before every atomic access, lock and spawn. Its
//! tests run random small programs and every litmus test of the spec many
//! times on real threads and check that each state seen is one loom
//! reaches, and none contradicts the expected verdict. Sampling on x86-64
//! (TSO) shows fewer weak behaviours than loom explores, so this checks
//! that loom's verdicts do not rest on its scheduler, not that loom's
//! state sets are complete.
//!
//! # What is not modeled
//!
//! Events recorded into, or awaited by, the tail and fire-and-forget streams
//! (a [`ModelError`]); errors other
//! than a full launch pool and the synchronization depth (invalid
//! arguments, memory faults); events and streams in the launch pool (seed
//! 001's Configuration Options also mentions events; the model counts
//! launches only).

mod block;
mod bulk;
mod cdp1;
mod compile;
mod completion;
mod error;
mod grid;
mod latch;
mod memory;
mod names;
mod pdl;
mod program;
mod resources;
mod run;
mod slots;
mod stream;
mod sync;
mod thread;
mod world;

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gridcheck_spec::{Litmus, State, Verdict};

pub use error::{ErrorKind, ModelError};
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
    /// Executions loom explored in the exploration that produced `states`
    /// (over its loom runs, one for each way the bulk copies' reads may
    /// take their values: see `memory.rs`).
    pub executions: u64,
    /// `Some(n)` when that exploration bounded preemptions at `n`, because an
    /// exhaustive one (or a less bounded one) would have exceeded
    /// [`Options::budget`]; `None` when it was exhaustive.
    pub preemption_bound: Option<usize>,
    /// Executions of the explorations abandoned for exceeding the budget
    /// before this one.
    pub abandoned_executions: u64,
    /// Executions of that exploration in which loom let a load return a
    /// store coherence forbids (loom issue #282): discarded, they reach no
    /// state (see `memory.rs`).
    pub incoherent_executions: u64,
    /// Wall time of everything, abandoned explorations included.
    pub elapsed: Duration,
}

/// How to explore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The first exploration's preemption bound; `None` explores every
    /// interleaving.
    pub preemption_bound: Option<usize>,
    /// Executions an exploration may take before the model abandons it for
    /// the next one (each of its loom runs, for a test with bulk copies);
    /// `None`: no limit. The last exploration has no limit.
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
    let n = loom_agents(litmus);
    if n > MAX_GPU_THREADS {
        return Err(ModelError::new(
            ErrorKind::TooManyThreads,
            format!(
                "{n} threads and bulk copies in all; loom explores at most {MAX_GPU_THREADS} \
                 besides its main thread"
            ),
        ));
    }
    let program = Arc::new(compile::compile(litmus)?);
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
        let (states, executions, incoherent, exceeded) =
            explore(&program, bound, budget, options.max_branches)?;
        if exceeded {
            abandoned += executions;
            continue;
        }
        return Ok(ModelOutcome {
            verdict: verdict(litmus, &states)?,
            states,
            executions,
            preemption_bound: bound,
            abandoned_executions: abandoned,
            incoherent_executions: incoherent,
            elapsed: start.elapsed(),
        });
    }
    unreachable!("the last exploration has no budget")
}

/// The agents loom runs for a test, each a loom thread but the first: its
/// modeled threads and its bulk copies (see `bulk.rs`). At most
/// [`MAX_GPU_THREADS`].
pub fn loom_agents(litmus: &Litmus) -> usize {
    litmus.thread_count() + litmus.bulk_copies()
}

/// One exploration: one loom run for each way the bulk copies' reads may
/// take their values (see `memory.rs`, "The asynchronous proxy"; a single
/// run without copies), their states united and their executions added
/// up. Each run has the `budget` (when there is one) and stops early after
/// it; `true` when one did, and the exploration is incomplete.
fn explore(
    program: &Arc<Program>,
    bound: Option<usize>,
    budget: Option<u64>,
    max_branches: usize,
) -> Result<(BTreeSet<State>, u64, u64, bool), ModelError> {
    let mut states = BTreeSet::new();
    let (mut executions, mut incoherent) = (0, 0);
    for reads in program.async_reads() {
        let (s, e, i) = explore_reads(program, &reads, bound, budget, max_branches)?;
        states.extend(s);
        executions += e;
        incoherent += i;
        // loom stops at the first multiple of `checkpoint_interval` at or
        // past the budget, one execution short of it.
        if budget.is_some_and(|b| e + 1 >= b) {
            return Ok((states, executions, incoherent, true));
        }
    }
    Ok((states, executions, incoherent, false))
}

/// One loom exploration with the bulk copies' reads fixed as `reads`.
fn explore_reads(
    program: &Arc<Program>,
    reads: &[memory::AsyncRead],
    bound: Option<usize>,
    budget: Option<u64>,
    max_branches: usize,
) -> Result<(BTreeSet<State>, u64, u64), ModelError> {
    let states = Arc::new(Mutex::new(BTreeSet::new()));
    let executions = Arc::new(AtomicU64::new(0));
    let incoherent = Arc::new(AtomicU64::new(0));
    let reads = reads.to_vec();

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

    let (p, s, e, d) = (
        program.clone(),
        states.clone(),
        executions.clone(),
        incoherent.clone(),
    );
    let run = catch_unwind(AssertUnwindSafe(move || {
        builder.check(move || {
            e.fetch_add(1, Ordering::Relaxed);
            match run::execute(&p, &reads) {
                run::Outcome::State(state) => {
                    s.lock().unwrap_or_else(|e| e.into_inner()).insert(state);
                }
                run::Outcome::Incoherent => {
                    d.fetch_add(1, Ordering::Relaxed);
                }
                run::Outcome::Vacuous => {}
            }
        })
    }));
    if let Err(payload) = run {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "loom panicked".to_string());
        let (kind, message) = if what.contains("deadlock") {
            let kind = ErrorKind::Deadlock;
            (
                kind,
                format!(
                    "deadlock: some execution blocks forever (synchronization that can never be \
                 satisfied) [loom: {what}]"
                ),
            )
        } else if what.contains("maximum number of branches") {
            let kind = ErrorKind::BranchLimit;
            (
                kind,
                format!(
                    "an execution exceeded {max_branches} scheduling decisions (a wait that is \
                 never satisfied?) [loom: {what}]"
                ),
            )
        } else {
            (ErrorKind::Failed, format!("the model failed: {what}"))
        };
        return Err(ModelError::new(kind, message));
    }
    let states = std::mem::take(&mut *states.lock().unwrap_or_else(|e| e.into_inner()));
    Ok((
        states,
        executions.load(Ordering::Relaxed),
        incoherent.load(Ordering::Relaxed),
    ))
}

/// The verdict of `litmus.condition` over a set of reachable final states.
pub fn verdict(litmus: &Litmus, states: &BTreeSet<State>) -> Result<Verdict, ModelError> {
    if states.is_empty() {
        return Err(ModelError::new(
            ErrorKind::NoFinalState,
            "no execution reached a final state",
        ));
    }
    let mut some = false;
    let mut all = true;
    for s in states {
        let holds = litmus
            .condition
            .holds(s)
            .map_err(|message| ModelError::new(ErrorKind::Invalid, message))?;
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
