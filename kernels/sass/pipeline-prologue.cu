// User program: a software-pipelined loop with __pipeline_memcpy_async
// (cp.async): the first stage is issued in the prologue, right after the
// wait, the rest inside the loop.
#include <cuda_pipeline.h>

extern "C" __global__ void secondary(const float *__restrict__ in, float *__restrict__ res, int tiles) {
  __shared__ float stage[2][128];
  int t = threadIdx.x;
  float acc = 0.0f;
  cudaGridDependencySynchronize();  // sass: wait
  __pipeline_memcpy_async(&stage[0][t], &in[t], sizeof(float));  // sass: prologue
  __pipeline_commit();
  for (int k = 1; k <= tiles; ++k) {
    if (k < tiles) {
      __pipeline_memcpy_async(&stage[k & 1][t], &in[k * 128 + t], sizeof(float));  // sass: steady
    }
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    acc += stage[(k - 1) & 1][t];
    __syncthreads();
  }
  res[blockIdx.x * 128 + t] = acc;
}
