// tandem-loadgen's OpenAI mode: one streamed request to the
// OpenAI-compatible HTTP API, timed token by token.
#ifndef TANDEM_CLIENT_LOADGEN_OPENAI_SENDER_H_
#define TANDEM_CLIENT_LOADGEN_OPENAI_SENDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/loadgen/request_record.h"

namespace tandem {

// Threading: immutable after Connect; Send may run on many threads at once
// (each opens its own connection).
class OpenAiSender {
 public:
  // `address` is the server's HTTP host:port; `chat` picks
  // /v1/chat/completions over /v1/completions; `logprobs` asks for each
  // token's log-probability, which makes every token an event of its own.
  // Asks /v1/models for the model's name (UNAVAILABLE when it does not
  // answer).
  static absl::StatusOr<OpenAiSender> Connect(const std::string& address, bool chat,
                                              bool logprobs = false);

  // Streams a greedy generation of `max_tokens` tokens (ignore_eos). The
  // completions endpoint gets the prompt as token ids; chat, one user
  // message of as many words ("w<id>") as ids. Without logprobs each
  // server-sent event with text is one token's arrival (a token whose text
  // is held back, an incomplete UTF-8 character, arrives with the next);
  // with logprobs each event's logprob entries are its tokens. Tokens the
  // final usage counts beyond those arrive with the last event.
  // prompt_tokens is the server's count.
  RequestRecord Send(const std::vector<int32_t>& prompt, int max_tokens, absl::Time run_start) const;

  const std::string& model() const { return model_; }

 private:
  std::string host_;
  int port_ = 0;
  bool chat_ = false;
  bool logprobs_ = false;
  std::string model_;
};

}  // namespace tandem

#endif  // TANDEM_CLIENT_LOADGEN_OPENAI_SENDER_H_
