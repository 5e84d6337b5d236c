//! The thread block: `__syncthreads()`.
//!
//! Each block of a litmus kernel's grid is its own set of modeled threads.
//! `syncthreads` is a barrier of the block's threads, and of no other
//! block's: every thread of the block arrives, then all leave, with
//! happens-before from every arrival to every departure. This is
//! what the CUDA Programming Guide's example in 4.18.3.1 "Global Memory" (seed
//! `000_522be91053af7f8d.txt`) relies on: "Due to the first
//! `__syncthreads()` call, the child will see `data[0]=0`, `data[1]=1`, …,
//! `data[255]=255` (without the `__syncthreads()` call, only `data[0]=0`
//! would be guaranteed to be seen by the child)". The barrier orders the
//! other threads' writes before the launching thread's launch, and the launch
//! passes them on to the child.
//!
//! Every thread of a block must execute the same number of barriers;
//! [`crate::program`] rejects a test where they do not, as the deadlock it is.

use crate::program::Program;
use crate::world::World;

/// `__syncthreads()` by a thread of block `block` of `kernel`.
pub(crate) fn syncthreads(
    p: &Program,
    w: &World,
    kernel: usize,
    block: usize,
    view: &mut crate::memory::View,
) {
    if p.kernels[kernel].blocks[block].len() > 1 {
        w.grids[kernel].barrier[block].wait(view);
    }
}
