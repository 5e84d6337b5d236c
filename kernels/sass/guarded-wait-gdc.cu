// User program: the PDL wait behind a build macro and an architecture-
// specific feature macro, in the shape of CUTLASS's grid dependency control
// (include/cutlass/arch/grid_dependency_control.h: wait_on_dependent_grids()
// issues griddepcontrol.wait only where CUTLASS_GDC_ENABLED is defined,
// which takes -DCUTLASS_ENABLE_GDC_FOR_SM90 and an sm_90a target, or
// -DCUTLASS_ENABLE_GDC_FOR_SM100 and an sm_100 or sm_120 family target
// compiled arch- or family-specific). Written with this suite's own macro
// names. A build without the macro (flashinfer-ai/flashinfer PR 2716: a JIT
// build, NaN tiles on sm_120), or with it for a plain sm_90, sm_100 or
// sm_120 target, has no wait, though the host still launches the kernel
// with the PDL attribute. The asm has no "memory" clobber, as there.
#if defined(GC_ENABLE_GDC_FOR_SM90) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && \
    defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GC_GDC_ENABLED
#endif
#if defined(GC_ENABLE_GDC_FOR_SM100) && defined(__CUDA_ARCH__) &&          \
    (__CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1200) &&                     \
    defined(__CUDA_ARCH_FAMILY_SPECIFIC__)
#define GC_GDC_ENABLED
#endif

__device__ __forceinline__ void wait_on_dependent_grids() {
#if defined(GC_GDC_ENABLED)
  asm volatile("griddepcontrol.wait;");
#endif
}

extern "C" __global__ void secondary(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  wait_on_dependent_grids();  // sass: wait
  if (i < n) out[i] = 2.0f * in[i];  // sass: load
}
