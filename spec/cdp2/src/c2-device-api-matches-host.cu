#include "gridcheck_host.cuh"
#include <cstring>
enum { CACHE, STACK, HEAP, FIFO, PENDING, LIMIT_ERRS, COUNT, SMS, SMS_ERR, DEV, DEV_ERR,
       STREAM_ERR, STREAM_DEFAULT_ERR, EVENT_ERR, EVENT_DEFAULT_ERR, RECORD_ERR, WAIT_ERR,
       STREAM_DESTROY_ERR, EVENT_DESTROY_ERR, FA_ERR, FA_REGS, FA_MAXT, FA_SHARED, FA_CONST,
       FA_LOCAL, FA_PTX, FA_BIN, VERSION, VERSION_ERR, MALLOC_ERR, FREE_ERR,
       PEEK_BEFORE, GET_BEFORE, GET_AFTER, CHILD_LAUNCH_ERR, LAST_BEFORE_LAUNCH, ERRSTR,
       NWORDS = ERRSTR + 16 };
__global__ void probe_target(int *p) { if (p) *p += 1; }
__global__ void child(unsigned *flag) { *flag = 1u; }
__global__ void dev(unsigned *r, unsigned *flag) {
  r[PEEK_BEFORE] = cudaPeekAtLastError();
  r[GET_BEFORE] = cudaGetLastError();
  cudaFuncCache cc = cudaFuncCachePreferNone;
  unsigned lim_errs = cudaDeviceGetCacheConfig(&cc) != cudaSuccess;
  r[CACHE] = cc;
  size_t v = 0;
  lim_errs += cudaDeviceGetLimit(&v, cudaLimitStackSize) != cudaSuccess; r[STACK] = (unsigned)v;
  lim_errs += cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize) != cudaSuccess; r[HEAP] = (unsigned)(v >> 10);
  lim_errs += cudaDeviceGetLimit(&v, cudaLimitPrintfFifoSize) != cudaSuccess; r[FIFO] = (unsigned)(v >> 10);
  lim_errs += cudaDeviceGetLimit(&v, cudaLimitDevRuntimePendingLaunchCount) != cudaSuccess; r[PENDING] = (unsigned)v;
  r[LIMIT_ERRS] = lim_errs;
  int n = -1, sms = -1, d = -1;
  cudaGetDeviceCount(&n); r[COUNT] = n;
  r[SMS_ERR] = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0); r[SMS] = sms;
  r[DEV_ERR] = cudaGetDevice(&d); r[DEV] = d;
  cudaStream_t s, s0; cudaEvent_t e, e0;
  r[STREAM_ERR] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  r[STREAM_DEFAULT_ERR] = cudaStreamCreateWithFlags(&s0, cudaStreamDefault);
  if (r[STREAM_DEFAULT_ERR] == cudaSuccess) cudaStreamDestroy(s0);
  r[EVENT_ERR] = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  r[EVENT_DEFAULT_ERR] = cudaEventCreateWithFlags(&e0, cudaEventDefault);
  if (r[EVENT_DEFAULT_ERR] == cudaSuccess) cudaEventDestroy(e0);
  // A failed call above (a default-flag creation) leaves its error as
  // the thread's last error: read and clear it, so that the next read
  // is the launch's.
  r[LAST_BEFORE_LAUNCH] = cudaGetLastError();
  child<<<1, 1, 0, s>>>(flag);
  r[CHILD_LAUNCH_ERR] = cudaGetLastError();
  r[RECORD_ERR] = cudaEventRecord(e, s);
  r[WAIT_ERR] = cudaStreamWaitEvent(s, e, 0);
  r[STREAM_DESTROY_ERR] = cudaStreamDestroy(s);
  r[EVENT_DESTROY_ERR] = cudaEventDestroy(e);
  cudaFuncAttributes fa;
  memset(&fa, 0, sizeof fa);
  r[FA_ERR] = cudaFuncGetAttributes(&fa, (const void *)probe_target);
  r[FA_REGS] = fa.numRegs; r[FA_MAXT] = fa.maxThreadsPerBlock; r[FA_SHARED] = (unsigned)fa.sharedSizeBytes;
  r[FA_CONST] = (unsigned)fa.constSizeBytes; r[FA_LOCAL] = (unsigned)fa.localSizeBytes;
  r[FA_PTX] = fa.ptxVersion; r[FA_BIN] = fa.binaryVersion;
  int ver = -1;
  r[VERSION_ERR] = cudaRuntimeGetVersion(&ver); r[VERSION] = ver;
  const char *str = cudaGetErrorString(cudaErrorInvalidValue);
  char *out = (char *)(r + ERRSTR);
  for (int i = 0; i < 63 && str && str[i]; ++i) out[i] = str[i];
  void *m = nullptr;
  r[MALLOC_ERR] = cudaMalloc(&m, 64);
  r[FREE_ERR] = cudaFree(m);
  r[GET_AFTER] = cudaGetLastError();
}
int main() {
  unsigned *r, *flag;
  GC_SETUP(cudaMalloc(&r, NWORDS * sizeof(unsigned)));
  GC_SETUP(cudaMemset(r, 0, NWORDS * sizeof(unsigned)));
  GC_SETUP(cudaMalloc(&flag, sizeof(unsigned)));
  GC_SETUP(cudaMemset(flag, 0, sizeof(unsigned)));
  dev<<<1, 1>>>(r, flag);
  gc_output("launch_err", cudaGetLastError());
  gc_output("sync_err", cudaDeviceSynchronize());
  unsigned d[NWORDS], f = 0;
  GC_SETUP(cudaMemcpy(d, r, sizeof d, cudaMemcpyDeviceToHost));
  GC_SETUP(cudaMemcpy(&f, flag, sizeof f, cudaMemcpyDeviceToHost));
  cudaFuncCache cc; GC_SETUP(cudaDeviceGetCacheConfig(&cc));
  size_t v;
  GC_SETUP(cudaDeviceGetLimit(&v, cudaLimitStackSize)); bool stack = d[STACK] == (unsigned)v;
  GC_SETUP(cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize)); bool heap = d[HEAP] == (unsigned)(v >> 10);
  GC_SETUP(cudaDeviceGetLimit(&v, cudaLimitPrintfFifoSize)); bool fifo = d[FIFO] == (unsigned)(v >> 10);
  GC_SETUP(cudaDeviceGetLimit(&v, cudaLimitDevRuntimePendingLaunchCount)); bool pending = d[PENDING] == (unsigned)v;
  int n, sms, dv, ver;
  GC_SETUP(cudaGetDeviceCount(&n));
  GC_SETUP(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  GC_SETUP(cudaGetDevice(&dv));
  GC_SETUP(cudaRuntimeGetVersion(&ver));
  cudaFuncAttributes fa;
  GC_SETUP(cudaFuncGetAttributes(&fa, probe_target));
  bool fa_same = d[FA_ERR] == cudaSuccess && d[FA_REGS] == (unsigned)fa.numRegs &&
                 d[FA_MAXT] == (unsigned)fa.maxThreadsPerBlock && d[FA_SHARED] == fa.sharedSizeBytes &&
                 d[FA_CONST] == fa.constSizeBytes && d[FA_LOCAL] == fa.localSizeBytes &&
                 d[FA_PTX] == (unsigned)fa.ptxVersion && d[FA_BIN] == (unsigned)fa.binaryVersion;
  char dstr[64] = {0};
  memcpy(dstr, d + ERRSTR, 63);
  gc_output("peek_before", d[PEEK_BEFORE]);
  gc_output("get_before", d[GET_BEFORE]);
  gc_output("limit_errors", d[LIMIT_ERRS]);
  gc_output("cache_config_same", d[CACHE] == (unsigned)cc);
  gc_output("stack_limit_same", stack);
  gc_output("heap_limit_same", heap);
  gc_output("printf_fifo_limit_same", fifo);
  gc_output("pending_limit_same", pending);
  gc_output("device_count_same", d[COUNT] == (unsigned)n);
  gc_output("attribute_err", d[SMS_ERR]);
  gc_output("attribute_same", d[SMS] == (unsigned)sms);
  gc_output("get_device_err", d[DEV_ERR]);
  gc_output("device_same", d[DEV] == (unsigned)dv);
  gc_output("stream_nonblocking_err", d[STREAM_ERR]);
  gc_output("stream_default_flag_err", d[STREAM_DEFAULT_ERR]);
  gc_output("event_disable_timing_err", d[EVENT_ERR]);
  gc_output("event_default_flag_err", d[EVENT_DEFAULT_ERR]);
  gc_output("last_error_before_launch", d[LAST_BEFORE_LAUNCH]);
  gc_output("child_launch_err", d[CHILD_LAUNCH_ERR]);
  gc_output("child_ran", f);
  gc_output("record_err", d[RECORD_ERR]);
  gc_output("wait_err", d[WAIT_ERR]);
  gc_output("stream_destroy_err", d[STREAM_DESTROY_ERR]);
  gc_output("event_destroy_err", d[EVENT_DESTROY_ERR]);
  gc_output("func_attributes_same", fa_same);
  gc_output("device_runtime_version", d[VERSION]);
  gc_output("host_runtime_version", (unsigned)ver);
  gc_output("runtime_version_same", d[VERSION_ERR] == cudaSuccess && d[VERSION] == (unsigned)ver);
  gc_output("error_string_same", strcmp(dstr, cudaGetErrorString(cudaErrorInvalidValue)) == 0);
  gc_output("malloc_err", d[MALLOC_ERR]);
  gc_output("free_err", d[FREE_ERR]);
  gc_output("get_after", d[GET_AFTER]);
  return 0;
}
