// Campaign finding 001 (fuzz-2026-8580, lab/campaigns/nvidia-h100-80gb-hbm3-
// 2026-11-26/random-confirmed/findings/001-hang.yaml), the one campaign hang
// that needs neither the harness's random delays nor its stress warps,
// written as a user would (runtime API, <<<>>>), one change a mode. A
// host-launched grid of 3-thread blocks; thread 0 creates the block's
// named stream s1 and event e2 for the block, then
//   t0: [syncthreads, record e2 s1]
//   t2: [trigger, syncthreads, launch k1 s1, waitevent s1 e2]
// Each mode changes one thing; one process a (mode, blocks), its launches
// each waited for at most 2 s: a launch that does not complete ends the
// process with `hung` (the counters say how far the grid got).
//   mode 0: the shape
//   mode 1: no trigger
//   mode 2: no record
//   mode 3: no stream wait
//   mode 4: no launch
//   mode 5: the trigger after the launch (t2: syncthreads, launch, trigger, wait)
//   mode 6: the child, record and wait in the block's NULL stream instead of s1
//   mode 7: the child fire-and-forget (record and wait still on s1)
//   mode 8: only the trigger and the launch (no event at all)
//   mode 9: only the trigger, the record and the launch (no stream wait)
//   mode 10: campaign finding 005's order: t0 triggers and records e2 into
//            s1; t2 makes the NULL stream and s1 wait on e2, then launches
//            into s1 (no barrier between them)
//   mode 11: the calls split the other way: t0 triggers and launches into
//            s1; t2, after the barrier, records e2 into s1 and waits on it
// Usage: tec MODE BLOCKS LAUNCHES
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void child(int *c) { atomicAdd(c, 1); }

__global__ void parent(int mode, int *c, int *ended) {
  __shared__ cudaStream_t s1;
  __shared__ cudaEvent_t e2;
  const bool record = mode != 2 && mode != 8, wait = mode != 3 && mode != 8 && mode != 9;
  if (threadIdx.x == 0) {
    s1 = 0;
    if (mode != 6) cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&e2, cudaEventDisableTiming);
  }
  __syncthreads();
  if (mode == 10) {
    if (threadIdx.x == 0) {
      cudaTriggerProgrammaticLaunchCompletion();
      cudaEventRecord(e2, s1);
    } else if (threadIdx.x == 2) {
      cudaStreamWaitEvent(0, e2, 0);
      cudaStreamWaitEvent(s1, e2, 0);
      child<<<1, 1, 0, s1>>>(c);
    }
  } else if (mode == 11) {
    if (threadIdx.x == 0) {
      cudaTriggerProgrammaticLaunchCompletion();
      child<<<1, 1, 0, s1>>>(c);
    }
    __syncthreads();
    if (threadIdx.x == 2) {
      cudaEventRecord(e2, s1);
      cudaStreamWaitEvent(s1, e2, 0);
    }
  }
  if (mode >= 10) goto end;
  if (threadIdx.x == 2 && mode != 1 && mode != 5) cudaTriggerProgrammaticLaunchCompletion();
  __syncthreads();
  if (threadIdx.x == 0 && record) cudaEventRecord(e2, s1);
  if (threadIdx.x == 2) {
    if (mode != 4) {
      if (mode == 7) child<<<1, 1, 0, cudaStreamFireAndForget>>>(c);
      else child<<<1, 1, 0, s1>>>(c);
    }
    if (mode == 5) cudaTriggerProgrammaticLaunchCompletion();
    if (wait) cudaStreamWaitEvent(s1, e2, 0);
  }
end:
  __syncthreads();
  if (threadIdx.x == 0) {
    cudaEventDestroy(e2);
    if (mode != 6) cudaStreamDestroy(s1);
    atomicAdd(ended, 1);
  }
}

int main(int argc, char **argv) {
  if (argc != 4) { printf("usage: %s MODE BLOCKS LAUNCHES\n", argv[0]); return 2; }
  int mode = atoi(argv[1]), blocks = atoi(argv[2]), launches = atoi(argv[3]);
  int *c, *ended;
  cudaMallocManaged(&c, sizeof(int));
  cudaMallocManaged(&ended, sizeof(int));
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int i = 0; i < launches; i++) {
    *c = 0;
    *ended = 0;
    parent<<<blocks, 3, 0, s>>>(mode, c, ended);
    cudaError_t le = cudaGetLastError();
    if (le != cudaSuccess) { printf("mode=%d blocks=%d launch %d error %s\n", mode, blocks, i, cudaGetErrorName(le)); return 1; }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cudaError_t q;
    while ((q = cudaStreamQuery(s)) == cudaErrorNotReady) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 > 2.0) {
        // Managed memory is readable while the kernel runs (H100, Linux:
        // concurrent managed access).
        printf("mode=%d blocks=%d launches=%d hung at launch %d: blocks ended %d of %d, children ran %d\n",
               mode, blocks, launches, i, *(volatile int *)ended, blocks, *(volatile int *)c);
        fflush(stdout);
        _exit(3);
      }
    }
    if (q != cudaSuccess) { printf("mode=%d blocks=%d launch %d failed %s\n", mode, blocks, i, cudaGetErrorName(q)); return 1; }
  }
  printf("mode=%d blocks=%d launches=%d completed (blocks ended %d, children %d in the last launch)\n",
         mode, blocks, launches, *ended, *c);
  return 0;
}
