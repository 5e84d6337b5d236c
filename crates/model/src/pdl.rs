//! Programmatic Dependent Launch: trigger, early start, and
//! `cudaGridDependencySynchronize()`.
//!
//! Implements the CUDA Programming Guide, section 4.5.2 "API Description"
//! (seed `004_4dd208244d7b3c90.txt`):
//!
//! - A host kernel launched with `cudaLaunchAttributeProgrammaticStreamSerialization`
//!   (the *secondary*) may start once every thread block of the previous
//!   kernel in the stream (the *primary*) executed
//!   `cudaTriggerProgrammaticLaunchCompletion()` or exited: "The CUDA driver
//!   can launch the secondary kernel when all primary thread blocks have
//!   launched and executed `cudaTriggerProgrammaticLaunchCompletion`. If the
//!   primary kernel doesn't execute the trigger, it implicitly occurs after
//!   all thread blocks in the primary kernel exit." The unit is the block
//!   (spec decision on `pdl.trigger.all-blocks-should-trigger`, after
//!   `cuda_device_runtime_api.h`: "when every CTAs in the grid has either
//!   exited or called this function at least once"): a block of the primary
//!   counts once any of its threads triggered, or once all of them exited,
//!   and the secondary may start once every block counts.
//! - The start permission carries **no** happens-before: "the secondary
//!   thread blocks might launch before data written by the primary kernel is
//!   visible". Each block of the primary has a word that its threads'
//!   triggers and exits update with relaxed read-modify-writes; the one
//!   that makes the block count (its first trigger, or the last exit of a
//!   block that never triggered) adds one to the grid's relaxed count of
//!   counted blocks; the secondary's first thread spins on that count with
//!   relaxed loads (and then spawns the secondary's other threads) and
//!   `yield_now()` between rounds. Relaxed stores and loads give loom no synchronization,
//!   and loom's yield rule (a load after a yield does not return again a store
//!   it already saw when a newer one exists) makes the spin terminate. Every
//!   primary write, before or after its trigger, may therefore be stale in
//!   the secondary until it synchronizes.
//! - `cudaGridDependencySynchronize()`: "Will block until all primary kernels
//!   the secondary kernel is dependent on have completed and flushed results
//!   to global memory": waits for the primary grid to finish (and, in stream
//!   order, any kernel the primary itself overlapped), with full
//!   happens-before from its completion count.
//! - In a kernel not launched with PDL, `gridsync` is a no-op (its start
//!   already waited for its predecessor's completion); `trigger` in a kernel
//!   with no PDL secondary is a no-op. Device-launched kernels have neither.

use crate::sync::Ordering::Relaxed;

use crate::completion::wait_finished;
use crate::memory::View;
use crate::program::{Program, Start};
use crate::world::World;

/// A block's PDL word: bit 0, a thread of the block triggered; the rest,
/// how many of its threads that never triggered exited.
const TRIGGERED: usize = 1;
const EXITED: usize = 2;

/// The block's trigger counts (its first trigger, or its last exit when no
/// thread triggered): one more block of the grid counts.
fn block_counted(w: &World, kernel: usize) {
    w.grids[kernel].pdl_counted.fetch_add(1, Relaxed);
}

/// `trigger` by a thread of block `block`: the block has triggered, and
/// counts unless it already did. `done` tracks whether this thread already
/// triggered, so that only its first trigger acts.
pub(crate) fn trigger(p: &Program, w: &World, kernel: usize, block: usize, done: &mut bool) {
    let k = &p.kernels[kernel];
    if k.has_pdl_dependent && !*done {
        let prev = w.grids[kernel].pdl_blocks[block].fetch_or(TRIGGERED, Relaxed);
        if prev & TRIGGERED == 0 && prev / EXITED < k.blocks[block].len() {
            block_counted(w, kernel);
        }
        *done = true;
    }
}

/// The exit of a thread of block `block` of a kernel with a PDL secondary
/// (`triggered`: the thread triggered, so its block already counts). The
/// last thread of a block none of whose threads triggered makes it count.
pub(crate) fn exit(p: &Program, w: &World, kernel: usize, block: usize, triggered: bool) {
    let k = &p.kernels[kernel];
    if k.has_pdl_dependent && !triggered {
        let prev = w.grids[kernel].pdl_blocks[block].fetch_add(EXITED, Relaxed);
        if prev & TRIGGERED == 0 && prev / EXITED + 1 == k.blocks[block].len() {
            block_counted(w, kernel);
        }
    }
}

/// A secondary's start: spins until every block of the primary counts,
/// without synchronizing with them.
pub(crate) fn wait_for_triggers(p: &Program, w: &World, primary: usize) {
    let blocks = p.kernels[primary].blocks.len();
    while w.grids[primary].pdl_counted.load(Relaxed) < blocks {
        crate::sync::yield_now();
    }
}

/// Whether thread `tid` is the first thread of a PDL secondary: the one
/// that waits for the primary's blocks to count, then spawns the
/// secondary's other threads and the first thread of the next PDL
/// secondary, if there is one (each would otherwise spin at once, and loom
/// can switch between spinners without bound). The spawn orders only the
/// first thread's start before theirs: nothing happens before it but the
/// execution's start (it was spawned at the start, or the same way by its
/// primary's first thread) and relaxed loads, which carry no
/// happens-before. The next secondary cannot start earlier anyway: its
/// primary's blocks count only once they run.
pub(crate) fn leads_secondary(p: &Program, tid: usize) -> bool {
    let k = &p.kernels[p.threads[tid].kernel];
    matches!(k.start, Start::HostPdl { .. }) && k.threads.first() == Some(&tid)
}

/// `gridsync`: the first call in a PDL secondary's thread waits for its
/// primary's completion; later calls and calls elsewhere do nothing.
pub(crate) fn gridsync(p: &Program, w: &World, kernel: usize, done: &mut bool, view: &mut View) {
    if let Start::HostPdl { wait, .. } = &p.kernels[kernel].start
        && !*done
    {
        for &j in wait {
            wait_finished(p, w, j, view);
        }
        *done = true;
    }
    // A wait for a grid's completion is a grid boundary: a proxy fence
    // (see `bulk.rs`), in every call that waits or waited.
    if let Start::HostPdl { .. } = &p.kernels[kernel].start {
        view.fence();
    }
}
