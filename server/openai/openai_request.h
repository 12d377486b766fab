// An OpenAI completions or chat completions request, parsed and checked.
#ifndef TANDEM_SERVER_OPENAI_OPENAI_REQUEST_H_
#define TANDEM_SERVER_OPENAI_OPENAI_REQUEST_H_

#include <cstddef>
#include <memory>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "core/engine/generation_request.h"
#include "core/text/tokenizer.h"
#include "server/openai/api_error.h"
#include "core/text/chat_template.h"

namespace tandem {

struct OpenAiRequest {
  bool chat = false;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  int n = 1;                   // choices, each a generation of its own
  bool logprobs = false;       // the sampled tokens' log-probabilities
  std::string model;
  // The field that set generation.stopping.max_tokens, for errors.
  std::string max_tokens_param = "max_tokens";
  // Everything but the sink; choice i uses sampling.seed + i.
  GenerationRequest generation;
};

// What parsing needs: the tokenizer, the chat template, the served model's
// name (other names are 404) and the limits checked before tokenizing.
// Ownership: shared with the server, so that an HTTP handler still running
// after the server's shutdown wait never uses a freed tokenizer.
struct OpenAiContext {
  std::shared_ptr<const Tokenizer> tokenizer;
  std::shared_ptr<const ChatTemplate> chat_template;
  std::string model_name;
  size_t max_prompt_bytes = 128 * 1024;
  int max_choices = 16;
  int max_stop_strings = kMaxClientStopStrings;  // the chat template's come on top
};

// Fields (vLLM's names where OpenAI has none): prompt (a string, one string
// in an array, or an array of token ids) or messages; max_tokens,
// max_completion_tokens (chat), temperature (default 1), top_p, top_k (-1
// or 0: none), min_p, seed, stop (string or array), n, logprobs (an
// integer for completions, a boolean for chat; only the sampled token's
// log-probability is returned), stream, stream_options.include_usage,
// ignore_eos, user (ignored). Unknown fields are ignored. Errors name the
// field; an unknown model is a 404.
std::variant<OpenAiRequest, ApiError> ParseOpenAiRequest(const nlohmann::json& body, bool chat,
                                                         const OpenAiContext& context);

}  // namespace tandem

#endif  // TANDEM_SERVER_OPENAI_OPENAI_REQUEST_H_
