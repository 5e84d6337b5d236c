//! The state of one execution: memory and every synchronization object, made
//! fresh by loom's main thread for each execution it explores.

use crate::sync::{AtomicU64, AtomicUsize};

use crate::latch::{Barrier, Counter};
use crate::memory::{AsyncRead, Memory};
use crate::program::Program;

/// Per-grid synchronization state (one grid per kernel, of one or more
/// blocks).
#[derive(Debug)]
pub(crate) struct GridRt {
    /// Counts the grid's threads' exits (every block's) and the completion
    /// of each grid it launched outside the tail stream; at `done_target`
    /// the grid is done.
    pub done: Counter,
    /// Counts its tail-launched grids that finished.
    pub tails_finished: Counter,
    /// Per block, the block's streams and events (see [`crate::stream`]):
    /// for each slot, a set of grids. Updated with relaxed compare-exchange
    /// only, so that it orders the block's stream operations without making
    /// the calling threads' writes visible to each other.
    pub streams: Vec<AtomicU64>,
    /// Per block, its `__syncthreads()`.
    pub barrier: Vec<Barrier>,
    /// PDL (see [`crate::pdl`]): per block, whether a thread triggered and
    /// how many exited; the number of blocks whose trigger counts. Relaxed
    /// only.
    pub pdl_blocks: Vec<AtomicUsize>,
    pub pdl_counted: AtomicUsize,
    /// CDP1: per block, the bit set of the kernels it launched (relaxed).
    pub launched: Vec<AtomicUsize>,
}

#[derive(Debug)]
pub(crate) struct World {
    pub memory: Memory,
    pub grids: Vec<GridRt>,
    /// Occupied slots of the launch pool (see [`crate::resources`]); used
    /// only when [`Program::pool`] is set.
    pub pool: AtomicUsize,
    /// Per mbarrier, its arrivals: the issue of its bulk load, then the
    /// copy's completion (see [`crate::bulk`]).
    pub mbarriers: Vec<Counter>,
    /// Per bulk copy, its progress: 1 once it read its source, 2 once it
    /// wrote its destination.
    pub copies: Vec<Counter>,
    /// How each copy's read of each word takes its value in this
    /// exploration (see [`crate::program::Copy::first_read`]).
    pub reads: Vec<AsyncRead>,
}

impl World {
    pub(crate) fn new(p: &Program, reads: &[AsyncRead]) -> World {
        World {
            mbarriers: (0..p.mbarriers).map(|_| Counter::new()).collect(),
            copies: p.copies.iter().map(|_| Counter::new()).collect(),
            reads: reads.to_vec(),
            memory: Memory::new(&p.memory),
            grids: p
                .kernels
                .iter()
                .map(|k| GridRt {
                    done: Counter::new(),
                    tails_finished: Counter::new(),
                    streams: k.blocks.iter().map(|_| AtomicU64::new(0)).collect(),
                    barrier: k.blocks.iter().map(|b| Barrier::new(b.len())).collect(),
                    pdl_blocks: k.blocks.iter().map(|_| AtomicUsize::new(0)).collect(),
                    pdl_counted: AtomicUsize::new(0),
                    launched: k.blocks.iter().map(|_| AtomicUsize::new(0)).collect(),
                })
                .collect(),
            pool: AtomicUsize::new(0),
        }
    }
}
