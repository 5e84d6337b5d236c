// gridcheck: the CCCL library programs' shared host side, hand-written.
//
// Each program (kernels/cccl/<program>.cu) defines cases, one per algorithm
// it calls (a `lib::case_t`), and ends with `LIB_MAIN(...)`. This header
// parses the command line, runs the calls in the chosen environment, checks
// every call's result on the host and prints one JSON line on stdout (and
// nothing else there). kernels/cccl/README.md is the manual; the Rust side is
// crates/library (`gridcheck_library::Outcome` reads the JSON line).
//
//   <exe> --algorithm A --size N --reps R --env E --seed S [--device D]
//   <exe> --serve [--device D]
//
// Exit status: 0 when every call ran (wrong results are in the line), 2 on a
// bad command line, 3 on a CUDA error (the line says which, and after how
// many checked calls). No device: `gridcheck-not-run <reason>`, exit 0.
//
// `--serve` (a staying process, one context for many cases): once the
// device is ready it prints `gridcheck-serve`, then reads one case a line on
// stdin (the first form's flags, without --device) and answers each with its
// line, freeing everything the case allocated before the next. A CUDA error
// still prints the line and exits 3; the end of stdin exits 0.
#pragma once

#include <cub/util_device.cuh>
#include <cub/version.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace lib {

// Bounds on the command line: memory and time stay bounded for any input.
constexpr unsigned long long MAX_SIZE = 1ull << 28;
constexpr unsigned long long MAX_REPS = 1000000ull;
// Output slots of one batch (back-to-back and the loaded environments): at
// most this many, and at most OUT_BUDGET bytes of outputs together.
constexpr size_t MAX_SLOTS = 64;
constexpr size_t OUT_BUDGET = 1ull << 30;
// A load kernel stops when the host sets its flag, or after this long.
constexpr unsigned long long LOAD_MAX_NS = 60ull * 1000 * 1000 * 1000;
// The stress buffer: 2^25 words (128 MiB, more than an H100's or H200's L2).
constexpr unsigned int STRESS_WORDS = 1u << 25;

enum env_t { ENV_QUIET, ENV_BACK_TO_BACK, ENV_STRESS, ENV_BURST, ENV_DELAY };

// What runs beside the calls in a loaded environment. `GRIDCHECK_LIB_LOAD`
// (a control for separating a failure, see README.md): unset, the
// environment's own load; `none`, the environment's allocations and no
// kernel; `spin`, a kernel of the same blocks that touches no memory.
enum load_kind_t { LOAD_AS_ENV, LOAD_NONE, LOAD_SPIN };

struct args_t {
  std::string algorithm;
  unsigned long long size = 0;
  unsigned long long reps = 0;
  env_t env = ENV_QUIET;
  std::string env_name;
  unsigned long long seed = 0;
  int device = 0;
  load_kind_t load = LOAD_AS_ENV;  // GRIDCHECK_LIB_LOAD
  // GRIDCHECK_LIB_SYNC=1: every call checked before the next is queued, so
  // an error's `after_calls` is the call that failed (its shape follows).
  bool sync = false;
  bool serve = false;  // --serve: a staying process (see the top of this file)
};

// splitmix64: the inputs' and the delays' seeded generator.
struct rng_t {
  unsigned long long s;
  explicit rng_t(unsigned long long seed) : s(seed) {}
  unsigned long long next() {
    unsigned long long z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform enough in [0, n) for n > 0.
  unsigned int below(unsigned int n) { return (unsigned int)(next() % n); }
};

// One algorithm of a program. The harness calls it `reps` times on `size`
// items; call k uses input shape k % shapes() (all-equal keys, sorted, ...),
// so every run covers every shape.
struct case_t {
  virtual ~case_t() {}
  virtual int shapes() const { return 1; }
  virtual const char *shape_name(int) const { return "random"; }
  // Host inputs and references, device inputs of every shape, temporary storage.
  virtual cudaError_t init(size_t n, unsigned long long seed) = 0;
  // Bytes of one call's outputs.
  virtual size_t out_bytes() const = 0;
  // Queues one call on `s` writing into `out` (out_bytes() bytes).
  virtual cudaError_t call(int shape, void *out, cudaStream_t s) = 0;
  // Checks one call's outputs (a host copy); on a wrong result says where.
  virtual bool check(int shape, const void *out, std::string &why) = 0;
};

// An algorithm of a program: its name, its case, or (make == nullptr) why
// this release cannot call it (the program then says it did not run).
struct entry_t {
  const char *name;
  case_t *(*make)();
  const char *absent;
};

// The device allocations of the case running now, freed when it ends (a
// staying process runs the next case with the memory it found).
static std::vector<void *> &allocations() {
  static std::vector<void *> all;
  return all;
}

// A device allocation that says which one failed.
template <typename T>
static cudaError_t alloc(T **p, size_t count) {
  cudaError_t e = cudaMalloc((void **)p, std::max<size_t>(1, count) * sizeof(T));
  if (e == cudaSuccess) allocations().push_back((void *)*p);
  return e;
}

template <typename T>
static cudaError_t upload(T **d, const std::vector<T> &h) {
  cudaError_t e = alloc(d, h.size());
  if (e != cudaSuccess) return e;
  return cudaMemcpy(*d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
}

// "index 17: got 5 want 3" for the first element where `got` and `want` differ.
template <typename T>
static bool same(const T *got, const std::vector<T> &want, std::string &why) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      why = "index " + std::to_string(i) + ": got " + std::to_string(got[i]) + " want " +
            std::to_string(want[i]);
      return false;
    }
  }
  return true;
}

// A pairs sort's values (each key's input index): a permutation of the
// indices, each naming an input key equal to the output key beside it, and,
// for a stable sort, increasing within a run of equal keys.
static bool values_follow_keys(const unsigned int *k, const unsigned int *v,
                               const std::vector<unsigned int> &in, bool stable, std::string &why) {
  const size_t n = in.size();
  std::vector<unsigned char> seen(n, 0);
  // The message is built only for the index that is wrong: a string per
  // index would cost more than the check itself at 10^6 items.
  auto at = [](size_t i) { return "index " + std::to_string(i) + ": "; };
  for (size_t i = 0; i < n; ++i) {
    if (v[i] >= n || seen[v[i]]) {
      why = at(i) + "value " + std::to_string(v[i]) + (v[i] >= n ? " is no input index" : " twice");
      return false;
    }
    seen[v[i]] = 1;
    if (in[v[i]] != k[i]) {
      why = at(i) + "value " + std::to_string(v[i]) + " names key " + std::to_string(in[v[i]]) +
            ", not " + std::to_string(k[i]);
      return false;
    }
    if (stable && i > 0 && k[i - 1] == k[i] && v[i - 1] > v[i]) {
      why = at(i) + "not stable: value " + std::to_string(v[i]) + " after " + std::to_string(v[i - 1]);
      return false;
    }
  }
  return true;
}

// Keys in one of the sort shapes: 0 random, 1 all equal, 2 sorted, 3 reverse
// sorted, 4 few distinct (16 values).
static const char *const SORT_SHAPES[] = {"random", "all-equal", "sorted", "reverse-sorted",
                                          "few-distinct"};
constexpr int SORT_SHAPE_COUNT = 5;

static std::vector<unsigned int> sort_keys(int shape, size_t n, unsigned long long seed) {
  rng_t r(seed ^ (0x5151ull * (unsigned long long)(shape + 1)));
  std::vector<unsigned int> k(n);
  for (size_t i = 0; i < n; ++i) {
    switch (shape) {
      case 1: k[i] = 0x2a2a2a2au; break;
      case 2: k[i] = (unsigned int)i * 3u; break;
      case 3: k[i] = (unsigned int)(n - i) * 3u; break;
      case 4: k[i] = r.below(16u); break;
      default: k[i] = (unsigned int)r.next(); break;
    }
  }
  return k;
}

[[noreturn]] static void usage(const std::string &msg) {
  fprintf(stderr,
          "error: %s\nusage: <program> --algorithm A --size N --reps R "
          "--env quiet|back-to-back|stress|burst|delay --seed S [--device D]\n"
          "       <program> --serve [--device D]\n",
          msg.c_str());
  exit(2);
}

static unsigned long long number(const char *flag, const char *text, unsigned long long max) {
  char *end = nullptr;
  if (text[0] < '0' || text[0] > '9') usage(std::string(flag) + ": `" + text + "` is not a number");
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || v > max)
    usage(std::string(flag) + ": `" + text + "` is not a number up to " + std::to_string(max));
  return v;
}

// The command line, or (`request`) one case a staying process read: the
// same flags, without --serve and --device (the process's).
static args_t parse(int argc, char **argv, bool request = false) {
  args_t a;
  bool seen[6] = {false, false, false, false, false, false};
  for (int i = 1; i < argc; i += 2) {
    std::string f = argv[i];
    if (f == "--serve" && !request) {
      a.serve = true;
      i -= 1;  // a flag without a value
      continue;
    }
    if (request && f == "--device") usage("a case read by --serve cannot name --device");
    if (i + 1 >= argc) usage(f + " needs a value");
    const char *v = argv[i + 1];
    if (f == "--algorithm") a.algorithm = v, seen[0] = true;
    else if (f == "--size") a.size = number("--size", v, MAX_SIZE), seen[1] = true;
    else if (f == "--reps") a.reps = number("--reps", v, MAX_REPS), seen[2] = true;
    else if (f == "--env") {
      std::string e = v;
      seen[3] = true;
      a.env_name = e;
      if (e == "quiet") a.env = ENV_QUIET;
      else if (e == "back-to-back") a.env = ENV_BACK_TO_BACK;
      else if (e == "stress") a.env = ENV_STRESS;
      else if (e == "burst") a.env = ENV_BURST;
      else if (e == "delay") a.env = ENV_DELAY;
      else usage("--env: `" + e + "` is not one of quiet, back-to-back, stress, burst, delay");
    } else if (f == "--seed") a.seed = number("--seed", v, ~0ull), seen[4] = true;
    else if (f == "--device") a.device = (int)number("--device", v, 1024), seen[5] = true;
    else usage("unknown flag `" + f + "`");
  }
  const char *names[5] = {"--algorithm", "--size", "--reps", "--env", "--seed"};
  for (int i = 0; i < 5; ++i) {
    if (a.serve && seen[i]) usage("--serve reads its cases from stdin: " + std::string(names[i]) + " is not taken with it");
    if (!a.serve && !seen[i]) usage(std::string(names[i]) + " is required");
  }
  if (a.serve) return a;
  const char *load = getenv("GRIDCHECK_LIB_LOAD");
  if (load != nullptr && strcmp(load, "none") == 0) a.load = LOAD_NONE;
  else if (load != nullptr && strcmp(load, "spin") == 0) a.load = LOAD_SPIN;
  else if (load != nullptr && load[0] != '\0')
    usage(std::string("GRIDCHECK_LIB_LOAD: `") + load + "` is not one of none, spin");
  const char *sync = getenv("GRIDCHECK_LIB_SYNC");
  a.sync = sync != nullptr && strcmp(sync, "1") == 0;
  if (a.size == 0) usage("--size must be at least 1");
  if (a.reps == 0) usage("--reps must be at least 1");
  return a;
}

static std::string json_string(const std::string &s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if ((unsigned char)c < 0x20) o += ' ';
    else o += c;
  }
  return o + "\"";
}

// ---- The load on another stream (stress, burst, delay) ----------------------

// The load's control words, in mapped host memory: the host sets `stop`;
// the kernel sets `started` once running and counts its rounds in `rounds`.
struct load_ctl_t {
  volatile unsigned int stop;
  volatile unsigned int started;
  volatile unsigned long long rounds;
};

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ unsigned long long mix64(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Whether the load goes on: the host has not set the flag, and neither the
// time bound nor the round bound is reached (a load kernel never hangs).
__device__ __forceinline__ bool load_goes_on(load_ctl_t *ctl, unsigned long long t0,
                                             unsigned long long round) {
  return ctl->stop == 0u && round < 100000000ull && global_ns() - t0 < LOAD_MAX_NS;
}

__device__ __forceinline__ void load_started(load_ctl_t *ctl) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    ctl->started = 1u;
    __threadfence_system();
  }
}

// stress (the suite's `gc_stress` shape): every thread stores to and loads
// from random words of a buffer larger than L2, so the algorithm's loads and
// stores meet a memory system kept busy. With `sleep_ns`, a random sleep of
// up to that long between rounds (the delay environment's load).
__global__ void stress_kernel(load_ctl_t *ctl, unsigned int *buf, unsigned int mask,
                              unsigned long long seed, unsigned int sleep_ns) {
  load_started(ctl);
  const unsigned long long t0 = global_ns();
  volatile unsigned int *s = buf;
  unsigned long long r = mix64(seed ^ ((unsigned long long)blockIdx.x << 20) ^ threadIdx.x);
  unsigned int acc = 0u;
  for (unsigned long long round = 0; load_goes_on(ctl, t0, round); ++round) {
    for (int i = 0; i < 64; ++i) {
      r = mix64(r);
      s[(unsigned int)r & mask] = (unsigned int)round;
      acc += s[(unsigned int)(r >> 32) & mask];
    }
    if (sleep_ns != 0u) __nanosleep((unsigned int)(r % sleep_ns));
    if (blockIdx.x == 0 && threadIdx.x == 0) ctl->rounds = round + 1;
  }
  if (acc == 0xdeadbeefu) buf[0] = acc;  // keeps acc live; practically never taken
}

// burst (the suite's `line_burst` shape): fire-and-forget atomic adds of 0
// (red.add) to the 128-byte lines of the algorithm's output slots, a warp a
// line (each lane its own word, so each line holds a queue of 32), before
// and while the calls run. Adding 0 leaves every value as it is, and an
// atomic is indivisible at L2, so no store of the algorithm can fall between
// its read and its write: the outputs stay the algorithm's, but their lines
// hold queues of atomics when the algorithm's stores arrive.
__global__ void burst_kernel(load_ctl_t *ctl, unsigned int *out, unsigned long long words) {
  load_started(ctl);
  const unsigned long long t0 = global_ns();
  const unsigned long long lines = (words + 31ull) / 32ull;
  const unsigned long long warps = (unsigned long long)gridDim.x * blockDim.x / 32ull;
  const unsigned long long warp = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) / 32ull;
  const unsigned long long lane = threadIdx.x % 32u;
  for (unsigned long long round = 0; load_goes_on(ctl, t0, round); ++round) {
    unsigned long long k = 0;
    for (unsigned long long line = warp; line < lines; line += warps, ++k) {
      const unsigned long long w = line * 32ull + lane;
      if (w < words)
        asm volatile("red.relaxed.gpu.global.add.u32 [%0], 0;" ::"l"(__cvta_generic_to_global(out + w))
                     : "memory");
      if ((k & 255ull) == 255ull && ctl->stop != 0u) return;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) ctl->rounds = round + 1;
  }
}

// The `spin` load (GRIDCHECK_LIB_LOAD=spin, a control): the same blocks as
// the environment's load, resident as long, touching no memory but its
// control words. It separates a failure that needs a kernel beside the
// algorithm from one that needs the load's memory traffic.
__global__ void idle_kernel(load_ctl_t *ctl) {
  load_started(ctl);
  const unsigned long long t0 = global_ns();
  for (unsigned long long round = 0; load_goes_on(ctl, t0, round); ++round) {
    __nanosleep(1000u);
    if (blockIdx.x == 0 && threadIdx.x == 0) ctl->rounds = round + 1;
  }
}

// delay: a seeded random spin on the calls' own stream before each call.
__global__ void spin_kernel(unsigned long long cycles) {
  const long long start = clock64();
  while ((unsigned long long)(clock64() - start) < cycles) {
  }
}

// ---- Running the calls ------------------------------------------------------

// PDL as the headers decided it: `_CCCL_HAS_PDL`, an object-like macro in
// CCCL 3.0 (which ignores CCCL_DISABLE_PDL; the -nopdl variant's patch sets
// it to 0) and a function-like one from 3.1 on (0 under CCCL_DISABLE_PDL).
#if CCCL_VERSION < 3001000
#  if _CCCL_HAS_PDL
constexpr bool PDL = true;
#  else
constexpr bool PDL = false;
#  endif
#elif _CCCL_HAS_PDL()
constexpr bool PDL = true;
#else
constexpr bool PDL = false;
#endif

struct outcome_t {
  unsigned long long calls = 0;  // calls whose results were checked
  unsigned long long wrong = 0;  // of those, calls with a wrong result
  std::string first_wrong;       // "call K (shape): index I: got X want Y"; empty: none
  double gpu_ms = 0.0;           // the calls' stream, between events around the calls
  long long pdl_edges = -1;      // PDL launches of one call, measured (-1: not measured)
};

static void print_line(const args_t &a, const outcome_t &o, int ptx, const char *error) {
  printf("{\"algorithm\":%s,\"size\":%llu,\"env\":%s,\"reps\":%llu,\"calls\":%llu,\"wrong\":%llu,"
         "\"first_wrong\":%s,\"error\":%s,\"after_calls\":%s,\"pdl\":%s,\"ptx_version\":%d,"
         "\"cccl\":\"%d.%d.%d\",\"gpu_ms\":%.3f,\"pdl_edges\":%s%s%s}\n",
         json_string(a.algorithm).c_str(), a.size, json_string(a.env_name).c_str(), a.reps, o.calls,
         o.wrong, o.first_wrong.empty() ? "null" : json_string(o.first_wrong).c_str(),
         error ? json_string(error).c_str() : "null",
         error ? std::to_string(o.calls).c_str() : "null", PDL ? "true" : "false", ptx,
         (int)CCCL_MAJOR_VERSION, (int)CCCL_MINOR_VERSION, (int)CCCL_PATCH_VERSION, o.gpu_ms,
         o.pdl_edges < 0 ? "null" : std::to_string(o.pdl_edges).c_str(),
         a.load == LOAD_NONE ? ",\"load\":\"none\"" : a.load == LOAD_SPIN ? ",\"load\":\"spin\"" : "",
         a.sync ? ",\"sync_each\":true" : "");
  fflush(stdout);
}

// A CUDA error ends the run: the line names it and how many calls had been
// checked before it; exit 3.
#define LIB_TRY(call)                                         \
  do {                                                        \
    cudaError_t lib_err_ = (call);                            \
    if (lib_err_ != cudaSuccess) {                            \
      fprintf(stderr, "%s failed at %s:%d\n", #call, __FILE__, __LINE__); \
      print_line(a, o, ptx, cudaGetErrorName(lib_err_));      \
      exit(3);                                                \
    }                                                         \
  } while (0)

struct load_t {
  load_ctl_t *ctl = nullptr;
  load_ctl_t *d_ctl = nullptr;
  cudaStream_t s = nullptr;
  unsigned int *buf = nullptr;
};

// Starts the environment's load on its own stream of the same context and
// waits (at most 5 s) until it runs, so that it is there before the first call.
static cudaError_t start_load(const args_t &a, load_t &L, void *ring, size_t ring_bytes) {
  int sms = 1;
  cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, a.device);
  if (e == cudaSuccess) e = cudaHostAlloc((void **)&L.ctl, sizeof(load_ctl_t), cudaHostAllocMapped);
  if (e != cudaSuccess) return e;
  memset((void *)L.ctl, 0, sizeof(load_ctl_t));
  e = cudaHostGetDevicePointer((void **)&L.d_ctl, (void *)L.ctl, 0);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&L.s, cudaStreamNonBlocking);
  if (e != cudaSuccess) return e;
  // A quarter of the SMs: the algorithm's kernels keep the rest.
  const unsigned int blocks = (unsigned int)std::max(1, sms / 4);
  const unsigned int threads = a.env == ENV_BURST ? 256u : 128u;
  const unsigned int words = a.env == ENV_STRESS ? STRESS_WORDS : (1u << 20);
  if (a.env != ENV_BURST && (e = alloc(&L.buf, words)) != cudaSuccess) return e;
  if (a.load == LOAD_NONE) {
    L.ctl->started = 1u;  // nothing to wait for: stop_load finds an idle stream
    return cudaSuccess;
  }
  if (a.load == LOAD_SPIN) {
    idle_kernel<<<blocks, threads, 0, L.s>>>(L.d_ctl);
  } else if (a.env == ENV_BURST) {
    burst_kernel<<<blocks, threads, 0, L.s>>>(L.d_ctl, (unsigned int *)ring, ring_bytes / 4);
  } else {
    stress_kernel<<<blocks, threads, 0, L.s>>>(L.d_ctl, L.buf, words - 1u, a.seed ^ 0x10adull,
                                              a.env == ENV_DELAY ? 20000u : 0u);
  }
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  const auto t0 = std::chrono::steady_clock::now();
  while (L.ctl->started == 0u && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5))
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  if (L.ctl->started == 0u) fprintf(stderr, "the load kernel had not started after 5 s\n");
  return cudaSuccess;
}

static cudaError_t stop_load(load_t &L) {
  L.ctl->stop = 1u;
  cudaError_t e = cudaStreamSynchronize(L.s);
  fprintf(stderr, "load: %llu rounds\n", (unsigned long long)L.ctl->rounds);
  return e;
}

// How many of one call's launches are PDL launches, measured: the call is
// captured into a graph (not run), where each launch with the PDL attribute
// becomes a programmatic edge. -1 when the call cannot be captured (a call
// that does what a capture forbids, such as waiting for the device on the
// host), with the reason on
// stderr. This, not what the headers' macros say, tells whether a `-nopdl`
// build launches without PDL.
static long long pdl_edges(case_t &c, void *out, cudaStream_t s) {
  cudaGraph_t g = nullptr;
  cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
  if (e == cudaSuccess) {
    const cudaError_t call = c.call(0, out, s);
    e = cudaStreamEndCapture(s, &g);
    if (call != cudaSuccess) e = call;
  }
  size_t n = 0;
  if (e == cudaSuccess) e = cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &n);
  std::vector<cudaGraphNode_t> from(n), to(n);
  std::vector<cudaGraphEdgeData> data(n);
  if (e == cudaSuccess && n > 0) e = cudaGraphGetEdges(g, from.data(), to.data(), data.data(), &n);
  long long programmatic = 0;
  for (size_t i = 0; e == cudaSuccess && i < n; ++i)
    programmatic += data[i].type == cudaGraphDependencyTypeProgrammatic ? 1 : 0;
  if (g != nullptr) cudaGraphDestroy(g);
  if (e != cudaSuccess) {
    fprintf(stderr, "pdl_edges: one call could not be captured (%s)\n", cudaGetErrorName(e));
    cudaGetLastError();  // a capture's error is not the context's: clear it
    return -1;
  }
  return programmatic;
}

static void record_wrong(outcome_t &o, case_t &c, unsigned long long k, int shape,
                         const std::string &why) {
  if (o.wrong++ == 0)
    o.first_wrong = "call " + std::to_string(k) + " (" + c.shape_name(shape) + "): " + why;
}

// Whether this process can run cases on `device`: `not_run` says why not
// (the `gridcheck-not-run` line's reason), `error` is a CUDA error of the
// setup, `ptx` what cub::PtxVersion reports.
struct ready_t {
  std::string not_run;
  cudaError_t error = cudaSuccess;
  int ptx = 0;
};

static ready_t device_ready(int device) {
  ready_t r;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    r.not_run = "no CUDA device";
    return r;
  }
  if (device >= devices) {
    r.not_run = "no device " + std::to_string(device) + " (" + std::to_string(devices) + " devices)";
    return r;
  }
  if ((r.error = cudaSetDevice(device)) != cudaSuccess) return r;
  cudaError_t pe = cub::PtxVersion(r.ptx, device);
  if (pe == cudaErrorNoKernelImageForDevice || pe == cudaErrorUnsupportedPtxVersion) {
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    r.not_run = std::string(cudaGetErrorName(pe)) + " for this device (sm_" + std::to_string(major) +
                std::to_string(minor) + ")";
    return r;
  }
  r.error = pe;
  return r;
}

// The entry named by `--algorithm`, or a usage error listing the names.
static const entry_t &find_entry(const args_t &a, const entry_t *entries, size_t count) {
  std::string names;
  for (size_t i = 0; i < count; ++i) {
    if (a.algorithm == entries[i].name) return entries[i];
    names += std::string(i ? ", " : "") + entries[i].name;
  }
  usage("--algorithm: `" + a.algorithm + "` is not one of: " + names);
}

// Everything a case made: its streams, events, load and device memory. A
// staying process's next case starts from the memory the first one found.
static cudaError_t release(case_t *c, cudaStream_t s, cudaEvent_t ev0, cudaEvent_t ev1,
                           load_t &load) {
  cudaError_t e = cudaDeviceSynchronize();
  delete c;
  for (void *p : allocations()) {
    const cudaError_t f = cudaFree(p);
    if (e == cudaSuccess) e = f;
  }
  allocations().clear();
  const cudaError_t handles[] = {cudaStreamDestroy(s), cudaEventDestroy(ev0), cudaEventDestroy(ev1),
                                 load.s ? cudaStreamDestroy(load.s) : cudaSuccess,
                                 load.ctl ? cudaFreeHost((void *)load.ctl) : cudaSuccess};
  for (cudaError_t f : handles)
    if (e == cudaSuccess) e = f;
  return e;
}

// One case: its calls in its environment, checked; prints its line. A CUDA
// error prints the line and exits 3.
static void run_case(const args_t &a, const entry_t &entry, int ptx) {
  outcome_t o;
  case_t *c = entry.make();
  LIB_TRY(c->init((size_t)a.size, a.seed));
  const size_t stride = (c->out_bytes() + 255) / 256 * 256;
  size_t slots = a.env == ENV_QUIET ? 1 : std::min<size_t>(MAX_SLOTS, std::max<size_t>(1, OUT_BUDGET / stride));
  slots = std::min<size_t>(a.sync ? 1 : slots, (size_t)a.reps);
  unsigned char *ring = nullptr;
  LIB_TRY(alloc(&ring, slots * stride));
  std::vector<unsigned char> host(stride);
  cudaStream_t s;
  cudaEvent_t ev0, ev1;
  LIB_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  LIB_TRY(cudaEventCreate(&ev0));
  LIB_TRY(cudaEventCreate(&ev1));
  o.pdl_edges = pdl_edges(*c, ring, s);
  load_t load;
  const bool loaded = a.env == ENV_STRESS || a.env == ENV_BURST || a.env == ENV_DELAY;
  if (loaded) LIB_TRY(start_load(a, load, ring, slots * stride));
  rng_t delays(a.seed ^ 0xde1a7ull);
  for (unsigned long long first = 0; first < a.reps; first += slots) {
    const size_t m = (size_t)std::min<unsigned long long>(slots, a.reps - first);
    // Poison the outputs: a store the algorithm missed shows as 0xabababab.
    LIB_TRY(cudaMemsetAsync(ring, 0xab, m * stride, s));
    LIB_TRY(cudaEventRecord(ev0, s));
    for (size_t j = 0; j < m; ++j) {
      if (a.env == ENV_DELAY) spin_kernel<<<1, 1, 0, s>>>(delays.below(200000u));
      LIB_TRY(c->call((int)((first + j) % c->shapes()), ring + j * stride, s));
      LIB_TRY(cudaGetLastError());
    }
    LIB_TRY(cudaEventRecord(ev1, s));
    LIB_TRY(cudaStreamSynchronize(s));
    float ms = 0.0f;
    LIB_TRY(cudaEventElapsedTime(&ms, ev0, ev1));
    o.gpu_ms += ms;
    for (size_t j = 0; j < m; ++j) {
      const unsigned long long k = first + j;
      const int shape = (int)(k % c->shapes());
      LIB_TRY(cudaMemcpy(host.data(), ring + j * stride, stride, cudaMemcpyDeviceToHost));
      std::string why;
      if (!c->check(shape, host.data(), why)) record_wrong(o, *c, k, shape, why);
      o.calls++;
    }
  }
  if (loaded) LIB_TRY(stop_load(load));
  LIB_TRY(release(c, s, ev0, ev1, load));
  print_line(a, o, ptx, nullptr);
}

// A staying process: a case a line on stdin, each answered with its line.
static int serve(const args_t &a, const entry_t *entries, size_t count) {
  const ready_t r = device_ready(a.device);
  if (!r.not_run.empty()) {
    printf("gridcheck-not-run %s\n", r.not_run.c_str());
    return 0;
  }
  if (r.error != cudaSuccess) {
    fprintf(stderr, "the device's setup failed: %s\n", cudaGetErrorName(r.error));
    return 3;
  }
  printf("gridcheck-serve\n");
  fflush(stdout);
  char buf[4096];
  while (fgets(buf, sizeof buf, stdin) != nullptr) {
    if (strchr(buf, '\n') == nullptr && !feof(stdin)) usage("a case line longer than 4095 bytes");
    std::vector<char *> argv{(char *)"serve"};
    for (char *t = strtok(buf, " \t\r\n"); t != nullptr; t = strtok(nullptr, " \t\r\n"))
      argv.push_back(t);
    if (argv.size() == 1) continue;
    args_t one = parse((int)argv.size(), argv.data(), true);
    one.device = a.device;
    const entry_t &entry = find_entry(one, entries, count);
    if (entry.make == nullptr) {
      printf("gridcheck-not-run %s\n", entry.absent);
      fflush(stdout);
      continue;
    }
    run_case(one, entry, r.ptx);
  }
  return 0;
}

static int run_main(int argc, char **argv, const entry_t *entries, size_t count) {
  const args_t a = parse(argc, argv);
  if (a.serve) return serve(a, entries, count);
  const entry_t &entry = find_entry(a, entries, count);
  const ready_t r = device_ready(a.device);
  if (!r.not_run.empty()) {
    printf("gridcheck-not-run %s\n", r.not_run.c_str());
    return 0;
  }
  if (entry.make == nullptr) {
    printf("gridcheck-not-run %s\n", entry.absent);
    return 0;
  }
  if (r.error != cudaSuccess) {
    print_line(a, outcome_t{}, r.ptx, cudaGetErrorName(r.error));
    return 3;
  }
  run_case(a, entry, r.ptx);
  return 0;
}

template <typename T>
case_t *make() {
  return new T();
}

}  // namespace lib

// A program's main: its algorithms, as `lib::entry_t{name, &lib::make<Case>, ""}`.
#define LIB_MAIN(...)                                                                   \
  int main(int argc, char **argv) {                                                     \
    static const lib::entry_t entries[] = {__VA_ARGS__};                                \
    return lib::run_main(argc, argv, entries, sizeof(entries) / sizeof(entries[0]));    \
  }
