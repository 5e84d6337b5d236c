// User program: a primary that triggers right after its last store, with no
// fence between them (the secondary must still wait before reading it).
extern "C" __global__ void primary(const float *__restrict__ a, float *__restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = a[i] * 3.0f;  // sass: store
  }
  cudaTriggerProgrammaticLaunchCompletion();  // sass: trigger
}
