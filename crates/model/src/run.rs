//! One execution of a compiled litmus test, on the checker's main thread:
//! build memory and every synchronization object, spawn the GPU threads
//! through [`crate::sync`], run GPU thread 0 here, join the others and read
//! the final state. Shared by the loom model and its std build
//! (`gridcheck-model-std`).

use std::sync::Arc;

use gridcheck_spec::State;
use gridcheck_spec::place::observe;

use crate::memory::{AsyncRead, View};
use crate::program::Program;
use crate::world::World;
use crate::{sync, thread};

/// What one execution reached.
#[derive(Debug)]
pub(crate) enum Outcome {
    State(State),
    /// A load broke coherence (see `memory.rs`): no state.
    Incoherent,
    /// An asynchronous read's fixed choice did not apply (see `memory.rs`,
    /// "The asynchronous proxy"): no state.
    Vacuous,
}

/// One execution, each bulk copy's read taken as `reads` says: spawn the
/// host kernels' threads, run GPU thread 0 here, join the others (each
/// joins the threads it spawned), read the final state.
pub(crate) fn execute(p: &Arc<Program>, reads: &[AsyncRead]) -> Outcome {
    let w = Arc::new(World::new(p, reads));
    // GPU thread 0 (the first host kernel's first thread) runs on the
    // checker's main thread, after the spawns: see the crate docs. Device
    // kernels' threads are spawned by their launches.
    let on_main = 0;
    let handles: Vec<_> = (0..p.threads.len())
        .filter(|&tid| tid != on_main && p.is_host_thread(tid))
        .map(|tid| {
            let (p, w) = (p.clone(), w.clone());
            sync::spawn(move || thread::run(&p, &w, tid, 0, View::new(p.memory.len())))
        })
        .collect();
    let mut regs = thread::run(p, &w, on_main, 0, View::new(p.memory.len()));
    for h in handles {
        regs.extend(h.join().expect("a modeled thread panicked"));
    }
    // A thread that never ran (its grid's launch failed) reports nothing:
    // its registers stay 0.
    let mut state = State::new();
    for t in &p.threads {
        for o in &t.regs {
            state.insert(o.name.clone(), 0);
        }
    }
    for (tid, values) in regs {
        // A tile register's values, one a representative word, fold into
        // what its segment observes.
        let mut values = values.into_iter();
        for o in &p.threads[tid].regs {
            let v: Vec<u32> = values.by_ref().take(o.count).collect();
            if v.len() == o.count {
                state.insert(o.name.clone(), observe(o.width, &v));
            }
        }
    }
    // Every store happens before the joins: these loads see the final
    // values. Shared memory dies with its block.
    for (i, (name, _)) in p.memory.iter().enumerate().take(p.globals) {
        state.insert(name.clone(), w.memory.final_value(i));
    }
    debug_assert_eq!(w.memory.len(), p.memory.len());
    // An execution in which a load broke coherence is one loom should not
    // have produced (see `memory.rs`): it reaches no state.
    if w.memory.vacuous() {
        Outcome::Vacuous
    } else if w.memory.incoherent() {
        Outcome::Incoherent
    } else {
        Outcome::State(state)
    }
}
