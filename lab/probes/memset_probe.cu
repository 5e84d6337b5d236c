// memset_probe: what a device-side cudaMemsetAsync leaves in memory, against
// a host-side cudaMemsetAsync of the same buffer, classified by the same code
// as c2-memset-async-diagnosis (1 all the value, 2 all the pre-fill 0x5a,
// 3 a mix of the two, 4 other bytes), with the bytes themselves: the
// distinct byte values in [0, n) with their counts, the first 16 bytes, and
// the 16 bytes after n (an overrun would change them).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#define PAT 0x5au
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("SETUP %s: %s\n", #x, cudaGetErrorName(e_)); exit(3); } } while (0)
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
// kind 0: NULL stream, 1: named stream; how 0: cudaMemsetAsync(b, value, n),
// 1: cudaMemset2DAsync(b, n, value, n, 1), 2: value passed as an int with all four bytes set
__global__ void parent(unsigned char *b, size_t n, int value, int kind, int how, unsigned *r) {
  cudaStream_t s = 0;
  if (kind == 1) r[1] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (how == 1) r[0] = cudaMemset2DAsync(b, n, value, n, 1, s);
  else r[0] = cudaMemsetAsync(b, value, n, s);
  r[2] = cudaGetLastError();
  if (kind == 1) cudaStreamDestroy(s);
}
static void report(const char *who, const unsigned char *h, size_t n, unsigned char v, unsigned err) {
  unsigned cnt[256] = {0};
  for (size_t i = 0; i < n; ++i) cnt[h[i]]++;
  printf("MEMSET %s value=0x%02x n=%zu err=%u class=%u bytes:", who, v, n, err, classify(h, n, v));
  for (int c = 0; c < 256; ++c) if (cnt[c]) printf(" 0x%02x*%u", c, cnt[c]);
  printf(" first16:");
  for (size_t i = 0; i < 16 && i < n; ++i) printf(" %02x", h[i]);
  printf(" after16:");
  for (size_t i = n; i < n + 16; ++i) printf(" %02x", h[i]);
  printf("\n");
  fflush(stdout);
}
int main() {
  const size_t cap = 65536 + 256;
  unsigned char *b, *h = (unsigned char *)malloc(cap);
  unsigned *r;
  CK(cudaMalloc(&b, cap));
  CK(cudaMalloc(&r, 4 * sizeof(unsigned)));
  cudaStream_t hs;
  CK(cudaStreamCreateWithFlags(&hs, cudaStreamNonBlocking));
  const unsigned char values[] = {0x01, 0xab};
  const size_t sizes[] = {4, 1024, 65536};
  const char *names[] = {"device-null", "device-named", "device-null-2d", "device-null-int", "host-async", "host-async-null"};
  for (int w = 0; w < 6; ++w)
    for (unsigned char v : values)
      for (size_t n : sizes) {
        CK(cudaMemset(b, PAT, cap));
        CK(cudaMemset(r, 0xff, 4 * sizeof(unsigned)));
        CK(cudaDeviceSynchronize());
        unsigned err = 0;
        int value = w == 3 ? (int)(v * 0x01010101u) : (int)v;
        if (w < 4) {
          parent<<<1, 1>>>(b, n, value, w == 1 ? 1 : 0, w == 2 ? 1 : 0, r);
          CK(cudaGetLastError());
          CK(cudaDeviceSynchronize());
          unsigned hr[4];
          CK(cudaMemcpy(hr, r, sizeof hr, cudaMemcpyDeviceToHost));
          err = hr[0];
          if (w == 1 && hr[1] != 0) printf("NOTE stream create err=%u\n", hr[1]);
        } else {
          err = cudaMemsetAsync(b, value, n, w == 4 ? hs : (cudaStream_t)0);
          CK(cudaDeviceSynchronize());
        }
        CK(cudaMemcpy(h, b, n + 16, cudaMemcpyDeviceToHost));
        report(names[w], h, n, v, err);
      }
  return 0;
}
