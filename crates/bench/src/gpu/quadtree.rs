//! PMPP chapter 21's quadtree build (`kernels/bench/quadtree.cu`), checked
//! against the CPU reference.

use cudarc::driver::sys;

use super::buffers::{Args, DevBuf, ck};
use super::{Bench, Outcome, PENDING_LIMIT_PMPP, R, col, fig, rotation};
use crate::reference;

pub(super) fn quadtree_group(b: &Bench, out: &mut Outcome) -> R<()> {
    b.set_pending_limit(PENDING_LIMIT_PMPP)?;
    let m = b.module("quadtree")?;
    let root = b.func(&m, "quadtree_root")?;
    let sizes: &[usize] = if b.plan.quick {
        &[4096, 65536]
    } else {
        &[4096, 65536, 524288]
    };
    let (max_depth, min_points) = (8u32, 16u32);
    let slots = reference::node_slots(max_depth);
    let nodes = DevBuf::new(slots * reference::NODE_WORDS * 4)?;
    let points = DevBuf::new(32)?;
    let res = DevBuf::new(16)?;
    for &n in sizes {
        let sets = rotation(n * 8, b.l2_bytes, 16);
        let mut inputs = Vec::new();
        for s in 0..sets {
            let (x, y) = reference::quadtree_points(n, 2024 + s as u32);
            inputs.push((DevBuf::with(&x[..])?, DevBuf::with(&y[..])?, x, y));
        }
        let x0 = DevBuf::new(n * 4)?;
        let y0 = DevBuf::new(n * 4)?;
        let x1 = DevBuf::new(n * 4)?;
        let y1 = DevBuf::new(n * 4)?;
        let mut shape = None;
        let rows = b.repeat(|r| {
            let (xd, yd, xh, yh) = &inputs[r % sets];
            // SAFETY: same sizes, our stream.
            ck("cuMemcpyDtoDAsync", unsafe {
                sys::cuMemcpyDtoDAsync_v2(x0.ptr, xd.ptr, n * 4, b.s())
            })?;
            // SAFETY: same sizes, our stream.
            ck("cuMemcpyDtoDAsync", unsafe {
                sys::cuMemcpyDtoDAsync_v2(y0.ptr, yd.ptr, n * 4, b.s())
            })?;
            for buf in [&x1, &y1, &nodes, &res] {
                buf.zero_async(b.s())?;
            }
            let t = b.time(|| {
                b.launch(
                    &root,
                    1,
                    1,
                    0,
                    false,
                    Args::default()
                        .p(&nodes)
                        .p(&points)
                        .p(&x0)
                        .p(&y0)
                        .p(&x1)
                        .p(&y1)
                        .i(n as i32)
                        .i(max_depth as i32)
                        .i(min_points as i32)
                        .p(&res),
                )
            })?;
            let o: Vec<u32> = res.download(3)?;
            let gx: Vec<f32> = x0.download(n)?;
            let gy: Vec<f32> = y0.download(n)?;
            let nd: Vec<u32> = nodes.download(slots * reference::NODE_WORDS)?;
            let what = format!("quadtree, {n} points, input set {}", r % sets);
            if o[2] != 0 {
                return Err(format!("{what}: a launch failed with cudaError {}", o[2]));
            }
            let s = reference::check_quadtree((xh, yh), (&gx, &gy), &nd, max_depth, min_points)
                .map_err(|e| format!("{what}: {e}"))?;
            if (o[0], o[1]) != (s.internal, s.max_depth) {
                return Err(format!(
                    "{what}: {} launches and depth {}, the CPU says {} and {}",
                    o[0], o[1], s.internal, s.max_depth
                ));
            }
            shape = Some(s);
            Ok(vec![t])
        })?;
        let s = shape.ok_or("no repeat ran")?;
        out.figures.push(fig(
            &format!("pmpp.quadtree.dp.points-{n}"),
            &format!("quadtree build, recursive launches, {n} points"),
            "us",
            true,
            &col(&rows, 0),
            &[
                ("points", n.to_string()),
                ("max_depth", max_depth.to_string()),
                ("min_points_per_node", min_points.to_string()),
                ("input_sets", sets.to_string()),
                ("launches_last_set", s.internal.to_string()),
                ("leaves_last_set", s.leaves.to_string()),
                ("depth_reached_last_set", s.max_depth.to_string()),
            ],
        )?);
    }
    Ok(())
}
