// User program: a primary that writes its tile in a loop, then triggers;
// the stores happen before the trigger in program order.
extern "C" __global__ void primary(float *__restrict__ out, int per_thread) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * per_thread;
  for (int k = 0; k < per_thread; ++k) {
    out[base + k] = (float)(base + k);  // sass: store
  }
  cudaTriggerProgrammaticLaunchCompletion();  // sass: trigger
}
