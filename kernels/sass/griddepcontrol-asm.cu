// User program: both PDL primitives as PTX (griddepcontrol), as CUTLASS-style
// code writes them: the primary stores then launches its dependents; the
// secondary waits then loads.
extern "C" __global__ void primary(float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = 1.0f + i;  // sass: store
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");  // sass: trigger
}

extern "C" __global__ void secondary(const float *in, float *res) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  asm volatile("griddepcontrol.wait;" ::: "memory");  // sass: wait
  res[i] = in[i] * 0.5f;  // sass: load
}
