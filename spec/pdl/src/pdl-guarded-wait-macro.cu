// The PDL wait behind a build macro, in the shape of CUTLASS's
// wait_on_dependent_grids() (include/cutlass/arch/grid_dependency_control.h:
// griddepcontrol.wait only when the build defines the macro that enables
// it). pdl-guarded-wait-macro-on builds this program with -DGC_ENABLE_GDC,
// pdl-guarded-wait-macro-off without it, as a JIT build that leaves the
// macro out does (flashinfer-ai/flashinfer PR 2716). Either way the host
// launches the secondary with the PDL attribute after a primary that
// triggers at once and writes its words 100 us later (gc_pdl_primary_late),
// 20 times. Unlike CUTLASS's, the asm has a "memory" clobber: the test is
// about the missing wait, not about what the compiler may move across an
// asm without one (the machine-code tier's guarded-wait-gdc looks at that).
#include "gridcheck_pdl_pair.cuh"

#define RUNS 20
#define DELAY_NS 100000ull

static __device__ __forceinline__ void wait_on_dependent_grids() {
#if defined(GC_ENABLE_GDC) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__global__ void secondary(const unsigned *buf, unsigned *stale) {
  wait_on_dependent_grids();
  gc_pair_count_stale(buf, stale);
}

int main() {
#if defined(GC_ENABLE_GDC)
  gc_output("gdc_macro_defined", 1);
#else
  gc_output("gdc_macro_defined", 0);
#endif
  gc_pair_mem m = gc_pair_alloc();
  gc_late_result r = gc_run_late_pairs(m, RUNS, DELAY_NS, [](cudaStream_t s, unsigned *buf, unsigned *stale) {
    return (unsigned)gc_launch_pdl(secondary, dim3(GC_PAIR_BLOCKS), dim3(GC_PAIR_THREADS), s,
                                   (const unsigned *)buf, stale);
  });
  gc_output("launch_err", r.err);
  gc_output("stale_pairs", r.stale);
  return 0;
}
