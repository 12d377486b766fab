// The projection of one row (a batch of one) on CUDA, for both decoder
// families: LaunchGemv, a plain-pointer launcher (no Torch headers: nvcc
// compiles the .cu alone); core/model/cuda/llama_ops.h (Llama, Qwen) and
// decode_ops.h (GPT-2) wrap it for ATen tensors. A plain launch on
// `stream`: no allocation, no synchronization, safe in CUDA graph capture.
#ifndef TANDEM_CORE_MODEL_CUDA_GEMV_KERNEL_H_
#define TANDEM_CORE_MODEL_CUDA_GEMV_KERNEL_H_

#include <cuda_runtime.h>

#include "core/model/cuda/decode_kernels.h"

namespace tandem {

// What a one-row projection (LaunchGemv) reads as its input x' [1, K]:
enum class GemvInput {
  kPlain,    // x [1, K] itself
  kRmsNorm,  // RMSNorm(x) with norm_weight [K] and eps, as LaunchRmsNorm computes it
};

// Whether LaunchGemv takes this K (up to 8192 float32 or 16384 half
// elements: a block holds a weight row's share of every thread at once).
bool GemvSupports(KernelDType dtype, int K);

// The projection of one row (above one row the fused linear kernel is
// faster: tandem-gemv-bench, two rows 61 vs 55 us per layer at the
// Llama-3.2-1B shape), weight [N, K], bias [N] or null, with the epilogues:
//   kBias:         out [1, N] = T(x' weight^T + bias)
//   kBiasResidual: out [1, N] = T(out + T(x' weight^T + bias))
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

#endif  // TANDEM_CORE_MODEL_CUDA_GEMV_KERNEL_H_
