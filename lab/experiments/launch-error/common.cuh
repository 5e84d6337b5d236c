// launcherr's shared part: the call sites of the programs (programs.cuh), the
// counters every call is counted in, and the device helpers that make a
// block's streams and events, record, wait and launch, each call counted and
// each failure kept with the ordinals of the objects it used. Runtime API
// only: no gridcheck code.
#pragma once

#include <cuda_runtime.h>

// What a call is, for --drop KIND (every call of that kind left out).
enum Kind { K_RECORD, K_WAIT, K_LAUNCH, K_TAIL, K_FF, K_TRIGGER, K_GRIDSYNC, K_ERR, K_MEM, K_KINDS };
static const char *kKindNames[K_KINDS] = {"record", "wait", "launch", "tail", "ff",
                                          "trigger", "gridsync", "err", "mem"};

// Every call site of every program: id, label, kind. The programs are the
// campaign's findings of 2026-11-27 on the H200 (records/nvidia-h200/
// campaigns/2026-11-27/fuzz/findings/NNN-launch-error.yaml, their shrunk
// finding program: FNNN) and the context of 014, the one whose plain program
// showed the error (C1 to C5: campaign-launch-error-014-context-1 to -5).
#define SITES(X)                                                          \
  X(C1_LAUNCH, "C1 k0.t0 launch k1 s2", K_LAUNCH)                        \
  X(C1_TRIGGER, "C1 k0.t1 trigger", K_TRIGGER)                           \
  X(C1_STORE, "C1 k0.t2 store x 1", K_MEM)                               \
  X(C1_GRIDSYNC, "C1 k0.t2 gridsync", K_GRIDSYNC)                        \
  X(C2_LAUNCH, "C2 k0.t0 launch k1 s1", K_LAUNCH)                        \
  X(C2_MEM, "C2 k0.t0 load x, store x 1", K_MEM)                         \
  X(C2_RECORD, "C2 k1.b0.t0 record e1 s2", K_RECORD)                     \
  X(C2_FF, "C2 k1.b0.t0 launch k2 fire-and-forget", K_FF)                \
  X(C2_STORE1, "C2 k1.b1.t0 store x 3", K_MEM)                           \
  X(C2_LOAD2, "C2 k2.t0 load x", K_MEM)                                  \
  X(C2_TRIGGER, "C2 k2.t0 trigger", K_TRIGGER)                           \
  X(C3_RECORD, "C3 k0.t0 record e1", K_RECORD)                           \
  X(C3_STORE, "C3 k0.t0 store y 1", K_MEM)                               \
  X(C3_LAUNCH, "C3 k0.t0 launch k1", K_LAUNCH)                           \
  X(C3_FF, "C3 k0.t0 launch k2 fire-and-forget", K_FF)                   \
  X(C3_STORE1, "C3 k1.b0.t0 store y 1", K_MEM)                           \
  X(C3_MEM2, "C3 k2.t0 store x 1, load x", K_MEM)                        \
  X(C4_MEM0, "C4 k0.b0.t0 load x, store x 3, store x 3", K_MEM)          \
  X(C4_LAUNCH, "C4 k0.b1.t0 launch k1", K_LAUNCH)                        \
  X(C4_LOAD, "C4 k0.b1.t0 load x", K_MEM)                                \
  X(C4_STORE1, "C4 k1.t0 store x 3", K_MEM)                              \
  X(C4_LAUNCH1, "C4 k1.t0 launch k2", K_LAUNCH)                          \
  X(C4_MEM2, "C4 k2.t0 store x 3, syncthreads, load x", K_MEM)           \
  X(C5_LOAD, "C5 k0.b0.t0 load x", K_MEM)                                \
  X(C5_TRIGGER0, "C5 k0.b0.t1 trigger", K_TRIGGER)                       \
  X(C5_RECORD, "C5 k0.b1.t0 record e4", K_RECORD)                        \
  X(C5_TRIGGER1, "C5 k0.b1.t0 trigger", K_TRIGGER)                       \
  X(F014_LAUNCH, "F014 k0.t1 launch k1 s1", K_LAUNCH)                    \
  X(F014_TRIGGER, "F014 k1.t0 trigger", K_TRIGGER)                       \
  X(F014_LOAD, "F014 k1.t1 load x", K_MEM)                               \
  X(F014_PEEK, "F014 k1.t1 peekerror", K_ERR)                            \
  X(F014_RECORD, "F014 k1.t0 record e1 s1", K_RECORD)                    \
  X(F014_WAIT, "F014 k1.t1 waitevent null e1", K_WAIT)                   \
  X(F004_LAUNCH, "F004 k0.t0 launch k2 s1", K_LAUNCH)                    \
  X(F004_RECORD, "F004 k2.t0 record e2 s2", K_RECORD)                    \
  X(F004_TRIGGER, "F004 k2.t0 trigger", K_TRIGGER)                       \
  X(F013_STORE, "F013 k0.t0 store x 2", K_MEM)                           \
  X(F013_LAUNCH, "F013 k1.t0 launch k2", K_LAUNCH)                       \
  X(F013_RECORD, "F013 k2.t0 record e1 s1", K_RECORD)                    \
  X(F013_STORE2, "F013 k2.t0 store x 2", K_MEM)                          \
  X(F005_LAUNCH, "F005 k0.t0 launch k1", K_LAUNCH)                       \
  X(F005_RECORD1, "F005 k1.b0.t0 record e1", K_RECORD)                   \
  X(F005_RECORD2, "F005 k1.b0.t0 record e2 s1", K_RECORD)                \
  X(F012_MEM, "F012 k0.t0 store x 2, load z", K_MEM)                     \
  X(F012_LAUNCH, "F012 k0.t1 launch k1 s1", K_LAUNCH)                    \
  X(F012_PEEK, "F012 k0.t1 peekerror", K_ERR)                            \
  X(F012_RECORD2, "F012 k1.t0 record e2", K_RECORD)                      \
  X(F012_RECORD1, "F012 k1.t0 record e1 s2", K_RECORD)                   \
  X(F012_GRIDSYNC, "F012 k1.t1 gridsync", K_GRIDSYNC)                    \
  X(F012_RECORD1N, "F012 k1.t1 record e1", K_RECORD)                     \
  X(F011_STORE, "F011 k0.t0 store x 1", K_MEM)                           \
  X(F011_LAUNCH, "F011 k0.t0 launch k1 s1", K_LAUNCH)                    \
  X(F011_LOAD, "F011 k1.t1 load x", K_MEM)                               \
  X(F011_WAIT, "F011 k1.t1 waitevent s1 e2", K_WAIT)                     \
  X(F011_STORE1, "F011 k1.t2 store x 1", K_MEM)                          \
  X(F011_GRIDSYNC, "F011 k1.t2 gridsync", K_GRIDSYNC)                    \
  X(F011_RECORD, "F011 k1.t2 record e2 s1", K_RECORD)                    \
  X(F006_LAUNCH, "F006 k0.t0 launch k1", K_LAUNCH)                       \
  X(F006_STORE, "F006 k0.t1 store y 1 (then store y 3)", K_MEM)          \
  X(F006_PEEK, "F006 k0.t1 peekerror", K_ERR)                            \
  X(F006_LOAD, "F006 k1.t0 load x", K_MEM)                               \
  X(F006_RECORD, "F006 k1.t0 record e1 s1", K_RECORD)                    \
  X(F006_MEM2, "F006 k2 (host-pdl).t0 store x 3, load x", K_MEM)         \
  X(F003_GETERR0, "F003 k0.t0 geterror", K_ERR)                          \
  X(F003_TAIL, "F003 k0.t1 launch k1 tail", K_TAIL)                      \
  X(F003_STORE, "F003 k0.t1 store x 3", K_MEM)                           \
  X(F003_GETERR1, "F003 k0.t1 geterror", K_ERR)                          \
  X(F003_TRIGGER, "F003 k0.t0 trigger", K_TRIGGER)                       \
  X(F003_LOAD, "F003 k0.t0 load x", K_MEM)                               \
  X(F003_GRIDSYNC, "F003 k1.t0 gridsync", K_GRIDSYNC)                    \
  X(F003_RECORD, "F003 k1.t0 record e1 s1", K_RECORD)                    \
  X(F003_LOAD1, "F003 k1.t1 load x", K_MEM)                              \
  X(F007_TAIL, "F007 k0.t0 launch k1 tail", K_TAIL)                      \
  X(F007_TRIGGER1, "F007 k0.t1 trigger", K_TRIGGER)                      \
  X(F007_RECORD, "F007 k0.t1 record e2 s1", K_RECORD)                    \
  X(F007_TRIGGER2, "F007 k0.t2 trigger", K_TRIGGER)                      \
  X(F007_STORE, "F007 k0.t2 store x 3 (twice)", K_MEM)                   \
  X(F007_LOAD, "F007 k1.t0 load x", K_MEM)                               \
  X(F007_RECORD1, "F007 k1.t0 record e2", K_RECORD)

#define AS_ENUM(id, label, kind) id,
enum SiteId { SITES(AS_ENUM) kSites };
#define AS_LABEL(id, label, kind) label,
static const char *kSiteLabels[kSites] = {SITES(AS_LABEL)};
#define AS_KIND(id, label, kind) kind,
static const int kSiteKinds[kSites] = {SITES(AS_KIND)};
__constant__ int d_site_kind[kSites] = {SITES(AS_KIND)};

constexpr int kKernels = 48;   // kernels counted in `ended` (programs.cuh numbers them)
constexpr int kFailCap = 1024; // failures kept with their detail

// One failed call: where, when, and which objects it used (their creation
// ordinals through the process, and their handles).
struct Failure {
  unsigned site, err, prog, round, launch, block, ev_ord, st_ord;
  unsigned long long event, stream;
};

struct Counters {
  unsigned long long calls[kSites];  // times each site's call ran
  unsigned long long fails[kSites];  // ... and returned an error
  unsigned first[kSites];            // the first error of each site
  unsigned long long events, streams;       // created through the process (the ordinals)
  unsigned long long create_fails[2];       // streams, events that could not be created
  unsigned create_first[2];
  unsigned ended[kKernels];  // blocks of each kernel that reached their end (this launch)
  unsigned nfail;
  Failure fail[kFailCap];
};

// Destroying the block's objects at its end (--destroy).
enum { DESTROY_EVENTS = 1, DESTROY_STREAMS = 2 };

// What every kernel gets (by value; children get it again with the slot).
struct P {
  Counters *c;
  unsigned *mem;               // 4 words an instance: x, y, z
  unsigned long long seed;     // this launch's seed for the delays
  unsigned max_delay;          // cycles; 0: no delays
  unsigned drop_kinds;         // bit K: every call of kind K left out
  int drop_site;               // one site left out, or -1
  unsigned destroy;            // DESTROY_* bits
  unsigned no_streams;         // named streams replaced by the block's NULL stream
  unsigned extra_warps;        // idle warps added to every block (the harness adds 2)
  unsigned prog, round, launch;
};

// The harness's delay before an operation (kernels/include/gridcheck.cuh,
// gc_delay): none a quarter of the time, else up to max_delay cycles
// scaled down by a random power of two.
__device__ __forceinline__ unsigned long long mix64(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ void delay(const P &p, unsigned slot, unsigned site) {
  if (p.max_delay == 0u) return;
  const unsigned long long r = mix64(p.seed ^ mix64(((unsigned long long)slot << 32) | site));
  if ((r & 3ull) == 0ull) return;
  const unsigned shift = (unsigned)(r >> 2) & 7u;
  const long long cycles = (long long)(((unsigned)(r >> 32) % (p.max_delay + 1u)) >> shift);
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Whether site `site` runs (not left out); its delay first.
__device__ __forceinline__ bool go(const P &p, unsigned slot, int site) {
  if ((p.drop_kinds >> d_site_kind[site]) & 1u) return false;
  if (p.drop_site == site) return false;
  delay(p, slot, (unsigned)site);
  return true;
}

// A call of `site` returned `e`: counted, and a failure kept.
__device__ void note(const P &p, int site, cudaError_t e, unsigned ev_ord, unsigned st_ord,
                     unsigned long long event, unsigned long long stream) {
  Counters *c = p.c;
  atomicAdd(&c->calls[site], 1ull);
  if (e == cudaSuccess) return;
  if (atomicAdd(&c->fails[site], 1ull) == 0ull) c->first[site] = (unsigned)e;
  const unsigned i = atomicAdd(&c->nfail, 1u);
  if (i < (unsigned)kFailCap) {
    Failure f = {(unsigned)site, (unsigned)e, p.prog, p.round, p.launch, blockIdx.x, ev_ord, st_ord,
                 event, stream};
    c->fail[i] = f;
  }
}

// A block's named streams and events, made by its thread 0 before its first
// barrier and destroyed after its last (as the campaign's programs do).
struct Obj {
  cudaStream_t s[3];
  cudaEvent_t e[3];
  unsigned so[3], eo[3];
};

__device__ void make(const P &p, Obj &o, int streams, int events) {
  for (int i = 0; i < streams; i++) {
    o.s[i] = 0;
    o.so[i] = ~0u;
    if (p.no_streams) continue;
    const cudaError_t e = cudaStreamCreateWithFlags(&o.s[i], cudaStreamNonBlocking);
    (void)cudaGetLastError();
    o.so[i] = (unsigned)atomicAdd(&p.c->streams, 1ull);
    if (e != cudaSuccess) {
      if (atomicAdd(&p.c->create_fails[0], 1ull) == 0ull) p.c->create_first[0] = (unsigned)e;
      o.s[i] = 0;
    }
  }
  for (int i = 0; i < events; i++) {
    o.e[i] = 0;
    const cudaError_t e = cudaEventCreateWithFlags(&o.e[i], cudaEventDisableTiming);
    (void)cudaGetLastError();
    o.eo[i] = (unsigned)atomicAdd(&p.c->events, 1ull);
    if (e != cudaSuccess) {
      if (atomicAdd(&p.c->create_fails[1], 1ull) == 0ull) p.c->create_first[1] = (unsigned)e;
      o.e[i] = 0;
    }
  }
}

__device__ void unmake(const P &p, Obj &o, int streams, int events) {
  if (p.destroy & DESTROY_STREAMS)
    for (int i = 0; i < streams; i++)
      if (o.s[i]) cudaStreamDestroy(o.s[i]);
  if (p.destroy & DESTROY_EVENTS)
    for (int i = 0; i < events; i++)
      if (o.e[i]) cudaEventDestroy(o.e[i]);
}

// The stream `si` of the block (-1: its NULL stream).
__device__ __forceinline__ cudaStream_t str(const Obj &o, int si) { return si < 0 ? (cudaStream_t)0 : o.s[si]; }
__device__ __forceinline__ unsigned sord(const Obj &o, int si) { return si < 0 ? ~0u : o.so[si]; }

// `record e s`.
__device__ void rec(const P &p, unsigned slot, int site, const Obj &o, int ei, int si) {
  if (!go(p, slot, site) || o.e[ei] == 0) return;
  const cudaError_t e = cudaEventRecord(o.e[ei], str(o, si));
  (void)cudaGetLastError();
  note(p, site, e, o.eo[ei], sord(o, si), (unsigned long long)o.e[ei],
       (unsigned long long)str(o, si));
}

// `waitevent s e`.
__device__ void wait_event(const P &p, unsigned slot, int site, const Obj &o, int si, int ei) {
  if (!go(p, slot, site) || o.e[ei] == 0) return;
  const cudaError_t e = cudaStreamWaitEvent(str(o, si), o.e[ei], 0u);
  (void)cudaGetLastError();
  note(p, site, e, o.eo[ei], sord(o, si), (unsigned long long)o.e[ei],
       (unsigned long long)str(o, si));
}

// `launch KERN` into `stream` with `grid` blocks of `warps` warps (and the
// extra ones): the child gets the parameters and the instance's slot.
#define LAUNCH(site, kern, grid, warps, stream)                                              \
  do {                                                                                       \
    if (go(p, slot, site)) {                                                                 \
      const cudaStream_t ls_ = (stream);                                                     \
      kern<<<(grid), 32u * ((warps) + p.extra_warps), 0, ls_>>>(p, slot);                    \
      note(p, site, cudaGetLastError(), ~0u, ~0u, 0ull, (unsigned long long)ls_);            \
    }                                                                                        \
  } while (0)

#define TRIGGER(site) \
  if (go(p, slot, site)) cudaTriggerProgrammaticLaunchCompletion()
#define GRIDSYNC(site) \
  if (go(p, slot, site)) cudaGridDependencySynchronize()
#define PEEK(site) \
  if (go(p, slot, site)) (void)cudaPeekAtLastError()
#define GETERR(site) \
  if (go(p, slot, site)) (void)cudaGetLastError()
// The instance's locations.
#define X_ (m[0])
#define Y_ (m[1])
#define Z_ (m[2])
#define MEM(site, stmt) \
  if (go(p, slot, site)) { stmt; }

// Thread tN of a block is lane 0 of its warp N.
#define T(n) if (threadIdx.x == 32u * (n))
// Thread 0 makes the block's objects; after the block's last barrier it
// destroys them and counts the block's end.
#define BEGIN(ns, ne)                  \
  __shared__ Obj o;                    \
  if (threadIdx.x == 0u) make(p, o, ns, ne); \
  __syncthreads()
#define END(kid, ns, ne)                 \
  __syncthreads();                       \
  if (threadIdx.x == 0u) {               \
    unmake(p, o, ns, ne);                \
    atomicAdd(&p.c->ended[kid], 1u);     \
  }
