//! CUDA C++ for gridcheck's litmus tests: a pure function from a
//! [`gridcheck_spec::Litmus`] to a `.cu` file, and the memory layout and
//! launch plan the GPU runner (`gridcheck-gpu`) needs to run it.
//!
//! **Architecture invariant:** this crate does no I/O (except in its tests)
//! and knows nothing of the driver API; it only writes text and describes
//! the layout that text assumes.
//!
//! The generated code follows the parallel testing environment of MC Mutants
//! (Levine et al., "MC Mutants: Evaluating and Improving Testing for Memory
//! Consistency Specifications", ASPLOS 2023, section 4) and the incantations
//! of Alglave et al., "GPU Concurrency: Weak Behaviours and Programming
//! Assumptions" (ASPLOS 2015, section 4): many instances per launch, each in
//! its own memory slot through a co-prime permutation, random delays before
//! test operations, and memory stress by non-testing warps. The ABI (kernel
//! parameters, array layout, status words) is documented in
//! `kernels/include/gridcheck.cuh`; [`Layout`] is its Rust description.

use std::fmt::Write as _;
use std::path::{Component, Path};

use gridcheck_spec::{KernelLaunch, Litmus, Op, Spec, StreamRef, Test, TestBody};

/// Where the generated `.cu` files live, relative to the repository root.
pub const GENERATED_DIR: &str = "kernels/generated";
/// Where `gridcheck.cuh` lives, relative to the repository root (pass it to
/// nvcc with `-I`).
pub const INCLUDE_DIR: &str = "kernels/include";
/// Words between two locations of one instance (128 bytes: one cache line each).
pub const LOC_STRIDE: u32 = 32;
/// Threads per warp; representative thread `tN` is `threadIdx.x == N * WARP`.
pub const WARP: u32 = 32;
/// Extra warps per block that stress memory (`GC_STRESS_WARPS`).
pub const STRESS_WARPS: u32 = 2;
/// Status word value once a kernel of an instance has run (`GC_RAN`).
pub const STATUS_RAN: u32 = 1;
/// Initial value of a launch status word (`GC_NOT_REACHED`).
pub const STATUS_NOT_REACHED: u32 = 0xffff_ffff;
/// Size in bytes of `gc_params`, the one parameter of every host kernel.
pub const PARAMS_BYTES: usize = 64;
/// Largest block the generator emits.
pub const MAX_BLOCK: u32 = 1024;

/// The generated `.cu` file name for a test, e.g. `mp-parent-child-own-write.cu`.
pub fn file_name(test: &Test) -> String {
    format!("{}.cu", test.name)
}

/// The exported (`extern "C"`) name of a kernel of a test:
/// `<test name with - replaced by _>__<kernel name>`.
pub fn kernel_symbol(test_name: &str, kernel: &str) -> String {
    format!("{}__{}", test_name.replace('-', "_"), kernel)
}

/// A memory location of one instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub name: String,
    pub init: u32,
    /// Word offset within the instance's slot (`index * LOC_STRIDE`).
    pub offset: u32,
}

/// A loaded register, in [`Litmus::observables`] order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Register {
    /// `kernel.thread.reg`, the observable's name.
    pub name: String,
    pub kernel: String,
    pub thread: String,
    pub reg: String,
}

/// A kernel of the test and how it is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelPlan {
    pub name: String,
    pub launch: KernelLaunch,
    /// Threads per block: the modeled warps, then [`STRESS_WARPS`] stress warps.
    pub block_dim: u32,
    /// Index of its "ran" word within an instance's status words.
    pub status_word: u32,
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

/// The memory layout and launch plan of a litmus test: what the generated
/// code assumes and the runner must provide. All strides are in 32-bit words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// `mem[slot * slot_stride + loc.offset]`.
    pub locations: Vec<Location>,
    pub slot_stride: u32,
    /// `regs[slot * reg_stride + index]`.
    pub registers: Vec<Register>,
    pub reg_stride: u32,
    /// Kernels in declaration order; host kernels are launched in this order,
    /// each with `instances` blocks of `block_dim` threads.
    pub kernels: Vec<KernelPlan>,
    /// Device launches, in kernel, thread and program order.
    pub launches: Vec<DeviceLaunch>,
    /// `status[slot * status_stride + word]`: first one "ran" word per
    /// kernel, then one error word per device launch.
    pub status_stride: u32,
}

impl Layout {
    /// The kernels launched from the host, in launch order.
    pub fn host_kernels(&self) -> impl Iterator<Item = &KernelPlan> {
        self.kernels
            .iter()
            .filter(|k| matches!(k.launch, KernelLaunch::Host { .. }))
    }

    /// Device launches each instance may have pending at once (an upper
    /// bound: all of them).
    pub fn pending_launches_per_instance(&self) -> u32 {
        self.launches.len() as u32
    }

    /// Initial contents of an instance's status words.
    pub fn initial_status(&self) -> Vec<u32> {
        let mut v = vec![0; self.kernels.len()];
        v.extend(self.launches.iter().map(|_| STATUS_NOT_REACHED));
        v.resize(self.status_stride as usize, 0);
        v
    }

    /// Initial contents of an instance's memory slot.
    pub fn initial_slot(&self) -> Vec<u32> {
        let mut v = vec![0; self.slot_stride as usize];
        for l in &self.locations {
            v[l.offset as usize] = l.init;
        }
        v
    }
}

/// The layout of a litmus test.
pub fn layout(litmus: &Litmus) -> Layout {
    let locations: Vec<Location> = litmus
        .memory
        .iter()
        .enumerate()
        .map(|(i, (name, init))| Location {
            name: name.clone(),
            init: *init,
            offset: i as u32 * LOC_STRIDE,
        })
        .collect();
    let mut registers = Vec::new();
    for k in &litmus.kernels {
        for t in &k.threads {
            for op in &t.ops {
                if let Op::Load { reg, .. } = op {
                    registers.push(Register {
                        name: format!("{}.{}.{}", k.name, t.name, reg),
                        kernel: k.name.clone(),
                        thread: t.name.clone(),
                        reg: reg.clone(),
                    });
                }
            }
        }
    }
    let kernels: Vec<KernelPlan> = litmus
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
                block_dim: (modeled + STRESS_WARPS) * WARP,
                status_word: i as u32,
            }
        })
        .collect();
    let mut launches = Vec::new();
    for k in &litmus.kernels {
        for t in &k.threads {
            for op in &t.ops {
                if let Op::Launch { kernel, stream } = op {
                    launches.push(DeviceLaunch {
                        parent: k.name.clone(),
                        thread: t.name.clone(),
                        child: kernel.clone(),
                        stream: stream.clone(),
                        status_word: (kernels.len() + launches.len()) as u32,
                    });
                }
            }
        }
    }
    Layout {
        slot_stride: (locations.len().max(1) as u32) * LOC_STRIDE,
        locations,
        reg_stride: registers.len().max(1) as u32,
        registers,
        status_stride: (kernels.len() + launches.len()).max(1) as u32,
        kernels,
        launches,
    }
}

/// The spec file of a test as a path relative to the repository root
/// (`spec/...`), whatever directory the spec was loaded from.
pub fn spec_relative(file: &Path) -> String {
    let parts: Vec<String> = file
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    match parts.iter().rposition(|p| p == "spec") {
        Some(i) => parts[i..].join("/"),
        None => parts.join("/"),
    }
}

/// Every litmus test of the spec as `(file name, contents)`, in spec order.
/// `cargo xtask codegen` writes these into [`GENERATED_DIR`]; a test checks
/// that the checked-in files are current.
pub fn generate_all(spec: &Spec) -> Vec<(String, String)> {
    spec.tests
        .iter()
        .filter_map(|t| match &t.body {
            TestBody::Litmus(l) => {
                let rules: Vec<&str> = spec
                    .rules
                    .iter()
                    .filter(|r| r.tests.iter().any(|n| n == &t.name))
                    .map(|r| r.id.as_str())
                    .collect();
                let src = spec_relative(&t.origin.file);
                Some((file_name(t), generate(t, l, &src, &rules)))
            }
            TestBody::Compile(_) => None,
        })
        .collect()
}

/// One modeled thread's operations split at its `syncthreads`.
fn phases(ops: &[Op]) -> Vec<Vec<&Op>> {
    let mut out = vec![Vec::new()];
    for op in ops {
        if *op == Op::SyncThreads {
            out.push(Vec::new());
        } else {
            out.last_mut().expect("non-empty").push(op);
        }
    }
    out
}

fn stream_expr(s: &StreamRef) -> &'static str {
    match s {
        StreamRef::Null => "",
        StreamRef::Tail => ", 0, cudaStreamTailLaunch",
        StreamRef::FireAndForget => ", 0, cudaStreamFireAndForget",
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// CUDA source for a litmus test. `spec_file` is the test's spec file
/// relative to the repository root; `rule_ids` the rules that list the test.
pub fn generate(test: &Test, litmus: &Litmus, spec_file: &str, rule_ids: &[&str]) -> String {
    let lay = layout(litmus);
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(
        w,
        "// Generated by cargo xtask codegen from {spec_file}; do not edit by hand."
    );
    let _ = writeln!(w, "//");
    let _ = writeln!(w, "// Test: {}", test.name);
    if let Some(d) = &test.description {
        let _ = writeln!(w, "// {}", one_line(d));
    }
    let rules = if rule_ids.is_empty() {
        "(none)".to_string()
    } else {
        rule_ids.join(", ")
    };
    let _ = writeln!(w, "// Rules: {rules}");
    let _ = writeln!(
        w,
        "// Condition: {} (expected {})",
        litmus.condition, litmus.expect
    );
    let _ = writeln!(w, "//");
    let _ = writeln!(w, "// Kernels:");
    for k in &litmus.kernels {
        let launch = match k.launch {
            KernelLaunch::Host { pdl: false } => "host".to_string(),
            KernelLaunch::Host { pdl: true } => "host-pdl".to_string(),
            KernelLaunch::Device => match litmus.launcher_of(&k.name) {
                Some((pk, pt, s)) => {
                    format!("device, from {}.{} into stream {s}", pk.name, pt.name)
                }
                None => "device".to_string(),
            },
        };
        let _ = writeln!(w, "//   {} ({launch})", k.name);
        for t in &k.threads {
            let ops: Vec<String> = t.ops.iter().map(|o| o.to_string()).collect();
            let _ = writeln!(w, "//     {}: [{}]", t.name, ops.join(", "));
        }
    }
    let _ = writeln!(w, "//");
    let _ = writeln!(
        w,
        "// Layout (words; ABI in kernels/include/gridcheck.cuh):"
    );
    for l in &lay.locations {
        let _ = writeln!(
            w,
            "//   mem[slot * {} + {}] = {} (initially {})",
            lay.slot_stride, l.offset, l.name, l.init
        );
    }
    for (i, r) in lay.registers.iter().enumerate() {
        let _ = writeln!(w, "//   regs[slot * {} + {i}] = {}", lay.reg_stride, r.name);
    }
    for k in &lay.kernels {
        let _ = writeln!(
            w,
            "//   status[slot * {} + {}] = {} ran ({} threads per block)",
            lay.status_stride, k.status_word, k.name, k.block_dim
        );
    }
    for l in &lay.launches {
        let _ = writeln!(
            w,
            "//   status[slot * {} + {}] = error of {}.{} `launch {} {}`",
            lay.status_stride, l.status_word, l.parent, l.thread, l.child, l.stream
        );
    }
    let _ = writeln!(w);
    let _ = writeln!(w, "#include \"gridcheck.cuh\"");
    let _ = writeln!(w);
    let _ = writeln!(
        w,
        "static constexpr unsigned int kSlotStride = {}u;",
        lay.slot_stride
    );
    let _ = writeln!(
        w,
        "static constexpr unsigned int kRegStride = {}u;",
        lay.reg_stride
    );
    let _ = writeln!(
        w,
        "static constexpr unsigned int kStatusStride = {}u;",
        lay.status_stride
    );
    let _ = writeln!(w);
    for (k, plan) in litmus.kernels.iter().zip(&lay.kernels) {
        let sym = kernel_symbol(&test.name, &k.name);
        let _ = match k.launch {
            KernelLaunch::Host { .. } => writeln!(
                w,
                "extern \"C\" __global__ void __launch_bounds__({}) {sym}(gc_params p);",
                plan.block_dim
            ),
            KernelLaunch::Device => writeln!(
                w,
                "extern \"C\" __global__ void __launch_bounds__({}) {sym}(gc_params p, unsigned int slot);",
                plan.block_dim
            ),
        };
    }

    let mut site = 0u32;
    for (ki, (k, plan)) in litmus.kernels.iter().zip(&lay.kernels).enumerate() {
        let sym = kernel_symbol(&test.name, &k.name);
        let _ = writeln!(w);
        let _ = writeln!(w, "// Kernel `{}`.", k.name);
        match k.launch {
            KernelLaunch::Host { .. } => {
                let _ = writeln!(w, "extern \"C\" __global__ void {sym}(gc_params p) {{");
                let _ = writeln!(w, "  const unsigned int slot = gc_slot(p, blockIdx.x);");
            }
            KernelLaunch::Device => {
                let _ = writeln!(
                    w,
                    "extern \"C\" __global__ void {sym}(gc_params p, unsigned int slot) {{"
                );
            }
        }
        if plan.block_dim > MAX_BLOCK {
            let _ = writeln!(
                w,
                "#error \"gridcheck: kernel `{}` needs {} threads per block (thread tN runs as threadIdx.x == N*32); use lower thread numbers\"",
                k.name, plan.block_dim
            );
        }
        let has_mem = k.threads.iter().any(|t| {
            t.ops
                .iter()
                .any(|op| matches!(op, Op::Load { .. } | Op::Store { .. }))
        });
        if has_mem {
            let _ = writeln!(
                w,
                "  volatile unsigned int *const mem = p.mem + (size_t)slot * kSlotStride;"
            );
        }
        let has_loads = k
            .threads
            .iter()
            .any(|t| t.ops.iter().any(|op| matches!(op, Op::Load { .. })));
        if has_loads {
            let _ = writeln!(
                w,
                "  volatile unsigned int *const regs = p.regs + (size_t)slot * kRegStride;"
            );
        }
        let _ = writeln!(w, "  __shared__ unsigned int gc_arrived;");
        let _ = writeln!(w, "  if (threadIdx.x == 0u) gc_arrived = 0u;");
        let _ = writeln!(w, "  __syncthreads();");
        for t in &k.threads {
            for op in &t.ops {
                if let Op::Load { reg, .. } = op {
                    let _ = writeln!(w, "  unsigned int {}_{reg} = 0u;", t.name);
                }
            }
        }
        let split: Vec<Vec<Vec<&Op>>> = k.threads.iter().map(|t| phases(&t.ops)).collect();
        let n_phases = split.iter().map(Vec::len).max().unwrap_or(1);
        let n_modeled = k.threads.len() as u32;
        if split.iter().any(|t| t.len() != n_phases) {
            let _ = writeln!(
                w,
                "  // Threads of this kernel execute different numbers of syncthreads; a thread\n  // with fewer waits at the remaining barriers after its last operation."
            );
        }
        let first_stress = plan.block_dim - STRESS_WARPS * WARP;
        for phase in 0..n_phases {
            let _ = writeln!(w, "  // Phase {phase}.");
            let mut first = true;
            for (t, tph) in k.threads.iter().zip(&split) {
                let tid = t.index() as u32 * WARP;
                let _ = writeln!(
                    w,
                    "  {}if (threadIdx.x == {tid}u) {{  // {}",
                    if first { "" } else { "} else " },
                    t.name
                );
                first = false;
                for op in tph.get(phase).map(Vec::as_slice).unwrap_or(&[]) {
                    let _ = writeln!(w, "    // {op}");
                    let _ = writeln!(w, "    gc_delay(p, slot, {site}u);");
                    site += 1;
                    match op {
                        Op::Store { loc, value } => {
                            let off = lay
                                .locations
                                .iter()
                                .find(|l| &l.name == loc)
                                .map_or(0, |l| l.offset);
                            let _ = writeln!(w, "    mem[{off}u] = {value}u;");
                        }
                        Op::Load { reg, loc } => {
                            let off = lay
                                .locations
                                .iter()
                                .find(|l| &l.name == loc)
                                .map_or(0, |l| l.offset);
                            let _ = writeln!(w, "    {}_{reg} = mem[{off}u];", t.name);
                        }
                        Op::Launch { kernel, stream } => {
                            let child = lay.kernels.iter().find(|c| &c.name == kernel);
                            let block = child.map_or(WARP, |c| c.block_dim);
                            let word = lay
                                .launches
                                .iter()
                                .find(|l| &l.child == kernel)
                                .map_or(0, |l| l.status_word);
                            let _ = writeln!(
                                w,
                                "    {}<<<1, {block}{}>>>(p, slot);",
                                kernel_symbol(&test.name, kernel),
                                stream_expr(stream)
                            );
                            let _ = writeln!(
                                w,
                                "    gc_record_launch(p, kStatusStride, slot, {word}u, cudaGetLastError());"
                            );
                        }
                        Op::Trigger => {
                            let _ = writeln!(w, "    cudaTriggerProgrammaticLaunchCompletion();");
                        }
                        Op::GridDependencySync => {
                            let _ = writeln!(w, "    cudaGridDependencySynchronize();");
                        }
                        Op::DeviceSynchronize => {
                            let _ = writeln!(
                                w,
                                "#error \"gridcheck: `devicesync` (device-side cudaDeviceSynchronize) is CDP1 only and does not compile under CDP2 (sm_90 and newer); this test needs an older GPU\""
                            );
                        }
                        Op::SyncThreads => unreachable!("split into phases"),
                    }
                }
                if phase + 1 == n_phases {
                    for op in &t.ops {
                        if let Op::Load { reg, .. } = op {
                            let idx = lay
                                .registers
                                .iter()
                                .position(|r| {
                                    r.kernel == k.name && r.thread == t.name && &r.reg == reg
                                })
                                .unwrap_or(0);
                            let _ = writeln!(w, "    regs[{idx}u] = {}_{reg};", t.name);
                        }
                    }
                }
                let _ = writeln!(w, "    gc_arrive(&gc_arrived);");
            }
            let _ = writeln!(
                w,
                "  {}if (threadIdx.x >= {first_stress}u) {{  // stress warps",
                if first { "" } else { "} else " }
            );
            let _ = writeln!(
                w,
                "    gc_stress(p, slot, &gc_arrived, {}u, {phase}u);",
                n_modeled * (phase as u32 + 1)
            );
            let _ = writeln!(w, "  }}");
            if phase + 1 < n_phases {
                let _ = writeln!(
                    w,
                    "  __syncthreads();  // syncthreads, executed by every thread of the block"
                );
            }
        }
        let _ = writeln!(
            w,
            "  if (threadIdx.x == 0u) gc_mark_ran(p, kStatusStride, slot, {ki}u);"
        );
        let _ = writeln!(w, "}}");
    }
    o
}

#[cfg(test)]
mod tests;
