// The --kv_cache=dynamic baseline: same tokens as the static cache, and a
// cache that grows with the positions each step needs.
#include "core/model/growing_cache_runner.h"

#include <memory>
#include <vector>

#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "core/model/eager_runner.h"
#include "core/model/gpt2/gpt2_model.h"
#include "core/model/gpt2/gpt2_weights.h"

namespace tandem {
namespace {

std::unique_ptr<Gpt2Model> TinyModel() {
  Gpt2Config config = *Gpt2Config::Preset("tiny");
  config.vocab_size = 300;
  config.n_positions = 32;
  return std::make_unique<Gpt2Model>(config, Gpt2Weights::Random(config, 7));
}

TEST(GrowingCacheRunnerTest, DecodesLikeTheStaticCacheAndGrowsStepByStep) {
  c10::InferenceMode inference_mode;
  const auto options = at::TensorOptions().dtype(at::kFloat);
  std::unique_ptr<Gpt2Model> model = TinyModel();
  KvCacheShape shape = model->kv_shape();
  shape.num_slots = 3;
  shape.max_context = 32;
  EagerRunner fixed(ModelDescription(), TinyModel(), std::make_unique<KvCache>(shape, options),
                    at::kCPU);
  GrowingCacheRunner growing(ModelDescription(), std::move(model), shape, options);
  EXPECT_EQ(growing.allocated_positions(), 0);

  const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6, 7}, b = {9, 8};
  StepPlan prefill;
  prefill.prefills.resize(2);
  prefill.prefills[0].slot = 0;
  prefill.prefills[0].tokens = a;
  prefill.prefills[1].slot = 2;
  prefill.prefills[1].tokens = b;
  auto expected = fixed.Step(prefill);
  auto got = growing.Step(prefill);
  ASSERT_TRUE(expected.ok() && got.ok());
  EXPECT_EQ(growing.allocated_positions(), 7);  // as long as the longest prompt
  std::vector<int32_t> last = {expected->prefill_tokens[0].token,
                               expected->prefill_tokens[1].token};
  for (int step = 0; step < 5; ++step) {
    StepPlan decode;
    decode.decodes.resize(2);
    decode.decodes[0].slot = 0;
    decode.decodes[0].position = 7 + step;
    decode.decodes[1].slot = 2;
    decode.decodes[1].position = 2 + step;
    for (int r = 0; r < 2; ++r) decode.decodes[r].token = last[r];
    expected = fixed.Step(decode);
    got = growing.Step(decode);
    ASSERT_TRUE(expected.ok() && got.ok());
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(got->decode_tokens[r].token, expected->decode_tokens[r].token) << step;
      EXPECT_NEAR(got->decode_tokens[r].logprob, expected->decode_tokens[r].logprob, 1e-5);
      last[r] = expected->decode_tokens[r].token;
    }
    // One more position per step, for every layer's keys and values.
    EXPECT_EQ(growing.cache().keys(shape.num_layers - 1).size(2), 8 + step);
    EXPECT_EQ(growing.cache().values(0).size(2), 8 + step);
  }
  EXPECT_EQ(fixed.cache().keys(0).size(2), 32);  // the static one never changes
}

}  // namespace
}  // namespace tandem
