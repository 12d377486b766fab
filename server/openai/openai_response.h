// Builds an OpenAI response from a request's choice events: server-sent
// events as OpenAI frames them, or the whole object.
#ifndef TANDEM_SERVER_OPENAI_OPENAI_RESPONSE_H_
#define TANDEM_SERVER_OPENAI_OPENAI_RESPONSE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/text/tokenizer.h"
#include "server/openai/api_error.h"
#include "server/openai/choice_events.h"
#include "server/openai/openai_request.h"

namespace tandem {

// Streaming: each chunk is "data: {json}\n\n"; a chat stream's first delta
// for a choice carries the role, each choice's last chunk its
// finish_reason ("stop" or "length"); after all choices, an optional
// usage-only chunk (stream_options.include_usage) and "data: [DONE]\n\n".
// A choice the server ended (shutdown, an internal error) ends the stream
// with an error object event instead. Threading: one HTTP thread.
class OpenAiResponse {
 public:
  // Shares ownership of the tokenizer: a stream may outlive the server's wait.
  OpenAiResponse(const OpenAiRequest& request, std::shared_ptr<const Tokenizer> tokenizer);

  // Streaming: the events' chunks. Choices that end are counted.
  std::string Stream(const std::vector<ChoiceEvents::Event>& events);
  // Streaming, once every choice ended: usage (if asked) and [DONE].
  std::string StreamEnd() const;
  // Not streaming: folds the events in; Whole() once every choice ended.
  void Accumulate(const std::vector<ChoiceEvents::Event>& events);
  nlohmann::json Whole() const;

  bool finished() const { return finished_ == static_cast<int>(choices_.size()); }
  // Why a choice did not end with stop or length, if one did not.
  const std::optional<ApiError>& error() const { return error_; }

 private:
  struct Choice {
    std::string text;
    nlohmann::json logprobs = nlohmann::json::array();  // per token, as the API shapes it
    int text_offset = 0;
    bool sent_role = false;
    std::string finish_reason;
  };
  nlohmann::json Base(const char* object) const;
  nlohmann::json TokenLogprobs(const GenerationChunk& chunk, Choice* choice) const;
  // Applies one event to its choice; returns the choice's JSON delta (null
  // when there is nothing to send).
  nlohmann::json Apply(const ChoiceEvents::Event& event);
  nlohmann::json Usage() const;

  const OpenAiRequest& request_;
  const std::shared_ptr<const Tokenizer> tokenizer_;
  const std::string id_;
  const int64_t created_;
  std::vector<Choice> choices_;
  int finished_ = 0;
  int prompt_tokens_ = 0, completion_tokens_ = 0;
  std::optional<ApiError> error_;
};

}  // namespace tandem

#endif  // TANDEM_SERVER_OPENAI_OPENAI_RESPONSE_H_
