//! The guide's orders, one named relation per sentence, in the style of a
//! herd `.cat` file. Each function returns the relation's edges for one
//! control resolution ([`Control`]); events of grids that never run take
//! part in none.
//!
//! ```text
//! hb    = (po | launch | barrier | completion | tail | stream | host-stream
//!          | copy | gridsync | devicesync | mbarrier | bulk-group)+
//! exec  = hb | pdl-start | block-stream-order | pool-order
//! ```
//!
//! `hb` (happens-before) is what makes a write visible; `exec` (execution
//! order) only says what must happen before what. The PDL trigger is in
//! `exec`, never in `hb`: 004 §4.5.2 "the secondary thread blocks might
//! launch before data written by the primary kernel is visible".

use crate::control::Control;
use crate::program::{AOp, INIT, Prog, Start, Stream};

pub(crate) type Edges = Vec<(usize, usize)>;

/// Events of running threads in program order, with the initial writes
/// before every thread's start. (Program order.)
pub(crate) fn po(p: &Prog, c: &Control) -> Edges {
    let mut e = Vec::new();
    for t in &p.threads {
        if !c.runs[t.kernel] {
            continue;
        }
        e.push((INIT, t.start()));
        for i in t.start()..t.exit() {
            e.push((i, i + 1));
        }
    }
    e
}

/// 000 §4.18.3.1: "All global memory operations in the parent thread prior
/// to the child grid's invocation are visible to the child grid." The
/// launch event before every event of the child grid's threads.
pub(crate) fn launch(p: &Prog, c: &Control) -> Edges {
    let mut e = Vec::new();
    for (ki, k) in p.kernels.iter().enumerate() {
        if let Start::Device { thread, op, .. } = k.start
            && c.runs[ki]
        {
            for &t in &k.threads {
                e.push((p.threads[thread].op(op), p.threads[t].start()));
            }
        }
    }
    e
}

/// 000 §4.18.2.4 (the `__syncthreads()` example): "Due to the first
/// `__syncthreads()` call, the child will see `data[0]=0`, ... (without the
/// `__syncthreads()` call, only `data[0]=0` would be guaranteed to be seen
/// by the child)". A block barrier: each thread's n-th barrier before the
/// barrier event, the barrier event before each thread's next event.
pub(crate) fn barrier(p: &Prog, c: &Control) -> Edges {
    let mut e = Vec::new();
    for t in &p.threads {
        if !c.runs[t.kernel] {
            continue;
        }
        for (i, op) in t.ops.iter().enumerate() {
            if let AOp::Barrier { index } = op {
                let b = p.kernels[t.kernel].blocks[t.block].barriers[*index];
                e.push((t.op(i), b));
                e.push((b, t.op(i) + 1));
            }
        }
    }
    e
}

/// 000 §4.18.2.1: "the parent grid is not considered complete until all
/// child grids created by its threads have completed". A grid is *done*
/// when its threads exited and the grids it launched outside the tail
/// stream finished; *finished* when done and its tail grids finished.
pub(crate) fn completion(p: &Prog, c: &Control) -> Edges {
    let mut e = Vec::new();
    for (ki, k) in p.kernels.iter().enumerate() {
        if !c.runs[ki] {
            continue;
        }
        for &t in &k.threads {
            e.push((p.threads[t].exit(), k.done));
        }
        e.push((k.done, k.finished));
        for &ch in &k.children {
            if !c.runs[ch] {
                continue;
            }
            let tail = matches!(
                &p.kernels[ch].start,
                Start::Device {
                    stream: Stream::Tail,
                    ..
                }
            );
            let into = if tail { k.finished } else { k.done };
            e.push((p.kernels[ch].finished, into));
        }
    }
    e
}

/// 000 §4.18.3.1: "The only way to access the modifications made by the
/// threads in the child grid before the parent grid exits is via a kernel
/// launched into the `cudaStreamTailLaunch` stream." A tail grid starts
/// after its parent grid is done.
pub(crate) fn tail(p: &Prog, c: &Control) -> Edges {
    let mut e = Vec::new();
    for (ki, k) in p.kernels.iter().enumerate() {
        if let Start::Device {
            parent,
            stream: Stream::Tail,
            ..
        } = k.start
            && c.runs[ki]
        {
            for &t in &k.threads {
                e.push((p.kernels[parent].done, p.threads[t].start()));
            }
        }
    }
    e
}

/// 000 §4.18.2.3: "kernels launched into the same stream execute in-order,
/// and events may be used to create dependencies between streams". A grid
/// starts after the grids its stream (and the events it waited on) put
/// before it in the block's stream order ([`Control::deps`]).
pub(crate) fn stream(p: &Prog, c: &Control) -> Edges {
    let mut e = Vec::new();
    for (ki, k) in p.kernels.iter().enumerate() {
        if !c.runs[ki] {
            continue;
        }
        for &d in &c.deps[ki] {
            for &t in &k.threads {
                e.push((p.kernels[d].finished, p.threads[t].start()));
            }
        }
    }
    e
}

/// Host stream order: a kernel launched from the host without PDL starts
/// after the kernels before it in the stream finished, with everything they
/// launched (stream work completes in order, so a PDL chain before it
/// counts whole).
pub(crate) fn host_stream(p: &Prog, _c: &Control) -> Edges {
    let mut e = Vec::new();
    for k in &p.kernels {
        if let Start::HostAfter { wait } = &k.start {
            for &w in wait {
                for &t in &k.threads {
                    e.push((p.kernels[w].finished, p.threads[t].start()));
                }
            }
        }
    }
    e
}

/// 004 §4.5.2: `cudaGridDependencySynchronize()` "Will block until all
/// primary kernels the secondary kernel is dependent on have completed and
/// flushed results to global memory". In a kernel not launched with PDL it
/// waits for nothing more than its start did.
pub(crate) fn gridsync(p: &Prog, c: &Control) -> Edges {
    let mut e = Vec::new();
    for t in &p.threads {
        let Start::HostPdl { wait, .. } = &p.kernels[t.kernel].start else {
            continue;
        };
        if !c.runs[t.kernel] {
            continue;
        }
        for (i, op) in t.ops.iter().enumerate() {
            if *op == AOp::GridSync {
                for &w in wait {
                    e.push((p.kernels[w].finished, t.op(i)));
                }
            }
        }
    }
    e
}

/// 001 (CDP1): "The `cudaDeviceSynchronize()` function will synchronize on
/// all work launched by any thread in the thread-block up to the point
/// where `cudaDeviceSynchronize()` was called." Within the synchronization
/// depth; beyond it the call fails and waits for nothing.
pub(crate) fn devicesync(p: &Prog, c: &Control) -> Edges {
    let mut e = Vec::new();
    for (&ev, grids) in &c.devicesync {
        for &g in grids {
            e.push((p.kernels[g].finished, ev));
        }
    }
    e
}

/// 004 §4.5.2: "The CUDA driver can launch the secondary kernel when all
/// primary thread blocks have launched and executed
/// `cudaTriggerProgrammaticLaunchCompletion`. If the primary kernel doesn't
/// execute the trigger, it implicitly occurs after all thread blocks in the
/// primary kernel exit." An execution order, not happens-before: the
/// secondary's threads start after every `(secondary, event)` of
/// `activation`, one for each primary block: the block's trigger (a
/// thread's first) or the exit of all its threads.
pub(crate) fn pdl_start(p: &Prog, activation: &[(usize, usize)]) -> Edges {
    let mut e = Vec::new();
    for &(secondary, act) in activation {
        for &t in &p.kernels[secondary].threads {
            e.push((act, p.threads[t].start()));
        }
    }
    e
}

/// Each block's `all_exited` event after every exit of its threads
/// (execution order: what the implicit trigger waits for).
pub(crate) fn all_exited(p: &Prog, c: &Control) -> Edges {
    let mut e = Vec::new();
    for (ki, k) in p.kernels.iter().enumerate() {
        if c.runs[ki] {
            for b in &k.blocks {
                for &t in &b.threads {
                    e.push((p.threads[t].exit(), b.all_exited));
                }
            }
        }
    }
    e
}

/// For each PDL secondary and each block of its primary, the events that
/// may count as that block's trigger: the first trigger of each of its
/// threads, or, when none of them triggers, the exit of all of them. The
/// unit is the block (the spec's decision on
/// `pdl.trigger.all-blocks-should-trigger`, after
/// `cuda_device_runtime_api.h`: "when every CTAs in the grid has either
/// exited or called this function at least once"): one thread's trigger
/// counts for its block, and the secondary may start only once every block
/// has counted. A block with a trigger needs no exit option: its trigger
/// is before its exits, so an execution that starts the secondary after
/// them also starts it after the trigger (the option constrains less and
/// loses no execution), and each block with one trigger adds no choice.
pub(crate) fn activations(p: &Prog) -> Vec<(usize, Vec<usize>)> {
    let mut out = Vec::new();
    for (ki, k) in p.kernels.iter().enumerate() {
        if let Start::HostPdl { primary, .. } = k.start {
            for b in &p.kernels[primary].blocks {
                let mut options: Vec<usize> = b
                    .threads
                    .iter()
                    .filter_map(|&t| {
                        let th = &p.threads[t];
                        th.ops
                            .iter()
                            .position(|o| *o == AOp::Trigger)
                            .map(|i| th.op(i))
                    })
                    .collect();
                if options.is_empty() {
                    options.push(b.all_exited);
                }
                out.push((ki, options));
            }
        }
    }
    out
}

/// PTX ISA 8.9.1.1: "These asynchronous operations are ordered after prior
/// instructions in the same thread ... but they are not part of the program
/// order for that thread." A bulk copy's issue before its read, its read
/// before its write, its write before its completion (a tile's: each
/// word's read in order, then each word's write); a bulk load's issue
/// (`mbarrier.arrive.expect_tx`) and completion (complete-tx) before its
/// mbarrier's phase completes. And (decision) a grid is done only once its
/// copies completed: a copy is a memory operation of the grid.
pub(crate) fn copy(p: &Prog, c: &Control) -> Edges {
    let mut e = Vec::new();
    for cp in &p.copies {
        let t = &p.threads[cp.thread];
        if !c.runs[t.kernel] {
            continue;
        }
        let issue = t.op(cp.op);
        // A tile's words: every read, then every write, in order.
        let chain: Vec<usize> = std::iter::once(issue)
            .chain(cp.reads.iter().copied())
            .chain(cp.writes.iter().copied())
            .chain([cp.done])
            .collect();
        e.extend(chain.windows(2).map(|w| (w[0], w[1])));
        e.push((cp.done, p.kernels[t.kernel].done));
        if let Some(m) = cp.mbar {
            e.extend([(issue, p.phases[m]), (cp.done, p.phases[m])]);
        }
    }
    e
}

/// PTX ISA 9.7.9.25.1.2: "When the current phase of the *mbarrier object*
/// is complete, it implies that all asynchronous operations tracked by
/// this phase are complete, and all threads participating in that
/// *mbarrier object* can access the result of the asynchronous
/// operations." The phase before every `mbarwait` on it.
pub(crate) fn mbarrier(p: &Prog, c: &Control) -> Edges {
    let mut e = Vec::new();
    for t in p.threads.iter().filter(|t| c.runs[t.kernel]) {
        for (i, op) in t.ops.iter().enumerate() {
            if let AOp::MbarWait { mbar } = op {
                e.push((p.phases[*mbar], t.op(i)));
            }
        }
    }
    e
}

/// PTX ISA 9.7.9.27.2.2: "`cp.async.bulk.wait_group` instruction will
/// cause the executing thread to wait until only N or fewer of the most
/// recent *bulk async-groups* are pending and all the prior *bulk
/// async-groups* committed by the executing threads are complete." A
/// `bulkwait n` after the completion of every copy of the groups its
/// thread committed before it but the `n` most recent; `bulkwait read n`
/// after their reads ("completed ... the reading from their source
/// locations").
pub(crate) fn bulk_group(p: &Prog, c: &Control) -> Edges {
    let mut e = Vec::new();
    for t in p.threads.iter().filter(|t| c.runs[t.kernel]) {
        let mut uncommitted = Vec::new();
        let mut committed: Vec<Vec<usize>> = Vec::new();
        for (i, op) in t.ops.iter().enumerate() {
            match *op {
                AOp::Bulk { copy } if p.copies[copy].mbar.is_none() => uncommitted.push(copy),
                AOp::BulkCommit => committed.push(std::mem::take(&mut uncommitted)),
                AOp::BulkWait { read, pending } => {
                    let n = committed.len().saturating_sub(pending);
                    for &cp in committed[..n].iter().flatten() {
                        let cp = &p.copies[cp];
                        let last_read = cp.reads.last().copied().unwrap_or(cp.done);
                        e.push((if read { last_read } else { cp.done }, t.op(i)));
                    }
                }
                _ => {}
            }
        }
    }
    e
}

/// Every happens-before edge of a control resolution, and the edges that
/// stand for a blocking wait (a deadlock shows as a cycle through them).
pub(crate) fn happens_before(p: &Prog, c: &Control) -> (Edges, Edges) {
    let mut hb = Vec::new();
    for r in [
        po,
        launch,
        barrier,
        completion,
        tail,
        stream,
        host_stream,
        copy,
    ] {
        hb.extend(r(p, c));
    }
    let mut waits = Vec::new();
    for r in [gridsync, devicesync, mbarrier, bulk_group] {
        waits.extend(r(p, c));
    }
    (hb, waits)
}
