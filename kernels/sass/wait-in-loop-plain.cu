// User program: wait-in-loop.cu without `__restrict__`: the same loop, plain
// pointers. nvcc keeps each iteration's load after the first iteration's
// wait here (13.5, sm_90: ACQBULK, then LDG.E), where with
// `const __restrict__` (LDG.E.CONSTANT) it issues the unrolled loads first.
extern "C" __global__ void secondary(const float *in, float *res, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < iters; ++k) {
    if (k == 0) cudaGridDependencySynchronize();  // sass: wait
    acc += in[k * gridDim.x * blockDim.x + i];  // sass: load
  }
  res[i] = acc;
}
