//! A per-thread pool of mapped stacks: the one change gridcheck makes to
//! generator 0.8.12 (see `crates/vendor/README.md` in the gridcheck tree).
//!
//! loom runs every thread of every execution it explores on a fresh
//! generator, and upstream maps a stack, protects its guard page, faults its
//! pages in and unmaps it again for each one: four times per execution of a
//! three-thread litmus test, and the system time of that was two thirds of the
//! model tier's time. Here a dropped stack goes back to its OS thread's pool
//! (at most [`KEEP`] of them, guard page still protected) and the next
//! generator of the same size takes it; the pool unmaps what it holds when
//! the thread exits. Nothing else changes: a stack is handed out whole, the
//! usage sentinel is written again by `Stack::new`, and a stack whose frames
//! an overflow abandoned is unmapped, never pooled.

use std::cell::RefCell;
use std::os::raw::c_void;

use super::{sys, SysStack};

/// The most stacks one OS thread keeps for reuse.
const KEEP: usize = 16;

struct Pool(Vec<SysStack>);

impl Drop for Pool {
    fn drop(&mut self) {
        for stack in self.0.drain(..) {
            unmap(&stack);
        }
    }
}

thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Pool(Vec::new())) };
}

/// A free pooled stack whose usable length is `len` bytes, if there is one.
pub(super) fn take(len: usize) -> Option<SysStack> {
    POOL.try_with(|pool| {
        let mut pool = pool.try_borrow_mut().ok()?;
        let i = pool.0.iter().position(|s| s.len() == len)?;
        Some(pool.0.swap_remove(i))
    })
    .ok()
    .flatten()
}

/// Keeps `stack` for reuse, or hands it back when the pool is full or this
/// thread's pool is already gone (thread exit).
pub(super) fn give(stack: SysStack) -> Option<SysStack> {
    let mut stack = Some(stack);
    let _ = POOL.try_with(|pool| {
        if let Ok(mut pool) = pool.try_borrow_mut() {
            if pool.0.len() < KEEP {
                pool.0.extend(stack.take());
            }
        }
    });
    stack
}

/// Unmaps `stack` together with the guard page below it.
pub(super) fn unmap(stack: &SysStack) {
    let page_size = sys::page_size();
    let guard = stack
        .bottom
        .cast::<u8>()
        .wrapping_sub(page_size)
        .cast::<c_void>();
    // SAFETY: `stack` came from `SysStack::allocate`, which mapped it with
    // one guard page below `bottom`; nothing refers to it any more.
    unsafe { sys::deallocate_stack(guard, stack.len() + page_size) };
}
