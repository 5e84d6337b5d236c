// Shared by the hang reproducers: the suite's own device helpers
// (kernels/include/gridcheck.cuh: gc_params, gc_delay, gc_stress), progress
// counters in mapped host memory, and a host loop that waits for a launch
// while printing, every second, how far the device got; it tells a long run
// (the counters keep moving) from a stall (they stop).
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "gridcheck.cuh"

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      fprintf(stderr, "%s failed: %s (%d) at line %d\n", #call, cudaGetErrorName(e_), \
              (int)e_, __LINE__);                                                     \
      exit(3);                                                                        \
    }                                                                                 \
  } while (0)

static double now_s() {
  using namespace std::chrono;
  static const auto t0 = steady_clock::now();
  return duration<double>(steady_clock::now() - t0).count();
}

// Command line: key=value pairs.
static unsigned arg(int argc, char **argv, const char *key, unsigned dflt) {
  const size_t n = strlen(key);
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=') return (unsigned)strtoul(argv[i] + n + 1, nullptr, 0);
  return dflt;
}

// A reproducer must never outlive the step that started it. GNU `timeout`
// runs its command in a process group of its own, so a caller that ends
// its step by killing its own process group (or kills `timeout` itself with
// SIGKILL) leaves the program running on the GPU, where it slows down
// whatever runs next. Two guards: the program exits when its parent dies
// (PR_SET_PDEATHSIG), and by itself after `seconds` (exit status 124, like
// `timeout`).
static void self_limit(unsigned seconds) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::thread([seconds] {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    printf("LIMIT %u s reached: exiting\n", seconds);
    fflush(stdout);
    _exit(124);
  }).detach();
}

// Counters the kernels bump (atomicAdd on mapped host memory): what the
// host can read while the device is still busy.
struct Progress {
  unsigned long long *host = nullptr, *dev = nullptr;
  int n = 0;
  void init(int counters) {
    n = counters;
    CHECK(cudaHostAlloc(&host, n * sizeof(unsigned long long), cudaHostAllocMapped));
    memset(host, 0, n * sizeof(unsigned long long));
    CHECK(cudaHostGetDevicePointer(&dev, host, 0));
  }
  unsigned long long get(int i) const { return ((volatile unsigned long long *)host)[i]; }
};

// Waits for everything launched so far. Prints the counters every second;
// if none moved for `stall_s` seconds, prints STALL and exits 2 (the
// script's `timeout` is the backstop). Returns the seconds waited.
static double wait_with_progress(const Progress &pr, const char *const *names, unsigned stall_s,
                                 const char *what) {
  const double t0 = now_s();
  double last_move = t0, last_print = t0;
  unsigned long long last[8] = {0};
  for (int i = 0; i < pr.n; ++i) last[i] = pr.get(i);
  for (;;) {
    cudaError_t q = cudaStreamQuery(0);
    if (q == cudaSuccess) break;
    if (q != cudaErrorNotReady) {
      fprintf(stderr, "%s: cudaStreamQuery: %s\n", what, cudaGetErrorName(q));
      exit(3);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double t = now_s();
    bool moved = false;
    for (int i = 0; i < pr.n; ++i) {
      const unsigned long long v = pr.get(i);
      if (v != last[i]) moved = true;
      last[i] = v;
    }
    if (moved) last_move = t;
    if (t - last_print >= 1.0) {
      printf("PROGRESS t=%.1f %s", t, what);
      for (int i = 0; i < pr.n; ++i) printf(" %s=%llu", names[i], last[i]);
      printf("\n");
      fflush(stdout);
      last_print = t;
    }
    if (t - last_move >= stall_s) {
      printf("STALL t=%.1f %s: no counter moved for %u s;", t, what, stall_s);
      for (int i = 0; i < pr.n; ++i) printf(" %s=%llu", names[i], last[i]);
      printf("\n");
      fflush(stdout);
      exit(2);
    }
  }
  CHECK(cudaGetLastError());
  return now_s() - t0;
}
