// GPT-2 hyper-parameters, as in a Hugging Face config.json.
#ifndef TANDEM_CORE_MODEL_GPT2_GPT2_CONFIG_H_
#define TANDEM_CORE_MODEL_GPT2_GPT2_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tandem {

struct Gpt2Config {
  int32_t vocab_size = 50257;
  int32_t n_positions = 1024;
  int32_t n_embd = 768;
  int32_t n_layer = 12;
  int32_t n_head = 12;
  int32_t n_inner = 0;  // 0 means 4 * n_embd
  double layer_norm_epsilon = 1e-5;
  int32_t bos_token_id = 50256;
  int32_t eos_token_id = 50256;
  bool tie_word_embeddings = true;

  int32_t inner_size() const { return n_inner > 0 ? n_inner : 4 * n_embd; }
  int32_t head_dim() const { return n_embd / n_head; }

  // Parses config.json text; `source` names the file in error messages.
  static absl::StatusOr<Gpt2Config> FromJson(absl::string_view json,
                                             absl::string_view source);
  static absl::StatusOr<Gpt2Config> FromFile(const std::string& path);
  // "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", or "tiny" (for tests).
  static absl::StatusOr<Gpt2Config> Preset(absl::string_view name);
  // config.json text that transformers' GPT2Config accepts.
  std::string ToJson() const;
  // Checks the dimensions are usable; names the offending field.
  absl::Status Validate() const;
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_GPT2_GPT2_CONFIG_H_
