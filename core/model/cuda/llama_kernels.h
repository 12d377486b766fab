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

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_LLAMA_KERNELS_H_
