// A request as the engine sees it: token ids and plain parameters.
#ifndef TANDEM_CORE_ENGINE_GENERATION_REQUEST_H_
#define TANDEM_CORE_ENGINE_GENERATION_REQUEST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/engine/token_sink.h"

namespace tandem {

struct SamplingParams {
  float temperature = 0.0f;  // 0 = greedy
  int32_t top_k = 0;         // 0 = no limit
  float top_p = 1.0f;        // in (0, 1]
  float min_p = 0.0f;        // in [0, 1]
  uint64_t seed = 0;         // the request's random stream
};

struct StoppingCriteria {
  int32_t max_tokens = 0;  // > 0 once validated (0 is resolved by the engine)
  std::vector<std::string> stop_strings;
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
};

struct GenerationRequest {
  std::string request_id;  // for logs; not interpreted
  std::vector<int32_t> prompt_token_ids;
  SamplingParams sampling;
  StoppingCriteria stopping;
  bool return_logprobs = false;
  absl::Time arrival = absl::Now();
  absl::Time deadline = absl::InfiniteFuture();
  std::shared_ptr<TokenSink> sink;  // required
};

// The stop strings a client may send; the front ends check it (a chat
// template's own stop strings come on top).
inline constexpr int32_t kMaxClientStopStrings = 16;

// Limits a request is validated against.
struct RequestLimits {
  int32_t vocab_size = 0;
  int32_t max_context = 0;  // prompt + completion tokens
  // A client's and a chat template's own.
  int32_t max_stop_strings = 2 * kMaxClientStopStrings;
  int32_t max_stop_string_bytes = 256;
  int32_t max_stop_token_ids = 16;
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_GENERATION_REQUEST_H_
