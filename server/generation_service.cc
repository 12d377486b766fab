#include "server/generation_service.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/text/incremental_detokenizer.h"
#include "core/base/constant_time.h"
#include "server/generate_reactor.h"
#include "server/raw_messages.h"

namespace tandem {
namespace {

// Text of `ids` as valid UTF-8 (undecodable bytes become U+FFFD).
std::string SafeText(const Tokenizer& tokenizer, absl::Span<const int32_t> ids) {
  IncrementalDetokenizer detokenizer(&tokenizer);
  std::string text;
  for (int32_t id : ids) text += detokenizer.Append(id);
  return text + detokenizer.Flush();
}

grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                 grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

}  // namespace

GenerationService::GenerationService(Engine* engine, const Tokenizer* tokenizer,
                                     const ChatTemplate* chat_template, ServerMetrics* metrics,
                                     ServiceOptions options)
    : engine_(engine),
      tokenizer_(tokenizer),
      chat_template_(chat_template),
      metrics_(metrics),
      options_(std::move(options)),
      dispatcher_(options_.write_threads > 0
                      ? std::make_unique<WriteDispatcher>(options_.write_threads)
                      : nullptr) {}

grpc::Status GenerationService::Authorize(const grpc::CallbackServerContext& context) const {
  if (options_.api_key.empty()) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it != metadata.end() &&
      ConstantTimeEquals(absl::string_view(it->second.data(), it->second.size()),
              absl::StrCat("Bearer ", options_.api_key))) {
    return grpc::Status::OK;
  }
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                      "this server needs the metadata \"authorization: Bearer <api key>\"");
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* GenerationService::Generate(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  return new GenerateReactor(engine_, tokenizer_, chat_template_, metrics_, options_.limits,
                             Authorize(*context), request, context, dispatcher_.get());
}

grpc::ServerUnaryReactor* GenerationService::Tokenize(grpc::CallbackServerContext* context,
                                                      const grpc::ByteBuffer* raw_request,
                                                      grpc::ByteBuffer* raw_response) {
  if (grpc::Status auth = Authorize(*context); !auth.ok()) return Answer(context, auth);
  v1::TokenizeRequest request;
  if (grpc::Status parsed = ParseRequest(*raw_request, &request); !parsed.ok()) {
    return Answer(context, parsed);
  }
  if (absl::Status size = CheckSize("text", request.text().size(), options_.limits.max_prompt_bytes);
      !size.ok()) {
    return Answer(context, ToGrpcStatus(size));
  }
  v1::TokenizeResponse response;
  const std::vector<int32_t> ids = tokenizer_->EncodePrompt(request.text());
  for (int32_t id : ids) {
    response.add_token_ids(id);
    response.add_tokens(SafeText(*tokenizer_, {id}));
  }
  return Answer(context, SerializeResponse(response, raw_response));
}

grpc::ServerUnaryReactor* GenerationService::Detokenize(
    grpc::CallbackServerContext* context, const v1::DetokenizeRequest* request,
    v1::DetokenizeResponse* response) {
  if (grpc::Status auth = Authorize(*context); !auth.ok()) return Answer(context, auth);
  for (int i = 0; i < request->token_ids_size(); ++i) {
    if (!tokenizer_->IsValidId(request->token_ids(i))) {
      return Answer(context,
                    grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                 absl::StrCat("token_ids[", i, "] = ",
                                              request->token_ids(i),
                                              " is outside the vocabulary [0, ",
                                              tokenizer_->vocab_size(), ")")));
    }
  }
  response->set_text(SafeText(*tokenizer_, request->token_ids()));
  return Answer(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* GenerationService::GetModelInfo(
    grpc::CallbackServerContext* context, const v1::GetModelInfoRequest* /*request*/,
    v1::ModelInfo* response) {
  if (grpc::Status auth = Authorize(*context); !auth.ok()) return Answer(context, auth);
  const ModelDescription& model = engine_->model();
  response->set_name(model.name);
  response->set_architecture(model.architecture);
  response->set_vocab_size(model.vocab_size);
  response->set_context_length(model.max_context);
  response->set_kv_slots(model.num_slots);
  response->set_dtype(model.dtype);
  response->set_device(model.device);
  response->set_eos_token_id(model.eos_token_ids.empty() ? -1 : model.eos_token_ids.front());
  for (int32_t id : model.eos_token_ids) response->add_eos_token_ids(id);
  response->set_num_layers(model.num_layers);
  response->set_hidden_size(model.hidden_size);
  response->set_num_heads(model.num_heads);
  response->set_weight_bytes(model.weight_bytes);
  response->set_kv_cache_bytes(model.kv_cache_bytes);
  response->set_max_queue(options_.max_queue);
  return Answer(context, grpc::Status::OK);
}

}  // namespace tandem
