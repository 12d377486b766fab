// The tandem.v1.Generation service (gRPC callback API).
#ifndef TANDEM_SERVER_GENERATION_SERVICE_H_
#define TANDEM_SERVER_GENERATION_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include "core/engine/engine.h"
#include "core/text/tokenizer.h"
#include "server/server_metrics.h"
#include "tandem/v1/generation.grpc.pb.h"

namespace tandem {

// Holds pointers only: `engine` and `tokenizer` must outlive the service.
// Handlers never block: Generate hands the request to the engine and returns
// a reactor; the unary calls answer from the tokenizer and model description.
class GenerationService final : public v1::Generation::CallbackService {
 public:
  // `metrics` may be null.
  GenerationService(Engine* engine, const Tokenizer* tokenizer,
                    ServerMetrics* metrics, int32_t max_queue);

  grpc::ServerWriteReactor<v1::GenerateResponse>* Generate(
      grpc::CallbackServerContext* context,
      const v1::GenerateRequest* request) override;
  grpc::ServerUnaryReactor* Tokenize(grpc::CallbackServerContext* context,
                                     const v1::TokenizeRequest* request,
                                     v1::TokenizeResponse* response) override;
  grpc::ServerUnaryReactor* Detokenize(grpc::CallbackServerContext* context,
                                       const v1::DetokenizeRequest* request,
                                       v1::DetokenizeResponse* response) override;
  grpc::ServerUnaryReactor* GetModelInfo(grpc::CallbackServerContext* context,
                                         const v1::GetModelInfoRequest* request,
                                         v1::ModelInfo* response) override;

 private:
  Engine* engine_;
  const Tokenizer* tokenizer_;
  ServerMetrics* metrics_;
  const int32_t max_queue_;
};

}  // namespace tandem

#endif  // TANDEM_SERVER_GENERATION_SERVICE_H_
