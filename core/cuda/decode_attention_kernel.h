// Decode-step attention over static KV slots, as a CUDA kernel with a
// plain-pointer interface (no Torch headers, so nvcc compiles it alone).
#ifndef TANDEM_CORE_CUDA_DECODE_ATTENTION_KERNEL_H_
#define TANDEM_CORE_CUDA_DECODE_ATTENTION_KERNEL_H_

#include <cstdint>

#include <cuda_runtime.h>

namespace tandem {

enum class AttentionDType { kFloat32, kFloat16, kBFloat16 };

// For each row b and head h: out[b, h, :] = softmax(q[b, h, :] . K[slot, h, t, :]
// * scale for t < length) . V[slot, h, t, :], where slot = slots[b] and
// length = positions[b] + 1 (positions clamped to max_context - 1). Reads
// only the first `length` positions of each slot: its cost follows the
// sequences' lengths, not max_context.
//
// Shapes: q, out [B, H, D] contiguous; k_cache, v_cache [S, H, L, D]
// contiguous; slots, positions [B] int64. D <= 256. Requires
// L * 4 bytes of shared memory per block (L <= 12288 with the default limit).
// Launches on `stream`; never synchronizes.
cudaError_t LaunchDecodeAttention(AttentionDType dtype, const void* q,
                                  const void* k_cache, const void* v_cache,
                                  const int64_t* slots, const int64_t* positions,
                                  void* out, int batch, int heads, int head_dim,
                                  int max_context, float scale, cudaStream_t stream);

}  // namespace tandem

#endif  // TANDEM_CORE_CUDA_DECODE_ATTENTION_KERNEL_H_
