// gridcheck: CUB's histograms (cub::DeviceHistogram::HistogramEven and
// HistogramRange); their agent (cub/agent/agent_histogram.cuh) and kernels
// (cub/device/dispatch/kernels/kernel_histogram.cuh) wait and trigger by
// hand (PDL) from CCCL 3.2 on. The manual is kernels/cccl/README.md.
#include <cub/device/device_histogram.cuh>

#include "library.cuh"

constexpr int BINS = 256;
static const char *const HIST_SHAPES[] = {"random", "all-equal", "few-distinct"};

// Samples in [0, 256): random, all in one bin (every block's atomics on one
// counter), or in four bins. Even: 256 bins of width 1; range: bins of
// growing width, their levels on the device.
template <bool Even>
struct hist : lib::case_t {
  size_t n = 0;
  std::vector<int *> d_samples;
  std::vector<std::vector<int>> want;
  std::vector<int> levels;
  int *d_levels = nullptr;
  void *temp = nullptr;
  size_t temp_bytes = 0;
  int shapes() const override { return 3; }
  const char *shape_name(int s) const override { return HIST_SHAPES[s]; }
  int bins() const { return (int)levels.size() - 1; }
  cudaError_t launch(void *t, size_t &bytes, int s, int *out, cudaStream_t st) {
    if (Even)
      return cub::DeviceHistogram::HistogramEven(t, bytes, d_samples[s], out, BINS + 1, 0, BINS, (int)n, st);
    return cub::DeviceHistogram::HistogramRange(t, bytes, d_samples[s], out, bins() + 1, d_levels, (int)n, st);
  }
  cudaError_t init(size_t count, unsigned long long seed) override {
    n = count;
    for (int l = 0, w = 1; l < BINS; l += w, w += 1) levels.push_back(l);
    levels.push_back(BINS);
    if (Even) {
      levels.clear();
      for (int l = 0; l <= BINS; ++l) levels.push_back(l);
    }
    cudaError_t e = lib::upload(&d_levels, levels);
    lib::rng_t r(seed ^ 0x4157ull);
    for (int s = 0; e == cudaSuccess && s < shapes(); ++s) {
      std::vector<int> x(n);
      std::vector<int> counts(bins(), 0);
      for (size_t i = 0; i < n; ++i) {
        x[i] = s == 0 ? (int)r.below(BINS) : s == 1 ? 77 : (int)(r.below(4) * 60 + 3);
        const int bin = (int)(std::upper_bound(levels.begin(), levels.end(), x[i]) - levels.begin()) - 1;
        counts[bin]++;
      }
      int *d = nullptr;
      e = lib::upload(&d, x);
      d_samples.push_back(d);
      want.push_back(counts);
    }
    if (e != cudaSuccess) return e;
    e = launch(nullptr, temp_bytes, 0, d_levels, (cudaStream_t)0);
    if (e != cudaSuccess) return e;
    return lib::alloc((unsigned char **)&temp, temp_bytes);
  }
  size_t out_bytes() const override { return (size_t)bins() * sizeof(int); }
  cudaError_t call(int s, void *out, cudaStream_t st) override {
    size_t bytes = temp_bytes;
    return launch(temp, bytes, s, (int *)out, st);
  }
  // Exact counts: "index" is the bin.
  bool check(int s, const void *out, std::string &why) override {
    return lib::same((const int *)out, want[s], why);
  }
};

LIB_MAIN(lib::entry_t{"histogram_even", &lib::make<hist<true>>, ""},
         lib::entry_t{"histogram_range", &lib::make<hist<false>>, ""})
