#include "gridcheck_host.cuh"
#define POLL_CYCLES (4ull << 20)  // about 2 ms

struct counters {
  unsigned flag;          // set by each secondary block at its start
  unsigned exited;        // primary blocks done waiting
  unsigned overlap_seen;  // primary blocks that saw the flag while none had exited
  unsigned expired;       // primary blocks whose wait ran out
  unsigned stale;         // primary writes the secondary missed after its wait
};

__global__ void primary(counters *c, unsigned *data) {
  extern __shared__ unsigned smem[];
  smem[threadIdx.x] = blockIdx.x;  // the shared memory is really used
  if (threadIdx.x == 0) data[blockIdx.x] = 1;
  cudaTriggerProgrammaticLaunchCompletion();
  if (threadIdx.x != 0) return;
  volatile counters *v = c;
  bool seen = false;
  const long long start = clock64();
  while (!seen && clock64() - start < POLL_CYCLES) seen = v->flag != 0;
  __threadfence();
  if (seen && v->exited == 0) atomicAdd(&c->overlap_seen, 1u);
  if (!seen) atomicAdd(&c->expired, 1u);
  atomicAdd(&c->exited, 1u);
}

__global__ void secondary(counters *c, const unsigned *data, unsigned n) {
  extern __shared__ unsigned smem[];
  smem[threadIdx.x] = 0;
  if (threadIdx.x == 0) atomicExch(&c->flag, 1u);
  cudaGridDependencySynchronize();
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const volatile unsigned *d = data;
  for (unsigned i = 0; i < n; i++)
    if (d[i] != 1) atomicAdd(&c->stale, 1u);
}

static void run_pair(const char *prefix, int blocks, size_t smem) {
  GC_SETUP(cudaFuncSetAttribute(primary, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  GC_SETUP(cudaFuncSetAttribute(secondary, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  counters *c;
  unsigned *data;
  GC_SETUP(cudaMalloc(&c, sizeof(counters)));
  GC_SETUP(cudaMalloc(&data, blocks * sizeof(unsigned)));
  GC_SETUP(cudaMemset(c, 0, sizeof(counters)));
  GC_SETUP(cudaMemset(data, 0, blocks * sizeof(unsigned)));
  cudaStream_t s;
  GC_SETUP(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  primary<<<blocks, 128, smem, s>>>(c, data);
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(128);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  cudaError_t launch = cudaLaunchKernelEx(&cfg, secondary, c, (const unsigned *)data, (unsigned)blocks);
  cudaError_t sync = cudaStreamSynchronize(s);
  counters h = {~0u, ~0u, ~0u, ~0u, ~0u};
  if (sync == cudaSuccess) GC_SETUP(cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost));
  char name[64];
  snprintf(name, sizeof name, "%s_launch_err", prefix);
  gc_output(name, launch != cudaSuccess ? launch : sync);
  snprintf(name, sizeof name, "%s_overlap_seen", prefix);
  gc_output(name, h.overlap_seen);
  snprintf(name, sizeof name, "%s_waits_not_expired", prefix);
  gc_output(name, blocks - h.expired);
  snprintf(name, sizeof name, "%s_stale", prefix);
  gc_output(name, h.stale);
}

int main() {
  cudaDeviceProp p;
  GC_SETUP(cudaGetDeviceProperties(&p, 0));
  size_t big = p.sharedMemPerMultiprocessor / 2 + 4096;
  if (big > p.sharedMemPerBlockOptin) return 4;  // cannot fill half an SM from one block
  run_pair("big", p.multiProcessorCount, big);
  run_pair("small", p.multiProcessorCount, 128 * sizeof(unsigned));
  return 0;
}
