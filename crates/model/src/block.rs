//! The thread block: `__syncthreads()`.
//!
//! Each kernel of a litmus test is one thread block of its modeled threads.
//! `syncthreads` is a barrier of all of them: every thread arrives, then all
//! leave, with happens-before from every arrival to every departure. This is
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

pub(crate) fn syncthreads(p: &Program, w: &World, kernel: usize, view: &mut crate::memory::View) {
    if p.kernels[kernel].threads.len() > 1 {
        w.grids[kernel].barrier.wait(view);
    }
}
