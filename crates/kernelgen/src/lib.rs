//! CUDA C++ for gridcheck's litmus tests: a pure function from a
//! [`gridcheck_spec::Litmus`] to a `.cu` file, and the memory layout and
//! launch plan the GPU runner (`gridcheck-gpu`) needs to run it. Runtime
//! tests, which are hand-written, get their `source` verbatim under the
//! same do-not-edit header ([`generate_runtime`]).
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

mod escape;

use std::fmt::Write as _;
use std::path::{Component, Path};

use gridcheck_spec::{
    Check, HostTest, KernelLaunch, Limit, Litmus, Op, RuntimeExpect, RuntimeTest, Spec, StreamRef,
    Test, TestBody,
};

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

/// A named stream or an event of a kernel: each block of the kernel (one
/// instance) creates its own in the kernel's prologue (thread 0, before the
/// first barrier) and destroys it at the end, after a barrier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockObject {
    pub kernel: String,
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

fn object_var(kind: ObjectKind, name: &str) -> String {
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
    pub slot_stride: u32,
    /// `regs[slot * reg_stride + index]`.
    pub registers: Vec<Register>,
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
                if let Some(reg) = op.register() {
                    let reg = reg.to_string();
                    registers.push(Register {
                        name: format!("{}.{}.{}", k.name, t.name, reg),
                        kernel: k.name.clone(),
                        thread: t.name.clone(),
                        reg,
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
                must_run: k.launch != KernelLaunch::Device
                    || litmus.limit(Limit::DevRuntimePendingLaunchCount).is_none(),
            }
        })
        .collect();
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
                        status_word: (kernels.len() + launches.len()) as u32,
                    });
                }
            }
        }
    }
    let mut next = (kernels.len() + launches.len()) as u32;
    let mut objects: Vec<BlockObject> = Vec::new();
    for k in &litmus.kernels {
        for kind in [ObjectKind::Stream, ObjectKind::Event] {
            for name in kernel_objects(k, kind) {
                objects.push(BlockObject {
                    kernel: k.name.clone(),
                    kind,
                    name,
                    status_word: next,
                });
                next += 1;
            }
        }
    }
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
                        status_word: next,
                    });
                    next += 1;
                }
            }
        }
    }
    let launch_ops = litmus
        .kernels
        .iter()
        .flat_map(|k| &k.threads)
        .flat_map(|t| &t.ops)
        .filter(|op| matches!(op, Op::Launch { .. }))
        .count() as u32;
    Layout {
        launch_ops,
        slot_stride: (locations.len().max(1) as u32) * LOC_STRIDE,
        locations,
        reg_stride: registers.len().max(1) as u32,
        registers,
        status_stride: next.max(1),
        kernels,
        launches,
        objects,
        calls,
    }
}

/// The named streams or the events a kernel's threads use, in order of
/// first mention (thread order, then program order).
fn kernel_objects(k: &gridcheck_spec::Kernel, kind: ObjectKind) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |n: &str| {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    };
    for t in &k.threads {
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

/// Whether a test has a generated `.cu` file: litmus, runtime and host
/// tests do, compile tests (whose snippet the static tier compiles itself)
/// do not.
pub fn has_generated_file(test: &Test) -> bool {
    !matches!(test.body, TestBody::Compile(_))
}

/// Whether a test's generated file builds into a host executable (a host
/// test) rather than a cubin.
pub fn builds_executable(test: &Test) -> bool {
    matches!(test.body, TestBody::Host(_))
}

/// The extra nvcc flags of a CDP1 litmus test (one with `devicesync`): CUDA
/// 12 and newer compile device-side `cudaDeviceSynchronize` only with
/// `CUDA_FORCE_CDP1_IF_SUPPORTED`, and only below sm_90 (the generated code
/// has an `#error` for sm_90 and newer).
pub const CDP1_FLAGS: [&str; 2] = [
    "-DCUDA_FORCE_CDP1_IF_SUPPORTED",
    "-D__CDPRT_SUPPRESS_SYNC_DEPRECATION_WARNING",
];

/// Whether a litmus test observes device runtime errors: it reads a
/// thread's last error (`geterror`, `peekerror`), records a `devicesync`'s
/// result, or sets a device runtime limit. Its launches and `devicesync`s
/// then get no error word and never clear the last error themselves
/// (`cudaGetLastError()` after a launch would reset what the test reads).
pub fn observes_errors(litmus: &Litmus) -> bool {
    !litmus.limits.is_empty()
        || litmus
            .kernels
            .iter()
            .flat_map(|k| &k.threads)
            .flat_map(|t| &t.ops)
            .any(|op| {
                matches!(
                    op,
                    Op::GetLastError { .. }
                        | Op::PeekAtLastError { .. }
                        | Op::DeviceSynchronize { reg: Some(_) }
                )
            })
}

/// Whether a litmus test uses CDP1 (device-side `cudaDeviceSynchronize`).
pub fn uses_cdp1(litmus: &Litmus) -> bool {
    litmus
        .kernels
        .iter()
        .flat_map(|k| &k.threads)
        .flat_map(|t| &t.ops)
        .any(|op| matches!(op, Op::DeviceSynchronize { .. }))
}

/// Whether a litmus test uses PDL (`trigger`, `gridsync`, a `host-pdl`
/// launch), which needs sm_90 or newer.
pub fn uses_pdl(litmus: &Litmus) -> bool {
    litmus.kernels.iter().any(|k| {
        k.launch == (KernelLaunch::Host { pdl: true })
            || k.threads
                .iter()
                .flat_map(|t| &t.ops)
                .any(|op| matches!(op, Op::Trigger | Op::GridDependencySync))
    })
}

/// The number of an architecture: 90 for `sm_90` and `sm_90a`.
fn arch_number(arch: &str) -> Option<u32> {
    let digits: String = arch
        .strip_prefix("sm_")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// How `cargo xtask build` compiles a test's generated file for `arch`:
/// `Ok(Some(flags))` with the extra nvcc flags, `Ok(None)` when the test
/// has no generated file (compile tests), `Err(reason)` when the file is not
/// built for this architecture (a runtime test for another one, a CDP1
/// litmus test on sm_90 and newer, a PDL litmus test below sm_90).
pub fn build_plan(test: &Test, arch: &str) -> Result<Option<Vec<String>>, String> {
    match &test.body {
        TestBody::Litmus(l) if uses_pdl(l) && arch_number(arch).is_some_and(|n| n < 90) => {
            Err(format!(
                "test `{}` uses PDL, which compiles only for sm_90 and newer",
                test.name
            ))
        }
        TestBody::Litmus(l) if uses_cdp1(l) => match arch_number(arch) {
            Some(n) if n < 90 => Ok(Some(CDP1_FLAGS.map(String::from).to_vec())),
            _ => Err(format!(
                "test `{}` uses CDP1 (`devicesync`), which compiles only below sm_90",
                test.name
            )),
        },
        TestBody::Litmus(_) => Ok(Some(Vec::new())),
        TestBody::Runtime(r) if r.arch == arch => Ok(Some(r.flags.clone())),
        TestBody::Runtime(r) => Err(format!("test `{}` is for {}", test.name, r.arch)),
        TestBody::Host(h) if h.arch == arch => Ok(Some(h.flags.clone())),
        TestBody::Host(h) => Err(format!("test `{}` is for {}", test.name, h.arch)),
        TestBody::Compile(_) => Ok(None),
    }
}

/// Every litmus and runtime test of the spec as `(file name, contents)`, in
/// spec order. `cargo xtask codegen` writes these into [`GENERATED_DIR`]; a
/// test checks that the checked-in files are current.
pub fn generate_all(spec: &Spec) -> Vec<(String, String)> {
    spec.tests
        .iter()
        .filter_map(|t| {
            let rules: Vec<&str> = spec
                .rules
                .iter()
                .filter(|r| r.tests.iter().any(|n| n == &t.name))
                .map(|r| r.id.as_str())
                .collect();
            let src = spec_relative(&t.origin.file);
            match &t.body {
                TestBody::Litmus(l) => Some((file_name(t), generate(t, l, &src, &rules))),
                TestBody::Runtime(r) => Some((file_name(t), generate_runtime(t, r, &src, &rules))),
                TestBody::Host(h) => Some((file_name(t), generate_host(t, h, &src, &rules))),
                TestBody::Compile(_) => None,
            }
        })
        .collect()
}

/// The generated file of a runtime test: the do-not-edit header, which
/// names the spec file, the rules and how the runner calls the entry
/// kernel, then the test's `source` verbatim.
pub fn generate_runtime(
    test: &Test,
    rt: &RuntimeTest,
    spec_file: &str,
    rule_ids: &[&str],
) -> String {
    let mut o = String::new();
    let w = &mut o;
    header(w, test, " (runtime)", spec_file, rule_ids);
    build_line(w, &rt.arch, &rt.flags, "");
    let _ = writeln!(
        w,
        "// Run: {}<<<{}, {}>>>(out), out zeroed, {} words",
        rt.entry,
        rt.grid,
        rt.block,
        rt.outputs.len().max(1)
    );
    if !rt.limits.is_empty() {
        let limits: Vec<String> = rt
            .limits
            .iter()
            .map(|(l, v)| format!("{} = {v}", l.as_str()))
            .collect();
        let _ = writeln!(w, "// Limits, set before loading: {}", limits.join(", "));
    }
    for (i, name) in rt.outputs.iter().enumerate() {
        let _ = writeln!(w, "//   out[{i}] = {name}");
    }
    match &rt.expect {
        RuntimeExpect::Values(checks) => expect_line(w, checks),
        RuntimeExpect::LoadError { name, value } => {
            let _ = writeln!(
                w,
                "// Expect: loading the module fails with {name} ({value})"
            );
        }
    }
    verbatim(o, &rt.source)
}

/// The generated file of a host test: the do-not-edit header, how it is
/// built and what it must print, then the test's `source` verbatim.
pub fn generate_host(test: &Test, ht: &HostTest, spec_file: &str, rule_ids: &[&str]) -> String {
    let mut o = String::new();
    let w = &mut o;
    header(w, test, " (host program)", spec_file, rule_ids);
    build_line(w, &ht.arch, &ht.flags, " -lcudadevrt -o <test>.host");
    let _ = writeln!(
        w,
        "// Run: the program prints `gridcheck-output <name> <value>` for: {}",
        ht.outputs.join(", ")
    );
    expect_line(w, &ht.expect);
    verbatim(o, &ht.source)
}

fn build_line(w: &mut String, arch: &str, flags: &[String], tail: &str) {
    let flags = if flags.is_empty() {
        "(none)".to_string()
    } else {
        escape::comment(&flags.join(" "))
    };
    let _ = writeln!(
        w,
        "// Build: nvcc -arch={arch} -rdc=true{tail}, extra flags: {flags}"
    );
}

fn expect_line(w: &mut String, checks: &[(String, Check)]) {
    let checks: Vec<String> = checks
        .iter()
        .map(|(name, c)| {
            if c.text.starts_with(['=', '!', '<', '>']) {
                format!("{name} {}", escape::comment(&c.text))
            } else {
                format!("{name} == {}", escape::comment(&c.text))
            }
        })
        .collect();
    let _ = writeln!(w, "// Expect: {}", checks.join(", "));
}

/// Ends a generated file's header and appends the test's source.
fn verbatim(mut o: String, source: &str) -> String {
    let _ = writeln!(o, "//");
    let _ = writeln!(o, "// The test's source, verbatim:");
    let _ = writeln!(o);
    o.push_str(source);
    if !o.ends_with('\n') {
        o.push('\n');
    }
    o
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

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first lines of every generated file: the do-not-edit line naming the
/// spec file, the test (with `kind` after its name), its description and the
/// rules that list it.
fn header(w: &mut String, test: &Test, kind: &str, spec_file: &str, rule_ids: &[&str]) {
    let _ = writeln!(
        w,
        "// Generated by cargo xtask codegen from {}; do not edit by hand.",
        escape::comment(spec_file)
    );
    let _ = writeln!(w, "//");
    let _ = writeln!(w, "// Test: {}{kind}", test.name);
    if let Some(d) = &test.description {
        let _ = writeln!(w, "// {}", escape::comment(&one_line(d)));
    }
    let rules = if rule_ids.is_empty() {
        "(none)".to_string()
    } else {
        rule_ids.join(", ")
    };
    let _ = writeln!(w, "// Rules: {rules}");
}

/// CUDA source for a litmus test. `spec_file` is the test's spec file
/// relative to the repository root; `rule_ids` the rules that list the test.
pub fn generate(test: &Test, litmus: &Litmus, spec_file: &str, rule_ids: &[&str]) -> String {
    let lay = layout(litmus);
    let mut o = String::new();
    let w = &mut o;
    header(w, test, "", spec_file, rule_ids);
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
    for e in lay.error_words() {
        let _ = writeln!(
            w,
            "//   status[slot * {} + {}] = error of {}",
            lay.status_stride, e.word, e.what
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
            .any(|t| t.ops.iter().any(|op| op.register().is_some()));
        if has_loads {
            let _ = writeln!(
                w,
                "  volatile unsigned int *const regs = p.regs + (size_t)slot * kRegStride;"
            );
        }
        let _ = writeln!(w, "  __shared__ unsigned int gc_arrived;");
        let objects: Vec<&BlockObject> =
            lay.objects.iter().filter(|o| o.kernel == k.name).collect();
        if objects.is_empty() {
            let _ = writeln!(w, "  if (threadIdx.x == 0u) gc_arrived = 0u;");
        } else {
            for o in &objects {
                let ty = match o.kind {
                    ObjectKind::Stream => "cudaStream_t",
                    ObjectKind::Event => "cudaEvent_t",
                };
                let _ = writeln!(w, "  __shared__ {ty} {};", o.var());
            }
            let _ = writeln!(
                w,
                "  if (threadIdx.x == 0u) {{  // this block's streams and events"
            );
            let _ = writeln!(w, "    gc_arrived = 0u;");
            for o in &objects {
                let create = match o.kind {
                    ObjectKind::Stream => "gc_create_stream",
                    ObjectKind::Event => "gc_create_event",
                };
                let _ = writeln!(
                    w,
                    "    {} = {create}(p, kStatusStride, slot, {}u);",
                    o.var(),
                    o.status_word
                );
            }
            let _ = writeln!(w, "  }}");
        }
        let _ = writeln!(w, "  __syncthreads();");
        for t in &k.threads {
            for op in &t.ops {
                if let Some(reg) = op.register() {
                    let _ = writeln!(w, "  unsigned int {}_{reg} = 0u;", t.name);
                }
            }
        }
        let split: Vec<Vec<Vec<(usize, &Op)>>> = k.threads.iter().map(|t| phases(&t.ops)).collect();
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
                for &(op_index, op) in tph.get(phase).map(Vec::as_slice).unwrap_or(&[]) {
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
                            if lay.launches.iter().any(|l| &l.child == kernel) {
                                let _ = writeln!(
                                    w,
                                    "    gc_record_launch(p, kStatusStride, slot, {word}u, cudaGetLastError());"
                                );
                            } else {
                                let _ = writeln!(
                                    w,
                                    "    // its error, if any, stays the thread's last error"
                                );
                            }
                        }
                        Op::Trigger => {
                            let _ = writeln!(w, "    cudaTriggerProgrammaticLaunchCompletion();");
                        }
                        Op::GridDependencySync => {
                            let _ = writeln!(w, "    cudaGridDependencySynchronize();");
                        }
                        Op::GetLastError { reg } => {
                            let _ = writeln!(
                                w,
                                "    {}_{reg} = (unsigned int)cudaGetLastError();",
                                t.name
                            );
                        }
                        Op::PeekAtLastError { reg } => {
                            let _ = writeln!(
                                w,
                                "    {}_{reg} = (unsigned int)cudaPeekAtLastError();",
                                t.name
                            );
                        }
                        Op::DeviceSynchronize { reg } => {
                            let word = call_word(&lay, &k.name, &t.name, op_index);
                            let _ =
                                writeln!(w, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900");
                            let _ = writeln!(
                                w,
                                "#error \"gridcheck: `devicesync` (device-side cudaDeviceSynchronize) is CDP1 only and does not compile under CDP2 (sm_90 and newer); this test needs an older GPU\""
                            );
                            let _ = writeln!(w, "#else");
                            if lay.calls.iter().any(|c| {
                                c.kernel == k.name && c.thread == t.name && c.op_index == op_index
                            }) {
                                let _ = writeln!(
                                    w,
                                    "    gc_record_error(p, kStatusStride, slot, {word}u, cudaDeviceSynchronize());"
                                );
                                let _ = writeln!(w, "    (void)cudaGetLastError();");
                            } else if let Some(reg) = reg {
                                let _ = writeln!(
                                    w,
                                    "    {}_{reg} = (unsigned int)cudaDeviceSynchronize();",
                                    t.name
                                );
                            } else {
                                let _ = writeln!(w, "    (void)cudaDeviceSynchronize();");
                            }
                            let _ = writeln!(w, "#endif");
                        }
                        Op::EventRecord { event, stream } => {
                            let word = call_word(&lay, &k.name, &t.name, op_index);
                            let _ = writeln!(
                                w,
                                "    gc_record_error(p, kStatusStride, slot, {word}u, gc_event_record({}, {}));",
                                object_var(ObjectKind::Event, event),
                                stream_value(stream)
                            );
                        }
                        Op::StreamWaitEvent { stream, event } => {
                            let word = call_word(&lay, &k.name, &t.name, op_index);
                            let _ = writeln!(
                                w,
                                "    gc_record_error(p, kStatusStride, slot, {word}u, gc_stream_wait_event({}, {}));",
                                stream_value(stream),
                                object_var(ObjectKind::Event, event)
                            );
                        }
                        Op::SyncThreads => unreachable!("split into phases"),
                    }
                }
                if phase + 1 == n_phases {
                    for op in &t.ops {
                        if let Some(reg) = op.register() {
                            let idx = lay
                                .registers
                                .iter()
                                .position(|r| {
                                    r.kernel == k.name && r.thread == t.name && r.reg == reg
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
        if !objects.is_empty() {
            let _ = writeln!(
                w,
                "  __syncthreads();  // every thread is done with the block's streams and events"
            );
            let _ = writeln!(w, "  if (threadIdx.x == 0u) {{");
            for o in &objects {
                let destroy = match o.kind {
                    ObjectKind::Stream => "gc_destroy_stream",
                    ObjectKind::Event => "gc_destroy_event",
                };
                let _ = writeln!(w, "    {destroy}({});", o.var());
            }
            let _ = writeln!(w, "  }}");
        }
        let _ = writeln!(
            w,
            "  if (threadIdx.x == 0u) gc_mark_ran(p, kStatusStride, slot, {ki}u);"
        );
        let _ = writeln!(w, "}}");
    }
    o
}

/// The status word of the `record`, `waitevent` or `devicesync` at
/// `op_index` of a thread.
fn call_word(lay: &Layout, kernel: &str, thread: &str, op_index: usize) -> u32 {
    lay.calls
        .iter()
        .find(|c| c.kernel == kernel && c.thread == thread && c.op_index == op_index)
        .map_or(0, |c| c.status_word)
}

#[cfg(test)]
mod tests;
