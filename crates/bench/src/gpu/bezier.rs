//! PMPP chapter 21's Bezier tessellation (`kernels/bench/bezier.cu`),
//! checked against the CPU reference.

use super::buffers::{Args, DevBuf};
use cudarc::driver::CudaFunction;

use super::{Bench, Outcome, PENDING_LIMIT_PMPP, R, col, fig, rotation};
use crate::reference;

/// The variants timed: 0, a child grid per line into the NULL stream (the
/// chapter's); 1, the same into the fire-and-forget stream; 2, flat.
const NAMES: [&str; 3] = [
    "dynamic parallelism",
    "dynamic parallelism, fire-and-forget",
    "flat",
];

/// One input set: the lines on the device, the output buffers, the lines on
/// the host for the reference.
struct Input {
    lines_d: DevBuf,
    verts: DevBuf,
    counts: DevBuf,
    host: Vec<f32>,
}

pub(super) fn bezier_group(b: &Bench, out: &mut Outcome) -> R<()> {
    b.set_pending_limit(PENDING_LIMIT_PMPP)?;
    let m = b.module("bezier")?;
    let dp = b.func(&m, "bezier_dp")?;
    let flat = b.func(&m, "bezier_flat")?;
    let sizes: &[usize] = if b.plan.quick {
        &[1024, 16384]
    } else {
        &[1024, 16384, 131072]
    };
    let err = DevBuf::new(4)?;
    for &lines in sizes {
        let inputs = input_sets(b, lines)?;
        let sets = inputs.len();
        let mut vertices = 0;
        let rows = b.repeat(|r| {
            let mut row = Vec::new();
            for variant in 0..3 {
                let (t, v) = run_variant(b, [&dp, &flat], &err, &inputs[r % sets], variant)
                    .map_err(|e| match e {
                        Failure::Launch(e) => e,
                        Failure::Check(e) => format!(
                            "Bezier ({}), {lines} lines, input set {}: {e}",
                            NAMES[variant as usize],
                            r % sets
                        ),
                    })?;
                vertices = v;
                row.push(t);
            }
            Ok(row)
        })?;
        figures(out, lines, sets, vertices, &rows)?;
    }
    Ok(())
}

/// As many input sets of `lines` lines as rotate through the L2.
fn input_sets(b: &Bench, lines: usize) -> R<Vec<Input>> {
    let vert_floats = lines * reference::MAX_TESS_POINTS * 2;
    let set_bytes = lines * 24 + vert_floats * 4 + lines * 4;
    let sets = rotation(set_bytes, b.l2_bytes, 8);
    let mut inputs = Vec::new();
    for s in 0..sets {
        let host = reference::bezier_lines(lines, 12345 + s as u32);
        inputs.push(Input {
            lines_d: DevBuf::with(&host[..])?,
            verts: DevBuf::new(vert_floats * 4)?,
            counts: DevBuf::new(lines * 4)?,
            host,
        });
    }
    Ok(inputs)
}

/// Why a variant's run failed: the GPU, or the reference's check of its
/// output.
enum Failure {
    Launch(String),
    Check(String),
}

impl From<String> for Failure {
    fn from(e: String) -> Failure {
        Failure::Launch(e)
    }
}

/// Runs one variant on one input set, timed, and checks its output against
/// the reference: the time and the vertex count.
fn run_variant(
    b: &Bench,
    [dp, flat]: [&CudaFunction; 2],
    err: &DevBuf,
    input: &Input,
    variant: i32,
) -> Result<(f64, u64), Failure> {
    let lines = input.host.len() / 6;
    let vert_floats = lines * reference::MAX_TESS_POINTS * 2;
    let Input {
        lines_d,
        verts,
        counts,
        host,
    } = input;
    verts.zero_async(b.s())?;
    counts.zero_async(b.s())?;
    err.zero_async(b.s())?;
    let t = b.time(|| {
        if variant < 2 {
            b.launch(
                dp,
                lines.div_ceil(128) as u32,
                128,
                0,
                false,
                Args::default()
                    .p(lines_d)
                    .i(lines as i32)
                    .p(verts)
                    .p(counts)
                    .p(err)
                    .i(variant),
            )
        } else {
            b.launch(
                flat,
                lines as u32,
                32,
                0,
                false,
                Args::default()
                    .p(lines_d)
                    .i(lines as i32)
                    .p(verts)
                    .p(counts),
            )
        }
    })?;
    let e: Vec<u32> = err.download(1)?;
    if e[0] != 0 {
        return Err(Failure::Launch(format!(
            "Bezier, {lines} lines: a child launch failed with cudaError {}",
            e[0]
        )));
    }
    let c: Vec<i32> = counts.download(lines)?;
    let v: Vec<f32> = verts.download(vert_floats)?;
    let vertices = reference::check_bezier(host, &c, &v).map_err(Failure::Check)?;
    Ok((t, vertices))
}

/// The figures of one size: each variant's time and the DP variants' over
/// the flat one.
fn figures(
    out: &mut Outcome,
    lines: usize,
    sets: usize,
    vertices: u64,
    rows: &[Vec<f64>],
) -> R<()> {
    let params = [
        ("lines", lines.to_string()),
        ("input_sets", sets.to_string()),
        ("vertices_last_set", vertices.to_string()),
    ];
    out.figures.push(fig(
        &format!("pmpp.bezier.dp.lines-{lines}"),
        &format!(
            "Bezier tessellation, a child grid per line into the NULL stream (the chapter's), {lines} lines"
        ),
        "us",
        true,
        &col(rows, 0),
        &params,
    )?);
    out.figures.push(fig(
        &format!("pmpp.bezier.dp-fire-and-forget.lines-{lines}"),
        &format!(
            "Bezier tessellation, a child grid per line into the fire-and-forget stream, {lines} lines"
        ),
        "us",
        true,
        &col(rows, 1),
        &params,
    )?);
    out.figures.push(fig(
        &format!("pmpp.bezier.flat.lines-{lines}"),
        &format!("Bezier tessellation, flat (a block per line), {lines} lines"),
        "us",
        true,
        &col(rows, 2),
        &params,
    )?);
    for (v, slug) in [(0, "dp"), (1, "dp-fire-and-forget")] {
        let ratio: Vec<f64> = rows.iter().map(|r| r[v] / r[2]).collect();
        out.figures.push(fig(
            &format!("pmpp.bezier.{slug}-over-flat.lines-{lines}"),
            &format!(
                "Bezier tessellation, time with {} / flat, {lines} lines",
                NAMES[v]
            ),
            "x",
            true,
            &ratio,
            &params,
        )?);
    }
    Ok(())
}
