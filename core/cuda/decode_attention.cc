#include "core/cuda/decode_attention.h"

#include <stdexcept>
#include <string>

#include <c10/cuda/CUDAStream.h>

#include "core/cuda/decode_attention_kernel.h"

namespace tandem {

at::Tensor DecodeAttention(const at::Tensor& qkv, at::Tensor& k_cache,
                           at::Tensor& v_cache, const at::Tensor& slots,
                           const at::Tensor& positions, double scale) {
  const at::Tensor rows = qkv.contiguous();  // a no-op for the projection's output
  const int64_t B = rows.size(0), H = rows.size(2), D = rows.size(3);
  at::Tensor out = at::empty({B, H, D}, rows.options());
  AttentionDType dtype;
  switch (rows.scalar_type()) {
    case at::kFloat: dtype = AttentionDType::kFloat32; break;
    case at::kHalf: dtype = AttentionDType::kFloat16; break;
    case at::kBFloat16: dtype = AttentionDType::kBFloat16; break;
    default: throw std::invalid_argument("DecodeAttention: unsupported dtype");
  }
  const cudaError_t status = LaunchDecodeAttention(
      dtype, rows.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(),
      slots.data_ptr<int64_t>(), positions.data_ptr<int64_t>(), out.data_ptr(),
      static_cast<int>(B), static_cast<int>(H), static_cast<int>(D),
      static_cast<int>(k_cache.size(2)), static_cast<float>(scale),
      c10::cuda::getCurrentCUDAStream().stream());
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("DecodeAttention: ") + cudaGetErrorString(status));
  }
  return out;
}

}  // namespace tandem
