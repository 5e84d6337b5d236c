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
//!   exited or called this function at least once"): the primary's one
//!   block has triggered once any of its threads did, or once all of them
//!   exited.
//! - The start permission carries **no** happens-before: "the secondary
//!   thread blocks might launch before data written by the primary kernel is
//!   visible". A trigger sets the primary block's relaxed `triggered` flag,
//!   each primary thread's exit its relaxed `exited` flag; each secondary
//!   thread spins on the flags with relaxed loads and
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

/// `trigger`: the block has triggered. `done` tracks whether this thread
/// already did, so that only its first trigger stores.
pub(crate) fn trigger(p: &Program, w: &World, kernel: usize, done: &mut bool) {
    if p.kernels[kernel].has_pdl_dependent && !*done {
        w.grids[kernel].triggered.store(true, Relaxed);
        *done = true;
    }
}

/// The exit of a thread of a kernel with a PDL secondary.
pub(crate) fn exit(p: &Program, w: &World, kernel: usize, slot: usize) {
    if p.kernels[kernel].has_pdl_dependent {
        w.grids[kernel].exited[slot].store(true, Relaxed);
    }
}

/// A secondary's start: spins until the primary's block triggered or all its
/// threads exited, without synchronizing with them.
pub(crate) fn wait_for_triggers(w: &World, primary: usize) {
    let g = &w.grids[primary];
    while !(g.triggered.load(Relaxed) || g.exited.iter().all(|f| f.load(Relaxed))) {
        crate::sync::yield_now();
    }
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
}
