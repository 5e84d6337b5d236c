//! A finding's test as a plain runtime-API program ([`program`]): no
//! gridcheck code, no delays, no stress warps, no outcome checks; what a
//! user would write, as `lab/experiments/trigger-event-child/tec.cu` was
//! written by hand. Each program of the test (its context first) is a
//! namespace of `__global__` kernels; thread `tN` of block `M` is lane 0 of
//! warp N of the instance's block M; each block creates its named streams
//! and events (thread 0, shared memory) and destroys them after a last
//! barrier; host kernels go into one stream in order (a PDL kernel with
//! the programmatic serialization attribute), each launch waited for at
//! most `PLAIN_WAIT_S` seconds (2).
//!
//! Every device-runtime call has a number; `PROG list` prints them as JSON,
//! and `PROG INSTANCES LAUNCHES [DROP]` runs each program's launches with
//! call DROP left out (the characterization: which calls it needs), one
//! JSON line a program: `completed`, with each failed call's count and
//! first error, or `hung` at a launch (exit 3), with how many blocks of
//! each kernel reached their end.

use std::fmt::Write as _;

use gridcheck_spec::{KernelLaunch, Litmus, Op, StreamRef, Thread};

/// One device-runtime call site of the test.
struct Call {
    label: String,
    /// Whether DROP may leave it out (an operation; not a block's creation
    /// of its streams and events, which the others use).
    droppable: bool,
}

/// What the emitter numbers across the test's programs.
#[derive(Default)]
struct Numbering {
    calls: Vec<Call>,
    /// Every kernel, as `program kernel`.
    kernels: Vec<String>,
}

impl Numbering {
    fn call(&mut self, label: String, droppable: bool) -> usize {
        self.calls.push(Call { label, droppable });
        self.calls.len() - 1
    }
}

/// A C string literal's contents.
fn c_text(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "'")
}

fn stream(s: &StreamRef) -> String {
    match s {
        StreamRef::Null => "0".into(),
        StreamRef::Tail => "cudaStreamTailLaunch".into(),
        StreamRef::FireAndForget => "cudaStreamFireAndForget".into(),
        StreamRef::Named(n) => format!("s_{n}"),
    }
}

/// Threads a block of kernel `k`: a warp for each of its threads' indices.
fn block_dim(l: &Litmus, k: &str) -> usize {
    l.kernel(k).map_or(1, |k| {
        k.threads.iter().map(Thread::index).max().unwrap_or(0) + 1
    }) * 32
}

/// One operation's code, in the thread's branch.
fn op_code(w: &mut String, n: &mut Numbering, l: &Litmus, label: &str, o: &Op) {
    let loc = |x: &str| l.memory.iter().position(|(m, _)| m == x).unwrap_or(0);
    let mut call = |n: &mut Numbering, code: String, err: bool| {
        let id = n.call(format!("{label} `{o}`"), true);
        if err {
            let _ = writeln!(w, "      if (drop != {id}) note(c, {id}, {code});");
        } else {
            let _ = writeln!(w, "      if (drop != {id}) {code};");
        }
    };
    match o {
        Op::Store { loc: x, value } => {
            let _ = writeln!(w, "      m[{}] = {value}u;  // {o}", loc(x));
        }
        Op::Load { loc: x, .. } => {
            let _ = writeln!(w, "      (void)m[{}];  // {o}", loc(x));
        }
        Op::SyncThreads => {}
        Op::Launch { kernel, stream: s } => {
            let blocks = l.kernel(kernel).map_or(1, |k| k.blocks());
            let code = format!(
                "(k_{kernel}<<<{blocks}, {}, 0, {}>>>(mem, c, drop, slot), cudaGetLastError())",
                block_dim(l, kernel),
                stream(s)
            );
            call(n, code, true);
        }
        Op::Trigger => call(n, "cudaTriggerProgrammaticLaunchCompletion()".into(), false),
        Op::GridDependencySync => call(n, "cudaGridDependencySynchronize()".into(), false),
        Op::DeviceSynchronize { .. } => {
            let _ = writeln!(w, "      // {o}: CDP1 only, not in a plain CDP2 program");
        }
        Op::GetLastError { .. } => call(n, "(void)cudaGetLastError()".into(), false),
        Op::PeekAtLastError { .. } => call(n, "(void)cudaPeekAtLastError()".into(), false),
        Op::EventRecord { event, stream: s } => call(
            n,
            format!("cudaEventRecord(e_{event}, {})", stream(s)),
            true,
        ),
        Op::StreamWaitEvent { stream: s, event } => call(
            n,
            format!("cudaStreamWaitEvent({}, e_{event}, 0)", stream(s)),
            true,
        ),
    }
}

/// The named streams and events a kernel's operations use.
fn objects(k: &gridcheck_spec::Kernel) -> (Vec<String>, Vec<String>) {
    let (mut streams, mut events) = (Vec::new(), Vec::new());
    let add = |v: &mut Vec<String>, x: &str| {
        if !v.iter().any(|y| y == x) {
            v.push(x.to_string());
        }
    };
    for o in k.threads.iter().flat_map(|t| &t.ops) {
        match o {
            Op::Launch {
                stream: StreamRef::Named(s),
                ..
            } => add(&mut streams, s),
            Op::EventRecord { event, stream } | Op::StreamWaitEvent { stream, event } => {
                add(&mut events, event);
                if let StreamRef::Named(s) = stream {
                    add(&mut streams, s);
                }
            }
            _ => {}
        }
    }
    (streams, events)
}

/// One block of kernel `k`: its threads' operations phase by phase, every
/// `syncthreads` a barrier of the whole block.
fn block_code(w: &mut String, n: &mut Numbering, l: &Litmus, label: &str, threads: &[&Thread]) {
    let phases = threads
        .iter()
        .map(|t| {
            t.ops
                .iter()
                .filter(|o| matches!(o, Op::SyncThreads))
                .count()
        })
        .max()
        .unwrap_or(0);
    for phase in 0..=phases {
        let _ = writeln!(w, "    // phase {phase}");
        for t in threads {
            let ops: Vec<&Op> = t
                .ops
                .split(|o| matches!(o, Op::SyncThreads))
                .nth(phase)
                .unwrap_or(&[])
                .iter()
                .collect();
            if ops.is_empty() {
                continue;
            }
            let _ = writeln!(
                w,
                "    if (threadIdx.x == {}u) {{  // {}",
                32 * t.index(),
                t.name
            );
            for o in ops {
                op_code(w, n, l, &format!("{label}.{}", t.name), o);
            }
            let _ = writeln!(w, "    }}");
        }
        if phase < phases {
            let _ = writeln!(w, "    __syncthreads();");
        }
    }
}

/// One kernel of program `p`.
fn kernel_code(w: &mut String, n: &mut Numbering, p: &str, l: &Litmus, k: &gridcheck_spec::Kernel) {
    let kid = n.kernels.len();
    n.kernels.push(format!("{p} {}", k.name));
    let device = k.launch == KernelLaunch::Device;
    let nb = k.blocks();
    let _ = writeln!(
        w,
        "__global__ void k_{}(volatile unsigned *mem, Counters *c, int drop{}) {{",
        k.name,
        if device { ", unsigned slot" } else { "" }
    );
    let ops = || k.threads.iter().flat_map(|t| &t.ops);
    let accesses = ops().any(|o| matches!(o, Op::Load { .. } | Op::Store { .. }));
    let launches = ops().any(|o| matches!(o, Op::Launch { .. }));
    if !device && (accesses || launches) {
        let _ = writeln!(w, "  const unsigned slot = blockIdx.x / {nb}u;");
    }
    if accesses {
        let _ = writeln!(w, "  volatile unsigned *m = mem + (size_t)slot * kLocs;");
    }
    let (streams, events) = objects(k);
    for s in &streams {
        let _ = writeln!(w, "  __shared__ cudaStream_t s_{s};");
    }
    for e in &events {
        let _ = writeln!(w, "  __shared__ cudaEvent_t e_{e};");
    }
    let _ = writeln!(w, "  if (threadIdx.x == 0u) {{");
    for s in &streams {
        let id = n.call(format!("{p} {} creating stream {s}", k.name), false);
        let _ = writeln!(
            w,
            "    note(c, {id}, cudaStreamCreateWithFlags(&s_{s}, cudaStreamNonBlocking));"
        );
    }
    for e in &events {
        let id = n.call(format!("{p} {} creating event {e}", k.name), false);
        let _ = writeln!(
            w,
            "    note(c, {id}, cudaEventCreateWithFlags(&e_{e}, cudaEventDisableTiming));"
        );
    }
    let _ = writeln!(
        w,
        "  }}\n  __syncthreads();\n  switch (blockIdx.x % {nb}u) {{"
    );
    for b in 0..nb {
        let threads: Vec<&Thread> = k.block_threads(b).collect();
        let _ = writeln!(w, "  case {b}u: {{");
        block_code(w, n, l, &format!("{p} {}", k.name), &threads);
        let _ = writeln!(w, "    break;\n  }}");
    }
    let _ = writeln!(w, "  }}\n  __syncthreads();\n  if (threadIdx.x == 0u) {{");
    for s in &streams {
        let _ = writeln!(w, "    cudaStreamDestroy(s_{s});");
    }
    for e in &events {
        let _ = writeln!(w, "    cudaEventDestroy(e_{e});");
    }
    let _ = writeln!(w, "    atomicAdd(&c->ended[{kid}], 1u);\n  }}\n}}\n");
}

/// Program `pi` (`name`, `l`): its namespace and its host function, which
/// runs its launches and prints its JSON line.
fn program_code(w: &mut String, n: &mut Numbering, pi: usize, name: &str, l: &Litmus) {
    let _ = writeln!(
        w,
        "namespace p{pi} {{  // {name}\nconstexpr unsigned kLocs = {};",
        l.memory.len().max(1)
    );
    for k in &l.kernels {
        let extra = if k.launch == KernelLaunch::Device {
            ", unsigned slot"
        } else {
            ""
        };
        let _ = writeln!(
            w,
            "__global__ void k_{}(volatile unsigned *mem, Counters *c, int drop{extra});",
            k.name
        );
    }
    let first_kernel = n.kernels.len();
    for k in &l.kernels {
        kernel_code(w, n, &format!("p{pi}"), l, k);
    }
    let init: Vec<String> = l.memory.iter().map(|(_, v)| format!("{v}u")).collect();
    let _ = writeln!(
        w,
        "int run(Counters *c, unsigned *mem, int instances, int launches, int drop, cudaStream_t s) {{\n  const unsigned init[] = {{{}}};",
        if init.is_empty() {
            "0u".to_string()
        } else {
            init.join(", ")
        }
    );
    let _ = writeln!(w, "  for (int i = 0; i < launches; i++) {{");
    let _ = writeln!(
        w,
        "    for (int j = 0; j < instances * (int)kLocs; j++) mem[j] = init[j % kLocs];"
    );
    let _ = writeln!(w, "    memset((void *)c->ended, 0, sizeof c->ended);");
    for k in l
        .kernels
        .iter()
        .filter(|k| k.launch != KernelLaunch::Device)
    {
        let grid = format!("instances * {}", k.blocks());
        let dim = block_dim(l, &k.name);
        if k.launch == (KernelLaunch::Host { pdl: true }) {
            let _ = writeln!(
                w,
                "    if (launch_pdl(k_{}, {grid}, {dim}, s, mem, c, drop)) return fail(\"{name}\", i);",
                k.name
            );
        } else {
            let _ = writeln!(
                w,
                "    k_{}<<<{grid}, {dim}, 0, s>>>(mem, c, drop);",
                k.name
            );
            let _ = writeln!(
                w,
                "    if (cudaGetLastError() != cudaSuccess) return fail(\"{name}\", i);"
            );
        }
    }
    let _ = writeln!(
        w,
        "    if (wait(s)) return hung(c, \"{name}\", instances, launches, drop, i, {first_kernel}, {});\n  }}",
        n.kernels.len()
    );
    let _ = writeln!(
        w,
        "  return done(c, \"{name}\", instances, launches, drop);\n}}\n}}  // namespace p{pi}\n"
    );
}

/// What every plain program holds: its counters, the wait for a launch,
/// the JSON lines it prints.
const PRELUDE: &str = include_str!("plain_prelude.cu");

/// The test `programs` (context first, the finding last) as one
/// runtime-API program (the module docs).
pub fn program(programs: &[(String, Litmus)]) -> String {
    let mut n = Numbering::default();
    let mut body = String::new();
    for (pi, (name, l)) in programs.iter().enumerate() {
        program_code(&mut body, &mut n, pi, name, l);
    }
    let names: Vec<&str> = programs.iter().map(|(n, _)| n.as_str()).collect();
    let locs = programs
        .iter()
        .map(|(_, l)| l.memory.len().max(1))
        .max()
        .unwrap_or(1);
    let launches_per_instance: usize = programs
        .iter()
        .map(|(_, l)| {
            l.kernels
                .iter()
                .flat_map(|k| &k.threads)
                .flat_map(|t| &t.ops)
                .filter(|o| matches!(o, Op::Launch { .. }))
                .count()
        })
        .max()
        .unwrap_or(0);
    let mut w = String::new();
    let _ = writeln!(
        w,
        "// Generated by gridcheck-campaign plain from a campaign finding's test; no gridcheck code.\n\
         // Programs, run in this order in one process: {}.\n\
         // Usage: PROG INSTANCES LAUNCHES [DROP] | PROG list   (PLAIN_WAIT_S: seconds a launch may take, 2)\n\
         // Build: nvcc -arch=sm_90 -rdc=true PROG.cu -lcudadevrt -o PROG",
        names.join(", then ")
    );
    let _ = writeln!(
        w,
        "constexpr int kCalls = {};\nconstexpr int kKernels = {};",
        n.calls.len().max(1),
        n.kernels.len().max(1)
    );
    let labels: Vec<String> = n
        .calls
        .iter()
        .map(|c| format!("\"{}\"", c_text(&c.label)))
        .collect();
    let kernels: Vec<String> = n
        .kernels
        .iter()
        .map(|k| format!("\"{}\"", c_text(k)))
        .collect();
    let _ = writeln!(
        w,
        "static const char *kCallNames[] = {{{}}};",
        if labels.is_empty() {
            "\"\"".into()
        } else {
            labels.join(", ")
        }
    );
    let _ = writeln!(
        w,
        "static const char *kKernelNames[] = {{{}}};",
        if kernels.is_empty() {
            "\"\"".into()
        } else {
            kernels.join(", ")
        }
    );
    let droppable: Vec<String> = n
        .calls
        .iter()
        .map(|c| u8::from(c.droppable).to_string())
        .collect();
    let _ = writeln!(
        w,
        "static const int kDroppable[] = {{{}}};\n",
        if droppable.is_empty() {
            "0".into()
        } else {
            droppable.join(", ")
        }
    );
    w.push_str(PRELUDE);
    w.push_str(&body);
    let runs: Vec<String> = (0..programs.len())
        .map(|pi| format!("  if (p{pi}::run(c, mem, instances, launches, drop, s)) return 1;"))
        .collect();
    let _ = write!(
        w,
        r#"int main(int argc, char **argv) {{
  if (argc == 2 && !strcmp(argv[1], "list")) {{
    printf("[");
    for (int i = 0; i < kCalls && kCallNames[i][0]; i++)
      printf("%s{{\"call\": %d, \"label\": \"%s\", \"droppable\": %s}}", i ? ", " : "", i, kCallNames[i], kDroppable[i] ? "true" : "false");
    printf("]\n");
    return 0;
  }}
  if (argc < 3) {{ printf("usage: %s INSTANCES LAUNCHES [DROP] | %s list\n", argv[0], argv[0]); return 2; }}
  int instances = atoi(argv[1]), launches = atoi(argv[2]), drop = argc > 3 ? atoi(argv[3]) : -1;
  if (instances < 1 || launches < 1) {{ printf("INSTANCES and LAUNCHES are positive\n"); return 2; }}
  size_t pending = (size_t)instances * {launches_per_instance} + 1024;
  if (pending > 2048) cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending);
  unsigned *mem;
  Counters *c;
  cudaStream_t s;
  cudaError_t e = cudaMallocManaged(&mem, sizeof(unsigned) * (size_t)instances * {locs});
  if (e == cudaSuccess) e = cudaMallocManaged(&c, sizeof *c);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (e != cudaSuccess) {{ printf("{{\"error\": \"%s\"}}\n", cudaGetErrorName(e)); return 1; }}
  memset((void *)c, 0, sizeof *c);
  g_failed_at_start = (Counters *)calloc(1, sizeof *c);
{}
  return 0;
}}
"#,
        runs.join("\n")
    );
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::tests::litmus;

    #[test]
    fn a_test_becomes_a_program_with_every_call_numbered() {
        let ctx = litmus(
            "          t0: [store x 1, launch k1 tail]\n",
            "exists x == 1",
            "allowed",
        );
        let lead = litmus(
            "          t0: [syncthreads, record e2 s1]\n          t2: [trigger, syncthreads, launch k1 s1, waitevent s1 e2]\n",
            "exists x == 1",
            "allowed",
        );
        let cu = program(&[("ctx".into(), ctx), ("lead".into(), lead)]);
        // No gridcheck code: the runtime API only.
        assert!(!cu.contains("gridcheck.cuh") && !cu.contains("gc_"), "{cu}");
        assert!(cu.contains("Programs, run in this order in one process: ctx, then lead."));
        // The lead's calls in its threads' warps, phase by phase.
        assert!(cu.contains("if (threadIdx.x == 64u) {  // t2"), "{cu}");
        assert!(cu.contains("cudaTriggerProgrammaticLaunchCompletion()"));
        assert!(
            cu.contains(
                "note(c, 5, (k_k1<<<1, 32, 0, s_s1>>>(mem, c, drop, slot), cudaGetLastError()))"
            ),
            "{cu}"
        );
        assert!(cu.contains("cudaStreamWaitEvent(s_s1, e_e2, 0)"));
        assert!(cu.contains("cudaStreamCreateWithFlags(&s_s1, cudaStreamNonBlocking)"));
        // The context's tail launch, and both programs run in order.
        assert!(cu.contains("cudaStreamTailLaunch"));
        let (a, b) = (cu.find("p0::run(").unwrap(), cu.find("p1::run(").unwrap());
        assert!(a < b);
        assert!(cu.contains("\"p1 k0.t2 `waitevent s1 e2`\""), "{cu}");
    }

    /// The generated program compiles, where nvcc is found.
    #[test]
    fn the_program_compiles() {
        let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
        let Ok(nvcc) = gridcheck_toolchain::find_nvcc(&root) else {
            eprintln!("no nvcc: not compiled");
            return;
        };
        let lead = litmus(
            "          t0: [record e1, gridsync, geterror e0, launch k1 s1]\n          t1: [peekerror e1, waitevent null e1, load r1 x]\n",
            "exists x == 1",
            "allowed",
        );
        let dir = std::env::temp_dir().join(format!("gridcheck-plain-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cu = dir.join("p.cu");
        std::fs::write(&cu, program(&[("lead".into(), lead)])).unwrap();
        let out = nvcc.run(&[
            "-arch=sm_90".into(),
            "-rdc=true".into(),
            "-c".into(),
            cu.display().to_string(),
            "-o".into(),
            dir.join("p.o").display().to_string(),
        ]);
        assert!(out.success, "{}\n{}", out.command, out.output);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
