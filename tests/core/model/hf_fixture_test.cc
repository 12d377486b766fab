// Tandem's GPT-2 against logits that Hugging Face transformers computed for
// the same checkpoint (tests/parity/fixture: a tiny random GPT-2 written by
// tandem-cli make-model; expected.json written by tests/parity/hf_parity.py
// --fixture on a machine with transformers, never by Tandem).
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/model/gpt2/gpt2_model.h"
#include "core/checkpoint/safetensors_file.h"

namespace tandem {
namespace {

const std::string kFixture = std::string(TANDEM_TEST_SOURCE_DIR) + "/tests/parity/fixture";

double RelativeError(const at::Tensor& ours, const std::vector<float>& reference) {
  const at::Tensor ref = at::tensor(reference);
  return ((ours.flatten() - ref).norm() / ref.norm()).item<double>();
}

TEST(HfFixtureTest, LogitsAndGreedyTokensMatchTransformers) {
  c10::InferenceMode inference_mode;
  std::ifstream in(kFixture + "/expected.json");
  ASSERT_TRUE(in.good()) << "missing " << kFixture << "/expected.json";
  const nlohmann::json expected = nlohmann::json::parse(in);
  auto config = Gpt2Config::FromFile(kFixture + "/config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  auto file = SafetensorsFile::Open(kFixture + "/model.safetensors");
  ASSERT_TRUE(file.ok()) << file.status();
  auto weights = Gpt2Weights::Load(**CheckpointReader::Open(kFixture), *config, at::kFloat, at::kCPU);
  ASSERT_TRUE(weights.ok()) << weights.status();
  const Gpt2Model model(*config, *std::move(weights));
  const auto& prompts = expected["prompts"];
  const int64_t n = static_cast<int64_t>(prompts.size());
  KvCacheShape shape = model.kv_shape();
  shape.num_slots = n;
  shape.max_context = config->n_positions;
  KvCache cache(shape, at::TensorOptions().dtype(at::kFloat));
  std::vector<int64_t> slots, next, positions;
  for (int64_t s = 0; s < n; ++s) {
    const auto prompt = prompts[s]["prompt"].get<std::vector<int64_t>>();
    const at::Tensor logits =
        model.Prefill(s, at::tensor(prompt, at::kLong), &cache, /*all_logits=*/true);
    const auto& ref = prompts[s]["prefill_logits"];
    ASSERT_EQ(logits.size(0), static_cast<int64_t>(ref.size()));
    for (size_t t = 0; t < ref.size(); ++t) {
      EXPECT_LT(RelativeError(logits[t], ref[t].get<std::vector<float>>()), 1e-4)
          << "prompt " << s << " position " << t;
    }
    slots.push_back(s);
    next.push_back(logits[-1].argmax().item<int64_t>());
    positions.push_back(static_cast<int64_t>(prompt.size()));
  }
  // All prompts decode together: one batch of mixed lengths.
  std::vector<std::vector<int64_t>> tokens(n);
  for (int64_t s = 0; s < n; ++s) tokens[s].push_back(next[s]);
  const size_t new_tokens = prompts[0]["tokens"].size();
  for (size_t step = 1; step < new_tokens; ++step) {
    int64_t attend = 0;
    for (int64_t p : positions) attend = std::max(attend, p + 1);
    const at::Tensor logits = model.Decode(at::tensor(slots, at::kLong), at::tensor(next, at::kLong),
                                           at::tensor(positions, at::kLong), attend, &cache);
    for (int64_t s = 0; s < n; ++s) {
      const auto& ref = prompts[s]["decode_logits"];
      if (step <= ref.size()) {
        EXPECT_LT(RelativeError(logits[s], ref[step - 1].get<std::vector<float>>()), 1e-4)
            << "prompt " << s << " decode step " << step;
      }
      next[s] = logits[s].argmax().item<int64_t>();
      tokens[s].push_back(next[s]);
      ++positions[s];
    }
  }
  for (int64_t s = 0; s < n; ++s) {
    EXPECT_EQ(tokens[s], prompts[s]["tokens"].get<std::vector<int64_t>>()) << "prompt " << s;
  }
}

}  // namespace
}  // namespace tandem
