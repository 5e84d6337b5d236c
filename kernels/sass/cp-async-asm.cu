// User program: the wait and an asynchronous copy written as PTX, as
// hand-tuned kernels (and libraries) do: griddepcontrol.wait, then
// cp.async.ca.shared.global of the primary's output.
extern "C" __global__ void secondary(const float *in, float *res) {
  __shared__ float buf[128];
  int t = threadIdx.x;
  unsigned s = (unsigned)__cvta_generic_to_shared(&buf[t]);
  asm volatile("griddepcontrol.wait;" ::: "memory");  // sass: wait
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(s), "l"(&in[blockIdx.x * 128 + t]) : "memory");  // sass: copy
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  res[blockIdx.x * 128 + t] = buf[127 - t];
}
