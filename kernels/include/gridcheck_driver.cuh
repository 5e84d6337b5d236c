// gridcheck: the driver API's linker for host tests (kind: host),
// hand-written.
//
// Host tests link with the static runtime only (no libcuda at build time),
// so the driver functions come from cudaGetDriverEntryPointByVersion (the
// CUDA 12.0 versions of each function). gc_link_ptx
// links PTX text with the driver's JIT linker (cuLinkCreate, cuLinkAddData,
// cuLinkAddFile for libcudadevrt.a, cuLinkComplete), loads the image
// (cuModuleLoadData) and finds a function (cuModuleGetFunction), recording
// the CUresult of every step, so that a test can say which call failed with
// which code.
#pragma once

#include <cuda.h>
#include <sys/stat.h>

#include <cstring>

#include "gridcheck_host.cuh"

// A driver entry point by name, or exit(3) (a setup step).
static inline void *gc_driver(const char *name) {
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  GC_SETUP(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q));
  if (fn == nullptr || q != cudaDriverEntryPointSuccess) {
    fprintf(stderr, "setup step failed: no driver entry point %s (%d)\n", name, (int)q);
    exit(3);
  }
  return fn;
}

// libcudadevrt.a on this machine: $GRIDCHECK_CUDADEVRT, else
// $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64,
// /usr/local/cuda/targets/x86_64-linux/lib; nullptr when none exists.
static inline const char *gc_cudadevrt_path() {
  static char buf[1024];
  const char *env = getenv("GRIDCHECK_CUDADEVRT");
  struct stat st;
  if (env && stat(env, &st) == 0) return env;
  const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (const char *h : homes) {
    if (!h) continue;
    for (const char *sub : {"/lib64/libcudadevrt.a", "/targets/x86_64-linux/lib/libcudadevrt.a"}) {
      snprintf(buf, sizeof buf, "%s%s", h, sub);
      if (stat(buf, &st) == 0) return buf;
    }
  }
  return nullptr;
}

// The CUresult of each step of linking and loading; a step not reached
// holds GC_NOT_REACHED.
#define GC_NOT_REACHED 0xffffffffu
struct GcLinkResult {
  unsigned create, add_ptx, add_devrt, complete, load, get_function;
  CUmodule module;
  CUfunction function;
};

// Links `ptx` (with libcudadevrt.a when `devrt_path` is not null), loads the
// image and looks up `entry`. The linker's error log goes to stderr.
static inline GcLinkResult gc_link_ptx(const char *ptx, const char *devrt_path,
                                       const char *entry) {
  typedef CUresult (*LinkCreate)(unsigned, CUjit_option *, void **, CUlinkState *);
  typedef CUresult (*LinkAddData)(CUlinkState, CUjitInputType, void *, size_t, const char *,
                                  unsigned, CUjit_option *, void **);
  typedef CUresult (*LinkAddFile)(CUlinkState, CUjitInputType, const char *, unsigned,
                                  CUjit_option *, void **);
  typedef CUresult (*LinkComplete)(CUlinkState, void **, size_t *);
  typedef CUresult (*LinkDestroy)(CUlinkState);
  typedef CUresult (*ModuleLoadData)(CUmodule *, const void *);
  typedef CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  LinkCreate link_create = (LinkCreate)gc_driver("cuLinkCreate");
  LinkAddData add_data = (LinkAddData)gc_driver("cuLinkAddData");
  LinkAddFile add_file = (LinkAddFile)gc_driver("cuLinkAddFile");
  LinkComplete complete = (LinkComplete)gc_driver("cuLinkComplete");
  LinkDestroy destroy = (LinkDestroy)gc_driver("cuLinkDestroy");
  ModuleLoadData load = (ModuleLoadData)gc_driver("cuModuleLoadData");
  ModuleGetFunction get_function = (ModuleGetFunction)gc_driver("cuModuleGetFunction");

  GcLinkResult r = {GC_NOT_REACHED, GC_NOT_REACHED, GC_NOT_REACHED, GC_NOT_REACHED,
                    GC_NOT_REACHED, GC_NOT_REACHED, nullptr, nullptr};
  static char log[8192];
  log[0] = 0;
  CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[2] = {log, (void *)(size_t)sizeof log};
  CUlinkState st;
  r.create = link_create(2, opts, vals, &st);
  if (r.create != CUDA_SUCCESS) return r;
  r.add_ptx = add_data(st, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, "test.ptx", 0,
                       nullptr, nullptr);
  if (devrt_path) {
    r.add_devrt = add_file(st, CU_JIT_INPUT_LIBRARY, devrt_path, 0, nullptr, nullptr);
  }
  if (r.add_ptx == CUDA_SUCCESS && (!devrt_path || r.add_devrt == CUDA_SUCCESS)) {
    void *image = nullptr;
    size_t size = 0;
    r.complete = complete(st, &image, &size);
    if (r.complete == CUDA_SUCCESS) {
      r.load = load(&r.module, image);  // before destroy: the image belongs to the linker
      if (r.load == CUDA_SUCCESS) r.get_function = get_function(&r.function, r.module, entry);
    }
  }
  if (log[0]) fprintf(stderr, "linker log: %s\n", log);
  destroy(st);
  return r;
}

// Launches `f` as <<<1, 1>>> with `params` and waits: the CUresult of the
// launch, then of the synchronization, in *launch and *sync.
static inline void gc_launch_1x1(CUfunction f, void **params, unsigned *launch, unsigned *sync) {
  typedef CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, CUstream, void **, void **);
  typedef CUresult (*CtxSynchronize)(void);
  LaunchKernel launch_kernel = (LaunchKernel)gc_driver("cuLaunchKernel");
  CtxSynchronize ctx_sync = (CtxSynchronize)gc_driver("cuCtxSynchronize");
  *launch = launch_kernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr);
  *sync = *launch == CUDA_SUCCESS ? ctx_sync() : GC_NOT_REACHED;
}
