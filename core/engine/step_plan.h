// What one engine step computes, and what it returns. Plain data, no tensors:
// the scheduler builds a StepPlan, the model runner turns it into launches.
#ifndef TANDEM_CORE_ENGINE_STEP_PLAN_H_
#define TANDEM_CORE_ENGINE_STEP_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/engine/generation_request.h"

namespace tandem {

// Sampling inputs shared by prefill and decode rows. The random stream of a
// row is a function of (seed, rng_offset) only, so a request's tokens do not
// depend on its batch mates.
struct RowSampling {
  SamplingParams params;
  int32_t rng_offset = 0;  // index of the token being sampled (0 = first)
};

// Runs one chunk of a prompt through the model: `tokens` are the prompt's
// tokens at positions [start, start + tokens.size()); their K/V are written
// into `slot` there, attending to the slot's positions before `start` (the
// earlier chunks). The chunk that ends the prompt (`last_chunk`) samples the
// first generated token and sets up the slot's decode state; an earlier
// chunk's sampled row is meaningless and ignored. All of a step's chunks run
// as one packed forward.
struct PrefillItem {
  uint64_t sequence_id = 0;
  int32_t slot = -1;
  absl::Span<const int32_t> tokens;  // owned by the scheduler's sequence;
                                     // valid until the step completes
  int32_t start = 0;
  bool last_chunk = true;
  RowSampling sampling;
  int32_t end() const { return start + static_cast<int32_t>(tokens.size()); }
};

// Feeds one token at `position` to the sequence in `slot` (appending its K/V)
// and samples the next token. A runner that reads tokens on the device takes
// the token, position and sampling offset from the slot's state there; in
// its plans `token` and `sampling.rng_offset` are the host's last known
// values (a step behind; token -1 before the first token reached the host).
struct DecodeItem {
  uint64_t sequence_id = 0;
  int32_t slot = -1;
  int32_t token = 0;
  int32_t position = 0;
  RowSampling sampling;
};

struct StepPlan {
  std::vector<PrefillItem> prefills;
  std::vector<DecodeItem> decodes;
  // The engine had nothing to do before this step, so the device idle time
  // before it is not a pipeline gap and is not counted.
  bool follows_idle = false;
  bool empty() const { return prefills.empty() && decodes.empty(); }
  int32_t prefill_tokens() const {
    int32_t n = 0;
    for (const PrefillItem& item : prefills) n += static_cast<int32_t>(item.tokens.size());
    return n;
  }
};

struct SampledToken {
  int32_t token = 0;
  float logprob = 0;  // log-probability under the sampling distribution
};

// Per-step timings, for metrics. On the CPU gpu_idle is 0 and gpu_busy is the
// step's wall time.
struct StepTimings {
  double wall_seconds = 0;
  double prefill_seconds = 0;  // part of the wall time spent in prefills
  double decode_seconds = 0;   // part of the wall time spent in the decode batch
  double gpu_busy_seconds = 0;
  double gpu_idle_seconds = 0;   // device idle between the previous step and this one
  double host_wait_seconds = 0;  // engine thread blocked waiting for the device
};

// Results in plan order: prefill_tokens[i] belongs to plan.prefills[i],
// decode_tokens[j] to plan.decodes[j]. Whether a token ends its sequence is
// decided on the host, by the scheduler (SequenceOutput), never here.
struct StepOutput {
  std::vector<SampledToken> prefill_tokens;
  std::vector<SampledToken> decode_tokens;
  StepTimings timings;
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_STEP_PLAN_H_
