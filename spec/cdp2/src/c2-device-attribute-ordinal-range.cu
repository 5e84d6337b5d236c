#include "gridcheck_host.cuh"
// r[2 i] the error, r[2 i + 1] the value, for ordinals 0, n, n + 1, -1
__global__ void dev(int n, unsigned *r) {
  const int ords[4] = {0, n, n + 1, -1};
  for (int i = 0; i < 4; ++i) {
    int v = -7;
    r[2 * i] = cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, ords[i]);
    r[2 * i + 1] = (unsigned)v;
  }
  (void)cudaGetLastError();
}
int main() {
  int n = 0;
  GC_SETUP(cudaGetDeviceCount(&n));
  unsigned *r, d[8];
  GC_SETUP(cudaMalloc(&r, sizeof d));
  GC_SETUP(cudaMemset(r, 0xff, sizeof d));
  dev<<<1, 1>>>(n, r);
  GC_SETUP(cudaGetLastError());
  GC_SETUP(cudaDeviceSynchronize());
  GC_SETUP(cudaMemcpy(d, r, sizeof d, cudaMemcpyDeviceToHost));
  const int ords[4] = {0, n, n + 1, -1};
  unsigned h[4];
  int host0 = -7;
  for (int i = 0; i < 4; ++i) {
    int v = -7;
    h[i] = cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, ords[i]);
    if (i == 0) host0 = v;
  }
  (void)cudaGetLastError();
  gc_output("device_count", (unsigned)n);
  gc_output("device_err_0", d[0]);
  gc_output("device_value_0_same", d[1] == (unsigned)host0);
  gc_output("device_err_count", d[2]);
  gc_output("device_value_count", d[3]);
  gc_output("host_err_count", h[1]);
  gc_output("device_err_count_plus_one", d[4]);
  gc_output("host_err_count_plus_one", h[2]);
  gc_output("device_err_minus_one", d[6]);
  gc_output("host_err_minus_one", h[3]);
  return 0;
}
