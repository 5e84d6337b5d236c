// fuzz-7-466 (fuzz-7-466.cu, as `cargo xtask fuzz gpu --seed 7` generates
// it) with each device runtime call behind a bit of `mask`, to find which
// of them the intermittent hang needs. With every bit set it does what the
// generated kernel does, in the same order, with the same delays, stress
// and status words:
//   k0 t0: [record e2, record e2 s2, load r0 y, syncthreads, launch k1]
//   k1 t0: [syncthreads, peekerror r0]   t1: [load r0 y, syncthreads, load r1 y]
// bits: 1 create stream s2, 2 create event e2, 4 record e2 into the NULL
// stream, 8 record e2 into s2, 16 launch k1, 32 destroy s2 and e2 at the end,
// 64 record a second event e3 into s2 instead of e2 (the control: two
// events, one a stream).
// A call left out writes cudaSuccess into its status word.
// Built through litmus_driver.cu with -DTEST_CU='"fuzz466_parts.cu"'
// -DENTRY=parts_k0 -DBLOCK=96 -DPENDING=1 -DHAS_MASK.
#include "gridcheck.cuh"

static constexpr unsigned int kSlotStride = 96u;
static constexpr unsigned int kRegStride = 4u;
static constexpr unsigned int kStatusStride = 6u;

__device__ unsigned int g_mask = 0xffffffffu;

extern "C" __global__ void __launch_bounds__(128) parts_k1(gc_params p, unsigned int slot) {
  volatile unsigned int *const mem = p.mem + (size_t)slot * kSlotStride;
  volatile unsigned int *const regs = p.regs + (size_t)slot * kRegStride;
  __shared__ unsigned int gc_arrived;
  if (threadIdx.x == 0u) gc_arrived = 0u;
  __syncthreads();
  unsigned int t1_r0 = 0u, t1_r1 = 0u;
  if (threadIdx.x == 0u) {
    gc_arrive(&gc_arrived);
  } else if (threadIdx.x == 32u) {
    gc_delay(p, slot, 4u);
    t1_r0 = mem[32u];
    gc_arrive(&gc_arrived);
  } else if (threadIdx.x >= 64u) {
    gc_stress(p, slot, &gc_arrived, 2u, 0u);
  }
  __syncthreads();
  if (threadIdx.x == 0u) {
    gc_delay(p, slot, 5u);
    regs[1u] = (unsigned int)cudaPeekAtLastError();
    gc_arrive(&gc_arrived);
  } else if (threadIdx.x == 32u) {
    gc_delay(p, slot, 6u);
    t1_r1 = mem[32u];
    regs[2u] = t1_r0;
    regs[3u] = t1_r1;
    gc_arrive(&gc_arrived);
  } else if (threadIdx.x >= 64u) {
    gc_stress(p, slot, &gc_arrived, 4u, 1u);
  }
  if (threadIdx.x == 0u) gc_mark_ran(p, kStatusStride, slot, 1u);
}

extern "C" __global__ void __launch_bounds__(96) parts_k0(gc_params p) {
  const unsigned int slot = gc_slot(p, blockIdx.x);
  const unsigned int m = g_mask;
  volatile unsigned int *const mem = p.mem + (size_t)slot * kSlotStride;
  volatile unsigned int *const regs = p.regs + (size_t)slot * kRegStride;
  __shared__ unsigned int gc_arrived;
  __shared__ cudaStream_t gc_stream_s2;
  __shared__ cudaEvent_t gc_event_e2, e3;
  if (threadIdx.x == 0u) {
    gc_arrived = 0u;
    gc_stream_s2 = 0;
    gc_event_e2 = 0;
    e3 = 0;
    if (m & 64u) cudaEventCreateWithFlags(&e3, cudaEventDisableTiming);
    if (m & 1u) gc_stream_s2 = gc_create_stream(p, kStatusStride, slot, 2u);
    else gc_record_error(p, kStatusStride, slot, 2u, cudaSuccess);
    if (m & 2u) gc_event_e2 = gc_create_event(p, kStatusStride, slot, 3u);
    else gc_record_error(p, kStatusStride, slot, 3u, cudaSuccess);
  }
  __syncthreads();
  unsigned int t0_r0 = 0u;
  if (threadIdx.x == 0u) {
    gc_delay(p, slot, 0u);
    gc_record_error(p, kStatusStride, slot, 4u, (m & 4u) ? gc_event_record(gc_event_e2, 0) : cudaSuccess);
    gc_delay(p, slot, 1u);
    gc_record_error(p, kStatusStride, slot, 5u,
                    (m & 8u) ? gc_event_record((m & 64u) ? e3 : gc_event_e2, gc_stream_s2) : cudaSuccess);
    gc_delay(p, slot, 2u);
    t0_r0 = mem[32u];
    gc_arrive(&gc_arrived);
  } else if (threadIdx.x >= 32u) {
    gc_stress(p, slot, &gc_arrived, 1u, 0u);
  }
  __syncthreads();
  if (threadIdx.x == 0u) {
    gc_delay(p, slot, 3u);
    if (m & 16u) parts_k1<<<1, 128>>>(p, slot);
    else gc_mark_ran(p, kStatusStride, slot, 1u);
    regs[0u] = t0_r0;
    gc_arrive(&gc_arrived);
  } else if (threadIdx.x >= 32u) {
    gc_stress(p, slot, &gc_arrived, 2u, 1u);
  }
  __syncthreads();
  if (threadIdx.x == 0u && (m & 32u)) {
    gc_destroy_stream(gc_stream_s2);
    gc_destroy_event(gc_event_e2);
    gc_destroy_event(e3);
  }
  if (threadIdx.x == 0u) gc_mark_ran(p, kStatusStride, slot, 0u);
}
