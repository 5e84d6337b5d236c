// The launch-completion event's allowed early start: kernel A (more blocks
// than fit at once, in waves; gridcheck_completion.cuh) launched with
// cudaLaunchAttributeLaunchCompletionEvent into a low-priority stream, and
// kernel B, one block of 32 threads an SM, launched into a high-priority
// stream that waits for the event. Each block of B reads, when it begins,
// how many of A's blocks have begun: fewer than all of them is an early
// start, the "ordering inversion" the runtime API reference allows ("blocks
// of B may begin before all blocks of A have begun"). RUNS runs; the
// outputs are over all of them.
#include "gridcheck_completion.cuh"

#define RUNS 5

__global__ void kernel_b(gc_completion_words *w, unsigned a_blocks) {
  if (threadIdx.x != 0) return;
  volatile unsigned *started = &w->a_started;
  if (*started < a_blocks) atomicAdd(&w->b_early, 1u);
  atomicAdd(&w->b_ran, 1u);
}

int main() {
  gc_completion_setup c = gc_completion_prepare();
  const unsigned a_blocks = 3 * gc_resident_blocks(gc_kernel_a);
  int sms = 0;
  GC_SETUP(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const unsigned b_blocks = (unsigned)sms;
  unsigned err = cudaSuccess, runs_early = 0, b_early = 0, a_missing = 0, b_missing = 0;
  for (int r = 0; r < RUNS && err == cudaSuccess; r++) {
    GC_SETUP(cudaMemset(c.w, 0, sizeof(gc_completion_words)));
    GC_SETUP(cudaDeviceSynchronize());
    err = gc_launch_a_with_completion_event(c, a_blocks);
    if (err == cudaSuccess) {
      kernel_b<<<b_blocks, 32, 0, c.sb>>>(c.w, a_blocks);
      err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = cudaStreamSynchronize(c.sb);
    if (err == cudaSuccess) err = cudaStreamSynchronize(c.sa);
    if (err != cudaSuccess) break;
    gc_completion_words h;
    GC_SETUP(cudaMemcpy(&h, c.w, sizeof h, cudaMemcpyDeviceToHost));
    runs_early += h.b_early > 0;
    b_early += h.b_early;
    a_missing += a_blocks - h.a_finished;
    b_missing += b_blocks - h.b_ran;
  }
  gc_output("err", err);
  gc_output("a_blocks", a_blocks);
  gc_output("runs_with_early_start", runs_early);
  gc_output("b_blocks_before_all_a_began", b_early);
  gc_output("a_blocks_missing", err == cudaSuccess ? a_missing : GC_MISSING_UNKNOWN);
  gc_output("b_blocks_missing", err == cudaSuccess ? b_missing : GC_MISSING_UNKNOWN);
  return 0;
}
