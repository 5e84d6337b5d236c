//! Streams and events: when a grid may start.
//!
//! Implements the CUDA Programming Guide, section 4.18 (seed
//! `000_522be91053af7f8d.txt`), and the host stream of section 4.5:
//!
//! - 4.18.2.3 "Streams and Events": "kernels launched into the same stream
//!   execute in-order, and events may be used to create dependencies between
//!   streams". 4.18.2.4 "Ordering and Concurrency": "the implicit NULL stream
//!   is only shared by all threads within a thread block. If multiple threads
//!   in a thread block launch into the implicit stream, then these launches
//!   will be executed in-order"; named streams are created by the block with
//!   `cudaStreamNonBlocking` and share nothing with the NULL stream. A grid
//!   launched into the NULL stream or a named stream may start any time after
//!   its launch, once the grids before it in that stream finished.
//! - Events: `record e s` (`cudaEventRecord`) captures the work launched into
//!   `s` so far; `waitevent s e` (`cudaStreamWaitEvent`) makes the work
//!   launched into `s` afterwards wait for that captured work too. Waiting on
//!   an event no thread recorded yet is a no-op, as on the host (the event
//!   counts as complete).
//! - The tail stream (`cudaStreamTailLaunch`, 4.18.3.1 and the 4.18.4.1
//!   example: "launch tail into cudaStreamTailLaunch stream // implicitly
//!   synchronizes: waits for child to complete"): a tail grid starts after its
//!   launching grid is done (all its threads and all its non-tail work), and
//!   several tail grids of one grid run one after the other in launch order.
//! - The fire-and-forget stream (`cudaStreamFireAndForget`, the exception of
//!   4.18.2.4): starts after its launch, independent of the grid's other work;
//!   the launching grid's completion still waits for it (4.18.2.3: "all work
//!   launched by a grid is implicitly synchronized when the grid exits").
//!   Events on the tail and fire-and-forget streams are not modeled
//!   (compilation rejects them).
//! - The host stream: kernels launched from the host in declaration order. A
//!   kernel without PDL starts once its predecessor finished, including all
//!   the predecessor's device-launched descendants. Stream work completes in
//!   order: when the predecessor overlapped its own predecessor through PDL,
//!   the kernel also waits for that one (and so on down the PDL chain), since
//!   a PDL secondary that never calls `cudaGridDependencySynchronize()` may
//!   otherwise finish before its primary. PDL starts are in [`crate::pdl`].
//!
//! # The block's stream state
//!
//! The order of stream operations from different threads of a block is the
//! order in which they happen ("dependent on the thread scheduling within the
//! grid", 4.18.2.4), and the guide gives no memory ordering between the
//! threads that make them. So a block's streams and events are one word of
//! slots, each slot a set of grids (a bit per kernel), updated with relaxed
//! compare-exchange: read-modify-writes on one location are totally ordered
//! (so every launch sees every earlier stream operation), and relaxed ones
//! synchronize nothing. For a stream slot, the set is what the next launch
//! into the stream must wait for; for an event slot, what the event captured.
//! A launch takes its stream's set as its dependencies and leaves `{itself}`
//! (it finishes only after its dependencies, so waiting for it is waiting for
//! them); a record copies the stream's set into the event; a wait adds the
//! event's set to the stream's. The launch hands its dependencies to the new
//! grid's threads when it spawns them, and the grid waits for each to finish, with
//! happens-before from their completion. Blocks that launch at most once
//! into each stream and use no events skip the word altogether.

use crate::sync::Ordering::Relaxed;

use crate::completion::{wait_done, wait_finished};
use crate::memory::View;
use crate::pdl;
use crate::program::{Program, Start, Stream};
use crate::resources::CANCELLED;
use crate::world::World;

fn get(p: &Program, state: u64, slot: usize) -> u64 {
    let bits = p.mask_bits();
    (state >> (slot * bits)) & ((1u64 << bits) - 1)
}

fn set(p: &Program, state: u64, slot: usize, value: u64) -> u64 {
    let bits = p.mask_bits();
    let mask = ((1u64 << bits) - 1) << (slot * bits);
    (state & !mask) | (value << (slot * bits))
}

/// One relaxed read-modify-write of the stream state of block `block` of
/// `kernel`, starting from the calling thread's cached view; returns the
/// state it replaced.
fn update(
    w: &World,
    (kernel, block): (usize, usize),
    cache: &mut u64,
    f: impl Fn(u64) -> u64,
) -> u64 {
    let cell = &w.grids[kernel].streams[block];
    let mut cur = *cache;
    loop {
        let next = f(cur);
        match cell.compare_exchange(cur, next, Relaxed, Relaxed) {
            Ok(prev) => {
                *cache = next;
                return prev;
            }
            Err(actual) => cur = actual,
        }
    }
}

/// A launch of `child` into stream `slot` of a block (`(kernel, block)`):
/// returns the grids it must wait for.
pub(crate) fn enqueue(
    p: &Program,
    w: &World,
    kernel: (usize, usize),
    slot: usize,
    child: usize,
    cache: &mut u64,
) -> u64 {
    let prev = update(w, kernel, cache, |s| set(p, s, slot, 1 << child));
    get(p, prev, slot)
}

/// `record event stream`.
pub(crate) fn record(
    p: &Program,
    w: &World,
    kernel: (usize, usize),
    event: usize,
    stream: usize,
    cache: &mut u64,
) {
    update(w, kernel, cache, |s| set(p, s, event, get(p, s, stream)));
}

/// `waitevent stream event`.
pub(crate) fn wait_event(
    p: &Program,
    w: &World,
    kernel: (usize, usize),
    stream: usize,
    event: usize,
    cache: &mut u64,
) {
    update(w, kernel, cache, |s| {
        set(p, s, stream, get(p, s, stream) | get(p, s, event))
    });
}

fn wait_all(p: &Program, w: &World, deps: u64, view: &mut View) {
    for g in 0..p.kernels.len() {
        if deps & (1 << g) != 0 {
            wait_finished(p, w, g, view);
        }
    }
}

/// Blocks thread `tid` until its grid may start; `false` when its launch
/// failed (the grid never runs, see [`crate::resources`]). `deps` is what
/// the launch handed a device grid's threads (see [`crate::grid::launch`]).
pub(crate) fn wait_start(p: &Program, w: &World, tid: usize, deps: u64, view: &mut View) -> bool {
    let kernel = p.threads[tid].kernel;
    match &p.kernels[kernel].start {
        Start::HostFirst => {}
        // Spawned by its predecessor's completion: nothing left to wait for.
        Start::HostAfter { .. } if p.kernels[kernel].lazy => {}
        Start::HostAfter { wait } => {
            for &j in wait {
                wait_finished(p, w, j, view);
            }
        }
        // Spawned by the secondary's first thread once it may start.
        Start::HostPdl { .. } if p.pdl_follower(tid) => {}
        Start::HostPdl { primary, .. } => pdl::wait_for_triggers(p, w, *primary),
        Start::Device { parent, stream } => {
            // A tail grid, even one whose launch failed, counts as finished
            // only after its parent is done.
            if let Stream::Tail { .. } = stream {
                wait_done(p, w, *parent, view);
            }
            if deps == CANCELLED {
                return false;
            }
            wait_all(p, w, deps, view);
        }
    }
    true
}
