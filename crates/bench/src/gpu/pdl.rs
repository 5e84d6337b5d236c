//! The Programmatic Dependent Launch figures (`kernels/bench/pdl.cu`): a
//! chain of dependent kernels with and without the attribute, the trigger
//! early, late or absent, in a CUDA graph, against the ideal, and with a
//! secondary too large to be co-resident.

use std::ffi::c_void;

use cudarc::driver::{CudaFunction, sys};

use super::buffers::{Args, DevBuf, ck};
use super::{Bench, Outcome, R, col, diff, fig};

const TRIGGERS: [(i32, &str); 3] = [(0, "early"), (1, "late"), (2, "none")];

/// One PDL chain configuration and its buffers (a, b ping-pong; after every
/// chain of even length, a holds the number of steps run so far).
struct Chain {
    pdl: bool,
    trigger: i32,
    prologue: i64,
    big: bool,
    a: DevBuf,
    b: DevBuf,
    steps: u64,
}

/// The prologues the plain chains run with, in cycles per kernel.
const PROLOGUES: &[i64] = &[0, 4000, 16000];
/// The prologue of the chains captured in a graph and of the large ones.
const GRAPH_PROLOGUE: i64 = 4000;

/// The chains' shape: kernels per chain, work per step, block and grid
/// sizes, for the co-resident chains and the large ones.
struct Shape {
    k: u32,
    work: i64,
    threads: u32,
    grid: u32,
    n: usize,
    big_grid: u32,
    big_n: usize,
    big_smem: u32,
}

impl Shape {
    fn of(b: &Bench) -> Shape {
        let threads = 128u32;
        Shape {
            k: if b.plan.quick { 16 } else { 32 },
            work: 2000,
            threads,
            grid: b.sms,
            n: (b.sms * threads) as usize,
            big_grid: 4 * b.sms,
            big_n: (4 * b.sms * threads) as usize,
            big_smem: 160 * 1024,
        }
    }

    /// A chain and its buffers, none of its steps run yet.
    fn chain(&self, pdl: bool, trigger: i32, prologue: i64, big: bool) -> R<Chain> {
        let len = if big { self.big_n } else { self.n } * 4;
        Ok(Chain {
            pdl,
            trigger,
            prologue,
            big,
            a: DevBuf::new(len)?,
            b: DevBuf::new(len)?,
            steps: 0,
        })
    }
}

/// Every chain timed: per prologue, `[0]` without the attribute and `[1..4]`
/// with it, per trigger; two captured in a graph (with, without PDL); two
/// too large to be co-resident (with, without PDL).
struct Chains {
    per_prologue: Vec<Vec<Chain>>,
    graphs: [Chain; 2],
    bigs: [Chain; 2],
}

impl Chains {
    fn new(s: &Shape) -> R<Chains> {
        let mut per_prologue = Vec::new();
        for &p in PROLOGUES {
            let mut v = vec![s.chain(false, 2, p, false)?];
            for (t, _) in TRIGGERS {
                v.push(s.chain(true, t, p, false)?);
            }
            per_prologue.push(v);
        }
        let graphs = [
            s.chain(true, 0, GRAPH_PROLOGUE, false)?,
            s.chain(false, 2, GRAPH_PROLOGUE, false)?,
        ];
        let bigs = [
            s.chain(true, 0, GRAPH_PROLOGUE, true)?,
            s.chain(false, 2, GRAPH_PROLOGUE, true)?,
        ];
        Ok(Chains {
            per_prologue,
            graphs,
            bigs,
        })
    }
}

/// The ideal's buffers: the main work in one grid (`pdl_fused`), and the
/// steps it has run.
struct Fused {
    fa: DevBuf,
    fb: DevBuf,
    bar: DevBuf,
    steps: u64,
}

pub(super) fn pdl_group(b: &Bench, out: &mut Outcome) -> R<()> {
    let m = b.module("pdl")?;
    let step = b.func(&m, "pdl_step")?;
    let fused = b.func(&m, "pdl_fused")?;
    let s = Shape::of(b);
    allow_large_smem(&step, s.big_smem)?;
    let mut chains = Chains::new(&s)?;
    let mut ideal = Fused {
        fa: DevBuf::new(s.n * 4)?,
        fb: DevBuf::new(s.n * 4)?,
        bar: DevBuf::new(8)?,
        steps: 0,
    };
    let execs = capture_graphs(b, &step, &s, &chains.graphs)?;
    let rows = measure(b, &step, &fused, &s, &mut chains, &mut ideal, &execs)?;
    for exec in execs {
        // SAFETY: instantiated above, destroyed once.
        unsafe { sys::cuGraphExecDestroy(exec) };
    }
    b.sync("the PDL chains")?;
    verify(&s, &chains, &ideal)?;
    chain_figures(out, &s, &rows)?;
    graph_and_large_figures(out, &s, &rows)
}

/// Lets `pdl_step` take the large chains' dynamic shared memory.
fn allow_large_smem(step: &CudaFunction, big_smem: u32) -> R<()> {
    // SAFETY: a valid function and attribute.
    ck("cuFuncSetAttribute(max dynamic shared memory)", unsafe {
        sys::cuFuncSetAttribute(
            step.cu_function(),
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            big_smem as i32,
        )
    })
}

/// Launches one chain's `k` steps on the stream, a and b in turn.
fn run_chain(b: &Bench, step: &CudaFunction, s: &Shape, ch: &Chain) -> R<()> {
    let (g, len, smem) = if ch.big {
        (s.big_grid, s.big_n, s.big_smem)
    } else {
        (s.grid, s.n, 0)
    };
    for i in 0..s.k {
        let (src, dst) = if i % 2 == 0 {
            (&ch.a, &ch.b)
        } else {
            (&ch.b, &ch.a)
        };
        b.launch(
            step,
            g,
            s.threads,
            smem,
            ch.pdl,
            Args::default()
                .p(src)
                .p(dst)
                .i(len as i32)
                .l(ch.prologue)
                .l(s.work)
                .i(ch.trigger),
        )?;
    }
    Ok(())
}

/// Captures each graph chain in a CUDA graph and instantiates it.
fn capture_graphs(
    b: &Bench,
    step: &CudaFunction,
    s: &Shape,
    graphs: &[Chain],
) -> R<Vec<sys::CUgraphExec>> {
    let mut execs = Vec::new();
    for g in graphs {
        let mut graph = std::ptr::null_mut();
        // SAFETY: our stream; the graph handle is written by EndCapture.
        ck("cuStreamBeginCapture", unsafe {
            sys::cuStreamBeginCapture_v2(
                b.s(),
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        })?;
        let launched = run_chain(b, step, s, g);
        // SAFETY: ends the capture begun above on our stream; writes one graph.
        let end = ck("cuStreamEndCapture", unsafe {
            sys::cuStreamEndCapture(b.s(), &mut graph)
        });
        launched?;
        end?;
        let mut exec = std::ptr::null_mut();
        // SAFETY: a captured graph.
        let inst = ck("cuGraphInstantiate", unsafe {
            sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0)
        });
        // SAFETY: the executable graph does not need the graph.
        unsafe { sys::cuGraphDestroy(graph) };
        inst?;
        execs.push(exec);
    }
    Ok(execs)
}

/// The repeats' rows, per kernel or step: every plain chain, the ideal
/// without then with a grid barrier, the graphs, the large chains.
fn measure(
    b: &Bench,
    step: &CudaFunction,
    fused: &CudaFunction,
    s: &Shape,
    chains: &mut Chains,
    ideal: &mut Fused,
    execs: &[sys::CUgraphExec],
) -> R<Vec<Vec<f64>>> {
    let k = s.k;
    b.repeat_micro(|_| {
        let mut row = Vec::new();
        for per_p in &mut chains.per_prologue {
            for ch in per_p.iter_mut() {
                row.push(b.time(|| run_chain(b, step, s, ch))? / f64::from(k));
                ch.steps += u64::from(k);
            }
        }
        // the main work only, in one grid: without a barrier (the ideal),
        // then with a grid barrier between steps
        for barrier in [0i32, 1] {
            row.push(time_fused(b, fused, s, ideal, barrier)? / f64::from(k));
            ideal.steps += u64::from(k);
        }
        for (g, exec) in chains.graphs.iter_mut().zip(execs) {
            // SAFETY: an instantiated graph, our stream.
            row.push(
                b.time(|| ck("cuGraphLaunch", unsafe { sys::cuGraphLaunch(*exec, b.s()) }))?
                    / f64::from(k),
            );
            g.steps += u64::from(k);
        }
        for ch in chains.bigs.iter_mut() {
            row.push(b.time(|| run_chain(b, step, s, ch))? / f64::from(k));
            ch.steps += u64::from(k);
        }
        Ok(row)
    })
}

/// Times `k` steps of the main work in one cooperative grid, with a grid
/// barrier between steps when `barrier` is 1.
fn time_fused(b: &Bench, fused: &CudaFunction, s: &Shape, ideal: &Fused, barrier: i32) -> R<f64> {
    let mut p_a = ideal.fa.ptr;
    let mut p_b = ideal.fb.ptr;
    let mut n_i = s.n as i32;
    let mut w = s.work;
    let mut steps = s.k as i32;
    let mut p_bar = ideal.bar.ptr;
    let mut with_barrier = barrier;
    let mut params = [
        &mut p_a as *mut _ as *mut c_void,
        &mut p_b as *mut _ as *mut c_void,
        &mut n_i as *mut _ as *mut c_void,
        &mut w as *mut _ as *mut c_void,
        &mut steps as *mut _ as *mut c_void,
        &mut p_bar as *mut _ as *mut c_void,
        &mut with_barrier as *mut _ as *mut c_void,
    ];
    b.time(|| {
        // SAFETY: the parameters match pdl_fused's and outlive the call.
        ck("cuLaunchCooperativeKernel", unsafe {
            sys::cuLaunchCooperativeKernel(
                fused.cu_function(),
                s.grid,
                1,
                1,
                s.threads,
                1,
                1,
                0,
                b.s(),
                params.as_mut_ptr(),
            )
        })
    })
}

/// After an even number of steps a = steps, b = steps - 1.
fn check(a: &DevBuf, bb: &DevBuf, len: usize, steps: u64, what: &str) -> R<()> {
    let va: Vec<u32> = a.download(len)?;
    let vb: Vec<u32> = bb.download(len)?;
    if let Some(i) = (0..len).find(|&i| u64::from(va[i]) != steps || u64::from(vb[i]) + 1 != steps)
    {
        return Err(format!(
            "{what}: element {i} is ({}, {}), expected ({steps}, {})",
            va[i],
            vb[i],
            steps - 1
        ));
    }
    Ok(())
}

/// Checks every chain's buffers and the ideal's against the steps run.
fn verify(s: &Shape, chains: &Chains, ideal: &Fused) -> R<()> {
    for per_p in &chains.per_prologue {
        for ch in per_p {
            check(
                &ch.a,
                &ch.b,
                s.n,
                ch.steps,
                &format!(
                    "PDL chain (pdl {}, trigger {}, prologue {})",
                    ch.pdl, ch.trigger, ch.prologue
                ),
            )?;
        }
    }
    for (g, what) in chains
        .graphs
        .iter()
        .zip(["graph with PDL", "graph without PDL"])
    {
        check(&g.a, &g.b, s.n, g.steps, what)?;
    }
    for (g, what) in chains
        .bigs
        .iter()
        .zip(["large chain with PDL", "large chain without PDL"])
    {
        check(&g.a, &g.b, s.big_n, g.steps, what)?;
    }
    check(&ideal.fa, &ideal.fb, s.n, ideal.steps, "the fused ideal")
}

/// A figure's parameters, for prologue `p`.
fn base(s: &Shape, p: i64) -> Vec<(&'static str, String)> {
    vec![
        ("kernels", s.k.to_string()),
        ("blocks", s.grid.to_string()),
        ("threads", s.threads.to_string()),
        ("prologue_cycles", p.to_string()),
        ("work_cycles", s.work.to_string()),
    ]
}

/// The plain chains' figures, per prologue and trigger, and the savings
/// against the chain without the attribute and against the ideal.
fn chain_figures(out: &mut Outcome, s: &Shape, rows: &[Vec<f64>]) -> R<()> {
    let ideal_col = 4 * PROLOGUES.len();
    for (pi, &p) in PROLOGUES.iter().enumerate() {
        let c0 = 4 * pi;
        let params = base(s, p);
        out.figures.push(fig(
            &format!("pdl.chain.no-attr.p{p}"),
            &format!("chain without the PDL attribute, prologue {p} cycles (per kernel)"),
            "us",
            true,
            &col(rows, c0),
            &params,
        )?);
        for (ti, (_, t)) in TRIGGERS.iter().enumerate() {
            out.figures.push(fig(
                &format!("pdl.chain.attr-{t}.p{p}"),
                &format!("chain with PDL, trigger {t}, prologue {p} cycles (per kernel)"),
                "us",
                true,
                &col(rows, c0 + 1 + ti),
                &params,
            )?);
            out.figures.push(fig(
                &format!("pdl.saving.attr-{t}.p{p}"),
                &format!("PDL saving per kernel boundary, trigger {t}, prologue {p} cycles"),
                "us",
                false,
                &diff(rows, c0, c0 + 1 + ti, 1.0),
                &params,
            )?);
            // the saving as a fraction of the ideal saving
            let hidden: Vec<f64> = rows
                .iter()
                .map(|r| (r[c0] - r[c0 + 1 + ti]) / (r[c0] - r[ideal_col]))
                .collect();
            out.figures.push(fig(
                &format!("pdl.hidden.attr-{t}.p{p}"),
                &format!(
                    "PDL saving / ideal saving per kernel boundary, trigger {t}, prologue {p} cycles"
                ),
                "fraction",
                false,
                &hidden,
                &params,
            )?);
        }
        out.figures.push(fig(
            &format!("pdl.saving.ideal.p{p}"),
            &format!("ideal saving per kernel boundary (launch and prologue fully hidden), prologue {p} cycles"),
            "us",
            false,
            &diff(rows, c0, ideal_col, 1.0),
            &params,
        )?);
    }
    Ok(())
}

/// The ideal's and the grid barrier's figures, the graphs', the large
/// chains', and their savings.
fn graph_and_large_figures(out: &mut Outcome, s: &Shape, rows: &[Vec<f64>]) -> R<()> {
    let width = 4 * PROLOGUES.len();
    let ideal_col = width;
    out.figures.push(fig(
        "pdl.ideal",
        "ideal: the main work only, all steps in one grid (per step)",
        "us",
        true,
        &col(rows, ideal_col),
        &base(s, 0),
    )?);
    let mut barrier_params = base(s, 0);
    barrier_params.push(("launch", "cooperative, grid barrier between steps".into()));
    out.figures.push(fig(
        "pdl.grid-barrier",
        "the main work in one cooperative grid, a software grid barrier per step (per step)",
        "us",
        true,
        &col(rows, ideal_col + 1),
        &barrier_params,
    )?);
    let gp = base(s, GRAPH_PROLOGUE);
    out.figures.push(fig(
        &format!("pdl.graph.attr-early.p{GRAPH_PROLOGUE}"),
        "chain with PDL (trigger early) captured in a CUDA graph (per kernel)",
        "us",
        true,
        &col(rows, width + 2),
        &gp,
    )?);
    out.figures.push(fig(
        &format!("pdl.graph.no-attr.p{GRAPH_PROLOGUE}"),
        "chain without PDL captured in a CUDA graph (per kernel)",
        "us",
        true,
        &col(rows, width + 3),
        &gp,
    )?);
    out.figures.push(fig(
        &format!("pdl.saving.graph.p{GRAPH_PROLOGUE}"),
        "PDL saving per kernel boundary inside a CUDA graph, trigger early",
        "us",
        false,
        &diff(rows, width + 3, width + 2, 1.0),
        &gp,
    )?);
    let mut bp = base(s, GRAPH_PROLOGUE);
    bp[1] = ("blocks", s.big_grid.to_string());
    bp.push(("dynamic_smem_bytes", s.big_smem.to_string()));
    out.figures.push(fig(
        &format!("pdl.large.attr-early.p{GRAPH_PROLOGUE}"),
        "secondary too large to be co-resident: chain with PDL, trigger early (per kernel)",
        "us",
        true,
        &col(rows, width + 4),
        &bp,
    )?);
    out.figures.push(fig(
        &format!("pdl.large.no-attr.p{GRAPH_PROLOGUE}"),
        "secondary too large to be co-resident: chain without PDL (per kernel)",
        "us",
        true,
        &col(rows, width + 5),
        &bp,
    )?);
    out.figures.push(fig(
        &format!("pdl.saving.large.p{GRAPH_PROLOGUE}"),
        "PDL saving per kernel boundary, secondary too large to be co-resident",
        "us",
        false,
        &diff(rows, width + 5, width + 4, 1.0),
        &bp,
    )?);
    Ok(())
}
