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

struct OpenAiSenderOptions {
  std::string address;      // the server's HTTP host:port
  bool chat = false;        // /v1/chat/completions, not /v1/completions
  bool logprobs = false;    // each token's log-probability: every token an event of its own
  std::string tls_ca_file;  // non-empty: HTTPS, the server's certificate checked against it
  std::string api_key;      // non-empty: sent as "Authorization: Bearer KEY"
  // A request still streaming this long after its start fails ("timed
  // out"), cut off at its first bytes past it; so does one silent for this
  // long or 600 s, whichever is shorter (a stalled stream: by 2 x timeout).
  absl::Duration timeout = absl::InfiniteDuration();
};

// Threading: immutable after Connect; Send may run on many threads at once
// (each opens its own connection).
class OpenAiSender {
 public:
  // Asks /v1/models for the model's name (UNAVAILABLE when it does not
  // answer, or not with 200).
  static absl::StatusOr<OpenAiSender> Connect(OpenAiSenderOptions options);

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
  OpenAiSenderOptions options_;
  std::string base_url_;  // http(s)://host:port
  std::string model_;
};

}  // namespace tandem

#endif  // TANDEM_CLIENT_LOADGEN_OPENAI_SENDER_H_
