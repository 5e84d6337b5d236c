#include "gridcheck_host.cuh"
#define ATTEMPTS 8192u
// w[0] first error, w[1] launched, w[2] attempts, w[3] release, w[4] ran,
// w[5] device cudaDeviceGetLimit error, w[6] device read-back
__global__ void held(unsigned *w) {
  volatile unsigned *release = w + 3;
  for (unsigned i = 0u; i < 1000000u && *release == 0u; ++i) __nanosleep(1000u);
  atomicAdd(w + 4, 1u);
}
__global__ void fill(unsigned *w) {
  size_t lim = 0;
  w[5] = cudaDeviceGetLimit(&lim, cudaLimitDevRuntimePendingLaunchCount);
  w[6] = (unsigned)lim;
  (void)cudaGetLastError();
  unsigned launched = 0u, attempts = 0u;
  cudaError_t first = cudaSuccess;
  while (attempts < ATTEMPTS) {
    held<<<1, 1>>>(w);
    ++attempts;
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) { first = e; break; }
    ++launched;
  }
  w[0] = first;
  w[1] = launched;
  w[2] = attempts;
  __threadfence();
  *(volatile unsigned *)(w + 3) = 1u;
}
static void out(const char *what, unsigned v, unsigned value) {
  char name[64];
  snprintf(name, sizeof name, "%s_%u", what, v);
  gc_output(name, value);
}
int main() {
  const unsigned values[] = {1u, 31u, 33u, 100u};
  for (unsigned v : values) {
    GC_SETUP(cudaDeviceReset());
    GC_SETUP(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, v));
    size_t host = 0;
    GC_SETUP(cudaDeviceGetLimit(&host, cudaLimitDevRuntimePendingLaunchCount));
    unsigned *w, h[8];
    GC_SETUP(cudaMalloc(&w, sizeof h));
    GC_SETUP(cudaMemset(w, 0, sizeof h));
    fill<<<1, 1>>>(w);
    GC_SETUP(cudaGetLastError());
    GC_SETUP(cudaDeviceSynchronize());
    GC_SETUP(cudaMemcpy(h, w, sizeof h, cudaMemcpyDeviceToHost));
    out("read_back", v, (unsigned)host);
    out("device_read_back", v, h[6]);
    out("launched", v, h[1]);
    out("first_error", v, h[0]);
    out("ran", v, h[4]);
    out("pool_equals_read_back", v, h[1] == (unsigned)host);
    out("device_equals_host", v, h[5] == cudaSuccess && h[6] == (unsigned)host);
    out("read_back_at_least_set", v, host >= v);
    out("failed_never_ran", v, h[4] == h[1]);
  }
  return 0;
}
