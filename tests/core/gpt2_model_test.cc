#include "core/gpt2_model.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/gpt2_weights.h"

#include <c10/core/InferenceMode.h>
#include "core/model_loader.h"
#include "core/safetensors_file.h"
#include "core/safetensors_writer.h"
#include "tests/core/temp_dir.h"

namespace tandem {
namespace {

using ::testing::HasSubstr;

Gpt2Config TinyConfig() {
  Gpt2Config config = *Gpt2Config::Preset("tiny");
  config.vocab_size = 300;
  config.n_positions = 32;
  return config;
}

at::Tensor Ids(std::vector<int64_t> ids) { return at::tensor(ids, at::kLong); }

class Gpt2ModelTest : public ::testing::Test {
 protected:
  Gpt2ModelTest()
      : config_(TinyConfig()),
        model_(config_, Gpt2Weights::Random(config_, 7)),
        cache_(config_.n_layer, /*slots=*/3, config_.n_head, config_.n_positions,
               config_.head_dim(), at::TensorOptions().dtype(at::kFloat)) {}

  Gpt2Config config_;
  Gpt2Model model_;
  KvCache cache_;
  c10::InferenceMode inference_mode_;
};

TEST_F(Gpt2ModelTest, DecodingWithTheCacheMatchesRecomputingTheSequence) {
  const std::vector<int64_t> tokens = {5, 17, 250, 3, 99, 42, 7, 7, 120, 1};
  const at::Tensor full = model_.Prefill(0, Ids(tokens), &cache_, /*all_logits=*/true);
  ASSERT_EQ(full.sizes(), (std::vector<int64_t>{10, 300}));
  // Slot 1: prefill 4 tokens, then decode the rest one at a time.
  const at::Tensor prefix = model_.Prefill(
      1, Ids({tokens.begin(), tokens.begin() + 4}), &cache_);
  EXPECT_TRUE(at::allclose(prefix[0], full[3], 1e-5, 1e-4));
  for (int64_t p = 4; p < 10; ++p) {
    const at::Tensor logits =
        model_.Decode(Ids({1}), Ids({tokens[p]}), Ids({p}), p + 1, &cache_);
    EXPECT_TRUE(at::allclose(logits[0], full[p], 1e-5, 1e-4))
        << "position " << p << " max diff "
        << (logits[0] - full[p]).abs().max().item<float>();
  }
}

TEST_F(Gpt2ModelTest, BatchedDecodeOfSlotsAtDifferentLengthsMatchesSingleDecode) {
  const std::vector<int64_t> a = {1, 2, 3, 4, 5, 6, 7};
  const std::vector<int64_t> b = {9, 8};
  model_.Prefill(0, Ids(a), &cache_);
  model_.Prefill(2, Ids(b), &cache_);
  const at::Tensor batched = model_.Decode(Ids({0, 2}), Ids({11, 12}), Ids({7, 2}), 8, &cache_);
  // Recompute each sequence from scratch in slot 1.
  std::vector<int64_t> a_full = a, b_full = b;
  a_full.push_back(11);
  b_full.push_back(12);
  const at::Tensor a_ref = model_.Prefill(1, Ids(a_full), &cache_);
  const at::Tensor b_ref = model_.Prefill(1, Ids(b_full), &cache_);
  EXPECT_TRUE(at::allclose(batched[0], a_ref[0], 1e-5, 1e-4));
  EXPECT_TRUE(at::allclose(batched[1], b_ref[0], 1e-5, 1e-4));
}

TEST_F(Gpt2ModelTest, AReusedSlotNeverSeesThePreviousSequence) {
  const std::vector<int64_t> fresh = {4, 5, 6};
  const at::Tensor expected = model_.Prefill(0, Ids(fresh), &cache_);
  model_.Decode(Ids({0}), Ids({77}), Ids({3}), 4, &cache_);
  // Slot 1 first holds a long, different sequence, then the short one.
  model_.Prefill(1, Ids({200, 201, 202, 203, 204, 205, 206, 207}), &cache_);
  EXPECT_TRUE(at::allclose(model_.Prefill(1, Ids(fresh), &cache_), expected, 1e-6, 1e-5));
  const at::Tensor decoded = model_.Decode(Ids({1}), Ids({77}), Ids({3}), 8, &cache_);
  const at::Tensor reference = model_.Decode(Ids({0}), Ids({77}), Ids({3}), 4, &cache_);
  EXPECT_TRUE(at::allclose(decoded, reference, 1e-5, 1e-4));
}

TEST_F(Gpt2ModelTest, AGrowingCacheDecodesLikeTheStaticOneAndGrowsStepByStep) {
  KvCache growing(config_.n_layer, 3, config_.n_head, config_.n_positions, config_.head_dim(),
                  at::TensorOptions().dtype(at::kFloat), KvCache::Growth::kConcatenate);
  ASSERT_TRUE(growing.grows());
  EXPECT_EQ(growing.keys(0).size(2), 0);
  const std::vector<int64_t> a = {1, 2, 3, 4, 5, 6, 7};
  const std::vector<int64_t> b = {9, 8};
  EXPECT_TRUE(at::allclose(model_.Prefill(0, Ids(a), &growing), model_.Prefill(0, Ids(a), &cache_),
                           1e-6, 1e-5));
  EXPECT_EQ(growing.keys(0).size(2), 7);  // as long as the longest prompt
  model_.Prefill(2, Ids(b), &growing);
  model_.Prefill(2, Ids(b), &cache_);
  EXPECT_EQ(growing.keys(0).size(2), 7);
  for (int64_t step = 0; step < 5; ++step) {
    const at::Tensor positions = Ids({7 + step, 2 + step});
    const at::Tensor tokens = Ids({11 + step, 40 + step});
    const at::Tensor expected = model_.Decode(Ids({0, 2}), tokens, positions, 8 + step, &cache_);
    const at::Tensor got = model_.Decode(Ids({0, 2}), tokens, positions, 8 + step, &growing);
    EXPECT_TRUE(at::allclose(got, expected, 1e-6, 1e-5)) << "step " << step;
    // One more position per step, for every layer's keys and values.
    EXPECT_EQ(growing.keys(config_.n_layer - 1).size(2), 8 + step);
    EXPECT_EQ(growing.values(0).size(2), 8 + step);
  }
  EXPECT_EQ(cache_.keys(0).size(2), config_.n_positions);  // the static one never changes
}

TEST_F(Gpt2ModelTest, AttentionIsCausal) {
  // Changing a later token must not change earlier positions' logits.
  const at::Tensor x = model_.Prefill(0, Ids({1, 2, 3, 4}), &cache_, true);
  const at::Tensor y = model_.Prefill(0, Ids({1, 2, 3, 250}), &cache_, true);
  EXPECT_TRUE(at::allclose(x.narrow(0, 0, 3), y.narrow(0, 0, 3)));
  EXPECT_FALSE(at::allclose(x[3], y[3]));
}

class CheckpointTest : public ::testing::Test {
 protected:
  // Options that load a tiny random checkpoint written into dir_, on the CPU.
  ModelOptions TinyCheckpointOptions() {
    Gpt2Config config = *Gpt2Config::Preset("tiny");
    config.n_positions = 32;
    EXPECT_TRUE(WriteRandomCheckpoint(dir_, config, 11, "float32").ok());
    ModelOptions options;
    options.model_dir = dir_;
    options.device = "cpu";
    return options;
  }
  TempDir temp_{"tandem_ckpt_"};
  const std::string dir_ = temp_.path();
};

TEST_F(CheckpointTest, WrittenCheckpointLoadsBackToTheSameWeights) {
  Gpt2Config config = *Gpt2Config::Preset("tiny");  // GPT-2's vocabulary
  config.n_positions = 32;
  ASSERT_TRUE(WriteRandomCheckpoint(dir_, config, 11, "float32").ok());
  auto file = SafetensorsFile::Open(dir_ + "/model.safetensors");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_NE((*file)->Find("transformer.h.1.attn.c_attn.weight"), nullptr);
  EXPECT_EQ((*file)->Find("lm_head.weight"), nullptr);  // tied, as save_pretrained writes
  auto loaded = Gpt2Weights::Load(**file, config, at::kFloat, at::kCPU);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Gpt2Weights expected = Gpt2Weights::Random(config, 11);
  const auto a = loaded->Named(), b = expected.Named();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_TRUE(at::equal(a[i].second, b[i].second)) << a[i].first;
  }
  // The whole model through the public loader, bf16 conversion included.
  ModelOptions options;
  options.model_dir = dir_;
  options.device = "cpu";
  options.dtype = "bfloat16";
  options.max_slots = 2;
  auto model = LoadModel(options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->runner->description().dtype, "bfloat16");
  EXPECT_EQ(model->runner->description().max_context, 32);
  EXPECT_EQ(model->runner->description().kv_cache_bytes,
            2LL * config.n_layer * 2 * 32 * config.n_embd * 2);
}

TEST_F(CheckpointTest, MissingTensorIsNamedWithTheFile) {
  Gpt2Config config = TinyConfig();
  ASSERT_TRUE(WriteRandomCheckpoint(dir_, config, 11, "float32").ok());
  config.n_layer = 3;  // the file has two layers
  auto file = SafetensorsFile::Open(dir_ + "/model.safetensors");
  ASSERT_TRUE(file.ok());
  auto loaded = Gpt2Weights::Load(**file, config, at::kFloat, at::kCPU);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("model.safetensors"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("h.2.ln_1.weight"));
}

TEST_F(CheckpointTest, WrongShapeIsNamedWithTheFile) {
  Gpt2Config config = TinyConfig();
  ASSERT_TRUE(WriteRandomCheckpoint(dir_, config, 11, "float32").ok());
  config.n_embd = 128;
  config.n_head = 8;
  auto file = SafetensorsFile::Open(dir_ + "/model.safetensors");
  ASSERT_TRUE(file.ok());
  auto loaded = Gpt2Weights::Load(**file, config, at::kFloat, at::kCPU);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("transformer.wte.weight"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("[300, 64]"));
}

TEST_F(CheckpointTest, TokenizerLargerThanTheModelVocabularyIsRejected) {
  // Token ids from the tokenizer must be valid embedding rows.
  ASSERT_TRUE(WriteRandomCheckpoint(dir_, TinyConfig(), 11, "float32").ok());
  ModelOptions options;
  options.model_dir = dir_;
  options.device = "cpu";
  auto model = LoadModel(options);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("vocab_size is 300"));
}

TEST_F(CheckpointTest, AcceptsBareNamesAndAnExplicitLmHead) {
  // The layout of the original GPT-2 uploads: no "transformer." prefix, and
  // here an untied head that must be used instead of wte.
  const Gpt2Config config = TinyConfig();
  Gpt2Weights weights = Gpt2Weights::Random(config, 11);
  weights.lm_head = weights.wte * 2;
  SafetensorsWriter writer;
  for (const auto& [name, tensor] : weights.Named()) {
    const std::string bare = name.rfind("transformer.", 0) == 0 ? name.substr(12) : name;
    const at::Tensor t = tensor.contiguous();
    ASSERT_TRUE(writer.Add(bare, SafetensorsDType::kF32, t.sizes().vec(),
                           absl::string_view(static_cast<const char*>(t.data_ptr()),
                                             t.numel() * t.element_size())).ok());
  }
  ASSERT_TRUE(writer.WriteFile(dir_ + "/model.safetensors").ok());
  auto file = SafetensorsFile::Open(dir_ + "/model.safetensors");
  ASSERT_TRUE(file.ok());
  EXPECT_NE((*file)->Find("h.0.ln_1.weight"), nullptr);
  auto loaded = Gpt2Weights::Load(**file, config, at::kFloat, at::kCPU);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(loaded->lm_head.defined());
  EXPECT_TRUE(at::equal(loaded->lm_head, weights.lm_head));
  EXPECT_TRUE(at::equal(loaded->layers[1].mlp_proj_weight, weights.layers[1].mlp_proj_weight));
}

TEST_F(CheckpointTest, KvSlotsThatDoNotFitFailAtStartWithTheNumbers) {
  ModelOptions options = TinyCheckpointOptions();
  options.max_slots = 20'000'000;  // 2 x 64 x 32 x 2 x 4 bytes each: ~610 GiB
  auto model = LoadModel(options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(model.status().message(), HasSubstr("610.35 GiB"));
  EXPECT_THAT(model.status().message(), HasSubstr("is free on cpu"));
  EXPECT_THAT(model.status().message(), HasSubstr("--max_slots"));
}

TEST_F(CheckpointTest, TheDynamicKvCacheBaselineLoadsTheEagerRunner) {
  ModelOptions options = TinyCheckpointOptions();
  options.kv_cache = "dynamic";
  auto model = LoadModel(options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->runner->description().runner, "eager, dynamic KV cache");
  EXPECT_FALSE(model->runner->reads_tokens_on_device());
  options.kv_cache = "paged";
  auto bad = LoadModel(options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("--kv_cache=paged"));
}

TEST_F(CheckpointTest, MissingDirectoryIsAClearError) {
  ModelOptions options;
  options.model_dir = dir_ + "/nope";
  auto model = LoadModel(options);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("nope"));
}

}  // namespace
}  // namespace tandem
