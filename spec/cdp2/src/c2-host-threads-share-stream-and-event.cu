#include "gridcheck_host.cuh"
#include <thread>
__device__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__global__ void slow_set(volatile unsigned *p, unsigned v, unsigned long long ns) {
  const unsigned long long t0 = now();
  while (now() - t0 < ns) {}
  *p = v;
}
__global__ void read(volatile unsigned *p, unsigned *out) { *out = *p; }
int main() {
  unsigned *w, h[2] = {0, 0};
  GC_SETUP(cudaMalloc(&w, 2 * sizeof(unsigned)));
  GC_SETUP(cudaMemset(w, 0, 2 * sizeof(unsigned)));
  cudaStream_t s = nullptr, mine;
  cudaEvent_t e = nullptr;
  unsigned create_err = 0, launch_err = ~0u, record_err = ~0u;
  std::thread a([&] {
    create_err += cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess;
    create_err += cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess;
  });
  a.join();
  std::thread b([&] {
    slow_set<<<1, 1, 0, s>>>(w, 7u, 50000000ull);
    launch_err = cudaGetLastError();
    record_err = cudaEventRecord(e, s);
  });
  b.join();
  GC_SETUP(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
  unsigned wait_err = cudaStreamWaitEvent(mine, e, 0);
  read<<<1, 1, 0, mine>>>(w, w + 1);
  GC_SETUP(cudaGetLastError());
  GC_SETUP(cudaDeviceSynchronize());
  GC_SETUP(cudaMemcpy(h, w, sizeof h, cudaMemcpyDeviceToHost));
  gc_output("create_errors", create_err);
  gc_output("other_thread_launch_err", launch_err);
  gc_output("other_thread_record_err", record_err);
  gc_output("wait_err", wait_err);
  gc_output("reader_saw_write", h[1]);
  return 0;
}
