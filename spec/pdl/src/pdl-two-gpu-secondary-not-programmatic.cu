#include "gridcheck_host.cuh"
__device__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// f[0] the secondary started, f[1] the primary saw it, f[2] the
// primary's write, f[3] the secondary read it stale after its wait,
// f[4] the secondary ran to its end
__global__ void primary(volatile unsigned *f) {
  cudaTriggerProgrammaticLaunchCompletion();
  if (threadIdx.x == 0) {
    const unsigned long long t0 = now();
    while (f[0] == 0u && now() - t0 < 200000000ull) {}
    f[1] = f[0] != 0u;
    f[2] = 1u;
  }
}
__global__ void secondary(volatile unsigned *f) {
  if (threadIdx.x == 0) f[0] = 1u;
  cudaGridDependencySynchronize();
  if (threadIdx.x == 0) {
    f[3] = f[2] == 0u;
    f[4] = 1u;
  }
}
static cudaError_t launch_secondary(cudaStream_t s, unsigned *f) {
  cudaLaunchAttribute a[1];
  a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t c = {};
  c.gridDim = dim3(1);
  c.blockDim = dim3(64);
  c.stream = s;
  c.attrs = a;
  c.numAttrs = 1;
  return cudaLaunchKernelEx(&c, secondary, f);
}
int main() {
  gc_need_devices(2);
  unsigned *f;
  GC_SETUP(cudaSetDevice(0));
  GC_SETUP(cudaHostAlloc(&f, 5 * sizeof(unsigned), cudaHostAllocMapped | cudaHostAllocPortable));
  cudaStream_t s0, s1;
  cudaEvent_t done;
  GC_SETUP(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  GC_SETUP(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  GC_SETUP(cudaSetDevice(1));
  GC_SETUP(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  // Across devices: the secondary on device 1, behind the event.
  for (int i = 0; i < 5; i++) f[i] = 0u;
  GC_SETUP(cudaSetDevice(0));
  primary<<<1, 64, 0, s0>>>(f);
  GC_SETUP(cudaGetLastError());
  GC_SETUP(cudaEventRecord(done, s0));
  GC_SETUP(cudaSetDevice(1));
  GC_SETUP(cudaStreamWaitEvent(s1, done, 0));
  const cudaError_t cross_err = launch_secondary(s1, f);
  GC_SETUP(cudaStreamSynchronize(s1));
  GC_SETUP(cudaSetDevice(0));
  GC_SETUP(cudaStreamSynchronize(s0));
  gc_output("cross_launch_err", cross_err);
  gc_output("cross_primary_saw_secondary", f[1]);
  gc_output("cross_secondary_stale", f[3]);
  gc_output("cross_secondary_ran", f[4]);
  // The control: one stream of device 0.
  for (int i = 0; i < 5; i++) f[i] = 0u;
  primary<<<1, 64, 0, s0>>>(f);
  GC_SETUP(cudaGetLastError());
  GC_SETUP(launch_secondary(s0, f));
  GC_SETUP(cudaStreamSynchronize(s0));
  gc_output("control_primary_saw_secondary", f[1]);
  gc_output("control_secondary_ran", f[4]);
  return 0;
}
