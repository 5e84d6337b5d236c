#include "gridcheck_host.cuh"
#include <cstring>
#define PAT 0x5au
__device__ __host__ unsigned classify(const unsigned char *b, size_t n, unsigned char v) {
  bool all_v = true, all_p = true, other = false;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = b[i];
    all_v = all_v && c == v;
    all_p = all_p && c == PAT;
    other = other || (c != v && c != PAT);
  }
  return other ? 4u : all_v ? 1u : all_p ? 2u : 3u;
}
__global__ void check(const unsigned char *b, size_t n, unsigned char v, unsigned *slot) {
  *slot = classify(b, n, v);
}
// r[0] memset error, r[1] next kernel's class, r[2] tail's class, r[3] launch errors
__global__ void parent(unsigned char *b, size_t n, unsigned char v, int kind, unsigned *r) {
  cudaStream_t s = 0;
  if (kind == 1) r[3] += cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess;
  if (kind == 2) s = cudaStreamTailLaunch;
  r[0] = cudaMemsetAsync(b, v, n, s);
  check<<<1, 1, 0, s>>>(b, n, v, r + 1);
  r[3] += cudaGetLastError() != cudaSuccess;
  check<<<1, 1, 0, cudaStreamTailLaunch>>>(b, n, v, r + 2);
  r[3] += cudaGetLastError() != cudaSuccess;
  if (kind == 1) cudaStreamDestroy(s);
}
int main() {
  const char *streams[] = {"null", "named", "tail"};
  const unsigned char values[] = {0x01, 0xab};
  const size_t sizes[] = {4, 1024, 65536};
  unsigned char *b, *host = (unsigned char *)malloc(65536);
  unsigned *r, launch_errors = 0;
  GC_SETUP(cudaMalloc(&b, 65536));
  GC_SETUP(cudaMalloc(&r, 4 * sizeof(unsigned)));
  for (int kind = 0; kind < 3; ++kind)
    for (unsigned char v : values)
      for (size_t n : sizes) {
        GC_SETUP(cudaMemset(b, PAT, 65536));
        GC_SETUP(cudaMemset(r, 0, 4 * sizeof(unsigned)));
        GC_SETUP(cudaDeviceSynchronize());
        parent<<<1, 1>>>(b, n, v, kind, r);
        GC_SETUP(cudaGetLastError());
        GC_SETUP(cudaDeviceSynchronize());
        unsigned h[4];
        GC_SETUP(cudaMemcpy(h, r, sizeof h, cudaMemcpyDeviceToHost));
        GC_SETUP(cudaMemcpy(host, b, n, cudaMemcpyDeviceToHost));
        char name[64];
        snprintf(name, sizeof name, "memset_err_%s_%02x_%zu", streams[kind], v, n);
        gc_output(name, h[0]);
        snprintf(name, sizeof name, "seen_%s_%02x_%zu", streams[kind], v, n);
        gc_output(name, h[1] * 100 + h[2] * 10 + classify(host, n, v));
        launch_errors += h[3];
        if (kind == 0) {  // what the bytes are: the first word the host read back
          unsigned first = 0;
          memcpy(&first, host, 4);
          snprintf(name, sizeof name, "first_word_%s_%02x_%zu", streams[kind], v, n);
          gc_output(name, first);
        }
      }
  gc_output("launch_errors", launch_errors);
  // The control: the same buffer, pre-fill and classification after a
  // host-side cudaMemsetAsync. Anything but 1 here is the diagnosis
  // program's own defect, not the device's.
  cudaStream_t hs;
  GC_SETUP(cudaStreamCreateWithFlags(&hs, cudaStreamNonBlocking));
  for (unsigned char v : values)
    for (size_t n : sizes) {
      GC_SETUP(cudaMemset(b, PAT, 65536));
      GC_SETUP(cudaDeviceSynchronize());
      GC_SETUP(cudaMemsetAsync(b, v, n, hs));
      GC_SETUP(cudaStreamSynchronize(hs));
      GC_SETUP(cudaMemcpy(host, b, n, cudaMemcpyDeviceToHost));
      char name[64];
      snprintf(name, sizeof name, "host_control_%02x_%zu", v, n);
      gc_output(name, classify(host, n, v));
    }
  return 0;
}
