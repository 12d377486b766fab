#include "client/loadgen/openai_sender.h"

#include <algorithm>

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace tandem {

using nlohmann::json;

namespace {

// A client of the server at `base_url` (one connection; not shared between
// threads), trusting options.tls_ca_file and sending options.api_key.
httplib::Client NewClient(const OpenAiSenderOptions& options, const std::string& base_url) {
  httplib::Client client(base_url);
  if (!options.tls_ca_file.empty()) client.set_ca_cert_path(options.tls_ca_file);
  if (!options.api_key.empty()) client.set_bearer_token_auth(options.api_key);
  return client;
}

}  // namespace

absl::StatusOr<OpenAiSender> OpenAiSender::Connect(OpenAiSenderOptions options) {
  OpenAiSender sender;
  const size_t colon = options.address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(options.address.substr(colon + 1), &port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http \"", options.address, "\": expected host:port"));
  }
  sender.base_url_ =
      absl::StrCat(options.tls_ca_file.empty() ? "http://" : "https://", options.address);
  sender.options_ = std::move(options);
  httplib::Client client = NewClient(sender.options_, sender.base_url_);
  client.set_connection_timeout(30);
  httplib::Result models = client.Get("/v1/models");
  if (!models) {
    return absl::UnavailableError(absl::StrCat("GET ", sender.base_url_, "/v1/models failed: ",
                                               httplib::to_string(models.error())));
  }
  if (models->status != 200) {
    return absl::UnavailableError(absl::StrCat("GET ", sender.base_url_, "/v1/models: HTTP ",
                                               models->status, " ", models->body.substr(0, 200)));
  }
  const json list = json::parse(models->body, nullptr, false);
  if (list.is_discarded() || !list.contains("data") || list["data"].empty()) {
    return absl::UnavailableError("GET /v1/models: no model listed");
  }
  sender.model_ = list["data"][0].value("id", "");
  return sender;
}

RequestRecord OpenAiSender::Send(const std::vector<int32_t>& prompt, int max_tokens,
                                 absl::Time run_start) const {
  RequestRecord r;
  json body = {{"model", model_},       {"max_tokens", max_tokens}, {"temperature", 0},
               {"ignore_eos", true},    {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  if (options_.logprobs) {  // completions: the chosen token's only (0 alternatives)
    body["logprobs"] = options_.chat ? json(true) : json(0);
  }
  if (options_.chat) {
    std::string text;
    for (int32_t id : prompt) absl::StrAppend(&text, text.empty() ? "" : " ", "w", id % 1000);
    body["messages"] = json::array({{{"role", "user"}, {"content", text}}});
  } else {
    body["prompt"] = prompt;
  }
  httplib::Client client = NewClient(options_, base_url_);
  const absl::Duration silence = std::min(options_.timeout, absl::Seconds(600));
  client.set_read_timeout(absl::ToInt64Seconds(silence),
                          absl::ToInt64Microseconds(silence % absl::Seconds(1)));
  httplib::Request request;
  request.method = "POST";
  request.path = options_.chat ? "/v1/chat/completions" : "/v1/completions";
  request.body = body.dump();
  request.set_header("Content-Type", "application/json");
  const absl::Time start = absl::Now();
  r.start = absl::ToDoubleSeconds(start - run_start);
  r.start_unix = absl::ToDoubleSeconds(start - absl::UnixEpoch());
  std::string buffer;
  int counted = -1;  // the usage chunk's completion_tokens
  bool done = false;
  bool timed_out = false;
  request.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    const absl::Duration elapsed = absl::Now() - start;
    if (elapsed > options_.timeout) {
      timed_out = true;
      return false;  // httplib closes the connection: the server cancels
    }
    const double t = absl::ToDoubleSeconds(elapsed);
    buffer.append(data, size);
    for (size_t cut; (cut = buffer.find("\n\n")) != std::string::npos;) {
      const std::string event = buffer.substr(0, cut);
      buffer.erase(0, cut + 2);
      if (event.rfind("data: ", 0) != 0) continue;
      if (event == "data: [DONE]") {
        done = true;
        continue;
      }
      const json chunk = json::parse(event.substr(6), nullptr, false);
      if (chunk.is_discarded()) continue;
      if (chunk.contains("error")) {
        r.error = chunk["error"].value("message", "an error event");
        continue;
      }
      if (chunk.contains("usage") && chunk["usage"].is_object()) {
        counted = chunk["usage"].value("completion_tokens", -1);
        r.prompt_tokens = chunk["usage"].value("prompt_tokens", 0);
      }
      if (!chunk.contains("choices") || chunk["choices"].empty()) continue;
      const json& choice = chunk["choices"][0];
      if (options_.logprobs) {
        const json& lp = choice.contains("logprobs") ? choice["logprobs"] : json();
        const json tokens = !lp.is_object()   ? json()
                            : options_.chat    ? lp.value("content", json())
                                               : lp.value("tokens", json());
        if (tokens.is_array()) r.token_times.insert(r.token_times.end(), tokens.size(), t);
        continue;
      }
      const json text = options_.chat ? choice["delta"].value("content", json()) : choice.value("text", json());
      if (text.is_string() && !text.get<std::string>().empty()) r.token_times.push_back(t);
    }
    return true;
  };
  httplib::Response response;
  httplib::Error error = httplib::Error::Success;
  const bool sent = client.send(request, response, error);
  r.end = absl::ToDoubleSeconds(absl::Now() - start);
  while (counted > static_cast<int>(r.token_times.size()) && !r.token_times.empty()) {
    r.token_times.push_back(r.token_times.back());
  }
  // Past the timeout: cut off by the receiver, or silent until the read timed out.
  timed_out = timed_out || (!sent && absl::Now() - start >= options_.timeout);
  r.ok = sent && response.status == 200 && done && r.error.empty() && !timed_out;
  if (timed_out) r.error = absl::StrCat("timed out after ", absl::FormatDuration(options_.timeout));
  if (!r.ok && r.error.empty()) {
    r.error = sent ? absl::StrCat("HTTP ", response.status, " ", buffer)
                   : absl::StrCat("HTTP request failed: ", httplib::to_string(error));
  }
  return r;
}

}  // namespace tandem
