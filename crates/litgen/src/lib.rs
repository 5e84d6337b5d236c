//! Random well-formed litmus programs over the whole DSL, in the manner of
//! herdtools' `diy`, as proptest strategies (so a failing program shrinks to
//! a minimal one), and the differential test of the two oracles.
//!
//! [`strategy`] draws a [`GenProgram`]: up to four kernels (host, host-pdl,
//! or launched from device code into the NULL, a named, the tail or the
//! fire-and-forget stream, at any point of a thread), one to three threads
//! each, in one block or spread over two or three (`bM.tN`), and for each
//! thread a few operations among stores, loads,
//! `syncthreads` (placed so that every thread of a block executes the same
//! number), `trigger`, `gridsync`, `devicesync` (CDP1 only), error queries,
//! event records and waits, and the asynchronous proxy (not in CDP1
//! programs: `cp.async.bulk` needs sm_90): a shared location `s`, bulk loads
//! and stores between it and the global ones, `mbarwait`, `bulkcommit`,
//! `bulkwait [read] n` and `fence.proxy.async`, with at most as many bulk
//! copies as keep the program within loom's four agents; sometimes a
//! pending launch pool smaller than the
//! launches, or a synchronization depth of 1. [`GenProgram::litmus`] builds
//! the spec's `Litmus` and checks it by loading its YAML through the spec
//! loader, so every program the oracles see is one the loader accepts.
//!
//! [`differential`] runs both oracles on many programs and classifies each
//! ([`gridcheck_oracle::Agreement`]); a conflict is shrunk and printed as a
//! ready-to-paste YAML test.

pub mod differential;
pub mod enumerate;

use std::fmt;

use gridcheck_spec::render::{litmus_spec_yaml, litmus_test_yaml, load_litmus};
use gridcheck_spec::{
    Kernel, KernelLaunch, Limit, Litmus, Op, Profile, StreamRef, Thread, Verdict, condition,
    thread_name,
};
use proptest::prelude::*;

/// What the generator may produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenConfig {
    /// Threads in all (loom explores at most 4; 3 by default, where loom's
    /// exhaustive exploration of a random program takes milliseconds rather
    /// than the seconds a 4-thread one can).
    pub max_threads: usize,
    /// Operations per thread, launches excluded.
    pub max_ops: usize,
    /// Operations of all threads together, launches included: loom's cost
    /// grows steeply with them (a 4-thread program of 10 operations can
    /// take seconds).
    pub max_total_ops: usize,
    /// Profiles to draw from: `devicesync` appears only in CDP1 programs.
    pub cdp1: bool,
    /// Device runtime limits (a pool smaller than the launches, a sync
    /// depth of 1); the GPU runs such tests one instance per launch.
    pub limits: bool,
    /// The weight of an event record and of a stream wait among the
    /// operations (1 by default, as rare as an error query; the GPU
    /// campaign raises it, to meet several of each in one thread).
    pub event_weight: u32,
    /// The weight of each operation of the asynchronous proxy (bulk load,
    /// bulk store, `mbarwait`, ..., shared loads and stores); 0 leaves them
    /// out.
    pub async_weight: u32,
    /// Threads and bulk copies in all (loom runs each copy as a thread of
    /// its own): by default loom's [`gridcheck_model::MAX_GPU_THREADS`],
    /// so that both oracles decide every program; the GPU campaign, which
    /// loom does not check, allows more copies.
    pub max_agents: usize,
}

impl Default for GenConfig {
    fn default() -> GenConfig {
        GenConfig {
            max_threads: 3,
            max_ops: 3,
            max_total_ops: 7,
            cdp1: true,
            limits: true,
            event_weight: 1,
            async_weight: 1,
            max_agents: gridcheck_model::MAX_GPU_THREADS,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenStream {
    Null,
    Named(u8),
    Tail,
    FireAndForget,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenOp {
    Store(u8, u32),
    Load(u8),
    Trigger,
    GridSync,
    DeviceSync(bool),
    GetError,
    PeekError,
    Record(u8, GenStream),
    Wait(GenStream, u8),
    /// `store s v`, `load r s`: the block's shared location `s`.
    SharedStore(u32),
    SharedLoad,
    /// `bulkload s <loc> b<n>` (each bulk load of a block gets its own
    /// mbarrier, numbered by [`normalize`]), followed by its own
    /// `mbarwait b<n>` when the flag says so, and `mbarwait b<n>` (on one
    /// of its block's).
    BulkLoad(u8, u8, bool),
    MbarWait(u8),
    /// `bulkstore <loc> s`.
    BulkStore(u8),
    BulkCommit,
    /// `bulkwait [read] n`.
    BulkWait(bool, u8),
    ProxyFence,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GenLaunch {
    Host {
        pdl: bool,
    },
    Device {
        parent: usize,
        thread: usize,
        pos: usize,
        stream: GenStream,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenKernel {
    pub launch: GenLaunch,
    pub threads: Vec<Vec<GenOp>>,
    /// The block of each thread (after [`normalize`]: numbered in order of
    /// first appearance; all 0 for a kernel of one block).
    pub blocks: Vec<usize>,
    /// Where each thread executes its block's barrier, if the blocks have one.
    pub barrier: Option<Vec<usize>>,
}

/// A generated program, before it becomes a `Litmus`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenProgram {
    pub cdp1: bool,
    pub locations: usize,
    pub kernels: Vec<GenKernel>,
    pub pool: Option<u64>,
    pub sync_depth: Option<u64>,
}

fn stream() -> impl Strategy<Value = GenStream> {
    prop_oneof![
        3 => Just(GenStream::Null),
        2 => (1u8..=2).prop_map(GenStream::Named),
        2 => Just(GenStream::Tail),
        1 => Just(GenStream::FireAndForget),
    ]
}

fn event_stream() -> impl Strategy<Value = GenStream> {
    prop_oneof![Just(GenStream::Null), (1u8..=2).prop_map(GenStream::Named)]
}

fn op(cdp1: bool, events: u32, bulk: u32) -> BoxedStrategy<GenOp> {
    let devicesync = if cdp1 { 2 } else { 0 };
    let base = prop_oneof![
        6 => (0u8..3, 1u32..=3).prop_map(|(l, v)| GenOp::Store(l, v)),
        6 => (0u8..3).prop_map(GenOp::Load),
        2 => Just(GenOp::Trigger),
        2 => Just(GenOp::GridSync),
        devicesync => any::<bool>().prop_map(GenOp::DeviceSync),
        1 => Just(GenOp::GetError),
        1 => Just(GenOp::PeekError),
        events => (1u8..=2, event_stream()).prop_map(|(e, s)| GenOp::Record(e, s)),
        events => (event_stream(), 1u8..=2).prop_map(|(s, e)| GenOp::Wait(s, e)),
    ];
    if cdp1 || bulk == 0 {
        return base.boxed();
    }
    // Each operation of the asynchronous proxy weighs `bulk` among the
    // others (a union of its own: proptest refuses a weight of 0 there).
    let proxy = prop_oneof![
        (1u32..=3).prop_map(GenOp::SharedStore),
        Just(GenOp::SharedLoad),
        (0u8..3, any::<bool>()).prop_map(|(l, w)| GenOp::BulkLoad(l, 0, w)),
        (0u8..2).prop_map(GenOp::MbarWait),
        (0u8..3).prop_map(GenOp::BulkStore),
        Just(GenOp::BulkCommit),
        (any::<bool>(), 0u8..2).prop_map(|(r, n)| GenOp::BulkWait(r, n)),
        Just(GenOp::ProxyFence),
    ];
    let base_weight = 18 + devicesync + 2 * events;
    prop_oneof![base_weight => base, 8 * bulk => proxy].boxed()
}

fn kernel(cfg: GenConfig, cdp1: bool, index: usize) -> impl Strategy<Value = GenKernel> {
    let launch = if index == 0 {
        Just(GenLaunch::Host { pdl: false }).boxed()
    } else {
        prop_oneof![
            1 => any::<bool>().prop_map(|pdl| GenLaunch::Host { pdl }),
            3 => (0..index, 0usize..3, 0usize..8, stream()).prop_map(|(parent, thread, pos, stream)| {
                GenLaunch::Device { parent, thread, pos, stream }
            }),
        ]
        .boxed()
    };
    let threads = prop::collection::vec(
        prop::collection::vec(
            op(cdp1, cfg.event_weight, cfg.async_weight),
            0..=cfg.max_ops,
        ),
        1..=3,
    );
    // One block most of the time; otherwise a block per thread drawn.
    let blocks = prop_oneof![
        3 => Just(vec![0; 3]),
        2 => prop::collection::vec(0usize..3, 3),
    ];
    let barrier = prop::option::weighted(0.25, prop::collection::vec(0usize..8, 3));
    (launch, threads, blocks, barrier).prop_map(|(launch, threads, blocks, barrier)| GenKernel {
        launch,
        threads,
        blocks,
        barrier,
    })
}

/// Random programs within `cfg`.
pub fn strategy(cfg: GenConfig) -> impl Strategy<Value = GenProgram> {
    let cdp1 = if cfg.cdp1 {
        prop::bool::weighted(0.25).boxed()
    } else {
        Just(false).boxed()
    };
    (cdp1, 1usize..=4).prop_flat_map(move |(cdp1, n)| {
        let kernels: Vec<_> = (0..n).map(|i| kernel(cfg, cdp1, i)).collect();
        (
            Just(cdp1),
            1usize..=3,
            kernels,
            prop::option::weighted(0.15, 1u64..=2),
            prop::option::weighted(0.1, Just(1u64)),
        )
            .prop_map(move |(cdp1, locations, kernels, pool, sync_depth)| {
                normalize(
                    GenProgram {
                        cdp1,
                        locations,
                        kernels,
                        pool: pool.filter(|_| cfg.limits),
                        sync_depth: sync_depth.filter(|_| cfg.limits),
                    },
                    cfg,
                )
            })
    })
}

/// Makes a drawn program well formed: at most `max_threads` threads,
/// launches by existing threads, locations that exist, events that are
/// recorded before they are waited on somewhere in the block.
fn normalize(mut p: GenProgram, cfg: GenConfig) -> GenProgram {
    keep_thread_budget(&mut p, cfg.max_threads);
    renumber_blocks(&mut p);
    keep_op_budget(&mut p, cfg.max_total_ops);
    keep_copy_budget(&mut p, cfg.max_agents);
    fix_operands(&mut p);
    fix_mbarriers(&mut p);
    fix_launch_sites(&mut p);
    p
}

/// Thread budget: drops threads from the end, then kernels that have none
/// (and every kernel launched by a dropped one).
fn keep_thread_budget(p: &mut GenProgram, max_threads: usize) {
    let mut budget = max_threads;
    for k in &mut p.kernels {
        let keep = k.threads.len().min(budget);
        k.threads.truncate(keep);
        budget -= keep;
    }
    let mut alive: Vec<bool> = p.kernels.iter().map(|k| !k.threads.is_empty()).collect();
    for i in 0..p.kernels.len() {
        if let GenLaunch::Device { parent, .. } = p.kernels[i].launch
            && !alive[parent]
        {
            alive[i] = false;
        }
    }
    let mut remap = vec![usize::MAX; p.kernels.len()];
    let mut kept = Vec::new();
    for (i, k) in p.kernels.drain(..).enumerate() {
        if alive[i] {
            remap[i] = kept.len();
            kept.push(k);
        }
    }
    for k in &mut kept {
        if let GenLaunch::Device { parent, .. } = &mut k.launch {
            *parent = remap[*parent];
        }
    }
    p.kernels = kept;
}

/// Blocks: one per thread as drawn, renumbered in order of appearance.
fn renumber_blocks(p: &mut GenProgram) {
    for k in &mut p.kernels {
        let mut seen: Vec<usize> = Vec::new();
        let drawn = std::mem::take(&mut k.blocks);
        for ti in 0..k.threads.len() {
            let b = drawn.get(ti).copied().unwrap_or(0);
            let pos = seen.iter().position(|&x| x == b).unwrap_or_else(|| {
                seen.push(b);
                seen.len() - 1
            });
            k.blocks.push(pos);
        }
    }
}

/// Operation budget: launches count, then the longest thread is trimmed.
fn keep_op_budget(p: &mut GenProgram, max_total_ops: usize) {
    let launches = p
        .kernels
        .iter()
        .filter(|k| matches!(k.launch, GenLaunch::Device { .. }))
        .count();
    let budget = max_total_ops.saturating_sub(launches);
    loop {
        let total: usize = p
            .kernels
            .iter()
            .flat_map(|k| &k.threads)
            .map(Vec::len)
            .sum();
        if total <= budget {
            break;
        }
        if let Some(t) = p
            .kernels
            .iter_mut()
            .flat_map(|k| k.threads.iter_mut())
            .max_by_key(|t| t.len())
        {
            t.pop();
        }
    }
}

/// Bulk copies: at most as many as keep the program within `max_agents`
/// threads and copies ([`GenConfig::max_agents`]), the later ones dropped.
fn keep_copy_budget(p: &mut GenProgram, max_agents: usize) {
    let threads: usize = p.kernels.iter().map(|k| k.threads.len()).sum();
    let mut budget = max_agents.saturating_sub(threads);
    for t in p.kernels.iter_mut().flat_map(|k| k.threads.iter_mut()) {
        t.retain(|o| {
            let copy = matches!(o, GenOp::BulkLoad(..) | GenOp::BulkStore(_));
            if copy && budget == 0 {
                return false;
            }
            budget -= usize::from(copy);
            true
        });
    }
}

/// mbarriers: each bulk load of a block gets its own (numbered in the
/// block's thread order), and an `mbarwait` names one of its block's, or
/// goes.
fn fix_mbarriers(p: &mut GenProgram) {
    for k in &mut p.kernels {
        let blocks = k.blocks.iter().max().map_or(1, |b| b + 1);
        for b in 0..blocks {
            let mut loads = 0u8;
            for (t, _) in k
                .threads
                .iter_mut()
                .zip(&k.blocks)
                .filter(|(_, x)| **x == b)
            {
                for o in t.iter_mut() {
                    if let GenOp::BulkLoad(_, bar, _) = o {
                        *bar = loads;
                        loads += 1;
                    }
                }
            }
            for (t, _) in k
                .threads
                .iter_mut()
                .zip(&k.blocks)
                .filter(|(_, x)| **x == b)
            {
                t.retain(|o| loads > 0 || !matches!(o, GenOp::MbarWait(_)));
                for o in t.iter_mut() {
                    if let GenOp::MbarWait(bar) = o {
                        *bar %= loads;
                    }
                }
            }
        }
    }
}

/// Locations that exist, `devicesync` only under CDP1, streams and events
/// of the block that uses them, and no wait on an event the block never
/// records.
fn fix_operands(p: &mut GenProgram) {
    let n_loc = p.locations as u8;
    for k in &mut p.kernels {
        for (t, &b) in k.threads.iter_mut().zip(&k.blocks) {
            for o in t.iter_mut() {
                match o {
                    GenOp::Store(l, _)
                    | GenOp::Load(l)
                    | GenOp::BulkLoad(l, ..)
                    | GenOp::BulkStore(l) => *l %= n_loc,
                    GenOp::DeviceSync(_) if !p.cdp1 => *o = GenOp::GetError,
                    // Named streams and events belong to one block: block
                    // b's are numbered from 2b + 1.
                    GenOp::Record(e, s) | GenOp::Wait(s, e) => {
                        *e = (*e - 1) % 2 + 1 + 2 * b as u8;
                        if let GenStream::Named(n) = s {
                            *n = (*n - 1) % 2 + 1 + 2 * b as u8;
                        }
                    }
                    _ => {}
                }
            }
        }
        for bi in 0..k.threads.len() {
            let recorded: Vec<u8> = k
                .threads
                .iter()
                .zip(&k.blocks)
                .filter(|(_, b)| **b == bi)
                .flat_map(|(t, _)| t)
                .filter_map(|o| match o {
                    GenOp::Record(e, _) => Some(*e),
                    _ => None,
                })
                .collect();
            for (t, _) in k
                .threads
                .iter_mut()
                .zip(&k.blocks)
                .filter(|(_, b)| **b == bi)
            {
                t.retain(|o| !matches!(o, GenOp::Wait(_, e) if !recorded.contains(e)));
            }
        }
    }
}

/// Launches by existing threads, at existing positions.
fn fix_launch_sites(p: &mut GenProgram) {
    let counts: Vec<usize> = p.kernels.iter().map(|k| k.threads.len()).collect();
    let lens: Vec<Vec<usize>> = p
        .kernels
        .iter()
        .map(|k| k.threads.iter().map(Vec::len).collect())
        .collect();
    for k in &mut p.kernels {
        if let GenLaunch::Device {
            parent,
            thread,
            pos,
            ..
        } = &mut k.launch
        {
            *thread %= counts[*parent];
            *pos %= lens[*parent][*thread] + 1;
        }
    }
}

fn stream_ref(s: GenStream) -> StreamRef {
    match s {
        GenStream::Null => StreamRef::Null,
        GenStream::Named(n) => StreamRef::Named(format!("s{n}")),
        GenStream::Tail => StreamRef::Tail,
        GenStream::FireAndForget => StreamRef::FireAndForget,
    }
}

const LOCATIONS: [&str; 3] = ["x", "y", "z"];
/// The shared location of the programs that use one.
const SHARED: &str = "s";

/// An operation of the asynchronous proxy (or on shared memory) as the
/// DSL's.
fn bulk_op(o: GenOp, next_reg: &mut impl FnMut() -> String) -> Op {
    let loc = |l: u8| LOCATIONS[l as usize].to_string();
    match o {
        GenOp::SharedStore(v) => Op::Store {
            loc: SHARED.into(),
            value: v,
        },
        GenOp::SharedLoad => Op::Load {
            reg: next_reg(),
            loc: SHARED.into(),
        },
        GenOp::BulkLoad(l, b, _) => Op::BulkLoad {
            dst: SHARED.into(),
            src: loc(l),
            bar: format!("b{b}"),
        },
        GenOp::MbarWait(b) => Op::MbarWait {
            bar: format!("b{b}"),
        },
        GenOp::BulkStore(l) => Op::BulkStore {
            dst: loc(l),
            src: SHARED.into(),
        },
        GenOp::BulkCommit => Op::BulkCommit,
        GenOp::BulkWait(read, n) => Op::BulkWait {
            read,
            pending: u32::from(n),
        },
        _ => Op::FenceProxyAsync,
    }
}

impl GenProgram {
    /// The program as the spec's `Litmus`, loaded back through the spec
    /// loader (so that it is one the loader accepts), with the condition
    /// `exists <first location> == <a value stored to it, or 0>`.
    pub fn litmus(&self) -> Result<Litmus, String> {
        let l = self.raw_litmus()?;
        load_litmus(&litmus_spec_yaml(self.profile(), "generated", &l)).map_err(|e| {
            format!(
                "the generator made a program the loader rejects: {e}\n{}",
                self.yaml("generated")
            )
        })
    }

    pub fn profile(&self) -> Profile {
        if self.cdp1 {
            Profile::Cdp1
        } else if self
            .kernels
            .iter()
            .any(|k| k.launch == GenLaunch::Host { pdl: true })
        {
            Profile::Pdl
        } else {
            Profile::Cdp2
        }
    }

    /// One `tests:` entry of spec YAML, ready to paste.
    pub fn yaml(&self, name: &str) -> String {
        match self.raw_litmus() {
            Ok(l) => litmus_test_yaml(name, "a generated program", &l),
            Err(e) => format!("# {e}\n"),
        }
    }

    fn raw_litmus(&self) -> Result<Litmus, String> {
        let names: Vec<String> = (0..self.kernels.len()).map(|i| format!("k{i}")).collect();
        let mut kernels: Vec<Kernel> = Vec::new();
        for (ki, k) in self.kernels.iter().enumerate() {
            let mut threads = Vec::new();
            for (ti, ops) in k.threads.iter().enumerate() {
                let mut out: Vec<Op> = Vec::new();
                let mut reg = 0;
                let mut next_reg = || {
                    reg += 1;
                    format!("r{}", reg - 1)
                };
                for o in ops {
                    out.push(match *o {
                        GenOp::Store(l, v) => Op::Store {
                            loc: LOCATIONS[l as usize].into(),
                            value: v,
                        },
                        GenOp::Load(l) => Op::Load {
                            reg: next_reg(),
                            loc: LOCATIONS[l as usize].into(),
                        },
                        GenOp::Trigger => Op::Trigger,
                        GenOp::GridSync => Op::GridDependencySync,
                        GenOp::DeviceSync(r) => Op::DeviceSynchronize {
                            reg: r.then(&mut next_reg),
                        },
                        GenOp::GetError => Op::GetLastError { reg: next_reg() },
                        GenOp::PeekError => Op::PeekAtLastError { reg: next_reg() },
                        GenOp::Record(e, s) => Op::EventRecord {
                            event: format!("e{e}"),
                            stream: stream_ref(s),
                        },
                        GenOp::Wait(s, e) => Op::StreamWaitEvent {
                            stream: stream_ref(s),
                            event: format!("e{e}"),
                        },
                        o => bulk_op(o, &mut next_reg),
                    });
                    if let GenOp::BulkLoad(_, b, true) = *o {
                        out.push(Op::MbarWait {
                            bar: format!("b{b}"),
                        });
                    }
                }
                // Launches of this thread, at their positions (later
                // positions first, so that earlier ones stay in place).
                let mut launches: Vec<(usize, usize, GenStream)> = self
                    .kernels
                    .iter()
                    .enumerate()
                    .filter_map(|(ci, c)| match c.launch {
                        GenLaunch::Device {
                            parent,
                            thread,
                            pos,
                            stream,
                        } if parent == ki && thread == ti => Some((pos, ci, stream)),
                        _ => None,
                    })
                    .collect();
                launches.sort_by_key(|b| std::cmp::Reverse((b.0, b.1)));
                let block = k.blocks.get(ti).copied().unwrap_or(0);
                for (pos, ci, stream) in launches {
                    // A named stream of the launching thread's block.
                    let stream = match stream {
                        GenStream::Named(n) => GenStream::Named((n - 1) % 2 + 1 + 2 * block as u8),
                        s => s,
                    };
                    out.insert(
                        pos.min(out.len()),
                        Op::Launch {
                            kernel: names[ci].clone(),
                            stream: stream_ref(stream),
                        },
                    );
                }
                if let Some(at) = &k.barrier {
                    let p = at[ti % at.len()] % (out.len() + 1);
                    out.insert(p, Op::SyncThreads);
                }
                // Its index within its block, and the block when there are several.
                let several = k.blocks.iter().any(|&b| b > 0);
                let index = k.blocks.iter().take(ti).filter(|&&b| b == block).count();
                threads.push(Thread {
                    name: thread_name::format(several.then_some(block), index),
                    ops: out,
                });
            }
            kernels.push(Kernel {
                name: names[ki].clone(),
                launch: match k.launch {
                    GenLaunch::Host { pdl } => KernelLaunch::Host { pdl },
                    GenLaunch::Device { .. } => KernelLaunch::Device,
                },
                threads,
            });
        }
        let memory: Vec<(String, u32)> = LOCATIONS[..self.locations]
            .iter()
            .map(|n| (n.to_string(), 0))
            .collect();
        let uses_shared = kernels
            .iter()
            .flat_map(|k| &k.threads)
            .flat_map(|t| &t.ops)
            .any(|o| o.locations().contains(&SHARED));
        let shared = if uses_shared {
            vec![(SHARED.to_string(), 0)]
        } else {
            Vec::new()
        };
        let value = kernels
            .iter()
            .flat_map(|k| &k.threads)
            .flat_map(|t| &t.ops)
            .find_map(|o| match o {
                Op::Store { loc, value } if loc == "x" => Some(*value),
                _ => None,
            })
            .unwrap_or(0);
        let mut limits = Vec::new();
        if let Some(n) = self.pool {
            limits.push((Limit::DevRuntimePendingLaunchCount, n));
        }
        if let Some(n) = self.sync_depth {
            limits.push((Limit::DevRuntimeSyncDepth, n));
        }
        Ok(Litmus {
            memory,
            shared,
            kernels,
            condition: condition::parse(&format!("exists x == {value}"))?,
            expect: Verdict::Allowed,
            limits,
        })
    }
}

impl fmt::Display for GenProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.yaml("generated"))
    }
}
