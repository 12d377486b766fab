// ATen wrappers of the Llama-style decode kernels (CUDA builds only). All run
// on the current stream without host synchronization (safe inside CUDA graph
// capture) and throw std::runtime_error when a kernel cannot be launched.
#ifndef TANDEM_CORE_MODEL_CUDA_LLAMA_OPS_H_
#define TANDEM_CORE_MODEL_CUDA_LLAMA_OPS_H_

#include <ATen/ATen.h>

#include "core/model/cuda/llama_kernels.h"

namespace tandem {

// [N, C] = LlamaRMSNorm(x [N, C]) with `weight` [C] (see LaunchRmsNorm).
at::Tensor FusedRmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps);

// In place on qkv [B, heads + 2 kv_heads, D]: the Q/K norms (when defined)
// and RoPE at positions[slots[b]] (`slots` defined) or positions[b].
void QkNormRope(at::Tensor& qkv, int64_t heads, const at::Tensor& q_norm,
                const at::Tensor& k_norm, double eps, const at::Tensor& inv_freq,
                const at::Tensor& slots, const at::Tensor& positions, int64_t max_position);

// [N, I] = silu(gate_up[:, :I]) * gate_up[:, I:] for gate_up [N, 2I].
at::Tensor SwiGlu(const at::Tensor& gate_up);

// Projections of one row (LaunchGemv), x [1, K], weight [N, K]:
// [1, N] = RMSNorm(x) weight^T (+ bias when defined), with norm_weight [K]
// and eps.
at::Tensor NormProjection(const at::Tensor& x, const at::Tensor& norm_weight, double eps,
                          const at::Tensor& weight, const at::Tensor& bias);
// [1, I] = SwiGLU of RMSNorm(x) gate_up_weight^T, gate_up_weight [2I, K].
at::Tensor NormSwiGluProjection(const at::Tensor& x, const at::Tensor& norm_weight, double eps,
                                const at::Tensor& gate_up_weight);
// residual [1, N] += x weight^T, in place.
void ProjectionAddResidual(const at::Tensor& x, const at::Tensor& weight, at::Tensor& residual);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_LLAMA_OPS_H_
