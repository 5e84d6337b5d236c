// pdl_late_write.cu: can a PDL secondary that reads BEFORE
// cudaGridDependencySynchronize() see a primary's LAST write still stale,
// when that write is made late (an asynchronous bulk store, a deep store
// queue, a contended line)? And does any read AFTER the synchronisation ever
// see it stale (that would break the documented guarantee)?
//
// Build: nvcc -arch=sm_90 -O2 -o pdl_late_write pdl_late_write.cu
//        (add -DPDL_NO_BULK if the cp.async.bulk PTX does not assemble; the
//         bulk variants are then reported as not_built)
// Run:   ./pdl_late_write [launches-per-config] [seconds-per-config] [names]
//        (defaults 10000 and 0.6; a config stops early once it has run that
//         long; [names], comma-separated, keeps only the variants whose name
//         contains one of them)
//
// One line per (variant, blocks):
//   variant=<name> blocks=<B> instances=<n> stale_before_wait=<k>
//   stale_after_wait=<k2> launch_err=<code> missing=<m>
//   gap_ns_min=<g> gap_ns_p50=<g> gap_neg=<c>
// Modes (environment variables, each 0 or 1; all off by default), the ways the
// suite's launches differ from this program's, one at a time:
//   PDL_SYNC_EACH=1      wait for every pair before queuing the next (the suite
//                        waits after each launch; this program otherwise queues
//                        250 pairs between waits)
//   PDL_GATE=1           the primary's blocks wait on entry until the host has
//                        queued the whole pair (a word in mapped host memory the
//                        host sets after the secondary's launch call; bounded by
//                        20 ms of %globaltimer, timeouts counted)
//   PDL_READ_VOLATILE=1  the secondary reads with ld.volatile (the suite's
//                        loads through a volatile pointer), not ld.relaxed.gpu
//   PDL_STATUS_AFTER=1   the primary's thread 0 stores a status word (a line of
//                        its own) right after the flag, as the suite's thread 0
//                        marks its instance as run
//   PDL_DELAY=N          the secondary's thread 0 waits a random number of
//                        cycles before its first read, drawn as the suite's
//                        gc_delay draws them with max_delay N (none a quarter
//                        of the time, else up to N shifted right by 0..7)
//   PDL_FRESH=1          each pair gets its flags in fresh memory
//                        (cudaMallocAsync, a host-to-device copy of zeros,
//                        cudaFreeAsync after), as each suite launch does
//   PDL_TAIL_KERNEL=1    a small kernel after each secondary (the suite's
//                        histogram kernel)
//   PDL_SEC_WIDE=1       the secondary has 96 threads and a __syncthreads()
//                        first, as the suite's kernels do
//   PDL_TWO_LINES=1      (contended_warp variants) warp 1 bursts on and stores
//                        a second flag on the next line, as the suite's
//                        primary stores x and y from two warps; the secondary
//                        reads both, and a read of either that saw 0 is stale
// An instance is one (launch, block). The gap of an instance is the
// %globaltimer of the secondary block's first read minus the latest
// %globaltimer any primary block of the same launch took just before issuing
// its flag write. See README.md for how to read it.

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                         \
  do {                                                                      \
    cudaError_t err_ = (call);                                              \
    if (err_ != cudaSuccess) {                                              \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__,        \
                   __LINE__, #call, cudaGetErrorString(err_), (int)err_);   \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

// ---------------------------------------------------------------------------
// Variants
// ---------------------------------------------------------------------------

enum Variant : int {
  CTRL_EARLY_TRIGGER = 0,   // positive control: trigger first, write ~50 us later
  CTRL_NO_PDL,              // negative control: plain store, secondary without PDL
  PLAIN_IMPLICIT,           // (1) st flag, exit
  PLAIN_LATE_TRIGGER,       // (2) st flag, trigger, exit
  BULK16_IMPLICIT,          // (3) 16 B bulk store, wait_group.read, exit
  BULK16_TRIGGER,           // (4) as (3), then trigger, exit
  BULK64K_IMPLICIT,         // (5) one 64 KiB bulk store, flag in last 16 B
  DEEP_QUEUE_IMPLICIT,      // (6) 64 KiB of st.v4 by the same thread, then st flag
  BULK_QUEUE_FLAG_IMPLICIT, // 64 KiB bulk group, then a 16 B flag bulk group
  CONTENDED_LINE_IMPLICIT,  // 127 threads x 64 red.add on the flag's line, then st flag
  // The two ways the suite's line burst (gc_burst) differs from the variant
  // above, one at a time and together: the flag stored with st.volatile (as
  // the suite's litmus stores are), and the burst by one warp (the storing
  // thread's own, 8 128 reductions in all), not four.
  CONTENDED_LINE_VOLATILE_IMPLICIT,  // as CONTENDED_LINE_IMPLICIT, st.volatile flag
  CONTENDED_WARP_IMPLICIT,           // warp 0 alone: 8 128 red.add, __syncwarp, st flag
  CONTENDED_WARP_VOLATILE_IMPLICIT,  // as the suite: one warp, st.volatile flag
  NUM_VARIANTS
};

struct VariantInfo {
  const char* name;
  Variant id;
  bool pdl;           // launch the secondary with programmatic stream serialization
  bool bulk;          // needs cp.async.bulk
  int stride_words;   // words between consecutive blocks' flag regions
  int flag_off_words; // offset of the flag inside a block's region
  size_t dyn_smem;    // dynamic shared memory of the primary
};

constexpr int kLineWords = 32;             // 128-byte line
constexpr int kBigWords = 16384;           // 64 KiB
constexpr int kBigBytes = kBigWords * 4;
constexpr int kPrimaryThreads = 128;
constexpr int kSecondaryThreads = 32;
constexpr int kRedsPerThread = 64;
constexpr long long kEarlySpinCycles = 100000; // ~55 us at 1.8 GHz

// Run order: the plain-store variants first, the bulk ones last, so that a
// bulk copy that faults (a sticky error ends the run) costs no other result.
static const VariantInfo kVariants[NUM_VARIANTS] = {
    {"ctrl_early_trigger", CTRL_EARLY_TRIGGER, true, false, kLineWords, 0, 0},
    {"ctrl_no_pdl", CTRL_NO_PDL, false, false, kLineWords, 0, 0},
    {"plain_implicit", PLAIN_IMPLICIT, true, false, kLineWords, 0, 0},
    {"plain_late_trigger", PLAIN_LATE_TRIGGER, true, false, kLineWords, 0, 0},
    {"deep_queue_implicit", DEEP_QUEUE_IMPLICIT, true, false, kLineWords, 0, 0},
    {"contended_line_implicit", CONTENDED_LINE_IMPLICIT, true, false,
     kLineWords, 0, 0},
    {"contended_line_volatile_implicit", CONTENDED_LINE_VOLATILE_IMPLICIT, true,
     false, kLineWords, 0, 0},
    {"contended_warp_implicit", CONTENDED_WARP_IMPLICIT, true, false,
     kLineWords, 0, 0},
    {"contended_warp_volatile_implicit", CONTENDED_WARP_VOLATILE_IMPLICIT, true,
     false, kLineWords, 0, 0},
    {"bulk16_read_implicit", BULK16_IMPLICIT, true, true, kLineWords, 0, 0},
    {"bulk16_read_trigger", BULK16_TRIGGER, true, true, kLineWords, 0, 0},
    {"bulk64k_read_implicit", BULK64K_IMPLICIT, true, true, kBigWords,
     kBigWords - 4, kBigBytes},
    {"bulk_queue_then_flag_implicit", BULK_QUEUE_FLAG_IMPLICIT, true, true,
     kLineWords, 0, kBigBytes},
};

#if defined(PDL_NO_BULK)
constexpr bool kBulkBuilt = false;
#else
constexpr bool kBulkBuilt = true;
#endif

// ---------------------------------------------------------------------------
// Device helpers (every one is asm volatile with a memory clobber so that the
// compiler keeps them in program order with each other and with stores)
// ---------------------------------------------------------------------------

__device__ __forceinline__ unsigned long long global_timer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

__device__ __forceinline__ unsigned load_relaxed_gpu(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];"
               : "=r"(v)
               : "l"(__cvta_generic_to_global(p))
               : "memory");
  return v;
}

__device__ __forceinline__ unsigned load_volatile(const unsigned* p) {
  unsigned v;
  asm volatile("ld.volatile.global.u32 %0, [%1];"
               : "=r"(v)
               : "l"(__cvta_generic_to_global(p))
               : "memory");
  return v;
}

// PDL_GATE: thread 0 waits until the host has set *gate to at least `want`
// (at most 20 ms of %globaltimer, then counts a timeout), then the block
// goes on together.
__device__ __forceinline__ void wait_gate(const volatile unsigned* gate, unsigned want,
                                          unsigned* timeouts) {
  if (gate == nullptr) return;
  if (threadIdx.x == 0) {
    const unsigned long long t0 = global_timer();
    while (*gate < want) {
      if (global_timer() - t0 > 20000000ull) {
        atomicAdd(timeouts, 1u);
        break;
      }
    }
  }
  __syncthreads();
}

// The suite's gc_delay distribution, from a hash of the instance.
__device__ __forceinline__ void suite_delay(unsigned max_delay, unsigned long long inst) {
  if (max_delay == 0u) return;
  unsigned long long r = (inst + 1ull) * 0x9E3779B97F4A7C15ull;
  r ^= r >> 31;
  r *= 0xBF58476D1CE4E5B9ull;
  r ^= r >> 29;
  if ((r & 3ull) == 0ull) return;
  const unsigned shift = (unsigned)(r >> 2) & 7u;
  const long long cycles = (long long)(((unsigned)(r >> 32) % (max_delay + 1u)) >> shift);
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

__device__ __forceinline__ void store_weak(unsigned* p, unsigned v) {
  asm volatile("st.global.u32 [%0], %1;" ::"l"(__cvta_generic_to_global(p)),
               "r"(v)
               : "memory");
}

// What the suite's litmus stores compile to (a store through a volatile
// pointer).
__device__ __forceinline__ void store_volatile(unsigned* p, unsigned v) {
  asm volatile("st.volatile.global.u32 [%0], %1;" ::"l"(__cvta_generic_to_global(p)),
               "r"(v)
               : "memory");
}

// PDL_STATUS_AFTER: block b's status word (a line of its own), stored right
// after its flag as the suite's thread 0 marks its instance as run.
__device__ __forceinline__ void mark_status(unsigned* status, int b) {
  if (status != nullptr) store_volatile(status + (size_t)b * kLineWords, 1u);
}

__device__ __forceinline__ void store_weak_v4(unsigned* p, unsigned v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %1, %1, %1};" ::"l"(
                   __cvta_generic_to_global(p)),
               "r"(v)
               : "memory");
}

__device__ __forceinline__ void red_add(unsigned* p, unsigned v) {
  asm volatile("red.global.add.u32 [%0], %1;" ::"l"(__cvta_generic_to_global(p)),
               "r"(v)
               : "memory");
}

// Same instruction as cudaTriggerProgrammaticLaunchCompletion(), whose inline
// asm has no memory clobber; the clobber here keeps earlier stores before it.
__device__ __forceinline__ void trigger_dependents() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(PDL_NO_BULK)
#define PDL_HAVE_BULK 1
// Order this thread's generic-proxy writes to shared memory before later
// async-proxy reads of it (the bulk copy's source).
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ void bulk_store(unsigned* gdst, const void* ssrc,
                                           unsigned bytes) {
  asm volatile(
      "cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
          __cvta_generic_to_global(gdst)),
      "r"((unsigned)__cvta_generic_to_shared(ssrc)), "r"(bytes)
      : "memory");
}

__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Waits only until the source (shared memory) of every committed bulk group
// has been read, not until the global writes are done or visible.
__device__ __forceinline__ void bulk_wait_read_all() {
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
#endif

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------

// Thread 0 of block b makes x[b * stride + off] = 1 as its last write, by the
// variant's mechanism. t_pre[inst] is the %globaltimer just before the flag
// write is issued (stored before it, so the flag stays the last write).
// *unsupported is set when a bulk variant runs in a build without bulk PTX.
__global__ void primary(int variant, unsigned* x, int stride, int off,
                        unsigned* scratch, unsigned long long* t_pre,
                        long long inst_base, long long spin_cycles,
                        unsigned* unsupported, const volatile unsigned* gate,
                        unsigned gate_want, unsigned* gate_timeouts,
                        unsigned* status, int two) {
  extern __shared__ __align__(128) unsigned char dsm[];
#if defined(PDL_HAVE_BULK)
  __shared__ __align__(16) unsigned sflag[4];
#endif
  const int tid = threadIdx.x;
  const int b = blockIdx.x;
  unsigned* flag = x + (size_t)b * stride + off;
  unsigned long long* tp = t_pre + inst_base + b;
  (void)dsm;
  (void)unsupported;
  wait_gate(gate, gate_want, gate_timeouts);

  switch (variant) {
    case CTRL_EARLY_TRIGGER: {
      if (tid != 0) return;
      trigger_dependents();
      const long long t0 = clock64();
      while (clock64() - t0 < spin_cycles) {
      }
      *tp = global_timer();
      store_weak(flag, 1u);
      mark_status(status, b);
      return;
    }
    case CTRL_NO_PDL:
    case PLAIN_IMPLICIT: {
      if (tid != 0) return;
      *tp = global_timer();
      store_weak(flag, 1u);
      mark_status(status, b);
      return;
    }
    case PLAIN_LATE_TRIGGER: {
      if (tid != 0) return;
      *tp = global_timer();
      store_weak(flag, 1u);
      trigger_dependents();
      return;
    }
    case DEEP_QUEUE_IMPLICIT: {
      if (tid != 0) return;
      unsigned* junk = scratch + (size_t)b * kBigWords;
      for (int k = 0; k < kBigWords; k += 4) store_weak_v4(junk + k, 0xA5A5A5A5u);
      *tp = global_timer();
      store_weak(flag, 1u);
      return;
    }
    case CONTENDED_WARP_IMPLICIT:
    case CONTENDED_WARP_VOLATILE_IMPLICIT: {
      // 127 * 64 = 8 128 reductions by the 32 lanes of warp 0, each warp
      // instruction on 31 or 32 words of the line, as gc_burst does. With
      // `two`, warp 1 does the same on the next line and its flag.
      const int warp = tid / 32;
      if (warp >= (two ? 2 : 1)) return;
      unsigned* line = x + (size_t)b * stride + warp * kLineWords;
      const int lane = tid % 32;
      const int total = (kPrimaryThreads - 1) * kRedsPerThread;
      for (int i = lane; i < total; i += 32) red_add(line + 1 + i % (kLineWords - 1), 1u);
      __syncwarp();
      if (lane != 0) return;
      if (warp == 0) *tp = global_timer();
      if (variant == CONTENDED_WARP_IMPLICIT) {
        store_weak(line + off, 1u);
      } else {
        store_volatile(line + off, 1u);
      }
      if (warp != 0) return;
      mark_status(status, b);
      return;
    }
    case CONTENDED_LINE_IMPLICIT:
    case CONTENDED_LINE_VOLATILE_IMPLICIT: {
      // Words 1..31 of the flag's 128-byte line take a burst of reductions
      // from the other threads; the flag (word 0) is stored after a barrier,
      // i.e. after every reduction was issued.
      unsigned* line = x + (size_t)b * stride;
      if (tid != 0) {
        unsigned* hot = line + 1 + (tid - 1) % (kLineWords - 1);
        for (int r = 0; r < kRedsPerThread; ++r) red_add(hot, 1u);
      }
      __syncthreads();
      if (tid != 0) return;
      *tp = global_timer();
      if (variant == CONTENDED_LINE_IMPLICIT) {
        store_weak(flag, 1u);
      } else {
        store_volatile(flag, 1u);
      }
      mark_status(status, b);
      return;
    }
#if defined(PDL_HAVE_BULK)
    case BULK16_IMPLICIT:
    case BULK16_TRIGGER: {
      if (tid != 0) return;
      sflag[0] = 1u;
      sflag[1] = 0u;
      sflag[2] = 0u;
      sflag[3] = 0u;
      fence_proxy_async_smem();
      *tp = global_timer();
      bulk_store(flag, sflag, 16u);
      bulk_commit();
      bulk_wait_read_all();
      if (variant == BULK16_TRIGGER) trigger_dependents();
      return;
    }
    case BULK64K_IMPLICIT: {
      // The block's whole 64 KiB region is written by one bulk copy; the flag
      // is its last 16 bytes (off = kBigWords - 4).
      unsigned* s = reinterpret_cast<unsigned*>(dsm);
      for (int k = tid; k < kBigWords; k += blockDim.x)
        s[k] = (k == kBigWords - 4) ? 1u : (k > kBigWords - 4 ? 0u : 0xA5A5A5A5u);
      fence_proxy_async_smem();
      __syncthreads();
      if (tid != 0) return;
      *tp = global_timer();
      bulk_store(x + (size_t)b * stride, s, (unsigned)kBigBytes);
      bulk_commit();
      bulk_wait_read_all();
      return;
    }
    case BULK_QUEUE_FLAG_IMPLICIT: {
      // First a 64 KiB bulk group to scratch, then the 16-byte flag group.
      unsigned* s = reinterpret_cast<unsigned*>(dsm);
      for (int k = tid; k < kBigWords; k += blockDim.x) s[k] = 0xA5A5A5A5u;
      if (tid == 0) {
        sflag[0] = 1u;
        sflag[1] = 0u;
        sflag[2] = 0u;
        sflag[3] = 0u;
      }
      fence_proxy_async_smem();
      __syncthreads();
      if (tid != 0) return;
      bulk_store(scratch + (size_t)b * kBigWords, s, (unsigned)kBigBytes);
      bulk_commit();
      *tp = global_timer();
      bulk_store(flag, sflag, 16u);
      bulk_commit();
      bulk_wait_read_all();
      return;
    }
#else
    case BULK16_IMPLICIT:
    case BULK16_TRIGGER:
    case BULK64K_IMPLICIT:
    case BULK_QUEUE_FLAG_IMPLICIT: {
      if (tid == 0 && b == 0) atomicExch(unsupported, 1u);
      return;
    }
#endif
    default:
      if (tid == 0 && b == 0) atomicExch(unsupported, 2u);
      return;
  }
}

// The flag (and with `two` the one on the next line, the smaller of the
// two: 0 if either is unwritten), read the way the mode asks.
__device__ __forceinline__ unsigned read_flags(const unsigned* flag, int read_volatile,
                                               int two) {
  unsigned v = read_volatile ? load_volatile(flag) : load_relaxed_gpu(flag);
  if (two) {
    const unsigned w = read_volatile ? load_volatile(flag + kLineWords)
                                     : load_relaxed_gpu(flag + kLineWords);
    v = v < w ? v : w;
  }
  return v;
}

// Thread 0 of block b reads the flag first thing (before the dependency
// wait), then again after cudaGridDependencySynchronize().
__global__ void secondary(const unsigned* x, int stride, int off,
                          unsigned* before, unsigned* after,
                          unsigned long long* t_first, long long inst_base,
                          int read_volatile, unsigned max_delay, int wide,
                          int two) {
  if (wide) {
    __shared__ unsigned arrived;
    if (threadIdx.x == 0) arrived = 0u;
    __syncthreads();
    if (arrived != 0u) return;  // never: keeps the barrier's word live
  }
  if (threadIdx.x != 0) return;
  const unsigned* flag = x + (size_t)blockIdx.x * stride + off;
  suite_delay(max_delay, (unsigned long long)(inst_base + blockIdx.x));
  const unsigned long long t0 = global_timer();
  const unsigned v0 = read_flags(flag, read_volatile, two);
  cudaGridDependencySynchronize();
  const unsigned v1 = read_flags(flag, read_volatile, two);
  const long long i = inst_base + blockIdx.x;
  before[i] = v0;
  after[i] = v1;
  t_first[i] = t0;
}

// ---------------------------------------------------------------------------
// Host
// ---------------------------------------------------------------------------

struct Buffers {
  unsigned* x;
  unsigned* scratch;
  unsigned* before;
  unsigned* after;
  unsigned long long* t_first;
  unsigned long long* t_pre;
  unsigned* unsupported;
  unsigned* gate_timeouts;
  unsigned* status;              // PDL_STATUS_AFTER: a line per block
  volatile unsigned* gate_host;  // mapped host memory (PDL_GATE)
  unsigned* gate_dev;            // its device address
};

struct Modes {
  bool sync_each = false;
  bool gate = false;
  bool read_volatile = false;
  bool status_after = false;
  unsigned delay = 0;
  bool fresh = false;
  bool tail_kernel = false;
  bool sec_wide = false;
  bool two_lines = false;
};

// PDL_TAIL_KERNEL: stands for the suite's histogram kernel after a launch.
__global__ void tail_kernel(const unsigned* before, long long inst_base, int n,
                            unsigned* sink) {
  unsigned acc = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc += before[inst_base + i];
  if (acc == 0xdeadbeefu) *sink = acc;
}
static Modes g_modes;
static unsigned g_gate_count = 0;  // the gate's value, one more per pair

struct Result {
  long long instances = 0;
  long long stale_before = 0;
  long long stale_after = 0;
  long long missing = 0;
  long long gap_min = 0;
  long long gap_p50 = 0;
  long long gap_neg = 0;
  unsigned gate_timeouts = 0;
  int launch_err = 0;
  unsigned unsupported = 0;
};

static cudaError_t launch_pair(const VariantInfo& v, int blocks, cudaStream_t s,
                               const Buffers& buf, long long inst_base) {
  const bool two = g_modes.two_lines && (v.id == CONTENDED_WARP_IMPLICIT ||
                                         v.id == CONTENDED_WARP_VOLATILE_IMPLICIT);
  const int stride = two ? 2 * kLineWords : v.stride_words;
  const size_t x_bytes = (size_t)blocks * stride * sizeof(unsigned);
  unsigned* x = buf.x;
  cudaError_t e;
  if (g_modes.fresh) {
    static std::vector<unsigned> zeros;
    zeros.assign(x_bytes / sizeof(unsigned), 0u);
    e = cudaMallocAsync(reinterpret_cast<void**>(&x), x_bytes, s);
    if (e != cudaSuccess) return e;
    e = cudaMemcpyAsync(x, zeros.data(), x_bytes, cudaMemcpyHostToDevice, s);
  } else {
    e = cudaMemsetAsync(x, 0, x_bytes, s);
  }
  if (e != cudaSuccess) return e;

  const unsigned want = ++g_gate_count;
  primary<<<blocks, kPrimaryThreads, v.dyn_smem, s>>>(
      (int)v.id, x, stride, v.flag_off_words, buf.scratch,
      buf.t_pre, inst_base, kEarlySpinCycles, buf.unsupported,
      g_modes.gate ? buf.gate_dev : nullptr, want, buf.gate_timeouts,
      g_modes.status_after ? buf.status : nullptr, two ? 1 : 0);
  e = cudaGetLastError();
  if (e != cudaSuccess) return e;

  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(g_modes.sec_wide ? 96 : kSecondaryThreads);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = v.pdl ? attr : nullptr;
  cfg.numAttrs = v.pdl ? 1 : 0;
  e = cudaLaunchKernelEx(&cfg, secondary, (const unsigned*)x, stride,
                         v.flag_off_words, buf.before, buf.after, buf.t_first,
                         inst_base, g_modes.read_volatile ? 1 : 0, g_modes.delay,
                         g_modes.sec_wide ? 1 : 0, two ? 1 : 0);
  if (e != cudaSuccess) return e;
  if (g_modes.tail_kernel) {
    tail_kernel<<<1, 256, 0, s>>>(buf.before, inst_base, blocks, buf.status);
    e = cudaGetLastError();
    if (e != cudaSuccess) return e;
  }
  if (g_modes.fresh) {
    e = cudaFreeAsync(x, s);
    if (e != cudaSuccess) return e;
  }
  // Open the gate only now that the whole pair is queued.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *buf.gate_host = want;
  return e;
}

static Result run_config(const VariantInfo& v, int blocks, int launches,
                         double seconds, cudaStream_t s, const Buffers& buf) {
  Result r;
  const size_t n = (size_t)launches * blocks;
  // Sentinels: a slot the secondary never wrote reads as 0xFFFFFFFF.
  CHECK(cudaMemsetAsync(buf.before, 0xFF, n * sizeof(unsigned), s));
  CHECK(cudaMemsetAsync(buf.after, 0xFF, n * sizeof(unsigned), s));
  CHECK(cudaMemsetAsync(buf.t_first, 0, n * sizeof(unsigned long long), s));
  CHECK(cudaMemsetAsync(buf.t_pre, 0, n * sizeof(unsigned long long), s));
  CHECK(cudaMemsetAsync(buf.unsupported, 0, sizeof(unsigned), s));
  CHECK(cudaMemsetAsync(buf.gate_timeouts, 0, sizeof(unsigned), s));
  CHECK(cudaStreamSynchronize(s));

  const auto start = std::chrono::steady_clock::now();
  int done = 0;
  const int chunk = g_modes.sync_each ? 1 : 250;
  while (done < launches) {
    const int end = std::min(launches, done + chunk);
    for (int l = done; l < end; ++l) {
      cudaError_t e = launch_pair(v, blocks, s, buf, (long long)l * blocks);
      if (e != cudaSuccess) {
        r.launch_err = (int)e;
        std::fprintf(stderr, "# %s blocks=%d launch %d: %s\n", v.name, blocks,
                     l, cudaGetErrorString(e));
        break;
      }
    }
    if (r.launch_err != 0) break;
    cudaError_t e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
      r.launch_err = (int)e;
      std::fprintf(stderr, "# %s blocks=%d sync after launch %d: %s\n", v.name,
                   blocks, end, cudaGetErrorString(e));
      break;
    }
    done = end;
    const double el = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    if (el > seconds) break;
  }
  if (r.launch_err != 0) return r;

  const size_t m = (size_t)done * blocks;
  std::vector<unsigned> before(m), after(m);
  std::vector<unsigned long long> t_first(m), t_pre(m);
  CHECK(cudaMemcpy(before.data(), buf.before, m * sizeof(unsigned),
                   cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(after.data(), buf.after, m * sizeof(unsigned),
                   cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(t_first.data(), buf.t_first, m * sizeof(unsigned long long),
                   cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(t_pre.data(), buf.t_pre, m * sizeof(unsigned long long),
                   cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&r.unsupported, buf.unsupported, sizeof(unsigned),
                   cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&r.gate_timeouts, buf.gate_timeouts, sizeof(unsigned),
                   cudaMemcpyDeviceToHost));

  r.instances = (long long)m;
  std::vector<long long> gaps;
  gaps.reserve(m);
  for (int l = 0; l < done; ++l) {
    unsigned long long last_pre = 0;
    for (int b = 0; b < blocks; ++b)
      last_pre = std::max(last_pre, t_pre[(size_t)l * blocks + b]);
    for (int b = 0; b < blocks; ++b) {
      const size_t i = (size_t)l * blocks + b;
      if (before[i] == 0xFFFFFFFFu || after[i] == 0xFFFFFFFFu) {
        ++r.missing;
        continue;
      }
      if (before[i] == 0) ++r.stale_before;
      if (after[i] == 0) ++r.stale_after;
      const long long g = (long long)t_first[i] - (long long)last_pre;
      gaps.push_back(g);
      if (g < 0) ++r.gap_neg;
    }
  }
  if (!gaps.empty()) {
    std::sort(gaps.begin(), gaps.end());
    r.gap_min = gaps.front();
    r.gap_p50 = gaps[gaps.size() / 2];
  }
  return r;
}

// Whether `name` contains one of the comma-separated substrings of `list`.
static bool name_matches(const char* name, const char* list) {
  std::string l(list);
  size_t at = 0;
  while (at <= l.size()) {
    const size_t end = std::min(l.find(',', at), l.size());
    const std::string part = l.substr(at, end - at);
    if (!part.empty() && std::strstr(name, part.c_str()) != nullptr) return true;
    at = end + 1;
  }
  return false;
}

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 10000;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 0.6;
  const char* only = argc > 3 ? argv[3] : nullptr;
  if (launches <= 0 || seconds <= 0) {
    std::fprintf(stderr,
                 "usage: %s [launches-per-config > 0] [seconds-per-config > 0] "
                 "[variant-name-substring]\n",
                 argv[0]);
    return 2;
  }
  const int kBlocks[] = {1, 16, 132};
  const auto mode = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && std::strcmp(v, "1") == 0;
  };
  g_modes.sync_each = mode("PDL_SYNC_EACH");
  g_modes.gate = mode("PDL_GATE");
  g_modes.read_volatile = mode("PDL_READ_VOLATILE");
  g_modes.status_after = mode("PDL_STATUS_AFTER");
  if (const char* d = std::getenv("PDL_DELAY")) g_modes.delay = (unsigned)std::strtoul(d, nullptr, 10);
  g_modes.fresh = mode("PDL_FRESH");
  g_modes.tail_kernel = mode("PDL_TAIL_KERNEL");
  g_modes.sec_wide = mode("PDL_SEC_WIDE");
  g_modes.two_lines = mode("PDL_TWO_LINES");
  const int max_blocks = 132;

  int dev = 0;
  CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  int driver = 0, runtime = 0;
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));
  std::printf("# device=\"%s\" cc=%d.%d sms=%d driver_api=%d runtime=%d "
              "launches_per_config=%d seconds_per_config=%.2f bulk_built=%d "
              "sync_each=%d gate=%d read_volatile=%d status_after=%d delay=%u "
              "fresh=%d tail_kernel=%d sec_wide=%d two_lines=%d\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount,
              driver, runtime, launches, seconds, kBulkBuilt ? 1 : 0,
              g_modes.sync_each ? 1 : 0, g_modes.gate ? 1 : 0,
              g_modes.read_volatile ? 1 : 0, g_modes.status_after ? 1 : 0,
              g_modes.delay, g_modes.fresh ? 1 : 0, g_modes.tail_kernel ? 1 : 0,
              g_modes.sec_wide ? 1 : 0, g_modes.two_lines ? 1 : 0);
  if (prop.major < 9) {
    std::printf("# not run: PDL needs compute capability 9.0 or newer\n");
    return 2;
  }
  CHECK(cudaFuncSetAttribute(primary, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             kBigBytes));

  Buffers buf;
  const size_t n = (size_t)launches * max_blocks;
  CHECK(cudaMalloc(&buf.x, (size_t)max_blocks * kBigWords * sizeof(unsigned)));
  CHECK(cudaMalloc(&buf.scratch, (size_t)max_blocks * kBigWords * sizeof(unsigned)));
  CHECK(cudaMalloc(&buf.before, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&buf.after, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&buf.t_first, n * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&buf.t_pre, n * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&buf.unsupported, sizeof(unsigned)));
  CHECK(cudaMalloc(&buf.gate_timeouts, sizeof(unsigned)));
  CHECK(cudaMalloc(&buf.status, (size_t)max_blocks * kLineWords * sizeof(unsigned)));
  {
    void* h = nullptr;
    CHECK(cudaHostAlloc(&h, sizeof(unsigned), cudaHostAllocMapped));
    buf.gate_host = static_cast<volatile unsigned*>(h);
    *buf.gate_host = 0;
    void* d = nullptr;
    CHECK(cudaHostGetDevicePointer(&d, h, 0));
    buf.gate_dev = static_cast<unsigned*>(d);
  }
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  bool clean = true;
  long long control_min_stale = -1; // -1: the positive control did not run
  long long violations = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const VariantInfo& v : kVariants) {
    if (only != nullptr && !name_matches(v.name, only)) continue;
    for (int blocks : kBlocks) {
      if (v.bulk && !kBulkBuilt) {
        std::printf("variant=%s blocks=%d not_built (compiled with PDL_NO_BULK)\n",
                    v.name, blocks);
        continue;
      }
      Result r = run_config(v, blocks, launches, seconds, s, buf);
      std::printf("variant=%s blocks=%d instances=%lld stale_before_wait=%lld "
                  "stale_after_wait=%lld launch_err=%d missing=%lld "
                  "gap_ns_min=%lld gap_ns_p50=%lld gap_neg=%lld gate_timeouts=%u%s\n",
                  v.name, blocks, r.instances, r.stale_before, r.stale_after,
                  r.launch_err, r.missing, r.gap_min, r.gap_p50, r.gap_neg,
                  r.gate_timeouts,
                  r.unsupported ? " unsupported_in_build=1" : "");
      std::fflush(stdout);
      if (r.launch_err != 0 || r.missing != 0 || r.unsupported != 0) clean = false;
      violations += r.stale_after;
      if (v.id == CTRL_EARLY_TRIGGER)
        control_min_stale = control_min_stale < 0
                                ? r.stale_before
                                : std::min(control_min_stale, r.stale_before);
    }
    const double el =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "# progress: %s done, %.1f s elapsed\n", v.name, el);
  }
  if (control_min_stale == 0)
    std::printf("# WARNING: the positive control saw no stale read before the "
                "wait for some block count; a 0 elsewhere at that block count "
                "does not show the window is closed\n");
  if (violations != 0)
    std::printf("# VIOLATION: %lld reads after cudaGridDependencySynchronize() "
                "saw the flag unwritten\n",
                violations);
  std::printf("# finished clean=%d\n", clean ? 1 : 0);

  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(buf.x));
  CHECK(cudaFree(buf.scratch));
  CHECK(cudaFree(buf.before));
  CHECK(cudaFree(buf.after));
  CHECK(cudaFree(buf.t_first));
  CHECK(cudaFree(buf.t_pre));
  CHECK(cudaFree(buf.unsupported));
  CHECK(cudaFree(buf.gate_timeouts));
  CHECK(cudaFree(buf.status));
  CHECK(cudaFreeHost(const_cast<unsigned*>(buf.gate_host)));
  return clean ? 0 : 1;
}
