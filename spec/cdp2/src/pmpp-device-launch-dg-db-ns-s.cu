// PMPP chapter 21: kernel_name<<< Dg, Db, Ns, S >>> from the device, S a named stream.
#include <cuda_runtime.h>

#define OUT_CREATE_ERR 0
#define OUT_LAUNCH_ERR 1
#define OUT_DESTROY_ERR 2
#define OUT_GRID_X 3
#define OUT_GRID_Y 4
#define OUT_BLOCK_X 5
#define OUT_BLOCK_Y 6
#define OUT_DYN_SMEM 7
#define OUT_THREADS 8
#define OUT_SMEM_BAD 9

__device__ unsigned int g_grid_x, g_grid_y, g_block_x, g_block_y, g_dyn_smem, g_threads, g_smem_bad;

__global__ void kernel_name(unsigned int words) {
    extern __shared__ unsigned int dyn[];
    unsigned int t = threadIdx.x + blockDim.x * threadIdx.y;
    if (t < words) dyn[t] = 1000u * blockIdx.y + 10u * blockIdx.x + t;
    __syncthreads();
    if (t < words && dyn[t] != 1000u * blockIdx.y + 10u * blockIdx.x + t) atomicAdd(&g_smem_bad, 1u);
    atomicAdd(&g_threads, 1u);
    if (blockIdx.x == 0 && blockIdx.y == 0 && t == 0) {
        unsigned int dyn_size;
        asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn_size));
        g_grid_x = gridDim.x;
        g_grid_y = gridDim.y;
        g_block_x = blockDim.x;
        g_block_y = blockDim.y;
        g_dyn_smem = dyn_size;
    }
}

__global__ void report(unsigned int *out) {
    out[OUT_GRID_X] = g_grid_x;
    out[OUT_GRID_Y] = g_grid_y;
    out[OUT_BLOCK_X] = g_block_x;
    out[OUT_BLOCK_Y] = g_block_y;
    out[OUT_DYN_SMEM] = g_dyn_smem;
    out[OUT_THREADS] = g_threads;
    out[OUT_SMEM_BAD] = g_smem_bad;
}

extern "C" __global__ void entry(unsigned int *out) {
    for (int i = 0; i <= OUT_SMEM_BAD; i++) out[i] = 0xffffffffu;
    g_grid_x = g_grid_y = g_block_x = g_block_y = g_dyn_smem = 0;
    g_threads = 0;
    g_smem_bad = 0;
    cudaStream_t s;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    out[OUT_CREATE_ERR] = (unsigned int)e;
    if (e == cudaSuccess) {
        dim3 Dg(2, 3), Db(4, 2);
        size_t Ns = 8 * sizeof(unsigned int);
        kernel_name<<<Dg, Db, Ns, s>>>(8u);
        out[OUT_LAUNCH_ERR] = (unsigned int)cudaGetLastError();
        out[OUT_DESTROY_ERR] = (unsigned int)cudaStreamDestroy(s);
    }
    report<<<1, 1, 0, cudaStreamTailLaunch>>>(out);
}
