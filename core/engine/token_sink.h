// Where a request's output goes: one sink per request.
#ifndef TANDEM_CORE_ENGINE_TOKEN_SINK_H_
#define TANDEM_CORE_ENGINE_TOKEN_SINK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/engine/finish_reason.h"

namespace tandem {

// Output of one engine step for one request.
struct GenerationChunk {
  std::string text;                // whole UTF-8 characters only
  std::vector<int32_t> token_ids;  // tokens sampled since the last chunk
  std::vector<float> logprobs;     // one per token when requested, else empty
};

// Sent once, last, for every accepted request.
struct GenerationSummary {
  FinishReason reason = FinishReason::kStop;
  std::string stop_sequence;  // the stop string that matched; empty for EOS or a stop id
  // Set when reason == kError, and for kShutdown when the request had not
  // started or had generated nothing yet (UNAVAILABLE: retry elsewhere).
  absl::Status error;
  int prompt_tokens = 0;
  int completion_tokens = 0;
  double queue_seconds = 0;  // arrival -> prefill start
  double time_to_first_token_seconds = 0;
  double total_seconds = 0;
};

// Receives a request's output. Threading: both methods are called on one
// thread, in order (an engine delivery thread, see SinkDispatcher, or the
// engine thread), and must not block (queue the data and return).
// After OnFinish no further call is made. The engine holds the sink through a
// shared_ptr, so it outlives the RPC that created it if it has to, and its
// last reference may drop on the thread that made its last call.
class TokenSink {
 public:
  virtual ~TokenSink() = default;
  virtual void OnChunk(GenerationChunk chunk) = 0;
  virtual void OnFinish(const GenerationSummary& summary) = 0;
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_TOKEN_SINK_H_
