// User program: a PDL secondary that reads the primary's output with a plain
// (non-volatile) load after cudaGridDependencySynchronize().
extern "C" __global__ void primary(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * i;
  cudaTriggerProgrammaticLaunchCompletion();
}

extern "C" __global__ void secondary(const float *in, float *res, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float scale = res[0];  // not the primary's data: may be read early
  cudaGridDependencySynchronize();  // sass: wait
  if (i < n) {
    float v = in[i];  // sass: load
    res[i] = v * scale;
  }
}
