#include "gridcheck_driver.cuh"
// The PTX as string lines. (The test's name avoids `cudadevrt`: nvcc
// 13.0's device link skips the registration of an object whose file
// name contains it, and the program does not link.)
static const char *PTX =
  ".version 8.0\n"
  ".target sm_90\n"
  ".address_size 64\n"
  "\n"
  "// PTX-level Declaration of cudaLaunchDevice() when .address_size is 64\n"
  ".extern .func(.param .b32 func_retval0) cudaLaunchDevice\n"
  "(\n"
  " .param .b64 func,\n"
  " .param .b64 parameterBuffer,\n"
  " .param .align 4 .b8 gridDimension[12],\n"
  " .param .align 4 .b8 blockDimension[12],\n"
  " .param .b32 sharedMemSize,\n"
  " .param .b64 stream\n"
  ")\n"
  ";\n"
  "\n"
  "// PTX-level Declaration of cudaGetParameterBuffer() when .address_size is 64\n"
  ".extern .func(.param .b64 func_retval0) cudaGetParameterBuffer\n"
  "(\n"
  " .param .b64 alignment,\n"
  " .param .b64 size\n"
  ")\n"
  ";\n"
  "\n"
  ".visible .entry child(.param .u64 child_p)\n"
  "{\n"
  "  .reg .b32 %r<2>;\n"
  "  .reg .b64 %rd<3>;\n"
  "  ld.param.u64 %rd1, [child_p];\n"
  "  cvta.to.global.u64 %rd2, %rd1;\n"
  "  mov.u32 %r1, 24589;\n"
  "  st.global.u32 [%rd2], %r1;\n"
  "  ret;\n"
  "}\n"
  "\n"
  ".visible .entry parent(.param .u64 parent_p, .param .u64 parent_err)\n"
  "{\n"
  "  .reg .b32 %r<2>;\n"
  "  .reg .b64 %rd<6>;\n"
  "  ld.param.u64 %rd1, [parent_p];\n"
  "  ld.param.u64 %rd2, [parent_err];\n"
  "  cvta.to.global.u64 %rd3, %rd2;\n"
  "  {\n"
  "  .param .b64 param0;\n"
  "  st.param.b64 [param0+0], 8;\n"
  "  .param .b64 param1;\n"
  "  st.param.b64 [param1+0], 8;\n"
  "  .param .b64 retval0;\n"
  "  call.uni (retval0), cudaGetParameterBuffer, (param0, param1);\n"
  "  ld.param.b64 %rd4, [retval0+0];\n"
  "  }\n"
  "  st.u64 [%rd4], %rd1;\n"
  "  mov.u64 %rd5, child;\n"
  "  {\n"
  "  .param .b64 param0;\n"
  "  st.param.b64 [param0+0], %rd5;\n"
  "  .param .b64 param1;\n"
  "  st.param.b64 [param1+0], %rd4;\n"
  "  .param .align 4 .b8 param2[12];\n"
  "  st.param.b32 [param2+0], 1;\n"
  "  st.param.b32 [param2+4], 1;\n"
  "  st.param.b32 [param2+8], 1;\n"
  "  .param .align 4 .b8 param3[12];\n"
  "  st.param.b32 [param3+0], 1;\n"
  "  st.param.b32 [param3+4], 1;\n"
  "  st.param.b32 [param3+8], 1;\n"
  "  .param .b32 param4;\n"
  "  st.param.b32 [param4+0], 0;\n"
  "  .param .b64 param5;\n"
  "  st.param.b64 [param5+0], 0;\n"
  "  .param .b32 retval0;\n"
  "  call.uni (retval0), cudaLaunchDevice, (param0, param1, param2, param3, param4, param5);\n"
  "  ld.param.b32 %r1, [retval0+0];\n"
  "  }\n"
  "  st.global.u32 [%rd3], %r1;\n"
  "  ret;\n"
  "}\n";
// A kernel of the program itself (an -rdc program needs device code),
// launched once to create the primary context, current on this thread.
__global__ void warm_up() {}
int main() {
  warm_up<<<1, 1>>>();
  GC_SETUP(cudaGetLastError());
  GC_SETUP(cudaDeviceSynchronize());
  const char *devrt = gc_cudadevrt_path();
  if (!devrt) {
    fprintf(stderr, "setup step failed: no libcudadevrt.a (set GRIDCHECK_CUDADEVRT)\n");
    return 3;
  }
  GcLinkResult w = gc_link_ptx(PTX, devrt, "parent");
  gc_output("with_devrt_add_ptx", w.add_ptx);
  gc_output("with_devrt_add_library", w.add_devrt);
  gc_output("with_devrt_link", w.complete);
  gc_output("with_devrt_load", w.load);
  gc_output("with_devrt_get_function", w.get_function);
  unsigned launch = GC_NOT_REACHED, sync = GC_NOT_REACHED, words[2] = {0u, ~0u};
  if (w.get_function == CUDA_SUCCESS) {
    unsigned *p;
    GC_SETUP(cudaMalloc(&p, 2 * sizeof(unsigned)));
    GC_SETUP(cudaMemcpy(p, words, sizeof words, cudaMemcpyHostToDevice));
    unsigned *err = p + 1;
    void *params[] = {&p, &err};
    gc_launch_1x1(w.function, params, &launch, &sync);
    if (sync == CUDA_SUCCESS) GC_SETUP(cudaMemcpy(words, p, sizeof words, cudaMemcpyDeviceToHost));
  }
  gc_output("with_devrt_launch", launch);
  gc_output("with_devrt_sync", sync);
  gc_output("device_launch_err", words[1]);
  gc_output("child_wrote", words[0] == 24589u);
  GcLinkResult wo = gc_link_ptx(PTX, nullptr, "parent");
  gc_output("without_devrt_add_ptx", wo.add_ptx);
  gc_output("without_devrt_link", wo.complete);
  gc_output("without_devrt_load", wo.load);
  return 0;
}
