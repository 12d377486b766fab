// The border between the plain-C++ engine and the tensor code.
#ifndef TANDEM_CORE_ENGINE_MODEL_RUNNER_H_
#define TANDEM_CORE_ENGINE_MODEL_RUNNER_H_

#include <deque>

#include "absl/status/statusor.h"
#include "core/engine/model_description.h"
#include "core/engine/step_plan.h"

namespace tandem {

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

#endif  // TANDEM_CORE_ENGINE_MODEL_RUNNER_H_
