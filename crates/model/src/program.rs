//! A litmus test compiled for the model: names resolved to indices, and the
//! static facts the runtime needs (each grid's completion count, its tail
//! launches, its host-stream predecessors, the layout of its block's stream
//! state).
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

use gridcheck_spec::{KernelLaunch, Limit, Litmus, Op, StreamRef};

use crate::slots::Slots;
use crate::{ErrorKind, ModelError};

/// The most GPU threads one test may have: loom's `MAX_THREADS` (5) less the
/// main thread.
pub const MAX_GPU_THREADS: usize = 4;

/// Where a device-launched grid goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    /// An in-order stream of the launching block: its NULL stream or a named
    /// one; `slot` is the stream's place in the block's stream state.
    InOrder { slot: usize },
    /// `cudaStreamTailLaunch`; `slot` orders several tail launches.
    Tail { slot: usize },
    /// `cudaStreamFireAndForget`.
    FireAndForget,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Start {
    /// The first kernel of the host stream.
    HostFirst,
    /// A host kernel without PDL: starts once these host kernels are finished.
    HostAfter { wait: Vec<usize> },
    /// A host kernel launched with programmatic stream serialization: starts
    /// once every thread of `primary` triggered or exited; `gridsync` waits for
    /// the host kernels in `wait`.
    HostPdl { primary: usize, wait: Vec<usize> },
    /// Launched by a thread of `parent` into `stream`.
    Device { parent: usize, stream: Stream },
}

#[derive(Debug, Clone)]
pub(crate) struct KernelInfo {
    /// Global indices of the kernel's threads, every block's.
    pub threads: Vec<usize>,
    /// Global indices of the threads of each block of its grid.
    pub blocks: Vec<Vec<usize>>,
    pub start: Start,
    /// Arrivals that complete the grid: its threads and every grid it
    /// launched outside the tail stream.
    pub done_target: usize,
    /// Number of grids it launches into its tail stream.
    pub tails: usize,
    /// Some block's stream operations need shared state: one of its
    /// streams gets more than one launch, or it uses events. Otherwise
    /// every launch has no stream predecessor and the state is skipped.
    pub stream_state: bool,
    /// The next host kernel is a PDL secondary: record triggers.
    pub has_pdl_dependent: bool,
    /// Some thread calls `devicesync`: record each block's launches.
    pub has_devicesync: bool,
    /// Something waits for this grid to be *done* (its tail grids, or its
    /// own completion being awaited): its threads and non-tail children
    /// report to its completion count. When nothing does, the model skips
    /// the count: it would add scheduling points to explore and no edge.
    pub done_awaited: bool,
    /// Something waits for this grid to be *finished* (done and its tail
    /// grids finished): a host successor, a stream successor, an event, a
    /// `devicesync`, the completion of its parent, or, when the launch pool
    /// is modeled, the release of its pool slot.
    pub finished_awaited: bool,
    /// Nesting depth: 0 for a host kernel, its parent's plus one for a
    /// device kernel.
    pub depth: usize,
    /// The next host kernel, when it waits for this one's completion alone
    /// (no PDL on either side): the thread that completes this grid spawns
    /// the successor's threads, so that they do not exist, and add no
    /// interleavings, before they may start. The spawn carries the
    /// completion's happens-before, like the wait it replaces.
    pub successor: Option<usize>,
    /// Spawned by its predecessor's completion (see `successor`), not at the
    /// start of an execution.
    pub lazy: bool,
    /// A `devicesync` in this grid is deeper than the synchronization depth
    /// limit: it returns an error and waits for nothing.
    pub sync_depth_exceeded: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MOp {
    Store {
        loc: usize,
        value: u32,
        /// Unique to this store operation, never 0 (the initial value's):
        /// what the location's atomic holds (see `memory.rs`).
        id: u32,
    },
    Load {
        loc: usize,
    },
    SyncThreads,
    Launch {
        child: usize,
    },
    /// `record e s`: slots of the event and of the stream.
    Record {
        event: usize,
        stream: usize,
    },
    /// `waitevent s e`: slots of the stream and of the event.
    WaitEvent {
        stream: usize,
        event: usize,
    },
    Trigger,
    GridSync,
    /// `devicesync`; `record`: its result goes into the next register.
    DeviceSync {
        record: bool,
    },
    /// `geterror`: the last error into the next register, then reset.
    GetError,
    /// `peekerror`: the last error into the next register.
    PeekError,
}

#[derive(Debug, Clone)]
pub(crate) struct ThreadInfo {
    pub kernel: usize,
    /// Its block within the kernel's grid.
    pub block: usize,
    pub ops: Vec<MOp>,
    /// Observable name of each register it writes, in program order.
    pub regs: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Program {
    pub memory: Vec<(String, u32)>,
    pub kernels: Vec<KernelInfo>,
    pub threads: Vec<ThreadInfo>,
    /// The launch pool's size when it can fill up (the test makes more
    /// device launches than `cudaLimitDevRuntimePendingLaunchCount`);
    /// `None`: every launch finds a free slot, and the pool is not modeled.
    pub pool: Option<usize>,
}

impl Program {
    /// Whether thread `tid` is spawned at the start of an execution: a
    /// thread of a host kernel not started by its predecessor's completion.
    pub(crate) fn is_host_thread(&self, tid: usize) -> bool {
        let k = &self.kernels[self.threads[tid].kernel];
        !matches!(k.start, Start::Device { .. }) && !k.lazy && !self.pdl_spawned(tid)
    }

    /// Whether thread `tid` belongs to a PDL secondary and is not its first
    /// thread: the first waits for the primary's trigger and spawns it (see
    /// [`crate::pdl`]).
    pub(crate) fn pdl_follower(&self, tid: usize) -> bool {
        let k = &self.kernels[self.threads[tid].kernel];
        matches!(k.start, Start::HostPdl { .. }) && k.threads.first() != Some(&tid)
    }

    /// Whether another modeled thread spawns thread `tid` of a PDL
    /// secondary: a follower (see [`Program::pdl_follower`]), or the first
    /// thread of a secondary whose primary is itself a PDL secondary, which
    /// that primary's first thread spawns once it may start (see
    /// [`crate::pdl`]).
    pub(crate) fn pdl_spawned(&self, tid: usize) -> bool {
        let k = &self.kernels[self.threads[tid].kernel];
        match k.start {
            Start::HostPdl { primary, .. } => {
                self.pdl_follower(tid)
                    || matches!(self.kernels[primary].start, Start::HostPdl { .. })
            }
            _ => false,
        }
    }

    /// The PDL secondary of kernel `k`, if the next host kernel is one.
    pub(crate) fn pdl_secondary_of(&self, k: usize) -> Option<usize> {
        self.kernels
            .iter()
            .position(|s| matches!(s.start, Start::HostPdl { primary, .. } if primary == k))
    }

    /// Bits of one set of grids in a block's stream state word.
    pub(crate) fn mask_bits(&self) -> usize {
        self.kernels.len()
    }
}

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

pub(crate) fn compile(l: &Litmus) -> Result<Program, ModelError> {
    let n = l.thread_count();
    if n == 0 {
        return Err(err("the test has no threads"));
    }
    let kidx = |name: &str| {
        l.kernels
            .iter()
            .position(|k| k.name == name)
            .ok_or_else(|| err(format!("kernel `{name}` is not declared")))
    };
    let lidx = |name: &str| {
        l.memory
            .iter()
            .position(|(m, _)| m == name)
            .ok_or_else(|| err(format!("location `{name}` is not declared")))
    };
    let host: Vec<usize> = (0..l.kernels.len())
        .filter(|&i| matches!(l.kernels[i].launch, KernelLaunch::Host { .. }))
        .collect();

    // Who launches each device kernel (kernel and block), into which
    // stream; each kernel's slots.
    let mut launched_by: Vec<Option<(usize, usize, Stream)>> = vec![None; l.kernels.len()];
    let mut slots: Vec<Slots> = l.kernels.iter().map(|_| Slots::default()).collect();
    let mut mops: Vec<Vec<Vec<MOp>>> = Vec::new();
    let mut store_ids = 0u32;
    for (ki, k) in l.kernels.iter().enumerate() {
        let sl = &mut slots[ki];
        // The NULL stream always takes slot 0.
        sl.stream(&StreamRef::Null, "launch")?;
        let mut per_thread = Vec::new();
        for t in &k.threads {
            let block = t.block();
            let mut ops = Vec::new();
            for op in &t.ops {
                let what = op.to_string();
                ops.push(match op {
                    Op::Store { loc, value } => MOp::Store {
                        loc: lidx(loc)?,
                        value: *value,
                        id: {
                            store_ids += 1;
                            store_ids
                        },
                    },
                    Op::Load { loc, .. } => MOp::Load { loc: lidx(loc)? },
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
                    #[allow(unreachable_patterns)]
                    other => {
                        return Err(ModelError::new(
                            ErrorKind::Unsupported,
                            format!("`{other}` is not modeled"),
                        ));
                    }
                });
            }
            per_thread.push(ops);
        }
        mops.push(per_thread);
    }
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
        let start = match k.launch {
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
                        wait: host_chain(&l.kernels, &host, pos - 1),
                    }
                } else {
                    Start::HostAfter {
                        wait: host_chain(&l.kernels, &host, pos - 1),
                    }
                }
            }
            KernelLaunch::Device => {
                let Some((parent, _, stream)) = launched_by[ki] else {
                    return Err(err(format!("device kernel `{}` is never launched", k.name)));
                };
                Start::Device { parent, stream }
            }
        };
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

        // Every thread of a block must reach the same number of barriers.
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

        let mut ids = Vec::new();
        let mut blocks = vec![Vec::new(); k.blocks()];
        for (t, ops) in k.threads.iter().zip(mops[ki].drain(..)) {
            let regs = t
                .ops
                .iter()
                .filter_map(|op| {
                    op.register()
                        .map(|reg| format!("{}.{}.{}", k.name, t.name, reg))
                })
                .collect();
            ids.push(threads.len());
            blocks[t.block()].push(threads.len());
            threads.push(ThreadInfo {
                kernel: ki,
                block: t.block(),
                ops,
                regs,
            });
        }
        let sl = &slots[ki];
        kernels.push(KernelInfo {
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
        });
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
    Ok(Program {
        memory: l.memory.clone(),
        kernels,
        threads,
        pool,
    })
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
