// PMPP chapter 21, "A revised example using CUDA dynamic parallelism".
#include <cuda_runtime.h>

#define N_PARENT 64      // parent threads: 2 blocks of 32
#define MAX_LEN 700      // a range holds 1..MAX_LEN elements: 1..3 child blocks of 256
#define N_MORE (N_PARENT * MAX_LEN)
#define OUT_MISMATCHES 0
#define OUT_ELEMENTS 1
#define OUT_CHILDREN 2
#define OUT_LAUNCH_ERR 3

__device__ unsigned int g_start[N_PARENT], g_end[N_PARENT];
__device__ float g_some[N_PARENT], g_more[N_MORE];
__device__ unsigned int g_children, g_err;

__device__ void doSomeWork(float &x) { x = x + 1.0f; }
__device__ void doMoreWork(float &x) { x = 2.0f * x + 1.0f; }

__global__ void kernel_child(unsigned int start, unsigned int end, float *moreData) {
    unsigned int j = start + blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(&g_children, 1u);
    if (j < end) {
        doMoreWork(moreData[j]);
    }
}

__global__ void kernel_parent(unsigned int *start, unsigned int *end,
                              float *someData, float *moreData) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    doSomeWork(someData[i]);
    kernel_child<<<ceil((end[i] - start[i]) / 256.0), 256>>>(start[i], end[i], moreData);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) atomicCAS(&g_err, 0u, (unsigned int)e);
}

__device__ float initial(unsigned int j) { return (float)(j % 1000u); }

// Tail-launched: the listing without dynamic parallelism, run by one thread,
// against what the parent and its children wrote.
__global__ void check(unsigned int *out) {
    unsigned int mismatches = 0, elements = 0;
    for (unsigned int i = 0; i < N_PARENT; i++) {
        float some = (float)i;
        doSomeWork(some);
        if (g_some[i] != some) mismatches++;
        for (unsigned int j = g_start[i]; j < g_end[i]; ++j) {
            float more = initial(j);
            doMoreWork(more);
            if (g_more[j] != more) mismatches++;
            elements++;
        }
    }
    // Elements outside every range keep their value
    for (unsigned int j = g_end[N_PARENT - 1]; j < N_MORE; j++)
        if (g_more[j] != initial(j)) mismatches++;
    out[OUT_MISMATCHES] = mismatches;
    out[OUT_ELEMENTS] = elements;
    out[OUT_CHILDREN] = g_children;
    out[OUT_LAUNCH_ERR] = g_err;
}

extern "C" __global__ void entry(unsigned int *out) {
    for (int i = 0; i <= OUT_LAUNCH_ERR; i++) out[i] = 0xffffffffu;
    g_children = 0;
    g_err = 0;
    unsigned int s = 7u, next = 0;  // LCG: consecutive ranges of 1..MAX_LEN elements
    for (unsigned int i = 0; i < N_PARENT; i++) {
        s = s * 1664525u + 1013904223u;
        unsigned int len = 1u + (s >> 8) % MAX_LEN;
        g_start[i] = next;
        g_end[i] = next + len;
        next += len;
        g_some[i] = (float)i;
    }
    for (unsigned int j = 0; j < N_MORE; j++) g_more[j] = initial(j);
    kernel_parent<<<N_PARENT / 32, 32>>>(g_start, g_end, g_some, g_more);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) g_err = (unsigned int)e;
    check<<<1, 1, 0, cudaStreamTailLaunch>>>(out);
    e = cudaGetLastError();
    if (e != cudaSuccess) out[OUT_LAUNCH_ERR] = (unsigned int)e;
}
