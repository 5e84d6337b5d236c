// A user's kernel writes the keys, and CUB's radix sort sorts them next on
// the same stream: the shape the machine-code check's table shows for CCCL
// 13.3's DeviceRadixSortHistogramKernel, which loads its input keys before
// its griddepcontrol.wait (and is launched with PDL). README.md here,
// section 8. Runtime API and CUB only.
//
//   producer N ROUNDS TRIGGER BURST SEED
//
// Each round: `produce` (launched plainly, as a user launches a kernel)
// writes keys[i] = mix(i, round); if TRIGGER, it first calls
// griddepcontrol.launch_dependents, as a kernel of a PDL chain does (2: and
// then works 200 us before writing, as a kernel that triggers early and
// relies on its dependents' griddepcontrol.wait may); then
// cub::DeviceRadixSort::SortKeys sorts them into `out`. With BURST, a
// kernel on another stream adds 0 (red.add) to the keys' lines the whole
// time, so the producer's stores land late. The round's output is checked
// on the host: sorted, and the same multiset (count, sum and sum of
// squares of the keys mod 2^64) as the produced keys. One JSON line.
#include <cub/device/device_radix_sort.cuh>
#include <cub/version.cuh>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define TRY(x)                                                                        \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      printf("{\"error\":\"%s\",\"at\":\"%s\",\"round\":%u}\n", cudaGetErrorName(e_), #x, r); \
      return 3;                                                                       \
    }                                                                                 \
  } while (0)

__host__ __device__ unsigned mix(unsigned long long i, unsigned round, unsigned long long seed) {
  unsigned long long z = i * 0x9e3779b97f4a7c15ull + round * 0xbf58476d1ce4e5b9ull + seed;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (unsigned)(z ^ (z >> 31));
}

__global__ void produce(unsigned *keys, size_t n, unsigned round, unsigned long long seed, int trigger) {
  if (trigger) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (trigger == 2) {  // then 200 us of other work before the keys are written
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < 200000ull);
  }
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    keys[i] = mix(i, round, seed);
}

// Adds 0 to each 128-byte line of `p`, a warp a line, until *stop (at most 60 s).
__global__ void burst(unsigned *p, size_t words, volatile unsigned *stop) {
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const size_t lane = threadIdx.x % 32, warps = (size_t)gridDim.x * blockDim.x / 32;
  const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
  for (;;) {
    for (size_t line = warp; line < (words + 31) / 32; line += warps) {
      const size_t w = line * 32 + lane;
      if (w < words) asm volatile("red.relaxed.gpu.global.add.u32 [%0], 0;" ::"l"(p + w) : "memory");
    }
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (*stop || t - t0 > 60ull * 1000 * 1000 * 1000) return;
  }
}

int main(int argc, char **argv) {
  unsigned r = 0;
  if (argc != 6) {
    fprintf(stderr, "usage: producer N ROUNDS TRIGGER BURST SEED\n");
    return 2;
  }
  const size_t n = strtoull(argv[1], nullptr, 10);
  const unsigned rounds = (unsigned)atoi(argv[2]);
  const int trigger = atoi(argv[3]), load = atoi(argv[4]);
  const unsigned long long seed = strtoull(argv[5], nullptr, 10);
  unsigned *keys, *out, *stop;
  void *temp = nullptr;
  size_t temp_bytes = 0;
  int sms = 1;
  TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  TRY(cudaMalloc(&keys, n * 4));
  TRY(cudaMalloc(&out, n * 4));
  TRY(cudaHostAlloc(&stop, 4, cudaHostAllocMapped));
  *stop = 0;
  TRY(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys, out, (int)n));
  TRY(cudaMalloc(&temp, temp_bytes));
  cudaStream_t s, side;
  TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  TRY(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  if (load) burst<<<std::max(1, sms / 4), 256, 0, side>>>(keys, n, stop);
  std::vector<unsigned> h(n);
  unsigned wrong = 0, unsorted = 0, first_wrong = ~0u;
  for (r = 0; r < rounds; ++r) {
    produce<<<sms * 4, 256, 0, s>>>(keys, n, r, seed, trigger);
    TRY(cudaGetLastError());
    size_t bytes = temp_bytes;
    TRY(cub::DeviceRadixSort::SortKeys(temp, bytes, keys, out, (int)n, 0, 32, s));
    TRY(cudaMemcpyAsync(h.data(), out, n * 4, cudaMemcpyDeviceToHost, s));
    TRY(cudaStreamSynchronize(s));
    unsigned long long sum = 0, sq = 0, want_sum = 0, want_sq = 0;
    bool sorted = true;
    for (size_t i = 0; i < n; ++i) {
      sum += h[i], sq += (unsigned long long)h[i] * h[i];
      const unsigned k = mix(i, r, seed);
      want_sum += k, want_sq += (unsigned long long)k * k;
      if (i > 0 && h[i - 1] > h[i]) sorted = false;
    }
    if (!sorted || sum != want_sum || sq != want_sq) {
      ++wrong;
      unsorted += sorted ? 0 : 1;
      if (first_wrong == ~0u) first_wrong = r;
    }
  }
  *stop = 1;
  TRY(cudaDeviceSynchronize());
  printf("{\"cccl\":\"%d.%d.%d\",\"n\":%zu,\"rounds\":%u,\"trigger\":%d,\"burst\":%d,\"seed\":%llu,"
         "\"wrong\":%u,\"unsorted\":%u,\"first_wrong\":%d}\n",
         CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, n, rounds, trigger, load, seed, wrong,
         unsorted, first_wrong == ~0u ? -1 : (int)first_wrong);
  return 0;
}
