//! Resources a program can observe: the pending launch pool, nesting and
//! synchronization depth, and each thread's last error.
//!
//! Implements seed 000 (CUDA Programming Guide 4.18.5.2.1.2 "Pending Kernel
//! Launches") and seed 001 (the CDP1 guide: "Nesting & Synchronization
//! Depth", "Configuration Options", "API Errors and Launch Failures"):
//!
//! - **The launch pool** (`cudaLimitDevRuntimePendingLaunchCount`, default
//!   2048, a test's `limits: { dev-runtime-pending-launch-count: n }`): "When
//!   a kernel is launched, all associated configuration and parameter data is
//!   tracked until the kernel completes. This data is stored within a
//!   system-managed launch pool." and "When the buffer is full, launches will
//!   set the thread's last error to `cudaErrorLaunchPendingCountExceeded`".
//!   *Decision (when a slot frees):* a successful device launch takes a slot
//!   at the launch and gives it back when the launched grid **completes**,
//!   i.e. when it is *finished* in [`crate::grid`]'s terms (its threads
//!   exited and all the work it launched, tail grids included, finished),
//!   because both guides' "Pending Kernel Launches" sections say the launch
//!   is "tracked until the kernel completes" and seed 000 calls the pool
//!   "fixed-size". Seed 001's "Configuration Options" describes the pool as
//!   buffering "kernel launches which have not yet begun to execute", which
//!   would free the slot at the grid's start; the H100 agrees with the
//!   completion reading (`pending-launch-count-exceeded`: with 32 slots and
//!   the first child running, exactly 32 launches succeeded). The litmus
//!   tests for the pool have the same verdict under both readings except
//!   where noted in their rule's decision. A failed launch takes no slot and
//!   its grid never runs (see [`CANCELLED`]). Host launches take no slot.
//!   The pool is one counter for the whole device, updated with relaxed
//!   read-modify-writes: a launch sees every earlier take and release (they
//!   are totally ordered), and a freed slot carries no happens-before.
//! - **Nesting depth**: the host-launched grid is at depth 0, a child one
//!   deeper than its parent. The CDP1 limit of 24 levels ("Any launch which
//!   would result in a kernel at a deeper level than the maximum will
//!   fail") cannot be reached by a test of at most 4 threads (depth 3 at
//!   most), so no launch fails for it; the depth matters for the
//!   synchronization depth.
//! - **Synchronization depth** (CDP1, `cudaLimitDevRuntimeSyncDepth`,
//!   default 2): "Calling `cudaDeviceSynchronize()` at a depth greater than
//!   the specified maximum synchronization depth will return an error." A
//!   `devicesync` in a grid of depth `d` fails when `d > limit`, returns
//!   [`SYNC_DEPTH_EXCEEDED`] and waits for nothing (no edge). *Decision:*
//!   the guide does not say whether the host grid is level 0 or 1; the
//!   model counts from 0, and the spec's litmus tests avoid the one depth
//!   where the readings differ (`d == limit`). The code is the guide's
//!   `cudaErrorLaunchMaxDepthExceeded` (65), as the spec's decision on
//!   `cdp1.limits.sync-depth-limit-error-code` keeps it (the runtime headers
//!   name `cudaErrorSyncDepthExceeded`, 68); tests compare with
//!   `!= cudaSuccess`.
//! - **The last error** is per thread ("Errors are recorded per-thread, so
//!   that each thread can identify the most recent error that it has
//!   generated"; "Last error is per-thread state, not per-block state"): a
//!   plain variable of the modeled thread, never shared. A failed launch or
//!   `devicesync` sets it; a successful call leaves it ("the most recent
//!   error"); `geterror` (`cudaGetLastError`) reads and resets it to
//!   `cudaSuccess`; `peekerror` (`cudaPeekAtLastError`) only reads it.

use crate::program::Program;
use crate::sync::Ordering::Relaxed;
use crate::world::World;

/// `cudaErrorLaunchPendingCountExceeded`.
pub(crate) const LAUNCH_PENDING_COUNT_EXCEEDED: u32 = 69;
/// `cudaErrorLaunchMaxDepthExceeded`, the code the guide names for a
/// `cudaDeviceSynchronize()` beyond the synchronization depth.
pub(crate) const SYNC_DEPTH_EXCEEDED: u32 = 65;
/// CDP1's maximum nesting depth; no test of at most 4 threads reaches it.
pub const MAX_NESTING_DEPTH: usize = 24;

// The deepest grid of a test is at depth `MAX_GPU_THREADS - 1` (a chain of
// one-thread grids): no launch can fail for the nesting depth. Should loom
// allow more threads, this stops the build until the limit is modeled.
const _: () = assert!(crate::program::MAX_GPU_THREADS - 1 < MAX_NESTING_DEPTH);

/// What a failed launch hands its grid's threads: the grid never runs.
pub(crate) const CANCELLED: u64 = u64::MAX;

/// Takes a pool slot for a device launch; `false` when the pool is full.
pub(crate) fn take_slot(p: &Program, w: &World) -> bool {
    match p.pool {
        None => true,
        Some(size) => w
            .pool
            .fetch_update(Relaxed, Relaxed, |n| (n < size).then_some(n + 1))
            .is_ok(),
    }
}

/// A launched grid completed: its slot is free again.
pub(crate) fn release_slot(p: &Program, w: &World) {
    if p.pool.is_some() {
        w.pool.fetch_sub(1, Relaxed);
    }
}

/// A modeled thread's last error (`cudaError_t`, 0 is `cudaSuccess`).
#[derive(Debug, Default)]
pub(crate) struct LastError(u32);

impl LastError {
    pub(crate) fn set(&mut self, code: u32) {
        self.0 = code;
    }

    /// `cudaGetLastError()`.
    pub(crate) fn get(&mut self) -> u32 {
        std::mem::take(&mut self.0)
    }

    /// `cudaPeekAtLastError()`.
    pub(crate) fn peek(&self) -> u32 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_are_cuda_13s() {
        assert_eq!(
            gridcheck_spec::cuda_error_value("cudaErrorLaunchPendingCountExceeded"),
            Some(LAUNCH_PENDING_COUNT_EXCEEDED)
        );
        assert_eq!(
            gridcheck_spec::cuda_error_value("cudaErrorLaunchMaxDepthExceeded"),
            Some(SYNC_DEPTH_EXCEEDED)
        );
    }

    #[test]
    fn last_error_get_resets_peek_does_not() {
        let mut e = LastError::default();
        e.set(69);
        assert_eq!(e.peek(), 69);
        assert_eq!(e.peek(), 69);
        assert_eq!(e.get(), 69);
        assert_eq!(e.get(), 0);
    }
}
