// gridcheck: Thrust entry points that dispatch to CUB algorithms launching
// with PDL (thrust::sort with a custom comparator -> merge sort, on
// arithmetic keys -> radix sort; the scans; transform; find_if), called on
// the program's stream through thrust::cuda::par_nosync. Thrust allocates
// its temporary storage itself, each call. The manual is kernels/cccl/README.md.
#include <thrust/execution_policy.h>
#include <thrust/find.h>
#include <thrust/functional.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/transform.h>

#include "library.cuh"

struct greater_u32 {
  __host__ __device__ bool operator()(unsigned int x, unsigned int y) const { return x > y; }
};
struct affine {
  __host__ __device__ unsigned int operator()(unsigned int x) const { return x * 2654435761u + 12345u; }
};
struct is_magic {
  __host__ __device__ bool operator()(unsigned int x) const { return x == 0xc0ffee00u; }
};

enum kind_t { SORT_CUSTOM, SORT, INCLUSIVE, EXCLUSIVE, TRANSFORM, FIND };

// In-place algorithms work on the call's output slot after an asynchronous
// copy of the input into it; find_if returns its index (Thrust waits for
// it), stored into the slot for the same check as the others.
template <kind_t K>
struct thrust_case : lib::case_t {
  size_t n = 0;
  std::vector<unsigned int *> d_in;
  std::vector<std::vector<unsigned int>> want;
  bool sorts() const { return K == SORT_CUSTOM || K == SORT; }
  int shapes() const override { return sorts() ? lib::SORT_SHAPE_COUNT : K == FIND ? 2 : 1; }
  const char *shape_name(int s) const override {
    return sorts() ? lib::SORT_SHAPES[s] : K == FIND ? (s ? "absent" : "random") : "random";
  }
  std::vector<unsigned int> input(int s, unsigned long long seed) {
    if (sorts()) return lib::sort_keys(s, n, seed);
    lib::rng_t r(seed ^ 0x7457ull);
    std::vector<unsigned int> x(n);
    for (auto &v : x) v = (unsigned int)r.next() & (K == FIND ? 0x3fffffffu : ~0u);
    if (K == FIND && s == 0)
      for (int j = 0; j < 3; ++j) x[r.below((unsigned int)n)] = 0xc0ffee00u;
    return x;
  }
  std::vector<unsigned int> reference(std::vector<unsigned int> x) {
    if (K == SORT_CUSTOM) std::sort(x.begin(), x.end(), greater_u32{});
    if (K == SORT) std::sort(x.begin(), x.end());
    unsigned int acc = 0;
    for (auto &v : x) {
      if (K == INCLUSIVE) v = acc += v;
      if (K == EXCLUSIVE) std::swap(acc, v), acc += v;
      if (K == TRANSFORM) v = affine{}(v);
    }
    if (K == FIND) return {(unsigned int)(std::find_if(x.begin(), x.end(), is_magic{}) - x.begin())};
    return x;
  }
  cudaError_t init(size_t count, unsigned long long seed) override {
    n = count;
    cudaError_t e = cudaSuccess;
    for (int s = 0; e == cudaSuccess && s < shapes(); ++s) {
      std::vector<unsigned int> x = input(s, seed);
      unsigned int *d = nullptr;
      e = lib::upload(&d, x);
      d_in.push_back(d);
      want.push_back(reference(x));
    }
    return e;
  }
  size_t out_bytes() const override { return (K == FIND ? 1 : n) * sizeof(unsigned int); }
  cudaError_t call(int s, void *slot, cudaStream_t st) override {
    unsigned int *out = (unsigned int *)slot, *in = d_in[s];
    auto policy = thrust::cuda::par_nosync.on(st);
    try {
      if (sorts()) {
        cudaError_t e = cudaMemcpyAsync(out, in, n * sizeof(unsigned int), cudaMemcpyDeviceToDevice, st);
        if (e != cudaSuccess) return e;
      }
      if (K == SORT_CUSTOM) thrust::sort(policy, out, out + n, greater_u32{});
      if (K == SORT) thrust::sort(policy, out, out + n);
      if (K == INCLUSIVE) thrust::inclusive_scan(policy, in, in + n, out);
      if (K == EXCLUSIVE) thrust::exclusive_scan(policy, in, in + n, out);
      if (K == TRANSFORM) thrust::transform(policy, in, in + n, out, affine{});
      if (K == FIND) {
        const unsigned int at = (unsigned int)(thrust::find_if(policy, in, in + n, is_magic{}) - in);
        return cudaMemcpyAsync(out, &at, sizeof(at), cudaMemcpyHostToDevice, st) == cudaSuccess
                   ? cudaStreamSynchronize(st)
                   : cudaGetLastError();
      }
    } catch (const thrust::system_error &e) {
      fprintf(stderr, "thrust: %s\n", e.what());
      return (cudaError_t)e.code().value();
    }
    return cudaGetLastError();
  }
  bool check(int s, const void *out, std::string &why) override {
    return lib::same((const unsigned int *)out, want[s], why);
  }
};

LIB_MAIN(lib::entry_t{"thrust_sort_custom", &lib::make<thrust_case<SORT_CUSTOM>>, ""},
         lib::entry_t{"thrust_sort", &lib::make<thrust_case<SORT>>, ""},
         lib::entry_t{"thrust_inclusive_scan", &lib::make<thrust_case<INCLUSIVE>>, ""},
         lib::entry_t{"thrust_exclusive_scan", &lib::make<thrust_case<EXCLUSIVE>>, ""},
         lib::entry_t{"thrust_transform", &lib::make<thrust_case<TRANSFORM>>, ""},
         lib::entry_t{"thrust_find_if", &lib::make<thrust_case<FIND>>, ""})
