// out[0] first_error  cudaError_t of the first failed launch (0: none failed)
// out[1] launched     launches that succeeded before it
// out[2] attempts     launches tried
// out[3] release      set by the parent once it stops launching
// out[4] ran          children that ran
// out[5] read_back    cudaDeviceGetLimit(cudaLimitDevRuntimePendingLaunchCount) on the device
// out[6] pool_equals_read_back  launched == read_back

#define ATTEMPTS 4096u

// Children launched into one stream run one after another. The first
// waits until the parent stops launching (or about a second passes, so
// that nothing can hang), so the others cannot start and stay pending.
// The parent never waits for a child: a child that never starts blocks
// nothing.
__global__ void held(unsigned int *out) {
  volatile unsigned int *release = out + 3;
  for (unsigned int i = 0u; i < 1000000u && *release == 0u; ++i) {
    __nanosleep(1000u);
  }
  atomicAdd(out + 4, 1u);
}

extern "C" __global__ void entry(unsigned int *out) {
  size_t limit = 0;
  if (cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount) != cudaSuccess) limit = 0;
  (void)cudaGetLastError();
  unsigned int launched = 0u, attempts = 0u;
  cudaError_t first = cudaSuccess;
  while (attempts < ATTEMPTS) {
    held<<<1, 1>>>(out);  // the block's NULL stream
    ++attempts;
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
      first = err;
      break;
    }
    ++launched;
  }
  out[0] = (unsigned int)first;
  out[1] = launched;
  out[2] = attempts;
  out[5] = (unsigned int)limit;
  out[6] = limit != 0 && launched == limit;
  __threadfence();
  *(volatile unsigned int *)(out + 3) = 1u;
}
