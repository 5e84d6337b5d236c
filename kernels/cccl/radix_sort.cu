// gridcheck: CUB's radix sort (cub::DeviceRadixSort), keys and pairs; its
// onesweep kernels (cub/agent/agent_radix_sort_onesweep.cuh, the histogram
// agent and cub/device/dispatch/kernels/kernel_radix_sort.cuh) wait and
// trigger by hand (PDL) in CCCL 3.5, up to 2^24 items. The manual is
// kernels/cccl/README.md.
#include <cub/device/device_radix_sort.cuh>

#include "library.cuh"

// Keys and, for pairs, each key's input index as its value: the sort is
// stable, so equal keys keep their indices in increasing order.
template <bool Pairs>
struct radix : lib::case_t {
  size_t n = 0;
  std::vector<unsigned int *> d_keys;
  unsigned int *d_vals = nullptr;
  std::vector<std::vector<unsigned int>> keys, want;
  void *temp = nullptr;
  size_t temp_bytes = 0;
  int shapes() const override { return lib::SORT_SHAPE_COUNT; }
  const char *shape_name(int s) const override { return lib::SORT_SHAPES[s]; }
  cudaError_t launch(void *t, size_t &bytes, int s, unsigned int *out, cudaStream_t st) {
    if (Pairs)
      return cub::DeviceRadixSort::SortPairs(t, bytes, d_keys[s], out, d_vals, out + n, (int)n, 0, 32, st);
    return cub::DeviceRadixSort::SortKeys(t, bytes, d_keys[s], out, (int)n, 0, 32, st);
  }
  cudaError_t init(size_t count, unsigned long long seed) override {
    n = count;
    std::vector<unsigned int> idx(n);
    for (size_t i = 0; i < n; ++i) idx[i] = (unsigned int)i;
    cudaError_t e = lib::upload(&d_vals, idx);
    for (int s = 0; e == cudaSuccess && s < shapes(); ++s) {
      std::vector<unsigned int> k = lib::sort_keys(s, n, seed);
      unsigned int *d = nullptr;
      e = lib::upload(&d, k);
      d_keys.push_back(d);
      keys.push_back(k);
      std::sort(k.begin(), k.end());
      want.push_back(k);
    }
    if (e != cudaSuccess) return e;
    e = launch(nullptr, temp_bytes, 0, d_keys[0], (cudaStream_t)0);
    if (e != cudaSuccess) return e;
    return lib::alloc((unsigned char **)&temp, temp_bytes);
  }
  size_t out_bytes() const override { return (Pairs ? 2 : 1) * n * sizeof(unsigned int); }
  cudaError_t call(int s, void *out, cudaStream_t st) override {
    size_t bytes = temp_bytes;
    return launch(temp, bytes, s, (unsigned int *)out, st);
  }
  bool check(int s, const void *out, std::string &why) override {
    const unsigned int *k = (const unsigned int *)out;
    if (!lib::same(k, want[s], why)) return false;
    return !Pairs || lib::values_follow_keys(k, k + n, keys[s], true, why);
  }
};

LIB_MAIN(lib::entry_t{"radix_sort_onesweep_keys", &lib::make<radix<false>>, ""},
         lib::entry_t{"radix_sort_onesweep_pairs", &lib::make<radix<true>>, ""})
