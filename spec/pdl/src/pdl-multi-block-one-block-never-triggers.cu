#include "gridcheck_host.cuh"
#define BLOCKS 8
__device__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// w[0] started (secondary blocks that began), w[1] block 7 saw a start,
// w[2] secondary blocks that ran to their end
__global__ void primary(unsigned *w, int last_triggers) {
  if (blockIdx.x != BLOCKS - 1 || last_triggers) cudaTriggerProgrammaticLaunchCompletion();
  if (blockIdx.x == BLOCKS - 1 && threadIdx.x == 0) {
    volatile unsigned *v = w;
    const unsigned long long t0 = now();
    while (v[0] == 0u && now() - t0 < 200000000ull) {}
    w[1] = v[0] != 0u;
  }
}
__global__ void secondary(unsigned *w) {
  if (threadIdx.x == 0) atomicAdd(w + 0, 1u);
  cudaGridDependencySynchronize();
  if (threadIdx.x == 0) atomicAdd(w + 2, 1u);
}
static void run(unsigned *w, int last_triggers, cudaStream_t s, unsigned h[3]) {
  GC_SETUP(cudaMemset(w, 0, 3 * sizeof(unsigned)));
  GC_SETUP(cudaDeviceSynchronize());
  primary<<<BLOCKS, 64, 0, s>>>(w, last_triggers);
  cudaLaunchAttribute a[1];
  a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t c = {};
  c.gridDim = dim3(BLOCKS);
  c.blockDim = dim3(64);
  c.stream = s;
  c.attrs = a;
  c.numAttrs = 1;
  GC_SETUP(cudaLaunchKernelEx(&c, secondary, w));
  GC_SETUP(cudaStreamSynchronize(s));
  GC_SETUP(cudaMemcpy(h, w, 3 * sizeof(unsigned), cudaMemcpyDeviceToHost));
}
int main() {
  unsigned *w, h[3];
  cudaStream_t s;
  GC_SETUP(cudaMalloc(&w, 3 * sizeof(unsigned)));
  GC_SETUP(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  run(w, 0, s, h);
  gc_output("untriggered_block_saw_secondary", h[1]);
  gc_output("secondary_blocks_ran", h[2]);
  run(w, 1, s, h);
  gc_output("control_block_saw_secondary", h[1]);
  gc_output("control_secondary_blocks_ran", h[2]);
  return 0;
}
