//! The memory layout and launch plan of a litmus test: where each location,
//! register and status word of an instance lives, and how each kernel is
//! started. The generated code assumes it; the GPU runner provides it.

use gridcheck_spec::{KernelLaunch, Limit, Litmus, Op, StreamRef};

use crate::abi::{LOC_STRIDE, STATUS_NOT_REACHED, STATUS_RAN, STRESS_WARPS, WARP};
use crate::plan::observes_errors;

/// A memory location of one instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub name: String,
    /// Its initial value (a tile's: every word's).
    pub init: u32,
    /// Word offset within the instance's slot: a word location's first
    /// word of its own 128-byte line ([`LOC_STRIDE`] words, the rest
    /// padding), a tile's first word of its own lines.
    pub offset: u32,
    /// A tile's words (`gridcheck_spec::tile`); `None` for a word
    /// location.
    pub tile: Option<u32>,
}

impl Location {
    /// Words it takes in the slot: whole lines.
    pub fn span(&self) -> u32 {
        self.tile.unwrap_or(1).div_ceil(LOC_STRIDE) * LOC_STRIDE
    }
}

/// A loaded register, in [`Litmus::observables`] order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Register {
    /// `kernel.thread.reg`, the observable's name (a segment of a tile
    /// register: `kernel.thread.reg[a..b]`).
    pub name: String,
    pub kernel: String,
    pub thread: String,
    pub reg: String,
    /// A tile register's segment, words `a..b` of its tile; `None` for a
    /// register of a word.
    pub segment: Option<(u32, u32)>,
}

/// A kernel of the test and how it is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelPlan {
    pub name: String,
    pub launch: KernelLaunch,
    /// Blocks of one instance's grid (`bM.tN` threads: one more than the
    /// highest `M`; 1 for `tN` threads). A host kernel is launched with
    /// `instances * blocks` blocks, block `b` running block `b % blocks` of
    /// instance `b / blocks`; a device kernel with `blocks` blocks.
    pub blocks: u32,
    /// Threads per block: the modeled warps, then [`STRESS_WARPS`] stress warps.
    pub block_dim: u32,
    /// Index of its "ran" word within an instance's status words: each of
    /// its blocks adds [`STATUS_RAN`] when it ends.
    pub status_word: u32,
    /// Whether an instance counts only if this kernel ran: every kernel,
    /// except a device kernel of a test that limits the launch pool (its
    /// launch may fail, and the test observes that).
    pub must_run: bool,
}

/// A device-side launch operation (one per device kernel).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceLaunch {
    /// The launching kernel and thread.
    pub parent: String,
    pub thread: String,
    /// The launched kernel.
    pub child: String,
    pub stream: StreamRef,
    /// Index of the word that receives `cudaGetLastError()` after the launch.
    pub status_word: u32,
}

/// What a block-scoped object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    /// `cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)`.
    Stream,
    /// `cudaEventCreateWithFlags(&e, cudaEventDisableTiming)`.
    Event,
}

impl ObjectKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectKind::Stream => "stream",
            ObjectKind::Event => "event",
        }
    }
}

/// A named stream or an event of a kernel: the block of an instance whose
/// threads use it creates it in the kernel's prologue (thread 0, before the
/// first barrier) and destroys it at the end, after a barrier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockObject {
    pub kernel: String,
    /// The block of the kernel's grid that uses it (the spec loader allows
    /// one only).
    pub block: u32,
    pub kind: ObjectKind,
    pub name: String,
    /// Index of the word that receives the creation's `cudaError_t`.
    pub status_word: u32,
}

impl BlockObject {
    /// The `__shared__` variable that holds it: `gc_stream_<name>` or
    /// `gc_event_<name>`.
    pub fn var(&self) -> String {
        object_var(self.kind, &self.name)
    }
}

pub(crate) fn object_var(kind: ObjectKind, name: &str) -> String {
    format!("gc_{}_{name}", kind.as_str())
}

/// A device runtime call other than a launch whose result an instance
/// records: `record` (`cudaEventRecord`), `waitevent`
/// (`cudaStreamWaitEvent`) and `devicesync` (`cudaDeviceSynchronize`, CDP1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiCall {
    pub kernel: String,
    pub thread: String,
    /// Index of the operation in the thread's program.
    pub op_index: usize,
    pub op: Op,
    /// Index of the word that receives the call's `cudaError_t`.
    pub status_word: u32,
}

/// A status word that holds a `cudaError_t` (initially
/// [`STATUS_NOT_REACHED`]): what it reports on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorWord {
    pub word: u32,
    /// `parent.t0 `launch child s1``, `parent creating stream s1`, ...
    pub what: String,
}

/// The memory layout and launch plan of a litmus test: what the generated
/// code assumes and the runner must provide. All strides are in 32-bit words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// `mem[slot * slot_stride + loc.offset]`.
    pub locations: Vec<Location>,
    /// Shared memory locations: `gc_shared[loc.offset]` of each block
    /// (each on a 128-byte line of its own; see [`Layout::shared_words`]).
    pub shared: Vec<Location>,
    pub slot_stride: u32,
    /// `regs[slot * reg_stride + index]`.
    pub registers: Vec<Register>,
    /// Per segment of a tile register, after the registers (index
    /// `registers.len() + i`): how many of its words held the tile's
    /// initial value, the stale words. Not an observable: the models say
    /// whether some word was stale (the register), the GPU also how many.
    pub stale_counts: Vec<Register>,
    pub reg_stride: u32,
    /// Kernels in declaration order; host kernels are launched in this order,
    /// each with `instances` blocks of `block_dim` threads.
    pub kernels: Vec<KernelPlan>,
    /// Device launches, in kernel, thread and program order.
    pub launches: Vec<DeviceLaunch>,
    /// Named streams and events, per kernel, in order of first mention
    /// (streams first).
    pub objects: Vec<BlockObject>,
    /// `record`, `waitevent` and `devicesync` operations, in kernel, thread
    /// and program order.
    pub calls: Vec<ApiCall>,
    /// `status[slot * status_stride + word]`: first one "ran" word per
    /// kernel, then one error word per device launch, per block object
    /// (its creation) and per API call.
    pub status_stride: u32,
    /// Device launch operations of one instance (with or without an error
    /// word).
    pub launch_ops: u32,
}

impl KernelPlan {
    /// What its "ran" word holds once every block of an instance ran.
    pub fn ran_value(&self) -> u32 {
        STATUS_RAN * self.blocks
    }
}

impl Layout {
    /// Words of a block's shared locations (`gc_shared`).
    pub fn shared_words(&self) -> u32 {
        self.shared.iter().map(Location::span).sum()
    }

    /// The global word locations: the first locations, each a line of its
    /// own whose padding the stress warps and the line burst may write
    /// (a tile's lines hold its words: nothing else writes them).
    pub fn word_lines(&self) -> u32 {
        self.locations.iter().filter(|l| l.tile.is_none()).count() as u32
    }

    /// The kernels launched from the host, in launch order.
    pub fn host_kernels(&self) -> impl Iterator<Item = &KernelPlan> {
        self.kernels
            .iter()
            .filter(|k| matches!(k.launch, KernelLaunch::Host { .. }))
    }

    /// Device launches each instance may have pending at once (an upper
    /// bound: all of them).
    pub fn pending_launches_per_instance(&self) -> u32 {
        self.launch_ops
    }

    /// Every status word that holds a `cudaError_t`, in word order: an
    /// instance counts only if each of them is `cudaSuccess` (0).
    pub fn error_words(&self) -> Vec<ErrorWord> {
        let launches = self.launches.iter().map(|l| ErrorWord {
            word: l.status_word,
            what: format!(
                "{}.{} `launch {} {}`",
                l.parent, l.thread, l.child, l.stream
            ),
        });
        let objects = self.objects.iter().map(|o| ErrorWord {
            word: o.status_word,
            what: format!("{} creating {} {}", o.kernel, o.kind.as_str(), o.name),
        });
        let calls = self.calls.iter().map(|c| ErrorWord {
            word: c.status_word,
            what: format!("{}.{} `{}`", c.kernel, c.thread, c.op),
        });
        launches.chain(objects).chain(calls).collect()
    }

    /// Initial contents of an instance's status words.
    pub fn initial_status(&self) -> Vec<u32> {
        let mut v = vec![0; self.status_stride as usize];
        for e in self.error_words() {
            v[e.word as usize] = STATUS_NOT_REACHED;
        }
        v
    }

    /// Initial contents of an instance's memory slot.
    pub fn initial_slot(&self) -> Vec<u32> {
        let mut v = vec![0; self.slot_stride as usize];
        for l in &self.locations {
            let o = l.offset as usize;
            v[o..o + l.tile.unwrap_or(1) as usize].fill(l.init);
        }
        v
    }
}

/// Locations one after the other, each on lines of its own: the word
/// locations first (in declaration order), then the tiles.
fn place_locations(litmus: &Litmus, declared: &[(String, u32)]) -> Vec<Location> {
    let mut out: Vec<Location> = Vec::new();
    let words = declared
        .iter()
        .filter(|(n, _)| litmus.tile_words(n).is_none());
    let tiles = declared
        .iter()
        .filter(|(n, _)| litmus.tile_words(n).is_some());
    let mut offset = 0;
    for (name, init) in words.chain(tiles) {
        let l = Location {
            name: name.clone(),
            init: *init,
            offset,
            tile: litmus.tile_words(name),
        };
        offset += l.span();
        out.push(l);
    }
    out
}

/// The layout of a litmus test.
pub fn layout(litmus: &Litmus) -> Layout {
    let locations = place_locations(litmus, &litmus.memory);
    let (registers, stale_counts) = registers(litmus);
    let kernels = kernel_plans(litmus);
    let launches = device_launches(litmus, kernels.len() as u32);
    let mut next = (kernels.len() + launches.len()) as u32;
    let objects = block_objects(litmus, &mut next);
    let calls = api_calls(litmus, &mut next);
    let launch_ops = litmus
        .kernels
        .iter()
        .flat_map(|k| &k.threads)
        .flat_map(|t| &t.ops)
        .filter(|op| matches!(op, Op::Launch { .. }))
        .count() as u32;
    let shared = place_locations(litmus, &litmus.shared);
    Layout {
        launch_ops,
        slot_stride: locations
            .iter()
            .map(Location::span)
            .sum::<u32>()
            .max(LOC_STRIDE),
        locations,
        shared,
        reg_stride: (registers.len() + stale_counts.len()).max(1) as u32,
        registers,
        stale_counts,
        status_stride: next.max(1),
        kernels,
        launches,
        objects,
        calls,
    }
}

/// Every register a thread loads or reads into, in kernel, thread and
/// program order ([`Litmus::observables`]: a tile register once a
/// segment); and each tile register segment's count of stale words.
fn registers(litmus: &Litmus) -> (Vec<Register>, Vec<Register>) {
    let plan = litmus.tile_plan();
    let mut registers = Vec::new();
    let mut counts = Vec::new();
    for k in &litmus.kernels {
        for t in &k.threads {
            for op in &t.ops {
                let Some(reg) = op.register() else {
                    continue;
                };
                for (name, _) in litmus.op_observables(&plan, &k.name, &t.name, op) {
                    let segment = gridcheck_spec::Place::parse_term(&name)
                        .ok()
                        .and_then(|p| p.range);
                    let r = Register {
                        name,
                        kernel: k.name.clone(),
                        thread: t.name.clone(),
                        reg: reg.to_string(),
                        segment,
                    };
                    if segment.is_some() {
                        counts.push(Register {
                            name: format!("{}#stale", r.name),
                            ..r.clone()
                        });
                    }
                    registers.push(r);
                }
            }
        }
    }
    (registers, counts)
}

/// Each kernel's plan: blocks, block size, status word, whether it must run.
fn kernel_plans(litmus: &Litmus) -> Vec<KernelPlan> {
    litmus
        .kernels
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let modeled = k
                .threads
                .iter()
                .map(|t| t.index() as u32 + 1)
                .max()
                .unwrap_or(1);
            KernelPlan {
                name: k.name.clone(),
                launch: k.launch,
                blocks: k.blocks() as u32,
                block_dim: (modeled + STRESS_WARPS) * WARP,
                status_word: i as u32,
                must_run: k.launch != KernelLaunch::Device
                    || litmus.limit(Limit::DevRuntimePendingLaunchCount).is_none(),
            }
        })
        .collect()
}

/// The device launches whose errors are checked, their status words after
/// the `first_word` kernels'.
fn device_launches(litmus: &Litmus, first_word: u32) -> Vec<DeviceLaunch> {
    let mut launches = Vec::new();
    for k in &litmus.kernels {
        for t in &k.threads {
            for op in &t.ops {
                // In a test that observes errors, a launch's error is the
                // thread's to read (or an expected outcome), not a reason to
                // discard the instance.
                if let Op::Launch { kernel, stream } = op
                    && !observes_errors(litmus)
                {
                    launches.push(DeviceLaunch {
                        parent: k.name.clone(),
                        thread: t.name.clone(),
                        child: kernel.clone(),
                        stream: stream.clone(),
                        status_word: first_word + launches.len() as u32,
                    });
                }
            }
        }
    }
    launches
}

/// Each block's named streams and events, their status words from `next`.
fn block_objects(litmus: &Litmus, next: &mut u32) -> Vec<BlockObject> {
    let mut objects: Vec<BlockObject> = Vec::new();
    for k in &litmus.kernels {
        for kind in [ObjectKind::Stream, ObjectKind::Event] {
            for (name, block) in kernel_objects(k, kind) {
                objects.push(BlockObject {
                    kernel: k.name.clone(),
                    block: block as u32,
                    kind,
                    name,
                    status_word: *next,
                });
                *next += 1;
            }
        }
    }
    objects
}

/// The device runtime calls whose results are checked, their status words
/// from `next`.
fn api_calls(litmus: &Litmus, next: &mut u32) -> Vec<ApiCall> {
    let mut calls = Vec::new();
    for k in &litmus.kernels {
        for t in &k.threads {
            for (op_index, op) in t.ops.iter().enumerate() {
                let checked = match op {
                    Op::EventRecord { .. } | Op::StreamWaitEvent { .. } => true,
                    Op::DeviceSynchronize { .. } => !observes_errors(litmus),
                    _ => false,
                };
                if checked {
                    calls.push(ApiCall {
                        kernel: k.name.clone(),
                        thread: t.name.clone(),
                        op_index,
                        op: op.clone(),
                        status_word: *next,
                    });
                    *next += 1;
                }
            }
        }
    }
    calls
}

/// The named streams or the events a kernel's threads use, in order of
/// first mention (thread order, then program order), with the block that
/// uses each.
fn kernel_objects(k: &gridcheck_spec::Kernel, kind: ObjectKind) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for t in &k.threads {
        let mut add = |n: &str| {
            if !out.iter().any(|(o, _)| o == n) {
                out.push((n.to_string(), t.block()));
            }
        };
        for op in &t.ops {
            match (kind, op) {
                (ObjectKind::Stream, Op::Launch { stream, .. })
                | (ObjectKind::Stream, Op::EventRecord { stream, .. })
                | (ObjectKind::Stream, Op::StreamWaitEvent { stream, .. }) => {
                    if let StreamRef::Named(n) = stream {
                        add(n);
                    }
                }
                (ObjectKind::Event, Op::EventRecord { event, .. })
                | (ObjectKind::Event, Op::StreamWaitEvent { event, .. }) => add(event),
                _ => {}
            }
        }
    }
    out
}
