//! Legacy CUDA Dynamic Parallelism (CDP1): device-side `cudaDeviceSynchronize()`.
//!
//! Implements the CDP1 programming guide (seed `001_6a6bb1cdd39dff41.txt`):
//! a thread calling `cudaDeviceSynchronize()` waits for the work launched by
//! its thread block to complete, and the child grids' writes are then visible
//! to it. The model waits for every grid the block launched so far, each to
//! its full completion, with happens-before.
//!
//! "Launched so far" is read from a relaxed bit set the block's launching
//! threads update with relaxed read-modify-writes: the calling thread always
//! sees its own launches, and sees another thread's launch when a barrier
//! (or another edge) orders it first; without one it may or may not, as on
//! hardware. A `devicesync` that waits for a grid the block tail-launched can
//! never return (the tail starts after the block is done): loom reports the
//! deadlock and [`crate::check`] returns it as an error. (CDP2 rejects
//! `cudaDeviceSynchronize()` in device code at compile time, 4.18.5.3.)

use std::sync::atomic::Ordering::Relaxed;

use crate::grid::wait_finished;
use crate::program::Program;
use crate::world::World;

pub(crate) fn devicesync(p: &Program, w: &World, kernel: usize) {
    let mask = w.grids[kernel].launched.load(Relaxed);
    for c in 0..p.kernels.len() {
        if mask & (1 << c) != 0 {
            wait_finished(p, w, c);
        }
    }
}
