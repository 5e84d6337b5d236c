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
//!
//! # A workaround for loom's modification order
//!
//! loom 0.7 can let a relaxed load after the joins return a store that is
//! not the last one (loom issue #282, "loom does not respect modification
//! order"): in `t1: y = 3; barrier || t0: y = 1; launch c; barrier; load y
//! || c: y = 5` it reported the final `y = 1`, although `y = 1` happens
//! before `c`'s `y = 5` (reproduced with bare loom, no model code). The final
//! value of a location is therefore not loaded: every store also records its
//! value, in the order the stores ran ([`crate::sync::store_in_order`]), and
//! the final value is the last one recorded. That order is a modification
//! order consistent with happens-before (loom runs one thread at a time, and
//! every edge orders execution), so the final value is coherent. Loads
//! during the execution still come from loom, which issue #282 may affect.

use crate::sync::Ordering::Relaxed;

use crate::sync::AtomicU32;

#[derive(Debug)]
pub(crate) struct Memory {
    cells: Vec<AtomicU32>,
    /// One per cell, only ever stored to: see the module docs.
    shadows: Vec<AtomicU32>,
    /// One per cell: the value of its last store, in the order the stores
    /// ran (see the module docs). Not a loom object: it adds no scheduling
    /// point.
    last: Vec<std::sync::Mutex<u32>>,
}

impl Memory {
    /// Initialised by loom's main thread before it spawns the GPU threads, so
    /// the initial values are visible everywhere.
    pub(crate) fn new(init: &[(String, u32)]) -> Memory {
        Memory {
            cells: init.iter().map(|(_, v)| AtomicU32::new(*v)).collect(),
            shadows: init.iter().map(|_| AtomicU32::new(0)).collect(),
            last: init
                .iter()
                .map(|(_, v)| std::sync::Mutex::new(*v))
                .collect(),
        }
    }

    pub(crate) fn load(&self, loc: usize) -> u32 {
        self.shadows[loc].store(0, Relaxed);
        self.cells[loc].load(Relaxed)
    }

    pub(crate) fn store(&self, loc: usize, value: u32) {
        self.shadows[loc].store(0, Relaxed);
        crate::sync::store_in_order(&self.cells[loc], &self.last[loc], value)
    }

    /// The final value, read by loom's main thread after every join: the
    /// last store that ran (see the module docs).
    pub(crate) fn final_value(&self, loc: usize) -> u32 {
        *self.last[loc].lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }
}
