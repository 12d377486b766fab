// One model family (an architecture): how to read its checkpoints and
// tokenizer, and how to write random checkpoints of its sizes. Adding a
// family is a new implementation of this interface, registered in
// model_families.cc; nothing outside core/model/ and core/text/ changes.
#ifndef TANDEM_CORE_MODEL_MODEL_FAMILY_H_
#define TANDEM_CORE_MODEL_MODEL_FAMILY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/model/causal_lm.h"
#include "core/model/random_checkpoint.h"
#include "core/text/chat_template.h"
#include "core/text/tokenizer.h"

namespace tandem {

// Where the weights go and which decode implementation is wanted.
struct WeightPlacement {
  at::ScalarType dtype = at::kFloat;
  at::Device device = at::kCPU;
  // CUDA builds: the family's fused CUDA decoder, if it has one (the CUDA
  // runner's path). Otherwise the plain ATen model.
  bool fused_cuda_decode = false;
};

// What a family hands the loader.
struct FamilyModel {
  std::string name;          // e.g. the checkpoint directory's name
  std::string architecture;  // the family's model_type
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<ChatTemplate> chat_template;  // how conversations become prompts
  std::unique_ptr<CausalLm> model;  // owns the weights, on the placement's device
  int32_t vocab_size = 0;     // rows of the LM head
  int32_t max_positions = 0;  // the longest context the model allows
  int32_t hidden_size = 0;
  int32_t num_heads = 0;
  std::vector<int32_t> eos_token_ids;  // from the checkpoint's config
  int64_t weight_bytes = 0;
};

// Implementations are stateless singletons; every method is thread-safe.
class ModelFamily {
 public:
  virtual ~ModelFamily() = default;

  // config.json's "model_type" of this family's checkpoints.
  virtual absl::string_view model_type() const = 0;
  // Sizes of random checkpoints; the first is the embedded default's.
  virtual std::vector<std::string> presets() const = 0;

  // Reads a Hugging Face checkpoint directory. Errors name the file and the
  // field or tensor at fault.
  virtual absl::StatusOr<FamilyModel> Load(const std::string& dir,
                                           const WeightPlacement& placement) const = 0;
  // Random weights of `preset` from `seed`, with the family's real tokenizer
  // (compiled in): the embedded default model.
  virtual absl::StatusOr<FamilyModel> LoadRandom(absl::string_view preset, uint64_t seed,
                                                 const WeightPlacement& placement) const = 0;
  // The tokenizer of `dir`; the compiled-in one when `dir` is empty.
  virtual absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(
      const std::string& dir) const = 0;
  // Writes a random checkpoint of `preset` (changed by options.overrides,
  // from options.seed) in the Hugging Face layout, with the weights stored
  // in `dtype`.
  virtual absl::Status WriteRandom(const std::string& dir, absl::string_view preset,
                                   const RandomCheckpointOptions& options,
                                   at::ScalarType dtype) const = 0;
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_MODEL_FAMILY_H_
