// The deadlock shape the runtime API reference warns of for the
// launch-completion event ("Exercise caution if such an ordering inversion
// could lead to deadlock"): kernel A (more blocks than fit at once, in
// waves; gridcheck_completion.cuh) launched with
// cudaLaunchAttributeLaunchCompletionEvent into a low-priority stream, and
// kernel B, as many blocks of 1024 threads as the GPU holds, launched into
// a high-priority stream that waits for the event, each block spinning
// until every block of A has begun. If B's blocks begin before all of A's
// and take every slot, A's remaining blocks can never begin and B spins
// forever. Here B's spin is bounded (SPIN_NS); a block that reaches the
// bound gives up, counts itself, and exits, which lets A finish: each such
// block is one the unbounded shape would have left spinning. The harness's
// gpu_timeout bounds the whole program besides.
#include "gridcheck_completion.cuh"

#define RUNS 3
#define SPIN_NS 200000000ull

__global__ void __launch_bounds__(GC_A_THREADS) kernel_b(gc_completion_words *w, unsigned a_blocks) {
  if (threadIdx.x == 0) {
    volatile unsigned *started = &w->a_started;
    const unsigned long long t0 = gc_completion_now();
    while (*started < a_blocks && gc_completion_now() - t0 < SPIN_NS) {
    }
    if (*started < a_blocks) atomicAdd(&w->b_gave_up, 1u);
    atomicAdd(&w->b_ran, 1u);
  }
  __syncthreads();
}

int main() {
  gc_completion_setup c = gc_completion_prepare();
  const unsigned a_blocks = 3 * gc_resident_blocks(gc_kernel_a);
  const unsigned b_blocks = gc_resident_blocks(kernel_b);
  unsigned err = cudaSuccess, runs_gave_up = 0, gave_up = 0, a_missing = 0, b_missing = 0;
  for (int r = 0; r < RUNS && err == cudaSuccess; r++) {
    GC_SETUP(cudaMemset(c.w, 0, sizeof(gc_completion_words)));
    GC_SETUP(cudaDeviceSynchronize());
    err = gc_launch_a_with_completion_event(c, a_blocks);
    if (err == cudaSuccess) {
      kernel_b<<<b_blocks, GC_A_THREADS, 0, c.sb>>>(c.w, a_blocks);
      err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = cudaStreamSynchronize(c.sb);
    if (err == cudaSuccess) err = cudaStreamSynchronize(c.sa);
    if (err != cudaSuccess) break;
    gc_completion_words h;
    GC_SETUP(cudaMemcpy(&h, c.w, sizeof h, cudaMemcpyDeviceToHost));
    runs_gave_up += h.b_gave_up > 0;
    gave_up += h.b_gave_up;
    a_missing += a_blocks - h.a_finished;
    b_missing += b_blocks - h.b_ran;
  }
  gc_output("err", err);
  gc_output("a_blocks", a_blocks);
  gc_output("b_blocks", b_blocks);
  gc_output("runs_with_b_stuck", runs_gave_up);
  gc_output("b_blocks_gave_up", gave_up);
  gc_output("a_blocks_missing", err == cudaSuccess ? a_missing : GC_MISSING_UNKNOWN);
  gc_output("b_blocks_missing", err == cudaSuccess ? b_missing : GC_MISSING_UNKNOWN);
  return 0;
}
