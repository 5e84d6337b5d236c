// Does a PDL secondary start before its primary ends when the primary
// launches from the device? The primary triggers, then (by mode) launches a
// child grid or not, then polls y for a bounded time; the secondary (launched
// with the programmatic stream serialization attribute) writes y. A primary
// block that sees y == 1 saw the secondary start early.
//   mode 0: the primary kernel has no launch code (the positive control)
//   mode 1: the kernel has launch code that does not run (flag 0)
//   mode 2: the kernel launches a child after its trigger (flag 1)
//   mode 3: the kernel launches a child before its trigger
// Usage: pdl_cdp MODE BLOCKS LAUNCHES. Prints one line of counts.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("error %s at %s:%d\n", cudaGetErrorName(e_), __FILE__, __LINE__); return 1; } } while (0)

__global__ void child(int *x) { x[blockIdx.x] = 1; }

__device__ int poll(volatile int *y, long long cycles) {
  long long s = clock64();
  int v = 0;
  while (clock64() - s < cycles && !(v = *y)) {}
  return v;
}

__global__ void primary_plain(volatile int *y, int *seen, long long cycles) {
  cudaTriggerProgrammaticLaunchCompletion();
  seen[blockIdx.x] = poll(y, cycles);
}

__global__ void primary_launch(volatile int *y, int *seen, int *x, int flag, int before,
                               long long cycles) {
  if (flag && before) child<<<1, 1>>>(x + blockIdx.x);
  cudaTriggerProgrammaticLaunchCompletion();
  if (flag && !before) child<<<1, 1>>>(x + blockIdx.x);
  seen[blockIdx.x] = poll(y, cycles);
}

__global__ void secondary(int *y) { *(volatile int *)y = 1; }

int main(int argc, char **argv) {
  if (argc != 4) { printf("usage: %s MODE BLOCKS LAUNCHES\n", argv[0]); return 2; }
  int mode = atoi(argv[1]), blocks = atoi(argv[2]), launches = atoi(argv[3]);
  long long cycles = 4000000;  // about 2 ms at 1.98 GHz
  int *y, *seen, *x;
  CHECK(cudaMalloc(&y, sizeof(int)));
  CHECK(cudaMalloc(&seen, blocks * sizeof(int)));
  CHECK(cudaMalloc(&x, blocks * sizeof(int)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int launches_early = 0, blocks_early = 0;
  int *h = (int *)malloc(blocks * sizeof(int));
  for (int i = 0; i < launches; i++) {
    CHECK(cudaMemsetAsync(y, 0, sizeof(int), s));
    CHECK(cudaMemsetAsync(seen, 0, blocks * sizeof(int), s));
    if (mode == 0)
      primary_plain<<<blocks, 1, 0, s>>>(y, seen, cycles);
    else
      primary_launch<<<blocks, 1, 0, s>>>(y, seen, x, mode >= 2, mode == 3, cycles);
    CHECK(cudaGetLastError());
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(1);
    cfg.stream = s;
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, secondary, y));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(h, seen, blocks * sizeof(int), cudaMemcpyDeviceToHost));
    int n = 0;
    for (int b = 0; b < blocks; b++) n += h[b] != 0;
    blocks_early += n;
    launches_early += n > 0;
  }
  printf("mode=%d blocks=%d launches=%d launches_with_early_start=%d blocks_that_saw_y=%d\n", mode,
         blocks, launches, launches_early, blocks_early);
  return 0;
}
