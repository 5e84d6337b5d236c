// User program: the PDL wait behind an architecture guard, the way CCCL
// writes it (CUB's _CCCL_PDL_GRID_DEPENDENCY_SYNC() is
// NV_IF_TARGET(NV_PROVIDES_SM_90, ::cudaGridDependencySynchronize();), as
// NVIDIA/cccl issue 9134 quotes it). Compiled for sm_90 and newer the wait
// is there. Compiled to PTX for compute_80, the guard removes it; the
// driver JIT-compiles that PTX for the sm_90 GPU in hand, and a launch with
// the PDL attribute then runs a secondary with no wait. The kernel counts
// the primary blocks whose two words (buf[2b], buf[2b+1]) are not both 1:
// the host test pdl-guarded-wait-ptx-jit JIT-compiles and runs this
// kernel's PTX (nvcc -arch=compute_80 and compute_90 -ptx of this file).
#include <nv/target>

extern "C" __global__ void secondary(const unsigned *buf, unsigned *stale, unsigned blocks) {
  NV_IF_TARGET(NV_PROVIDES_SM_90, cudaGridDependencySynchronize();)  // sass: wait
  const volatile unsigned *b = buf;
  for (unsigned i = threadIdx.x; i < blocks; i += blockDim.x) {
    if (b[2 * i] != 1u || b[2 * i + 1] != 1u) atomicAdd(stale, 1u);  // sass: load
  }
}
