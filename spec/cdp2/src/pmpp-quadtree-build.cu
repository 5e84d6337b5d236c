// PMPP chapter 21, "Quadtree with dynamic parallelism: recursive kernel",
// reconstructed for CDP2 (support classes from the chapter's appendix listing).
#include <cuda_runtime.h>

#define N_POINTS 256
#define MAX_DEPTH 5
#define MIN_POINTS_PER_NODE 2
#define THREADS 32
#define N_NODES 1365  // (4^(MAX_DEPTH+1) - 1) / 3: every level's slots
#define OUT_MISMATCHES 0
#define OUT_POINTS 1
#define OUT_LEAVES 2
#define OUT_LAUNCHES 3
#define OUT_MAX_DEPTH 4
#define OUT_LAUNCH_ERR 5

#include "pmpp_quadtree.cuh"  // the chapter's classes and build_quadtree_kernel

__device__ float g_x[2][N_POINTS], g_y[2][N_POINTS];
__device__ float g_in_x[N_POINTS], g_in_y[N_POINTS];  // the input, kept for the check
// Raw storage: a __device__ variable of a class with a constructor cannot be declared
__device__ __align__(16) unsigned char g_points_raw[2 * sizeof(Points)];
__device__ __align__(16) unsigned char g_nodes_raw[N_NODES * sizeof(Quadtree_node)];
#define g_points ((Points *)g_points_raw)
#define g_nodes ((Quadtree_node *)g_nodes_raw)

// The sequential reference, run by one thread: a stable partition per node,
// nodes visited from an explicit stack. Leaf k is stored as (slot, begin, end).
#define STACK 64
__device__ float g_rx[N_POINTS], g_ry[N_POINTS], g_tx[N_POINTS], g_ty[N_POINTS];
// The explicit stack, in global memory to keep the checker's stack frame small
__device__ int s_level[STACK], s_id[STACK], s_begin[STACK], s_end[STACK];
__device__ float s_box[STACK][4];

__global__ void check_quadtree(unsigned int *out) {
    unsigned int mismatches = 0, leaves = 0, internal = 0, max_depth = 0;
    for (int i = 0; i < N_POINTS; i++) { g_rx[i] = g_in_x[i]; g_ry[i] = g_in_y[i]; }
    int sp = 0;
    s_level[0] = 0; s_id[0] = 0; s_begin[0] = 0; s_end[0] = N_POINTS;
    s_box[0][0] = 0.0f; s_box[0][1] = 0.0f; s_box[0][2] = 1.0f; s_box[0][3] = 1.0f;
    sp = 1;
    int steps = 0;
    while (sp > 0 && steps < N_NODES) {
        steps++;
        sp--;
        int level = s_level[sp], id = s_id[sp], b = s_begin[sp], e = s_end[sp];
        float minx = s_box[sp][0], miny = s_box[sp][1], maxx = s_box[sp][2], maxy = s_box[sp][3];
        if ((unsigned int)level > max_depth) max_depth = level;
        int base = 0, nodes_at_level = 1;
        for (int l = 0; l < level; l++) { base += nodes_at_level; nodes_at_level *= 4; }
        // The parallel build's node in this node's slot must have the same range
        const Quadtree_node &dp = g_nodes[base + id];
        if (dp.points_begin() != b || dp.points_end() != e) mismatches++;
        if (level >= MAX_DEPTH || e - b <= MIN_POINTS_PER_NODE) {
            leaves++;
            Bounding_box box;
            box.set(minx, miny, maxx, maxy);
            for (int i = b; i < e; i++) {
                // Buffer 0 of the parallel build holds, at every position of
                // this leaf, a point of this leaf's box
                if (!box.contains(make_float2(g_x[0][i], g_y[0][i]))) mismatches++;
                if (!box.contains(make_float2(g_rx[i], g_ry[i]))) mismatches++;
            }
            continue;
        }
        internal++;
        float cx = 0.5f * (minx + maxx), cy = 0.5f * (miny + maxy);
        int begin_q[5];
        int n = b;
        for (int q = 0; q < 4; q++) {
            begin_q[q] = n;
            for (int i = b; i < e; i++) {
                float x = g_rx[i], y = g_ry[i];
                bool in = q == 0 ? (x < cx && y >= cy) : q == 1 ? (x >= cx && y >= cy)
                        : q == 2 ? (x < cx && y < cy) : (x >= cx && y < cy);
                if (in) { g_tx[n] = x; g_ty[n] = y; n++; }
            }
        }
        begin_q[4] = n;
        for (int i = b; i < e; i++) { g_rx[i] = g_tx[i]; g_ry[i] = g_ty[i]; }
        float boxes[4][4] = {{minx, cy, cx, maxy}, {cx, cy, maxx, maxy},
                             {minx, miny, cx, cy}, {cx, miny, maxx, cy}};
        for (int q = 3; q >= 0 && sp < STACK; q--) {
            s_level[sp] = level + 1; s_id[sp] = 4 * id + q;
            s_begin[sp] = begin_q[q]; s_end[sp] = begin_q[q + 1];
            for (int k = 0; k < 4; k++) s_box[sp][k] = boxes[q][k];
            sp++;
        }
    }
    if (sp != 0) mismatches++;  // the walk was cut short
    // Buffer 0 of the parallel build is a permutation of the input
    for (int i = 0; i < N_POINTS; i++) g_tx[i] = 0.0f;  // used flags
    for (int i = 0; i < N_POINTS; i++) {
        bool found = false;
        for (int j = 0; j < N_POINTS && !found; j++) {
            if (g_tx[j] == 0.0f && g_in_x[j] == g_x[0][i] && g_in_y[j] == g_y[0][i]) {
                g_tx[j] = 1.0f;
                found = true;
            }
        }
        if (!found) mismatches++;
    }
    if (g_launches != internal) mismatches++;
    if (g_max_depth != max_depth) mismatches++;
    out[OUT_MISMATCHES] = mismatches;
    out[OUT_POINTS] = g_nodes[0].num_points();
    out[OUT_LEAVES] = leaves;
    out[OUT_LAUNCHES] = g_launches;
    out[OUT_MAX_DEPTH] = g_max_depth;
    out[OUT_LAUNCH_ERR] = g_err;
}

extern "C" __global__ void entry(unsigned int *out) {
    for (int i = 0; i <= OUT_LAUNCH_ERR; i++) out[i] = 0xffffffffu;  // overwritten by the check
    g_launches = 0;
    g_max_depth = 0;
    g_err = 0;
    unsigned int s = 2024u;  // LCG: points in [0, 1)
    for (int i = 0; i < N_POINTS; i++) {
        s = s * 1664525u + 1013904223u;
        float x = (float)(s >> 8) * (1.0f / 16777216.0f);
        s = s * 1664525u + 1013904223u;
        float y = (float)(s >> 8) * (1.0f / 16777216.0f);
        g_in_x[i] = x; g_in_y[i] = y;
        g_x[0][i] = x; g_y[0][i] = y;
        g_x[1][i] = 0.0f; g_y[1][i] = 0.0f;
    }
    g_points[0].set(g_x[0], g_y[0]);
    g_points[1].set(g_x[1], g_y[1]);
    for (int i = 0; i < N_NODES; i++) {
        g_nodes[i].set_id(-1);
        g_nodes[i].set_range(0, 0);
    }
    // The root: the unit box, every point
    g_nodes[0] = Quadtree_node();
    g_nodes[0].set_range(0, N_POINTS);
    Parameters params(MAX_DEPTH, MIN_POINTS_PER_NODE);
    build_quadtree_kernel<<<1, THREADS, 8 * sizeof(int)>>>(g_nodes, g_points, params);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) g_err = (unsigned int)e;
    check_quadtree<<<1, 1, 0, cudaStreamTailLaunch>>>(out);
    e = cudaGetLastError();
    if (e != cudaSuccess) out[OUT_LAUNCH_ERR] = (unsigned int)e;
}
