// The Llama-style decoder (Llama 3, Qwen2, Qwen3 configurations) against a
// reference forward written here from transformers' modeling code
// (LlamaForCausalLM / Qwen2ForCausalLM / Qwen3ForCausalLM: full causal
// attention over the whole sequence, repeat_kv for GQA, no cache), and its
// KV-cache paths (packed and chunked prefill, decode) against full
// recomputation. transformers itself is the oracle on the GPU machine
// (tests/parity).
#include "core/model/llama/llama_model.h"

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <c10/core/InferenceMode.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/base/read_file.h"
#include "core/model/checkpoint_reader.h"
#include "core/model/checkpoint_writer.h"
#include "core/model/kv_cache.h"
#include "core/model/llama/llama_config.h"
#include "core/model/llama/llama_weights.h"
#include "core/model/llama/rotary_embedding.h"
#include "core/model/model_loader.h"
#include "core/model/prefill_pack.h"
#include "core/model/random_checkpoint.h"
#include "tests/core/temp_dir.h"

namespace tandem {
namespace {

using ::testing::HasSubstr;

// The preset's quirks (GQA, llama3 RoPE scaling, Qwen2 biases, Qwen3 q/k
// norms and head size) with a small vocabulary.
LlamaConfig Tiny(const std::string& type) {
  LlamaConfig c = *LlamaConfig::Preset(type, "tiny");
  c.vocab_size = 300;
  c.bos_token_id = 1;
  c.eos_token_ids = {299};
  return c;
}

// inv_freq in double precision from the formulas (llama3 scaling included).
std::vector<double> InvFreq(const LlamaConfig& c) {
  std::vector<double> out;
  const Llama3RopeScaling& s = c.rope_scaling;
  for (int i = 0; i < c.head_dim; i += 2) {
    double f = 1.0 / std::pow(c.rope_theta, static_cast<double>(i) / c.head_dim);
    if (s.factor > 0) {
      const double wavelen = 2 * M_PI / f;
      const double low = s.original_max_position_embeddings / s.low_freq_factor;
      const double high = s.original_max_position_embeddings / s.high_freq_factor;
      if (wavelen > low) {
        f = f / s.factor;
      } else if (wavelen >= high) {
        const double smooth = (s.original_max_position_embeddings / wavelen - s.low_freq_factor) /
                              (s.high_freq_factor - s.low_freq_factor);
        f = (1 - smooth) * f / s.factor + smooth * f;
      }
    }
    out.push_back(f);
  }
  return out;
}

// transformers' forward over `ids` (positions 0..T-1), float32: logits [T, V].
at::Tensor ReferenceLogits(const LlamaConfig& c, const LlamaWeights& weights,
                           const std::vector<int64_t>& ids) {
  std::map<std::string, at::Tensor> w;
  for (const auto& [name, t] : weights.Named(c)) w[name] = t;
  const int64_t T = ids.size(), D = c.head_dim, Hq = c.num_attention_heads,
                Hkv = c.num_key_value_heads;
  auto rms = [&](const at::Tensor& x, const at::Tensor& g) {
    return g * (x * at::rsqrt(x.pow(2).mean(-1, true) + c.rms_norm_eps));
  };
  auto linear = [&](const at::Tensor& x, const std::string& name) {
    const std::string bias = name + ".bias";
    at::Tensor y = at::matmul(x, w.at(name + ".weight").t());
    return w.count(bias) ? y + w.at(bias) : y;
  };
  const std::vector<double> inv = InvFreq(c);
  at::Tensor cos = at::empty({T, D}), sin = at::empty({T, D});
  for (int64_t p = 0; p < T; ++p) {
    for (int64_t i = 0; i < D; ++i) {
      const double angle = p * inv[i % (D / 2)];
      cos[p][i] = std::cos(angle);
      sin[p][i] = std::sin(angle);
    }
  }
  auto rope = [&](const at::Tensor& x) {  // [H, T, D]
    const at::Tensor rotated = at::cat({-x.narrow(-1, D / 2, D / 2), x.narrow(-1, 0, D / 2)}, -1);
    return x * cos + rotated * sin;
  };
  at::Tensor x = w.at("model.embed_tokens.weight").index_select(0, at::tensor(ids, at::kLong));
  const at::Tensor mask = at::ones({T, T}, at::kBool).triu(1);
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    const at::Tensor h = rms(x, w.at(p + "input_layernorm.weight"));
    at::Tensor q = linear(h, p + "self_attn.q_proj").view({T, Hq, D});
    at::Tensor k = linear(h, p + "self_attn.k_proj").view({T, Hkv, D});
    const at::Tensor v = linear(h, p + "self_attn.v_proj").view({T, Hkv, D}).transpose(0, 1);
    if (c.qk_norm) {
      q = rms(q, w.at(p + "self_attn.q_norm.weight"));
      k = rms(k, w.at(p + "self_attn.k_norm.weight"));
    }
    q = rope(q.transpose(0, 1));
    k = rope(k.transpose(0, 1));
    // repeat_kv: query head h reads K/V head h / (Hq / Hkv).
    const at::Tensor kr = k.repeat_interleave(Hq / Hkv, 0), vr = v.repeat_interleave(Hq / Hkv, 0);
    at::Tensor scores = at::matmul(q, kr.transpose(1, 2)) / std::sqrt(static_cast<double>(D));
    scores.masked_fill_(mask, -INFINITY);
    const at::Tensor attn = at::matmul(at::softmax(scores, -1), vr).transpose(0, 1).reshape({T, -1});
    x = x + linear(attn, p + "self_attn.o_proj");
    const at::Tensor h2 = rms(x, w.at(p + "post_attention_layernorm.weight"));
    x = x + linear(at::silu(linear(h2, p + "mlp.gate_proj")) * linear(h2, p + "mlp.up_proj"),
                   p + "mlp.down_proj");
  }
  const at::Tensor head =
      w.count("lm_head.weight") ? w.at("lm_head.weight") : w.at("model.embed_tokens.weight");
  return at::matmul(rms(x, w.at("model.norm.weight")), head.t());
}

KvCacheShape CacheShape(const CausalLm& model, int64_t slots, int64_t context) {
  KvCacheShape shape = model.kv_shape();
  shape.num_slots = slots;
  shape.max_context = context;
  return shape;
}

double MaxDiff(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

class LlamaModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  LlamaModelTest()
      : config_(Tiny(GetParam())),
        weights_(LlamaWeights::Random(config_, 5)),
        model_(config_, weights_),
        cache_(CacheShape(model_, /*slots=*/3, /*context=*/64),
               at::TensorOptions().dtype(at::kFloat)) {}

  c10::InferenceMode inference_;
  LlamaConfig config_;
  LlamaWeights weights_;
  LlamaModel model_;
  KvCache cache_;
};

const std::vector<int32_t> kPrompt = {1, 17, 230, 45, 45, 9, 120, 77, 3, 250, 64};

TEST_P(LlamaModelTest, PrefillMatchesTheReferenceForward) {
  const std::vector<int64_t> ids(kPrompt.begin(), kPrompt.end());
  const at::Tensor expected = ReferenceLogits(config_, weights_, ids);
  const at::Tensor got = model_.PrefillPacked(
      MakePrefillPack({{2, 0, kPrompt}}, at::kCPU), &cache_, /*all_logits=*/true);
  ASSERT_EQ(got.sizes(), expected.sizes());
  EXPECT_LT(MaxDiff(got, expected), 1e-4);
  // The logits are not degenerate (the check above could not pass by accident).
  EXPECT_GT(expected.std().item<double>(), 1e-2);
}

TEST_P(LlamaModelTest, DecodingWithTheCacheEqualsFullRecomputation) {
  std::vector<int64_t> ids(kPrompt.begin(), kPrompt.begin() + 5);
  at::Tensor logits = model_.PrefillPacked(
      MakePrefillPack({{1, 0, absl::MakeConstSpan(kPrompt).subspan(0, 5)}}, at::kCPU), &cache_);
  for (int step = 0; step < 8; ++step) {
    const at::Tensor reference = ReferenceLogits(config_, weights_, ids);
    EXPECT_LT(MaxDiff(logits[0], reference[-1]), 1e-4) << "step " << step;
    const int64_t next = logits[0].argmax().item<int64_t>();
    const int64_t position = static_cast<int64_t>(ids.size());
    ids.push_back(next);
    logits = model_.Decode(at::tensor({int64_t{1}}), at::tensor({next}), at::tensor({position}),
                           position + 1, &cache_);
  }
}

TEST_P(LlamaModelTest, PackedAndChunkedPrefillEqualsOneSequenceAtATime) {
  const auto prompt = absl::MakeConstSpan(kPrompt);
  const std::vector<int32_t> other = {1, 5, 6, 7, 8, 9, 10};
  // Slot 0: the whole of `other`; slot 2: kPrompt in two chunks, the
  // second sharing a pack with a new prompt and a decode-less step.
  model_.PrefillPacked(MakePrefillPack({{2, 0, prompt.subspan(0, 4)}}, at::kCPU), &cache_);
  const at::Tensor packed = model_.PrefillPacked(
      MakePrefillPack({{0, 0, other}, {2, 4, prompt.subspan(4)}}, at::kCPU, 32, 4), &cache_);
  const at::Tensor a = ReferenceLogits(config_, weights_, {other.begin(), other.end()});
  const at::Tensor b = ReferenceLogits(config_, weights_, {kPrompt.begin(), kPrompt.end()});
  EXPECT_LT(MaxDiff(packed[0], a[-1]), 1e-4);
  EXPECT_LT(MaxDiff(packed[1], b[-1]), 1e-4);
  // Two rows decoding together, each over its own slot.
  const at::Tensor both = model_.Decode(at::tensor({int64_t{0}, int64_t{2}}),
                                        at::tensor({int64_t{42}, int64_t{43}}),
                                        at::tensor({int64_t{7}, int64_t{11}}), 12, &cache_);
  std::vector<int64_t> a_ids(other.begin(), other.end()), b_ids(kPrompt.begin(), kPrompt.end());
  a_ids.push_back(42);
  b_ids.push_back(43);
  EXPECT_LT(MaxDiff(both[0], ReferenceLogits(config_, weights_, a_ids)[-1]), 1e-4);
  EXPECT_LT(MaxDiff(both[1], ReferenceLogits(config_, weights_, b_ids)[-1]), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Families, LlamaModelTest, ::testing::Values("llama", "qwen2", "qwen3"));

TEST(RotaryEmbeddingTest, Llama3ScalingFollowsTheFormula) {
  const LlamaConfig c = *LlamaConfig::Preset("llama", "llama-3.2-1b");
  const std::vector<double> expected = InvFreq(c);
  const RotaryEmbedding rope(c, at::kCPU);
  ASSERT_EQ(rope.inv_freq().numel(), static_cast<int64_t>(expected.size()));
  int scaled = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(rope.inv_freq()[i].item<double>(), expected[i], 1e-6 * expected[i]) << i;
    scaled += std::abs(expected[i] - 1.0 / std::pow(c.rope_theta, 2.0 * i / c.head_dim)) >
              1e-3 * expected[i];
  }
  EXPECT_GT(scaled, 8);  // the scaling changed many frequencies
}

TEST(LlamaConfigTest, ReadsTheFieldsAndNamesWhatIsWrong) {
  const LlamaConfig c = Tiny("qwen3");
  auto parsed = LlamaConfig::FromJson(c.ToJson(), "config.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->head_dim, 32);
  EXPECT_TRUE(parsed->qk_norm);
  EXPECT_EQ(parsed->num_key_value_heads, 2);
  auto qwen2 = LlamaConfig::FromJson(Tiny("qwen2").ToJson(), "config.json");
  ASSERT_TRUE(qwen2.ok());
  EXPECT_TRUE(qwen2->attention_bias);
  auto llama = LlamaConfig::FromJson(Tiny("llama").ToJson(), "config.json");
  ASSERT_TRUE(llama.ok());
  EXPECT_EQ(llama->rope_scaling.factor, 8);

  auto error = [](const std::string& json) {
    return std::string(LlamaConfig::FromJson(json, "x/config.json").status().message());
  };
  const std::string base =
      R"("vocab_size": 10, "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1,
         "num_attention_heads": 2, "max_position_embeddings": 16)";
  EXPECT_THAT(error("{" + base + R"(, "model_type": "mistral"})"), HasSubstr("model_type"));
  EXPECT_THAT(error(R"({"model_type": "llama", "hidden_size": 8})"), HasSubstr("vocab_size"));
  EXPECT_THAT(error("{" + base + R"(, "model_type": "llama", "rope_scaling": {"rope_type": "yarn", "factor": 4}})"),
              HasSubstr("yarn"));
  EXPECT_THAT(error("{" + base + R"(, "model_type": "qwen2", "use_sliding_window": true})"),
              HasSubstr("use_sliding_window"));
  EXPECT_THAT(error("{" + base + R"(, "model_type": "llama", "num_key_value_heads": 3})"),
              HasSubstr("num_key_value_heads"));
  EXPECT_THAT(error("{" + base + R"(, "model_type": "llama", "hidden_act": "gelu"})"),
              HasSubstr("hidden_act"));
  EXPECT_THAT(error("not json"), HasSubstr("x/config.json"));
  // Integers past int32 are errors, not wrapped values (2^32 was token 0).
  EXPECT_THAT(error("{" + base + R"(, "model_type": "llama", "eos_token_id": 4294967296})"),
              HasSubstr("eos_token_id"));
  EXPECT_THAT(error("{" + base + R"(, "model_type": "llama", "eos_token_id": [1, 4294967296]})"),
              HasSubstr("out of range"));
  EXPECT_THAT(error(R"({"model_type": "llama", "vocab_size": 10, "hidden_size": 8,
                        "intermediate_size": 16, "num_hidden_layers": 4294967298,
                        "num_attention_heads": 2, "max_position_embeddings": 16})"),
              HasSubstr("out of range"));
}

TEST(LlamaWeightsTest, ShardedCheckpointsLoadAndErrorsNameTheTensor) {
  c10::InferenceMode inference;
  const LlamaConfig config = Tiny("qwen2");
  const LlamaWeights weights = LlamaWeights::Random(config, 9);
  TempDir dir("llama_weights_");
  ASSERT_TRUE(WriteCheckpointTensors(dir.path(), weights.Named(config), at::kFloat, 9,
                                     /*max_shard_bytes=*/40000)
                  .ok());
  auto index_text = ReadFile(dir.path() + "/model.safetensors.index.json");
  ASSERT_TRUE(index_text.ok()) << index_text.status();
  std::set<std::string> shards;
  const nlohmann::json index = nlohmann::json::parse(*index_text);
  for (const auto& [name, file] : index["weight_map"].items()) shards.insert(file.get<std::string>());
  EXPECT_GE(shards.size(), 3u);
  EXPECT_FALSE(FileExists(dir.path() + "/model.safetensors"));
  auto reader = CheckpointReader::Open(dir.path());
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto loaded = LlamaWeights::Load(**reader, config, at::kFloat, at::kCPU);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const auto want = weights.Named(config), got = loaded->Named(config);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(want[i].first, got[i].first);
    EXPECT_TRUE(at::equal(want[i].second, got[i].second)) << want[i].first;
  }
  // A config with more layers than the file: the missing tensor is named.
  LlamaConfig deeper = config;
  deeper.num_hidden_layers = 3;
  auto missing = LlamaWeights::Load(**reader, deeper, at::kFloat, at::kCPU);
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("model.layers.2.input_layernorm.weight"));
  // A wrong head count: the mis-shaped tensor and both shapes are named.
  LlamaConfig wider = config;
  wider.num_key_value_heads = 4;
  auto shaped = LlamaWeights::Load(**reader, wider, at::kFloat, at::kCPU);
  EXPECT_THAT(std::string(shaped.status().message()), HasSubstr("k_proj.weight\" has shape"));
  // No lm_head although untied.
  LlamaConfig untied_missing = config;
  TempDir tied("llama_tied_");
  auto named = weights.Named(config);
  named.pop_back();  // lm_head.weight
  ASSERT_TRUE(WriteCheckpointTensors(tied.path(), named, at::kFloat, 9).ok());
  auto tied_reader = CheckpointReader::Open(tied.path());
  ASSERT_TRUE(tied_reader.ok());
  EXPECT_THAT(std::string(LlamaWeights::Load(**tied_reader, untied_missing, at::kFloat, at::kCPU)
                              .status()
                              .message()),
              HasSubstr("lm_head.weight"));
}

// The families end to end on the CPU: make-model's checkpoint (sharded,
// with the real tokenizer copied from third_party/) loads through the
// loader with the EOS ids of generation_config.json and the checkpoint's
// own chat template, and a config.json the family cannot serve is an error
// naming the field.
TEST(LlamaFamilyTest, RandomCheckpointsLoadWithTheirTokenizerAndTemplate) {
  for (const std::string arch : {"llama", "qwen2", "qwen3"}) {
    TempDir dir("llama_family_");
    RandomCheckpointOptions options;
    options.architecture = arch;
    options.preset = "tiny";
    options.dtype = DType::kBFloat16;
    options.max_shard_bytes = 8 << 20;
    const absl::Status written = WriteRandomCheckpoint(dir.path(), options);
    ASSERT_TRUE(written.ok()) << written;
    EXPECT_TRUE(FileExists(dir.path() + "/model.safetensors.index.json"));
    ModelOptions model_options;
    model_options.model_dir = dir.path();
    absl::StatusOr<LoadedModel> loaded = LoadModel(model_options);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    const ModelDescription& d = loaded->runner->description();
    EXPECT_EQ(d.architecture, arch);
    const absl::StatusOr<std::string> prompt =
        loaded->chat_template->Render({{"system", "Be brief."}, {"user", "Hi"}});
    ASSERT_TRUE(prompt.ok()) << prompt.status();
    if (arch == "llama") {
      EXPECT_EQ(d.eos_token_ids, (std::vector<int32_t>{128001, 128008, 128009}));
      EXPECT_THAT(*prompt, HasSubstr("<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"));
    } else {
      EXPECT_EQ(d.eos_token_ids, (std::vector<int32_t>{151645, 151643}));
      EXPECT_THAT(*prompt, HasSubstr("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
    }
  }
  // No tokenizer to copy: the error says where to get one.
  TempDir dir("llama_family_");
  RandomCheckpointOptions options;
  options.architecture = "qwen3";
  options.preset = "tiny";
  options.tokenizer_dir = dir.path() + "/nowhere";
  EXPECT_THAT(std::string(WriteRandomCheckpoint(dir.path() + "/out", options).message()),
              HasSubstr("install-deps"));
}

TEST(LlamaFamilyTest, ACheckpointTheFamilyCannotServeFailsAtLoadNamingTheField) {
  TempDir dir("llama_family_");
  RandomCheckpointOptions options;
  options.architecture = "llama";
  options.preset = "tiny";
  ASSERT_TRUE(WriteRandomCheckpoint(dir.path(), options).ok());
  auto config = ReadFile(dir.path() + "/config.json");
  ASSERT_TRUE(config.ok());
  nlohmann::json json = nlohmann::json::parse(*config);
  json["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  ASSERT_TRUE(WriteTextFile(dir.path() + "/config.json", json.dump()).ok());
  ModelOptions model_options;
  model_options.model_dir = dir.path();
  const absl::StatusOr<LoadedModel> loaded = LoadModel(model_options);
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("rope_scaling"));
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("config.json"));
}

}  // namespace
}  // namespace tandem
