// User program: a warp-specialised secondary: warp 0 waits for the primary
// and loads its output into shared memory; the other warps do independent
// work (a prologue that needs no primary data) and meet it at a barrier.
extern "C" __global__ void secondary(const float *__restrict__ in, const float *__restrict__ weights,
                                     float *__restrict__ res) {
  __shared__ float tile[32];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float w = 0.0f;
  if (warp == 0) {
    cudaGridDependencySynchronize();  // sass: wait
    tile[lane] = in[blockIdx.x * 32 + lane];  // sass: load
  } else {
    w = weights[threadIdx.x];
  }
  __syncthreads();
  res[blockIdx.x * blockDim.x + threadIdx.x] = w * tile[lane];
}
