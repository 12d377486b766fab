// KV slots: a sequence owns one slot for its lifetime; allocated once.
#ifndef TANDEM_CORE_MODEL_KV_CACHE_H_
#define TANDEM_CORE_MODEL_KV_CACHE_H_

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

namespace tandem {

// The cache's dimensions (what a model asks for, times the slots served).
struct KvCacheShape {
  int64_t num_layers = 0;
  int64_t num_slots = 0;
  int64_t num_kv_heads = 0;
  int64_t max_context = 0;  // positions per slot
  int64_t head_dim = 0;

  // Bytes of K and V at full context, without allocating them.
  int64_t Bytes(at::ScalarType dtype) const;
};

// Owns, per layer, K and V tensors of shape [slots, kv_heads, length,
// head_dim], length = max_context unless a shorter allocation was asked
// for. Position p of slot s holds the key/value of the sequence's p-th
// token; positions past a sequence's length hold stale data that attention
// masks out. Threading: engine thread only.
class KvCache {
 public:
  // Allocates (zeroed) `allocated_positions` positions per slot, -1 meaning
  // max_context. Only the naive growing-cache baseline asks for fewer
  // (GrowingCacheRunner, which lengthens the tensors itself).
  KvCache(const KvCacheShape& shape, at::TensorOptions options,
          int64_t allocated_positions = -1);

  // Mutable so that kernels write in place and the baseline can replace them.
  at::Tensor& keys(int64_t layer) { return keys_[layer]; }
  at::Tensor& values(int64_t layer) { return values_[layer]; }
  const at::Tensor& keys(int64_t layer) const { return keys_[layer]; }
  const KvCacheShape& shape() const { return shape_; }
  int64_t num_layers() const { return shape_.num_layers; }
  int64_t num_slots() const { return shape_.num_slots; }
  int64_t max_context() const { return shape_.max_context; }
  // Bytes currently allocated.
  int64_t bytes() const;

 private:
  KvCacheShape shape_;
  std::vector<at::Tensor> keys_;
  std::vector<at::Tensor> values_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_KV_CACHE_H_
