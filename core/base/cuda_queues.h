// How the CUDA driver maps the process's streams onto the GPU's hardware queues.
#ifndef TANDEM_CORE_BASE_CUDA_QUEUES_H_
#define TANDEM_CORE_BASE_CUDA_QUEUES_H_

#include <string>

namespace tandem {

// Sets CUDA_DEVICE_MAX_CONNECTIONS=1 (the driver's default is 8) unless the
// environment already sets it, and returns the value in effect. The engine
// runs step i on stream i % 2, each step waiting on the device for the one
// before: on separate hardware queues that cross-stream wait left the GPU
// idle ~1.9 us between steps, on one queue ~1.3 us (one-row steps: GPU idle
// 1.16 -> 0.78 %, 64 rows 0.45 -> 0.30 %, at the same step time:
// docs/results/bench/2026-12-04-h200-idle-streams/). The streams stay two;
// mixed steps, whose graphs run a parallel branch, measured the same on one
// queue as on 8. The driver reads the variable when it creates the CUDA
// context, so call this at start-up, before any CUDA call. Reads and writes
// the process environment: call it before other threads start.
std::string UseOneCudaHardwareQueue();

}  // namespace tandem

#endif  // TANDEM_CORE_BASE_CUDA_QUEUES_H_
