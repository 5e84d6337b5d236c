// PDL under load: N streams (1, 2, 4, ..., 64), each a chain of CHAIN
// launches of `chain_link`, every one launched with
// cudaLaunchAttributeProgrammaticStreamSerialization and all enqueued,
// link k of every stream before link k + 1 of any, before the program waits
// for any. Each link triggers at once, so that the next link of its stream
// may launch while it runs, and writes its sequence number k; the next link
// reads it. Three variants, each over every N:
//   wait:    each link waits (cudaGridDependencySynchronize) before it
//            reads: its predecessor must have written k - 1;
//   nowait:  no wait: reading a stale number is allowed, only counted;
//   cdp:     as wait, and each link launches a child grid from the device
//            that writes k too: after its wait the next link must see the
//            child's number, since a grid completes only with its children.
// Every launch's return, every stream's synchronization, the order seen by
// each link and the first failing count are outputs. The program keeps its
// own time: a configuration not complete within CONFIG_MS is reported hung
// (the outputs printed, then the process ends without waiting for the GPU),
// and no configuration starts after BUDGET_MS.
#include <chrono>
#include <cstring>
#include <unistd.h>

#include "gridcheck_pdl_pair.cuh"

#define CHAIN 16
#define MAX_STREAMS 64
#define BUDGET_MS 8000
#define CONFIG_MS 3000

enum { V_WAIT, V_NOWAIT, V_CDP, VARIANTS };
static const char *VARIANT_NAMES[VARIANTS] = {"wait", "nowait", "cdp"};

struct Counters {
  unsigned out_of_order[VARIANTS];
  unsigned child_out_of_order;
  unsigned child_launch_errors;
};

__global__ void child(unsigned *seq, unsigned s, unsigned k) {
  volatile unsigned *q = seq;
  q[2 * s + 1] = k;
}

__global__ void chain_link(unsigned *seq, Counters *c, unsigned s, unsigned k, int variant) {
  cudaTriggerProgrammaticLaunchCompletion();
  if (variant != V_NOWAIT) cudaGridDependencySynchronize();
  if (threadIdx.x != 0) return;
  volatile unsigned *q = seq;
  if (k > 0 && q[2 * s] != k - 1) atomicAdd(&c->out_of_order[variant], 1u);
  if (variant == V_CDP) {
    if (k > 0 && q[2 * s + 1] != k - 1) atomicAdd(&c->child_out_of_order, 1u);
    child<<<1, 1>>>(seq, s, k);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&c->child_launch_errors, 1u);
  }
  q[2 * s] = k;
}

static std::chrono::steady_clock::time_point start_time;
static long elapsed_ms() {
  return (long)std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now() - start_time)
      .count();
}

// What the runs saw, printed once at the end (or when a configuration hangs).
struct Seen {
  unsigned max_streams[VARIANTS];
  unsigned launch_errors, completion_errors;
  unsigned first_failing_streams, first_failing_variant, first_failing_launch;
  unsigned codes[3], distinct_codes;
  unsigned hung;
  Counters counters;
};
static Seen seen;

static void note_error(unsigned code, unsigned streams, int variant, unsigned launch) {
  if (seen.first_failing_streams == 0) {
    seen.first_failing_streams = streams;
    seen.first_failing_variant = (unsigned)variant + 1;
    seen.first_failing_launch = launch;
  }
  for (unsigned i = 0; i < seen.distinct_codes && i < 3; i++)
    if (seen.codes[i] == code) return;
  if (seen.distinct_codes < 3) seen.codes[seen.distinct_codes] = code;
  seen.distinct_codes++;
}

static void print_outputs() {
  for (int v = 0; v < VARIANTS; v++) {
    char key[64];
    snprintf(key, sizeof key, "%s_max_streams", VARIANT_NAMES[v]);
    gc_output(key, seen.max_streams[v]);
  }
  gc_output("launch_errors", seen.launch_errors);
  gc_output("completion_errors", seen.completion_errors);
  gc_output("first_failing_streams", seen.first_failing_streams);
  gc_output("first_failing_variant", seen.first_failing_variant);
  gc_output("first_failing_launch", seen.first_failing_launch);
  gc_output("error_code_1", seen.codes[0]);
  gc_output("error_code_2", seen.codes[1]);
  gc_output("error_code_3", seen.codes[2]);
  gc_output("distinct_error_codes", seen.distinct_codes);
  gc_output("hung_at_streams", seen.hung);
  gc_output("wait_out_of_order", seen.counters.out_of_order[V_WAIT]);
  gc_output("nowait_out_of_order", seen.counters.out_of_order[V_NOWAIT]);
  gc_output("cdp_out_of_order", seen.counters.out_of_order[V_CDP]);
  gc_output("cdp_child_out_of_order", seen.counters.child_out_of_order);
  gc_output("cdp_child_launch_errors", seen.counters.child_launch_errors);
  gc_output("elapsed_ms", (unsigned)elapsed_ms());
}

// Waits for every stream until `deadline_ms` (since the start); false when
// one is still running then.
static bool wait_streams(cudaStream_t *s, unsigned n, long deadline_ms, unsigned streams,
                         int variant) {
  for (unsigned i = 0; i < n; i++) {
    cudaError_t e;
    while ((e = cudaStreamQuery(s[i])) == cudaErrorNotReady) {
      if (elapsed_ms() > deadline_ms) return false;
      usleep(200);
    }
    if (e != cudaSuccess) {
      seen.completion_errors++;
      note_error(e, streams, variant, 0xffffffffu);
    }
  }
  return true;
}

// One configuration: `n` streams, CHAIN links each, all enqueued, then
// waited for. False when it did not complete in time.
static bool run_config(cudaStream_t *s, unsigned n, int variant, unsigned *seq, Counters *c) {
  GC_SETUP(cudaMemset(seq, 0xff, 2 * MAX_STREAMS * sizeof(unsigned)));
  GC_SETUP(cudaDeviceSynchronize());
  unsigned launched = 0;
  for (unsigned k = 0; k < CHAIN; k++) {
    for (unsigned i = 0; i < n; i++) {
      cudaError_t e = gc_launch_pdl(chain_link, dim3(1), dim3(32), s[i], seq, c, i, k, variant);
      if (e != cudaSuccess) {
        seen.launch_errors++;
        note_error(e, n, variant, launched);
        (void)cudaGetLastError();
      }
      launched++;
    }
  }
  return wait_streams(s, n, elapsed_ms() + CONFIG_MS, n, variant);
}

// Copies the device's counters into `seen`, on a stream of its own, waiting
// until `deadline_ms` at most (a hung configuration may hold the GPU): on
// time out, or an error, every counter reads 0xffffffff.
static void read_counters_before(Counters *c, long deadline_ms) {
  cudaStream_t r;
  static Counters h;  // static: a copy still in flight at the deadline writes here
  memset(&seen.counters, 0xff, sizeof seen.counters);
  if (cudaStreamCreateWithFlags(&r, cudaStreamNonBlocking) != cudaSuccess) return;
  if (cudaMemcpyAsync(&h, c, sizeof h, cudaMemcpyDeviceToHost, r) != cudaSuccess) return;
  cudaError_t e;
  while ((e = cudaStreamQuery(r)) == cudaErrorNotReady) {
    if (elapsed_ms() > deadline_ms) return;
    usleep(200);
  }
  if (e == cudaSuccess) seen.counters = h;
}

int main() {
  start_time = std::chrono::steady_clock::now();
  unsigned *seq;
  Counters *c;
  cudaStream_t s[MAX_STREAMS];
  GC_SETUP(cudaMalloc(&seq, 2 * MAX_STREAMS * sizeof(unsigned)));
  GC_SETUP(cudaMalloc(&c, sizeof(Counters)));
  GC_SETUP(cudaMemset(c, 0, sizeof(Counters)));
  for (int i = 0; i < MAX_STREAMS; i++) GC_SETUP(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
  for (int v = 0; v < VARIANTS; v++) {
    for (unsigned n = 1; n <= MAX_STREAMS && elapsed_ms() < BUDGET_MS; n *= 2) {
      if (!run_config(s, n, v, seq, c)) {
        seen.hung = n;
        read_counters_before(c, elapsed_ms() + 500);
        print_outputs();
        fflush(stdout);
        _exit(0);
      }
      seen.max_streams[v] = n;
    }
  }
  read_counters_before(c, elapsed_ms() + CONFIG_MS);
  print_outputs();
  return 0;
}
