#include "core/model/kv_cache.h"

namespace tandem {

int64_t KvCacheShape::Bytes(at::ScalarType dtype) const {
  return 2 * num_layers * num_slots * num_kv_heads * max_context * head_dim *
         static_cast<int64_t>(at::elementSize(dtype));
}

KvCache::KvCache(const KvCacheShape& shape, at::TensorOptions options,
                 int64_t allocated_positions)
    : shape_(shape) {
  const int64_t length = allocated_positions < 0 ? shape.max_context : allocated_positions;
  for (int64_t i = 0; i < shape.num_layers; ++i) {
    keys_.push_back(at::zeros({shape.num_slots, shape.num_kv_heads, length, shape.head_dim},
                              options));
    values_.push_back(at::zeros({shape.num_slots, shape.num_kv_heads, length, shape.head_dim},
                                options));
  }
}

int64_t KvCache::bytes() const {
  int64_t total = 0;
  for (const at::Tensor& t : keys_) total += t.numel() * t.element_size();
  for (const at::Tensor& t : values_) total += t.numel() * t.element_size();
  return total;
}

}  // namespace tandem
