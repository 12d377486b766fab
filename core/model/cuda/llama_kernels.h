// The Llama-style decode step's own CUDA kernels (RMSNorm, Q/K norm + RoPE,
// SwiGLU), behind plain-pointer launchers (no Torch headers: nvcc compiles
// the .cu alone); core/model/cuda/llama_ops.h wraps them for ATen tensors.
// Plain launches on `stream`: no allocation, no synchronization, safe in
// CUDA graph capture. Each rounds to T where transformers' modules round, so
// results match them up to summation order.
#ifndef TANDEM_CORE_MODEL_CUDA_LLAMA_KERNELS_H_
#define TANDEM_CORE_MODEL_CUDA_LLAMA_KERNELS_H_

#include <cstdint>

#include <cuda_runtime.h>

#include "core/model/cuda/decode_kernels.h"

namespace tandem {

// out[m, :] = T(weight * T(x[m, :] * rsqrt(mean(x[m, :]^2) + eps))), the
// mean in float32 (LlamaRMSNorm). x, out [rows, C]; weight [C].
cudaError_t LaunchRmsNorm(KernelDType dtype, const void* x, const void* weight, float eps,
                          void* out, int rows, int channels, cudaStream_t stream);

// In place on qkv [rows, heads + 2 kv_heads, D] (row stride (heads + 2
// kv_heads) D): for the query heads and the key heads of each row, first the
// per-head RMSNorm with q_norm / k_norm [D] when they are not null (Qwen3),
// then the rotary embedding at position p = positions[r] (r = slots[m]
// when `slots` is not null, else m; clamped to max_position):
// x[i] cos_i - x[i + D/2] sin_i and x[i + D/2] cos_i + x[i] sin_i with
// angle p * inv_freq[i] (float32 [D / 2]). Values are left alone.
cudaError_t LaunchQkNormRope(KernelDType dtype, void* qkv, const void* q_norm,
                             const void* k_norm, float eps, const float* inv_freq,
                             const int64_t* slots, const int64_t* positions,
                             int64_t max_position, int rows, int heads, int kv_heads,
                             int head_dim, cudaStream_t stream);

// out[m, :] = T(T(silu(gate_up[m, :I])) * gate_up[m, I:]) (the SwiGLU MLP's
// activation). gate_up [rows, 2I], out [rows, I].
cudaError_t LaunchSwiGlu(KernelDType dtype, const void* gate_up, void* out, int rows,
                         int inner, cudaStream_t stream);

// What a one-row projection (LaunchGemv) reads as its input x' [1, K]:
enum class GemvInput {
  kPlain,    // x [1, K] itself
  kRmsNorm,  // RMSNorm(x) with norm_weight [K] and eps, as LaunchRmsNorm computes it
};

// Whether LaunchGemv takes this K (up to 8192 float32 or 16384 half
// elements: a block holds a weight row's share of every thread at once).
bool GemvSupports(KernelDType dtype, int K);

// The projection of one row (a batch of one; above one row the fused linear
// kernel is faster: tandem-gemv-bench, two rows 61 vs 55 us per layer at the
// Llama-3.2-1B shape), weight [N, K], with the epilogues:
//   kBias:         out [1, N] = T(x' weight^T + bias) (bias [N] or null)
//   kBiasResidual: out [1, N] = T(out + T(x' weight^T)) (bias null)
//   kSwiGlu:       weight = [gate; up] [2I, K], out [1, I] =
//                  T(T(silu(T(x' gate^T))) * T(x' up^T)) (bias null), what
//                  LaunchSwiGlu computes from the gate_up projection
// The combinations compiled: (kRmsNorm, kBias), (kRmsNorm, kSwiGlu),
// (kPlain, kBiasResidual); others return cudaErrorInvalidValue. Launched
// with programmatic dependent launch: its first weights load while the
// previous kernel finishes.
cudaError_t LaunchGemv(KernelDType dtype, GemvInput input, LinearEpilogue epilogue,
                       const void* x, const void* norm_weight, float eps, const void* weight,
                       const void* bias, void* out, int K, int N, cudaStream_t stream);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_LLAMA_KERNELS_H_
