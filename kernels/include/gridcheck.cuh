// gridcheck.cuh: hand-written helpers shared by the generated litmus kernels
// in kernels/generated/ (written by `cargo xtask codegen`, from
// crates/kernelgen). The Rust side of this ABI is crates/kernelgen (layout)
// and crates/gpu (the runner); keep the three in step.
//
// Parallel testing environment (after MC Mutants): one host launch runs
// `instances` independent copies of a litmus test, one per thread block.
// Block b runs instance b, whose memory slot is the co-prime permutation
//     slot = (b * perm_mul + perm_add) % instances
// (perm_mul co-prime to instances), so neighbouring blocks touch memory far
// apart. Every per-instance array is indexed by slot:
//   mem    [slot * slot_stride + loc * GC_LOC_STRIDE]  test locations, each on
//          its own 128-byte line, so no two locations or instances share a line
//   regs   [slot * reg_stride + r]       loaded registers, observables order
//   status [slot * status_stride + k]    k < kernels: GC_RAN once kernel k ran
//          (GC_RAN from each block of a kernel of several blocks);
//          then one word per device launch: the cudaError_t that
//          cudaGetLastError() returned after it; then one per named stream
//          and event of each kernel (the cudaError_t of its creation); then
//          one per `record` / `waitevent` (the call's cudaError_t). The host
//          initialises all these error words to GC_NOT_REACHED and counts an
//          instance only when every one of them is cudaSuccess. A test that
//          observes errors (geterror, peekerror, devicesync into a register,
//          or device runtime limits) has no error words for its launches and
//          devicesyncs: their errors stay the thread's last error, which the
//          test reads into registers; with a launch pool limit, its device
//          kernels may legitimately not run (their ran words are not checked,
//          their registers stay 0).
// Device-side launches start the child's grid per instance (1 block, or B
// for a kernel of B blocks) and pass the slot.
//
// A kernel of several blocks (threads `bM.tN`) runs B consecutive blocks per
// instance: a host launch has instances * B blocks, block b running block
// b % B of instance b / B; its "ran" word counts the blocks (gc_add_ran).
//
// Streams and events are block-scoped: a kernel's named streams
// (cudaStreamNonBlocking) and events (cudaEventDisableTiming) are __shared__
// handles that thread 0 of the block that uses them creates before the
// block's first barrier and destroys after a barrier at the end of the
// kernel.
//
// Representative thread tN of a kernel is threadIdx.x == N * 32, alone in
// its warp: the other lanes of that warp take part only in the block's line
// bursts (gc_block_burst, before a phase's barrier) and otherwise idle.
// GC_STRESS_WARPS extra warps per block stress memory (stores and loads to
// p.stress) while the modeled threads run their operations. Before each test operation the modeled
// thread spins for a random number of clock cycles (seeded: p.seed, slot and
// the operation's site number), which provokes the rarer interleavings.
//
// Memory accesses: the test's plain loads and stores go through `volatile`
// pointers so that the compiler keeps every load and store, in program
// order, exactly as the test writes them (no caching in registers, no
// merging, no reordering by the compiler). In PTX they become ld.volatile /
// st.volatile, which the PTX memory model treats like relaxed accesses at
// system scope: they are not served from a stale L1 line. The tests
// therefore check the ordering and visibility that launches, barriers and
// PDL give, not what ordinary cached (.weak) accesses might additionally
// show.
#pragma once

#include <cuda_runtime.h>

#define GC_LOC_STRIDE 32u          // words between locations: 128 bytes
#define GC_WARP 32u
#define GC_STRESS_WARPS 2u
#define GC_RAN 1u
#define GC_NOT_REACHED 0xffffffffu

// Kernel parameters, passed by value to every host kernel; device kernels get
// them again plus the slot. 80 bytes; the Rust mirror is gridcheck_gpu's
// `Params` (same field order, same offsets).
struct gc_params {
  unsigned int *mem;          // offset 0
  unsigned int *regs;         // 8
  unsigned int *status;       // 16
  unsigned int *stress;       // 24: stress_words words, shared by all instances
  unsigned long long seed;    // 32: per-launch seed for delays and stress
  unsigned int instances;     // 40: blocks of each host launch
  unsigned int perm_mul;      // 44: co-prime to instances
  unsigned int perm_add;      // 48
  unsigned int max_delay;     // 52: cycles; 0 disables random delays
  unsigned int stress_words;  // 56: a power of two; 0 disables stress
  unsigned int stress_iters;  // 60: cap on a stress warp's iterations per phase
  unsigned int stress_lines;  // 64: 1: stress warps contend the test's own lines instead
  unsigned int slot_stride;   // 68: words of an instance's memory slot
  unsigned int lines;         // 72: the test's word locations (one line each, the slot's first; a tile's lines hold its words)
  unsigned int line_burst;    // 76: reductions on a location's line before each store; 0: none
};
static_assert(sizeof(gc_params) == 80, "gc_params must match the Rust Params");

// splitmix64's finaliser.
__device__ __forceinline__ unsigned long long gc_mix64(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ unsigned long long gc_rand(const gc_params &p, unsigned int slot,
                                                      unsigned int site) {
  return gc_mix64(p.seed ^ gc_mix64(((unsigned long long)slot << 32) | site));
}

// The memory slot of host-launch instance `instance` (a block index).
__device__ __forceinline__ unsigned int gc_slot(const gc_params &p, unsigned int instance) {
  return (unsigned int)(((unsigned long long)instance * p.perm_mul + p.perm_add) % p.instances);
}

// A random delay before a test operation: none a quarter of the time,
// otherwise up to max_delay cycles scaled down by a random power of two, so
// that short and long delays are both common.
__device__ __forceinline__ void gc_delay(const gc_params &p, unsigned int slot, unsigned int site) {
  if (p.max_delay == 0u) return;
  const unsigned long long r = gc_rand(p, slot, site);
  if ((r & 3ull) == 0ull) return;
  const unsigned int shift = (unsigned int)(r >> 2) & 7u;
  const long long cycles = (long long)(((unsigned int)(r >> 32) % (p.max_delay + 1u)) >> shift);
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// A modeled thread is done with its operations of the current phase.
__device__ __forceinline__ void gc_arrive(unsigned int *arrived) { atomicAdd(arrived, 1u); }

// A stress warp's work in one phase: store to and load from random lines of
// p.stress until `target` modeled-thread phases have arrived (or the cap).
// With p.stress_lines, atomic adds to the padding words of this instance's
// own location lines instead (each location has a 128-byte line to itself;
// its first word is the location): the test's stores then join a contended
// line, which makes them late to become visible (measured on an H100 by
// lab/experiments/pdl-late-write, the contended-line variant).
__device__ __forceinline__ void gc_stress(const gc_params &p, unsigned int slot,
                                          volatile unsigned int *arrived, unsigned int target,
                                          unsigned int phase) {
  if (p.stress_lines != 0u) {
    if (p.lines == 0u) return;
    unsigned int *const base = p.mem + (size_t)slot * p.slot_stride;
    const unsigned int pad = 1u + threadIdx.x % (GC_LOC_STRIDE - 1u);
    for (unsigned int i = 0u; i < p.stress_iters && *arrived < target; ++i) {
      const unsigned int line = (i + threadIdx.x / GC_WARP) % p.lines;
      atomicAdd(base + line * GC_LOC_STRIDE + pad, 1u);
    }
    return;
  }
  if (p.stress_words == 0u) return;
  volatile unsigned int *const s = p.stress;
  const unsigned int mask = p.stress_words - 1u;
  unsigned long long r = gc_rand(p, slot, 0x80000000u | (phase << 16) | threadIdx.x);
  unsigned int acc = 0u;
  for (unsigned int i = 0u; i < p.stress_iters && *arrived < target; ++i) {
    r = gc_mix64(r);
    const unsigned int a = (unsigned int)r & mask;
    const unsigned int b = (unsigned int)(r >> 32) & mask;
    s[a] = i;
    acc += s[b];
  }
  if (acc == 0xdeadbeefu) s[0] = acc;  // keeps acc live; practically never taken
}

// The line burst: before the barrier that opens a phase, every thread of
// the block (stress warps included) issues its share of p.line_burst
// fire-and-forget reductions (red.add) to the padding words of the 128-byte
// line of each location the phase stores to; the barrier then releases the
// stores (after their delays) onto lines that hold a queue many warps built
// at once, and a store at the back of that queue becomes visible late. The
// location is word 0 of its line; nothing reads the padding words. One
// warp's burst right before the store (the first version) cannot build that
// queue under the suite's conditions: in
// lab/experiments/pdl-late-write (H100, 2026-11-25, modes), a PDL
// secondary's read before cudaGridDependencySynchronize() was stale in
// 20 545 of 1.32 million instances after one warp's burst, in 2 with fresh
// memory a launch (as the suite's) and in 0 with a second warp bursting on a
// second line; after four warps' burst (127 threads x 64 reductions, a
// barrier, the store) it was stale in 13 586 of 114 848 instances at 16
// blocks with all of the suite's conditions at once.
__device__ __forceinline__ void gc_block_burst(const gc_params &p, volatile unsigned int *loc) {
  if (p.line_burst == 0u) return;
  unsigned int *const line = (unsigned int *)loc;
  for (unsigned int i = threadIdx.x; i < p.line_burst; i += blockDim.x) {
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(
                     __cvta_generic_to_global(line + 1u + i % (GC_LOC_STRIDE - 1u)))
                 : "memory");
  }
}

// The asynchronous proxy (sm_90 and newer; a litmus test that uses it is
// built only for those): a block's shared locations (`gc_shared`, each on a
// 128-byte line of its own, initialized by thread 0 before the block's first
// barrier) and mbarriers (`gc_mbar_<name>`, one phase each), and bulk copies
// of GC_BULK_BYTES (the least cp.async.bulk copies) between a location's line
// and a shared location's: the location is the first word, the rest of the
// 16 bytes its line's padding (which nothing reads). The bodies are empty
// below sm_90, where nothing calls them.
#define GC_BULK_BYTES 16

__device__ __forceinline__ unsigned int gc_smem_addr(const volatile void *p) {
  return (unsigned int)__cvta_generic_to_shared((const void *)p);
}

// mbarrier.init with an arrival count of 1 (the bulk load's
// mbarrier.arrive.expect_tx), made visible to the asynchronous proxy.
__device__ __forceinline__ void gc_mbar_init(unsigned long long *bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(gc_smem_addr(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

// `bulkload s x bar`: the mbarrier expects the copy's bytes (the arrival
// releases what this thread did before), then the copy of the global line
// into shared memory, which completes the transaction.
__device__ __forceinline__ void gc_bulk_load(volatile unsigned int *dst,
                                             volatile unsigned int *src,
                                             unsigned long long *bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(gc_smem_addr(bar)),
               "n"(GC_BULK_BYTES)
               : "memory");
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          gc_smem_addr(dst)),
      "l"(__cvta_generic_to_global((const void *)src)), "n"(GC_BULK_BYTES), "r"(gc_smem_addr(bar))
      : "memory");
#endif
}

// `mbarwait bar`: until the mbarrier's first phase (parity 0) completed.
__device__ __forceinline__ void gc_mbar_wait(unsigned long long *bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  unsigned int done = 0u;
  while (done == 0u) {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(gc_smem_addr(bar))
        : "memory");
  }
#endif
}

// `bulkstore x s`: the copy of the shared location into the global line,
// tracked by this thread's bulk async-groups.
__device__ __forceinline__ void gc_bulk_store(volatile unsigned int *dst,
                                              volatile unsigned int *src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
                   __cvta_generic_to_global((const void *)dst)),
               "r"(gc_smem_addr(src)), "n"(GC_BULK_BYTES)
               : "memory");
#endif
}

// `bulkload s[a..b] x[c..d] bar` and `bulkstore x[c..d] s[a..b]`: the copy
// of a tile's words, `bytes` of them (a multiple of 16 from a 16-byte
// boundary: the spec loader checks both), which the mbarrier expects.
__device__ __forceinline__ void gc_bulk_load_bytes(volatile unsigned int *dst,
                                                   volatile unsigned int *src,
                                                   unsigned long long *bar, unsigned int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(gc_smem_addr(bar)),
               "r"(bytes)
               : "memory");
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          gc_smem_addr(dst)),
      "l"(__cvta_generic_to_global((const void *)src)), "r"(bytes), "r"(gc_smem_addr(bar))
      : "memory");
#endif
}

__device__ __forceinline__ void gc_bulk_store_bytes(volatile unsigned int *dst,
                                                    volatile unsigned int *src,
                                                    unsigned int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
                   __cvta_generic_to_global((const void *)dst)),
               "r"(gc_smem_addr(src)), "r"(bytes)
               : "memory");
#endif
}

// `bulkcommit`.
__device__ __forceinline__ void gc_bulk_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}

// `bulkwait N`: all but the N most recent bulk async-groups complete.
template <int N> __device__ __forceinline__ void gc_bulk_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
#endif
}

// `bulkwait read N`: ... have read their sources.
template <int N> __device__ __forceinline__ void gc_bulk_wait_read() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
#endif
}

// `fence.proxy.async`: a proxy fence between the generic and the
// asynchronous proxy, for every state space.
__device__ __forceinline__ void gc_fence_proxy_async() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async;" ::: "memory");
#endif
}

// Tiles (`load r0 x[a..b]` by a whole warp): a word's value as its bit of
// the set of values a segment holds (a tile's values are 0 to 31; any other
// value sets every bit, a state no model reaches), and the warp's OR and sum
// of its lanes' shares.
__device__ __forceinline__ unsigned int gc_value_bit(unsigned int v) {
  return v < 32u ? 1u << v : 0xffffffffu;
}

__device__ __forceinline__ unsigned int gc_warp_or(unsigned int v) {
  for (unsigned int d = 16u; d > 0u; d /= 2u) v |= __shfl_xor_sync(0xffffffffu, v, d);
  return v;
}

__device__ __forceinline__ unsigned int gc_warp_add(unsigned int v) {
  for (unsigned int d = 16u; d > 0u; d /= 2u) v += __shfl_xor_sync(0xffffffffu, v, d);
  return v;
}

// Kernel k of this instance ran (written once, by thread 0, at the end).
__device__ __forceinline__ void gc_mark_ran(const gc_params &p, unsigned int status_stride,
                                            unsigned int slot, unsigned int k) {
  ((volatile unsigned int *)p.status)[(size_t)slot * status_stride + k] = GC_RAN;
}

// One block of kernel k of this instance ran (thread 0, at the end): a
// kernel of B blocks leaves B * GC_RAN once every block ran.
__device__ __forceinline__ void gc_add_ran(const gc_params &p, unsigned int status_stride,
                                           unsigned int slot, unsigned int k) {
  atomicAdd(p.status + (size_t)slot * status_stride + k, GC_RAN);
}

// The result of device launch number `word` (a status word index).
__device__ __forceinline__ void gc_record_launch(const gc_params &p, unsigned int status_stride,
                                                 unsigned int slot, unsigned int word,
                                                 cudaError_t err) {
  ((volatile unsigned int *)p.status)[(size_t)slot * status_stride + word] = (unsigned int)err;
}

// The cudaError_t of any other device runtime call of an instance (status
// word `word`): creating a stream or event, cudaEventRecord, cudaStreamWaitEvent.
__device__ __forceinline__ void gc_record_error(const gc_params &p, unsigned int status_stride,
                                                unsigned int slot, unsigned int word,
                                                cudaError_t err) {
  ((volatile unsigned int *)p.status)[(size_t)slot * status_stride + word] = (unsigned int)err;
}

// Creates one of the block's named streams and records the result in status
// word `word`. A stream that could not be created is the NULL stream (0):
// its instance is discarded anyway, and nothing uses an invalid handle.
__device__ __forceinline__ cudaStream_t gc_create_stream(const gc_params &p,
                                                        unsigned int status_stride,
                                                        unsigned int slot, unsigned int word) {
  cudaStream_t s = 0;
  const cudaError_t err = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  (void)cudaGetLastError();
  gc_record_error(p, status_stride, slot, word, err);
  return err == cudaSuccess ? s : (cudaStream_t)0;
}

// Creates one of the block's events, like gc_create_stream; a failed event
// is 0, and the calls below refuse it.
__device__ __forceinline__ cudaEvent_t gc_create_event(const gc_params &p,
                                                      unsigned int status_stride,
                                                      unsigned int slot, unsigned int word) {
  cudaEvent_t e = 0;
  const cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  (void)cudaGetLastError();
  gc_record_error(p, status_stride, slot, word, err);
  return err == cudaSuccess ? e : (cudaEvent_t)0;
}

// The calls below return their cudaError_t and also clear the thread's last
// error, so that the cudaGetLastError() after a later launch reports on that
// launch alone.

// cudaEventRecord(e, s), unless the event could not be created.
__device__ __forceinline__ cudaError_t gc_event_record(cudaEvent_t e, cudaStream_t s) {
  if (e == (cudaEvent_t)0) return cudaErrorInvalidResourceHandle;
  const cudaError_t err = cudaEventRecord(e, s);
  (void)cudaGetLastError();
  return err;
}

// cudaStreamWaitEvent(s, e, 0), unless the event could not be created.
__device__ __forceinline__ cudaError_t gc_stream_wait_event(cudaStream_t s, cudaEvent_t e) {
  if (e == (cudaEvent_t)0) return cudaErrorInvalidResourceHandle;
  const cudaError_t err = cudaStreamWaitEvent(s, e, 0u);
  (void)cudaGetLastError();
  return err;
}

__device__ __forceinline__ void gc_destroy_stream(cudaStream_t s) {
  if (s != (cudaStream_t)0) cudaStreamDestroy(s);
}

__device__ __forceinline__ void gc_destroy_event(cudaEvent_t e) {
  if (e != (cudaEvent_t)0) cudaEventDestroy(e);
}

// ---------------------------------------------------------------------------
// The outcome histogram, gathered on the GPU (the Rust side is
// crates/gpu/src/histogram.rs). Launched after each launch of a test, one
// thread per instance: an instance whose status words are as expected and
// whose observables all lie in the value domain adds one to its bin
// (mixed radix, the last observable the lowest digit); any other instance is
// counted (hist[bins]: did not run cleanly, hist[bins + 1]: a value outside
// the domain) and copied whole into `records` for the host to decode.

#define GC_STATUS_ANY 0xfffffffeu
#define GC_FROM_MEM 0x80000000u

struct gc_hist_params {
  const unsigned int *mem;      // 0
  const unsigned int *regs;     // 8
  const unsigned int *status;   // 16
  const unsigned int *plan;     // 24: offsets[nobs], domain[ndom], status_expect[status_stride]
  unsigned long long *hist;     // 32: bins + 2 counters, accumulated over launches
  unsigned int *records;        // 40: records[0] = count, then record_capacity records
  unsigned int instances;       // 48
  unsigned int nobs;            // 52
  unsigned int ndom;            // 56
  unsigned int status_stride;   // 60
  unsigned int reg_stride;      // 64
  unsigned int slot_stride;     // 68
  unsigned int record_capacity; // 72
  unsigned int bins;            // 76: 0 when the states do not fit in bins
};
static_assert(sizeof(gc_hist_params) == 80, "gc_hist_params must match the Rust HistParams");

extern "C" __global__ void gridcheck_histogram(gc_hist_params h) {
  const unsigned int slot = blockIdx.x * blockDim.x + threadIdx.x;
  if (slot >= h.instances) return;
  const unsigned int *offsets = h.plan;
  const unsigned int *domain = h.plan + h.nobs;
  const unsigned int *expect = domain + h.ndom;
  const unsigned int *st = h.status + (unsigned long long)slot * h.status_stride;
  const unsigned int *rg = h.regs + (unsigned long long)slot * h.reg_stride;
  const unsigned int *mm = h.mem + (unsigned long long)slot * h.slot_stride;
  bool clean = true;
  for (unsigned int k = 0; k < h.status_stride; k++)
    if (expect[k] != GC_STATUS_ANY && st[k] != expect[k]) clean = false;
  bool in_domain = h.bins != 0;
  unsigned long long key = 0;
  for (unsigned int o = 0; clean && in_domain && o < h.nobs; o++) {
    const unsigned int off = offsets[o];
    const unsigned int v = (off & GC_FROM_MEM) ? mm[off & ~GC_FROM_MEM] : rg[off];
    unsigned int d = 0;
    while (d < h.ndom && domain[d] != v) d++;
    if (d == h.ndom) in_domain = false;
    key = key * h.ndom + d;
  }
  if (clean && in_domain) {
    atomicAdd(&h.hist[key], 1ull);
    return;
  }
  atomicAdd(&h.hist[h.bins + (clean ? 1u : 0u)], 1ull);
  const unsigned int i = atomicAdd(&h.records[0], 1u);
  if (i >= h.record_capacity) return;
  unsigned int *r = h.records + 1 + (unsigned long long)i * (h.reg_stride + h.slot_stride + h.status_stride);
  for (unsigned int k = 0; k < h.reg_stride; k++) r[k] = rg[k];
  for (unsigned int k = 0; k < h.slot_stride; k++) r[h.reg_stride + k] = mm[k];
  for (unsigned int k = 0; k < h.status_stride; k++) r[h.reg_stride + h.slot_stride + k] = st[k];
}
