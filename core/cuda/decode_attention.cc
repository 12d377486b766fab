#include "core/cuda/decode_attention.h"

#include <stdexcept>
#include <string>

#include <c10/cuda/CUDAStream.h>

#include "core/cuda/decode_attention_kernel.h"

namespace tandem {

at::Tensor DecodeAttention(const at::Tensor& q, const at::Tensor& k_cache,
                           const at::Tensor& v_cache, const at::Tensor& slots,
                           const at::Tensor& positions, double scale) {
  const at::Tensor query = q.contiguous();
  at::Tensor out = at::empty_like(query);
  AttentionDType dtype;
  switch (q.scalar_type()) {
    case at::kFloat: dtype = AttentionDType::kFloat32; break;
    case at::kHalf: dtype = AttentionDType::kFloat16; break;
    case at::kBFloat16: dtype = AttentionDType::kBFloat16; break;
    default: throw std::invalid_argument("DecodeAttention: unsupported dtype");
  }
  const cudaError_t status = LaunchDecodeAttention(
      dtype, query.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(),
      slots.data_ptr<int64_t>(), positions.data_ptr<int64_t>(), out.data_ptr(),
      static_cast<int>(q.size(0)), static_cast<int>(q.size(1)), static_cast<int>(q.size(2)),
      static_cast<int>(k_cache.size(2)), static_cast<float>(scale),
      c10::cuda::getCurrentCUDAStream().stream());
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("DecodeAttention: ") + cudaGetErrorString(status));
  }
  return out;
}

}  // namespace tandem
