// Turns one sequence's sampled tokens into the chunks its sink receives, and
// decides when the sequence is done (the one stop rule).
#ifndef TANDEM_CORE_ENGINE_SEQUENCE_OUTPUT_H_
#define TANDEM_CORE_ENGINE_SEQUENCE_OUTPUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "core/engine/finish_reason.h"
#include "core/engine/generation_request.h"
#include "core/engine/step_plan.h"
#include "core/engine/token_sink.h"
#include "core/text/incremental_detokenizer.h"
#include "core/text/stop_string_matcher.h"
#include "core/text/tokenizer.h"

namespace tandem {

// The stop rule, applied on the host to every sampled token, in this order:
// a stop string completed in the decoded text; an EOS id (unless
// ignore_eos) or one of the request's stop_token_ids; max_tokens reached.
// A stop token's own text is never returned, and text that could still
// become a stop string (or an incomplete UTF-8 character) is held back.
//
// Owned by its Sequence; engine thread only. `request`, `tokenizer` and
// `eos_token_ids` must outlive it.
class SequenceOutput {
 public:
  struct Update {
    GenerationChunk chunk;               // text, the token, its logprob
    std::optional<FinishReason> finish;  // set when the sequence is done
    std::string stop_sequence;           // the stop string that matched
    // Time since the previous token; absent for the first token.
    std::optional<double> inter_token_seconds;
  };

  SequenceOutput(const GenerationRequest* request, const Tokenizer* tokenizer,
                 const std::vector<int32_t>* eos_token_ids);

  // Appends a sampled token at time `now`.
  Update Accept(const SampledToken& sampled, absl::Time now);
  // The sequence was interrupted (cancel, deadline, error, shutdown): the
  // text held back for stop strings or UTF-8, released now.
  std::string ReleaseHeldBack();
  // The sequence got its KV slot at `now` (ends its queue time).
  void MarkStarted(absl::Time now) { started_ = now; }
  // The final summary, timings measured from the request's arrival.
  GenerationSummary Summary(FinishReason reason, std::string stop_sequence,
                            absl::Status error, absl::Time now) const;

  const std::vector<int32_t>& generated() const { return generated_; }

 private:
  bool IsStopToken(int32_t token) const;

  const GenerationRequest& request_;
  const Tokenizer& tokenizer_;
  const std::vector<int32_t>& eos_token_ids_;
  std::vector<int32_t> generated_;
  IncrementalDetokenizer detokenizer_;
  StopStringMatcher stop_matcher_;
  absl::Time started_ = absl::InfinitePast();
  absl::Time first_token_ = absl::InfinitePast();
  absl::Time last_token_ = absl::InfinitePast();
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_SEQUENCE_OUTPUT_H_
