// memspace_probe: the address-space predicates of c2-memory-spaces-through-pointers,
// (a) as the test does (pointers as kernel pointer parameters: nvcc may
// assume a kernel's pointer parameters point to global memory and fold the
// predicates at compile time), (b) with the same addresses passed as
// integers (nvcc 13.0.88 folds these too), (c) in the parent itself, on
// addresses laundered through a volatile variable, as the control, and (d)
// in the child on pointer parameters laundered the same way (evaluated at
// run time: what the fixed test does).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("SETUP %s: %s\n", #x, cudaGetErrorName(e_)); exit(3); } } while (0)
__constant__ unsigned int konst = 0x5eedu;
__device__ unsigned int gvar;
typedef unsigned long long u64;
__device__ void classify(unsigned *o, const void *g, const void *c, const void *l, const void *s) {
  o[0] = __isGlobal(g); o[1] = __isConstant(g); o[2] = __isLocal(g); o[3] = __isShared(g);
  o[4] = __isGlobal(c); o[5] = __isConstant(c); o[6] = __isLocal(c); o[7] = __isShared(c);
  o[8] = __isGlobal(l); o[9] = __isConstant(l); o[10] = __isLocal(l); o[11] = __isShared(l);
  o[12] = __isGlobal(s); o[13] = __isConstant(s); o[14] = __isLocal(s); o[15] = __isShared(s);
}
__global__ void child_ptr(unsigned *o, const void *g, const void *c, const void *l, const void *s) {
  classify(o, g, c, l, s);
}
__global__ void child_int(unsigned *o, u64 g, u64 c, u64 l, u64 s) {
  classify(o, (const void *)g, (const void *)c, (const void *)l, (const void *)s);
  const u64 own = (u64)(const void *)&konst;
  o[16] = own == c;                                   // the child's own &konst is the parent's
  o[17] = *(const unsigned *)c == konst && konst == 0x5eedu;
  o[18] = (unsigned)own; o[19] = (unsigned)(own >> 32);
  o[20] = (u64)(const void *)&gvar == g;
}
// (d) pointer parameters laundered through a volatile local: the compiler
// can no longer assume anything about the address.
__global__ void child_vol(unsigned *o, const void *g, const void *c, const void *l, const void *s) {
  volatile u64 vg = (u64)g, vc = (u64)c, vl = (u64)l, vs = (u64)s;
  const u64 g2 = vg, c2 = vc, l2 = vl, s2 = vs;
  classify(o, (const void *)g2, (const void *)c2, (const void *)l2, (const void *)s2);
  o[16] = (u64)(const void *)&konst == c2;
  o[17] = *(const volatile unsigned *)c2 == konst && konst == 0x5eedu;
}
__global__ void parent(unsigned *o) {
  __shared__ unsigned sh[4];
  volatile unsigned loc[4];
  sh[0] = 31u; loc[0] = 41u;
  volatile u64 lg = (u64)(const void *)&gvar, lc = (u64)(const void *)&konst, ll = (u64)(const void *)loc,
               ls = (u64)(const void *)sh;
  const u64 g = lg, c = lc, l = ll, s = ls;
  classify(o + 64, (const void *)g, (const void *)c, (const void *)l, (const void *)s);
  o[96] = (unsigned)g; o[97] = (unsigned)(g >> 32);
  o[98] = (unsigned)c; o[99] = (unsigned)(c >> 32);
  o[100] = (unsigned)l; o[101] = (unsigned)(l >> 32);
  o[102] = (unsigned)s; o[103] = (unsigned)(s >> 32);
  child_ptr<<<1, 1>>>(o, (const void *)&gvar, (const void *)&konst, (const void *)loc, (const void *)sh);
  o[104] = cudaGetLastError();
  child_int<<<1, 1>>>(o + 32, g, c, l, s);
  o[105] = cudaGetLastError();
  child_vol<<<1, 1>>>(o + 128, (const void *)&gvar, (const void *)&konst, (const void *)loc, (const void *)sh);
  o[106] = cudaGetLastError();
}
int main() {
  unsigned *o, h[160];
  CK(cudaMalloc(&o, sizeof h));
  CK(cudaMemset(o, 0xff, sizeof h));
  parent<<<1, 1>>>(o);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost));
  const char *ptr[] = {"global(&gvar)", "constant(&konst)", "local(loc)", "shared(sh)"};
  const char *pred[] = {"isGlobal", "isConstant", "isLocal", "isShared"};
  const char *where[] = {"child-pointer-params", "child-integer-params", "parent", "child-laundered"};
  const int base[] = {0, 32, 64, 128};
  for (int w = 0; w < 4; ++w)
    for (int p = 0; p < 4; ++p) {
      printf("SPACE %s %s:", where[w], ptr[p]);
      for (int q = 0; q < 4; ++q) printf(" %s=%u", pred[q], h[base[w] + 4 * p + q]);
      printf("\n");
    }
  printf("ADDR parent gvar=0x%08x%08x konst=0x%08x%08x loc=0x%08x%08x sh=0x%08x%08x child_own_konst=0x%08x%08x\n",
         h[97], h[96], h[99], h[98], h[101], h[100], h[103], h[102], h[51], h[50]);
  printf("CONST child_own_konst_equals_parents=%u value_same=%u child_gvar_same=%u launch_errs=%u,%u,%u laundered: own_konst_equals=%u value_same=%u\n", h[48], h[49],
         h[52], h[104], h[105], h[106], h[144], h[145]);
  return 0;
}
