// trigger-tail's host side (included by trigger_tail.cu): arguments, the
// launch paths (runtime <<<>>>, cudaLaunchKernelEx, or the harness's driver
// API path: a cubin loaded with cuModuleLoadData and launched with
// cuLaunchKernelEx), the watchdog and the log lines.
//
// Log lines (stdout, one line each, `TAG key=value ...`):
//   CASE     the case's parameters, as given
//   ENV      device, driver and runtime versions
//   PROGRESS every second while a launch is not complete: where the grid is
//   HANG     a launch not complete after hang_ms: where it stopped; exit 2
//   RESULT   every launch completed: counts over all launches; exit 0
//   ERROR    a CUDA call failed (not a hang); exit 3
// The summary of where a grid is (PROGRESS, HANG): t0=/t1= count the parent
// blocks by milestone mask (hex: T0_* and T1_* in trigger_tail.cu),
// child=R/B the parent blocks whose child ran, launch_err= the blocks whose
// launch returned an error, ctr_* the counters (parent blocks at their end,
// children run, the kernel queued after, the device launch of the parent).
#include <cuda.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

static std::string g_name = "?";

#define CHECK(call)                                                                           \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess) {                                                                  \
      printf("ERROR name=%s call=\"%s\" error=%s code=%d line=%d\n", g_name.c_str(), #call, \
             cudaGetErrorName(e_), (int)e_, __LINE__);                                        \
      fflush(stdout);                                                                         \
      _exit(3);                                                                               \
    }                                                                                         \
  } while (0)

#define CHECK_CU(call)                                                                                    \
  do {                                                                                                    \
    CUresult r_ = (call);                                                                                 \
    if (r_ != CUDA_SUCCESS) {                                                                             \
      printf("ERROR name=%s call=\"%s\" cu_error=%d line=%d\n", g_name.c_str(), #call, (int)r_, __LINE__); \
      fflush(stdout);                                                                                     \
      _exit(3);                                                                                           \
    }                                                                                                     \
  } while (0)

static double now_s() {
  using namespace std::chrono;
  static const auto t0 = steady_clock::now();
  return duration<double>(steady_clock::now() - t0).count();
}

// The value of `key=value` on the command line; the last one wins, so that
// a variant's arguments override a case's.
static const char *sarg(int argc, char **argv, const char *key, const char *dflt) {
  const size_t n = strlen(key);
  const char *v = dflt;
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=') v = argv[i] + n + 1;
  return v;
}

static unsigned uarg(int argc, char **argv, const char *key, unsigned dflt) {
  const char *v = sarg(argc, argv, key, nullptr);
  return v ? (unsigned)strtoul(v, nullptr, 0) : dflt;
}

// A block index or `all` (TT_ALL).
static unsigned barg(int argc, char **argv, const char *key) {
  const char *v = sarg(argc, argv, key, "all");
  return strcmp(v, "all") == 0 ? TT_ALL : (unsigned)strtoul(v, nullptr, 0);
}

static unsigned pick(const char *key, const char *v, std::initializer_list<const char *> names) {
  unsigned i = 0;
  for (const char *n : names) {
    if (strcmp(v, n) == 0) return i;
    ++i;
  }
  printf("ERROR name=%s bad_argument=%s value=%s\n", g_name.c_str(), key, v);
  exit(3);
}

static unsigned long long host_mix(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Never outlive the step: exit at `seconds` (status 124) and with the parent.
static void self_limit(unsigned seconds) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::thread([seconds] {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    printf("LIMIT name=%s seconds=%u\n", g_name.c_str(), seconds);
    fflush(stdout);
    _exit(124);
  }).detach();
}

// The driver API entry points of the cubin path, through the runtime (no
// link against libcuda).
struct Driver {
  CUresult (*load)(CUmodule *, const void *) = nullptr;
  CUresult (*get)(CUfunction *, CUmodule, const char *) = nullptr;
  CUresult (*launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **) = nullptr;
  CUfunction parent = nullptr, after = nullptr, launcher = nullptr;
  void init(const char *path) {
    cudaDriverEntryPointQueryResult q;
    CHECK(cudaGetDriverEntryPointByVersion("cuModuleLoadData", (void **)&load, 12000, cudaEnableDefault, &q));
    CHECK(cudaGetDriverEntryPointByVersion("cuModuleGetFunction", (void **)&get, 12000, cudaEnableDefault, &q));
    CHECK(cudaGetDriverEntryPointByVersion("cuLaunchKernelEx", (void **)&launch_ex, 12000, cudaEnableDefault, &q));
    FILE *f = fopen(path, "rb");
    if (!f) {
      printf("ERROR name=%s cannot_open=%s\n", g_name.c_str(), path);
      exit(3);
    }
    std::vector<char> bytes;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
    fclose(f);
    CUmodule mod;
    CHECK_CU(load(&mod, bytes.data()));
    CHECK_CU(get(&parent, mod, "tt_parent"));
    CHECK_CU(get(&after, mod, "tt_after"));
    CHECK_CU(get(&launcher, mod, "tt_launcher"));
  }
};

struct Config {
  unsigned launch_device, stream_kind, api, pss, cubin;
};

// One launch of `k` (tt_parent, tt_launcher or tt_after) by the configured path.
static void launch_one(const Config &c, Driver &d, int which, unsigned grid, unsigned block, cudaStream_t s,
                       tt_params p) {
  if (c.cubin) {
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = grid;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = block;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = (CUstream)s;
    cfg.attrs = (c.pss && which == 0) ? &attr : nullptr;
    cfg.numAttrs = (c.pss && which == 0) ? 1 : 0;
    void *args[] = {&p};
    CUfunction f = which == 0 ? d.parent : which == 1 ? d.launcher : d.after;
    CHECK_CU(d.launch_ex(&cfg, f, args, nullptr));
    return;
  }
  void (*k)(tt_params) = which == 0 ? tt_parent : which == 1 ? tt_launcher : tt_after;
  if (c.api == 0 && !(c.pss && which == 0)) {
    k<<<grid, block, 0, s>>>(p);
    CHECK(cudaGetLastError());
    return;
  }
  cudaLaunchAttribute attr;
  memset(&attr, 0, sizeof attr);
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(block);
  cfg.stream = s;
  cfg.attrs = (c.pss && which == 0) ? &attr : nullptr;
  cfg.numAttrs = (c.pss && which == 0) ? 1 : 0;
  CHECK(cudaLaunchKernelEx(&cfg, k, p));
}

// Where the grid is: parent blocks by milestone masks, children run, counters.
static std::string where(const unsigned *stage, const unsigned long long *ctr, unsigned blocks) {
  std::map<unsigned, unsigned> t0, t1;
  unsigned child = 0, lerr = 0, unreached = 0;
  for (unsigned b = 0; b < blocks; ++b) {
    const volatile unsigned *w = stage + (size_t)b * TT_WORDS;
    const unsigned m0 = w[0], m1 = w[1];
    t0[m0]++;
    t1[m1]++;
    if (w[2] & TT_CHILD_RAN) child++;
    if (w[3] == 0u) unreached++;
    else if (w[3] != 1u) lerr++;
  }
  std::string s;
  char buf[96];
  auto masks = [&](const char *k, const std::map<unsigned, unsigned> &m) {
    s += k;
    s += "=";
    bool first = true;
    for (auto &kv : m) {
      snprintf(buf, sizeof buf, "%s0x%x:%u", first ? "" : ",", kv.first, kv.second);
      s += buf;
      first = false;
    }
  };
  masks("t0", t0);
  s += " ";
  masks("t1", t1);
  const volatile unsigned long long *c = ctr;
  snprintf(buf, sizeof buf, " child=%u/%u launch_unreached=%u launch_err=%u", child, blocks, unreached, lerr);
  s += buf;
  snprintf(buf, sizeof buf, " ctr_parent_end=%llu ctr_child_ran=%llu ctr_after_ran=%llu ctr_device_launch=%llu",
           c[C_PARENT_END], c[C_CHILD_RAN], c[C_AFTER_RAN], c[C_DEVICE_LAUNCH]);
  s += buf;
  snprintf(buf, sizeof buf, " ctr_launched=%llu ctr_before_slow=%llu", c[C_LAUNCHED], c[C_BEFORE_SLOW]);
  s += buf;
  return s;
}

int main(int argc, char **argv) {
  g_name = sarg(argc, argv, "name", "unnamed");
  self_limit(uarg(argc, argv, "limit", 20));
  tt_params p;
  memset(&p, 0, sizeof p);
  const unsigned blocks = uarg(argc, argv, "blocks", 1), bs = uarg(argc, argv, "bs", 64);
  const unsigned launches = uarg(argc, argv, "launches", 1), hang_ms = uarg(argc, argv, "hang_ms", 3000);
  const unsigned seed = uarg(argc, argv, "seed", 1), fresh = uarg(argc, argv, "fresh", 0);
  const unsigned after = uarg(argc, argv, "after", 0), pool = uarg(argc, argv, "pool", 0);
  p.order = pick("order", sarg(argc, argv, "order", "none"), {"none", "trigger-first", "launch-first"});
  p.who = pick("who", sarg(argc, argv, "who", "same"), {"same", "other"});
  p.child = pick("child", sarg(argc, argv, "child", "tail"), {"tail", "ff", "named", "null"});
  p.delay = uarg(argc, argv, "delay", 0);
  p.pre = uarg(argc, argv, "pre", 0);
  p.rnd = uarg(argc, argv, "rnd", 0);
  p.stress = uarg(argc, argv, "stress", 0);
  p.lanes = uarg(argc, argv, "lanes", 1);
  p.child_blocks = uarg(argc, argv, "child_blocks", 1);
  p.blocks = blocks;
  p.bs = bs;
  p.trigb = barg(argc, argv, "trigb");
  p.launchb = barg(argc, argv, "launchb");
  p.slowb = barg(argc, argv, "slowb");
  p.slow = uarg(argc, argv, "slow", 0);
  p.slowwait = uarg(argc, argv, "slowwait", 0);
  Config c;
  c.launch_device = pick("launch", sarg(argc, argv, "launch", "host"), {"host", "device"});
  c.stream_kind = pick("stream", sarg(argc, argv, "stream", "legacy"), {"legacy", "blocking", "nonblocking"});
  c.api = pick("api", sarg(argc, argv, "api", "chevron"), {"chevron", "ex"});
  c.pss = pick("attr", sarg(argc, argv, "attr", "none"), {"none", "pss"});
  c.cubin = pick("loader", sarg(argc, argv, "loader", "rt"), {"rt", "cubin"});
  if (bs < 64 || bs % 32 != 0 || bs > 1024) {
    printf("ERROR name=%s bad_argument=bs value=%u (a multiple of 32, 64 to 1024)\n", g_name.c_str(), bs);
    return 3;
  }
  printf("CASE name=%s", g_name.c_str());
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], "name=", 5) != 0) printf(" %s", argv[i]);
  printf("\n");
  fflush(stdout);

  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int drv = 0, rt = 0;
  CHECK(cudaDriverGetVersion(&drv));
  CHECK(cudaRuntimeGetVersion(&rt));
  for (char *q = prop.name; *q; ++q)
    if (*q == ' ') *q = '_';
  const char *loading = getenv("CUDA_MODULE_LOADING");
  printf("ENV name=%s device=%s cc=%d.%d driver_api=%d runtime=%d module_loading=%s\n", g_name.c_str(), prop.name,
         prop.major, prop.minor, drv, rt, loading ? loading : "default");
  fflush(stdout);
  if (pool) CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pool));
  Driver d;
  if (c.cubin) d.init(sarg(argc, argv, "cubin", "trigger_tail.cubin"));
  cudaStream_t s = 0;
  if (c.stream_kind == 1) CHECK(cudaStreamCreate(&s));
  if (c.stream_kind == 2) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  const size_t mem_bytes = (size_t)blocks * TT_SLOT * 4u;
  unsigned *stage_h;
  unsigned long long *ctr_h;
  CHECK(cudaHostAlloc(&stage_h, (size_t)blocks * TT_WORDS * 4u, cudaHostAllocMapped));
  CHECK(cudaHostAlloc(&ctr_h, C_N * 8u, cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer(&p.stage, stage_h, 0));
  CHECK(cudaHostGetDevicePointer(&p.ctr, ctr_h, 0));
  CHECK(cudaMalloc(&p.stress_buf, TT_STRESS_WORDS * 4u));
  CHECK(cudaMemset(p.stress_buf, 0, TT_STRESS_WORDS * 4u));
  unsigned *mem_once = nullptr;
  if (!fresh) CHECK(cudaMalloc(&mem_once, mem_bytes));
  std::vector<unsigned> zeros(mem_bytes / 4u, 0u);
  CHECK(cudaDeviceSynchronize());

  unsigned long long child_ran = 0, missed_y = 0, missed_x = 0, after_ran = 0, launch_err = 0, parent_end = 0;
  unsigned long long before_slow = 0, missed_y_slow = 0;
  double worst = 0, total = 0;
  for (unsigned l = 0; l < launches; ++l) {
    memset(stage_h, 0, (size_t)blocks * TT_WORDS * 4u);
    memset(ctr_h, 0, C_N * 8u);
    if (fresh) {  // as crates/gpu: stream-ordered allocation and a copy, per launch
      CHECK(cudaMallocAsync(&p.mem, mem_bytes, s));
      CHECK(cudaMemcpyAsync(p.mem, zeros.data(), mem_bytes, cudaMemcpyHostToDevice, s));
    } else {
      p.mem = mem_once;
      CHECK(cudaMemsetAsync(p.mem, 0, mem_bytes, s));
    }
    p.seed = host_mix(0x5eedull * seed + l);
    const double t0 = now_s();
    if (c.launch_device) launch_one(c, d, 1, 1, 32, s, p);
    else launch_one(c, d, 0, blocks, bs, s, p);
    if (after) launch_one(c, d, 2, 1, 32, s, p);
    double last_print = t0;
    for (;;) {
      const cudaError_t q = cudaStreamQuery(s);
      if (q == cudaSuccess) break;
      if (q != cudaErrorNotReady) {
        printf("ERROR name=%s launch=%u error=%s code=%d where: %s\n", g_name.c_str(), l, cudaGetErrorName(q),
               (int)q, where(stage_h, ctr_h, blocks).c_str());
        fflush(stdout);
        _exit(3);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const double t = now_s();
      if (t - t0 >= hang_ms / 1000.0) {
        printf("HANG name=%s launch=%u after_ms=%.0f %s\n", g_name.c_str(), l, 1000 * (t - t0),
               where(stage_h, ctr_h, blocks).c_str());
        fflush(stdout);
        _exit(2);  // a hung context: no teardown, the driver cleans up at exit
      }
      if (t - last_print >= 1.0) {
        printf("PROGRESS name=%s launch=%u t_ms=%.0f %s\n", g_name.c_str(), l, 1000 * (t - t0),
               where(stage_h, ctr_h, blocks).c_str());
        fflush(stdout);
        last_print = t;
      }
    }
    const double secs = now_s() - t0;
    total += secs;
    worst = secs > worst ? secs : worst;
    CHECK(cudaGetLastError());
    for (unsigned b = 0; b < blocks; ++b) {
      const unsigned *w = stage_h + (size_t)b * TT_WORDS;
      if (w[2] & TT_CHILD_RAN) {
        child_ran++;
        if (!(w[2] & 1u)) missed_y++;
        if (!(w[2] & 2u)) missed_x++;
      }
      if (w[3] != 1u && (p.launchb == TT_ALL || b == p.launchb)) launch_err++;
    }
    before_slow += ctr_h[C_BEFORE_SLOW];
    missed_y_slow += ctr_h[C_MISSED_Y_SLOW];
    after_ran += ctr_h[C_AFTER_RAN];
    parent_end += ctr_h[C_PARENT_END];
    if (c.launch_device && ctr_h[C_DEVICE_LAUNCH] != 1ull) launch_err += blocks;
    if (l == 0)
      printf("FIRST name=%s ms=%.3f %s\n", g_name.c_str(), 1000 * secs, where(stage_h, ctr_h, blocks).c_str());
    if (fresh) CHECK(cudaFreeAsync(p.mem, s));
  }
  CHECK(cudaStreamSynchronize(s));
  printf("RESULT name=%s verdict=completed launches=%u blocks=%u parent_blocks_ended=%llu child_ran=%llu "
         "missed_y=%llu missed_x=%llu after_ran=%llu launch_err=%llu total_ms=%.2f worst_launch_ms=%.3f "
         "before_slow=%llu missed_y_slow=%llu\n",
         g_name.c_str(), launches, blocks, parent_end, child_ran, missed_y, missed_x, after_ran, launch_err,
         1000 * total, 1000 * worst, before_slow, missed_y_slow);
  fflush(stdout);
  return 0;
}
