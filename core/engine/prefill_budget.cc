#include "core/engine/prefill_budget.h"

#include <algorithm>
#include <cmath>

namespace tandem {

PrefillBudget::PrefillBudget(int32_t min_tokens, int32_t max_tokens, double stall_ratio)
    : min_tokens_(std::max(1, std::min(min_tokens, max_tokens))),
      max_tokens_(std::max(1, max_tokens)),
      stall_ratio_(stall_ratio),
      tokens_(min_tokens_) {}

void PrefillBudget::Observe(int32_t prefill_tokens, double prefill_seconds,
                            double decode_seconds) {
  if (prefill_tokens <= 0 || prefill_seconds <= 0 || decode_seconds <= 0) return;
  const double per_token = prefill_seconds / prefill_tokens;
  const double target = stall_ratio_ * decode_seconds / per_token;
  const double next = 0.5 * (tokens_ + std::clamp<double>(target, min_tokens_, max_tokens_));
  tokens_ = static_cast<int32_t>(std::lround(next));
}

}  // namespace tandem
