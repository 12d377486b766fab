// Rotary position embeddings as transformers computes them (float32
// frequencies, optional llama3 scaling, rotate_half on the two halves of
// each head), so outputs match it bit for bit in float32.
#ifndef TANDEM_CORE_MODEL_LLAMA_ROTARY_EMBEDDING_H_
#define TANDEM_CORE_MODEL_LLAMA_ROTARY_EMBEDDING_H_

#include <ATen/ATen.h>

#include "core/model/llama/llama_config.h"

namespace tandem {

// Immutable after construction; owns inv_freq on the model's device.
class RotaryEmbedding {
 public:
  RotaryEmbedding(const LlamaConfig& config, at::Device device);

  // cos and sin [N, D] in `dtype` for positions [N] int64.
  std::pair<at::Tensor, at::Tensor> CosSin(const at::Tensor& positions,
                                           at::ScalarType dtype) const;
  // x [N, H, D] rotated: x cos + rotate_half(x) sin, cos/sin [N, D].
  static at::Tensor Apply(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

  const at::Tensor& inv_freq() const { return inv_freq_; }  // float32 [D / 2]

 private:
  at::Tensor inv_freq_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_LLAMA_ROTARY_EMBEDDING_H_
