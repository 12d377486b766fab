#include "core/model/llama/llama_config.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/read_file.h"
#include "core/base/status_macros.h"
#include "core/model/read_config_field.h"

namespace tandem {
namespace {

using Json = nlohmann::json;

absl::Status FieldError(absl::string_view source, absl::string_view key, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": \"", key, "\" ", what));
}

absl::Status ReadRopeScaling(const Json& json, absl::string_view source,
                             Llama3RopeScaling* out) {
  const auto it = json.find("rope_scaling");
  if (it == json.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) return FieldError(source, "rope_scaling", "must be an object or null");
  std::string type;
  for (const char* key : {"rope_type", "type"}) {
    if (const auto t = it->find(key); t != it->end() && t->is_string()) type = t->get<std::string>();
  }
  if (type == "default") return absl::OkStatus();
  if (type != "llama3") {
    return FieldError(source, "rope_scaling",
                      absl::StrCat("of type \"", type, "\" is not supported (only llama3)"));
  }
  RETURN_IF_ERROR(ReadConfigField(*it, "factor", source, &out->factor));
  RETURN_IF_ERROR(ReadConfigField(*it, "low_freq_factor", source, &out->low_freq_factor));
  RETURN_IF_ERROR(ReadConfigField(*it, "high_freq_factor", source, &out->high_freq_factor));
  RETURN_IF_ERROR(ReadConfigField(*it, "original_max_position_embeddings", source,
                          &out->original_max_position_embeddings));
  if (!(out->factor > 0) || !(out->low_freq_factor > 0) ||
      !(out->high_freq_factor > out->low_freq_factor) ||
      out->original_max_position_embeddings <= 0) {
    return FieldError(source, "rope_scaling",
                      "needs factor > 0, high_freq_factor > low_freq_factor > 0 and "
                      "original_max_position_embeddings > 0");
  }
  return absl::OkStatus();
}

// eos_token_id: an integer or a list of integers.
absl::Status ReadIds(const Json& json, const char* key, absl::string_view source,
                     std::vector<int32_t>* out) {
  const auto it = json.find(key);
  if (it == json.end() || it->is_null()) return absl::OkStatus();
  out->clear();
  if (it->is_number_integer()) {
    if (!IsInt32(*it)) return FieldError(source, key, "is out of range");
    out->push_back(it->get<int32_t>());
    return absl::OkStatus();
  }
  if (!it->is_array()) return FieldError(source, key, "must be an integer or a list of them");
  for (const Json& id : *it) {
    if (!id.is_number_integer()) return FieldError(source, key, "must list integers");
    if (!IsInt32(id)) return FieldError(source, key, "lists an id out of range");
    out->push_back(id.get<int32_t>());
  }
  return absl::OkStatus();
}

}  // namespace

std::string LlamaConfig::architecture() const {
  if (model_type == "qwen2") return "Qwen2ForCausalLM";
  if (model_type == "qwen3") return "Qwen3ForCausalLM";
  return "LlamaForCausalLM";
}

absl::StatusOr<LlamaConfig> LlamaConfig::FromJson(absl::string_view text,
                                                  absl::string_view source) {
  const Json json = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not a JSON object"));
  }
  LlamaConfig c;
  const auto type = json.find("model_type");
  if (type == json.end() || !type->is_string()) {
    return FieldError(source, "model_type", "is missing");
  }
  c.model_type = type->get<std::string>();
  if (c.model_type != "llama" && c.model_type != "qwen2" && c.model_type != "qwen3") {
    return FieldError(source, "model_type",
                      absl::StrCat("is \"", c.model_type, "\"; expected llama, qwen2 or qwen3"));
  }
  for (auto [key, field] : {std::pair{"vocab_size", &c.vocab_size},
                            std::pair{"hidden_size", &c.hidden_size},
                            std::pair{"intermediate_size", &c.intermediate_size},
                            std::pair{"num_hidden_layers", &c.num_hidden_layers},
                            std::pair{"num_attention_heads", &c.num_attention_heads},
                            std::pair{"num_key_value_heads", &c.num_key_value_heads},
                            std::pair{"head_dim", &c.head_dim},
                            std::pair{"max_position_embeddings", &c.max_position_embeddings},
                            std::pair{"bos_token_id", &c.bos_token_id}}) {
    RETURN_IF_ERROR(ReadConfigField(json, key, source, field));
  }
  for (const char* key : {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                          "num_attention_heads", "max_position_embeddings"}) {
    if (!json.contains(key)) return FieldError(source, key, "is missing");
  }
  if (c.num_key_value_heads == 0) c.num_key_value_heads = c.num_attention_heads;
  if (c.head_dim == 0 && c.num_attention_heads > 0) {
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  RETURN_IF_ERROR(ReadConfigField(json, "rms_norm_eps", source, &c.rms_norm_eps));
  RETURN_IF_ERROR(ReadConfigField(json, "rope_theta", source, &c.rope_theta));
  RETURN_IF_ERROR(ReadRopeScaling(json, source, &c.rope_scaling));
  RETURN_IF_ERROR(ReadConfigField(json, "tie_word_embeddings", source, &c.tie_word_embeddings));
  RETURN_IF_ERROR(ReadIds(json, "eos_token_id", source, &c.eos_token_ids));
  c.attention_bias = c.model_type == "qwen2";  // Qwen2 always has q/k/v biases
  if (c.model_type != "qwen2") {
    RETURN_IF_ERROR(ReadConfigField(json, "attention_bias", source, &c.attention_bias));
  }
  c.qk_norm = c.model_type == "qwen3";
  if (const auto act = json.find("hidden_act");
      act != json.end() && (!act->is_string() || *act != "silu")) {
    return FieldError(source, "hidden_act", "must be \"silu\"");
  }
  bool sliding = false;
  RETURN_IF_ERROR(ReadConfigField(json, "use_sliding_window", source, &sliding));
  if (sliding) return FieldError(source, "use_sliding_window", "is not supported");
  bool mlp_bias = false;
  RETURN_IF_ERROR(ReadConfigField(json, "mlp_bias", source, &mlp_bias));
  if (mlp_bias) return FieldError(source, "mlp_bias", "is not supported");
  const absl::Status valid = c.Validate();
  if (!valid.ok()) return absl::InvalidArgumentError(absl::StrCat(source, ": ", valid.message()));
  return c;
}

absl::StatusOr<std::vector<int32_t>> LlamaConfig::GenerationEos(absl::string_view text,
                                                                absl::string_view source) {
  const Json json = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not a JSON object"));
  }
  std::vector<int32_t> ids;
  RETURN_IF_ERROR(ReadIds(json, "eos_token_id", source, &ids));
  return ids;
}

absl::StatusOr<LlamaConfig> LlamaConfig::FromFile(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  return FromJson(text, path);
}

std::vector<std::string> LlamaConfig::PresetNames(absl::string_view model_type) {
  if (model_type == "llama") return {"tiny", "llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b"};
  if (model_type == "qwen2") return {"tiny", "qwen2.5-0.5b", "qwen2.5-1.5b"};
  if (model_type == "qwen3") return {"tiny", "qwen3-0.6b", "qwen3-1.7b"};
  return {};
}

absl::StatusOr<LlamaConfig> LlamaConfig::Preset(absl::string_view model_type,
                                                absl::string_view name) {
  LlamaConfig c;
  c.model_type = std::string(model_type);
  if (model_type == "llama") {
    // Llama 3.2 / 3.1 (the Instruct checkpoints' EOS list).
    c.vocab_size = 128256, c.rms_norm_eps = 1e-5, c.rope_theta = 500000;
    c.rope_scaling = {32, 1, 4, 8192};
    c.max_position_embeddings = 131072, c.bos_token_id = 128000;
    c.eos_token_ids = {128001, 128008, 128009};
    c.tie_word_embeddings = true, c.num_key_value_heads = 8;
    if (name == "llama-3.2-1b") {
      c.hidden_size = 2048, c.intermediate_size = 8192, c.num_hidden_layers = 16;
      c.num_attention_heads = 32, c.head_dim = 64;
    } else if (name == "llama-3.2-3b") {
      c.hidden_size = 3072, c.intermediate_size = 8192, c.num_hidden_layers = 28;
      c.num_attention_heads = 24, c.head_dim = 128;
    } else if (name == "llama-3.1-8b") {
      c.hidden_size = 4096, c.intermediate_size = 14336, c.num_hidden_layers = 32;
      c.num_attention_heads = 32, c.head_dim = 128, c.tie_word_embeddings = false;
      c.rope_scaling.factor = 8;
    } else if (name == "tiny") {
      // Scaled RoPE within a short context: wavelengths past 64 positions
      // are interpolated, so the llama3 rule is exercised.
      c.hidden_size = 64, c.intermediate_size = 128, c.num_hidden_layers = 2;
      c.num_attention_heads = 4, c.num_key_value_heads = 2, c.head_dim = 16;
      c.max_position_embeddings = 512, c.rope_scaling = {8, 1, 4, 64};
      c.tie_word_embeddings = false;
    } else {
      c.hidden_size = 0;
    }
  } else if (model_type == "qwen2" || model_type == "qwen3") {
    c.vocab_size = 151936, c.rms_norm_eps = 1e-6, c.rope_theta = 1000000;
    c.bos_token_id = 151643, c.eos_token_ids = {151645, 151643};
    c.tie_word_embeddings = true;
    c.attention_bias = model_type == "qwen2";
    c.qk_norm = model_type == "qwen3";
    if (name == "qwen2.5-0.5b" && model_type == "qwen2") {
      c.hidden_size = 896, c.intermediate_size = 4864, c.num_hidden_layers = 24;
      c.num_attention_heads = 14, c.num_key_value_heads = 2, c.head_dim = 64;
      c.max_position_embeddings = 32768;
    } else if (name == "qwen2.5-1.5b" && model_type == "qwen2") {
      c.hidden_size = 1536, c.intermediate_size = 8960, c.num_hidden_layers = 28;
      c.num_attention_heads = 12, c.num_key_value_heads = 2, c.head_dim = 128;
      c.max_position_embeddings = 32768;
    } else if (name == "qwen3-0.6b" && model_type == "qwen3") {
      c.hidden_size = 1024, c.intermediate_size = 3072, c.num_hidden_layers = 28;
      c.num_attention_heads = 16, c.num_key_value_heads = 8, c.head_dim = 128;
      c.max_position_embeddings = 40960;
    } else if (name == "qwen3-1.7b" && model_type == "qwen3") {
      c.hidden_size = 2048, c.intermediate_size = 6144, c.num_hidden_layers = 28;
      c.num_attention_heads = 16, c.num_key_value_heads = 8, c.head_dim = 128;
      c.max_position_embeddings = 40960;
    } else if (name == "tiny") {
      // Qwen3's head size is its own field (here 32, not 64 / 4); untied
      // head so the LM head's loading is exercised.
      c.hidden_size = 64, c.intermediate_size = 128, c.num_hidden_layers = 2;
      c.num_attention_heads = 4, c.num_key_value_heads = 2;
      c.head_dim = model_type == "qwen3" ? 32 : 16;
      c.max_position_embeddings = 512, c.tie_word_embeddings = false;
    } else {
      c.hidden_size = 0;
    }
  }
  if (c.hidden_size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown ", model_type, " size \"", name, "\" (expected ",
                     absl::StrJoin(PresetNames(model_type), ", "), ")"));
  }
  return c;
}

std::string LlamaConfig::ToJson() const {
  Json json = {
      {"model_type", model_type},
      {"architectures", {architecture()}},
      {"vocab_size", vocab_size},
      {"hidden_size", hidden_size},
      {"intermediate_size", intermediate_size},
      {"num_hidden_layers", num_hidden_layers},
      {"num_attention_heads", num_attention_heads},
      {"num_key_value_heads", num_key_value_heads},
      {"head_dim", head_dim},
      {"max_position_embeddings", max_position_embeddings},
      {"hidden_act", "silu"},
      {"rms_norm_eps", rms_norm_eps},
      {"rope_theta", rope_theta},
      {"tie_word_embeddings", tie_word_embeddings},
      {"attention_dropout", 0.0},
      {"use_cache", true},
  };
  json["rope_scaling"] = nullptr;
  if (rope_scaling.factor > 0) {
    json["rope_scaling"] = {
        {"rope_type", "llama3"},
        {"factor", rope_scaling.factor},
        {"low_freq_factor", rope_scaling.low_freq_factor},
        {"high_freq_factor", rope_scaling.high_freq_factor},
        {"original_max_position_embeddings", rope_scaling.original_max_position_embeddings}};
  }
  if (model_type != "qwen2") json["attention_bias"] = attention_bias;
  if (model_type == "llama") json["mlp_bias"] = false;
  if (model_type != "llama") json["use_sliding_window"] = false;
  if (bos_token_id >= 0) json["bos_token_id"] = bos_token_id;
  if (eos_token_ids.size() == 1) json["eos_token_id"] = eos_token_ids[0];
  if (eos_token_ids.size() > 1) json["eos_token_id"] = eos_token_ids;
  return json.dump(2) + "\n";
}

absl::Status LlamaConfig::Validate() const {
  for (auto [name, value] :
       {std::pair{"vocab_size", vocab_size}, std::pair{"hidden_size", hidden_size},
        std::pair{"intermediate_size", intermediate_size},
        std::pair{"num_hidden_layers", num_hidden_layers},
        std::pair{"num_attention_heads", num_attention_heads},
        std::pair{"num_key_value_heads", num_key_value_heads}, std::pair{"head_dim", head_dim},
        std::pair{"max_position_embeddings", max_position_embeddings}}) {
    if (value <= 0 || value >= (1 << 24)) {
      return absl::InvalidArgumentError(absl::StrCat(name, " = ", value, " must be in [1, 2^24)"));
    }
  }
  if (num_attention_heads % num_key_value_heads != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_attention_heads = ", num_attention_heads,
                     " is not a multiple of num_key_value_heads = ", num_key_value_heads));
  }
  if (head_dim % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("head_dim = ", head_dim, " must be even"));
  }
  if (!(rms_norm_eps > 0)) return absl::InvalidArgumentError("rms_norm_eps must be > 0");
  if (!(rope_theta > 1)) return absl::InvalidArgumentError("rope_theta must be > 1");
  for (const int32_t id : eos_token_ids) {
    if (id < 0 || id >= vocab_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("eos_token_id ", id, " is outside the vocabulary"));
    }
  }
  return absl::OkStatus();
}

}  // namespace tandem
