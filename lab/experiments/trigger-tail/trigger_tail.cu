// trigger-tail: what cudaTriggerProgrammaticLaunchCompletion() does to a
// grid that has no PDL secondary but launches children (README.md beside
// this file has the question, the cases and how to read the log).
//
// One parent grid of `blocks` blocks. In each block, thread 0 (warp 0, "t0")
// launches one child (a tail launch, fire-and-forget, a named stream or the
// NULL stream) and then stores x = 1; thread 32 (warp 1, "t1") stores y = 1
// `delay` cycles after a reference point; one of them calls the trigger,
// before or after the launch. The child (thread 0 of its first block) loads
// y, then x, of its parent's block. Warps from 2 on stress memory when
// `stress=1` (the harness's stress warps). Every step leaves a milestone bit
// in mapped host memory, so that the host can say where a grid that does not
// complete stopped; every case runs in its own process, and the process
// exits (status 2) when a launch has not completed after `hang_ms`.
//
// Build (run.sh does):
//   nvcc -O2 -arch=sm_90 -rdc=true trigger_tail.cu -o trigger_tail -lcudadevrt
//   nvcc -O2 -arch=sm_90 -rdc=true -DTT_MODULE_ONLY -c trigger_tail.cu -o tt.o
//   nvcc -arch=sm_90 -dlink -cubin tt.o -lcudadevrt -o trigger_tail.cubin
// The cubin is the harness's chain (crates/toolchain): `loader=cubin` loads
// it through the driver API (cuModuleLoadData) and launches with
// cuLaunchKernelEx, as crates/gpu does.
//
// usage: trigger_tail name=NAME key=value...  (every key in main below)
#include <cuda_runtime.h>

#define TT_WORDS 4u          // stage words per parent block
#define TT_SLOT 64u          // words of a block's memory: x at 0, y at 32
#define TT_STRESS_WORDS 65536u

// t0's milestones (stage word 0 of its block).
#define T0_START 0x1u
#define T0_TRIG 0x2u
#define T0_LAUNCHED 0x4u
#define T0_STORED 0x8u
#define T0_END 0x10u
#define T0_GAVEUP 0x20u      // waited 1e9 cycles for t1's trigger, went on
// t1's milestones (stage word 1).
#define T1_START 0x1u
#define T1_GO 0x2u
#define T1_TRIG 0x4u
#define T1_STORED 0x8u
#define T1_END 0x10u
#define T1_GAVEUP 0x20u      // waited 1e9 cycles for its go, went on
// The child's result (stage word 2): TT_CHILD_RAN | y seen | x seen << 1.
#define TT_CHILD_RAN 0x100u
// Stage word 3: the launch's cudaGetLastError() + 1 (0: not reached).

enum { ORDER_NONE = 0, ORDER_TRIGGER_FIRST = 1, ORDER_LAUNCH_FIRST = 2 };
enum { WHO_SAME = 0, WHO_OTHER = 1 };
enum { CHILD_TAIL = 0, CHILD_FF = 1, CHILD_NAMED = 2, CHILD_NULL = 3 };
// Counters (mapped host memory, reset before each launch).
// C_LAUNCHED: blocks past their launch call (the slow block's `slowwait`);
// C_BEFORE_SLOW: children that started before the slow block's trigger;
// C_MISSED_Y_SLOW: the slow block's child missed y.
enum {
  C_PARENT_END = 0,
  C_CHILD_RAN = 1,
  C_AFTER_RAN = 2,
  C_DEVICE_LAUNCH = 3,
  C_LAUNCHED = 4,
  C_BEFORE_SLOW = 5,
  C_MISSED_Y_SLOW = 6,
  C_N = 8
};
#define TT_ALL 0xffffffffu   // trigb, launchb, slowb: every block (slowb: none)

struct tt_params {
  unsigned *mem;            // TT_SLOT words a parent block
  unsigned *stage;          // TT_WORDS words a parent block (mapped host memory)
  unsigned long long *ctr;  // C_N counters (mapped host memory)
  unsigned *stress_buf;     // TT_STRESS_WORDS words
  unsigned long long seed;
  unsigned order, who, child, delay, pre, rnd, stress, lanes, child_blocks, blocks, bs;
  // The follow-up (README.md, "The follow-up"): which blocks trigger and
  // launch (TT_ALL: every block, else that block alone); block `slowb`
  // spins `slow` cycles before its trigger (after its launch in
  // launch-first) and, with `slowwait`, first waits until every other block
  // is past its launch call.
  unsigned trigb, launchb, slowb, slow, slowwait;
};

__device__ __forceinline__ unsigned long long tt_mix(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ void tt_spin(unsigned cycles) {
  const long long start = clock64();
  while (clock64() - start < (long long)cycles) {
  }
}

// The harness's random delay (gc_delay of kernels/include/gridcheck.cuh):
// none a quarter of the time, else below rnd cycles scaled down by a random
// power of two.
__device__ __forceinline__ void tt_rdelay(const tt_params &p, unsigned b, unsigned site) {
  if (p.rnd == 0u) return;
  const unsigned long long r = tt_mix(p.seed ^ tt_mix(((unsigned long long)b << 32) | site));
  if ((r & 3ull) == 0ull) return;
  tt_spin((((unsigned)(r >> 32)) % (p.rnd + 1u)) >> ((unsigned)(r >> 2) & 7u));
}

// A milestone: one writer per word, so a plain store of the running mask.
__device__ __forceinline__ void tt_mark(const tt_params &p, unsigned b, unsigned w, unsigned &mask,
                                        unsigned bit) {
  mask |= bit;
  ((volatile unsigned *)p.stage)[(size_t)b * TT_WORDS + w] = mask;
  __threadfence_system();
}

// Waits for a shared flag, at most 1e9 cycles (about 0.5 s); false if it gave up.
__device__ __forceinline__ bool tt_wait(volatile unsigned *flag) {
  const long long start = clock64();
  while (*flag == 0u)
    if (clock64() - start > 1000000000ll) return false;
  return true;
}

extern "C" __global__ void tt_child(tt_params p, unsigned b) {
  if (threadIdx.x != 0u || blockIdx.x != 0u) return;
  volatile unsigned *m = p.mem + (size_t)b * TT_SLOT;
  const unsigned y = m[32];
  const unsigned x = m[0];
  ((volatile unsigned *)p.stage)[(size_t)b * TT_WORDS + 2] = TT_CHILD_RAN | (y & 1u) | ((x & 1u) << 1);
  if (p.slowb < p.blocks) {
    const unsigned slow_t0 = ((volatile unsigned *)p.stage)[(size_t)p.slowb * TT_WORDS];
    if (!(slow_t0 & T0_TRIG)) atomicAdd_system(p.ctr + C_BEFORE_SLOW, 1ull);
    if (b == p.slowb && !(y & 1u)) atomicAdd_system(p.ctr + C_MISSED_Y_SLOW, 1ull);
  }
  __threadfence_system();
  atomicAdd_system(p.ctr + C_CHILD_RAN, 1ull);
}

extern "C" __global__ void tt_after(tt_params p) {
  if (threadIdx.x == 0u && blockIdx.x == 0u) atomicAdd_system(p.ctr + C_AFTER_RAN, 1ull);
}

// The trigger (lane 0, or every lane with lanes >= 32), in the blocks
// `trigb` names; false where this block never triggers (then no T*_TRIG mark).
__device__ __forceinline__ bool tt_trigger(const tt_params &p, unsigned lane) {
  if (p.trigb != TT_ALL && blockIdx.x != p.trigb) return false;
  if (lane == 0u || p.lanes >= 32u) cudaTriggerProgrammaticLaunchCompletion();
  return true;
}

// The slow block's hold before its trigger: `slow` cycles, then (slowwait)
// until every other block is past its launch call, at most 1e9 cycles.
__device__ __forceinline__ void tt_slow(const tt_params &p, unsigned b, unsigned lane, unsigned &mask) {
  if (b != p.slowb) return;
  tt_spin(p.slow);
  if (p.slowwait != 0u && lane == 0u) {
    const long long start = clock64();
    while (*(volatile unsigned long long *)(p.ctr + C_LAUNCHED) + 1ull < p.blocks)
      if (clock64() - start > 1000000000ll) {
        tt_mark(p, b, 0, mask, T0_GAVEUP);
        break;
      }
  }
  __syncwarp();
}

extern "C" __global__ void tt_parent(tt_params p) {
  const unsigned b = blockIdx.x, warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
  __shared__ volatile unsigned go;     // t1 may go on (after t0's reference point)
  __shared__ volatile unsigned t0_go;  // t0 may launch (t1 triggered: trigger-first, other)
  __shared__ unsigned arrived;         // modeled warps done (ends the stress)
  if (threadIdx.x == 0u) {
    go = 0u;
    t0_go = 0u;
    arrived = 0u;
  }
  __syncthreads();
  volatile unsigned *m = p.mem + (size_t)b * TT_SLOT;
  unsigned mask = 0u;
  if (warp == 0u) {  // t0: the launching thread (lane 0); its warp runs along
    if (lane == 0u) tt_mark(p, b, 0, mask, T0_START);
    tt_rdelay(p, b, 0u);
    tt_spin(p.pre);
    if (p.order != ORDER_LAUNCH_FIRST) tt_slow(p, b, lane, mask);
    if (p.order == ORDER_TRIGGER_FIRST && p.who == WHO_SAME) {
      if (tt_trigger(p, lane) && lane == 0u) tt_mark(p, b, 0, mask, T0_TRIG);
    }
    if (p.order == ORDER_TRIGGER_FIRST && p.who == WHO_OTHER && !tt_wait(&t0_go) && lane == 0u)
      tt_mark(p, b, 0, mask, T0_GAVEUP);
    tt_rdelay(p, b, 1u);
    if (lane == 0u && (p.launchb == TT_ALL || b == p.launchb)) {
      cudaStream_t s = 0;
      if (p.child == CHILD_NAMED) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      switch (p.child) {
        case CHILD_TAIL: tt_child<<<p.child_blocks, 32, 0, cudaStreamTailLaunch>>>(p, b); break;
        case CHILD_FF: tt_child<<<p.child_blocks, 32, 0, cudaStreamFireAndForget>>>(p, b); break;
        default: tt_child<<<p.child_blocks, 32, 0, s>>>(p, b); break;
      }
      const cudaError_t err = cudaGetLastError();
      ((volatile unsigned *)p.stage)[(size_t)b * TT_WORDS + 3] = (unsigned)err + 1u;
      if (s != 0) cudaStreamDestroy(s);
      tt_mark(p, b, 0, mask, T0_LAUNCHED);
    }
    if (p.slowwait != 0u && lane == 0u) atomicAdd_system(p.ctr + C_LAUNCHED, 1ull);
    __syncwarp();
    if (p.order == ORDER_LAUNCH_FIRST) tt_slow(p, b, lane, mask);
    if (p.order == ORDER_LAUNCH_FIRST && p.who == WHO_SAME) {
      tt_rdelay(p, b, 2u);
      if (tt_trigger(p, lane) && lane == 0u) tt_mark(p, b, 0, mask, T0_TRIG);
    }
    // The reference point t1 counts its delay from: after the trigger when
    // t0 triggers after its launch, else after the launch.
    if (lane == 0u) go = 1u;
    tt_rdelay(p, b, 3u);
    if (lane == 0u) {
      m[0] = 1u;
      tt_mark(p, b, 0, mask, T0_STORED);
      atomicAdd(&arrived, 1u);
    }
  } else if (warp == 1u) {  // t1: the writing thread (lane 0)
    if (lane == 0u) tt_mark(p, b, 1, mask, T1_START);
    if (p.lanes >= 1024u && p.order == ORDER_TRIGGER_FIRST) tt_trigger(p, lane);
    tt_rdelay(p, b, 4u);
    tt_spin(p.pre);
    if (p.order == ORDER_TRIGGER_FIRST && p.who == WHO_OTHER) {
      const bool triggered = tt_trigger(p, lane);
      if (lane == 0u) {
        if (triggered) tt_mark(p, b, 1, mask, T1_TRIG);
        t0_go = 1u;
      }
    } else {
      const bool ok = tt_wait(&go);
      if (lane == 0u) tt_mark(p, b, 1, mask, ok ? T1_GO : T1_GAVEUP);
      if (p.order == ORDER_LAUNCH_FIRST && p.who == WHO_OTHER) {
        tt_rdelay(p, b, 5u);
        if (tt_trigger(p, lane) && lane == 0u) tt_mark(p, b, 1, mask, T1_TRIG);
      }
    }
    tt_spin(p.delay);
    if (lane == 0u) {
      m[32] = 1u;
      tt_mark(p, b, 1, mask, T1_STORED);
      atomicAdd(&arrived, 1u);
    }
  } else if (p.lanes >= 1024u && p.order == ORDER_TRIGGER_FIRST) {  // every thread triggers
    tt_trigger(p, lane);
  }
  if (warp >= 2u && p.stress != 0u) {  // stress warps, as gc_stress: until both modeled warps are done
    volatile unsigned *s = p.stress_buf;
    unsigned long long r = tt_mix(p.seed ^ ((unsigned long long)b << 20) ^ threadIdx.x);
    unsigned acc = 0u;
    for (unsigned i = 0u; i < 65536u && *(volatile unsigned *)&arrived < 2u; ++i) {
      r = tt_mix(r);
      s[(unsigned)r & (TT_STRESS_WORDS - 1u)] = i;
      acc += s[(unsigned)(r >> 32) & (TT_STRESS_WORDS - 1u)];
    }
    if (acc == 0xdeadbeefu) s[0] = acc;
  }
  if (warp == 1u && lane == 0u) tt_mark(p, b, 1, mask, T1_END);
  __syncthreads();
  if (threadIdx.x == 0u) {
    tt_mark(p, b, 0, mask, T0_END);
    atomicAdd_system(p.ctr + C_PARENT_END, 1ull);
  }
}

// The parent launched from the device: one thread launches it into its
// block's NULL stream.
extern "C" __global__ void tt_launcher(tt_params p) {
  if (threadIdx.x != 0u || blockIdx.x != 0u) return;
  tt_parent<<<p.blocks, p.bs>>>(p);
  p.ctr[C_DEVICE_LAUNCH] = (unsigned long long)cudaGetLastError() + 1ull;
  __threadfence_system();
}

#ifndef TT_MODULE_ONLY
#include "host.cuh"
#endif
