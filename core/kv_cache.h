// Static KV slots: allocated once, a sequence owns one slot for its lifetime.
#ifndef TANDEM_CORE_KV_CACHE_H_
#define TANDEM_CORE_KV_CACHE_H_

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

namespace tandem {

// Owns, per layer, K and V tensors of shape [slots, heads, max_context,
// head_dim]. Position p of slot s holds the key/value of the sequence's p-th
// token; positions past a sequence's length hold stale data that attention
// masks out. Threading: engine thread only.
class KvCache {
 public:
  KvCache(int64_t num_layers, int64_t num_slots, int64_t num_heads,
          int64_t max_context, int64_t head_dim, at::TensorOptions options);

  at::Tensor& keys(int64_t layer) { return keys_[layer]; }
  at::Tensor& values(int64_t layer) { return values_[layer]; }
  const at::Tensor& keys_const(int64_t layer) const { return keys_[layer]; }
  int64_t num_slots() const { return num_slots_; }
  int64_t max_context() const { return max_context_; }
  int64_t bytes() const;

  // Bytes a cache of this shape takes, without allocating it.
  static int64_t BytesFor(int64_t num_layers, int64_t num_slots,
                          int64_t num_heads, int64_t max_context,
                          int64_t head_dim, at::ScalarType dtype);

 private:
  int64_t num_slots_;
  int64_t max_context_;
  std::vector<at::Tensor> keys_;
  std::vector<at::Tensor> values_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_KV_CACHE_H_
