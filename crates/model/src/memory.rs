//! Global memory: one loom atomic per location, every access `Relaxed`.
//!
//! Implements the guide's weak consistency between grids (CUDA Programming
//! Guide 4.18.3.1 "Global Memory": "Parent and child grids have coherent
//! access to global memory, with weak consistency guarantees between child
//! and parent"). A location is coherent (loom keeps a modification order per
//! atomic), and a load may return any store that no happens-before edge has
//! hidden, so nothing written by one thread is visible to another without one
//! of the explicit edges of [`crate::latch`].
//!
//! Plain CUDA loads and stores are not atomics, but litmus tests only race on
//! them to observe staleness; modelling them as relaxed atomics gives them
//! per-location coherence (which the guide's "coherent access" promises) and
//! lets loom enumerate the values a racy read may return instead of reporting
//! a data race.

use std::sync::atomic::Ordering::Relaxed;

use loom::sync::atomic::AtomicU32;

#[derive(Debug)]
pub(crate) struct Memory {
    cells: Vec<AtomicU32>,
}

impl Memory {
    /// Initialised by loom's main thread before it spawns the GPU threads, so
    /// the initial values are visible everywhere.
    pub(crate) fn new(init: &[(String, u32)]) -> Memory {
        Memory {
            cells: init.iter().map(|(_, v)| AtomicU32::new(*v)).collect(),
        }
    }

    pub(crate) fn load(&self, loc: usize) -> u32 {
        self.cells[loc].load(Relaxed)
    }

    pub(crate) fn store(&self, loc: usize, value: u32) {
        self.cells[loc].store(value, Relaxed)
    }

    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }
}
