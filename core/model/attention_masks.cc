#include "core/model/attention_masks.h"

namespace tandem {

at::Tensor FutureKeyMask(int64_t n, int64_t groups, at::Device device) {
  const at::Tensor mask =
      at::ones({n, n}, at::TensorOptions().dtype(at::kBool).device(device)).triu(1);
  return groups == 1 ? mask : mask.repeat({groups, 1});
}

at::Tensor PastPositionMask(const at::Tensor& positions, int64_t attend_len) {
  return at::arange(attend_len, positions.options()).unsqueeze(0) > positions.unsqueeze(1);
}

}  // namespace tandem
