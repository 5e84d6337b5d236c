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
//!
//! # A workaround for loom's partial-order reduction
//!
//! loom 0.7 decides which interleavings to try by looking, for each access,
//! at the *last* access to the same object it depends on; loads do not
//! depend on loads. So in `T1: load x` / `T2: load x; store x 3`, T2's store
//! only looks at T2's own load, misses its race with T1's load, and loom
//! never runs T2 before T1: the state where T1 reads 3 is lost (loom issues
//! #166 and #392; a property test of this crate found it). Every access to a
//! location therefore first stores to the location's *shadow* atomic, which
//! nothing reads: stores to one object all depend on each other, so loom
//! tries every order of the accesses to each location, and the location's
//! own load/store rules then give the values. The shadow stores carry no
//! synchronization (relaxed) and add one scheduling point per access.

use crate::sync::Ordering::Relaxed;

use crate::sync::AtomicU32;

#[derive(Debug)]
pub(crate) struct Memory {
    cells: Vec<AtomicU32>,
    /// One per cell, only ever stored to: see the module docs.
    shadows: Vec<AtomicU32>,
}

impl Memory {
    /// Initialised by loom's main thread before it spawns the GPU threads, so
    /// the initial values are visible everywhere.
    pub(crate) fn new(init: &[(String, u32)]) -> Memory {
        Memory {
            cells: init.iter().map(|(_, v)| AtomicU32::new(*v)).collect(),
            shadows: init.iter().map(|_| AtomicU32::new(0)).collect(),
        }
    }

    pub(crate) fn load(&self, loc: usize) -> u32 {
        self.shadows[loc].store(0, Relaxed);
        self.cells[loc].load(Relaxed)
    }

    pub(crate) fn store(&self, loc: usize, value: u32) {
        self.shadows[loc].store(0, Relaxed);
        self.cells[loc].store(value, Relaxed)
    }

    /// The final value, read by loom's main thread after every join.
    pub(crate) fn final_value(&self, loc: usize) -> u32 {
        self.cells[loc].load(Relaxed)
    }

    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }
}
