//! A modeled GPU thread: one loom thread that waits for its grid's start,
//! runs its operations in program order and reports its exit.
//!
//! Registers are thread-local and come back to loom's main thread through the
//! join, in program order. So is the thread's last error
//! ([`crate::resources::LastError`]): nothing else ever reads it.
//!
//! A thread of a grid whose launch failed (or whose launcher never ran) runs
//! no operation: it cancels the launches it would have made, and its
//! registers keep their initial value, 0, as the GPU runner's zeroed
//! register array does.

use crate::program::{MOp, Program};
use crate::resources::{LAUNCH_PENDING_COUNT_EXCEEDED, LastError};
use crate::world::World;
use crate::{block, cdp1, grid, pdl, stream};

pub(crate) fn run(p: &Program, w: &World, tid: usize) -> Vec<u32> {
    let t = &p.threads[tid];
    let k = t.kernel;
    if !stream::wait_start(p, w, k) {
        for op in &t.ops {
            if let MOp::Launch { child } = *op {
                grid::cancel(w, child);
            }
        }
        grid::thread_exit(p, w, k, true);
        return vec![0; t.regs.len()];
    }
    let mut regs = Vec::with_capacity(t.regs.len());
    let mut triggered = false;
    let mut synced = false;
    let mut streams = 0;
    let mut last_error = LastError::default();
    for op in &t.ops {
        match *op {
            MOp::Store { loc, value } => w.memory.store(loc, value),
            MOp::Load { loc } => regs.push(w.memory.load(loc)),
            MOp::SyncThreads => block::syncthreads(p, w, k),
            MOp::Launch { child } => {
                if !grid::launch(p, w, k, child, &mut streams) {
                    last_error.set(LAUNCH_PENDING_COUNT_EXCEEDED);
                }
            }
            MOp::Record { event, stream } => stream::record(p, w, k, event, stream, &mut streams),
            MOp::WaitEvent { stream, event } => {
                stream::wait_event(p, w, k, stream, event, &mut streams)
            }
            MOp::Trigger => pdl::trigger(p, w, k, &mut triggered),
            MOp::GridSync => pdl::gridsync(p, w, k, &mut synced),
            MOp::DeviceSync { record } => {
                let code = cdp1::devicesync(p, w, k);
                if code != 0 {
                    last_error.set(code);
                }
                if record {
                    regs.push(code);
                }
            }
            MOp::GetError => regs.push(last_error.get()),
            MOp::PeekError => regs.push(last_error.peek()),
        }
    }
    // Exit: the PDL exit flag, then one arrival on the grid's completion
    // count.
    pdl::exit(p, w, k, t.slot);
    grid::thread_exit(p, w, k, false);
    regs
}
