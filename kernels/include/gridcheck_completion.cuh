// gridcheck: kernel A and its launch-completion event for the host tests of
// spec/pdl/real-world.yaml (cudaLaunchAttributeLaunchCompletionEvent),
// hand-written.
//
// Kernel A has more blocks than the GPU holds at once (three times the
// blocks of 1024 threads that fit, from the occupancy API), each of which
// counts itself into a_started when it begins and then runs 2 ms (by
// %globaltimer), so that A's blocks begin in waves. A is launched into a
// stream of the lowest priority with the launch-completion event attribute;
// a kernel B is launched into a stream of the highest priority after
// cudaStreamWaitEvent on that event. The runtime API reference says the
// event nominally triggers once all of A's blocks have begun, that B may
// instead wait until A is complete, and that blocks of B may begin before
// all blocks of A have begun, for instance if B has the higher priority.
#pragma once

#include "gridcheck_host.cuh"

#define GC_A_THREADS 1024
// A count the program could not read (a launch or synchronization failed).
#define GC_MISSING_UNKNOWN 0xffffffffu
#define GC_A_RUN_NS 2000000ull

// Words on the device: [0] A's blocks that began, [1] A's blocks that ran
// to their end, then what B's kernels count.
struct gc_completion_words {
  unsigned a_started, a_finished;
  unsigned b_early, b_ran, b_gave_up;
};

static __device__ inline unsigned long long gc_completion_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void __launch_bounds__(GC_A_THREADS) gc_kernel_a(gc_completion_words *w) {
  if (threadIdx.x == 0) {
    atomicAdd(&w->a_started, 1u);
    __threadfence();
  }
  const unsigned long long t0 = gc_completion_now();
  while (gc_completion_now() - t0 < GC_A_RUN_NS) {
  }
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(&w->a_finished, 1u);
}

// The blocks of 1024 threads the GPU holds at once, for kernel `k`.
template <typename K>
static inline unsigned gc_resident_blocks(K k) {
  int sms = 0, per_sm = 0;
  GC_SETUP(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  GC_SETUP(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, GC_A_THREADS, 0));
  return (unsigned)(sms * per_sm);
}

// The two streams, A's of the lowest priority and B's of the highest, and
// the event (timing disabled, as the attribute requires).
struct gc_completion_setup {
  cudaStream_t sa, sb;
  cudaEvent_t ev;
  gc_completion_words *w;
};

static inline gc_completion_setup gc_completion_prepare() {
  gc_completion_setup c;
  int least = 0, greatest = 0;
  GC_SETUP(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  GC_SETUP(cudaStreamCreateWithPriority(&c.sa, cudaStreamNonBlocking, least));
  GC_SETUP(cudaStreamCreateWithPriority(&c.sb, cudaStreamNonBlocking, greatest));
  GC_SETUP(cudaEventCreateWithFlags(&c.ev, cudaEventDisableTiming));
  GC_SETUP(cudaMalloc(&c.w, sizeof(gc_completion_words)));
  return c;
}

// Launches A (`a_blocks` blocks) into sa with the launch-completion event
// attribute on c.ev, then makes sb wait for the event: the first error, or
// cudaSuccess.
static inline cudaError_t gc_launch_a_with_completion_event(gc_completion_setup c,
                                                            unsigned a_blocks) {
  cudaLaunchAttribute a[1];
  a[0].id = cudaLaunchAttributeLaunchCompletionEvent;
  a[0].val.launchCompletionEvent.event = c.ev;
  a[0].val.launchCompletionEvent.flags = 0;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(a_blocks);
  cfg.blockDim = dim3(GC_A_THREADS);
  cfg.stream = c.sa;
  cfg.attrs = a;
  cfg.numAttrs = 1;
  cudaError_t e = cudaLaunchKernelEx(&cfg, gc_kernel_a, c.w);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(c.sb, c.ev, 0);
  return e;
}
