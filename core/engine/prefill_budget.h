// How many prompt tokens a step may prefill while other sequences decode.
#ifndef TANDEM_CORE_ENGINE_PREFILL_BUDGET_H_
#define TANDEM_CORE_ENGINE_PREFILL_BUDGET_H_

#include <cstdint>

namespace tandem {

// Keeps the prefill part of a mixed step (prompt chunks plus decode rows)
// at about `stall_ratio` times its decode part, so a running stream's gap
// between tokens stays near (1 + stall_ratio) times its usual one, whatever
// the device, model or context length: after each mixed step, the budget
// becomes stall_ratio * decode time / (prefill time per token), clamped to
// [min_tokens, max_tokens] and averaged with the previous budget. With a
// prefill cost of a + b * tokens this converges to (stall_ratio * decode -
// a) / b (min_tokens when the fixed cost alone exceeds the allowance).
// Starts at min_tokens: nothing is known of the device yet.
// Threading: engine thread only (the scheduler owns it).
class PrefillBudget {
 public:
  PrefillBudget(int32_t min_tokens, int32_t max_tokens, double stall_ratio);

  int32_t tokens() const { return tokens_; }
  // A completed step that prefilled `prefill_tokens` (> 0) in
  // `prefill_seconds` and decoded its rows in `decode_seconds`.
  void Observe(int32_t prefill_tokens, double prefill_seconds, double decode_seconds);

 private:
  const int32_t min_tokens_, max_tokens_;
  const double stall_ratio_;
  int32_t tokens_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_PREFILL_BUDGET_H_
