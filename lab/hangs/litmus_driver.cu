// Runs one generated litmus kernel (kernels/generated/<test>.cu, or a
// reproducer written the same way) as the suite's runner does (crates/gpu:
// `instances` blocks a host launch, fresh memory, status words and
// registers each launch, the incantations, a seed and a co-prime slot
// permutation per launch, the pending launch pool raised to fit), and
// watches it: every second it copies the status words back through a
// second stream (copies run beside a kernel that does not finish) and
// prints, word by word, how many instances have reached it. A run whose
// status words stop changing for `stall` seconds prints STALL with that
// summary and exits 2: where each instance stopped. A run that finishes
// prints the time per launch.
//
// Build (one host kernel a test):
//   nvcc -O2 -arch=sm_90 -rdc=true -I kernels/include -I lab/hangs \
//     -DTEST_CU='"fuzz-7-466.cu"' -DENTRY=fuzz_7_466__k0 -DBLOCK=96 -DPENDING=1 \
//     lab/hangs/litmus_driver.cu -o driver -lcudadevrt
// usage: driver instances=1024 launches=32 seed=1 delay=1048576 stress=65536
//        iters=65536 stall=10 limit=60 [mask=N, for a reproducer with HAS_MASK]
#include "common.cuh"

#include <vector>

#include TEST_CU

// splitmix64's finaliser on the host (gc_mix64 is device code).
static unsigned long long mix64(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static constexpr unsigned kSlot = kSlotStride, kStatus = kStatusStride, kRegs = kRegStride;

// One summary of the status words: for each word, the instances that hold
// GC_RAN (1), cudaSuccess (0), the initial GC_NOT_REACHED, or another value.
struct Summary {
  std::vector<unsigned> ran, ok, unreached, other;
  explicit Summary(unsigned words) : ran(words), ok(words), unreached(words), other(words) {}
  bool operator==(const Summary &o) const {
    return ran == o.ran && ok == o.ok && unreached == o.unreached && other == o.other;
  }
  void print() const {
    for (size_t k = 0; k < ran.size(); ++k)
      printf(" w%zu:ran=%u,ok=%u,unreached=%u,other=%u", k, ran[k], ok[k], unreached[k], other[k]);
  }
};

static Summary summarize(const unsigned *st, unsigned n) {
  Summary s(kStatus);
  for (unsigned i = 0; i < n; ++i)
    for (unsigned k = 0; k < kStatus; ++k) {
      const unsigned v = st[(size_t)i * kStatus + k];
      if (v == GC_RAN) s.ran[k]++;
      else if (v == 0u) s.ok[k]++;
      else if (v == GC_NOT_REACHED) s.unreached[k]++;
      else s.other[k]++;
    }
  return s;
}

int main(int argc, char **argv) {
  const unsigned n = arg(argc, argv, "instances", 1024), launches = arg(argc, argv, "launches", 32);
  const unsigned seed = arg(argc, argv, "seed", 1), delay = arg(argc, argv, "delay", 1u << 20);
  const unsigned stress = arg(argc, argv, "stress", 1u << 16), iters = arg(argc, argv, "iters", 1u << 16);
  const unsigned stall = arg(argc, argv, "stall", 10);
  self_limit(arg(argc, argv, "limit", 120));
#ifdef HAS_MASK
  const unsigned mask = arg(argc, argv, "mask", 0xffffffffu);
  CHECK(cudaMemcpyToSymbol(g_mask, &mask, sizeof mask));
#else
  const unsigned mask = 0xffffffffu;
#endif
  if (PENDING > 0) CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, (size_t)n * PENDING + 1024u));
  size_t pool = 0;
  CHECK(cudaDeviceGetLimit(&pool, cudaLimitDevRuntimePendingLaunchCount));
  cudaStream_t run, side;
  CHECK(cudaStreamCreateWithFlags(&run, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  unsigned *stress_buf, *host_status;
  CHECK(cudaMalloc(&stress_buf, (stress ? stress : 1u) * 4u));
  CHECK(cudaMemset(stress_buf, 0, (stress ? stress : 1u) * 4u));
  CHECK(cudaMallocHost(&host_status, (size_t)n * kStatus * 4u));
  std::vector<unsigned> init_status((size_t)n * kStatus, GC_NOT_REACHED);
  printf("START t=%.1f test=%s instances=%u launches=%u seed=%u delay=%u stress=%u pool=%zu mask=0x%x\n", now_s(),
         TEST_CU, n, launches, seed, delay, stress, pool, mask);
  fflush(stdout);
  double total = 0, worst = 0;
  for (unsigned l = 0; l < launches; ++l) {
    unsigned *mem, *regs, *status;
    CHECK(cudaMalloc(&mem, (size_t)n * kSlot * 4u));
    CHECK(cudaMalloc(&regs, (size_t)n * kRegs * 4u));
    CHECK(cudaMalloc(&status, (size_t)n * kStatus * 4u));
    CHECK(cudaMemset(mem, 0, (size_t)n * kSlot * 4u));
    CHECK(cudaMemset(regs, 0, (size_t)n * kRegs * 4u));
    CHECK(cudaMemcpy(status, init_status.data(), (size_t)n * kStatus * 4u, cudaMemcpyHostToDevice));
    const unsigned long long s = mix64(0x5eedull * seed + l);
    gc_params p = {mem, regs, status, stress_buf, s, n, 1u, (unsigned)(s >> 40) % n, delay, stress, iters};
    if ((n & (n - 1)) == 0) p.perm_mul = ((unsigned)(s >> 8) % n) | 1u;  // odd: co-prime to a power of two
    const double t0 = now_s();
    ENTRY<<<n, BLOCK, 0, run>>>(p);
    CHECK(cudaGetLastError());
    Summary last(kStatus);
    double last_change = t0, last_look = t0;
    for (;;) {
      const cudaError_t q = cudaStreamQuery(run);
      if (q == cudaSuccess) break;
      if (q != cudaErrorNotReady) {
        printf("ERROR launch=%u: %s\n", l, cudaGetErrorName(q));
        return 3;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const double t = now_s();
      if (t - last_look < 1.0) continue;
      last_look = t;
      CHECK(cudaMemcpyAsync(host_status, status, (size_t)n * kStatus * 4u, cudaMemcpyDeviceToHost, side));
      const double c0 = now_s();
      while (cudaStreamQuery(side) == cudaErrorNotReady) {
        if (now_s() - c0 > 5.0) {
          printf("STALL t=%.1f launch=%u: the status copy beside the kernel did not finish in 5 s\n", now_s(), l);
          fflush(stdout);
          _exit(2);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      const Summary now = summarize(host_status, n);
      printf("PROGRESS t=%.1f launch=%u", t, l);
      now.print();
      printf("\n");
      fflush(stdout);
      if (!(now == last)) {
        last = now;
        last_change = t;
      } else if (t - last_change >= stall) {
        printf("STALL t=%.1f launch=%u: no status word changed for %u s;", t, l, stall);
        now.print();
        printf("\n");
        fflush(stdout);
        _exit(2);
      }
    }
    const double secs = now_s() - t0;
    total += secs;
    worst = secs > worst ? secs : worst;
    CHECK(cudaMemcpy(host_status, status, (size_t)n * kStatus * 4u, cudaMemcpyDeviceToHost));
    const Summary done = summarize(host_status, n);
    if (l < 2 || l + 1 == launches || secs > 1.0) {
      printf("LAUNCH t=%.1f launch=%u seconds=%.4f", now_s(), l, secs);
      done.print();
      printf("\n");
      fflush(stdout);
    }
    CHECK(cudaFree(mem));
    CHECK(cudaFree(regs));
    CHECK(cudaFree(status));
  }
  printf("RESULT test=%s instances=%u launches=%u seconds=%.3f worst_launch_seconds=%.4f us_per_instance=%.2f\n",
         TEST_CU, n, launches, total, worst, 1e6 * total / ((double)n * launches));
  return 0;
}
