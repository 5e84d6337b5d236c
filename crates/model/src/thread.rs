//! A modeled GPU thread: one loom thread that waits for its grid's start,
//! runs its operations in program order and reports its exit.
//!
//! A host kernel's threads are spawned by the checker's main thread at the
//! start of an execution. A device kernel's threads are spawned by the
//! thread that launches it, **at the launch** (see [`crate::grid`]): the
//! spawn is the launch's happens-before edge, and a thread that does not
//! exist yet adds no interleavings before its launch. Every thread joins
//! the threads it spawned after its own exit (when nothing it does can be
//! observed any more) and hands their registers up with its own.
//!
//! Registers are thread-local and come back to loom's main thread through the
//! joins, in program order. So is the thread's last error
//! ([`crate::resources::LastError`]): nothing else ever reads it.
//!
//! A grid whose launch failed (or whose launcher never ran) never runs: its
//! registers keep their initial value, 0, as the GPU runner's zeroed
//! register array does. Its threads are not even spawned, except for a tail
//! grid's (see [`crate::grid::launch_failed`]), which run no operation and
//! spawn the tail grids they would have launched the same way.

use std::sync::Arc;

use crate::memory::View;
use crate::program::{MOp, Program};
use crate::resources::{CANCELLED, LAUNCH_PENDING_COUNT_EXCEEDED, LastError};
use crate::world::World;
use crate::{block, bulk, cdp1, grid, pdl, stream, sync};

/// Registers of one modeled thread: its index and the values of its loads
/// and error queries in program order (a tile load's, one a
/// representative word: `run.rs` folds them into its observables).
pub(crate) type Regs = Vec<(usize, Vec<u32>)>;

type Handles = Vec<sync::JoinHandle<Regs>>;

/// Spawns the threads of `kernel`, which get `deps` (see
/// [`crate::grid::launch`]).
fn spawn_grid(
    p: &Arc<Program>,
    w: &Arc<World>,
    kernel: usize,
    deps: u64,
    view: &View,
    out: &mut Handles,
) {
    for &tid in &p.kernels[kernel].threads {
        let (p, w, view) = (p.clone(), w.clone(), view.clone());
        out.push(sync::spawn(move || run(&p, &w, tid, deps, view)));
    }
}

/// Runs modeled thread `tid`; returns its registers and those of every
/// thread it spawned, transitively.
pub(crate) fn run(p: &Arc<Program>, w: &Arc<World>, tid: usize, deps: u64, mut view: View) -> Regs {
    let t = &p.threads[tid];
    let k = t.kernel;
    let kb = (k, t.block);
    let mut spawned = Vec::new();
    let mut starts = Vec::new();
    if !stream::wait_start(p, w, tid, deps, &mut view) {
        for op in &t.ops {
            if let MOp::Launch { child } = *op
                && grid::launch_failed(p, w, k, child, &mut starts, &mut view)
            {
                spawn_grid(p, w, child, CANCELLED, &view, &mut spawned);
            }
        }
        // The thread's exit and each of its bulk copies count (as never run)
        // in the grid's completion.
        for _ in 0..=t.copies.len() {
            grid::thread_exit(p, w, k, true, &mut starts, &mut view);
        }
        for s in starts {
            spawn_grid(p, w, s, 0, &view, &mut spawned);
        }
        // Its registers report nothing: they read 0 (see `run.rs`).
        return join(vec![(tid, Vec::new())], spawned);
    }
    // A thread's start is a grid boundary: a proxy fence (see `bulk.rs`).
    view.fence();
    // The first thread of a PDL secondary, once the primary counts, starts
    // the others, and the first thread of its own PDL secondary (which
    // cannot start before this grid did): they add no interleavings, and no
    // second thread spins, while they could not start (see `pdl.rs`).
    if pdl::leads_secondary(p, tid) {
        let next = p
            .pdl_secondary_of(k)
            .and_then(|s| p.kernels[s].threads.first());
        for &other in p.kernels[k].threads[1..].iter().chain(next) {
            let (p, w, view) = (p.clone(), w.clone(), view.clone());
            spawned.push(sync::spawn(move || run(&p, &w, other, 0, view)));
        }
    }
    let mut regs = Vec::with_capacity(t.regs.iter().map(|o| o.count).sum());
    let mut triggered = false;
    let mut synced = false;
    let mut streams = 0;
    let mut last_error = LastError::default();
    let mut groups = bulk::Groups::default();
    for op in &t.ops {
        match *op {
            MOp::Store { loc, value, id } => w.memory.store(loc, id, value, &mut view),
            MOp::Load { loc } => regs.push(w.memory.load(loc, &mut view)),
            MOp::SyncThreads => block::syncthreads(p, w, k, t.block, &mut view),
            MOp::Launch { child } => {
                let deps = grid::launch(p, w, kb, child, &mut streams);
                if deps != CANCELLED {
                    spawn_grid(p, w, child, deps, &view, &mut spawned);
                } else {
                    last_error.set(LAUNCH_PENDING_COUNT_EXCEEDED);
                    if grid::launch_failed(p, w, k, child, &mut starts, &mut view) {
                        spawn_grid(p, w, child, CANCELLED, &view, &mut spawned);
                    }
                }
            }
            MOp::Record { event, stream } => stream::record(p, w, kb, event, stream, &mut streams),
            MOp::WaitEvent { stream, event } => {
                stream::wait_event(p, w, kb, stream, event, &mut streams)
            }
            MOp::Trigger => pdl::trigger(p, w, k, t.block, &mut triggered),
            MOp::GridSync => pdl::gridsync(p, w, k, &mut synced, &mut view),
            MOp::DeviceSync { record } => {
                let code = cdp1::devicesync(p, w, kb, &mut view);
                if code != 0 {
                    last_error.set(code);
                }
                if record {
                    regs.push(code);
                }
            }
            MOp::GetError => regs.push(last_error.get()),
            MOp::PeekError => regs.push(last_error.peek()),
            MOp::Bulk { copy } => {
                bulk::issue(p, w, copy, &mut groups, &mut view);
                let (p, w, view) = (p.clone(), w.clone(), view.clone());
                spawned.push(sync::spawn(move || copy_agent(&p, &w, copy, view)));
            }
            MOp::MbarWait { mbar } => bulk::mbar_wait(w, mbar, &mut view),
            MOp::BulkCommit => bulk::commit(&mut groups),
            MOp::BulkWait { read, pending } => {
                bulk::wait_groups(p, w, &groups, read, pending, &mut view)
            }
            MOp::FenceProxy => view.fence(),
        }
    }
    // Exit: the PDL exit flag, then one arrival on the grid's completion
    // count; then the joins, which nothing observes. (Its bulk copies may
    // still be in flight: see `bulk.rs`.)
    pdl::exit(p, w, k, t.block, triggered);
    grid::thread_exit(p, w, k, false, &mut starts, &mut view);
    for s in starts {
        spawn_grid(p, w, s, 0, &view, &mut spawned);
    }
    join(vec![(tid, regs)], spawned)
}

/// The agent of bulk copy `c` (see [`crate::bulk`]): spawned at the copy's
/// issue with the issuing thread's view; its completion is one arrival on
/// the grid's completion count, as a thread's exit is.
fn copy_agent(p: &Arc<Program>, w: &Arc<World>, c: usize, mut view: View) -> Regs {
    bulk::copy(p, w, c, &mut view);
    let k = p.threads[p.copies[c].thread].kernel;
    let mut starts = Vec::new();
    grid::thread_exit(p, w, k, false, &mut starts, &mut view);
    let mut spawned = Vec::new();
    for s in starts {
        spawn_grid(p, w, s, 0, &view, &mut spawned);
    }
    join(Vec::new(), spawned)
}

fn join(mut out: Regs, spawned: Handles) -> Regs {
    for h in spawned {
        out.extend(h.join().expect("a modeled thread panicked"));
    }
    out
}
