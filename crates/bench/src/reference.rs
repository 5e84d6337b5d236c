//! CPU references for the PMPP chapter 21 workloads, and their inputs. The
//! GPU output of every timed Bezier and quadtree run is checked against
//! these; a mismatch fails the figure.

/// The spec's LCG (`s = s * 1664525 + 1013904223`), values in [0, 1).
pub struct Lcg(pub u32);

impl Lcg {
    pub fn next_unit(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (self.0 >> 8) as f32 * (1.0 / 16_777_216.0)
    }
}

pub const MAX_TESS_POINTS: usize = 32;

/// `n` lines of three control points, `[x0, y0, x1, y1, x2, y2]` each (the
/// layout of `struct BezierLine { float2 CP[3]; }`).
pub fn bezier_lines(n: usize, seed: u32) -> Vec<f32> {
    let mut r = Lcg(seed);
    (0..n * 6).map(|_| r.next_unit()).collect()
}

fn len(x: f32, y: f32) -> f32 {
    (x * x + y * y).sqrt()
}

/// `min(max((int)(curvature * 16.0f), 4), 32)`, in the kernel's order of
/// float operations (the kernel is built with -fmad=false).
pub fn vertex_count(cp: &[f32]) -> i32 {
    let mx = 0.5 * (cp[0] + cp[4]);
    let my = 0.5 * (cp[1] + cp[5]);
    let curvature = len(cp[2] - mx, cp[3] - my) / len(cp[4] - cp[0], cp[5] - cp[1]);
    ((curvature * 16.0) as i32).clamp(4, MAX_TESS_POINTS as i32)
}

pub fn vertex(cp: &[f32], idx: i32, n: i32) -> [f32; 2] {
    let u = idx as f32 / (n - 1) as f32;
    let omu = 1.0 - u;
    let b = [omu * omu, 2.0 * u * omu, u * u];
    let mut p = [0.0f32, 0.0];
    for (i, bi) in b.iter().enumerate() {
        p[0] += bi * cp[2 * i];
        p[1] += bi * cp[2 * i + 1];
    }
    p
}

/// Checks a tessellation: every line's count exactly, its vertices within
/// 1e-5 (`verts` holds 32 float2 a line). Returns the number of vertices.
pub fn check_bezier(lines: &[f32], counts: &[i32], verts: &[f32]) -> Result<u64, String> {
    let n = lines.len() / 6;
    if counts.len() != n || verts.len() != n * MAX_TESS_POINTS * 2 {
        return Err(format!(
            "sizes: {n} lines, {} counts, {} vertex floats",
            counts.len(),
            verts.len()
        ));
    }
    let mut total = 0u64;
    for l in 0..n {
        let cp = &lines[l * 6..][..6];
        let want = vertex_count(cp);
        if counts[l] != want {
            return Err(format!(
                "line {l}: {} vertices, the CPU says {want}",
                counts[l]
            ));
        }
        for idx in 0..want {
            let w = vertex(cp, idx, want);
            let at = (l * MAX_TESS_POINTS + idx as usize) * 2;
            let g = [verts[at], verts[at + 1]];
            if (g[0] - w[0]).abs() > 1e-5 || (g[1] - w[1]).abs() > 1e-5 {
                return Err(format!("line {l} vertex {idx}: GPU {g:?}, CPU {w:?}"));
            }
        }
        total += want as u64;
    }
    Ok(total)
}

/// Bytes of one `Quadtree_node` (static_assert in kernels/bench/quadtree.cu):
/// id, padding, the box (min x, min y, max x, max y), begin, end.
pub const NODE_WORDS: usize = 8;

/// Node slots of a tree of depth `max_depth`: (4^(max_depth+1) - 1) / 3.
pub fn node_slots(max_depth: u32) -> usize {
    (4usize.pow(max_depth + 1) - 1) / 3
}

/// `n` points in the unit box.
pub fn quadtree_points(n: usize, seed: u32) -> (Vec<f32>, Vec<f32>) {
    let mut r = Lcg(seed);
    let mut x = Vec::with_capacity(n);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        x.push(r.next_unit());
        y.push(r.next_unit());
    }
    (x, y)
}

/// What the tree must look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeShape {
    /// Internal nodes: each launches one child grid.
    pub internal: u32,
    pub leaves: u32,
    pub max_depth: u32,
}

fn quadrant(q: usize, x: f32, y: f32, cx: f32, cy: f32) -> bool {
    match q {
        0 => x < cx && y >= cy,
        1 => x >= cx && y >= cy,
        2 => x < cx && y < cy,
        _ => x >= cx && y < cy,
    }
}

/// Rebuilds the tree on the CPU (a stable partition per node) and checks
/// the GPU's: every node's slot holds the same range; at every leaf, buffer
/// 0 holds points of the leaf's box; buffer 0 is a permutation of the
/// input. `nodes` is the node array as words (`NODE_WORDS` a node).
pub fn check_quadtree(
    input: (&[f32], &[f32]),
    gpu: (&[f32], &[f32]),
    nodes: &[u32],
    max_depth: u32,
    min_points: u32,
) -> Result<TreeShape, String> {
    let n = input.0.len();
    if input.1.len() != n || gpu.0.len() != n || gpu.1.len() != n {
        return Err("point buffers of different lengths".into());
    }
    if nodes.len() != node_slots(max_depth) * NODE_WORDS {
        return Err(format!("{} node words for depth {max_depth}", nodes.len()));
    }
    let (mut rx, mut ry) = (input.0.to_vec(), input.1.to_vec());
    let (mut tx, mut ty) = (vec![0f32; n], vec![0f32; n]);
    let mut shape = TreeShape {
        internal: 0,
        leaves: 0,
        max_depth: 0,
    };
    // (level, id, begin, end, [min x, min y, max x, max y])
    let mut stack = vec![(0u32, 0usize, 0usize, n, [0f32, 0.0, 1.0, 1.0])];
    while let Some((level, id, b, e, bx)) = stack.pop() {
        shape.max_depth = shape.max_depth.max(level);
        // level l's slots start after those of levels 0..l
        let slot = if level == 0 {
            0
        } else {
            node_slots(level - 1) + id
        };
        let w = &nodes[slot * NODE_WORDS..][..NODE_WORDS];
        if (w[6] as usize, w[7] as usize) != (b, e) {
            return Err(format!(
                "node {id} of level {level} (slot {slot}): GPU range [{}, {}), CPU [{b}, {e})",
                w[6] as i32, w[7] as i32
            ));
        }
        if level >= max_depth || e - b <= min_points as usize {
            shape.leaves += 1;
            for i in b..e {
                let (x, y) = (gpu.0[i], gpu.1[i]);
                if !(x >= bx[0] && x < bx[2] && y >= bx[1] && y < bx[3]) {
                    return Err(format!(
                        "point {i} ({x}, {y}) of buffer 0 is not in the box {bx:?} of leaf {id}, level {level}"
                    ));
                }
            }
            continue;
        }
        shape.internal += 1;
        let cx = 0.5 * (bx[0] + bx[2]);
        let cy = 0.5 * (bx[1] + bx[3]);
        let mut begin = [0usize; 5];
        let mut k = b;
        for (q, bq) in begin.iter_mut().take(4).enumerate() {
            *bq = k;
            for i in b..e {
                if quadrant(q, rx[i], ry[i], cx, cy) {
                    tx[k] = rx[i];
                    ty[k] = ry[i];
                    k += 1;
                }
            }
        }
        begin[4] = k;
        rx[b..e].copy_from_slice(&tx[b..e]);
        ry[b..e].copy_from_slice(&ty[b..e]);
        let boxes = [
            [bx[0], cy, cx, bx[3]],
            [cx, cy, bx[2], bx[3]],
            [bx[0], bx[1], cx, cy],
            [cx, bx[1], bx[2], cy],
        ];
        for q in (0..4).rev() {
            stack.push((level + 1, 4 * id + q, begin[q], begin[q + 1], boxes[q]));
        }
    }
    let key = |x: &[f32], y: &[f32]| {
        let mut v: Vec<(u32, u32)> = x
            .iter()
            .zip(y)
            .map(|(a, b)| (a.to_bits(), b.to_bits()))
            .collect();
        v.sort_unstable();
        v
    };
    if key(input.0, input.1) != key(gpu.0, gpu.1) {
        return Err("buffer 0 is not a permutation of the input points".into());
    }
    Ok(shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bezier_matches_the_spec_test() {
        // pmpp-bezier-tessellation: 128 lines from seed 12345, 2045 vertices.
        let lines = bezier_lines(128, 12345);
        let total: i32 = lines.chunks(6).map(vertex_count).sum();
        assert_eq!(total, 2045);
    }

    #[test]
    fn bezier_check_catches_errors() {
        let lines = bezier_lines(4, 7);
        let counts: Vec<i32> = lines.chunks(6).map(vertex_count).collect();
        let mut verts = vec![0f32; 4 * MAX_TESS_POINTS * 2];
        for (l, cp) in lines.chunks(6).enumerate() {
            for i in 0..counts[l] {
                let v = vertex(cp, i, counts[l]);
                let at = (l * MAX_TESS_POINTS + i as usize) * 2;
                verts[at] = v[0];
                verts[at + 1] = v[1];
            }
        }
        let total = check_bezier(&lines, &counts, &verts).unwrap();
        assert_eq!(total, counts.iter().sum::<i32>() as u64);
        verts[2 * MAX_TESS_POINTS * 2 + 3] += 1e-3;
        assert!(
            check_bezier(&lines, &counts, &verts)
                .unwrap_err()
                .contains("line 2 vertex 1")
        );
        let mut bad = counts.clone();
        bad[0] += 1;
        assert!(
            check_bezier(&lines, &bad, &verts)
                .unwrap_err()
                .contains("line 0")
        );
        // The endpoints of a tessellation are the end control points.
        let cp = [0.0, 0.0, 0.5, 1.0, 1.0, 0.0];
        assert_eq!(vertex(&cp, 0, 5), [0.0, 0.0]);
        assert_eq!(vertex(&cp, 4, 5), [1.0, 0.0]);
    }

    /// A sequential build writing what the GPU would: the node array and
    /// buffer 0.
    fn build(x: &[f32], y: &[f32], depth: u32, min: u32) -> (Vec<u32>, Vec<f32>, Vec<f32>) {
        let mut nodes = vec![0u32; node_slots(depth) * NODE_WORDS];
        let (mut bx_, mut by_) = (x.to_vec(), y.to_vec());
        let mut stack = vec![(0u32, 0usize, 0usize, x.len(), [0f32, 0.0, 1.0, 1.0])];
        while let Some((level, id, b, e, bx)) = stack.pop() {
            let slot = if level == 0 {
                0
            } else {
                node_slots(level - 1) + id
            };
            nodes[slot * NODE_WORDS + 6] = b as u32;
            nodes[slot * NODE_WORDS + 7] = e as u32;
            if level >= depth || e - b <= min as usize {
                // the GPU's order inside a leaf is arbitrary: reverse it
                bx_[b..e].reverse();
                by_[b..e].reverse();
                continue;
            }
            let (cx, cy) = (0.5 * (bx[0] + bx[2]), 0.5 * (bx[1] + bx[3]));
            let mut parts: Vec<Vec<(f32, f32)>> = vec![vec![]; 4];
            for i in b..e {
                let q = (0..4)
                    .find(|&q| quadrant(q, bx_[i], by_[i], cx, cy))
                    .unwrap();
                parts[q].push((bx_[i], by_[i]));
            }
            let mut k = b;
            let boxes = [
                [bx[0], cy, cx, bx[3]],
                [cx, cy, bx[2], bx[3]],
                [bx[0], bx[1], cx, cy],
                [cx, bx[1], bx[2], cy],
            ];
            for (q, p) in parts.iter().enumerate() {
                for &(px, py) in p {
                    bx_[k] = px;
                    by_[k] = py;
                    k += 1;
                }
                stack.push((level + 1, 4 * id + q, k - p.len(), k, boxes[q]));
            }
        }
        (nodes, bx_, by_)
    }

    #[test]
    fn quadtree_matches_the_spec_test() {
        // pmpp-quadtree-build: 256 points from seed 2024, depth 5, min 2:
        // 89 launches, 268 leaves, depth 5 reached.
        let (x, y) = quadtree_points(256, 2024);
        let (nodes, gx, gy) = build(&x, &y, 5, 2);
        let shape = check_quadtree((&x, &y), (&gx, &gy), &nodes, 5, 2).unwrap();
        assert_eq!(
            shape,
            TreeShape {
                internal: 89,
                leaves: 268,
                max_depth: 5
            }
        );
    }

    #[test]
    fn quadtree_check_catches_errors() {
        let (x, y) = quadtree_points(1000, 9);
        let (nodes, gx, gy) = build(&x, &y, 4, 8);
        assert!(check_quadtree((&x, &y), (&gx, &gy), &nodes, 4, 8).is_ok());
        let mut bad = nodes.clone();
        bad[NODE_WORDS + 7] += 1; // level 1, node 0: end
        let e = check_quadtree((&x, &y), (&gx, &gy), &bad, 4, 8).unwrap_err();
        assert!(e.contains("level 1"), "{e}");
        let mut gx2 = gx.clone();
        gx2.swap(0, 999);
        let e = check_quadtree((&x, &y), (&gx2, &gy), &nodes, 4, 8).unwrap_err();
        assert!(e.contains("is not in the box"), "{e}");
        let mut gy2 = gy.clone();
        gy2[5] = gy2[6];
        assert!(check_quadtree((&x, &y), (&gx, &gy2), &nodes, 4, 8).is_err());
    }
}
