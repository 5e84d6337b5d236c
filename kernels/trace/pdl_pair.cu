// The launch trace's two-kernel program: `primary` writes buffer p; the
// PDL secondary reads the weights w (never written by any kernel) and p
// before cudaGridDependencySynchronize(). Under the interposer the trace
// pairs the secondary's early load of p with the primary's store through
// p (a finding) and leaves the load of w in the table (not a finding).
// It also counts the stale values it read (on the GPU, information only:
// the check judges the machine code, not one run).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void primary(float *p, int n) {
  cudaTriggerProgrammaticLaunchCompletion();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = 0.0f;
#pragma unroll 1
    for (int k = 0; k < 2000; ++k) x = x * 0.5f + 1.0f;  // delay the store
    p[i] = x;
  }
}

__global__ void secondary(const float *p, const float *w, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float early = p[i];  // read before the wait: may be stale
  float weight = w[i];  // weights no kernel writes: fine before the wait
  out[i] = early * weight;
  cudaGridDependencySynchronize();
  out[n + i] = p[i] * weight;
}

int main() {
  const int n = 1 << 16;
  float *p, *w, *out;
  if (cudaMalloc(&p, n * sizeof(float)) != cudaSuccess || cudaMalloc(&w, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&out, 2 * n * sizeof(float)) != cudaSuccess) {
    std::printf("cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(p, 0, n * sizeof(float));
  float one = 1.0f;
  for (int i = 0; i < n; ++i) cudaMemcpy(w + i, &one, sizeof(float), cudaMemcpyHostToDevice);
  cudaStream_t s;
  cudaStreamCreate(&s);
  primary<<<n / 256, 256, 0, s>>>(p, n);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = n / 256;
  cfg.blockDim = 256;
  cfg.stream = s;
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  cudaError_t e = cudaLaunchKernelEx(&cfg, secondary, (const float *)p, (const float *)w, out, n);
  if (e != cudaSuccess || cudaStreamSynchronize(s) != cudaSuccess) {
    std::printf("launch failed: %s\n", cudaGetErrorString(e));
    return 1;
  }
  float *h = new float[n];
  cudaMemcpy(h, out, n * sizeof(float), cudaMemcpyDeviceToHost);
  int stale = 0;
  for (int i = 0; i < n; ++i) stale += h[i] != 2.0f;
  std::printf("pdl_pair: %d of %d early reads were stale\n", stale, n);
  return 0;
}
