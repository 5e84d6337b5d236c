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
//! loom 0.7 can let a relaxed load return a store that coherence forbids
//! (loom issue #282, "loom does not respect modification order"): in
//! `t0: store x 1 || t1: store x 2; load r0 x` it returned r0 = 1 after
//! t1's own store 2 had run after store 1, and in `t1: y = 3; barrier || t0:
//! y = 1; launch c; barrier; load y || c: y = 5` a load after the joins
//! returned `y = 1`, although `c`'s `y = 5` follows it. (The differential
//! test against the axiomatic model found the first shape; bare loom
//! reproduces both.)
//!
//! The model therefore keeps its own record and checks every load:
//!
//! - Each location has a **log** of `(store id, value)` in the order the
//!   stores ran ([`crate::sync::store_in_order`]): loom's modification
//!   order. The loom atomic holds the id of the store (unique per store
//!   operation, 0 for the initial value), so a load knows which store it
//!   read and where that store is in the log.
//! - Each modeled thread has a **coherence view** ([`View`]): per location,
//!   the latest log position it has written, read, or learned through a
//!   happens-before edge. Views travel along every edge of the model: a
//!   launch's spawn hands the launcher's view to the child's threads, and
//!   every mutex of `latch.rs` (completion counts, the block barrier) joins
//!   the views of the threads that held it, as a mutex's release and acquire
//!   order them in loom.
//! - A load that returns a store older than its thread's view (CoWR, CoRR)
//!   makes the execution **incoherent**: loom still completes it, and
//!   [`crate::check`] discards its final state and counts it. Since views
//!   follow only real happens-before edges, a discarded execution is one no
//!   coherent memory allows.
//! - The final value of a location is the last store in its log.
//!
//! # The asynchronous proxy
//!
//! A bulk copy (`bulkload`, `bulkstore`) reads and writes through the
//! asynchronous proxy, and a generic write reaches that proxy only through
//! a proxy fence (`fence.proxy.async`, or a grid boundary: see the crate
//! docs). A view therefore has two parts: `generic`, what the thread knows
//! through happens-before, and `proxied`, the part of it that passed a
//! proxy fence; a copy's read is bound only by `proxied`. loom cannot
//! return a store older than one that happens before the read, and the
//! copy is spawned at its issue (full happens-before), so the older stores
//! the proxy may still return (`proxied` up to `generic`) are chosen
//! outside loom: each exploration fixes, per copy, whether its read takes
//! loom's load or the `n`-th such older position ([`AsyncRead`]); an
//! execution in which that position does not exist is *vacuous* and
//! reaches no state (another choice covers it). A copy whose issuing
//! thread can hold no generic access to the source that passed no proxy
//! fence (a static check, `names.rs`) has loom's load only.
//!
//! Where loom's modification order (the order stores ran) is stricter than
//! the guide's coherence order, the model misses states the guide allows; the
//! axiomatic model computes exactly that restriction, and the conformance
//! harness reports the difference as this pinned limit (`crates/oracle`).

use crate::sync::Ordering::Relaxed;

use crate::sync::AtomicU32;

/// A thread's coherence view: per location, the latest log position it
/// has written, read, or learned through happens-before (`generic`), and
/// the part of it the asynchronous proxy is bound by (`proxied`, see "The
/// asynchronous proxy" above; never ahead of `generic`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct View {
    generic: Vec<usize>,
    proxied: Vec<usize>,
}

impl View {
    pub(crate) fn new(locations: usize) -> View {
        View {
            generic: vec![0; locations],
            proxied: vec![0; locations],
        }
    }

    /// Everything `other` knows, this view knows too, for each proxy.
    pub(crate) fn join(&mut self, other: &View) {
        join(&mut self.generic, &other.generic);
        join(&mut self.proxied, &other.proxied);
    }

    /// A proxy fence (`fence.proxy.async`, or a grid boundary: a thread's
    /// start, a wait for a grid's completion): every generic operation
    /// known now binds the asynchronous proxy too.
    pub(crate) fn fence(&mut self) {
        join(&mut self.proxied, &self.generic);
    }

    /// Sees position `pos` of location `loc` through the generic proxy;
    /// `false` when the view already holds a later one (an incoherent read).
    fn see(&mut self, loc: usize, pos: usize) -> bool {
        let ok = pos >= self.generic[loc];
        self.generic[loc] = self.generic[loc].max(pos);
        ok
    }

    /// The latest position of `loc` this view knows binds the asynchronous
    /// proxy too (a copy's own write).
    fn fence_at(&mut self, loc: usize) {
        self.proxied[loc] = self.proxied[loc].max(self.generic[loc]);
    }

    /// Sees position `pos` of `loc` through the asynchronous proxy: bound
    /// only by what reached that proxy; both views learn it.
    fn see_async(&mut self, loc: usize, pos: usize) -> bool {
        let ok = pos >= self.proxied[loc];
        self.proxied[loc] = self.proxied[loc].max(pos);
        self.generic[loc] = self.generic[loc].max(pos);
        ok
    }
}

fn join(a: &mut Vec<usize>, b: &[usize]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x = (*x).max(*y);
    }
}

/// Which store an asynchronous-proxy read returns (see "The asynchronous
/// proxy" above): the one loom's load gives, or the `n`-th log position
/// from the oldest the proxy may still return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AsyncRead {
    Loom,
    Stale(usize),
}

#[derive(Debug)]
pub(crate) struct Memory {
    /// The id of the store each location holds (0: the initial value).
    cells: Vec<AtomicU32>,
    /// One per cell, only ever stored to: see the module docs.
    shadows: Vec<AtomicU32>,
    /// One per cell: `(store id, value)` in the order the stores ran. Not a
    /// loom object: it adds no scheduling point.
    log: Vec<std::sync::Mutex<Vec<(u32, u32)>>>,
    /// Some load returned a store its thread's view had already passed.
    incoherent: std::sync::atomic::AtomicBool,
    /// An asynchronous read was fixed to a position that does not exist in
    /// this execution (see "The asynchronous proxy").
    vacuous: std::sync::atomic::AtomicBool,
}

impl Memory {
    /// Initialised by loom's main thread before it spawns the GPU threads, so
    /// the initial values are visible everywhere.
    pub(crate) fn new(init: &[(String, u32)]) -> Memory {
        Memory {
            cells: init.iter().map(|_| AtomicU32::new(0)).collect(),
            shadows: init.iter().map(|_| AtomicU32::new(0)).collect(),
            log: init
                .iter()
                .map(|(_, v)| std::sync::Mutex::new(vec![(0, *v)]))
                .collect(),
            incoherent: std::sync::atomic::AtomicBool::new(false),
            vacuous: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub(crate) fn load(&self, loc: usize, view: &mut View) -> u32 {
        self.shadows[loc].store(0, Relaxed);
        let id = self.cells[loc].load(Relaxed);
        let log = self.log[loc].lock().unwrap_or_else(|e| e.into_inner());
        let pos = log.iter().rposition(|(i, _)| *i == id).unwrap_or(0);
        if !view.see(loc, pos) {
            self.incoherent
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        log[pos].1
    }

    /// A store; `id` is unique to the store operation (never 0).
    pub(crate) fn store(&self, loc: usize, id: u32, value: u32, view: &mut View) {
        self.shadows[loc].store(0, Relaxed);
        let pos = crate::sync::store_in_order(&self.cells[loc], &self.log[loc], id, value);
        view.see(loc, pos);
    }

    /// A bulk copy's read through the asynchronous proxy (`how`: see
    /// [`AsyncRead`]); `None` when the execution is vacuous.
    pub(crate) fn load_async(&self, loc: usize, how: AsyncRead, view: &mut View) -> Option<u32> {
        self.shadows[loc].store(0, Relaxed);
        let pos = match how {
            AsyncRead::Loom => {
                let id = self.cells[loc].load(Relaxed);
                let log = self.log[loc].lock().unwrap_or_else(|e| e.into_inner());
                log.iter().rposition(|(i, _)| *i == id).unwrap_or(0)
            }
            AsyncRead::Stale(n) => {
                // Strictly older than what happens before the copy: loom's
                // own load gives that one and every newer one.
                let pos = view.proxied[loc] + n;
                if pos >= view.generic[loc] {
                    self.vacuous
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                    return None;
                }
                pos
            }
        };
        if !view.see_async(loc, pos) {
            self.incoherent
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let log = self.log[loc].lock().unwrap_or_else(|e| e.into_inner());
        Some(log[pos].1)
    }

    /// A bulk copy's write through the asynchronous proxy.
    pub(crate) fn store_async(&self, loc: usize, id: u32, value: u32, view: &mut View) {
        self.store(loc, id, value, view);
        view.fence_at(loc);
    }

    /// The final value, read by loom's main thread after every join: the
    /// last store that ran (see the module docs).
    pub(crate) fn final_value(&self, loc: usize) -> u32 {
        let log = self.log[loc].lock().unwrap_or_else(|e| e.into_inner());
        log.last().map(|e| e.1).unwrap_or(0)
    }

    /// Whether an asynchronous read of this execution had no store to take.
    pub(crate) fn vacuous(&self) -> bool {
        self.vacuous.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether some load of this execution was incoherent.
    pub(crate) fn incoherent(&self) -> bool {
        self.incoherent.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }
}
