// KV slots: a sequence owns one slot for its lifetime. Static (the default):
// allocated once at full context. Growing (the --kv_cache=dynamic baseline):
// starts empty and is lengthened by concatenation whenever a step needs more
// positions, as a naive decode loop does.
#ifndef TANDEM_CORE_KV_CACHE_H_
#define TANDEM_CORE_KV_CACHE_H_

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

namespace tandem {

// Owns, per layer, K and V tensors of shape [slots, heads, length, head_dim]
// (length = max_context when static). Position p of slot s holds the
// key/value of the sequence's p-th token; positions past a sequence's length
// hold stale data that attention masks out. Threading: engine thread only.
class KvCache {
 public:
  enum class Growth { kStatic, kConcatenate };

  KvCache(int64_t num_layers, int64_t num_slots, int64_t num_heads,
          int64_t max_context, int64_t head_dim, at::TensorOptions options,
          Growth growth = Growth::kStatic);

  // Makes positions [0, positions) addressable (at most max_context). Static:
  // nothing to do. Growing: concatenates zeros onto every layer's K and V
  // along the position axis, copying the whole cache, and never shrinks.
  void EnsureLength(int64_t positions);
  bool grows() const { return growth_ == Growth::kConcatenate; }

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
  Growth growth_;
  std::vector<at::Tensor> keys_;
  std::vector<at::Tensor> values_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_KV_CACHE_H_
