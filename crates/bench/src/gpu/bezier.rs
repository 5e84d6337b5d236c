//! PMPP chapter 21's Bezier tessellation (`kernels/bench/bezier.cu`),
//! checked against the CPU reference.

use super::buffers::{Args, DevBuf};
use super::{Bench, Outcome, PENDING_LIMIT_PMPP, R, col, fig, rotation};
use crate::reference;

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
        let vert_floats = lines * reference::MAX_TESS_POINTS * 2;
        let set_bytes = lines * 24 + vert_floats * 4 + lines * 4;
        let sets = rotation(set_bytes, b.l2_bytes, 8);
        let mut inputs = Vec::new();
        for s in 0..sets {
            let host = reference::bezier_lines(lines, 12345 + s as u32);
            inputs.push((
                DevBuf::with(&host[..])?,
                DevBuf::new(vert_floats * 4)?,
                DevBuf::new(lines * 4)?,
                host,
            ));
        }
        let mut vertices = 0;
        // 0: a child grid per line into the NULL stream (the chapter's),
        // 1: the same into the fire-and-forget stream, 2: flat
        let names = [
            "dynamic parallelism",
            "dynamic parallelism, fire-and-forget",
            "flat",
        ];
        let rows = b.repeat(|r| {
            let (lines_d, verts, counts, host) = &inputs[r % sets];
            let mut row = Vec::new();
            for variant in 0..3 {
                verts.zero_async(b.s())?;
                counts.zero_async(b.s())?;
                err.zero_async(b.s())?;
                let t = b.time(|| {
                    if variant < 2 {
                        b.launch(
                            &dp,
                            lines.div_ceil(128) as u32,
                            128,
                            0,
                            false,
                            Args::default()
                                .p(lines_d)
                                .i(lines as i32)
                                .p(verts)
                                .p(counts)
                                .p(&err)
                                .i(variant),
                        )
                    } else {
                        b.launch(
                            &flat,
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
                    return Err(format!(
                        "Bezier, {lines} lines: a child launch failed with cudaError {}",
                        e[0]
                    ));
                }
                let c: Vec<i32> = counts.download(lines)?;
                let v: Vec<f32> = verts.download(vert_floats)?;
                vertices = reference::check_bezier(host, &c, &v).map_err(|e| {
                    format!(
                        "Bezier ({}), {lines} lines, input set {}: {e}",
                        names[variant as usize],
                        r % sets
                    )
                })?;
                row.push(t);
            }
            Ok(row)
        })?;
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
            &col(&rows, 0),
            &params,
        )?);
        out.figures.push(fig(
            &format!("pmpp.bezier.dp-fire-and-forget.lines-{lines}"),
            &format!(
                "Bezier tessellation, a child grid per line into the fire-and-forget stream, {lines} lines"
            ),
            "us",
            true,
            &col(&rows, 1),
            &params,
        )?);
        out.figures.push(fig(
            &format!("pmpp.bezier.flat.lines-{lines}"),
            &format!("Bezier tessellation, flat (a block per line), {lines} lines"),
            "us",
            true,
            &col(&rows, 2),
            &params,
        )?);
        for (v, slug) in [(0, "dp"), (1, "dp-fire-and-forget")] {
            let ratio: Vec<f64> = rows.iter().map(|r| r[v] / r[2]).collect();
            out.figures.push(fig(
                &format!("pmpp.bezier.{slug}-over-flat.lines-{lines}"),
                &format!(
                    "Bezier tessellation, time with {} / flat, {lines} lines",
                    names[v]
                ),
                "x",
                true,
                &ratio,
                &params,
            )?);
        }
    }
    Ok(())
}
