#include "core/model/sampler.h"

#include <limits>

namespace tandem {
namespace {

constexpr int64_t kLow32 = int64_t{0xffffffff};

// A 32-bit integer mixer (xorshift-multiply, after Wellons' lowbias32) on int64
// tensors holding values in [0, 2^32). Both multipliers are below 2^31, so the
// products stay below 2^63 and never overflow.
at::Tensor Mix32(at::Tensor x) {
  x = x.bitwise_xor(x.__rshift__(16));
  x = (x * int64_t{0x7feb352d}).bitwise_and(kLow32);
  x = x.bitwise_xor(x.__rshift__(15));
  x = (x * int64_t{0x2c1b3c6d}).bitwise_and(kLow32);
  return x.bitwise_xor(x.__rshift__(16));
}

}  // namespace

at::Tensor Sampler::Uniform(const at::Tensor& seed, const at::Tensor& rng_offset,
                            int64_t vocab_size) {
  const at::Tensor seed_low = seed.bitwise_and(kLow32);
  const at::Tensor seed_high = seed.__rshift__(32).bitwise_and(kLow32);
  at::Tensor key = Mix32(seed_low.bitwise_xor(int64_t{0x9e3779b9}));
  key = Mix32(key.bitwise_xor(seed_high));
  key = Mix32(key.bitwise_xor(rng_offset.bitwise_and(kLow32)));  // [N]
  const at::Tensor ids = Mix32(at::arange(vocab_size, seed.options()) * 2 + 1);
  const at::Tensor bits =
      Mix32(key.unsqueeze(1).bitwise_xor(ids.unsqueeze(0)));  // [N, V]
  // 24 random bits map exactly onto float32: (k + 0.5) / 2^24 is in (0, 1).
  return (bits.__rshift__(8).to(at::kFloat) + 0.5f) * (1.0f / 16777216.0f);
}

SampledTensors Sampler::Sample(const at::Tensor& logits,
                               const SamplingTensors& params, bool all_greedy) {
  const at::Tensor log_probs = at::log_softmax(logits, -1);
  const at::Tensor greedy = logits.argmax(-1);  // [N]
  SampledTensors out;
  out.tokens = greedy;
  out.logprobs = log_probs.gather(1, greedy.unsqueeze(1)).squeeze(1);
  if (all_greedy) return out;

  const int64_t V = logits.size(1);
  const float kNegInf = -std::numeric_limits<float>::infinity();
  const at::Tensor temperature = params.temperature.clamp_min(1e-5f).unsqueeze(1);
  const auto [sorted, order] = (logits / temperature).sort(-1, /*descending=*/true);
  const at::Tensor rank = at::arange(V, params.top_k.options()).unsqueeze(0);
  const at::Tensor k = at::where(params.top_k > 0, params.top_k,
                                 at::full_like(params.top_k, V));
  at::Tensor removed = rank >= k.unsqueeze(1);
  const at::Tensor probs = at::softmax(sorted.masked_fill(removed, kNegInf), -1);
  // Top-p: drop a token when the tokens ranked above it already reach top_p.
  removed = removed.logical_or((probs.cumsum(-1) - probs) >= params.top_p.unsqueeze(1));
  removed = removed.logical_or(probs < params.min_p.unsqueeze(1) * probs.narrow(1, 0, 1));
  const at::Tensor filtered = at::log_softmax(sorted.masked_fill(removed, kNegInf), -1);
  // Exponential race in sorted order, keyed by the original token id.
  const at::Tensor uniform =
      Uniform(params.seed, params.rng_offset, V).gather(1, order);
  const at::Tensor race = filtered - at::log(-at::log(uniform));
  const at::Tensor choice = race.argmax(-1, /*keepdim=*/true);  // [N, 1]
  const at::Tensor sampled = order.gather(1, choice).squeeze(1);
  const at::Tensor sampled_logprob = filtered.gather(1, choice).squeeze(1);
  const at::Tensor is_greedy = params.temperature <= 0;
  out.tokens = at::where(is_greedy, greedy, sampled);
  out.logprobs = at::where(is_greedy, out.logprobs, sampled_logprob);
  return out;
}

}  // namespace tandem
