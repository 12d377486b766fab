// Decode-step attention over static KV slots, as a CUDA kernel with a
// plain-pointer interface (no Torch headers, so nvcc compiles it alone).
#ifndef TANDEM_CORE_CUDA_DECODE_ATTENTION_KERNEL_H_
#define TANDEM_CORE_CUDA_DECODE_ATTENTION_KERNEL_H_

#include <cstdint>

#include <cuda_runtime.h>

namespace tandem {

enum class AttentionDType { kFloat32, kFloat16, kBFloat16 };

// For each row b and head h, with slot = slots[b] and p = positions[b]
// (clamped to max_context - 1): first appends the row's new key and value
// (qkv[b, 1, h, :], qkv[b, 2, h, :]) at position p of the slot, then
// out[b, h, :] = softmax(q . K[slot, h, t, :] * scale, t <= p) . V[slot, h, t, :]
// with q = qkv[b, 0, h, :]. Reads only the first p + 1 positions of each
// slot: its cost follows the sequences' lengths, not max_context. One launch
// replaces the K/V scatter, the gather of the slots and the attention.
//
// Shapes: qkv [B, 3, H, D] contiguous (the QKV projection's output); out
// [B, H, D]; k_cache, v_cache [S, H, L, D] contiguous; slots, positions [B]
// int64. D <= 256. Needs L * 4 bytes of shared memory per block.
// Launches on `stream`; never synchronizes.
cudaError_t LaunchDecodeAttention(AttentionDType dtype, const void* qkv,
                                  void* k_cache, void* v_cache,
                                  const int64_t* slots, const int64_t* positions,
                                  void* out, int batch, int heads, int head_dim,
                                  int max_context, float scale, cudaStream_t stream);

}  // namespace tandem

#endif  // TANDEM_CORE_CUDA_DECODE_ATTENTION_KERNEL_H_
