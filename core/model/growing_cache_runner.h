// The naive baseline behind --kv_cache=dynamic, kept for the ablation: a KV
// cache that starts empty and is lengthened by concatenation whenever a step
// needs more positions, decoded eagerly with a host read every step, as a
// plain decode loop does.
#ifndef TANDEM_CORE_MODEL_GROWING_CACHE_RUNNER_H_
#define TANDEM_CORE_MODEL_GROWING_CACHE_RUNNER_H_

#include <cstdint>
#include <memory>

#include <ATen/ATen.h>

#include "core/engine/model_runner.h"
#include "core/model/causal_lm.h"
#include "core/model/eager_runner.h"
#include "core/model/kv_cache.h"

namespace tandem {

// Owns an EagerRunner over a cache allocated with 0 positions. Before each
// step it grows every layer's K and V to the positions the step needs
// (copying the whole cache, never shrinking). Threading: engine thread only.
class GrowingCacheRunner : public ModelRunner {
 public:
  // `shape` at full context; nothing is allocated until the first step.
  GrowingCacheRunner(ModelDescription description, std::unique_ptr<CausalLm> model,
                     const KvCacheShape& shape, at::TensorOptions options);

  const ModelDescription& description() const override { return inner_.description(); }
  absl::StatusOr<StepOutput> Step(const StepPlan& plan) override;

  // Positions currently allocated per slot.
  int64_t allocated_positions() const;
  KvCache& cache() { return inner_.cache(); }

 private:
  EagerRunner inner_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_GROWING_CACHE_RUNNER_H_
