// Blocks pair up by ticket so that reruns in one module need no reset.
__device__ unsigned int tickets;
__device__ cudaEvent_t slot_event[2];
__device__ unsigned int slot_tag[2];
__device__ volatile unsigned int x;
__global__ void a() {
  long long t0 = clock64();
  while (clock64() - t0 < 20000000ll) { }
  x = 1;
}
__global__ void b(unsigned int *out) { out[0] = x; }
extern "C" __global__ void entry(unsigned int *out) {
  unsigned int ticket = atomicAdd(&tickets, 1u);
  unsigned int pair = ticket / 2, sl = pair % 2;
  if (ticket % 2 == 0) {
    unsigned int errs = 0;
    x = 0;
    out[0] = 0xffffffffu;
    cudaStream_t s1;
    cudaEvent_t e;
    errs += cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking) != cudaSuccess;
    errs += cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess;
    a<<<1, 1, 0, s1>>>();
    errs += cudaGetLastError() != cudaSuccess;
    errs += cudaEventRecord(e, s1) != cudaSuccess;
    out[1] = errs;
    slot_event[sl] = e;
    __threadfence();
    atomicExch(&slot_tag[sl], pair + 1);
  } else {
    long long t0 = clock64();
    unsigned int timed_out = 0, errs = 0;
    while (atomicAdd(&slot_tag[sl], 0u) != pair + 1) {
      if (clock64() - t0 > (1ll << 32)) { timed_out = 1; break; }
    }
    out[3] = timed_out;
    if (timed_out) { out[2] = 0xffffffffu; return; }
    __threadfence();
    cudaEvent_t e = ((volatile cudaEvent_t *)slot_event)[sl];
    cudaStream_t s2;
    errs += cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) != cudaSuccess;
    errs += cudaStreamWaitEvent(s2, e, 0) != cudaSuccess;
    b<<<1, 1, 0, s2>>>(out);
    errs += cudaGetLastError() != cudaSuccess;
    out[2] = errs;
  }
}
