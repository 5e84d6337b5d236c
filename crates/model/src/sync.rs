//! The synchronization primitives every other module uses, from loom.
//!
//! This is the model's one seam between its semantics and the checker that
//! runs them: the crate `gridcheck-model-std` (`crates/model-std`) compiles
//! the same modules against its own `sync.rs` (std threads and atomics with
//! randomized yields), so that the property "no state outside loom's
//! reachable set shows up on real threads" checks these very modules.

pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize};
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
pub(crate) use loom::thread::{JoinHandle, spawn, yield_now};
pub(crate) use std::sync::atomic::Ordering;

/// Stores `value` and records it as the location's last store (see
/// `memory.rs`). loom runs one thread at a time and switches only at its
/// own operations, so nothing runs between the store and the record.
pub(crate) fn store_in_order(cell: &AtomicU32, last: &std::sync::Mutex<u32>, value: u32) {
    cell.store(value, Ordering::Relaxed);
    *last.lock().unwrap_or_else(|e| e.into_inner()) = value;
}
