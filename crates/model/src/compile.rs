//! Compiles a litmus test for the model ([`crate::program::Program`]):
//! names resolved to indices, each thread's operations translated, and the
//! static facts the runtime needs.
//!
//! Resources (see [`crate::resources`]): the test's limits become the pool
//! size ([`Program::pool`], only when the test makes more device launches
//! than the pool holds) and, per kernel, its nesting depth and whether a
//! `devicesync` there exceeds the synchronization depth.
//!
//! Compilation also rejects what cannot run: a block whose threads execute
//! different numbers of `__syncthreads()` (the
//! guide: a barrier in divergent code hangs; the model reports it instead of
//! letting loom find the deadlock), and events used with the tail or
//! fire-and-forget stream, which the model does not define.

use gridcheck_spec::{KernelLaunch, Limit, Litmus, Op, StreamRef, TilePlan};

use crate::names::Names;
use crate::program::{KernelInfo, MOp, Obs, Program, Start, Stream, ThreadInfo};
use crate::slots::Slots;

use crate::error::{ErrorKind, ModelError};

fn err(msg: impl Into<String>) -> ModelError {
    ModelError::new(ErrorKind::Invalid, msg)
}

/// Host kernels whose completion `finished(k)` means in host-stream order:
/// `k`, and when `k` overlapped its predecessor through PDL, the
/// predecessor's chain too (stream work completes in order).
fn host_chain(kernels: &[gridcheck_spec::Kernel], host: &[usize], pos: usize) -> Vec<usize> {
    let mut out = vec![host[pos]];
    let mut p = pos;
    while p > 0 && kernels[host[p]].launch == (KernelLaunch::Host { pdl: true }) {
        p -= 1;
        out.push(host[p]);
    }
    out
}

/// Who launches each device kernel (kernel and block), into which stream.
type LaunchedBy = Vec<Option<(usize, usize, Stream)>>;

pub(crate) fn compile(l: &Litmus) -> Result<Program, ModelError> {
    if l.thread_count() == 0 {
        return Err(err("the test has no threads"));
    }
    let host: Vec<usize> = (0..l.kernels.len())
        .filter(|&i| matches!(l.kernels[i].launch, KernelLaunch::Host { .. }))
        .collect();
    let mut names = Names::new(l);
    let (launched_by, slots, mut mops) = translate(l, &mut names)?;
    let nk = l.kernels.len();
    for (k, sl) in l.kernels.iter().zip(&slots) {
        if sl.next * nk > u64::BITS as usize {
            return Err(ModelError::new(
                ErrorKind::Unsupported,
                format!(
                    "kernel `{}` uses too many streams and events for the model ({} with {nk} kernels)",
                    k.name, sl.next
                ),
            ));
        }
    }
    let mut kernels = Vec::new();
    let mut threads = Vec::new();
    for (ki, k) in l.kernels.iter().enumerate() {
        let start = start_of(l, &host, &launched_by, ki)?;
        check_barriers(k)?;
        let ids = add_threads((l, &names.plan), ki, mops[ki].drain(..), &mut threads);
        kernels.push(kernel_info(
            l,
            &host,
            &launched_by,
            &slots[ki],
            ki,
            start,
            ids,
        ));
    }
    for h in 0..kernels.len() {
        if let Start::HostAfter { wait } = &kernels[h].start
            && let [prev] = wait[..]
        {
            kernels[prev].successor = Some(h);
            kernels[h].lazy = true;
        }
    }
    // Resources: the pool when it can fill up, nesting and sync depth.
    let device_launches = launched_by.iter().filter(|lb| lb.is_some()).count();
    let pool_limit = pending_launch_limit(l);
    let pool = (device_launches as u64 > pool_limit).then_some(pool_limit as usize);
    let sync_limit = sync_depth_limit(l);
    for ki in 0..kernels.len() {
        let mut depth = 0;
        let mut g = ki;
        while let Start::Device { parent, .. } = kernels[g].start {
            depth += 1;
            g = parent;
        }
        let k = &mut kernels[ki];
        k.depth = depth;
        k.sync_depth_exceeded = sync_depth_exceeded(depth, sync_limit);
    }
    // Grids another grid of their block's streams may have to wait for: those
    // launched into a stream that gets another launch or an event record.
    let waited_for: Vec<bool> = launched_by
        .iter()
        .map(|lb| match lb {
            Some((parent, block, Stream::InOrder { slot } | Stream::Tail { slot })) => {
                let sl = &slots[*parent];
                sl.launches.get(&(*block, *slot)).copied().unwrap_or(0) > 1
                    || sl.recorded.contains(&(*block, *slot))
            }
            _ => false,
        })
        .collect();
    mark_awaited(&mut kernels, &waited_for, pool.is_some());
    names.stale_options(&threads, &kernels);
    for (c, copy) in names.copies.iter().enumerate() {
        threads[copy.thread].copies.push(c);
        // A grid completes once its bulk copies did.
        kernels[threads[copy.thread].kernel].done_target += 1;
    }
    Ok(Program {
        globals: names.globals,
        memory: names.cells,
        kernels,
        threads,
        pool,
        copies: names.copies,
        mbarriers: names.mbars.len(),
    })
}

/// Each thread's operations with names resolved to indices, per kernel;
/// who launches each device kernel; each kernel's stream and event slots.
#[allow(clippy::type_complexity)]
fn translate<'a>(
    l: &'a Litmus,
    names: &mut Names<'a>,
) -> Result<(LaunchedBy, Vec<Slots>, Vec<Vec<Vec<MOp>>>), ModelError> {
    let mut launched_by: LaunchedBy = vec![None; l.kernels.len()];
    let mut slots: Vec<Slots> = l.kernels.iter().map(|_| Slots::default()).collect();
    let mut mops: Vec<Vec<Vec<MOp>>> = Vec::new();
    let mut tid = 0;
    for (ki, k) in l.kernels.iter().enumerate() {
        let sl = &mut slots[ki];
        // The NULL stream always takes slot 0.
        sl.stream(&StreamRef::Null, "launch")?;
        let mut per_thread = Vec::new();
        for t in &k.threads {
            let mut ops = Vec::new();
            for op in &t.ops {
                ops.extend(translate_op(
                    op,
                    (tid, (ki, t.block())),
                    sl,
                    &mut launched_by,
                    names,
                )?);
            }
            per_thread.push(ops);
            tid += 1;
        }
        mops.push(per_thread);
    }
    Ok((launched_by, slots, mops))
}

/// One operation of thread `tid` of block `block` of kernel `ki`, names
/// resolved: a launch is recorded in `launched_by`, a stream or event takes
/// a slot in `sl`, a location its cells, a bulk copy its entry in `names`.
/// A store or load of a tile's range is one on each of its cells (see
/// `names.rs`), in order; any other operation is one.
fn translate_op<'a>(
    op: &'a Op,
    (tid, (ki, block)): (usize, (usize, usize)),
    sl: &mut Slots,
    launched_by: &mut LaunchedBy,
    names: &mut Names<'a>,
) -> Result<Vec<MOp>, ModelError> {
    let kb = (ki, block);
    let cells = |names: &mut Names<'a>, loc: &'a str| -> Result<Vec<usize>, ModelError> {
        Ok(names
            .place(kb, loc)?
            .into_iter()
            .flat_map(|(_, c)| c)
            .collect())
    };
    match op {
        Op::Store { loc, value } => {
            let id = names.store_id();
            return Ok(cells(names, loc)?
                .into_iter()
                .map(|loc| MOp::Store {
                    loc,
                    value: *value,
                    id,
                })
                .collect());
        }
        Op::Load { loc, .. } => {
            return Ok(cells(names, loc)?
                .into_iter()
                .map(|loc| MOp::Load { loc })
                .collect());
        }
        _ => {}
    }
    translate_word_op(op, (tid, kb), sl, launched_by, names).map(|m| vec![m])
}

/// [`translate_op`] of an operation that is one operation of the model.
fn translate_word_op<'a>(
    op: &'a Op,
    (tid, (ki, block)): (usize, (usize, usize)),
    sl: &mut Slots,
    launched_by: &mut LaunchedBy,
    names: &mut Names<'a>,
) -> Result<MOp, ModelError> {
    let l = names.l;
    let kidx = |name: &str| {
        l.kernels
            .iter()
            .position(|k| k.name == name)
            .ok_or_else(|| err(format!("kernel `{name}` is not declared")))
    };
    let kb = (ki, block);
    let what = op.to_string();
    Ok(match op {
        Op::Store { .. } | Op::Load { .. } => unreachable!("translated by `translate_op`"),
        Op::SyncThreads => MOp::SyncThreads,
        Op::Launch { kernel, stream } => {
            let c = kidx(kernel)?;
            if l.kernels[c].launch != KernelLaunch::Device {
                return Err(err(format!(
                    "kernel `{kernel}` is launched from the host and from device code"
                )));
            }
            if launched_by[c].is_some() {
                return Err(err(format!("kernel `{kernel}` is launched twice")));
            }
            let s = match stream {
                StreamRef::FireAndForget => Stream::FireAndForget,
                StreamRef::Tail => Stream::Tail {
                    slot: sl.stream(stream, "launch")?,
                },
                s => Stream::InOrder {
                    slot: sl.stream(s, "launch")?,
                },
            };
            if let Stream::InOrder { slot } | Stream::Tail { slot } = s {
                *sl.launches.entry((block, slot)).or_default() += 1;
            }
            launched_by[c] = Some((ki, block, s));
            MOp::Launch { child: c }
        }
        Op::EventRecord { event, stream } => {
            let stream = sl.stream(stream, &what)?;
            sl.recorded.push((block, stream));
            MOp::Record {
                stream,
                event: sl.event(event),
            }
        }
        Op::StreamWaitEvent { stream, event } => MOp::WaitEvent {
            stream: sl.stream(stream, &what)?,
            event: sl.event(event),
        },
        Op::Trigger => MOp::Trigger,
        Op::GridDependencySync => MOp::GridSync,
        Op::DeviceSynchronize { reg } => MOp::DeviceSync {
            record: reg.is_some(),
        },
        Op::GetLastError { .. } => MOp::GetError,
        Op::PeekAtLastError { .. } => MOp::PeekError,
        Op::BulkLoad { dst, src, bar } => {
            let mbar = names.mbar(kb, bar);
            MOp::Bulk {
                copy: names.copy((tid, kb), (src, dst), Some(mbar))?,
            }
        }
        Op::BulkStore { dst, src } => MOp::Bulk {
            copy: names.copy((tid, kb), (src, dst), None)?,
        },
        Op::MbarWait { bar } => MOp::MbarWait {
            mbar: names.mbar(kb, bar),
        },
        Op::BulkCommit => MOp::BulkCommit,
        Op::BulkWait { read, pending } => MOp::BulkWait {
            read: *read,
            pending: *pending as usize,
        },
        Op::FenceProxyAsync => MOp::FenceProxy,
    })
}

/// How kernel `ki` starts: after its host predecessors, overlapping one
/// through PDL, or launched by its parent into a stream.
fn start_of(
    l: &Litmus,
    host: &[usize],
    launched_by: &LaunchedBy,
    ki: usize,
) -> Result<Start, ModelError> {
    let k = &l.kernels[ki];
    Ok(match k.launch {
        KernelLaunch::Host { pdl } => {
            let pos = host.iter().position(|&h| h == ki).unwrap_or(0);
            if pos == 0 {
                if pdl {
                    return Err(err(format!(
                        "kernel `{}` is `host-pdl` but no host kernel precedes it",
                        k.name
                    )));
                }
                Start::HostFirst
            } else if pdl {
                Start::HostPdl {
                    primary: host[pos - 1],
                    wait: host_chain(&l.kernels, host, pos - 1),
                }
            } else {
                Start::HostAfter {
                    wait: host_chain(&l.kernels, host, pos - 1),
                }
            }
        }
        KernelLaunch::Device => {
            let Some((parent, _, stream)) = launched_by[ki] else {
                return Err(err(format!("device kernel `{}` is never launched", k.name)));
            };
            Start::Device { parent, stream }
        }
    })
}

/// Every thread of a block must reach the same number of barriers.
fn check_barriers(k: &gridcheck_spec::Kernel) -> Result<(), ModelError> {
    for b in 0..k.blocks() {
        let threads: Vec<&gridcheck_spec::Thread> = k.block_threads(b).collect();
        let syncs: Vec<usize> = threads
            .iter()
            .map(|t| t.ops.iter().filter(|o| **o == Op::SyncThreads).count())
            .collect();
        if syncs.iter().any(|&s| s != syncs[0]) {
            let detail: Vec<String> = threads
                .iter()
                .zip(&syncs)
                .map(|(t, s)| format!("{} executes {s}", t.name))
                .collect();
            let block = if k.blocks() > 1 {
                format!("block b{b} of kernel")
            } else {
                "kernel".to_string()
            };
            return Err(ModelError::new(
                ErrorKind::Deadlock,
                format!(
                    "deadlock: the threads of {block} `{}` execute different numbers of \
                     `syncthreads` ({}); a block barrier waits for every thread of the block",
                    k.name,
                    detail.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Adds kernel `ki`'s threads to `threads`: their ids, by block too.
fn add_threads(
    (l, plan): (&Litmus, &TilePlan),
    ki: usize,
    mops: impl Iterator<Item = Vec<MOp>>,
    threads: &mut Vec<ThreadInfo>,
) -> (Vec<usize>, Vec<Vec<usize>>) {
    let k = &l.kernels[ki];
    let mut ids = Vec::new();
    let mut blocks = vec![Vec::new(); k.blocks()];
    for (t, ops) in k.threads.iter().zip(mops) {
        // A tile load's observables: one a segment, each from its
        // representative words' loads.
        let regs = t
            .ops
            .iter()
            .flat_map(|op| l.op_observables(plan, &k.name, &t.name, op))
            .map(|(name, width)| Obs {
                name,
                width,
                count: plan.modeled_words((0, width)) as usize,
            })
            .collect();
        ids.push(threads.len());
        blocks[t.block()].push(threads.len());
        threads.push(ThreadInfo {
            kernel: ki,
            block: t.block(),
            ops,
            regs,
            copies: Vec::new(),
        });
    }
    (ids, blocks)
}

/// Kernel `ki`'s static facts; its successor, whether it is lazy and its
/// depths are set afterwards.
fn kernel_info(
    l: &Litmus,
    host: &[usize],
    launched_by: &LaunchedBy,
    sl: &Slots,
    ki: usize,
    start: Start,
    (ids, blocks): (Vec<usize>, Vec<Vec<usize>>),
) -> KernelInfo {
    let k = &l.kernels[ki];
    let children = launched_by
        .iter()
        .filter(|lb| matches!(lb, Some((p, ..)) if *p == ki))
        .count();
    let tails = launched_by
        .iter()
        .filter(|lb| matches!(lb, Some((p, _, Stream::Tail { .. })) if *p == ki))
        .count();
    let next_host_pdl = host
        .iter()
        .position(|&h| h == ki)
        .and_then(|p| host.get(p + 1))
        .is_some_and(|&h| l.kernels[h].launch == (KernelLaunch::Host { pdl: true }));
    KernelInfo {
        threads: ids,
        blocks,
        start,
        done_target: k.threads.len() + children - tails,
        tails,
        stream_state: sl.has_events || sl.launches.values().any(|&n| n > 1),
        has_pdl_dependent: next_host_pdl,
        has_devicesync: k.threads.iter().any(|t| {
            t.ops
                .iter()
                .any(|o| matches!(o, Op::DeviceSynchronize { .. }))
        }),
        done_awaited: false,
        finished_awaited: false,
        successor: None,
        lazy: false,
        depth: 0,
        sync_depth_exceeded: false,
    }
}

/// Computes [`KernelInfo::done_awaited`] and
/// [`KernelInfo::finished_awaited`]: a fixed point over the launch tree.
/// With the launch pool modeled, every device grid is awaited: its
/// completion releases its slot.
fn mark_awaited(kernels: &mut [KernelInfo], waited_for: &[bool], pool: bool) {
    let n = kernels.len();
    let mut done = vec![false; n];
    let mut fin = vec![false; n];
    for (g, k) in kernels.iter().enumerate() {
        if let Start::HostAfter { wait } | Start::HostPdl { wait, .. } = &k.start {
            for &j in wait {
                fin[j] = true;
            }
        }
        // Its tail grids wait for it to be done.
        if k.tails > 0 {
            done[g] = true;
        }
        // Stream successors, events, `devicesync` and the pool wait for it.
        if let Start::Device { parent, .. } = k.start
            && (waited_for[g] || kernels[parent].has_devicesync || pool)
        {
            fin[g] = true;
        }
    }
    loop {
        let mut changed = false;
        let mut set = |v: &mut Vec<bool>, i: usize| {
            if !v[i] {
                v[i] = true;
                changed = true;
            }
        };
        for g in 0..n {
            if fin[g] {
                set(&mut done, g);
            }
            if let Start::Device { parent, stream } = kernels[g].start {
                let tail = matches!(stream, Stream::Tail { .. });
                // A done parent counts its non-tail children's completion; a
                // finished parent, its tail grids'.
                if (!tail && done[parent]) || (tail && fin[parent]) {
                    set(&mut fin, g);
                }
            }
        }
        if !changed {
            break;
        }
    }
    for (g, k) in kernels.iter_mut().enumerate() {
        k.done_awaited = done[g];
        k.finished_awaited = fin[g];
    }
}

/// The device runtime limits the test sets, or their defaults (the launch
/// pool and the synchronization depth: see [`crate::resources`]).
pub(crate) fn pending_launch_limit(l: &Litmus) -> u64 {
    let lim = Limit::DevRuntimePendingLaunchCount;
    l.limit(lim).or(lim.default_value()).unwrap_or(u64::MAX)
}

pub(crate) fn sync_depth_limit(l: &Litmus) -> u64 {
    let lim = Limit::DevRuntimeSyncDepth;
    l.limit(lim).or(lim.default_value()).unwrap_or(u64::MAX)
}

pub(crate) fn sync_depth_exceeded(depth: usize, limit: u64) -> bool {
    depth as u64 > limit
}
