// runtime_main: runs a runtime test's kernel (kernels/generated/<test>.cu,
// included through -DTEST_CU) as the harness does: entry<<<1, 1>>>(out),
// out zeroed, NWORDS words, and prints every word.
#include <cstdio>
#include <cstdlib>
#include TEST_CU
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("SETUP %s: %s\n", #x, cudaGetErrorName(e_)); exit(3); } } while (0)
int main() {
  unsigned *o, h[NWORDS];
  CK(cudaMalloc(&o, sizeof h));
  CK(cudaMemset(o, 0, sizeof h));
  entry<<<1, 1>>>(o);
  cudaError_t le = cudaGetLastError();
  cudaError_t se = cudaDeviceSynchronize();
  printf("RUNTIME launch=%s sync=%s\n", cudaGetErrorName(le), cudaGetErrorName(se));
  CK(cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost));
  for (int i = 0; i < NWORDS; ++i) printf("out[%d] = %u\n", i, h[i]);
  return 0;
}
