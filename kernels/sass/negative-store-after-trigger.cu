// Negative control: the store is WRITTEN after the trigger. The manifest says
// it must come before: the check must see the violation.
extern "C" __global__ void primary(float *__restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  cudaTriggerProgrammaticLaunchCompletion();  // sass: trigger
  out[i] = 7.0f;  // sass: store
}
