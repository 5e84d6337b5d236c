// gridcheck: helpers for host tests (kind: host), hand-written.
//
// A host test is a whole CUDA program. It reports each of its named outputs
// once, on standard output, as `gridcheck-output <name> <value>`; the harness
// (conformance/src/worker.rs) reads those lines and checks the values
// against the test's `expect`. A program that exits non-zero, or does not
// print every output, fails its trial with what it printed. A program that
// cannot run on this host prints `gridcheck-not-run <reason>` instead of any
// output and exits 0: its trial is recorded not run, with the reason.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// Reports one output: a 32-bit word (a cudaError_t, a count, a flag).
static inline void gc_output(const char *name, unsigned int value) {
  printf("gridcheck-output %s %u\n", name, value);
  fflush(stdout);
}

// A setup step the test is not about: on error, say which and exit non-zero
// (the trial fails with this message instead of checking outputs).
#define GC_SETUP(call)                                                        \
  do {                                                                        \
    cudaError_t gc_err_ = (call);                                             \
    if (gc_err_ != cudaSuccess) {                                             \
      fprintf(stderr, "setup step failed: %s: %s (%d) at %s:%d\n", #call,     \
              cudaGetErrorName(gc_err_), (int)gc_err_, __FILE__, __LINE__);   \
      exit(3);                                                                \
    }                                                                         \
  } while (0)

// A test that needs `n` devices, on a host with fewer: says so and exits 0
// before any output (the trial is recorded not run, never passed).
static inline void gc_need_devices(int n) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  if (count < n) {
    printf("gridcheck-not-run needs %d devices, found %d\n", n, count);
    fflush(stdout);
    exit(0);
  }
}
