//! Legacy CUDA Dynamic Parallelism (CDP1): device-side `cudaDeviceSynchronize()`.
//!
//! Implements the CDP1 programming guide (seed `001_6a6bb1cdd39dff41.txt`):
//! a thread calling `cudaDeviceSynchronize()` waits for the work launched by
//! its thread block to complete, and the child grids' writes are then visible
//! to it. The model waits for every grid the block launched so far, each to
//! its full completion, with happens-before.
//!
//! "Launched so far" is read from a bit set the block's launching threads
//! update with relaxed read-modify-writes, and read with one too: the
//! calling thread sees every launch that came before its call in the order
//! of the block's launches (always its own; another thread's when a barrier
//! orders it first; without one, depending on the interleaving). The read
//! and the updates synchronize nothing: the child's writes become visible
//! only through the wait for its completion. A `devicesync` that waits for a grid the block tail-launched can
//! never return (the tail starts after the block is done): loom reports the
//! deadlock and [`crate::check`] returns it as an error. (CDP2 rejects
//! `cudaDeviceSynchronize()` in device code at compile time, 4.18.5.3.)

use crate::sync::Ordering::Relaxed;

use crate::completion::wait_finished;
use crate::memory::View;
use crate::program::Program;
use crate::resources::SYNC_DEPTH_EXCEEDED;
use crate::world::World;

/// `devicesync` by a thread of block `block` of `kernel`: its
/// `cudaError_t`. It waits for the launches of its own block only. Beyond
/// the synchronization depth it fails at once and waits for nothing (see
/// [`crate::resources`]).
pub(crate) fn devicesync(
    p: &Program,
    w: &World,
    (kernel, block): (usize, usize),
    view: &mut View,
) -> u32 {
    if p.kernels[kernel].sync_depth_exceeded {
        return SYNC_DEPTH_EXCEEDED;
    }
    // A read-modify-write, not a load: it reads the latest launches in the
    // location's modification order, and loom's partial-order reduction
    // tracks read-modify-writes completely (see `crate::memory`).
    let mask = w.grids[kernel].launched[block].fetch_or(0, Relaxed);
    for c in 0..p.kernels.len() {
        if mask & (1 << c) != 0 {
            wait_finished(p, w, c, view);
        }
    }
    // A wait for grids' completion is a grid boundary: a proxy fence (see
    // `bulk.rs`).
    view.fence();
    0
}
