// gridcheck benchmarks: PMPP chapter 21's recursive quadtree build. The
// classes and build_quadtree_kernel are kernels/include/pmpp_quadtree.cuh,
// which the runtime test pmpp-quadtree-build also runs; here the points, the
// node array and the depth are the host's: quadtree_root sets up the root
// node and launches the build, and a tail-launched grid reports the
// launches, the deepest level and the first launch error.
#include <cuda_runtime.h>
#include <cstddef>

#define THREADS 32

#include "pmpp_quadtree.cuh"

// The host reads the node array back: these offsets are crates/bench's.
static_assert(sizeof(Quadtree_node) == 32, "Quadtree_node layout");
static_assert(sizeof(Points) == 16, "Points layout");

__global__ void quadtree_done(unsigned int *out) {
    out[0] = g_launches;
    out[1] = g_max_depth;
    out[2] = g_err;
}

// nodes: (4^(max_depth+1) - 1) / 3 zeroed slots; points: two Points the
// kernel points at (x0, y0), the input, and (x1, y1), the other buffer.
extern "C" __global__ void quadtree_root(Quadtree_node *nodes, Points *points, float *x0, float *y0,
                                         float *x1, float *y1, int n, int max_depth, int min_points,
                                         unsigned int *out) {
    g_launches = 0;
    g_max_depth = 0;
    g_err = 0;
    points[0].set(x0, y0);
    points[1].set(x1, y1);
    nodes[0] = Quadtree_node();
    nodes[0].set_range(0, n);
    __threadfence();
    Parameters params(max_depth, min_points);
    build_quadtree_kernel<<<1, THREADS, 8 * sizeof(int)>>>(nodes, points, params);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) g_err = (unsigned int)e;
    quadtree_done<<<1, 1, 0, cudaStreamTailLaunch>>>(out);
    e = cudaGetLastError();
    if (e != cudaSuccess) out[2] = (unsigned int)e;
}
