// gridcheck benchmarks: the gate in front of every timed piece of work, and
// the clock warm-up.
//
// The host launches `gate`, records the start event, enqueues the timed work,
// records the stop event and only then sets flag[0] (host memory mapped into
// the device): the GPU meets the start event with all the timed work already
// queued, so the events time the GPU, not the host's submission. A gate that
// waits more than `max_cycles` gives up and sets flag[1], and the host
// rejects that sample.
#include <cuda_runtime.h>

extern "C" __global__ void gate(volatile unsigned int *flag, long long max_cycles) {
    long long t0 = clock64();
    while (flag[0] == 0) {
        if (clock64() - t0 > max_cycles) {
            flag[1] = 1;
            return;
        }
    }
}

// Spins every block for `cycles`: run on the whole GPU before the first
// figure so that the clocks have left their idle state.
extern "C" __global__ void warm(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}
