// The programmatic event across streams, outside a graph: the primary
// (GC_PAIR_BLOCKS blocks; each writes its two words 100 us after it
// begins, gc_pdl_primary_late's shape) is launched into stream s1 with
// cudaLaunchAttributeProgrammaticEvent on an event; the secondary is
// launched into s2 after cudaStreamWaitEvent on it, with no attribute of
// its own. Two ways to trigger the event: triggerAtBlockStart = 1 (the
// primary never calls the trigger; one is inserted at each block's start)
// and triggerAtBlockStart = 0 with the primary calling
// cudaTriggerProgrammaticLaunchCompletion() at once. The runtime API
// reference says the dependents "can choose to wait on the dependency using
// the programmatic sync": after its cudaGridDependencySynchronize() the
// secondary must see every primary word. Before its wait, it reads block
// 0's first word: 0 there means it began before the primary's writes (an
// early start, which the event allows and does not promise). RUNS runs each.
#include "gridcheck_pdl_pair.cuh"

#define RUNS 10
#define DELAY_NS 100000ull

// gc_pdl_primary_late without the device trigger (the event's
// triggerAtBlockStart inserts one) or with it.
__global__ void primary(unsigned *buf, int device_trigger) {
  if (device_trigger) cudaTriggerProgrammaticLaunchCompletion();
  if (threadIdx.x == 0) {
    const unsigned long long t0 = gc_globaltimer();
    while (gc_globaltimer() - t0 < DELAY_NS) {
    }
    volatile unsigned *b = buf;
    b[2 * blockIdx.x] = 1;
    b[2 * blockIdx.x + 1] = 1;
  }
}

// w[0] runs in which block 0 began before the primary's first write, w[1]
// stale pairs after the wait.
__global__ void secondary(const unsigned *buf, unsigned *w) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const volatile unsigned *b = buf;
    if (b[0] == 0) atomicAdd(&w[0], 1u);
  }
  cudaGridDependencySynchronize();
  gc_pair_count_stale(buf, &w[1]);
}

static void run(const char *name, int trigger_at_block_start, gc_pair_mem m, unsigned *w) {
  cudaStream_t s1, s2;
  cudaEvent_t ev;
  GC_SETUP(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  GC_SETUP(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  GC_SETUP(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  GC_SETUP(cudaMemset(w, 0, 2 * sizeof(unsigned)));
  GC_SETUP(cudaDeviceSynchronize());
  cudaError_t err = cudaSuccess;
  for (int r = 0; r < RUNS && err == cudaSuccess; r++) {
    GC_SETUP(cudaMemset(m.buf, 0, 2 * GC_PAIR_BLOCKS * sizeof(unsigned)));
    GC_SETUP(cudaDeviceSynchronize());
    cudaLaunchAttribute a[1];
    a[0].id = cudaLaunchAttributeProgrammaticEvent;
    a[0].val.programmaticEvent.event = ev;
    a[0].val.programmaticEvent.flags = 0;
    a[0].val.programmaticEvent.triggerAtBlockStart = trigger_at_block_start;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(GC_PAIR_BLOCKS);
    cfg.blockDim = dim3(GC_PAIR_THREADS);
    cfg.stream = s1;
    cfg.attrs = a;
    cfg.numAttrs = 1;
    err = cudaLaunchKernelEx(&cfg, primary, m.buf, !trigger_at_block_start);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(s2, ev, 0);
    if (err == cudaSuccess) {
      secondary<<<GC_PAIR_BLOCKS, GC_PAIR_THREADS, 0, s2>>>(m.buf, w);
      err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = cudaStreamSynchronize(s2);
    if (err == cudaSuccess) err = cudaStreamSynchronize(s1);
  }
  unsigned h[2] = {~0u, ~0u};
  if (err == cudaSuccess) GC_SETUP(cudaMemcpy(h, w, sizeof h, cudaMemcpyDeviceToHost));
  char key[64];
  snprintf(key, sizeof key, "%s_err", name);
  gc_output(key, err);
  snprintf(key, sizeof key, "%s_early_start_runs", name);
  gc_output(key, h[0]);
  snprintf(key, sizeof key, "%s_stale_after_wait", name);
  gc_output(key, h[1]);
}

int main() {
  gc_pair_mem m = gc_pair_alloc();
  unsigned *w;
  GC_SETUP(cudaMalloc(&w, 2 * sizeof(unsigned)));
  run("block_start", 1, m, w);
  run("device_trigger", 0, m, w);
  return 0;
}
