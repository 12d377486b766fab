// Token sampling on the model's device, without a host synchronization.
#ifndef TANDEM_CORE_MODEL_SAMPLER_H_
#define TANDEM_CORE_MODEL_SAMPLER_H_

#include <cstdint>

#include <ATen/ATen.h>

namespace tandem {

// Per-row sampling parameters as device tensors, all of shape [N].
struct SamplingTensors {
  at::Tensor temperature;  // float32; 0 = greedy
  at::Tensor top_k;        // int64; 0 = no limit
  at::Tensor top_p;        // float32 in (0, 1]
  at::Tensor min_p;        // float32 in [0, 1]
  at::Tensor seed;         // int64 (a uint64 seed's bits)
  at::Tensor rng_offset;   // int64: index of the token being sampled
};

struct SampledTensors {
  at::Tensor tokens;    // int64 [N]
  at::Tensor logprobs;  // float32 [N], under the distribution sampled from
};

// Greedy, temperature, top-k, top-p and min-p sampling. Randomness comes from
// a counter-based hash of (seed, rng_offset, token id), not from a stateful
// generator: a row's draw depends only on its own parameters, so batch mates
// never change a seeded request's tokens, and the same code gives the same
// stream on every device. Sampling uses the exponential-race form
// argmax(p / E), E ~ Exp(1), so it needs no host sync.
// Stateless and thread-compatible.
class Sampler {
 public:
  // `logits`: float32 [N, V]. When `all_greedy` the sort-based filtering is
  // skipped (the host knows this from the plan).
  static SampledTensors Sample(const at::Tensor& logits,
                               const SamplingTensors& params, bool all_greedy);

  // Uniform (0, 1) float32 [N, V] noise for rows (seed, offset): exposed for
  // tests of its distribution and determinism.
  static at::Tensor Uniform(const at::Tensor& seed, const at::Tensor& rng_offset,
                            int64_t vocab_size);
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_SAMPLER_H_
