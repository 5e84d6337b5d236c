// gridcheck: CUB's transform (cub::DeviceTransform::Transform, one input
// and two); its kernels (cub/device/dispatch/kernels/kernel_transform.cuh)
// wait and trigger by hand (PDL) from CCCL 3.2 on. The manual is
// kernels/cccl/README.md.
#include <cub/device/device_transform.cuh>

#include "library.cuh"

struct affine {
  __host__ __device__ unsigned int operator()(unsigned int x) const { return x * 2654435761u + 12345u; }
};
struct mix2 {
  __host__ __device__ unsigned int operator()(unsigned int x, unsigned int y) const {
    return (x ^ (y >> 3)) + y * 40503u;
  }
};

// Element-wise against the host's own evaluation of the same operator.
template <int Inputs>
struct transform : lib::case_t {
  size_t n = 0;
  unsigned int *d_x = nullptr, *d_y = nullptr;
  std::vector<unsigned int> want;
  cudaError_t init(size_t count, unsigned long long seed) override {
    n = count;
    lib::rng_t r(seed ^ 0x7a45ull);
    std::vector<unsigned int> x(n), y(n);
    want.resize(n);
    for (size_t i = 0; i < n; ++i) {
      x[i] = (unsigned int)r.next();
      y[i] = (unsigned int)r.next();
      want[i] = Inputs == 1 ? affine{}(x[i]) : mix2{}(x[i], y[i]);
    }
    cudaError_t e = lib::upload(&d_x, x);
    return e != cudaSuccess ? e : lib::upload(&d_y, y);
  }
  size_t out_bytes() const override { return n * sizeof(unsigned int); }
  cudaError_t call(int, void *out, cudaStream_t st) override {
    if (Inputs == 1)
      return cub::DeviceTransform::Transform(d_x, (unsigned int *)out, (int)n, affine{}, st);
    return cub::DeviceTransform::Transform(::cuda::std::make_tuple(d_x, d_y), (unsigned int *)out, (int)n,
                                           mix2{}, st);
  }
  bool check(int, const void *out, std::string &why) override {
    return lib::same((const unsigned int *)out, want, why);
  }
};

LIB_MAIN(lib::entry_t{"transform", &lib::make<transform<1>>, ""},
         lib::entry_t{"transform_binary", &lib::make<transform<2>>, ""})
