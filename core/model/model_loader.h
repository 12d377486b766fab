// Builds the served model (runner + tokenizer) of whatever family the
// checkpoint is, or the embedded default. Torch-free header: the server, the
// CLI and the benchmark include it and never name a family.
#ifndef TANDEM_CORE_MODEL_MODEL_LOADER_H_
#define TANDEM_CORE_MODEL_MODEL_LOADER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/engine/model_runner.h"
#include "core/model/model_options.h"
#include "core/text/chat_template.h"
#include "core/text/tokenizer.h"

namespace tandem {

// "A model" as the engine and the server see it: its description (config,
// EOS ids: runner->description()), its tokenizer, its chat template and its
// runner.
struct LoadedModel {
  std::unique_ptr<ModelRunner> runner;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<ChatTemplate> chat_template;
};

// Picks the family from config.json (the default family for the embedded
// model), loads the weights on the resolved device and dtype, checks that
// the KV slots fit, and builds the runner: CudaRunner on a CUDA device,
// EagerRunner on the CPU, GrowingCacheRunner for --kv_cache=dynamic. Logs
// what it loaded. Errors name the flag, file, field or tensor at fault;
// RESOURCE_EXHAUSTED when the weights or the KV cache do not fit in memory.
absl::StatusOr<LoadedModel> LoadModel(const ModelOptions& options);

// Loads only the tokenizer of `model_dir` (the embedded one when empty).
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& model_dir);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_MODEL_LOADER_H_
