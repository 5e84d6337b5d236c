// The part of every plain program that is the same in each (`plain.rs`):
// its counters, the wait for a launch, and the JSON lines it prints.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>
#include <cuda_runtime.h>

struct Counters {
  unsigned long long fails[kCalls];
  int first[kCalls];
  unsigned ended[kKernels];
};

// A call's error: counted, the first one kept.
__device__ __forceinline__ void note(Counters *c, int id, cudaError_t e) {
  if (e != cudaSuccess && atomicAdd(&c->fails[id], 1ull) == 0ull) c->first[id] = (int)e;
}

static Counters *g_failed_at_start;
static double wait_limit() { const char *w = getenv("PLAIN_WAIT_S"); return w ? atof(w) : 2.0; }

// Waits for the stream at most PLAIN_WAIT_S seconds: nonzero if it did not complete.
static int wait(cudaStream_t s) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  cudaError_t q;
  while ((q = cudaStreamQuery(s)) == cudaErrorNotReady) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 > wait_limit()) return 1;
  }
  if (q != cudaSuccess) { printf("{\"error\": \"%s\"}\n", cudaGetErrorName(q)); exit(1); }
  return 0;
}

static int fail(const char *program, int launch) {
  printf("{\"program\": \"%s\", \"result\": \"launch-failed\", \"at_launch\": %d, \"error\": \"%s\"}\n",
         program, launch, cudaGetErrorName(cudaGetLastError()));
  return 1;
}

// Blocks of each kernel that reached their end (managed memory, read while the grid is pending).
static void ended(Counters *c, int from, int to) {
  printf("\"ended\": {");
  for (int k = from; k < to; k++)
    printf("%s\"%s\": %u", k == from ? "" : ", ", kKernelNames[k], *(volatile unsigned *)&c->ended[k]);
  printf("}");
}

static int hung(Counters *c, const char *program, int instances, int launches, int drop, int launch, int from, int to) {
  printf("{\"program\": \"%s\", \"instances\": %d, \"launches\": %d, \"drop\": %d, \"result\": \"hung\", \"at_launch\": %d, ",
         program, instances, launches, drop, launch);
  ended(c, from, to);
  printf("}\n");
  fflush(stdout);
  _exit(3);
}

static int done(Counters *c, const char *program, int instances, int launches, int drop) {
  printf("{\"program\": \"%s\", \"instances\": %d, \"launches\": %d, \"drop\": %d, \"result\": \"completed\", \"failures\": [",
         program, instances, launches, drop);
  int any = 0;
  for (int i = 0; i < kCalls; i++) {
    unsigned long long n = c->fails[i] - g_failed_at_start->fails[i];
    if (n) printf("%s{\"call\": %d, \"label\": \"%s\", \"count\": %llu, \"first\": \"%s\"}", any++ ? ", " : "", i,
                  kCallNames[i], n, cudaGetErrorName((cudaError_t)c->first[i]));
  }
  printf("]}\n");
  fflush(stdout);
  memcpy(g_failed_at_start, c, sizeof *c);
  return 0;
}

template <typename... Args>
static int launch_pdl(void (*k)(Args...), unsigned grid, unsigned block, cudaStream_t s, unsigned *mem, Counters *c, int drop) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = s;
  cudaLaunchAttribute a[1];
  a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = a;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, k, (volatile unsigned *)mem, c, drop) != cudaSuccess;
}
