// PMPP chapter 21, "Bezier calculation with dynamic parallelism", reconstructed for CDP2.
#include <cuda_runtime.h>

#define MAX_TESS_POINTS 32
#define N_LINES 128
#define OUT_MISMATCHES 0
#define OUT_VERTICES 1
#define OUT_CHILDREN 2
#define OUT_LAUNCH_ERR 3
#define OUT_FREED 4
#define OUT_FREE_ERR 5

struct BezierLine {
    float2 CP[3];       // Control points for the line
    float2 *vertexPos;  // Vertex position array to tessellate into
    int nVertices;
};

__host__ __device__ inline float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__host__ __device__ inline float2 operator-(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
__host__ __device__ inline float2 operator*(float s, float2 a) { return make_float2(s * a.x, s * a.y); }
__host__ __device__ inline float length(float2 a) { return sqrtf(a.x * a.x + a.y * a.y); }

__device__ BezierLine g_lines[N_LINES];
__device__ unsigned int g_err;       // first failing cudaMalloc / launch, as a cudaError_t
__device__ unsigned int g_children;  // child grids that ran

__device__ void record_error(cudaError_t e) {
    if (e != cudaSuccess) atomicCAS(&g_err, 0u, (unsigned int)e);
}

// Not listed in the chapter: as in the CUDA sample cdpBezierTessellation, the
// distance of the middle control point from the chord's midpoint over the
// chord's length. One out-of-line copy so the parent and the checker agree.
__device__ __noinline__ float computeCurvature(const BezierLine *line) {
    return length(line->CP[1] - 0.5f * (line->CP[0] + line->CP[2])) /
           length(line->CP[2] - line->CP[0]);
}

__global__ void computeBezierLine_child(int lidx, BezierLine *bLines, int nTessPoints) {
    int idx = threadIdx.x + blockDim.x * blockIdx.x;  // Compute idx unique to this vertex
    if (idx == 0) atomicAdd(&g_children, 1u);
    if (idx < nTessPoints) {
        float u = (float)idx / (float)(nTessPoints - 1);  // Compute u from idx
        float omu = 1.0f - u;                             // Pre-compute one minus u
        float B3u[3];                                     // Compute quadratic Bezier coefficients
        B3u[0] = omu * omu;
        B3u[1] = 2.0f * u * omu;
        B3u[2] = u * u;
        float2 position = {0, 0};  // Set position to zero
        for (int i = 0; i < 3; i++) {
            // Add the contribution of the i'th control point to position
            position = position + B3u[i] * bLines[lidx].CP[i];
        }
        // Assign the value of the vertex position to the correct array element
        bLines[lidx].vertexPos[idx] = position;
    }
}

__global__ void computeBezierLines_parent(BezierLine *bLines, int nLines) {
    // Compute a unique index for each Bezier line
    int lidx = threadIdx.x + blockDim.x * blockIdx.x;
    if (lidx < nLines) {
        // Compute the curvature of the line (the chapter passes bLines; this line's is meant)
        float curvature = computeCurvature(&bLines[lidx]);

        // From the curvature, compute the number of tessellation points
        bLines[lidx].nVertices = min(max((int)(curvature * 16.0f), 4), MAX_TESS_POINTS);
        cudaError_t e = cudaMalloc((void **)&bLines[lidx].vertexPos,
                                   bLines[lidx].nVertices * sizeof(float2));
        record_error(e);
        if (e != cudaSuccess) return;

        // Call the child kernel to compute the tessellated points for each line
        computeBezierLine_child<<<(unsigned int)ceil((float)bLines[lidx].nVertices / 32.0f), 32>>>(
            lidx, bLines, bLines[lidx].nVertices);
        record_error(cudaGetLastError());
    }
}

__global__ void freeVertexMem(BezierLine *bLines, int nLines, unsigned int *out) {
    // Compute a unique index for each Bezier line
    int lidx = threadIdx.x + blockDim.x * blockIdx.x;
    if (lidx < nLines) {
        cudaError_t e = cudaFree(bLines[lidx].vertexPos);  // Free the vertex memory for this line
        if (e == cudaSuccess) atomicAdd(&out[OUT_FREED], 1u);
        else atomicCAS(&out[OUT_FREE_ERR], 0u, (unsigned int)e);
    }
}

// The listing without dynamic parallelism, run by one thread: the reference.
__device__ int sequential_vertex_count(const BezierLine *line) {
    float curvature = computeCurvature(line);
    return min(max((int)(curvature * 16.0f), 4), MAX_TESS_POINTS);
}

__device__ float2 sequential_vertex(const BezierLine *line, int idx, int nTessPoints) {
    float u = (float)idx / (float)(nTessPoints - 1);
    float omu = 1.0f - u;
    float B3u[3] = {omu * omu, 2.0f * u * omu, u * u};
    float2 position = {0, 0};
    for (int i = 0; i < 3; i++) position = position + B3u[i] * line->CP[i];
    return position;
}

// Tail-launched by the entry: runs after the parent grid and all its children.
__global__ void check_and_free(unsigned int *out) {
    unsigned int mismatches = 0, vertices = 0;
    for (int l = 0; l < N_LINES; l++) {
        const BezierLine *line = &g_lines[l];
        int n = sequential_vertex_count(line);
        if (line->nVertices != n) mismatches++;
        if (line->nVertices < 4 || line->nVertices > MAX_TESS_POINTS) { mismatches++; continue; }
        vertices += (unsigned int)line->nVertices;
        if (line->vertexPos == 0) { mismatches++; continue; }
        for (int idx = 0; idx < line->nVertices; idx++) {
            float2 want = sequential_vertex(line, idx, line->nVertices);
            float2 got = line->vertexPos[idx];
            if (fabsf(got.x - want.x) > 1e-5f || fabsf(got.y - want.y) > 1e-5f) mismatches++;
        }
    }
    out[OUT_MISMATCHES] = mismatches;
    out[OUT_VERTICES] = vertices;
    out[OUT_CHILDREN] = g_children;
    out[OUT_LAUNCH_ERR] = g_err;
    // The chapter frees with a separate kernel after the parent; here it runs
    // after the check has read every vertex.
    freeVertexMem<<<(N_LINES + 31) / 32, 32>>>(g_lines, N_LINES, out);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) out[OUT_FREE_ERR] = (unsigned int)e;
}

extern "C" __global__ void entry(unsigned int *out) {
    out[OUT_MISMATCHES] = 0xffffffffu;  // overwritten by the checker
    out[OUT_VERTICES] = 0xffffffffu;
    out[OUT_CHILDREN] = 0xffffffffu;
    out[OUT_LAUNCH_ERR] = 0xffffffffu;
    out[OUT_FREED] = 0;
    out[OUT_FREE_ERR] = 0;
    g_err = 0;
    g_children = 0;
    unsigned int s = 12345u;  // LCG: control points in [0, 1)
    for (int l = 0; l < N_LINES; l++) {
        for (int i = 0; i < 3; i++) {
            s = s * 1664525u + 1013904223u;
            float x = (float)(s >> 8) * (1.0f / 16777216.0f);
            s = s * 1664525u + 1013904223u;
            float y = (float)(s >> 8) * (1.0f / 16777216.0f);
            g_lines[l].CP[i] = make_float2(x, y);
        }
        g_lines[l].vertexPos = 0;
        g_lines[l].nVertices = 0;
    }
    computeBezierLines_parent<<<(N_LINES + 31) / 32, 32>>>(g_lines, N_LINES);
    record_error(cudaGetLastError());
    check_and_free<<<1, 1, 0, cudaStreamTailLaunch>>>(out);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) out[OUT_LAUNCH_ERR] = (unsigned int)e;
}
