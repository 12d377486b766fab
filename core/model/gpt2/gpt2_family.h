// GPT-2 (model_type "gpt2", GPT2LMHeadModel checkpoints) as a ModelFamily.
#ifndef TANDEM_CORE_MODEL_GPT2_GPT2_FAMILY_H_
#define TANDEM_CORE_MODEL_GPT2_GPT2_FAMILY_H_

#include <memory>
#include <string>
#include <vector>

#include "core/model/gpt2/gpt2_config.h"
#include "core/model/model_family.h"

namespace tandem {

// Checkpoints: config.json, model.safetensors (names with or without
// "transformer.", Conv1D layout, tied or explicit lm_head), and vocab.json +
// merges.txt or a byte-level BPE tokenizer.json. EOS: config.json's
// eos_token_id. Presets: gpt2 (the embedded default), gpt2-medium,
// gpt2-large, gpt2-xl, tiny.
class Gpt2Family : public ModelFamily {
 public:
  absl::string_view model_type() const override { return "gpt2"; }
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
};

// Writes a checkpoint of `config` with random weights from `seed` (stored in
// `dtype`) in the Hugging Face layout: config.json, model.safetensors (or
// shards of at most max_shard_bytes with their index), vocab.json and
// merges.txt (GPT-2's). For tests that need a custom shape.
absl::Status WriteRandomGpt2Checkpoint(const std::string& dir, const Gpt2Config& config,
                                       uint64_t seed, at::ScalarType dtype,
                                       int64_t max_shard_bytes = 0);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_GPT2_GPT2_FAMILY_H_
