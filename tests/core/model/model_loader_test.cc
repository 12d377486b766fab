// Loading checkpoints through the family registry and the public loader.
#include "core/model/model_loader.h"

#include <fstream>
#include <string>

#include <c10/core/InferenceMode.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/checkpoint/safetensors_file.h"
#include "core/checkpoint/safetensors_writer.h"
#include "core/model/gpt2/gpt2_family.h"
#include "core/model/checkpoint_reader.h"
#include "core/model/gpt2/gpt2_weights.h"
#include "core/model/random_checkpoint.h"
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

class CheckpointTest : public ::testing::Test {
 protected:
  // Options that load a tiny random checkpoint written into dir_, on the CPU.
  ModelOptions TinyCheckpointOptions() {
    Gpt2Config config = *Gpt2Config::Preset("tiny");
    config.n_positions = 32;
    EXPECT_TRUE(WriteRandomGpt2Checkpoint(dir_, config, 11, at::kFloat).ok());
    ModelOptions options;
    options.model_dir = dir_;
    options.device.kind = DeviceSpec::Kind::kCpu;
    return options;
  }
  TempDir temp_{"tandem_ckpt_"};
  const std::string dir_ = temp_.path();
};

TEST_F(CheckpointTest, WrittenCheckpointLoadsBackToTheSameWeights) {
  Gpt2Config config = *Gpt2Config::Preset("tiny");  // GPT-2's vocabulary
  config.n_positions = 32;
  ASSERT_TRUE(WriteRandomGpt2Checkpoint(dir_, config, 11, at::kFloat).ok());
  auto file = SafetensorsFile::Open(dir_ + "/model.safetensors");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_NE((*file)->Find("transformer.h.1.attn.c_attn.weight"), nullptr);
  EXPECT_EQ((*file)->Find("lm_head.weight"), nullptr);  // tied, as save_pretrained writes
  auto loaded = Gpt2Weights::Load(**CheckpointReader::Open(dir_), config, at::kFloat, at::kCPU);
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
  options.device.kind = DeviceSpec::Kind::kCpu;
  options.dtype = DType::kBFloat16;
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
  ASSERT_TRUE(WriteRandomGpt2Checkpoint(dir_, config, 11, at::kFloat).ok());
  config.n_layer = 3;  // the file has two layers
  auto file = SafetensorsFile::Open(dir_ + "/model.safetensors");
  ASSERT_TRUE(file.ok());
  auto loaded = Gpt2Weights::Load(**CheckpointReader::Open(dir_), config, at::kFloat, at::kCPU);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("model.safetensors"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("h.2.ln_1.weight"));
}

TEST_F(CheckpointTest, WrongShapeIsNamedWithTheFile) {
  Gpt2Config config = TinyConfig();
  ASSERT_TRUE(WriteRandomGpt2Checkpoint(dir_, config, 11, at::kFloat).ok());
  config.n_embd = 128;
  config.n_head = 8;
  auto file = SafetensorsFile::Open(dir_ + "/model.safetensors");
  ASSERT_TRUE(file.ok());
  auto loaded = Gpt2Weights::Load(**CheckpointReader::Open(dir_), config, at::kFloat, at::kCPU);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("transformer.wte.weight"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("[300, 64]"));
}

TEST_F(CheckpointTest, TokenizerLargerThanTheModelVocabularyIsRejected) {
  // Token ids from the tokenizer must be valid embedding rows.
  ASSERT_TRUE(WriteRandomGpt2Checkpoint(dir_, TinyConfig(), 11, at::kFloat).ok());
  ModelOptions options;
  options.model_dir = dir_;
  options.device.kind = DeviceSpec::Kind::kCpu;
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
  auto loaded = Gpt2Weights::Load(**CheckpointReader::Open(dir_), config, at::kFloat, at::kCPU);
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

TEST_F(CheckpointTest, TheDynamicKvCacheBaselineLoadsTheGrowingCacheRunner) {
  ModelOptions options = TinyCheckpointOptions();
  options.kv_cache = KvCacheMode::kDynamic;
  auto model = LoadModel(options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->runner->description().runner, "eager, dynamic KV cache");
  EXPECT_FALSE(model->runner->reads_tokens_on_device());
}

TEST_F(CheckpointTest, TheFamilyComesFromConfigJsonAndAnUnknownOneIsNamed) {
  ModelOptions options = TinyCheckpointOptions();
  auto model = LoadModel(options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->runner->description().architecture, "gpt2");
  EXPECT_THAT(model->runner->description().eos_token_ids, ::testing::ElementsAre(50256));
  std::ofstream(dir_ + "/config.json") << R"({"model_type": "mamba", "vocab_size": 10})";
  auto unknown = LoadModel(options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("config.json"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("\"mamba\" is not supported"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("supported: gpt2, llama, qwen2, qwen3"));
}

TEST_F(CheckpointTest, MakeModelWritesEachPresetAndRefusesUnknownOnes) {
  RandomCheckpointOptions options;
  options.preset = "tiny";
  options.overrides.num_layers = 1;
  options.overrides.max_positions = 16;
  ASSERT_TRUE(WriteRandomCheckpoint(dir_, options).ok());
  auto config = Gpt2Config::FromFile(dir_ + "/config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->n_layer, 1);
  EXPECT_EQ(config->n_positions, 16);
  EXPECT_EQ(ResolvedPreset(RandomCheckpointOptions()), "gpt2");
  options.preset = "huge";
  const absl::Status bad_size = WriteRandomCheckpoint(dir_, options);
  EXPECT_THAT(bad_size.message(), HasSubstr("unknown gpt2 size \"huge\""));
  options.architecture = "llama-9";
  EXPECT_THAT(WriteRandomCheckpoint(dir_, options).message(), HasSubstr("\"llama-9\""));
}

TEST_F(CheckpointTest, ADirectoryWithoutTokenizerFilesIsNotFound) {
  auto tokenizer = Gpt2Family().LoadTokenizer(dir_);
  EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(tokenizer.status().message(), HasSubstr("tokenizer.json"));
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
