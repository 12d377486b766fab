#include "core/kv_cache.h"

#include <algorithm>

namespace tandem {

KvCache::KvCache(int64_t num_layers, int64_t num_slots, int64_t num_heads,
                 int64_t max_context, int64_t head_dim, at::TensorOptions options,
                 Growth growth)
    : num_slots_(num_slots), max_context_(max_context), growth_(growth) {
  const int64_t length = growth == Growth::kStatic ? max_context : 0;
  for (int64_t i = 0; i < num_layers; ++i) {
    keys_.push_back(at::zeros({num_slots, num_heads, length, head_dim}, options));
    values_.push_back(at::zeros({num_slots, num_heads, length, head_dim}, options));
  }
}

void KvCache::EnsureLength(int64_t positions) {
  const int64_t target = std::min(positions, max_context_);
  if (growth_ == Growth::kStatic || keys_.empty() || keys_[0].size(2) >= target) return;
  for (std::vector<at::Tensor>* tensors : {&keys_, &values_}) {
    for (at::Tensor& t : *tensors) {
      t = at::cat({t, at::zeros({t.size(0), t.size(1), target - t.size(2), t.size(3)},
                                t.options())},
                  2);
    }
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
