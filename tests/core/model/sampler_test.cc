#include "core/model/sampler.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace tandem {
namespace {

SamplingTensors Params(int n, float temperature, int64_t top_k = 0, float top_p = 1,
                       float min_p = 0, int64_t seed = 1, int64_t first_offset = 0) {
  SamplingTensors p;
  p.temperature = at::full({n}, temperature, at::kFloat);
  p.top_k = at::full({n}, top_k, at::kLong);
  p.top_p = at::full({n}, top_p, at::kFloat);
  p.min_p = at::full({n}, min_p, at::kFloat);
  p.seed = at::full({n}, seed, at::kLong);
  p.rng_offset = at::arange(first_offset, first_offset + n, at::kLong);
  return p;
}

TEST(SamplerTest, GreedyIsArgmaxWithItsLogProbability) {
  const at::Tensor logits = at::tensor({0.1f, 2.0f, -1.0f, 1.5f}).view({1, 4});
  for (bool all_greedy : {true, false}) {
    SampledTensors out = Sampler::Sample(logits, Params(1, 0), all_greedy);
    EXPECT_EQ(out.tokens[0].item<int64_t>(), 1);
    const double expected = 2.0 - std::log(std::exp(0.1) + std::exp(2.0) +
                                           std::exp(-1.0) + std::exp(1.5));
    EXPECT_NEAR(out.logprobs[0].item<float>(), expected, 1e-5);
  }
}

TEST(SamplerTest, FrequenciesFollowTheSoftmax) {
  // 20000 independent draws (distinct offsets) from one distribution.
  const int n = 20000;
  const std::vector<float> logits_row = {1.0f, 0.0f, -1.0f, 0.5f};
  const at::Tensor logits = at::tensor(logits_row).view({1, 4}).expand({n, 4}).contiguous();
  const at::Tensor tokens = Sampler::Sample(logits, Params(n, 1.0f), false).tokens;
  double z = 0;
  for (float l : logits_row) z += std::exp(l);
  for (int64_t v = 0; v < 4; ++v) {
    const double p = std::exp(logits_row[v]) / z;
    const double freq = (tokens == v).sum().item<int64_t>() / static_cast<double>(n);
    // 5 standard deviations of a binomial proportion.
    EXPECT_NEAR(freq, p, 5 * std::sqrt(p * (1 - p) / n)) << "token " << v;
  }
}

TEST(SamplerTest, TemperatureSharpensTheDistribution) {
  const int n = 4000;
  const at::Tensor logits = at::tensor({1.0f, 0.0f}).view({1, 2}).expand({n, 2}).contiguous();
  const auto count0 = [&](float t) {
    return (Sampler::Sample(logits, Params(n, t), false).tokens == 0).sum().item<int64_t>();
  };
  EXPECT_GT(count0(0.2f), count0(1.0f));
  EXPECT_GT(count0(1.0f), count0(5.0f));
}

TEST(SamplerTest, TopKTopPAndMinPRestrictTheCandidates) {
  const int n = 3000;
  const at::Tensor logits =
      at::tensor({3.0f, 2.9f, 2.8f, 0.0f, -1.0f}).view({1, 5}).expand({n, 5}).contiguous();
  const at::Tensor top_k = Sampler::Sample(logits, Params(n, 1.0f, 2), false).tokens;
  EXPECT_TRUE((top_k <= 1).all().item<bool>());
  EXPECT_TRUE((top_k == 1).any().item<bool>());
  // The top three hold ~0.95 of the mass: top_p = 0.5 keeps the first two.
  const at::Tensor top_p = Sampler::Sample(logits, Params(n, 1.0f, 0, 0.5f), false).tokens;
  EXPECT_TRUE((top_p <= 1).all().item<bool>());
  const at::Tensor tiny_p = Sampler::Sample(logits, Params(n, 1.0f, 0, 1e-6f), false).tokens;
  EXPECT_TRUE((tiny_p == 0).all().item<bool>());
  // min_p = 0.5: tokens 3 and 4 are far below half the top probability.
  const at::Tensor min_p = Sampler::Sample(logits, Params(n, 1.0f, 0, 1, 0.5f), false).tokens;
  EXPECT_TRUE((min_p <= 2).all().item<bool>());
  EXPECT_TRUE((min_p == 2).any().item<bool>());
}

TEST(SamplerTest, ARowsDrawDependsOnlyOnItsSeedAndOffset) {
  const at::Tensor logits = at::randn({6, 50}, at::kFloat);
  SamplingTensors batch = Params(6, 1.0f);
  batch.seed = at::tensor({11, 12, 13, 14, 15, 16}, at::kLong);
  batch.rng_offset = at::tensor({0, 5, 9, 2, 2, 7}, at::kLong);
  const at::Tensor together = Sampler::Sample(logits, batch, false).tokens;
  for (int64_t row = 0; row < 6; ++row) {
    SamplingTensors alone = Params(1, 1.0f);
    alone.seed = batch.seed.narrow(0, row, 1);
    alone.rng_offset = batch.rng_offset.narrow(0, row, 1);
    const at::Tensor single = Sampler::Sample(logits.narrow(0, row, 1), alone, false).tokens;
    EXPECT_EQ(single[0].item<int64_t>(), together[row].item<int64_t>()) << "row " << row;
  }
}

TEST(SamplerTest, DifferentSeedsGiveDifferentStreams) {
  const int n = 64;
  const at::Tensor logits = at::zeros({n, 1000}, at::kFloat);
  const at::Tensor a = Sampler::Sample(logits, Params(n, 1.0f, 0, 1, 0, 1), false).tokens;
  const at::Tensor b = Sampler::Sample(logits, Params(n, 1.0f, 0, 1, 0, 2), false).tokens;
  const at::Tensor a2 = Sampler::Sample(logits, Params(n, 1.0f, 0, 1, 0, 1), false).tokens;
  EXPECT_TRUE(at::equal(a, a2));
  EXPECT_LT((a == b).sum().item<int64_t>(), 8);
}

TEST(SamplerTest, UniformNoiseIsInTheOpenIntervalAndBalanced) {
  const at::Tensor u = Sampler::Uniform(at::tensor({int64_t{-3}, int64_t{1} << 40}, at::kLong),
                                        at::tensor({0, 1}, at::kLong), 50000);
  EXPECT_GT(u.min().item<float>(), 0.0f);
  EXPECT_LT(u.max().item<float>(), 1.0f);
  EXPECT_NEAR(u.mean().item<float>(), 0.5f, 0.01f);
}

}  // namespace
}  // namespace tandem
