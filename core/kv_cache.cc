#include "core/kv_cache.h"

namespace tandem {

KvCache::KvCache(int64_t num_layers, int64_t num_slots, int64_t num_heads,
                 int64_t max_context, int64_t head_dim, at::TensorOptions options)
    : num_slots_(num_slots), max_context_(max_context) {
  for (int64_t i = 0; i < num_layers; ++i) {
    keys_.push_back(at::zeros({num_slots, num_heads, max_context, head_dim}, options));
    values_.push_back(at::zeros({num_slots, num_heads, max_context, head_dim}, options));
  }
}

int64_t KvCache::bytes() const {
  int64_t total = 0;
  for (const at::Tensor& t : keys_) total += t.numel() * t.element_size();
  for (const at::Tensor& t : values_) total += t.numel() * t.element_size();
  return total;
}

int64_t KvCache::BytesFor(int64_t num_layers, int64_t num_slots, int64_t num_heads,
                          int64_t max_context, int64_t head_dim,
                          at::ScalarType dtype) {
  return 2 * num_layers * num_slots * num_heads * max_context * head_dim *
         static_cast<int64_t>(at::elementSize(dtype));
}

}  // namespace tandem
