#include "core/model/cuda/prefill_attention.h"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/model/cuda/cuda_support.h"
#include "core/model/cuda/prefill_attention_kernel.h"

namespace tandem {
namespace {

static_assert(kPrefillAttentionTile == kPrefillTileTokens,
              "the pack's tiles are the kernel's query tiles");

bool KernelDTypeFor(at::ScalarType type, KernelDType* out) {
  switch (type) {
    case at::kFloat: *out = KernelDType::kFloat32; return true;
    case at::kHalf: *out = KernelDType::kFloat16; return true;
    case at::kBFloat16: *out = KernelDType::kBFloat16; return true;
    default: return false;
  }
}

}  // namespace

bool PrefillAttentionSupports(at::ScalarType dtype, int64_t head_dim) {
  KernelDType unused;
  return KernelDTypeFor(dtype, &unused) && PrefillAttentionHeadDim(static_cast<int>(head_dim));
}

at::Tensor PrefillAttention(const at::Tensor& q, const at::Tensor& k_cache,
                            const at::Tensor& v_cache, const PrefillPack& pack, double scale,
                            const at::Tensor& out_buffer) {
  const int64_t heads = q.size(1), head_dim = q.size(2);
  KernelDType dtype;
  if (!KernelDTypeFor(q.scalar_type(), &dtype) || q.stride(2) != 1 || q.stride(1) != head_dim ||
      !k_cache.is_contiguous() || !v_cache.is_contiguous()) {
    throw std::invalid_argument("PrefillAttention: unsupported dtype or layout");
  }
  // The tensor-core kernel reads q two elements and K/V 16 bytes at a time.
  const auto address = [](const at::Tensor& t) {
    return reinterpret_cast<uintptr_t>(t.data_ptr());
  };
  if (q.scalar_type() != at::kFloat &&
      (q.stride(0) % 2 != 0 || address(q) % 4 != 0 || address(k_cache) % 16 != 0 ||
       address(v_cache) % 16 != 0)) {
    throw std::invalid_argument(
        "PrefillAttention: q needs an even row stride and 4-byte alignment, the caches "
        "16-byte alignment");
  }
  // Zeroed: rows no tile covers (a graphed pack's padding) stay finite.
  at::Tensor out = out_buffer.defined()
                       ? out_buffer
                       : at::zeros({pack.num_tokens, heads, head_dim}, q.options());
  if (out.sizes() != at::IntArrayRef({pack.num_tokens, heads, head_dim}) ||
      !out.is_contiguous() || out.scalar_type() != q.scalar_type()) {
    throw std::invalid_argument("PrefillAttention: out must be a contiguous [T, H, D] tensor");
  }
  const cudaError_t status = LaunchPrefillAttention(
      dtype, q.data_ptr(), q.stride(0), k_cache.data_ptr(), v_cache.data_ptr(),
      pack.tiles.data_ptr<int64_t>(), static_cast<int>(pack.num_tiles), out.data_ptr(),
      static_cast<int>(heads), static_cast<int>(k_cache.size(1)), static_cast<int>(head_dim),
      static_cast<int>(k_cache.size(2)), static_cast<float>(scale),
      CurrentStream());
  CheckCuda(status, "prefill attention");
  return out;
}

}  // namespace tandem
