//! Grids: device-side launch and grid completion.
//!
//! Implements the CUDA Programming Guide, section 4.18 (seed
//! `000_522be91053af7f8d.txt`):
//!
//! - 4.18.3.1 "Global Memory": "All global memory operations in the parent
//!   thread prior to the child grid's invocation are visible to the child
//!   grid." A launch opens the child's start [`Gate`](crate::latch::Gate);
//!   every thread of the child waits on it before its first operation, so the
//!   launching thread's earlier writes (and everything that happens before
//!   them, e.g. other threads' writes before a `__syncthreads()`) are visible
//!   to the child. Writes after the launch are not ordered before the child.
//! - 4.18.2.1 "Parent and Child Grids": "the parent grid is not considered
//!   complete until all child grids created by its threads have completed".
//!   Completion is a count-down [`Counter`](crate::latch::Counter), never a
//!   thread join: a grid is *done* when its threads exited and every grid it
//!   launched outside the tail stream is *finished*; it is *finished* when it
//!   is done and every grid it tail-launched is finished (4.18.2.3: "all work
//!   launched by a grid is implicitly synchronized when the grid exits").
//!   The arrival that completes a count cascades to the parent, so that
//!   happens-before runs from every thread of a grid, and of all its
//!   descendants, to whoever waits for its completion.
//! - The parent never waits for its children itself: "As it is not possible
//!   to explicitly synchronize child work from a parent thread, there is no
//!   way to guarantee that changes occurring in child grids are visible to
//!   threads within the parent grid" (4.18.4.2.3). No edge goes from a child
//!   back to its parent's threads.

use crate::sync::Ordering::Relaxed;

use crate::program::{Program, Start, Stream};
use crate::resources::{self, CANCELLED};
use crate::stream;
use crate::world::World;

/// `launch child [stream]` by a thread of `parent`. `cache` is the thread's
/// last view of its block's stream state. `false` when the launch failed
/// because the launch pool is full: the child never runs.
pub(crate) fn launch(p: &Program, w: &World, parent: usize, child: usize, cache: &mut u64) -> bool {
    if !resources::take_slot(p, w) {
        cancel(w, child);
        return false;
    }
    let g = &w.grids[parent];
    let pk = &p.kernels[parent];
    if pk.has_devicesync {
        g.launched.fetch_or(1 << child, Relaxed);
    }
    let Start::Device { stream, .. } = p.kernels[child].start else {
        return true;
    };
    let deps = match stream {
        Stream::InOrder { slot } | Stream::Tail { slot } if pk.stream_state => {
            stream::enqueue(p, w, parent, slot, child, cache)
        }
        _ => 0,
    };
    // A tail grid waits for its parent grid's completion, which already
    // happens after this launch: it needs the gate only for its stream
    // predecessors or a cancellation (see `KernelInfo::gated`).
    if p.kernels[child].gated {
        w.grids[child].start.open(deps);
    }
    true
}

/// The launch of `child` failed, or its launcher never ran: its threads
/// skip their operations (and cancel their own launches).
pub(crate) fn cancel(w: &World, child: usize) {
    w.grids[child].start.open(CANCELLED);
}

/// The end of a thread of `kernel` (`cancelled`: its grid never ran).
/// Skipped when nothing awaits the grid's completion (see
/// [`crate::program::KernelInfo::done_awaited`]).
pub(crate) fn thread_exit(p: &Program, w: &World, kernel: usize, cancelled: bool) {
    if p.kernels[kernel].done_awaited {
        arrive(p, w, kernel, cancelled);
    }
}

/// Whether a device grid that completes with this arrival frees a pool slot:
/// the pool is modeled, and the grid ran (a failed launch took no slot).
fn frees_slot(p: &Program, g: usize, cancelled: bool) -> bool {
    p.pool.is_some() && !cancelled && matches!(p.kernels[g].start, Start::Device { .. })
}

/// One arrival on `g`'s completion count: a thread's exit (`cancelled` when
/// its grid never ran) or a non-tail child's completion. When it completes
/// a grid without tail grids, the grid's pool slot is freed before anyone
/// can see the completion.
fn arrive(p: &Program, w: &World, g: usize, cancelled: bool) {
    let k = &p.kernels[g];
    let complete = |n: usize| n == k.done_target && k.tails == 0;
    let n = w.grids[g].done.add_with(cancelled, |n, marked| {
        if complete(n) && frees_slot(p, g, marked) {
            resources::release_slot(p, w);
        }
    });
    if complete(n) {
        finished(p, w, g);
    }
}

/// `g` and all the work it launched are complete (and its pool slot, if it
/// held one, is free): tell whoever counts it.
fn finished(p: &Program, w: &World, g: usize) {
    let Start::Device { parent, stream } = p.kernels[g].start else {
        // Host kernels: the host stream waits on the counters themselves.
        return;
    };
    let pk = &p.kernels[parent];
    match stream {
        Stream::InOrder { .. } | Stream::FireAndForget => {
            if pk.done_awaited {
                arrive(p, w, parent, false);
            }
        }
        Stream::Tail { .. } => {
            if pk.finished_awaited {
                // The parent is done (its tail grids started after that), so
                // whether it ran is settled.
                let frees =
                    p.pool.is_some() && frees_slot(p, parent, w.grids[parent].done.marked());
                let n = w.grids[parent].tails_finished.add_with(false, |n, _| {
                    if n == pk.tails && frees {
                        resources::release_slot(p, w);
                    }
                });
                if n == pk.tails {
                    finished(p, w, parent);
                }
            }
        }
    }
}

/// Blocks until `g` is done (its threads exited, its non-tail work finished).
pub(crate) fn wait_done(p: &Program, w: &World, g: usize) {
    w.grids[g].done.wait_at_least(p.kernels[g].done_target);
}

/// Blocks until `g` is finished (done, and its tail grids finished), with
/// happens-before from all of it.
pub(crate) fn wait_finished(p: &Program, w: &World, g: usize) {
    let k = &p.kernels[g];
    if k.tails == 0 {
        wait_done(p, w, g);
    } else {
        w.grids[g].tails_finished.wait_at_least(k.tails);
    }
}
