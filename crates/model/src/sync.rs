//! The synchronization primitives every other module uses, from loom.
//!
//! This is the model's one seam between its semantics and the checker that
//! runs them: the crate `gridcheck-model-std` (`crates/model-std`) compiles
//! the same modules against its own `sync.rs` (std threads and atomics with
//! randomized yields), so that the property "no state outside loom's
//! reachable set shows up on real threads" checks these very modules.

pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize};
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
pub(crate) use loom::thread::{JoinHandle, spawn, yield_now};
pub(crate) use std::sync::atomic::Ordering;

/// Stores the store `id` and appends `(id, value)` to the location's log
/// (see `memory.rs`); returns the store's position in the log. loom runs one
/// thread at a time and switches only at its own operations, so nothing
/// runs between the store and the append: the log is the order the stores
/// ran, loom's modification order.
pub(crate) fn store_in_order(
    cell: &AtomicU32,
    log: &std::sync::Mutex<Vec<(u32, u32)>>,
    id: u32,
    value: u32,
) -> usize {
    cell.store(id, Ordering::Relaxed);
    let mut l = log.lock().unwrap_or_else(|e| e.into_inner());
    l.push((id, value));
    l.len() - 1
}
