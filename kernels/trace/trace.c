// The launch trace of gridcheck's machine-code check: an LD_PRELOAD
// library that records every kernel launch of a CUDA program as one JSON
// line in the file named by GRIDCHECK_TRACE:
//
//   {"kernel":"_Z9secondaryPKfS0_Pfi","pdl":true,"stream":"0x55d0c0","process":4242,
//    "params":[{"index":0,"offset":0,"size":8,"bytes":"0000200c007f0000"},...]}
//
// `process`: the launching process (several may append to one file, each
// line written whole, up to 1 MiB); `pdl`: the launch had CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
// set; `bytes`: each parameter's value, little-endian, in hex (at most 4096
// bytes a parameter). `gridcheck-check --trace FILE` reads it.
//
// nvcc links the runtime statically and the runtime reaches the driver
// through cuGetProcAddress on a handle of its own (dlopen + dlsym), so
// interposing the launch functions by symbol is not enough: this library
// also interposes dlsym (for the driver's cuGetProcAddress*) and
// cuGetProcAddress/_v2, and hands back its wrappers for cuLaunchKernel and
// cuLaunchKernelEx (and their per-thread-stream variants). Programs that
// call the driver directly reach the wrappers by symbol.
//
// Build: gcc -shared -fPIC -O2 -I<cuda>/include trace.c -o libgridcheck_trace.so -ldl -lpthread
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *(*dlsym_fn)(void *, const char *);
typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, CUstream, void **, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*name_fn)(const char **, CUfunction);
typedef CUresult (*param_fn)(CUfunction, size_t, size_t *, size_t *);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static dlsym_fn real_dlsym_fn;
static gpa_fn real_gpa;
static gpa2_fn real_gpa2;
// [0]: the default stream's variant, [1]: the per-thread one.
static launch_fn real_launch[2];
static launch_ex_fn real_launch_ex[2];

static void *real_dlsym(void *h, const char *s) {
  if (!real_dlsym_fn) {
    real_dlsym_fn = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!real_dlsym_fn) real_dlsym_fn = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  }
  return real_dlsym_fn ? real_dlsym_fn(h, s) : NULL;
}

static void *driver(const char *s) {
  void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_LAZY);
  return h ? real_dlsym(h, s) : NULL;
}

static void hex(FILE *f, const unsigned char *b, size_t n) {
  for (size_t k = 0; k < n; ++k) fprintf(f, "%02x", b[k]);
}

// One launch as a JSON line. `params` are the kernel's argument pointers;
// `extra` a CU_LAUNCH_PARAM_BUFFER_POINTER buffer when params is NULL.
static void record(CUfunction f, int pdl, CUstream s, void **params, void **extra) {
  static name_fn get_name, get_kernel_name;
  static param_fn get_param, get_kernel_param;
  pthread_mutex_lock(&lock);
  if (!out) {
    const char *path = getenv("GRIDCHECK_TRACE");
    out = fopen(path && *path ? path : "gridcheck-trace.jsonl", "a");
    // A line leaves in one write (flushed after each launch): processes
    // appending to one file do not cut each other's lines (up to 1 MiB).
    if (out) setvbuf(out, NULL, _IOFBF, 1 << 20);
  }
  if (!get_name) get_name = (name_fn)driver("cuFuncGetName");
  if (!get_param) get_param = (param_fn)driver("cuFuncGetParamInfo");
  // The runtime (CUDA 12 and later) loads modules as libraries and hands
  // the driver a CUkernel where a CUfunction stands: cuFuncGet* refuse it,
  // cuKernelGet* answer (the same signatures, the handle taken as CUkernel).
  if (!get_kernel_name) get_kernel_name = (name_fn)driver("cuKernelGetName");
  if (!get_kernel_param) get_kernel_param = (param_fn)driver("cuKernelGetParamInfo");
  if (out) {
    const char *name = NULL;
    param_fn params_of = get_param;
    if (!(get_name && get_name(&name, f) == CUDA_SUCCESS && name)) {
      name = NULL;
      if (get_kernel_name && get_kernel_name(&name, f) == CUDA_SUCCESS && name)
        params_of = get_kernel_param;
    }
    if (!name) name = "?";
    {
      size_t o0 = 0, s0 = 0;
      if (params_of && params_of(f, 0, &o0, &s0) != CUDA_SUCCESS && get_kernel_param &&
          get_kernel_param(f, 0, &o0, &s0) == CUDA_SUCCESS)
        params_of = get_kernel_param;
    }
    fprintf(out, "{\"kernel\":\"");
    for (const char *c = name; *c; ++c)
      if (*c == '"' || *c == '\\') fprintf(out, "\\%c", *c);
      else fputc(*c, out);
    fprintf(out, "\",\"pdl\":%s,\"stream\":\"0x%llx\",\"process\":%ld,\"params\":[",
            pdl ? "true" : "false", (unsigned long long)(uintptr_t)s, (long)getpid());
    const unsigned char *buffer = NULL;
    for (int k = 0; extra && extra[k] != CU_LAUNCH_PARAM_END; k += 2)
      if (extra[k] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = (const unsigned char *)extra[k + 1];
    for (size_t i = 0; params_of && i < 1024; ++i) {
      size_t offset = 0, size = 0;
      if (params_of(f, i, &offset, &size) != CUDA_SUCCESS) break;
      fprintf(out, "%s{\"index\":%zu,\"offset\":%zu,\"size\":%zu", i ? "," : "", i, offset, size);
      const unsigned char *v = params ? (const unsigned char *)params[i] : buffer ? buffer + offset : NULL;
      if (v && size <= 4096) {
        fprintf(out, ",\"bytes\":\"");
        hex(out, v, size);
        fprintf(out, "\"");
      }
      fprintf(out, "}");
    }
    fprintf(out, "]}\n");
    fflush(out);
  }
  pthread_mutex_unlock(&lock);
}

static int is_pdl(const CUlaunchConfig *c) {
  for (unsigned k = 0; c && k < c->numAttrs; ++k)
    if (c->attrs[k].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION &&
        c->attrs[k].value.programmaticStreamSerializationAllowed)
      return 1;
  return 0;
}

#define LAUNCH(NAME, SLOT)                                                                          \
  CUresult NAME(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,    \
                unsigned bz, unsigned shmem, CUstream s, void **params, void **extra) {           \
    if (!real_launch[SLOT]) real_launch[SLOT] = (launch_fn)driver(#NAME);                         \
    if (!real_launch[SLOT]) return CUDA_ERROR_NOT_FOUND;                                          \
    record(f, 0, s, params, extra);                                                               \
    return real_launch[SLOT](f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);                  \
  }
#define LAUNCH_EX(NAME, SLOT)                                                                       \
  CUresult NAME(const CUlaunchConfig *c, CUfunction f, void **params, void **extra) {             \
    if (!real_launch_ex[SLOT]) real_launch_ex[SLOT] = (launch_ex_fn)driver(#NAME);                \
    if (!real_launch_ex[SLOT]) return CUDA_ERROR_NOT_FOUND;                                       \
    record(f, is_pdl(c), c ? c->hStream : NULL, params, extra);                                   \
    return real_launch_ex[SLOT](c, f, params, extra);                                             \
  }

LAUNCH(cuLaunchKernel, 0)
LAUNCH(cuLaunchKernel_ptsz, 1)
LAUNCH_EX(cuLaunchKernelEx, 0)
LAUNCH_EX(cuLaunchKernelEx_ptsz, 1)

static const void *wrappers[2][2] = {{(const void *)cuLaunchKernel, (const void *)cuLaunchKernelEx},
                                     {(const void *)cuLaunchKernel_ptsz, (const void *)cuLaunchKernelEx_ptsz}};

// After the driver resolved `symbol`: our wrapper instead, its real
// function kept.
static void swap(const char *symbol, void **pfn, cuuint64_t flags) {
  int slot = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? 1 : 0;
  if (!pfn || !*pfn) return;
  if (!strcmp(symbol, "cuLaunchKernel")) {
    if (*pfn != wrappers[slot][0]) real_launch[slot] = (launch_fn)*pfn;
    *pfn = (void *)wrappers[slot][0];
  } else if (!strcmp(symbol, "cuLaunchKernelEx")) {
    if (*pfn != wrappers[slot][1]) real_launch_ex[slot] = (launch_ex_fn)*pfn;
    *pfn = (void *)wrappers[slot][1];
  }
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status) {
  if (!real_gpa2) real_gpa2 = (gpa2_fn)driver("cuGetProcAddress_v2");
  if (!real_gpa2) return CUDA_ERROR_NOT_FOUND;
  CUresult r = real_gpa2(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS && symbol) {
    if (!strcmp(symbol, "cuGetProcAddress") && pfn) *pfn = (void *)cuGetProcAddress_v2;
    swap(symbol, pfn, flags);
  }
  return r;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags) {
  if (!real_gpa) real_gpa = (gpa_fn)driver("cuGetProcAddress");
  if (!real_gpa) return CUDA_ERROR_NOT_FOUND;
  CUresult r = real_gpa(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS && symbol) {
    if (!strcmp(symbol, "cuGetProcAddress") && pfn) *pfn = (void *)cuGetProcAddress_v2;
    swap(symbol, pfn, flags);
  }
  return r;
}

// The runtime looks the driver's entry points up on its own handle.
void *dlsym(void *h, const char *s) {
  {
    if (!strcmp(s, "cuGetProcAddress_v2")) {
      real_gpa2 = (gpa2_fn)real_dlsym(h, s);
      return real_gpa2 ? (void *)cuGetProcAddress_v2 : NULL;
    }
    if (!strcmp(s, "cuGetProcAddress")) {
      real_gpa = (gpa_fn)real_dlsym(h, s);
      return real_gpa ? (void *)cuGetProcAddress : NULL;
    }
    if (!strcmp(s, "cuLaunchKernel")) real_launch[0] = (launch_fn)real_dlsym(h, s);
    if (!strcmp(s, "cuLaunchKernel_ptsz")) real_launch[1] = (launch_fn)real_dlsym(h, s);
    if (!strcmp(s, "cuLaunchKernelEx")) real_launch_ex[0] = (launch_ex_fn)real_dlsym(h, s);
    if (!strcmp(s, "cuLaunchKernelEx_ptsz")) real_launch_ex[1] = (launch_ex_fn)real_dlsym(h, s);
    if (!strcmp(s, "cuLaunchKernel")) return real_launch[0] ? (void *)cuLaunchKernel : NULL;
    if (!strcmp(s, "cuLaunchKernel_ptsz")) return real_launch[1] ? (void *)cuLaunchKernel_ptsz : NULL;
    if (!strcmp(s, "cuLaunchKernelEx")) return real_launch_ex[0] ? (void *)cuLaunchKernelEx : NULL;
    if (!strcmp(s, "cuLaunchKernelEx_ptsz"))
      return real_launch_ex[1] ? (void *)cuLaunchKernelEx_ptsz : NULL;
  }
  return real_dlsym(h, s);
}
