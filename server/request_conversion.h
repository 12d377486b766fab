// Conversions between the public API (tandem.v1 protos) and the engine's types.
#ifndef TANDEM_SERVER_REQUEST_CONVERSION_H_
#define TANDEM_SERVER_REQUEST_CONVERSION_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/engine/generation_request.h"
#include "core/text/tokenizer.h"
#include "core/engine/token_sink.h"
#include "tandem/v1/generation.pb.h"

namespace tandem {

// Tokenizes the prompt and copies every field. INVALID_ARGUMENT when the
// request has both or neither of prompt / prompt_token_ids, or an empty
// prompt. Limits (vocabulary, context, sampling ranges) are checked later
// by the engine. Picks a random seed when the request has none.
absl::StatusOr<GenerationRequest> ToGenerationRequest(
    const v1::GenerateRequest& proto, const Tokenizer& tokenizer);

v1::FinishReason ToProto(FinishReason reason);
// Fills the last response of a stream from the engine's summary.
void FillSummary(const GenerationSummary& summary, v1::GenerateResponse* response);
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace tandem

#endif  // TANDEM_SERVER_REQUEST_CONVERSION_H_
