// Causal attention for a packed prefill (CUDA builds only): every token of
// the pack attends to its own KV slot's positions up to its own, so whole
// prompts and later chunks of a prompt share one launch.
#ifndef TANDEM_CORE_MODEL_CUDA_PREFILL_ATTENTION_H_
#define TANDEM_CORE_MODEL_CUDA_PREFILL_ATTENTION_H_

#include <cstdint>

#include <ATen/ATen.h>

#include "core/model/prefill_pack.h"

namespace tandem {

// Whether the kernel handles this dtype and head size.
bool PrefillAttentionSupports(at::ScalarType dtype, int64_t head_dim);

// q [T, heads, head_dim] (a strided view of the projection
// output is fine: rows any stride — even for fp16/bf16, with q 4-byte and
// the caches 16-byte aligned, else std::invalid_argument —, heads and dims
// packed); returns [T, heads,
// head_dim] (see LaunchPrefillAttention), on the current stream: zeros
// where no tile covers a row, or written into `out` ([T, heads, head_dim],
// contiguous; the caller zeroes rows no tile covers) when defined.
at::Tensor PrefillAttention(const at::Tensor& q, const at::Tensor& k_cache,
                            const at::Tensor& v_cache, const PrefillPack& pack, double scale,
                            const at::Tensor& out = at::Tensor());

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_PREFILL_ATTENTION_H_
