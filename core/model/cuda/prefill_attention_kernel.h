// The packed-prefill attention kernel's launcher, Torch-free so that nvcc
// compiles the .cu alone; prefill_attention.h wraps it for ATen tensors.
#ifndef TANDEM_CORE_MODEL_CUDA_PREFILL_ATTENTION_KERNEL_H_
#define TANDEM_CORE_MODEL_CUDA_PREFILL_ATTENTION_KERNEL_H_

#include <cstdint>

#include <cuda_runtime.h>

#include "core/model/cuda/decode_kernels.h"

namespace tandem {

// Queries per tile: must equal kPrefillTileTokens (prefill_pack.h).
inline constexpr int kPrefillAttentionTile = 16;

// For each tile (first row r0, first position p0, n tokens, slot s) of
// `tiles` [num_tiles, 4] int64 and each query head h: for i < n,
// out[r0 + i, h, :] = softmax(q . K[s, g, t, :] * scale, t <= p0 + i) . V[s, g, t, :]
// with q = q[(r0 + i) * q_row_stride + h * head_dim ...] and g = h / (heads /
// kv_heads). The tokens' own K/V must already be in the cache. k_cache,
// v_cache [S, kv_heads, L, head_dim]; out [rows, heads, head_dim]
// contiguous. Plain launch on `stream`; no allocation, no synchronization.
// fp16 and bf16 run on tensor cores (LaunchPrefillAttentionMma), fp32 on
// CUDA cores.
cudaError_t LaunchPrefillAttention(KernelDType dtype, const void* q, int64_t q_row_stride,
                                   const void* k_cache, const void* v_cache,
                                   const int64_t* tiles, int num_tiles, void* out, int heads,
                                   int kv_heads, int head_dim, int max_context, float scale,
                                   cudaStream_t stream);

// The same on tensor cores (fp16 and bf16 only; fp32 accumulation).
cudaError_t LaunchPrefillAttentionMma(KernelDType dtype, const void* q, int64_t q_row_stride,
                                      const void* k_cache, const void* v_cache,
                                      const int64_t* tiles, int num_tiles, void* out, int heads,
                                      int kv_heads, int head_dim, int max_context, float scale,
                                      cudaStream_t stream);

// Head sizes the kernel is compiled for.
inline bool PrefillAttentionHeadDim(int head_dim) { return head_dim == 64 || head_dim == 128; }

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_PREFILL_ATTENTION_KERNEL_H_
