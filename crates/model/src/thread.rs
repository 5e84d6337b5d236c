//! A modeled GPU thread: one loom thread that waits for its grid's start,
//! runs its operations in program order and reports its exit.
//!
//! Registers are thread-local and come back to loom's main thread through the
//! join, in the order of the thread's loads.

use crate::program::{MOp, Program};
use crate::world::World;
use crate::{block, cdp1, grid, pdl, stream};

pub(crate) fn run(p: &Program, w: &World, tid: usize) -> Vec<u32> {
    let t = &p.threads[tid];
    let k = t.kernel;
    let mut regs = Vec::with_capacity(t.regs.len());
    let mut triggered = false;
    let mut synced = false;
    let mut streams = 0;
    stream::wait_start(p, w, k);
    for op in &t.ops {
        match *op {
            MOp::Store { loc, value } => w.memory.store(loc, value),
            MOp::Load { loc } => regs.push(w.memory.load(loc)),
            MOp::SyncThreads => block::syncthreads(p, w, k),
            MOp::Launch { child } => grid::launch(p, w, k, child, &mut streams),
            MOp::Record { event, stream } => stream::record(p, w, k, event, stream, &mut streams),
            MOp::WaitEvent { stream, event } => {
                stream::wait_event(p, w, k, stream, event, &mut streams)
            }
            MOp::Trigger => pdl::trigger(p, w, k, &mut triggered),
            MOp::GridSync => pdl::gridsync(p, w, k, &mut synced),
            MOp::DeviceSync => cdp1::devicesync(p, w, k),
        }
    }
    // Exit: the PDL exit flag, then one arrival on the grid's completion
    // count.
    pdl::exit(p, w, k, t.slot);
    grid::thread_exit(p, w, k);
    regs
}
