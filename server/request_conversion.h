// Conversions between the public API (tandem.v1 protos) and the engine's types.
#ifndef TANDEM_SERVER_REQUEST_CONVERSION_H_
#define TANDEM_SERVER_REQUEST_CONVERSION_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/engine/generation_request.h"
#include "core/text/chat_template.h"
#include "core/text/tokenizer.h"
#include "core/engine/token_sink.h"
#include "tandem/v1/generation.pb.h"

namespace tandem {

// What a request may hold, checked before any work is done on it.
struct WireLimits {
  size_t max_prompt_bytes = 128 * 1024;  // prompt text and Tokenize text
  size_t max_request_id_bytes = 128;
  // stopping.stop; a chat template's own stop strings come on top.
  int max_stop_strings = kMaxClientStopStrings;
};

// Checks the sizes in `limits`, tokenizes the prompt (rendering `messages`
// with `chat_template` first) and copies every field. INVALID_ARGUMENT
// (naming the field and the limit) when a size is over its limit, the
// request has not exactly one of prompt / prompt_token_ids / messages, an
// empty prompt, or a message with another role than system, user or
// assistant. Other limits (vocabulary, context, sampling ranges)
// are checked later by the engine. Picks a random seed when the request has
// none.
absl::StatusOr<GenerationRequest> ToGenerationRequest(const v1::GenerateRequest& proto,
                                                      const Tokenizer& tokenizer,
                                                      const ChatTemplate& chat_template,
                                                      const WireLimits& limits);
// INVALID_ARGUMENT naming `field` when `bytes` exceeds `limit`.
absl::Status CheckSize(const char* field, size_t bytes, size_t limit);

v1::FinishReason ToProto(FinishReason reason);
// Fills the last response of a stream from the engine's summary.
void FillSummary(const GenerationSummary& summary, v1::GenerateResponse* response);
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace tandem

#endif  // TANDEM_SERVER_REQUEST_CONVERSION_H_
