#include "server/openai/openai_response.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "server/http/dump_json.h"

namespace tandem {
namespace {

using nlohmann::json;

std::string RandomId(const char* prefix) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  return absl::StrFormat("%s%016x%016x", prefix, random(), random());
}

// The completions API's logprobs object from per-token entries
// {token, logprob, offset}: parallel arrays, no alternatives.
json CompletionLogprobs(const json& entries) {
  json tokens = json::array(), values = json::array(), offsets = json::array();
  for (const json& e : entries) {
    tokens.push_back(e["token"]);
    values.push_back(e["logprob"]);
    offsets.push_back(e["offset"]);
  }
  return {{"tokens", tokens}, {"token_logprobs", values}, {"top_logprobs", nullptr},
          {"text_offset", offsets}};
}

}  // namespace

OpenAiResponse::OpenAiResponse(const OpenAiRequest& request,
                               std::shared_ptr<const Tokenizer> tokenizer)
    : request_(request),
      tokenizer_(std::move(tokenizer)),
      id_(RandomId(request.chat ? "chatcmpl-" : "cmpl-")),
      created_(absl::ToUnixSeconds(absl::Now())),
      choices_(static_cast<size_t>(request.n)) {}

json OpenAiResponse::Base(const char* object) const {
  return {{"id", id_}, {"object", object}, {"created", created_}, {"model", request_.model}};
}

json OpenAiResponse::TokenLogprobs(const GenerationChunk& chunk, Choice* choice) const {
  json entries = json::array();
  for (size_t i = 0; i < chunk.token_ids.size() && i < chunk.logprobs.size(); ++i) {
    const std::string& token = tokenizer_->TokenBytes(chunk.token_ids[i]);
    if (request_.chat) {
      json bytes = json::array();
      for (unsigned char c : token) bytes.push_back(static_cast<int>(c));
      entries.push_back({{"token", token}, {"logprob", chunk.logprobs[i]}, {"bytes", bytes},
                         {"top_logprobs", json::array()}});
    } else {
      entries.push_back({{"token", token}, {"logprob", chunk.logprobs[i]},
                         {"offset", choice->text_offset}});
      choice->text_offset += static_cast<int>(token.size());
    }
  }
  return entries;
}

json OpenAiResponse::Apply(const ChoiceEvents::Event& event) {
  Choice& choice = choices_.at(static_cast<size_t>(event.index));
  if (event.finished) {
    ++finished_;
    prompt_tokens_ = event.summary.prompt_tokens;
    completion_tokens_ += event.summary.completion_tokens;
    switch (event.summary.reason) {
      case FinishReason::kStop: choice.finish_reason = "stop"; break;
      case FinishReason::kLength: choice.finish_reason = "length"; break;
      default: {
        ApiError e = ApiError::FromStatus(
            event.summary.error.ok()
                ? absl::UnavailableError(absl::StrCat("the generation ended early: ",
                                                      FinishReasonName(event.summary.reason)))
                : event.summary.error);
        if (!error_) error_ = e;
        choice.finish_reason = "stop";
      }
    }
    return nullptr;
  }
  choice.text += event.chunk.text;
  json logprobs = request_.logprobs ? TokenLogprobs(event.chunk, &choice) : json();
  if (request_.logprobs) {
    for (const json& entry : logprobs) choice.logprobs.push_back(entry);
  }
  if (event.chunk.text.empty() && (logprobs.is_null() || logprobs.empty())) return nullptr;
  return {{"text", event.chunk.text}, {"logprobs", logprobs}};
}

std::string OpenAiResponse::Stream(const std::vector<ChoiceEvents::Event>& events) {
  std::string out;
  auto send = [&](const json& chunk) { absl::StrAppend(&out, "data: ", DumpJson(chunk), "\n\n"); };
  for (const ChoiceEvents::Event& event : events) {
    const json delta = Apply(event);
    Choice& choice = choices_.at(static_cast<size_t>(event.index));
    if (delta.is_null() && !event.finished) continue;
    if (event.finished && error_) continue;  // the stream ends with the error
    json c = {{"index", event.index}, {"finish_reason", nullptr}};
    if (request_.chat) {
      json d = json::object();
      if (!choice.sent_role) {
        d["role"] = "assistant";
        choice.sent_role = true;
      }
      if (!delta.is_null()) d["content"] = delta["text"];
      c["delta"] = d;
      c["logprobs"] = delta.is_null() || delta["logprobs"].is_null()
                          ? json(nullptr)
                          : json{{"content", delta["logprobs"]}};
    } else {
      c["text"] = delta.is_null() ? "" : delta["text"];
      c["logprobs"] = nullptr;
      if (!delta.is_null() && !delta["logprobs"].is_null()) {
        c["logprobs"] = CompletionLogprobs(delta["logprobs"]);
      }
    }
    if (event.finished) c["finish_reason"] = choice.finish_reason;
    json chunk = Base(request_.chat ? "chat.completion.chunk" : "text_completion");
    chunk["choices"] = json::array({c});
    if (request_.include_usage) chunk["usage"] = nullptr;
    send(chunk);
  }
  return out;
}

json OpenAiResponse::Usage() const {
  return {{"prompt_tokens", prompt_tokens_},
          {"completion_tokens", completion_tokens_},
          {"total_tokens", prompt_tokens_ + completion_tokens_}};
}

std::string OpenAiResponse::StreamEnd() const {
  std::string out;
  if (error_) {
    absl::StrAppend(&out, "data: ", error_->Json(), "\n\n");
  } else if (request_.include_usage) {
    json chunk = Base(request_.chat ? "chat.completion.chunk" : "text_completion");
    chunk["choices"] = json::array();
    chunk["usage"] = Usage();
    absl::StrAppend(&out, "data: ", DumpJson(chunk), "\n\n");
  }
  absl::StrAppend(&out, "data: [DONE]\n\n");
  return out;
}

void OpenAiResponse::Accumulate(const std::vector<ChoiceEvents::Event>& events) {
  for (const ChoiceEvents::Event& event : events) Apply(event);
}

json OpenAiResponse::Whole() const {
  json out = Base(request_.chat ? "chat.completion" : "text_completion");
  json choices = json::array();
  for (size_t i = 0; i < choices_.size(); ++i) {
    const Choice& choice = choices_[i];
    json c = {{"index", i}, {"finish_reason", choice.finish_reason}};
    if (request_.chat) {
      c["message"] = {{"role", "assistant"}, {"content", choice.text}};
      c["logprobs"] = request_.logprobs ? json{{"content", choice.logprobs}} : json(nullptr);
    } else {
      c["text"] = choice.text;
      c["logprobs"] = nullptr;
      if (request_.logprobs) c["logprobs"] = CompletionLogprobs(choice.logprobs);
    }
    choices.push_back(c);
  }
  out["choices"] = choices;
  out["usage"] = Usage();
  return out;
}

}  // namespace tandem
