// Checks a request before it is queued.
#ifndef TANDEM_CORE_ENGINE_REQUEST_VALIDATOR_H_
#define TANDEM_CORE_ENGINE_REQUEST_VALIDATOR_H_

#include "absl/status/status.h"
#include "core/engine/generation_request.h"

namespace tandem {

// Returns INVALID_ARGUMENT naming the offending field when `request` cannot
// be served within `limits`. On success resolves defaults in place:
// max_tokens 0 becomes "the rest of the context window", top_p 0 becomes 1.
absl::Status ValidateRequest(const RequestLimits& limits,
                             GenerationRequest* request);

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_REQUEST_VALIDATOR_H_
