#include "core/model/growing_cache_runner.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tandem {
namespace {

// Positions the plan's prefills and decodes touch.
int64_t PositionsNeeded(const StepPlan& plan) {
  int64_t needed = 0;
  for (const PrefillItem& item : plan.prefills) {
    needed = std::max<int64_t>(needed, item.end());
  }
  for (const DecodeItem& item : plan.decodes) {
    needed = std::max<int64_t>(needed, item.position + 1);
  }
  return needed;
}

// Concatenates zeros onto every layer's K and V along the position axis.
void GrowTo(int64_t positions, KvCache* cache) {
  const int64_t target = std::min(positions, cache->max_context());
  if (cache->num_layers() == 0 || cache->keys(0).size(2) >= target) return;
  for (int64_t layer = 0; layer < cache->num_layers(); ++layer) {
    for (at::Tensor* t : {&cache->keys(layer), &cache->values(layer)}) {
      *t = at::cat({*t, at::zeros({t->size(0), t->size(1), target - t->size(2), t->size(3)},
                                  t->options())},
                   2);
    }
  }
}

}  // namespace

GrowingCacheRunner::GrowingCacheRunner(ModelDescription description,
                                       std::unique_ptr<CausalLm> model,
                                       const KvCacheShape& shape, at::TensorOptions options)
    : inner_(std::move(description), std::move(model),
             std::make_unique<KvCache>(shape, options, /*allocated_positions=*/0),
             options.device()) {}

int64_t GrowingCacheRunner::allocated_positions() const {
  const KvCache& cache = inner_.cache();
  return cache.num_layers() == 0 ? 0 : cache.keys(0).size(2);
}

absl::StatusOr<StepOutput> GrowingCacheRunner::Step(const StepPlan& plan) {
  try {
    GrowTo(PositionsNeeded(plan), &inner_.cache());
  } catch (const std::exception& e) {
    return absl::ResourceExhaustedError(absl::StrCat("growing the KV cache failed: ", e.what()));
  }
  return inner_.Step(plan);
}

}  // namespace tandem
