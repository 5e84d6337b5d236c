// gridcheck benchmarks: launch cost. Host launches and device launches into
// the block's NULL stream, a named stream, the fire-and-forget stream and
// the tail launch stream; a tail-launch chain; the pending launch pool.
// Every child counts itself in c[0]; c[1] holds the first launch error.
#include <cuda_runtime.h>

#define KIND_NULL 0
#define KIND_NAMED 1
#define KIND_FIRE_AND_FORGET 2
#define KIND_TAIL 3

__device__ __forceinline__ void note(unsigned int *c, cudaError_t e) {
    if (e != cudaSuccess) atomicCAS(&c[1], 0u, (unsigned int)e);
}

__device__ __forceinline__ unsigned long long globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The unit of work of every launch figure: one thread counts itself.
extern "C" __global__ void child(unsigned int *c) { atomicAdd(&c[0], 1u); }

// Thread 0 of every block launches n children into the stream `kind`.
// <<<1, 1>>>: serial launches from one thread; <<<B, 1>>>: fan-out.
extern "C" __global__ void fan(int kind, int n, unsigned int *c) {
    if (threadIdx.x != 0) return;
    cudaStream_t s = 0;
    if (kind == KIND_NAMED) {
        cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        note(c, e);
        if (e != cudaSuccess) return;
    }
    for (int i = 0; i < n; i++) {
        switch (kind) {
            case KIND_NULL: child<<<1, 1>>>(c); break;
            case KIND_NAMED: child<<<1, 1, 0, s>>>(c); break;
            case KIND_FIRE_AND_FORGET: child<<<1, 1, 0, cudaStreamFireAndForget>>>(c); break;
            default: child<<<1, 1, 0, cudaStreamTailLaunch>>>(c); break;
        }
        note(c, cudaGetLastError());
    }
    if (kind == KIND_NAMED) note(c, cudaStreamDestroy(s));
}

// A chain of tail launches: each link counts itself and tail-launches the
// next, `remaining` more.
extern "C" __global__ void tail_link(int remaining, unsigned int *c) {
    atomicAdd(&c[0], 1u);
    if (remaining > 0) {
        tail_link<<<1, 1, 0, cudaStreamTailLaunch>>>(remaining - 1, c);
        note(c, cudaGetLastError());
    }
}

// Holds its stream until *flag is set (or about a second has passed, so
// that nothing can hang).
__global__ void held(volatile unsigned int *flag, unsigned int *c) {
    long long t0 = clock64();
    while (*flag == 0 && clock64() - t0 < 2000000000LL) {
    }
    atomicAdd(&c[0], 1u);
}

// The pending launch pool filling up: one thread launches a child that
// holds the block's NULL stream, then up to n children behind it, stamping
// %globaltimer before each launch, until a launch fails. out[0]: launches
// that succeeded after the held one; out[1]: the first error; stamps[i]:
// the time before launch i, stamps[launched] the time after the last
// (failed or not) launch.
extern "C" __global__ void pending_fill(int n, unsigned int *flag, unsigned int *c,
                                        unsigned long long *stamps, unsigned int *out) {
    *(volatile unsigned int *)flag = 0;
    __threadfence();
    held<<<1, 1>>>(flag, c);
    note(c, cudaGetLastError());
    int i = 0;
    unsigned int err = 0;
    for (; i < n; i++) {
        stamps[i] = globaltimer();
        child<<<1, 1>>>(c);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) {
            err = (unsigned int)e;
            break;
        }
    }
    stamps[i == n ? n : i + 1] = globaltimer();
    out[0] = (unsigned int)i;
    out[1] = err;
    __threadfence();
    *(volatile unsigned int *)flag = 1;
}
