// User program: the secondary reads its own (independent) data before the
// wait, to overlap it with the primary's tail, and the primary's after.
extern "C" __global__ void secondary(const float *__restrict__ own, const float *__restrict__ in,
                                     float *__restrict__ res) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float mine = own[i];
  cudaGridDependencySynchronize();  // sass: wait
  float theirs = in[i];  // sass: load
  res[i] = mine + theirs;
}
