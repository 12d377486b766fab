// Checks a request before it is queued.
#ifndef TANDEM_CORE_ENGINE_REQUEST_VALIDATOR_H_
#define TANDEM_CORE_ENGINE_REQUEST_VALIDATOR_H_

#include <string>

#include "absl/status/status.h"
#include "core/engine/generation_request.h"

namespace tandem {

// Returns INVALID_ARGUMENT naming the offending field when `request` cannot
// be served within `limits`. On success resolves defaults in place:
// max_tokens 0 becomes "the rest of the context window", top_p 0 becomes 1.
absl::Status ValidateRequest(const RequestLimits& limits,
                             GenerationRequest* request);

// The GenerationRequest field a ValidateRequest error is about: "prompt"
// (prompt_token_ids), "max_tokens", "stop_strings", "stop_token_ids",
// "temperature", "top_k", "top_p" or "min_p"; "" for any other status. Front
// ends name their own field for it.
std::string InvalidField(const absl::Status& status);

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_REQUEST_VALIDATOR_H_
