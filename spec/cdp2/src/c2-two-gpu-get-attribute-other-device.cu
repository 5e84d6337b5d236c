#include "gridcheck_host.cuh"
#define GC_ATTRS { cudaDevAttrComputeCapabilityMajor, cudaDevAttrComputeCapabilityMinor, \
  cudaDevAttrMultiProcessorCount, cudaDevAttrMaxThreadsPerBlock, cudaDevAttrWarpSize, \
  cudaDevAttrL2CacheSize, cudaDevAttrTotalConstantMemory, cudaDevAttrPciDomainId, \
  cudaDevAttrPciBusId, cudaDevAttrPciDeviceId }
#define N 10
#define PCI 7   // the last three attributes: domain, bus, device
__device__ const cudaDeviceAttr dev_attrs[N] = GC_ATTRS;
static const cudaDeviceAttr host_attrs[N] = GC_ATTRS;
// w[0..N) the other device's values, w[N..2N) their errors, w[2N..3N)
// the running device's values; w[3N] the count seen, w[3N+1] the
// running device, w[3N+2] the error for a device that does not exist.
__global__ void ask(int other, int *w) {
  int me = -1, count = -1, v = 0;
  for (int i = 0; i < N; i++) w[N + i] = cudaDeviceGetAttribute(&w[i], dev_attrs[i], other);
  cudaGetDevice(&me);
  for (int i = 0; i < N; i++) cudaDeviceGetAttribute(&w[2 * N + i], dev_attrs[i], me);
  cudaGetDeviceCount(&count);
  w[3 * N] = count;
  w[3 * N + 1] = me;
  w[3 * N + 2] = cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, count);
}
int main() {
  gc_need_devices(2);
  int host_count = 0;
  GC_SETUP(cudaGetDeviceCount(&host_count));
  unsigned errors = 0, mismatches = 0, names_other = 1, running = 1, count_seen = 0;
  unsigned missing_err = 0;
  for (int d = 0; d < 2; d++) {
    const int other = 1 - d;
    int *w, h[3 * N + 3];
    GC_SETUP(cudaSetDevice(d));
    GC_SETUP(cudaMalloc(&w, sizeof h));
    GC_SETUP(cudaMemset(w, 0xff, sizeof h));
    ask<<<1, 1>>>(other, w);
    GC_SETUP(cudaGetLastError());
    GC_SETUP(cudaDeviceSynchronize());
    GC_SETUP(cudaMemcpy(h, w, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
      int want = 0;
      GC_SETUP(cudaDeviceGetAttribute(&want, host_attrs[i], other));
      if (h[N + i] != (int)cudaSuccess) errors++;
      else if (h[i] != want) mismatches++;
    }
    if (h[PCI] == h[2 * N + PCI] && h[PCI + 1] == h[2 * N + PCI + 1] &&
        h[PCI + 2] == h[2 * N + PCI + 2]) names_other = 0;
    if (h[3 * N + 1] != d) running = 0;
    count_seen = (unsigned)h[3 * N];
    // Device 0's answer, unless device 1's was a success: that is kept.
    if (d == 0 || h[3 * N + 2] == (int)cudaSuccess) missing_err = (unsigned)h[3 * N + 2];
    GC_SETUP(cudaFree(w));
  }
  gc_output("query_errors", errors);
  gc_output("mismatches", mismatches);
  gc_output("answers_name_the_other_device", names_other);
  gc_output("running_device_is_the_hosts", running);
  gc_output("missing_device_err", missing_err);
  gc_output("device_count_seen", count_seen);
  gc_output("host_device_count", (unsigned)host_count);
  return 0;
}
