//! The state of one execution: memory and every synchronization object, made
//! fresh by loom's main thread for each execution it explores.

use loom::sync::atomic::{AtomicBool, AtomicUsize};

use crate::latch::{Barrier, Counter, Gate};
use crate::memory::Memory;
use crate::program::Program;

/// Per-grid synchronization state (one grid per kernel; its threads form one
/// block).
#[derive(Debug)]
pub(crate) struct GridRt {
    /// Opened by the launching thread at the launch; carries the stream ticket.
    pub start: Gate,
    /// Counts the grid's threads' exits and the completion of each grid it
    /// launched outside the tail stream; at `done_target` the grid is done.
    pub done: Counter,
    /// Counts its tail-launched grids that finished.
    pub tails_finished: Counter,
    /// Counts the grids of its block's NULL stream that finished.
    pub null_finished: Counter,
    /// Tickets for ordered launches into the NULL stream and the tail stream.
    /// Taken with relaxed read-modify-writes, which order the launches
    /// without making the launching threads' writes visible to each other.
    pub null_tickets: AtomicUsize,
    pub tail_tickets: AtomicUsize,
    /// `__syncthreads()` of its one block.
    pub barrier: Barrier,
    /// PDL: per modeled thread, whether it triggered (or exited). Relaxed only.
    pub triggered: Vec<AtomicBool>,
    /// CDP1: bit set of the kernels its block launched (relaxed).
    pub launched: AtomicUsize,
}

#[derive(Debug)]
pub(crate) struct World {
    pub memory: Memory,
    pub grids: Vec<GridRt>,
}

impl World {
    pub(crate) fn new(p: &Program) -> World {
        World {
            memory: Memory::new(&p.memory),
            grids: p
                .kernels
                .iter()
                .map(|k| GridRt {
                    start: Gate::new(),
                    done: Counter::new(),
                    tails_finished: Counter::new(),
                    null_finished: Counter::new(),
                    null_tickets: AtomicUsize::new(0),
                    tail_tickets: AtomicUsize::new(0),
                    barrier: Barrier::new(k.threads.len()),
                    triggered: if k.has_pdl_dependent {
                        k.threads.iter().map(|_| AtomicBool::new(false)).collect()
                    } else {
                        Vec::new()
                    },
                    launched: AtomicUsize::new(0),
                })
                .collect(),
        }
    }
}
