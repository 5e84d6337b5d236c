// A host-launched grid whose threads record an event, launch a child grid
// and call cudaTriggerProgrammaticLaunchCompletion(): the campaign of
// 2026-11-26 shrank a hang to `t0: [record e1, launch k1 fire-and-forget,
// trigger]; t1: [trigger, trigger, store z 1]` (no PDL secondary). Each
// mode changes one thing; one process a (mode, blocks), whose launches are
// each waited for at most 2 s: a launch that does not complete ends the
// process with `hung`.
//   mode 0: record (NULL stream), fire-and-forget launch, trigger; thread 1 triggers
//   mode 1: as 0 without the record
//   mode 2: as 0 without any trigger
//   mode 3: as 0 without the launch
//   mode 4: as 0, the trigger first (trigger, record, launch)
//   mode 5: as 0, the child into the block's NULL stream
//   mode 6: as 0, the record into a named stream
//   mode 7: as 0, thread 1 does not trigger
//   mode 8: as 0, thread 0 spins 2^20 cycles between its launch and its trigger
//   mode 9: as 0, thread 1 spins 2^20 cycles before its trigger
//   mode 10: as 0, thread 0 spins 2^20 cycles between its record and its launch
// Usage: rlt MODE BLOCKS LAUNCHES
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void child(int *c) { atomicAdd(c, 1); }

__device__ void spin(long long cycles) {
  long long s = clock64();
  while (clock64() - s < cycles) {}
}

__global__ void parent(int mode, int *c, int *done) {
  if (threadIdx.x == 0) {
    cudaStream_t s = 0;
    if (mode == 6) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaEvent_t e;
    cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    if (mode == 4) cudaTriggerProgrammaticLaunchCompletion();
    if (mode != 1) cudaEventRecord(e, s);
    if (mode == 10) spin(1 << 20);
    if (mode != 3) {
      if (mode == 5) child<<<1, 1>>>(c);
      else child<<<1, 1, 0, cudaStreamFireAndForget>>>(c);
    }
    if (mode == 8) spin(1 << 20);
    if (mode != 2 && mode != 4) cudaTriggerProgrammaticLaunchCompletion();
    cudaEventDestroy(e);
    if (mode == 6) cudaStreamDestroy(s);
  } else if (threadIdx.x == 1) {
    if (mode == 9) spin(1 << 20);
    if (mode != 2 && mode != 7) cudaTriggerProgrammaticLaunchCompletion();
    atomicAdd(done, 1);
  }
}

int main(int argc, char **argv) {
  if (argc != 4) { printf("usage: %s MODE BLOCKS LAUNCHES\n", argv[0]); return 2; }
  int mode = atoi(argv[1]), blocks = atoi(argv[2]), launches = atoi(argv[3]);
  int *c, *done;
  cudaMalloc(&c, sizeof(int));
  cudaMalloc(&done, sizeof(int));
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int i = 0; i < launches; i++) {
    cudaMemsetAsync(c, 0, sizeof(int), s);
    cudaMemsetAsync(done, 0, sizeof(int), s);
    parent<<<blocks, 2, 0, s>>>(mode, c, done);
    cudaError_t le = cudaGetLastError();
    if (le != cudaSuccess) { printf("mode=%d blocks=%d launch %d error %s\n", mode, blocks, i, cudaGetErrorName(le)); return 1; }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cudaError_t q;
    while ((q = cudaStreamQuery(s)) == cudaErrorNotReady) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 > 2.0) {
        printf("mode=%d blocks=%d launches=%d hung at launch %d\n", mode, blocks, launches, i);
        fflush(stdout);
        _exit(3);
      }
    }
    if (q != cudaSuccess) { printf("mode=%d blocks=%d launch %d failed %s\n", mode, blocks, i, cudaGetErrorName(q)); return 1; }
  }
  int hc = 0;
  cudaMemcpy(&hc, c, sizeof(int), cudaMemcpyDeviceToHost);
  printf("mode=%d blocks=%d launches=%d completed (children of the last launch: %d)\n", mode, blocks, launches, hc);
  return 0;
}
