//! Waiting for a grid's completion: what a tail grid, a stream successor, a
//! host successor, `cudaGridDependencySynchronize()` and CDP1
//! `cudaDeviceSynchronize()` do (see [`crate::grid`] for how a grid becomes
//! done and finished). Each wait is on a completion count of
//! [`crate::latch`], so it carries happens-before, and the coherence view
//! (see [`crate::memory`]), from everything the count counted.

use crate::memory::View;
use crate::program::Program;
use crate::world::World;

/// Blocks until `g` is done (its threads exited, its non-tail work finished).
pub(crate) fn wait_done(p: &Program, w: &World, g: usize, view: &mut View) {
    w.grids[g]
        .done
        .wait_at_least(p.kernels[g].done_target, view);
}

/// Blocks until `g` is finished (done, and its tail grids finished), with
/// happens-before from all of it.
pub(crate) fn wait_finished(p: &Program, w: &World, g: usize, view: &mut View) {
    let k = &p.kernels[g];
    if k.tails == 0 {
        wait_done(p, w, g, view);
    } else {
        w.grids[g].tails_finished.wait_at_least(k.tails, view);
    }
}
