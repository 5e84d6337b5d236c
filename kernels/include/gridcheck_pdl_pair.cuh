// gridcheck: a PDL pair and graph helpers for the host tests of
// spec/pdl/graphs.yaml, and a late-writing primary with its run loop for
// those of spec/pdl/real-world.yaml, hand-written. Needs sm_90 (PDL).
#pragma once

#include "gridcheck_host.cuh"

// A PDL pair for the graph tests (spec/pdl/graphs.yaml).
//
// Each block of the primary stores x = 1, triggers, then stores y = 1 (its
// two words of `buf`). Each block of the secondary calls
// cudaGridDependencySynchronize() and then reads every primary block's x and
// y, adding to `stale` each pair that is not (1, 1): after the wait the
// primary has completed and flushed, so `stale` must stay 0.

#define GC_PAIR_BLOCKS 264
#define GC_PAIR_THREADS 128

__global__ void gc_pdl_primary(unsigned *buf) {
  if (threadIdx.x == 0) {
    volatile unsigned *b = buf;
    b[2 * blockIdx.x] = 1;
  }
  cudaTriggerProgrammaticLaunchCompletion();
  if (threadIdx.x == 0) {
    volatile unsigned *b = buf;
    b[2 * blockIdx.x + 1] = 1;
  }
}

__global__ void gc_pdl_secondary(const unsigned *buf, unsigned *stale) {
  cudaGridDependencySynchronize();
  const volatile unsigned *b = buf;
  for (unsigned i = threadIdx.x; i < GC_PAIR_BLOCKS; i += blockDim.x) {
    if (b[2 * i] != 1 || b[2 * i + 1] != 1) atomicAdd(stale, 1u);
  }
}

// Device memory for the pair: buf (2 words a primary block) and stale.
struct gc_pair_mem {
  unsigned *buf;
  unsigned *stale;
};

static inline gc_pair_mem gc_pair_alloc() {
  gc_pair_mem m;
  GC_SETUP(cudaMalloc(&m.buf, 2 * GC_PAIR_BLOCKS * sizeof(unsigned)));
  GC_SETUP(cudaMalloc(&m.stale, sizeof(unsigned)));
  GC_SETUP(cudaMemset(m.stale, 0, sizeof(unsigned)));
  return m;
}

// The kernel a graph node launches, or nullptr for another kind of node.
static inline void *gc_node_func(cudaGraphNode_t node) {
  cudaGraphNodeType type;
  if (cudaGraphNodeGetType(node, &type) != cudaSuccess || type != cudaGraphNodeTypeKernel)
    return nullptr;
  cudaKernelNodeParams p;
  if (cudaGraphKernelNodeGetParams(node, &p) != cudaSuccess) return nullptr;
  return p.func;
}

// A graph's edges as cudaGraphGetEdges reports them, for a graph expected to
// have one edge, from the primary to the secondary. Prints the outputs
// `edges`, `edge_type`, `from_port`, `to_port`, `from_primary` and
// `to_secondary` (0xffffffff where there is no edge to describe).
static inline void gc_report_only_edge(cudaGraph_t g) {
  size_t n = 0;
  GC_SETUP(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &n));
  gc_output("edges", (unsigned)n);
  unsigned type = ~0u, from_port = ~0u, to_port = ~0u, from_primary = ~0u, to_secondary = ~0u;
  if (n > 0) {
    cudaGraphNode_t *from = new cudaGraphNode_t[n];
    cudaGraphNode_t *to = new cudaGraphNode_t[n];
    cudaGraphEdgeData *data = new cudaGraphEdgeData[n];
    GC_SETUP(cudaGraphGetEdges(g, from, to, data, &n));
    type = data[0].type;
    from_port = data[0].from_port;
    to_port = data[0].to_port;
    from_primary = gc_node_func(from[0]) == (void *)gc_pdl_primary;
    to_secondary = gc_node_func(to[0]) == (void *)gc_pdl_secondary;
    delete[] from;
    delete[] to;
    delete[] data;
  }
  gc_output("edge_type", type);
  gc_output("from_port", from_port);
  gc_output("to_port", to_port);
  gc_output("from_primary", from_primary);
  gc_output("to_secondary", to_secondary);
}

// Instantiates `g` and launches it `runs` times into a stream, clearing the
// primary's words before each launch. Prints `instantiate_err`,
// `graph_launch_err` (the first launch or synchronization error) and
// `stale_after_wait` (pairs the secondary saw stale after its wait, over all
// runs; 0xffffffff when the graph did not run).
static inline void gc_run_pair_graph(cudaGraph_t g, gc_pair_mem m, int runs) {
  cudaGraphExec_t exec;
  cudaError_t inst = cudaGraphInstantiate(&exec, g, 0);
  gc_output("instantiate_err", inst);
  if (inst != cudaSuccess) {
    gc_output("graph_launch_err", ~0u);
    gc_output("stale_after_wait", ~0u);
    return;
  }
  cudaStream_t s;
  GC_SETUP(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  GC_SETUP(cudaMemset(m.stale, 0, sizeof(unsigned)));
  cudaError_t launch = cudaSuccess;
  for (int r = 0; r < runs && launch == cudaSuccess; r++) {
    launch = cudaMemsetAsync(m.buf, 0, 2 * GC_PAIR_BLOCKS * sizeof(unsigned), s);
    if (launch == cudaSuccess) launch = cudaGraphLaunch(exec, s);
  }
  cudaError_t sync = cudaStreamSynchronize(s);
  if (launch == cudaSuccess) launch = sync;
  gc_output("graph_launch_err", launch);
  unsigned stale = ~0u;
  if (launch == cudaSuccess) GC_SETUP(cudaMemcpy(&stale, m.stale, sizeof stale, cudaMemcpyDeviceToHost));
  gc_output("stale_after_wait", stale);
}

// Kernel node parameters for one of the pair (`args` must outlive the call
// that adds the node).
static inline cudaKernelNodeParams gc_kernel_params(void *func, void **args) {
  cudaKernelNodeParams p = {};
  p.func = func;
  p.gridDim = dim3(GC_PAIR_BLOCKS);
  p.blockDim = dim3(GC_PAIR_THREADS);
  p.kernelParams = args;
  return p;
}

// A programmatic edge's data from `port`.
static inline cudaGraphEdgeData gc_programmatic_edge(unsigned char port) {
  cudaGraphEdgeData e = {};
  e.type = cudaGraphDependencyTypeProgrammatic;
  e.from_port = port;
  return e;
}

// Adds the edge `from` -> `to` with edge data `e` to `g` and, when that
// succeeds, instantiates `g`: the first error, or cudaSuccess.
static inline unsigned gc_edge_error(cudaGraph_t g, cudaGraphNode_t from, cudaGraphNode_t to,
                                     cudaGraphEdgeData e) {
  cudaError_t err = cudaGraphAddDependencies(g, &from, &to, &e, 1);
  if (err == cudaSuccess) {
    cudaGraphExec_t x;
    err = cudaGraphInstantiate(&x, g, 0);
    if (err == cudaSuccess) cudaGraphExecDestroy(x);
  }
  return err;
}

// Captures the pair into `*g` the way 004 section 4.5.3 describes for the
// programmatic event: the primary launched into s1 with
// cudaLaunchAttributeProgrammaticEvent (`trigger_at_block_start` as given),
// the secondary launched into s2 after cudaStreamWaitEvent on that event, s2
// joined back into s1. Prints `primary_launch_err` and `end_capture_err`;
// false when the capture failed.
static inline bool gc_capture_programmatic_event_pair(gc_pair_mem m, int trigger_at_block_start,
                                                      cudaGraph_t *g) {
  cudaStream_t s1, s2;
  cudaEvent_t ev, join;
  GC_SETUP(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  GC_SETUP(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  GC_SETUP(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  GC_SETUP(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  GC_SETUP(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeProgrammaticEvent;
  attr.val.programmaticEvent.event = ev;
  attr.val.programmaticEvent.flags = 0;
  attr.val.programmaticEvent.triggerAtBlockStart = trigger_at_block_start;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(GC_PAIR_BLOCKS);
  cfg.blockDim = dim3(GC_PAIR_THREADS);
  cfg.stream = s1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  gc_output("primary_launch_err", cudaLaunchKernelEx(&cfg, gc_pdl_primary, m.buf));
  GC_SETUP(cudaStreamWaitEvent(s2, ev, 0));
  gc_pdl_secondary<<<GC_PAIR_BLOCKS, GC_PAIR_THREADS, 0, s2>>>(m.buf, m.stale);
  GC_SETUP(cudaEventRecord(join, s2));
  GC_SETUP(cudaStreamWaitEvent(s1, join, 0));
  cudaError_t end = cudaStreamEndCapture(s1, g);
  gc_output("end_capture_err", end);
  return end == cudaSuccess;
}

// The pair with a late primary, for the tests of a secondary whose wait a
// guard may have compiled out (spec/pdl/real-world.yaml).
//
// Each block of gc_pdl_primary_late triggers at once; its thread 0 then
// waits `delay_ns` (by %globaltimer) and stores x = 1 and y = 1 (its two
// words of `buf`). A secondary launched after it with the PDL attribute may
// start during the delay: only its wait (cudaGridDependencySynchronize,
// which waits for the primary's completion and flush) orders its reads
// after those stores. gc_pair_count_stale is what a secondary does after
// its wait, or in its place: it adds to `stale` each primary block whose
// pair it reads as not (1, 1).

static __device__ inline unsigned long long gc_globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void gc_pdl_primary_late(unsigned *buf, unsigned long long delay_ns) {
  cudaTriggerProgrammaticLaunchCompletion();
  if (threadIdx.x == 0) {
    const unsigned long long t0 = gc_globaltimer();
    while (gc_globaltimer() - t0 < delay_ns) {
    }
    volatile unsigned *b = buf;
    b[2 * blockIdx.x] = 1;
    b[2 * blockIdx.x + 1] = 1;
  }
}

static __device__ inline void gc_pair_count_stale(const unsigned *buf, unsigned *stale) {
  const volatile unsigned *b = buf;
  for (unsigned i = threadIdx.x; i < GC_PAIR_BLOCKS; i += blockDim.x) {
    if (b[2 * i] != 1 || b[2 * i + 1] != 1) atomicAdd(stale, 1u);
  }
}

// cudaLaunchKernelEx of `k` with cudaLaunchAttributeProgrammaticStreamSerialization
// set: a PDL secondary of the kernel before it in `s`.
template <typename... Params, typename... Args>
static inline cudaError_t gc_launch_pdl(void (*k)(Params...), dim3 grid, dim3 block,
                                        cudaStream_t s, Args... args) {
  cudaLaunchAttribute a[1];
  a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t c = {};
  c.gridDim = grid;
  c.blockDim = block;
  c.stream = s;
  c.attrs = a;
  c.numAttrs = 1;
  return cudaLaunchKernelEx(&c, k, args...);
}

// What gc_run_late_pairs saw: the first error of a launch or of the final
// synchronization (cudaSuccess when none), and the stale pairs over all runs
// (0xffffffff when the runs did not complete).
struct gc_late_result {
  unsigned err;
  unsigned stale;
};

// `runs` times into one stream: clear the primary's words, launch
// gc_pdl_primary_late (GC_PAIR_BLOCKS blocks of GC_PAIR_THREADS, `delay_ns`),
// then `launch_secondary(stream, buf, stale)`, which launches the secondary
// with the PDL attribute and returns the launch's error (as a cudaError_t
// value). Then waits and reads the stale count.
template <typename Launch>
static inline gc_late_result gc_run_late_pairs(gc_pair_mem m, int runs,
                                               unsigned long long delay_ns,
                                               Launch launch_secondary) {
  cudaStream_t s;
  GC_SETUP(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  GC_SETUP(cudaMemset(m.stale, 0, sizeof(unsigned)));
  GC_SETUP(cudaDeviceSynchronize());
  unsigned err = cudaSuccess;
  for (int r = 0; r < runs && err == cudaSuccess; r++) {
    err = cudaMemsetAsync(m.buf, 0, 2 * GC_PAIR_BLOCKS * sizeof(unsigned), s);
    if (err == cudaSuccess) {
      gc_pdl_primary_late<<<GC_PAIR_BLOCKS, GC_PAIR_THREADS, 0, s>>>(m.buf, delay_ns);
      err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = launch_secondary(s, m.buf, m.stale);
  }
  const cudaError_t sync = cudaStreamSynchronize(s);
  if (err == cudaSuccess) err = sync;
  gc_late_result r = {err, ~0u};
  if (err == cudaSuccess) GC_SETUP(cudaMemcpy(&r.stale, m.stale, sizeof r.stale, cudaMemcpyDeviceToHost));
  cudaStreamDestroy(s);
  return r;
}
