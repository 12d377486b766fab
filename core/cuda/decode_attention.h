// ATen wrapper of the decode attention kernel (CUDA builds only).
#ifndef TANDEM_CORE_CUDA_DECODE_ATTENTION_H_
#define TANDEM_CORE_CUDA_DECODE_ATTENTION_H_

#include <ATen/ATen.h>

namespace tandem {

// qkv [B, 3, H, D] (the QKV projection of B decode rows); k_cache, v_cache
// [S, H, L, D] on the same CUDA device and dtype; slots, positions [B] int64.
// Appends each row's key and value at positions[b] of slot slots[b], then
// returns [B, H, D]: attention of each row over positions [0, positions[b]]
// of its slot. Runs on the current stream, without host synchronization (safe
// inside CUDA graph capture).
at::Tensor DecodeAttention(const at::Tensor& qkv, at::Tensor& k_cache,
                           at::Tensor& v_cache, const at::Tensor& slots,
                           const at::Tensor& positions, double scale);

}  // namespace tandem

#endif  // TANDEM_CORE_CUDA_DECODE_ATTENTION_H_
