// User program: the wait inside a loop, taken on the first iteration only
// (the shape of a persistent kernel's main loop): the loads of every
// iteration follow it in program order.
extern "C" __global__ void secondary(const float *__restrict__ in, float *__restrict__ res, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < iters; ++k) {
    if (k == 0) cudaGridDependencySynchronize();  // sass: wait
    acc += in[k * gridDim.x * blockDim.x + i];  // sass: load
  }
  res[i] = acc;
}
