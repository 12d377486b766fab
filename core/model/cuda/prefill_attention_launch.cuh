// The launch shared by the packed-prefill attention kernels (SIMT and
// tensor-core): one block per (query tile, head), the kernel instantiated
// for the head size. Included by .cu files only.
#ifndef TANDEM_CORE_MODEL_CUDA_PREFILL_ATTENTION_LAUNCH_CUH_
#define TANDEM_CORE_MODEL_CUDA_PREFILL_ATTENTION_LAUNCH_CUH_

#include <cstdint>

#include <cuda_runtime.h>

namespace tandem {
namespace kernel {

// (q, q_row_stride, k_cache, v_cache, tiles, out, heads, kv_heads,
// max_context, scale), as LaunchPrefillAttention documents them.
template <typename T>
using PrefillAttentionFn = void (*)(const T*, int64_t, const T*, const T*, const int64_t*, T*,
                                    int, int, int, float);

// Launches `for_64` or `for_128` (by head_dim; others are invalid) on a
// (num_tiles, heads) grid of `threads`-thread blocks on `stream`;
// cudaErrorInvalidValue for no tiles or heads not a multiple of kv_heads.
template <typename T>
cudaError_t LaunchPrefillAttentionGrid(PrefillAttentionFn<T> for_64, PrefillAttentionFn<T> for_128,
                                       int threads, const void* q, int64_t q_row_stride,
                                       const void* k, const void* v, const int64_t* tiles,
                                       int num_tiles, void* out, int heads, int kv_heads,
                                       int head_dim, int max_context, float scale,
                                       cudaStream_t stream) {
  if (num_tiles <= 0 || kv_heads <= 0 || heads % kv_heads != 0) return cudaErrorInvalidValue;
  const PrefillAttentionFn<T> kernel = head_dim == 64 ? for_64 : head_dim == 128 ? for_128
                                                                                 : nullptr;
  if (kernel == nullptr) return cudaErrorInvalidValue;
  kernel<<<dim3(num_tiles, heads), threads, 0, stream>>>(
      static_cast<const T*>(q), q_row_stride, static_cast<const T*>(k), static_cast<const T*>(v),
      tiles, static_cast<T*>(out), heads, kv_heads, max_context, scale);
  return cudaGetLastError();
}

}  // namespace kernel
}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_PREFILL_ATTENTION_LAUNCH_CUH_
