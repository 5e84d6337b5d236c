// gridcheck: CUB's scans (cub::DeviceScan::InclusiveSum and ExclusiveSum);
// their agent (cub/agent/agent_scan.cuh) and kernels (kernel_scan.cuh and
// the lookahead scan's kernel_scan_lookahead.cuh) wait and trigger by hand
// (PDL) in CCCL 3.5. The manual is kernels/cccl/README.md.
#include <cub/device/device_scan.cuh>

#include "library.cuh"

static const char *const SCAN_SHAPES[] = {"random", "all-ones"};

// Unsigned sums wrap modulo 2^32: the reference is exact.
template <bool Inclusive>
struct scan : lib::case_t {
  size_t n = 0;
  std::vector<unsigned int *> d_in;
  std::vector<std::vector<unsigned int>> want;
  void *temp = nullptr;
  size_t temp_bytes = 0;
  int shapes() const override { return 2; }
  const char *shape_name(int s) const override { return SCAN_SHAPES[s]; }
  cudaError_t launch(void *t, size_t &bytes, int s, unsigned int *out, cudaStream_t st) {
    if (Inclusive) return cub::DeviceScan::InclusiveSum(t, bytes, d_in[s], out, (int)n, st);
    return cub::DeviceScan::ExclusiveSum(t, bytes, d_in[s], out, (int)n, st);
  }
  cudaError_t init(size_t count, unsigned long long seed) override {
    n = count;
    lib::rng_t r(seed ^ 0x5ca7ull);
    cudaError_t e = cudaSuccess;
    for (int s = 0; e == cudaSuccess && s < shapes(); ++s) {
      std::vector<unsigned int> x(n), sum(n);
      unsigned int acc = 0;
      for (size_t i = 0; i < n; ++i) {
        x[i] = s == 0 ? (unsigned int)r.next() : 1u;
        if (!Inclusive) sum[i] = acc;
        acc += x[i];
        if (Inclusive) sum[i] = acc;
      }
      unsigned int *d = nullptr;
      e = lib::upload(&d, x);
      d_in.push_back(d);
      want.push_back(sum);
    }
    if (e != cudaSuccess) return e;
    e = launch(nullptr, temp_bytes, 0, d_in[0], (cudaStream_t)0);
    if (e != cudaSuccess) return e;
    return lib::alloc((unsigned char **)&temp, temp_bytes);
  }
  size_t out_bytes() const override { return n * sizeof(unsigned int); }
  cudaError_t call(int s, void *out, cudaStream_t st) override {
    size_t bytes = temp_bytes;
    return launch(temp, bytes, s, (unsigned int *)out, st);
  }
  bool check(int s, const void *out, std::string &why) override {
    return lib::same((const unsigned int *)out, want[s], why);
  }
};

LIB_MAIN(lib::entry_t{"inclusive_scan", &lib::make<scan<true>>, ""},
         lib::entry_t{"exclusive_scan", &lib::make<scan<false>>, ""})
