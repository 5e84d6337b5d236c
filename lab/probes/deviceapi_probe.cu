// deviceapi_probe: the three outputs of c2-device-api-matches-host that
// disagreed, each with what separates its explanations.
// (1) child_launch_err: the last error just before the launch (left by the
//     default-flag stream/event creations?) and the launch's own error once
//     that is cleared; whether the child ran.
// (2) other_device_attribute_err: what the device's cudaDeviceGetAttribute
//     returns (error and value) for device numbers count, count+1, 1000, -1,
//     beside the host's.
// (3) copies_match_host: region by region, device bytes against host bytes
//     against the starting pattern.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#define BYTES 4096
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("SETUP %s: %s\n", #x, cudaGetErrorName(e_)); exit(3); } } while (0)
__global__ void child(unsigned *flag) { *flag = 1u; }
static __host__ __device__ cudaPitchedPtr pitched(void *p, size_t pitch, size_t x, size_t y) {
  cudaPitchedPtr r; r.ptr = p; r.pitch = pitch; r.xsize = x; r.ysize = y; return r;
}
static __host__ __device__ cudaExtent extent(size_t w, size_t h, size_t d) {
  cudaExtent e; e.width = w; e.height = h; e.depth = d; return e;
}
// which: bit i runs operation i only (to see each one alone too)
static __host__ __device__ unsigned copy_ops(unsigned char *b, cudaStream_t s, unsigned which, unsigned *errs_out) {
  unsigned errs = 0; cudaError_t e;
  if (which & 1) { e = cudaMemcpyAsync(b + 256, b, 64, cudaMemcpyDeviceToDevice, s); errs += e != cudaSuccess; errs_out[0] = e; }
  if (which & 2) { e = cudaMemcpy2DAsync(b + 512, 32, b + 64, 16, 16, 4, cudaMemcpyDeviceToDevice, s); errs += e != cudaSuccess; errs_out[1] = e; }
  if (which & 4) {
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = pitched(b + 128, 16, 16, 2);
    p.dstPtr = pitched(b + 768, 32, 16, 2);
    p.extent = extent(16, 2, 2);
    p.kind = cudaMemcpyDeviceToDevice;
    e = cudaMemcpy3DAsync(&p, s); errs += e != cudaSuccess; errs_out[2] = e;
  }
  if (which & 8) { e = cudaMemsetAsync(b + 1024, 0xab, 64, s); errs += e != cudaSuccess; errs_out[3] = e; }
  if (which & 16) { e = cudaMemset2DAsync(b + 1280, 32, 0xcd, 16, 4, s); errs += e != cudaSuccess; errs_out[4] = e; }
  if (which & 32) { e = cudaMemset3DAsync(pitched(b + 1536, 32, 16, 4), 0xef, extent(16, 4, 2), s); errs += e != cudaSuccess; errs_out[5] = e; }
  return errs;
}
enum { STREAM_DEFAULT_ERR, EVENT_DEFAULT_ERR, LAST_BEFORE, LAUNCH_ERR, STREAM_ERR, EVENT_ERR, OTHER0 = 8, NW = 32 };
__global__ void dev(unsigned *r, unsigned char *buf, unsigned *flag, unsigned which, int n) {
  cudaStream_t s, s0; cudaEvent_t e, e0;
  r[STREAM_ERR] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  r[STREAM_DEFAULT_ERR] = cudaStreamCreateWithFlags(&s0, cudaStreamDefault);
  if (r[STREAM_DEFAULT_ERR] == cudaSuccess) cudaStreamDestroy(s0);
  r[EVENT_ERR] = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  r[EVENT_DEFAULT_ERR] = cudaEventCreateWithFlags(&e0, cudaEventDefault);
  if (r[EVENT_DEFAULT_ERR] == cudaSuccess) cudaEventDestroy(e0);
  r[LAST_BEFORE] = cudaGetLastError();
  child<<<1, 1, 0, s>>>(flag);
  r[LAUNCH_ERR] = cudaGetLastError();
  unsigned errs[6] = {9, 9, 9, 9, 9, 9};
  r[6] = copy_ops(buf, s, which, errs);
  for (int i = 0; i < 6; ++i) r[20 + i] = errs[i];
  cudaStreamDestroy(s);
  cudaEventDestroy(e);
  const int devs[4] = {n, n + 1, 1000, -1};
  for (int i = 0; i < 4; ++i) {
    int v = -7;
    r[OTHER0 + 2 * i] = cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, devs[i]);
    r[OTHER0 + 2 * i + 1] = (unsigned)v;
  }
  (void)cudaGetLastError();
}
static const struct { const char *name; size_t off, len; } regions[] = {
  {"memcpy", 256, 64}, {"memcpy2d", 512, 128}, {"memcpy3d", 768, 128},
  {"memset", 1024, 64}, {"memset2d", 1280, 128}, {"memset3d", 1536, 256}};
int main() {
  unsigned *r, *flag;
  unsigned char *dbuf, *hbuf;
  CK(cudaMalloc(&r, NW * sizeof(unsigned)));
  CK(cudaMalloc(&flag, sizeof(unsigned)));
  CK(cudaMalloc(&dbuf, BYTES));
  CK(cudaMalloc(&hbuf, BYTES));
  static unsigned char pattern[BYTES], a[BYTES], b[BYTES];
  for (int i = 0; i < BYTES; i++) pattern[i] = (unsigned char)(i * 37 + 11);
  int n = 0, sms = 0;
  CK(cudaGetDeviceCount(&n));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  printf("HOST device_count=%d sms_dev0=%d\n", n, sms);
  const int hdevs[4] = {n, n + 1, 1000, -1};
  for (int i = 0; i < 4; ++i) {
    int v = -7;
    cudaError_t e = cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, hdevs[i]);
    (void)cudaGetLastError();
    printf("HOST attribute device=%d err=%d (%s) value=%d\n", hdevs[i], (int)e, cudaGetErrorName(e), v);
  }
  cudaStream_t hs;
  CK(cudaStreamCreateWithFlags(&hs, cudaStreamNonBlocking));
  // which = 63: all six as the test does; then each alone.
  const unsigned whiches[] = {63, 1, 2, 4, 8, 16, 32};
  for (unsigned which : whiches) {
    CK(cudaMemset(r, 0xff, NW * sizeof(unsigned)));
    CK(cudaMemset(flag, 0, sizeof(unsigned)));
    CK(cudaMemcpy(dbuf, pattern, BYTES, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(hbuf, pattern, BYTES, cudaMemcpyHostToDevice));
    dev<<<1, 1>>>(r, dbuf, flag, which, n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned herrs[6] = {9, 9, 9, 9, 9, 9};
    unsigned hcount = copy_ops(hbuf, hs, which, herrs);
    CK(cudaStreamSynchronize(hs));
    unsigned d[NW], f = 0;
    CK(cudaMemcpy(d, r, sizeof d, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&f, flag, sizeof f, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(a, dbuf, BYTES, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b, hbuf, BYTES, cudaMemcpyDeviceToHost));
    printf("DEV which=%u stream_default_err=%u event_default_err=%u last_error_before_launch=%u launch_err=%u child_ran=%u stream_err=%u event_err=%u device_copy_errors=%u host_copy_errors=%u\n",
           which, d[STREAM_DEFAULT_ERR], d[EVENT_DEFAULT_ERR], d[LAST_BEFORE], d[LAUNCH_ERR], f, d[STREAM_ERR], d[EVENT_ERR], d[6], hcount);
    printf("DEV which=%u per-op errors device:", which);
    for (int i = 0; i < 6; ++i) printf(" %u", d[20 + i]);
    printf(" host:");
    for (int i = 0; i < 6; ++i) printf(" %u", herrs[i]);
    printf("\n");
    if (which == 63)
      for (int i = 0; i < 4; ++i)
        printf("DEV attribute device=%d err=%u value=%d\n", hdevs[i], d[OTHER0 + 2 * i], (int)d[OTHER0 + 2 * i + 1]);
    for (const auto &g : regions) {
      int diff = 0, dchanged = 0, hchanged = 0, first = -1;
      for (size_t i = g.off; i < g.off + g.len; ++i) {
        if (a[i] != b[i]) { diff++; if (first < 0) first = (int)i; }
        dchanged += a[i] != pattern[i];
        hchanged += b[i] != pattern[i];
      }
      printf("REGION which=%u %s bytes=%zu device_vs_host_differ=%d device_changed=%d host_changed=%d", which, g.name, g.len, diff, dchanged, hchanged);
      if (first >= 0) {
        printf(" first_diff=%d device:", first);
        for (int i = first; i < first + 8; ++i) printf(" %02x", a[i]);
        printf(" host:");
        for (int i = first; i < first + 8; ++i) printf(" %02x", b[i]);
        printf(" pattern:");
        for (int i = first; i < first + 8; ++i) printf(" %02x", pattern[i]);
      }
      printf("\n");
    }
    int outside = 0;
    for (int i = 0; i < BYTES; ++i) {
      bool in = false;
      for (const auto &g : regions) in = in || (i >= (int)g.off && i < (int)(g.off + g.len));
      if (!in && a[i] != b[i]) outside++;
    }
    printf("REGION which=%u outside_regions_differ=%d total_differ=%d\n", which, outside, memcmp(a, b, BYTES) != 0);
    fflush(stdout);
  }
  return 0;
}
