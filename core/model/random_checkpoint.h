// Random checkpoints in the Hugging Face layout, for tests and benchmarks
// (no weights can be downloaded). Torch-free header.
#ifndef TANDEM_CORE_MODEL_RANDOM_CHECKPOINT_H_
#define TANDEM_CORE_MODEL_RANDOM_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/model/model_options.h"

namespace tandem {

// Changes to a preset's shape; 0 keeps the preset's value.
struct ShapeOverrides {
  int32_t num_layers = 0;
  int32_t hidden_size = 0;
  int32_t num_heads = 0;
  int32_t max_positions = 0;
  int32_t vocab_size = 0;  // the last id becomes the end-of-text id (tests)
};

struct RandomCheckpointOptions {
  std::string architecture;  // a model_type; empty: the default family
  std::string preset;        // a size of that family; empty: its default
  ShapeOverrides overrides;
  uint64_t seed = 1;
  DType dtype = DType::kFloat32;  // how the weights are stored (auto: float32)
  // > 0: the weights as shards of at most this many bytes, with
  // model.safetensors.index.json (as large checkpoints come); else one file.
  int64_t max_shard_bytes = 0;
  // Families whose tokenizer is not compiled in (Llama, Qwen): the directory
  // with the real tokenizer.json and tokenizer_config.json to copy; empty:
  // the copy scripts/install-deps.sh fetched into third_party/.
  std::string tokenizer_dir;
};

// Writes config.json, the weights and the tokenizer files into `dir`
// (created if missing). INVALID_ARGUMENT / NOT_FOUND name an unknown
// architecture or preset and list the known ones.
absl::Status WriteRandomCheckpoint(const std::string& dir, const RandomCheckpointOptions& options);

// "architecture: preset, preset, ..." for each family, for --help texts.
std::vector<std::string> DescribeArchitectures();
// The preset WriteRandomCheckpoint would use for `options` (resolving the
// empty defaults), e.g. to name a directory after it.
std::string ResolvedPreset(const RandomCheckpointOptions& options);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_RANDOM_CHECKPOINT_H_
