#include "gridcheck_host.cuh"
#include <cstring>
#define BYTES 4096
static __host__ __device__ cudaPitchedPtr pitched(void *p, size_t pitch, size_t x, size_t y) {
  cudaPitchedPtr r; r.ptr = p; r.pitch = pitch; r.xsize = x; r.ysize = y; return r;
}
static __host__ __device__ cudaExtent extent(size_t w, size_t h, size_t d) {
  cudaExtent e; e.width = w; e.height = h; e.depth = d; return e;
}
// The same source for both sides: six copies and sets inside one buffer.
static __host__ __device__ unsigned copy_ops(unsigned char *b, cudaStream_t s) {
  unsigned errs = 0;
  errs += cudaMemcpyAsync(b + 256, b, 64, cudaMemcpyDeviceToDevice, s) != cudaSuccess;
  errs += cudaMemcpy2DAsync(b + 512, 32, b + 64, 16, 16, 4, cudaMemcpyDeviceToDevice, s) != cudaSuccess;
  cudaMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = pitched(b + 128, 16, 16, 2);
  p.dstPtr = pitched(b + 768, 32, 16, 2);
  p.extent = extent(16, 2, 2);
  p.kind = cudaMemcpyDeviceToDevice;
  errs += cudaMemcpy3DAsync(&p, s) != cudaSuccess;
  errs += cudaMemsetAsync(b + 1024, 0xab, 64, s) != cudaSuccess;
  errs += cudaMemset2DAsync(b + 1280, 32, 0xcd, 16, 4, s) != cudaSuccess;
  errs += cudaMemset3DAsync(pitched(b + 1536, 32, 16, 4), 0xef, extent(16, 4, 2), s) != cudaSuccess;
  return errs;
}
__global__ void dev(unsigned *r, unsigned char *buf) {
  cudaStream_t s;
  r[1] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  r[0] = copy_ops(buf, s);
  cudaStreamDestroy(s);
}
int main() {
  unsigned *r;
  unsigned char *dbuf, *hbuf;
  GC_SETUP(cudaMalloc(&r, 2 * sizeof(unsigned)));
  GC_SETUP(cudaMemset(r, 0xff, 2 * sizeof(unsigned)));
  GC_SETUP(cudaMalloc(&dbuf, BYTES));
  GC_SETUP(cudaMalloc(&hbuf, BYTES));
  static unsigned char pattern[BYTES], a[BYTES], b[BYTES];
  // A pattern in which every byte an operation writes differs from
  // what it overwrites, and no set's destination already holds 0 or the
  // value: (i * 37 + 11) alone repeats every 256 bytes, so the copy of
  // bytes 0..63 onto 256..319 would change nothing.
  for (int i = 0; i < BYTES; i++) pattern[i] = (unsigned char)(i * 37 + 11 + (i >> 8) * 25);
  GC_SETUP(cudaMemcpy(dbuf, pattern, BYTES, cudaMemcpyHostToDevice));
  GC_SETUP(cudaMemcpy(hbuf, pattern, BYTES, cudaMemcpyHostToDevice));
  dev<<<1, 1>>>(r, dbuf);
  gc_output("launch_err", cudaGetLastError());
  gc_output("sync_err", cudaDeviceSynchronize());
  cudaStream_t hs;
  GC_SETUP(cudaStreamCreateWithFlags(&hs, cudaStreamNonBlocking));
  unsigned host_copy_errs = copy_ops(hbuf, hs);
  GC_SETUP(cudaStreamSynchronize(hs));
  unsigned d[2];
  GC_SETUP(cudaMemcpy(d, r, sizeof d, cudaMemcpyDeviceToHost));
  GC_SETUP(cudaMemcpy(a, dbuf, BYTES, cudaMemcpyDeviceToHost));
  GC_SETUP(cudaMemcpy(b, hbuf, BYTES, cudaMemcpyDeviceToHost));
  gc_output("stream_err", d[1]);
  gc_output("device_copy_errors", d[0]);
  gc_output("host_copy_errors", host_copy_errs);
  // Each operation's destination: the same bytes on both sides, and
  // changed from the pattern; outside them, nothing changed.
  static const struct { const char *name; size_t off, len; } dst[] = {
    {"memcpy", 256, 64}, {"memcpy_2d", 512, 128}, {"memcpy_3d", 768, 128},
    {"memset", 1024, 64}, {"memset_2d", 1280, 128}, {"memset_3d", 1536, 256}};
  char name[64];
  for (const auto &g : dst) {
    snprintf(name, sizeof name, "%s_match_host", g.name);
    gc_output(name, memcmp(a + g.off, b + g.off, g.len) == 0);
    snprintf(name, sizeof name, "%s_changed", g.name);
    gc_output(name, memcmp(a + g.off, pattern + g.off, g.len) != 0);
    unsigned first = 0;  // what the device left: the destination's first word
    memcpy(&first, a + g.off, 4);
    snprintf(name, sizeof name, "%s_device_first_word", g.name);
    gc_output(name, first);
  }
  gc_output("whole_buffer_match_host", memcmp(a, b, BYTES) == 0);
  return 0;
}
