// Hyper-parameters of the Llama-style decoders, as in a Hugging Face
// config.json: Llama 3.x (LlamaForCausalLM), Qwen2/2.5 (Qwen2ForCausalLM) and
// Qwen3 (Qwen3ForCausalLM). One decoder; the differences are fields.
#ifndef TANDEM_CORE_MODEL_LLAMA_LLAMA_CONFIG_H_
#define TANDEM_CORE_MODEL_LLAMA_LLAMA_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tandem {

// rope_scaling of type "llama3" (Llama 3.1+): long wavelengths are divided
// by `factor`, short ones kept, the band between interpolated.
struct Llama3RopeScaling {
  double factor = 0;  // 0: no scaling
  double low_freq_factor = 1;
  double high_freq_factor = 4;
  int32_t original_max_position_embeddings = 8192;
};

// A plain value; copyable. Field names follow config.json.
struct LlamaConfig {
  std::string model_type = "llama";  // "llama", "qwen2" or "qwen3"
  int32_t vocab_size = 0;
  int32_t hidden_size = 0;
  int32_t intermediate_size = 0;
  int32_t num_hidden_layers = 0;
  int32_t num_attention_heads = 0;
  int32_t num_key_value_heads = 0;  // GQA: query heads per K/V head = heads / kv heads
  int32_t head_dim = 0;             // hidden_size / heads unless config.json says
  int32_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-5;
  double rope_theta = 10000;
  Llama3RopeScaling rope_scaling;
  bool attention_bias = false;  // biases on q/k/v (Qwen2: always)
  bool qk_norm = false;         // per-head RMSNorm of q and k before RoPE (Qwen3)
  bool tie_word_embeddings = false;
  int32_t bos_token_id = -1;            // -1: none
  std::vector<int32_t> eos_token_ids;  // config.json's eos_token_id (int or list)

  // The architectures entry transformers expects for model_type.
  std::string architecture() const;
  int32_t kv_groups() const { return num_attention_heads / num_key_value_heads; }

  // Parses config.json text; `source` names the file in errors. Unknown
  // model types, rope_scaling types other than llama3, sliding windows and
  // activations other than silu are errors naming the field.
  static absl::StatusOr<LlamaConfig> FromJson(absl::string_view json, absl::string_view source);
  static absl::StatusOr<LlamaConfig> FromFile(const std::string& path);
  // generation_config.json's eos_token_id (an id or a list; empty when
  // absent), parsed as config.json's is.
  static absl::StatusOr<std::vector<int32_t>> GenerationEos(absl::string_view json,
                                                            absl::string_view source);
  // A named size of `model_type`: "tiny" (tests) or a real model's shape
  // ("llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b", "qwen2.5-0.5b",
  // "qwen2.5-1.5b", "qwen3-0.6b", "qwen3-1.7b").
  static absl::StatusOr<LlamaConfig> Preset(absl::string_view model_type, absl::string_view name);
  static std::vector<std::string> PresetNames(absl::string_view model_type);
  // config.json text transformers' config class for model_type accepts.
  std::string ToJson() const;
  // Checks the dimensions; names the offending field.
  absl::Status Validate() const;
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_LLAMA_LLAMA_CONFIG_H_
