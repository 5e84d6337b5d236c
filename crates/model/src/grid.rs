//! Grids: device-side launch and grid completion.
//!
//! Implements the CUDA Programming Guide, section 4.18 (seed
//! `000_522be91053af7f8d.txt`):
//!
//! - 4.18.3.1 "Global Memory": "All global memory operations in the parent
//!   thread prior to the child grid's invocation are visible to the child
//!   grid." A launch **spawns** the child grid's threads (see
//!   [`crate::thread`]): a spawn orders everything before it in the launching
//!   thread (and everything that happens before that, e.g. other threads'
//!   writes before a `__syncthreads()`) before the child's first operation,
//!   and nothing after it. Writes after the launch are not ordered before the
//!   child.
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

use crate::memory::View;
use crate::program::{Program, Start, Stream};
use crate::resources::{self, CANCELLED};
use crate::stream;
use crate::world::World;

/// `launch child [stream]` by a thread of block `block` of `parent`: what
/// the child's threads get when they are spawned, the set of grids they
/// must wait for in their stream, or [`CANCELLED`] when the launch failed
/// because the launch pool is full (the child never runs). `cache` is the
/// thread's last view of its block's stream state.
pub(crate) fn launch(
    p: &Program,
    w: &World,
    (parent, block): (usize, usize),
    child: usize,
    cache: &mut u64,
) -> u64 {
    if !resources::take_slot(p, w) {
        return CANCELLED;
    }
    let g = &w.grids[parent];
    let pk = &p.kernels[parent];
    if pk.has_devicesync {
        g.launched[block].fetch_or(1 << child, Relaxed);
    }
    let Start::Device { stream, .. } = p.kernels[child].start else {
        return 0;
    };
    match stream {
        Stream::InOrder { slot } | Stream::Tail { slot } if pk.stream_state => {
            stream::enqueue(p, w, (parent, block), slot, child, cache)
        }
        _ => 0,
    }
}

/// A launch of `child` by a thread of `parent` failed (or was made by a
/// grid that never ran): the child never runs. A grid launched outside the
/// tail stream counts as finished at once, holding no slot; `true` when the
/// child is a tail grid, whose threads must still be spawned (as never run)
/// to count as finished after their parent is done.
pub(crate) fn launch_failed(
    p: &Program,
    w: &World,
    parent: usize,
    child: usize,
    starts: &mut Vec<usize>,
    view: &mut View,
) -> bool {
    if let Start::Device {
        stream: Stream::Tail { .. },
        ..
    } = p.kernels[child].start
    {
        return true;
    }
    if p.kernels[parent].done_awaited {
        arrive(p, w, parent, false, starts, view);
    }
    false
}

/// The end of a thread of `kernel` (`cancelled`: its grid never ran).
/// Skipped when nothing awaits the grid's completion (see
/// [`crate::program::KernelInfo::done_awaited`]). `starts` receives the host
/// kernels whose threads the calling thread must now spawn (see
/// [`crate::program::KernelInfo::successor`]).
pub(crate) fn thread_exit(
    p: &Program,
    w: &World,
    kernel: usize,
    cancelled: bool,
    starts: &mut Vec<usize>,
    view: &mut View,
) {
    if p.kernels[kernel].done_awaited {
        arrive(p, w, kernel, cancelled, starts, view);
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
fn arrive(
    p: &Program,
    w: &World,
    g: usize,
    cancelled: bool,
    starts: &mut Vec<usize>,
    view: &mut View,
) {
    let k = &p.kernels[g];
    let complete = |n: usize| n == k.done_target && k.tails == 0;
    let n = w.grids[g].done.add_with(cancelled, view, |n, marked| {
        if complete(n) && frees_slot(p, g, marked) {
            resources::release_slot(p, w);
        }
    });
    if complete(n) {
        finished(p, w, g, starts, view);
    }
}

/// `g` and all the work it launched are complete (and its pool slot, if it
/// held one, is free): tell whoever counts it, and start the host kernel
/// that waits for it alone.
fn finished(p: &Program, w: &World, g: usize, starts: &mut Vec<usize>, view: &mut View) {
    let Start::Device { parent, stream } = p.kernels[g].start else {
        // Host kernels: the host stream waits on the counters themselves,
        // except the successor this completion starts.
        starts.extend(p.kernels[g].successor);
        return;
    };
    let pk = &p.kernels[parent];
    match stream {
        Stream::InOrder { .. } | Stream::FireAndForget => {
            if pk.done_awaited {
                arrive(p, w, parent, false, starts, view);
            }
        }
        Stream::Tail { .. } => {
            if pk.finished_awaited {
                // The parent is done (its tail grids started after that), so
                // whether it ran is settled.
                let frees =
                    p.pool.is_some() && frees_slot(p, parent, w.grids[parent].done.marked());
                let n = w.grids[parent]
                    .tails_finished
                    .add_with(false, view, |n, _| {
                        if n == pk.tails && frees {
                            resources::release_slot(p, w);
                        }
                    });
                if n == pk.tails {
                    finished(p, w, parent, starts, view);
                }
            }
        }
    }
}
