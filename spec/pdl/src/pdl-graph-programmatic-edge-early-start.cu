#include "gridcheck_host.cuh"
#define BLOCKS 8
__device__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// w[0] secondary started, w[1] block 0 saw it, w[2] stale pairs after the wait,
// w[3..] each primary block's two words
__global__ void primary(unsigned *w) {
  volatile unsigned *v = w;
  if (threadIdx.x == 0) v[3 + 2 * blockIdx.x] = 1u;
  cudaTriggerProgrammaticLaunchCompletion();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const unsigned long long t0 = now();
    while (v[0] == 0u && now() - t0 < 20000000ull) {}
    v[1] = v[0] != 0u;
  }
  if (threadIdx.x == 0) v[3 + 2 * blockIdx.x + 1] = 1u;
}
__global__ void secondary(unsigned *w) {
  if (threadIdx.x == 0) atomicAdd(w + 0, 1u);
  cudaGridDependencySynchronize();
  const volatile unsigned *v = w;
  if (threadIdx.x == 0)
    for (unsigned b = 0; b < BLOCKS; ++b)
      if (v[3 + 2 * b] != 1u || v[3 + 2 * b + 1] != 1u) atomicAdd(w + 2, 1u);
}
static unsigned runs_that_saw(cudaGraphDependencyType type, unsigned *w, unsigned *stale,
                              unsigned *err) {
  void *args[] = {&w};
  cudaKernelNodeParams pp = {}, sp = {};
  pp.func = (void *)primary;
  pp.gridDim = dim3(BLOCKS);
  pp.blockDim = dim3(64);
  pp.kernelParams = args;
  sp = pp;
  sp.func = (void *)secondary;
  cudaGraph_t g;
  cudaGraphNode_t p, q;
  GC_SETUP(cudaGraphCreate(&g, 0));
  GC_SETUP(cudaGraphAddKernelNode(&p, g, nullptr, 0, &pp));
  GC_SETUP(cudaGraphAddKernelNode(&q, g, nullptr, 0, &sp));
  cudaGraphEdgeData e = {};
  e.type = type;
  e.from_port = type == cudaGraphDependencyTypeProgrammatic ? cudaGraphKernelNodePortProgrammatic
                                                            : cudaGraphKernelNodePortDefault;
  *err = cudaGraphAddDependencies(g, &p, &q, &e, 1);
  if (*err != cudaSuccess) return ~0u;
  cudaGraphExec_t x;
  *err = cudaGraphInstantiate(&x, g, 0);
  if (*err != cudaSuccess) return ~0u;
  cudaStream_t s;
  GC_SETUP(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned saw = 0;
  *stale = 0;
  for (int r = 0; r < 10; ++r) {
    GC_SETUP(cudaMemset(w, 0, (3 + 2 * BLOCKS) * sizeof(unsigned)));
    GC_SETUP(cudaDeviceSynchronize());
    *err = cudaGraphLaunch(x, s);
    if (*err == cudaSuccess) *err = cudaStreamSynchronize(s);
    if (*err != cudaSuccess) return ~0u;
    unsigned h[3];
    GC_SETUP(cudaMemcpy(h, w, sizeof h, cudaMemcpyDeviceToHost));
    saw += h[1];
    *stale += h[2];
  }
  return saw;
}
int main() {
  unsigned *w, stale, err;
  GC_SETUP(cudaMalloc(&w, (3 + 2 * BLOCKS) * sizeof(unsigned)));
  unsigned d = runs_that_saw(cudaGraphDependencyTypeDefault, w, &stale, &err);
  gc_output("default_edge_err", err);
  gc_output("default_edge_runs_with_early_start", d);
  gc_output("default_edge_stale_after_wait", stale);
  unsigned p = runs_that_saw(cudaGraphDependencyTypeProgrammatic, w, &stale, &err);
  gc_output("programmatic_edge_err", err);
  gc_output("programmatic_edge_runs_with_early_start", p);
  gc_output("programmatic_edge_stale_after_wait", stale);
  return 0;
}
