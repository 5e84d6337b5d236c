// launcherr's programs: the shapes of the campaign's launch-error findings on
// the H200 (2026-11-27), each written as its plain program writes it
// (crates/campaign/src/plain.rs: thread tN is lane 0 of warp N; thread 0 of a
// block makes the block's named streams and events before its first barrier
// and destroys them after its last), with every call counted (common.cuh).
// FNNN is finding NNN's shrunk program (records/nvidia-h200/campaigns/
// 2026-11-27/fuzz/findings/NNN-launch-error.yaml, its last test); C1 to C5 are
// the context of 014, the one whose plain program showed the error.
#pragma once

#include "common.cuh"

// Kernels counted in Counters::ended, for a hang's report.
enum KernelId {
  C1_k0, C1_k1, C2_k0, C2_k1, C2_k2, C3_k0, C3_k1, C3_k2, C4_k0, C4_k1, C4_k2, C5_k0,
  F014_k0, F014_k1, F004_k0, F004_k2, F013_k0, F013_k1, F013_k2, F005_k0, F005_k1,
  F012_k0, F012_k1, F011_k0, F011_k1, F006_k0, F006_k1, F006_k2, F003_k0, F003_k1,
  F007_k0, F007_k1, kKernelIds
};
static_assert(kKernelIds <= kKernels, "Counters::ended is too small");

#define SLOT_OF_HOST(blocks) const unsigned slot = blockIdx.x / (blocks)
#define MEMORY volatile unsigned *m = p.mem + (size_t)slot * 4u; (void)m

// ---- C1: k0 (host): t0 [launch k1 s2]; t1 [trigger]; t2 [store x 1, gridsync]
__global__ void c1_k1(P p, unsigned slot) {
  BEGIN(0, 0);
  END(C1_k1, 0, 0);
}
__global__ void c1_k0(P p) {
  SLOT_OF_HOST(1); MEMORY;
  BEGIN(1, 0);
  T(0) { LAUNCH(C1_LAUNCH, c1_k1, 1, 1, str(o, 0)); }
  T(1) { TRIGGER(C1_TRIGGER); }
  T(2) { MEM(C1_STORE, X_ = 1u); GRIDSYNC(C1_GRIDSYNC); }
  END(C1_k0, 1, 0);
}

// ---- C2: k0: t0 [launch k1 s1, load x, store x 1]; k1 (2 blocks, each
// with s2 and e1): b0.t0 [record e1 s2, launch k2 fire-and-forget], b1.t0
// [store x 3]; k2: t0 [load x, trigger]
__global__ void c2_k2(P p, unsigned slot) {
  MEMORY;
  BEGIN(0, 0);
  T(0) { MEM(C2_LOAD2, (void)X_); TRIGGER(C2_TRIGGER); }
  END(C2_k2, 0, 0);
}
__global__ void c2_k1(P p, unsigned slot) {
  MEMORY;
  BEGIN(1, 1);
  if (blockIdx.x % 2u == 0u) {
    T(0) {
      rec(p, slot, C2_RECORD, o, 0, 0);
      LAUNCH(C2_FF, c2_k2, 1, 1, cudaStreamFireAndForget);
    }
  } else {
    T(0) { MEM(C2_STORE1, X_ = 3u); }
  }
  END(C2_k1, 1, 1);
}
__global__ void c2_k0(P p) {
  SLOT_OF_HOST(1); MEMORY;
  BEGIN(1, 0);
  T(0) { LAUNCH(C2_LAUNCH, c2_k1, 2, 1, str(o, 0)); MEM(C2_MEM, (void)X_; X_ = 1u); }
  END(C2_k0, 1, 0);
}

// ---- C3: k0 (e1): t0 [record e1, store y 1, launch k1 (2 blocks),
// launch k2 fire-and-forget]; k1: b0.t0 [store y 1]; k2: t0 [store x 1, load x]
__global__ void c3_k1(P p, unsigned slot) {
  MEMORY;
  BEGIN(0, 0);
  if (blockIdx.x % 2u == 0u) { T(0) { MEM(C3_STORE1, Y_ = 1u); } }
  END(C3_k1, 0, 0);
}
__global__ void c3_k2(P p, unsigned slot) {
  MEMORY;
  BEGIN(0, 0);
  T(0) { MEM(C3_MEM2, X_ = 1u; (void)X_); }
  END(C3_k2, 0, 0);
}
__global__ void c3_k0(P p) {
  SLOT_OF_HOST(1); MEMORY;
  BEGIN(0, 1);
  T(0) {
    rec(p, slot, C3_RECORD, o, 0, -1);
    MEM(C3_STORE, Y_ = 1u);
    LAUNCH(C3_LAUNCH, c3_k1, 2, 1, (cudaStream_t)0);
    LAUNCH(C3_FF, c3_k2, 1, 1, cudaStreamFireAndForget);
  }
  END(C3_k0, 0, 1);
}

// ---- C4: k0 (2 blocks an instance): b0.t0 [load x, store x 3, store x 3],
// b1.t0 [launch k1, load x]; k1: t0 [store x 3, launch k2]; k2: t0
// [store x 3, syncthreads, load x]
__global__ void c4_k2(P p, unsigned slot) {
  MEMORY;
  BEGIN(0, 0);
  T(0) { MEM(C4_MEM2, X_ = 3u); }
  __syncthreads();
  T(0) { (void)X_; }
  END(C4_k2, 0, 0);
}
__global__ void c4_k1(P p, unsigned slot) {
  MEMORY;
  BEGIN(0, 0);
  T(0) { MEM(C4_STORE1, X_ = 3u); LAUNCH(C4_LAUNCH1, c4_k2, 1, 1, (cudaStream_t)0); }
  END(C4_k1, 0, 0);
}
__global__ void c4_k0(P p) {
  SLOT_OF_HOST(2); MEMORY;
  BEGIN(0, 0);
  if (blockIdx.x % 2u == 0u) {
    T(0) { MEM(C4_MEM0, (void)X_; X_ = 3u; X_ = 3u); }
  } else {
    T(0) { LAUNCH(C4_LAUNCH, c4_k1, 1, 1, (cudaStream_t)0); MEM(C4_LOAD, (void)X_); }
  }
  END(C4_k0, 0, 0);
}

// ---- C5: k0 (2 blocks an instance, each with e4): b0.t0 [load x], b0.t1
// [trigger]; b1.t0 [record e4, trigger]
__global__ void c5_k0(P p) {
  SLOT_OF_HOST(2); MEMORY;
  BEGIN(0, 1);
  if (blockIdx.x % 2u == 0u) {
    T(0) { MEM(C5_LOAD, (void)X_); }
    T(1) { TRIGGER(C5_TRIGGER0); }
  } else {
    T(0) { rec(p, slot, C5_RECORD, o, 0, -1); TRIGGER(C5_TRIGGER1); }
  }
  END(C5_k0, 0, 1);
}

// ---- F014: k0 (s1): t1 [launch k1 s1]; k1 (s1, e1): t0 [trigger,
// syncthreads, record e1 s1]; t1 [load x, peekerror, syncthreads, waitevent null e1]
__global__ void f014_k1(P p, unsigned slot) {
  MEMORY;
  BEGIN(1, 1);
  T(0) { TRIGGER(F014_TRIGGER); }
  T(1) { MEM(F014_LOAD, (void)X_); PEEK(F014_PEEK); }
  __syncthreads();
  T(0) { rec(p, slot, F014_RECORD, o, 0, 0); }
  T(1) { wait_event(p, slot, F014_WAIT, o, -1, 0); }
  END(F014_k1, 1, 1);
}
__global__ void f014_k0(P p) {
  SLOT_OF_HOST(1);
  BEGIN(1, 0);
  T(1) { LAUNCH(F014_LAUNCH, f014_k1, 1, 2, str(o, 0)); }
  END(F014_k0, 1, 0);
}

// ---- F004: k0 (s1): t0 [launch k2 s1]; k2 (s2, e2): t0 [record e2 s2, trigger]
__global__ void f004_k2(P p, unsigned slot) {
  BEGIN(1, 1);
  T(0) { rec(p, slot, F004_RECORD, o, 0, 0); TRIGGER(F004_TRIGGER); }
  END(F004_k2, 1, 1);
}
__global__ void f004_k0(P p) {
  SLOT_OF_HOST(1);
  BEGIN(1, 0);
  T(0) { LAUNCH(F004_LAUNCH, f004_k2, 1, 1, str(o, 0)); }
  END(F004_k0, 1, 0);
}

// ---- F013: k0 (host): t0 [store x 2]; k1 (host): t0 [launch k2]; k2 (s1,
// e1; 2 warps): t0 [record e1 s1, store x 2]
__global__ void f013_k0(P p) {
  SLOT_OF_HOST(1); MEMORY;
  BEGIN(0, 0);
  T(0) { MEM(F013_STORE, X_ = 2u); }
  END(F013_k0, 0, 0);
}
__global__ void f013_k2(P p, unsigned slot) {
  MEMORY;
  BEGIN(1, 1);
  T(0) { rec(p, slot, F013_RECORD, o, 0, 0); MEM(F013_STORE2, X_ = 2u); }
  END(F013_k2, 1, 1);
}
__global__ void f013_k1(P p) {
  SLOT_OF_HOST(1);
  BEGIN(0, 0);
  T(0) { LAUNCH(F013_LAUNCH, f013_k2, 1, 2, (cudaStream_t)0); }
  END(F013_k1, 0, 0);
}

// ---- F005: k0: t0 [launch k1]; k1 (2 blocks, each with s1, e1, e2):
// b0.t0 [record e1, record e2 s1]
__global__ void f005_k1(P p, unsigned slot) {
  BEGIN(1, 2);
  if (blockIdx.x % 2u == 0u) {
    T(0) { rec(p, slot, F005_RECORD1, o, 0, -1); rec(p, slot, F005_RECORD2, o, 1, 0); }
  }
  END(F005_k1, 1, 2);
}
__global__ void f005_k0(P p) {
  SLOT_OF_HOST(1);
  BEGIN(0, 0);
  T(0) { LAUNCH(F005_LAUNCH, f005_k1, 2, 1, (cudaStream_t)0); }
  END(F005_k0, 0, 0);
}

// ---- F012: k0 (s1): t0 [store x 2, load z]; t1 [launch k1 s1, peekerror];
// k1 (s2, e2, e1): t0 [record e2, record e1 s2]; t1 [gridsync, record e1]
__global__ void f012_k1(P p, unsigned slot) {
  BEGIN(1, 2);
  T(0) { rec(p, slot, F012_RECORD2, o, 0, -1); rec(p, slot, F012_RECORD1, o, 1, 0); }
  T(1) { GRIDSYNC(F012_GRIDSYNC); rec(p, slot, F012_RECORD1N, o, 1, -1); }
  END(F012_k1, 1, 2);
}
__global__ void f012_k0(P p) {
  SLOT_OF_HOST(1); MEMORY;
  BEGIN(1, 0);
  T(0) { MEM(F012_MEM, X_ = 2u; (void)Z_); }
  T(1) { LAUNCH(F012_LAUNCH, f012_k1, 1, 2, str(o, 0)); PEEK(F012_PEEK); }
  END(F012_k0, 1, 0);
}

// ---- F011: k0 (s1): t0 [store x 1, launch k1 s1]; k1 (s1, e2; 3 warps):
// t1 [load x, waitevent s1 e2]; t2 [store x 1, gridsync, record e2 s1]
__global__ void f011_k1(P p, unsigned slot) {
  MEMORY;
  BEGIN(1, 1);
  T(1) { MEM(F011_LOAD, (void)X_); wait_event(p, slot, F011_WAIT, o, 0, 0); }
  T(2) { MEM(F011_STORE1, X_ = 1u); GRIDSYNC(F011_GRIDSYNC); rec(p, slot, F011_RECORD, o, 0, 0); }
  END(F011_k1, 1, 1);
}
__global__ void f011_k0(P p) {
  SLOT_OF_HOST(1); MEMORY;
  BEGIN(1, 0);
  T(0) { MEM(F011_STORE, X_ = 1u); LAUNCH(F011_LAUNCH, f011_k1, 1, 3, str(o, 0)); }
  END(F011_k0, 1, 0);
}

// ---- F006: k0: t0 [launch k1]; t1 [store y 1, peekerror, store y 3];
// k1 (s1, e1): t0 [load x, record e1 s1]; k2 (host, PDL secondary of k0):
// t0 [store x 3, load x]
__global__ void f006_k1(P p, unsigned slot) {
  MEMORY;
  BEGIN(1, 1);
  T(0) { MEM(F006_LOAD, (void)X_); rec(p, slot, F006_RECORD, o, 0, 0); }
  END(F006_k1, 1, 1);
}
__global__ void f006_k0(P p) {
  SLOT_OF_HOST(1); MEMORY;
  BEGIN(0, 0);
  T(0) { LAUNCH(F006_LAUNCH, f006_k1, 1, 1, (cudaStream_t)0); }
  T(1) { MEM(F006_STORE, Y_ = 1u); PEEK(F006_PEEK); MEM(F006_STORE, Y_ = 3u); }
  END(F006_k0, 0, 0);
}
__global__ void f006_k2(P p) {
  SLOT_OF_HOST(1); MEMORY;
  BEGIN(0, 0);
  T(0) { MEM(F006_MEM2, X_ = 3u; (void)X_); }
  END(F006_k2, 0, 0);
}

// ---- F003: k0: t0 [geterror, syncthreads, trigger, load x]; t1 [launch
// k1 tail, store x 3, geterror, syncthreads]; k1 (s1, e1): t0 [gridsync,
// record e1 s1]; t1 [load x]
__global__ void f003_k1(P p, unsigned slot) {
  MEMORY;
  BEGIN(1, 1);
  T(0) { GRIDSYNC(F003_GRIDSYNC); rec(p, slot, F003_RECORD, o, 0, 0); }
  T(1) { MEM(F003_LOAD1, (void)X_); }
  END(F003_k1, 1, 1);
}
__global__ void f003_k0(P p) {
  SLOT_OF_HOST(1); MEMORY;
  BEGIN(0, 0);
  T(0) { GETERR(F003_GETERR0); }
  T(1) {
    LAUNCH(F003_TAIL, f003_k1, 1, 2, cudaStreamTailLaunch);
    MEM(F003_STORE, X_ = 3u);
    GETERR(F003_GETERR1);
  }
  __syncthreads();
  T(0) { TRIGGER(F003_TRIGGER); MEM(F003_LOAD, (void)X_); }
  END(F003_k0, 0, 0);
}

// ---- F007: k0 (s1, e2): t0 [launch k1 tail, syncthreads]; t1
// [syncthreads, trigger, record e2 s1]; t2 [syncthreads, trigger, store x 3,
// store x 3]; k1 (e2): t0 [load x, record e2]
__global__ void f007_k1(P p, unsigned slot) {
  MEMORY;
  BEGIN(0, 1);
  T(0) { MEM(F007_LOAD, (void)X_); rec(p, slot, F007_RECORD1, o, 0, -1); }
  END(F007_k1, 0, 1);
}
__global__ void f007_k0(P p) {
  SLOT_OF_HOST(1); MEMORY;
  BEGIN(1, 1);
  T(0) { LAUNCH(F007_TAIL, f007_k1, 1, 1, cudaStreamTailLaunch); }
  __syncthreads();
  T(1) { TRIGGER(F007_TRIGGER1); rec(p, slot, F007_RECORD, o, 0, 0); }
  T(2) { TRIGGER(F007_TRIGGER2); MEM(F007_STORE, X_ = 3u; X_ = 3u); }
  END(F007_k0, 1, 1);
}

// ---- The host side: each program's host kernels into stream `s`.
static bool g_no_pdl = false;  // --drop pdl: F006's k2 launched as a plain kernel

static unsigned threads(unsigned warps, const P &p) { return 32u * (warps + p.extra_warps); }

static void launch_pdl(void (*k)(P), unsigned grid, unsigned block, cudaStream_t s, const P &p) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = s;
  cudaLaunchAttribute a[1];
  a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = a;
  cfg.numAttrs = g_no_pdl ? 0 : 1;
  cudaLaunchKernelEx(&cfg, k, p);
}

static void h_c1(const P &p, unsigned n, cudaStream_t s) { c1_k0<<<n, threads(3, p), 0, s>>>(p); }
static void h_c2(const P &p, unsigned n, cudaStream_t s) { c2_k0<<<n, threads(1, p), 0, s>>>(p); }
static void h_c3(const P &p, unsigned n, cudaStream_t s) { c3_k0<<<n, threads(1, p), 0, s>>>(p); }
static void h_c4(const P &p, unsigned n, cudaStream_t s) { c4_k0<<<2 * n, threads(1, p), 0, s>>>(p); }
static void h_c5(const P &p, unsigned n, cudaStream_t s) { c5_k0<<<2 * n, threads(2, p), 0, s>>>(p); }
static void h_f014(const P &p, unsigned n, cudaStream_t s) { f014_k0<<<n, threads(2, p), 0, s>>>(p); }
static void h_f004(const P &p, unsigned n, cudaStream_t s) { f004_k0<<<n, threads(1, p), 0, s>>>(p); }
static void h_f013(const P &p, unsigned n, cudaStream_t s) {
  f013_k0<<<n, threads(1, p), 0, s>>>(p);
  f013_k1<<<n, threads(1, p), 0, s>>>(p);
}
static void h_f005(const P &p, unsigned n, cudaStream_t s) { f005_k0<<<n, threads(1, p), 0, s>>>(p); }
static void h_f012(const P &p, unsigned n, cudaStream_t s) { f012_k0<<<n, threads(2, p), 0, s>>>(p); }
static void h_f011(const P &p, unsigned n, cudaStream_t s) { f011_k0<<<n, threads(1, p), 0, s>>>(p); }
static void h_f006(const P &p, unsigned n, cudaStream_t s) {
  f006_k0<<<n, threads(2, p), 0, s>>>(p);
  launch_pdl(f006_k2, n, threads(1, p), s, p);
}
static void h_f003(const P &p, unsigned n, cudaStream_t s) { f003_k0<<<n, threads(2, p), 0, s>>>(p); }
static void h_f007(const P &p, unsigned n, cudaStream_t s) { f007_k0<<<n, threads(3, p), 0, s>>>(p); }

struct Program {
  const char *name;
  void (*launch)(const P &, unsigned, cudaStream_t);
  int first_kernel, kernels;  // in KernelId
  int first_site, sites;      // in SiteId
};

static const Program kPrograms[] = {
    {"C1", h_c1, C1_k0, 2, C1_LAUNCH, 4},
    {"C2", h_c2, C2_k0, 3, C2_LAUNCH, 7},
    {"C3", h_c3, C3_k0, 3, C3_RECORD, 6},
    {"C4", h_c4, C4_k0, 3, C4_MEM0, 6},
    {"C5", h_c5, C5_k0, 1, C5_LOAD, 4},
    {"F014", h_f014, F014_k0, 2, F014_LAUNCH, 6},
    {"F004", h_f004, F004_k0, 2, F004_LAUNCH, 3},
    {"F013", h_f013, F013_k0, 3, F013_STORE, 4},
    {"F005", h_f005, F005_k0, 2, F005_LAUNCH, 3},
    {"F012", h_f012, F012_k0, 2, F012_MEM, 7},
    {"F011", h_f011, F011_k0, 2, F011_STORE, 7},
    {"F006", h_f006, F006_k0, 3, F006_LAUNCH, 6},
    {"F003", h_f003, F003_k0, 2, F003_GETERR0, 9},
    {"F007", h_f007, F007_k0, 2, F007_TAIL, 7},
};
constexpr int kProgramCount = sizeof kPrograms / sizeof kPrograms[0];
static const char *kKernelNames[kKernelIds] = {
    "C1 k0", "C1 k1", "C2 k0", "C2 k1", "C2 k2", "C3 k0", "C3 k1", "C3 k2", "C4 k0", "C4 k1",
    "C4 k2", "C5 k0", "F014 k0", "F014 k1", "F004 k0", "F004 k2", "F013 k0", "F013 k1",
    "F013 k2", "F005 k0", "F005 k1", "F012 k0", "F012 k1", "F011 k0", "F011 k1", "F006 k0",
    "F006 k1", "F006 k2", "F003 k0", "F003 k1", "F007 k0", "F007 k1"};
