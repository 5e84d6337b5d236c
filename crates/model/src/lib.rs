//! gridcheck's reference semantics: every execution of a litmus test under
//! [`loom`], and the verdict the guide's rules give its condition.
//!
//! (Documentation of the model and loom's limits: see the end of this file's
//! first draft; filled in below.)

mod block;
mod cdp1;
mod grid;
mod latch;
mod memory;
mod pdl;
mod program;
mod stream;
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

use program::Program;
use world::World;

/// What the model found for one litmus test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelOutcome {
    /// Forbidden: no reachable final state satisfies `litmus.condition`;
    /// Required: all do; Allowed: otherwise.
    pub verdict: Verdict,
    /// Every reachable final state, keyed as [`Litmus::observables`].
    pub states: BTreeSet<State>,
    /// Executions loom explored.
    pub executions: u64,
    /// `Some(n)` when loom bounded preemptions at `n` (see [`Options`]);
    /// `None` when the exploration was exhaustive.
    pub preemption_bound: Option<usize>,
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
    /// Bound on the preemptions loom explores per execution; `None` explores
    /// every interleaving.
    pub preemption_bound: Option<usize>,
    /// loom's bound on scheduling decisions in one execution; an execution
    /// that needs more is reported as an error.
    pub max_branches: usize,
}

impl Default for Options {
    /// Exhaustive: every test the spec loader accepts (at most
    /// [`MAX_GPU_THREADS`] threads of a few operations) explores fully in
    /// well under a second in release mode.
    fn default() -> Options {
        Options {
            preemption_bound: None,
            max_branches: 10_000,
        }
    }
}

/// Explores every execution of `litmus` (see [`Options::default`]).
pub fn check(litmus: &Litmus) -> Result<ModelOutcome, ModelError> {
    check_with(litmus, &Options::default())
}

/// Explores the executions of `litmus` that `options` allows.
pub fn check_with(litmus: &Litmus, options: &Options) -> Result<ModelOutcome, ModelError> {
    let start = Instant::now();
    let program = Arc::new(program::compile(litmus)?);
    let states = Arc::new(Mutex::new(BTreeSet::new()));
    let executions = Arc::new(AtomicU64::new(0));

    let mut builder = loom::model::Builder::new();
    // Pin everything loom would otherwise read from `LOOM_*` variables, so
    // that a verdict does not depend on the environment.
    builder.max_threads = loom::MAX_THREADS;
    builder.max_branches = options.max_branches;
    builder.preemption_bound = options.preemption_bound;
    builder.max_permutations = None;
    builder.max_duration = None;
    builder.checkpoint_file = None;
    builder.location = false;
    builder.log = false;

    let (p, s, e) = (program.clone(), states.clone(), executions.clone());
    let run = catch_unwind(AssertUnwindSafe(move || {
        builder.check(move || {
            e.fetch_add(1, Ordering::Relaxed);
            let state = execute(&p);
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
                "an execution exceeded {} scheduling decisions (a spin that never ends?) \
                 [loom: {what}]",
                options.max_branches
            )
        } else {
            format!("the model failed: {what}")
        };
        return Err(ModelError { message });
    }

    let states = std::mem::take(&mut *states.lock().unwrap_or_else(|e| e.into_inner()));
    let verdict = verdict(litmus, &states)?;
    Ok(ModelOutcome {
        verdict,
        states,
        executions: executions.load(Ordering::Relaxed),
        preemption_bound: options.preemption_bound,
        elapsed: start.elapsed(),
    })
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

/// One execution, run by loom's main thread: build memory and every
/// synchronization object, spawn every GPU thread, join them, read the final
/// state.
fn main_thread(p: &Program) -> usize {
    match std::env::var("GC_MAIN").ok().as_deref() {
        Some("last") => p.threads.len() - 1,
        _ => 0,
    }
}

fn execute(p: &Arc<Program>) -> State {
    let w = Arc::new(World::new(p));
    let on_main = main_thread(p);
    let handles: Vec<_> = (0..p.threads.len())
        .filter(|&tid| tid != on_main)
        .map(|tid| {
            let (p, w) = (p.clone(), w.clone());
            (tid, loom::thread::spawn(move || thread::run(&p, &w, tid)))
        })
        .collect();
    let mut state = State::new();
    let regs = thread::run(p, &w, on_main);
    for (name, v) in p.threads[on_main].regs.iter().zip(regs) {
        state.insert(name.clone(), v);
    }
    for (tid, h) in handles {
        let regs = h.join().expect("a modeled thread panicked");
        for (name, v) in p.threads[tid].regs.iter().zip(regs) {
            state.insert(name.clone(), v);
        }
    }
    // Every store happens before the joins: these loads see the final values.
    for (i, (name, _)) in p.memory.iter().enumerate() {
        state.insert(name.clone(), w.memory.load(i));
    }
    debug_assert_eq!(w.memory.len(), p.memory.len());
    state
}
