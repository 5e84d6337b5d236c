#include "gridcheck_host.cuh"
#define N 4096
__global__ void warm(cudaTextureObject_t t, unsigned *sink) {
  unsigned s = 0;
  for (unsigned i = threadIdx.x; i < N; i += blockDim.x) s += tex1Dfetch<unsigned>(t, i);
  if (s == 0xdeadbeefu) *sink = s;  // keeps the reads
}
__global__ void within(unsigned *buf, cudaTextureObject_t t, unsigned *stale) {
  unsigned s = 0;
  for (unsigned i = threadIdx.x; i < N; i += blockDim.x) s += tex1Dfetch<unsigned>(t, i);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < N; i += blockDim.x) buf[i] = 7 + i;
  __threadfence();
  __syncthreads();
  for (unsigned i = threadIdx.x; i < N; i += blockDim.x)
    if (tex1Dfetch<unsigned>(t, i) != 7 + i) atomicAdd(stale, 1u);
  if (s == 0xdeadbeefu) *stale = s;
}
__global__ void read_tex(cudaTextureObject_t t, unsigned expect_base, unsigned *bad) {
  for (unsigned i = threadIdx.x; i < N; i += blockDim.x)  // every block reads all of it
    if (tex1Dfetch<unsigned>(t, i) != expect_base + i) atomicAdd(bad, 1u);
}
__global__ void rewrite(unsigned *buf) {
  for (unsigned i = threadIdx.x; i < N; i += blockDim.x) buf[i] = 100 + i;
}
__global__ void parent(unsigned *buf, cudaTextureObject_t t, unsigned *out, unsigned sms) {
  for (unsigned i = 0; i < N; i++) buf[i] = 1 + i;  // before the first launch
  read_tex<<<sms, 256>>>(t, 1, &out[0]);            // must see 1 + i
  rewrite<<<1, 256>>>(buf);                         // after it, same stream
  read_tex<<<sms, 256, 0, cudaStreamTailLaunch>>>(t, 100, &out[1]);  // must see 100 + i
  out[2] = cudaGetLastError();
}
int main() {
  unsigned *buf, *out;
  int sms = 0;
  GC_SETUP(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  GC_SETUP(cudaMalloc(&buf, N * sizeof(unsigned)));
  GC_SETUP(cudaMalloc(&out, 4 * sizeof(unsigned)));
  GC_SETUP(cudaMemset(buf, 0, N * sizeof(unsigned)));
  GC_SETUP(cudaMemset(out, 0, 4 * sizeof(unsigned)));
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeLinear;
  res.res.linear.devPtr = buf;
  res.res.linear.desc = cudaCreateChannelDesc<unsigned>();
  res.res.linear.sizeInBytes = N * sizeof(unsigned);
  cudaTextureDesc td = {};
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t t;
  GC_SETUP(cudaCreateTextureObject(&t, &res, &td, nullptr));
  warm<<<4 * sms, 256>>>(t, out + 3);               // every SM's cache holds 0s
  within<<<1, 256>>>(buf, t, out + 3);              // the control; leaves buf = 7 + i
  warm<<<4 * sms, 256>>>(t, out + 3);               // every SM's cache holds 7 + i
  GC_SETUP(cudaGetLastError());
  GC_SETUP(cudaDeviceSynchronize());
  unsigned control = ~0u;
  GC_SETUP(cudaMemcpy(&control, out + 3, sizeof control, cudaMemcpyDeviceToHost));
  parent<<<1, 1>>>(buf, t, out, (unsigned)sms);
  gc_output("launch_err", cudaGetLastError());
  gc_output("sync_err", cudaDeviceSynchronize());
  unsigned o[3] = {~0u, ~0u, ~0u};
  GC_SETUP(cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost));
  gc_output("child_saw_stale", o[0]);
  gc_output("tail_saw_stale", o[1]);
  gc_output("device_launch_err", o[2]);
  gc_output("stale_within_kernel", control);
  gc_output("sms", (unsigned)sms);
  return 0;
}
