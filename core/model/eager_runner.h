// ModelRunner for any CausalLm with plain LibTorch: runs a StepPlan
// synchronously (the CPU runner, and the naive GPU baseline).
#ifndef TANDEM_CORE_MODEL_EAGER_RUNNER_H_
#define TANDEM_CORE_MODEL_EAGER_RUNNER_H_

#include <memory>

#include <ATen/ATen.h>

#include "core/model/causal_lm.h"
#include "core/model/kv_cache.h"
#include "core/engine/model_runner.h"

namespace tandem {

// Owns the model, its weights and the KV slots. Each Step() prefills the
// plan's prompt chunks as one pack and decodes its running sequences as one
// batch (one forward for both where the model has one:
// CausalLm::PrefillAndDecode), samples every row on the device and copies
// the tokens back.
// Threading: engine thread only.
class EagerRunner : public ModelRunner {
 public:
  EagerRunner(ModelDescription description, std::unique_ptr<CausalLm> model,
              std::unique_ptr<KvCache> cache, at::Device device);

  const ModelDescription& description() const override { return description_; }
  absl::StatusOr<StepOutput> Step(const StepPlan& plan) override;

  KvCache& cache() { return *cache_; }
  const KvCache& cache() const { return *cache_; }

 private:
  ModelDescription description_;
  std::unique_ptr<CausalLm> model_;
  std::unique_ptr<KvCache> cache_;
  at::Device device_;
  double last_decode_seconds_ = 0;  // the latest decode-only step's forward
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_EAGER_RUNNER_H_
