// gridcheck: CUB's merge sort (cub::DeviceMergeSort), keys and pairs; its
// agent (cub/agent/agent_merge_sort.cuh) waits and triggers by hand (PDL)
// from CCCL 3.0 on. kernels/cccl/README.md is the manual.
#include <cub/device/device_merge_sort.cuh>

#include "library.cuh"

struct less_u32 {
  __host__ __device__ bool operator()(unsigned int x, unsigned int y) const { return x < y; }
};

// Keys: SortKeysCopy from each shape's input into the call's output.
struct merge_keys : lib::case_t {
  size_t n = 0;
  std::vector<unsigned int *> d_in;
  std::vector<std::vector<unsigned int>> want;
  void *temp = nullptr;
  size_t temp_bytes = 0;
  int shapes() const override { return lib::SORT_SHAPE_COUNT; }
  const char *shape_name(int s) const override { return lib::SORT_SHAPES[s]; }
  cudaError_t init(size_t count, unsigned long long seed) override {
    n = count;
    for (int s = 0; s < shapes(); ++s) {
      std::vector<unsigned int> k = lib::sort_keys(s, n, seed);
      unsigned int *d = nullptr;
      cudaError_t e = lib::upload(&d, k);
      if (e != cudaSuccess) return e;
      d_in.push_back(d);
      std::sort(k.begin(), k.end());
      want.push_back(k);
    }
    cudaError_t e = cub::DeviceMergeSort::SortKeysCopy(nullptr, temp_bytes, d_in[0], d_in[0], (int)n,
                                                       less_u32{}, (cudaStream_t)0);
    if (e != cudaSuccess) return e;
    return lib::alloc((unsigned char **)&temp, temp_bytes);
  }
  size_t out_bytes() const override { return n * sizeof(unsigned int); }
  cudaError_t call(int s, void *out, cudaStream_t st) override {
    size_t bytes = temp_bytes;
    return cub::DeviceMergeSort::SortKeysCopy(temp, bytes, d_in[s], (unsigned int *)out, (int)n,
                                              less_u32{}, st);
  }
  // Equal to the sorted input: sorted, and the same multiset.
  bool check(int s, const void *out, std::string &why) override {
    return lib::same((const unsigned int *)out, want[s], why);
  }
};

// Pairs: the value of each key is its input index, so the output's values
// must be a permutation of the indices, each naming an input key equal to
// the output key beside it (SortPairsCopy promises no stability).
struct merge_pairs : lib::case_t {
  size_t n = 0;
  std::vector<unsigned int *> d_keys;
  unsigned int *d_vals = nullptr;
  std::vector<std::vector<unsigned int>> keys, want;
  void *temp = nullptr;
  size_t temp_bytes = 0;
  int shapes() const override { return lib::SORT_SHAPE_COUNT; }
  const char *shape_name(int s) const override { return lib::SORT_SHAPES[s]; }
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
    e = cub::DeviceMergeSort::SortPairsCopy(nullptr, temp_bytes, d_keys[0], d_vals, d_keys[0], d_vals,
                                            (int)n, less_u32{}, (cudaStream_t)0);
    if (e != cudaSuccess) return e;
    return lib::alloc((unsigned char **)&temp, temp_bytes);
  }
  size_t out_bytes() const override { return 2 * n * sizeof(unsigned int); }
  cudaError_t call(int s, void *out, cudaStream_t st) override {
    unsigned int *k = (unsigned int *)out;
    size_t bytes = temp_bytes;
    return cub::DeviceMergeSort::SortPairsCopy(temp, bytes, d_keys[s], d_vals, k, k + n, (int)n,
                                               less_u32{}, st);
  }
  bool check(int s, const void *out, std::string &why) override {
    const unsigned int *k = (const unsigned int *)out, *v = k + n;
    if (!lib::same(k, want[s], why)) return false;
    return lib::values_follow_keys(k, v, keys[s], false, why);
  }
};

LIB_MAIN(lib::entry_t{"merge_sort_keys", &lib::make<merge_keys>, ""},
         lib::entry_t{"merge_sort_pairs", &lib::make<merge_pairs>, ""})
