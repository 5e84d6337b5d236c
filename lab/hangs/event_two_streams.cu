// The fuzz-7-466 hang reduced: in each block, one thread creates a stream
// (cudaStreamNonBlocking) and events (cudaEventDisableTiming), records an
// event into the NULL stream, then the same event into the named stream
// (mode 0; the other modes below vary the records), then destroys them. No
// child launch, no delays, no stress, nothing waits for another block.
// Counters in mapped host memory (threads past the first record, past the
// second, done) are printed every second while the host waits; if none
// moves for `stall` seconds the program prints STALL and exits 2.
//
// usage: event_two_streams instances=1024 launches=2000 mode=0 stall=8 limit=60
//   mode 0: the same event into the NULL stream, then the named stream
//   mode 1: two different events, one into each stream
//   mode 2: the same event twice into the NULL stream
//   mode 3: the same event twice into the named stream
//   mode 4: the stream and events created and destroyed, no record
//   mode 5: one event recorded once into the NULL stream, no stream created
//   mode 6: one event recorded once into the named stream
#include "common.cuh"

__global__ void records(unsigned mode, unsigned long long *prog, unsigned *errs) {
  if (threadIdx.x != 0u) return;
  cudaStream_t s = 0;
  cudaEvent_t e = 0, f = 0;
  unsigned bad = 0;
  if (mode != 5u) bad += cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess;
  bad += cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess;
  if (mode <= 4u) bad += cudaEventCreateWithFlags(&f, cudaEventDisableTiming) != cudaSuccess;
  if (mode <= 3u || mode == 5u) bad += cudaEventRecord(e, mode == 3u ? s : (cudaStream_t)0) != cudaSuccess;
  if (mode == 6u) bad += cudaEventRecord(e, s) != cudaSuccess;
  atomicAdd(prog + 0, 1ull);
  if (mode <= 3u) bad += cudaEventRecord(mode == 1u ? f : e, mode == 2u ? (cudaStream_t)0 : s) != cudaSuccess;
  atomicAdd(prog + 1, 1ull);
  if (s) cudaStreamDestroy(s);
  cudaEventDestroy(e);
  if (f) cudaEventDestroy(f);
  if (bad) atomicAdd(errs, bad);
  atomicAdd(prog + 2, 1ull);
}

int main(int argc, char **argv) {
  const unsigned n = arg(argc, argv, "instances", 1024), launches = arg(argc, argv, "launches", 2000);
  const unsigned mode = arg(argc, argv, "mode", 0), stall = arg(argc, argv, "stall", 8);
  self_limit(arg(argc, argv, "limit", 60));
  unsigned *errs;
  CHECK(cudaMalloc(&errs, 4));
  CHECK(cudaMemset(errs, 0, 4));
  Progress pr;
  pr.init(3);
  const char *names[] = {"first_record_done", "second_record_done", "blocks_done"};  // past each step
  printf("START t=%.1f instances=%u launches=%u mode=%u\n", now_s(), n, launches, mode);
  fflush(stdout);
  double total = 0, worst = 0;
  for (unsigned l = 0; l < launches; ++l) {
    records<<<n, 32>>>(mode, pr.dev, errs);
    CHECK(cudaGetLastError());
    char what[32];
    snprintf(what, sizeof what, "launch=%u", l);
    const double s = wait_with_progress(pr, names, stall, what);
    total += s;
    worst = s > worst ? s : worst;
    if ((l + 1) % 250u == 0u) {
      printf("LAUNCHES t=%.1f done=%u worst_launch_seconds=%.4f\n", now_s(), l + 1, worst);
      fflush(stdout);
    }
  }
  unsigned e = 0;
  CHECK(cudaMemcpy(&e, errs, 4, cudaMemcpyDeviceToHost));
  printf("RESULT instances=%u launches=%u mode=%u seconds=%.3f worst_launch_seconds=%.4f call_errors=%u blocks_done=%llu\n",
         n, launches, mode, total, worst, e, pr.get(2));
  return 0;
}
