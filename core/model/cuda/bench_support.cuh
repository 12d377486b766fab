// What the CUDA micro-benchmarks share (tandem-gemv-bench,
// tandem-attention-bench): exiting on a CUDA error, and device buffers of
// deterministic pseudo-random bf16 values.
#ifndef TANDEM_CORE_MODEL_CUDA_BENCH_SUPPORT_CUH_
#define TANDEM_CORE_MODEL_CUDA_BENCH_SUPPORT_CUH_

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

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

}  // namespace tandem::bench

#endif  // TANDEM_CORE_MODEL_CUDA_BENCH_SUPPORT_CUH_
