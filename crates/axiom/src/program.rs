//! A litmus test resolved for the axiomatic model: kernels, threads and
//! operations by index, how each grid starts, and one event index for
//! everything that can happen (whether or not it happens in a given
//! candidate execution).
//!
//! Written independently of `crates/model`'s compiler: the two oracles
//! share the spec's `Litmus` and nothing else.

use std::collections::BTreeMap;

use gridcheck_spec::{KernelLaunch, Limit, Litmus, Op, StreamRef};

use crate::bulk::{ACopy, Cells};
use crate::error::{AxiomError, ErrorKind};

/// `cudaErrorLaunchPendingCountExceeded`.
pub(crate) const POOL_FULL: u32 = 69;
/// `cudaErrorLaunchMaxDepthExceeded`, the code the guide names for a device
/// `cudaDeviceSynchronize()` beyond the synchronization depth.
pub(crate) const SYNC_DEPTH: u32 = 65;

/// Where a device launch goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stream {
    /// The block's NULL stream or a named stream (by name; NULL is "").
    InOrder(String),
    /// `cudaStreamTailLaunch`.
    Tail,
    /// `cudaStreamFireAndForget`.
    FireAndForget,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Start {
    /// A host kernel with nothing before it in the host stream.
    HostFirst,
    /// A host kernel after these host kernels (its predecessor and, when
    /// that one overlapped its own predecessor through PDL, the chain).
    HostAfter { wait: Vec<usize> },
    /// A host kernel launched with programmatic stream serialization.
    HostPdl { primary: usize, wait: Vec<usize> },
    /// Launched by operation `op` of thread `thread` of kernel `parent`.
    Device {
        parent: usize,
        thread: usize,
        op: usize,
        stream: Stream,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AOp {
    Store {
        loc: usize,
        value: u32,
    },
    Load {
        loc: usize,
    },
    Barrier {
        index: usize,
    },
    Launch {
        child: usize,
    },
    Record {
        event: String,
        stream: Stream,
    },
    WaitEvent {
        stream: Stream,
        event: String,
    },
    Trigger,
    GridSync,
    DeviceSync {
        record: bool,
    },
    GetError,
    PeekError,
    /// `bulkload` / `bulkstore`: issues copy `copy` of [`Prog::copies`].
    Bulk {
        copy: usize,
    },
    /// `mbarwait`: waits for mbarrier `mbar`'s phase.
    MbarWait {
        mbar: usize,
    },
    BulkCommit,
    BulkWait {
        read: bool,
        pending: usize,
    },
    FenceProxy,
}

impl AOp {
    /// Operations that act on the block's streams, events and launch list:
    /// they happen in one order per block (see `control.rs`).
    pub(crate) fn is_block_stream_op(&self) -> bool {
        matches!(
            self,
            AOp::Launch { .. }
                | AOp::Record { .. }
                | AOp::WaitEvent { .. }
                | AOp::DeviceSync { .. }
        )
    }
}

#[derive(Debug, Clone)]
pub(crate) struct AThread {
    pub kernel: usize,
    /// Its block within the kernel's grid.
    pub block: usize,
    /// Its operations: one a DSL operation, except a store or load of a
    /// tile's range, which is one a representative word (see `bulk.rs`).
    pub ops: Vec<AOp>,
    /// Its observables in program order: each register, each segment of a
    /// tile register.
    pub regs: Vec<Reg>,
    /// Event index of the thread's start; its operations follow, then its exit.
    pub first_event: usize,
}

impl AThread {
    pub(crate) fn start(&self) -> usize {
        self.first_event
    }
    pub(crate) fn op(&self, i: usize) -> usize {
        self.first_event + 1 + i
    }
    pub(crate) fn exit(&self) -> usize {
        self.first_event + 1 + self.ops.len()
    }
}

/// An observable a thread writes: a register or a segment of a tile
/// register, from `count` of its loads (a segment's representative words),
/// folded by `gridcheck_spec::place::observe` over `width` words.
#[derive(Debug, Clone)]
pub(crate) struct Reg {
    pub name: String,
    pub width: u32,
    pub count: usize,
}

/// One block of a grid.
#[derive(Debug, Clone)]
pub(crate) struct ABlock {
    pub threads: Vec<usize>,
    /// Event: every thread of the block exited (the block's part of the
    /// implicit PDL trigger).
    pub all_exited: usize,
    /// Event per `__syncthreads()` of the block, in order.
    pub barriers: Vec<usize>,
}

#[derive(Debug, Clone)]
pub(crate) struct AKernel {
    /// Every thread of the grid, block by block in declaration order.
    pub threads: Vec<usize>,
    pub blocks: Vec<ABlock>,
    pub start: Start,
    /// Device kernels this kernel's threads launch.
    pub children: Vec<usize>,
    /// Host kernel: 0; device kernel: its parent's depth plus one.
    pub depth: usize,
    /// Event: all its threads exited and its non-tail work finished.
    pub done: usize,
    /// Event: done, and its tail grids finished.
    pub finished: usize,
}

#[derive(Debug, Clone)]
pub(crate) struct Prog {
    /// Memory cells: the global locations (the first `globals`, the final
    /// state's), then each block's copy of the shared locations it uses.
    pub memory: Vec<(String, u32)>,
    pub globals: usize,
    /// The bulk copies, with their events (see `bulk.rs`).
    pub copies: Vec<ACopy>,
    /// Per mbarrier: the event of its phase's completion.
    pub phases: Vec<usize>,
    pub kernels: Vec<AKernel>,
    pub threads: Vec<AThread>,
    /// Device launches may fail for a full pool of this many slots; `None`
    /// when the test makes no more device launches than the pool holds.
    pub pool: Option<usize>,
    /// `cudaLimitDevRuntimeSyncDepth`.
    pub sync_depth: u64,
    /// Number of events; event 0 is the initial writes.
    pub events: usize,
}

pub(crate) const INIT: usize = 0;

fn err(m: impl Into<String>) -> AxiomError {
    AxiomError::new(ErrorKind::Invalid, m)
}

fn unsupported(m: impl Into<String>) -> AxiomError {
    AxiomError::new(ErrorKind::Unsupported, m)
}

fn stream_of(s: &StreamRef) -> Stream {
    match s {
        StreamRef::Null => Stream::InOrder(String::new()),
        StreamRef::Named(n) => Stream::InOrder(n.clone()),
        StreamRef::Tail => Stream::Tail,
        StreamRef::FireAndForget => Stream::FireAndForget,
    }
}

/// Host kernels whose completion a successor of host kernel `host[pos]`
/// waits for: it, and down the chain of PDL secondaries it heads.
fn chain(l: &Litmus, host: &[usize], pos: usize) -> Vec<usize> {
    let mut out = vec![host[pos]];
    let mut p = pos;
    while p > 0 && l.kernels[host[p]].launch == (KernelLaunch::Host { pdl: true }) {
        p -= 1;
        out.push(host[p]);
    }
    out
}

/// Who launches each device kernel: kernel, thread, operation, stream.
type Launcher = Vec<Option<(usize, usize, usize, Stream)>>;

/// The threads of a test resolved, before its kernels: each kernel's
/// threads by block, its blocks' barrier counts, the next free event.
struct Threads<'a> {
    cells: Cells<'a>,
    threads: Vec<AThread>,
    launcher: Launcher,
    kthreads: Vec<Vec<Vec<usize>>>,
    barrier_counts: Vec<Vec<usize>>,
    next_event: usize,
}

pub(crate) fn compile(l: &Litmus) -> Result<Prog, AxiomError> {
    if l.thread_count() == 0 {
        return Err(err("the test has no threads"));
    }
    let host: Vec<usize> = (0..l.kernels.len())
        .filter(|&i| matches!(l.kernels[i].launch, KernelLaunch::Host { .. }))
        .collect();
    let Threads {
        mut cells,
        threads,
        launcher,
        kthreads,
        barrier_counts,
        mut next_event,
    } = resolve_threads(l)?;
    let mut kernels = Vec::new();
    for ki in 0..l.kernels.len() {
        let start = start_of(l, &host, &launcher, ki)?;
        kernels.push(kernel(
            l,
            &launcher,
            ki,
            start,
            (&kthreads[ki], &barrier_counts[ki]),
            &mut next_event,
        ));
    }
    for ki in 0..kernels.len() {
        let mut depth = 0;
        let mut g = ki;
        while let Start::Device { parent, .. } = kernels[g].start {
            depth += 1;
            g = parent;
            if depth > kernels.len() {
                return Err(err("the launches form a cycle"));
            }
        }
        kernels[ki].depth = depth;
    }
    let device_launches = launcher.iter().filter(|x| x.is_some()).count() as u64;
    let lim = Limit::DevRuntimePendingLaunchCount;
    let pool_size = l.limit(lim).or(lim.default_value()).unwrap_or(u64::MAX);
    let pool = (device_launches > pool_size).then_some(pool_size as usize);
    let sl = Limit::DevRuntimeSyncDepth;
    let sync_depth = l.limit(sl).or(sl.default_value()).unwrap_or(u64::MAX);
    let (phases, events) = cells.number(next_event);
    Ok(Prog {
        globals: cells.globals,
        memory: cells.cells,
        copies: cells.copies,
        phases,
        kernels,
        threads,
        pool,
        sync_depth,
        events,
    })
}

/// Every thread's operations resolved, in kernel order, each thread with
/// its first event; who launches each device kernel; every block's barrier
/// count, the same for all its threads.
fn resolve_threads(l: &Litmus) -> Result<Threads<'_>, AxiomError> {
    let kidx: BTreeMap<&str, usize> = l
        .kernels
        .iter()
        .enumerate()
        .map(|(i, k)| (k.name.as_str(), i))
        .collect();
    let mut next_event = 1;
    let mut cells = Cells::new(l);
    let mut threads = Vec::new();
    let mut launcher: Launcher = vec![None; l.kernels.len()];
    let mut kthreads: Vec<Vec<Vec<usize>>> = Vec::new();
    let mut barrier_counts: Vec<Vec<usize>> = Vec::new();
    for (ki, k) in l.kernels.iter().enumerate() {
        let mut counts = vec![Vec::new(); k.blocks()];
        let mut by_block = vec![Vec::new(); k.blocks()];
        for t in &k.threads {
            let tid = threads.len();
            let mut ops = Vec::new();
            let mut barrier = 0;
            for op in &t.ops {
                // The index of its (first) operation in the thread.
                let oi = ops.len();
                ops.extend(resolve_op(
                    &kidx,
                    op,
                    (ki, t.block(), tid, oi),
                    &mut barrier,
                    (&mut launcher, &mut cells),
                )?);
            }
            counts[t.block()].push((t.name.clone(), barrier));
            let plan = cells.plan();
            let regs = t
                .ops
                .iter()
                .flat_map(|o| l.op_observables(plan, &k.name, &t.name, o))
                .map(|(name, width)| Reg {
                    name,
                    width,
                    count: plan.modeled_words((0, width)) as usize,
                })
                .collect();
            let n_ops = ops.len();
            threads.push(AThread {
                kernel: ki,
                block: t.block(),
                ops,
                regs,
                first_event: next_event,
            });
            next_event += n_ops + 2;
            by_block[t.block()].push(tid);
        }
        barrier_counts.push(block_barriers(k, &counts)?);
        kthreads.push(by_block);
    }
    Ok(Threads {
        cells,
        threads,
        launcher,
        kthreads,
        barrier_counts,
        next_event,
    })
}

/// One operation of thread `tid` (its first operation at `oi`, block
/// `block` of kernel `ki`), names resolved: a barrier numbered in the
/// thread's order, a launch recorded in `launcher`, locations, mbarriers
/// and copies in `cells`. A store or load is one a cell its location
/// names (a tile's range: its representative words), any other operation
/// one.
fn resolve_op<'a>(
    kidx: &BTreeMap<&str, usize>,
    op: &'a Op,
    (ki, block, tid, oi): (usize, usize, usize, usize),
    barrier: &mut usize,
    (launcher, cells): (&mut Launcher, &mut Cells<'a>),
) -> Result<Vec<AOp>, AxiomError> {
    let kb = (ki, block);
    Ok(match op {
        Op::Store { loc, value } => cells
            .place(kb, loc)?
            .into_iter()
            .map(|loc| AOp::Store { loc, value: *value })
            .collect(),
        Op::Load { loc, .. } => cells
            .place(kb, loc)?
            .into_iter()
            .map(|loc| AOp::Load { loc })
            .collect(),
        _ => vec![resolve_one(
            kidx,
            op,
            (ki, block, tid, oi),
            barrier,
            (launcher, cells),
        )?],
    })
}

/// [`resolve_op`] of an operation that is one of the model.
fn resolve_one<'a>(
    kidx: &BTreeMap<&str, usize>,
    op: &'a Op,
    (ki, block, tid, oi): (usize, usize, usize, usize),
    barrier: &mut usize,
    (launcher, cells): (&mut Launcher, &mut Cells<'a>),
) -> Result<AOp, AxiomError> {
    let kb = (ki, block);
    Ok(match op {
        Op::Store { .. } | Op::Load { .. } => unreachable!("resolved by `resolve_op`"),
        Op::SyncThreads => {
            *barrier += 1;
            AOp::Barrier {
                index: *barrier - 1,
            }
        }
        Op::Launch { kernel, stream } => {
            let c = *kidx
                .get(kernel.as_str())
                .ok_or_else(|| err(format!("kernel `{kernel}` is not declared")))?;
            if cells.litmus().kernels[c].launch != KernelLaunch::Device {
                return Err(err(format!(
                    "kernel `{kernel}` is launched from the host and from device code"
                )));
            }
            if launcher[c].is_some() {
                return Err(err(format!("kernel `{kernel}` is launched twice")));
            }
            launcher[c] = Some((ki, tid, oi, stream_of(stream)));
            AOp::Launch { child: c }
        }
        Op::EventRecord { event, stream } => AOp::Record {
            event: event.clone(),
            stream: event_stream(stream, op)?,
        },
        Op::StreamWaitEvent { stream, event } => AOp::WaitEvent {
            stream: event_stream(stream, op)?,
            event: event.clone(),
        },
        Op::Trigger => AOp::Trigger,
        Op::GridDependencySync => AOp::GridSync,
        Op::DeviceSynchronize { reg } => AOp::DeviceSync {
            record: reg.is_some(),
        },
        Op::GetLastError { .. } => AOp::GetError,
        Op::PeekAtLastError { .. } => AOp::PeekError,
        Op::BulkLoad { dst, src, bar } => {
            let mbar = cells.mbar(kb, bar);
            AOp::Bulk {
                copy: cells.copy((tid, oi, kb), (src, dst), Some(mbar))?,
            }
        }
        Op::BulkStore { dst, src } => AOp::Bulk {
            copy: cells.copy((tid, oi, kb), (src, dst), None)?,
        },
        Op::MbarWait { bar } => AOp::MbarWait {
            mbar: cells.mbar(kb, bar),
        },
        Op::BulkCommit => AOp::BulkCommit,
        Op::BulkWait { read, pending } => AOp::BulkWait {
            read: *read,
            pending: *pending as usize,
        },
        Op::FenceProxyAsync => AOp::FenceProxy,
    })
}

/// Each block's barrier count, from its threads' `(name, count)`: a block
/// whose threads reach different numbers of barriers deadlocks.
fn block_barriers(
    k: &gridcheck_spec::Kernel,
    counts: &[Vec<(String, usize)>],
) -> Result<Vec<usize>, AxiomError> {
    let mut per_block = Vec::new();
    for (b, counts) in counts.iter().enumerate() {
        if counts.iter().any(|(_, c)| *c != counts[0].1) {
            let detail: Vec<String> = counts
                .iter()
                .map(|(t, c)| format!("{t} executes {c}"))
                .collect();
            let block = if k.blocks() > 1 {
                format!("block b{b} of kernel")
            } else {
                "kernel".to_string()
            };
            return Err(AxiomError::new(
                ErrorKind::Deadlock,
                format!(
                    "deadlock: the threads of {block} `{}` execute different numbers of \
                 `syncthreads` ({}); a block barrier waits for every thread of the block",
                    k.name,
                    detail.join(", ")
                ),
            ));
        }
        per_block.push(counts.first().map(|c| c.1).unwrap_or(0));
    }
    Ok(per_block)
}

/// How kernel `ki` starts: after its host predecessors, overlapping one
/// through PDL, or launched by a thread of its parent.
fn start_of(
    l: &Litmus,
    host: &[usize],
    launcher: &Launcher,
    ki: usize,
) -> Result<Start, AxiomError> {
    let k = &l.kernels[ki];
    Ok(match k.launch {
        KernelLaunch::Host { pdl } => {
            let pos = host.iter().position(|&h| h == ki).unwrap_or(0);
            match (pos, pdl) {
                (0, true) => {
                    return Err(err(format!(
                        "kernel `{}` is `host-pdl` but no host kernel precedes it",
                        k.name
                    )));
                }
                (0, false) => Start::HostFirst,
                (_, false) => Start::HostAfter {
                    wait: chain(l, host, pos - 1),
                },
                (_, true) => Start::HostPdl {
                    primary: host[pos - 1],
                    wait: chain(l, host, pos - 1),
                },
            }
        }
        KernelLaunch::Device => match &launcher[ki] {
            Some((parent, thread, op, stream)) => Start::Device {
                parent: *parent,
                thread: *thread,
                op: *op,
                stream: stream.clone(),
            },
            None => return Err(err(format!("device kernel `{}` is never launched", k.name))),
        },
    })
}

/// Kernel `ki` with its events numbered from `next_event`: done, finished,
/// then per block its threads' exit and its barriers.
fn kernel(
    l: &Litmus,
    launcher: &Launcher,
    ki: usize,
    start: Start,
    (kthreads, barrier_counts): (&[Vec<usize>], &[usize]),
    next_event: &mut usize,
) -> AKernel {
    let children = (0..l.kernels.len())
        .filter(|&c| matches!(&launcher[c], Some((p, ..)) if *p == ki))
        .collect();
    let done = *next_event;
    let finished = *next_event + 1;
    *next_event += 2;
    let mut blocks = Vec::new();
    for (b, threads) in kthreads.iter().enumerate() {
        let all_exited = *next_event;
        *next_event += 1;
        let barriers = (0..barrier_counts[b]).map(|i| *next_event + i).collect();
        *next_event += barrier_counts[b];
        blocks.push(ABlock {
            threads: threads.clone(),
            all_exited,
            barriers,
        });
    }
    AKernel {
        threads: kthreads.concat(),
        blocks,
        start,
        children,
        depth: 0,
        done,
        finished,
    }
}

/// Events are defined on the NULL and named streams only (the model, like
/// the loom model, leaves the tail and fire-and-forget streams' events
/// undefined: the guide says nothing of them).
fn event_stream(s: &StreamRef, op: &Op) -> Result<Stream, AxiomError> {
    match s {
        StreamRef::Tail => Err(unsupported(format!(
            "`{op}`: events on the tail stream are not modeled"
        ))),
        StreamRef::FireAndForget => Err(unsupported(format!(
            "`{op}`: events on the fire-and-forget stream are not modeled"
        ))),
        s => Ok(stream_of(s)),
    }
}
