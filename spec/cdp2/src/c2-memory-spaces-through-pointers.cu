// out[0] child_read_global_var   the __device__ variable the parent set (11)
// out[1] child_read_heap         the heap word the parent set (21)
// out[2] global_pointers_global  __isGlobal of both in the child
// out[3] constant_same_address   the parent's &konst is the child's own &konst
// out[4] constant_value_same     *p == konst == 0x5eed in the child
// out[5] local_pointer_local     __isLocal and not __isGlobal in the child
// out[6] shared_pointer_shared   __isShared and not __isGlobal in the child
// out[7] tail_read_global_var    the child's write (12), seen by the tail
// out[8] tail_read_heap          the child's write (22), seen by the tail
// out[9] launch_err, out[10] tail_launch_err, out[11] malloc_err
// out[12] parent_local_local, out[13] parent_shared_shared: the control,
//         the same predicates on the same addresses in the parent
// out[14] parent_constant_constant, out[15] child_constant_constant:
//         __isConstant of &konst (reported: what a constant's generic
//         address is, the same in both grids)
__constant__ unsigned int konst = 0x5eedu;
__device__ unsigned int gvar;
// The address as a value the compiler cannot see through.
static __device__ const void *opaque(const void *p) {
  volatile unsigned long long v = (unsigned long long)p;
  return (const void *)v;
}
__global__ void child(unsigned int *out, unsigned int *g, unsigned int *heap,
                      const unsigned int *c, const void *local_p, const void *shared_p) {
  out[0] = *g;
  *g = 12u;
  out[1] = heap[0];
  heap[0] = 22u;
  out[2] = __isGlobal(opaque(g)) && __isGlobal(opaque(heap));
  out[3] = opaque(c) == opaque(&konst);
  out[4] = *c == konst && konst == 0x5eedu;
  const void *l = opaque(local_p), *s = opaque(shared_p);
  out[5] = __isLocal(l) && !__isGlobal(l);
  out[6] = __isShared(s) && !__isGlobal(s);
  out[15] = __isConstant(opaque(c));
}
__global__ void tail(unsigned int *out, unsigned int *heap) {
  out[7] = gvar;
  out[8] = heap[0];
  cudaFree(heap);
}
extern "C" __global__ void entry(unsigned int *out) {
  __shared__ unsigned int sh[4];
  volatile unsigned int loc[4];
  unsigned int *heap = nullptr;
  out[11] = cudaMalloc((void **)&heap, 4 * sizeof(unsigned int));
  if (heap == nullptr) return;
  gvar = 11u;
  heap[0] = 21u;
  sh[0] = 31u;
  loc[0] = 41u;
  const void *l = opaque((const void *)loc), *s = opaque((const void *)sh);
  out[12] = __isLocal(l) && !__isGlobal(l);
  out[13] = __isShared(s) && !__isGlobal(s);
  out[14] = __isConstant(opaque(&konst));
  child<<<1, 1>>>(out, &gvar, heap, &konst, (const void *)loc, (const void *)sh);
  out[9] = cudaGetLastError();
  tail<<<1, 1, 0, cudaStreamTailLaunch>>>(out, heap);
  out[10] = cudaGetLastError();
}
