#include "core/engine/prefill_budget.h"

#include <algorithm>
#include <cmath>

namespace tandem {

PrefillBudget::PrefillBudget(int32_t min_tokens, int32_t max_tokens, double stall_ratio,
                             double fixed_seconds)
    : min_tokens_(std::max(1, std::min(min_tokens, max_tokens))),
      max_tokens_(std::max(1, max_tokens)),
      stall_ratio_(stall_ratio),
      fixed_seconds_(std::max(0.0, fixed_seconds)),
      tokens_(min_tokens_) {}

namespace {
double Average(double average, double sample) {
  return average == 0 ? sample : 0.8 * average + 0.2 * sample;
}
}  // namespace

void PrefillBudget::Observe(int32_t prefill_tokens, double prefill_seconds,
                            double decode_seconds, double period_seconds) {
  if (period_seconds <= 0) return;
  if (prefill_tokens <= 0) {
    reference_ = Average(reference_, period_seconds);
    return;
  }
  if (prefill_seconds <= 0) return;
  if (reference_ == 0) bootstrap_ = Average(bootstrap_, period_seconds);
  // This step's cost per token beyond the fixed cost (at least a tenth of
  // its whole cost per token, should the fixed cost be overstated).
  const double y = prefill_seconds, x = prefill_tokens;
  const double a = std::min(fixed_seconds_, 0.9 * y);
  const double b = (y - a) / x;
  const double reference =
      std::max(reference_ > 0 ? reference_ : bootstrap_, std::max(0.0, decode_seconds));
  const double allowance = (1 + stall_ratio_) * reference - std::max(0.0, decode_seconds) - a;
  const double target = std::max(allowance / b, a / b);
  const double next = std::min(target, 2.0 * tokens_);
  tokens_ = static_cast<int32_t>(
      std::lround(std::clamp<double>(next, min_tokens_, max_tokens_)));
}

}  // namespace tandem
