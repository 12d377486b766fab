// Hooks through which the engine reports what it did (metrics, logs).
#ifndef TANDEM_CORE_ENGINE_ENGINE_OBSERVER_H_
#define TANDEM_CORE_ENGINE_ENGINE_OBSERVER_H_

#include "core/engine/step_plan.h"
#include "core/engine/token_sink.h"

namespace tandem {

struct StepStats {
  int prefill_sequences = 0;
  int prefill_tokens = 0;
  int prefill_partial_chunks = 0;  // prompt chunks that did not end their prompt
  int prefill_budget = 0;  // prompt tokens the next step may prefill while sequences decode
  int decode_sequences = 0;
  int generated_tokens = 0;  // tokens accepted (excludes dropped extra rows)
  StepTimings timings;
};

struct EngineLoad {
  int running = 0;     // sequences holding a KV slot
  int waiting = 0;     // accepted, not yet admitted
  int slots_total = 0;
};

// Threading: every method is called on the engine thread and must be cheap
// and non-blocking. Default implementations do nothing.
class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  virtual void OnStep(const StepStats& /*stats*/) {}
  virtual void OnLoad(const EngineLoad& /*load*/) {}
  virtual void OnRequestFinished(const GenerationSummary& /*summary*/) {}
  // Time between two consecutive tokens of one sequence.
  virtual void OnInterTokenLatency(double /*seconds*/) {}
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_ENGINE_OBSERVER_H_
