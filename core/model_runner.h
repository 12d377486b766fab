// The border between the plain-C++ engine and the tensor code.
#ifndef TANDEM_CORE_MODEL_RUNNER_H_
#define TANDEM_CORE_MODEL_RUNNER_H_

#include <cstdint>
#include <deque>
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
  int32_t eos_token_id = -1;
  std::string runner;  // e.g. "eager", "cuda double-buffered + graphs"
};

// Owns every tensor (weights, KV slots, buffers). Threading: used only by the
// engine thread after construction.
class ModelRunner {
 public:
  virtual ~ModelRunner() = default;
  virtual const ModelDescription& description() const = 0;
  // Runs one step and waits for it. Slots named in the plan must be owned by
  // the sequences that name them; a prefill overwrites whatever its slot held.
  virtual absl::StatusOr<StepOutput> Step(const StepPlan& plan) = 0;

  // Pipelined use: Launch() starts a step without waiting for it; Collect()
  // waits for the oldest launched step and returns its output. At most two
  // steps are in flight. This default runs the step inside Launch().
  virtual absl::Status Launch(const StepPlan& plan);
  virtual absl::StatusOr<StepOutput> Collect();
  // True when decode inputs (last token, position, sampling offset) live on
  // the device, so a step can be launched before the previous one's tokens
  // reach the host; DecodeItem's token/position/rng_offset are then ignored.
  virtual bool reads_tokens_on_device() const { return false; }

 private:
  std::deque<absl::StatusOr<StepOutput>> launched_;  // default Launch/Collect
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_RUNNER_H_
