#include "core/model/llama/rotary_embedding.h"

#include <cmath>

namespace tandem {
namespace {

// transformers' _compute_llama3_parameters, in float32 as it runs there.
at::Tensor Llama3Scaled(const at::Tensor& inv_freq, const Llama3RopeScaling& s) {
  const double low_freq_wavelen = s.original_max_position_embeddings / s.low_freq_factor;
  const double high_freq_wavelen = s.original_max_position_embeddings / s.high_freq_factor;
  const at::Tensor wavelen = 2 * M_PI / inv_freq;
  const at::Tensor scaled =
      at::where(wavelen > low_freq_wavelen, inv_freq / s.factor, inv_freq);
  const at::Tensor smooth = (s.original_max_position_embeddings / wavelen - s.low_freq_factor) /
                            (s.high_freq_factor - s.low_freq_factor);
  const at::Tensor smoothed = (1 - smooth) * scaled / s.factor + smooth * scaled;
  const at::Tensor medium = (wavelen >= high_freq_wavelen).logical_and(wavelen <= low_freq_wavelen);
  return at::where(medium, smoothed, scaled);
}

}  // namespace

RotaryEmbedding::RotaryEmbedding(const LlamaConfig& config, at::Device device) {
  const int64_t D = config.head_dim;
  // 1 / theta^(arange(0, D, 2) / D), in float32.
  const at::Tensor exponents =
      at::arange(0, D, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) / D;
  at::Tensor inv_freq = 1.0 / at::pow(config.rope_theta, exponents);
  if (config.rope_scaling.factor > 0) inv_freq = Llama3Scaled(inv_freq, config.rope_scaling);
  inv_freq_ = inv_freq.to(device);
}

std::pair<at::Tensor, at::Tensor> RotaryEmbedding::CosSin(const at::Tensor& positions,
                                                          at::ScalarType dtype) const {
  const at::Tensor freqs = positions.to(at::kFloat).unsqueeze(1) * inv_freq_.unsqueeze(0);
  const at::Tensor emb = at::cat({freqs, freqs}, -1);  // [N, D]
  return {emb.cos().to(dtype), emb.sin().to(dtype)};
}

at::Tensor RotaryEmbedding::Apply(const at::Tensor& x, const at::Tensor& cos,
                                  const at::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  const at::Tensor rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos.unsqueeze(1) + rotated * sin.unsqueeze(1);
}

}  // namespace tandem
