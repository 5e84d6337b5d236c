//! A litmus test compiled for the model: names resolved to indices, and the
//! static facts the runtime needs (each grid's completion count, its tail
//! launches, its host-stream predecessors).
//!
//! Compilation also rejects what cannot run: more threads than loom explores,
//! and a block whose threads execute different numbers of `__syncthreads()`
//! (the guide: a barrier in divergent code hangs; the model reports it instead
//! of letting loom find the deadlock).

use gridcheck_spec::{KernelLaunch, Litmus, Op, StreamRef};

use crate::ModelError;

/// The most GPU threads one test may have: loom's `MAX_THREADS` (5) less the
/// main thread.
pub const MAX_GPU_THREADS: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    /// The launching block's NULL stream. `ordered`: the block launches more
    /// than one grid into it, so they take tickets.
    Null { ordered: bool },
    /// `cudaStreamTailLaunch`. `ordered`: the grid has more than one tail launch.
    Tail { ordered: bool },
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
    pub name: String,
    /// Global indices of the kernel's threads (its one block).
    pub threads: Vec<usize>,
    pub start: Start,
    /// Arrivals that complete the grid: its threads and every grid it
    /// launched outside the tail stream.
    pub done_target: usize,
    /// Number of grids it launches into its tail stream.
    pub tails: usize,
    /// The next host kernel is a PDL secondary: record triggers.
    pub has_pdl_dependent: bool,
    /// Some thread calls `devicesync`: record the block's launches.
    pub has_devicesync: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MOp {
    Store { loc: usize, value: u32 },
    Load { loc: usize },
    SyncThreads,
    Launch { child: usize },
    Trigger,
    GridSync,
    DeviceSync,
}

#[derive(Debug, Clone)]
pub(crate) struct ThreadInfo {
    pub kernel: usize,
    /// Index among the kernel's modeled threads (not the CUDA thread index).
    pub slot: usize,
    pub ops: Vec<MOp>,
    /// Observable name of each load, in program order.
    pub regs: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Program {
    pub memory: Vec<(String, u32)>,
    pub kernels: Vec<KernelInfo>,
    pub threads: Vec<ThreadInfo>,
}

fn err(msg: impl Into<String>) -> ModelError {
    ModelError {
        message: msg.into(),
    }
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
    if n > MAX_GPU_THREADS {
        return Err(err(format!(
            "{n} threads in all; loom explores at most {MAX_GPU_THREADS} besides its main thread"
        )));
    }
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

    // Who launches each device kernel, into which stream.
    let mut launched_by: Vec<Option<(usize, StreamRef)>> = vec![None; l.kernels.len()];
    for (ki, k) in l.kernels.iter().enumerate() {
        for t in &k.threads {
            for op in &t.ops {
                if let Op::Launch { kernel, stream } = op {
                    let c = kidx(kernel)?;
                    if l.kernels[c].launch != KernelLaunch::Device {
                        return Err(err(format!(
                            "kernel `{kernel}` is launched from the host and from device code"
                        )));
                    }
                    if launched_by[c].is_some() {
                        return Err(err(format!("kernel `{kernel}` is launched twice")));
                    }
                    launched_by[c] = Some((ki, stream.clone()));
                }
            }
        }
    }
    let count = |parent: usize, s: &StreamRef| {
        launched_by
            .iter()
            .filter(|lb| matches!(lb, Some((p, st)) if *p == parent && st == s))
            .count()
    };

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
                let Some((parent, s)) = &launched_by[ki] else {
                    return Err(err(format!("device kernel `{}` is never launched", k.name)));
                };
                let stream = match s {
                    StreamRef::Null => Stream::Null {
                        ordered: count(*parent, s) > 1,
                    },
                    StreamRef::Tail => Stream::Tail {
                        ordered: count(*parent, s) > 1,
                    },
                    StreamRef::FireAndForget => Stream::FireAndForget,
                };
                Start::Device {
                    parent: *parent,
                    stream,
                }
            }
        };
        let tails = count(ki, &StreamRef::Tail);
        let children = launched_by
            .iter()
            .filter(|lb| matches!(lb, Some((p, _)) if *p == ki))
            .count();
        let next_host_pdl = host
            .iter()
            .position(|&h| h == ki)
            .and_then(|p| host.get(p + 1))
            .is_some_and(|&h| l.kernels[h].launch == (KernelLaunch::Host { pdl: true }));

        // Every thread of a block must reach the same number of barriers.
        let syncs: Vec<usize> = k
            .threads
            .iter()
            .map(|t| t.ops.iter().filter(|o| **o == Op::SyncThreads).count())
            .collect();
        if syncs.iter().any(|&s| s != syncs[0]) {
            let detail: Vec<String> = k
                .threads
                .iter()
                .zip(&syncs)
                .map(|(t, s)| format!("{} executes {s}", t.name))
                .collect();
            return Err(err(format!(
                "deadlock: the threads of kernel `{}` execute different numbers of \
                 `syncthreads` ({}); a block barrier waits for every thread of the block",
                k.name,
                detail.join(", ")
            )));
        }

        let mut ids = Vec::new();
        for (slot, t) in k.threads.iter().enumerate() {
            let mut ops = Vec::new();
            let mut regs = Vec::new();
            for op in &t.ops {
                ops.push(match op {
                    Op::Store { loc, value } => MOp::Store {
                        loc: lidx(loc)?,
                        value: *value,
                    },
                    Op::Load { reg, loc } => {
                        regs.push(format!("{}.{}.{}", k.name, t.name, reg));
                        MOp::Load { loc: lidx(loc)? }
                    }
                    Op::SyncThreads => MOp::SyncThreads,
                    Op::Launch { kernel, .. } => MOp::Launch {
                        child: kidx(kernel)?,
                    },
                    Op::Trigger => MOp::Trigger,
                    Op::GridDependencySync => MOp::GridSync,
                    Op::DeviceSynchronize => MOp::DeviceSync,
                });
            }
            ids.push(threads.len());
            threads.push(ThreadInfo {
                kernel: ki,
                slot,
                ops,
                regs,
            });
        }
        kernels.push(KernelInfo {
            name: k.name.clone(),
            threads: ids,
            start,
            done_target: k.threads.len() + children - tails,
            tails,
            has_pdl_dependent: next_host_pdl,
            has_devicesync: k
                .threads
                .iter()
                .any(|t| t.ops.contains(&Op::DeviceSynchronize)),
        });
    }
    if kernels.len() > usize::BITS as usize {
        return Err(err("too many kernels"));
    }
    Ok(Program {
        memory: l.memory.clone(),
        kernels,
        threads,
    })
}
