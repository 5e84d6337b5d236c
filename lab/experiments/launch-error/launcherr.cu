// launcherr: the campaign's launch-error class (a device-side cudaEventRecord
// or cudaStreamWaitEvent on an event the kernel created returning
// cudaErrorInvalidValue in about 1 of 1 024 instances, mostly after other
// programs ran in the same worker) in a runtime-API program with no gridcheck
// code, with a switch for each explanation (README.md says what each
// outcome means). The programs (programs.cuh) run in --order, --rounds times,
// in one process, as a campaign worker runs a batch; each program
// --launches launches of --instances instances (blocks), each launch waited
// for at most --wait-s seconds. Every record, wait and launch is counted;
// each failure is kept with the creation ordinals (through the process) of
// the event and stream it used. One JSON line a run.
//
// Build: nvcc -arch=sm_90 -rdc=true launcherr.cu -lcudadevrt -o launcherr
// Usage: launcherr [options] | launcherr list
//   --label TEXT        named in the JSON line
//   --order LIST        programs, comma-separated, or `all`, `ctx` (C1..C5), `leads` (F...) [all]
//   --rounds R          the order run R times [20]
//   --instances N       blocks of an instance's host kernel a launch [512]
//   --launches L        launches of each program in a row [2]
//   --delay C           the harness's random delay before each operation, up to C cycles [0]
//   --seed S            the delays' seed [1]
//   --extra-warps W     idle warps added to every block (the harness's stress warps) [0]
//   --destroy WHAT      all | none | events | streams: the objects destroyed at a block's end [all]
//   --no-streams        no named streams: their calls go to the block's NULL stream
//   --between WHAT      none | device | sleep | reset: after each program, nothing, a
//                       cudaDeviceSynchronize, that and --sleep-ms, or a cudaDeviceReset (a
//                       fresh context, as a fresh worker) [none]
//   --sleep-ms MS       [10]
//   --pending N         cudaLimitDevRuntimePendingLaunchCount (0: left as it is) [0]
//   --stack B           cudaLimitStackSize (0: left) [0]
//   --heap B            cudaLimitMallocHeapSize (0: left) [0]
//   --drop LIST         kinds of call left out everywhere (record wait launch tail ff trigger
//                       gridsync err mem pdl), or site numbers (`list`)
//   --alloc-each        the harness's host side: each launch's buffer allocated and freed
//                       stream-ordered, and a kernel after the test's that reads it
//   --wait-s S          seconds a launch may take [2]
// Exit: 0 done, 3 a launch did not complete (the line says where), 1 a CUDA error, 2 usage.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>
#include <unistd.h>

#include "programs.cuh"

struct Options {
  std::string label = "", order = "all", destroy = "all", between = "none", drop = "";
  int rounds = 20, instances = 512, launches = 2, sleep_ms = 10;
  unsigned delay = 0, extra_warps = 0;
  unsigned long long seed = 1;
  size_t pending = 0, stack = 0, heap = 0;
  bool no_streams = false, alloc_each = false;
  double wait_s = 2.0;
};

struct Run {
  Options o;
  std::vector<int> order;
  P p = {};
  Counters *c = nullptr;
  unsigned *mem = nullptr;
  cudaStream_t s = 0;
  std::vector<unsigned long long> runs;  // launches of each program that completed
  unsigned long long launches = 0, resets = 0;
  timespec t0;
  size_t limits[3] = {0, 0, 0};
};

static double since(const timespec &t0) {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9;
}

static void die(const char *what, cudaError_t e) {
  printf("{\"error\": \"%s: %s\"}\n", what, cudaGetErrorName(e));
  exit(1);
}

static int parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto val = [&]() -> const char * {
      if (i + 1 >= argc) { printf("{\"error\": \"%s needs a value\"}\n", a.c_str()); exit(2); }
      return argv[++i];
    };
    if (a == "--label") o.label = val();
    else if (a == "--order") o.order = val();
    else if (a == "--rounds") o.rounds = atoi(val());
    else if (a == "--instances") o.instances = atoi(val());
    else if (a == "--launches") o.launches = atoi(val());
    else if (a == "--delay") o.delay = (unsigned)strtoul(val(), 0, 10);
    else if (a == "--seed") o.seed = strtoull(val(), 0, 10);
    else if (a == "--extra-warps") o.extra_warps = (unsigned)atoi(val());
    else if (a == "--destroy") o.destroy = val();
    else if (a == "--no-streams") o.no_streams = true;
    else if (a == "--between") o.between = val();
    else if (a == "--sleep-ms") o.sleep_ms = atoi(val());
    else if (a == "--pending") o.pending = strtoull(val(), 0, 10);
    else if (a == "--stack") o.stack = strtoull(val(), 0, 10);
    else if (a == "--heap") o.heap = strtoull(val(), 0, 10);
    else if (a == "--drop") o.drop = val();
    else if (a == "--alloc-each") o.alloc_each = true;
    else if (a == "--wait-s") o.wait_s = atof(val());
    else { printf("{\"error\": \"unknown argument %s\"}\n", a.c_str()); return 2; }
  }
  if (o.rounds < 1 || o.instances < 1 || o.launches < 1) {
    printf("{\"error\": \"--rounds, --instances and --launches are positive\"}\n");
    return 2;
  }
  return 0;
}

static std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> v;
  size_t a = 0;
  while (a <= s.size() && !s.empty()) {
    size_t b = s.find(',', a);
    if (b == std::string::npos) b = s.size();
    if (b > a) v.push_back(s.substr(a, b - a));
    a = b + 1;
  }
  return v;
}

// The order, the kinds and sites left out, the objects destroyed.
static int decide(Run &r) {
  for (const std::string &w : split(r.o.order)) {
    for (int i = 0; i < kProgramCount; i++) {
      const bool ctx = kPrograms[i].name[0] == 'C';
      if (w == kPrograms[i].name || w == "all" || (w == "ctx" && ctx) || (w == "leads" && !ctx))
        r.order.push_back(i);
    }
  }
  if (r.order.empty()) { printf("{\"error\": \"--order names no program\"}\n"); return 2; }
  r.p.drop_site = -1;
  for (const std::string &w : split(r.o.drop)) {
    int k = 0;
    while (k < K_KINDS && w != kKindNames[k]) k++;
    if (k < K_KINDS) r.p.drop_kinds |= 1u << k;
    else if (w == "pdl") g_no_pdl = true;
    else if (w[0] >= '0' && w[0] <= '9' && atoi(w.c_str()) < kSites) r.p.drop_site = atoi(w.c_str());
    else { printf("{\"error\": \"--drop: no kind or site %s\"}\n", w.c_str()); return 2; }
  }
  const std::string &d = r.o.destroy;
  r.p.destroy = d == "all" ? DESTROY_EVENTS | DESTROY_STREAMS
                : d == "events" ? DESTROY_EVENTS
                : d == "streams" ? DESTROY_STREAMS
                : 0;
  if (d != "all" && d != "none" && d != "events" && d != "streams") {
    printf("{\"error\": \"--destroy all|none|events|streams\"}\n");
    return 2;
  }
  const std::string &b = r.o.between;
  if (b != "none" && b != "device" && b != "sleep" && b != "reset") {
    printf("{\"error\": \"--between none|device|sleep|reset\"}\n");
    return 2;
  }
  r.p.max_delay = r.o.delay;
  r.p.no_streams = r.o.no_streams;
  r.p.extra_warps = r.o.extra_warps;
  return 0;
}

// A context as the run needs it: its limits, the counters, memory, the stream.
static void setup(Run &r, const Counters *keep) {
  cudaError_t e = cudaSuccess;
  if (r.o.pending) e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, r.o.pending);
  if (e == cudaSuccess && r.o.stack) e = cudaDeviceSetLimit(cudaLimitStackSize, r.o.stack);
  if (e == cudaSuccess && r.o.heap) e = cudaDeviceSetLimit(cudaLimitMallocHeapSize, r.o.heap);
  if (e != cudaSuccess) die("cudaDeviceSetLimit", e);
  cudaDeviceGetLimit(&r.limits[0], cudaLimitDevRuntimePendingLaunchCount);
  cudaDeviceGetLimit(&r.limits[1], cudaLimitStackSize);
  cudaDeviceGetLimit(&r.limits[2], cudaLimitMallocHeapSize);
  e = cudaMallocManaged(&r.c, sizeof(Counters));
  if (e == cudaSuccess) e = cudaMalloc(&r.mem, sizeof(unsigned) * 4 * (size_t)r.o.instances);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&r.s, cudaStreamNonBlocking);
  if (e != cudaSuccess) die("setup", e);
  if (keep) memcpy(r.c, keep, sizeof(Counters));
  else memset(r.c, 0, sizeof(Counters));
  r.p.c = r.c;
  r.p.mem = r.mem;
}

// --between reset: the device reset and set up again, the counters kept.
static void reset(Run &r) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) die("cudaDeviceSynchronize", e);
  Counters *keep = (Counters *)malloc(sizeof(Counters));
  memcpy(keep, r.c, sizeof(Counters));
  e = cudaDeviceReset();
  if (e != cudaSuccess) die("cudaDeviceReset", e);
  setup(r, keep);
  free(keep);
  r.resets++;
}

// The test's buffer of --alloc-each, read by a kernel after the test's.
__global__ void after_kernel(const unsigned *buf, unsigned n, unsigned *sink) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && buf[i] == 0xdeadbeefu) *sink = i;
}

static void report(Run &r, const char *result, int hung_prog, int hung_launch);

// Waits for the stream at most --wait-s seconds: false if it did not complete.
static bool wait(Run &r) {
  timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  cudaError_t q;
  while ((q = cudaStreamQuery(r.s)) == cudaErrorNotReady)
    if (since(t0) > r.o.wait_s) return false;
  if (q != cudaSuccess) die("a launch", q);
  return true;
}

// One launch of program `pi` (the order's `k`-th): its host kernels, waited for.
static void one_launch(Run &r, int k, int pi, int round, int li) {
  const Program &g = kPrograms[pi];
  r.p.prog = (unsigned)k;
  r.p.round = (unsigned)round;
  r.p.launch = (unsigned)li;
  r.p.seed = r.o.seed * 0x9e3779b97f4a7c15ull + r.launches;
  memset(r.c->ended + g.first_kernel, 0, sizeof(unsigned) * g.kernels);
  cudaMemsetAsync(r.mem, 0, sizeof(unsigned) * 4 * (size_t)r.o.instances, r.s);
  unsigned *buf = nullptr;
  const unsigned words = 16u * (unsigned)r.o.instances;
  if (r.o.alloc_each) {
    cudaMallocAsync(&buf, sizeof(unsigned) * (words + 1), r.s);
    cudaMemsetAsync(buf, 0xff, sizeof(unsigned) * (words + 1), r.s);
  }
  g.launch(r.p, (unsigned)r.o.instances, r.s);
  if (r.o.alloc_each) {
    after_kernel<<<(words + 255) / 256, 256, 0, r.s>>>(buf, words, buf + words);
    cudaFreeAsync(buf, r.s);
  }
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) die("a host launch", e);
  if (!wait(r)) {
    report(r, "hung", k, li);
    fflush(stdout);
    _exit(3);
  }
  r.launches++;
  r.runs[k]++;
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "list")) {
    printf("{\"programs\": [");
    for (int i = 0; i < kProgramCount; i++) printf("%s\"%s\"", i ? ", " : "", kPrograms[i].name);
    printf("], \"sites\": [");
    for (int i = 0; i < kSites; i++)
      printf("%s{\"site\": %d, \"label\": \"%s\", \"kind\": \"%s\"}", i ? ", " : "", i,
             kSiteLabels[i], kKindNames[kSiteKinds[i]]);
    printf("]}\n");
    return 0;
  }
  Run r;
  if (parse(argc, argv, r.o) || decide(r)) return 2;
  clock_gettime(CLOCK_MONOTONIC, &r.t0);
  setup(r, nullptr);
  r.runs.assign(r.order.size(), 0);
  for (int round = 0; round < r.o.rounds; round++) {
    for (size_t k = 0; k < r.order.size(); k++) {
      if (r.o.between == "reset" && (round > 0 || k > 0)) reset(r);
      for (int li = 0; li < r.o.launches; li++) one_launch(r, (int)k, r.order[k], round, li);
      if (r.o.between == "device" || r.o.between == "sleep") {
        const cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) die("cudaDeviceSynchronize", e);
        if (r.o.between == "sleep") usleep(1000u * (unsigned)r.o.sleep_ms);
      }
    }
  }
  report(r, "completed", -1, -1);
  return 0;
}

// The run's JSON line: its options, then per program its instances and
// failed calls, the totals, the failures by launch and by round, and the
// first failures in detail.
static void report(Run &r, const char *result, int hung_prog, int hung_launch) {
  const Options &o = r.o;
  const Counters *c = r.c;
  int dev = 0;
  cudaDeviceProp prop;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  printf("{\"label\": \"%s\", \"device\": \"%s\", \"driver\": %d, \"runtime\": %d, ", o.label.c_str(),
         prop.name, driver, runtime);
  printf("\"options\": {\"order\": \"%s\", \"rounds\": %d, \"instances\": %d, \"launches\": %d, "
         "\"delay\": %u, \"seed\": %llu, \"extra_warps\": %u, \"destroy\": \"%s\", \"no_streams\": %s, "
         "\"between\": \"%s\", \"sleep_ms\": %d, \"drop\": \"%s\", \"alloc_each\": %s}, ",
         o.order.c_str(), o.rounds, o.instances, o.launches, o.delay, o.seed, o.extra_warps,
         o.destroy.c_str(), o.no_streams ? "true" : "false", o.between.c_str(), o.sleep_ms,
         o.drop.c_str(), o.alloc_each ? "true" : "false");
  printf("\"limits\": {\"pending\": %zu, \"stack\": %zu, \"heap\": %zu}, ", r.limits[0], r.limits[1],
         r.limits[2]);
  printf("\"result\": \"%s\", \"elapsed_s\": %.3f, \"launches\": %llu, \"resets\": %llu, ", result,
         since(r.t0), r.launches, r.resets);
  if (hung_prog >= 0) {
    const Program &g = kPrograms[r.order[hung_prog]];
    printf("\"hung\": {\"program\": \"%s\", \"launch\": %d, \"ended\": {", g.name, hung_launch);
    for (int k = 0; k < g.kernels; k++)
      printf("%s\"%s\": %u", k ? ", " : "", kKernelNames[g.first_kernel + k],
             *(volatile unsigned *)&c->ended[g.first_kernel + k]);
    printf("}}, ");
  }
  // Per program (each once, though the order may name it again).
  unsigned long long calls = 0, fails = 0, instances = 0;
  printf("\"programs\": [");
  bool seen[kProgramCount] = {};
  int printed = 0;
  for (size_t k = 0; k < r.order.size(); k++) {
    const int pi = r.order[k];
    if (seen[pi]) continue;
    seen[pi] = true;
    const Program &g = kPrograms[pi];
    unsigned long long n = 0;
    for (size_t j = 0; j < r.order.size(); j++)
      if (r.order[j] == pi) n += r.runs[j];
    n *= (unsigned long long)o.instances;
    unsigned long long pc = 0, pf = 0;
    for (int s = g.first_site; s < g.first_site + g.sites; s++) {
      if (kSiteKinds[s] != K_RECORD && kSiteKinds[s] != K_WAIT) continue;
      pc += c->calls[s];
      pf += c->fails[s];
    }
    printf("%s{\"name\": \"%s\", \"instances\": %llu, \"event_calls\": %llu, \"event_fails\": %llu, \"sites\": {",
           printed++ ? ", " : "", g.name, n, pc, pf);
    int any = 0;
    for (int s = g.first_site; s < g.first_site + g.sites; s++)
      if (c->fails[s])
        printf("%s\"%d %s\": [%llu, %llu, \"%s\"]", any++ ? ", " : "", s, kSiteLabels[s], c->fails[s],
               c->calls[s], cudaGetErrorName((cudaError_t)c->first[s]));
    printf("}}");
    calls += pc;
    fails += pf;
    instances += n;
  }
  unsigned long long launch_fails = 0;
  for (int s = 0; s < kSites; s++)
    if (kSiteKinds[s] != K_RECORD && kSiteKinds[s] != K_WAIT) launch_fails += c->fails[s];
  printf("], \"totals\": {\"instances\": %llu, \"event_calls\": %llu, \"event_fails\": %llu, "
         "\"other_fails\": %llu, \"events_created\": %llu, \"streams_created\": %llu, "
         "\"stream_create_fails\": %llu, \"event_create_fails\": %llu, \"create_first\": [\"%s\", \"%s\"]}, ",
         instances, calls, fails, launch_fails, c->events, c->streams, c->create_fails[0],
         c->create_fails[1], cudaGetErrorName((cudaError_t)c->create_first[0]),
         cudaGetErrorName((cudaError_t)c->create_first[1]));
  // Failures by the launch's place in its program's run and by round.
  const unsigned kept = c->nfail < (unsigned)kFailCap ? c->nfail : (unsigned)kFailCap;
  std::vector<unsigned> by_launch(o.launches, 0), by_round(o.rounds, 0);
  for (unsigned i = 0; i < kept; i++) {
    if (c->fail[i].launch < (unsigned)o.launches) by_launch[c->fail[i].launch]++;
    if (c->fail[i].round < (unsigned)o.rounds) by_round[c->fail[i].round]++;
  }
  printf("\"failures_kept\": %u, \"by_launch\": [", kept);
  for (int i = 0; i < o.launches; i++) printf("%s%u", i ? ", " : "", by_launch[i]);
  printf("], \"by_round\": [");
  for (int i = 0; i < o.rounds; i++) printf("%s%u", i ? ", " : "", by_round[i]);
  printf("], \"failures\": [");
  for (unsigned i = 0; i < kept && i < 64; i++) {
    const Failure &f = c->fail[i];
    printf("%s{\"site\": %u, \"error\": \"%s\", \"program\": \"%s\", \"round\": %u, \"launch\": %u, "
           "\"block\": %u, \"event_ord\": %d, \"stream_ord\": %d, \"event\": \"0x%llx\", \"stream\": \"0x%llx\"}",
           i ? ", " : "", f.site, cudaGetErrorName((cudaError_t)f.err),
           f.prog < r.order.size() ? kPrograms[r.order[f.prog]].name : "?", f.round, f.launch, f.block,
           (int)f.ev_ord, (int)f.st_ord, f.event, f.stream);
  }
  printf("]}\n");
  fflush(stdout);
}
