// gridcheck benchmarks: Programmatic Dependent Launch. A chain of dependent
// kernels, each with a prologue independent of its predecessor (a spin of
// `prologue` cycles), cudaGridDependencySynchronize(), then the dependent
// main work (a spin of `work` cycles and out[i] = in[i] + 1), with the
// trigger early (first statement), late (last statement) or absent.
#include <cuda_runtime.h>

#define TRIGGER_EARLY 0
#define TRIGGER_LATE 1
#define TRIGGER_NONE 2

__device__ __forceinline__ void spin(long long cycles) {
    if (cycles <= 0) return;
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

__device__ __forceinline__ void body(const unsigned int *in, unsigned int *out, int n, long long work) {
    spin(work);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = in[i] + 1u;
}

// Dynamic shared memory (when launched with it) only occupies the SM: it
// is how the benchmark makes a secondary too large to be co-resident.
extern "C" __global__ void pdl_step(const unsigned int *in, unsigned int *out, int n,
                                    long long prologue, long long work, int trigger) {
    if (trigger == TRIGGER_EARLY) cudaTriggerProgrammaticLaunchCompletion();
    spin(prologue);
    cudaGridDependencySynchronize();
    body(in, out, n, work);
    if (trigger == TRIGGER_LATE) cudaTriggerProgrammaticLaunchCompletion();
}

// A grid-wide barrier for a cooperative launch: bar[0] counts arrivals,
// bar[1] is the generation.
__device__ void grid_barrier(unsigned int *bar) {
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile unsigned int *gen = bar + 1;
        unsigned int g = *gen;
        __threadfence();
        if (atomicAdd(&bar[0], 1u) == gridDim.x - 1) {
            atomicExch(&bar[0], 0u);
            __threadfence();
            atomicAdd(&bar[1], 1u);
        } else {
            while (*gen == g) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}

// The main work alone, `steps` times in one grid (no launch, no prologue),
// ping-ponging a -> b -> a like the chain. Every thread reads only the
// elements it wrote in the step before, so without `barrier` this is the
// ideal a chain is measured against (launch and prologue fully hidden, the
// dependency free); with `barrier` (a cooperative launch) the steps are
// separated by a software grid barrier, the alternative to a kernel
// boundary when any block may need any block's output.
extern "C" __global__ void pdl_fused(unsigned int *a, unsigned int *b, int n, long long work,
                                     int steps, unsigned int *bar, int barrier) {
    for (int s = 0; s < steps; s++) {
        const unsigned int *in = (s & 1) ? b : a;
        unsigned int *out = (s & 1) ? a : b;
        body(in, out, n, work);
        if (barrier) grid_barrier(bar);
    }
}
