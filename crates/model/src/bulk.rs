//! The asynchronous proxy: bulk copies (`cp.async.bulk`), their completion
//! (an mbarrier for a load, the thread's bulk async-groups for a store)
//! and `fence.proxy.async`.
//!
//! Implements the PTX ISA (9.1; `spec/documents/ptx-isa-async-proxy.txt`
//! holds the passages), with the decisions the spec records on the rules of
//! `spec/pdl/async-proxy.yaml`:
//!
//! - A bulk copy is its own agent (a loom thread), spawned at its issue:
//!   "These asynchronous operations are ordered after prior instructions in
//!   the same thread ... but they are not part of the program order for
//!   that thread" (8.9.1.1). It reads its source, writes its destination
//!   and then completes, at any time after its issue, unordered with the
//!   issuing thread's later operations. A copy of a tile's range reads each
//!   representative word of its source, then writes each of its
//!   destination (see `names.rs`).
//! - Its read goes through the asynchronous proxy: "Accessing the same
//!   memory location across multiple proxies needs a cross-proxy fence"
//!   (9.7.9.25.2), so a generic write that happens before the issue binds
//!   the read only once a proxy fence (`fence.proxy.async`, or a grid
//!   boundary) lies between them (`memory.rs`, "The asynchronous proxy").
//!   Its write is ordered after every write that happens before its issue,
//!   whatever the proxy (decision: the proxy governs what the copy reads).
//! - Completion: "The completion of a `cp{.reduce}.async.bulk` operation is
//!   followed by an implicit generic-async proxy fence. So the result of the
//!   asynchronous operation is made visible to the generic proxy as soon as
//!   its completion is observed." A bulk load completes an mbarrier's phase
//!   together with the issuing thread's `mbarrier.arrive.expect_tx` (which
//!   `bulkload` makes just before the copy, and which releases what the
//!   issuing thread did before): `mbarwait` happens after both. A bulk
//!   store belongs to the next bulk async-group its thread commits;
//!   `bulkwait n` waits for every group but the `n` most recent,
//!   `bulkwait read n` only until their copies have read their source.
//! - A grid completes once its bulk copies completed (decision: a copy is a
//!   memory operation of the grid, which `griddepcontrol.wait` waits to be
//!   "performed and made visible"). A copy may still be in flight when its
//!   thread exits. (The generated kernel drains each thread's copies before
//!   it exits, so that the shared memory stays valid: its bulk loads'
//!   mbarriers, and its bulk stores' reads, `cp.async.bulk.wait_group.read
//!   0`. That only narrows what the GPU can do; both models leave it out,
//!   as it would cost loom a wait for every copy.)

use crate::memory::View;
use crate::program::Program;
use crate::world::World;

/// Arrivals that complete an mbarrier's phase: the issuing thread's
/// `mbarrier.arrive.expect_tx`, and the copy's complete-tx.
const MBAR_ARRIVALS: usize = 2;
/// A bulk store's progress count once it read its source (where a
/// `bulkwait read` may wait for that).
const READ: usize = 1;

/// A thread's bulk async-groups: its bulk stores not yet committed, and the
/// groups it committed, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Groups {
    uncommitted: Vec<usize>,
    committed: Vec<Vec<usize>>,
}

/// The issue of copy `c` by its thread, before the copy's agent is
/// spawned: a bulk load arrives on its mbarrier (`expect_tx`), a bulk store
/// joins the thread's uncommitted copies.
pub(crate) fn issue(p: &Program, w: &World, c: usize, groups: &mut Groups, view: &mut View) {
    match p.copies[c].mbar {
        Some(m) => {
            w.mbarriers[m].add_with(false, view, |_, _| {});
        }
        None => groups.uncommitted.push(c),
    }
}

/// Copy `c` itself, in its agent: the read through the asynchronous
/// proxy, the write, and the completion signals. `view` starts as the
/// issuing thread's at the issue.
pub(crate) fn copy(p: &Program, w: &World, c: usize, view: &mut View) {
    let cp = &p.copies[c];
    // A vacuous read (its fixed position does not exist) voids the
    // execution; the copy still completes, so that nothing waits forever.
    // A tile's words are read in order, then written in order.
    let values: Vec<u32> = cp
        .words
        .iter()
        .enumerate()
        .map(|(j, &(src, _))| {
            w.memory
                .load_async(src, w.reads[cp.first_read + j], view)
                .unwrap_or(0)
        })
        .collect();
    let write = |view: &mut View| {
        for (&(_, dst), &value) in cp.words.iter().zip(&values) {
            w.memory.store_async(dst, cp.id, value, view);
        }
    };
    match cp.mbar {
        Some(m) => {
            write(view);
            w.mbarriers[m].add_with(false, view, |_, _| {});
        }
        None => {
            // Each signal only where a `bulkwait` of the thread may wait
            // for it (one without a waiter orders nothing).
            if cp.awaited.read {
                w.copies[c].add_with(false, view, |_, _| {});
            }
            write(view);
            if cp.awaited.written {
                w.copies[c].add_with(false, view, |_, _| {});
            }
        }
    }
}

/// `mbarwait`: blocks until mbarrier `m`'s phase completed.
pub(crate) fn mbar_wait(w: &World, m: usize, view: &mut View) {
    w.mbarriers[m].wait_at_least(MBAR_ARRIVALS, view);
}

/// `bulkcommit`: the uncommitted bulk stores form a new group (an empty
/// one when there are none).
pub(crate) fn commit(groups: &mut Groups) {
    let g = std::mem::take(&mut groups.uncommitted);
    groups.committed.push(g);
}

/// `bulkwait [read] pending`: blocks until every committed group but the
/// `pending` most recent completed (`read`: read their sources).
pub(crate) fn wait_groups(
    p: &Program,
    w: &World,
    groups: &Groups,
    read: bool,
    pending: usize,
    view: &mut View,
) {
    let n = groups.committed.len().saturating_sub(pending);
    for &c in groups.committed[..n].iter().flatten() {
        // Its completion is the last signal it gives: 1 or 2.
        let done = if read {
            READ
        } else {
            1 + usize::from(p.copies[c].awaited.read)
        };
        w.copies[c].wait_at_least(done, view);
    }
}
