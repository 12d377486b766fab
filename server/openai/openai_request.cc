#include "server/openai/openai_request.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tandem {
namespace {

using nlohmann::json;

// Reads an optional field of `body` into `out` when present and not null;
// a value of another type is an error naming the field.
class Fields {
 public:
  explicit Fields(const json& body) : body_(body) {}
  const std::optional<ApiError>& error() const { return error_; }

  bool Has(const char* name) const {
    return body_.contains(name) && !body_.at(name).is_null();
  }
  void Bool(const char* name, bool* out) {
    if (!Has(name)) return;
    if (!body_.at(name).is_boolean()) return Fail(name, "a boolean");
    *out = body_.at(name).get<bool>();
  }
  void Number(const char* name, double lo, double hi, float* out) {
    if (!Has(name)) return;
    if (!body_.at(name).is_number()) return Fail(name, "a number");
    const double v = body_.at(name).get<double>();
    if (!(v >= lo && v <= hi)) {
      return Fail(name, absl::StrCat("a number in [", lo, ", ", hi, "]"));
    }
    *out = static_cast<float>(v);
  }
  void Integer(const char* name, int64_t lo, int64_t hi, int64_t* out) {
    if (!Has(name)) return;
    const json& v = body_.at(name);
    if (!v.is_number_integer()) return Fail(name, "an integer");
    const bool above = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi);
    const int64_t i = above ? hi : v.get<int64_t>();
    if (above || i < lo || i > hi) {
      return Fail(name, absl::StrCat("an integer in [", lo, ", ", hi, "]"));
    }
    *out = i;
  }
  void Fail(const std::string& name, const std::string& what) {
    if (!error_) error_ = ApiError::BadField(name, absl::StrCat("'", name, "' must be ", what));
  }

 private:
  const json& body_;
  std::optional<ApiError> error_;
};

std::optional<ApiError> ReadStop(const json& body, int max_stop_strings,
                                 std::vector<std::string>* out) {
  if (!body.contains("stop") || body.at("stop").is_null()) return std::nullopt;
  const json& stop = body.at("stop");
  if (stop.is_string()) {
    out->push_back(stop.get<std::string>());
  } else if (stop.is_array() &&
             std::all_of(stop.begin(), stop.end(), [](const json& s) { return s.is_string(); })) {
    for (const json& s : stop) out->push_back(s.get<std::string>());  // [] is none, as in vLLM
  } else {
    return ApiError::BadField("stop", "'stop' must be a string or an array of strings");
  }
  if (static_cast<int>(out->size()) > max_stop_strings) {
    return ApiError::BadField("stop", absl::StrCat("'stop' has ", out->size(),
                                                   " strings; at most ", max_stop_strings,
                                                   " are accepted"));
  }
  return std::nullopt;  // (empty strings: the engine refuses them)
}

// The prompt of a completions request as token ids.
std::optional<ApiError> ReadPrompt(const json& body, const OpenAiContext& context,
                                   std::vector<int32_t>* ids) {
  if (!body.contains("prompt")) return ApiError::BadField("prompt", "'prompt' is required");
  json prompt = body.at("prompt");
  if (prompt.is_array() && prompt.size() == 1 && prompt[0].is_string()) prompt = prompt[0];
  if (prompt.is_string()) {
    const std::string text = prompt.get<std::string>();
    if (text.size() > context.max_prompt_bytes) {
      return ApiError::BadField("prompt", absl::StrCat("'prompt' is ", text.size(),
                                                       " bytes; the limit is ",
                                                       context.max_prompt_bytes));
    }
    if (text.empty()) return ApiError::BadField("prompt", "'prompt' is empty");
    *ids = context.tokenizer->EncodePrompt(text);
    return std::nullopt;
  }
  if (prompt.is_array() && !prompt.empty()) {
    for (const json& id : prompt) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
          id.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
        ids->clear();
        break;
      }
      ids->push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
    if (!ids->empty()) return std::nullopt;
  }
  return ApiError::BadField("prompt",
                            "'prompt' must be a non-empty string, or an array of token ids "
                            "(one prompt per request)");
}

std::optional<ApiError> ReadMessages(const json& body, const OpenAiContext& context,
                                     std::vector<int32_t>* ids) {
  if (!body.contains("messages") || !body.at("messages").is_array() ||
      body.at("messages").empty()) {
    return ApiError::BadField("messages", "'messages' must be a non-empty array");
  }
  std::vector<ChatMessage> messages;
  size_t bytes = 0;
  for (size_t i = 0; i < body.at("messages").size(); ++i) {
    const json& m = body.at("messages")[i];
    const std::string where = absl::StrCat("messages[", i, "]");
    if (!m.is_object() || !m.contains("role") || !m.at("role").is_string()) {
      return ApiError::BadField(where, absl::StrCat("'", where, "' needs a string 'role'"));
    }
    ChatMessage message{m.at("role").get<std::string>(), ""};
    const json content = m.value("content", json(nullptr));
    if (content.is_string()) {
      message.content = content.get<std::string>();
    } else if (content.is_array()) {  // [{"type": "text", "text": "..."}]
      for (const json& part : content) {
        if (!part.is_object() || !part.contains("type") || part.at("type") != "text" ||
            !part.contains("text") || !part.at("text").is_string()) {
          return ApiError::BadField(where + ".content",
                                    "only text content parts are supported");
        }
        message.content += part.at("text").get<std::string>();
      }
    } else if (!content.is_null()) {
      return ApiError::BadField(where + ".content",
                                absl::StrCat("'", where, ".content' must be a string"));
    }
    bytes += message.content.size();
    messages.push_back(std::move(message));
  }
  if (bytes > context.max_prompt_bytes) {
    return ApiError::BadField("messages", absl::StrCat("the messages are ", bytes,
                                                       " bytes; the limit is ",
                                                       context.max_prompt_bytes));
  }
  absl::StatusOr<std::vector<int32_t>> rendered =
      context.chat_template->RenderTokenIds(messages, *context.tokenizer);
  if (!rendered.ok()) {
    return ApiError::BadField("messages", std::string(rendered.status().message()));
  }
  *ids = *std::move(rendered);
  return std::nullopt;
}

}  // namespace

std::variant<OpenAiRequest, ApiError> ParseOpenAiRequest(const json& body, bool chat,
                                                         const OpenAiContext& context) {
  if (!body.is_object()) return ApiError::BadField("", "the request body must be a JSON object");
  OpenAiRequest out;
  out.chat = chat;
  if (body.contains("model")) {
    if (!body.at("model").is_string()) return ApiError::BadField("model", "'model' must be a string");
    out.model = body.at("model").get<std::string>();
    if (out.model != context.model_name) return ApiError::ModelNotFound(out.model, context.model_name);
  } else {
    out.model = context.model_name;
  }
  GenerationRequest& g = out.generation;
  g.sampling.temperature = 1.0f;  // OpenAI's default
  Fields f(body);
  int64_t max_tokens = chat ? 0 : 16, top_k = 0, n = 1, seed = -1, logprobs = -1;
  f.Integer("max_tokens", 1, std::numeric_limits<int32_t>::max(), &max_tokens);
  if (chat && f.Has("max_completion_tokens")) {
    f.Integer("max_completion_tokens", 1, std::numeric_limits<int32_t>::max(), &max_tokens);
    out.max_tokens_param = "max_completion_tokens";
  }
  f.Number("temperature", 0, 2, &g.sampling.temperature);
  f.Number("top_p", 1e-6, 1, &g.sampling.top_p);
  f.Integer("top_k", -1, 1 << 20, &top_k);
  f.Number("min_p", 0, 1, &g.sampling.min_p);
  f.Integer("seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &seed);
  f.Integer("n", 1, context.max_choices, &n);
  f.Bool("stream", &out.stream);
  f.Bool("ignore_eos", &g.stopping.ignore_eos);
  if (chat) {
    f.Bool("logprobs", &out.logprobs);
  } else {
    f.Integer("logprobs", 0, 20, &logprobs);
    out.logprobs = logprobs >= 0;
  }
  if (f.error()) return *f.error();
  if (f.Has("stream_options")) {
    const json& options = body.at("stream_options");
    if (!options.is_object()) {
      return ApiError::BadField("stream_options", "'stream_options' must be an object");
    }
    Fields o(options);
    o.Bool("include_usage", &out.include_usage);
    if (o.error()) {
      return ApiError::BadField("stream_options.include_usage",
                                "'stream_options.include_usage' must be a boolean");
    }
  }
  if (std::optional<ApiError> e =
          ReadStop(body, context.max_stop_strings, &g.stopping.stop_strings)) {
    return *e;
  }
  std::optional<ApiError> prompt_error =
      chat ? ReadMessages(body, context, &g.prompt_token_ids)
           : ReadPrompt(body, context, &g.prompt_token_ids);
  if (prompt_error) return *prompt_error;
  if (chat) {
    for (const std::string& s : context.chat_template->stop_strings()) {
      g.stopping.stop_strings.push_back(s);
    }
  }
  g.stopping.max_tokens = static_cast<int32_t>(max_tokens);
  g.sampling.top_k = static_cast<int32_t>(std::max<int64_t>(top_k, 0));
  if (seed != -1 || f.Has("seed")) {
    g.sampling.seed = static_cast<uint64_t>(seed);
  } else {
    static thread_local std::mt19937_64 random_seeds{std::random_device{}()};
    g.sampling.seed = random_seeds();
  }
  g.return_logprobs = out.logprobs;
  out.n = static_cast<int>(n);
  return out;
}

}  // namespace tandem
