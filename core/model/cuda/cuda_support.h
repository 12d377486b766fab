// What the CUDA path's ATen-facing code shares (CUDA builds only): the
// kernel element type of a tensor's dtype, the current stream, a CUDA status
// turned into an exception, the vector loads' layout check, and pinned host
// buffers. Inline, header-only.
#ifndef TANDEM_CORE_MODEL_CUDA_CUDA_SUPPORT_H_
#define TANDEM_CORE_MODEL_CUDA_CUDA_SUPPORT_H_

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>

#include "core/model/cuda/decode_kernels.h"

namespace tandem {

// float32, float16 or bfloat16; std::invalid_argument otherwise.
inline KernelDType KernelDTypeOf(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return KernelDType::kFloat32;
    case at::kHalf: return KernelDType::kFloat16;
    case at::kBFloat16: return KernelDType::kBFloat16;
    default: throw std::invalid_argument("Tandem's CUDA kernels: unsupported dtype");
  }
}

// The stream ATen runs on now (what CUDA graph capture records).
inline cudaStream_t CurrentStream() { return c10::cuda::getCurrentCUDAStream().stream(); }

// Throws std::runtime_error naming `what` when a CUDA call or launch failed.
inline void CheckCuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

// Whether every tensor is contiguous and 16-byte aligned (what the kernels'
// vector loads need).
inline bool VectorLoadable(std::initializer_list<const at::Tensor*> tensors) {
  for (const at::Tensor* t : tensors) {
    if (!t->is_contiguous() || reinterpret_cast<uintptr_t>(t->data_ptr()) % 16 != 0) return false;
  }
  return true;
}

// Throws std::invalid_argument naming `what` unless VectorLoadable.
inline void CheckVectorLoads(std::initializer_list<const at::Tensor*> tensors,
                             const char* what) {
  if (!VectorLoadable(tensors)) {
    throw std::invalid_argument(std::string(what) +
                                ": tensors must be contiguous and 16-byte aligned");
  }
}

// A zeroed pinned (page-locked) host buffer of n elements: what asynchronous
// host-to-device copies read from.
inline at::Tensor PinnedBuffer(int64_t n, at::ScalarType dtype) {
  return at::zeros({n}, at::TensorOptions().dtype(dtype).pinned_memory(true));
}

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_CUDA_SUPPORT_H_
