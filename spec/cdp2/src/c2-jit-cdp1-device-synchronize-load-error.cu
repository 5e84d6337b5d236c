#include "gridcheck_driver.cuh"
#include <string>
extern "C" __global__ void child(unsigned *out) { out[0] = 1; }
extern "C" __global__ void parent(unsigned *out) {
  child<<<1, 1>>>(out);
  cudaDeviceSynchronize();
}
// The same two kernels as compute_80 PTX (nvcc 13.0 -arch=compute_80
// -rdc=true -ptx -DCUDA_FORCE_CDP1_IF_SUPPORTED, comments dropped).
static const char *PTX =
  ".version 9.0\n"
  ".target sm_80\n"
  ".address_size 64\n"
  ".extern .func  (.param .b64 func_retval0) cudaGetParameterBufferV2\n"
  "(\n"
  "  .param .b64 cudaGetParameterBufferV2_param_0,\n"
  "  .param .align 4 .b8 cudaGetParameterBufferV2_param_1[12],\n"
  "  .param .align 4 .b8 cudaGetParameterBufferV2_param_2[12],\n"
  "  .param .b32 cudaGetParameterBufferV2_param_3\n"
  ")\n"
  ";\n"
  ".extern .func  (.param .b32 func_retval0) cudaLaunchDeviceV2\n"
  "(\n"
  "  .param .b64 cudaLaunchDeviceV2_param_0,\n"
  "  .param .b64 cudaLaunchDeviceV2_param_1\n"
  ")\n"
  ";\n"
  ".extern .func  (.param .b32 func_retval0) cudaDeviceSynchronize\n"
  "()\n"
  ";\n"
  ".visible .entry child(\n"
  "  .param .u64 child_param_0\n"
  ")\n"
  "{\n"
  "  .reg .b32   %r<2>;\n"
  "  .reg .b64   %rd<3>;\n"
  "  ld.param.u64   %rd1, [child_param_0];\n"
  "  cvta.to.global.u64   %rd2, %rd1;\n"
  "  mov.u32   %r1, 1;\n"
  "  st.global.u32   [%rd2], %r1;\n"
  "  ret;\n"
  "}\n"
  ".visible .entry parent(\n"
  "  .param .u64 parent_param_0\n"
  ")\n"
  "{\n"
  "  .reg .pred   %p<2>;\n"
  "  .reg .b32   %r<3>;\n"
  "  .reg .b64   %rd<4>;\n"
  "  ld.param.u64   %rd2, [parent_param_0];\n"
  "  mov.u64   %rd3, child;\n"
  "  { // callseq 0, 0\n"
  "  .reg .b32 temp_param_reg;\n"
  "  .param .b64 param0;\n"
  "  st.param.b64   [param0+0], %rd3;\n"
  "  .param .align 4 .b8 param1[12];\n"
  "  st.param.b32   [param1+0], 1;\n"
  "  st.param.b32   [param1+4], 1;\n"
  "  st.param.b32   [param1+8], 1;\n"
  "  .param .align 4 .b8 param2[12];\n"
  "  st.param.b32   [param2+0], 1;\n"
  "  st.param.b32   [param2+4], 1;\n"
  "  st.param.b32   [param2+8], 1;\n"
  "  .param .b32 param3;\n"
  "  st.param.b32   [param3+0], 0;\n"
  "  .param .b64 retval0;\n"
  "  call.uni (retval0), \n"
  "  cudaGetParameterBufferV2, \n"
  "  (\n"
  "  param0, \n"
  "  param1, \n"
  "  param2, \n"
  "  param3\n"
  "  );\n"
  "  ld.param.b64   %rd1, [retval0+0];\n"
  "  } // callseq 0\n"
  "  setp.eq.s64   %p1, %rd1, 0;\n"
  "  @%p1 bra   $L__BB1_2;\n"
  "  st.u64   [%rd1], %rd2;\n"
  "  { // callseq 1, 0\n"
  "  .reg .b32 temp_param_reg;\n"
  "  .param .b64 param0;\n"
  "  st.param.b64   [param0+0], %rd1;\n"
  "  .param .b64 param1;\n"
  "  st.param.b64   [param1+0], 0;\n"
  "  .param .b32 retval0;\n"
  "  call.uni (retval0), \n"
  "  cudaLaunchDeviceV2, \n"
  "  (\n"
  "  param0, \n"
  "  param1\n"
  "  );\n"
  "  ld.param.b32   %r1, [retval0+0];\n"
  "  } // callseq 1\n"
  "$L__BB1_2:\n"
  "  { // callseq 2, 0\n"
  "  .reg .b32 temp_param_reg;\n"
  "  .param .b32 retval0;\n"
  "  call.uni (retval0), \n"
  "  cudaDeviceSynchronize, \n"
  "  (\n"
  "  );\n"
  "  ld.param.b32   %r2, [retval0+0];\n"
  "  } // callseq 2\n"
  "  ret;\n"
  "}\n";
// One mode: every output once, with the mode's suffix.
static int run(const char *suffix) {
  char name[96];
  auto out = [&](const char *what, unsigned v) {
    snprintf(name, sizeof name, "%s_%s", what, suffix);
    gc_output(name, v);
  };
  unsigned *o;
  GC_SETUP(cudaMalloc(&o, sizeof(unsigned)));
  cudaFuncAttributes a;
  cudaError_t attributes = cudaFuncGetAttributes(&a, parent);
  if (attributes == cudaErrorUnsupportedPtxVersion) {
    // The PTX this nvcc embedded is newer than the driver's JIT reads (a
    // toolkit newer than the driver): the runtime path cannot reach the
    // question, so the trial is not run, before any output.
    int driver = 0;
    cudaDriverGetVersion(&driver);
    printf("gridcheck-not-run the driver (CUDA %d.%d) cannot JIT the PTX of this nvcc (CUDA %d.%d): "
           "cudaErrorUnsupportedPtxVersion\n",
           driver / 1000, driver % 1000 / 10, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    return 0;
  }
  out("rt_func_get_attributes", attributes);
  parent<<<1, 1>>>(o);
  out("rt_launch", cudaGetLastError());
  out("rt_sync", cudaDeviceSynchronize());
  (void)cudaGetLastError();
  const char *devrt = gc_cudadevrt_path();
  if (!devrt) {
    fprintf(stderr, "setup step failed: no libcudadevrt.a (set GRIDCHECK_CUDADEVRT)\n");
    return 3;
  }
  GcLinkResult l = gc_link_ptx(PTX, devrt, "parent");
  out("linker_add_ptx", l.add_ptx);
  out("linker_add_devrt", l.add_devrt);
  out("linker_complete", l.complete);
  out("linker_module_load", l.load);
  out("linker_get_function", l.get_function);
  typedef CUresult (*ModuleLoadData)(CUmodule *, const void *);
  typedef CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUmodule m;
  CUfunction f;
  unsigned load = ((ModuleLoadData)gc_driver("cuModuleLoadData"))(&m, PTX);
  out("ptx_module_load", load);
  out("ptx_get_function", load == CUDA_SUCCESS
                              ? ((ModuleGetFunction)gc_driver("cuModuleGetFunction"))(&f, m, "parent")
                              : GC_NOT_REACHED);
  return 0;
}
int main(int argc, char **argv) {
  if (argc > 1) return run(argv[1]);
  // Each mode in its own process: the variable is read once, at
  // initialization. The child's output lines are passed on.
  for (const char *mode : {"EAGER", "LAZY"}) {
    setenv("CUDA_MODULE_LOADING", mode, 1);
    std::string cmd = std::string("'") + argv[0] + "' " + (mode[0] == 'E' ? "eager" : "lazy");
    FILE *p = popen(cmd.c_str(), "r");
    if (!p) { perror("popen"); return 3; }
    char line[256];
    while (fgets(line, sizeof line, p)) fputs(line, stdout);
    fflush(stdout);
    int st = pclose(p);
    if (st != 0) { fprintf(stderr, "the %s run exited with %d\n", mode, st); return 3; }
  }
  return 0;
}
