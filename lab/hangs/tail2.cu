// Reproducer: two threads of one block each tail-launch a kernel
//   parent  t0: [store x 1, launch ta tail]   t1: [store y 1, launch tb tail]
//   ta      t0: [load r0 y]                   tb      t0: [load r1 x]
// laid out, delayed and stressed as the suite's generated kernels are
// (gridcheck.cuh; tN is threadIdx.x == 32 N; two stress warps), one
// instance a block, `instances` blocks a host launch, `launches` launches.
//
// Question: deadlock or long run? Tail launches of one grid go into that
// grid's single tail stream, so all 2 x instances tail grids of a launch run
// one after another, after the whole parent grid; each waits out the random
// delays of its operation (gc_delay: up to max_delay cycles). A long run
// shows counters that keep moving and a time per launch linear in
// `instances`; a deadlock shows counters that stop.
//
// usage: tail2 instances=65536 launches=4 delay=1048576 stress=65536 iters=65536 stall=60 limit=600
#include "common.cuh"

__global__ void __launch_bounds__(128) ta(gc_params p, unsigned slot, unsigned long long *prog) {
  volatile unsigned *const mem = p.mem + (size_t)slot * 64u;
  __shared__ unsigned arrived;
  if (threadIdx.x == 0u) arrived = 0u;
  __syncthreads();
  if (threadIdx.x == 0u) {
    gc_delay(p, slot, 4u);
    p.regs[(size_t)slot * 2u + 0u] = mem[32u];  // load r0 y
    gc_arrive(&arrived);
  } else if (threadIdx.x >= 32u) {
    gc_stress(p, slot, &arrived, 1u, 0u);
  }
  if (threadIdx.x == 0u) atomicAdd(prog + 1, 1ull);
}

__global__ void __launch_bounds__(128) tb(gc_params p, unsigned slot, unsigned long long *prog) {
  volatile unsigned *const mem = p.mem + (size_t)slot * 64u;
  __shared__ unsigned arrived;
  if (threadIdx.x == 0u) arrived = 0u;
  __syncthreads();
  if (threadIdx.x == 0u) {
    gc_delay(p, slot, 5u);
    p.regs[(size_t)slot * 2u + 1u] = mem[0u];  // load r1 x
    gc_arrive(&arrived);
  } else if (threadIdx.x >= 32u) {
    gc_stress(p, slot, &arrived, 1u, 0u);
  }
  if (threadIdx.x == 0u) atomicAdd(prog + 1, 1ull);
}

__global__ void __launch_bounds__(128) parent(gc_params p, unsigned long long *prog) {
  const unsigned slot = gc_slot(p, blockIdx.x);
  volatile unsigned *const mem = p.mem + (size_t)slot * 64u;
  __shared__ unsigned arrived;
  if (threadIdx.x == 0u) arrived = 0u;
  __syncthreads();
  if (threadIdx.x == 0u) {  // t0
    gc_delay(p, slot, 0u);
    mem[0u] = 1u;
    gc_delay(p, slot, 1u);
    ta<<<1, 128, 0, cudaStreamTailLaunch>>>(p, slot, prog);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(prog + 2, 1ull);
    gc_arrive(&arrived);
  } else if (threadIdx.x == 32u) {  // t1
    gc_delay(p, slot, 2u);
    mem[32u] = 1u;
    gc_delay(p, slot, 3u);
    tb<<<1, 128, 0, cudaStreamTailLaunch>>>(p, slot, prog);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(prog + 2, 1ull);
    gc_arrive(&arrived);
  } else if (threadIdx.x >= 64u) {
    gc_stress(p, slot, &arrived, 2u, 0u);
  }
  if (threadIdx.x == 0u) atomicAdd(prog + 0, 1ull);
}

int main(int argc, char **argv) {
  const unsigned n = arg(argc, argv, "instances", 65536), launches = arg(argc, argv, "launches", 4);
  const unsigned delay = arg(argc, argv, "delay", 1u << 20), stress = arg(argc, argv, "stress", 1u << 16);
  const unsigned iters = arg(argc, argv, "iters", 1u << 16), stall = arg(argc, argv, "stall", 60);
  self_limit(arg(argc, argv, "limit", 600));
  // As the suite's runner: room in the launch pool for every pending launch.
  CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 2u * n + 64u));
  size_t pool = 0;
  CHECK(cudaDeviceGetLimit(&pool, cudaLimitDevRuntimePendingLaunchCount));
  unsigned *mem, *regs, *status, *st;
  CHECK(cudaMalloc(&mem, (size_t)n * 64u * 4u));
  CHECK(cudaMalloc(&regs, (size_t)n * 2u * 4u));
  CHECK(cudaMalloc(&status, 4u));
  CHECK(cudaMalloc(&st, (stress ? stress : 1u) * 4u));
  Progress pr;
  pr.init(3);
  const char *names[] = {"parents_done", "tails_done", "launch_errors"};
  printf("START t=%.1f instances=%u launches=%u delay=%u stress=%u pool=%zu\n", now_s(), n, launches, delay,
         stress, pool);
  fflush(stdout);
  double total = 0;
  for (unsigned l = 0; l < launches; ++l) {
    CHECK(cudaMemset(mem, 0, (size_t)n * 64u * 4u));
    gc_params p = {mem, regs, status, st, 0x9e3779b97f4a7c15ull * (l + 1), n, 2654435761u % n | 1u, l, delay,
                   stress, iters};
    if (n & (n - 1)) p.perm_mul = 1u;  // co-prime only guaranteed for powers of two
    parent<<<n, 128>>>(p, pr.dev);
    CHECK(cudaGetLastError());
    char what[64];
    snprintf(what, sizeof what, "launch=%u", l);
    const double s = wait_with_progress(pr, names, stall, what);
    total += s;
    printf("LAUNCH t=%.1f launch=%u seconds=%.3f parents_done=%llu tails_done=%llu launch_errors=%llu\n", now_s(), l,
           s, pr.get(0), pr.get(1), pr.get(2));
    fflush(stdout);
  }
  printf("RESULT instances=%u launches=%u delay=%u stress=%u seconds=%.3f us_per_tail_grid=%.2f\n", n, launches,
         delay, stress, total, 1e6 * total / (2.0 * n * launches));
  return 0;
}
