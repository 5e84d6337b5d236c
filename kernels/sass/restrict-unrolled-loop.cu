// User program: an unrolled reduction over the primary's output through a
// `const __restrict__` pointer, after the wait; the loop's bounds are known,
// so the compiler is free to schedule its loads early.
extern "C" __global__ void secondary(const float *__restrict__ in, float *__restrict__ res, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  cudaGridDependencySynchronize();  // sass: wait
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    acc += in[k * stride + i];  // sass: load
  }
  res[i] = acc;
}
