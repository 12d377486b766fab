#include "core/model/gpt2/gpt2_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tandem {
namespace {

using ::testing::HasSubstr;

TEST(Gpt2ConfigTest, ParsesAHuggingFaceConfig) {
  // Abridged from the gpt2-medium config.json on the Hugging Face hub.
  auto config = Gpt2Config::FromJson(R"({
    "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
    "bos_token_id": 50256, "eos_token_id": 50256, "layer_norm_epsilon": 1e-05,
    "model_type": "gpt2", "n_ctx": 1024, "n_embd": 1024, "n_head": 16,
    "n_layer": 24, "n_positions": 1024, "n_special": 0, "vocab_size": 50257})",
                                     "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->n_embd, 1024);
  EXPECT_EQ(config->n_layer, 24);
  EXPECT_EQ(config->head_dim(), 64);
  EXPECT_EQ(config->inner_size(), 4096);
}

TEST(Gpt2ConfigTest, RoundTripsThroughJson) {
  const Gpt2Config xl = *Gpt2Config::Preset("gpt2-xl");
  auto parsed = Gpt2Config::FromJson(xl.ToJson(), "x");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->n_embd, 1600);
  EXPECT_EQ(parsed->n_head, 25);
  EXPECT_EQ(parsed->n_layer, 48);
}

TEST(Gpt2ConfigTest, ErrorsNameTheFileAndField) {
  EXPECT_THAT(Gpt2Config::FromJson("[1]", "a/config.json").status().message(),
              HasSubstr("a/config.json"));
  EXPECT_THAT(Gpt2Config::FromJson(R"({"n_embd": "big"})", "c").status().message(),
              HasSubstr("n_embd"));
  EXPECT_THAT(Gpt2Config::FromJson(R"({"n_embd": 100, "n_head": 3})", "c").status().message(),
              HasSubstr("multiple"));
  EXPECT_THAT(Gpt2Config::FromJson(R"({"model_type": "llama"})", "c").status().message(),
              HasSubstr("llama"));
  // Each field type's error names the file, the key and what it must be.
  EXPECT_EQ(Gpt2Config::FromJson(R"({"n_layer": 2.5})", "c").status().message(),
            "c: \"n_layer\" must be an integer");
  EXPECT_EQ(Gpt2Config::FromJson(R"({"layer_norm_epsilon": "tiny"})", "c").status().message(),
            "c: \"layer_norm_epsilon\" must be a number");
  EXPECT_EQ(Gpt2Config::FromJson(R"({"tie_word_embeddings": "yes"})", "c").status().message(),
            "c: \"tie_word_embeddings\" must be true or false");
  // An integer past int32 is an error, not a wrapped value (2^32 + 2 was 2
  // layers).
  EXPECT_EQ(Gpt2Config::FromJson(R"({"n_layer": 4294967298})", "c").status().message(),
            "c: \"n_layer\" = 4294967298 is out of range");
  EXPECT_THAT(Gpt2Config::FromJson(R"({"n_layer": -4294967294})", "c").status().message(),
              HasSubstr("out of range"));
  // Null keeps the default.
  auto defaults = Gpt2Config::FromJson(R"({"n_layer": null, "layer_norm_epsilon": null})", "c");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->n_layer, Gpt2Config().n_layer);
  EXPECT_EQ(defaults->layer_norm_epsilon, Gpt2Config().layer_norm_epsilon);
  EXPECT_FALSE(Gpt2Config::Preset("gpt5").ok());
}

}  // namespace
}  // namespace tandem
