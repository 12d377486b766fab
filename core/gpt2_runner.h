// ModelRunner for GPT-2 with LibTorch: runs a StepPlan synchronously.
#ifndef TANDEM_CORE_GPT2_RUNNER_H_
#define TANDEM_CORE_GPT2_RUNNER_H_

#include <memory>

#include <ATen/ATen.h>

#include "core/gpt2_model.h"
#include "core/kv_cache.h"
#include "core/model_runner.h"

namespace tandem {

// Owns the model, its weights and the KV slots. Each Step() prefills the
// plan's prompts one by one, decodes its running sequences as one batch,
// samples every row on the device and copies the tokens back.
// Threading: engine thread only.
class Gpt2Runner : public ModelRunner {
 public:
  Gpt2Runner(ModelDescription description, std::unique_ptr<Gpt2Model> model,
             std::unique_ptr<KvCache> cache, at::Device device);

  const ModelDescription& description() const override { return description_; }
  absl::StatusOr<StepOutput> Step(const StepPlan& plan) override;

  Gpt2Model& model() { return *model_; }
  KvCache& cache() { return *cache_; }

 private:
  ModelDescription description_;
  std::unique_ptr<Gpt2Model> model_;
  std::unique_ptr<KvCache> cache_;
  at::Device device_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_GPT2_RUNNER_H_
