// PMPP chapter 21: a parent thread computes its child grid's size from data.
#include <cuda_runtime.h>

#define N_PARENT 64  // 2 blocks of 32 parent threads
#define OUT_CHILD_THREADS 0
#define OUT_CHILD_GRIDS 1
#define OUT_LAUNCH_ERR 2

__device__ int g_output[2], g_input[1], g_size[N_PARENT];
__device__ unsigned int g_err;

// Not listed in the chapter: every child thread counts itself, and each
// grid's first thread counts the grid.
__global__ void child_kernel(int *output, int *input, int *size) {
    atomicAdd(&output[0], 1);
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(&output[1], 1);
}

__global__ void parent_kernel(int *output, int *input, int *size) {
    // Thread index
    int idx = threadIdx.x + blockDim.x * blockIdx.x;

    // Number of child blocks
    int numBlocks = size[idx] / blockDim.x;

    // Launch child
    child_kernel<<<numBlocks, blockDim.x>>>(output, input, size);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) atomicCAS(&g_err, 0u, (unsigned int)e);
}

__global__ void report(unsigned int *out) {
    out[OUT_CHILD_THREADS] = (unsigned int)g_output[0];
    out[OUT_CHILD_GRIDS] = (unsigned int)g_output[1];
    out[OUT_LAUNCH_ERR] = g_err;
}

extern "C" __global__ void entry(unsigned int *out) {
    for (int i = 0; i <= OUT_LAUNCH_ERR; i++) out[i] = 0xffffffffu;
    g_output[0] = 0;
    g_output[1] = 0;
    g_err = 0;
    // size[idx] = 32 * (1 + idx % 4): 1 to 4 child blocks of 32 threads
    for (int idx = 0; idx < N_PARENT; idx++) g_size[idx] = 32 * (1 + idx % 4);
    parent_kernel<<<N_PARENT / 32, 32>>>(g_output, g_input, g_size);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) g_err = (unsigned int)e;
    report<<<1, 1, 0, cudaStreamTailLaunch>>>(out);
}
