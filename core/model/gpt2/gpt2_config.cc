#include "core/model/gpt2/gpt2_config.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/model/read_config_field.h"

namespace tandem {
namespace {

using Json = nlohmann::json;

}  // namespace

absl::StatusOr<Gpt2Config> Gpt2Config::FromJson(absl::string_view text,
                                                absl::string_view source) {
  Json json = Json::parse(text.begin(), text.end(), nullptr,
                          /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not a JSON object"));
  }
  if (auto type = json.find("model_type");
      type != json.end() && type->is_string() && *type != "gpt2") {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": model_type is \"", type->get<std::string>(),
                     "\"; only \"gpt2\" is supported"));
  }
  Gpt2Config config;
  for (auto [key, field] :
       {std::pair{"vocab_size", &config.vocab_size},
        std::pair{"n_positions", &config.n_positions},
        std::pair{"n_embd", &config.n_embd}, std::pair{"n_layer", &config.n_layer},
        std::pair{"n_head", &config.n_head}, std::pair{"n_inner", &config.n_inner},
        std::pair{"bos_token_id", &config.bos_token_id},
        std::pair{"eos_token_id", &config.eos_token_id}}) {
    RETURN_IF_ERROR(ReadConfigField(json, key, source, field));
  }
  RETURN_IF_ERROR(
      ReadConfigField(json, "layer_norm_epsilon", source, &config.layer_norm_epsilon));
  RETURN_IF_ERROR(
      ReadConfigField(json, "tie_word_embeddings", source, &config.tie_word_embeddings));
  if (auto act = json.find("activation_function");
      act != json.end() && act->is_string() && *act != "gelu_new" &&
      *act != "gelu_pytorch_tanh") {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": activation_function \"", act->get<std::string>(),
        "\" is not supported (GPT-2 uses gelu_new)"));
  }
  absl::Status valid = config.Validate();
  if (!valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", valid.message()));
  }
  return config;
}

absl::StatusOr<Gpt2Config> Gpt2Config::FromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return FromJson(buffer.str(), path);
}

absl::StatusOr<Gpt2Config> Gpt2Config::Preset(absl::string_view name) {
  Gpt2Config config;
  if (name == "gpt2" || name == "small") return config;
  if (name == "gpt2-medium" || name == "medium") {
    config.n_embd = 1024, config.n_layer = 24, config.n_head = 16;
  } else if (name == "gpt2-large" || name == "large") {
    config.n_embd = 1280, config.n_layer = 36, config.n_head = 20;
  } else if (name == "gpt2-xl" || name == "xl") {
    config.n_embd = 1600, config.n_layer = 48, config.n_head = 25;
  } else if (name == "tiny") {
    config.n_embd = 64, config.n_layer = 2, config.n_head = 4,
    config.n_positions = 128;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown GPT-2 size \"", name,
        "\" (expected gpt2, gpt2-medium, gpt2-large, gpt2-xl or tiny)"));
  }
  return config;
}

std::string Gpt2Config::ToJson() const {
  Json json = {
      {"model_type", "gpt2"},
      {"architectures", {"GPT2LMHeadModel"}},
      {"vocab_size", vocab_size},
      {"n_positions", n_positions},
      {"n_ctx", n_positions},
      {"n_embd", n_embd},
      {"n_layer", n_layer},
      {"n_head", n_head},
      {"n_inner", n_inner > 0 ? Json(n_inner) : Json(nullptr)},
      {"activation_function", "gelu_new"},
      {"layer_norm_epsilon", layer_norm_epsilon},
      {"resid_pdrop", 0.0},
      {"embd_pdrop", 0.0},
      {"attn_pdrop", 0.0},
      {"bos_token_id", bos_token_id},
      {"eos_token_id", eos_token_id},
      {"tie_word_embeddings", tie_word_embeddings},
      {"scale_attn_weights", true},
  };
  return json.dump(2) + "\n";
}

absl::Status Gpt2Config::Validate() const {
  auto positive = [](const char* name, int64_t value) -> absl::Status {
    if (value > 0 && value < (int64_t{1} << 24)) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(name, " = ", value, " must be in [1, 2^24)"));
  };
  for (auto [name, value] :
       {std::pair{"vocab_size", vocab_size}, std::pair{"n_positions", n_positions},
        std::pair{"n_embd", n_embd}, std::pair{"n_layer", n_layer},
        std::pair{"n_head", n_head}}) {
    absl::Status status = positive(name, value);
    if (!status.ok()) return status;
  }
  if (n_embd % n_head != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "n_embd = ", n_embd, " is not a multiple of n_head = ", n_head));
  }
  if (n_inner < 0) {
    return absl::InvalidArgumentError(absl::StrCat("n_inner = ", n_inner, " < 0"));
  }
  if (!(layer_norm_epsilon > 0)) {
    return absl::InvalidArgumentError("layer_norm_epsilon must be > 0");
  }
  return absl::OkStatus();
}

}  // namespace tandem
