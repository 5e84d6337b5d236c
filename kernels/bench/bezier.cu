// gridcheck benchmarks: PMPP chapter 21's Bezier tessellation, with a child
// grid per line (dynamic parallelism) and flat (a block per line, the
// chapter's version without dynamic parallelism). The code follows
// spec/cdp2/pmpp.yaml (pmpp-bezier-tessellation) except that the vertex
// arrays are preallocated by the host (line l's at verts + l * 32) instead of
// cudaMalloc'd per line on the device, so that the figure measures launches,
// not the device heap. Built with -fmad=false, so the CPU reference
// (crates/bench) computes the same floats.
#include <cuda_runtime.h>

#define MAX_TESS_POINTS 32

struct BezierLine {
    float2 CP[3];  // Control points for the line
};

__device__ inline float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ inline float2 operator-(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
__device__ inline float2 operator*(float s, float2 a) { return make_float2(s * a.x, s * a.y); }
__device__ inline float length(float2 a) { return sqrtf(a.x * a.x + a.y * a.y); }

__device__ float computeCurvature(const BezierLine *line) {
    return length(line->CP[1] - 0.5f * (line->CP[0] + line->CP[2])) / length(line->CP[2] - line->CP[0]);
}

__device__ int vertexCount(const BezierLine *line) {
    return min(max((int)(computeCurvature(line) * 16.0f), 4), MAX_TESS_POINTS);
}

__device__ float2 vertex(const BezierLine *line, int idx, int nTessPoints) {
    float u = (float)idx / (float)(nTessPoints - 1);
    float omu = 1.0f - u;
    float B3u[3];
    B3u[0] = omu * omu;
    B3u[1] = 2.0f * u * omu;
    B3u[2] = u * u;
    float2 position = {0, 0};
    for (int i = 0; i < 3; i++) position = position + B3u[i] * line->CP[i];
    return position;
}

__global__ void computeBezierLine_child(const BezierLine *bLines, int lidx, float2 *verts, int nTessPoints) {
    int idx = threadIdx.x + blockDim.x * blockIdx.x;
    if (idx < nTessPoints) verts[(size_t)lidx * MAX_TESS_POINTS + idx] = vertex(&bLines[lidx], idx, nTessPoints);
}

// One thread per line: count the vertices, launch a child grid for them,
// into the block's NULL stream as the chapter does (the children of one
// block then run one after the other), or with fire_and_forget into
// cudaStreamFireAndForget (each child independent). err[0]: the first
// launch error.
extern "C" __global__ void bezier_dp(const BezierLine *bLines, int nLines, float2 *verts, int *counts,
                                     unsigned int *err, int fire_and_forget) {
    int lidx = threadIdx.x + blockDim.x * blockIdx.x;
    if (lidx < nLines) {
        int n = vertexCount(&bLines[lidx]);
        counts[lidx] = n;
        if (fire_and_forget)
            computeBezierLine_child<<<(n + 31) / 32, 32, 0, cudaStreamFireAndForget>>>(bLines, lidx, verts, n);
        else
            computeBezierLine_child<<<(n + 31) / 32, 32>>>(bLines, lidx, verts, n);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) atomicCAS(err, 0u, (unsigned int)e);
    }
}

// The chapter's version without dynamic parallelism: a block per line, its
// threads striding over the line's vertices.
extern "C" __global__ void bezier_flat(const BezierLine *bLines, int nLines, float2 *verts, int *counts) {
    int lidx = blockIdx.x;
    if (lidx >= nLines) return;
    int n = vertexCount(&bLines[lidx]);
    if (threadIdx.x == 0) counts[lidx] = n;
    for (int idx = threadIdx.x; idx < n; idx += blockDim.x)
        verts[(size_t)lidx * MAX_TESS_POINTS + idx] = vertex(&bLines[lidx], idx, n);
}
