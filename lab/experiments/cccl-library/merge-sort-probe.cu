// A first look at CCCL's merge sort under PDL: DeviceMergeSort::SortKeys
// with a comparator, called back to back, each result checked on the host
// (sorted, and the same multiset as the input). Built for sm_90 SASS and
// for compute_80 PTX only (the driver JIT-compiles it for the GPU; there
// the headers' NV_IF_TARGET(NV_PROVIDES_SM_90, cudaGridDependencySynchronize())
// compiles to nothing), and each with -DCCCL_DISABLE_PDL as the control.
// usage: probe N REPS
#include <cub/device/device_merge_sort.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

struct Less {
  __device__ bool operator()(unsigned a, unsigned b) const { return a < b; }
};

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("{\"error\":\"%s\",\"line\":%d}\n", cudaGetErrorName(e_), __LINE__); return 3; } } while (0)

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  int reps = argc > 2 ? atoi(argv[2]) : 20;
  int ptx = 0;
  CK(cub::PtxVersion(ptx));
  std::vector<unsigned> h(n);
  unsigned s = 12345u;
  for (auto &v : h) { s = s * 1664525u + 1013904223u; v = s >> 8; }
  std::vector<unsigned> want(h);
  std::sort(want.begin(), want.end());
  unsigned *d_in, *d_out;
  CK(cudaMalloc(&d_in, n * sizeof(unsigned) * reps));
  size_t tmp = 0;
  CK(cub::DeviceMergeSort::SortKeys(nullptr, tmp, d_in, n, Less{}));
  void *d_tmp;
  CK(cudaMalloc(&d_tmp, tmp));
  for (int r = 0; r < reps; ++r)
    CK(cudaMemcpy(d_in + (size_t)r * n, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  int wrong = 0, first = -1;
  std::vector<unsigned> got(n);
  for (int r = 0; r < reps; ++r) {
    CK(cub::DeviceMergeSort::SortKeys(d_tmp, tmp, d_in + (size_t)r * n, n, Less{}, st));
    CK(cudaStreamSynchronize(st));
    CK(cudaMemcpy(got.data(), d_in + (size_t)r * n, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    if (got != want) { ++wrong; if (first < 0) first = r; }
  }
  printf("{\"n\":%d,\"reps\":%d,\"ptx\":%d,\"wrong\":%d,\"first\":%d}\n", n, reps, ptx, wrong, first);
  return 0;
}
