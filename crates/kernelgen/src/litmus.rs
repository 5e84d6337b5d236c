//! The CUDA of a litmus test: the header comment (the test, its kernels and
//! its [`Layout`]), the declarations, then one `__global__` function a
//! kernel: its prologue (memory and register pointers, the block's streams
//! and events), one phase a `syncthreads`-separated part of its threads'
//! programs (each modeled thread in its own warp, the stress warps beside
//! them), and its epilogue.

use std::fmt::{self, Write};

use gridcheck_spec::{Kernel, KernelLaunch, Litmus, Op, StreamRef, Test, Thread};

use crate::abi::{MAX_BLOCK, STRESS_WARPS, WARP, kernel_symbol};
use crate::describe::description;
use crate::emit::{header, to_string};
use crate::layout::{BlockObject, KernelPlan, Layout, ObjectKind, layout, object_var};

mod memory;
mod registers;
mod tile;

use memory::location_offset;

/// CUDA source for a litmus test. `spec_file` is the test's spec file
/// relative to the repository root; `rule_ids` the rules that list the test.
pub fn generate(test: &Test, litmus: &Litmus, spec_file: &str, rule_ids: &[&str]) -> String {
    let lay = layout(litmus);
    to_string(|w| {
        header(w, test, "", spec_file, rule_ids)?;
        description(w, litmus, &lay)?;
        declarations(w, test, litmus, &lay)?;
        // Delay sites are numbered across the whole file.
        let mut site = 0u32;
        for (ki, (k, plan)) in litmus.kernels.iter().zip(&lay.kernels).enumerate() {
            let e = KernelEmitter {
                test,
                lay: &lay,
                kernel: k,
                plan,
                index: ki,
            };
            e.kernel(w, &mut site)?;
        }
        Ok(())
    })
}

/// The include, the strides and every kernel's declaration.
fn declarations(w: &mut impl Write, test: &Test, litmus: &Litmus, lay: &Layout) -> fmt::Result {
    writeln!(w, "#include \"gridcheck.cuh\"")?;
    writeln!(w)?;
    writeln!(
        w,
        "static constexpr unsigned int kSlotStride = {}u;",
        lay.slot_stride
    )?;
    writeln!(
        w,
        "static constexpr unsigned int kRegStride = {}u;",
        lay.reg_stride
    )?;
    writeln!(
        w,
        "static constexpr unsigned int kStatusStride = {}u;",
        lay.status_stride
    )?;
    writeln!(w)?;
    for (k, plan) in litmus.kernels.iter().zip(&lay.kernels) {
        let sym = kernel_symbol(&test.name, &k.name);
        match k.launch {
            KernelLaunch::Host { .. } => writeln!(
                w,
                "extern \"C\" __global__ void __launch_bounds__({}) {sym}(gc_params p);",
                plan.block_dim
            )?,
            KernelLaunch::Device => writeln!(
                w,
                "extern \"C\" __global__ void __launch_bounds__({}) {sym}(gc_params p, unsigned int slot);",
                plan.block_dim
            )?,
        }
    }
    Ok(())
}

/// Writes one kernel's definition.
struct KernelEmitter<'a> {
    test: &'a Test,
    lay: &'a Layout,
    kernel: &'a Kernel,
    plan: &'a KernelPlan,
    /// The kernel's index: its "ran" status word.
    index: usize,
}

impl KernelEmitter<'_> {
    fn kernel(&self, w: &mut impl Write, site: &mut u32) -> fmt::Result {
        let k = self.kernel;
        let objects: Vec<&BlockObject> = self
            .lay
            .objects
            .iter()
            .filter(|o| o.kernel == k.name)
            .collect();
        let split: Vec<Vec<Vec<(usize, &Op)>>> = k.threads.iter().map(|t| phases(&t.ops)).collect();
        self.prologue(w, &objects, &split)?;
        let n_phases = split.iter().map(Vec::len).max().unwrap_or(1);
        // Phases per thread, block by block.
        let per_block: Vec<Vec<usize>> = (0..k.blocks())
            .map(|b| {
                k.threads
                    .iter()
                    .zip(&split)
                    .filter(|(t, _)| t.block() == b)
                    .map(|(_, ph)| ph.len())
                    .collect()
            })
            .collect();
        if per_block.iter().any(|b| b.iter().any(|&n| n != b[0])) {
            writeln!(
                w,
                "  // Threads of this kernel execute different numbers of syncthreads; a thread\n  // with fewer waits at the remaining barriers after its last operation."
            )?;
        } else if per_block.iter().any(|b| b[0] != n_phases) {
            writeln!(
                w,
                "  // The blocks execute different numbers of syncthreads: a block with fewer\n  // passes the remaining ones, all its threads together, after its last operation."
            )?;
        }
        for phase in 0..n_phases {
            self.phase(w, &split, phase, n_phases, site)?;
        }
        self.epilogue(w, &objects)
    }

    /// The signature, the memory and register pointers, the block's
    /// streams and events (created by thread 0), the block's line burst
    /// for the first phase, the register variables.
    fn prologue(
        &self,
        w: &mut impl Write,
        objects: &[&BlockObject],
        split: &[Vec<Vec<(usize, &Op)>>],
    ) -> fmt::Result {
        let k = self.kernel;
        writeln!(w)?;
        writeln!(w, "// Kernel `{}`.", k.name)?;
        self.signature(w)?;
        let blocks = self.plan.blocks;
        if self.plan.block_dim > MAX_BLOCK {
            writeln!(
                w,
                "#error \"gridcheck: kernel `{}` needs {} threads per block (thread tN runs as threadIdx.x == N*32); use lower thread numbers\"",
                k.name, self.plan.block_dim
            )?;
        }
        self.pointers(w)?;
        self.block_objects(w, objects)?;
        self.shared_memory(w)?;
        if blocks > 1 {
            let counts: Vec<usize> = (0..k.blocks())
                .map(|b| k.block_threads(b).count())
                .collect();
            let mut expr = format!("{}u", counts[counts.len() - 1]);
            if counts.iter().any(|&n| n != counts[0]) {
                for (b, n) in counts.iter().enumerate().rev().skip(1) {
                    expr = format!("block == {b}u ? {n}u : {expr}");
                }
            }
            writeln!(
                w,
                "  const unsigned int gc_modeled = {expr};  // this block's modeled threads"
            )?;
        }
        self.block_burst(w, split, 0)?;
        writeln!(w, "  __syncthreads();")?;
        self.register_variables(w)
    }

    /// The kernel's signature and its instance's slot (and block of the
    /// test, when it has several).
    fn signature(&self, w: &mut impl Write) -> fmt::Result {
        let k = self.kernel;
        let sym = kernel_symbol(&self.test.name, &k.name);
        let blocks = self.plan.blocks;
        match k.launch {
            KernelLaunch::Host { .. } if blocks > 1 => {
                writeln!(w, "extern \"C\" __global__ void {sym}(gc_params p) {{")?;
                writeln!(
                    w,
                    "  // An instance is {blocks} consecutive blocks; `block` is the test's bM."
                )?;
                writeln!(
                    w,
                    "  const unsigned int slot = gc_slot(p, blockIdx.x / {blocks}u);"
                )?;
                writeln!(w, "  const unsigned int block = blockIdx.x % {blocks}u;")?;
            }
            KernelLaunch::Host { .. } => {
                writeln!(w, "extern \"C\" __global__ void {sym}(gc_params p) {{")?;
                writeln!(w, "  const unsigned int slot = gc_slot(p, blockIdx.x);")?;
            }
            KernelLaunch::Device => {
                writeln!(
                    w,
                    "extern \"C\" __global__ void {sym}(gc_params p, unsigned int slot) {{"
                )?;
                if blocks > 1 {
                    writeln!(
                        w,
                        "  const unsigned int block = blockIdx.x;  // the test's bM, of {blocks}"
                    )?;
                }
            }
        }
        Ok(())
    }

    /// The block's arrival counter, and its streams and events, created by
    /// thread 0.
    fn block_objects(&self, w: &mut impl Write, objects: &[&BlockObject]) -> fmt::Result {
        writeln!(w, "  __shared__ unsigned int gc_arrived;")?;
        if objects.is_empty() {
            writeln!(w, "  if (threadIdx.x == 0u) gc_arrived = 0u;")?;
        } else {
            for o in objects {
                let ty = match o.kind {
                    ObjectKind::Stream => "cudaStream_t",
                    ObjectKind::Event => "cudaEvent_t",
                };
                writeln!(w, "  __shared__ {ty} {};", o.var())?;
            }
            writeln!(
                w,
                "  if (threadIdx.x == 0u) {{  // this block's streams and events"
            )?;
            writeln!(w, "    gc_arrived = 0u;")?;
            for o in objects {
                let create = match o.kind {
                    ObjectKind::Stream => "gc_create_stream",
                    ObjectKind::Event => "gc_create_event",
                };
                writeln!(
                    w,
                    "    {}{} = {create}(p, kStatusStride, slot, {}u);",
                    self.in_block(o.block),
                    o.var(),
                    o.status_word
                )?;
            }
            writeln!(w, "  }}")?;
        }
        Ok(())
    }

    /// The block's line burst before the barrier that opens `phase`: every
    /// thread of the block, stress warps included, takes its share of the
    /// reductions on the line of each location a thread of this kernel
    /// stores to in that phase, generic or bulk (`gc_block_burst`), so that the barrier
    /// releases the stores onto lines that already hold a queue.
    fn block_burst(
        &self,
        w: &mut impl Write,
        split: &[Vec<Vec<(usize, &Op)>>],
        phase: usize,
    ) -> fmt::Result {
        let mut locs: Vec<&str> = Vec::new();
        for ops in split.iter().filter_map(|t| t.get(phase)) {
            for (_, op) in ops {
                // A global store, or a bulk store's global destination (a
                // word location's: a tile's lines hold only its words).
                if let Op::Store { loc, .. } | Op::BulkStore { dst: loc, .. } = op
                    && !self.is_shared(loc)
                    && !self.is_tile(loc)
                    && !locs.contains(&loc.as_str())
                {
                    locs.push(loc);
                }
            }
        }
        for loc in locs {
            let off = location_offset(self.lay, loc);
            writeln!(
                w,
                "  gc_block_burst(p, mem + {off}u);  // the block's line burst: {loc}, stored in phase {phase}"
            )?;
        }
        Ok(())
    }

    /// `if (block == Nu) ` for an object or thread of block `b` of a kernel
    /// of several blocks; nothing for a kernel of one block.
    fn in_block(&self, b: u32) -> String {
        if self.plan.blocks > 1 {
            format!("if (block == {b}u) ")
        } else {
            String::new()
        }
    }

    /// One phase: each modeled thread's operations of the phase (and, in
    /// the last phase, its register stores), the stress warps, and the
    /// barrier that ends the phase.
    fn phase(
        &self,
        w: &mut impl Write,
        split: &[Vec<Vec<(usize, &Op)>>],
        phase: usize,
        n_phases: usize,
        site: &mut u32,
    ) -> fmt::Result {
        let k = self.kernel;
        writeln!(w, "  // Phase {phase}.")?;
        let mut first = true;
        for (t, tph) in k.threads.iter().zip(split) {
            // The modeled thread is lane 0 of warp N (`gc_lead`); the
            // warp's other lanes idle in the phase (they took part in the
            // block's line burst before its barrier).
            let which = if self.plan.blocks > 1 {
                format!(
                    "block == {}u && threadIdx.x / {WARP}u == {}u",
                    t.block(),
                    t.index()
                )
            } else {
                format!("threadIdx.x / {WARP}u == {}u", t.index())
            };
            let who = if self.warp_wide(t) {
                "its whole warp (tiles)"
            } else {
                "lane 0 of its warp"
            };
            writeln!(
                w,
                "  {}if ({which}) {{  // {}: {who}",
                if first { "" } else { "} else " },
                t.name
            )?;
            writeln!(w, "    const bool gc_lead = threadIdx.x % {WARP}u == 0u;")?;
            first = false;
            let warp = self.warp_wide(t);
            for &(op_index, op) in tph.get(phase).map(Vec::as_slice).unwrap_or(&[]) {
                writeln!(w, "    // {op}")?;
                writeln!(w, "    if (gc_lead) gc_delay(p, slot, {site}u);")?;
                *site += 1;
                if warp && self.every_lane(op) {
                    // Every lane (see `tile.rs`), after the lead's delay.
                    writeln!(w, "    __syncwarp();")?;
                    match op {
                        Op::Store { .. } | Op::Load { .. } => self.tile_access(w, t, op)?,
                        _ => self.op(w, t, op_index, op)?,
                    }
                } else {
                    writeln!(w, "    if (gc_lead) {{")?;
                    self.op(w, t, op_index, op)?;
                    writeln!(w, "    }}")?;
                }
                if warp {
                    writeln!(w, "    __syncwarp();")?;
                }
            }
            if phase + 1 == n_phases {
                self.drain(w, t)?;
                self.register_stores(w, t)?;
            }
            writeln!(w, "    if (gc_lead) gc_arrive(&gc_arrived);")?;
        }
        let first_stress = self.plan.block_dim - STRESS_WARPS * WARP;
        writeln!(
            w,
            "  {}if (threadIdx.x >= {first_stress}u) {{  // stress warps",
            if first { "" } else { "} else " }
        )?;
        // Each modeled thread of the block arrives once a phase.
        let target = if self.plan.blocks > 1 {
            format!("gc_modeled * {}u", phase + 1)
        } else {
            format!("{}u", k.threads.len() * (phase + 1))
        };
        writeln!(
            w,
            "    gc_stress(p, slot, &gc_arrived, {target}, {phase}u);"
        )?;
        writeln!(w, "  }}")?;
        if phase + 1 < n_phases {
            self.block_burst(w, split, phase + 1)?;
            writeln!(
                w,
                "  __syncthreads();  // syncthreads, executed by every thread of the block"
            )?;
        }
        Ok(())
    }

    /// One operation of thread `t` (at `op_index` of its program).
    fn op(&self, w: &mut impl Write, t: &Thread, op_index: usize, op: &Op) -> fmt::Result {
        let lay = self.lay;
        let k = self.kernel;
        match op {
            Op::Store { loc, value } => writeln!(w, "    {} = {value}u;", self.place(loc)),
            Op::Load { reg, loc } => writeln!(w, "    {}_{reg} = {};", c_name(t), self.place(loc)),
            // (A store or load of a tile's words is the warp's: `tile.rs`.)
            Op::BulkLoad { .. }
            | Op::MbarWait { .. }
            | Op::BulkStore { .. }
            | Op::BulkCommit
            | Op::BulkWait { .. }
            | Op::FenceProxyAsync => self.bulk_op(w, op),
            Op::Launch { kernel, stream } => {
                let child = lay.kernels.iter().find(|c| &c.name == kernel);
                let block = child.map_or(WARP, |c| c.block_dim);
                let grid = child.map_or(1, |c| c.blocks);
                let word = lay
                    .launches
                    .iter()
                    .find(|l| &l.child == kernel)
                    .map_or(0, |l| l.status_word);
                writeln!(
                    w,
                    "    {}<<<{grid}, {block}{}>>>(p, slot);",
                    kernel_symbol(&self.test.name, kernel),
                    stream_expr(stream)
                )?;
                if lay.launches.iter().any(|l| &l.child == kernel) {
                    writeln!(
                        w,
                        "    gc_record_launch(p, kStatusStride, slot, {word}u, cudaGetLastError());"
                    )
                } else {
                    writeln!(w, "    // its error, if any, stays the thread's last error")
                }
            }
            Op::Trigger => writeln!(w, "    cudaTriggerProgrammaticLaunchCompletion();"),
            Op::GridDependencySync => writeln!(w, "    cudaGridDependencySynchronize();"),
            Op::GetLastError { reg } => writeln!(
                w,
                "    {}_{reg} = (unsigned int)cudaGetLastError();",
                c_name(t)
            ),
            Op::PeekAtLastError { reg } => writeln!(
                w,
                "    {}_{reg} = (unsigned int)cudaPeekAtLastError();",
                c_name(t)
            ),
            Op::DeviceSynchronize { reg } => {
                let word = call_word(lay, &k.name, &t.name, op_index);
                writeln!(w, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900")?;
                writeln!(
                    w,
                    "#error \"gridcheck: `devicesync` (device-side cudaDeviceSynchronize) is CDP1 only and does not compile under CDP2 (sm_90 and newer); this test needs an older GPU\""
                )?;
                writeln!(w, "#else")?;
                if lay
                    .calls
                    .iter()
                    .any(|c| c.kernel == k.name && c.thread == t.name && c.op_index == op_index)
                {
                    writeln!(
                        w,
                        "    gc_record_error(p, kStatusStride, slot, {word}u, cudaDeviceSynchronize());"
                    )?;
                    writeln!(w, "    (void)cudaGetLastError();")?;
                } else if let Some(reg) = reg {
                    writeln!(
                        w,
                        "    {}_{reg} = (unsigned int)cudaDeviceSynchronize();",
                        c_name(t)
                    )?;
                } else {
                    writeln!(w, "    (void)cudaDeviceSynchronize();")?;
                }
                writeln!(w, "#endif")
            }
            Op::EventRecord { event, stream } => {
                let word = call_word(lay, &k.name, &t.name, op_index);
                writeln!(
                    w,
                    "    gc_record_error(p, kStatusStride, slot, {word}u, gc_event_record({}, {}));",
                    object_var(ObjectKind::Event, event),
                    stream_value(stream)
                )
            }
            Op::StreamWaitEvent { stream, event } => {
                let word = call_word(lay, &k.name, &t.name, op_index);
                writeln!(
                    w,
                    "    gc_record_error(p, kStatusStride, slot, {word}u, gc_stream_wait_event({}, {}));",
                    stream_value(stream),
                    object_var(ObjectKind::Event, event)
                )
            }
            Op::SyncThreads => unreachable!("split into phases"),
        }
    }

    /// The block's streams and events destroyed after a barrier, then the
    /// kernel's "ran" word.
    fn epilogue(&self, w: &mut impl Write, objects: &[&BlockObject]) -> fmt::Result {
        if !objects.is_empty() {
            writeln!(
                w,
                "  __syncthreads();  // every thread is done with the block's streams and events"
            )?;
            writeln!(w, "  if (threadIdx.x == 0u) {{")?;
            for o in objects {
                let destroy = match o.kind {
                    ObjectKind::Stream => "gc_destroy_stream",
                    ObjectKind::Event => "gc_destroy_event",
                };
                writeln!(w, "    {}{destroy}({});", self.in_block(o.block), o.var())?;
            }
            writeln!(w, "  }}")?;
        }
        if self.plan.blocks > 1 {
            writeln!(
                w,
                "  if (threadIdx.x == 0u) gc_add_ran(p, kStatusStride, slot, {}u);  // one per block",
                self.index
            )?;
        } else {
            writeln!(
                w,
                "  if (threadIdx.x == 0u) gc_mark_ran(p, kStatusStride, slot, {}u);",
                self.index
            )?;
        }
        writeln!(w, "}}")
    }
}

/// A thread's name as a C identifier: `t0`, or `b1_t0` for `b1.t0`.
fn c_name(t: &Thread) -> String {
    t.name.replace('.', "_")
}

/// The status word of the `record`, `waitevent` or `devicesync` at
/// `op_index` of a thread.
fn call_word(lay: &Layout, kernel: &str, thread: &str, op_index: usize) -> u32 {
    lay.calls
        .iter()
        .find(|c| c.kernel == kernel && c.thread == thread && c.op_index == op_index)
        .map_or(0, |c| c.status_word)
}

/// One modeled thread's operations, with their program indices, split at
/// its `syncthreads`.
fn phases(ops: &[Op]) -> Vec<Vec<(usize, &Op)>> {
    let mut out = vec![Vec::new()];
    for (i, op) in ops.iter().enumerate() {
        if *op == Op::SyncThreads {
            out.push(Vec::new());
        } else {
            out.last_mut().expect("non-empty").push((i, op));
        }
    }
    out
}

/// The `cudaStream_t` a stream reference names in device code.
fn stream_value(s: &StreamRef) -> String {
    match s {
        StreamRef::Null => "0".to_string(),
        StreamRef::Tail => "cudaStreamTailLaunch".to_string(),
        StreamRef::FireAndForget => "cudaStreamFireAndForget".to_string(),
        StreamRef::Named(n) => object_var(ObjectKind::Stream, n),
    }
}

/// The tail of a launch configuration: `<<<1, block>>>` for the NULL
/// stream, `<<<1, block, 0, stream>>>` otherwise.
fn stream_expr(s: &StreamRef) -> String {
    match s {
        StreamRef::Null => String::new(),
        s => format!(", 0, {}", stream_value(s)),
    }
}
