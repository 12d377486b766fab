// How many prompt tokens a step may prefill while other sequences decode.
#ifndef TANDEM_CORE_ENGINE_PREFILL_BUDGET_H_
#define TANDEM_CORE_ENGINE_PREFILL_BUDGET_H_

#include <cstdint>

namespace tandem {

// Keeps a mixed step (prompt chunks plus decode rows) at about (1 +
// stall_ratio) times the reference period, the longer of the recent
// decode-only steps' period (the gap between tokens running streams see)
// and the step's own decode time, whatever the device, model, batch or
// context length. The prefill cost is modelled as a + b * tokens: a, the
// fixed cost of a prefill step, is the runner's (measured at start-up, 0 if
// unknown); b is learned from each mixed step, so a long prompt's growing
// attention cost is followed. The budget is the tokens that fit the
// allowance, ((1 + stall_ratio) * reference - decode time - a) / b, but at
// least a / b (a chunk whose own work is smaller than the fixed cost it
// pays wastes the stall it causes) and min_tokens, at most max_tokens; it
// at most doubles per step. Until a decode-only step has been seen (a burst
// at an idle engine), the reference is the mixed steps' own period, which
// lets the budget grow: nobody is being stalled yet; the same after the
// engine was idle (Restart), as the earlier reference is stale by then.
// Starts at min_tokens.
// Threading: engine thread only (the scheduler owns it).
class PrefillBudget {
 public:
  PrefillBudget(int32_t min_tokens, int32_t max_tokens, double stall_ratio,
                double fixed_seconds = 0);

  int32_t tokens() const { return tokens_; }
  // The engine was idle: forget the reference period.
  void Restart() { reference_ = bootstrap_ = 0; }
  // A completed step with decode rows: it prefilled `prefill_tokens` (0 for
  // a decode-only step) in `prefill_seconds` and decoded in
  // `decode_seconds`; `period_seconds` passed since the previous step
  // completed.
  void Observe(int32_t prefill_tokens, double prefill_seconds, double decode_seconds,
               double period_seconds);

 private:
  const int32_t min_tokens_, max_tokens_;
  const double stall_ratio_;
  const double fixed_seconds_;  // a
  int32_t tokens_;
  double reference_ = 0;  // moving average of decode-only periods; 0: none yet
  double bootstrap_ = 0;  // the same of mixed steps, until then
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_PREFILL_BUDGET_H_
