// The tandem.v1.Generation service (gRPC callback API).
#ifndef TANDEM_SERVER_GENERATION_SERVICE_H_
#define TANDEM_SERVER_GENERATION_SERVICE_H_

#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "core/engine/engine.h"
#include "core/text/chat_template.h"
#include "core/text/tokenizer.h"
#include "server/request_conversion.h"
#include "server/server_metrics.h"
#include "server/write_dispatcher.h"
#include "tandem/v1/generation.grpc.pb.h"

namespace tandem {

struct ServiceOptions {
  int32_t max_queue = 0;  // reported by GetModelInfo
  WireLimits limits;
  // When set, every call of this service needs the metadata
  // "authorization: Bearer <api_key>" (UNAUTHENTICATED otherwise). The
  // health and reflection services stay open.
  std::string api_key;
  // Threads that start Generate's writes (0: the thread that delivers the
  // tokens does).
  int write_threads = 4;
};

// Generate and Tokenize take their requests as raw bytes and parse them
// here: a request protobuf cannot parse (a string field holding invalid
// UTF-8, or a malformed message) gets INVALID_ARGUMENT with a message, not
// gRPC's bare UNIMPLEMENTED, and the parser's complaint is logged at most
// once a second.
using GenerationServiceBase = v1::Generation::WithRawCallbackMethod_Generate<
    v1::Generation::WithRawCallbackMethod_Tokenize<v1::Generation::WithCallbackMethod_Detokenize<
        v1::Generation::WithCallbackMethod_GetModelInfo<v1::Generation::Service>>>>;

// Holds pointers only: `engine`, `tokenizer` and `chat_template` must
// outlive the service.
// Handlers never block: Generate hands the request to the engine and returns
// a reactor; the unary calls answer from the tokenizer and model description.
class GenerationService final : public GenerationServiceBase {
 public:
  // `metrics` may be null.
  GenerationService(Engine* engine, const Tokenizer* tokenizer,
                    const ChatTemplate* chat_template, ServerMetrics* metrics,
                    ServiceOptions options);

  grpc::ServerWriteReactor<grpc::ByteBuffer>* Generate(grpc::CallbackServerContext* context,
                                                       const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* Tokenize(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Detokenize(grpc::CallbackServerContext* context,
                                       const v1::DetokenizeRequest* request,
                                       v1::DetokenizeResponse* response) override;
  grpc::ServerUnaryReactor* GetModelInfo(grpc::CallbackServerContext* context,
                                         const v1::GetModelInfoRequest* request,
                                         v1::ModelInfo* response) override;

 private:
  // OK, or UNAUTHENTICATED when an API key is set and the call lacks it.
  grpc::Status Authorize(const grpc::CallbackServerContext& context) const;

  Engine* engine_;
  const Tokenizer* tokenizer_;
  const ChatTemplate* chat_template_;
  ServerMetrics* metrics_;
  const ServiceOptions options_;
  std::unique_ptr<WriteDispatcher> dispatcher_;  // null when write_threads is 0
};

}  // namespace tandem

#endif  // TANDEM_SERVER_GENERATION_SERVICE_H_
