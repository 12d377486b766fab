// What the CUDA micro-benchmarks share (tandem-gemv-bench,
// tandem-attention-bench, tandem-linear-bench): exiting on a CUDA error,
// device buffers of deterministic pseudo-random bf16 values, timing a
// replayed CUDA graph, and comparing outputs.
#ifndef TANDEM_CORE_MODEL_CUDA_BENCH_SUPPORT_CUH_
#define TANDEM_CORE_MODEL_CUDA_BENCH_SUPPORT_CUH_

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace tandem::bench {

// Prints `what` and the error, and exits, unless `e` is cudaSuccess.
inline void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// p[i] = scale * (a hash of i and seed, spread over [-1, 1] in steps of 0.001).
// static: each benchmark binary includes this header once, internal linkage
// keeps a second inclusion elsewhere from clashing.
static __global__ void FillBf16(__nv_bfloat16* p, size_t n, uint32_t seed, float scale) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = __float2bfloat16(scale * (static_cast<float>(h % 2001) / 1000.0f - 1.0f));
  }
}

// n bf16 values filled by FillBf16 (the caller frees them, or the process exit does).
inline __nv_bfloat16* AllocBf16(size_t n, uint32_t seed, float scale = 1.0f) {
  __nv_bfloat16* p;
  Check(cudaMalloc(&p, n * sizeof(__nv_bfloat16)), "cudaMalloc");
  FillBf16<<<1024, 256>>>(p, n, seed, scale);
  Check(cudaGetLastError(), "FillBf16");
  return p;
}

// Microseconds per replay of the graph `body` records on `stream`: 5
// warm-up replays, then `replays` timed.
inline double GraphMicroseconds(cudaStream_t stream, const std::function<void()>& body,
                                int replays) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  Check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "capture");
  body();
  Check(cudaStreamEndCapture(stream, &graph), "end capture");
  Check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  for (int i = 0; i < 5; ++i) Check(cudaGraphLaunch(exec, stream), "warm-up");
  cudaEvent_t start, stop;
  Check(cudaEventCreate(&start), "event");
  Check(cudaEventCreate(&stop), "event");
  Check(cudaEventRecord(start, stream), "record");
  for (int i = 0; i < replays; ++i) Check(cudaGraphLaunch(exec, stream), "launch");
  Check(cudaEventRecord(stop, stream), "record");
  Check(cudaEventSynchronize(stop), "sync");
  float ms = 0;
  Check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return 1000.0 * ms / replays;
}

// n bf16 values of device memory p, as float on the host.
inline std::vector<float> ToHost(const __nv_bfloat16* p, size_t n) {
  std::vector<__nv_bfloat16> raw(n);
  Check(cudaMemcpy(raw.data(), p, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost), "copy");
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = __bfloat162float(raw[i]);
  return out;
}

// max |a - b| / max |a| (a the reference).
inline double MaxRelDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0, scale = 1e-6;
  for (size_t i = 0; i < a.size(); ++i) scale = std::fmax(scale, std::fabs(a[i]));
  for (size_t i = 0; i < a.size(); ++i) worst = std::fmax(worst, std::fabs(a[i] - b[i]));
  return worst / scale;
}

}  // namespace tandem::bench

#endif  // TANDEM_CORE_MODEL_CUDA_BENCH_SUPPORT_CUH_
