//! Waiting for a grid's completion: what a tail grid, a stream successor, a
//! host successor, `cudaGridDependencySynchronize()` and CDP1
//! `cudaDeviceSynchronize()` do (see [`crate::grid`] for how a grid becomes
//! done and finished). Each wait is on a completion count of
//! [`crate::latch`], so it carries happens-before, and the coherence view
//! (see [`crate::memory`]), from everything the count counted.
//!
//! At compile time, [`mark_awaited`] finds the completions something
//! waits for: only those are counted.

use crate::memory::View;
use crate::program::{KernelInfo, Program, Start, Stream};
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

/// Computes [`KernelInfo::done_awaited`] and
/// [`KernelInfo::finished_awaited`]: a fixed point over the launch tree.
/// With the launch pool modeled, every device grid is awaited: its
/// completion releases its slot.
pub(crate) fn mark_awaited(kernels: &mut [KernelInfo], waited_for: &[bool], pool: bool) {
    let n = kernels.len();
    let mut done = vec![false; n];
    let mut fin = vec![false; n];
    for (g, k) in kernels.iter().enumerate() {
        if let Start::HostAfter { wait } | Start::HostPdl { wait, .. } = &k.start {
            for &j in wait {
                fin[j] = true;
            }
        }
        // Its tail grids wait for it to be done.
        if k.tails > 0 {
            done[g] = true;
        }
        // Stream successors, events, `devicesync` and the pool wait for it.
        if let Start::Device { parent, .. } = k.start
            && (waited_for[g] || kernels[parent].has_devicesync || pool)
        {
            fin[g] = true;
        }
    }
    loop {
        let mut changed = false;
        let mut set = |v: &mut Vec<bool>, i: usize| {
            if !v[i] {
                v[i] = true;
                changed = true;
            }
        };
        for g in 0..n {
            if fin[g] {
                set(&mut done, g);
            }
            if let Start::Device { parent, stream } = kernels[g].start {
                let tail = matches!(stream, Stream::Tail { .. });
                // A done parent counts its non-tail children's completion; a
                // finished parent, its tail grids'.
                if (!tail && done[parent]) || (tail && fin[parent]) {
                    set(&mut fin, g);
                }
            }
        }
        if !changed {
            break;
        }
    }
    for (g, k) in kernels.iter_mut().enumerate() {
        k.done_awaited = done[g];
        k.finished_awaited = fin[g];
    }
}
