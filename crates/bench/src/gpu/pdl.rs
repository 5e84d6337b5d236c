//! The Programmatic Dependent Launch figures (`kernels/bench/pdl.cu`): a
//! chain of dependent kernels with and without the attribute, the trigger
//! early, late or absent, in a CUDA graph, against the ideal, and with a
//! secondary too large to be co-resident.

use std::ffi::c_void;

use cudarc::driver::sys;

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

pub(super) fn pdl_group(b: &Bench, out: &mut Outcome) -> R<()> {
    let m = b.module("pdl")?;
    let step = b.func(&m, "pdl_step")?;
    let fused = b.func(&m, "pdl_fused")?;
    let k: u32 = if b.plan.quick { 16 } else { 32 };
    let work: i64 = 2000;
    let threads = 128u32;
    let grid = b.sms;
    let n = (grid * threads) as usize;
    let big_grid = 4 * b.sms;
    let big_n = (big_grid * threads) as usize;
    let big_smem: u32 = 160 * 1024;
    // SAFETY: a valid function and attribute.
    ck("cuFuncSetAttribute(max dynamic shared memory)", unsafe {
        sys::cuFuncSetAttribute(
            step.cu_function(),
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            big_smem as i32,
        )
    })?;
    let prologues: &[i64] = &[0, 4000, 16000];
    let mk = |pdl, trigger, prologue, big| -> R<Chain> {
        let len = if big { big_n } else { n } * 4;
        Ok(Chain {
            pdl,
            trigger,
            prologue,
            big,
            a: DevBuf::new(len)?,
            b: DevBuf::new(len)?,
            steps: 0,
        })
    };
    // chains[p][0] without the attribute, [1..4] with it, per trigger
    let mut chains: Vec<Vec<Chain>> = Vec::new();
    for &p in prologues {
        let mut v = vec![mk(false, 2, p, false)?];
        for (t, _) in TRIGGERS {
            v.push(mk(true, t, p, false)?);
        }
        chains.push(v);
    }
    let graph_prologue = 4000;
    let mut graphs = [
        mk(true, 0, graph_prologue, false)?,
        mk(false, 2, graph_prologue, false)?,
    ];
    let mut bigs = [
        mk(true, 0, graph_prologue, true)?,
        mk(false, 2, graph_prologue, true)?,
    ];
    let fa = DevBuf::new(n * 4)?;
    let fb = DevBuf::new(n * 4)?;
    let bar = DevBuf::new(8)?;
    let mut fused_steps = 0u64;

    let run_chain = |ch: &Chain| -> R<()> {
        let (g, len, smem) = if ch.big {
            (big_grid, big_n, big_smem)
        } else {
            (grid, n, 0)
        };
        for i in 0..k {
            let (src, dst) = if i % 2 == 0 {
                (&ch.a, &ch.b)
            } else {
                (&ch.b, &ch.a)
            };
            b.launch(
                &step,
                g,
                threads,
                smem,
                ch.pdl,
                Args::default()
                    .p(src)
                    .p(dst)
                    .i(len as i32)
                    .l(ch.prologue)
                    .l(work)
                    .i(ch.trigger),
            )?;
        }
        Ok(())
    };

    // Capture the graph chains.
    let mut execs = Vec::new();
    for g in &graphs {
        let mut graph = std::ptr::null_mut();
        // SAFETY: our stream; the graph handle is written by EndCapture.
        ck("cuStreamBeginCapture", unsafe {
            sys::cuStreamBeginCapture_v2(
                b.s(),
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        })?;
        let launched = run_chain(g);
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

    let rows = b.repeat_micro(|_| {
        let mut row = Vec::new();
        for per_p in &mut chains {
            for ch in per_p.iter_mut() {
                row.push(b.time(|| run_chain(ch))? / f64::from(k));
                ch.steps += u64::from(k);
            }
        }
        // the main work only, in one grid: without a barrier (the ideal),
        // then with a grid barrier between steps
        for barrier in [0i32, 1] {
            let mut p_a = fa.ptr;
            let mut p_b = fb.ptr;
            let mut n_i = n as i32;
            let mut w = work;
            let mut steps = k as i32;
            let mut p_bar = bar.ptr;
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
            row.push(
                b.time(|| {
                    // SAFETY: the parameters match pdl_fused's and outlive the call.
                    ck("cuLaunchCooperativeKernel", unsafe {
                        sys::cuLaunchCooperativeKernel(
                            fused.cu_function(),
                            grid,
                            1,
                            1,
                            threads,
                            1,
                            1,
                            0,
                            b.s(),
                            params.as_mut_ptr(),
                        )
                    })
                })? / f64::from(k),
            );
            fused_steps += u64::from(k);
        }
        for (g, exec) in graphs.iter_mut().zip(&execs) {
            // SAFETY: an instantiated graph, our stream.
            row.push(
                b.time(|| ck("cuGraphLaunch", unsafe { sys::cuGraphLaunch(*exec, b.s()) }))?
                    / f64::from(k),
            );
            g.steps += u64::from(k);
        }
        for ch in bigs.iter_mut() {
            row.push(b.time(|| run_chain(ch))? / f64::from(k));
            ch.steps += u64::from(k);
        }
        Ok(row)
    })?;
    for exec in execs {
        // SAFETY: instantiated above, destroyed once.
        unsafe { sys::cuGraphExecDestroy(exec) };
    }
    b.sync("the PDL chains")?;

    // Verify: after an even number of steps a = steps, b = steps - 1.
    let check = |a: &DevBuf, bb: &DevBuf, len: usize, steps: u64, what: &str| -> R<()> {
        let va: Vec<u32> = a.download(len)?;
        let vb: Vec<u32> = bb.download(len)?;
        if let Some(i) =
            (0..len).find(|&i| u64::from(va[i]) != steps || u64::from(vb[i]) + 1 != steps)
        {
            return Err(format!(
                "{what}: element {i} is ({}, {}), expected ({steps}, {})",
                va[i],
                vb[i],
                steps - 1
            ));
        }
        Ok(())
    };
    for per_p in &chains {
        for ch in per_p {
            check(
                &ch.a,
                &ch.b,
                n,
                ch.steps,
                &format!(
                    "PDL chain (pdl {}, trigger {}, prologue {})",
                    ch.pdl, ch.trigger, ch.prologue
                ),
            )?;
        }
    }
    for (g, what) in graphs.iter().zip(["graph with PDL", "graph without PDL"]) {
        check(&g.a, &g.b, n, g.steps, what)?;
    }
    for (g, what) in bigs
        .iter()
        .zip(["large chain with PDL", "large chain without PDL"])
    {
        check(&g.a, &g.b, big_n, g.steps, what)?;
    }
    check(&fa, &fb, n, fused_steps, "the fused ideal")?;

    let base = |p: i64| {
        vec![
            ("kernels", k.to_string()),
            ("blocks", grid.to_string()),
            ("threads", threads.to_string()),
            ("prologue_cycles", p.to_string()),
            ("work_cycles", work.to_string()),
        ]
    };
    let width = 4 * prologues.len();
    let ideal_col = width;
    for (pi, &p) in prologues.iter().enumerate() {
        let c0 = 4 * pi;
        let params = base(p);
        out.figures.push(fig(
            &format!("pdl.chain.no-attr.p{p}"),
            &format!("chain without the PDL attribute, prologue {p} cycles (per kernel)"),
            "us",
            true,
            &col(&rows, c0),
            &params,
        )?);
        for (ti, (_, t)) in TRIGGERS.iter().enumerate() {
            out.figures.push(fig(
                &format!("pdl.chain.attr-{t}.p{p}"),
                &format!("chain with PDL, trigger {t}, prologue {p} cycles (per kernel)"),
                "us",
                true,
                &col(&rows, c0 + 1 + ti),
                &params,
            )?);
            out.figures.push(fig(
                &format!("pdl.saving.attr-{t}.p{p}"),
                &format!("PDL saving per kernel boundary, trigger {t}, prologue {p} cycles"),
                "us",
                false,
                &diff(&rows, c0, c0 + 1 + ti, 1.0),
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
            &diff(&rows, c0, ideal_col, 1.0),
            &params,
        )?);
    }
    out.figures.push(fig(
        "pdl.ideal",
        "ideal: the main work only, all steps in one grid (per step)",
        "us",
        true,
        &col(&rows, ideal_col),
        &base(0),
    )?);
    let mut barrier_params = base(0);
    barrier_params.push(("launch", "cooperative, grid barrier between steps".into()));
    out.figures.push(fig(
        "pdl.grid-barrier",
        "the main work in one cooperative grid, a software grid barrier per step (per step)",
        "us",
        true,
        &col(&rows, ideal_col + 1),
        &barrier_params,
    )?);
    let gp = base(graph_prologue);
    out.figures.push(fig(
        &format!("pdl.graph.attr-early.p{graph_prologue}"),
        "chain with PDL (trigger early) captured in a CUDA graph (per kernel)",
        "us",
        true,
        &col(&rows, width + 2),
        &gp,
    )?);
    out.figures.push(fig(
        &format!("pdl.graph.no-attr.p{graph_prologue}"),
        "chain without PDL captured in a CUDA graph (per kernel)",
        "us",
        true,
        &col(&rows, width + 3),
        &gp,
    )?);
    out.figures.push(fig(
        &format!("pdl.saving.graph.p{graph_prologue}"),
        "PDL saving per kernel boundary inside a CUDA graph, trigger early",
        "us",
        false,
        &diff(&rows, width + 3, width + 2, 1.0),
        &gp,
    )?);
    let mut bp = base(graph_prologue);
    bp[1] = ("blocks", big_grid.to_string());
    bp.push(("dynamic_smem_bytes", big_smem.to_string()));
    out.figures.push(fig(
        &format!("pdl.large.attr-early.p{graph_prologue}"),
        "secondary too large to be co-resident: chain with PDL, trigger early (per kernel)",
        "us",
        true,
        &col(&rows, width + 4),
        &bp,
    )?);
    out.figures.push(fig(
        &format!("pdl.large.no-attr.p{graph_prologue}"),
        "secondary too large to be co-resident: chain without PDL (per kernel)",
        "us",
        true,
        &col(&rows, width + 5),
        &bp,
    )?);
    out.figures.push(fig(
        &format!("pdl.saving.large.p{graph_prologue}"),
        "PDL saving per kernel boundary, secondary too large to be co-resident",
        "us",
        false,
        &diff(&rows, width + 5, width + 4, 1.0),
        &bp,
    )?);
    Ok(())
}
