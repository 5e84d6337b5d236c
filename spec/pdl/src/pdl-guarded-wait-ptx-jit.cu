// A PDL secondary whose wait an architecture guard removed: the PTX nvcc
// 13.0 makes of kernels/sass/guarded-wait-arch.cu (CCCL's
// NV_IF_TARGET(NV_PROVIDES_SM_90, cudaGridDependencySynchronize();)) for
// compute_80, which has no griddepcontrol.wait, and for compute_90, which
// has it (kernels/include/gridcheck_guarded_wait_ptx.cuh). Each is
// JIT-compiled by the driver for the GPU in hand (cuLinkCreate,
// cuLinkAddData, cuLinkComplete, cuModuleLoadData), as a library that
// ships only compute_80 PTX is on an sm_90 GPU (NVIDIA/cccl issue 9134),
// and launched with cuLaunchKernelEx and the programmatic stream
// serialization attribute after a primary of this program that triggers at
// once and writes its words 100 us later (gc_pdl_primary_late), 20 times.
#include "gridcheck_driver.cuh"
#include "gridcheck_guarded_wait_ptx.cuh"
#include "gridcheck_pdl_pair.cuh"

#define RUNS 20
#define DELAY_NS 100000ull

typedef CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);

// JIT-compiles `ptx`, then runs the late pairs with its `secondary` as the
// PDL secondary. Prints <name>_jit_err (the first failing step's CUresult:
// link or load or lookup), <name>_launch_err and <name>_stale_pairs
// (0xffffffff where not reached).
static void run(const char *name, const char *ptx, gc_pair_mem m) {
  char key[64];
  GcLinkResult l = gc_link_ptx(ptx, nullptr, "secondary");
  unsigned jit = l.add_ptx != CUDA_SUCCESS    ? l.add_ptx
                 : l.complete != CUDA_SUCCESS ? l.complete
                 : l.load != CUDA_SUCCESS     ? l.load
                                              : l.get_function;
  snprintf(key, sizeof key, "%s_jit_err", name);
  gc_output(key, jit);
  gc_late_result r = {GC_NOT_REACHED, GC_NOT_REACHED};
  if (jit == CUDA_SUCCESS) {
    static LaunchKernelEx launch_ex = (LaunchKernelEx)gc_driver("cuLaunchKernelEx");
    static CUfunction f;
    f = l.function;
    r = gc_run_late_pairs(m, RUNS, DELAY_NS, [](cudaStream_t s, unsigned *buf, unsigned *stale) {
      unsigned blocks = GC_PAIR_BLOCKS;
      void *params[] = {&buf, &stale, &blocks};
      CUlaunchAttribute a[1];
      a[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      a[0].value.programmaticStreamSerializationAllowed = 1;
      CUlaunchConfig c = {};
      c.gridDimX = GC_PAIR_BLOCKS;
      c.gridDimY = c.gridDimZ = 1;
      c.blockDimX = GC_PAIR_THREADS;
      c.blockDimY = c.blockDimZ = 1;
      c.hStream = (CUstream)s;
      c.attrs = a;
      c.numAttrs = 1;
      return (unsigned)launch_ex(&c, f, params, nullptr);
    });
  }
  snprintf(key, sizeof key, "%s_launch_err", name);
  gc_output(key, r.err);
  snprintf(key, sizeof key, "%s_stale_pairs", name);
  gc_output(key, r.stale);
}

// A kernel of the program itself, launched once to create the primary
// context (current on this thread) before the driver API is used.
__global__ void warm_up() {}

int main() {
  warm_up<<<1, 1>>>();
  GC_SETUP(cudaGetLastError());
  GC_SETUP(cudaDeviceSynchronize());
  gc_pair_mem m = gc_pair_alloc();
  run("compute_80", GC_GUARDED_WAIT_PTX_COMPUTE_80, m);
  run("compute_90", GC_GUARDED_WAIT_PTX_COMPUTE_90, m);
  return 0;
}
