// The border between the plain-C++ engine and the tensor code.
#ifndef TANDEM_CORE_MODEL_RUNNER_H_
#define TANDEM_CORE_MODEL_RUNNER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/step_plan.h"

namespace tandem {

struct ModelDescription {
  std::string name;
  std::string architecture;  // "gpt2"
  int32_t vocab_size = 0;
  int32_t max_context = 0;  // positions per KV slot
  int32_t num_slots = 0;
  int32_t num_layers = 0;
  int32_t hidden_size = 0;
  int32_t num_heads = 0;
  std::string dtype;   // "float32", "float16", "bfloat16"
  std::string device;  // "cpu", "cuda:0"
  int64_t weight_bytes = 0;
  int64_t kv_cache_bytes = 0;
};

// Owns every tensor (weights, KV slots, buffers). Threading: used only by the
// engine thread after construction.
class ModelRunner {
 public:
  virtual ~ModelRunner() = default;
  virtual const ModelDescription& description() const = 0;
  // Runs one step. Slots named in the plan must be owned by the sequences
  // that name them; a prefill overwrites whatever its slot held before.
  virtual absl::StatusOr<StepOutput> Step(const StepPlan& plan) = 0;
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_RUNNER_H_
