//! The state of one execution: memory and every synchronization object, made
//! fresh by loom's main thread for each execution it explores.

use crate::sync::{AtomicBool, AtomicU64, AtomicUsize};

use crate::latch::{Barrier, Counter};
use crate::memory::Memory;
use crate::program::Program;

/// Per-grid synchronization state (one grid per kernel; its threads form one
/// block).
#[derive(Debug)]
pub(crate) struct GridRt {
    /// Counts the grid's threads' exits and the completion of each grid it
    /// launched outside the tail stream; at `done_target` the grid is done.
    pub done: Counter,
    /// Counts its tail-launched grids that finished.
    pub tails_finished: Counter,
    /// Its block's streams and events (see [`crate::stream`]): for each slot,
    /// a set of grids. Updated with relaxed compare-exchange only, so that it
    /// orders the block's stream operations without making the calling
    /// threads' writes visible to each other.
    pub streams: AtomicU64,
    /// `__syncthreads()` of its one block.
    pub barrier: Barrier,
    /// PDL: whether a thread of the block triggered, and per modeled thread
    /// whether it exited. Relaxed only.
    pub triggered: AtomicBool,
    pub exited: Vec<AtomicBool>,
    /// CDP1: bit set of the kernels its block launched (relaxed).
    pub launched: AtomicUsize,
}

#[derive(Debug)]
pub(crate) struct World {
    pub memory: Memory,
    pub grids: Vec<GridRt>,
    /// Occupied slots of the launch pool (see [`crate::resources`]); used
    /// only when [`Program::pool`] is set.
    pub pool: AtomicUsize,
}

impl World {
    pub(crate) fn new(p: &Program) -> World {
        World {
            memory: Memory::new(&p.memory),
            grids: p
                .kernels
                .iter()
                .map(|k| GridRt {
                    done: Counter::new(),
                    tails_finished: Counter::new(),
                    streams: AtomicU64::new(0),
                    barrier: Barrier::new(k.threads.len()),
                    triggered: AtomicBool::new(false),
                    exited: if k.has_pdl_dependent {
                        k.threads.iter().map(|_| AtomicBool::new(false)).collect()
                    } else {
                        Vec::new()
                    },
                    launched: AtomicUsize::new(0),
                })
                .collect(),
            pool: AtomicUsize::new(0),
        }
    }
}
