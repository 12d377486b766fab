#include "server/openai/openai_routes.h"

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "core/engine/request_validator.h"
#include "server/http/connection_watch.h"
#include "server/http/dump_json.h"
#include "server/openai/chat_page.h"
#include "server/openai/choice_events.h"
#include "server/openai/openai_response.h"

namespace tandem {
namespace {

using nlohmann::json;

constexpr absl::Duration kPoll = absl::Milliseconds(100);

void Reply(httplib::Response& res, const ApiError& error) {
  res.status = error.http_status;
  // The queue is full (429) or the server is draining (503): the SDKs wait
  // this long before their retry.
  if (error.http_status == 429 || error.http_status == 503) res.set_header("Retry-After", "1");
  res.set_content(error.Json(), "application/json");
}

// One request's generations: the choices submitted to the engine, their
// events and the response being built. Shared by the handler and, when
// streaming, the content provider and its releaser.
struct Generation {
  std::shared_ptr<OpenAiBackend> backend;
  OpenAiRequest request;
  std::shared_ptr<ChoiceEvents> events = std::make_shared<ChoiceEvents>();
  std::vector<uint64_t> ids;
  std::unique_ptr<OpenAiResponse> response;
  bool done = false;

  void CancelAll() {
    for (uint64_t id : ids) backend->Cancel(id);
  }
};

// The request field the engine's validation error on `field` is about.
std::string OpenAiParam(const std::string& field, const OpenAiRequest& request) {
  if (field == "max_tokens") return request.max_tokens_param;
  if (field == "stop_strings") return "stop";
  if (field.empty() || field == "prompt") return request.chat ? "messages" : "prompt";
  return field;  // temperature, top_k, top_p, min_p: the same names
}

// An engine validation error as the client's request names things: its
// field in `param`, and in the message where the engine's leads it
// ("max_tokens = 5000 does not fit ..." for max_completion_tokens,
// "prompt_token_ids[3] = ..." for a completions prompt of ids).
void NameClientField(const absl::Status& status, const OpenAiRequest& request, ApiError* error) {
  const std::string field = InvalidField(status);
  error->param = OpenAiParam(field, request);
  const std::string engine_name = field == "prompt" ? "prompt_token_ids" : field;
  if (!engine_name.empty() && engine_name != error->param &&
      absl::StartsWith(error->message, engine_name)) {
    error->message.replace(0, engine_name.size(), error->param);
  }
}

void Handle(const std::shared_ptr<OpenAiBackend>& backend, bool chat,
            const httplib::Request& req, httplib::Response& res) {
  const std::optional<OpenAiContext> context = backend->context();
  if (!context) {
    return Reply(res, ApiError::FromStatus(absl::UnavailableError("the model is loading")));
  }
  const json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    backend->Rejected();
    return Reply(res, ApiError::BadField("", "the request body is not valid JSON"));
  }
  std::variant<OpenAiRequest, ApiError> parsed = ParseOpenAiRequest(body, chat, *context);
  if (auto* error = std::get_if<ApiError>(&parsed)) {
    backend->Rejected();
    return Reply(res, *error);
  }
  auto g = std::make_shared<Generation>();
  g->backend = backend;
  g->request = std::move(std::get<OpenAiRequest>(parsed));
  g->response = std::make_unique<OpenAiResponse>(g->request, context->tokenizer);
  std::vector<GenerationRequest> choices;
  for (int i = 0; i < g->request.n; ++i) {
    GenerationRequest& choice = choices.emplace_back(g->request.generation);
    choice.sampling.seed += static_cast<uint64_t>(i);
    choice.sink = std::make_shared<ChoiceSink>(g->events, i);
  }
  // All the choices are queued, or none (a full queue refuses them whole).
  absl::StatusOr<std::vector<uint64_t>> ids = backend->SubmitAll(std::move(choices));
  if (!ids.ok()) {
    backend->Rejected();
    ApiError error = ApiError::FromStatus(ids.status());
    if (error.http_status == 400) NameClientField(ids.status(), g->request, &error);
    return Reply(res, error);
  }
  g->ids = *std::move(ids);
  if (!g->request.stream) {
    // Nothing is written until the end: watch the connection, so that a
    // client that leaves (a timeout, an SDK's retry) frees its slots.
    // (Looked at every kPoll, not at every step's event.)
    const ConnectionWatch connection(req);
    absl::Time next_look = absl::Now() + kPoll;
    while (!g->response->finished()) {
      g->response->Accumulate(g->events->Take(kPoll));
      if (g->response->finished() || absl::Now() < next_look) continue;
      next_look = absl::Now() + kPoll;
      if (connection.PeerClosed()) {
        g->CancelAll();
        res.status = 499;  // (nobody reads it: nginx's "client closed request")
        return;
      }
    }
    if (g->response->error()) return Reply(res, *g->response->error());
    res.set_content(DumpJson(g->response->Whole()), "application/json");
    return;
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");  // nginx: pass each event on at once
  res.set_chunked_content_provider(
      "text/event-stream",
      [g](size_t, httplib::DataSink& sink) {
        if (g->done) return false;
        std::string out = g->response->Stream(g->events->Take(kPoll));
        if (g->response->finished()) {
          out += g->response->StreamEnd();
          g->done = true;
        }
        // A failed write means the client went away: the releaser cancels.
        if (!out.empty() && !sink.write(out.data(), out.size())) return false;
        if (g->done) sink.done();
        return true;
      },
      [g](bool success) {
        if (!success || !g->done) g->CancelAll();
      });
}

}  // namespace

void AddOpenAiRoutes(std::shared_ptr<OpenAiBackend> backend, HttpServer* http) {
  const absl::Time created = absl::Now();
  // The served model's object, or an error (loading; `id` is another model).
  auto model = [backend, created](const std::string* id) -> std::variant<json, ApiError> {
    const std::optional<OpenAiContext> context = backend->context();
    if (!context) return ApiError::FromStatus(absl::UnavailableError("the model is loading"));
    if (id != nullptr && *id != context->model_name) {
      return ApiError::ModelNotFound(*id, context->model_name);
    }
    return json{{"id", context->model_name},
                {"object", "model"},
                {"created", absl::ToUnixSeconds(created)},
                {"owned_by", "tandem"},
                {"max_model_len", backend->max_context()}};
  };
  http->Get("/v1/models", [model](const httplib::Request&, httplib::Response& res) {
    std::variant<json, ApiError> m = model(nullptr);
    if (auto* error = std::get_if<ApiError>(&m)) return Reply(res, *error);
    res.set_content(DumpJson({{"object", "list"}, {"data", json::array({std::get<json>(m)})}}),
                    "application/json");
  });
  // GET /v1/models/{id} (the SDKs' models.retrieve); ids may contain '/'.
  http->Get(R"(/v1/models/(.+))", [model](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    std::variant<json, ApiError> m = model(&id);
    if (auto* error = std::get_if<ApiError>(&m)) return Reply(res, *error);
    res.set_content(DumpJson(std::get<json>(m)), "application/json");
  });
  const auto static_file = [](absl::string_view body, const char* type) {
    return [body, type](const httplib::Request&, httplib::Response& res) {
      res.set_header("Content-Security-Policy", kChatPageSecurityPolicy);
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("X-Frame-Options", "DENY");
      res.set_content(body.data(), body.size(), type);
    };
  };
  http->Get("/", static_file(ChatPageHtml(), "text/html; charset=utf-8"));
  http->Get("/chat.js", static_file(ChatPageScript(), "text/javascript; charset=utf-8"));
  http->Post("/v1/completions", [backend](const httplib::Request& req, httplib::Response& res) {
    Handle(backend, /*chat=*/false, req, res);
  });
  http->Post("/v1/chat/completions",
             [backend](const httplib::Request& req, httplib::Response& res) {
               Handle(backend, /*chat=*/true, req, res);
             });
}

}  // namespace tandem
