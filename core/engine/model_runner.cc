#include "core/engine/model_runner.h"

namespace tandem {

absl::Status ModelRunner::Launch(const StepPlan& plan) {
  launched_.push_back(Step(plan));
  return absl::OkStatus();
}

absl::StatusOr<StepOutput> ModelRunner::Collect() {
  if (launched_.empty()) return absl::FailedPreconditionError("no step in flight");
  absl::StatusOr<StepOutput> output = std::move(launched_.front());
  launched_.pop_front();
  return output;
}

}  // namespace tandem
