// gridcheck: CUB's find (cub::DeviceFind::FindIf, CCCL 3.1 and newer); its
// kernels (cub/device/dispatch/dispatch_find.cuh) wait and trigger by hand
// (PDL) in CCCL 3.5. A release without cub::DeviceFind builds a program that
// says it did not run. The manual is kernels/cccl/README.md.
#if __has_include(<cub/device/device_find.cuh>)
#  include <cub/device/device_find.cuh>
#  define LIB_HAS_FIND 1
#else
#  include <cub/version.cuh>
#  define LIB_HAS_FIND 0
#endif

#include "library.cuh"

#if LIB_HAS_FIND
constexpr unsigned int MAGIC = 0xc0ffee00u;
static const char *const FIND_SHAPES[] = {"random", "first", "last", "absent"};

struct is_magic {
  __host__ __device__ bool operator()(unsigned int x) const { return x == MAGIC; }
};

// Values below 2^30 and MAGIC at: three random places, index 0, the last
// index, nowhere; the answer is the first index holding it, or n.
struct find_if : lib::case_t {
  size_t n = 0;
  std::vector<unsigned int *> d_in;
  std::vector<int> want;
  void *temp = nullptr;
  size_t temp_bytes = 0;
  int shapes() const override { return 4; }
  const char *shape_name(int s) const override { return FIND_SHAPES[s]; }
  cudaError_t init(size_t count, unsigned long long seed) override {
    n = count;
    lib::rng_t r(seed ^ 0xf1edull);
    cudaError_t e = cudaSuccess;
    for (int s = 0; e == cudaSuccess && s < shapes(); ++s) {
      std::vector<unsigned int> x(n);
      for (size_t i = 0; i < n; ++i) x[i] = (unsigned int)r.next() & 0x3fffffffu;
      if (s == 0)
        for (int j = 0; j < 3; ++j) x[r.below((unsigned int)n)] = MAGIC;
      if (s == 1) x[0] = MAGIC;
      if (s == 2) x[n - 1] = MAGIC;
      want.push_back((int)(std::find(x.begin(), x.end(), MAGIC) - x.begin()));
      unsigned int *d = nullptr;
      e = lib::upload(&d, x);
      d_in.push_back(d);
    }
    if (e != cudaSuccess) return e;
    e = cub::DeviceFind::FindIf(nullptr, temp_bytes, d_in[0], (int *)nullptr, is_magic{}, (int)n,
                                (cudaStream_t)0);
    if (e != cudaSuccess) return e;
    return lib::alloc((unsigned char **)&temp, temp_bytes);
  }
  size_t out_bytes() const override { return sizeof(int); }
  cudaError_t call(int s, void *out, cudaStream_t st) override {
    size_t bytes = temp_bytes;
    return cub::DeviceFind::FindIf(temp, bytes, d_in[s], (int *)out, is_magic{}, (int)n, st);
  }
  bool check(int s, const void *out, std::string &why) override {
    return lib::same((const int *)out, std::vector<int>{want[s]}, why);
  }
};

LIB_MAIN(lib::entry_t{"find_if", &lib::make<find_if>, ""})
#else
LIB_MAIN(lib::entry_t{"find_if", nullptr, "cub::DeviceFind is not in this CCCL release"})
#endif
