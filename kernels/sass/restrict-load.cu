// User program: the secondary's input is `const float *__restrict__`, which
// tells the compiler nothing writes it during the kernel: the pattern public
// bug reports show hoisted above griddepcontrol.wait.
extern "C" __global__ void secondary(const float *__restrict__ in, float *__restrict__ res, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  cudaGridDependencySynchronize();  // sass: wait
  if (i < n) {
    float v = in[i];  // sass: load
    res[i] = v + 1.0f;
  }
}
