// Reproducer: pdl-no-attribute-sees-all-without-wait at the rate step's
// scale, repeated: a primary (t0: store x 1, trigger, store y 1) and a
// secondary (t0: load r0 x, load r1 y) launched into one stream without the
// programmatic attribute, laid out, delayed and stressed as the suite's
// generated kernels are. Once in the 2026-11-23 rate step this test made no
// progress for over 7 minutes; alone it then took 0.06 s (3 of 3). The
// counters say where a stall sits (primary blocks done, secondary blocks
// done); `repeat` runs the launches again and again to catch a rare one.
//
// usage: pdl_no_attribute instances=65536 launches=4 repeat=50 delay=1048576 stress=65536 iters=65536 stall=60
//        limit=600
#include "common.cuh"

__global__ void __launch_bounds__(96) primary(gc_params p, unsigned long long *prog) {
  const unsigned slot = gc_slot(p, blockIdx.x);
  volatile unsigned *const mem = p.mem + (size_t)slot * 64u;
  __shared__ unsigned arrived;
  if (threadIdx.x == 0u) arrived = 0u;
  __syncthreads();
  if (threadIdx.x == 0u) {
    gc_delay(p, slot, 0u);
    mem[0u] = 1u;
    gc_delay(p, slot, 1u);
    cudaTriggerProgrammaticLaunchCompletion();
    gc_delay(p, slot, 2u);
    mem[32u] = 1u;
    gc_arrive(&arrived);
  } else if (threadIdx.x >= 32u) {
    gc_stress(p, slot, &arrived, 1u, 0u);
  }
  if (threadIdx.x == 0u) atomicAdd(prog + 0, 1ull);
}

__global__ void __launch_bounds__(96) secondary(gc_params p, unsigned long long *prog) {
  const unsigned slot = gc_slot(p, blockIdx.x);
  volatile unsigned *const mem = p.mem + (size_t)slot * 64u;
  __shared__ unsigned arrived;
  if (threadIdx.x == 0u) arrived = 0u;
  __syncthreads();
  if (threadIdx.x == 0u) {
    gc_delay(p, slot, 3u);
    const unsigned r0 = mem[0u];
    gc_delay(p, slot, 4u);
    const unsigned r1 = mem[32u];
    p.regs[(size_t)slot * 2u] = r0;
    p.regs[(size_t)slot * 2u + 1u] = r1;
    if (r0 == 0u || r1 == 0u) atomicAdd(prog + 2, 1ull);  // the forbidden outcome
    gc_arrive(&arrived);
  } else if (threadIdx.x >= 32u) {
    gc_stress(p, slot, &arrived, 1u, 0u);
  }
  if (threadIdx.x == 0u) atomicAdd(prog + 1, 1ull);
}

int main(int argc, char **argv) {
  const unsigned n = arg(argc, argv, "instances", 65536), launches = arg(argc, argv, "launches", 4);
  const unsigned repeat = arg(argc, argv, "repeat", 50), delay = arg(argc, argv, "delay", 1u << 20);
  const unsigned stress = arg(argc, argv, "stress", 1u << 16), iters = arg(argc, argv, "iters", 1u << 16);
  const unsigned stall = arg(argc, argv, "stall", 60);
  self_limit(arg(argc, argv, "limit", 600));
  unsigned *mem, *regs, *status, *st;
  CHECK(cudaMalloc(&mem, (size_t)n * 64u * 4u));
  CHECK(cudaMalloc(&regs, (size_t)n * 2u * 4u));
  CHECK(cudaMalloc(&status, 4u));
  CHECK(cudaMalloc(&st, (stress ? stress : 1u) * 4u));
  Progress pr;
  pr.init(3);
  const char *names[] = {"primary_blocks_done", "secondary_blocks_done", "forbidden_seen"};
  printf("START t=%.1f instances=%u launches=%u repeat=%u delay=%u stress=%u\n", now_s(), n, launches, repeat,
         delay, stress);
  fflush(stdout);
  double worst = 0;
  for (unsigned r = 0; r < repeat; ++r) {
    for (unsigned l = 0; l < launches; ++l) {
      CHECK(cudaMemset(mem, 0, (size_t)n * 64u * 4u));
      gc_params p = {mem, regs, status, st, 0x2545f4914f6cdd1dull * (r * launches + l + 1), n,
                     (n & (n - 1)) ? 1u : (2654435761u % n | 1u), r + l, delay, stress, iters};
      primary<<<n, 96>>>(p, pr.dev);
      secondary<<<n, 96>>>(p, pr.dev);  // same (NULL) stream, no attribute
      CHECK(cudaGetLastError());
      char what[64];
      snprintf(what, sizeof what, "repeat=%u launch=%u", r, l);
      const double s = wait_with_progress(pr, names, stall, what);
      if (s > worst) worst = s;
      printf("LAUNCH t=%.1f repeat=%u launch=%u seconds=%.3f\n", now_s(), r, l, s);
      fflush(stdout);
    }
  }
  printf("RESULT instances=%u launches=%u repeat=%u worst_launch_seconds=%.3f forbidden_seen=%llu\n", n, launches,
         repeat, worst, pr.get(2));
  return 0;
}
