// Negative control: the load of the primary's data is WRITTEN before the
// wait, and its value stored before the wait too (so the compiler cannot
// sink it below). The manifest says it must stay after: the check must see
// the violation (what a compiler that hoisted it would have made).
extern "C" __global__ void secondary(const float *__restrict__ in, float *__restrict__ res) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];  // sass: load
  res[i] = v;
  cudaGridDependencySynchronize();  // sass: wait
  res[i + blockDim.x * gridDim.x] = 2.0f * v;
}
