//! A generated program ([`GenProgram`]: its kernels, threads and operations
//! as drawn) and what it becomes: the spec's `Litmus`, loaded back through
//! the spec loader, and its YAML.

use std::fmt;

use gridcheck_spec::render::{litmus_spec_yaml, litmus_test_yaml, load_litmus};
use gridcheck_spec::{
    Kernel, KernelLaunch, Limit, Litmus, Op, Profile, StreamRef, Thread, Verdict, condition,
    thread_name,
};

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
            let threads = (0..k.threads.len())
                .map(|ti| self.thread(&names, ki, ti))
                .collect();
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
            tiles: Vec::new(),
            kernels,
            condition: condition::parse(&format!("exists x == {value}"))?,
            expect: Verdict::Allowed,
            limits,
        })
    }

    /// Thread `ti` of kernel `ki` as the DSL's: its operations, the
    /// launches it makes at their positions, its block's barrier, its name.
    fn thread(&self, names: &[String], ki: usize, ti: usize) -> Thread {
        let k = &self.kernels[ki];
        let mut out = ops(&k.threads[ti]);
        // Launches of this thread, at their positions (later positions
        // first, so that earlier ones stay in place).
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
        Thread {
            name: thread_name::format(several.then_some(block), index),
            ops: out,
        }
    }
}

/// A thread's drawn operations as the DSL's, registers numbered in order.
fn ops(drawn: &[GenOp]) -> Vec<Op> {
    let mut out: Vec<Op> = Vec::new();
    let mut reg = 0;
    let mut next_reg = || {
        reg += 1;
        format!("r{}", reg - 1)
    };
    for o in drawn {
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
    out
}

impl fmt::Display for GenProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.yaml("generated"))
    }
}
